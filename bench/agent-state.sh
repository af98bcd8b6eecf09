#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# What guarding an agent's state costs, on this machine, on a state
# directory of 10 000 files (4 KiB each, 40 MiB):
#  1. start-to-exit of `isd exec --agent-state omp -- true` (a copy-on-write
#     layer, a store created, merged and removed) against the plain
#     read-write bind of the same directory it replaces;
#  2. the same with one transcript line appended (a merge of one file);
#  3. `rm -rf` of the whole state inside: the merge deletes it on the host
#     after backing every file up; then `isd state restore`.
# Prints medians; never asserts a time.
#
#   bench/agent-state.sh [ISD_BINARY]      (needs hyperfine)
set -eu
ISD=$(realpath "${1:-$(dirname "$0")/../build/src/isd}")
RUNS=${RUNS:-40}
FILES=${FILES:-10000}
command -v hyperfine >/dev/null || { echo "bench: install hyperfine" >&2; exit 2; }
scratch=$(mktemp -d "$HOME/.isd-bench.XXXXXX")
trap 'chmod -R u+rwX "$scratch"; rm -rf "$scratch"' EXIT
H=$scratch/home
mkdir -p "$H/.omp/agent/sessions" "$scratch/proj"
python3 - "$H/.omp/agent/sessions" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 100:03d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"s{i}.jsonl"), "wb") as f:
        f.write(b"x" * 4096)
PY
cd "$scratch/proj"
export HOME=$H
hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$scratch/start.json" \
	-n bind "$ISD exec --profile none -v $H/.omp:$H/.omp -- /bin/true" \
	-n guarded "$ISD exec --profile none --agent-state omp -- /bin/true" \
	-n guarded-write "$ISD exec --profile none --agent-state omp -- /bin/sh -c 'echo x >>$H/.omp/agent/sessions/d000/s0.jsonl'" >/dev/null

t0=$(date +%s%N)
"$ISD" exec --profile none --agent-state omp -- /bin/sh -c "rm -rf $H/.omp/agent" 2>/dev/null
t1=$(date +%s%N)
left=$(find "$H/.omp" -type f | wc -l)
"$ISD" state restore >/dev/null
t2=$(date +%s%N)
back=$(find "$H/.omp" -type f | wc -l)
backup=$(du -sk "$H/.local/state/isd/agent-state" | cut -f1)

python3 - "$scratch/start.json" "$FILES" "$t0" "$t1" "$t2" "$left" "$back" "$backup" <<'PY'
import json, sys
s = {x["command"]: x["median"] * 1000 for x in json.load(open(sys.argv[1]))["results"]}
n, t0, t1, t2, left, back, kb = sys.argv[2], *map(int, sys.argv[3:])
for k, v in s.items():
    print(f"start {k:14s} median {v:7.2f} ms")
print(f"guarded - bind: {s['guarded'] - s['bind']:.2f} ms; one merged write: {s['guarded-write'] - s['guarded']:.2f} ms more")
print(f"rm -rf of {n} files inside, merged with backups: {(t1 - t0) / 1e6:.0f} ms ({left} files left on the host, backup {kb // 1024} MiB)")
print(f"isd state restore: {(t2 - t1) / 1e6:.0f} ms ({back} files back)")
PY
