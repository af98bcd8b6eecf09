# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers for integration tests.  Each test is a shell function that
# returns non-zero (or calls fail) when what the payload saw is wrong.

: "${ISD:?ISD must point at the isd binary}"
: "${PROBE:?PROBE must point at the static probe}"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# A skip ends the whole test wherever it is called from: inside `$(...)`, a
# pipeline or a subshell, `exit` would only leave that subshell (and the test
# would go on with an empty value), so it also signals the test's own shell
# (run.sh traps USR1 into exit 77, after the command that is running: so
# helpers that can skip set variables rather than print into $(...)).
skip() {
	echo "SKIP: $*" >&2
	[ -n "${ISD_TEST_PID:-}" ] && kill -USR1 "$ISD_TEST_PID" 2>/dev/null
	exit 77
}

# run_isd ARGS...: runs isd, leaving stdout in $out, stderr in $err, status in $rc.
run_isd() {
	"$ISD" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	return 0
}

# sandbox with the probe bound in at /probe
run_probe() {
	run_isd exec -v "$PROBE:/probe:ro" "$@"
}

# Every expect_* marks the test as having checked something (run.sh fails
# a test that passes without any check); a test file's own expect_* helper
# that checks with fail calls asserted too.
asserted() {
	: >>"$T/.asserted"
}

expect_rc() {
	asserted
	[ "$rc" -eq "$1" ] || fail "${2:-exit status}: expected $1, got $rc (stderr: $err)"
}

expect_eq() {
	asserted
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$2', got '$1'"
}

expect_contains() {
	asserted
	case "$1" in
	*"$2"*) ;;
	*) fail "${3:-output}: expected to contain '$2', got '$1'" ;;
	esac
}

expect_not_contains() {
	asserted
	case "$1" in
	*"$2"*) fail "${3:-output}: must not contain '$2', got '$1'" ;;
	*) ;;
	esac
}

# expect_one_of VALUE "A B ..." [WHAT]
expect_one_of() {
	asserted
	case " $2 " in
	*" $1 "*) [ -n "$1" ] && return 0 ;;
	esac
	fail "${3:-value}: expected one of $2, got '$1'"
}

# The machine's root, not uid 0 of a user namespace (CI's nested tiers
# run the suite as root of `unshare -r` and of bwrap, which map one id).
host_root() {
	[ "$(id -u)" -eq 0 ] && initial_userns
}

# Whether the caller is in the machine's own user namespace (nested in
# unshare -r or bwrap it is not: newuidmap cannot map /etc/subuid there).
initial_userns() {
	[ "$(awk 'NR == 1 {print $3}' /proc/self/uid_map)" = 4294967295 ]
}

# Whether a process's command line contains TEXT: pgrep -f without procps,
# which the README does not install (a missing pgrep made "gone" pass).
proc_running() {
	for c in /proc/[0-9]*/cmdline; do
		case $({ tr '\0' ' ' <"$c"; } 2>/dev/null) in
		*"$1"*) return 0 ;;
		esac
	done
	return 1
}

# wait_until SECONDS CMD...: runs CMD every 0.05 s until it succeeds; 1
# when SECONDS pass first (the caller says what did not happen:
# `wait_until 10 test -s "$T/port" || fail "the server did not start"`).
wait_until() {
	_wu_left=$(($1 * 20))
	shift
	until "$@"; do
		_wu_left=$((_wu_left - 1))
		[ "$_wu_left" -gt 0 ] || return 1
		sleep 0.05
	done
}

# The line of KEY in "KEY: VALUE" output.
field() {
	printf '%s\n' "$1" | sed -n "s/^$2:[[:space:]]*//p" | head -n1
}

test_setup() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/isd-test.XXXXXX") || exit 99
	export T
}

# at_teardown CMD: CMD (run with eval) when the test ends, however it
# ends, before its scratch directories go; the last one added runs first.
# A test never sets an EXIT trap of its own: that would replace this one
# and leave $T behind.
at_teardown() {
	TEARDOWN="$1${TEARDOWN:+; $TEARDOWN}"
}

test_teardown() {
	[ -z "${TEARDOWN:-}" ] || eval "$TEARDOWN"
	for d in "$T" ${HOME_TMP:-}; do
		chmod -R u+rwX "$d" 2>/dev/null
		rm -rf "$d"
	done
}

# A scratch directory under the caller's real home, for tests that need a
# fake HOME that the sandbox shows read-only (anything under /tmp is on the
# sandbox's writable /tmp).
home_scratch() {
	HOME_TMP=$(mktemp -d "$HOME/.isd-test.XXXXXX") || fail "cannot create a scratch directory in $HOME"
}
