# SPDX-License-Identifier: LGPL-2.1-or-later
# Isolation tiers (--isolation full|auto|landlock).  The host that refuses
# namespaces is made by nesting: the outer isd loads Docker's default
# seccomp profile (and no Landlock, as Docker has none), which refuses
# clone with namespace flags, as a plain `docker run` does.  The inner isd
# runs a script of the test's, $T/inner.sh, with $T bound at its own path.

DOCKER_PROFILE=$ISD_TEST_SRCDIR/tests/seccomp/docker/default.json
NETDIR=$ISD_TEST_SRCDIR/tests/network
SPY=/usr/bin/python3

# in_docker_like [OUTER_OPTIONS...]: runs $T/inner.sh in the outer sandbox
# ($out, $err, $rc).  Its HOME is $T/home, which holds a secret.
in_docker_like() {
	profiles=$ISD_TEST_SRCDIR/seccomp-profiles
	mkdir -p "$T/home" "$T/ws"
	echo secret >"$T/home/secret"
	run_isd exec --security-opt "seccomp=$DOCKER_PROFILE" --security-opt landlock=off \
		-v "$(dirname "$ISD"):$(dirname "$ISD"):ro" -v "$profiles:$profiles:ro" -v "$PROBE:/probe:ro" -v "$NETDIR:$NETDIR:ro" \
		-v "$T:$T" -e HOME="$T/home" -e ISD="$ISD" -e T="$T" -w "$T/ws" "$@" -- sh "$T/inner.sh"
}

# The default tier fails there with one line that names the cause, the
# engine's fix and --isolation auto.
test_full_refused_names_both_fixes() {
	cat >"$T/inner.sh" <<'EOF'
"$ISD" exec -- true
EOF
	in_docker_like
	expect_rc 125
	expect_contains "$err" "creating the sandbox's namespaces"
	expect_contains "$err" "--security-opt seccomp=unconfined"
	expect_contains "$err" "--isolation auto"
	[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "one line: $err"
}

# auto takes the landlock tier, says so in one note, and ordinary work
# runs: a shell, git, a compiler; the payload has no capabilities,
# no_new_privs and a seccomp filter.
test_auto_runs_sh_git_cc() {
	command -v git >/dev/null || skip "git (git) is not installed"
	command -v cc >/dev/null || skip "cc (gcc) is not installed"
	cat >"$T/inner.sh" <<'EOF'
"$ISD" exec --isolation auto --workspace "$T/ws:rw" --git-writable -v /probe:/probe:ro -- sh -c '
	/probe status
	git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m one && echo git-ok
	printf "int main(void){return 42;}\n" >t.c && cc -o t t.c; ./t; echo cc=$?
	echo tmp=$TMPDIR'
EOF
	in_docker_like
	expect_rc 0 "auto under Docker's profile"
	expect_eq "$(field "$out" CapEff)" 0000000000000000 "CapEff"
	expect_eq "$(field "$out" NoNewPrivs)" 1 "NoNewPrivs"
	expect_eq "$(field "$out" Seccomp)" 2 "Seccomp"
	expect_contains "$out" git-ok
	expect_contains "$out" cc=42
	expect_eq "$(printf '%s\n' "$err" | grep -c '^isd: note: ')" 1 "one note: $err"
	expect_contains "$err" "isd takes the landlock tier"
	expect_contains "$err" "which lacks"
	[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "nothing but the note: $err"
	[ -d "$T/ws/.git" ] || fail "git init in the workspace reached it"
	# the private TMPDIR is gone with the sandbox
	tmp=$(printf '%s\n' "$out" | sed -n 's/^tmp=//p')
	[ -n "$tmp" ] || fail "no TMPDIR: $out"
	case $tmp in */isd-landlock-*/tmp) ;; *) fail "TMPDIR $tmp is not isd's" ;; esac
}

# The file system: read-only everywhere, writable only the workspace and
# the private TMPDIR; the home directory (with its secret) unreadable.
test_landlock_file_system() {
	cat >"$T/inner.sh" <<'EOF'
"$ISD" exec --isolation landlock --workspace "$T/ws:rw" --git-writable -e T="$T" -- sh -c '
	try() { if "$@" >/dev/null 2>&1; then echo "yes: $*"; else echo "no: $*"; fi; }
	try touch "$T/ws/file"
	try touch "$TMPDIR/file"
	try cat "$T/home/secret"
	try ls "$T/home"
	try touch "$T/home/new"
	try touch "$T/outside"
	try touch /tmp/isd-shared
	try touch /etc/isd-test
	try cat /etc/passwd
	echo HOME=$HOME'
EOF
	in_docker_like
	expect_rc 0 "$err"
	expect_contains "$out" "yes: touch $T/ws/file"
	expect_contains "$out" "no: cat $T/home/secret"
	expect_contains "$out" "no: ls $T/home"
	expect_contains "$out" "no: touch $T/home/new"
	expect_contains "$out" "no: touch $T/outside"
	expect_contains "$out" "no: touch /tmp/isd-shared"
	expect_contains "$out" "no: touch /etc/isd-test"
	expect_contains "$out" "yes: cat /etc/passwd"
	expect_contains "$out" "yes: touch /tmp/isd-landlock-"
	[ ! -e "$T/home/new" ] && [ ! -e "$T/outside" ] || fail "a write outside reached the host"
	[ -e "$T/ws/file" ] || fail "the workspace write did not reach it"
	expect_not_contains "$(field "$out" HOME)" "$T/home" "HOME is the private one"
}

