# SPDX-License-Identifier: LGPL-2.1-or-later
# The real podman drives isd-runtime (podman --runtime isd-runtime), as
# the host's root and rootless (the build's owner, or isdci): run, exit
# statuses, a terminal (conmon's console socket), exec, kill, stop, rm,
# and isd's annotations as a payload sees them; containerd's runc shim
# with isd-runtime as its runc.  The rootfs is busybox and the static
# probe; nothing comes from a registry.
#
# This host's quirks, handled here: a hybrid cgroup layout whose cgroup2
# hierarchy lacks the pids controller (podman's default --pids-limit
# needs it: -1 there); no CAP_SYS_RESOURCE for the host's root, so the
# container's hard limits are the caller's (--ulimit), podman's own
# RLIMIT_NPROC being at most 32768.

: "${ISD_RUNTIME:?ISD_RUNTIME must point at isd-runtime}"

# rt_setup rootful|rootless: $ENGINE_USER, $R (the rootfs), $RUN_OPTS,
# $STATE (isd-runtime's state directory as podman runs it), or skips.
rt_setup() {
	command -v podman >/dev/null || skip "podman (podman) is not installed"
	command -v conmon >/dev/null || skip "conmon (conmon) is not installed"
	[ -x /bin/busybox ] || skip "busybox (busybox-static) is not installed"
	MODE=$1
	if [ "$MODE" = rootful ]; then
		host_root || skip "rootful podman needs the host's root: run the engine suite as root"
		ENGINE_USER=root
		STATE=/run/isd-runtime
	elif [ "$(id -u)" -eq 0 ]; then
		host_root || skip "rootless podman from root needs the host's root (runuser)"
		ENGINE_USER=${ISD_ENGINE_USER:-$(stat -c %U "$ISD_RUNTIME")}
		[ "$ENGINE_USER" = root ] && ENGINE_USER=isdci
		id "$ENGINE_USER" >/dev/null 2>&1 || skip "no user $ENGINE_USER for rootless podman (ISD_ENGINE_USER names one)"
		grep -q "^$ENGINE_USER:" /etc/subuid || skip "no /etc/subuid range for $ENGINE_USER (rootless podman needs one)"
		STATE=$T/podman-run/isd-runtime
	else
		ENGINE_USER=$(id -un)
		grep -q "^$ENGINE_USER:" /etc/subuid || skip "no /etc/subuid range for $ENGINE_USER (rootless podman needs one)"
		STATE=$T/podman-run/isd-runtime
	fi
	chmod 0755 "$T"
	R=$T/root
	mkdir -p "$R/bin" "$R/proc" "$R/sys" "$R/dev" "$R/tmp" "$R/etc" "$T/podman-home" "$T/podman-run" ||
		fail "cannot make the rootfs"
	cp /bin/busybox "$R/bin/" && cp "$PROBE" "$R/probe" || fail "cannot fill the rootfs"
	for a in sh cat echo grep id kill ls sleep touch unshare test tty; do
		ln -sf busybox "$R/bin/$a"
	done
	chmod 0700 "$T/podman-run"
	if [ "$ENGINE_USER" != root ] && [ "$(id -u)" -eq 0 ]; then
		chown -R "$ENGINE_USER" "$R" "$T/podman-home" "$T/podman-run"
	fi
	# What podman made as subordinate ids, and whatever a failure left.
	# rootless podman's pause process (the keeper of its user namespace)
	# outlives every podman command: ended last, with $T
	at_teardown 'p=$(cat "$T/podman-run/libpod/pause.pid" 2>/dev/null) && kill "$p" 2>/dev/null'
	at_teardown 'pm rm -a -f -t 0 >/dev/null 2>&1; [ "$ENGINE_USER" = root ] || pm unshare rm -rf "$T/podman-home" 2>/dev/null'
	RUN_OPTS="--network=none"
	mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
	grep -qw pids "$mnt/cgroup.controllers" 2>/dev/null || RUN_OPTS="$RUN_OPTS --pids-limit=-1"
	nofile=$(awk '/^Max open files/ {print $5}' /proc/self/limits)
	[ "$nofile" = unlimited ] && nofile=1048576
	nproc=$(awk '/^Max processes/ {print $4}' /proc/self/limits)
	{ [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
	RUN_OPTS="$RUN_OPTS --ulimit nofile=$nofile:$nofile --ulimit nproc=$nproc:$nproc"
}

# pm ARGS...: podman as $ENGINE_USER with isd-runtime, all its state in
# $T; stdout in $out, stderr in $err, status in $rc.
pm() {
	set -- --root "$T/podman-home/storage" --runroot "$T/podman-run/storage" --tmpdir "$T/podman-run/libpod" \
		--cgroup-manager=cgroupfs --runtime "$ISD_RUNTIME" "$@"
	if [ "$ENGINE_USER" = root ] || [ "$(id -u)" -ne 0 ]; then
		set -- env HOME="$T/podman-home" XDG_RUNTIME_DIR="$T/podman-run" podman "$@"
	else
		set -- runuser -u "$ENGINE_USER" -- env -i HOME="$T/podman-home" XDG_RUNTIME_DIR="$T/podman-run" \
			PATH=/usr/sbin:/usr/bin:/sbin:/bin podman "$@"
	fi
	if [ -n "${PM_INPUT:-}" ]; then
		# podman on a terminal of script(1)'s, the input typed after
		# the shell's prompt (script reads ahead of it otherwise)
		(sleep 2; cat "$PM_INPUT") | script -qec "$(quote_all "$@")" /dev/null >"$T/out" 2>"$T/err"
	else
		"$@" >"$T/out" 2>"$T/err" </dev/null
	fi
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	return 0
}

# The arguments as one shell command line, for script -c.
quote_all() {
	for a; do printf "'%s' " "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")"; done
}

# The value of KEY in $out's "KEY:<tab>VALUE" or "KEY=VALUE" lines.
val() {
	printf '%s\n' "$out" | tr -d '\r' | sed -n "s/^$1[:=][[:space:]]*//p" | head -n1
}

# Nothing of container $1 is left: isd-runtime's state, its cgroup, a
# mount, a process.
expect_gone() {
	[ ! -e "$STATE/$1" ] || fail "isd-runtime's state of $1 is left in $STATE"
	left=$(find /sys/fs/cgroup -maxdepth 4 -name "libpod-$1*" 2>/dev/null | head -n3)
	expect_eq "$left" "" "cgroups of the container left"
	left=$(grep -c "$1" /proc/self/mountinfo)
	expect_eq "$left" 0 "mounts of the container left"
	# conmon may still be on its way out
	wait_until 10 no_process_of "$1"
	left=$(pgrep -f "$1" | head -n3 | tr '\n' ,)
	expect_eq "$left" "" "processes of the container left: $(ps -o pid,args -p "${left%,}" 2>/dev/null)"
}

no_process_of() {
	! pgrep -f "$1" >/dev/null
}

# run --rm: podman's confinement and isd's, ids, mounts, the exit status;
# nothing left after.
cell_run() {
	rt_setup "$1"
	# shellcheck disable=SC2086
	pm run --rm --cidfile "$T/podman-home/cid" $RUN_OPTS --rootfs "$R" sh -c '
		grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status; echo "uid=$(id -u)"
		grep -c " /proc proc " /proc/self/mounts | sed "s/^/proc-mounts=/"
		grep -q " /sys/fs/cgroup .*rw" /proc/self/mounts && echo cgroup-writable
		ls /run/.containerenv >/dev/null 2>&1 && echo containerenv=yes
		exit 3'
	expect_eq "$rc" 3 "the payload's exit status through podman ($err)"
	# podman's default capabilities and no_new_privs off, as runc and crun
	# grant them (issue 17)
	expect_eq "$(val CapEff)" 00000000800405fb "CapEff: podman's default set"
	expect_eq "$(val NoNewPrivs)" 0 "NoNewPrivs: podman's noNewPrivileges false"
	expect_eq "$(val Seccomp)" 2 "Seccomp: podman's profile"
	expect_eq "$(val uid)" 0 "the container's root"
	expect_eq "$(val proc-mounts)" 1 "one /proc"
	expect_not_contains "$out" cgroup-writable "/sys/fs/cgroup read-only"
	expect_eq "$(val containerenv)" yes "podman's /run/.containerenv"
	expect_gone "$(cat "$T/podman-home/cid")"
	rm -f "$T/podman-home/cid"
	# the operator's choice per pod: isd exec's rule
	pm run --rm --annotation run.oci.isd.capabilities=none $RUN_OPTS --rootfs "$R" \
		sh -c 'grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status'
	expect_eq "$rc" 0 "run.oci.isd.capabilities=none ($err)"
	expect_eq "$(val CapEff)" 0000000000000000 "run.oci.isd.capabilities=none: CapEff"
	expect_eq "$(val CapBnd)" 0000000000000000 "run.oci.isd.capabilities=none: CapBnd"
	expect_eq "$(val NoNewPrivs)" 1 "run.oci.isd.capabilities=none: NoNewPrivs"
	pm run --rm --cidfile "$T/podman-home/cid" $RUN_OPTS --user 1000:1000 --rootfs "$R" sh -c 'echo "uid=$(id -u):$(id -g)"; kill -9 $$'
	expect_eq "$rc" 137 "a payload killed by SIGKILL: 128+9 ($err)"
	expect_eq "$(val uid)" 1000:1000 "--user 1000:1000"
	expect_gone "$(cat "$T/podman-home/cid")"
	pm run --rm $RUN_OPTS --rootfs "$R" /no-such-command
	expect_eq "$rc" 127 "a missing command: podman's 127 ($err)"
	# podman's default pids limit where the cgroup2 hierarchy has no pids
	# controller: the runtime's refusal, not a "missing command".  podman
	# asks for the limit only where it sees a pids controller (here the
	# hybrid layout's v1 one, which not every machine mounts).
	pm info --format '{{.Host.CgroupControllers}}'
	podman_pids=$(printf '%s' "$out" | grep -ow pids)
	case $RUN_OPTS in *--pids-limit=-1*)
		if [ "$MODE" = rootful ] && [ -n "$podman_pids" ]; then
			pm run --rm $(printf '%s' "$RUN_OPTS" | sed 's/--pids-limit=-1//') --rootfs "$R" sh -c true
			expect_eq "$rc" 126 "the pids limit refused by the runtime ($err)"
			expect_contains "$err" "linux.resources need +pids" "why"
		fi ;;
	esac
	# --read-only: podman's binds of /etc/hosts and the like are noexec
	pm run --rm --read-only $RUN_OPTS --rootfs "$R" sh -c 'touch /x 2>/dev/null || echo root=ro; touch /tmp/x && echo tmp=rw'
	expect_eq "$rc" 0 "run --read-only ($err)"
	expect_eq "$(val root)" ro "--read-only: the root"
	expect_eq "$(val tmp)" rw "--read-only: podman's tmpfs at /tmp"
	# --device: podman's fileMode holds the node's type bits (020666)
	if [ -c /dev/net/tun ]; then
		pm run --rm --device /dev/net/tun $RUN_OPTS --rootfs "$R" sh -c 'test -c /dev/net/tun && echo tun=yes'
		expect_eq "$rc" 0 "run --device /dev/net/tun ($err)"
		expect_eq "$(val tun)" yes "the device in the container"
	fi
}

