# SPDX-License-Identifier: LGPL-2.1-or-later
# What the engines need of isd-runtime, found by driving it with the real
# podman and containerd (engine-runtime.sh, the engine tier): each case here
# is one such need, checked without an engine.  runtime.sh's helpers.

. "$ISD_TEST_SRCDIR/tests/integration/runtime.sh"

# podman exec without -t into a container run with -t: conmon's --process
# file has no "terminal" (Go leaves a false one out), which is false.
test_exec_process_without_terminal() {
	at_teardown cleanup_containers
	make_bundle "$T/b" 'c["process"]["terminal"] = True; c["process"]["args"] = ["sleep", "600"]'
	console_receiver
	rt run -d --bundle "$T/b" --console-socket "$T/console.sock" x3
	expect_rc 0 "run -d with a terminal"
	printf '{"args": ["sh", "-c", "test -t 1 || echo no-terminal; exit 4"], "env": ["PATH=/bin"], "cwd": "/"}' >"$T/process.json"
	rt exec --process "$T/process.json" x3
	expect_rc 4 "exec --process without terminal: the exit status ($err)"
	expect_eq "$out" no-terminal "exec --process without terminal: no terminal"
	rt exec --process "$T/process.json" --detach --pid-file "$T/epid" x3
	expect_rc 0 "exec --process --detach without terminal or console socket ($err)"
}

# linux.namespaces with a path: the payload is in the namespace the test
# made (the same inode in /proc/self/ns), as root and rootless (where the
# user namespace is joined too, as rootless podman passes it).
# pause and resume: the freezer of the container's cgroup (podman pause,
# unpause); a paused container is still killed and deleted.
test_pause_resume() {
	mnt=$(cg2_mount)
	[ -n "$mnt" ] || skip "no cgroup2 hierarchy"
	top="isd-rt-test-$$"
	mkdir "$mnt/$top" 2>/dev/null || skip "cannot make cgroups in $mnt (no delegation)"
	at_teardown "rmdir '$mnt/$top/p1' '$mnt/$top' 2>/dev/null"
	at_teardown cleanup_containers
	make_bundle "$T/b" "c['linux']['cgroupsPath'] = '/$top/p1'
c['process']['args'] = ['sh', '-c', 'while :; do echo x >>/tmp/ticks; sleep 0.1; done']"
	rt run -d --bundle "$T/b" p1
	expect_rc 0 "run -d ($err)"
	wait_until 10 test -s "$T/b/rootfs/tmp/ticks" || fail "the payload did not start"
	rt resume p1
	expect_rc 1 "resume of a running container"
	rt pause p1
	expect_rc 0 "pause ($err)"
	rt state p1
	expect_eq "$(json_field 'v["status"]')" paused "the state after pause"
	n1=$(wc -l <"$T/b/rootfs/tmp/ticks")
	sleep 0.5
	expect_eq "$(wc -l <"$T/b/rootfs/tmp/ticks")" "$n1" "no progress while paused"
	rt exec p1 true
	expect_rc 1 "exec into a paused container"
	rt delete p1
	expect_rc 1 "delete of a paused container without --force"
	rt resume p1
	expect_rc 0 "resume ($err)"
	wait_until 10 sh -c "[ \$(wc -l <'$T/b/rootfs/tmp/ticks') -gt $n1 ]" || fail "no progress after resume"
	rt pause p1
	rt delete --force p1
	expect_rc 0 "delete --force of a paused container ($err)"
	[ ! -e "$mnt/$top/p1" ] || fail "delete left the cgroup"
}

# exec as a user the container's namespace does not map (isd maps the
# payload's own ids): refused by name, not setresuid's EINVAL.
test_exec_unmapped_user() {
	at_teardown cleanup_containers
	make_bundle "$T/b" 'c["process"]["args"] = ["sleep", "600"]'
	rt run -d --bundle "$T/b" x4
	expect_rc 0 "run -d"
	rt exec --user 1000 x4 true
	expect_rc 1 "exec --user 1000"
	expect_contains "$err" "exec: user 1000:0: not an id of the container's user namespace" "the refusal names the user"
	rt exec --user 0:0 x4 sh -c 'exit 6'
	expect_rc 6 "exec as the container's own user"
}

