# SPDX-License-Identifier: LGPL-2.1-or-later
# isd-runtime, the OCI runtime front end, driven as conmon and containerd's
# shim drive runc: a bundle of Debian's busybox-static, state under a
# --root of the test's own.

: "${ISD_RUNTIME:?ISD_RUNTIME must point at isd-runtime}"

# make_bundle DIR 'PYTHON' : the default config (isd-runtime spec) over a
# busybox tree, changed by PYTHON (c is the config as a dict).
make_bundle() {
	[ -x /bin/busybox ] || skip "busybox (busybox-static) is not installed"
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	mkdir -p "$1/rootfs/bin" "$1/rootfs/proc" "$1/rootfs/dev" "$1/rootfs/sys" "$1/rootfs/tmp" "$1/rootfs/etc" \
		"$1/rootfs/run" || fail "cannot make the bundle $1"
	cp /bin/busybox "$1/rootfs/bin/" || fail "cannot copy busybox"
	for a in sh echo cat sleep id ls touch test tty kill true false; do
		ln -sf busybox "$1/rootfs/bin/$a"
	done
	# as root the config a rootful engine writes: no user namespace
	if [ "$(id -u)" -eq 0 ]; then
		"$ISD_RUNTIME" spec --bundle "$1" || fail "isd-runtime spec failed"
	else
		"$ISD_RUNTIME" spec --rootless --bundle "$1" || fail "isd-runtime spec failed"
	fi
	python3 - "$1/config.json" "$2" <<'EOF' || fail "cannot edit $1/config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["root"]["readonly"] = False
c["linux"].pop("resources", None)  # runc's device rules: isd makes no device nodes anyway
exec(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"), indent=1)
EOF
}

# rt ARGS...: isd-runtime with the test's --root; stdout in $out, stderr
# in $err, status in $rc.
rt() {
	"$ISD_RUNTIME" --root "$T/state" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	return 0
}

# json_field EXPR: the Python expression EXPR of v, the JSON in $out.
json_field() {
	printf '%s' "$out" | python3 -c "import json,sys; v=json.load(sys.stdin); print($1)"
}

# Ends what the test left running, whatever failed.
cleanup_containers() {
	for d in "$T"/state/*/; do
		[ -d "$d" ] && "$ISD_RUNTIME" --root "$T/state" delete --force "$(basename "$d")" 2>/dev/null
	done
}

# expect_create_fails BUNDLE ID WHAT WORD: create fails with one line that
# holds WORD, and leaves no state.
expect_create_fails() {
	rt create --bundle "$1" "$2"
	expect_rc 1 "$3"
	expect_contains "$err" "$4" "the message of: $3"
	# ASan's note on a child that runs on a stack of its own (the ASan
	# tier) is not isd's output
	lines=$(printf '%s\n' "$err" | grep -v -e '^==[0-9]*==WARNING: ASan is ignoring requested __asan_handle_no_return' \
		-e '^False positive error reports may follow' -e '^For details see https://github.com/google/sanitizers/issues/189' | wc -l)
	[ "$lines" -eq 1 ] || fail "more than one line: $err"
	[ ! -e "$T/state/$2" ] || fail "a failed create left its state"
}

pid_gone() {
	[ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# console_receiver: conmon's side of --console-socket: $T/console.sock
# takes one connection, the descriptor that comes with it is read to its
# end into $T/console.out; $recv is its pid.
console_receiver() {
	cat >"$T/recv.py" <<'EOF'
import array, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(1)
open(sys.argv[3], "w").close()
c, _ = s.accept()
msg, anc, flags, addr = c.recvmsg(4096, socket.CMSG_SPACE(4))
fds = array.array("i")
for level, kind, data in anc:
    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
        fds.frombytes(data[:4])
got = b""
while fds:
    try:
        d = os.read(fds[0], 4096)
    except OSError:
        break
    if not d:
        break
    got += d
open(sys.argv[2], "wb").write(got)
EOF
	python3 "$T/recv.py" "$T/console.sock" "$T/console.out" "$T/ready" &
	recv=$!
	at_teardown "kill $recv 2>/dev/null"
	wait_until 10 test -e "$T/ready" || fail "the console receiver did not start"
}

test_lifecycle() {
	at_teardown cleanup_containers
	make_bundle "$T/b" 'c["process"]["args"] = ["sh", "-c", "echo ran > /tmp/ran; exec sleep 60"]'
	rt create --bundle "$T/b" --pid-file "$T/pid" c1
	expect_rc 0 "create"
	rt state c1
	expect_rc 0 "state after create"
	expect_eq "$(json_field 'v["status"]')" created "status after create"
	expect_eq "$(json_field 'v["id"]')" c1 "id"
	expect_eq "$(json_field 'v["bundle"]')" "$T/b" "bundle"
	expect_eq "$(json_field 'v["rootfs"]')" "$T/b/rootfs" "rootfs"
	expect_contains "$(json_field 'v["ociVersion"]')" "1." "ociVersion"
	expect_contains "$(json_field 'v["created"]')" "T" "created"
	pid=$(json_field 'v["pid"]')
	expect_eq "$(cat "$T/pid")" "$pid" "the pid file holds the state's pid"
	[ -d "/proc/$pid" ] || fail "the container's init ($pid) is not running after create returned"
	# The gate: nothing of the payload ran before start.
	[ ! -e "$T/b/rootfs/tmp/ran" ] || fail "the payload ran before start"
	rt start c1
	expect_rc 0 "start"
	wait_until 10 test -e "$T/b/rootfs/tmp/ran" || fail "the payload did not run after start"
	rt state c1
	expect_eq "$(json_field 'v["status"]')" running "status after start"
	expect_eq "$(json_field 'v["pid"]')" "$pid" "pid after start"
	rt start c1
	expect_rc 1 "a second start"
	expect_contains "$err" "not created" "a second start says why"
	rt kill c1 TERM
	expect_rc 0 "kill TERM"
	wait_until 10 pid_gone "$pid" || fail "the container did not end on SIGTERM"
	rt state c1
	expect_eq "$(json_field 'v["status"]')" stopped "status after kill"
	expect_eq "$(json_field 'v["pid"]')" 0 "a stopped container's pid"
	rt kill c1 KILL
	expect_rc 1 "kill of a stopped container"
	rt delete c1
	expect_rc 0 "delete"
	[ ! -e "$T/state/c1" ] || fail "delete left $T/state/c1"
	rt state c1
	expect_rc 1 "state of a deleted container"
	expect_contains "$err" "does not exist" "state of a deleted container"
}

test_run_exit_status() {
	make_bundle "$T/b" 'c["process"]["args"] = ["sh", "-c", "echo out-$(id -u); exit 7"]'
	rt run --bundle "$T/b" r1
	expect_rc 7 "run: the payload's exit status"
	expect_eq "$out" "out-0" "run: the payload's stdout is the caller's"
	[ ! -e "$T/state/r1" ] || fail "run left its state behind"
	make_bundle "$T/b2" 'c["process"]["args"] = ["sh", "-c", "kill -KILL $$"]'
	rt run --bundle "$T/b2" r2
	expect_rc 137 "run: a payload killed by SIGKILL"
}

test_missing_command() {
	make_bundle "$T/b" 'c["process"]["args"] = ["no-such-command"]'
	expect_create_fails "$T/b" m1 "create with a command the rootfs lacks" no-such-command
}

test_delete_force() {
	at_teardown cleanup_containers
	make_bundle "$T/b" 'c["process"]["args"] = ["sh", "-c", "sleep 600 & exec sleep 601"]'
	rt run --bundle "$T/b" --detach f1
	expect_rc 0 "run --detach"
	rt state f1
	pid=$(json_field 'v["pid"]')
	expect_eq "$(json_field 'v["status"]')" running "status after run --detach"
	wait_until 10 proc_running "sleep 600" || fail "the payload's child did not start"
	rt delete f1
	expect_rc 1 "delete of a running container without --force"
	expect_contains "$err" "not stopped" "delete without --force says why"
	rt delete --force f1
	expect_rc 0 "delete --force"
	[ ! -e "$T/state/f1" ] || fail "delete --force left the state directory"
	pid_gone "$pid" || fail "delete --force left the init ($pid)"
	wait_until 10 sh -c '! { for c in /proc/[0-9]*/cmdline; do tr "\0" " " <"$c"; echo; done 2>/dev/null | grep -q "^sleep 60[01]"; }' ||
		fail "delete --force left processes of the container"
	rt delete --force f1
	expect_rc 0 "delete --force of a container that is gone"
}