# -t without input (the console socket, conmon's side of the terminal),
# then -it with a terminal of script(1)'s and input through it.
cell_tty() {
	rt_setup "$1"
	command -v script >/dev/null || skip "script (bsdutils) is not installed"
	pm run --rm -t $RUN_OPTS --rootfs "$R" sh -c 'test -t 0 && test -t 1 && echo on-a-terminal; tty'
	expect_eq "$rc" 0 "run -t ($err)"
	expect_contains "$out" on-a-terminal "run -t: the payload's standard input and output"
	expect_contains "$out" /dev/pts/ "run -t: a pseudo-terminal"
	printf 'echo "typed-$((6 * 7))"\nexit 4\n' >"$T/input"
	PM_INPUT=$T/input pm run --rm -it $RUN_OPTS --rootfs "$R" sh
	expect_eq "$rc" 4 "run -it: the status of the shell's exit 4 ($err)"
	expect_contains "$out" typed-42 "run -it: what was typed ran"
}

# exec: status, output, the container's files, a terminal, another user,
# the same confinement.
cell_exec() {
	rt_setup "$1"
	pm run -d --name x1 $RUN_OPTS --rootfs "$R" sh -c 'echo mark >/tmp/mark; exec sleep 600'
	expect_eq "$rc" 0 "run -d ($err)"
	wait_until 10 test -e "$R/tmp/mark" || fail "the container did not start: $(pm logs x1; echo "$out $err")"
	pm exec x1 sh -c 'cat /tmp/mark; grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status; exit 5'
	expect_eq "$rc" 5 "exec: the exit status ($err)"
	expect_contains "$out" mark "exec: the container's /tmp"
	expect_eq "$(val CapEff)" 00000000800405fb "exec: CapEff, podman's default set as the container's (its process file)"
	expect_eq "$(val Seccomp)" 2 "exec: Seccomp"
	pm exec -t x1 sh -c 'test -t 1 && echo exec-on-a-terminal'
	expect_eq "$rc" 0 "exec -t ($err)"
	expect_contains "$out" exec-on-a-terminal "exec -t: a terminal"
	# isd maps the container's own user only (no linux.uidMappings from
	# podman): another is refused by name
	pm exec --user 1000 x1 id -u
	expect_eq "$rc" 255 "exec --user 1000: the runtime refuses (podman's status for a failed exec)"
	expect_contains "$err" "not an id of the container's user namespace" "exec --user 1000: why"
	pm exec x1 /no-such-command
	expect_eq "$rc" 127 "exec of a missing command ($err)"
	pm inspect --format '{{.Id}}' x1
	cid=$out
	pm rm -f -t 0 x1
	expect_eq "$rc" 0 "rm -f ($err)"
	expect_gone "$cid"
}

