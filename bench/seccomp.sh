#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Per-syscall cost of isd's default seccomp filter against no filter and
# against Docker's default profile compiled by the same libseccomp, all in
# isd sandboxes on this machine in the same run.  Prints ns per call and
# the cost each filter adds; never asserts a time.  The floor of an
# argument check is a filter of one rule (TIOCSTI alone): what the kernel
# spends running any filter at all, since it skips the filter only for
# syscalls allowed whatever their arguments (its action cache).  Each
# figure is the fastest batch of 2000 calls (bench/syscall-loop.c) over
# ROUNDS runs, the profiles' rounds interleaved, so that other load on the
# machine shifts them less.
#
#   bench/seccomp.sh [BUILD_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
isd=$build/src/isd
loop=$build/bench/syscall-loop
docker=$here/../tests/seccomp/docker/default.json
n=${N:-3000000}
rounds=${ROUNDS:-5}
[ -x "$loop" ] && [ -x "$isd" ] || { echo "bench: build first (ninja -C $build)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/floor.json" <<'EOF'
{ "defaultAction": "SCMP_ACT_ALLOW", "syscalls": [ { "names": ["ioctl"], "action": "SCMP_ACT_ERRNO",
  "args": [ { "index": 1, "value": 4294967295, "valueTwo": 21522, "op": "SCMP_CMP_MASKED_EQ" } ] } ] }
EOF
profiles="unconfined default $docker $tmp/floor.json"
best() { awk -v p="$1" '$1 == p && (m == "" || $2 < m) { m = $2 } END { print m }' "$tmp/times"; }

for kind in getppid ioctl; do
	: >"$tmp/times"
	i=0
	while [ $i -lt "$rounds" ]; do
		for prof in $profiles; do
			printf '%s ' "$prof" >>"$tmp/times"
			"$isd" exec --security-opt "seccomp=$prof" -v "$loop:/loop:ro" -- /loop "$n" "$kind" >>"$tmp/times"
		done
		i=$((i + 1))
	done
	none=$(best unconfined)
	echo "$kind ($( [ $kind = ioctl ] && echo 'argument-checked rule' || echo 'plain allow')), fastest 2000-call batch of $rounds x $n calls:"
	printf '  unconfined                %6.1f ns/call\n' "$none"
	for prof in default "$docker" "$tmp/floor.json"; do
		case $prof in
		default) label='isd default' ;;
		"$docker") label='docker default' ;;
		*) label='one TIOCSTI rule (floor)' ;;
		esac
		t=$(best "$prof")
		printf '  %-25s %6.1f ns/call  (+%.1f)\n' "$label" "$t" "$(echo "$t - $none" | bc -l)"
	done
done
