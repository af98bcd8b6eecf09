#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# What a copy-on-write workspace costs, on this machine, in the same run:
#  1. start-to-exit of `isd exec --workspace DIR:cow -- true` against
#     DIR:rw on a 50 000-file project (the cow start also creates and
#     removes a session, and walks the tree for masks when there are any);
#  2. `isd diff` of a session with 100 changed files in that tree against
#     `git status` on the same tree (the issue's target: under a second);
#  3. `isd apply` of a session with 700 changed files (600 modified, 100
#     added) against `cp -a` of the same 700 files over a copy of the
#     tree: apply stages each file beside its place, flushes once per file
#     system (syncfs before the renames and after them, never an fsync per
#     file) and renames, cp -a writes in place and flushes nothing; with
#     apply's flushing syscalls from strace when it is installed.
# Prints medians and ratios; never asserts a time.  The start is measured
# with the agent profile's masks twice: from the walk's record of the
# project (what every start but the first does) and with every directory
# read (ISD_MASK_CACHE=0); BASE=ISD_BINARY adds another build's masked
# start to the same rounds (before/after).  START_ONLY=1 stops after it.
#
#   bench/workspace.sh [ISD_BINARY]      (needs hyperfine and git)
set -eu
ISD=${1:-$(dirname "$0")/../build/src/isd}
RUNS=${RUNS:-60}
FILES=${FILES:-50000}
command -v hyperfine >/dev/null || { echo "bench: install hyperfine" >&2; exit 2; }
command -v git >/dev/null || { echo "bench: install git" >&2; exit 2; }
# Not under /tmp: the sandbox has its own /tmp, and the tree should live on
# the file system a project would.
scratch=$(mktemp -d "$HOME/.isd-bench.XXXXXX")
trap 'chmod -R u+rwX "$scratch"; rm -rf "$scratch"' EXIT
export XDG_STATE_HOME=$scratch/state XDG_CACHE_HOME=$scratch/cache
P=$scratch/proj

