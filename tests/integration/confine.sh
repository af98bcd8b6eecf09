# SPDX-License-Identifier: LGPL-2.1-or-later
# What keeps the payload's reach to the host small whoever runs isd: the
# kernel's knobs in /proc read-only, its secrets masked, no setuid bits
# through a bind, a root caller's payload without host root, and no process
# that outlives the sandbox.

# The host's root, not uid 0 of a user namespace (CI's `unshare -r` tier),
# whose payload is an unprivileged id anyway: the host root's files show
# as uid 0 only to it.
is_root() {
	[ "$(id -u)" -eq 0 ] && [ "$(stat -c %u /proc/sys/kernel/core_pattern)" = 0 ]
}

# A global sysctl: the kernel lets any writer whose uid is host root change
# it, capabilities or not.  Writing back the value it has changes nothing
# even where it succeeds.
test_proc_sys_read_only() {
	run_isd exec -- sh -c 'v=$(cat /proc/sys/vm/overcommit_ratio) && echo "$v" > /proc/sys/vm/overcommit_ratio && echo WROTE'
	expect_not_contains "$out" WROTE "the sysctl write"
	expect_contains "$err" "Read-only file system"
	run_isd exec -- sh -c 'for f in /proc/sys /proc/bus /proc/fs /proc/irq /proc/sysrq-trigger; do
		[ -e "$f" ] || continue; grep -q " $f ro," /proc/self/mountinfo && echo "$f ro" || echo "$f rw"; done'
	expect_rc 0
	expect_contains "$out" "/proc/sys ro"
	expect_not_contains "$out" " rw" "every kernel knob read-only"
	# also with --pid host, where /proc is the outer one
	run_isd exec --pid host -- sh -c 'echo 50 > /proc/sys/vm/overcommit_ratio && echo WROTE'
	expect_not_contains "$out" WROTE "the sysctl write under --pid host"
}

test_proc_sys_masked_paths() {
	run_isd exec -- sh -c 'for f in /proc/keys /proc/timer_list /proc/kcore /proc/sched_debug /proc/interrupts; do
		[ -e "$f" ] && printf "%s:%s\n" "$f" "$(head -c 64 "$f" | wc -c)"; done
		for d in /proc/acpi /proc/scsi /sys/firmware; do [ -d "$d" ] && printf "%s:%s\n" "$d" "$(ls -A "$d" | wc -l)"; done; true'
	expect_rc 0
	expect_contains "$out" "/proc/keys:0" "/proc/keys reads empty"
	expect_contains "$out" "/proc/timer_list:0"
	[ -d /sys/firmware ] && expect_contains "$out" "/sys/firmware:0" "/sys/firmware is empty"
	printf '%s\n' "$out" | grep -v ':0$' && fail "a masked path shows content: $out"
	run_isd exec --pid host -- sh -c 'head -c 64 /proc/keys | wc -c'
	expect_eq "$out" 0 "/proc/keys under --pid host"
}

# chmod +s in a writable bind would leave a setuid file on the host, where
# the bind's nosuid does not apply.
test_setid_bits_never_reach_the_host() {
	mkdir "$T/w"
	echo '#!/bin/sh' >"$T/w/tool"
	chmod 0755 "$T/w/tool"
	run_isd exec -v "$T/w:/w" -- sh -c 'chmod 4755 /w/tool; echo "chmod=$?"; chmod g+s /w/tool; echo "chmod-g=$?"
		chmod 0700 /w/tool; echo "plain=$?"
		mknod /w/node p; echo "fifo=$?"'
	expect_rc 0
	expect_contains "$out" "chmod=1"
	expect_contains "$out" "chmod-g=1"
	expect_contains "$out" "plain=0" "a mode without the bits"
	expect_contains "$out" "fifo=0"
	expect_contains "$err" "Operation not permitted"
	mode=$(stat -c %a "$T/w/tool")
	expect_eq "$mode" 700 "the host file's mode"
	if command -v python3 >/dev/null; then
		run_isd exec -v "$T/w:/w" -- python3 -c '
import os
for flags, name in ((os.O_CREAT | os.O_WRONLY, "creat"), (os.O_WRONLY, "reopen")):
    try:
        os.close(os.open("/w/" + ("new" if name == "creat" else "tool"), flags, 0o6755)); print(name, "ok")
    except OSError as e: print(name, e.errno)
try:
    os.close(os.open("/w/plain", os.O_CREAT | os.O_WRONLY, 0o755)); print("plain ok")
except OSError as e: print("plain", e.errno)'
		expect_rc 0
		expect_contains "$out" "creat 1" "open(O_CREAT, 06755) refused"
		expect_contains "$out" "reopen ok" "a mode without O_CREAT is ignored"
		expect_contains "$out" "plain ok"
		[ ! -e "$T/w/new" ] || fail "the setuid file was created: $(stat -c %a "$T/w/new")"
	fi
}

