# SPDX-License-Identifier: LGPL-2.1-or-later
# `isd exec -t`, driven through tmux as a person at a terminal would.

tmux_start() {
	command -v tmux >/dev/null || skip "tmux (tmux) is not installed"
	TM="tmux -L isd-test-$$ -f /dev/null"
	# The outer shell records the terminal settings before and after isd.
	cat >"$T/session.sh" <<EOF
stty -g >"$T/stty.before"
"$ISD" exec $1
echo "EXIT=\$?"
stty -g >"$T/stty.after"
printf 'outer-read: '; read -t 1 line; echo "[\$line]"
echo SESSION-DONE
sleep 60
EOF
	$TM new-session -d -x 100 -y 30 "bash $T/session.sh" || skip "cannot start tmux"
}

tmux_stop() {
	$TM kill-server 2>/dev/null
}

screen() {
	$TM capture-pane -p -J -S -200
}

# wait_for TEXT: until the pane shows TEXT (5 s at most).
wait_for() {
	i=0
	while ! screen | grep -qF -- "$1"; do
		i=$((i + 1))
		if [ $i -gt 100 ]; then
			screen >&2
			tmux_stop
			fail "timed out waiting for '$1' on the terminal"
		fi
		sleep 0.05
	done
}

keys() {
	$TM send-keys "$@"
}

test_tty_interactive_shell() {
	tmux_start "-e PS1=SBX: -- sh"
	wait_for SBX:
	keys 'tty; stty size; echo typed-$((40+2))' Enter
	wait_for typed-42
	screen | grep -q '^/dev/pts/0$' || fail "payload is not on the sandbox's pty: $(screen)"
	screen | grep -q '^30 100$' || fail "window size at start: $(screen)"
	$TM resize-window -x 120 -y 40
	sleep 0.2
	keys 'stty size' Enter
	wait_for '40 120'
	keys 'sleep 100' Enter
	sleep 0.3
	keys C-c
	keys 'echo status-$?' Enter
	wait_for status-130
	# Ctrl-\ is SIGQUIT through the sandbox's line discipline too
	keys 'sleep 100' Enter
	sleep 0.3
	keys 'C-\'
	keys 'echo quit-$?' Enter
	wait_for quit-131
	keys 'exit 7' Enter
	wait_for SESSION-DONE
	expect_contains "$(screen)" 'EXIT=7' "exit status through the terminal"
	tmux_stop
	expect_eq "$(cat "$T/stty.after")" "$(cat "$T/stty.before")" "the caller's terminal settings afterwards"
}

test_tty_restored_after_kill() {
	tmux_start "-e PS1=SBX: -- sh"
	wait_for SBX:
	keys 'echo ready; kill -9 $$' Enter
	wait_for SESSION-DONE
	expect_contains "$(screen)" 'EXIT=137' "payload killed by SIGKILL"
	tmux_stop
	expect_eq "$(cat "$T/stty.after")" "$(cat "$T/stty.before")" "the caller's terminal settings after the payload was killed"
}

test_tty_no_caller_terminal_fd() {
	tmux_start "-v $PROBE:/probe:ro -- /probe fds"
	wait_for SESSION-DONE
	out=$(screen)
	tmux_stop
	expect_contains "$out" "EXIT=0"
	# fds 0-2 are the sandbox's pty; nothing else, and no /dev/pts of the
	# caller's devpts can be reached from inside at all.
	expect_not_contains "$out" "fd 3" "extra descriptors"
}

test_tty_tiocsti_stays_inside() {
	# With the default profile the ioctl is refused outright...
	tmux_start "-v $PROBE:/probe:ro -- /probe tiocsti"
	wait_for SESSION-DONE
	out=$(screen)
	tmux_stop
	expect_contains "$out" "EPERM" "TIOCSTI under the default seccomp profile"
	expect_contains "$out" "outer-read: []" "nothing injected into the caller's terminal"
	# ...and without seccomp it reaches only the sandbox's own pty.
	tmux_start "--security-opt seccomp=unconfined -v $PROBE:/probe:ro -- /probe tiocsti"
	wait_for SESSION-DONE
	out=$(screen)
	tmux_stop
	expect_contains "$out" "outer-read: []" "nothing injected into the caller's terminal"
}

test_tty_forced_without_terminal() {
	run_isd exec -t -- sh -c 'tty; echo done'
	expect_rc 0
	expect_contains "$out" "/dev/pts/0"
	expect_contains "$out" "done"
	run_isd exec --no-tty -- sh -c 'tty || true'
	expect_contains "$out" "not a tty"
}

# Output to a closed pipe is a hang-up for the payload, not a hung isd, and
# the terminal stays intact.
test_tty_output_pipe_closed() {
	tmux_start "-t -- sh -c 'trap \"echo got-hup >&2; exit 9\" HUP; while :; do echo y; done' | head -c 4; s=\${PIPESTATUS[0]}; echo; echo PIPE=\$s"
	wait_for SESSION-DONE
	out=$(screen)
	tmux_stop
	expect_contains "$out" "PIPE=9" "payload hung up when the reader went away"
	cmp -s "$T/stty.before" "$T/stty.after" || fail "terminal settings changed"
}
