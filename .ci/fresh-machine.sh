#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's promise on a fresh machine: a Debian bookworm minbase root
# made with mmdebstrap now (no cache, so nothing installed earlier can hide
# a missing package), a new user with sudo, a fresh clone of this checkout,
# and there the README's first two ```sh blocks, read from README.md and run
# literally as that user: the install-build-run line, then the test command.
# The test command must end with 0 failures; skips are fine but a skip for
# a missing tool must name its package ("TOOL (PACKAGE) is not installed").
#
# The root is entered with pivot_root in new mount and pid namespaces, not
# chroot: the kernel refuses user namespaces to a chrooted process, and the
# sandbox needs them; /proc is mounted fresh, /dev and /sys are the host's.
#
# usage: fresh-machine.sh SRC (a git checkout; its HEAD is cloned)
set -u
SRC=${1:?usage: fresh-machine.sh SRC}
U=newcomer
MIRROR=http://deb.debian.org
LIMIT=${ISD_FRESH_TIMEOUT:-1500}

say() { echo "fresh: $*"; }

# The Nth ```sh block of README.md, as written.
readme_block() {
	awk -v n="$1" '/^```sh[[:space:]]*$/ { b++; inblk = (b == n); next } /^```/ { inblk = 0; next } inblk' "$SRC/README.md"
}
INSTALL=$(readme_block 1)
TEST=$(readme_block 2)
case $INSTALL in *"apt-get install"*) ;; *) say "README.md's first sh block is not the apt-get install line: '$INSTALL'"; exit 1 ;; esac
case $TEST in *"meson test"*) ;; *) say "README.md's second sh block is not the test command: '$TEST'"; exit 1 ;; esac

ROOT=$(mktemp -d /var/tmp/isd-fresh.XXXXXX) || exit 1
trap 'rm -rf --one-file-system "$ROOT"' EXIT

start=$(date +%s)
# Package lists are kept, as on an installed machine (the README does not
# run apt-get update); sudo because the README's line uses it.
if ! mmdebstrap --quiet --variant=minbase --include=sudo --skip=cleanup/apt/lists bookworm "$ROOT" \
	"deb $MIRROR/debian bookworm main" "deb $MIRROR/debian bookworm-updates main" \
	"deb $MIRROR/debian-security bookworm-security main"; then
	say "mmdebstrap failed"
	exit 1
fi
say "minbase root made in $(($(date +%s) - start)) s"

printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$ROOT/etc/hosts"
chroot "$ROOT" useradd -m -s /bin/bash "$U" || exit 1
echo "$U ALL=(ALL:ALL) NOPASSWD: ALL" >"$ROOT/etc/sudoers.d/$U"
chmod 0440 "$ROOT/etc/sudoers.d/$U"
# No hard links: the clone is chowned, the checkout's objects must not be.
git -c safe.directory="*" clone -q --no-hardlinks "$SRC" "$ROOT/home/$U/isd" || exit 1
chroot "$ROOT" chown -R "$U:$U" "/home/$U/isd" || exit 1
printf '%s\n' "$INSTALL" >"$ROOT/readme-install"
printf '%s\n' "$TEST" >"$ROOT/readme-test"

# Inside: the README's lines through the user's login shell, as typed.
# The test log stays in the clone for the checks below.
timeout -k 30 "$LIMIT" unshare --mount --pid --fork --kill-child --propagation private -- \
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin ROOT="$ROOT" U="$U" bash -c '
	set -e
	mount --bind "$ROOT" "$ROOT"
	mount -t proc proc "$ROOT/proc"
	mount --rbind /dev "$ROOT/dev"
	mount --rbind /sys "$ROOT/sys"
	mkdir "$ROOT/.oldroot"
	cd "$ROOT"
	pivot_root . .oldroot
	cd /
	umount -l /.oldroot
	rmdir /.oldroot
	set +e
	echo "fresh: the README'"'"'s first command, as $U:"
	cat /readme-install
	runuser -l "$U" -c "cd isd && $(cat /readme-install)" </dev/null
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "fresh: the README'"'"'s first command failed (exit $rc)"
		exit 1
	fi
	echo "fresh: the README'"'"'s test command, as $U:"
	cat /readme-test
	runuser -l "$U" -c "cd isd && $(cat /readme-test)" </dev/null
'
rc=$?
[ "$rc" -ne 124 ] || say "stopped after $LIMIT s (ISD_FRESH_TIMEOUT)"
log=$ROOT/home/$U/isd/build/meson-logs/testlog.txt
[ -f "$log" ] || { say "no test log (exit $rc)"; exit 1; }

# What failed, with its output (the README's command has no --print-errorlogs).
awk '/^=+ [0-9]+\/[0-9]+ =+$/ { blk = ""; keep = 0 }
	{ blk = blk $0 "\n" }
	/^result:/ && $0 !~ /exit status (0|77)$/ { keep = 1 }
	/^=+$/ && keep { printf "%s", blk; keep = 0 }' "$log"

# Every skip, and those naming no package.
skips=$(awk '/^test:/ { t = $0; sub(/^test:[[:space:]]*/, "", t) } /^SKIP: / { print t ": " substr($0, 7) }' "$log" | sort -u)
say "$(printf '%s\n' "$skips" | grep -c .) skipped:"
printf '%s\n' "$skips" | sed 's/^/  /'
# "TOOL (PACKAGE) is not installed", or a message that goes on to say how
# to install it (agents come from npm, not from the distribution).
bad=$(printf '%s\n' "$skips" | grep -i 'not installed' | grep -v '(.*) is not installed' | grep -v -i 'not installed.*install')
if [ -n "$bad" ]; then
	say "skips for a missing tool that do not say how to install it (\"TOOL (PACKAGE) is not installed\"):"
	printf '%s\n' "$bad" | sed 's/^/  /'
	rc=1
	# counted by .ci/run from meson's summary: one more failure
	echo "Fail: 1"
fi
exit $rc