test_delete_after_crash() {
	at_teardown cleanup_containers
	make_bundle "$T/b" 'c["process"]["args"] = ["sleep", "600"]'
	rt create --bundle "$T/b" k1
	expect_rc 0 "create"
	rt state k1
	pid=$(json_field 'v["pid"]')
	# the container's init dies without anyone's help
	kill -KILL "$pid"
	wait_until 10 pid_gone "$pid" || fail "the init did not die"
	rt state k1
	expect_eq "$(json_field 'v["status"]')" stopped "status after the init was killed"
	rt delete k1
	expect_rc 0 "delete after the init died"
	[ ! -e "$T/state/k1" ] || fail "delete left the state"
	# a create that died before it wrote the state
	mkdir -p "$T/state/k2"
	rt delete k2
	expect_rc 0 "delete of a half-created container"
	[ ! -e "$T/state/k2" ] || fail "delete left the half-created state"
}

test_list_ps() {
	at_teardown cleanup_containers
	make_bundle "$T/b" 'c["process"]["args"] = ["sh", "-c", "sleep 600 & exec sleep 601"]'
	rt create --bundle "$T/b" l1
	rt run --bundle "$T/b" -d l2
	expect_rc 0 "run -d"
	rt list
	expect_rc 0 "list"
	expect_contains "$out" "STATUS" "list's header"
	expect_contains "$(printf '%s\n' "$out" | grep '^l1 ')" created "list: l1"
	expect_contains "$(printf '%s\n' "$out" | grep '^l2 ')" running "list: l2"
	rt list --format json
	expect_eq "$(json_field 'sorted(x["id"] for x in v)')" "['l1', 'l2']" "list --format json"
	rt list -q
	expect_eq "$(printf '%s\n' "$out" | sort | tr '\n' ' ')" "l1 l2 " "list -q"
	rt state l2
	pid=$(json_field 'v["pid"]')
	wait_until 10 proc_running "sleep 600" || fail "the payload's child did not start"
	rt ps --format json l2
	expect_rc 0 "ps --format json"
	expect_eq "$(json_field 'v[0]')" "$pid" "ps: init first"
	expect_eq "$(json_field 'len(v)')" 3 "ps: init, the payload and its child"
	if command -v ps >/dev/null; then
		rt ps l2
		expect_rc 0 "ps"
		expect_contains "$out" "sleep 601" "ps: the payload's line"
	fi
}

test_console_socket() {
	at_teardown cleanup_containers
	make_bundle "$T/b" 'c["process"]["terminal"] = True; c["process"]["args"] = ["sh", "-c", "test -t 0 && test -t 1 && echo on-a-tty; tty"]'
	console_receiver
	rt create --bundle "$T/b" --console-socket "$T/console.sock" t1
	expect_rc 0 "create --console-socket"
	rt start t1
	expect_rc 0 "start"
	wait "$recv"
	expect_contains "$(cat "$T/console.out")" "on-a-tty" "the payload's stdio is the pty sent over the socket"
	expect_contains "$(cat "$T/console.out")" "/dev/pts/" "the payload's terminal"
	rt delete --force t1
	make_bundle "$T/b2" 'c["process"]["terminal"] = True'
	rt create --bundle "$T/b2" t2
	expect_rc 1 "a terminal without --console-socket"
	expect_contains "$err" "console-socket" "the message names the option"
}

test_errors() {
	make_bundle "$T/b" 'c["process"]["args"] = ["sleep", "600"]'
	at_teardown cleanup_containers
	rt create --bundle "$T/missing" e1
	expect_rc 1 "a missing bundle"
	expect_contains "$err" "$T/missing" "the message names the bundle"
	for id in ../x a/b . ..; do
		rt create --bundle "$T/b" "$id"
		expect_rc 1 "id '$id'"
		expect_contains "$err" "invalid container id" "id '$id'"
		[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "more than one line for id '$id': $err"
	done
	rt create --bundle "$T/b" e2
	expect_rc 0 "create"
	rt create --bundle "$T/b" e2
	expect_rc 1 "a duplicate id"
	expect_contains "$err" "already exists" "a duplicate id"
	rt state e2
	expect_eq "$(json_field 'v["status"]')" created "the first e2 is untouched"
	rt kill e2 NOSUCHSIG
	expect_rc 1 "an unknown signal"
	rt frobnicate e2
	expect_rc 1 "an unknown command"
	rt state nosuch
	expect_rc 1 "state of a container that does not exist"
	expect_contains "$err" "does not exist" "podman and containerd look for these words"
}

test_log_json() {
	"$ISD_RUNTIME" --root "$T/state" --log "$T/log.json" --log-format json state nosuch 2>"$T/err"
	rc=$?
	expect_rc 1 "state nosuch"
	python3 - "$T/log.json" <<'EOF' || fail "the log is not runc's JSON: $(cat "$T/log.json")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
e = json.loads(lines[0])
assert e["level"] == "error" and "does not exist" in e["msg"] and e["time"], e
EOF
	expect_contains "$(cat "$T/err")" "does not exist" "the error is on stderr too"
}

test_features_spec() {
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	rt features
	expect_rc 0 "features"
	expect_eq "$(json_field 'v["ociVersionMax"]')" 1.1.0 "features: ociVersionMax"
	expect_contains "$(json_field 'v["linux"]["namespaces"]')" "'user'" "features: namespaces"
	mkdir "$T/s"
	rt spec --bundle "$T/s"
	expect_rc 0 "spec"
	out=$(cat "$T/s/config.json")
	expect_eq "$(json_field 'v["root"]["path"]')" rootfs "spec: root.path"
	rt spec --bundle "$T/s"
	expect_rc 1 "spec over an existing config.json"
	rm "$T/s/config.json"
	rt spec --rootless --bundle "$T/s"
	out=$(cat "$T/s/config.json")
	expect_eq "$(json_field 'v["linux"]["uidMappings"][0]["hostID"]')" "$(id -u)" "spec --rootless maps root onto the caller"
}

test_exec() {
	at_teardown cleanup_containers
	make_bundle "$T/b" 'c["hostname"] = "exec-box"; c["process"]["args"] = ["sh", "-c", "grep -E \"^(CapEff|NoNewPrivs):\" /proc/self/status > /tmp/caps; echo mark > /tmp/mark; exec sleep 600"]'
	rt run --bundle "$T/b" -d x1
	expect_rc 0 "run -d"
	wait_until 10 test -e "$T/b/rootfs/tmp/mark" || fail "the payload did not start"
	rt exec x1 sh -c 'cat /tmp/mark; hostname; grep -E "^(CapEff|NoNewPrivs):" /proc/self/status; exit 5'
	expect_rc 5 "exec: the process's exit status"
	expect_eq "$out" "$(printf 'mark\nexec-box\n%s' "$(cat "$T/b/rootfs/tmp/caps")")" \
		"exec: the container's files and host name, the payload's capabilities and no_new_privs"
	printf '{"args": ["sh", "-c", "echo $FOO; pwd"], "env": ["FOO=from-process", "PATH=/bin"], "cwd": "/tmp"}' >"$T/process.json"
	rt exec --process "$T/process.json" x1
	expect_rc 0 "exec --process"
	expect_eq "$out" "$(printf 'from-process\n/tmp')" "exec --process: args, env and cwd"
	rt exec --detach --pid-file "$T/epid" x1 sleep 601
	expect_rc 0 "exec --detach"
	epid=$(cat "$T/epid")
	[ -d "/proc/$epid" ] || fail "exec --detach: its pid $epid is not running"
	rt ps --format json x1
	expect_contains "$out" "$epid" "ps lists the exec'd process"
	rt exec x1 no-such-command
	expect_rc 1 "exec of a missing command"
	expect_contains "$err" "executable file not found" "podman's words for a missing command"
	rt delete --force x1
	wait_until 10 pid_gone "$epid" || fail "delete --force left the exec'd process"
	rt exec x1 true
	expect_rc 1 "exec into a container that is gone"
}

# process.user.additionalGids (issue 17): the payload's and, as runc
# gives them, an exec'd process's (the config's, --additional-gids', a
# --process file's user's).  Maps of ranges the config names: root's of
# any ids, a rootless caller's of its /etc/subgid range (newgidmap then
# allows setgroups).
test_exec_additional_gids() {
	at_teardown cleanup_containers
	if host_root; then
		subu=300000 sub=300000
	else
		initial_userns || skip "newuidmap cannot map /etc/subuid nested in another user namespace"
		sub=$(awk -F: -v u="$(id -un)" -v n="$(id -u)" '($1 == u || $1 == n) && $3 >= 100 { print $2; exit }' /etc/subgid)
		subu=$(awk -F: -v u="$(id -un)" -v n="$(id -u)" '($1 == u || $1 == n) && $3 >= 100 { print $2; exit }' /etc/subuid)
		[ -n "$sub" ] && [ -n "$subu" ] && command -v newgidmap >/dev/null || skip "no /etc/subgid range or newgidmap here"
	fi
	make_bundle "$T/b" 'import sys
c["process"]["user"] = {"uid": 0, "gid": 0, "additionalGids": [5, 7]}
c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": '"$(host_root && echo "$subu" || id -u)"', "size": 1},
                             {"containerID": 1, "hostID": '"$subu"' + 1, "size": 99}]
c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": '"$(host_root && echo "$sub" || id -g)"', "size": 1},
                             {"containerID": 1, "hostID": '"$sub"' + 1, "size": 99}]
