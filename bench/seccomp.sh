#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Per-syscall cost of isd's default seccomp filter against no filter and
# against Docker's default profile compiled by the same libseccomp, all in
# isd sandboxes on this machine in the same run.  Prints ns per call and
# the cost each filter adds; never asserts a time.
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

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() { # PROFILE KIND
	i=0
	while [ $i -lt "$rounds" ]; do
		"$isd" exec --security-opt "seccomp=$1" -v "$loop:/loop:ro" -- /loop "$n" "$2"
		i=$((i + 1))
	done | median
}

for kind in getppid ioctl; do
	none=$(measure unconfined $kind)
	isd_default=$(measure default $kind)
	docker_default=$(measure "$docker" $kind)
	echo "$kind ($( [ $kind = ioctl ] && echo 'argument-checked rule' || echo 'plain allow')), median of $rounds x $n calls:"
	printf '  unconfined        %6.1f ns/call\n' "$none"
	printf '  isd default       %6.1f ns/call  (+%.1f)\n' "$isd_default" "$(echo "$isd_default - $none" | bc -l)"
	printf '  docker default    %6.1f ns/call  (+%.1f)\n' "$docker_default" "$(echo "$docker_default - $none" | bc -l)"
done
