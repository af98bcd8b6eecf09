#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The cgroup v2 test tier: boots user-mode Linux (a real cgroup2 kernel with
# a systemd-like delegation, see init.sh) and runs tests/integration/cgroup.sh
# there as an unprivileged user against the given isd.
#   tests/uml/run.sh [--isd PATH] [--probe PATH] [--out DIR]
# Exit: 0 all passed, 1 a failure (or the machine did not finish), 77 when
# user-mode Linux is missing.  Whole run bounded (ISD_UML_BOOT_TIMEOUT, 280 s).
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
	*) echo "usage: $0 [--isd PATH] [--probe PATH] [--out DIR]" >&2; exit 2 ;;
	esac
done
isd=$(readlink -f "$isd")
[ -x "$isd" ] || { echo "$0: no isd binary at $isd (build first or pass --isd)" >&2; exit 1; }
case "$isd" in /tmp/*) echo "$0: $isd is under /tmp, which the guest cannot see" >&2; exit 2 ;; esac
if [ -z "$out" ]; then
	out=$(mktemp -d "${ISD_UML_TMPDIR:-/var/tmp}/isd-uml.XXXXXX") || exit 1
fi
set -- ISD="$isd" ISD_TEST_SRCDIR="$src"
[ -n "$probe" ] && set -- "$@" PROBE="$(readlink -f "$probe")"
"$here/boot.sh" "$out" "$here/guest-tests.sh" "$@"
rc=$?
[ "$rc" -eq 77 ] && exit 77
if [ -f "$out/results" ]; then
	cat "$out/results"
else
	echo "$0: no results (see $out/console.log and $out/guest.log)" >&2
	rc=1
fi
echo "(logs in $out; $(tail -n1 "$out/console.log" 2>/dev/null | sed 's/^boot.sh: //'))"
[ "$rc" -eq 0 ] && exit 0
exit 1
