#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# What guarding an agent's state costs, on this machine, on a state
# directory of 10 000 files (4 KiB each, 40 MiB), a 30 000-file project and
# 20 stores left by earlier sessions (each keeps a way back):
#  1. start-to-exit of `isd exec ... -- true`, paired and interleaved (each
#     round runs every variant once, in alternating order; the machine is
#     shared, so medians of per-round ratios, not of times, are compared):
#       rw          --profile none --workspace P:rw (issue 18's floor)
#       bind        the same with the state plainly bound (-v)
#       guarded     the same with --agent-state omp (cow layer, store)
#       agent-bind  the agent profile (--agent omp) with the state bound
#       agent       the agent profile as shipped, the state guarded
#  2. one transcript line appended inside (a merge of one file, a backup);
#  3. `rm -rf` of the whole state inside, merged with backups; then
#     `isd state restore`.
# Prints medians and ratios; never asserts a time.
#
#   bench/agent-state.sh [ISD_BINARY]      (ROUNDS=60 FILES=10000 PROJECT_FILES=30000)
set -eu
ISD=$(realpath "${1:-$(dirname "$0")/../build/src/isd}")
ROUNDS=${ROUNDS:-60}
FILES=${FILES:-10000}
PROJECT_FILES=${PROJECT_FILES:-30000}
scratch=$(mktemp -d "$HOME/.isd-bench.XXXXXX")
trap 'chmod -R u+rwX "$scratch"; rm -rf "$scratch"' EXIT
H=$scratch/home
P=$scratch/proj
mkdir -p "$H/.omp/agent/sessions" "$P"
python3 - "$H/.omp/agent/sessions" "$FILES" "$P" "$PROJECT_FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 100:03d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"s{i}.jsonl"), "wb") as f:
        f.write(b"x" * 4096)
proj, n = sys.argv[3], int(sys.argv[4])
for i in range(n):
    d = os.path.join(proj, f"d{i // 500:03d}", f"s{(i // 50) % 10}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i}.c"), "w") as f:
        f.write(f"int f{i}(void) {{ return {i}; }}\n" * 8)
PY
git -C "$P" init -q
git -C "$P" config gc.auto 0
git -C "$P" add -A
git -C "$P" -c user.name=b -c user.email=b@b commit -qm tree
cd "$P"
export HOME=$H
unset XDG_STATE_HOME XDG_CONFIG_HOME
for i in $(seq 20); do
	"$ISD" exec --profile none --agent-state omp -- /bin/sh -c "echo $i >>$H/.omp/agent/sessions/d000/s$i.jsonl; echo $i >$H/.omp/agent/n$i" 2>/dev/null
done

python3 - "$ISD" "$H" "$P" "$ROUNDS" <<'PY'
import os, statistics, subprocess, sys, time
isd, h, p, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
v = [
    ("rw", [isd, "exec", "--profile", "none", "--workspace", p + ":rw", "--", "/bin/true"]),
    ("bind", [isd, "exec", "--profile", "none", "--workspace", p + ":rw", "-v", f"{h}/.omp:{h}/.omp", "--", "/bin/true"]),
    ("guarded", [isd, "exec", "--profile", "none", "--workspace", p + ":rw", "--agent-state", "omp", "--", "/bin/true"]),
    ("agent-bind", [isd, "exec", "--agent", "omp", "-v", f"{h}/.omp:{h}/.omp", "--", "/bin/true"]),
    ("agent", [isd, "exec", "--agent", "omp", "--", "/bin/true"]),
    ("guarded-write", [isd, "exec", "--profile", "none", "--workspace", p + ":rw", "--agent-state", "omp", "--",
                       "/bin/sh", "-c", f"echo x >>{h}/.omp/agent/sessions/d001/s100.jsonl"]),
]
t = {k: [] for k, _ in v}
null = subprocess.DEVNULL
for i in range(rounds + 3):
    for k, cmd in (v if i % 2 == 0 else v[::-1]):
        s = time.perf_counter_ns()
        subprocess.run(cmd, stdout=null, stderr=null, check=True)
        if i >= 3:
            t[k].append((time.perf_counter_ns() - s) / 1e6)
med = {k: statistics.median(x) for k, x in t.items()}
def ratio(a, b):
    r = sorted(x / y for x, y in zip(t[a], t[b]))
    q = statistics.quantiles(r, n=4)
    return f"{statistics.median(r):.2f} (quartiles {q[0]:.2f}-{q[2]:.2f})"
for k, _ in v:
    print(f"start {k:14s} median {med[k]:7.2f} ms")
print(f"{rounds} rounds, load average {os.getloadavg()[0]:.1f}")
print(f"ratio guarded / bind:         {ratio('guarded', 'bind')}   the guard, bare runtime")
print(f"ratio agent / agent-bind:     {ratio('agent', 'agent-bind')}   the guard, agent profile")
print(f"ratio agent-bind / rw:        {ratio('agent-bind', 'rw')}   the agent profile without the guard (issue 18: <= 1.5)")
print(f"ratio agent / rw:             {ratio('agent', 'rw')}   the agent profile as shipped")
print(f"one merged write: {med['guarded-write'] - med['guarded']:+.2f} ms (median difference)")
PY

t0=$(date +%s%N)
"$ISD" exec --profile none --agent-state omp -- /bin/sh -c "rm -rf $H/.omp/agent" 2>/dev/null
t1=$(date +%s%N)
left=$(find "$H/.omp" -type f | wc -l)
"$ISD" state restore >/dev/null
t2=$(date +%s%N)
back=$(find "$H/.omp" -type f | wc -l)
echo "rm -rf of $FILES files inside, merged with backups: $(((t1 - t0) / 1000000)) ms ($left files left on the host)"
echo "isd state restore: $(((t2 - t1) / 1000000)) ms ($back files back)"
