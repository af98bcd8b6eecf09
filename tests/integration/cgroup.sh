# SPDX-License-Identifier: LGPL-2.1-or-later
# Resource limits (cgroup v2).  Two environments:
#  - a cgroup2 host with a delegated subtree (user-mode Linux through
#    tests/uml/run.sh, or a systemd desktop): limits are enforced;
#  - a cgroup v1/hybrid host (this project's CI machines): a limit fails
#    cleanly, best-effort warns, no-limit runs work.
# Tests whose environment is absent skip (77) and say why.

# --- environment ------------------------------------------------------

cg_own_dir() {
	echo "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)"
}

cg_v2_here() {
	[ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]
}

# Where isd may create sandbox cgroups: its own cgroup and the parent.
cg_bases() {
	own=$(cg_own_dir)
	echo "$own"
	[ "$own" != /sys/fs/cgroup ] && dirname "$own"
}

cg_leftovers() {
	for b in $(cg_bases); do
		ls -d "$b"/isd-[0-9]* 2>/dev/null
	done | sort
}

# The controllers delegated to us: those of the first writable base.
cg_delegated() {
	for b in $(cg_bases); do
		if [ -w "$b" ] && [ -w "$b/cgroup.procs" ]; then
			cat "$b/cgroup.controllers"
			return
		fi
	done
}

need_delegation() {
	cg_v2_here || skip "no cgroup2 at /sys/fs/cgroup (v1/hybrid host: tests/uml/run.sh runs this)"
	d=" $(cg_delegated) "
	for c in cpu memory pids; do
		case $d in
		*" $c "*) ;;
		*) skip "the \"$c\" controller is not delegated to uid $(id -u) here (have:$d)" ;;
		esac
	done
}

# The controllers of the cgroup2 root isd would see (hybrid: unified/).
cg_root_controllers() {
	mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
	[ -n "$mnt" ] && cat "$mnt/cgroup.controllers" 2>/dev/null
}

need_v1_host() {
	case " $(cg_root_controllers) " in
	*" memory "*) skip "cgroup v2 has the memory controller here; this test is for v1/hybrid hosts" ;;
	esac
}

# "before" and "after" listings must match: nothing left behind.
expect_no_leftover() {
	asserted
	after=$(cg_leftovers)
	[ "$after" = "$1" ] || fail "cgroups left behind: $(printf '%s\n' "$after" | grep -vxF "$1" | tr '\n' ' ')"
}

# Wait (bounded) until a new isd-* cgroup appears; prints it.
wait_new_cgroup() {
	i=0
	while [ $i -lt 100 ]; do
		new=$(cg_leftovers | grep -vxF "$1" | head -n1)
		[ -n "$new" ] && { echo "$new"; return 0; }
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

wait_gone() {
	i=0
	while [ -d "$1" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ ! -d "$1" ]
}

# --- any host ---------------------------------------------------------

test_no_limits_run_anywhere() {
	run_isd exec -- sh -c 'echo hi'
	expect_rc 0 "no limits"
	expect_eq "$out" hi
	# "unlimited" values need no cgroup either
	run_isd exec --pids-limit -1 --memory-swap -1 -- true
	expect_rc 0 "unlimited values"
	expect_eq "$err" ""
}

test_swap_without_memory_rejected() {
	run_isd exec --memory-swap 1g -- echo ran
	expect_rc 125
	expect_eq "$out" "" "payload output"
	expect_contains "$err" "--memory-swap needs --memory"
}

test_v1_host_limit_fails_cleanly() {
	need_v1_host
	for opt in "--memory 512m" "--cpus 1" "--pids-limit 64"; do
		set -- $opt
		run_isd exec "$@" -- echo ran
		expect_rc 125 "$opt"
		expect_eq "$out" "" "payload output with $opt"
		expect_eq "$(printf '%s\n' "$err" | wc -l)" 1 "lines of stderr with $opt"
		expect_contains "$err" "isd: $1 needs the cgroup v2 \""
		expect_contains "$err" "; fix: "
	done
	# the reason matches what this host shows
	if [ -z "$(awk '$0 ~ / - cgroup2 / { print $5 }' /proc/self/mountinfo)" ]; then
		why="but this host has no cgroup v2 hierarchy"
	elif grep -q ' - cgroup [^ ]* [^ ]*memory' /proc/self/mountinfo; then
		why="but this host runs it on cgroup v1 (hybrid layout"
	else
		why="which this kernel does not offer"
	fi
	run_isd exec --memory 512m -- true
	expect_contains "$err" "isd: --memory needs the cgroup v2 \"memory\" controller, $why"
}

test_best_effort_warns_and_runs() {
	case " $(cg_root_controllers) " in
	*" memory "*)
		# cgroup2 host: io is what neither systemd nor tests/uml delegates
		case " $(cg_delegated) " in
		*" io "*) skip "io is delegated here: no limit this host cannot enforce" ;;
		esac
		opt=--blkio-weight
		set -- --blkio-weight 500
		;;
	*)
		opt=--memory
		set -- --memory 512m
		;;
	esac
	before=$(cg_leftovers)
	run_isd exec --limits=best-effort "$@" -- echo ran
	expect_rc 0 "best-effort"
	expect_eq "$out" ran
	expect_contains "$err" "isd: warning: ignoring $opt (--limits=best-effort): needs "
	run_isd exec --limits=strict "$@" -- echo ran
	expect_rc 125 "strict"
	expect_contains "$err" "isd: $opt needs "
	cg_v2_here && expect_no_leftover "$before"
	return 0
}

