# SPDX-License-Identifier: LGPL-2.1-or-later
# Host device nodes in the sandbox (src/device.c, src/mount-dev.c): --device
# in Docker's syntax, a directory of nodes, and the bad inputs that must stop
# before any sandbox starts.

# stat's "%F %t:%T" of a node inside (major and minor in hex).
node_of() {
	printf 'character special file %s\n' "$1"
}

test_device_read_only_at_another_path() {
	run_isd exec --device /dev/zero:/dev/gpu0:r -- sh -c '
		stat -c "%F %t:%T" /dev/gpu0
		head -c 4 /dev/gpu0 | od -An -tx1 | tr -d " "
		(echo x >/dev/gpu0) 2>/dev/null && echo write-ok || echo write-denied'
	expect_rc 0 "the sandbox with /dev/gpu0"
	expect_eq "$out" "$(node_of 1:5)
00000000
write-denied" "what the payload saw of /dev/gpu0"
}

test_device_read_write() {
	run_isd exec --device /dev/null -- sh -c 'echo x >/dev/null && echo write-ok; stat -c "%F %t:%T" /dev/null'
	expect_rc 0 "--device /dev/null"
	expect_eq "$out" "write-ok
$(node_of 1:3)" "/dev/null read-write"
	run_isd exec --device /dev/zero:/dev/gpu1:rw -- sh -c 'echo x >/dev/gpu1 && echo write-ok'
	expect_rc 0 "--device /dev/zero:/dev/gpu1:rw"
	expect_eq "$out" write-ok "writing /dev/gpu1"
}

test_device_directory() {
	[ -c /dev/net/tun ] || skip "this host has no /dev/net/tun (the tun module)"
	run_isd exec --device /dev/net -- sh -c 'ls /dev/net; stat -c "%F %t:%T" /dev/net/tun'
	expect_rc 0 "--device /dev/net"
	expect_eq "$out" "tun
$(node_of a:c8)" "the directory's nodes"
}

# Landlock's ioctl_dev (ABI 5) refuses ioctl on a device without a rule:
# the bound node has one.
test_device_ioctl() {
	[ -c /dev/net/tun ] || skip "this host has no /dev/net/tun (the tun module)"
	[ -x /usr/bin/python3 ] || skip "python3 (python3) is not installed"
	run_isd exec --device /dev/net/tun:/dev/tun0 -- /usr/bin/python3 -c '
import fcntl, os
fd = os.open("/dev/tun0", os.O_RDWR)
fcntl.ioctl(fd, 0x800454cf, bytes(4))  # TUNGETFEATURES
print("ioctl-ok")'
	expect_rc 0 "ioctl on the bound node"
	expect_eq "$out" ioctl-ok "TUNGETFEATURES"
}

# What the payload can do with /dev/gpu0.
open_gpu0='(head -c 2 /dev/gpu0 | od -An -tx1 | tr -d " ") 2>/dev/null || echo read-denied
	(echo x >/dev/gpu0) 2>/dev/null && echo write-ok || echo write-denied'

# A root caller's payload runs as an unprivileged id (src/rootful.c), in
# none of the node's groups: root may open a 0660 root:video node (a render
# node's mode), so the payload gets it too, as :rwm says and no more.
test_device_root_caller_group_node() {
	host_root || skip "a root caller's devices need isd run as the host's root"
	node=/dev/isd-test-node.$$
	at_teardown "rm -f $node $node.other"
	mknod -m 0660 "$node" c 1 5 && chown 0:44 "$node" || fail "cannot make $node"
	run_isd exec --device "$node:/dev/gpu0" -- sh -c "$open_gpu0"
	expect_rc 0 "--device $node (0660 root:44) as root"
	expect_eq "$out" "0000
write-ok" "the payload's access to the 0660 node"
	run_isd exec --device "$node:/dev/gpu0:r" -- sh -c "$open_gpu0; chmod 0666 /dev/gpu0 2>/dev/null && echo chmod-ok || :"
	expect_rc 0 "--device $node:/dev/gpu0:r as root"
	expect_eq "$out" "0000
write-denied" "the payload's access to the read-only node"
	# another user's 0600 node: root opens it, so does root's payload
	mknod -m 0600 "$node.other" c 1 3 && chown 12345:12345 "$node.other" || fail "cannot make $node.other"
	run_isd exec --device "$node.other:/dev/gpu0" -- sh -c 'echo x >/dev/gpu0 && echo write-ok'
	expect_rc 0 "--device $node.other (0600 12345:12345) as root"
	expect_eq "$out" write-ok "writing another user's node"
	# the nodes on the host are untouched
	expect_eq "$(stat -c %u:%g:%a "$node" "$node.other")" "0:44:660
12345:12345:600" "the host's nodes"
}

