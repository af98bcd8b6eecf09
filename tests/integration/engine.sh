# SPDX-License-Identifier: LGPL-2.1-or-later
# The engine tier: isd inside the real podman, rootful (root runs it) and
# rootless (the test user runs it), under podman's own seccomp profile and
# masked /proc, under Docker's default seccomp profile, and unconfined;
# as the container's root and as uid 1000.  One container per cell runs
# $R/cell.sh, which prints "key=value" lines the test checks.  Nothing
# comes from a registry: the rootfs is made here, this system's /usr and
# the source and build trees bound read-only, a copy of /etc without its
# secrets.  The real agents (claude, omp), where installed, are bound
# read-only at the container home's ~/.local/bin and ~/.local/lib, as npm
# puts them, and each runs one turn in every cell (see agent_binds).
#
# This host's quirks, handled here: crun refuses the hybrid cgroup layout
# (cgroup2 at /sys/fs/cgroup/unified with a controller), so podman runs in
# a private mount namespace without that mount (which needs root); podman
# lowers its own RLIMIT_NPROC and cannot raise the container's limits
# again without CAP_SYS_RESOURCE, hence --ulimit; the rootless one runs
# with --cgroup-manager=cgroupfs, and every cell with --network=none.

DOCKER_PROFILE=$ISD_TEST_SRCDIR/tests/seccomp/docker/default.json
NETDIR=$ISD_TEST_SRCDIR/tests/network

# Whether crun would see the hybrid layout here.
hybrid_cgroups() {
	[ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = tmpfs ] &&
		[ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]
}

