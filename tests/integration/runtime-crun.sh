# SPDX-License-Identifier: LGPL-2.1-or-later
# isd-runtime against crun: the same bundle (busybox and the static probe,
# the config changed per feature) run by both, what the probe reports
# compared.  Where isd is stricter on purpose (isd-runtime(8): never
# the host's root) the test says so and checks isd's side.
#
# crun refuses a hybrid cgroup layout (v1 controllers beside a v2
# hierarchy at /sys/fs/cgroup/unified): it runs in a private mount
# namespace where unified is gone (as root: unmounted; rootless: inside
# unshare -rm, covered by a tmpfs, with --cgroup-manager=disabled).

: "${ISD_RUNTIME:?ISD_RUNTIME must point at isd-runtime}"

# diff_bundle 'PYTHON': $T/b for isd-runtime and $T/bc for crun, the
# same config but for crun's rootless id map, which names the ids of the
# user namespace crun runs in (unshare -r maps the caller to its 0).
diff_bundle() {
	command -v crun >/dev/null || skip "crun (crun) is not installed"
	[ -x /bin/busybox ] || skip "busybox (busybox-static) is not installed"
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	mkdir -p "$T/b/rootfs/bin" "$T/b/rootfs/proc" "$T/b/rootfs/dev" "$T/b/rootfs/sys" "$T/b/rootfs/tmp" \
		"$T/b/rootfs/etc" "$T/bc" || fail "cannot make the bundle"
	cp /bin/busybox "$T/b/rootfs/bin/" && cp "$PROBE" "$T/b/rootfs/probe" || fail "cannot fill the bundle"
	for a in sh env hostname id sort cat mkdir grep; do
		ln -sf busybox "$T/b/rootfs/bin/$a"
	done
	if host_root; then
		"$ISD_RUNTIME" spec --bundle "$T/b" || fail "isd-runtime spec failed"
	else
		"$ISD_RUNTIME" spec --rootless --bundle "$T/b" || fail "isd-runtime spec failed"
	fi
	python3 - "$T/b/config.json" "$T/bc/config.json" "$T/b/rootfs" "$1" <<'EOF' || fail "cannot write the configs"
import json, os, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["linux"].pop("resources", None)
c["root"]["path"] = sys.argv[3]
exec(sys.argv[4])
json.dump(c, open(sys.argv[1], "w"), indent=1)
for m in c["linux"].get("uidMappings", []) + c["linux"].get("gidMappings", []):
    m["hostID"] = 0
json.dump(c, open(sys.argv[2], "w"), indent=1)
EOF
}

# run_crun STATE_DIR: crun runs $T/bc as d1-PID; its exit status in
# $crun_rc.  The id is the test's own: as root crun names the container's
# cgroups by it, and tests that run side by side shared (and removed)
# one another's, their containers ending with no output.
run_crun() {
	if host_root; then
		unshare -m sh -c 'umount /sys/fs/cgroup/unified 2>/dev/null; exec crun --root "$1" run --bundle "$2" "$3"' \
			sh "$1" "$T/bc" "d1-$$" >"$T/crun.out" 2>"$T/crun.err" </dev/null
	else
		unshare -rm sh -c 'mount -t tmpfs none /sys/fs/cgroup/unified 2>/dev/null
			exec crun --cgroup-manager=disabled --root "$1" run --bundle "$2" "$3"' \
			sh "$1" "$T/bc" "d1-$$" >"$T/crun.out" 2>"$T/crun.err" </dev/null
	fi
	crun_rc=$?
}

# both: run the bundle with each runtime; stdout in $isd_out / $crun_out,
# exit status in $isd_rc / $crun_rc.
both() {
	"$ISD_RUNTIME" --root "$T/isd-state" run --bundle "$T/b" d1 >"$T/isd.out" 2>"$T/isd.err" </dev/null
	isd_rc=$?
	isd_out=$(cat "$T/isd.out")
	run_crun "$T/crun-state"
	# crun's own start-up race on a loaded machine (its init gone before
	# the sync socket's first read): once more, in a fresh state directory
	if [ "$crun_rc" -ne 0 ] && grep -q "sync socket" "$T/crun.err"; then
		run_crun "$T/crun-state-again"
	fi
	crun_out=$(cat "$T/crun.out")
	if grep -q "user namespace\|unshare failed\|Operation not permitted" "$T/crun.err" && [ -z "$crun_out" ]; then
		skip "crun cannot run here: $(head -n1 "$T/crun.err")"
	fi
}

