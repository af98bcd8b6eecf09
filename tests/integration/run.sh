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

