#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start-to-exit time of `isd exec -- /bin/true` against bwrap with the same
# isolation (user/mount/pid/ipc/uts/net namespaces, read-only host dirs,
# proc, dev, a tmpfs, die-with-parent, new session), on this machine, in the
# same run, against the kernel's floor (`unshare -Urmpnf true`: the
# namespaces alone, no mounts), and the landlock tier (--isolation
# landlock: no namespaces) against the full one.  Prints medians and the
# ratios, then where one start goes (bench/start-breakdown.py, from strace
# when it is installed); never asserts a time.
#
# On a loaded machine the wall time is mostly waits for a CPU; the CPU
# time of the whole tree (perf stat's task-clock, in rounds that alternate
# the commands) moves far less and is printed when perf is installed.
# hyperfine's user+sys is not used: it misses bwrap's pid 1, which bwrap
# does not wait for.
# BASE=ISD_BINARY adds another build in the same run (isd-base) and the
# ratio of the two, as bench/workspace.sh does.
#
#   bench/start.sh [ISD_BINARY]      (needs hyperfine and bubblewrap)
set -eu
ISD=${1:-$(dirname "$0")/../build/src/isd}
RUNS=${RUNS:-300}
command -v hyperfine >/dev/null || { echo "bench: install hyperfine" >&2; exit 2; }
command -v bwrap >/dev/null || { echo "bench: install bubblewrap" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

ro_binds=""
for d in /usr /etc /opt /bin /sbin /lib /lib32 /lib64; do
	[ -e "$d" ] || continue
	if [ -L "$d" ]; then
		ro_binds="$ro_binds --symlink $(readlink "$d") $d"
	else
		ro_binds="$ro_binds --ro-bind $d $d"
	fi
done
bwrap_cmd="bwrap --unshare-all --die-with-parent --new-session $ro_binds --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run --tmpfs /var/tmp /bin/true"

set --
[ -n "${BASE:-}" ] && set -- -n isd-base "$BASE exec -- /bin/true"
hyperfine -N --warmup 30 --runs "$RUNS" --export-json "$out/r.json" \
	-n true "/bin/true" \
	-n bwrap "$bwrap_cmd" \
	-n unshare "unshare -Urmpnf true" \
	-n isd "$ISD exec -- /bin/true" \
	-n isd-unconfined "$ISD exec --security-opt seccomp=unconfined -- /bin/true" \
	-n isd-no-landlock "$ISD exec --security-opt landlock=off -- /bin/true" \
	-n isd-landlock-tier "$ISD exec --isolation landlock -- /bin/true" "$@" >/dev/null

python3 - "$out/r.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
ms = lambda n: r[n]["median"] * 1000
for n in ("true", "bwrap", "unshare", "isd", "isd-unconfined", "isd-no-landlock", "isd-landlock-tier", "isd-base"):
    if n in r:
        print(f"{n:17s} median {ms(n):6.2f} ms  mean {r[n]['mean']*1000:6.2f} ms  (n={len(r[n]['times'])})")
if "isd-base" in r:
    print(f"ratio isd/isd-base (median): {ms('isd')/ms('isd-base'):.2f}")
print(f"ratio isd/bwrap (median): {ms('isd')/ms('bwrap'):.2f}  (below 1.00 means isd starts faster)")
print(f"ratio isd/unshare -Urmpnf (median): {ms('isd')/ms('unshare'):.2f}  (the namespaces alone)")
print(f"Landlock ruleset: {ms('isd')-ms('isd-no-landlock'):+.2f} ms (median with it minus without)")
print(f"ratio landlock tier/full tier (median): {ms('isd-landlock-tier')/ms('isd'):.2f}  (--isolation landlock: no namespaces)")
PY

# CPU per start: perf stat's task-clock over CPU_RUNS starts, in ROUNDS
# alternating rounds, median of the rounds.
if command -v perf >/dev/null && perf stat -e task-clock -x, true >/dev/null 2>&1; then
	ROUNDS=${ROUNDS:-5}
	CPU_RUNS=${CPU_RUNS:-40}
	set -- bwrap unshare isd
	[ -n "${BASE:-}" ] && set -- "$@" isd-base
	for i in $(seq "$ROUNDS"); do
		for n in "$@"; do
			case $n in
			bwrap) c=$bwrap_cmd ;;
			unshare) c="unshare -Urmpnf true" ;;
			isd) c="$ISD exec -- /bin/true" ;;
			isd-base) c="$BASE exec -- /bin/true" ;;
			esac
			# shellcheck disable=SC2086
			perf stat -x, -e task-clock -r "$CPU_RUNS" -- $c 2>&1 >/dev/null |
				awk -F, -v n="$n" '/task-clock/ { print n, $1 }' >>"$out/cpu"
		done
	done
	python3 - "$out/cpu" <<'PY'
import statistics, sys
v = {}
for line in open(sys.argv[1]):
    n, t = line.split()
    v.setdefault(n, []).append(float(t))
m = {n: statistics.median(x) for n, x in v.items()}
for n, x in m.items():
    print(f"cpu {n:12s} {x:5.2f} ms per start (perf stat task-clock, median of {len(v[n])} rounds)")
print(f"cpu ratio isd/bwrap: {m['isd']/m['bwrap']:.2f}, isd/unshare: {m['isd']/m['unshare']:.2f}" +
      (f", isd/isd-base: {m['isd']/m['isd-base']:.2f}" if 'isd-base' in m else ""))
PY
fi

if command -v strace >/dev/null; then
	strace -f -tt -T -o "$out/strace" "$ISD" exec -- /bin/true
	python3 "$(dirname "$0")/start-breakdown.py" "$out/strace"
fi