# The lines of $1 that start with one of the keys in $2.
lines() {
	printf '%s\n' "$1" | grep -E "^($2)"
}

test_identity() {
	diff_bundle 'c["process"]["args"] = ["/probe", "status"]'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_eq "$crun_rc" 0 "crun's exit status (stderr: $(cat "$T/crun.err"))"
	expect_eq "$(lines "$isd_out" 'Uid|Gid|NoNewPrivs|Seccomp')" "$(lines "$crun_out" 'Uid|Gid|NoNewPrivs|Seccomp')" \
		"ids, no_new_privs and seccomp"
	# the config's capabilities (runc's default three), as crun grants them
	expect_contains "$crun_out" "CapEff:	0000000020000420" "crun grants the config's capabilities"
	expect_eq "$(lines "$isd_out" "$CAPS")" "$(lines "$crun_out" "$CAPS")" "the config's capabilities"
}

CAPS='CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs'

# Five different sets and no_new_privs off (issue 17): what crun makes of
# them, for uid 0 (bounding and inheritable refill on execve) and for a
# non-root user, whose capabilities past execve are the ambient ones.
CAP_SETS='c["process"]["capabilities"] = {"bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SETUID",
 "CAP_SYS_ADMIN"], "effective": ["CAP_KILL", "CAP_CHOWN"], "permitted": ["CAP_KILL", "CAP_CHOWN", "CAP_SETUID"],
 "inheritable": ["CAP_KILL", "CAP_NET_BIND_SERVICE"], "ambient": ["CAP_KILL"]}
c["process"]["noNewPrivileges"] = False
c["process"]["args"] = ["/probe", "status"]'

test_capabilities() {
	# bwrap (CI's nested tier) sets no_new_privs, which no child can clear
	[ "$(awk '/^NoNewPrivs:/ {print $2}' /proc/self/status)" = 0 ] ||
		skip "the test runs with no_new_privs set (nested in bwrap), so no container can be without it"
	diff_bundle "$CAP_SETS"
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_contains "$crun_out" "NoNewPrivs:	0" "crun: noNewPrivileges false"
	expect_contains "$crun_out" "CapBnd:	00000000002004a1" "crun: the bounding set"
	expect_eq "$(lines "$isd_out" "$CAPS")" "$(lines "$crun_out" "$CAPS")" "five capability sets, no_new_privs off"
}

test_capabilities_user_ambient() {
	host_root || skip "a second id needs a map of more than the caller's id (root only here)"
	diff_bundle "$CAP_SETS"'
c["process"]["user"] = {"uid": 1234, "gid": 2345}'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_contains "$crun_out" "CapAmb:	0000000000000020" "crun: the ambient capability (stderr: $(cat "$T/crun.err"))"
	expect_contains "$isd_out" "CapEff:	0000000000000020" "isd-runtime: a non-root user has its ambient capability"
	expect_eq "$(lines "$isd_out" "Uid|$CAPS")" "$(lines "$crun_out" "Uid|$CAPS")" "a non-root user's ambient set"
}

test_capabilities_no_new_privs() {
	diff_bundle "$CAP_SETS"'
c["process"]["noNewPrivileges"] = True'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_contains "$isd_out" "NoNewPrivs:	1" "isd-runtime: noNewPrivileges true"
	expect_eq "$(lines "$isd_out" "$CAPS")" "$(lines "$crun_out" "$CAPS")" "capability sets with no_new_privs"
}

