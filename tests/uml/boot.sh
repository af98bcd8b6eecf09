#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# boot.sh OUTDIR GUEST_SCRIPT [VAR=value ...]
# Boots Debian's user-mode Linux on the host's own root (hostfs, read-write:
# only init.sh runs as root in there), sets up a systemd-like delegated
# cgroup2 subtree (init.sh) and runs GUEST_SCRIPT as the unprivileged test
# user with the given VAR=value (no blanks) in its environment.  The guest's
# files (ISD_UML_RESULTS inside) are copied to OUTDIR; the exit status is the
# guest's, 1 when the guest did not finish, 77 without user-mode Linux.
# ISD_UML_PRELOAD: a library user-mode Linux itself runs with (xstate-pad.c).
# Bounded: ISD_UML_BOOT_TIMEOUT (default 280 s) for the whole machine.
set -u
[ $# -ge 2 ] || { echo "usage: $0 OUTDIR GUEST_SCRIPT [VAR=value ...]" >&2; exit 2; }
out=$1
guest=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
uml=$(command -v linux.uml 2>/dev/null || echo /usr/bin/linux.uml)
if [ ! -x "$uml" ]; then
	echo "SKIP: user-mode Linux is not installed (apt-get install user-mode-linux)"
	exit 77
fi
case "$out" in
/*) ;;
*) out=$(pwd)/$out ;;
esac
case "$out" in
/tmp | /tmp/*)
	echo "boot.sh: OUTDIR must not be under /tmp (the guest mounts a tmpfs there)" >&2
	exit 2
	;;
esac
mkdir -p "$out" || exit 2
rm -f "$out/guest-rc"
: >"$out/env"
for kv in "$@"; do
	printf '%s\n' "$kv" >>"$out/env"
done
boot_timeout=${ISD_UML_BOOT_TIMEOUT:-280}
start=$(date +%s.%N)
# Unknown "VAR=value" boot parameters become init's environment.
timeout -k 10 "$boot_timeout" env ${ISD_UML_PRELOAD:+LD_PRELOAD="$ISD_UML_PRELOAD"} "$uml" mem="${ISD_UML_MEM:-1G}" rootfstype=hostfs rootflags=/ rw \
	init="$here/init.sh" con=null con0=fd:0,fd:1 \
	ISD_UML_OUT="$out" ISD_UML_GUEST="$guest" ISD_UML_UID="${ISD_UML_UID:-1000}" ISD_UML_MODE="${ISD_UML_MODE:-delegated}" \
	ISD_UML_TIMEOUT=$((boot_timeout - 20)) ISD_UML_ENV="$out/env" \
	</dev/null >"$out/console.log" 2>&1
uml_rc=$?
end=$(date +%s.%N)
echo "boot.sh: user-mode Linux ran $(awk "BEGIN { printf \"%.1f\", $end - $start }") s (exit $uml_rc)" >>"$out/console.log"
if [ ! -f "$out/guest-rc" ]; then
	echo "boot.sh: the guest did not finish (user-mode Linux exit $uml_rc); console:" >&2
	tail -n 30 "$out/console.log" >&2
	exit 1
fi
exit "$(cat "$out/guest-rc")"