# --- cgroup2 with delegation (user-mode Linux) -----------------------

test_limits_visible_inside() {
	need_delegation
	before=$(cg_leftovers)
	run_isd exec --memory 256m --pids-limit 100 --cpus 1.5 --cpu-shares 1024 --memory-reservation 64m -- \
		sh -c 'cd /sys/fs/cgroup && cat memory.max pids.max cpu.max cpu.weight memory.low'
	expect_rc 0 "limits"
	expect_eq "$(echo $out)" "268435456 100 150000 100000 100 67108864" "memory.max pids.max cpu.max cpu.weight memory.low"
	expect_no_leftover "$before"
}

test_memory_swap_semantics() {
	need_delegation
	run_isd exec --memory 64m -- cat /sys/fs/cgroup/memory.swap.max
	[ "$rc" -eq 1 ] && skip "memory.swap.max absent (kernel without swap accounting)"
	expect_rc 0
	expect_eq "$out" 67108864 "Docker's default: as much swap as memory"
	run_isd exec --memory 64m --memory-swap 64m -- cat /sys/fs/cgroup/memory.swap.max
	expect_eq "$out" 0 "memory-swap == memory: no swap"
	run_isd exec --memory 64m --memory-swap 96m -- cat /sys/fs/cgroup/memory.swap.max
	expect_eq "$out" 33554432 "memory-swap is memory plus swap"
	run_isd exec --memory 64m --memory-swap -1 -- cat /sys/fs/cgroup/memory.swap.max /sys/fs/cgroup/memory.max
	expect_eq "$(echo $out)" "max 67108864" "memory-swap -1: unlimited swap"
	run_isd exec --memory 64m --memory-swap 32m -- true
	expect_rc 125 "memory-swap below memory"
}

test_memory_hog_oom_killed() {
	need_delegation
	before=$(cg_leftovers)
	# tail buffers an endless line: it grows until the kernel stops it
	run_isd exec --memory 32m --memory-swap 32m -- tail /dev/zero
	expect_rc 137 "OOM-killed payload"
	expect_contains "$err" "isd: sandbox hit its memory limit (32.0 MiB); tail was killed"
	expect_no_leftover "$before"
}

test_pids_limit_stops_fork_bomb() {
	need_delegation
	command -v perl >/dev/null || skip "perl (perl) is not installed"
	before=$(cg_leftovers)
	sleep 30 &
	host_pid=$!
	# A real fork bomb (perl is Essential in Debian) against a limit of 32;
	# the payload's shell forked its timer first and then uses builtins
	# only, as no fork is left.  Its exit ends the pid namespace, bomb and all.
	run_isd exec --pids-limit 32 -- sh -c '
		sleep 3 & timer=$!
		perl -e "fork while 1" 2>/dev/null &
		wait $timer
		read cur </sys/fs/cgroup/pids.current
		read max </sys/fs/cgroup/pids.max
		while read k v; do [ "$k" = max ] && events=$v; done </sys/fs/cgroup/pids.events
		echo "$cur $max $events"'
	expect_rc 0 "fork bomb"
	set -- $out
	expect_eq "$2" 32 "pids.max"
	[ "$1" -le 32 ] || fail "pids.current $1 above the limit"
	[ "$1" -ge 20 ] || fail "pids.current $1: the bomb did not reach the limit"
	[ "${3:-0}" -gt 0 ] || fail "pids.events shows no refused fork ($out)"
	# the host side is unharmed: our process lives, we can fork
	kill -0 "$host_pid" || fail "a host-side process died"
	[ "$(sh -c 'echo forked')" = forked ] || fail "the host side cannot fork"
	kill "$host_pid"
	expect_no_leftover "$before"
}