if not any(n["type"] == "user" for n in c["linux"]["namespaces"]): c["linux"]["namespaces"].append({"type": "user"})
c["process"]["args"] = ["sh", "-c", "grep ^Groups: /proc/self/status > /tmp/groups; exec sleep 600"]'
	ln -sf busybox "$T/b/rootfs/bin/grep"
	# as root the payload is host uid $subu, which must reach the bundle
	chmod a+rx "$T" "$T/b" && chmod 1777 "$T/b/rootfs/tmp" || fail "cannot open the bundle"
	rt run --bundle "$T/b" -d g1
	expect_rc 0 "run -d (stderr: $err)"
	wait_until 10 test -s "$T/b/rootfs/tmp/groups" || fail "the payload did not start"
	expect_eq "$(cat "$T/b/rootfs/tmp/groups")" "Groups:	5 7 " "the payload's additionalGids"
	rt exec g1 grep ^Groups: /proc/self/status
	expect_eq "$out" "Groups:	5 7 " "exec: the config's additionalGids (stderr: $err)"
	rt exec --additional-gids 9 --additional-gids 11,12 g1 grep ^Groups: /proc/self/status
	expect_eq "$out" "Groups:	9 11 12 " "exec --additional-gids (stderr: $err)"
	printf '{"args": ["grep", "^Groups:", "/proc/self/status"], "env": ["PATH=/bin"], "cwd": "/", "user": {"uid": 0, "gid": 0, "additionalGids": [3]}}' >"$T/process.json"
	rt exec --process "$T/process.json" g1
	expect_eq "$out" "Groups:	3 " "exec --process: its user's additionalGids (stderr: $err)"
	rt exec --additional-gids 500 g1 true
	expect_rc 1 "exec: a group the container's map lacks"
	expect_contains "$err" "additional group 500" "the refusal names it"
}

# exec'd processes take the container's capability sets and
# noNewPrivileges, as with runc (issue 17): the same five sets the payload
# has; --cap adds one (to bounding, effective, permitted); --no-new-privs
# sets it; a --process file's own sets replace the container's; under
# run.oci.isd.capabilities=none an exec'd process has none and --cap is
# refused.
EXEC_CAP_SETS='c["process"]["capabilities"] = {"bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SETUID",
 "CAP_SYS_ADMIN"], "effective": ["CAP_KILL", "CAP_CHOWN"], "permitted": ["CAP_KILL", "CAP_CHOWN", "CAP_SETUID"],
 "inheritable": ["CAP_KILL", "CAP_NET_BIND_SERVICE"], "ambient": ["CAP_KILL"]}
c["process"]["noNewPrivileges"] = False
c["process"]["args"] = ["sh", "-c", "grep -E \"^(Cap|NoNewPrivs)\" /proc/self/status > /tmp/caps.tmp; mv /tmp/caps.tmp /tmp/caps; exec sleep 600"]'

