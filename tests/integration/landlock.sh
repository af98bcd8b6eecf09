# SPDX-License-Identifier: LGPL-2.1-or-later
# Landlock behind the mount layer (src/landlock.c): writes only beneath the
# sandbox's writable mounts, even where the mounts were built wrong.  The
# broken mounts come from isd-testhooks ($ISD_TESTHOOKS), the same sources
# built with -DISD_TEST_HOOKS, never installed.

# Skips unless this kernel gives isd a usable Landlock (ABI >= 2).
need_landlock() {
	run_isd exec --print-spec -- true
	expect_rc 0 "--print-spec"
	case "$(printf '%s' "$out" | tr -d ' \n')" in
	*'"landlock":{"enabled":true'*) ;;
	*) skip "this kernel has no usable Landlock (isd doctor says why)" ;;
	esac
}

# The same sandbox as seen by a payload: Landlock in force makes a write
# to /proc (writable at the mount layer, outside every rule) fail.
landlock_marker='if (echo isd >/proc/self/comm) 2>/dev/null; then echo landlock-off; else echo landlock-on; fi'

test_landlock_print_spec() {
	need_landlock
	mkdir -p "$T/ro" "$T/rw" "$T/proj"
	run_isd exec --print-spec -v "$T/ro:/ro:ro" -v "$T/rw:/rw" --workspace "$T/proj:cow" -- true
	expect_rc 0
	flat=$(printf '%s' "$out" | tr -d ' \n')
	expect_contains "$flat" '{"path":"/rw","access":"all","why":"read-writebind"}'
	expect_contains "$flat" "{\"path\":\"$T/proj\",\"access\":\"all\",\"why\":\"thecowworkspace\"}"
	expect_contains "$flat" '{"path":"/tmp","access":"all","why":"tmpfs"}'
	expect_contains "$flat" '{"path":"/dev/shm","access":"all","why":"tmpfs"}'
	expect_contains "$flat" '{"path":"/dev/null","access":"write_filetruncateioctl_dev","why":"device"}'
	expect_not_contains "$flat" '"path":"/ro","access"' "a read-only bind gets no rule"
	run_isd exec --print-spec --workspace "$T/proj:ro" -- true
	expect_not_contains "$(printf '%s' "$out" | tr -d ' \n')" "\"path\":\"$T/proj\",\"access\"" "a ro workspace gets no rule"
	run_isd exec --print-spec --security-opt landlock=off -- true
	expect_contains "$(printf '%s' "$out" | tr -d ' \n')" '"landlock":{"enabled":false,"reason":"--security-optlandlock=off"'
	run_isd exec --print-spec --security-opt seccomp=nested -- true
	expect_contains "$(printf '%s' "$out" | tr -d ' \n')" '"landlock":{"enabled":false,"reason":"seccomp=nested'
	run_isd exec --security-opt landlock=maybe -- true
	expect_rc 125 "an unknown landlock= value"
	expect_contains "$err" "landlock=off"
}

# A read-only bind that the (test-hooked) mount layer leaves writable: the
# payload's writes to the host directory still fail, with Landlock's
# EACCES.  Without the ruleset the same writes reach the host, so the test
# can fail; the production isd has no such hook.
test_landlock_holds_behind_a_broken_mount() {
	need_landlock
	mkdir -p "$T/host"
	echo keep >"$T/host/existing"
	script='grep " /data " /proc/self/mountinfo | cut -d" " -f6
		/probe write /data/new
		mkdir /data/dir 2>/dev/null && echo mkdir-ok || echo mkdir-denied
		ln -s x /data/link 2>/dev/null && echo symlink-ok || echo symlink-denied
		(: >/data/existing) 2>/dev/null && echo truncate-ok || echo truncate-denied
		rm -f /data/existing 2>/dev/null && echo rm-ok || echo rm-denied'
	export ISD_TEST_MISMOUNT_RW=/data
	"$ISD_TESTHOOKS" exec -v "$PROBE:/probe:ro" -v "$T/host:/data:ro" -- sh -c "$script" >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_rc 0 "the hooked sandbox"
	case "$out" in
	rw,*) ;;
	*) fail "the hook did not leave /data writable at the mount layer: $out" ;;
	esac
	expect_eq "$(printf '%s' "$out" | sed 1d | tr '\n' ' ')" "EACCES mkdir-denied symlink-denied truncate-denied rm-denied" \
		"writes through the broken mount"
	expect_eq "$(ls "$T/host")" existing "the host directory"
	expect_eq "$(cat "$T/host/existing")" keep "the host file"

	# The control: the same broken mount without the ruleset.
	ISD_TEST_NO_LANDLOCK=1 "$ISD_TESTHOOKS" exec -v "$PROBE:/probe:ro" -v "$T/host:/data:ro" -- \
		/probe write /data/new >"$T/out" 2>&1
	expect_eq "$(cat "$T/out")" ok "the write without Landlock"
	[ -f "$T/host/new" ] || fail "without Landlock the write must reach the host (else this test proves nothing)"
	rm -f "$T/host/new"

	# isd itself has no hook: the bind stays read-only.
	run_isd exec -v "$PROBE:/probe:ro" -v "$T/host:/data:ro" -- /probe write /data/new
	expect_eq "$out" EROFS "the production isd ignores ISD_TEST_MISMOUNT_RW"
	unset ISD_TEST_MISMOUNT_RW
	[ ! -e "$T/host/new" ] || fail "the production isd wrote through"
}