# openat2(2) carries its mode in struct open_how, out of seccomp's sight:
# every shipped profile, the nested one too, must answer ENOSYS, or a
# payload creates a setuid file in a rw bind (root-owned on the host for a
# root caller, whose binds are idmapped).
test_openat2_setuid_create_refused() {
	command -v python3 >/dev/null || skip "python3 (python3) is not installed: needed for a raw openat2"
	mkdir "$T/w"
	for profile in default nested; do
		run_isd exec --security-opt "seccomp=$profile" -v "$T/w:/w" -- python3 -c '
import ctypes, os, sys
class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
libc = ctypes.CDLL(None, use_errno=True)
how = How(os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o6755, 0)
fd = libc.syscall(437, -100, ("/w/" + sys.argv[1]).encode(), ctypes.byref(how), ctypes.sizeof(how))
print("openat2", os.strerror(ctypes.get_errno()) if fd < 0 else "created")' "suid-$profile"
		expect_rc 0 "python3 under seccomp=$profile"
		expect_eq "$out" "openat2 Function not implemented" "openat2(O_CREAT, 06755) under seccomp=$profile"
		if [ -e "$T/w/suid-$profile" ]; then
			fail "openat2 created a file under seccomp=$profile: mode $(stat -c %a "$T/w/suid-$profile")"
		fi
	done
}

# An isd nested in isd gets ENOSYS for openat2 too (above) and resolves its
# paths in user space (src/resolve.c): binds, masks, a workdir through a
# symlink, -u NAME from the passwd file, a cow session and its diff and apply.
test_nested_isd_without_openat2() {
	profiles=$ISD_TEST_SRCDIR/seccomp-profiles
	build=$(dirname "$(dirname "$ISD")")
	outer="-v $build:$build:ro -v $profiles:$profiles:ro -v $T/w:/w"
	# (mapping uid 0 again needs CAP_SETFCAP: a root caller nests as 1000)
	[ "$(id -u)" -ne 0 ] || outer="$outer -u 1000:1000"
	mkdir -p "$T/w/proj/sub" "$T/w/state"
	echo old >"$T/w/proj/a"
	ln -s sub "$T/w/proj/s"
	chmod -R a+rwX "$T/w"
	run_isd exec --security-opt seccomp=nested $outer -- sh -c '
		set -e
		export XDG_STATE_HOME=/w/state
		"$0" exec -v /w/proj:/p -w /p/s -u root -- sh -c "pwd -P; cat ../a; id -u; cat /proc/sys/kernel/ostype; head -c 1 /proc/keys | wc -c"
		"$0" exec --profile none --workspace /w/proj:cow -- sh -c "echo new > a; echo made > sub/made"
		cd /w/proj
		"$0" diff --name-only
		"$0" apply | sed -n "s/^\(applied 2 changes\) .*/\1/p"
		cat /w/proj/a /w/proj/sub/made' "$ISD"
	expect_rc 0 "isd inside isd without openat2"
	expect_eq "$out" "/p/sub
old
0
Linux
0
M	a
A	sub/made
applied 2 changes
new
made"
}