# kill: the payload dies of the signal; stop: TERM reaches the payload,
# which exits on its own, well before stop's timeout.
cell_kill_stop() {
	rt_setup "$1"
	pm run -d --name k1 $RUN_OPTS --rootfs "$R" sleep 600
	expect_eq "$rc" 0 "run -d ($err)"
	pm kill k1
	expect_eq "$rc" 0 "kill ($err)"
	pm wait k1
	expect_eq "$out" 137 "kill: the exit code, KILL's"
	pm run -d --name k2 $RUN_OPTS --rootfs "$R" sh -c 'trap "echo got-term; exit 7" TERM; while :; do sleep 0.1; done'
	expect_eq "$rc" 0 "run -d ($err)"
	sleep 1
	start=$(date +%s)
	pm stop -t 20 k2
	expect_eq "$rc" 0 "stop ($err)"
	[ $(($(date +%s) - start)) -lt 15 ] || fail "stop waited for its timeout: TERM did not reach the payload"
	pm inspect --format '{{.State.ExitCode}}' k2
	expect_eq "$out" 7 "stop: the payload's own exit status after TERM"
	pm logs k2
	expect_contains "$out" got-term "the payload's TERM handler ran"
	if [ "$MODE" = rootful ]; then
		# podman pause, unpause: isd-runtime pause, resume
		pm run -d --name k3 $RUN_OPTS --rootfs "$R" sh -c 'while :; do echo tick; sleep 0.1; done'
		pm pause k3
		expect_eq "$rc" 0 "pause ($err)"
		pm inspect --format '{{.State.Status}}' k3
		expect_eq "$out" paused "the state after pause"
		pm unpause k3
		expect_eq "$rc" 0 "unpause ($err)"
		pm inspect --format '{{.State.Status}}' k3
		expect_eq "$out" running "the state after unpause"
		pm pause k3
		pm rm -f -t 0 k3
		expect_eq "$rc" 0 "rm -f of a paused container ($err)"
	fi
	pm kill --signal HUP k2
	[ "$rc" -ne 0 ] || fail "kill of a stopped container succeeded"
	pm inspect --format '{{.Id}}' k2
	cid=$out
	pm rm k1 k2
	expect_eq "$rc" 0 "rm ($err)"
	expect_gone "$cid"
}