# engine_setup rootful|rootless: sets $ENGINE_USER (who runs podman) and
# $RUNAS, or skips.
engine_setup() {
	command -v podman >/dev/null || skip "podman (podman) is not installed"
	command -v crun >/dev/null || skip "crun (crun) is not installed"
	me=$(id -u)
	if [ "$1" = rootful ]; then
		[ "$me" -eq 0 ] || skip "rootful podman needs root: run the engine suite as root"
		ENGINE_USER=root
	elif [ "$me" -eq 0 ]; then
		# The owner of the build (CI's user), else isdci.
		ENGINE_USER=${ISD_ENGINE_USER:-$(stat -c %U "$ISD")}
		[ "$ENGINE_USER" = root ] && ENGINE_USER=isdci
		id "$ENGINE_USER" >/dev/null 2>&1 || skip "no user $ENGINE_USER for rootless podman (ISD_ENGINE_USER names one)"
		grep -q "^$ENGINE_USER:" /etc/subuid || skip "no /etc/subuid range for $ENGINE_USER (rootless podman needs one)"
	else
		hybrid_cgroups && skip "crun refuses this host's hybrid cgroup layout; only root can hide it: run the engine suite as root"
		ENGINE_USER=$(id -un)
	fi
	mkdir -p "$T/podman-home" "$T/podman-run"
	chmod 0755 "$T"
	# rootless podman's pause process (the keeper of its user namespace)
	# outlives every podman command: ended last, after podman unshare
	at_teardown 'p=$(cat "$T/podman-run/libpod/pause.pid" 2>/dev/null) && kill "$p" 2>/dev/null'
	# What the containers' users made is owned by subordinate ids.
	[ "$me" -eq 0 ] || at_teardown 'podman unshare rm -rf "$T/podman-home" "$T/root" 2>/dev/null' 
	[ "$ENGINE_USER" = root ] || [ "$me" -ne 0 ] || chown "$ENGINE_USER" "$T/podman-home" "$T/podman-run"
	chmod 0700 "$T/podman-run"
	make_rootfs
	# (dash's ulimit has no -u)
	nproc=$(awk '/^Max processes/ {print $4}' /proc/self/limits)
	{ [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
	nofile=$(awk '/^Max open files/ {print $5}' /proc/self/limits)
	[ "$nofile" = unlimited ] && nofile=65536
}

# $T/root: this system's /usr (bound), a copy of /etc without secrets,
# the source and build trees (bound), a home at /home/engine.
make_rootfs() {
	R=$T/root
	BUILD=$(cd "$(dirname "$ISD")/.." && pwd)
	mkdir -p "$R" && (
		cd "$R" || exit 1
		for l in bin lib lib32 lib64 sbin; do [ -e "/$l" ] && ln -s "usr/$l" "$l"; done
		mkdir -p usr proc sys dev run var/tmp tmp root home/engine ".$ISD_TEST_SRCDIR" ".$BUILD"
	)
	tar -C / --exclude='etc/shadow*' --exclude='etc/gshadow*' --exclude='etc/ssl/private' --exclude='etc/sudoers*' \
		--exclude='etc/ssh/ssh_host_*' -cf - etc 2>/dev/null | tar -C "$R" -xf - 2>/dev/null
	ln -sfn /proc/mounts "$R/etc/mtab"
	# ~/.local: podman makes the binds' mount points, the container's
	# user its ~/.local/state beside them.
	mkdir -p "$R/home/engine/.local/bin" "$R/home/engine/.local/lib"
	# The user's group too: rootless podman maps no gid 0 of the host,
	# and overlayfs refuses to copy up what has an unmapped id (EOVERFLOW).
	[ "$ENGINE_USER" = root ] || [ "$(id -u)" -ne 0 ] || chown -hR "$ENGINE_USER:" "$R"
	chmod 1777 "$R/tmp" "$R/var/tmp" "$R/home/engine" "$R/home/engine/.local"
}

# The real agents as npm installs them (.ci/run: the CI user's
# ~/agent-home), bound read-only; $AGENT_RUNS names those there.
# ISD_TEST_ENGINE_AGENTS=no leaves them out.
agent_binds() {
	AGENT_BINDS="" AGENT_RUNS=""
	[ "${ISD_TEST_ENGINE_AGENTS:-yes}" = no ] && return 0
	ah=${ISD_TEST_AGENT_HOME:-$(getent passwd "$(stat -c %U "$ISD")" | cut -d: -f6)/agent-home}
	for a in claude omp; do
		[ -x "$ah/.local/bin/$a" ] && AGENT_RUNS="$AGENT_RUNS $a"
	done
	[ -n "$AGENT_RUNS" ] || return 0
	AGENT_BINDS="-v $ah/.local/bin:/home/engine/.local/bin:ro -v $ah/.local/lib:/home/engine/.local/lib:ro"
}

# podman_run ARGS...: podman run as $ENGINE_USER, crun kept from the
# hybrid cgroup mount ($out, $err, $rc).
podman_run() {
	set -- run --rm --network=none --cgroup-manager=cgroupfs --ulimit "nofile=$nofile:$nofile" \
		--ulimit "nproc=$nproc:$nproc" -v /usr:/usr:ro -v "$ISD_TEST_SRCDIR:$ISD_TEST_SRCDIR:ro" \
		-v "$BUILD:$BUILD:ro" $AGENT_BINDS -e HOME=/home/engine -e ISD="$ISD" -e NETDIR="$NETDIR" \
		-e AGENT_RUNS="$AGENT_RUNS" -e FAKE_MODEL="$ISD_TEST_SRCDIR/tests/integration/fake-model.py" -w /home/engine "$@"
	# All of podman's state in $T: a rootful podman's /run/containers
	# (0700) makes skopeo of other users fail on their auth.json there.
	set -- --root "$T/podman-home/storage" --runroot "$T/podman-run/storage" --tmpdir "$T/podman-run/libpod" "$@"
	if [ "$ENGINE_USER" = root ] || [ "$(id -u)" -ne 0 ]; then
		set -- env HOME="$T/podman-home" XDG_RUNTIME_DIR="$T/podman-run" podman "$@"
	else
		set -- runuser -u "$ENGINE_USER" -- env -i HOME="$T/podman-home" XDG_RUNTIME_DIR="$T/podman-run" \
			PATH=/usr/sbin:/usr/bin:/sbin:/bin podman "$@"
	fi
	if [ "$(id -u)" -eq 0 ] && hybrid_cgroups; then
		unshare -m sh -c 'umount /sys/fs/cgroup/unified && exec "$@"' sh "$@" >"$T/out" 2>"$T/err" </dev/null
	else
		"$@" >"$T/out" 2>"$T/err" </dev/null
	fi
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
}

# What every cell runs inside the container, as its user.
write_cell_script() {
	cat >"$R/cell.sh" <<'EOF'
exec 2>&1
echo "home-fs=$(stat -f -c %T "$HOME")"
P=$HOME/proj
mkdir -p "$P" && cd "$P" || exit 1
git init -q && git config user.name t && git config user.email t@t && echo one >f && git add f && git commit -qm one || echo setup-failed

# The default tier, and doctor's verdict on it.
"$ISD" exec --profile agent -- true 2>"$HOME/full.err"
echo "full=$?"
grep -v '^isd: note: ' "$HOME/full.err" | sed 's/^/full-err: /'
"$ISD" doctor >"$HOME/doctor.out" 2>&1
echo "doctor=$?"
grep '^isolation of the agent profile' "$HOME/doctor.out" | sed 's/^/doctor-agent: /'

# auto: sh, git, a compiler and the agent profile's workspace flow; the
# payload has no capabilities, no_new_privs and a filter, and reaches
# neither the container's $HOME nor its /tmp.
"$ISD" exec --isolation auto --profile agent -- sh -c '
	grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status | tr -d "\t" | sed "s/:/=/"
	echo two >>f && echo new >g && git status --short | tr "\n" " " | sed "s/^/git=/"; echo
	if command -v cc >/dev/null; then
		d=${TMPDIR:-/tmp}; printf "int main(void){return 42;}\n" >"$d/t.c" && cc -o "$d/t" "$d/t.c"; "$d/t"; echo "cc=$?"
	else
		echo cc=none
	fi
	touch /home/engine/escape-home /tmp/escape-tmp 2>/dev/null
	echo payload-done' 2>"$HOME/auto.err"
echo "auto=$?"
sed 's/^/auto-err: /' "$HOME/auto.err"
for f in /home/engine/escape-home /tmp/escape-tmp; do [ -e "$f" ] && echo "escaped=$f"; done
"$ISD" diff >"$HOME/diff.out" 2>&1
echo "diff=$?"
grep -c -E '^\+(two|new)$' "$HOME/diff.out" | sed 's/^/diff-lines=/'
"$ISD" apply >/dev/null 2>&1
echo "apply=$?"
echo "applied=$(cat f g 2>/dev/null | tr '\n' ' ')"

# --network none: no way to a listener on the container's loopback;
# netless: the allowed server through the relay, the denied one not.
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
import time; time.sleep(120)' "$HOME/listen.port" &
cd "$HOME" && mkdir -p www && echo hello >www/hello.txt
SERVE_PORT=0 python3 "$NETDIR/serve.py" http "$HOME/www" "$HOME/allowed.port" &
SERVE_PORT=0 python3 "$NETDIR/serve.py" http "$HOME/www" "$HOME/denied.port" &
while [ ! -s "$HOME/listen.port" ] || [ ! -s "$HOME/allowed.port" ] || [ ! -s "$HOME/denied.port" ]; do sleep 0.05; done
l=$(cat "$HOME/listen.port"); a=$(cat "$HOME/allowed.port"); d=$(cat "$HOME/denied.port")
python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2); print("outer-connects=yes")' "$l"
"$ISD" exec --isolation auto --network none -- python3 -c '
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2); print("none-connects=yes")
except OSError as e:
    print("none-connects=no")' "$l" 2>/dev/null
"$ISD" exec --isolation auto --network netless --allow "127.0.0.1:$a" -v "$NETDIR:$NETDIR:ro" -- python3 "$NETDIR/netless-get.py" "$a" "$d" 2>/dev/null |
	sed -e 's/^\([a-z]*\): failed: .*/\1: failed/' -e 's/^\([a-z]*\): /netless-\1=/'
kill $(jobs -p) 2>/dev/null

# The real agents, unchanged, through --isolation auto --profile agent:
# one turn against the fake model on the container's loopback, whose tool
# call writes what the sandbox's /proc says of the caller into a new
# project file: held in the session (isd diff), not in the project.
for agent in $AGENT_RUNS; do
	A=$HOME/agent-$agent
	mkdir -p "$A" && cd "$A" || exit 1
	git init -q && echo original >README && git add README && git -c user.name=t -c user.email=t@t commit -qm one
	python3 "$FAKE_MODEL" 'grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status | tr -d "\t " >created.txt; echo ran' \
		"$HOME/$agent-model.log" >"$HOME/$agent-model.port" 2>"$HOME/$agent-model.err" &
	model=$!
	while [ ! -s "$HOME/$agent-model.port" ] && kill -0 $model 2>/dev/null; do sleep 0.05; done
	port=$(cat "$HOME/$agent-model.port")
	case $agent in
	claude)
		set -- -e ANTHROPIC_BASE_URL="http://127.0.0.1:$port" -e ANTHROPIC_API_KEY=x -e IS_SANDBOX=1 \
			-e CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 -- claude -p --dangerously-skip-permissions "Write the file." ;;
	omp)
		mkdir -p "$HOME/.omp/agent"
		printf 'providers:\n  fake:\n    baseUrl: http://127.0.0.1:%s/v1\n    api: openai-completions\n    apiKey: x\n    models:\n      - id: fake-model\n' \
			"$port" >"$HOME/.omp/agent/models.yml"
		set -- -- omp -p --model fake/fake-model "Write the file." ;;
	esac
	PATH=$HOME/.local/bin:$PATH timeout 240 "$ISD" exec --isolation auto --profile agent --forward "$port:127.0.0.1:$port" "$@" \
		>"$HOME/$agent.out" 2>"$HOME/$agent.err" </dev/null
	echo "$agent=$?"
	sed "s/^/$agent-err: /" "$HOME/$agent.err" | head -n 20
	grep -q '"done": true' "$HOME/$agent-model.log" 2>/dev/null && echo "$agent-turn=done"
	[ -e created.txt ] && echo "$agent-early=yes"
	"$ISD" diff >"$HOME/$agent.diff" 2>&1
	echo "$agent-diff=$?"
	echo "$agent-ran=$(sed -n 's/^+\(NoNewPrivs\|Seccomp\):/\1=/p' "$HOME/$agent.diff" | tr '\n' ' ')"
	kill $model 2>/dev/null
	cd "$HOME" || exit 1
