#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# isd build timings on this machine: a FROM scratch build with a COPY of
# busybox, the no-op rebuild (the build key check: parse, plan, context
# hash), and a build with one RUN step (one sandbox start), each against
# the same work done with plain tools (cp; true) in the same run.  Prints
# means; never asserts a time.  The store is a temporary directory.
#
#   bench/build.sh [ISD_BINARY]      (needs hyperfine and busybox)
set -eu
ISD=${1:-$(dirname "$0")/../build/src/isd}
RUNS=${RUNS:-20}
command -v hyperfine >/dev/null || { echo "bench: install hyperfine" >&2; exit 2; }
bb=$(command -v busybox) || { echo "bench: install busybox-static" >&2; exit 2; }
work=$(mktemp -d)
export XDG_DATA_HOME="$work/data"
trap '"$ISD" image rm scratch run >/dev/null 2>&1; rm -rf "$work"' EXIT

mkdir -p "$work/ctx"
cp "$bb" "$work/ctx/busybox"
printf 'FROM scratch\nCOPY busybox /bin/busybox\n' >"$work/ctx/Containerfile"
printf 'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "true"]\n' >"$work/ctx/Containerfile.run"
"$ISD" build -q -t scratch "$work/ctx"

hyperfine -N --warmup 3 --runs "$RUNS" \
	-n "cp busybox" "cp $bb $work/copy" \
	-n "isd build (no-op)" "$ISD build -q -t scratch $work/ctx" \
	-n "isd build --no-cache (COPY)" "$ISD build -q --no-cache -t scratch $work/ctx"
if "$ISD" build -q -t run -f "$work/ctx/Containerfile.run" "$work/ctx" 2>/dev/null; then
	hyperfine -N --warmup 2 --runs "$RUNS" \
		-n "isd build --no-cache (COPY + RUN)" "$ISD build -q --no-cache -t run -f $work/ctx/Containerfile.run $work/ctx"
else
	echo "bench: RUN skipped (no subordinate ids here)"
fi
"$ISD" image prune >/dev/null
