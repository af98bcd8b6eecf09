#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the storage watcher (--storage-opt, src/storage-watch.c) costs, on
# this machine, in the same run:
#  1. a build inside a cow session (FILES C files compiled with make -j
#     into the session's upper layer) with the agent profile's bound
#     (size=10G and the default floor: the watcher runs) against the
#     same build with size=0,min-free=0 (no watcher thread);
#  2. start-to-exit of `isd exec --workspace DIR:cow -- true`, both ways.
# Prints medians and ratios; never asserts a time (the target: the build
# within 1.05 x).  Not run in CI.
#
#   bench/storage.sh [ISD_BINARY]      (needs hyperfine, make, cc)
set -eu
ISD=${1:-$(dirname "$0")/../build/src/isd}
RUNS=${RUNS:-8}
START_RUNS=${START_RUNS:-40}
FILES=${FILES:-400}
command -v hyperfine >/dev/null || { echo "bench: install hyperfine" >&2; exit 2; }
command -v make >/dev/null || { echo "bench: install make" >&2; exit 2; }
command -v cc >/dev/null || { echo "bench: install gcc" >&2; exit 2; }
# Not under /tmp: the sandbox has its own /tmp, and the session should live
# on the file system a project's would.
scratch=$(mktemp -d "$HOME/.isd-bench.XXXXXX")
trap 'chmod -R u+rwX "$scratch"; rm -rf "$scratch"' EXIT
export XDG_STATE_HOME=$scratch/state
P=$scratch/proj
mkdir -p "$P/src"
i=0
while [ "$i" -lt "$FILES" ]; do
	printf '#include <stdio.h>\n#include <string.h>\nint f%d(const char *s) { char b[64]; snprintf(b, sizeof(b), "%%s%d", s); return (int)strlen(b); }\n' "$i" "$i" >"$P/src/f$i.c"
	i=$((i + 1))
done
printf 'SRC := $(wildcard src/*.c)\nall: $(SRC:.c=.o)\n%%.o: %%.c\n\t$(CC) -O2 -c -o $@ $<\n' >"$P/Makefile"
jobs=$(nproc)
on="--storage-opt size=10G"
off="--storage-opt size=0 --storage-opt min-free=0"

ratio() {
	python3 - "$@" <<-'PY'
	import json, sys
	res = {r["command"]: r["mean"] for r in json.load(open(sys.argv[1]))["results"]}
	a, b = sys.argv[2], sys.argv[3]
	print(f"  {b}: {res[b] * 1000:.1f} ms = {res[b] / res[a]:.3f} x {a} ({res[a] * 1000:.1f} ms)")
	PY
}

# The build: paired rounds, interleaved (each round runs both, in
# alternating order), the median of the per-round ratios with quartiles:
# on a shared machine the load moves between two blocks of runs more than
# the watcher costs.
build="make -s -j$jobs -C $P"
echo "a build of $FILES files inside a cow session (make -j$jobs), $RUNS paired rounds:"
python3 - "$RUNS" "$ISD exec --profile none $off --workspace $P:cow -- $build" \
	"$ISD exec --profile none $on --workspace $P:cow -- $build" <<'PY'
import shlex, statistics, subprocess, sys, time
rounds, cmd_off, cmd_on = int(sys.argv[1]), shlex.split(sys.argv[2]), shlex.split(sys.argv[3])
def run(cmd):
    t = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t
run(cmd_off)  # warm-up
offs, ons, ratios = [], [], []
for i in range(rounds):
    pair = [(cmd_off, offs), (cmd_on, ons)]
    if i % 2:
        pair.reverse()
    got = {}
    for cmd, out in pair:
        got[id(out)] = run(cmd)
        out.append(got[id(out)])
    ratios.append(got[id(ons)] / got[id(offs)])
q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
print(f"  watcher {statistics.median(ons) * 1000:.0f} ms, no watcher {statistics.median(offs) * 1000:.0f} ms: "
      f"ratio {statistics.median(ratios):.3f} (quartiles {q[0]:.2f}-{q[2]:.2f})")
PY

hyperfine -N --warmup 5 --runs "$START_RUNS" --export-json "$scratch/start.json" \
	-n "start, no watcher" "$ISD exec --profile none $off --workspace $P:cow -- /bin/true" \
	-n "start, watcher" "$ISD exec --profile none $on --workspace $P:cow -- /bin/true" >/dev/null
echo "start-to-exit of a cow sandbox:"
ratio "$scratch/start.json" "start, no watcher" "start, watcher"