test_exec_capabilities() {
	at_teardown cleanup_containers
	nnp=$(awk '/^NoNewPrivs:/ {print $2}' /proc/self/status)
	make_bundle "$T/b" "$EXEC_CAP_SETS"
	rt run -d --bundle "$T/b" c1
	expect_rc 0 "run -d (stderr: $err)"
	wait_until 10 test -e "$T/b/rootfs/tmp/caps" || fail "the payload did not start"
	payload=$(cat "$T/b/rootfs/tmp/caps")
	expect_contains "$payload" "CapBnd:	00000000002004a1" "the payload's bounding set"
	rt exec c1 sh -c 'grep -E "^(Cap|NoNewPrivs)" /proc/self/status'
	expect_rc 0 "exec (stderr: $err)"
	expect_eq "$out" "$payload" "an exec'd process has the payload's capability sets and no_new_privs"
	rt exec --cap CAP_NET_RAW --no-new-privs c1 sh -c 'grep -E "^(CapBnd|NoNewPrivs)" /proc/self/status'
	expect_rc 0 "exec --cap --no-new-privs (stderr: $err)"
	expect_eq "$out" "$(printf 'CapBnd:\t00000000002024a1\nNoNewPrivs:\t1')" "--cap CAP_NET_RAW joins the bounding set; --no-new-privs"
	printf '{"args": ["sh", "-c", "grep -E \\"^(CapBnd|CapEff|NoNewPrivs)\\" /proc/self/status"], "cwd": "/", "noNewPrivileges": true,
 "capabilities": {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"]}}' >"$T/p.json"
	rt exec --process "$T/p.json" c1
	expect_rc 0 "exec --process with its own capabilities (stderr: $err)"
	expect_eq "$out" "$(printf 'CapEff:\t0000000000000020\nCapBnd:\t0000000000000020\nNoNewPrivs:\t1')" "the process file's sets"
	printf '{"args": ["true"], "cwd": "/", "capabilities": {"bounding": ["CAP_FLY"]}}' >"$T/bad.json"
	rt exec --process "$T/bad.json" c1
	expect_rc 1 "exec --process with an unknown capability"
	expect_contains "$err" "process.capabilities.bounding[0]" "the JSON path of the unknown name"
	rt exec --cap CAP_FLY c1 true
	expect_rc 1 "exec --cap CAP_FLY"
	make_bundle "$T/b2" "$EXEC_CAP_SETS"'
c["annotations"] = {"run.oci.isd.capabilities": "none"}'
	rt run -d --bundle "$T/b2" c2
	expect_rc 0 "run -d under run.oci.isd.capabilities=none (stderr: $err)"
	rt exec c2 sh -c 'grep -E "^(CapEff|CapBnd|NoNewPrivs)" /proc/self/status'
	expect_eq "$out" "$(printf 'CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1')" \
		"under run.oci.isd.capabilities=none: no capability, no_new_privs"
	rt exec --cap CAP_KILL c2 true
	expect_rc 1 "exec --cap under run.oci.isd.capabilities=none"
	expect_contains "$err" "run.oci.isd.capabilities=none" "the reason"
	: "$nnp"
}

test_exec_tty() {
	at_teardown cleanup_containers
	make_bundle "$T/b" 'c["process"]["args"] = ["sleep", "600"]'
	rt run --bundle "$T/b" -d x2
	expect_rc 0 "run -d"
	console_receiver
	rt exec --tty --detach --console-socket "$T/console.sock" x2 sh -c 'test -t 1 && echo exec-on-a-tty'
	expect_rc 0 "exec --tty --console-socket"
	wait "$recv"
	expect_contains "$(cat "$T/console.out")" "exec-on-a-tty" "the exec'd process's terminal came over the socket"
}

test_hooks() {
	at_teardown cleanup_containers
	make_bundle "$T/b" 'import os
t = os.environ["T"]
def hook(name):
    return {"path": "/bin/sh", "args": ["sh", "-c", "cat > %s/%s.json" % (t, name)]}
c["hooks"] = {k: [hook(k)] for k in ["prestart", "createRuntime", "poststart", "poststop"]}
c["process"]["args"] = ["sleep", "600"]'
	rt create --bundle "$T/b" h1
	expect_rc 0 "create with hooks"
	for k in prestart:created createRuntime:creating; do
		out=$(cat "$T/${k%%:*}.json" 2>/dev/null)
		expect_eq "$(json_field 'v["status"] + " " + v["id"] + " " + str(v["pid"] > 0)')" "${k#*:} h1 True" \
			"the ${k%%:*} hook's state"
	done
	[ ! -e "$T/poststart.json" ] || fail "poststart ran before start"
	rt start h1
	expect_rc 0 "start"
	out=$(cat "$T/poststart.json" 2>/dev/null)
	expect_eq "$(json_field 'v["status"]')" running "the poststart hook's state"
	rt delete --force h1
	expect_rc 0 "delete --force"
	out=$(cat "$T/poststop.json" 2>/dev/null)
	expect_eq "$(json_field 'v["status"]')" stopped "the poststop hook's state"
	make_bundle "$T/b2" 'c["hooks"] = {"createRuntime": [{"path": "/bin/false"}]}'
	rt create --bundle "$T/b2" h2
	expect_rc 1 "a failing createRuntime hook fails the create"
	expect_contains "$err" "createRuntime hook /bin/false failed" "the message names the hook"
	[ ! -e "$T/state/h2" ] || fail "a failed create left its state"
}

# createContainer and startContainer run in the container's namespaces
# with the state on their standard input: the first a program of the
# runtime's file system, the second one of the container's.
test_hooks_in_container() {
	at_teardown cleanup_containers
	if [ "$(id -u)" -ne 0 ]; then
		# rootless: neither init nor the payload can be entered before
		# the payload's execve (not dumpable), so they are refused
		make_bundle "$T/b0" 'c["hooks"] = {"startContainer": [{"path": "/bin/true"}]}'
		expect_create_fails "$T/b0" k0 "rootless startContainer hooks" "need a root isd-runtime"
		return
	fi
	make_bundle "$T/b" 'import os
t = os.environ["T"]
c["hooks"] = {"createContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "(readlink /proc/self/ns/uts; readlink /proc/self/ns/ipc) > %s/cc.ns; cat > %s/cc.json" % (t, t)]}],
  "startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "(readlink /proc/self/ns/mnt; readlink /proc/self/ns/uts) > /tmp/sc.ns; cat > /tmp/sc.json; test -e /tmp/ran || echo before-payload > /tmp/sc.order"]}]}
c["process"]["args"] = ["sh", "-c", "touch /tmp/ran; exec sleep 600"]'
	ln -sf busybox "$T/b/rootfs/bin/readlink"
	rt create --bundle "$T/b" k1
	expect_rc 0 "create with createContainer and startContainer hooks (stderr: $err)"
	out=$(cat "$T/cc.json" 2>/dev/null)
	expect_eq "$(json_field 'v["status"] + " " + v["id"] + " " + str(v["pid"] > 0)')" "creating k1 True" "the createContainer hook's state"
	[ ! -e "$T/b/rootfs/tmp/sc.json" ] || fail "startContainer ran at create"
	rt start k1
	expect_rc 0 "start (stderr: $err)"
	wait_until 10 test -e "$T/b/rootfs/tmp/ran" || fail "the payload did not run after start"
	out=$(cat "$T/b/rootfs/tmp/sc.json" 2>/dev/null)
	expect_eq "$(json_field 'v["status"] + " " + v["id"]')" "created k1" "the startContainer hook's state"
	expect_eq "$(cat "$T/b/rootfs/tmp/sc.order" 2>/dev/null)" before-payload "startContainer ran before the payload"
	rt exec k1 sh -c 'for n in mnt uts ipc; do readlink /proc/self/ns/$n; done'
	expect_rc 0 "exec (stderr: $err)"
	expect_eq "$(cat "$T/b/rootfs/tmp/sc.ns")" "$(printf '%s\n' "$out" | head -n 2)" "startContainer: the container's mount and uts namespaces"
	expect_eq "$(cat "$T/cc.ns")" "$(printf '%s\n' "$out" | tail -n 2)" "createContainer: the container's uts and ipc namespaces"
	expect_not_contains "$(cat "$T/cc.ns")" "$(readlink /proc/self/ns/uts)" "createContainer: not the runtime's uts namespace"
	make_bundle "$T/b2" 'c["hooks"] = {"startContainer": [{"path": "/bin/false"}]}
c["process"]["args"] = ["sleep", "600"]'
	rt create --bundle "$T/b2" k2
	expect_rc 0 "create k2"
	pid=$(cat "$T/state/k2/state.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	rt start k2
	expect_rc 1 "a failing startContainer hook fails the start"
	expect_contains "$err" "startContainer hook /bin/false failed" "the message names the hook"
	wait_until 10 pid_gone "$pid" || fail "the container still runs after its startContainer hook failed"
}

# config.json's mounts reach the payload with their flags: binds of a host
# directory read-only and read-write, a tmpfs with its size.
test_config_mounts() {
	mkdir -p "$T/host-ro" "$T/host-rw" && echo ro-data >"$T/host-ro/f" && chmod -R a+rwX "$T/host-ro" "$T/host-rw"
	make_bundle "$T/b" 'import os
t = os.environ["T"]
c["mounts"] += [{"destination": "/mnt/ro", "type": "bind", "source": t + "/host-ro", "options": ["rbind", "ro", "nosuid", "nodev"]},
  {"destination": "/mnt/rw", "type": "bind", "source": t + "/host-rw", "options": ["rbind", "rprivate"]},
  {"destination": "/mnt/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "size=1m", "mode=755"]}]
c["process"]["args"] = ["sh", "-c", "cat /mnt/ro/f; touch /mnt/ro/x 2>/dev/null && echo ro-writable; touch /mnt/rw/y && echo rw-ok; touch /mnt/tmp/z && echo tmp-ok; cat /proc/self/mountinfo"]'
	rt run --bundle "$T/b" m1
	expect_rc 0 "run with config mounts"
	expect_contains "$out" "ro-data" "the read-only bind shows the host directory"
	expect_not_contains "$out" "ro-writable" "the read-only bind cannot be written"
	expect_contains "$out" "rw-ok" "the read-write bind can be written"
	expect_contains "$out" "tmp-ok" "the payload owns the tmpfs"
	[ -e "$T/host-rw/y" ] || fail "the write through the read-write bind did not reach the host"
	expect_eq "$(printf '%s\n' "$out" | awk '$5 == "/mnt/ro" { print ($6 ~ /(^|,)ro(,|$)/) }')" 1 "/mnt/ro is mounted ro"
	expect_eq "$(printf '%s\n' "$out" | awk '$5 == "/mnt/tmp" { for (i = 7; i <= NF; i++) if ($i == "-") print $(i + 1), ($0 ~ /size=1024k/) }')" "tmpfs 1" "/mnt/tmp is a tmpfs of 1m"
}

# A root caller's binds are cloned in the host's mount namespace: a clone
# of a shared mount was in the host's peer group, so a mount the payload
# (CAP_SYS_ADMIN in its user namespace) made beneath it appeared on the
# host.  Now it is a slave, as everything in the sandbox's namespace,
# whatever rootfsPropagation says, unless the bind asks shared: the OCI
# meaning, as runc and crun keep it (isd-oci-config(5)).  The "host" is
# a mount namespace of the test's own with a shared tmpfs.
test_config_propagation_host() {
	host_root || skip "a root caller's binds (rootless ones, and those of root nested in a user namespace, are cloned in the sandbox's namespace)"
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	mkdir -p "$T/hs" || fail "cannot make the host dir"
	k=0
	for opts in '"rbind"' '"rbind", "rslave"' '"rbind", "rprivate"' '"rbind", "rshared"' '"rbind"'; do
		root_prop=; [ "$k" -eq 4 ] && root_prop='c["linux"]["rootfsPropagation"] = "rshared"'
		make_bundle "$T/b$k" 'import os
c["mounts"].append({"destination": "/mnt/h", "type": "bind", "source": os.environ["T"] + "/hs", "options": ['"$opts"']})
c["linux"].pop("seccomp", None)
c["process"]["capabilities"] = {s: ["CAP_SYS_ADMIN"] for s in ("bounding", "effective", "permitted")}
c["process"]["args"] = ["sh", "-c", "mount -t tmpfs none /mnt/h/sub'"$k"' && echo mounted"]
'"$root_prop"
		ln -sf busybox "$T/b$k/rootfs/bin/mount" || fail "cannot link mount"
		k=$((k + 1))
	done
	unshare -m sh -c 'mount -t tmpfs none "$1/hs" && mount --make-shared "$1/hs" || exit 1
		for k in 0 1 2 3 4; do
			mkdir "$1/hs/sub$k"
			"$2" --root "$1/state" run --bundle "$1/b$k" p$k >"$1/out$k" 2>&1
			grep -c " $1/hs/sub$k " /proc/self/mountinfo >"$1/seen$k" || :
		done' sh "$T" "$ISD_RUNTIME" || fail "cannot make the shared mount"
	expect_eq "$(cat "$T/out0")" mounted "the payload mounts beneath its bind"
	expect_eq "$(cat "$T/seen0")" 0 "a bind without propagation options: no mount reaches the host"
	for k in 1 2 3 4; do
		expect_eq "$(cat "$T/out$k")" mounted "bundle $k: the payload mounts beneath its bind"
	done
	expect_eq "$(cat "$T/seen1")" 0 "rslave: no mount reaches the host"
	expect_eq "$(cat "$T/seen2")" 0 "rprivate: no mount reaches the host"
	expect_eq "$(cat "$T/seen3")" 1 "rshared: the bind is the host's peer, as the OCI meaning says"
	expect_eq "$(cat "$T/seen4")" 0 "rootfsPropagation rshared: the bind's peers are the container's own"
}

# What isd-runtime cannot make is refused in one line, not left out.
test_config_refused() {
	make_bundle "$T/b" 'c["mounts"].append({"destination": "/mnt/p", "type": "proc", "source": "proc"})'
	rt create --bundle "$T/b" r1
	expect_rc 1 "a second proc is refused"
	expect_contains "$err" "/mnt/p" "the message names the mount"
	[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "more than one line: $err"
	make_bundle "$T/b3" 'c["mounts"].append({"destination": "/mnt/x", "type": "bind", "source": "/bin", "options": ["rbind", "sync"]})'
	rt create --bundle "$T/b3" r3
	expect_rc 1 "a sync bind isd cannot make is refused"
	expect_contains "$err" "/mnt/x" "the message names the mount"
}

# process.rlimits are the payload's.
test_config_rlimits() {
	make_bundle "$T/b" 'c["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "soft": 256, "hard": 256}, {"type": "RLIMIT_CORE", "soft": 0, "hard": 0}]
c["process"]["args"] = ["cat", "/proc/self/limits"]'
	rt run --bundle "$T/b" l1
	expect_rc 0 "run with rlimits"
	expect_eq "$(printf '%s\n' "$out" | awk '/^Max open files/ { print $4, $5 }')" "256 256" "RLIMIT_NOFILE"
	expect_eq "$(printf '%s\n' "$out" | awk '/^Max core file size/ { print $5, $6 }')" "0 0" "RLIMIT_CORE"
	at_teardown cleanup_containers
	make_bundle "$T/b2" 'c["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "soft": 200, "hard": 300}]
c["process"]["args"] = ["sleep", "600"]'
	rt run --bundle "$T/b2" -d l3
	expect_rc 0 "run -d with rlimits"
	rt exec l3 cat /proc/self/limits
	expect_eq "$(printf '%s\n' "$out" | awk '/^Max open files/ { print $4, $5 }')" "200 300" "exec: the config's RLIMIT_NOFILE"
	printf '{"args": ["cat", "/proc/self/limits"], "rlimits": [{"type": "RLIMIT_NOFILE", "soft": 100, "hard": 150}]}' >"$T/process.json"
	rt exec --process "$T/process.json" l3
	expect_eq "$(printf '%s\n' "$out" | awk '/^Max open files/ { print $4, $5 }')" "100 150" "exec --process: its rlimits"
}

# maskedPaths and readonlyPaths beyond isd's own list, in the root's tree.
test_config_paths() {
	make_bundle "$T/b" 'c["linux"]["maskedPaths"] = ["/etc/hostname-like", "/etc/no-such-file"]
c["linux"]["readonlyPaths"] = ["/run"]
c["process"]["args"] = ["sh", "-c", "cat /etc/hostname-like; echo end; touch /run/x 2>/dev/null && echo run-writable; touch /tmp/x && echo tmp-ok"]'
	echo secret-data >"$T/b/rootfs/etc/hostname-like"
	rt run --bundle "$T/b" p1
	expect_rc 0 "run with extra masked and read-only paths (stderr: $err)"
	expect_not_contains "$out" "secret-data" "the masked file reads empty"
	expect_contains "$out" "end" "the payload ran"
	expect_not_contains "$out" "run-writable" "the read-only path cannot be written"
	expect_contains "$out" "tmp-ok" "the rest of the root stays writable"
}

# A hard limit nobody may set (above fs.nr_open even for root) fails the
# create in one line that names it.
test_config_rlimit_refused() {
	nr_open=$(cat /proc/sys/fs/nr_open) || skip "no /proc/sys/fs/nr_open"
	make_bundle "$T/b" "c['process']['rlimits'] = [{'type': 'RLIMIT_NOFILE', 'soft': 64, 'hard': $((nr_open + 1))}]"
	expect_create_fails "$T/b" l2 "create with an unreachable hard limit" RLIMIT_NOFILE
}

# ns_holder FLAGS...: a process in namespaces of its own (unshare FLAGS),
# which a config then joins by path; $holder is its pid.
ns_holder() {
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	# no stdio of the test's: what outlives it would hold the test's end
	unshare "$@" sleep 600 </dev/null >/dev/null 2>&1 &
	holder=$!
	# KILL: unshare --fork ignores TERM
	at_teardown "kill -KILL $holder 2>/dev/null"
	wait_until 10 sh -c "u=\$(readlink /proc/$holder/ns/uts) && [ \"\$u\" != \"\$(readlink /proc/self/ns/uts)\" ]" ||
		fail "unshare $* did not start"
}

test_join_namespaces() {
	at_teardown cleanup_containers
	if [ "$(id -u)" -eq 0 ]; then
		ns_holder --net --uts --ipc
		joined="network uts ipc"
	else
		ns_holder --user --map-root-user --net --uts --ipc
		joined="user network uts ipc"
	fi
	make_bundle "$T/b" "import os
h = '/proc/$holder/ns/'
names = {'network': 'net', 'uts': 'uts', 'ipc': 'ipc', 'user': 'user'}
joined = '$joined'.split()
c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] not in joined]
c['linux']['namespaces'] += [{'type': t, 'path': h + names[t]} for t in joined]
if 'user' in joined:
    c['linux'].pop('uidMappings', None); c['linux'].pop('gidMappings', None)
c['process']['args'] = ['sh', '-c', 'for n in user net uts ipc pid; do echo \$n=\$(readlink /proc/self/ns/\$n); done']"
	ln -sf busybox "$T/b/rootfs/bin/readlink"
	rt run --bundle "$T/b" j0
	expect_rc 0 "run joining $joined (stderr: $err)"
	payload=$out
	sed -i 's/; done"/; done; exec sleep 600"/' "$T/b/config.json"
	rt run -d --bundle "$T/b" j1
	expect_rc 0 "run -d joining $joined (stderr: $err)"
	rt exec j1 sh -c 'for n in user net uts ipc pid; do echo $n=$(readlink /proc/self/ns/$n); done'
	expect_rc 0 "exec into the container (stderr: $err)"
	for n in net uts ipc; do
		expect_contains "$payload" "$n=$(readlink /proc/$holder/ns/$n)" "the payload: the joined $n namespace"
		expect_contains "$out" "$n=$(readlink /proc/$holder/ns/$n)" "exec: the joined $n namespace"
	done
	expect_not_contains "$payload" "pid=$(readlink /proc/$holder/ns/pid)" "the pid namespace is the container's own"
	if [ "$(id -u)" -ne 0 ]; then
		expect_contains "$payload" "user=$(readlink /proc/$holder/ns/user)" "the payload: the joined user namespace"
		expect_contains "$out" "user=$(readlink /proc/$holder/ns/user)" "exec: the joined user namespace"
	else
		expect_not_contains "$payload" "user=$(readlink /proc/$holder/ns/user)" "as root the user namespace is isd's own"
	fi
	rt delete --force j1
	expect_rc 0 "delete --force"
	[ -d "/proc/$holder" ] || fail "the namespaces' holder went with the container"
}

# A path that is not a namespace of the entry's type is refused in one
# line before anything is made.
test_join_namespaces_refused() {
	if [ "$(id -u)" -eq 0 ]; then ns_holder --uts; else ns_holder --user --map-root-user --uts; fi
	make_bundle "$T/b" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'network']
c['linux']['namespaces'].append({'type': 'network', 'path': '/proc/$holder/ns/uts'})"
	expect_create_fails "$T/b" w1 "a uts namespace as the network one" "is a uts namespace, not a network one"
	make_bundle "$T/b2" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'uts']
c['linux']['namespaces'].append({'type': 'uts', 'path': '$T/b2/config.json'})"
	expect_create_fails "$T/b2" w2 "a plain file as the uts namespace" "is not a namespace file"
	make_bundle "$T/b3" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'mount']
c['linux']['namespaces'].append({'type': 'mount', 'path': '/proc/$holder/ns/mnt'})"
	expect_create_fails "$T/b3" w3 "joining a mount namespace" "own"
	# as the host's root: a joined user namespace mapping the payload's
	# uid onto root is refused (isd never runs a payload as the host's root)
	if [ "$(id -u)" -eq 0 ] && [ "$(awk 'NR == 1 {print $3}' /proc/self/uid_map)" = 4294967295 ]; then
		ns_holder --user --map-root-user --uts
		make_bundle "$T/b4" "c['linux']['namespaces'].append({'type': 'user', 'path': '/proc/$holder/ns/user'})"
		expect_create_fails "$T/b4" w4 "a joined user namespace that maps uid 0 to the host's root" "host's root"
	fi
}

# The cgroup2 mount point ("" when none).
cg2_mount() {
	awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo
}

# linux.cgroupsPath is the container's cgroup, in cgroupfs syntax and
# with --systemd-cgroup in systemd's, made with its parents; isd gc leaves
# it alone, delete removes it.
test_cgroups_path() {
	at_teardown cleanup_containers
	mnt=$(cg2_mount)
	[ -n "$mnt" ] || skip "no cgroup2 hierarchy"
	top="isd-rt-test-$$"
	if ! mkdir "$mnt/$top" 2>/dev/null; then
		# no delegation (rootless here): without limits the container
		# runs in the caller's cgroup, as with runc
		make_bundle "$T/b0" "c['linux']['cgroupsPath'] = '/$top/c0'"
		rt run --bundle "$T/b0" c0
		expect_rc 0 "run with a cgroupsPath that cannot be made, no limits (stderr: $err)"
		return
	fi
	rmdir "$mnt/$top"
	sl="isdrt$$" # systemd's slice names nest at each dash
	at_teardown "rmdir '$mnt/$top/sub' '$mnt/$top' '$mnt/$sl.slice/$sl-t.slice' '$mnt/$sl.slice' 2>/dev/null"
	make_bundle "$T/b" "c['linux']['cgroupsPath'] = '/$top/sub/c1'
c['process']['args'] = ['sleep', '600']"
	rt create --bundle "$T/b" c1
	expect_rc 0 "create with cgroupsPath /$top/sub/c1 (stderr: $err)"
	pid=$(cat "$T/state/c1/state.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	expect_eq "$(sed -n 's/^0:://p' /proc/"$pid"/cgroup)" "/$top/sub/c1" "init's cgroup"
	"$ISD" gc >/dev/null 2>&1
	[ -d "/proc/$pid" ] || fail "isd gc killed the container"
	rt delete --force c1
	expect_rc 0 "delete --force"
	[ ! -e "$mnt/$top/sub/c1" ] || fail "delete left the cgroup $mnt/$top/sub/c1"
	make_bundle "$T/b2" "c['linux']['cgroupsPath'] = '$sl-t.slice:isdt:c2'
c['process']['args'] = ['sleep', '600']"
	"$ISD_RUNTIME" --root "$T/state" --systemd-cgroup create --bundle "$T/b2" c2 >"$T/out" 2>"$T/err" </dev/null
	expect_eq "$?" 0 "create --systemd-cgroup (stderr: $(cat "$T/err"))"
	pid=$(cat "$T/state/c2/state.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	expect_eq "$(sed -n 's/^0:://p' /proc/"$pid"/cgroup)" "/$sl.slice/$sl-t.slice/isdt-c2.scope" "init's cgroup"
	rt delete --force c2
	expect_rc 0 "delete --force"
	[ ! -e "$mnt/$sl.slice/$sl-t.slice/isdt-c2.scope" ] || fail "delete left the scope's cgroup"
}

# Without cgroupsPath, a container with limits gets a cgroup of isd's
# placement whose name isd gc does not take for a dead isd's leftovers
# (it carried isd-runtime create's pid, and gc killed the container).
test_cgroup_not_gc() {
	at_teardown cleanup_containers
	mnt=$(cg2_mount)
	case " $(cat "$mnt/cgroup.controllers" 2>/dev/null) " in
	*" pids "*) ;;
	*) skip "no pids controller in cgroup v2 here (tests/uml/run.sh has one)" ;;
	esac
	make_bundle "$T/b" "c['linux']['resources'] = {'pids': {'limit': 100}}
c['process']['args'] = ['sleep', '600']"
	rt create --bundle "$T/b" g1
	[ "$rc" -eq 0 ] || skip "no delegated cgroup for limits here: $err"
	pid=$(cat "$T/state/g1/state.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	expect_contains "$(cat /proc/"$pid"/cgroup)" "/isd-runtime-g1" "the container's cgroup is named for it"
	dir=$mnt$(sed -n 's/^0:://p' /proc/"$pid"/cgroup)
	"$ISD" gc >/dev/null 2>&1
	sleep 0.5
	[ -d "/proc/$pid" ] && ! pid_gone "$pid" || fail "isd gc killed the container"
	rt delete --force g1
	expect_rc 0 "delete --force"
	# nor the leaf isd-runtime create moved itself into, if it did
	[ ! -e "$dir" ] && [ ! -e "$dir-supervisor" ] || fail "delete left $(ls -d "$dir"*)"
}

# mqueue at /dev/mqueue (runc's default config has it): the container's
# IPC namespace's message queues, mounted nosuid, nodev, noexec.
test_config_mqueue() {
	make_bundle "$T/b" 'c["process"]["args"] = ["cat", "/proc/self/mountinfo"]
assert any(m["destination"] == "/dev/mqueue" and m["type"] == "mqueue" for m in c["mounts"])'
	rt run --bundle "$T/b" q1
	expect_rc 0 "run (stderr: $err)"
	expect_eq "$(printf '%s\n' "$out" | awk '$5 == "/dev/mqueue" { for (i = 7; i <= NF; i++) if ($i == "-") print $(i + 1), ($6 ~ /nosuid/ && $6 ~ /nodev/ && $6 ~ /noexec/) }')" "mqueue 1" "/dev/mqueue is an mqueue, nosuid,nodev,noexec"
}

# --preserve-fds N: the caller's descriptors 3 .. 3+N-1 are the payload's
# 3 .. 3+N-1 (conmon's sockets for socket activation); no others.
test_preserve_fds() {
	at_teardown cleanup_containers
	echo from-fd-4 >"$T/in4"
	make_bundle "$T/b" 'c["process"]["args"] = ["sh", "-c", "echo to-fd-3 >&3; cat <&4; ls /proc/self/fd"]'
	"$ISD_RUNTIME" --root "$T/state" run --preserve-fds 2 --bundle "$T/b" f1 >"$T/out" 2>"$T/err" </dev/null 3>"$T/out3" 4<"$T/in4"
	expect_eq "$?" 0 "run --preserve-fds 2 (stderr: $(cat "$T/err"))"
	expect_eq "$(cat "$T/out3")" to-fd-3 "the payload wrote to the caller's descriptor 3"
	expect_eq "$(head -n 1 "$T/out")" from-fd-4 "the payload read the caller's descriptor 4"
	expect_eq "$(tail -n +2 "$T/out" | sort -n | tr '\n' ' ')" "0 1 2 3 4 5 " "the payload's descriptors (5: ls's own)"
	# created, then started: the descriptors wait with the container
	make_bundle "$T/b2" 'c["process"]["args"] = ["sh", "-c", "echo later >&3"]'
	"$ISD_RUNTIME" --root "$T/state" create --preserve-fds 1 --bundle "$T/b2" f2 >"$T/out" 2>"$T/err" </dev/null 3>"$T/out3b"
	expect_eq "$?" 0 "create --preserve-fds 1 (stderr: $(cat "$T/err"))"
	rt start f2
	expect_rc 0 "start"
	wait_until 10 grep -q later "$T/out3b" || fail "the started payload did not write to descriptor 3"
	# exec --preserve-fds: the same for the exec'd process
	make_bundle "$T/b3" 'c["process"]["args"] = ["sleep", "600"]'
	rt run -d --bundle "$T/b3" f4
	expect_rc 0 "run -d"
	"$ISD_RUNTIME" --root "$T/state" exec --preserve-fds 1 f4 sh -c 'echo via-exec >&3; ls /proc/self/fd' \
		>"$T/out" 2>"$T/err" </dev/null 3>"$T/out3c"
	expect_eq "$?" 0 "exec --preserve-fds 1 (stderr: $(cat "$T/err"))"
	expect_eq "$(cat "$T/out3c")" via-exec "the exec'd process wrote to the caller's descriptor 3"
	expect_eq "$(sort -n "$T/out" | tr '\n' ' ')" "0 1 2 3 4 " "the exec'd process's descriptors (4: ls's own)"
	rt create --preserve-fds 40 --bundle "$T/b2" f3
	expect_rc 1 "--preserve-fds naming descriptors that are not open"
	expect_contains "$err" "--preserve-fds 40: descriptor " "the message names the first one missing"
}

# A pid namespace joined with its user namespace (a pod sharing its pid
# namespace): the payload and exec'd processes are in it, init is not its
# pid 1, and kill --all leaves the namespace's other processes alone.
test_join_pid_namespace() {
	at_teardown cleanup_containers
	if host_root; then
		# maps of unprivileged ids, written by root (the payload may not
		# be the host's root)
		ns_holder --user --uts --pid --kill-child
		{ echo "0 100000 65536" >/proc/$holder/uid_map && echo "0 100000 65536" >/proc/$holder/gid_map; } ||
			fail "cannot map the holder's user namespace"
	else
		ns_holder --user --map-root-user --uts --pid --kill-child
	fi
	make_bundle "$T/b" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] not in ('user', 'pid')]
c['linux']['namespaces'] += [{'type': 'user', 'path': '/proc/$holder/ns/user'}, {'type': 'pid', 'path': '/proc/$holder/ns/pid_for_children'}]
c['linux'].pop('uidMappings', None); c['linux'].pop('gidMappings', None)
c['process']['args'] = ['sleep', '600']"
	ln -sf busybox "$T/b/rootfs/bin/readlink"
	# as root the namespace's ids are unprivileged ones: the bundle is
	# theirs to read, as an engine chowns it for its maps
	chmod a+x "$T" && chmod -R a+rX "$T/b"
	rt run -d --bundle "$T/b" p1
	expect_rc 0 "run -d joining a pid namespace (stderr: $err)"
	pid=$(cat "$T/state/p1/state.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	expect_not_contains "$(grep NSpid /proc/"$pid"/status)" "	1
" "init is not the joined namespace's pid 1"
	rt exec p1 sh -c 'readlink /proc/self/ns/pid; ls /proc | grep -c "^[0-9]"'
	expect_rc 0 "exec (stderr: $err)"
	expect_eq "$(printf '%s\n' "$out" | head -n 1)" "$(readlink /proc/$holder/ns/pid_for_children)" "exec: the joined pid namespace"
	rt kill --all p1 KILL
	expect_rc 0 "kill --all"
	wait_until 10 pid_gone "$pid" || fail "kill --all did not end the container"
	sleep 0.3
	! pid_gone "$holder" || fail "kill --all killed the joined namespace's pid 1"
	make_bundle "$T/b2" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'pid']
c['linux']['namespaces'].append({'type': 'pid', 'path': '/proc/$holder/ns/pid_for_children'})"
	expect_create_fails "$T/b2" p2 "a pid namespace without its user namespace" "needs its user namespace joined too"
}