# A user's payload keeps the user's own ids and groups, nothing more: a
# node the user cannot open is refused before the sandbox starts, and the
# root caller's own node (above) is not a user's.
test_device_user_gets_only_its_access() {
	[ "$(id -u)" -ne 0 ] || skip "needs isd run as a user, not root"
	node=
	for n in /dev/cpu_dma_latency /dev/hwrng /dev/mem /dev/console /dev/tty0; do
		if [ -c "$n" ] && [ ! -r "$n" ] && [ ! -w "$n" ]; then
			node=$n
			break
		fi
	done
	[ -n "$node" ] || skip "this host has no char device that $(id -un) cannot open"
	for access in rw r; do
		run_isd exec --device "$node:/dev/gpu0:$access" -- sh -c "$open_gpu0"
		expect_rc 125 "--device $node:/dev/gpu0:$access as $(id -un)"
		expect_contains "$err" "you cannot open $node" "the error for $node:$access"
		expect_eq "$out" "" "the payload ran with $node:$access"
	done
}

# One line on stderr, exit 125, and the payload never ran.
expect_refused() {
	mkdir -p "$T/mark"
	run_isd exec -v "$T/mark:/mark" --device "$1" -- touch /mark/started
	expect_rc 125 "--device $1"
	expect_eq "$(printf '%s\n' "$err" | wc -l)" 1 "lines of the error for --device $1"
	expect_contains "$err" "$2" "the error for --device $1"
	[ ! -e "$T/mark/started" ] || fail "--device $1 started the sandbox"
}

test_device_bad_inputs() {
	: >"$T/regular"
	ln -s /etc/passwd "$T/passwd-link"
	expect_refused /dev/isd-no-such-node "No such file or directory"
	expect_refused "$T/regular" "is a regular file, not a char or block device"
	expect_refused "$T/passwd-link" "-> /etc/passwd is a regular file"
	expect_refused /dev/zero:/tmp/zero "is not beneath /dev"
	expect_refused /dev/zero:/dev/pts/0 "isd's own mount"
	expect_refused /dev/zero:/dev/null "isd's own node"
	expect_refused /dev/zero:/dev/gpu0:x "not a set of r, w and m"
	expect_refused /dev/zero:/dev/gpu0:w "leave out r"
	expect_refused /dev/null:/dev/gpu0:r "must stay writable"
	expect_refused /dev/zero:/dev/../etc/x "without '..'"
}

test_device_print_spec() {
	run_isd exec --print-spec --device /dev/zero:/dev/gpu0:r --device /dev/null -- true
	expect_rc 0 "--print-spec"
	flat=$(printf '%s' "$out" | tr -d ' \n')
	expect_contains "$flat" '{"path":"/dev/gpu0","host":"/dev/zero","type":"c","device":"1:5","access":"r","origin":"commandline"}'
	expect_contains "$flat" '"path":"/dev/null","host":"/dev/null","type":"c","device":"1:3","access":"rw","mknod":'
	case "$flat" in
	*'"landlock":{"enabled":true'*)
		expect_contains "$flat" '{"path":"/dev/gpu0","access":"ioctl_dev","why":"--device,read-only"}'
		expect_contains "$flat" '{"path":"/dev/zero","access":"ioctl_dev","why":"device,read-only:thesamenodeasaread-only--device"}' ;;
	esac
}

# A read-only device is only read-only with Landlock: without it isd
# refuses rather than bind it writable.
test_device_read_only_needs_landlock() {
	run_isd exec --security-opt landlock=off --device /dev/zero:/dev/gpu0:r -- true
	expect_rc 125 "a read-only device without Landlock"
	expect_contains "$err" "needs Landlock"
	run_isd exec --security-opt landlock=off --device /dev/zero:/dev/gpu0:rw -- sh -c 'echo x >/dev/gpu0 && echo ok'
	expect_rc 0 "a read-write device without Landlock"
	expect_eq "$out" ok "writing it"
}

# ---- CDI (src/cdi.c) ----

