# SPDX-License-Identifier: LGPL-2.1-or-later
# The core runtime, as the payload sees it.

# A tiny busybox image with the probe, an "agent" user and a read-only home.
make_rootfs() {
	r=$1
	bb=$(command -v busybox) || skip "busybox (busybox-static) is not installed"
	mkdir -p "$r/bin" "$r/etc" "$r/home/agent/.local/bin" "$r/usr/bin" "$r/tmp" "$r/var"
	cp "$bb" "$r/bin/busybox"
	for t in sh cat ls echo id env mkdir touch readlink stat sleep true false hostname; do
		ln -s busybox "$r/bin/$t"
	done
	cp "$PROBE" "$r/usr/bin/probe"
	echo "root:x:0:0:root:/root:/bin/sh" >"$r/etc/passwd"
	echo "agent:x:1000:1000:agent:/home/agent:/bin/sh" >>"$r/etc/passwd"
	echo "127.0.0.1 image-hosts" >"$r/etc/hosts"
	echo "image-file" >"$r/home/agent/.local/bin/tool"
}

# A listing that changes if anything in the tree changes.
tree_state() {
	(cd "$1" && find . -printf '%p %y %m %s %T@\n' | sort)
}

test_exit_status() {
	run_isd exec -- sh -c 'exit 3'
	expect_rc 3 "payload exit code"
	run_isd exec -- true
	expect_rc 0
}

test_exit_signal() {
	run_probe -- /probe kill 9
	expect_rc 137 "killed by SIGKILL"
	run_probe -- /probe kill 15
	expect_rc 143 "killed by SIGTERM"
}