# A cgroup namespace joined with its user namespace: the payload is in it
# (init joins it in place of making one).  Without the user namespace, one
# line.
test_join_cgroup_namespace() {
	if host_root; then
		ns_holder --user --uts --cgroup
		{ echo "0 100000 65536" >/proc/$holder/uid_map && echo "0 100000 65536" >/proc/$holder/gid_map; } ||
			fail "cannot map the holder's user namespace"
		chmod a+x "$T"
	else
		ns_holder --user --map-root-user --uts --cgroup
	fi
	make_bundle "$T/b" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] not in ('user', 'cgroup')]
c['linux']['namespaces'] += [{'type': 'user', 'path': '/proc/$holder/ns/user'}, {'type': 'cgroup', 'path': '/proc/$holder/ns/cgroup'}]
c['linux'].pop('uidMappings', None); c['linux'].pop('gidMappings', None)
c['process']['args'] = ['readlink', '/proc/self/ns/cgroup']"
	ln -sf busybox "$T/b/rootfs/bin/readlink"
	chmod -R a+rX "$T/b"
	rt run --bundle "$T/b" g1
	expect_rc 0 "run joining a cgroup namespace (stderr: $err)"
	expect_eq "$out" "$(readlink /proc/$holder/ns/cgroup)" "the payload: the joined cgroup namespace"
	make_bundle "$T/b2" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'cgroup']
