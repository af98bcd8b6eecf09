#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start-up cost of the cgroup limits: `isd exec -- true` with
# --memory --memory-swap --cpus --pids-limit against the same without, in
# one hyperfine run inside user-mode Linux (the only cgroup2 kernel on the
# CI machines), as the delegated user.  Prints both means and the ratio.
#   bench/cgroup-start.sh [--isd PATH] [--runs N]
# Needs user-mode-linux and hyperfine (exit 77 without them).
set -u
if [ -z "${ISD_UML_RESULTS:-}" ]; then
	here=$(cd "$(dirname "$0")" && pwd)
	src=$(cd "$here/.." && pwd)
	isd=${ISD:-$src/build/src/isd}
	runs=200
	while [ $# -gt 0 ]; do
		case $1 in
		--isd) isd=$2; shift 2 ;;
		--runs) runs=$2; shift 2 ;;
		*) echo "usage: $0 [--isd PATH] [--runs N]" >&2; exit 2 ;;
		esac
	done
	command -v hyperfine >/dev/null || { echo "SKIP: hyperfine not installed"; exit 77; }
	isd=$(readlink -f "$isd")
	[ -x "$isd" ] || { echo "$0: no isd at $isd" >&2; exit 1; }
	out=$(mktemp -d "${ISD_UML_TMPDIR:-/var/tmp}/isd-bench.XXXXXX") || exit 1
	"$src/tests/uml/boot.sh" "$out" "$here/cgroup-start.sh" ISD="$isd" RUNS="$runs"
	rc=$?
	[ -f "$out/bench.txt" ] && cat "$out/bench.txt"
	[ "$rc" -eq 0 ] || { echo "$0: failed (logs in $out)" >&2; cat "$out/guest.log" >&2; }
	exit "$rc"
fi

# Guest side (user-mode Linux, delegated user).
res=$ISD_UML_RESULTS
limits="--memory 512m --memory-swap 512m --cpus 1 --pids-limit 512"
# Both must work before they are timed.
"$ISD" exec -- true || exit 1
# shellcheck disable=SC2086
"$ISD" exec $limits -- true || exit 1
hyperfine -N --warmup 10 --runs "${RUNS:-200}" --export-csv "$res/bench.csv" \
	-n "no limits" "$ISD exec -- true" \
	-n "4 limits" "$ISD exec $limits -- true" >"$res/hyperfine.txt" 2>&1 || { cat "$res/hyperfine.txt"; exit 1; }
# command,mean,stddev,median,user,system,min,max (seconds)
awk -F, 'NR == 2 { a = $2; as = $3; am = $4 } NR == 3 { b = $2; bs = $3; bm = $4 }
	END {
		printf "user-mode Linux %s, 1 CPU, hyperfine -N, %s runs each\n", kernel, runs
		printf "  isd exec -- true                     mean %.2f ms +- %.2f (median %.2f)\n", a * 1e3, as * 1e3, am * 1e3
		printf "  isd exec %s -- true  mean %.2f ms +- %.2f (median %.2f)\n", limits, b * 1e3, bs * 1e3, bm * 1e3
		printf "  added by the limits: %.2f ms; ratio %.2f (medians: %.2f)\n", (b - a) * 1e3, b / a, bm / am
	}' kernel="$(uname -r)" runs="${RUNS:-200}" limits="$limits" "$res/bench.csv" >"$res/bench.txt"
