# SPDX-License-Identifier: LGPL-2.1-or-later
# Real agents from the npm registry, as people install them, each running
# one real turn in `isd exec -- AGENT` against a scripted model on
# 127.0.0.1 (tests/integration/fake-model.py, reached with --forward).  The
# model's one tool call writes a project file and removes everything in
# the home (rm -rf HOME/* HOME/.[!.]*): the project change must wait in the
# session (isd diff), isd apply must take it, and the caller's home must be
# unchanged.  The agents: omp (on bun, in npm's and in bun's own
# layouts), pi (on node) and Claude Code (its native binary).  .ci/run
# installs them into the CI user's
# ~/agent-home (ISD_TEST_AGENT_HOME) with npm, and omp with bun's own
# layout into ~/agent-home-bun (ISD_TEST_AGENT_HOME_BUN), which also gives
# the system-bun layout (its bun copied outside the home); without them the
# tests skip.

agent_home() {
	AH=${1:-${ISD_TEST_AGENT_HOME:-$HOME/agent-home}}
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	command -v timeout >/dev/null || skip "timeout (coreutils) is not installed"
}

# need_agent BIN INSTALL [DIR]: skip unless AH/DIR/BIN (DIR .local/bin) exists
need_agent() {
	[ -x "$AH/${3:-.local/bin}/$1" ] ||
		skip "$1 is not installed in $AH/${3:-.local/bin}: HOME=$AH $2 (.ci/run does it)"
}

# Everything in the agents' home except the agents' own state: names,
# types, sizes, modes, link targets, and the times of what is not a
# directory (the home's own time moves when the other agent's test, run
# in parallel, recreates its state directory).
home_hash() {
	(cd "$AH" && find . \( -path ./.omp -o -path ./.pi -o -path ./.claude -o -path ./.claude.json \) -prune -o -type d -printf '%p d %m\n' -o -printf '%p %y %s %m %T@ %l\n' |
		LC_ALL=C sort | sha256sum)
}

# The state of the agent under test ($STATE_DIR: .omp, .pi or
# ".claude .claude.json"), file by file with its content's hash.  Only its
# own: the other agents' tests run in parallel in the same home and rewrite
# their own state meanwhile.
state_files() {
	# shellcheck disable=SC2086 # STATE_DIR may name several paths
	(cd "$AH" && find ${STATE_DIR:?} -type f -exec sha256sum {} + 2>/dev/null | LC_ALL=C sort)
}

# start_model [COMMAND]: the scripted model, its port in $PORT.  The tool
# call's COMMAND by default writes the project file, empties the home ($AH
# spelled out: Claude Code's Bash tool refuses rm -rf "$HOME"/*, which is
# rm -rf /* where HOME is unset) and plants code in each agent's state (a
# Claude Code command is a prompt whose "!" lines run).
start_model() {
	cmd=${1:-}
	[ -n "$cmd" ] || cmd="echo agent-was-here >\"$T/proj/created.txt\"; rm -rf \"$AH\"/* \"$AH\"/.[!.]*; for d in .omp .pi; do mkdir -p \"\$HOME/\$d/agent/extensions\" && echo 'export default () => {}' >\"\$HOME/\$d/agent/extensions/planted.ts\"; done 2>/dev/null; mkdir -p \"\$HOME/.claude/commands\" 2>/dev/null && echo '!\`id\`' >\"\$HOME/.claude/commands/planted.md\"; echo removed"
	python3 "$ISD_TEST_SRCDIR/tests/integration/fake-model.py" "$cmd" "$T/model.log" >"$T/port" 2>"$T/model.err" &
	MODEL_PID=$!
	for _ in $(seq 50); do
		PORT=$(cat "$T/port" 2>/dev/null)
		[ -n "$PORT" ] && return 0
		sleep 0.1
	done
	fail "the fake model did not start: $(cat "$T/model.err")"
}

stop_model() {
	kill "$MODEL_PID" 2>/dev/null
	wait "$MODEL_PID" 2>/dev/null
}