# isd's annotations as the payload sees them: run.oci.isd.seccomp=agent
# stacks isd's agent filter on podman's (no new user namespace, no
# TIOCSTI; exec too); a misspelt name and netless are refused by name.
cell_annotations() {
	rt_setup "$1"
	probe='grep ^Seccomp_filters: /proc/self/status; unshare -U true 2>/dev/null && echo unshare=allowed || echo unshare=refused; echo "tiocsti=$(/probe tiocsti)"'
	pm run --rm -t $RUN_OPTS --rootfs "$R" sh -c "$probe"
	expect_eq "$rc" 0 "without annotations ($err)"
	expect_eq "$(val Seccomp_filters)" 1 "without annotations: podman's filter only"
	expect_eq "$(val unshare)" allowed "without annotations: podman's profile lets a user namespace be made"
	pm run --rm -t --annotation run.oci.isd.seccomp=agent $RUN_OPTS --rootfs "$R" sh -c "$probe"
	expect_eq "$rc" 0 "run.oci.isd.seccomp=agent ($err)"
	expect_eq "$(val Seccomp_filters)" 2 "agent: isd's filter and podman's"
	expect_eq "$(val unshare)" refused "agent: no new user namespace"
	expect_eq "$(val tiocsti)" EPERM "agent: no TIOCSTI on the terminal"
	pm run -d --name a1 --annotation run.oci.isd.seccomp=agent $RUN_OPTS --rootfs "$R" sleep 600
	expect_eq "$rc" 0 "run -d with the annotation ($err)"
	pm exec -t a1 sh -c "$probe"
	expect_eq "$(val Seccomp_filters)" 2 "exec: both filters"
	expect_eq "$(val unshare)" refused "exec: no new user namespace"
	expect_eq "$(val tiocsti)" EPERM "exec: no TIOCSTI"
	pm rm -f -t 0 a1
	pm run --rm --annotation run.oci.isd.secomp=agent $RUN_OPTS --rootfs "$R" true
	expect_eq "$rc" 126 "a misspelt isd annotation: the runtime refuses"
	expect_contains "$err" "run.oci.isd.secomp: not an isd annotation" "the misspelt name, named"
	# netless: the test's loopback server through isd's relay, nothing else
	mkdir -p "$T/www"
	echo hello-netless >"$T/www/hello.txt"
	python3 "$ISD_TEST_SRCDIR/tests/network/serve.py" http "$T/www" "$T/http.port" &
	echo $! >"$T/srv.pid"
	at_teardown 'kill $(cat "$T/srv.pid") 2>/dev/null'
	wait_until 10 test -s "$T/http.port" || fail "the test's server did not start"
	port=$(cat "$T/http.port")
	pm run --rm --annotation run.oci.isd.network=netless --annotation "run.oci.isd.allow=127.0.0.1:$port" $RUN_OPTS \
		--rootfs "$R" sh -c "wget -q -O- http://127.0.0.1:$port/hello.txt; echo allowed=\$?; wget -q -O- http://127.0.0.1:$((port + 1))/ 2>/dev/null; echo other=\$?"
	expect_eq "$rc" 0 "run.oci.isd.network=netless ($err)"
	expect_contains "$out" hello-netless "netless: the allowed server through the relay"
	expect_eq "$(val allowed) $(val other)" "0 1" "netless: the allowed port only"
}

