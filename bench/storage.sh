#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the storage watcher (--storage-opt, src/storage-watch.c) costs, on
# this machine, in the same run:
#  1. a build inside a cow session (FILES C files compiled with make -j
#     into the session's upper layer) with the agent profile's bound
#     (size=10G and the default floor: the watcher runs) against the
#     same build with size=0,min-free=0 (no watcher thread);
#  2. start-to-exit of `isd exec --workspace DIR:cow -- true`, both ways.
# Prints means and ratios; never asserts a time (the target: the build
# within 1.05 x).  Not run in CI.
#
#   bench/storage.sh [ISD_BINARY]      (needs hyperfine, make, cc)
set -eu
ISD=${1:-$(dirname "$0")/../build/src/isd}
RUNS=${RUNS:-5}
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

build="make -s -j$jobs -C $P"
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$scratch/build.json" \
	-n "build, no watcher" "$ISD exec --profile none $off --workspace $P:cow -- $build" \
	-n "build, watcher" "$ISD exec --profile none $on --workspace $P:cow -- $build" >/dev/null
echo "a build of $FILES files inside a cow session (make -j$jobs):"
ratio "$scratch/build.json" "build, no watcher" "build, watcher"

hyperfine -N --warmup 5 --runs "$START_RUNS" --export-json "$scratch/start.json" \
	-n "start, no watcher" "$ISD exec --profile none $off --workspace $P:cow -- /bin/true" \
	-n "start, watcher" "$ISD exec --profile none $on --workspace $P:cow -- /bin/true" >/dev/null
echo "start-to-exit of a cow sandbox:"
ratio "$scratch/start.json" "start, no watcher" "start, watcher"