# run_real_agent ARGS...: in $T/proj, the agent's turn, then the checks.
# $PLANTED is the planted file in the home, $HELD what isd diff says of it
# (by default omp's and pi's extension).
run_real_agent() {
	PLANTED=${PLANTED:-$STATE_DIR/agent/extensions/planted.ts}
	HELD=${HELD:-agent/extensions: executable configuration}
	mkdir -p "$T/proj" "$T/state"
	echo original >"$T/proj/README"
	before=$(home_hash)
	state_files >"$T/state.before"
	cd "$T/proj" || fail "cd"
	HOME=$AH PATH=${AGENT_PATH:-$AH/.local/bin}:/usr/bin:/bin XDG_STATE_HOME=$T/state XDG_CACHE_HOME=$T/cache \
		timeout 300 "$ISD" exec --forward "$PORT:127.0.0.1:$PORT" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	exec_err=$err
	stop_model
	[ "$rc" -eq 0 ] || fail "the agent's turn: exit $rc (stderr: $err) (model: $(cat "$T/model.log" 2>/dev/null))"
	grep -q '"done": true' "$T/model.log" || fail "the agent never returned the tool's result (model: $(cat "$T/model.log"))"
	[ ! -e "$T/proj/created.txt" ] || fail "the project changed before isd apply"
	expect_eq "$(home_hash)" "$before" "the caller's home after rm -rf \$HOME/*"
	# The extension the tool planted in the agent's state is held, not on
	# the host; isd diff names it.  (Only this agent's: the other one's
	# test runs in parallel in the same home.)
	planted=$AH/$PLANTED
	[ ! -e "$planted" ] || fail "a planted extension reached the host"
	XDG_STATE_HOME=$T/state run_isd diff
	expect_contains "$out" "$HELD" "the held extension in isd diff (its stderr: $err; exec stderr: $exec_err; model: $(cat "$T/model.log"))"
	expect_contains "$out" "${PLANTED##*/}"
	# The agent's own state went with the rm -rf (merged at exit);
	# isd state restore brings every file of it back as it was.
	state_files >"$T/state.merged"
	[ -n "$(LC_ALL=C comm -23 "$T/state.before" "$T/state.merged")" ] || fail "the rm -rf of the state did not reach the host (the test needs it to)"
	# (The turn's own transcript goes with the rm -rf: the fake agents of
	# agent-state.sh check that a transcript is on the host before apply.)
	HOME=$AH XDG_STATE_HOME=$T/state run_isd state restore
	expect_rc 0 "isd state restore"
	state_files >"$T/state.after"
	missing=$(LC_ALL=C comm -23 "$T/state.before" "$T/state.after")
	[ -z "$missing" ] || fail "not restored: $missing"
	XDG_STATE_HOME=$T/state run_isd diff --stat
	expect_rc 0 "isd diff"
	expect_contains "$out" "created.txt"
	XDG_STATE_HOME=$T/state run_isd apply
	expect_rc 0 "isd apply"
	expect_eq "$(cat "$T/proj/created.txt")" agent-was-here "the applied file"
	# isd apply --state takes the held extension (the next run of the
	# test starts without it).
	at_teardown "rm -f '$planted'; rmdir '${planted%/*}' 2>/dev/null"
	HOME=$AH XDG_STATE_HOME=$T/state run_isd apply --state
	expect_rc 0 "isd apply --state"
	[ -f "$planted" ] || fail "isd apply --state did not take the planted extension: $out"
}

omp_models() {
	mkdir -p "$AH/.omp/agent"
	cat >"$AH/.omp/agent/models.yml" <<EOF
providers:
  fake:
    baseUrl: http://127.0.0.1:$PORT/v1
    api: openai-completions
    apiKey: x
    models:
      - id: fake-model
EOF
}

# omp on bun from npm (~/.local/bin/bun -> ../lib/node_modules/bun/bin/bun.exe)
test_agents_real_omp() {
	agent_home
	need_agent omp "npm install -g --prefix ~/.local bun@1.4 @oh-my-pi/pi-coding-agent@18.2.3"
	need_agent bun "npm install -g --prefix ~/.local bun@1.4"
	start_model
	omp_models
	STATE_DIR=.omp run_real_agent -- omp -p --model fake/fake-model "Write the file, then clean up."
}