done
echo cell-done
EOF
}

# cell rootful|rootless plain|docker|unconfined UID [overlay]
# overlay: the rootfs through an overlay (--rootfs DIR:O), as an image's
# is, so that the home and isd's state are on overlayfs.
cell() {
	engine_setup "$1"
	agent_binds
	write_cell_script
	case $2 in
	plain) set -- "$1" "$2" "$3" ;;
	docker) set -- "$1" "$2" "$3" --security-opt "seccomp=$DOCKER_PROFILE" ;;
	unconfined) set -- "$1" "$2" "$3" --security-opt seccomp=unconfined --security-opt unmask=ALL ;;
	esac
	mode=$1 profile=$2 uid=$3 rootfs=$R
	shift 3
	[ "${OVERLAY_ROOTFS:-}" = yes ] && rootfs=$R:O
	podman_run --user "$uid" "$@" --rootfs "$rootfs" sh /cell.sh
	[ "$rc" -eq 0 ] || fail "podman run ($mode, $profile, uid $uid): rc $rc: $err $out"
	expect_contains "$out" cell-done "the cell ran to its end: $err"
	[ "${OVERLAY_ROOTFS:-}" = yes ] && expect_eq "$(val home-fs)" overlayfs "the home's file system"
	expect_not_contains "$out" setup-failed "the project's git repository"
	check_cell
}

