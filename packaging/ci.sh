#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The packaging tier of .ci/run, as root on a throw-away Debian machine:
#   - a release tarball from `meson dist` (or, outside a clean git checkout,
#     a copy of the tree), built into a .deb by dpkg-buildpackage as USER;
#   - lintian on it: no error or warning (overrides are explained in
#     packaging/debian/isd.lintian-overrides);
#   - the .deb installed for real with apt, then a smoke test of the
#     installed isd as USER (packaging/smoke-test.sh): --version, exec,
#     profiles, man pages, bash/zsh/fish completions;
#   - the rpm spec parsed by rpmspec -P and checked by rpmlint, the AppArmor
#     profile parsed by apparmor_parser;
#   - the package purged again.
# Prints meson-style "Ok: N" and "Fail: N" lines for .ci/run's count().
#
# Usage: packaging/ci.sh USER [SOURCE_TREE]
set -u
CI_USER=${1:?usage: packaging/ci.sh USER [SOURCE_TREE]}
SRC=${2:-$(cd "$(dirname "$0")/.." && pwd)}
SCRATCH=/tmp/isd-ci-package
. "$(dirname "${BASH_SOURCE[0]}")/check-lib.sh"
as_user() { runuser -u "$CI_USER" -- env -i HOME="/home/$CI_USER" USER="$CI_USER" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 "$@"; }
summary() {
	echo
	echo "Ok:                 $OK"
	echo "Expected Fail:      0"
	echo "Fail:               $FAIL"
	echo "Unexpected Pass:    0"
	echo "Skipped:            $SKIP"
	echo "Timeout:            0"
	[ "$FAIL" -eq 0 ]
	exit
}

echo "installing packaging tools"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends \
	dpkg-dev debhelper dh-apparmor scdoc lintian man-db bash-completion zsh fish \
	apparmor rpm rpmlint git >/dev/null; then
	fail "apt-get install of the packaging tools"
	summary
fi

rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
chown "$CI_USER": "$SCRATCH"
VERSION=$(sed -n "s/^ *version : '\([^']*\)'.*/\1/p" "$SRC/meson.build" | head -1)
TREE=$SCRATCH/isd-$VERSION

# The release tarball, as a distribution would start from it.
if [ -d "$SRC/.git" ] && st=$(as_user git -C "$SRC" status --porcelain --untracked-files=no 2>/dev/null) && [ -z "$st" ] &&
	as_user sh -c "cd '$SCRATCH' && meson setup dist-build '$SRC' -Dtests=disabled -Dman=disabled >/dev/null &&
		meson dist -C dist-build --no-tests --formats xztar >dist.log 2>&1"; then
	pass "meson dist: $(cd "$SCRATCH/dist-build/meson-dist" && ls *.tar.xz)"
	as_user tar -C "$SCRATCH" -xf "$SCRATCH/dist-build/meson-dist/isd-$VERSION.tar.xz"
	as_user cp "$SCRATCH/dist-build/meson-dist/isd-$VERSION.tar.xz" "$SCRATCH/isd_$VERSION.orig.tar.xz"
else
	[ -f "$SCRATCH/dist.log" ] && tail -20 "$SCRATCH/dist.log"
	skip "meson dist (not a clean git checkout): building from a copy of the tree"
	mkdir -p "$TREE"
	tar -C "$SRC" --exclude='./build*' --exclude=./.git --exclude='./obj-*' -cf - . | tar -C "$TREE" -xf -
	chown -R "$CI_USER": "$TREE"
fi

# The .deb, as the unprivileged user (Rules-Requires-Root: no).
as_user cp -a "$TREE/packaging/debian" "$TREE/debian"
if as_user sh -c "cd '$TREE' && dpkg-buildpackage -us -uc -b" >"$SCRATCH/deb.log" 2>&1; then
	pass "dpkg-buildpackage -us -uc -b"
else
	tail -40 "$SCRATCH/deb.log"
	fail "dpkg-buildpackage -us -uc -b"
	summary
fi
DEB=$(ls "$SCRATCH"/isd_"$VERSION"-*_*.deb | head -1)
CHANGES=$(ls "$SCRATCH"/isd_"$VERSION"-*_*.changes | head -1)
dpkg-deb -c "$DEB" | awk '{print "    " $6}'

# lintian: nothing at error or warning level (info and pedantic shown).
as_user lintian --fail-on error,warning -I --pedantic "$CHANGES" >"$SCRATCH/lintian.log" 2>&1
lrc=$?
sed 's/^/    /' "$SCRATCH/lintian.log"
if [ $lrc -eq 0 ] && ! grep -q '^[EW]: ' "$SCRATCH/lintian.log"; then
	pass "lintian: no errors or warnings"
else
	fail "lintian: errors or warnings (above)"
fi

# Installed for real, with its dependencies.
if apt-get install -y -qq --no-install-recommends "$DEB" >"$SCRATCH/install.log" 2>&1; then
	pass "apt-get install $(basename "$DEB")"
	chmod 0755 "$SRC/packaging/smoke-test.sh" 2>/dev/null
	as_user bash "$SRC/packaging/smoke-test.sh" >"$SCRATCH/smoke.log" 2>&1
	cat "$SCRATCH/smoke.log"
	OK=$((OK + $(grep -c '^ok - ' "$SCRATCH/smoke.log")))
	FAIL=$((FAIL + $(grep -c '^FAIL - ' "$SCRATCH/smoke.log")))
	SKIP=$((SKIP + $(grep -c '^skip - ' "$SCRATCH/smoke.log")))
	grep -q '^smoke test done' "$SCRATCH/smoke.log" || fail "smoke test did not finish"
	check "the installed files belong to the package" dpkg -V isd
	check "apt-get purge isd" apt-get purge -y -qq isd
	check "/usr/bin/isd is gone after the purge" test ! -e /usr/bin/isd
else
	tail -20 "$SCRATCH/install.log"
	fail "apt-get install $(basename "$DEB")"
fi

# The rpm spec (Fedora's packaging style), as far as a Debian machine can.
check "rpmspec -P packaging/rpm/isd.spec" rpmspec -P "$SRC/packaging/rpm/isd.spec"
check "rpmlint packaging/rpm/isd.spec" rpmlint -r "$SRC/packaging/rpm/isd.rpmlintrc" "$SRC/packaging/rpm/isd.spec"

# The AppArmor profile.  An AppArmor 4 parser checks it as it is; an older
# one (Debian 12 has 3.0) knows neither abi/4.0 nor the userns rule, so it
# checks the rest: the profile without "userns," and with 3.0's abi.
PROFILE=$SRC/packaging/apparmor/isd
if [ -e /etc/apparmor.d/abi/4.0 ]; then
	check "apparmor_parser -Q -K packaging/apparmor/isd" apparmor_parser -Q -K "$PROFILE"
elif [ -e /etc/apparmor.d/abi/3.0 ]; then
	mkdir -p "$SCRATCH/aa/abi"
	cp /etc/apparmor.d/abi/3.0 "$SCRATCH/aa/abi/4.0"
	grep -vx '  userns,' "$PROFILE" >"$SCRATCH/aa/isd"
	check "apparmor_parser $(apparmor_parser --version | head -1 | awk '{print $NF}'): the profile without its userns rule" \
		apparmor_parser -Q -K -I "$SCRATCH/aa" -I /etc/apparmor.d "$SCRATCH/aa/isd"
	check "the profile grants userns to /usr/bin/isd" grep -qx '  userns,' "$PROFILE"
else
	skip "apparmor_parser: no AppArmor abi files on this machine"
fi

summary