# pi on node (~/.local/bin/pi -> ../lib/node_modules/@mariozechner/pi-coding-agent/...)
test_agents_real_pi() {
	agent_home
	need_agent pi "npm install -g --prefix ~/.local @mariozechner/pi-coding-agent@0.73.1"
	start_model
	mkdir -p "$AH/.pi/agent"
	cat >"$AH/.pi/agent/models.json" <<EOF
{"providers": {"fake": {"baseUrl": "http://127.0.0.1:$PORT/v1", "api": "openai-completions", "apiKey": "x",
  "models": [{"id": "fake-model", "name": "fake-model"}]}}}
EOF
	STATE_DIR=.pi run_real_agent -e PI_OFFLINE=1 -- pi -p --provider fake --model fake-model "Write the file, then clean up."
}

# omp from bun install -g, with bun where bun's installer puts it
# (~/.bun/bin/bun, ~/.bun/bin/omp -> ../install/global/node_modules/...):
# its dependencies sit beside it in bun's global node_modules.
test_agents_real_omp_bun_global() {
	agent_home "${ISD_TEST_AGENT_HOME_BUN:-$HOME/agent-home-bun}"
	need_agent bun "bun's installer (or a copy of npm's bun.exe as ~/.bun/bin/bun)" .bun/bin
	need_agent omp "bun install -g @oh-my-pi/pi-coding-agent@18.2.3" .bun/bin
	start_model
	omp_models
	STATE_DIR=.omp AGENT_PATH=$AH/.bun/bin run_real_agent -- omp -p --model fake/fake-model "Write the file, then clean up."
}

# A system bun (one outside the home: here a copy of bun's in a directory of
# its own) and omp from bun install -g, with no bun in ~/.bun/bin: the
# caller's home holds only the global install's bin link.
test_agents_real_omp_system_bun() {
	agent_home "${ISD_TEST_AGENT_HOME_BUN:-$HOME/agent-home-bun}"
	need_agent bun "bun's installer (or a copy of npm's bun.exe as ~/.bun/bin/bun)" .bun/bin
	need_agent omp "bun install -g @oh-my-pi/pi-coding-agent@18.2.3" .bun/bin
	omp_js=$(readlink -f "$AH/.bun/bin/omp")
	mkdir -p "$T/sys/bin" "$T/home/.bun/bin"
	ln "$AH/.bun/bin/bun" "$T/sys/bin/bun" 2>/dev/null || cp "$AH/.bun/bin/bun" "$T/sys/bin/bun" ||
		fail "copying bun to $T/sys/bin"
	ln -s "$omp_js" "$T/home/.bun/bin/omp"
	AH=$T/home
	start_model
	omp_models
	STATE_DIR=.omp AGENT_PATH=$T/sys/bin:$AH/.bun/bin run_real_agent -- omp -p --model fake/fake-model "Write the file, then clean up."
}

# Claude Code from npm: ~/.local/bin/claude -> ../lib/node_modules/
# @anthropic-ai/claude-code/bin/claude.exe, the native binary its install
# script takes from the optional @anthropic-ai/claude-code-linux-x64.
need_claude() {
	[ -x "$AH/.local/bin/claude" ] ||
		skip "claude (npm @anthropic-ai/claude-code) is not installed in $AH/.local/bin: HOME=$AH npm install -g --prefix ~/.local @anthropic-ai/claude-code@2.1.197 (.ci/run does it)"
}

# claude_env: the -e options of a turn against the fake model.  The payload
# has the caller's ids, and Claude Code refuses
# --dangerously-skip-permissions to root unless IS_SANDBOX=1 says it is
# sandboxed: the tests as root, and under `unshare -r` (.ci/run's nested
# tier), where the caller is uid 0 of its user namespace.
claude_env() {
	CLAUDE_ENV="-e ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT -e ANTHROPIC_API_KEY=x -e CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"
	[ "$(id -u)" -ne 0 ] || CLAUDE_ENV="$CLAUDE_ENV -e IS_SANDBOX=1"
}