val() {
	printf '%s\n' "$out" | sed -n "s/^$1=//p" | head -n1
}

check_cell() {
	# The default tier: works, or fails with one line that names the
	# cause, the engine's fix and --isolation auto; doctor agrees.
	full=$(val full)
	full_err=$(printf '%s\n' "$out" | sed -n 's/^full-err: //p')
	if [ "$full" = 0 ]; then
		expect_eq "$(val doctor)" 0 "doctor where the full tier ran: $(printf '%s\n' "$out" | grep doctor-agent)"
	else
		expect_eq "$full" 125 "the full tier's status"
		expect_eq "$(printf '%s\n' "$full_err" | grep -c .)" 1 "one line: $full_err"
		expect_contains "$full_err" "--isolation auto" "the other fix"
		case $full_err in
		*"docker/podman"* | *"Docker or podman"*) ;;
		*) fail "the engine's fix: $full_err" ;;
		esac
		case $full_err in
		*"--security-opt "* | *"--user "*) asserted ;;
		*) fail "the engine's flag: $full_err" ;;
		esac
		# A rootful container's root lacks CAP_SYS_ADMIN: whatever
		# refused first, the fix names running as a user too.
		[ "$mode:$uid" = rootful:0 ] && expect_contains "$full_err" "--user 1000" "the fix for a container's root"
		expect_eq "$(val doctor)" 1 "doctor where the full tier failed"
		expect_not_contains "$(printf '%s\n' "$out" | grep '^doctor-agent: ')" " ok " "doctor's agent row"
	fi
	# auto works, with at most one line: the note naming the tier.
	expect_eq "$(val auto)" 0 "auto: $(printf '%s\n' "$out" | grep auto-err)"
	auto_err=$(printf '%s\n' "$out" | sed -n 's/^auto-err: //p' | grep -v -e 'default limits' -e '^isd: session [0-9a-f]* keeps ' \
		-e "^isd: note: isd's store (")
	# The full tier's copies where the store is on the container's
	# overlay, said in one note; never elsewhere.
	copies=$(printf '%s\n' "$out" | grep -c "^auto-err: isd: note: isd's store (.*) is on overlayfs")
	case $auto_err in
	*"isd takes the full tier"*) [ "${OVERLAY_ROOTFS:-}" = yes ] && expected=1 || expected=0 ;;
	*) expected=0 ;;
	esac
	expect_eq "$copies" "$expected" "the note on the full tier's copies"
	[ "$(printf '%s\n' "$auto_err" | grep -c .)" -le 1 ] || fail "auto says one line at most: $auto_err"
	[ -z "$auto_err" ] || expect_contains "$auto_err" "isd: note: --isolation auto: " "auto's note"
	[ "$full" = 0 ] || expect_contains "$auto_err" "isd takes the" "auto names its tier where full failed"
	expect_eq "$(val CapEff)" 0000000000000000 "CapEff"
	expect_eq "$(val NoNewPrivs)" 1 "NoNewPrivs"
	expect_eq "$(val Seccomp)" 2 "Seccomp"
	expect_contains "$(val git)" "?? g" "git in the workspace"
	cc=$(val cc)
	[ "$cc" = none ] || expect_eq "$cc" 42 "cc"
	expect_eq "$(val escaped)" "" "writes reached the container"
	expect_eq "$(val diff)" 0 "isd diff"
	expect_eq "$(val diff-lines)" 2 "isd diff shows the change"
	expect_eq "$(val apply)" 0 "isd apply"
	expect_eq "$(val applied)" "one two new " "the project after isd apply"
	expect_eq "$(val outer-connects)" yes "the listener is there"
	expect_eq "$(val none-connects)" no "--network none"
	expect_eq "$(val netless-allowed)" hello "netless: allowed"
	expect_eq "$(val netless-denied)" "http 403" "netless: denied by the relay"
	expect_eq "$(val netless-direct)" failed "netless: no direct way"
	for agent in $AGENT_RUNS; do
		check_agent "$agent"
		# For the log: the cell, the agent, the tier.
		tier=$(printf '%s\n' "$note" | sed -n 's/.*isd takes the \(.*\) tier\( without a pid namespace\)\{0,1\}.*/\1\2/p')
		echo "engine: $mode $profile uid $uid: $agent: ok (tier: ${tier:-full})"
	done
}