# Namespaces podman hands over by path: another container's network, IPC
# and UTS namespaces (--network container:), and rootless, the network
# namespace podman made for slirp4netns.
cell_join() {
	rt_setup "$1"
	for a in readlink hostname ip; do ln -sf busybox "$R/bin/$a"; done
	ns='for n in net ipc uts; do echo "$n=$(readlink /proc/self/ns/$n)"; done; echo "host=$(hostname)"'
	pm run -d --name j1 --hostname j1-host $RUN_OPTS --rootfs "$R" sleep 600
	expect_eq "$rc" 0 "run -d ($err)"
	pm exec j1 sh -c "$ns"
	first=$out
	RUN_OPTS_J=$(printf '%s' "$RUN_OPTS" | sed 's/--network=none//')
	# shellcheck disable=SC2086
	pm run --rm --network container:j1 --ipc container:j1 --uts container:j1 $RUN_OPTS_J --rootfs "$R" sh -c "$ns"
	expect_eq "$rc" 0 "run in j1's namespaces ($err)"
	expect_eq "$out" "$first" "the same network, IPC and UTS namespaces, the same host name"
	pm rm -f -t 0 j1
	[ "$MODE" = rootless ] || return 0
	command -v slirp4netns >/dev/null || skip "slirp4netns (slirp4netns) is not installed"
	# shellcheck disable=SC2086
	pm run --rm --network slirp4netns $RUN_OPTS_J --rootfs "$R" sh -c 'ip -o addr show tap0 | grep -c "inet "'
	expect_eq "$rc" 0 "run in slirp4netns's namespace ($err)"
	expect_eq "$out" 1 "slirp4netns's tap0, configured by podman, in the container"
}

