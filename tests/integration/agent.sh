# SPDX-License-Identifier: LGPL-2.1-or-later
# Profiles, the agent profile and finding the agent's command.

# A fake home with an npm-style agent whose script runs under an
# interpreter installed nvm-style, neither of them visible in the sandbox.
make_fake_agent_home() {
	home_scratch
	h=$HOME_TMP/home
	pkg=$h/.npm-global/lib/node_modules/@acme/agent
	node=$h/.nvm/versions/node/v1
	mkdir -p "$h/.local/bin" "$pkg/bin" "$pkg/lib" "$node/bin" "$T/proj"
	printf '#!/usr/bin/env fakenode\nd=${0%%/*}\necho "agent-ran $0 lib=$(cat $d/../lib/data)"\n' >"$pkg/bin/cli.js"
	echo package-data >"$pkg/lib/data"
	chmod +x "$pkg/bin/cli.js"
	printf '#!/bin/sh\nexec /bin/sh "$@"\n' >"$node/bin/fakenode"
	chmod +x "$node/bin/fakenode"
	ln -s ../../.npm-global/lib/node_modules/@acme/agent/bin/cli.js "$h/.local/bin/fake-agent"
	AGENT_PATH=$h/.local/bin:$node/bin:/usr/bin:/bin
}

json_get() {
	python3 -c "import json,sys; s=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"
}

test_command_resolution() {
	make_fake_agent_home
	HOME=$h PATH=$AGENT_PATH run_isd exec --profile none -- fake-agent
	expect_rc 0 "agent found on the caller's PATH"
	expect_contains "$out" "agent-ran $pkg/bin/cli.js lib=package-data"
	HOME=$h PATH=$AGENT_PATH run_isd exec --print-spec --profile none -- fake-agent
	command -v python3 >/dev/null || return 0
	printf '%s' "$out" | python3 -c '
import json, sys
s = json.load(sys.stdin)
pkg, node = sys.argv[1], sys.argv[2]
m = {x["destination"]: x for x in s["mounts"]}
nm = pkg[:pkg.index("/node_modules/") + len("/node_modules")]  # dependencies sit beside the package
assert m[nm]["readonly"] and m[nm]["origin"] == "command resolution", m
assert m[node]["readonly"] and m[node]["origin"] == "command resolution", m
assert s["command"][0] == pkg + "/bin/cli.js", s["command"]
assert any(e.startswith("PATH=" + node + "/bin:") for e in s["env"]), s["env"]
' "$pkg" "$node" || fail "print-spec of a resolved command: $out"
}

test_command_resolution_too_broad() {
	mkdir -p "$T/home"
	cp /bin/true "$T/home/mytool"
	echo HOME-SECRET >"$T/home/secret"
	# a program directly in the home: only the file, never the home
	HOME=$T/home PATH=$T/home:/usr/bin:/bin run_isd exec --profile none -- mytool
	expect_rc 0 "a program in HOME ($err)"
	HOME=$T/home PATH=$T/home:/usr/bin:/bin run_isd exec --print-spec --profile none -- mytool
	expect_contains "$out" "\"destination\": \"$T/home/mytool\""
	expect_not_contains "$out" "\"destination\": \"$T/home\""
	run_isd exec --profile none -- definitely-not-a-command-xyz
	expect_rc 127 "not found anywhere"
	expect_contains "$err" "nor on yours"
}

