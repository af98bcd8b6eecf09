# SPDX-License-Identifier: LGPL-2.1-or-later
# The activity log (isd/activity.h): every exec inside, recorded by isd on
# the host from a seccomp notification, shown by `isd log`.

# exec records in log file $1 (the header and the dropped line are not)
exec_records() {
	grep -c '"type":"exec"' "$1"
}

# A kernel without seccomp user notification (before Linux 5.5, or an
# outer listener) records no execs: the header says so.
need_exec_records() {
	grep -q '"type":"header".*"exec_records":false' "$1" &&
		skip "no exec records here: $(sed -n 's/.*"reason":"\([^"]*\)".*/\1/p' "$1" | head -n 1)"
	return 0
}

# expect_listed ID COLUMN HEADER KEY N: isd session list shows N under
# HEADER, its COLUMNth field, for the only session, ID; --json has KEY: N.
expect_listed() {
	run_isd session list
	expect_rc 0 "isd session list"
	expect_eq "$(printf '%s\n' "$out" | awk -v id="$1" -v c="$2" '$1 == "ID" {print $c} $1 == id {print $(c + 1)}')" \
		"$3
$5" "the $3 column of isd session list"
	run_isd session list --json
	printf '%s' "$out" | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert len(s) == 1 and s[0][sys.argv[1]] == int(sys.argv[2]), s
' "$4" "$5" || fail "isd session list --json: no \"$4\": $5 in $out"
}

# The payload's own command and what it runs, with their working
# directories and argv; what came from the sandbox never reaches the
# terminal raw.
test_log_shows_commands_quoted() {
	P=$T/proj
	mkdir -p "$P/sub" "$T/elsewhere"
	export XDG_STATE_HOME=$T/state
	run_isd exec --profile none --workspace "$P:cow" -- \
		sh -c 'cd sub && /bin/true "two words" $(printf "\033]0;pwned\007") && echo x >../changed'
	expect_rc 0 "the payload"
	need_exec_records "$XDG_STATE_HOME"/isd/sessions/*/activity.jsonl
	id=$(ls "$XDG_STATE_HOME/isd/sessions" | grep -v '^\.')
	[ -n "$id" ] || fail "no session kept"
	out=$(cd "$P" && "$ISD" log 2>"$T/err"); rc=$?
	expect_rc 0 "isd log"
	expect_contains "$out" "  $P  \$ sh -c 'cd sub && /bin/true \"two words\""
	expect_contains "$out" "  $P/sub  \$ /bin/true 'two words' \$'\\x1b]0;pwned\\x07'"
	(cd "$P" && "$ISD" log) | od -An -c | grep -q '033' && fail "a raw ESC reached isd log's output"
	(cd "$P" && "$ISD" log --json) | od -An -c | grep -q '033' && fail "a raw ESC reached isd log --json's output"
	json=$(cd "$P" && "$ISD" log --json "$id")
	expect_contains "$json" '"cwd":"'"$P"'/sub","path":"/bin/true","argv":["/bin/true","two words","\u001b]0;pwned\u0007"]'
	# Another project's directory has no session: refused, as isd diff is.
	out=$(cd "$T/elsewhere" && "$ISD" log 2>&1); rc=$?
	expect_rc 125 "isd log outside the project"
	run_isd log 0123456789ab
	expect_rc 125 "isd log of a session that is not the caller's"
	# isd session list counts them: sh and true (echo is sh's own)
	expect_eq "$(exec_records "$XDG_STATE_HOME/isd/sessions/$id/activity.jsonl")" 2 "exec records"
	expect_listed "$id" 5 COMMANDS commands 2
}

# --tree: each process under the one that forked it, the execs of one
# process in order under one node, argv as the timeline quotes it and
# what came from the sandbox visible as text.
test_log_tree() {
	run_isd exec --activity-log "$T/tree.log" -- \
		sh -c 'sh -c "/bin/true a; exec /bin/true c" ; (cd /tmp && /bin/echo b $(printf "\033]0;x\007"))'
	expect_rc 0 "the payload"
	need_exec_records "$T/tree.log"
	run_isd log --tree --file "$T/tree.log"
	expect_rc 0 "isd log --tree"
	cwd=$(sed -n 's/.*"type":"exec".*"cwd":"\([^"]*\)".*/\1/p' "$T/tree.log" | head -n 1)
	# without the times and where sh was found (as root the path, rootless
	# the name isd asked for); pids as the kernel gave them, checked below
	tree=$(printf '%s\n' "$out" | sed 's/^[^ ]*  //; s/pid [0-9]*/pid N/; s/  \[ran [^]]*\]$//; s/  \[exec [^]]*sh\]$//' | sed 1d)
	expect_eq "$tree" "pid N (parent 1)  $cwd  \$ sh -c 'sh -c \"/bin/true a; exec /bin/true c\" ; (cd /tmp && /bin/echo b \$(printf \"\\033]0;x\\007\"))'
  pid N  $cwd  \$ sh -c '/bin/true a; exec /bin/true c'
  pid N, exec 2  $cwd  \$ /bin/true c
    pid N  $cwd  \$ /bin/true a
  pid N  /tmp  \$ /bin/echo b \$'\\x1b]0;x\\x07'" "the tree"
	inner=$(sed -n 's/.*"pid":\([0-9]*\),.*"argv":\["sh","-c","\/bin\/true a; exec.*/\1/p' "$T/tree.log")
	expect_contains "$out" "  pid $inner, exec 2  " "the inner sh's second exec"
	printf '%s\n' "$out" | od -An -c | grep -q '033' && fail "a raw ESC reached isd log --tree's output"
	run_isd log --tree --json --file "$T/tree.log"
	expect_rc 125 "--tree with --json"
}

# A loop of forks and, with make, parallel spawns: one record per exec.
test_every_exec_recorded() {
	run_isd exec --activity-log "$T/loop.log" -- sh -c 'i=0; while [ $i -lt 50 ]; do /bin/true; i=$((i+1)); done'
	expect_rc 0 "the loop"
	need_exec_records "$T/loop.log"
	expect_eq "$(exec_records "$T/loop.log")" 51 "exec records of sh and 50 true"
	expect_eq "$(grep -c '"path":"/bin/true"' "$T/loop.log")" 50 "records of /bin/true"
	command -v make >/dev/null || skip "make (make) is not installed"
	mkdir -p "$T/mk"
	: >"$T/mk/Makefile"
	all=
	for i in 1 2 3 4 5 6 7 8; do
		all="$all t$i"
		printf 't%s:\n\t/bin/echo ran-t%s\n' "$i" "$i" >>"$T/mk/Makefile"
	done
	printf 'all:%s\n' "$all" >>"$T/mk/Makefile"
	run_isd exec --project "$T/mk" --activity-log "$T/make.log" -- make -s -j4 all
	expect_rc 0 "make -j4"
	ran=$(printf '%s\n' "$out" | grep -c '^ran-t')
	expect_eq "$ran" 8 "the recipes that ran"
	expect_eq "$(grep -c '"path":"/bin/echo"' "$T/make.log")" "$ran" "exec records of the recipes"
}

# A payload that execs in a loop: the log stays within its bound, says how
# many records it dropped, and isd's memory stays flat.
test_flood_bounded() {
	ISD_TEST_ACTIVITY_LIMIT=20000 "$ISD_TESTHOOKS" exec --activity-log "$T/flood.log" -- \
		sh -c 'i=0; while [ $i -lt 400 ]; do /bin/true; i=$((i+1)); done' >"$T/out" 2>"$T/err"
	rc=$?
	expect_rc 0 "the flood"
	need_exec_records "$T/flood.log"
	size=$(stat -c %s "$T/flood.log")
	[ "$size" -le 20000 ] || fail "the log grew to $size bytes, past its bound of 20000"
	last=$(tail -n 1 "$T/flood.log")
	expect_contains "$last" '"type":"dropped"'
	dropped=$(printf '%s\n' "$last" | sed 's/.*"records":\([0-9]*\).*/\1/')
	expect_eq "$(( $(exec_records "$T/flood.log") + dropped ))" 401 "records kept and dropped"

	# Under ASan (the ASan tier) freed memory stays resident in its
	# quarantine and the shadow adds its share: a small quarantine and a
	# larger bound there; the plain build keeps the tight one.
	rss_bound=32768
	if ldd "$ISD" 2>/dev/null | grep -q libasan; then
		rss_bound=98304
		export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"
	fi
	"$ISD" exec --activity-log "$T/rss.log" -- \
		sh -c 'i=0; while [ $i -lt 3000 ]; do /bin/true; i=$((i+1)); done; sleep 5' >/dev/null 2>&1 &
	pid=$!
	n=0
	while [ "$(exec_records "$T/rss.log" 2>/dev/null)" != 3002 ] && [ $n -lt 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status")
	wait "$pid"
	expect_eq "$(exec_records "$T/rss.log")" 3002 "records of sh, 3000 true and sleep"
	[ -n "$hwm" ] && [ "$hwm" -lt "$rss_bound" ] || fail "isd's peak RSS after 3000 execs: ${hwm:-?} kB (bound $rss_bound kB)"
}

# isd inside isd: the outer sandbox's listener is the only one the kernel
# allows, so the inner run goes on without exec records and says so; the
# outer log still has the inner payload's commands (a rootless outer isd
# cannot read the argv of the inner payload's own first exec, which runs on
# the memory of the inner isd's non-dumpable init: it records the exec
# without it).
test_nested_isd_says_records_off() {
	profiles=$ISD_TEST_SRCDIR/seccomp-profiles
	outer="-v $ISD:$ISD:ro -v $profiles:$profiles:ro"
	[ "$(id -u)" -ne 0 ] || outer="$outer -u 1000:1000"
	run_isd exec --security-opt seccomp=nested $outer --activity-log "$T/outer.log" -- \
		sh -c "\"$ISD\" exec --activity-log /tmp/inner.log -- /bin/echo inner-ran && cat /tmp/inner.log"
	expect_rc 0 "isd inside isd"
	expect_contains "$out" "inner-ran"
	expect_contains "$out" '"exec_records":false'
	expect_contains "$err" "isd: note: the activity log records no commands in this run"
	[ "$(grep -c '"path":"/bin/echo","argv":\["/bin/echo","inner-ran"\]\|"unreadable":' "$T/outer.log")" -eq 1 ] ||
		fail "the outer log lacks the inner payload's exec: $(cat "$T/outer.log")"
	asserted
}

# --follow: the records of a running session as they are written, whole
# records only, ending on its own once the sandbox has ended.  The payload
# waits for the test to have seen its first command in the follower's
# output, so that what the follower printed came while it ran.
test_log_follow() {
	P=$T/proj
	mkdir -p "$P" "$T/sync"
	export XDG_STATE_HOME=$T/state
	(cd "$P" && "$ISD" exec --profile none --workspace "$P:cow" -v "$T/sync:/sync" -- sh -c \
		'/bin/echo first $(printf "\033]0;pwned\007"); while [ ! -e /sync/go ]; do sleep 0.05; done; /bin/echo second') >"$T/run.out" 2>"$T/run.err" &
	run=$!
	at_teardown "kill $run 2>/dev/null"
	i=0
	while ! grep -qs '"argv":\["/bin/echo","first"' "$XDG_STATE_HOME"/isd/sessions/*/activity.jsonl && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	need_exec_records "$XDG_STATE_HOME"/isd/sessions/*/activity.jsonl
	(cd "$P" && exec "$ISD" log --follow) >"$T/follow" 2>"$T/follow.err" &
	follower=$!
	at_teardown "kill $follower 2>/dev/null"
	(cd "$P" && exec "$ISD" log --follow --json) >"$T/follow.json" 2>"$T/follow-json.err" &
	json=$!
	i=0
	while ! grep -q '/bin/echo first' "$T/follow" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	expect_contains "$(cat "$T/follow")" "  \$ /bin/echo first \$'\\x1b]0;pwned\\x07'" "the follower's output while the sandbox runs"
	expect_not_contains "$(cat "$T/follow")" "  \$ /bin/echo second" "the follower's output before the second command"
	kill -0 "$follower" 2>/dev/null || fail "isd log --follow ended while the sandbox runs: $(cat "$T/follow.err")"
	: >"$T/sync/go"
	wait "$run"
	rc=$?
	expect_rc 0 "the payload"
	# the follower ends on its own (a hang is the test's timeout)
	wait "$follower"
	rc=$?
	err=$(cat "$T/follow.err")
	expect_rc 0 "isd log --follow after the sandbox ended"
	expect_contains "$(cat "$T/follow")" "  \$ /bin/echo second"
	wait "$json"
	rc=$?
	expect_rc 0 "isd log --follow --json"
	python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
argvs = [r.get("argv") for r in recs if r["type"] == "exec"]
assert ["/bin/echo", "second"] in argvs and ["/bin/echo", "first", "\x1b]0;pwned\x07"] in argvs, argvs
' "$T/follow.json" || fail "isd log --follow --json: not every record as JSON: $(cat "$T/follow.json")"
	od -An -c "$T/follow" "$T/follow.json" | grep -q '033' && fail "a raw ESC reached isd log --follow's output"
	# a log whose run has ended: what there is, at once
	run_isd exec --activity-log "$T/ended.log" -- /bin/true ended
	run_isd log --follow --file "$T/ended.log"
	expect_rc 0 "isd log --follow of an ended run"
	expect_contains "$out" "  \$ /bin/true ended"
	run_isd log --follow --tree
	expect_rc 125 "--follow with --tree"
}

# A loopback HTTP server (tests/network/serve.py) serving $T/www/blob, a
# file of 5000 bytes, on $PORT until the test ends; and the client the
# payloads below run (/t/client.py inside).
serve_blob() {
	SPY=/usr/bin/python3
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	HPY=$(command -v python3) || skip "python3 (python3) is not installed"
	mkdir -p "$T/www" "$T/t"
	head -c 5000 /dev/zero >"$T/www/blob"
	"$HPY" "$ISD_TEST_SRCDIR/tests/network/serve.py" http "$T/www" "$T/www.port" &
	echo $! >"$T/www.pid"
	at_teardown 'kill $(cat "$T/www.pid") 2>/dev/null; wait'
	wait_until 10 test -s "$T/www.port" || fail "the test server did not start"
	PORT=$(cat "$T/www.port")
	# connect.py HOST PORT: a CONNECT through isd's proxy, then a GET of
	# /blob; prints the status and the bytes each way.  forward PORT: the
	# GET straight to 127.0.0.1:PORT (a --forward).
	cat >"$T/t/client.py" <<'PY'
import socket, sys
req = b"GET /blob HTTP/1.1\r\nHost: web.test\r\nConnection: close\r\n\r\n"
def get(s):
    s.sendall(req)
    got = 0
    while True:
        c = s.recv(65536)
        if not c:
            return got
        got += len(c)
if sys.argv[1] == "forward":
    s = socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=10)
    print("forward", len(req), get(s))
    sys.exit(0)
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT " + sys.argv[1].encode("latin-1") + b":" + sys.argv[2].encode() + b" HTTP/1.1\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    c = s.recv(1)
    if not c:
        break
    head += c
status = head.split(b" ")[1].decode() if b" " in head else "none"
print(status, len(req), get(s) if status == "200" else 0)
PY
}

# The network side of the log (isd/net-record.h): an allowed connection
# with its bytes each way, a --forward, a denied one with its reason, a
# malformed request whose target holds ESC (visible, never raw), a denied
# DNS name; isd session list counts the connections (a changed file
# keeps the session).
test_log_records_connections() {
	serve_blob
	P=$T/proj
	mkdir -p "$P"
	export XDG_STATE_HOME=$T/state
	run_isd exec --profile none --workspace "$P:cow" --network netless --add-host web.test:127.0.0.1 \
		--allow "web.test:$PORT" --forward "9000:127.0.0.1:$PORT" -v "$T/t:/t:ro" \
		-v "$ISD_TEST_SRCDIR/tests/network:/net:ro" -- sh -c "
		$SPY /t/client.py web.test $PORT; $SPY /t/client.py forward 9000; $SPY /t/client.py evil.test 443
		$SPY /t/client.py \"\$(printf 'ev\\033[31mil.test')\" 443; $SPY /net/dnsquery.py bad.test; echo x >changed"
	expect_rc 0 "the payload"
	allowed=$(printf '%s\n' "$out" | sed -n 1p)
	expect_eq "$(printf '%s\n' "$allowed" | cut -d' ' -f1)" 200 "the allowed CONNECT"
	up=$(printf '%s\n' "$allowed" | cut -d' ' -f2)
	down=$(printf '%s\n' "$allowed" | cut -d' ' -f3)
	[ "$down" -gt 5000 ] || fail "the blob did not come whole: $out"
	fwd_down=$(printf '%s\n' "$out" | sed -n 's/^forward [0-9]* //p')
	expect_eq "$(printf '%s\n' "$out" | sed -n '3,4p' | cut -d' ' -f1 | tr '\n' ' ')" "403 400 " "the denied and the malformed CONNECT"
	expect_contains "$out" NXDOMAIN
	id=$(ls "$XDG_STATE_HOME/isd/sessions" | grep -v '^\.')
	log=$XDG_STATE_HOME/isd/sessions/$id/activity.jsonl
	json=$(cat "$log")
	expect_contains "$json" "{\"type\":\"net\",\"time\":"
	expect_contains "$json" "\"verdict\":\"allowed\",\"what\":\"CONNECT\",\"host\":\"web.test\",\"port\":$PORT,\"rule\":\"web.test:$PORT\",\"via\":\"127.0.0.1\",\"up\":$up,\"down\":$down,"
	expect_contains "$json" "\"verdict\":\"allowed\",\"what\":\"forward\",\"host\":\"127.0.0.1\",\"port\":$PORT,\"rule\":\"--forward\",\"via\":\"127.0.0.1\",\"up\":$up,\"down\":$fwd_down,"
	expect_contains "$json" '"verdict":"denied","what":"CONNECT","host":"evil.test","port":443,"reason":"evil.test:443 is not in the allowlist'
	expect_contains "$json" '"verdict":"failed","what":"request","host":"ev\u001b[31mil.test:443","reason":"malformed HTTP request"'
	expect_contains "$json" '{"type":"dns","time":'
	expect_contains "$json" '"verdict":"denied","what":"DNS","host":"bad.test","reason":"bad.test is not in the allowlist'
	out=$(cd "$P" && "$ISD" log 2>"$T/err"); rc=$?
	expect_rc 0 "isd log"
	expect_contains "$out" "  net allowed CONNECT web.test:$PORT  rule web.test:$PORT  via 127.0.0.1  up $up B  down $down B  "
	expect_contains "$out" "  net allowed forward 127.0.0.1:$PORT  rule --forward  via 127.0.0.1  up $up B  down $fwd_down B  "
	expect_contains "$out" "  net denied CONNECT evil.test:443  evil.test:443 is not in the allowlist; add --allow evil.test:443"
	expect_contains "$out" "  net failed request ev^[[31mil.test:443  malformed HTTP request"
	expect_contains "$out" "  dns denied bad.test  bad.test is not in the allowlist"
	for view in "" --json --tree; do
		# shellcheck disable=SC2086
		(cd "$P" && "$ISD" log $view) | od -An -c | grep -q '033' && fail "a raw ESC reached isd log $view's output"
	done
	tree=$(cd "$P" && "$ISD" log --tree)
	expect_contains "$(printf '%s\n' "$tree" | tail -n 5)" "  dns denied bad.test  " "the tree, then the connections"
	expect_listed "$id" 6 CONNECTIONS connections 4
}

# With a terminal, the relay's denials are summed up at exit (issue 15):
# the count is that of the denied records in the log.
test_log_denials_agree_with_summary() {
	command -v script >/dev/null || skip "script (bsdutils) is not installed"
	serve_blob
	script -qec "\"$ISD\" exec -t --network netless --activity-log \"$T/net.log\" -v \"$T/t:/t:ro\" \
		-v \"$ISD_TEST_SRCDIR/tests/network:/net:ro\" -- sh -c '$SPY /net/dnsquery.py evil.test; \
		$SPY /net/dnsquery.py other.test; $SPY /t/client.py evil.test 443; $SPY /t/client.py web.test $PORT; echo PAYLOAD-DONE'" \
		/dev/null </dev/null >"$T/tty" 2>&1
	out=$(tr -d '\r' <"$T/tty")
	expect_contains "$out" PAYLOAD-DONE
	summary=$(printf '%s\n' "$out" | grep 'isd: network: .* while the terminal was in use')
	denied=$(grep -c '"verdict":"denied"' "$T/net.log")
	expect_eq "$denied" 4 "denied records (two names, two CONNECTs)"
	expect_contains "$summary" "isd: network: $denied requests denied while the terminal was in use: denied DNS evil.test"
	expect_contains "$summary" "the activity log (isd log)"
}

# The network records count toward the log's bound: 200 denied names in a
# log bounded at 8000 bytes leave it within the bound, with the drop line.
test_log_network_records_bounded() {
	SPY=/usr/bin/python3
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	ISD_TEST_ACTIVITY_LIMIT=8000 "$ISD_TESTHOOKS" exec --network netless --activity-log "$T/flood.log" \
		-v "$ISD_TEST_SRCDIR/tests/network:/net:ro" -- "$SPY" -c '
import sys
sys.path.insert(0, "/net")
sys.argv = ["dnsquery.py"]
from dnsquery import query
print(sum(query("n%d.test" % i, "udp") == "NXDOMAIN" for i in range(200)))
' >"$T/out" 2>"$T/err"
	rc=$?
	err=$(cat "$T/err")
	expect_rc 0 "the payload"
	expect_eq "$(cat "$T/out")" 200 "NXDOMAIN answers"
	size=$(stat -c %s "$T/flood.log")
	[ "$size" -le 8000 ] || fail "the log grew to $size bytes, past its bound of 8000"
	last=$(tail -n 1 "$T/flood.log")
	expect_contains "$last" '"type":"dropped"'
	dropped=$(printf '%s\n' "$last" | sed 's/.*"records":\([0-9]*\).*/\1/')
	kept=$(grep -c '"type":"dns"' "$T/flood.log")
	execs=$(grep -c '"type":"exec"' "$T/flood.log")
	want=201
	grep -q '"exec_records":false' "$T/flood.log" && want=200
	expect_eq "$((kept + execs + dropped))" "$want" "records kept and dropped (200 names and the exec)"
}

# The executable that ran, as the kernel names it once the exec is over:
# through a symlink, by a shell's exec, and none for an exec that failed.
test_log_exe_that_ran() {
	sleep_exe=$(readlink -f /bin/sleep)
	sh_exe=$(readlink -f /bin/sh)
	run_isd exec --activity-log "$T/exe.log" -- \
		sh -c 'ln -s /bin/sleep /tmp/snooze && /tmp/snooze 0 && sh -c "exec /tmp/snooze 0"'
	expect_rc 0 "the payload"
	need_exec_records "$T/exe.log"
	expect_eq "$(grep -c '"path":"/tmp/snooze","argv":\["/tmp/snooze","0"\],"exe":"'"$sleep_exe"'"}' "$T/exe.log")" 2 \
		"records of the symlink's execs with the executable that ran"
	expect_contains "$(cat "$T/exe.log")" '"argv":["sh","-c","exec /tmp/snooze 0"],"exe":"'"$sh_exe"'"}'
	run_isd log --file "$T/exe.log"
	expect_contains "$out" "  \$ /tmp/snooze 0  [ran $sleep_exe]"
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	run_isd exec --activity-log "$T/fail.log" -- python3 -c '
import os
try:
    os.execv("/nonexistent", ["nonexistent"])
except OSError:
    pass
os.execv("/bin/true", ["/bin/true", "after"])'
	expect_rc 0 "the payload"
	expect_contains "$(cat "$T/fail.log")" '"path":"/nonexistent","argv":["nonexistent"],"ran":false}'
	expect_contains "$(cat "$T/fail.log")" '"argv":["/bin/true","after"],"exe":"'"$(readlink -f /bin/true)"'"}'
	run_isd log --file "$T/fail.log"
	expect_contains "$out" "  \$ nonexistent  [exec /nonexistent]  [not run: the exec failed]"
}

# A session without changes is removed when its sandbox ends, but what it
# ran is kept: isd log in the project, or by the session's id, shows it;
# the newest 20 such logs are kept.
test_log_of_session_without_changes() {
	P=$T/proj
	mkdir -p "$P"
	export XDG_STATE_HOME=$T/state
	run_isd exec --profile none --workspace "$P:cow" -- /bin/echo nothing-changed
	expect_rc 0 "the payload"
	expect_eq "$(ls "$XDG_STATE_HOME/isd/sessions" | grep -v '^\.')" "" "sessions kept"
	out=$(cd "$P" && "$ISD" log 2>"$T/err"); rc=$?; err=$(cat "$T/err")
	expect_rc 0 "isd log of a session without changes"
	need_exec_records "$XDG_STATE_HOME"/isd/logs/*/activity.jsonl
	expect_contains "$out" "  \$ /bin/echo nothing-changed"
	expect_contains "$err" "ended without changes"
	id=$(ls "$XDG_STATE_HOME/isd/logs")
	run_isd log --json "$id"
	expect_rc 0 "isd log ID of a session without changes"
	expect_contains "$out" '"argv":["/bin/echo","nothing-changed"]'
	# a newer run, with a change, is the one isd log takes; the older stays
	(cd "$P" && "$ISD" exec --profile none --workspace "$P:cow" -- sh -c 'echo x >changed') >/dev/null 2>&1
	out=$(cd "$P" && "$ISD" log 2>/dev/null)
	expect_contains "$out" "  \$ sh -c 'echo x >changed'"
	run_isd log "$id"
	expect_contains "$out" "  \$ /bin/echo nothing-changed" "the older log by its id"
	i=0
	while [ $i -lt 20 ]; do
		"$ISD" exec --profile none --workspace "$P:cow" -- /bin/true "$i" >/dev/null 2>&1 || fail "run $i"
		i=$((i + 1))
	done
	expect_eq "$(ls "$XDG_STATE_HOME/isd/logs" | wc -l)" 20 "logs kept"
	[ -e "$XDG_STATE_HOME/isd/logs/$id" ] && fail "the oldest log was kept past the bound"
	out=$(cd "$P" && "$ISD" log 2>/dev/null)
	expect_contains "$out" "  \$ /bin/true 19"
}

# A --forward-unix connection names the process inside that connected:
# the socket's peer credentials are the kernel's word for it.
test_log_forward_unix_names_the_process() {
	SPY=/usr/bin/python3
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	HPY=$(command -v python3) || skip "python3 (python3) is not installed"
	"$HPY" "$ISD_TEST_SRCDIR/tests/network/serve.py" unix-echo "$T/echo.sock" &
	echo $! >"$T/echo.pid"
	at_teardown 'kill $(cat "$T/echo.pid") 2>/dev/null; wait'
	wait_until 10 test -S "$T/echo.sock" || fail "the unix echo server did not start"
	run_isd exec --network none --activity-log "$T/unix.log" --forward-unix "/run/agent/echo.sock:$T/echo.sock" -- \
		"$SPY" -c '
import os, socket
s = socket.socket(socket.AF_UNIX); s.connect("/run/agent/echo.sock"); s.sendall(b"hi\n")
print(os.getpid(), s.recv(100).decode().strip())'
	expect_rc 0 "the payload"
	expect_contains "$out" " echo: hi"
	pid=${out%% *}
	json=$(cat "$T/unix.log")
	expect_contains "$json" "\"verdict\":\"allowed\",\"what\":\"forward-unix\",\"host\":\"$T/echo.sock\",\"rule\":\"--forward-unix\",\"up\":3,\"down\":9,"
	expect_contains "$json" ",\"pid\":$pid,\"host_pid\":"
	run_isd log --file "$T/unix.log"
	expect_contains "$out" "  net allowed forward-unix $T/echo.sock  rule --forward-unix  up 3 B  down 9 B  "
	expect_contains "$out" " ms  pid $pid"
}

# Every connection the relay sees leaves one record, bounded: ones that
# close before a request (1000 in a loop, and one cut short), and ones
# refused at the relay's cap (ISD_TEST_RELAY_MAX_CONNS: 8 held open, 300
# more); the repeats come coalesced, a few lines whose counts sum to
# every attempt.
test_log_records_every_attempt() {
	SPY=/usr/bin/python3
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	ISD_TEST_RELAY_MAX_CONNS=8 "$ISD_TESTHOOKS" exec --network netless --activity-log "$T/a.log" -- "$SPY" -c '
import select, socket, time
for i in range(1000):
    socket.create_connection(("127.0.0.1", 3128)).close()
time.sleep(1)
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT half")
s.close()
time.sleep(1)
socks = [socket.create_connection(("127.0.0.1", 3128)) for i in range(308)]
refused, deadline = set(), time.time() + 20
while len(refused) < 300 and time.time() < deadline:
    ready = select.select([s for s in socks if s not in refused], [], [], 0.5)[0]
    for s in ready:
        try:
            got = s.recv(1)
        except ConnectionResetError:
            got = b""
        if not got:
            refused.add(s)
print(len(refused))
for s in socks:
    s.close()
' >"$T/out" 2>"$T/err"
	rc=$?
	expect_rc 0 "the payload: $(cat "$T/err")"
	refused=$(cat "$T/out")
	[ "$refused" -ge 300 ] || fail "only $refused connections were refused"
	# sum of the attempts of the net records matching $1
	attempts() {
		grep '"type":"net"' "$T/a.log" | grep -e "$1" |
			sed -n 's/.*"verdict":"[a-z]*"\(,"count":\([0-9]*\)\)\{0,1\}.*/\2/p' | awk '{ n += $1 ? $1 : 1 } END { print n + 0 }'
	}
	# (the first loop's connections can be refused too: the relay may
	# hold 8 the payload closed already, not yet seen closed)
	refused_recs=$(attempts '"verdict":"refused",\("count":[0-9]*,"last":"[^"]*",\)\{0,1\}"what":"request","host":"","reason":"the relay holds 8 connections, as many as it may"')
	[ "$refused_recs" -ge "$refused" ] || fail "$refused connections were refused, the log has $refused_recs"
	expect_eq "$((refused_recs + $(attempts '"what":"request","host":"","reason":"it closed before it sent a request"')))" \
		1308 "attempts in the records of connections refused or without a request"
	expect_eq "$(attempts '"reason":"it closed before its request was whole"')" 1 "the request cut short"
	lines=$(grep -c '"verdict":"refused"\|before it sent a request' "$T/a.log")
	[ "$lines" -le 30 ] || fail "$lines records for the floods: repeats were not coalesced"
	out=$("$ISD" log --file "$T/a.log")
	expect_contains "$out" "  net refused request ?  the relay holds 8 connections, as many as it may  ("
	expect_contains "$out" " times, the last at "
}

# The same at the relay's own cap, in isd itself (no test hook): 4096
# connections held, 20 more refused, each counted in a record.
test_log_records_refused_at_the_real_cap() {
	SPY=/usr/bin/python3
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	[ "$(ulimit -Hn)" -ge 9000 ] || skip "a hard limit of $(ulimit -Hn) descriptors is too few for 4096 connections"
	"$ISD" exec --network netless --activity-log "$T/a.log" -- "$SPY" -c '
import resource, select, socket, time
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
socks = [socket.create_connection(("127.0.0.1", 3128)) for i in range(4096 + 20)]
refused, deadline = 0, time.time() + 30
poll = select.poll()
for s in socks:
    poll.register(s, select.POLLIN)
while refused < 20 and time.time() < deadline:
    for fd, ev in poll.poll(500):
        poll.unregister(fd)
        refused += 1
print(refused)
for s in socks:
    s.close()
' >"$T/out" 2>"$T/err"
	rc=$?
	expect_rc 0 "the payload: $(cat "$T/err")"
	refused=$(cat "$T/out")
	[ "$refused" -ge 20 ] || fail "only $refused connections were refused"
	n=$(grep '"verdict":"refused"' "$T/a.log" | grep '"reason":"the relay holds 4096 connections, as many as it may"' |
		sed -n 's/.*"verdict":"refused"\(,"count":\([0-9]*\)\)\{0,1\}.*/\2/p' | awk '{ n += $1 ? $1 : 1 } END { print n + 0 }')
	expect_eq "$n" "$refused" "attempts in the refused records"
	n=$(grep '"reason":"it closed before it sent a request"' "$T/a.log" |
		sed -n 's/.*"verdict":"failed"\(,"count":\([0-9]*\)\)\{0,1\}.*/\2/p' | awk '{ n += $1 ? $1 : 1 } END { print n + 0 }')
	expect_eq "$n" "$((4096 + 20 - refused))" "attempts in the records of the connections held"
	[ "$(grep -c '"type":"net"' "$T/a.log")" -le 12 ] || fail "the records were not coalesced: $(grep -c '"type":"net"' "$T/a.log")"
}

# The exec listener is a process of isd's in a session of its own, so that
# the scheduler's autogroups give it a turn of its own: each exec waits for
# it twice, and in the caller's session it waited behind all that session
# ran (an agent's busy terminal interface made every exec slower).
test_log_listener_in_its_own_session() {
	"$ISD" exec --profile none --activity-log "$T/a.log" -- sh -c 'sleep 3' >/dev/null 2>&1 &
	isd_pid=$!
	at_teardown "kill $isd_pid 2>/dev/null; wait"
	found=
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		for c in $(cat /proc/$isd_pid/task/*/children 2>/dev/null); do
			[ "$(cat /proc/$c/comm 2>/dev/null)" = isd ] || continue
			# (not the sandbox's init, which leads a session in its own
			# pid namespace)
			[ "$(grep '^NSpid:' /proc/$c/status | wc -w)" = 2 ] || continue
			sid=$(cut -d' ' -f6 /proc/$c/stat)
			[ "$sid" = "$c" ] && [ "$sid" != "$(cut -d' ' -f6 /proc/$isd_pid/stat)" ] && found=$c
		done
		[ -n "$found" ] && break
		sleep 0.1
	done
	[ -n "$found" ] || fail "no child of isd leads a session of its own"
	wait $isd_pid
	rc=$?
	expect_rc 0 "isd"
	expect_eq "$(exec_records "$T/a.log")" 2 "exec records (sh, sleep)"
	# isd does not wait for its end (test_log_end_not_waited_for); it
	# ends with isd, as soon as it is scheduled
	for _ in $(seq 50); do
		[ -d "/proc/$found" ] && [ "$(cat /proc/$found/comm 2>/dev/null)" = isd ] &&
			[ "$(cut -d' ' -f3 /proc/$found/stat 2>/dev/null)" != Z ] || return 0
		sleep 0.1
	done
	fail "the listener outlived isd"
}

# The listener's process ends after the sandbox, once it is scheduled, and
# its end (the teardown of a copy of isd's memory) took part of every
# start: when it holds no record unwritten, isd does not wait for it, and
# the log is complete when isd returns.
test_log_end_not_waited_for() {
	start=$(date +%s)
	# (past the listener's start as a thread: the process is forked)
	ISD_TEST_ACTIVITY_END_DELAY_MS=6000 "$ISD_TESTHOOKS" exec --profile none --activity-log "$T/a.log" \
		-- sh -c 'sleep 0.5; /bin/true' >"$T/out" 2>"$T/err"
	rc=$?
	took=$(( $(date +%s) - start ))
	expect_rc 0 "isd"
	expect_eq "$(exec_records "$T/a.log")" 3 "exec records (sh, sleep, true)"
	expect_eq "$(grep -c '"exe":' "$T/a.log")" 3 "records with the executable that ran"
	[ "$took" -lt 5 ] || fail "isd took $took s: it waited for the listener's end"
	return 0
}

# The listener starts as a thread of isd's (a short run forks nothing for
# it) and hands over to a process of its own session once the run lives
# past its start: an exec loop that runs across the hand-over is recorded
# whole, in order, each record with the executable that ran; what the
# thread recorded and what the process did are one log.
test_log_whole_across_the_handover() {
	run_isd exec --profile none --activity-log "$T/h.log" -- \
		sh -c 'i=0; while [ $i -lt 40 ]; do /bin/true $i; sleep 0.01; i=$((i+1)); done'
	expect_rc 0 "the loop: $err"
	need_exec_records "$T/h.log"
	expect_eq "$(exec_records "$T/h.log")" 81 "exec records of sh, 40 true and 40 sleep"
	expect_eq "$(grep -c '"exe":' "$T/h.log")" 81 "records with the executable that ran"
	seq=$(sed -n 's/.*"path":"\/bin\/true","argv":\["\/bin\/true","\([0-9]*\)"\].*/\1/p' "$T/h.log" | tr '\n' ' ')
	expect_eq "$seq" "$(seq 0 39 | tr '\n' ' ')" "the loop's execs in order"
	# a short run: isd's only child is the sandbox's init
	"$ISD" exec --profile none --activity-log "$T/s.log" -- sh -c 'sleep 0.03' >/dev/null 2>&1 &
	isd_pid=$!
	at_teardown "kill $isd_pid 2>/dev/null; wait"
	sleep 0.01
	kids=
	for _ in 1 2 3 4 5; do
		kids=$(cat /proc/$isd_pid/task/*/children 2>/dev/null | wc -w)
		[ "$kids" -gt 0 ] && break
		sleep 0.005
	done
	wait $isd_pid
	rc=$?
	expect_rc 0 "the short run"
	[ "${kids:-0}" -le 1 ] || fail "isd forked $kids children for a 30 ms run: the listener's process is not needed yet"
	expect_eq "$(exec_records "$T/s.log")" 2 "exec records of the short run (sh, sleep)"
	asserted
}

# argv is read in page-sized batches (pointers and strings): every one of
# 5000 arguments, across pages, in order and whole, and a long one that
# ends past its page.
test_log_argv_across_pages() {
	run_isd exec --profile none --activity-log "$T/m.log" -- \
		sh -c '/bin/true $(seq 1 5000); /bin/true a "$(head -c 9000 /dev/zero | tr "\\0" y)" b'
	expect_rc 0 "isd: $err"
	need_exec_records "$T/m.log"
	got=$(python3 - "$T/m.log" <<'EOF'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if r["type"] == "exec" and r.get("path") == "/bin/true":
        a = r["argv"]
        print(len(a), a[1:] == [str(i) for i in range(1, 5001)] if a[1] == "1" else
              (a[0], a[1], len(a[2]), set(a[2]), a[3], r.get("argv_cut", False)))
EOF
)
	expect_eq "$got" "5001 True
4 ('/bin/true', 'a', 9000, {'y'}, 'b', False)" "the recorded argvs"
}

# The payload's own PATH search tries no name in a directory it may not
# search: its exec could only fail (EACCES), and the log had one record
# of it per such directory ahead of the command (a caller's PATH with
# /root/.cargo/bin, in the landlock tier, where the host's tree is seen).
test_log_path_search_skips_unsearchable_dirs() {
	[ "$(id -u)" -ne 0 ] || skip "root searches every directory (CAP_DAC_OVERRIDE)"
	need_landlock_tier
	mkdir -p "$T/locked/a" "$T/locked/b" && chmod 000 "$T/locked/a" "$T/locked/b" || fail "cannot make the dirs"
	at_teardown "chmod 700 '$T/locked/a' '$T/locked/b'"
	PATH="$T/locked/a:$T/locked/b:$PATH" run_isd exec --isolation landlock --profile none --activity-log "$T/p.log" \
		-- sh -c 'exit 0'
	expect_rc 0 "isd"
	need_exec_records "$T/p.log"
	expect_eq "$(exec_records "$T/p.log")" 1 "exec records (sh alone): $(cat "$T/p.log")"
	PATH="$T/locked/a:$PATH" run_isd exec --isolation landlock --profile none -- no-such-command-here
	expect_rc 127 "a command on no searchable directory"
}

# The landlock tier (no namespace), where it can run here.
need_landlock_tier() {
	run_isd exec --isolation landlock --profile none "$@" -- true
	[ "$rc" -eq 0 ] || skip "the landlock tier cannot run here: $err"
}

# ll_run HOW ARGS...: isd-testhooks exec ARGS in the landlock tier, the
# activity log's listener a process (HOW=process) or a thread of isd's
# (HOW=thread: as where Yama lets only the payload's ancestor read it).
ll_run() {
	how=$1
	shift
	th=
	[ "$how" = thread ] && th=1
	ISD_TEST_ACTIVITY_THREAD=$th "$ISD_TESTHOOKS" exec --isolation landlock --profile none "$@" >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
}

# The landlock tier records every exec as the full tier does, with its
# working directory and argv, and what came from the sandbox visible as
# text (issue 22: the tier refused --activity-log).
test_landlock_log_shows_commands_quoted() {
	need_landlock_tier
	P=$T/proj
	mkdir -p "$P/sub"
	for how in process thread; do
		log=$T/$how.log
		cd "$P" || fail "cd $P"
		ll_run "$how" --workspace "$P:ro" --activity-log "$log" -- \
			sh -c 'cd sub && /bin/true "two words" $(printf "\033]0;pwned\007")'
		cd "$T" || fail "cd $T"
		expect_rc 0 "$how: $err"
		[ -s "$log" ] || fail "$how: no activity log"
		need_exec_records "$log"
		expect_eq "$(exec_records "$log")" 2 "$how: exec records of sh and true: $(cat "$log")"
		expect_contains "$(cat "$log")" '"cwd":"'"$P"'/sub","path":"/bin/true","argv":["/bin/true","two words","\u001b]0;pwned\u0007"]' "$how"
		run_isd log --file "$log"
		expect_rc 0 "$how: isd log"
		expect_contains "$out" "  $P  \$ sh -c 'cd sub && /bin/true \"two words\"" "$how"
		expect_contains "$out" "  $P/sub  \$ /bin/true 'two words' \$'\\x1b]0;pwned\\x07'" "$how"
		printf '%s' "$out" | od -An -c | grep -q '033' && fail "$how: a raw ESC reached isd log's output"
	done
	asserted
}

# A cow session in the landlock tier keeps its log in its directory, as
# the full tier's does: isd log ID prints it, isd session list counts it.
test_landlock_cow_session_log() {
	need_landlock_tier
	P=$T/proj
	mkdir -p "$P"
	export XDG_STATE_HOME=$T/state
	cd "$P" || fail "cd $P"
	ll_run process --workspace "$P:cow" -- sh -c '/bin/echo made >new'
	cd "$T" || fail "cd $T"
	expect_rc 0 "the payload: $err"
	id=$(ls "$XDG_STATE_HOME/isd/sessions" | grep -v '^\.')
	[ -n "$id" ] || fail "no session kept"
	[ -s "$XDG_STATE_HOME/isd/sessions/$id/activity.jsonl" ] || fail "the session has no activity log"
	need_exec_records "$XDG_STATE_HOME/isd/sessions/$id/activity.jsonl"
	run_isd log "$id"
	expect_rc 0 "isd log $id: $err"
	expect_contains "$out" "  \$ sh -c '/bin/echo made >new'"
	expect_contains "$out" "  \$ /bin/echo made"
	expect_listed "$id" 5 COMMANDS commands 2
}

# netless with the log in the landlock tier: one filter, one listener,
# which answers the connect guard's notifications too: the allowed server
# on the loopback is reached through the relay, the denied one is not,
# nor directly (the guard's EACCES); the execs and the connections are
# recorded.
test_landlock_netless_log_keeps_the_guard() {
	SPY=/usr/bin/python3
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	need_landlock_tier --network netless
	mkdir -p "$T/www" "$T/d"
	echo hello >"$T/www/hello.txt"
	# the landlock tier reads nothing of $HOME, where a checkout may be
	cp "$ISD_TEST_SRCDIR/tests/network/netless-get.py" "$T/d/" || fail "cannot copy netless-get.py"
	for s in allowed denied; do
		(cd "$T/www" && SERVE_PORT=0 exec "$SPY" "$ISD_TEST_SRCDIR/tests/network/serve.py" http "$T/www" "$T/$s.port") &
		at_teardown "kill $!"
	done
	wait_until 10 test -s "$T/allowed.port" -a -s "$T/denied.port" || fail "the servers did not start"
	a=$(cat "$T/allowed.port") d=$(cat "$T/denied.port")
	for how in process thread; do
		log=$T/$how.log
		ll_run "$how" --network netless --allow "127.0.0.1:$a" -v "$T/d:$T/d" --activity-log "$log" -- \
			sh -c "$SPY $T/d/netless-get.py $a $d; /bin/true after"
		expect_rc 0 "$how: $err"
		expect_not_contains "$err" "note:" "$how: no note"
		expect_contains "$out" "allowed: hello" "$how: the allowed server through the relay"
		expect_contains "$out" "denied: http 403" "$how: the relay refuses the denied one"
		expect_contains "$out" "direct: failed: <urlopen error [Errno 13]" "$how: the guard refuses a direct connect"
		need_exec_records "$log"
		json=$(cat "$log")
		expect_contains "$json" "\"path\":\"$SPY\",\"argv\":[\"$SPY\",\"$T/d/netless-get.py\",\"$a\",\"$d\"]" "$how"
		expect_contains "$json" '"path":"/bin/true","argv":["/bin/true","after"]' "$how"
		expect_eq "$(exec_records "$log")" 3 "$how: exec records of sh, python3 and true"
		expect_contains "$json" '"type":"net","time"' "$how: the relay's records"
	done
}

# The payload ends while the listener still holds the record of a
# background exec (ISD_TEST_ACTIVITY_WRITE_DELAY_MS: a listener too busy
# to keep it at once): isd kills what is left, but not the listener, which
# writes the record (before, the landlock tier killed it with the rest and
# the record was lost).  The payload waits until the background process's
# exec went on (its comm changed), then ends.
test_landlock_log_outlives_the_kill_of_leftovers() {
	need_landlock_tier
	ISD_TEST_ACTIVITY_WRITE_DELAY_MS=500 "$ISD_TESTHOOKS" exec --isolation landlock --profile none --activity-log "$T/k.log" -- \
		sh -c '/bin/sleep 30 & n=0; while [ $n -lt 3000000 ]; do read -r c </proc/$!/comm || break; [ "$c" = sleep ] && exit 0; n=$((n+1)); done; echo never' \
		>"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_rc 0 "$err"
	expect_not_contains "$out" never "the background exec went on"
	need_exec_records "$T/k.log"
	expect_contains "$(cat "$T/k.log")" '"path":"/bin/sleep","argv":["/bin/sleep","30"]' "the background exec's record"
}