test_cpu_quota_half() {
	need_delegation
	# spin 3 s under --cpus 0.5: about 1.5 s of CPU; throttled
	run_isd exec --cpus 0.5 -- sh -c '
		read t0 x </proc/uptime
		timeout 3 sh -c "while :; do :; done"
		read t1 x </proc/uptime
		echo "$t0 $t1"; cat /sys/fs/cgroup/cpu.stat'
	expect_rc 0 "spinner"
	ratio=$(printf '%s\n' "$out" | awk 'NR == 1 { wall = $2 - $1 } $1 == "usage_usec" { u = $2 }
		END { printf "%.2f", u / 1e6 / wall }')
	throttled=$(printf '%s\n' "$out" | awk '$1 == "nr_throttled" { print $2 }')
	awk -v r="$ratio" 'BEGIN { exit !(r >= 0.35 && r <= 0.65) }' ||
		fail "CPU share under --cpus 0.5 was $ratio (expected about 0.5): $out"
	[ "${throttled:-0}" -gt 0 ] || fail "never throttled: $out"
}

test_no_leftover_after_sigterm() {
	need_delegation
	before=$(cg_leftovers)
	"$ISD" exec --pids-limit 50 -- sleep 60 >/dev/null 2>&1 </dev/null &
	p=$!
	cg=$(wait_new_cgroup "$before") || { kill -KILL $p; fail "no cgroup appeared"; }
	kill -TERM $p
	wait $p
	rc=$?
	[ "$rc" -ne 0 ] || fail "isd exited 0 after SIGTERM"
	wait_gone "$cg" || fail "$cg left behind after SIGTERM"
	expect_no_leftover "$before"
}

test_gc_after_sigkill() {
	need_delegation
	before=$(cg_leftovers)
	for cleaner in gc next-run; do
		"$ISD" exec --pids-limit 50 -- sleep 60 >/dev/null 2>&1 </dev/null &
		p=$!
		cg=$(wait_new_cgroup "$before") || { kill -KILL $p; fail "no cgroup appeared"; }
		kill -KILL $p
		wait $p
		[ -d "$cg" ] || fail "$cg vanished by itself after SIGKILL: nothing for gc to test"
		if [ $cleaner = gc ]; then
			run_isd gc
			expect_rc 0 "isd gc"
			expect_contains "$out" "removed $cg"
		else
			run_isd exec --pids-limit 10 -- true
			expect_rc 0 "next run"
		fi
		[ ! -d "$cg" ] || fail "$cg survived $cleaner"
	done
	expect_no_leftover "$before"
}

test_undelegated_controller_fails() {
	need_delegation
	root=" $(cg_root_controllers) "
	d=" $(cg_delegated) "
	for pair in io:--blkio-weight:500 cpuset:--cpuset-cpus:0; do
		c=${pair%%:*}
		rest=${pair#*:}
		opt=${rest%%:*}
		case $root in *" $c "*) ;; *) continue ;; esac
		case $d in *" $c "*) continue ;; esac
		run_isd exec "$opt" "${rest#*:}" -- echo ran
		expect_rc 125 "$opt"
		expect_eq "$out" "" "payload output"
		expect_contains "$err" "isd: $opt needs the cgroup v2 \"$c\" controller, which is not delegated to user $(id -u) (enabled: "
		expect_contains "$err" "fix: systemd drop-in /etc/systemd/system/user@.service.d/delegate.conf with Delegate="
		return 0
	done
	skip "every controller the kernel has is delegated here"
}

# isd alone in a delegated cgroup: it moves itself into a leaf to give the
# sandbox controllers, and restores everything afterwards.
test_alone_in_delegated_cgroup() {
	need_delegation
	parent=$(dirname "$(cg_own_dir)")
	[ -w "$parent" ] && [ -w "$parent/cgroup.procs" ] || skip "parent cgroup $parent not writable"
	alone=$parent/alone-$$
	mkdir "$alone" || fail "mkdir $alone"
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" exec --memory 64m -- cat /sys/fs/cgroup/memory.max' \
		sh "$alone" "$ISD" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	left=$(ls -d "$alone"/*/ 2>/dev/null)
	sub=$(cat "$alone/cgroup.subtree_control")
	rmdir "$alone" || fail "$alone could not be removed (busy: isd left something)"
	expect_rc 0 "isd alone"
	expect_eq "$out" 67108864 "memory.max"
	expect_eq "$left" "" "children left in $alone"
	expect_eq "$sub" "" "controllers left enabled in $alone"
}

