#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Where one `isd exec -- /bin/true` goes, from `strace -f -tt -T` of it
# (bench/start.sh): the syscalls of each step of the start and the time
# they spent.  strace slows every syscall, so the times are relative
# weights; the counts are what a change removes.
import re
import sys

line_re = re.compile(r'^(\d+)\s+([\d:.]+)\s+(.*?)(?:\s+<([\d.]+)>)?$')
steps = []  # (name, calls, seconds)


def parse(path):
    out = []
    for raw in open(path):
        m = line_re.match(raw.rstrip('\n'))
        if not m or m.group(3).startswith(('---', '+++')):
            continue
        call = m.group(3)
        if '<unfinished' in call:
            continue
        if call.startswith('<...'):
            name = call.split()[1]
        else:
            name = call.split('(', 1)[0]
        out.append((int(m.group(1)), name, call, float(m.group(4) or 0)))
    return out


def main(path):
    calls = parse(path)
    if not calls:
        print("no strace output")
        return
    parent = calls[0][0]
    child = next((c[2].split('= ')[-1].split()[0] for c in calls if c[0] == parent and c[1] == 'clone3'), None)
    child = int(child) if child and child.isdigit() else None
    # init's step, by the syscall that starts it; the rest is isd's own
    # (before the clone3 into the namespaces, and the wait after it) or
    # the payload's (after init's clone of it)
    marks = [('unshare', 'setup socket, uid/gid maps, setgroups'), ('sethostname', 'cgroup namespace'),
             ('socket', 'hostname'), ('mount', 'loopback (netlink)'),
             ('pivot_root', 'mounts (new mount API)'), ('setsid', 'pivot_root, old root'),
             ('clone', 'capabilities, securebits, no_new_privs')]
    order = ['isd before clone3', 'clone3 into the namespaces', 'setup socket, uid/gid maps, setgroups',
             'cgroup namespace', 'hostname', 'loopback (netlink)', 'mounts (new mount API)',
             'pivot_root, old root', 'capabilities, securebits, no_new_privs',
             'payload: setsid, workdir, Landlock', 'payload: seccomp load', 'payload: exec of /bin/true and its run',
             'isd: waiting (untimed), teardown']
    acc = {k: [0, 0.0] for k in order}
    init_step = 'setup socket, uid/gid maps, setgroups'
    after_clone3 = False
    payload_step = 'payload: setsid, workdir, Landlock'
    for pid, name, call, t in calls:
        if pid == parent:
            if name == 'clone3':
                step, after_clone3 = 'clone3 into the namespaces', True
            else:
                step = 'isd: waiting (untimed), teardown' if after_clone3 else 'isd before clone3'
        elif pid == child:
            for i, (mark, before) in enumerate(marks):
                nxt = order[order.index(before) + 1]
                if name == mark and order.index(init_step) < order.index(nxt):
                    init_step = nxt
                    break
            step = init_step
        else:
            if name == 'seccomp' and 'SET_MODE_FILTER' in call:
                payload_step = 'payload: seccomp load'
            elif name == 'execve':
                payload_step = 'payload: exec of /bin/true and its run'
            step = payload_step
        acc[step][0] += 1
        # isd's waits overlap the sandbox's work: counted, not timed; so
        # does init's vfork clone of the payload, which returns only when
        # the payload has exec'd (it was the "Landlock" step's weight)
        waits = ('recvmsg', 'wait4', 'waitid', 'poll', 'ppoll')
        if not ((pid == parent and name in waits) or
                (pid == child and (name in waits + ('rt_sigtimedwait',) or
                                   (name == 'clone' and 'CLONE_VFORK' in call) or call.startswith('<... clone')))):
            acc[step][1] += t
    total = sum(v[1] for v in acc.values()) or 1
    print("where the start goes (strace -f -T of one run; times inflated by strace, read them as weights):")
    for k in order:
        n, t = acc[k]
        if n:
            print(f"  {k:42s} {n:4d} syscalls  {t * 1000:7.2f} ms  {100 * t / total:5.1f} %")
    print(f"  {'total':42s} {sum(v[0] for v in acc.values()):4d} syscalls")


main(sys.argv[1])