# An overlay root, as an image's is.  Without maps of podman's, the
# container's root is an unprivileged id reaching root's files through an
# idmapped mount, which overlayfs refuses: the root is not writable
# (isd-runtime(8)).  With --uidmap (or --userns=auto) the payload's ids
# are podman's range: the root is writable, exec --user works.
cell_overlay_root() {
	rt_setup rootful
	pm run --rm $RUN_OPTS --rootfs "$R:O" sh -c 'grep -c "^overlay / " /proc/self/mounts | sed "s/^/overlay-root=/"
		touch /written 2>/dev/null && echo written=yes || echo written=no'
	expect_eq "$rc" 0 "run on an overlay root ($err)"
	expect_eq "$(val overlay-root)" 1 "podman's overlay is the root"
	expect_eq "$(val written)" no "no maps: the overlay root is not the container's root's (isd-runtime(8))"
	pm run -d --name o1 --uidmap 0:4000000:65536 --gidmap 0:4000000:65536 $RUN_OPTS --rootfs "$R:O" sleep 600
	expect_eq "$rc" 0 "run -d --uidmap ($err)"
	pm exec o1 sh -c 'touch /written && echo written=yes; cat /proc/self/uid_map'
	expect_eq "$(val written)" yes "--uidmap: the container's root writes its overlay root"
	expect_contains "$out" "4000000" "--uidmap: podman's range"
	pm exec --user 1000:1000 o1 id -u
	expect_eq "$out" 1000 "--uidmap: exec --user 1000 ($err)"
	pm rm -f -t 0 o1
	expect_eq "$rc" 0 "rm -f ($err)"
}