# A spec of vendor example.com/gpu in $T/cdi: device zero is /dev/zero as
# /dev/example-gpu0 with a mount of $T/data and a variable; device full is
# /dev/full as /dev/example-gpu1.
write_example_spec() {
	mkdir -p "$T/cdi" "$T/data"
	echo from-the-spec >"$T/data/f"
	cat >"$T/cdi/example.json" <<JSON
{"cdiVersion": "0.6.0", "kind": "example.com/gpu",
 "devices": [
  {"name": "zero", "containerEdits": {
     "deviceNodes": [{"path": "/dev/example-gpu0", "hostPath": "/dev/zero", "type": "c", "major": 1, "minor": 5}],
     "mounts": [{"hostPath": "$T/data", "containerPath": "/run/example-data", "options": ["ro", "nosuid", "nodev", "bind"]}],
     "env": ["EXAMPLE_GPU=zero"]}},
  {"name": "full", "containerEdits": {
     "deviceNodes": [{"path": "/dev/example-gpu1", "hostPath": "/dev/full", "permissions": "rw"}]}}
 ]}
JSON
	chmod 0644 "$T/cdi/example.json"
}

# What the payload sees: /dev, its mounts' points, its environment (sorted).
seen='ls -A /dev; echo --; cut -d" " -f5 /proc/self/mountinfo | sort; echo --; env | grep -v "^_=" | sort'

# The lines of $2 that $1 lacks.
added() {
	printf '%s\n' "$2" | grep -vxF -e "$(printf '%s\n' "$1")" | tr '\n' ' '
}

test_cdi_device_zero() {
	write_example_spec
	run_isd exec -- sh -c "$seen"
	expect_rc 0 "the sandbox without CDI"
	without=$out
	ISD_CDI_SPEC_DIRS=$T/cdi run_isd exec --device example.com/gpu=zero -- sh -c "$seen"
	expect_rc 0 "--device example.com/gpu=zero"
	expect_eq "$(added "$without" "$out")" "example-gpu0 /dev/example-gpu0 /run/example-data EXAMPLE_GPU=zero " \
		"what the CDI device adds"
	ISD_CDI_SPEC_DIRS=$T/cdi run_isd exec --device example.com/gpu=zero -- sh -c '
		stat -c "%F %t:%T" /dev/example-gpu0; cat /run/example-data/f
		(: >/run/example-data/new) 2>/dev/null && echo mount-writable || echo mount-read-only'
	expect_eq "$out" "$(node_of 1:5)
from-the-spec
mount-read-only" "the node and the mount"
}

test_cdi_all() {
	write_example_spec
	run_isd exec -- sh -c "$seen"
	without=$out
	run_isd exec --cdi-spec-dir "$T/cdi" --device example.com/gpu=all -- sh -c "$seen"
	expect_rc 0 "--device example.com/gpu=all"
	expect_eq "$(added "$without" "$out")" \
		"example-gpu0 example-gpu1 /dev/example-gpu0 /dev/example-gpu1 /run/example-data EXAMPLE_GPU=zero " \
		"what all of the kind adds"
	run_isd exec --cdi-spec-dir "$T/cdi" --device example.com/gpu=nope -- true
	expect_rc 125 "a device the spec does not have"
	expect_contains "$err" "no device nope (they have: zero, full)"
}

