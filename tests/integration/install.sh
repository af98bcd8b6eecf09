# SPDX-License-Identifier: LGPL-2.1-or-later
# Agents as people install them (src/command.c): npm, bun, pnpm and native
# installers under the caller's home, found on the caller's PATH and bound
# read-only, and nothing else of the home beside them.  The installs are
# fake (shell scripts under the real file names), the layouts are real.

# A home with secrets beside where installers put agents.
install_home() {
	h=$T/home
	mkdir -p "$h/.local/bin" "$h/.local/share/keyrings" "$h/.cargo" "$h/proj"
	echo KEYRING-SECRET >"$h/.local/share/keyrings/login.keyring"
	echo CARGO-TOKEN >"$h/.cargo/credentials.toml"
	cd "$h/proj" || fail "cd"
}

# agent_script FILE INTERPRETER [DEPENDENCY]: a program that says it ran,
# reads a dependency of its installation and tries the home's secrets.
agent_script() {
	mkdir -p "${1%/*}"
	printf '#!%s\necho "ran $0"\n%s\ncat %s %s 2>/dev/null\nexit 0\n' "$2" \
		"${3:+cat $3 || echo missing-dependency}" "$h/.local/share/keyrings/login.keyring" "$h/.cargo/credentials.toml" >"$1"
	chmod +x "$1"
	[ -z "${3:-}" ] || { mkdir -p "${3%/*}"; echo dependency-data >"$3"; }
}

# fake_interpreter FILE: runs a script with /bin/sh (as bun or node would).
fake_interpreter() {
	mkdir -p "${1%/*}"
	printf '#!/bin/sh\nexec /bin/sh "$@"\n' >"$1"
	chmod +x "$1"
}

# run_agent NAME PATH: the agent by name as the user types it
run_agent() {
	HOME=$h PATH=$2 run_isd exec --profile none -- "$1"
	expect_rc 0 "$1 ($err)"
	expect_contains "$out" "ran "
	expect_not_contains "$out" "missing-dependency" "$1's dependencies"
	expect_not_contains "$out" "KEYRING-SECRET" "$1 must not see ~/.local/share"
	expect_not_contains "$out" "CARGO-TOKEN" "$1 must not see ~/.cargo"
}

spec_mounts() { # NAME PATH: the destinations bound for NAME, one a line
	HOME=$h PATH=$2 run_isd exec --print-spec --profile none -- "$1"
	expect_rc 0
	printf '%s' "$out" | python3 -c 'import json, sys
for m in json.load(sys.stdin)["mounts"]: print(m["destination"])'
}

# ~/.local/bin/agent, a script: only the file, never all of ~/.local.
test_install_local_bin_script() {
	install_home
	agent_script "$h/.local/bin/myagent" /bin/sh
	run_agent myagent "$h/.local/bin:/usr/bin:/bin"
	command -v python3 >/dev/null || return 0
	binds=$(spec_mounts myagent "$h/.local/bin:/usr/bin:/bin")
	expect_contains "$binds" "$h/.local/bin/myagent"
	expect_not_contains "$binds" "$h/.local
" "~/.local bound whole"
}

# npm install -g --prefix ~/.local bun: ~/.local/bin/bun is
# ../lib/node_modules/bun/bin/bun.exe, and omp's "#!/usr/bin/env bun" must
# find a bun; omp's dependencies sit beside it in node_modules.
test_install_bun_from_npm() {
	install_home
	nm=$h/.local/lib/node_modules
	fake_interpreter "$nm/bun/bin/bun.exe"
	ln -s ../lib/node_modules/bun/bin/bun.exe "$h/.local/bin/bun"
	agent_script "$nm/@oh-my-pi/pi-coding-agent/bin/omp.js" "/usr/bin/env bun" "$nm/@oh-my-pi/pi-natives/native.node"
	ln -s ../lib/node_modules/@oh-my-pi/pi-coding-agent/bin/omp.js "$h/.local/bin/omp"
	run_agent omp "$h/.local/bin:/usr/bin:/bin"
	command -v python3 >/dev/null || return 0
	HOME=$h PATH=$h/.local/bin:/usr/bin:/bin run_isd exec --print-spec --profile none -- omp
	printf '%s' "$out" | python3 -c 'import json, sys
s = json.load(sys.stdin)
nm = sys.argv[1]
m = {x["destination"]: x for x in s["mounts"]}
assert m["/run/isd/bin"]["readonly"] and m["/run/isd/bin"]["links"] == {"bun": nm + "/bun/bin/bun.exe"}, m
assert m[nm]["readonly"] and m[nm]["origin"] == "command resolution", m
assert [e for e in s["env"] if e.startswith("PATH=/run/isd/bin:")], s["env"]
assert not [d for d in m if d in (sys.argv[2] + "/.local", sys.argv[2] + "/.local/share")], m
' "$nm" "$h" || fail "print-spec of omp on bun from npm: $out"
}