# Without no_new_privs the filter is loaded while CAP_SYS_ADMIN is held,
# and the sets taken after it: neither may fail, both must hold.
test_capabilities_seccomp_without_nnp() {
	diff_bundle 'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
	{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
c["process"]["noNewPrivileges"] = False
c["process"]["capabilities"] = {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"]}
c["process"]["args"] = ["sh", "-c", "/probe status | grep -E \"^(Seccomp|Cap|NoNew)\"; mkdir /tmp/d || echo mkdir-refused"]'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_contains "$isd_out" "mkdir-refused" "isd-runtime: the config's filter without no_new_privs"
	expect_eq "$isd_out" "$crun_out" "seccomp and capabilities without no_new_privs"
}

# The operator's choice per pod: isd's own rule, whatever the config asks.
test_capabilities_annotation_none() {
	diff_bundle "$CAP_SETS"'
c["annotations"] = {"run.oci.isd.capabilities": "none"}'
	"$ISD_RUNTIME" --root "$T/isd-state" run --bundle "$T/b" d1 >"$T/isd.out" 2>"$T/isd.err" </dev/null
	expect_eq "$?" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_eq "$(lines "$(cat "$T/isd.out")" "$CAPS" | cut -f2 | sort -u | tr '\n' ' ')" "0000000000000000 1 " \
		"run.oci.isd.capabilities=none: no capability, no_new_privs"
}

test_capabilities_unknown_name() {
	diff_bundle 'c["process"]["capabilities"]["bounding"].append("CAP_FLY")'
	"$ISD_RUNTIME" --root "$T/isd-state" run --bundle "$T/b" d1 >"$T/isd.out" 2>"$T/isd.err" </dev/null
	expect_eq "$?" 1 "isd-runtime refuses an unknown capability"
	expect_eq "$(grep -c . "$T/isd.err")" 1 "one line (stderr: $(cat "$T/isd.err"))"
	expect_contains "$(cat "$T/isd.err")" '"CAP_FLY" is not a capability isd knows' "the refusal names it"
	expect_eq "$(cat "$T/isd.out")" "" "nothing ran"
}

test_cwd_env_hostname() {
	diff_bundle 'c["process"]["cwd"] = "/tmp"; c["process"]["env"].append("FOO=bar baz"); c["hostname"] = "box1"
c["process"]["args"] = ["sh", "-c", "/probe cwd; hostname; env | sort"]'
	printf 'root:x:0:0:root:/root:/bin/sh\nu:x:1234:2345::/home/u:/bin/sh\n' >"$T/b/rootfs/etc/passwd"
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_eq "$crun_rc" 0 "crun's exit status (stderr: $(cat "$T/crun.err"))"
	expect_contains "$crun_out" "box1" "crun: the host name"
	expect_contains "$crun_out" "FOO=bar baz" "crun: the environment"
	expect_eq "$isd_out" "$crun_out" "working directory, host name and environment"
}

test_root_readonly() {
	diff_bundle 'c["root"]["readonly"] = True
c["process"]["args"] = ["sh", "-c", "/probe write /newfile; /probe write /tmp/newfile"]'
	both
	expect_eq "$isd_rc" "$crun_rc" "the exit status (isd-runtime's stderr: $(cat "$T/isd.err"))"
	expect_contains "$crun_out" "EROFS" "crun: a read-only root"
	expect_eq "$(printf '%s\n' "$isd_out" | head -n1)" "$(printf '%s\n' "$crun_out" | head -n1)" "writing to a read-only root"
}

test_root_writable() {
	diff_bundle 'c["root"]["readonly"] = False; c["process"]["args"] = ["/probe", "write", "/newfile"]'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_eq "$crun_out" ok "crun: a writable root"
	expect_eq "$isd_out" "$crun_out" "writing to a writable root"
	! host_root || expect_eq "$(stat -c %u "$T/b/rootfs/newfile")" 0 "as root, what the payload wrote is root's on disk"
}

test_exit_status() {
	diff_bundle 'c["process"]["args"] = ["/probe", "exit", "42"]'
	both
	expect_eq "$crun_rc" 42 "crun's exit status"
	expect_eq "$isd_rc" "$crun_rc" "the payload's exit status"
}

test_devices_proc() {
	diff_bundle 'c["process"]["args"] = ["sh", "-c", "/probe open /dev/null w; /probe open /dev/zero r; /probe open /proc/self/status r; /probe open /dev/full w"]'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_eq "$crun_out" "$(printf 'ok\nok\nok\nok')" "crun: /dev and /proc"
	expect_eq "$isd_out" "$crun_out" "/dev and /proc"
}

test_user() {
	host_root || skip "a second id needs a map of more than the caller's id (root only here)"
	diff_bundle 'c["process"]["user"] = {"uid": 1234, "gid": 2345}; c["process"]["args"] = ["/probe", "status"]'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_contains "$crun_out" "Uid:	1234" "crun: process.user"
	expect_eq "$(lines "$isd_out" 'Uid|Gid')" "$(lines "$crun_out" 'Uid|Gid')" "process.user"
}

test_seccomp() {
	diff_bundle 'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
	{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
c["process"]["args"] = ["sh", "-c", "/probe status | grep Seccomp; mkdir /tmp/d || echo mkdir-refused"]'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_contains "$crun_out" "mkdir-refused" "crun: the config's filter"
	expect_eq "$isd_out" "$crun_out" "linux.seccomp"
}

test_masked_readonly_paths() {
	diff_bundle 'c["process"]["args"] = ["sh", "-c", "/probe open /proc/kcore r; /probe write /proc/sys/kernel/domainname; /probe statfs /sys; /probe open /sys/firmware r; /probe statfs /dev/shm"]'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_contains "$crun_out" "EROFS" "crun: linux.readonlyPaths"
	expect_eq "$isd_out" "$crun_out" "maskedPaths, readonlyPaths, /sys and /dev/shm"
}

# The config's own mounts, rlimits and paths: what crun makes, isd makes.
test_config_mounts_rlimits_paths() {
	mkdir -p "$T/hro" "$T/hrw" && echo ro-data >"$T/hro/f" && chmod a+rwx "$T/hro" "$T/hrw" || fail "cannot make the host dirs"
	diff_bundle 'import os
t = os.environ["T"]
c["mounts"] += [{"destination": "/mnt/ro", "type": "bind", "source": t + "/hro", "options": ["rbind", "ro", "nosuid", "nodev"]},
  {"destination": "/mnt/rw", "type": "bind", "source": t + "/hrw", "options": ["rbind", "rprivate"]},
  {"destination": "/mnt/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "size=1m"]}]
c["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "soft": 256, "hard": 256}, {"type": "RLIMIT_CORE", "soft": 0, "hard": 0}]
c["linux"]["maskedPaths"] = c["linux"].get("maskedPaths", []) + ["/etc/secret"]
c["linux"]["readonlyPaths"] = c["linux"].get("readonlyPaths", []) + ["/etc/rodir"]
c["process"]["args"] = ["sh", "-c", "grep -E \"^Max (open files|core file size)\" /proc/self/limits; cat /mnt/ro/f /etc/secret; /probe write /mnt/ro/x; /probe write /mnt/rw/x; /probe write /mnt/tmp/x; /probe write /etc/rodir/x; exit 0"]'
	echo secret-data >"$T/b/rootfs/etc/secret" && mkdir -p "$T/b/rootfs/etc/rodir" && chmod a+rwx "$T/b/rootfs/etc/rodir"
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_contains "$crun_out" "EROFS" "crun: the read-only bind"
	expect_eq "$isd_out" "$crun_out" "config mounts, rlimits, maskedPaths and readonlyPaths"
}

# linux.namespaces with a path: both runtimes put the payload in the
# network, uts and ipc namespaces of a process the test made.  As root
# only: rootless crun runs in a user namespace of the test's own, from
# which the holder's namespaces cannot be joined.
test_namespaces_joined() {
	host_root || skip "crun joins namespaces by path here only as the machine's root"
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	unshare --net --uts --ipc sleep 600 &
	holder=$!
	at_teardown "kill $holder 2>/dev/null"
	wait_until 10 sh -c "[ \"\$(readlink /proc/$holder/ns/uts)\" != \"\$(readlink /proc/self/ns/uts)\" ]" ||
		fail "unshare did not start"
	diff_bundle "ns = {'network': 'net', 'uts': 'uts', 'ipc': 'ipc'}
c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] not in ns]
c['linux']['namespaces'] += [{'type': t, 'path': '/proc/$holder/ns/' + f} for t, f in ns.items()]
c['process']['args'] = ['sh', '-c', 'for n in net uts ipc; do readlink /proc/self/ns/\$n; done']"
	ln -sf busybox "$T/b/rootfs/bin/readlink"
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_eq "$crun_out" "$(for n in net uts ipc; do readlink /proc/$holder/ns/$n; done)" "crun: the joined namespaces"
	expect_eq "$isd_out" "$crun_out" "the joined namespaces"
}

# /dev/mqueue: both mount the container's message queues with the same
# flags.
test_mqueue() {
	diff_bundle 'c["process"]["args"] = ["sh", "-c", "grep \" /dev/mqueue \" /proc/self/mountinfo | cut -d\" \" -f5,6,9"]'
	ln -sf busybox "$T/b/rootfs/bin/cut"
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_contains "$crun_out" "/dev/mqueue" "crun: /dev/mqueue"
	expect_eq "$isd_out" "$crun_out" "/dev/mqueue"
}

# The config's mounts appear in /proc/self/mountinfo in the config's
# order with the config's source names (the OCI "mounts in the listed
# order"; the runtime-tools suite checks both): the standard ones isd
# makes itself too.  /sys/fs/cgroup is left out: on this hybrid host crun
# makes a v1 tree there, isd a cgroup2 mount or none (isd-runtime(8)).
test_mount_order_sources() {
	diff_bundle 'c["process"]["args"] = ["cat", "/proc/self/mountinfo"]
open(os.path.join(os.path.dirname(sys.argv[1]), "dsts"), "w").write(
  "".join(m["destination"] + "\n" for m in c["mounts"] if m["destination"] != "/sys/fs/cgroup"))'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	# "destination type source" of the config's mounts, in mountinfo's order
	order() {
		printf '%s\n' "$1" | awk -v dsts="$T/b/dsts" 'BEGIN { while ((getline l < dsts) > 0) want[l] = 1 }
			{ for (i = 7; $i != "-"; i++); if ($5 in want && !seen[$5]++) print $5, $(i + 1), $(i + 2) }'
	}
	expect_contains "$(order "$crun_out")" "/proc proc proc" "crun: /proc by its config's source"
	expect_eq "$(order "$isd_out")" "$(order "$crun_out")" "the config's mounts, their order and sources"
}

# The order holds for binds between other mounts, and for a mount listed
# before a shallower one (the runtime-tools suite's mounts test binds
# /etc so): isd cloned every bind's source before it made the root, and
# mountinfo (Linux 6.8 on) lists mounts in the order they were made, so
# the binds came first, ahead even of "/"; and isd exec's parents-first
# order was applied to OCI configs too.
test_mount_order_propagation() {
	mkdir -p "$T/hsrc" && echo data >"$T/hsrc/f" && chmod -R a+rwX "$T/hsrc" || fail "cannot make the host dir"
	diff_bundle 'import os
t = os.environ["T"]
c["process"]["args"] = ["cat", "/proc/self/mountinfo"]
for i, o in enumerate(["rprivate", "shared", "rslave", "private", "slave"]):
    c["mounts"].append({"destination": "/mnt/t%d" % i, "type": "tmpfs", "source": "tmpfs", "options": ["size=1k"]})
    c["mounts"].append({"destination": "/mnt/b%d" % i, "type": "bind", "source": t + "/hsrc", "options": ["rbind", o]})
    c["mounts"].append({"destination": "/mnt/p%d" % i, "type": "bind", "source": t + "/hsrc", "options": ["rbind", "ro"]})
# deeper before shallower: listed order, not parents first
c["mounts"].append({"destination": "/mnt/deep/er/t", "type": "tmpfs", "source": "tmpfs", "options": ["size=1k"]})
c["mounts"].append({"destination": "/m1", "type": "tmpfs", "source": "tmpfs", "options": ["size=1k"]})
open(os.path.join(os.path.dirname(sys.argv[1]), "dsts"), "w").write(
  "/\n" + "".join(m["destination"] + "\n" for m in c["mounts"] if m["destination"] != "/sys/fs/cgroup"))'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	# the config's mounts (and the root), in mountinfo's order
	order() {
		printf '%s\n' "$1" | awk -v dsts="$T/b/dsts" 'BEGIN { while ((getline l < dsts) > 0) want[l] = 1 }
			{ if ($5 in want && !seen[$5]++) print $5 }'
	}
	want=$(grep -v -e '^/dev/mqueue$' "$T/b/dsts")
	expect_contains "$(order "$crun_out")" "/mnt/b4" "crun: the binds (stderr: $(cat "$T/crun.err"))"
	# crun 1.8 rootless lists its binds first (it clones them before the
	# root too): the config's order is the reference, crun's as root
	host_root && expect_eq "$(order "$crun_out" | grep -v '^/dev/mqueue$')" "$want" "crun: the config's order"
	expect_eq "$(order "$isd_out" | grep -v '^/dev/mqueue$')" "$want" "isd-runtime: the mounts in the config's order"
}

# process.oomScoreAdj: the payload's score is the config's.  Raised only,
# which needs no privilege (lowering below the caller's needs
# CAP_SYS_RESOURCE: isd-runtime then warns and leaves it).
test_oom_score_adj() {
	diff_bundle 'c["process"]["oomScoreAdj"] = 500; c["process"]["args"] = ["cat", "/proc/self/oom_score_adj"]'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_eq "$crun_out" 500 "crun: process.oomScoreAdj"
	expect_eq "$isd_out" "$crun_out" "process.oomScoreAdj"
}

# linux.sysctl: the container's own network and IPC namespaces get the
# config's values, as crun sets them.
test_sysctl() {
	diff_bundle 'c["linux"]["sysctl"] = {"net.ipv4.ip_forward": "1", "kernel/shmmni": "2048"}
if not any(n["type"] == "network" for n in c["linux"]["namespaces"]): c["linux"]["namespaces"].append({"type": "network"})
c["process"]["args"] = ["cat", "/proc/sys/net/ipv4/ip_forward", "/proc/sys/kernel/shmmni"]'
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_eq "$crun_out" "$(printf '1\n2048')" "crun: linux.sysctl"
	expect_eq "$isd_out" "$crun_out" "linux.sysctl"
}

# process.user.additionalGids (issue 17): set in the container's user
# namespace as crun sets them.  As root each is mapped to an id of root's
# subordinate range (/etc/subgid); the payload sees the config's numbers.
# Without a range root has no unused id to give them: refused by name,
# not left out.
test_additional_gids() {
	host_root || skip "a second group needs a map of more than the caller's id (root only here)"
	diff_bundle 'c["process"]["user"] = {"uid": 1234, "gid": 2345, "additionalGids": [5, 2345, 7]}
c["process"]["args"] = ["/probe", "status"]'
	if ! grep -qE '^(root|0):[0-9]+:[0-9]+' /etc/subgid 2>/dev/null; then
		"$ISD_RUNTIME" --root "$T/isd-state" run --bundle "$T/b" d1 >"$T/isd.out" 2>"$T/isd.err" </dev/null
		expect_eq "$?" 1 "without a range of root's in /etc/subgid, isd-runtime refuses the groups"
		expect_contains "$(cat "$T/isd.err")" "additionalGids" "the refusal names the field (stderr: $(cat "$T/isd.err"))"
		expect_eq "$(cat "$T/isd.out")" "" "nothing ran"
		return 0
	fi
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_contains "$crun_out" "Groups:	5 7 2345" "crun: process.user.additionalGids"
	expect_eq "$(lines "$isd_out" 'Uid|Gid|Groups')" "$(lines "$crun_out" 'Uid|Gid|Groups')" "additionalGids"
}

# Rootless with isd's map of the caller's one id (setgroups denied, no
# other gid exists there): another group is refused by name, not left
# out as crun leaves it; the primary group alone needs no setgroups.
# With linux.gidMappings of the caller's /etc/subgid range (newgidmap
# allows setgroups then) the groups are set.  isd-runtime only: crun runs
# rootless in `unshare -r` here, which maps one id.
test_additional_gids_rootless() {
	! host_root || skip "the caller's one-id map is the rootless case"
	diff_bundle 'c["process"]["user"] = {"uid": 0, "gid": 0, "additionalGids": [5]}
c["process"]["args"] = ["/probe", "status"]'
	"$ISD_RUNTIME" --root "$T/isd-state" run --bundle "$T/b" d1 >"$T/isd.out" 2>"$T/isd.err" </dev/null
	expect_eq "$?" 1 "isd-runtime refuses a group it cannot set"
	expect_contains "$(cat "$T/isd.err")" "additionalGids" "the refusal names the field (stderr: $(cat "$T/isd.err"))"
	expect_eq "$(cat "$T/isd.out")" "" "nothing ran"
	sub=$(awk -F: -v u="$(id -un)" -v n="$(id -u)" '($1 == u || $1 == n) && $3 >= 100 { print $2; exit }' /etc/subgid)
	subu=$(awk -F: -v u="$(id -un)" -v n="$(id -u)" '($1 == u || $1 == n) && $3 >= 100 { print $2; exit }' /etc/subuid)
	python3 - "$T/b/config.json" "$(id -u)" "$(id -g)" "$subu" "$sub" <<'PY' || fail "cannot rewrite the config"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["user"]["additionalGids"] = [0]
json.dump(c, open(sys.argv[1], "w"))
if sys.argv[4] and sys.argv[5]:
    c["process"]["user"]["additionalGids"] = [5, 0, 7]
    c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": int(sys.argv[2]), "size": 1},
                                 {"containerID": 1, "hostID": int(sys.argv[4]), "size": 99}]
    c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": int(sys.argv[3]), "size": 1},
                                 {"containerID": 1, "hostID": int(sys.argv[5]), "size": 99}]
    json.dump(c, open(sys.argv[1] + ".ranges", "w"))
PY
	"$ISD_RUNTIME" --root "$T/isd-state" run --bundle "$T/b" d2 >"$T/isd.out" 2>"$T/isd.err" </dev/null
	expect_eq "$?" 0 "the primary group alone runs (stderr: $(cat "$T/isd.err"))"
	[ -n "$sub" ] && [ -n "$subu" ] && command -v newgidmap >/dev/null && initial_userns ||
		skip "no /etc/subgid range or newgidmap here, or nested in another user namespace"
	mv "$T/b/config.json.ranges" "$T/b/config.json"
	"$ISD_RUNTIME" --root "$T/isd-state" run --bundle "$T/b" d3 >"$T/isd.out" 2>"$T/isd.err" </dev/null
	expect_eq "$?" 0 "with a map of the caller's /etc/subgid range (stderr: $(cat "$T/isd.err"))"
	expect_eq "$(lines "$(cat "$T/isd.out")" 'Groups')" "Groups:	0 5 7 " "the groups set in that map"
	# uid 0 of a user namespace of the caller's ranges (runtime-tools'
	# rootless way, rootless podman's), no user namespace in the config:
	# isd-runtime maps each group onto the same id of that namespace, as
	# crun run there sets it
	python3 - "$T/b/config.json" <<'PY' || fail "cannot rewrite the config"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["user"] = {"uid": 10, "gid": 10, "additionalGids": [5, 7]}
for k in ("uidMappings", "gidMappings"):
    c["linux"].pop(k, None)
c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "user"]
json.dump(c, open(sys.argv[1], "w"))
PY
	unshare --map-user=0 --map-group=0 --map-users="$subu,1,1000" --map-groups="$sub,1,1000" -m \
		"$ISD_RUNTIME" --root "$T/isd-state-ns" run --bundle "$T/b" d4 >"$T/isd.out" 2>"$T/isd.err" </dev/null
	expect_eq "$?" 0 "as root of a user namespace of the caller's ranges (stderr: $(cat "$T/isd.err"))"
	expect_eq "$(lines "$(cat "$T/isd.out")" 'Uid|Gid|Groups' | cut -f1,2 | tr '\n' ' ')" "Uid:	10 Gid:	10 Groups:	5 7  " \
		"the groups set in that namespace"
}

# What mountinfo's optional fields say of "/" and the config's mounts,
# the peer group numbers left out, and master:N too (whether a mount is
# a slave depends on the host's propagation, where crun makes everything
# private first and isd a slave of the host's).
PROP_AWK='{ t = ""; for (i = 7; $i != "-"; i++) { f = $i; sub(/:.*/, "", f); if (f != "master") t = t " " f }
  if ($5 == "/" || $5 ~ /^\/mnt\//) print $5 t }'

# linux.rootfsPropagation and mounts[].options propagation (issue 17):
# the tags of each mount, and runtime-tools' own check of the root's
# (a bind of / sees a mount made after it only under shared).
test_propagation() {
	mkdir -p "$T/hsrc" && echo data >"$T/hsrc/f" && chmod -R a+rwX "$T/hsrc" || fail "cannot make the host dir"
	export PROP_AWK
	for prop in shared rshared slave private unbindable; do
		rm -rf "$T/b" "$T/bc" "$T/isd-state" "$T/crun-state"
		diff_bundle 'import os
t = os.environ["T"]
c["root"]["readonly"] = False
c["linux"]["rootfsPropagation"] = "'"$prop"'"
c["linux"].pop("seccomp", None)
c["process"]["capabilities"] = {k: ["CAP_SYS_ADMIN"] for k in ("bounding", "effective", "permitted")}
for i, o in enumerate(["shared", "rshared", "slave", "rslave", "private", "rprivate", "unbindable", "runbindable"]):
    c["mounts"].append({"destination": "/mnt/b%d" % i, "type": "bind", "source": t + "/hsrc",
      "options": ["rbind", o, "mode=755", "size=1k"]})
c["mounts"].append({"destination": "/mnt/t", "type": "tmpfs", "source": "tmpfs", "options": ["shared", "size=1k"]})
import shlex
c["process"]["args"] = ["sh", "-c", "awk " + shlex.quote(os.environ["PROP_AWK"]) + " /proc/self/mountinfo; "
  "mkdir -p /tg /mp /ts && touch /ts/x; mount -o rbind / /tg 2>/dev/null || echo rbind-refused; "
  "mount -o bind /ts /mp && ls /tg/mp 2>&1"]'
		for a in awk touch mount ls; do
			ln -sf busybox "$T/b/rootfs/bin/$a" || fail "cannot link $a"
		done
		both
		expect_eq "$isd_rc" "$crun_rc" "$prop: the exit status (isd-runtime's stderr: $(cat "$T/isd.err"))"
		expect_contains "$crun_out" "/mnt/b0 shared" "crun ($prop): a shared bind (stderr: $(cat "$T/crun.err"))"
		# in any order: mount_order_sources checks the order
		expect_eq "$(printf '%s\n' "$isd_out" | sort)" "$(printf '%s\n' "$crun_out" | sort)" \
			"rootfsPropagation $prop and each bind's propagation"
	done
}

# "bind" (not "rbind") of a directory, as the suite's mounts test binds
# /etc: the source's mount alone, made by both (isd refused it before).
test_bind_nonrecursive() {
	mkdir -p "$T/hsrc/d" && echo data >"$T/hsrc/f" && chmod -R a+rwX "$T/hsrc" || fail "cannot make the host dir"
	diff_bundle 'import os
c["mounts"].append({"destination": "/mnt/nr", "source": os.environ["T"] + "/hsrc", "options": ["bind", "nosuid", "strictatime", "mode=755", "size=1k"]})
c["process"]["args"] = ["sh", "-c", "cat /mnt/nr/f; ls /mnt/nr; grep -c \" /mnt/nr \" /proc/self/mountinfo"]'
	ln -sf busybox "$T/b/rootfs/bin/ls"
	both
	expect_eq "$isd_rc" 0 "isd-runtime's exit status (stderr: $(cat "$T/isd.err"))"
	expect_eq "$crun_out" "$(printf 'data\nd\nf\n1')" "crun: a non-recursive bind"
	expect_eq "$isd_out" "$crun_out" "a non-recursive bind of a directory"
}
