#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Inside user-mode Linux, as the delegated test user: every test_* of
# tests/integration/cgroup.sh and the cgroup tests of runtime.sh (isd-runtime)
# through tests/integration/run.sh, each bounded, results as TAP-ish lines
# in $ISD_UML_RESULTS/results plus a summary line.
set -u
src=${ISD_TEST_SRCDIR:?}
res=${ISD_UML_RESULTS:?}
file=$src/tests/integration/cgroup.sh
# isd-runtime's tests that need cgroup controllers, which only this tier has
runtime_file=$src/tests/integration/runtime.sh
runtime_tests="test_cgroup_not_gc test_cgroups_path test_update_limits"
ISD_RUNTIME=${ISD_RUNTIME:-$(dirname "$ISD")/isd-runtime}
export ISD PROBE="${PROBE:-$ISD}" ISD_TEST_SRCDIR ISD_RUNTIME
echo "# ${ISD_UML_MODE:-delegated}: uid $(id -u), cgroup $(cat /proc/self/cgroup), kernel $(uname -r)" >"$res/results"
pass=0 fail=0 skipped=0 n=0
# ISD_UML_TESTS: only these (comma-separated), else all
tests=$(echo "${ISD_UML_TESTS:-}" | tr , ' ')
if [ -z "$tests" ]; then
	tests=$(sed -n 's/^\(test_[a-z0-9_]*\)().*/\1/p' "$file")
	for t in $runtime_tests; do
		tests="$tests runtime:$t"
	done
fi
for t in $tests; do
	n=$((n + 1))
	f=$file
	case $t in runtime:*) f=$runtime_file t=${t#runtime:} ;; esac
	timeout -k 5 "${ISD_TEST_TIMEOUT:-60}" sh "$src/tests/integration/run.sh" "$f" "$t" >"$res/$t.log" 2>&1
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