# --network none: no TCP to a listener on the container's loopback (one
# the outer sandbox runs), no UDP, no other families.
test_landlock_network_none() {
	[ -x "$SPY" ] || skip "python3 (python3) is not installed"
	cat >"$T/inner.sh" <<'EOF'
/usr/bin/python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
import time; time.sleep(60)' "$T/port" &
while [ ! -s "$T/port" ]; do sleep 0.05; done
port=$(cat "$T/port")
/usr/bin/python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2); print("outer-connects")' "$port"
"$ISD" exec --isolation landlock --network none -- /usr/bin/python3 -c '
import socket, sys
def t(what, f):
    try:
        f(); print("yes", what)
    except OSError as e:
        print("no", what, e.errno)
t("tcp", lambda: socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2))
t("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
t("udp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
t("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
t("bind", lambda: socket.socket().bind(("127.0.0.1", 0)))
t("unix", lambda: socket.socket(socket.AF_UNIX).close())
# listen on a socket never bound binds one on every address itself
t("listen", lambda: socket.socket().listen(1))
# TCP Fast Open connects inside sendto, where Landlock does not look
t("tfo", lambda: socket.socket().sendto(b"x", socket.MSG_FASTOPEN, ("127.0.0.1", int(sys.argv[1]))))
' "$port"
kill $! 2>/dev/null
exit 0
EOF
	in_docker_like
	expect_rc 0 "$err"
	expect_contains "$out" "outer-connects" "the listener is there"
	expect_contains "$out" "no tcp 13"
	expect_contains "$out" "no udp 13"
	expect_contains "$out" "no udp6 13"
	expect_contains "$out" "no netlink 97"
	expect_contains "$out" "no bind 13"
	expect_contains "$out" "yes unix"
	expect_contains "$out" "no tfo 13" "TCP Fast Open"
	expect_contains "$out" "no listen 13" "listen without bind"
}

# netless: an allowed server on the container's loopback is reached
# through isd's relay, a denied one is not, and neither directly.
test_landlock_netless_relay() {
	[ -x "$SPY" ] || skip "python3 (python3) is not installed"
	mkdir -p "$T/www"
	echo hello >"$T/www/hello.txt"
	cat >"$T/inner.sh" <<'EOF'
cd "$T/www"
SERVE_PORT=0 /usr/bin/python3 "$NETDIR/serve.py" http "$T/www" "$T/allowed.port" &
SERVE_PORT=0 /usr/bin/python3 "$NETDIR/serve.py" http "$T/www" "$T/denied.port" &
while [ ! -s "$T/allowed.port" ] || [ ! -s "$T/denied.port" ]; do sleep 0.05; done
a=$(cat "$T/allowed.port"); d=$(cat "$T/denied.port")
"$ISD" exec --isolation landlock --network netless --allow "127.0.0.1:$a" -- /usr/bin/python3 "$NETDIR/netless-get.py" "$a" "$d"
"$ISD" exec --isolation landlock --network netless -- /usr/bin/python3 -c '
import socket
try:
    socket.socket().listen(1); print("listen: yes")
except OSError as e:
    print("listen: no", e.errno)'
kill $(jobs -p) 2>/dev/null
exit 0
EOF
	in_docker_like -e NETDIR="$NETDIR"
	expect_rc 0 "$err"
	expect_contains "$out" "allowed: hello"
	expect_contains "$out" "denied: http 403" "the relay refuses it"
	expect_contains "$out" "direct: failed: <urlopen error [Errno 13]" "Landlock refuses it"
	expect_contains "$out" "listen: no 13" "listen without bind"
}

# netless: Landlock's connect rule names a port, not an address, so the
# payload's connect(2) is isd's (src/connect-guard.c): a listener on
# 127.0.0.2 at the relay's own port (tests/network/connect-guard.py's
# decoy) is reached by no way in (blocking, IPv6, non-blocking, TCP Fast
# Open's connect, sendto, after an AF_UNSPEC disconnect, the address
# rewritten, from the relay's or a unix one, or the descriptor swapped by
# a second process meanwhile),
# while the relay is, blocking, non-blocking and over IPv6.  $T/attack.sh
# runs it all; expect_connects_only_to_the_relay judges its output.
write_connect_attack() {
	mkdir -p "$T/www" "$T/d"
	chmod 0777 "$T/d"
	echo hello >"$T/www/hello.txt"
	# the landlock tier reads nothing of $HOME, where a checkout may be
	cp "$NETDIR/connect-guard.py" "$T/d/" || fail "cannot copy connect-guard.py"
	cat >"$T/attack.sh" <<'EOF'
/usr/bin/python3 "$NETDIR/connect-guard.py" decoy "$T/d" &
echo $! >"$T/decoy.pid"
cd "$T/www"
SERVE_PORT=0 /usr/bin/python3 "$NETDIR/serve.py" http "$T/www" "$T/allowed.port" &
echo $! >"$T/serve.pid"
while [ ! -s "$T/allowed.port" ]; do sleep 0.05; done
a=$(cat "$T/allowed.port")
"$ISD" exec --isolation "$TIER" --network netless --allow "127.0.0.1:$a" -v "$T/d:$T/d" $ATTACK_LOG -- \
	/usr/bin/python3 "$T/d/connect-guard.py" attack "$T/d" "$a"
rc=$?
sleep 0.5
exit $rc
EOF
}

expect_connects_only_to_the_relay() {
	expect_rc 0 "$err"
	for way in connect connect6 nonblock tfo-connect sendto after-unspec; do
		expect_contains "$out" "refused $way 13" "$way"
	done
	expect_contains "$out" "race flip done"
	expect_contains "$out" "race flip-family done"
	expect_contains "$out" "race swap done"
	expect_contains "$out" "reached relay-nonblock" "a non-blocking connect to the relay"
	expect_contains "$out" "reached relay6" "the relay from an IPv6 socket"
	expect_contains "$out" "relay: hello" "the allowed server through the relay"
	[ ! -s "$T/d/decoy.log" ] || fail "the decoy at the relay's port on 127.0.0.2 was reached: $(sort "$T/d/decoy.log" | uniq -c | tr '\n' ' ')"
}

# On this host: isd takes the payload's socket (pidfd_getfd) and connects
# it.
test_landlock_netless_connects_only_to_the_relay() {
	[ -x "$SPY" ] || skip "python3 (python3) is not installed"
	write_connect_attack
	at_teardown 'kill $(cat "$T/decoy.pid" "$T/serve.pid" 2>/dev/null) 2>/dev/null'
	TIER=landlock NETDIR=$NETDIR sh "$T/attack.sh" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_not_contains "$err" "note:" "no note"
	expect_connects_only_to_the_relay
}

# The same with the activity log, whose listener answers the guard's
# connects from the one filter they share (src/sandbox-landlock-listen.c),
# here and under Docker's profile (isd's socket in the payload's place);
# the log records the attack's exec.
test_landlock_netless_with_log_connects_only_to_the_relay() {
	[ -x "$SPY" ] || skip "python3 (python3) is not installed"
	write_connect_attack
	at_teardown 'kill $(cat "$T/decoy.pid" "$T/serve.pid" 2>/dev/null) 2>/dev/null'
	ATTACK_LOG="--activity-log $T/d/attack.log" TIER=landlock NETDIR=$NETDIR sh "$T/attack.sh" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_not_contains "$err" "note:" "no note"
	expect_connects_only_to_the_relay
	expect_contains "$(cat "$T/d/attack.log")" '"argv":["/usr/bin/python3","'"$T"'/d/connect-guard.py","attack"'
	kill $(cat "$T/decoy.pid" "$T/serve.pid" 2>/dev/null) 2>/dev/null
	rm -f "$T/d/attack.log" "$T/d/decoy.log" "$T/allowed.port"
	cat >"$T/inner.sh" <<'EOF'
ATTACK_LOG="--activity-log $T/d/attack.log" TIER=auto sh "$T/attack.sh" 2>"$T/d/err"
EOF
	in_docker_like -e NETDIR="$NETDIR"
	expect_connects_only_to_the_relay
	expect_contains "$(cat "$T/d/attack.log")" '"argv":["/usr/bin/python3","'"$T"'/d/connect-guard.py","attack"' "nested"
}

# Under Docker's default profile, which refuses isd pidfd_getfd: a socket
# of isd's takes the place of the payload's; --isolation auto's one note
# says nothing of the network but the DNS stub.
test_landlock_netless_connects_only_to_the_relay_under_docker_profile() {
	[ -x "$SPY" ] || skip "python3 (python3) is not installed"
	write_connect_attack
	cat >"$T/inner.sh" <<'EOF'
TIER=auto sh "$T/attack.sh" 2>"$T/d/err"
EOF
	in_docker_like -e NETDIR="$NETDIR"
	expect_connects_only_to_the_relay
	err=$(cat "$T/d/err")
	expect_eq "$(printf '%s\n' "$err" | grep -c .)" 1 "auto's lines: $err"
	expect_contains "$err" "isd: note: --isolation auto: "
	expect_contains "$err" "netless's DNS stub (its TCP goes to the relay only"
}

# An outer filter with a listener (the outer isd's --activity-log) leaves
# no listener for the guard: netless runs on Landlock's port rule alone,
# and says so in one note.
test_landlock_netless_under_an_outer_listener_says_so() {
	cat >"$T/inner.sh" <<'EOF'
"$ISD" exec --isolation landlock --network netless -- true
echo "rc=$?"
EOF
	in_docker_like --activity-log "$T/activity.log"
	expect_rc 0 "$err"
	expect_contains "$out" "rc=0"
	expect_contains "$err" "isd: note: --network netless: an outer seccomp filter has the one listener"
}

# The same with the inner run's own --activity-log, which in netless
# shares the one filter and listener with the guard: neither has it, the
# log's header and a note say it records no commands, the guard's note
# says what holds, and the run goes on (before, the tier refused the log).
test_landlock_netless_log_under_an_outer_listener_says_so() {
	cat >"$T/inner.sh" <<'EOF'
"$ISD" exec --isolation landlock --network netless --activity-log "$T/inner.log" -- /bin/echo inner-ran
echo "rc=$?"
EOF
	in_docker_like --activity-log "$T/activity.log"
	expect_rc 0 "$err"
	expect_contains "$out" "inner-ran"
	expect_contains "$out" "rc=0"
	expect_contains "$err" "isd: note: --network netless: an outer seccomp filter has the one listener"
	expect_contains "$err" "isd: note: the activity log records no commands in this run: an outer seccomp filter"
	expect_contains "$(cat "$T/inner.log")" '"exec_records":false'
}

# --forward in netless (how a local model is reached): the payload's
# connect to 127.0.0.1 at the forward's port is isd's, to the forward's
# target (server b, while server a listens at that port on the loopback
# the tier shares); the target's own port stays refused.  The same
# nested under Docker's profile, where isd's socket replaces the
# payload's (no pidfd_getfd), and a forward to the same port.  (Before,
# the tier refused --forward whole.)
GET_PY='import sys, urllib.request
for p in sys.argv[1:]:
    try:
        print(p, urllib.request.urlopen("http://127.0.0.1:%s/id.txt" % p, timeout=5).read().decode().strip())
    except Exception as e:
        print(p, "failed", getattr(e, "reason", e))'
test_landlock_netless_forward() {
	[ -x "$SPY" ] || skip "python3 (python3) is not installed"
	for s in a b; do
		mkdir -p "$T/$s" && echo "server-$s" >"$T/$s/id.txt"
		(cd "$T/$s" && SERVE_PORT=0 exec /usr/bin/python3 "$NETDIR/serve.py" http "$T/$s" "$T/$s.port") &
		at_teardown "kill $!"
	done
	wait_until 10 test -s "$T/a.port" -a -s "$T/b.port" || fail "the servers did not start"
	a=$(cat "$T/a.port") b=$(cat "$T/b.port")
	run_isd exec --isolation landlock --network netless --forward "$a:127.0.0.1:$b" -- /usr/bin/python3 -c "$GET_PY" "$a" "$b"
	expect_rc 0 "$err"
	expect_contains "$out" "$a server-b" "the forward's port reaches its target"
	expect_contains "$out" "$b failed [Errno 13]" "the target's own port"
	# nested: the servers in the outer sandbox's network
	printf '%s\n' "$GET_PY" >"$T/get.py"
	rm -f "$T/a.port" "$T/b.port"
	cat >"$T/inner.sh" <<'EOF'
for s in a b; do (cd "$T/$s" && SERVE_PORT=0 exec /usr/bin/python3 "$NETDIR/serve.py" http "$T/$s" "$T/$s.port") & done
while [ ! -s "$T/a.port" ] || [ ! -s "$T/b.port" ]; do sleep 0.05; done
a=$(cat "$T/a.port") b=$(cat "$T/b.port")
echo "ports=$a $b"
"$ISD" exec --isolation landlock --network netless --forward "$a:127.0.0.1:$a" -- /usr/bin/python3 -c "$(cat "$T/get.py")" "$a" "$b" 2>&1
echo "same=$?"
"$ISD" exec --isolation landlock --network netless --forward "$a:127.0.0.1:$b" -- /usr/bin/python3 -c "$(cat "$T/get.py")" "$a" "$b" 2>&1 | sed 's/^/other: /'
echo "other=$?"
kill $(jobs -p) 2>/dev/null
exit 0
EOF
	in_docker_like -e NETDIR="$NETDIR"
	expect_rc 0 "$err"
	a=$(printf '%s\n' "$out" | sed -n 's/^ports=\([0-9]*\) .*/\1/p') b=$(printf '%s\n' "$out" | sed -n 's/^ports=[0-9]* //p')
	expect_contains "$out" "same=0"
	expect_contains "$out" "$a server-a" "a forward to the same port"
	expect_contains "$out" "$b failed [Errno 13]" "another port"
	expect_contains "$out" "other: $a server-b" "nested: the forward's port reaches its target"
	expect_contains "$out" "other: $b failed [Errno 13]" "nested: the target's own port"
}

# The full tier with isd's store on overlayfs (a plain `podman run` of an
# image puts the home on the container's overlay), which overlayfs refuses
# as an upper layer: the cow workspace and the agent's state are copies,
# bound at their places, said in one note, and the session is like any
# other (isd diff, apply).  Made here by nesting isd in an isd whose cow
# workspace holds the store.  (Before: "overlay: filesystem on ... not
# supported as upperdir", and no run.)
test_full_cow_with_store_on_overlayfs() {
	mkdir -p "$T/outer/proj" "$T/outer/home/.pi"
	echo one >"$T/outer/proj/f"
	echo '{}' >"$T/outer/home/.pi/settings.json"
	cat >"$T/inner.sh" <<'EOF'
export XDG_STATE_HOME=$PWD/state HOME=$PWD/home
cd proj || exit 1
echo "store-fs=$(stat -f -c %T .)"
"$ISD" exec --workspace "$PWD:cow" --agent pi -- sh -c 'echo two >>f; echo new >g; echo state >~/.pi/new.json; grep NoNewPrivs /proc/self/status' 2>"$HOME/exec.err"
echo "exec=$?"
sed 's/^/exec-err: /' "$HOME/exec.err"
echo "before=$(cat f g 2>/dev/null | tr '\n' ' ')"
echo "state=$(cat "$HOME/.pi/new.json" 2>/dev/null)"
"$ISD" diff >"$HOME/diff.out" 2>&1; echo "diff=$?"
grep -c -E '^[+](two|new)$' "$HOME/diff.out" | sed 's/^/diff-lines=/'
"$ISD" apply >/dev/null 2>&1; echo "apply=$?"
echo "after=$(cat f g | tr '\n' ' ')"
ls "$XDG_STATE_HOME/isd/sessions" | grep -v '^[.]' | while read -r s; do [ -e "$XDG_STATE_HOME/isd/sessions/$s/full-copy" ] && echo "copy-left=$s"; done
exit 0
EOF
	# (uid 0 inside an isd cannot map itself again)
	user=
	if [ "$(id -u)" -eq 0 ]; then
		user="-u 1000"
		chmod -R a+rwX "$T/outer"
	fi
	run_isd exec $user --security-opt seccomp=nested --profile none -v "$(dirname "$ISD"):$(dirname "$ISD"):ro" -v "$T/inner.sh:$T/inner.sh:ro" -v "$ISD_TEST_SRCDIR:$ISD_TEST_SRCDIR:ro" \
		-e ISD="$ISD" --workspace "$T/outer:cow" -w "$T/outer" -- sh "$T/inner.sh"
	expect_rc 0 "$err"
	expect_contains "$out" "store-fs=overlayfs" "the inner store's file system"
	expect_contains "$out" "exec=0"
	expect_contains "$out" "NoNewPrivs:	1"
	expect_eq "$(printf '%s\n' "$out" | grep -c "^exec-err: isd: note: isd's store")" 1 "one note: $out"
	expect_contains "$out" "exec-err: isd: note: isd's store ("
	expect_contains "$out" "the cow workspace and the agent's state are copies"
	expect_contains "$out" "before=one " "the project before isd apply"
	expect_contains "$out" "state=state" "the agent's state merged at exit"
	expect_contains "$out" "diff=0"
	expect_contains "$out" "diff-lines=2"
	expect_contains "$out" "apply=0"
	expect_contains "$out" "after=one two new "
	expect_not_contains "$out" "copy-left=" "the copies are gone"
}

# isd doctor says which tiers the host allows, and agrees with what isd
# exec did there: the full tier refused, the landlock tier taken by auto.
test_doctor_agrees_with_exec() {
	cat >"$T/inner.sh" <<'EOF'
"$ISD" doctor; echo "doctor=$?"
"$ISD" exec -- true 2>/dev/null; echo "full=$?"
"$ISD" exec --isolation auto -- true 2>/dev/null; echo "auto=$?"
"$ISD" exec --isolation auto --print-spec -- true | /usr/bin/python3 -c 'import json,sys; print("tier=" + json.load(sys.stdin)["isolation"]["tier"])'
EOF
	in_docker_like
	expect_contains "$out" "full=125"
	expect_contains "$out" "auto=0"
	expect_contains "$out" "tier=landlock"
	expect_eq "$(printf '%s\n' "$out" | grep '^isolation tier full ' | awk '{print $4}')" FAIL "doctor on the full tier"
	expect_eq "$(printf '%s\n' "$out" | grep '^isolation tier landlock ' | awk '{print $4}')" ok "doctor on the landlock tier"
	# the agent profile asks for the full tier, which does not work here
	expect_contains "$out" "doctor=1"
}

# Things the tier cannot express are refused with one line, never given
# weaker: a bind at another path, a read-only part inside a writable
# workspace, re-entering a session.
test_landlock_refuses_what_it_cannot_keep() {
	mkdir -p "$T/p/.git"
	export XDG_STATE_HOME=$T/state
	run_isd exec --workspace "$T/p:cow" --workspace-keep -- true
	id=$(ls "$XDG_STATE_HOME/isd/sessions" | grep -v '^[.]')
	run_isd exec --isolation landlock --workspace "$T/p:cow" --session "$id" -- true
	expect_rc 125
	expect_contains "$err" "re-entering a stopped session is not supported"
	run_isd exec --isolation landlock -v "$T:/elsewhere" -- true
	expect_rc 125
	expect_contains "$err" "needs a mount namespace"
	run_isd exec --isolation landlock --workspace "$T/p:rw" -- true
	expect_rc 125
	expect_contains "$err" "cannot be kept"
	[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "one line: $err"
	run_isd exec --isolation landlock --workspace "$T/p:ro" -- true
	expect_rc 0 "a read-only workspace: $err"
}

# --print-spec says the tier and why; a profile inside the project may not
# choose a weaker one.
test_isolation_in_print_spec_and_profiles() {
	run_isd exec --isolation landlock --print-spec -- true
	expect_rc 0
	expect_contains "$out" '"tier": "landlock"'
	expect_contains "$out" '"why": "--isolation landlock"'
	run_isd exec --print-spec -- true
	expect_contains "$out" '"why": "the default"'
	run_isd exec --isolation bogus -- true
	expect_rc 125
	expect_contains "$err" "--isolation bogus: unknown tier (known: full, auto, landlock)"
	mkdir -p "$T/proj"
	echo "--isolation auto" >"$T/proj/isd.conf"
	run_isd exec --workspace "$T/proj:ro" --profile "$T/proj/isd.conf" -- true
	expect_rc 125
	expect_contains "$err" "a file inside the project may not weaken its sandbox"
	echo "--isolation auto" >"$T/mine.conf"
	run_isd exec --workspace "$T/proj:ro" --profile "$T/mine.conf" --print-spec -- true
	expect_rc 0 "$err"
	expect_contains "$out" '"requested": "auto"'
}

# Without a pid namespace (--pid host, what auto takes for a masked /proc)
# the caller's processes are in reach; Landlock's scoping keeps the
# payload's signals inside the sandbox (ABI 6), as its domain keeps ptrace.
test_pid_host_signals_scoped() {
	[ "$(id -u)" -ne 0 ] || skip "as root the payload runs as another uid, which no signal reaches anyway"
	abi=$("$ISD" doctor --json | sed -n 's/.*"detail": "ABI \([0-9]*\).*/\1/p' | head -n1)
	[ "${abi:-0}" -ge 6 ] || skip "Landlock ABI ${abi:-0}: signal scoping needs ABI 6 (Linux 6.12)"
	sleep 60 &
	victim=$!
	at_teardown "kill $victim 2>/dev/null"
	run_isd exec --pid host -e "V=$victim" -- sh -c 'kill -0 "$V" && echo reached || echo refused'
	expect_rc 0 "$err"
	expect_eq "$out" refused "a signal to the caller's process"
	kill -0 "$victim" || fail "the caller's process is gone"
	run_isd exec --pid host -- sh -c 'sleep 5 & kill -0 $! && echo own'
	expect_eq "$out" own "a signal to the payload's own child"
}

# A container engine's socket that answers the caller (docker.sock in a
# devcontainer) is root on the engine's host, and Landlock cannot rule a
# unix socket by its path: the landlock tier refuses to start rather than
# hand it to the payload.
test_landlock_refuses_reachable_engine_socket() {
	[ -x "$SPY" ] || skip "python3 (python3) is not installed"
	"$SPY" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[2], "w").close()
time.sleep(60)' "$T/engine.sock" "$T/ready" &
	at_teardown "kill $! 2>/dev/null"
	while [ ! -e "$T/ready" ]; do sleep 0.05; done
	DOCKER_HOST="unix://$T/engine.sock" run_isd exec --isolation landlock -- true
	expect_rc 125
	expect_contains "$err" "the container engine's socket $T/engine.sock answers you"
	DOCKER_HOST="unix://$T/engine.sock" run_isd exec --isolation auto --print-spec -- true
	expect_rc 0 "auto on a host with namespaces: $err"
	DOCKER_HOST="unix://$T/none.sock" run_isd exec --isolation landlock -- true
	expect_rc 0 "no socket there: $err"
}

# The cow workspace in the landlock tier is a copy whose changes become the
# session's upper layer: isd diff and apply treat it like any session, and
# apply makes the project what the sandbox saw (session.sh's changes).
test_landlock_cow_apply_makes_host_equal_sandbox() {
	. "$ISD_TEST_SRCDIR/tests/integration/session.sh"
	make_project
	run_isd exec --isolation landlock --workspace "$P:cow" -- sh -c "$CHANGES
		$DIGEST"
	expect_rc 0 "the changes in the copy"
	inside=$out
	id=$(sessions)
	[ -n "$id" ] || fail "no session kept"
	expect_contains "$err" "session $id keeps 14 changes to $P"
	[ ! -e "$XDG_STATE_HOME/isd/sessions/$id/landlock-copy" ] || fail "the copy outlived the run"
	expect_eq "$(cat "$P/a.txt")" "one
two
three" "the project is untouched before apply"
	run_isd diff "$id" --name-only
	expect_rc 0 "isd diff: $err"
	expect_contains "$out" "a.txt"
	run_isd apply "$id"
	expect_rc 0 "isd apply: $err"
	expect_eq "$(tree_digest "$P")" "$inside" "the project after apply"
}

# A masked file reads as empty in the copy, the project's own is not
# readable at all, and what the payload writes into the masked file is
# never offered to apply.
test_landlock_cow_masks() {
	export XDG_STATE_HOME=$T/state
	mkdir -p "$T/p"
	echo SECRET >"$T/p/.env"
	echo a >"$T/p/a"
	run_isd exec --isolation landlock --workspace "$T/p:cow" --mask .env -- sh -c "
		cat .env; echo end; cat $T/p/.env 2>/dev/null && echo leaked
		echo planted >.env; echo b >a"
	expect_rc 0 "$err"
	expect_eq "$out" end "the masked file and the project's own"
	id=$(ls "$XDG_STATE_HOME/isd/sessions" | grep -v '^[.]')
	run_isd diff "$id" --name-only
	expect_eq "$out" "M	a" "only the unmasked change"
}

# Under Docker's profile, auto's landlock tier runs the agent's workspace
# flow: a change in the cow workspace, isd diff, isd apply.
test_auto_cow_flow_under_docker_profile() {
	cat >"$T/inner.sh" <<'EOF'
echo one >"$T/ws/file"
"$ISD" exec --isolation auto --workspace "$T/ws:cow" -- sh -c 'echo two >file; echo new >added' || exit 1
"$ISD" diff --name-only
"$ISD" apply >/dev/null && cat "$T/ws/file" "$T/ws/added"
EOF
	in_docker_like
	expect_rc 0 "$err"
	expect_eq "$out" "A	added
M	file
two
new"
	expect_contains "$err" "isd takes the landlock tier"
}

# A workspace where the system is readable (not under /tmp or a home): its
# masks still hold, though the rules for the directories above it grant
# reading everything beneath them.
test_landlock_ro_workspace_masks_where_readable() {
	export XDG_STATE_HOME=$T/state
	P=$(mktemp -d "$(dirname "$ISD")/isolation-test.XXXXXX") || fail "no directory in the build tree"
	at_teardown "rm -rf '$P'"
	echo SECRET >"$P/.env"
	echo a >"$P/a"
	run_isd exec --isolation landlock --workspace "$P:ro" --mask .env -- sh -c "cat $P/a; cat $P/.env 2>/dev/null && echo leaked; echo end"
	expect_rc 0 "$err"
	expect_eq "$out" "a
end" "the masked file of a read-only workspace"
	run_isd exec --isolation landlock --workspace "$P:cow" --mask .env -- sh -c "cat $P/.env 2>/dev/null && echo leaked; echo end"
	expect_eq "$out" end "the project's own masked file, beside the copy"
}

# The agent profile in the landlock tier: its tmpfs in the home directory
# become private directories, the agent's state a copy whose changes go
# through the store's guarded merge (agent-state.sh's fake claude): the
# transcript reaches the host at once, hooks and MCP servers are held.
test_landlock_agent_profile_state_guarded() {
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	. "$ISD_TEST_SRCDIR/tests/integration/agent-state.sh"
	state_home
	mkdir -p "$h/.claude"
	printf '{\n  "model": "opus"\n}\n' >"$h/.claude/settings.json"
	printf '{"numStartups": 1}\n' >"$h/.claude.json"
	fake_agent claude <<'AGENT'
echo "home=$HOME"
mkdir -p ~/.claude/projects/p ~/.claude/hooks ~/.cache/x
echo '{"type":"user","message":"hi"}' >~/.claude/projects/p/transcript.jsonl
printf '{\n  "model": "sonnet",\n  "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "id"}]}]}\n}\n' >~/.claude/settings.json
printf '#!/bin/sh\necho hook\n' >~/.claude/hooks/s.sh
printf '{"numStartups": 2, "mcpServers": {"evil": {"command": "sh"}}}\n' >~/.claude.json
echo changed >>"$PWD/README"
AGENT
	echo readme >"$proj/README"
	in_proj exec --isolation landlock --limits best-effort -- claude
	expect_rc 0 "fake claude in the landlock tier"
	expect_contains "$out" "home=/" "the agent ran"
	expect_not_contains "$out" "home=$h" "HOME is the private one"
	[ -f "$h/.claude/projects/p/transcript.jsonl" ] || fail "transcript not on the host: $err"
	id=$(held_id)
	[ -n "$id" ] || fail "no held line: $err"
	python3 -c '
import json, sys
s = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
assert s == {"model": "sonnet"}, s
assert c == {"numStartups": 2}, c
' "$h/.claude/settings.json" "$h/.claude.json" || fail "code-bearing keys reached the host: $(cat "$h/.claude/settings.json" "$h/.claude.json")"
	[ ! -e "$h/.claude/hooks" ] || fail "~/.claude/hooks reached the host"
	[ ! -e "$h/.cache/x" ] || fail "the private ~/.cache reached the host"
	expect_eq "$(cat "$proj/README")" readme "the project waits for isd apply"
	in_proj diff "$id"
	expect_contains "$out" "README"
	expect_contains "$out" "key hooks"
}

private_dirs() {
	[ "$(ls "$base" | grep -c '^isd-landlock-')" -eq "$1" ]
}

# The private directories of a landlock run whose isd was killed
# (SIGKILL: nothing of isd runs to remove them) go at the next run; those
# of a running isd, another user's or of another name stay.
test_landlock_private_dirs_of_killed_runs_go() {
	run_isd exec --isolation landlock --profile none -- true
	[ "$rc" -eq 0 ] || skip "the landlock tier cannot run here: $err"
	base=$T/tmpbase
	mkdir -p "$base"
	TMPDIR=$base "$ISD" exec --isolation landlock --profile none -- sleep 600 >/dev/null 2>&1 &
	running=$!
	at_teardown "kill $running 2>/dev/null; wait $running 2>/dev/null"
	wait_until 30 private_dirs 1 || fail "no private directory appeared"
	live=$(ls "$base" | grep '^isd-landlock-')
	TMPDIR=$base "$ISD" exec --isolation landlock --profile none -- sleep 600 >/dev/null 2>&1 &
	killed=$!
	at_teardown "kill -9 $killed 2>/dev/null"
	wait_until 30 private_dirs 2 || fail "the second run's directory did not appear"
	stale=$(ls "$base" | grep '^isd-landlock-' | grep -v "^$live\$")
	kill -9 "$killed"
	wait "$killed" 2>/dev/null
	[ -d "$base/$stale" ] || fail "SIGKILL left nothing to clean (the test cannot fail)"
	mkdir -m 0700 "$base/isd-landlock-notisd.d" "$base/isd-landlock-Zz9Zz9"
	touch "$base/isd-landlock-Zz9Zz9/keep"
	chmod 0755 "$base/isd-landlock-Zz9Zz9"
	# another user's directory: only where the test can make one (root,
	# and not in a user namespace that does not map 65534)
	other=0
	if [ "$(id -u)" -eq 0 ]; then
		mkdir -m 0700 "$base/isd-landlock-Oth3r1"
		if chown 65534 "$base/isd-landlock-Oth3r1" 2>/dev/null; then
			other=1
		else
			rmdir "$base/isd-landlock-Oth3r1"
		fi
	fi
	TMPDIR=$base run_isd exec --isolation landlock --profile none -- true
	expect_rc 0 "the next run"
	[ ! -e "$base/$stale" ] || fail "the killed run's $stale stayed"
	[ -d "$base/$live" ] || fail "the running isd's $live was removed"
	[ -e "$base/isd-landlock-Zz9Zz9/keep" ] || fail "a directory of another mode was removed"
	[ -d "$base/isd-landlock-notisd.d" ] || fail "a directory of another name was removed"
	[ "$other" -eq 0 ] || [ -d "$base/isd-landlock-Oth3r1" ] || fail "another user's directory was removed"
	expect_eq "$(ls "$base" | grep -c '^isd-landlock-')" "$((3 + other))" "what stays"
}