# Everything writable at the mount layer stays writable under Landlock.
test_landlock_writable_places() {
	need_landlock
	mkdir -p "$T/rw" "$T/proj"
	echo base >"$T/proj/f"
	export XDG_STATE_HOME=$T/state
	run_isd exec -v "$PROBE:/probe:ro" -v "$T/rw:/rw" --tmpfs /scratch --workspace "$T/proj:cow" -- sh -c "
		for p in /rw/a /tmp/a /var/tmp/a /run/a /dev/shm/a /scratch/a $T/proj/a; do /probe write \$p; done
		mkdir $T/proj/d && mv $T/proj/f $T/proj/d/f && echo refer-ok
		mkfifo /tmp/fifo && ln -s fifo /tmp/l && rm /tmp/l /tmp/fifo && echo make-ok
		echo x >/dev/null && echo x >/dev/full 2>/dev/null; head -c1 /dev/urandom >/dev/null && echo dev-ok
		$landlock_marker"
	expect_rc 0 "$err"
	expect_eq "$(printf '%s' "$out" | tr '\n' ' ')" "ok ok ok ok ok ok ok refer-ok make-ok dev-ok landlock-on"
	[ -f "$T/rw/a" ] || fail "the rw bind's write reached its host directory"
}

# /dev/stdout, /dev/stderr and /proc/self/fd/N opened again: the caller's
# descriptors are files on the host (a redirect), outside every rule.
test_landlock_stdio_reopen() {
	need_landlock
	# (appending: writes through the descriptor itself do not move the
	# offset of another opening of the file; writable for all, since a root
	# caller's payload is not root and reopens by the file's mode)
	: >"$T/o"
	: >"$T/e"
	chmod 0666 "$T/o" "$T/e"
	"$ISD" exec -- sh -c "echo out >>/dev/stdout; echo err >>/dev/stderr; echo fd >>/proc/self/fd/1; $landlock_marker" \
		>>"$T/o" 2>>"$T/e" </dev/null
	expect_eq "$?" 0 "isd exec"
	expect_eq "$(cat "$T/o" | tr '\n' ' ')" "out fd landlock-on "
	expect_eq "$(cat "$T/e")" err
}

# Agent workloads in a real (rw, then cow) workspace on the host, with
# Landlock on: git commit, cc, python, node and npm where installed.
test_landlock_agent_workloads() {
	need_landlock
	export XDG_STATE_HOME=$T/state
	for mode in rw cow; do
		P=$T/proj-$mode
		mkdir -p "$P/dep"
		printf '{"name":"dep","version":"1.0.0"}\n' >"$P/dep/package.json"
		# A rw workspace without a repository gets a read-only .git
		# placeholder (git init there needs --git-writable).
		! command -v git >/dev/null || git -C "$P" init -q
		run_isd exec --workspace "$P:$mode" -w "$P" -e HOME="$P" \
			-e GIT_AUTHOR_NAME=isd -e GIT_AUTHOR_EMAIL=isd@example.org \
			-e GIT_COMMITTER_NAME=isd -e GIT_COMMITTER_EMAIL=isd@example.org -- sh -c '
			set -e
			if command -v git >/dev/null; then
				echo hi >f && git add f && git commit -qm first
				git mv f g && git commit -qm second && git gc -q && echo "git $(git log --oneline | wc -l)"
			fi
			if command -v cc >/dev/null; then
				printf "int main(void){return 0;}\n" >t.c && cc -o t t.c && ./t && echo cc
			fi
			if command -v python3 >/dev/null; then
				python3 -c "import os, tempfile
with tempfile.NamedTemporaryFile(dir=\".\", delete=False) as f: f.write(b\"x\")
os.replace(f.name, \"py.out\"); print(\"python\")"
			fi
			if command -v node >/dev/null; then
				node -e "require(\"fs\").writeFileSync(\"node.out\", \"x\"); console.log(\"node\")"
			fi
			if command -v npm >/dev/null; then
				npm init -y >/dev/null && npm install --offline --no-audit --no-fund ./dep >/dev/null
				test -e node_modules/dep/package.json && echo npm
			fi
			'"$landlock_marker"
		expect_rc 0 "workloads in a $mode workspace: $err"
		expect_contains "$out" "landlock-on" "$mode"
		! command -v git >/dev/null || expect_contains "$out" "git 2" "$mode"
		! command -v cc >/dev/null || expect_contains "$out" "cc" "$mode"
		! command -v python3 >/dev/null || expect_contains "$out" "python" "$mode"
		! command -v node >/dev/null || expect_contains "$out" "node" "$mode"
		! command -v npm >/dev/null || expect_contains "$out" "npm" "$mode"
	done
	[ -f "$T/proj-rw/py.out" ] || fail "the rw workspace's writes reached the host"
}

# A Landlock domain can never mount: with Landlock a sandbox cannot build
# another one even when seccomp allows it (unconfined); --security-opt
# landlock=off (and seccomp=nested, tests/integration/exec.sh) can.
test_landlock_forbids_nested_mounts() {
	need_landlock
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	user=""
	[ "$(id -u)" -ne 0 ] || user="-u 1000:1000"
	nest='unshare -Urm sh -c "mount -t tmpfs none /tmp && echo mounted" 2>/dev/null || echo refused'
	run_isd exec $user --security-opt seccomp=unconfined --security-opt landlock=off -- sh -c "$nest"
	[ "$out" = mounted ] || skip "a sandbox cannot nest one here even without Landlock ($out $err)"
	run_isd exec $user --security-opt seccomp=unconfined -- sh -c "$nest"
	expect_eq "$out" refused "a nested mount under Landlock"
}

test_landlock_doctor() {
	run_isd doctor
	abi=$(printf '%s\n' "$out" | sed -n 's/.*Landlock.*ABI \([0-9]*\).*/\1/p' | head -n1)
	if [ -n "$abi" ] && [ "$abi" -ge 2 ]; then
		expect_contains "$out" "writes outside the writable mounts"
	else
		expect_contains "$out" "Landlock"
	fi
}