test_profile_precedence() {
	mkdir -p "$T/config/isd/profiles"
	cat >"$T/config/isd/profiles/mine.conf" <<'EOF'
# a comment
--hostname from-profile

--tmpfs /data:size=1m
-e FROM_PROFILE=yes
EOF
	XDG_CONFIG_HOME=$T/config run_isd exec --profile mine --hostname from-cli --tmpfs /data:size=2m -- sh -c 'hostname; df -k /data | tail -1; echo $FROM_PROFILE'
	expect_rc 0
	expect_contains "$out" from-cli "command line after --profile wins"
	expect_contains "$out" " 2048 " "command-line tmpfs replaces the profile's"
	expect_contains "$out" yes
	XDG_CONFIG_HOME=$T/config run_isd exec --hostname from-cli --profile mine -- hostname
	expect_eq "$out" from-profile "a profile after an option overrides it"
	XDG_CONFIG_HOME=$T/config run_isd exec --print-spec --profile mine --tmpfs /data:size=2m -- true
	printf '%s' "$out" | python3 -c '
import json, sys
s = json.load(sys.stdin)
o = s["origins"]
assert o["hostname"].startswith("profile ") and o["hostname"].endswith("/mine.conf:2"), o
m = {x["destination"]: x for x in s["mounts"]}
assert m["/data"]["origin"] == "command line", m["/data"]
assert s["profiles"] == ["mine"], s["profiles"]
' || fail "origins in print-spec: $out"
}

test_profile_expansion() {
	mkdir -p "$T/config/isd/profiles" "$T/work/dir"
	cat >"$T/config/isd/profiles/vars.conf" <<'EOF'
-e V_HOME=${HOME}
-e V_PWD=${PWD}
-e V_MANGLED=${PWD_MANGLED}
-e V_IDS=${UID}:${GID}
-e V_USER=${USER}
-e "V_SPACED=a b"
EOF
	(cd "$T/work/dir" && USER=tester XDG_CONFIG_HOME=$T/config "$ISD" exec --profile vars -- env) >"$T/out" 2>&1
	out=$(cat "$T/out")
	expect_contains "$out" "V_HOME=$HOME"
	expect_contains "$out" "V_PWD=$T/work/dir"
	expect_contains "$out" "V_MANGLED=$(printf '%s' "$T/work/dir" | tr / -)"
	expect_contains "$out" "V_IDS=$(id -u):$(id -g)"
	expect_contains "$out" "V_USER=tester"
	expect_contains "$out" "V_SPACED=a b"
}