python3 - "$P" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 500:03d}", f"s{(i // 50) % 10}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i}.c"), "w") as f:
        f.write(f"int f{i}(void) {{ return {i}; }}\n" * 8)
PY
git -C "$P" init -q
git -C "$P" config gc.auto 0 # no background repack while the tree is copied
git -C "$P" add -A
git -C "$P" -c user.name=b -c user.email=b@b commit -qm tree

# 1. start: paired rounds, interleaved (each round runs every variant, in
# alternating order), so that a load that changes during the run moves all
# of them alike; ratios are medians of the rounds' own ratios.
python3 - "$ISD" "$P" "$RUNS" "$(dirname "$0")/../profiles/agent.conf" "${BASE:-}" >"$scratch/start.txt" <<'PY'
import os, statistics, subprocess, sys
import time
isd, p, rounds, conf, base = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
masks = [a for l in open(conf) if l.startswith("--mask ") for a in ("--mask", l.split(None, 1)[1].strip())]
def run(binary, mode, extra=()):
    return [binary, "exec", "--profile", "none", "--workspace", f"{p}:{mode}", *extra, "--", "/bin/true"]
v = [("rw", run(isd, "rw"), None), ("cow", run(isd, "cow"), None),
     ("cow-masks", run(isd, "cow", masks), None),
     ("cow-masks-cold", run(isd, "cow", masks), {**os.environ, "ISD_MASK_CACHE": "0"})]
if base:
    v.append(("base-cow-masks", run(base, "cow", masks), None))
t = {k: [] for k, _, _ in v}
null = subprocess.DEVNULL
for i in range(rounds + 5):
    for k, cmd, env in (v if i % 2 == 0 else v[::-1]):
        s = time.perf_counter_ns()
        subprocess.run(cmd, stdout=null, stderr=null, check=True, env=env)
        if i >= 5:
            t[k].append((time.perf_counter_ns() - s) / 1e6)
def ratio(a, b):
    r = sorted(x / y for x, y in zip(t[a], t[b]))
    q = statistics.quantiles(r, n=4)
    return f"{statistics.median(r):.2f} (quartiles {q[0]:.2f}-{q[2]:.2f})"
for k, _, _ in v:
    print(f"start {k:15s} median {statistics.median(t[k]):7.2f} ms")
print(f"{rounds} rounds, load average {os.getloadavg()[0]:.1f}, {len(masks) // 2} masks (the agent profile's)")
print(f"ratio cow / rw:                   {ratio('cow', 'rw')}")
print(f"ratio cow-masks / rw:             {ratio('cow-masks', 'rw')}   the walk from its record (issue 18: <= 1.5)")
print(f"ratio cow-masks-cold / rw:        {ratio('cow-masks-cold', 'rw')}   every directory read (ISD_MASK_CACHE=0)")
if base:
    print(f"ratio base-cow-masks / rw:        {ratio('base-cow-masks', 'rw')}   {base}")
    print(f"ratio cow-masks / base-cow-masks: {ratio('cow-masks', 'base-cow-masks')}")
PY
cat "$scratch/start.txt"
[ -z "${START_ONLY:-}" ] || exit 0

# 100 changed files: 80 modified, 10 added, 10 deleted; made once in a cow
# session of P and once directly in a copy G for git status to find.
change='for i in $(seq 0 500 39999); do echo "/* changed */" >>"d$(printf %03d $((i / 500)))/s0/f$i.c"; done
	for i in $(seq 1 10); do echo new >d000/s1/new$i.c; done
	for i in $(seq 601 610); do rm d001/s2/f$i.c; done'
G=$scratch/gitproj
cp -a "$P" "$G"
(cd "$G" && sh -c "$change")
"$ISD" exec --profile none --workspace "$P:cow" -- sh -c "$change" 2>/dev/null
id=$(ls "$XDG_STATE_HOME/isd/sessions")

hyperfine -N --warmup 3 --runs 20 --export-json "$scratch/diff.json" \
	-n "git status" "git -C $G status --porcelain" \
	-n "isd diff" "$ISD diff $id" \
	-n "isd diff --stat" "$ISD diff --stat $id" >/dev/null

# 3. apply: each run gets a fresh session (and cp -a a fresh copy) first
"$ISD" discard "$id" >/dev/null
many='for i in $(seq 0 '$((FILES / 600))' '$((FILES - 1))' | head -n 600); do echo "/* changed */" >>"d$(printf %03d $((i / 500)))/s$(((i / 50) % 10))/f$i.c"; done
	mkdir -p new; for i in $(seq 1 100); do echo "int n$i;" >new/n$i.c; done'
C=$scratch/changed
cp -a "$P" "$scratch/work"
mkdir "$C"
(cd "$scratch/work" && sh -c "$many" && git status --porcelain -uall | cut -c4- | tar -cf - -T - | tar -xf - -C "$C")
cat >"$scratch/session.sh" <<EOF
git -C "$P" checkout -q -- . && git -C "$P" clean -qfd
"$ISD" exec --profile none --workspace "$P:cow" -- sh -c '$many' 2>/dev/null
EOF
cat >"$scratch/apply.sh" <<EOF
exec "$ISD" apply "\$(ls -t "$XDG_STATE_HOME/isd/sessions" | head -n1)" >/dev/null
EOF
echo "rm -rf '$scratch/dest' && cp -a '$P' '$scratch/dest'" >"$scratch/dest.sh"
hyperfine -N --runs "${APPLY_RUNS:-10}" --export-json "$scratch/apply.json" \
	--prepare "sh $scratch/session.sh" -n "isd apply" "sh $scratch/apply.sh" \
	--prepare "sh $scratch/dest.sh" -n "cp -a" "cp -a $C/. $scratch/dest/" >/dev/null

python3 - "$scratch/diff.json" "$FILES" "$scratch/apply.json" <<'PY'
import json, sys
def load(p):
    return {x["command"]: x["median"] * 1000 for x in json.load(open(p))["results"]}
d, n, a = load(sys.argv[1]), sys.argv[2], load(sys.argv[3])
for k, v in d.items():
    print(f"{k:16s} median {v:7.2f} ms")
print(f"ratio isd diff / git status (median): {d['isd diff'] / d['git status']:.2f}  (100 changed files in {n})")
for k, v in a.items():
    print(f"{k:16s} median {v:7.2f} ms")
print(f"ratio isd apply / cp -a (median): {a['isd apply'] / a['cp -a']:.2f}  (700 changed files in {n})")
PY
if command -v strace >/dev/null; then
	sh "$scratch/session.sh"
	strace -f -c -o "$scratch/strace" sh "$scratch/apply.sh"
	printf 'isd apply flushes: '
	awk '$NF ~ /^(fsync|fdatasync|syncfs|sync_file_range)$/ { printf "%s %s  ", $NF, $4 } END { print "" }' "$scratch/strace"
fi