c['linux']['namespaces'].append({'type': 'cgroup', 'path': '/proc/$holder/ns/cgroup'})"
	expect_create_fails "$T/b2" g2 "a cgroup namespace without its user namespace" "needs its user namespace joined too"
}

# update: new limits for a running container's cgroup, by runc's options
# and by a LinuxResources object on stdin (podman update, containerd's
# shim); a controller create did not enable is enabled for it; -1 lifts a
# limit; cpu.max keeps the half the update leaves out; a refused value
# changes nothing.  Runs where cgroup v2 has the pids and memory
# controllers (tests/uml/run.sh).
test_update_limits() {
	at_teardown cleanup_containers
	mnt=$(cg2_mount)
	ctl=" $(cat "$mnt/cgroup.controllers" 2>/dev/null) "
	case $ctl in *" pids "*) ;; *) ctl= ;; esac
	case $ctl in *" memory "*) ;; *) skip "no pids and memory controllers in cgroup v2 here (tests/uml/run.sh has them)" ;; esac
	make_bundle "$T/b" "c['linux']['resources'] = {'pids': {'limit': 100}}
c['process']['args'] = ['sleep', '600']"
	rt run -d --bundle "$T/b" u1
	[ "$rc" -eq 0 ] || skip "no delegated cgroup for limits here: $err"
	pid=$(cat "$T/state/u1/state.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	dir=$mnt$(sed -n 's/^0:://p' /proc/"$pid"/cgroup)
	expect_eq "$(cat "$dir/pids.max")" 100 "pids.max at create"
	rt update --pids-limit 50 u1
	expect_rc 0 "update --pids-limit 50 (stderr: $err)"
	expect_eq "$(cat "$dir/pids.max")" 50 "pids.max after update --pids-limit"
	printf '{"memory":{"limit":67108864,"swap":134217728},"pids":{"limit":-1}}' |
		"$ISD_RUNTIME" --root "$T/state" update --resources - u1 >"$T/out" 2>"$T/err"
	expect_eq "$?" 0 "update --resources - (stderr: $(cat "$T/err"))"
	expect_eq "$(cat "$dir/memory.max") $(cat "$dir/memory.swap.max")" "67108864 67108864" \
		"memory.max and memory.swap.max (memory plus swap) from the resources"
	expect_eq "$(cat "$dir/pids.max")" max "pids.limit -1 lifts the limit"
	if [ -e "$dir/cpu.max" ] || case $ctl in *" cpu "*) true ;; *) false ;; esac; then
		rt update --cpu-quota 50000 --cpu-period 100000 u1
		expect_rc 0 "update --cpu-quota --cpu-period (stderr: $err)"
		expect_eq "$(cat "$dir/cpu.max")" "50000 100000" "cpu.max"
		rt update --cpu-period 200000 u1
		expect_eq "$(cat "$dir/cpu.max")" "50000 200000" "cpu.max keeps the quota an update leaves out"
		rt update --cpu-quota -1 u1
		expect_eq "$(cat "$dir/cpu.max")" "max 200000" "cpu.max after --cpu-quota -1"
	fi
	rt update --memory 1k u1
	expect_rc 1 "update --memory 1k"
	expect_contains "$err" "below the minimum of 6 MiB" "the refusal"
	expect_eq "$(cat "$dir/memory.max")" 67108864 "a refused update changes nothing"
	[ -d "/proc/$pid" ] && ! pid_gone "$pid" || fail "the container did not survive its updates"
}

