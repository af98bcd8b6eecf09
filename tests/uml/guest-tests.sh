#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Inside user-mode Linux, as the delegated test user: every test_* of
# tests/integration/cgroup.sh through tests/integration/run.sh, each bounded,
# results as TAP-ish lines in $ISD_UML_RESULTS/results plus a summary line.
set -u
src=${ISD_TEST_SRCDIR:?}
res=${ISD_UML_RESULTS:?}
file=$src/tests/integration/cgroup.sh
export ISD PROBE="${PROBE:-$ISD}" ISD_TEST_SRCDIR
echo "# ${ISD_UML_MODE:-delegated}: uid $(id -u), cgroup $(cat /proc/self/cgroup), kernel $(uname -r)" >"$res/results"
pass=0 fail=0 skipped=0 n=0
# ISD_UML_TESTS: only these (comma-separated), else all
tests=$(echo "${ISD_UML_TESTS:-}" | tr , ' ')
[ -n "$tests" ] || tests=$(sed -n 's/^\(test_[a-z0-9_]*\)().*/\1/p' "$file")
for t in $tests; do
	n=$((n + 1))
	timeout -k 5 "${ISD_TEST_TIMEOUT:-60}" sh "$src/tests/integration/run.sh" "$file" "$t" >"$res/$t.log" 2>&1
	rc=$?
	case $rc in
	0)
		pass=$((pass + 1))
		echo "ok $n $t"
		;;
	77)
		skipped=$((skipped + 1))
		echo "ok $n $t # SKIP $(sed -n 's/^SKIP: //p' "$res/$t.log" | head -n1)"
		;;
	*)
		fail=$((fail + 1))
		echo "not ok $n $t (exit $rc)"
		sed 's/^/#   /' "$res/$t.log" | tail -n 15
		;;
	esac >>"$res/results"
done
echo "1..$n" >>"$res/results"
echo "# $pass passed, $fail failed, $skipped skipped" >>"$res/results"
[ "$fail" -eq 0 ]