# run.oci.isd.seccomp=agent beside the config's linux.seccomp (every
# engine writes one): both filters, in the container and in exec.
test_annotation_seccomp_stacked() {
	at_teardown cleanup_containers
	make_bundle "$T/b" 'c["annotations"] = {"run.oci.isd.seccomp": "agent"}
c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
c["process"]["args"] = ["sh", "-c", "grep ^Seccomp_filters: /proc/self/status; unshare -U true 2>/dev/null || echo unshare-refused; kill -0 $$ 2>/dev/null || echo kill-refused; exec sleep 600"]'
	ln -sf busybox "$T/b/rootfs/bin/unshare" && ln -sf busybox "$T/b/rootfs/bin/grep" || fail "cannot link the applets"
	rt run -d --bundle "$T/b" --pid-file "$T/pid" s1
	expect_rc 0 "run -d with linux.seccomp and run.oci.isd.seccomp=agent ($err)"
	rt exec s1 sh -c 'grep ^Seccomp_filters: /proc/self/status; unshare -U true 2>/dev/null || echo unshare-refused; kill -0 $$ 2>/dev/null || echo kill-refused'
	expect_eq "$out" "$(printf 'Seccomp_filters:\t2\nunshare-refused\nkill-refused')" "exec: both filters (the agent's, the config's)"
	rt delete --force s1
	make_bundle "$T/b2" 'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW"}
c["process"]["args"] = ["sh", "-c", "grep ^Seccomp_filters: /proc/self/status; unshare -U true 2>/dev/null && echo unshare-allowed"]'
	ln -sf busybox "$T/b2/rootfs/bin/unshare" && ln -sf busybox "$T/b2/rootfs/bin/grep" || fail "cannot link the applets"
	rt run --bundle "$T/b2" s2
	expect_eq "$out" "$(printf 'Seccomp_filters:\t1\nunshare-allowed')" "without the annotation: the config's filter only"
}

# podman's cgroupsPath: /libpod_parent/libpod-<the 64 hex digits of the id>
test_cgroups_path_engine_name() {
	mnt=$(cg2_mount)
	[ -n "$mnt" ] || skip "no cgroup2 hierarchy"
	top="isd-rt-test-$$"
	mkdir "$mnt/$top" 2>/dev/null || skip "cannot make cgroups in $mnt (no delegation)"
	rmdir "$mnt/$top"
	name=libpod-$(printf '%064d' 7)
	# after the container's delete (teardowns run last first)
	at_teardown "rmdir '$mnt/$top/$name' '$mnt/$top' 2>/dev/null"
	at_teardown cleanup_containers
	make_bundle "$T/b" "c['linux']['cgroupsPath'] = '/$top/$name'
c['process']['args'] = ['sleep', '600']"
	rt run -d --bundle "$T/b" --pid-file "$T/pid" e1
	expect_rc 0 "run with cgroupsPath /$top/$name ($err)"
	expect_eq "$(sed -n 's/^0:://p' /proc/"$(cat "$T/pid")"/cgroup)" "/$top/$name" "init's cgroup"
}

# A cgroup v2 hierarchy that another mount covers (a tmpfs over it) is
# still in mountinfo: limits are refused by name, not with clone3's EBADF
# for a directory that is no cgroup, and a name alone asks for nothing.
test_cgroups_path_hierarchy_covered() {
	host_root || skip "covering the cgroup hierarchy in a mount namespace needs the machine's root"
	mnt=$(cg2_mount)
	[ -n "$mnt" ] || skip "no cgroup2 hierarchy"
	at_teardown cleanup_containers
	covered() {
		unshare -m --propagation private sh -c 'mount -t tmpfs covering "$0" && exec "$@"' "$mnt" \
			"$ISD_RUNTIME" --root "$T/state" "$@" >"$T/out" 2>"$T/err" </dev/null
		rc=$?
		err=$(cat "$T/err")
	}
	make_bundle "$T/b" "c['linux']['cgroupsPath'] = '/isd-rt-covered-$$/c1'
c['linux']['resources'] = {'memory': {'limit': 268435456}}"
	covered run --bundle "$T/b" c1
	expect_rc 1 "run with limits under a covered hierarchy"
	expect_contains "$err" "is covered by another mount" "the cause ($err)"
	expect_not_contains "$err" "Bad file descriptor" "no bare errno"
	make_bundle "$T/b2" "c['linux']['cgroupsPath'] = '/isd-rt-covered-$$/c2'"
	covered run --bundle "$T/b2" c2
	expect_rc 0 "a cgroupsPath without limits ($err)"
	[ ! -e "$mnt/isd-rt-covered-$$" ] || fail "a cgroup was made on the host's hierarchy"
}