# Nothing writable here, but a systemd user manager: isd asks it for a
# transient scope with Delegate=yes (tests/uml/run.sh boots this case with
# a real `systemd --user`).  Needs isd built with libsystemd.
test_systemd_user_scope() {
	cg_v2_here || skip "no cgroup2 at /sys/fs/cgroup"
	[ -S "${XDG_RUNTIME_DIR:-/nonexistent}/systemd/private" ] || skip "no systemd user manager here"
	for b in $(cg_bases); do
		[ -w "$b" ] && skip "$b is writable: isd would not need systemd here"
	done
	run_isd exec --memory 64m --pids-limit 99 -- sh -c 'cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max'
	if [ "$rc" -eq 125 ]; then
		case $err in
		*"systemd: "*) ;;
		*) skip "isd was built without libsystemd: $err" ;;
		esac
	fi
	expect_rc 0 "isd in a systemd scope"
	expect_eq "$(echo $out)" "67108864 99" "memory.max pids.max"
	# systemd removes the scope once isd has left
	i=0
	while [ -n "$(find /sys/fs/cgroup -name 'isd-*' -type d 2>/dev/null)" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	left=$(find /sys/fs/cgroup -name 'isd-*' -type d 2>/dev/null)
	expect_eq "$left" "" "cgroups left behind"
}

# isd doctor plans limits with isd exec's own code: where an explicit
# limit works, doctor says ok; where it is refused, doctor names the same
# reason (run under user-mode Linux too, where the delegated case is real).
test_doctor_agrees_with_exec() {
	run_isd exec --memory 256m --cpus 1 --pids-limit 100 -- true
	exec_rc=$rc
	why=$(printf '%s\n' "$err" | sed -n 's/^isd: //p' | head -n1)
	run_isd doctor --json
	row=$(printf '%s' "$out" | python3 -c 'import json,sys; c = [c for c in json.load(sys.stdin)["checks"] if c["check"] == "cgroup v2 limits"][0]; print(c["status"]); print(c["detail"])') ||
		fail "doctor --json: $out"
	status=$(printf '%s\n' "$row" | head -n1)
	if [ "$exec_rc" -eq 0 ]; then
		expect_eq "$status" ok "doctor, where isd exec enforces the limits"
	else
		expect_eq "$status" warn "doctor, where isd exec refuses the limits ($why)"
		expect_contains "$row" "$why" "the same reason"
	fi
}

# --storage-opt (src/storage-watch.c): a sandbox with a cgroup is frozen
# at a storage bound through cgroup.freeze (its processes are not stopped
# by signal: their state is not T), and isd resume --end ends it.  A floor
# just below what the file system of a rw bind has free (no overlayfs
# needed: user-mode Linux has none).
test_storage_floor_freezes_the_cgroup() {
	need_delegation
	mkdir -p "$T/w"
	avail=$(df -B1 --output=avail "$T/w" | tail -n1)
	[ "$avail" -gt $((200 << 20)) ] || skip "less than 200 MiB free in $T"
	floor=$((avail - (40 << 20)))
	"$ISD" exec --profile none --pids-limit 512 -v "$T/w:/out" --storage-opt min-free=$floor -- sh -c '
		i=0; while [ $i -lt 200 ]; do dd if=/dev/zero of=/out/f$i bs=1M count=1 2>/dev/null; i=$((i + 1)); done
		echo all written' >"$T/bg.out" 2>"$T/bg.err" </dev/null &
	bg=$!
	at_teardown "kill -9 $bg 2>/dev/null; wait $bg 2>/dev/null"
	n=0
	while ! grep -q 'the sandbox is frozen' "$T/bg.err"; do
		kill -0 $bg 2>/dev/null || fail "ended without a freeze: $(cat "$T/bg.out" "$T/bg.err")"
		n=$((n + 1))
		[ $n -lt 300 ] || fail "no freeze: $(cat "$T/bg.err")"
		sleep 0.1
	done
	expect_contains "$(cat "$T/bg.err")" "the file system of $T/w has" "the message names the bind"
	frozen=
	for b in $(cg_bases); do
		for e in "$b"/isd-*/cgroup.events; do
			grep -q '^frozen 1' "$e" 2>/dev/null && frozen=$e
		done
	done
	[ -n "$frozen" ] || fail "no frozen isd cgroup under $(cg_bases)"
	for p in $(cat "$(dirname "$frozen")/cgroup.procs"); do
		case $(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$p/status") in
		T) fail "process $p was stopped by a signal, not frozen" ;;
		esac
	done
	id=$(sed -n 's/.*`isd resume --end \([0-9]*\)`.*/\1/p' "$T/bg.err" | head -n1)
	[ "$id" = "$bg" ] || fail "the message names $id, isd is $bg: $(cat "$T/bg.err")"
	run_isd resume --end "$id"
	expect_rc 0 "isd resume --end"
	wait $bg
	rc=$?
	expect_rc 137 "the sandbox ended"
	expect_not_contains "$(cat "$T/bg.out")" "all written"
}