# containerd's runc shim with isd-runtime as its runc binary (ctr run
# --runc-binary), as root: a private containerd, its own namespace.
cell_containerd() {
	rt_setup rootful
	command -v containerd >/dev/null || skip "containerd (containerd) is not installed"
	command -v containerd-shim-runc-v2 >/dev/null || skip "containerd-shim-runc-v2 (containerd) is not installed"
	CD=$T/containerd
	mkdir -p "$CD" || fail "cannot make $CD"
	cat >"$CD/config.toml" <<EOF2 || fail "cannot write containerd's configuration"
version = 2
root = "$CD/root"
state = "$CD/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CD/sock"
[ttrpc]
  address = "$CD/sock.ttrpc"
EOF2
	containerd --config "$CD/config.toml" >"$CD/log" 2>&1 &
	cd_pid=$!
	at_teardown "kill $cd_pid 2>/dev/null"
	wait_until 20 test -S "$CD/sock" || fail "containerd did not start: $(tail -5 "$CD/log")"
	ns=isdtest$$
	set -- ctr --address "$CD/sock" -n "$ns"
	at_teardown "$* task kill -s KILL d1 2>/dev/null; $* task delete d1 2>/dev/null; $* container rm d1 2>/dev/null"
	"$@" run --rm --seccomp --runtime io.containerd.runc.v2 --runc-binary "$ISD_RUNTIME" --rootfs "$R" c1 \
		sh -c 'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status; echo "uid=$(id -u)"; exit 3' \
		>"$T/out" 2>"$T/err" </dev/null
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_eq "$rc" 3 "ctr run: the payload's exit status ($err)"
	# containerd's default capabilities, as runc grants them (issue 17)
	expect_eq "$(val CapEff)" 00000000a80425fb "CapEff: containerd's default set"
	expect_eq "$(val Seccomp)" 2 "Seccomp: containerd's default profile"
	expect_eq "$(val uid)" 0 "the container's root"
	[ ! -e "/run/containerd/runc/$ns/c1" ] || fail "run --rm left isd-runtime's state of c1"
	# detached: a task the shim watches, killed and deleted
	"$@" run -d --runtime io.containerd.runc.v2 --runc-binary "$ISD_RUNTIME" --rootfs "$R" d1 sleep 600 \
		>"$T/out" 2>"$T/err" </dev/null || fail "ctr run -d: $(cat "$T/err")"
	"$@" task exec --exec-id e1 d1 sh -c 'exit 5' >/dev/null 2>"$T/err" </dev/null
	expect_eq "$?" 5 "ctr task exec: the status ($(cat "$T/err"))"
	"$@" task kill -s TERM d1 2>"$T/err" || fail "ctr task kill: $(cat "$T/err")"
	wait_until 10 sh -c '! "$@" task ls 2>/dev/null | grep -q "^d1 .*RUNNING"' sh "$@" || fail "the task outlived TERM"
	"$@" task delete d1 >/dev/null 2>"$T/err" || fail "ctr task delete: $(cat "$T/err")"
	"$@" container rm d1 2>/dev/null
	[ ! -e "/run/containerd/runc/$ns/d1" ] || fail "task delete left isd-runtime's state of d1"
	expect_eq "$(find /sys/fs/cgroup -maxdepth 4 -path "*/$ns/d1" 2>/dev/null)" "" "the task's cgroup left"
}

test_containerd() { cell_containerd; }
test_rootful_join() { cell_join rootful; }
test_rootless_join() { cell_join rootless; }
test_rootful_overlay_root() { cell_overlay_root; }
test_rootful_run() { cell_run rootful; }
test_rootful_tty() { cell_tty rootful; }
test_rootful_exec() { cell_exec rootful; }
test_rootful_kill_stop() { cell_kill_stop rootful; }
test_rootful_annotations() { cell_annotations rootful; }
test_rootless_run() { cell_run rootless; }
test_rootless_tty() { cell_tty rootless; }
test_rootless_exec() { cell_exec rootless; }
test_rootless_kill_stop() { cell_kill_stop rootless; }
test_rootless_annotations() { cell_annotations rootless; }