# Claude Code through the agent profile, named (cow workspace, netless,
# the model through --forward), at the default isolation: its Bash tool
# writes the project file, empties the home and plants a command in
# ~/.claude/commands, which is held.  A settings file gives the rm -rf some
# of its state to remove.
test_agents_real_claude() {
	agent_home
	need_claude
	mkdir -p "$AH/.claude"
	[ -e "$AH/.claude/settings.json" ] || echo '{"cleanupPeriodDays": 30}' >"$AH/.claude/settings.json"
	start_model
	claude_env
	# shellcheck disable=SC2086,SC2088 # CLAUDE_ENV is words; HELD is isd's text
	STATE_DIR=".claude .claude.json" PLANTED=.claude/commands/planted.md HELD="~/.claude/commands: executable configuration" \
		run_real_agent --profile agent $CLAUDE_ENV -- claude -p --dangerously-skip-permissions "Write the file, then clean up."
}

# claude_turn N: turn N of Claude Code in $T/proj with the home $H, whose
# tool call only writes the project file; the turn must end with the
# tool's result returned and leave the file in the session only.
claude_turn() {
	cd "$T/proj" || fail "cd"
	# shellcheck disable=SC2086 # CLAUDE_ENV is words
	HOME=$H PATH=$H/.local/bin:/usr/bin:/bin XDG_STATE_HOME=$T/state XDG_CACHE_HOME=$T/cache \
		timeout 300 "$ISD" exec --profile agent --forward "$PORT:127.0.0.1:$PORT" $CLAUDE_ENV -- \
		claude -p --dangerously-skip-permissions "Write the file." >"$T/out" 2>"$T/err" </dev/null
	rc=$? err=$(cat "$T/err")
	expect_rc 0 "claude's turn $1 (model: $(cat "$T/model.log" 2>/dev/null))"
	[ "$(grep -c '"done": true' "$T/model.log")" -eq "$1" ] || fail "turn $1 never returned the tool's result (model: $(cat "$T/model.log"))"
	[ ! -e "$T/proj/created.txt" ] || fail "the project changed before isd apply"
	XDG_STATE_HOME=$T/state run_isd diff
	expect_rc 0 "isd diff after turn $1"
	expect_contains "$out" "+claude-was-here" "the tool's file in isd diff after turn $1"
	# Claude Code's own writes (transcript, ~/.claude.json and its backups,
	# shell snapshots) are state, not code: nothing is held.
	expect_not_contains "$out" "executable configuration" "claude's state after turn $1"
	XDG_STATE_HOME=$T/state run_isd apply
	expect_rc 0 "isd apply after turn $1"
	expect_eq "$(cat "$T/proj/created.txt")" claude-was-here "the applied file after turn $1"
	rm "$T/proj/created.txt"
}

# Claude Code keeps its state through the agent profile: in a home where
# it never ran (no ~/.claude, no ~/.claude.json; under the caller's home,
# so that the sandbox shows all but that state read-only), the first turn's
# transcript and configuration reach the host when the sandbox ends, and
# the second turn starts from them (the same first start time) and adds its
# own transcript.
test_agents_real_claude_state() {
	agent_home
	need_claude
	home_scratch
	H=$HOME_TMP
	mkdir -p "$H/.local/bin" "$T/proj" "$T/state"
	ln -s "$(readlink -f "$AH/.local/bin/claude")" "$H/.local/bin/claude"
	echo original >"$T/proj/README"
	start_model "echo claude-was-here >\"$T/proj/created.txt\"; echo wrote"
	at_teardown "kill $MODEL_PID 2>/dev/null"
	claude_env
	claude_turn 1
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["firstStartTime"])' "$H/.claude.json" >"$T/first" ||
		fail "the host's .claude.json after turn 1: $(cat "$H/.claude.json" 2>&1)"
	set -- "$H"/.claude/projects/*/*.jsonl
	expect_eq "$#" 1 "transcripts on the host after turn 1 ($(find "$H/.claude" 2>&1))"
	grep -q "Done: the file is written." "$1" || fail "the transcript lacks the turn's end: $(cat "$1")"
	claude_turn 2
	expect_eq "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["firstStartTime"])' "$H/.claude.json")" \
		"$(cat "$T/first")" "turn 2 read turn 1's ~/.claude.json"
	set -- "$H"/.claude/projects/*/*.jsonl
	expect_eq "$#" 2 "transcripts on the host after two turns"
}
