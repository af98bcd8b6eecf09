# SPDX-License-Identifier: LGPL-2.1-or-later
# The counted checks of packaging/ci.sh and packaging/smoke-test.sh: one
# line each ("ok - ", "FAIL - ", "skip - "), counts in OK, FAIL and SKIP.
OK=0
FAIL=0
SKIP=0

pass() { OK=$((OK + 1)); echo "ok - $*"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }
skip() { SKIP=$((SKIP + 1)); echo "skip - $*"; }
# check NAME COMMAND...: one counted check, its output shown on failure.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name"
		printf '%s\n' "$out" | tail -30 | sed 's/^/    /'
	fi
}