# A root caller's payload is an unprivileged host id, seen from the host,
# while root's own project stays writable and its files root's.
test_root_caller_payload_is_not_host_root() {
	is_root || skip "the root caller's rules need isd run as the host's root"
	export XDG_STATE_HOME="$T/state" # the cow session below stays out of root's home
	mkdir "$T/proj"
	chmod 0700 "$T/proj"
	echo old >"$T/proj/file"
	"$ISD" exec -v "$T/proj:$T/proj" -w "$T/proj" -- sh -c 'echo started > started; exec sleep 30' >"$T/out" 2>"$T/err" &
	isd=$!
	i=0
	while [ ! -e "$T/proj/started" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	pid=$(pgrep -P "$(pgrep -P $isd | head -n1)" -x sleep | head -n1)
	[ -n "$pid" ] || pid=$(pgrep -f 'sleep 30' | head -n1)
	uids=$(sed -n 's/^Uid:[[:space:]]*//p' "/proc/$pid/status")
	gids=$(sed -n 's/^Gid:[[:space:]]*//p' "/proc/$pid/status")
	kill $isd
	wait $isd 2>/dev/null
	[ -n "$uids" ] || fail "no payload found"
	for u in $uids $gids; do [ "$u" -ne 0 ] || fail "the payload's kernel ids: uid $uids gid $gids"; done
	expect_eq "$(stat -c %u:%g "$T/proj/started")" 0:0 "owner on disk of what the payload created"

	run_isd exec -v "$T/proj:$T/proj" -- sh -c "id -u; echo new >> $T/proj/file; echo made > $T/proj/made; chmod 0640 $T/proj/made; ls -ln $T/proj/file"
	expect_rc 0 "root's rw project is writable"
	expect_contains "$out" " 0 0 " "root's files look like the payload's own"
	expect_eq "$(cat "$T/proj/file")" "old
new"
	expect_eq "$(stat -c %u:%g:%a "$T/proj/made")" 0:0:640
	# with -u, the payload's id works on root's files the same way
	run_isd exec -u 1000:1000 -v "$T/proj:$T/proj" -- sh -c "id -u; echo u > $T/proj/by-1000"
	expect_rc 0 "-u 1000 writes root's project"
	expect_eq "$(stat -c %u:%g "$T/proj/by-1000")" 0:0
	# the cow workspace, too, and its upper layer's host path stays hidden
	run_isd exec --workspace "$T/proj:cow" -- sh -c 'echo cow > cowfile && grep " overlay " /proc/self/mountinfo'
	expect_rc 0 "cow workspace as root"
	expect_not_contains "$out" "$HOME" "host paths in mountinfo"
	expect_not_contains "$out" "sessions" "host paths in mountinfo"
	[ ! -e "$T/proj/cowfile" ] || fail "cow wrote through"
	run_isd exec --print-spec -- true
	expect_contains "$out" '"host_uid":'
	expect_not_contains "$out" '"host_uid": 0,' "the spec shows the unprivileged id"
	expect_contains "$out" '"idmapped"'
}

test_root_caller_unsafe_host_root() {
	is_root || skip "the root caller's rules need isd run as the host's root"
	run_isd exec --unsafe-host-root -- sh -c 'cat /proc/self/uid_map'
	expect_rc 0
	expect_contains "$err" "--unsafe-host-root" "the warning"
	expect_contains "$out" "0          0" "host root kept"
	run_isd exec -- cat /proc/self/uid_map
	expect_not_contains "$out" "0          0" "uid 0 is not host root by default"
}

# A payload that double-forks a writer and exits: the writer must be gone
# when isd returns, with or without a pid namespace, and also when isd
# itself is killed.
test_no_process_outlives_the_sandbox() {
	mkdir "$T/w"
	for mode in private host; do
		run_isd exec --pid "$mode" -v "$T/w:/w" -- sh -c \
			"(setsid sh -c 'sleep 1.5; echo late > /w/late-$mode' </dev/null >/dev/null 2>&1 &); echo started"
		expect_rc 0 "--pid $mode"
		expect_eq "$out" started
	done
	"$ISD" exec --pid host -v "$T/w:/w" -- sh -c \
		"(setsid sh -c 'sleep 1.5; echo late > /w/late-killed' </dev/null >/dev/null 2>&1 &); echo started > /w/started; exec sleep 29.25" \
		>/dev/null 2>&1 &
	isd=$!
	i=0
	while [ ! -e "$T/w/started" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -9 $isd
	wait $isd 2>/dev/null
	sleep 2.5
	for mode in private host killed; do
		[ ! -e "$T/w/late-$mode" ] || fail "a process of the sandbox ($mode) outlived isd and wrote"
	done
	pgrep -f 'sleep 29.25' >/dev/null && fail "the payload outlived a killed isd: $(pgrep -af 'sleep 29.25')"
	return 0
}

# isd killed (SIGKILL) during setup or while running leaves its empty cow
# session behind; isd gc removes those, never a kept or running one.
test_gc_removes_sessions_of_killed_runs() {
	mkdir "$T/p"
	echo a >"$T/p/a"
	export XDG_STATE_HOME="$T/state"
	for d in 0.02 0.04 0.06 0.08 0.1 0.15 0.3 0.6; do
		"$ISD" exec --profile none --workspace "$T/p:cow" -- sleep 5 >/dev/null 2>&1 &
		isd=$!
		sleep $d
		kill -9 $isd
		wait $isd 2>/dev/null
	done
	run_isd exec --profile none --workspace "$T/p:cow" --workspace-keep -- true
	expect_rc 0 "a kept empty session"
	# the killed sandboxes' init gets its parent-death signal, then the
	# sessions' locks go
	i=0
	while "$ISD" session ls 2>/dev/null | grep -q ' running ' && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	# a half-created one (no session.json yet) goes once it is old enough
	# that no isd can still be creating it
	mkdir -p "$T/state/isd/sessions/0123456789ab/upper"
	: >"$T/state/isd/sessions/0123456789ab/lock"
	touch -d '1 minute ago' "$T/state/isd/sessions"/*
	before=$(ls "$T/state/isd/sessions" | grep -c '^[0-9a-f]\{12\}$')
	[ "$before" -gt 1 ] || skip "no kill landed after the session was made"
	run_isd gc
	expect_rc 0 "isd gc"
	expect_contains "$out" "left by an interrupted isd exec"
	expect_contains "$out" "0123456789ab (a half-created session)"
	left=$(ls "$T/state/isd/sessions" | grep -c '^[0-9a-f]\{12\}$')
	expect_eq "$left" 1 "sessions left after gc (the kept one)"
}
