#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs one integration test case: run.sh FILE FUNCTION
# The environment comes from meson: ISD (the binary), PROBE (static probe),
# ISD_TEST_SRCDIR (the source tree).  Exit 77 means "skipped".
set -u
file=$1
func=$2
. "$(dirname "$0")/lib.sh"
. "$file"
ISD_TEST_PID=$$
trap 'exit 77' USR1
test_setup
trap test_teardown EXIT
"$func"
rc=$?
# A test passes on what it checked, never on its last command alone: it
# must have asserted (expect_*) and kept the teardown.
trap >"$T/.traps" # not in $(...): a subshell has no traps to list
if ! grep -q test_teardown "$T/.traps"; then
	trap test_teardown EXIT
	echo "FAIL: $func replaced the EXIT trap: use at_teardown (lib.sh)" >&2
	exit 1
fi
if [ "$rc" -eq 0 ] && [ ! -e "$T/.asserted" ]; then
	echo "FAIL: $func checked nothing: a test ends with expect_* on what the payload saw" >&2
	exit 1
fi
exit "$rc"