# The real agent's turn: it ran, its tool call ran inside the sandbox
# (no_new_privs, a filter) into the session, not the project, and where
# the full tier failed one note names the tier auto took.
check_agent() {
	agent_err=$(printf '%s\n' "$out" | sed -n "s/^$1-err: //p")
	expect_eq "$(val "$1")" 0 "$1's turn in --isolation auto: $agent_err"
	expect_eq "$(val "$1-turn")" done "$1 returned the tool's result to the model"
	expect_eq "$(val "$1-early")" "" "$1's change reached the project before isd apply"
	expect_eq "$(val "$1-diff")" 0 "isd diff after $1"
	expect_eq "$(val "$1-ran")" "NoNewPrivs=1 Seccomp=2 " "$1's tool call, as isd diff shows it"
	note=$(printf '%s\n' "$agent_err" | grep '^isd: note: --isolation auto: ')
	if [ "$full" = 0 ]; then
		expect_eq "$note" "" "$1: no note where the full tier works"
	else
		expect_eq "$(printf '%s\n' "$note" | grep -c .)" 1 "$1: one note: $agent_err"
		case $note in
		*"isd takes the landlock tier, which lacks "* | *"isd takes the full tier without a pid namespace (--pid host), which lacks "*) asserted ;;
		*) fail "$1: the note names the tier and what it lacks: $note" ;;
		esac
	fi
}

test_rootful_plain_root() { cell rootful plain 0; }
test_rootful_plain_user() { cell rootful plain 1000; }
test_rootful_docker_root() { cell rootful docker 0; }
test_rootful_docker_user() { cell rootful docker 1000; }
test_rootful_unconfined_root() { cell rootful unconfined 0; }
test_rootful_unconfined_user() { cell rootful unconfined 1000; }
test_rootless_plain_root() { cell rootless plain 0; }
test_rootless_plain_user() { cell rootless plain 1000; }
test_rootless_docker_root() { cell rootless docker 0; }
test_rootless_docker_user() { cell rootless docker 1000; }
test_rootless_unconfined_root() { cell rootless unconfined 0; }
test_rootless_unconfined_user() { cell rootless unconfined 1000; }
# The landlock tier's workspace and state are copies: they work where
# the home is on the container's overlay.
test_rootful_docker_user_overlay_home() { OVERLAY_ROOTFS=yes cell rootful docker 1000; }
# The full tier without a pid namespace (plain podman's uid 1000) makes
# its cow workspace and the agent's state copies there: overlayfs cannot
# write to the container's overlay (src/workspace-fallback.c).
test_rootful_plain_user_overlay_home() { OVERLAY_ROOTFS=yes cell rootful plain 1000; }
test_rootful_plain_root_overlay_home() { OVERLAY_ROOTFS=yes cell rootful plain 0; }
test_rootless_docker_user_overlay_home() { OVERLAY_ROOTFS=yes cell rootless docker 1000; }