# Rootless podman runs its runtime as root of its user namespace, with its
# user's $XDG_RUNTIME_DIR: the state goes there, as runc's and crun's do
# (the host's /run is not writable), unless USER=root.
test_default_root_in_user_namespace() {
	at_teardown cleanup_containers
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	unshare -r true 2>/dev/null || skip "unshare -r cannot make a user namespace here"
	make_bundle "$T/b" 'c["process"]["args"] = ["sleep", "600"]'
	mkdir -m 0700 "$T/xdg" && ln -s ../state "$T/xdg/isd-runtime" || fail "cannot make \$XDG_RUNTIME_DIR"
	rt run -d --bundle "$T/b" u1
	expect_rc 0 "run -d ($err)"
	out=$(unshare -r env XDG_RUNTIME_DIR="$T/xdg" USER=someone "$ISD_RUNTIME" list -q 2>&1)
	expect_eq "$out" u1 "root of a user namespace: the state in \$XDG_RUNTIME_DIR/isd-runtime"
	out=$(unshare -r env XDG_RUNTIME_DIR="$T/xdg" USER=root "$ISD_RUNTIME" list -q 2>&1)
	expect_not_contains "$out" u1 "USER=root: /run/isd-runtime"
}

# A noexec bind (podman's --read-only binds /etc/hosts so, rootless podman
# its --device nodes): made, its files readable, not executable.
test_bind_noexec() {
	make_bundle "$T/b" 'c["mounts"].append({"destination": "/mnt/x", "type": "bind", "source": "'"$T/b/rootfs/bin"'", "options": ["rbind", "ro", "nosuid", "nodev", "noexec"]})
c["process"]["args"] = ["sh", "-c", "test -r /mnt/x/busybox && echo readable; /mnt/x/busybox true; echo exec=$?"]'
	rt run --bundle "$T/b" n1
	expect_rc 0 "run with a noexec bind ($err)"
	expect_eq "$out" "$(printf 'readable\nexec=126')" "the bind: readable, not executable"
}

# linux.rootfsPropagation rslave (rootless podman's with --device): met by
# the container's private root; shared as crun makes it; an unknown value is refused.
test_rootfs_propagation() {
	make_bundle "$T/b" 'c["linux"]["rootfsPropagation"] = "rslave"; c["process"]["args"] = ["true"]'
	rt run --bundle "$T/b" f1
	expect_rc 0 "run with rootfsPropagation rslave ($err)"
	# shared since d5178bd, as crun applies it (runtime-crun.sh compares)
	make_bundle "$T/b2" 'c["linux"]["rootfsPropagation"] = "rshared"; c["process"]["args"] = ["true"]'
	rt run --bundle "$T/b2" f2
	expect_rc 0 "run with rootfsPropagation rshared ($err)"
	make_bundle "$T/b3" 'c["linux"]["rootfsPropagation"] = "everywhere"; c["process"]["args"] = ["true"]'
	rt run --bundle "$T/b3" f3
	expect_rc 1 "rootfsPropagation everywhere"
	expect_contains "$err" "linux.rootfsPropagation" "the refusal names it"
}

# A limit whose controller the cgroup2 hierarchy lacks (a hybrid host: v1
# has it): refused by name, not "No such file or directory", which podman
# turns into status 127, a missing command.
test_cgroups_path_missing_controller() {
	at_teardown cleanup_containers
	mnt=$(cg2_mount)
	[ -n "$mnt" ] || skip "no cgroup2 hierarchy"
	grep -qw pids "$mnt/cgroup.controllers" && skip "the cgroup2 hierarchy has the pids controller"
	top="isd-rt-test-$$"
	mkdir "$mnt/$top" 2>/dev/null || skip "cannot make cgroups in $mnt (no delegation)"
	rmdir "$mnt/$top"
	at_teardown "rmdir '$mnt/$top/m1' '$mnt/$top' 2>/dev/null"
	make_bundle "$T/b" "c['linux']['cgroupsPath'] = '/$top/m1'
c['linux']['resources'] = {'pids': {'limit': 100}}
c['process']['args'] = ['true']"
	rt run --bundle "$T/b" m1
	expect_rc 1 "a pids limit without the pids controller"
	expect_contains "$err" "linux.resources need +pids, but the cgroup v2 hierarchy at $mnt has only" "the message"
	expect_not_contains "$err" "No such file" "no words podman reads as a missing command"
	[ ! -e "$mnt/$top" ] || fail "the refused create left its cgroups"
}
