#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the activity log costs, on this machine, in the same run, each
# against the same sandbox without a log (`isd exec --profile none`, the
# log by --activity-log, which is what the agent profile's session log is):
#  1. a loop of 1000 `/bin/true` execs inside (issue 22's goal: at most
#     1.15 times the run without the log);
#  2. start to exit of `isd exec -- /bin/true` (unchanged within noise),
#     in the namespaces tier and the landlock tier;
#  3. a build of a small C project inside, `make -j2` of 40 files (when
#     make and cc are installed; issue 22's goal for a build: 1.02), and
#     with SELF_BUILD=1 this project's own build (meson and ninja, a copy
#     of the source tree; minutes a round, so SELF_ROUNDS=3).
# All are paired and interleaved (each round runs both, in alternating
# order; the machine is shared, so medians of per-round ratios, with
# quartiles); 2 in both isolation tiers.  Prints the figures and ratios;
# never asserts a time.
#
#   bench/activity.sh [ISD_BINARY]      (ROUNDS=10 START_RUNS=200)
set -eu
ISD=$(realpath "${1:-$(dirname "$0")/../build/src/isd}")
ROUNDS=${ROUNDS:-10}
SELF_BUILD=${SELF_BUILD:-}
SELF_ROUNDS=${SELF_ROUNDS:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
START_RUNS=${START_RUNS:-200}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "machine: $(nproc) CPUs, Linux $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"

mkdir -p "$out/proj"
build=
if command -v make >/dev/null && command -v cc >/dev/null; then
	i=0
	while [ $i -lt 40 ]; do
		printf 'int f%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * %d; return s; }\n' $i $i >"$out/proj/f$i.c"
		i=$((i + 1))
	done
	printf 'OBJS = $(patsubst %%.c,%%.o,$(wildcard *.c))\nall: $(OBJS)\n%%.o: %%.c\n\tcc -O1 -c $< -o $@\n' \
		>"$out/proj/Makefile"
	build=yes
else
	echo "bench: make or cc is not installed: no build inside" >&2
fi

self_build=
if [ -n "$SELF_BUILD" ] && command -v meson >/dev/null && command -v ninja >/dev/null; then
	mkdir -p "$out/self"
	# the source tree without its builds (not git: a tarball works too)
	(cd "$SRC" && tar --exclude=./.git --exclude='./build*' -cf - .) | tar -xf - -C "$out/self" && self_build=yes
fi

python3 - "$ISD" "$out" "$ROUNDS" "$build" "$self_build" "$SELF_ROUNDS" <<'PY'
import os, statistics, subprocess, sys, time
isd, out, rounds, build = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "yes"
self_build, self_rounds = sys.argv[5] == "yes", int(sys.argv[6])
log = os.path.join(out, "activity.jsonl")
loop = "i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done"
base = [isd, "exec", "--profile", "none"]
proj = os.path.join(out, "proj")
cases = [("1000 execs of /bin/true", base + ["--", "sh", "-c", loop])]
if build:
    cases.append(("make -j2 of 40 C files", base + ["-v", f"{proj}:{proj}", "-w", proj, "--", "sh", "-c",
                                                   "rm -f *.o && make -s -j2"]))
self_dir = os.path.join(out, "self")
if self_build:
    cases.append(("this project's build (meson setup, ninja -j2)", base + ["-v", f"{self_dir}:{self_dir}", "-w", self_dir,
                  "--", "sh", "-c", "rm -rf b && meson setup b >/dev/null && ninja -C b -j2 >/dev/null"]))
null = subprocess.DEVNULL

def run(cmd, with_log):
    if with_log and os.path.exists(log):
        os.unlink(log)
    c = cmd[:4] + (["--activity-log", log] if with_log else []) + cmd[4:]
    s = time.perf_counter_ns()
    subprocess.run(c, stdout=null, stderr=null, check=True)
    return (time.perf_counter_ns() - s) / 1e6

for name, cmd in cases:
    t = {False: [], True: []}
    # the self build warms up by its own first round: none is thrown away
    n, warm = (self_rounds, 0) if name.startswith("this project") else (rounds, 1)
    for i in range(n + warm):
        for w in ((False, True) if i % 2 == 0 else (True, False)):
            ms = run(cmd, w)
            if i >= warm:
                t[w].append(ms)
    r = sorted(y / x for x, y in zip(t[False], t[True]))
    q = statistics.quantiles(r, n=4) if len(r) > 1 else (r[0], r[0], r[0])
    print(f"{name}: with the log {statistics.median(t[True]):.0f} ms, without {statistics.median(t[False]):.0f} ms, "
          f"ratio {statistics.median(r):.2f} (quartiles {q[0]:.2f}-{q[2]:.2f}, {n} rounds)")
with open(log) as f:
    recs = [l for l in f if '"type":"exec"' in l]
with_exe = sum('"exe":' in l for l in recs)
print(f"  (the last log: {len(recs)} exec records, {with_exe} with the executable that ran)")
PY

# 2: paired rounds, each tier the log can run in (the landlock tier where
# it can run here), every round both runs in alternating order.
python3 - "$ISD" "$out" "$START_RUNS" <<'PY'
import os, statistics, subprocess, sys, time
isd, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
log = os.path.join(out, "start.jsonl")
null = subprocess.DEVNULL
for tier in ("namespaces", "landlock"):
    base = [isd, "exec", "--profile", "none"] + (["--isolation", "landlock"] if tier == "landlock" else [])
    if subprocess.run(base + ["--", "/bin/true"], stdout=null, stderr=null).returncode != 0:
        print(f"start to exit of true, {tier} tier: cannot run here")
        continue
    t = {False: [], True: []}
    for i in range(n + 10):
        for w in ((False, True) if i % 2 == 0 else (True, False)):
            if w and os.path.exists(log):
                os.unlink(log)
            c = base + (["--activity-log", log] if w else [])
            s = time.perf_counter_ns()
            subprocess.run(c + ["--", "/bin/true"], stdout=null, stderr=null, check=True)
            if i >= 10:
                t[w].append((time.perf_counter_ns() - s) / 1e6)
    r = sorted(y / x for x, y in zip(t[False], t[True]))
    q = statistics.quantiles(r, n=4)
    print(f"start to exit of true, {tier} tier: with the log {statistics.median(t[True]):.2f} ms, without "
          f"{statistics.median(t[False]):.2f} ms, ratio {statistics.median(r):.3f} (quartiles {q[0]:.2f}-{q[2]:.2f}, "
          f"{n} pairs)")
PY