# bun install -g, with bun from bun's installer (~/.bun/bin/bun) and with a
# system bun: the package's dependencies are beside it in bun's global
# node_modules.
test_install_bun_global() {
	install_home
	nm=$h/.bun/install/global/node_modules
	fake_interpreter "$h/.bun/bin/bun"
	agent_script "$nm/@oh-my-pi/pi-coding-agent/bin/omp.js" "/usr/bin/env bun" "$nm/@oh-my-pi/pi-natives/native.node"
	ln -s ../install/global/node_modules/@oh-my-pi/pi-coding-agent/bin/omp.js "$h/.bun/bin/omp"
	run_agent omp "$h/.bun/bin:/usr/bin:/bin"
	rm "$h/.bun/bin/bun"
	fake_interpreter "$T/sys/bin/bun"
	run_agent omp "$T/sys/bin:$h/.bun/bin:/usr/bin:/bin"
}

# Native installers: claude's versions directory, codex from cargo, pnpm's
# home with its shell shims.
test_install_native() {
	install_home
	agent_script "$h/.local/share/claude/versions/2.1.197" /bin/sh
	ln -s ../share/claude/versions/2.1.197 "$h/.local/bin/claude"
	run_agent claude "$h/.local/bin:/usr/bin:/bin"
	expect_contains "$out" "ran $h/.local/share/claude/versions/2.1.197"
	agent_script "$h/.cargo/bin/codex" /bin/sh
	run_agent codex "$h/.cargo/bin:/usr/bin:/bin"
	p=$h/.local/share/pnpm
	agent_script "$p/global/5/node_modules/@mariozechner/pi-coding-agent/dist/cli.js" /bin/sh \
		"$p/global/5/node_modules/.pnpm/dep@1/node_modules/dep/index.js"
	printf '#!/bin/sh\nbasedir=$(dirname "$0")\nexec /bin/sh "$basedir/global/5/node_modules/@mariozechner/pi-coding-agent/dist/cli.js" "$@"\n' >"$p/pi"
	chmod +x "$p/pi"
	run_agent pi "$p:/usr/bin:/bin"
}

# The agent named by its installed file (claude.exe) gets the agent profile.
test_install_agent_file_names() {
	install_home
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	exe=$h/.local/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe
	agent_script "$exe" /bin/sh
	HOME=$h PATH=/usr/bin:/bin run_isd exec --print-spec -- "$exe"
	expect_rc 0 "$exe"
	printf '%s' "$out" | python3 -c 'import json, sys
s = json.load(sys.stdin)
assert s.get("agent") == "claude" and s["profiles"] == ["agent"], (s.get("agent"), s["profiles"])' ||
		fail "$exe: not recognised as claude"
}