# update's refusals, each one line: no cgroup of its own, a malformed
# object (named by its JSON path), a rule taking a device away (isd has no
# device cgroup), nothing to change, an unknown container.
test_update_refusals() {
	at_teardown cleanup_containers
	make_bundle "$T/b" "c['process']['args'] = ['sleep', '600']"
	rt run -d --bundle "$T/b" r1
	expect_rc 0 "run -d without limits (stderr: $err)"
	expect_one_line() {
		lines=$(printf '%s\n' "$err" | grep -v -e '^==[0-9]*==WARNING: ASan is ignoring requested __asan_handle_no_return' \
			-e '^False positive error reports may follow' -e '^For details see https://github.com/google/sanitizers/issues/189' | wc -l)
		[ "$lines" -eq 1 ] || fail "$1: more than one line: $err"
	}
	if [ "$(python3 -c 'import json,sys; print(bool(json.load(open(sys.argv[1])).get("isd.cgroup")))' "$T/state/r1/state.json")" != True ]; then
		rt update --pids-limit 10 r1
		expect_rc 1 "update of a container without a cgroup"
		expect_contains "$err" "has no cgroup of its own" "the reason"
		expect_one_line "no cgroup"
	fi
	printf '{"pids":{"limit":"ten"}}' | "$ISD_RUNTIME" --root "$T/state" update --resources - r1 >"$T/out" 2>"$T/err"
	rc=$? err=$(cat "$T/err")
	expect_rc 1 "a malformed resources object"
	expect_contains "$err" "linux.resources.pids.limit" "the JSON path"
	expect_one_line "malformed"
	printf '{"devices":[{"allow":false,"type":"a","access":"rwm"},{"allow":false,"type":"c","major":1,"minor":3,"access":"rw"}]}' |
		"$ISD_RUNTIME" --root "$T/state" update --resources - r1 >"$T/out" 2>"$T/err"
	rc=$? err=$(cat "$T/err")
	expect_rc 1 "a device rule that takes /dev/null away"
	expect_contains "$err" "linux.resources.devices[1]" "the rule"
	rt update r1
	expect_rc 1 "update with nothing to change"
	expect_contains "$err" "nothing to change" "the reason"
	rt update --pids-limit 10 nosuch
	expect_rc 1 "update of an unknown container"
	expect_contains "$err" "does not exist" "the reason"
	rt update --cpu-share lots r1
	expect_rc 1 "update --cpu-share lots"
	expect_contains "$err" "--cpu-share lots" "the option and its value"
	expect_one_line "bad option value"
}