test_cdi_gpus_all() {
	mkdir -p "$T/cdi"
	cat >"$T/cdi/nvidia.json" <<'JSON'
{"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu",
 "devices": [{"name": "all", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0", "hostPath": "/dev/zero"}]}}],
 "containerEdits": {"env": ["NVIDIA_VISIBLE_DEVICES=void"], "deviceNodes": [{"path": "/dev/nvidiactl", "hostPath": "/dev/null"}]}}
JSON
	chmod 0644 "$T/cdi/nvidia.json"
	run_isd exec --cdi-spec-dir "$T/cdi" --gpus all -- sh -c \
		'stat -c "%n %F %t:%T" /dev/nvidia0 /dev/nvidiactl; echo "$NVIDIA_VISIBLE_DEVICES"'
	expect_rc 0 "--gpus all"
	expect_eq "$out" "/dev/nvidia0 character special file 1:5
/dev/nvidiactl character special file 1:3
void" "what --gpus all gives"
	run_isd exec --cdi-spec-dir "$T/cdi" --gpus count=2 -- true
	expect_rc 125 "Docker's --gpus count="
	expect_contains "$err" "count="
}

test_cdi_hook_refused() {
	mkdir -p "$T/cdi" "$T/mark"
	cat >"$T/cdi/hooked.json" <<'JSON'
{"cdiVersion": "0.6.0", "kind": "example.com/gpu",
 "devices": [{"name": "zero", "containerEdits": {
   "deviceNodes": [{"path": "/dev/example-gpu0", "hostPath": "/dev/zero"}],
   "hooks": [{"hookName": "createContainer", "path": "/usr/bin/example-ctk", "args": ["example-ctk", "hook"]}]}}]}
JSON
	chmod 0644 "$T/cdi/hooked.json"
	run_isd exec -v "$T/mark:/mark" --cdi-spec-dir "$T/cdi" --device example.com/gpu=zero -- touch /mark/started
	expect_rc 125 "a spec with a hook"
	expect_eq "$(printf '%s\n' "$err" | wc -l)" 1 "lines of the error"
	expect_contains "$err" "hook createContainer /usr/bin/example-ctk"
	[ ! -e "$T/mark/started" ] || fail "a spec with a hook started the sandbox"
}

# ---- the landlock tier: no /dev of isd's, Landlock rules the host's ----

need_landlock_tier() {
	run_isd exec --isolation landlock -- true
	[ "$rc" -eq 0 ] || skip "the landlock tier does not run here: $err"
}

test_device_landlock_tier() {
	need_landlock_tier
	run_isd exec --isolation landlock --device /dev/zero -- sh -c 'head -c 4 /dev/zero | od -An -tx1 | tr -d " "'
	expect_rc 0 "--isolation landlock --device /dev/zero"
	expect_eq "$out" 00000000 "reading /dev/zero"
	run_isd exec --isolation landlock --device /dev/zero:r -- sh -c \
		'head -c 1 /dev/zero | wc -c; (echo x >/dev/zero) 2>/dev/null && echo write-ok || echo write-denied'
	expect_rc 0 "--isolation landlock --device /dev/zero:r"
	expect_eq "$out" "1
write-denied" "a read-only device in the tier"
	run_isd exec --isolation landlock --device /dev/zero:/dev/gpu0 -- true
	expect_rc 125 "another container path in the tier"
	expect_contains "$err" "needs a mount namespace"
}

# A node the tier hides unless granted: open and ioctl with the grant,
# refused without it.
test_device_landlock_tier_hidden_node() {
	need_landlock_tier
	[ -c /dev/net/tun ] || skip "this host has no /dev/net/tun (the tun module)"
	[ -x /usr/bin/python3 ] || skip "python3 (python3) is not installed"
	script='
import fcntl, os
try:
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, 0x800454cf, bytes(4))  # TUNGETFEATURES
    print("ioctl-ok")
except OSError as e:
    print("refused", e.errno)'
	run_isd exec --isolation landlock -- /usr/bin/python3 -c "$script"
	expect_eq "$out" "refused 13" "the tier without --device"
	run_isd exec --isolation landlock --device /dev/net/tun -- /usr/bin/python3 -c "$script"
	expect_rc 0 "--isolation landlock --device /dev/net/tun"
	expect_eq "$out" ioctl-ok "the granted node"
}

# A profile line is an option line: --device from a profile, named as its
# origin, and its errors name the profile's line.
test_device_from_profile() {
	mkdir -p "$T/config/isd/profiles"
	echo "--device /dev/zero:/dev/gpu0:r" >"$T/config/isd/profiles/gpu.conf"
	XDG_CONFIG_HOME=$T/config run_isd exec --profile gpu -- sh -c 'head -c 2 /dev/gpu0 | od -An -tx1 | tr -d " "'
	expect_rc 0 "--profile gpu"
	expect_eq "$out" 0000 "the profile's device"
	XDG_CONFIG_HOME=$T/config run_isd exec --profile gpu --print-spec -- true
	expect_contains "$(printf '%s' "$out" | tr -d ' \n')" "\"origin\":\"profile$T/config/isd/profiles/gpu.conf:1\""
	echo "--device /dev/isd-no-such-node" >>"$T/config/isd/profiles/gpu.conf"
	XDG_CONFIG_HOME=$T/config run_isd exec --profile gpu -- true
	expect_rc 125 "a bad --device in a profile"
	expect_contains "$err" "from profile $T/config/isd/profiles/gpu.conf:2"
}
