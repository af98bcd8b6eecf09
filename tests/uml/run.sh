#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The cgroup v2 test tier: boots user-mode Linux (a real cgroup2 kernel)
# and runs tests/integration/cgroup.sh there as an unprivileged user
# against the given isd, twice:
#  1. "delegated": a systemd-like delegated subtree (see init.sh), all tests;
#  2. "systemd-user": a real `systemd --user` and nothing writable, only
#     test_systemd_user_scope (skipped when /lib/systemd/systemd is absent).
#   tests/uml/run.sh [--isd PATH] [--probe PATH] [--preload SO] [--out DIR]
# --preload: a library user-mode Linux runs with (uml/xstate-pad.c).
# The test user is the owner of the isd binary (so that it can read the
# build tree), uid 1000 when root owns it; ISD_UML_UID overrides.
# Exit: 0 all passed, 1 a failure (or a machine did not finish), 77 when
# user-mode Linux is missing.  Bounded: 180 s + 60 s for the two machines
# (a normal run takes about 30 s in all).  Logs are kept only on failure
# (or with --out).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
isd=${ISD:-$src/build/src/isd}
probe=${PROBE:-}
out=
while [ $# -gt 0 ]; do
	case $1 in
	--isd) isd=$2; shift 2 ;;
	--probe) probe=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--preload) ISD_UML_PRELOAD=$(readlink -f "$2"); export ISD_UML_PRELOAD; shift 2 ;;
	*) echo "usage: $0 [--isd PATH] [--probe PATH] [--preload SO] [--out DIR]" >&2; exit 2 ;;
	esac
done
isd=$(readlink -f "$isd")
[ -x "$isd" ] || { echo "$0: no isd binary at $isd (build first or pass --isd)" >&2; exit 1; }
case "$isd" in /tmp/*) echo "$0: $isd is under /tmp, which the guest cannot see" >&2; exit 2 ;; esac
keep=${out:+yes}
if [ -z "$out" ]; then
	out=$(mktemp -d "${ISD_UML_TMPDIR:-/var/tmp}/isd-uml.XXXXXX") || exit 1
fi
if [ -z "${ISD_UML_UID:-}" ]; then
	ISD_UML_UID=$(stat -c %u "$isd")
	[ "$ISD_UML_UID" -eq 0 ] && ISD_UML_UID=1000
fi
export ISD_UML_UID
set -- ISD="$isd" ISD_TEST_SRCDIR="$src"
[ -n "$probe" ] && set -- "$@" PROBE="$(readlink -f "$probe")"

status=0
passed=0
failed=0
skipped=0
boot() { # MODE TIMEOUT [VAR=value...]
	mode=$1
	limit=$2
	shift 2
	ISD_UML_MODE=$mode ISD_UML_BOOT_TIMEOUT=${ISD_UML_BOOT_TIMEOUT:-$limit} "$here/boot.sh" "$out/$mode" "$here/guest-tests.sh" ISD_UML_MODE="$mode" "$@"
	rc=$?
	[ "$rc" -eq 77 ] && exit 77
	if [ -f "$out/$mode/results" ]; then
		cat "$out/$mode/results"
		set -- $(sed -n 's/^# \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$out/$mode/results")
		passed=$((passed + ${1:-0}))
		failed=$((failed + ${2:-0}))
		skipped=$((skipped + ${3:-0}))
	else
		echo "not ok: $mode: no results (see $out/$mode/console.log and guest.log)"
		failed=$((failed + 1))
	fi
	echo "# ($(tail -n1 "$out/$mode/console.log" 2>/dev/null | sed 's/^boot.sh: //'))"
	[ "$rc" -eq 0 ] || status=1
}
boot delegated 180 "$@"
if [ -x /lib/systemd/systemd ]; then
	boot systemd-user 60 "$@" ISD_UML_TESTS=test_systemd_user_scope
else
	echo "# systemd-user: skipped (no /lib/systemd/systemd)"
fi
if [ "$status" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; then
	echo "# total: $passed passed, $failed failed, $skipped skipped"
	[ -n "$keep" ] || rm -rf "$out"
	exit 0
fi
echo "# total: $passed passed, $failed failed, $skipped skipped (logs in $out)"
exit 1