test_exit_125_bad_input() {
	run_isd exec --no-such-option -- true
	expect_rc 125 "unknown option"
	expect_contains "$err" "isd: exec: unknown option '--no-such-option'"
	run_isd exec
	expect_rc 125 "missing command"
	expect_contains "$err" "no command given"
	run_isd exec --tmpfs relative/path -- true
	expect_rc 125 "relative destination"
	expect_contains "$err" "must be an absolute path"
	run_isd exec --tmpfs /data:size=lots -- true
	expect_rc 125 "invalid size"
	expect_contains "$err" "invalid size 'lots'"
	run_isd exec --tmpfs /data:mode=999 -- true
	expect_rc 125 "invalid mode"
	expect_contains "$err" "invalid mode '999'"
	run_isd exec --tmpfs /data:uid=-1 -- true
	expect_rc 125 "invalid uid"
	expect_contains "$err" "invalid uid '-1'"
	run_isd exec --tmpfs /data --tmpfs /data -- true
	expect_rc 125 "duplicate destination"
	expect_contains "$err" "given twice"
	run_isd exec --tmpfs / -- true
	expect_rc 125 "destination /"
	expect_contains "$err" "mount destination '/': reserved"
	run_isd exec -v "$T:/proc/x" -- true
	expect_rc 125 "destination in /proc"
	expect_contains "$err" "mount destination '/proc/x': reserved"
	run_isd exec -u nobody-here -- true
	expect_rc 125 "unknown user"
	expect_contains "$err" "--user nobody-here: 'nobody-here' is neither a number nor a user"
	run_isd exec --cap-add NET_RAW -- true
	expect_rc 125 "cap-add"
	expect_contains "$err" "--cap-add NET_RAW: isd never grants capabilities"
	[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "error must be one line: $err"
}

test_exit_126_127() {
	run_isd exec -- no-such-command-anywhere
	expect_rc 127 "command not found"
	expect_contains "$err" "no-such-command-anywhere"
	printf 'not a program\n' >"$T/data"
	chmod 0644 "$T/data"
	run_isd exec -v "$T/data:/data" -- /data
	expect_rc 126 "not executable"
	run_isd exec -- /no/such/path
	expect_rc 127 "missing path"
}

test_docker_flags_accepted() {
	run_isd exec --rm -i --read-only --ipc=private --cap-drop=ALL --init \
		--security-opt=no-new-privileges:true --security-opt no-new-privileges -- true
	expect_rc 0 "harmless docker flags"
	run_isd exec --security-opt no-new-privileges:false -- true
	expect_rc 125 "no-new-privileges cannot be turned off"
	expect_contains "$err" "no_new_privs; it cannot be turned off"
	run_isd exec --ipc=host -- true
	expect_rc 125 "ipc host refused"
	expect_contains "$err" "--ipc host: isd always gives the sandbox its own IPC namespace"
}

test_capabilities_dropped() {
	run_probe -- /probe status
	expect_rc 0
	for k in CapInh CapPrm CapEff CapBnd CapAmb; do
		expect_eq "$(field "$out" $k)" 0000000000000000 "$k"
	done
	expect_eq "$(field "$out" NoNewPrivs)" 1 NoNewPrivs
}

test_default_ids() {
	run_probe -- /probe status
	uid=$(id -u)
	gid=$(id -g)
	expect_eq "$(field "$out" Uid | awk '{print $1, $2, $3, $4}')" "$uid $uid $uid $uid" "uid inside"
	expect_eq "$(field "$out" Gid | awk '{print $1}')" "$gid" "gid inside"
	# A root caller's payload maps to an unprivileged host id (confine.sh).
	host=$uid
	if [ "$uid" -eq 0 ] && [ "$(stat -c %u /proc/sys/kernel/core_pattern)" = 0 ]; then
		host=$("$ISD" exec --print-spec -- true | sed -n 's/.*"host_uid": *\([0-9]*\).*/\1/p')
		[ -n "$host" ] && [ "$host" -ne 0 ] || fail "root's payload maps to host uid '$host'"
	fi
	run_probe -- /probe maps
	expect_contains "$out" "uid_map $(printf '%10s %10s %10s' "$uid" "$host" 1)" "single-id uid map"
}

test_user_option() {
	run_probe -u 0:0 -- /probe status
	expect_eq "$(field "$out" Uid | awk '{print $1}')" 0 "uid 0 inside"
	expect_eq "$(field "$out" CapEff)" 0000000000000000 "root inside has no caps"
	run_probe -u 4242:4343 -- /probe status
	expect_eq "$(field "$out" Uid | awk '{print $1}')" 4242
	expect_eq "$(field "$out" Gid | awk '{print $1}')" 4343
}

test_root_readonly() {
	for p in /usr/isd-test /etc/isd-test /isd-test /home/isd-test /dev/isd-test; do
		run_probe -- /probe write "$p"
		case "$out" in EROFS | EACCES) ;; *) fail "write to $p: expected EROFS, got '$out'" ;; esac
	done
	run_probe -- /probe write /usr/isd-test
	expect_eq "$out" EROFS "write into /usr"
}

test_tmpfs_size_enforced() {
	run_probe --tmpfs /data:size=4m -- /probe fill /data/big
	expect_contains "$out" "errno ENOSPC" "writing past size"
	wrote=$(printf '%s\n' "$out" | awk '{print $2}')
	[ "$wrote" -le $((4 * 1024 * 1024)) ] || fail "wrote $wrote bytes into a 4m tmpfs"
	run_probe --tmpfs /data:size=4m -- /probe statfs /data
	expect_contains "$out" "size 4194304"
	expect_contains "$out" "nosuid nodev noexec"
}

test_tmpfs_exec_flag() {
	run_probe --tmpfs /data -- /probe statfs /data
	expect_contains "$out" "noexec" "tmpfs is noexec by default"
	run_isd exec -v "$PROBE:/probe:ro" --tmpfs /data -- sh -c 'cp /probe /data/p && /data/p exit 0'
	[ "$rc" -ne 0 ] || fail "a binary on a noexec tmpfs ran"
	run_isd exec -v "$PROBE:/probe:ro" --tmpfs /data:exec,size=64m -- sh -c 'cp /probe /data/p && /data/p exit 7'
	expect_rc 7 "exec tmpfs runs binaries"
	run_probe --tmpfs /data:ro -- /probe write /data/x
	expect_eq "$out" EROFS "ro tmpfs"
	run_isd exec --tmpfs "/data:mode=0700,uid=$(id -u),gid=$(id -g)" -- stat -c '%a %u %g' /data
	expect_eq "$out" "700 $(id -u) $(id -g)" "tmpfs mode/uid/gid"
	run_isd exec --tmpfs "/data:uid=$(($(id -u) + 1))" -- true
	expect_rc 125 "unmapped tmpfs uid"
	expect_contains "$err" "not mapped in the sandbox"
	run_isd exec -u 0:0 --tmpfs /data:uid=0,gid=0 -- stat -c '%u %g' /data
	expect_eq "$out" "0 0" "tmpfs owned by --user"

	run_isd exec --mount type=tmpfs,dst=/m,tmpfs-size=1m,tmpfs-mode=0755 -- sh -c 'stat -c %a /m; df -k /m | tail -1'
	expect_contains "$out" "755"
	expect_contains "$out" " 1024 "
}