# spec_agent ARGS...: "AGENT PROFILES" of isd exec --print-spec ARGS.
spec_agent() {
	HOME=$h run_isd exec --print-spec "$@"
	expect_rc 0 "$* ($err)"
	got=$(printf '%s' "$out" | python3 -c 'import json, sys
s = json.load(sys.stdin)
state = [m["destination"] for m in s["mounts"] if m.get("agent_state")]
print(s.get("agent"), ",".join(s["profiles"]), ",".join(state))')
}

# codex as npm installs it (bin/codex.js on node, which runs the native
# binary in vendor/TRIPLE/codex/) and as cargo does: each way it is codex,
# with the agent profile and ~/.codex, also by a link of another name.
test_install_codex_layouts() {
	install_home
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	n=$h/.nvm/versions/node/v22.12.0
	pkg=$n/lib/node_modules/@openai/codex
	fake_interpreter "$n/bin/node"
	agent_script "$pkg/vendor/x86_64-unknown-linux-musl/codex/codex" /bin/sh
	mkdir -p "$pkg/bin"
	# JavaScript for a real node, shell for the fake one (where the
	# sandbox has no node of its own)
	cat >"$pkg/bin/codex.js" <<'EOF'
#!/usr/bin/env node
//bin/true; exec "${0%/bin/*}/vendor/x86_64-unknown-linux-musl/codex/codex" "$@"
const r = require("child_process").spawnSync(require("path").join(__dirname, "../vendor/x86_64-unknown-linux-musl/codex/codex"),
	process.argv.slice(2), {stdio: "inherit"});
process.exit(r.status === null ? 1 : r.status);
EOF
	chmod +x "$pkg/bin/codex.js"
	ln -s ../lib/node_modules/@openai/codex/bin/codex.js "$n/bin/codex"
	run_agent codex "$n/bin:/usr/bin:/bin"
	expect_contains "$out" "ran $pkg/vendor/x86_64-unknown-linux-musl/codex/codex" "npm's codex.js runs its native binary"
	ln -s "$pkg/bin/codex.js" "$h/.local/bin/cx"
	agent_script "$h/.cargo/bin/codex" /bin/sh
	for c in "$n/bin/codex" "$pkg/bin/codex.js" "$pkg/vendor/x86_64-unknown-linux-musl/codex/codex" \
		"$h/.local/bin/cx" "$h/.cargo/bin/codex"; do
		PATH=$n/bin:/usr/bin:/bin spec_agent -- "$c"
		expect_eq "$got" "codex agent $h/.codex" "$c"
	done
	PATH=$h/.local/bin:/usr/bin:/bin spec_agent -- cx
	expect_eq "$got" "codex agent $h/.codex" "cx on PATH, a link to codex.js"
	PATH=$h/.cargo/bin:/usr/bin:/bin spec_agent -- codex
	expect_eq "$got" "codex agent $h/.codex" "cargo's codex"
	# pi's bin (dist/cli.js) says nothing by its name: its package does.
	p=$h/.local/lib/node_modules/@mariozechner/pi-coding-agent
	agent_script "$p/dist/cli.js" /bin/sh
	ln -s ../lib/node_modules/@mariozechner/pi-coding-agent/dist/cli.js "$h/.local/bin/pi-dev"
	PATH=$h/.local/bin:/usr/bin:/bin spec_agent -- pi-dev
	expect_eq "$got" "pi agent $h/.pi" "a link to pi's dist/cli.js"
	agent_script "$h/.local/bin/mytool" /bin/sh
	PATH=$h/.local/bin:/usr/bin:/bin spec_agent -- mytool
	expect_eq "$got" "None  " "another program is no agent"
}

# Version managers' shims find the tool through the manager's home: volta's
# ~/.volta/bin/codex is a link to volta-shim, which runs the package from
# ~/.volta/tools/; asdf's ~/.asdf/shims/node is a script that runs asdf.
test_install_version_manager_shims() {
	install_home
	v=$h/.volta
	agent_script "$v/tools/image/packages/@openai/codex/bin/codex" /bin/sh
	mkdir -p "$v/bin"
	printf '#!/bin/sh\nexec "%s/tools/image/packages/@openai/codex/bin/${0##*/}" "$@"\n' "$v" >"$v/bin/volta-shim"
	chmod +x "$v/bin/volta-shim"
	ln -s volta-shim "$v/bin/codex"
	run_agent codex "$v/bin:/usr/bin:/bin"
	a=$h/.asdf
	agent_script "$a/installs/nodejs/20.0.0/bin/agent-tool" /bin/sh
	mkdir -p "$a/shims" "$a/bin"
	printf '#!/bin/sh\nexec "%s/installs/nodejs/20.0.0/bin/$1"\n' "$a" >"$a/bin/asdf"
	printf '#!/bin/sh\nexec "%s/bin/asdf" agent-tool "$@"\n' "$a" >"$a/shims/agent-tool"
	chmod +x "$a/bin/asdf" "$a/shims/agent-tool"
	run_agent agent-tool "$a/shims:/usr/bin:/bin"
}