test_profile_errors() {
	mkdir -p "$T/config/isd/profiles"
	printf -- '--hostname ok\ntmpfs /x\n' >"$T/config/isd/profiles/bad.conf"
	XDG_CONFIG_HOME=$T/config run_isd exec --profile bad -- true
	expect_rc 125 "bad line"
	expect_contains "$err" "bad.conf:2"
	printf -- '--hostname ok\n--frobnicate\n' >"$T/config/isd/profiles/unknown.conf"
	XDG_CONFIG_HOME=$T/config run_isd exec --profile unknown -- true
	expect_rc 125 "unknown option in a profile"
	expect_contains "$err" "unknown option '--frobnicate'"
	expect_contains "$err" "unknown.conf:2"
	printf -- '--hostname ${NOPE}\n' >"$T/config/isd/profiles/var.conf"
	XDG_CONFIG_HOME=$T/config run_isd exec --profile var -- true
	expect_rc 125 "unknown variable"
	expect_contains "$err" 'var.conf:1: unknown variable ${NOPE}'
	XDG_CONFIG_HOME=$T/config run_isd exec --profile no-such-profile -- true
	expect_rc 125 "missing profile"
	expect_contains "$err" "no-such-profile.conf"
	printf -- '--profile loop\n' >"$T/config/isd/profiles/loop.conf"
	XDG_CONFIG_HOME=$T/config run_isd exec --profile loop -- true
	expect_rc 125 "recursive profile"
	[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "one line: $err"
}

# The documented table of the agent profile, as --print-spec resolves it.
test_agent_profile_spec() {
	make_fake_agent_home
	(cd "$T/proj" && HOME=$h PATH=$AGENT_PATH ANTHROPIC_API_KEY=sk-test UNRELATED_SECRET=x \
		"$ISD" exec --print-spec -- omp) >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_rc 0 "print-spec of the agent profile"
	printf '%s' "$out" | python3 -c '
import json, sys
s = json.load(sys.stdin)
home, proj = sys.argv[1], sys.argv[2]
assert s["profiles"] == ["agent"] and s["agent"] == "omp", (s["profiles"], s.get("agent"))
m = {x["destination"]: x for x in s["mounts"]}
G = 1 << 30; M = 1 << 20
want = {"/tmp": (2*G, True), "/var/tmp": (100*M, False), "/run": (100*M, False),
        home + "/.cache": (2*G, False), home + "/.config": (100*M, False),
        home + "/.local/state": (100*M, False), home + "/go": (2*G, True)}
for d, (size, ex) in want.items():
    assert m[d]["type"] == "tmpfs" and m[d]["size"] == size and m[d]["exec"] == ex, (d, m[d])
    assert m[d]["nosuid"] and m[d]["nodev"] and m[d]["origin"].startswith("profile "), m[d]
assert m[home + "/.omp"]["type"] == "overlay" and m[home + "/.omp"]["agent_state"] and not m[home + "/.omp"]["readonly"], m
assert m[proj]["type"] == "overlay" and not m[proj]["readonly"] and m[proj]["source"] == proj, m
assert s["workspace"]["mode"] == "cow" and ".env" in s["workspace"]["masks"], s["workspace"]
assert s["workdir"] == proj
l = s["limits"]
assert l["memory"] == 4*G and l["memory_swap"] == 4*G and l["cpu_quota_us"] == 400000 and l["pids_limit"] == 512, l
assert l["enforcement"] == "strict"
assert s["origins"]["memory"].startswith("profile "), s["origins"]
env = dict(e.split("=", 1) for e in s["env"])
assert env["ANTHROPIC_API_KEY"] == "sk-test" and "UNRELATED_SECRET" not in env and "OPENAI_API_KEY" not in env, env
assert s["origins"]["env:ANTHROPIC_API_KEY"].startswith("profile "), s["origins"]
assert s["network"] == "netless", s["network"]
allowed = {(a["host"], a["port"]) for a in s["network_config"]["allow"]}
for h in ("api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com", "openrouter.ai"):
    assert (h, 443) in allowed, allowed
assert env["HTTPS_PROXY"] == "http://127.0.0.1:3128" and env["NO_PROXY"].startswith("localhost,127.0.0.1"), env
' "$h" "$T/proj" || fail "agent profile: $out"
	[ ! -e "$h/.omp" ] || fail "--print-spec created the agent's state directory"
	printf '%s' "$out" | grep -q '"create_if_missing": "directory"' || fail "state marked for creation: $out"
}

test_agent_profile_refuses_home_as_project() {
	make_fake_agent_home
	(cd "$h" && HOME=$h "$ISD" exec --print-spec -- claude) >"$T/out" 2>"$T/err"
	rc=$?
	err=$(cat "$T/err")
	expect_rc 125 "project = HOME"
	expect_contains "$err" "home directory"
	(cd "$T/proj" && HOME=$h "$ISD" exec --print-spec -- claude) >"$T/out" 2>"$T/err"
	grep -q "$h/.claude.json" "$T/out" || fail "claude's state file not bound: $(cat "$T/out")"
	(cd "$T/proj" && HOME=$h "$ISD" exec --profile agent --agent claude -- sh -c 'cat ~/.claude.json; ls -d ~/.claude') >"$T/out" 2>"$T/err"
	[ -d "$h/.claude" ] && [ -f "$h/.claude.json" ] || fail "claude state not created when the sandbox ran: $(cat "$T/err")"
	grep -q '{}' "$T/out" || fail "claude.json inside: $(cat "$T/out")"
}

# An agent with a state file directly in the home (Claude Code's
# ~/.claude.json, saved by a lock and a temporary file beside it): the
# home's top level is a writable tmpfs whose contents never reach the
# host, beneath the state, the project and the other binds.  The sandbox
# sees no more of the host's home than before: only what is bound.
home_top_check() {
	make_fake_agent_home
	P=$h/proj
	mkdir -p "$P"
	echo host-secret >"$h/secret"
	echo 'alias x=y' >"$h/.bashrc"
	echo readme >"$P/README"
	echo TOKEN=1 >"$P/.env"
	echo '{"kept": 0}' >"$h/.claude.json"
	(cd "$P" && HOME=$h "$ISD" exec --profile agent --agent claude "$@" -- sh -c '
		(echo x >~/newfile) 2>&1 && echo newfile-written
		cat ~/newfile ~/secret ~/.bashrc 2>&1
		ls -A ~ | tr "\n" " "; echo
		cat ./README; cat ./.env; echo env-end
		echo changed >./README
		echo "{\"kept\": 1}" >~/.claude.json' >"$T/out" 2>"$T/err")
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_rc 0 "the agent profile with a state file in the home"
	[ ! -e "$h/newfile" ] || fail "a write to HOME reached the host"
	expect_eq "$(cat "$h/secret")" host-secret "the host's file in HOME"
	expect_not_contains "$out" host-secret "the host's files in HOME are not shown"
	expect_not_contains "$out" "alias x=y" "the host's files in HOME are not shown"
	expect_not_contains "$out" ".nvm" "the host's directories in HOME are not shown"
	expect_contains "$out" readme "the project is visible"
	expect_contains "$out" "
env-end" "the project's .env stays masked"
	expect_eq "$(cat "$P/README")" readme "the project is copy-on-write"
	expect_contains "$err" "keeps 1 change"
	python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["kept"] == 1' "$h/.claude.json" ||
		fail "the state file's change did not reach the host: $(cat "$h/.claude.json")"
}

test_agent_home_top_discarded() {
	home_top_check
	expect_contains "$out" "newfile-written
x" "HOME's top level is writable inside"
	expect_contains "$out" "proj" "the project's mount point in HOME"
	(cd "$P" && HOME=$h "$ISD" exec --print-spec --profile agent --agent claude -- true) >"$T/out" 2>"$T/err"
	python3 -c '
import json, sys
m = {x["destination"]: x for x in json.load(open(sys.argv[1]))["mounts"]}
t = m[sys.argv[2]]
assert t["type"] == "tmpfs" and not t["exec"] and t["nosuid"] and t["nodev"] and t["size"] == 100 << 20, t
assert "discarded" in t["origin"], t' "$T/out" "$h" || fail "the home tmpfs in --print-spec: $(cat "$T/out")"
	(cd "$P" && HOME=$h "$ISD" exec --print-spec --profile agent --agent omp -- true) >"$T/out" 2>"$T/err"
	expect_not_contains "$(cat "$T/out")" "\"destination\": \"$h\"" "omp keeps no state file in the home"
}

# The landlock tier has no tmpfs: its private home stays read-only, the
# save fails EACCES, on which Claude Code writes the file in place,
# through the link to the store's copy.
test_agent_home_top_landlock() {
	run_isd exec --isolation landlock -- true
	[ "$rc" -eq 0 ] || skip "the landlock tier does not run here: $err"
	home_top_check --isolation landlock
	expect_contains "$out" "Permission denied" "HOME's top level stays read-only in the landlock tier"
	expect_not_contains "$out" newfile-written "HOME's top level stays read-only in the landlock tier"
}

test_agent_profile_runs() {
	make_fake_agent_home
	mkdir -p "$h/.omp"
	echo state >"$h/.omp/config"
	printf '[user]\n\tname = Test\n' >"$h/.gitconfig"
	(cd "$T/proj" && HOME=$h PATH=$AGENT_PATH "$ISD" exec --profile agent --agent omp -v "$PROBE:/probe:ro" -- \
		sh -c 'pwd; cat ~/.omp/config; touch ~/.omp/new ./made-inside; /probe write ~/not-allowed; /probe statfs ~/.cache; sed -n "s/.*name = //p" ~/.gitconfig; /probe write ~/.gitconfig; true' \
		) >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_rc 0 "agent profile run"
	expect_contains "$out" "$T/proj"
	expect_contains "$out" state
	# omp keeps no state file directly in the home: its top level stays
	# read-only, and nothing written there reaches the host
	expect_contains "$out" EROFS "the rest of HOME is read-only"
	[ ! -e "$h/not-allowed" ] || fail "a write to HOME reached the host"
	expect_contains "$out" "nosuid nodev noexec"
	expect_contains "$out" "Test" "git identity from ~/.gitconfig"
	[ "$(printf '%s\n' "$out" | tail -1)" = EROFS ] || fail "~/.gitconfig must be read-only inside: $out"
	[ -f "$h/.omp/new" ] || fail "state writes"
	# the project is copy-on-write: the write waits in a session
	[ ! -e "$T/proj/made-inside" ] || fail "a project write reached the host without isd apply"
	expect_contains "$err" "keeps 1 change"
	# limits are defaults there: at most one note when the host cannot enforce them
	[ "$(printf '%s\n' "$err" | grep -v "isd: session" | grep -c .)" -le 1 ] || fail "more than one line about limits: $err"
	if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
		expect_contains "$err" "isd: note: the profile's default limits --memory --cpus --pids-limit are not enforced"
		# an explicit request on the command line stays strict
		(cd "$T/proj" && HOME=$h "$ISD" exec --profile agent --agent omp --memory 1g -- true) >"$T/out" 2>"$T/err"
		rc=$?
		err=$(cat "$T/err")
		expect_rc 125 "explicit --memory on a host that cannot enforce it"
		expect_contains "$err" "--memory needs"
	fi
}

test_profile_command() {
	run_isd profile list
	expect_rc 0
	expect_contains "$out" agent
	expect_contains "$out" none
	run_isd profile show agent
	expect_rc 0
	expect_contains "$out" "--agent-state"
	mkdir -p "$T/config"
	XDG_CONFIG_HOME=$T/config EDITOR=true run_isd profile edit agent
	expect_rc 0
	# the user's file is an override that includes the installed profile,
	# so later updates of the installed one still reach the user
	grep -qx -- '--profile agent' "$T/config/isd/profiles/agent.conf" || fail "edit did not write an override: $(cat "$T/config/isd/profiles/agent.conf")"
	! grep -q -- '--agent-state' "$T/config/isd/profiles/agent.conf" || fail "edit copied the whole installed profile"
	echo '--allow api.example.test' >>"$T/config/isd/profiles/agent.conf"
	mkdir -p "$T/proj"
	(cd "$T/proj" && XDG_CONFIG_HOME=$T/config "$ISD" exec --print-spec --agent omp -- true) >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	expect_rc 0 "the override with the installed profile below it: $(cat "$T/err")"
	expect_contains "$out" "api.example.test" "the user's addition"
	expect_contains "$out" "api.anthropic.com" "the installed profile's allowlist, through the include"
	XDG_CONFIG_HOME=$T/config run_isd profile list
	expect_contains "$out" "$T/config/isd/profiles/agent.conf" "the user's file first"
	[ "$(printf '%s\n' "$out" | grep -c '^agent ')" -eq 1 ] || fail "profile list must leave out the hidden installed agent: $out"
	# a profile that includes its own name where nothing lies below
	mkdir -p "$T/config/isd/profiles"
	echo '--profile lonely' >"$T/config/isd/profiles/lonely.conf"
	XDG_CONFIG_HOME=$T/config run_isd exec --profile lonely -- true
	expect_rc 125
	expect_contains "$err" "no lonely.conf further down the search path"
	run_isd profile frob
	expect_rc 125
}

# isd doctor tells what is true on this host, in both forms.
test_doctor() {
	run_isd doctor --json
	[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "doctor exit status $rc: $err"
	printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
rc, fstype = int(sys.argv[1]), sys.argv[2]
c = {x["check"]: x for x in d["checks"]}
for name in ("kernel", "user namespaces", "fresh /proc", "seccomp", "cgroup v2 limits"):
    assert name in c, name
assert c["user namespaces"]["status"] == "ok", c["user namespaces"]
assert c["seccomp"]["status"] == "ok", c["seccomp"]
cg = c["cgroup v2 limits"]
if fstype != "cgroup2fs":
    # the agent profile runs there (its limits are defaults): a warning,
    # with a fix that fits the init of the host and names --limits best-effort
    assert cg["status"] == "warn" and ("cgroup v1" in cg["detail"] or "no cgroup v2" in cg["detail"]) and cg["fix"], cg
    assert "--limits best-effort" in cg["fix"], cg
    pid1 = open("/proc/1/comm").read().strip()
    assert pid1 == "systemd" or "systemd.unified_cgroup_hierarchy" not in cg["fix"], cg
assert d["agent_profile_ready"] == (rc == 0), (d["agent_profile_ready"], rc)
assert all(x["status"] in ("ok", "warn", "FAIL") for x in d["checks"])
' "$rc" "$(stat -f -c %T /sys/fs/cgroup)" || fail "doctor --json: $out"
	run_isd doctor
	expect_contains "$out" "user namespaces"
	expect_contains "$out" "isd exec --profile agent"
	# doctor's verdict on limits is isd exec's: the same planning code, the
	# same sentence when an explicit limit would be refused
	status=$(printf '%s\n' "$out" | sed -n 's/^cgroup v2 limits *\(ok\|warn\|FAIL\) .*/\1/p')
	run_isd exec --cpus 1 --memory 256m --pids-limit 100 -- true
	if [ "$status" = ok ]; then
		expect_rc 0 "doctor says limits work: $err"
	else
		expect_rc 125 "doctor says limits cannot be enforced"
		why=$(printf '%s\n' "$err" | sed -n 's/^isd: //p' | head -n1)
		run_isd doctor
		expect_contains "$out" "$why" "doctor gives the refusal isd exec gives"
	fi
	run_isd doctor
	# every row's status starts in the same column, however long its name
	cols=$(printf '%s\n' "$out" | sed -n 's/^\(.* \)\(ok\|warn\|FAIL\)  .*/\1/p' | awk '{ print length($0) }' | sort -u | wc -l)
	[ "$cols" -eq 1 ] || fail "doctor's status column is misaligned: $out"
	run_isd doctor --help
	expect_rc 0 "doctor --help"
	expect_contains "$out" "Usage: isd doctor"
	run_isd doctor --bogus
	expect_rc 125
	expect_contains "$err" "isd: doctor: unknown option '--bogus' (see isd doctor --help)"
}

# A host that cannot enforce the agent profile's default limits says so
# once per boot, not on every run.
test_limits_note_once_per_boot() {
	[ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ] || skip "this host runs cgroup v2: no note to give"
	home_scratch
	mkdir -p "$HOME_TMP/proj"
	for n in 1 2; do
		(cd "$HOME_TMP/proj" && HOME=$HOME_TMP "$ISD" exec --profile agent --agent omp --workspace .:rw -- true) >"$T/out" 2>"$T/err"
		rc=$?
		expect_rc 0 "agent run $n"
		eval "err$n=\$(cat \"\$T/err\")"
	done
	expect_contains "$err1" "default limits --memory --cpus --pids-limit are not enforced (said once per boot)"
	expect_not_contains "$err2" "not enforced" "the second run of the same boot"
	# and never with --limits best-effort, which accepts unenforced limits
	rm -rf "$HOME_TMP/.cache/isd/notes"
	(cd "$HOME_TMP/proj" && HOME=$HOME_TMP "$ISD" exec --profile agent --agent omp --workspace .:rw --limits best-effort -- true) >"$T/out" 2>"$T/err"
	expect_not_contains "$(cat "$T/err")" "not enforced" "with --limits best-effort"
}

# An error about the workspace names the profile line that set it, not the
# profile's last line.
test_error_names_the_line_that_set_it() {
	home_scratch
	line=$(grep -n '^--workspace' "$ISD_TEST_SRCDIR/profiles/agent.conf" | head -n1 | cut -d: -f1)
	[ -n "$line" ] || fail "no --workspace line in agent.conf"
	(cd "$HOME_TMP" && HOME=$HOME_TMP "$ISD" exec --profile agent --agent omp -- true) >"$T/out" 2>"$T/err"
	rc=$?
	err=$(cat "$T/err")
	expect_rc 125
	expect_contains "$err" "that is your home directory"
	expect_contains "$err" "agent.conf:$line)"
}

# --network on the command line replaces the agent profile's netless mode;
# the profile's allowlist goes with it, in one note, instead of an error
# that blames the user for --allow lines they never wrote.
test_network_on_command_line_overrides_profile() {
	mkdir -p "$T/proj"
	for mode in none host; do
		(cd "$T/proj" && "$ISD" exec --agent omp --workspace .:rw --network $mode -- sh -c 'echo ran') >"$T/out" 2>"$T/err"
		rc=$?
		out=$(cat "$T/out")
		err=$(cat "$T/err")
		expect_rc 0 "--network $mode over the agent profile: $err"
		expect_eq "$out" ran
		expect_contains "$err" "--network $mode from the command line replaces the profile's netless mode"
		expect_contains "$err" "agent.conf:"
	done
	# the user's own --allow with a mode that cannot use it is still an error
	(cd "$T/proj" && "$ISD" exec --agent omp --workspace .:rw --network none --allow api.example.test -- true) >"$T/out" 2>"$T/err"
	rc=$?
	expect_rc 125
	expect_contains "$(cat "$T/err")" "need --network netless"
	# without --network the profile's allowlist stays
	(cd "$T/proj" && "$ISD" exec --agent omp --workspace .:rw --print-spec -- true) >"$T/out" 2>"$T/err"
	expect_contains "$(cat "$T/out")" "api.anthropic.com"
}

# Package managers find somewhere to write in the agent profile's
# read-only home.
test_package_manager_scratch() {
	mkdir -p "$T/proj"
	(cd "$T/proj" && "$ISD" exec --agent omp --workspace .:rw -- sh -c '
		for d in .npm .cargo .local/share/pnpm .rustup .m2 .gradle .bun/install/cache .yarn .cache/pip; do
			mkdir -p "$HOME/$d/sub" && : >"$HOME/$d/sub/probe" || { echo "not writable: $d"; exit 1; }
		done
		echo ok') >"$T/out" 2>"$T/err"
	rc=$?
	expect_rc 0 "$(cat "$T/out") $(cat "$T/err")"
	expect_eq "$(cat "$T/out")" ok
}

# --allow @NAME names a shipped set of registry hosts.
test_allow_sets() {
	run_isd exec --network netless --allow @npm --allow @pypi --print-spec -- true
	expect_rc 0 "$err"
	expect_contains "$out" '"registry.npmjs.org"'
	expect_contains "$out" '"files.pythonhosted.org"'
	run_isd exec --network netless --allow @no-such-set -- true
	expect_rc 125
	expect_contains "$err" "--allow @no-such-set: no such set (known:"
	expect_contains "$err" "@npm"
	# a user's own set, beside their profiles
	mkdir -p "$T/config/isd/profiles/allow-sets"
	echo 'mirror.example.test' >"$T/config/isd/profiles/allow-sets/mine.allow"
	XDG_CONFIG_HOME=$T/config run_isd exec --network netless --allow @mine --print-spec -- true
	expect_rc 0 "$err"
	expect_contains "$out" '"mirror.example.test"'
}

# Started in a subdirectory of a repository, the agent gets the whole
# repository as its workspace (git works inside) and stays where it was.
test_workspace_is_the_repository_top() {
	command -v git >/dev/null || skip "git (git) is not installed"
	home_scratch
	mkdir -p "$HOME_TMP/repo/sub/deeper"
	git -C "$HOME_TMP/repo" init -q || fail "git init"
	(cd "$HOME_TMP/repo/sub/deeper" && HOME=$HOME_TMP "$ISD" exec --agent omp --workspace-keep -- sh -c 'pwd; git rev-parse --show-toplevel; touch ../../at-top') >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	expect_rc 0 "$(cat "$T/err")"
	expect_eq "$out" "$HOME_TMP/repo/sub/deeper
$HOME_TMP/repo"
	(cd "$HOME_TMP/repo/sub" && HOME=$HOME_TMP "$ISD" diff --name-only) >"$T/out" 2>"$T/err"
	expect_contains "$(cat "$T/out")" "at-top" "the change at the repository's top is in the session"
	# a repository in the home directory itself never makes the home the workspace
	git -C "$HOME_TMP" init -q
	mkdir -p "$HOME_TMP/plain"
	(cd "$HOME_TMP/plain" && HOME=$HOME_TMP "$ISD" exec --agent omp --print-spec -- true) >"$T/out" 2>"$T/err"
	rc=$?
	expect_rc 0 "$(cat "$T/err")"
	expect_contains "$(cat "$T/out")" "\"$HOME_TMP/plain\""
	expect_not_contains "$(cat "$T/out")" "\"path\": \"$HOME_TMP\""
}

# The ssh-agent recipe of the README: the agent's socket forwarded, the
# keys usable inside, the key files never there.
test_ssh_agent_recipe() {
	command -v ssh-agent >/dev/null && command -v ssh-keygen >/dev/null && command -v ssh-add >/dev/null ||
		skip "ssh-agent (openssh-client) is not installed"
	ssh-keygen -q -t ed25519 -N '' -C isd-test-key -f "$T/key" || fail "ssh-keygen"
	eval "$(ssh-agent -s -a "$T/agent.sock")" >/dev/null || fail "ssh-agent"
	at_teardown "kill $SSH_AGENT_PID"
	SSH_AUTH_SOCK=$T/agent.sock ssh-add -q "$T/key" 2>/dev/null || fail "ssh-add"
	run_isd exec --forward-unix /run/ssh-agent.sock:"$T/agent.sock" -e SSH_AUTH_SOCK=/run/ssh-agent.sock -- \
		sh -c 'ssh-add -l; cat '"$T/key"' 2>/dev/null || echo "no key file"'
	expect_rc 0 "$err"
	expect_contains "$out" "isd-test-key (ED25519)"
	expect_contains "$out" "no key file"
}

# The gpg-agent recipe of the README: the public keyring read-only, the
# agent's restricted (extra) socket forwarded; a commit signed inside
# verifies on the host, and no private key is visible inside.
test_gpg_agent_recipe() {
	command -v gpg >/dev/null && command -v gpgconf >/dev/null || skip "gpg (gnupg) is not installed"
	command -v git >/dev/null || skip "git (git) is not installed"
	G=$T/gnupg
	mkdir -m 700 "$G"
	export GNUPGHOME=$G
	gpg --batch --passphrase '' --quick-gen-key 'Isd Test <isd@test.invalid>' ed25519 sign never >/dev/null 2>&1 || fail "gpg key"
	at_teardown "GNUPGHOME=$G gpgconf --kill gpg-agent"
	gpgconf --launch gpg-agent || fail "gpg-agent"
	extra=$(gpgconf --list-dirs agent-extra-socket)
	key=$(gpg --list-secret-keys --with-colons | awk -F: '/^fpr/ { print $10; exit }')
	mkdir -p "$T/repo"
	git -C "$T/repo" init -q
	run_isd exec --tmpfs /run/gnupg:mode=0700 -v "$G/pubring.kbx:/run/gnupg/pubring.kbx:ro" \
		-v "$G/trustdb.gpg:/run/gnupg/trustdb.gpg:ro" --forward-unix "/run/gnupg/S.gpg-agent:$extra" \
		-e GNUPGHOME=/run/gnupg --workspace "$T/repo:rw" -- sh -c '
		ls /run/gnupg | grep -q private-keys && echo "private keys visible"
		git -c user.name=t -c user.email=isd@test.invalid -c user.signingkey='"$key"' -c gpg.program=gpg \
			commit -q -S --allow-empty -m signed-inside 2>&1 && echo committed'
	expect_rc 0 "$err"
	expect_eq "$out" committed
	git -C "$T/repo" verify-commit HEAD 2>"$T/verify" || fail "the signature does not verify on the host: $(cat "$T/verify")"
	expect_contains "$(cat "$T/verify")" "Good signature"
}