# run.oci.isd.network=netless with run.oci.isd.allow (issue 17): the
# container reaches the allowed loopback server through isd's relay (the
# proxy variables isd sets), nothing else; the relay is a process of its
# own that outlives isd-runtime create, holds none of the container's
# state locks (start and delete do not wait for it), and ends with the
# container.
test_netless_annotation() {
	at_teardown cleanup_containers
	at_teardown 'kill $(cat "$T/srv.pid") 2>/dev/null'
	mkdir -p "$T/www"
	echo hello >"$T/www/hello.txt"
	python3 "$ISD_TEST_SRCDIR/tests/network/serve.py" http "$T/www" "$T/http.port" &
	echo $! >"$T/srv.pid"
	wait_until 10 test -s "$T/http.port" || fail "the test's server did not start"
	port=$(cat "$T/http.port")
	make_bundle "$T/b" "c['annotations'] = {'run.oci.isd.network': 'netless', 'run.oci.isd.allow': '127.0.0.1:$port'}
c['process']['args'] = ['sh', '-c', 'wget -q -O- http://127.0.0.1:$port/hello.txt; echo allowed=\$?; wget -q -O- http://127.0.0.1:$((port + 1))/ 2>/dev/null; echo other=\$?; echo routes=\$(cat /proc/net/route | wc -l)']"
	rt create --bundle "$T/b" n1
	expect_rc 0 "create with run.oci.isd.network=netless (stderr: $err)"
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$T/state/n1/state.json")
	# the relay: what is left of isd-runtime create
	# (the container's init and payload are clones of it too, in the
	# container's pid namespace)
	keeper=$(for k in $(pgrep -f -- "--root $T/state create"); do
		[ "$(readlink /proc/"$k"/ns/pid)" = "$(readlink /proc/self/ns/pid)" ] && echo "$k"; done)
	[ -n "$keeper" ] && [ "$(echo "$keeper" | wc -l)" -eq 1 ] || fail "not one relay process beside the created container: $keeper"
	expect_eq "$(sed -n 's/^Sid:[[:space:]]*//p; s/^NSsid:[[:space:]]*//p' /proc/"$keeper"/status | head -n1)" "$keeper" \
		"the relay is in a session of its own"
	"$ISD_RUNTIME" --root "$T/state" start n1 >"$T/out" 2>"$T/err" </dev/null
	expect_eq "$?" 0 "start: not held up by the relay (stderr: $(cat "$T/err"))"
	wait_until 20 pid_gone "$pid" || fail "the container did not end"
	wait_until 10 pid_gone "$keeper" || fail "the relay outlived its container"
	rt delete n1
	expect_rc 0 "delete (stderr: $err)"
	make_bundle "$T/b2" "c['annotations'] = {'run.oci.isd.network': 'netless', 'run.oci.isd.allow': '127.0.0.1:$port'}
c['process']['args'] = ['sh', '-c', 'wget -q -O- http://127.0.0.1:$port/hello.txt; echo allowed=\$?; wget -q -O- http://127.0.0.1:$((port + 1))/ 2>/dev/null; echo other=\$?; echo routes=\$(cat /proc/net/route | wc -l)']"
	rt run --bundle "$T/b2" n2
	expect_rc 0 "run (stderr: $err)"
	expect_eq "$out" "$(printf 'hello\nallowed=0\nother=1\nroutes=1')" \
		"the allowed server through the relay; another port denied; no route out"
	wait_until 10 relay_gone || fail "a relay outlived its container: $(pgrep -af -- "--root $T/state")"
}

relay_gone() {
	for k in $(pgrep -f -- "--root $T/state run"); do
		[ "$(readlink /proc/"$k"/ns/pid)" = "$(readlink /proc/self/ns/pid)" ] && return 1
	done
	return 0
}