test_host_home_invisible() {
	mkdir -p "$T/home/.ssh"
	echo secret >"$T/home/.ssh/id_rsa"
	HOME=$T/home run_isd exec -- sh -c 'ls -A "$HOME"; echo "home=$HOME"'
	expect_rc 0
	expect_not_contains "$out" ".ssh" "host HOME content"
	expect_contains "$out" "home=$T/home"
	run_isd exec -- sh -c 'echo $(ls -A "$HOME") / $(ls -d /mnt /media /srv 2>/dev/null) / $(ls -A /home)'
	case $HOME in
	/home/*/*) ;; # not a plain /home/USER: nothing to compare in /home
	/home/*) expect_eq "$out" "/ / $(basename "$HOME")" "only the caller's own, empty HOME in /home" ;;
	*) expect_eq "$out" "/ /" "an empty HOME and an empty /home" ;;
	esac
}

test_env_not_inherited() {
	ISD_TEST_SECRET=hunter2 run_isd exec -- env
	expect_not_contains "$out" hunter2 "secret in the caller's environment"
	expect_contains "$out" "PATH="
	expect_contains "$out" "HOME="
	ISD_TEST_SECRET=hunter2 run_isd exec -e ISD_TEST_SECRET -e A=b -- env
	expect_contains "$out" "ISD_TEST_SECRET=hunter2" "-e NAME copies"
	expect_contains "$out" "A=b"
	printf '# comment\nFROM_FILE=yes\n\nSPACED=a b\n' >"$T/env"
	run_isd exec --env-file "$T/env" -- env
	expect_contains "$out" "FROM_FILE=yes"
	expect_contains "$out" "SPACED=a b"
	run_isd exec --env-file "$T/missing" -- env
	expect_rc 125 "missing env file"
	expect_contains "$err" "$T/missing"
	run_isd exec --env-file /dev/zero -- env
	expect_rc 125 "an endless env file"
	expect_contains "$err" "/dev/zero"
}

test_pid_namespace() {
	run_probe -- /probe pids
	n=$(printf '%s\n' "$out" | grep -c '^pid ')
	[ "$n" -le 2 ] || fail "payload sees $n processes: $out"
	expect_contains "$out" "pid 1"
}

test_zombies_reaped() {
	run_probe -- /probe orphans 8
	expect_eq "$out" "zombies 0" "orphans reaped by init"
}

test_sigkill_isd_kills_payload() {
	marker=isd-kill-test-$$
	"$ISD" exec -v "$PROBE:/$marker:ro" -- "/$marker" sleep 300 >"$T/out" 2>&1 &
	isd_pid=$!
	i=0
	while ! grep -q ready "$T/out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "payload did not start"
		sleep 0.05
	done
	proc_running "$marker sleep" || fail "payload not found before the kill"
	kill -9 "$isd_pid"
	i=0
	while proc_running "$marker sleep"; do
		i=$((i + 1))
		[ $i -lt 40 ] || break
		sleep 0.05
	done
	expect_eq "$(proc_running "$marker sleep" && echo alive || echo gone)" gone "the payload after SIGKILL of isd"
}

test_signal_forwarded() {
	"$ISD" exec -- sh -c 'trap "echo got-term; exit 42" TERM; echo ready; while :; do sleep 0.1; done' >"$T/out" 2>&1 &
	isd_pid=$!
	i=0
	while ! grep -q ready "$T/out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "payload did not start"
		sleep 0.05
	done
	kill -TERM "$isd_pid"
	wait "$isd_pid"
	rc=$?
	expect_rc 42 "SIGTERM forwarded to the payload"
	grep -q got-term "$T/out" || fail "payload did not see SIGTERM"
}

test_bind_ro_rw() {
	mkdir -p "$T/rw" "$T/ro"
	run_probe -v "$T/rw:/w" -v "$T/ro:/r:ro" -- /probe write /w/file
	expect_eq "$out" ok "write to rw bind"
	[ -f "$T/rw/file" ] || fail "rw bind write not visible on the host"
	run_probe -v "$T/rw:/w" -v "$T/ro:/r:ro" -- /probe write /r/file
	expect_eq "$out" EROFS "write to ro bind"
	run_probe --mount "type=bind,src=$T/ro,dst=/r,readonly" -- /probe write /r/file
	expect_eq "$out" EROFS "--mount readonly"
	run_isd exec -v /no/such/dir:/x -- true
	expect_rc 125 "missing bind source"
	expect_contains "$err" "/no/such/dir"
}

test_bind_ro_recursive() {
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	mkdir -p "$T/ro/sub"
	# A submount under the bind source, made in a user+mount namespace of
	# the test's own, must be read-only inside too.
	unsafe=
	[ "$(id -u)" -ne 0 ] || unsafe=--unsafe-host-root # unshare -Ur as root maps only host root
	unshare -Urm sh -c "mount -t tmpfs none '$T/ro/sub' && exec \"\$0\" exec $unsafe -v '$PROBE:/probe:ro' -v '$T/ro:/r:ro' -- /probe write /r/sub/file" "$ISD" >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_eq "$out" EROFS "submount of a read-only bind"
}

test_file_bind_and_deep_destination() {
	r=$T/rootfs
	make_rootfs "$r"
	mkdir -p "$T/proj"
	echo hello >"$T/proj/README"
	before=$(tree_state "$r")
	run_isd exec --rootfs "$r" -v "$T/proj:/home/agent/workspace/-home-me-proj" \
		-w /home/agent/workspace/-home-me-proj -- sh -c 'cat README; ls /home/agent/.local/bin; touch x'
	expect_rc 0
	expect_contains "$out" hello
	expect_contains "$out" tool "image content next to the new mount point"
	[ -f "$T/proj/x" ] || fail "write into the project bind"
	after=$(tree_state "$r")
	[ "$before" = "$after" ] || fail "the image directory on the host was modified"
}

test_symlink_escape_image() {
	r=$T/rootfs
	make_rootfs "$r"
	rm -rf "$r/home" "$r/tmp"
	ln -s / "$r/home"
	ln -s ../../../../../../ "$r/tmp"
	mkdir -p "$r/dev"
	ln -s /etc/passwd "$r/dev/null"
	mkdir -p "$T/proj" "$T/outside"
	before=$(tree_state "$r")
	outside_before=$(tree_state "$T/outside")
	run_isd exec --rootfs "$r" -v "$T/proj:/home/escape-target" -- sh -c 'readlink /home; ls -d /escape-target; test -c /dev/null && echo devnull-ok'
	expect_rc 0 "symlinked /home resolved inside the root"
	expect_contains "$out" "/escape-target"
	expect_contains "$out" devnull-ok "image /dev ignored"
	[ "$(tree_state "$r")" = "$before" ] || fail "image modified"
	[ "$(tree_state "$T/outside")" = "$outside_before" ] || fail "outside modified"
	[ ! -e /escape-target ] || fail "the bind escaped to the host root"
}

test_symlink_loop_refused() {
	r=$T/rootfs
	make_rootfs "$r"
	ln -s loop2 "$r/loop1"
	ln -s loop1 "$r/loop2"
	run_isd exec --rootfs "$r" --tmpfs /loop1/x -- true
	expect_rc 125 "symlink loop"
	expect_contains "$err" "Too many levels of symbolic links"
}

test_inherited_fd_closed() {
	echo secret >"$T/secret"
	"$ISD" exec -v "$PROBE:/probe:ro" -- /probe readfd 5 5<"$T/secret" >"$T/out" 2>&1
	expect_eq "$(cat "$T/out")" EBADF "fd 5 inside"
	"$ISD" exec -v "$PROBE:/probe:ro" -- /probe fds 5<"$T/secret" 7<"$T/secret" >"$T/out" 2>&1
	expect_eq "$(cat "$T/out")" "" "no descriptors beyond 0-2"
}

test_workdir_no_fd_escape() {
	run_isd exec -w /tmp -- true
	expect_rc 0 "a plain workdir works"
	n=3
	while [ $n -le 64 ]; do
		"$ISD" exec -w "/proc/self/fd/$n" -- true 5<"$T" 9<"$T" >/dev/null 2>&1
		rc=$?
		[ $rc -ne 0 ] || fail "--workdir /proc/self/fd/$n succeeded"
		n=$((n + 1))
	done
	run_isd exec -w /proc/1/cwd -- true
	[ "$rc" -ne 0 ] || fail "--workdir /proc/1/cwd succeeded"
}

test_workdir_created() {
	run_probe -w /srv/deep/work -- /probe cwd
	expect_eq "$out" /srv/deep/work
	run_probe -- /probe cwd
	expect_eq "$out" / "default workdir"
}

test_proc_exe_not_writable() {
	for f in /proc/1/exe /proc/self/exe; do
		run_probe -- /probe open "$f" w
		expect_one_of "$out" "EACCES EPERM ETXTBSY EROFS" "open $f for writing (rc $rc, $err)"
	done
	run_probe -- /probe open /proc/1/root/. r
	expect_one_of "$out" "EACCES EPERM" "/proc/1/root"
}

test_setcap_binary_gains_nothing() {
	r=$T/rootfs
	make_rootfs "$r"
	# File capabilities in the v3 (namespaced) form whose root is our own
	# uid: with -u 0 inside, the kernel would grant them on execve, unless
	# isd's empty bounding set, securebits and no_new_privs stop it.  CI
	# prepares such a file as root (ISD_TEST_CAPFILE); as root the test
	# makes its own.
	if [ -n "${ISD_TEST_CAPFILE:-}" ] && [ -f "$ISD_TEST_CAPFILE" ]; then
		capfile=$ISD_TEST_CAPFILE
	else
		command -v setcap >/dev/null || skip "setcap (libcap2-bin) is not installed"
		cp "$PROBE" "$T/capprobe"
		unshare -r setcap cap_dac_override,cap_sys_admin+ep "$T/capprobe" 2>/dev/null ||
			skip "setting file capabilities needs CAP_SETFCAP (CI sets ISD_TEST_CAPFILE)"
		capfile=$T/capprobe
	fi
	PATH=$PATH:/usr/sbin:/sbin getcap "$capfile" | grep -q cap_sys_admin || fail "fixture $capfile has no file capabilities"
	run_isd exec --rootfs "$r" -u 0 -v "$capfile:/capprobe:ro" -- /capprobe status
	expect_rc 0
	expect_eq "$(field "$out" CapPrm)" 0000000000000000 "file caps ignored"
	expect_eq "$(field "$out" CapEff)" 0000000000000000
}

test_dev_minimal() {
	run_isd exec -- sh -c 'ls /dev | tr "\n" " "'
	expect_eq "$out" "core fd full null ptmx pts random shm stderr stdin stdout tty urandom zero " "/dev entries"
	run_isd exec -- sh -c 'echo x > /dev/null && head -c 4 /dev/zero | wc -c'
	expect_eq "$out" 4
	run_probe -- /probe statfs /dev
	expect_contains "$out" "flags ro"
}

test_network_none() {
	run_isd exec -- sh -c 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "'
	expect_eq "$out" lo "only loopback"
	run_isd exec -- cat /proc/net/route
	expect_eq "$(printf '%s\n' "$out" | wc -l)" 1 "no routes"
	command -v python3 >/dev/null || return 0
	run_isd exec -- python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.send(b"ping"); print(a.recv(4).decode())'
	expect_eq "$out" ping "loopback works"
}

test_network_host() {
	host_ifs=$(tail -n +3 /proc/net/dev | wc -l)
	run_isd exec --network host -- sh -c 'tail -n +3 /proc/net/dev | wc -l'
	expect_eq "$out" "$host_ifs" "host network namespace"
	run_isd exec --network bridge -- true
	expect_rc 125 "unknown network mode"
	expect_contains "$err" "--network bridge: unknown mode"
}

test_hostname() {
	run_isd exec --hostname agent-box -- cat /proc/sys/kernel/hostname
	expect_eq "$out" agent-box
	run_isd exec -- cat /etc/hosts
	expect_contains "$out" "127.0.0.1	localhost"
	run_isd exec --hostname 'bad name' -- true
	expect_rc 125 "invalid hostname"
	expect_contains "$err" "--hostname 'bad name': not a valid host name"
}

test_missing_rootfs() {
	run_isd exec --rootfs "$T/nope" -- true
	expect_rc 125
	expect_contains "$err" "$T/nope"
	run_isd exec --image no-such-image -- true
	expect_rc 125
	expect_contains "$err" "no-such-image"
}

test_rootfs_image() {
	r=$T/rootfs
	make_rootfs "$r"
	run_isd exec --rootfs "$r" -- sh -c 'cat /etc/hosts; echo "home=$HOME"; ls /tmp /run /proc/self/ >/dev/null && echo ok'
	expect_rc 0
	expect_contains "$out" "127.0.0.1	localhost" "generated /etc/hosts over the image's"
	expect_contains "$out" "home=/" "uid without passwd entry"
	expect_contains "$out" ok
	run_isd exec --rootfs "$r" -u 1000 -- sh -c 'echo "home=$HOME user=$USER"'
	expect_contains "$out" "home=/home/agent user=agent"
	run_isd exec --rootfs "$r" -u agent -- id -u
	expect_eq "$out" 1000 "--user by name from the image's passwd"
}

test_resolv_conf_symlink_in_image() {
	r=$T/rootfs
	make_rootfs "$r"
	ln -s ../run/systemd/resolve/stub-resolv.conf "$r/etc/resolv.conf"
	run_isd exec --rootfs "$r" -- cat /etc/resolv.conf
	expect_rc 0
	expect_contains "$out" "no DNS"
}

test_stdio_pipes() {
	out=$(printf 'a\nb\nc\n' | "$ISD" exec -- wc -l)
	expect_eq "$out" 3 "stdin pipe"
	"$ISD" exec -- sh -c 'echo to-stderr >&2' 2>"$T/err" >/dev/null
	expect_eq "$(cat "$T/err")" to-stderr
}

test_print_spec() {
	run_isd exec --print-spec --tmpfs /data:size=1g,exec -v "$T:/proj:ro" -w /proj --memory 4g -- sh -c true
	expect_rc 0
	command -v python3 >/dev/null || skip "python3 (python3) is not installed: needed to parse JSON"
	printf '%s' "$out" | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["command"] == ["sh", "-c", "true"], s["command"]
assert s["root_readonly"] is True
assert s["workdir"] == "/proj"
m = {x["destination"]: x for x in s["mounts"]}
assert m["/data"]["size"] == 1 << 30 and m["/data"]["exec"] is True
assert m["/proj"]["readonly"] is True and m["/proj"]["type"] == "bind"
assert m["/tmp"]["origin"] == "isd"
assert s["capabilities"] == [] and s["no_new_privileges"] is True
assert s["limits"]["memory"] == 4 << 30
assert all(n for n in s["namespaces"].values())
' || fail "print-spec JSON: $out"
}

test_tiocsti_without_tty() {
	command -v script >/dev/null || skip "script (bsdutils) is not installed"
	# Run isd on a terminal; the payload has no controlling terminal, so it
	# cannot push input into the caller's.
	script -qec "\"$ISD\" exec -v \"$PROBE:/probe:ro\" -- /probe tiocsti" /dev/null </dev/null >"$T/out" 2>&1
	expect_contains "$(cat "$T/out")" EPERM "TIOCSTI from the payload"
}

# An outer container that masks part of /proc (as Docker and Podman do)
# makes the kernel refuse a fresh procfs in any namespace below it.
test_masked_proc_detected() {
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	# As root, unshare -Ur maps nothing but host root, which isd keeps
	# only when told to.
	unsafe=
	[ "$(id -u)" -ne 0 ] || unsafe=--unsafe-host-root
	unshare -Urm sh -c 'mount --bind /dev/null /proc/timer_list || mount --bind /dev/null /proc/keys || exit 77
		"$0" exec $1 -- true' "$ISD" "$unsafe" >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -ne 77 ] || skip "cannot mask a /proc entry here"
	err=$(grep -v '^isd: warning: --unsafe-host-root' "$T/err")
	expect_rc 125 "masked /proc"
	expect_contains "$err" "mounting a fresh /proc"
	expect_contains "$err" "--pid=host"
	[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "one line expected: $err"
	unshare -Urm sh -c 'mount --bind /dev/null /proc/timer_list || mount --bind /dev/null /proc/keys
		"$0" exec $2 --pid=host -v "$1:/probe:ro" -- /probe statfs /proc' "$ISD" "$PROBE" "$unsafe" >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_rc 0 "--pid=host in a masked container"
	expect_contains "$out" "flags ro" "outer /proc bound read-only"
	expect_contains "$err" "warning: --pid=host" "the weaker isolation is said"
}

# isd inside isd: the outer sandbox needs the nested seccomp profile; with
# the default one the inner isd fails with one line that says so.
test_nested_isd() {
	profiles=$ISD_TEST_SRCDIR/seccomp-profiles
	# The binary at its own path: a build-tree isd finds its profiles in the
	# source tree only when it runs from the build tree.
	outer="-v $ISD:$ISD:ro -v $profiles:$profiles:ro -v $PROBE:/probe:ro"
	# Since Linux 5.12 mapping uid 0 into a new user namespace needs
	# CAP_SETFCAP, which no payload has: a root caller's sandbox runs as
	# another uid to host a nested one.
	[ "$(id -u)" -ne 0 ] || outer="$outer -u 1000:1000"
	run_isd exec --security-opt seccomp=nested $outer -- "$ISD" exec -v /probe:/probe:ro -- /probe status
	expect_rc 0 "isd inside isd"
	expect_eq "$(field "$out" CapEff)" 0000000000000000 "inner payload caps"
	expect_eq "$(field "$out" NoNewPrivs)" 1
	run_isd exec $outer -- "$ISD" exec -- true
	expect_rc 125 "inner isd under the default profile"
	expect_contains "$err" "seccomp=nested"
	if [ "$(id -u)" -eq 0 ]; then
		run_isd exec --security-opt seccomp=nested -v "$ISD:$ISD:ro" -v "$profiles:$profiles:ro" -- "$ISD" exec -- true
		expect_rc 125 "uid 0 inside cannot map uid 0 again"
		expect_contains "$err" "CAP_SETFCAP"
	fi
}

# A kernel (or an outer container's seccomp profile) without the new mount
# API: one line that names the kernel version isd needs.
test_no_mount_api_explained() {
	command -v python3 >/dev/null || skip "python3 (python3) is not installed: needed to edit a profile"
	profiles=$ISD_TEST_SRCDIR/seccomp-profiles
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["syscalls"]:
    s["names"] = [n for n in s.get("names", []) if n != "open_tree"]
json.dump(d, open(sys.argv[2], "w"))' "$profiles/nested.json" "$T/no-open-tree.json"
	outer="-v $ISD:$ISD:ro -v $profiles:$profiles:ro"
	[ "$(id -u)" -ne 0 ] || outer="$outer -u 1000:1000"
	# (a profile of one's own keeps Landlock, which forbids every mount)
	run_isd exec --security-opt "seccomp=$T/no-open-tree.json" --security-opt landlock=off $outer -- "$ISD" exec -- true
	expect_rc 125 "no open_tree"
	expect_contains "$err" "Linux 5.12"
	[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "one line: $err"
}

# -u UID without a group takes the user's group from the image's passwd,
# else 0, as Docker does: -u 0 is root:root, not root:your-group.
test_user_number_takes_group_from_passwd() {
	run_isd exec -u 0 -- id -g
	expect_rc 0
	expect_eq "$out" 0 "gid for -u 0"
	run_isd exec -u 4242 -- id -g
	expect_eq "$out" 0 "gid for a uid the image does not know"
	run_isd exec -u 0:77 -- id -g
	expect_eq "$out" 77 "an explicit group wins"
}

# /etc/hostname says what hostname(1) says.
test_etc_hostname_matches() {
	run_isd exec -h box1 -- sh -c 'cat /etc/hostname; hostname'
	expect_rc 0
	expect_eq "$out" "box1
box1"
}

# A prefix of several options is ambiguous, not unknown.
test_ambiguous_option_named() {
	run_isd exec --mem 1g -- true
	expect_rc 125
	expect_contains "$err" "option '--mem' is ambiguous (--memory, --memory-swap, --memory-reservation)"
	run_isd exec --no-such-option -- true
	expect_rc 125
	expect_contains "$err" "unknown option '--no-such-option'"
	# a prefix of nearly every option, and an empty one (found by the
	# fuzzer: the list of candidates overran its buffer)
	run_isd exec --c -- true
	expect_rc 125
	expect_contains "$err" "option '--c' is ambiguous (--cap-drop,"
	run_isd exec --= -- true
	expect_rc 125
	expect_contains "$err" "unknown option '--='"
}

# Inside an outer container whose seccomp profile forbids sethostname (as
# podman's does without CAP_SYS_ADMIN), the sandbox starts with the
# inherited name instead of failing: the name protects nothing.
test_hostname_refused_is_cosmetic() {
	command -v python3 >/dev/null || skip "python3 (python3) is not installed: needed to edit a profile"
	profiles=$ISD_TEST_SRCDIR/seccomp-profiles
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["syscalls"]:
    s["names"] = [n for n in s.get("names", []) if n != "sethostname"]
json.dump(d, open(sys.argv[2], "w"))' "$profiles/nested.json" "$T/no-sethostname.json"
	outer="-v $ISD:$ISD:ro -v $profiles:$profiles:ro -h outer-name"
	[ "$(id -u)" -ne 0 ] || outer="$outer -u 1000:1000"
	# (a profile of one's own keeps Landlock, which forbids every mount)
	run_isd exec --security-opt "seccomp=$T/no-sethostname.json" --security-opt landlock=off $outer -- "$ISD" exec -- sh -c 'hostname; cat /etc/hostname'
	expect_rc 0 "inner isd without sethostname: $err"
	expect_eq "$out" "outer-name
outer-name" "the inherited name, in hostname(1) and /etc/hostname"
}

# Under Docker's default seccomp profile (what a plain docker run gives),
# the refusal names the container engine's fix as well as isd's own.
test_outer_docker_profile_names_both_fixes() {
	profiles=$ISD_TEST_SRCDIR/seccomp-profiles
	outer="-v $ISD:$ISD:ro -v $profiles:$profiles:ro"
	[ "$(id -u)" -ne 0 ] || outer="$outer -u 1000:1000"
	run_isd exec --security-opt "seccomp=$ISD_TEST_SRCDIR/tests/seccomp/docker/default.json" $outer -- "$ISD" exec -- true
	expect_rc 125
	expect_contains "$err" "--security-opt seccomp=unconfined (Kubernetes: securityContext.seccompProfile.type: Unconfined)"
	expect_contains "$err" "--security-opt seccomp=nested"
	[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "one line: $err"
}

# Inside another isd whose Landlock ruleset forbids /proc writes, the
# inner isd says so instead of a bare "Permission denied".
test_outer_landlock_explained() {
	profiles=$ISD_TEST_SRCDIR/seccomp-profiles
	outer="-v $ISD:$ISD:ro -v $profiles:$profiles:ro"
	[ "$(id -u)" -ne 0 ] || outer="$outer -u 1000:1000"
	run_isd exec --security-opt seccomp=unconfined $outer -- "$ISD" exec -- true
	expect_rc 125
	expect_contains "$err" "Landlock domain that forbids writing /proc"
	expect_contains "$err" "--security-opt landlock=off"
}
