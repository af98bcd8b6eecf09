# SPDX-License-Identifier: LGPL-2.1-or-later
# The workspace as the payload sees it: modes, copy-on-write, secret masks
# and protected git metadata.  (isd diff / apply / discard: session.sh.)

# A project with secrets, a symlink, a sub-directory and an executable.
make_project() {
	P=$T/proj
	mkdir -p "$P/sub/deep" "$P/.aws" "$P/config" "$P/certs"
	echo 'API_KEY=secret' >"$P/.env"
	echo 'DB=secret' >"$P/sub/.env.local"
	echo 'aws-secret' >"$P/.aws/credentials"
	echo 'real-secret' >"$P/config/prod.env"
	echo 'pem-secret' >"$P/certs/server.pem"
	echo 'notes' >"$P/notes.txt"
	echo 'deep' >"$P/sub/deep/file"
	printf '#!/bin/sh\necho hi\n' >"$P/run.sh"
	chmod 755 "$P/run.sh"
	ln -s notes.txt "$P/link"
	export XDG_STATE_HOME=$T/state XDG_CACHE_HOME=$T/cache
}

# Everything a change could alter: paths, types, modes, link targets and
# content hashes.
tree_digest() {
	(cd "$1" && find . -printf '%p %y %m %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum) | sha256sum
}

sessions() {
	ls "$XDG_STATE_HOME/isd/sessions" 2>/dev/null
}

test_workspace_rw_and_ro() {
	make_project
	run_isd exec --profile none --workspace "$P" -- sh -c 'pwd; echo new >made; cat notes.txt'
	expect_rc 0 "rw workspace"
	expect_contains "$out" "$P"
	expect_eq "$(cat "$P/made")" new "rw: the write reaches the host"
	run_probe --profile none --workspace "$P:ro" -- /probe write "$P/other"
	expect_contains "$out" EROFS "ro workspace"
	[ ! -e "$P/other" ] || fail "ro workspace written"
	run_isd exec --profile none --project "$P" -- pwd
	expect_eq "$out" "$P" "--project is --workspace DIR:rw"
}

test_workspace_bad_input_one_line() {
	make_project
	for args in "--workspace $P:bogus" "--mask .env" "--workspace $T/missing:cow" "--session 0123456789ab" \
		"--workspace $P --workspace-keep" "--project $P:cow"; do
		# shellcheck disable=SC2086
		run_isd exec --profile none $args -- true
		expect_rc 125 "$args"
		[ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] || fail "$args: not one line: $err"
	done
	run_isd exec --profile none --workspace "$P:bogus" -- true
	expect_contains "$err" "use DIR:rw, DIR:ro or DIR:cow"
	run_isd exec --profile none --mask .env -- true
	expect_contains "$err" "add --workspace"
	[ -z "$(sessions)" ] || fail "a refused start left a session: $(sessions)"
}

test_cow_rm_rf_leaves_host_untouched() {
	make_project
	before=$(tree_digest "$P")
	run_isd exec --profile none --workspace "$P:cow" -- sh -c \
		'rm -rf ./* ./.[!.]* 2>&1; ls -A | wc -l; echo changed >notes.txt; cat notes.txt'
	expect_rc 0 "rm -rf in a cow workspace"
	expect_eq "$(printf '%s\n' "$out" | sed -n 1p)" 0 "the sandbox saw an empty project"
	expect_contains "$out" changed
	expect_eq "$(tree_digest "$P")" "$before" "host project after rm -rf inside"
	id=$(sessions)
	[ -n "$id" ] || fail "no session kept for the changes"
	expect_contains "$err" "session $id keeps"
	[ -c "$XDG_STATE_HOME/isd/sessions/$id/upper/.env" ] || fail "no whiteout for .env in the upper layer"
}

test_cow_session_lifecycle() {
	make_project
	run_isd exec --profile none --workspace "$P:cow" -- cat notes.txt
	expect_rc 0
	[ -z "$(sessions)" ] || fail "a session without changes is kept: $(sessions)"
	expect_not_contains "$err" "session"
	run_isd exec --profile none --workspace "$P:cow" --workspace-keep -- true
	id=$(sessions)
	[ -n "$id" ] || fail "--workspace-keep did not keep the session"
	# a kept session without changes is not announced as "keeps 0 changes"
	expect_contains "$err" "is kept, with no change to $P"
	expect_not_contains "$err" "keeps 0 change"
	run_isd exec --profile none --session "$id" -- sh -c 'pwd; echo one >>log'
	expect_rc 0
	expect_contains "$out" "$P"
	run_isd exec --profile none --session "$id" -- cat log
	expect_eq "$out" one "re-entered session keeps its changes"
	[ ! -e "$P/log" ] || fail "a cow change reached the host"
	run_isd exec --profile none --session "$id" --workspace "$T" -- true
	expect_rc 125 "--session with another workspace"
	expect_contains "$err" "belongs to $P"
}

# The count at exit takes an upper layer it can read and finds empty as
# no change (no owner's view needed); one the payload made unreadable,
# with a change in it, is still counted and kept.
test_cow_change_count_unreadable_root() {
	make_project
	run_isd exec --profile none --workspace "$P:cow" -- sh -c 'chmod 0755 . && echo x >made && chmod 000 .'
	expect_rc 0
	expect_contains "$err" "keeps 1 change to $P" "a change below an unreadable root"
	run_isd exec --profile none --workspace "$P:cow" -- chmod 0700 .
	expect_rc 0
	expect_not_contains "$err" "keeps" "the root's own mode is no change"
}

test_cow_session_survives_kill() {
	make_project
	"$ISD" exec --profile none --workspace "$P:cow" -- sh -c 'echo kept >survivor; sleep 60' >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		[ -n "$(sessions)" ] && [ -e "$XDG_STATE_HOME/isd/sessions/$(sessions)/upper/survivor" ] && break
		sleep 0.1
	done
	kill -9 $pid
	wait $pid 2>/dev/null
	id=$(sessions)
	[ -n "$id" ] || fail "no session after kill -9"
	for _ in $(seq 50); do
		run_isd exec --profile none --session "$id" -- cat survivor
		[ "$rc" -eq 0 ] && break
		sleep 0.1
	done
	expect_rc 0 "re-entering the session of a killed isd"
	expect_eq "$out" kept
}

test_masks_hide_secrets() {
	make_project
	for mode in rw cow; do
		run_isd exec --profile none --workspace "$P:$mode" --mask .env --mask '.env.*' --mask '*.pem' --mask .aws/ -- sh -c '
			printf "[%s]" "$(cat .env)" "$(cat sub/.env.local)" "$(ls -A .aws)" "$(cat certs/server.pem)"; echo
			echo stolen >.env 2>/dev/null && echo WRITE
			rm -f .env 2>/dev/null && echo RM
			mv .env moved 2>/dev/null && echo MV
			touch .aws/new 2>/dev/null && echo TOUCH
			cat notes.txt'
		expect_rc 0 "masks ($mode)"
		expect_eq "$(printf '%s\n' "$out" | sed -n 1p)" "[][][][]" "masked files read as empty ($mode)"
		expect_not_contains "$out" WRITE
		expect_not_contains "$out" RM
		expect_not_contains "$out" MV
		expect_not_contains "$out" TOUCH
		expect_contains "$out" notes
		expect_eq "$(cat "$P/.env")" 'API_KEY=secret' "host .env ($mode)"
	done
	run_isd exec --profile none --workspace "$P" --mask '*.pem' --mask '.env*' --unmask '*.pem' -- cat certs/server.pem
	expect_eq "$out" pem-secret "--unmask"
}

test_mask_follows_symlink_target() {
	make_project
	rm "$P/.env"
	ln -s config/prod.env "$P/.env"
	run_isd exec --profile none --workspace "$P" --mask .env -- sh -c 'printf "[%s]" "$(cat .env)"'
	expect_eq "$out" "[]" "a masked link hides what it points to"
}

# A masked name that is a link to a directory (.env.d -> envs, a .ssh/ or
# .aws/ kept elsewhere in the project) hides the directory it names; it
# used to stop the sandbox ("mounting a file on .../.env.d: Is a directory").
test_mask_symlinked_directories() {
	make_project
	mkdir -p "$P/envs" "$P/keys" "$P/aws-real"
	echo 'TOKEN=secret' >"$P/envs/prod"
	echo 'ssh-secret' >"$P/keys/id_ed25519"
	echo 'aws-secret' >"$P/aws-real/credentials"
	ln -s envs "$P/.env.d"
	ln -s keys "$P/.ssh"
	rm -r "$P/.aws"
	ln -s aws-real "$P/.aws"
	for mode in rw cow; do
		run_isd exec --profile none --workspace "$P:$mode" --mask '.env.*' --mask .ssh/ --mask .aws/ -- sh -c '
			printf "[%s]" "$(ls -A .env.d/)" "$(ls -A .ssh/)" "$(ls -A .aws/)" "$(cat envs/prod 2>/dev/null)"; echo
			touch .ssh/new 2>/dev/null && echo TOUCH
			cat notes.txt'
		expect_rc 0 "masked links to directories ($mode)"
		expect_eq "$(printf '%s\n' "$out" | sed -n 1p)" "[][][][]" \
			"masked links to directories read as empty ($mode)"
		expect_not_contains "$out" TOUCH
		expect_contains "$out" notes
	done
}

test_masks_in_print_spec() {
	make_project
	run_isd exec --print-spec --profile none --workspace "$P:cow" --mask .env --mask '/sub/*' --mask .aws/ -- true
	expect_rc 0
	printf '%s' "$out" | python3 -c '
import json, sys
w = json.load(sys.stdin)["workspace"]
assert w["mode"] == "cow" and w["path"] == sys.argv[1], w
assert sorted(w["masked"]) == [".aws/", ".env", "sub/.env.local", "sub/deep/"], w["masked"]
' "$P" || fail "masked paths in --print-spec: $out"
	[ -z "$(sessions)" ] || fail "--print-spec created a session"
}

test_agent_profile_masks_and_cow() {
	make_project
	home_scratch
	(cd "$P" && HOME=$HOME_TMP "$ISD" exec --print-spec --profile agent --agent omp -- true) >"$T/out" 2>"$T/err"
	rc=$? err=$(cat "$T/err")
	expect_rc 0 "--print-spec under the agent profile"
	python3 -c '
import json, sys
w = json.load(open(sys.argv[1]))["workspace"]
assert w["mode"] == "cow", w
for m in ("certs/server.pem", ".env", ".aws/", "sub/.env.local"):
    assert m in w["masked"], (m, w["masked"])
assert "config/prod.env" not in w["masked"], w["masked"]
' "$T/out" || fail "agent profile workspace: $(cat "$T/out" "$T/err")"
}

init_repo() {
	command -v git >/dev/null || skip "git (git) is not installed"
	git -C "$P" init -q
	git -C "$P" -c user.email=t@t -c user.name=t commit -q --allow-empty -m init
	export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
}

test_git_metadata_protected() {
	make_project
	init_repo
	for mode in rw cow; do
		run_isd exec --profile none -e GIT_AUTHOR_NAME -e GIT_AUTHOR_EMAIL -e GIT_COMMITTER_NAME -e GIT_COMMITTER_EMAIL \
			--workspace "$P:$mode" -- sh -c '
			echo "echo pwned" >.git/hooks/pre-commit 2>/dev/null && echo HOOK
			git config core.hooksPath /tmp 2>/dev/null && echo CONFIG
			mv .git .git-old 2>/dev/null && echo MOVED
			rm -rf .git/hooks 2>/dev/null; [ -d .git/hooks ] || echo RMHOOKS
			echo x >>notes.txt && git add notes.txt && git commit -qm agent && echo COMMITTED'
		expect_rc 0 "git in the sandbox ($mode)"
		expect_not_contains "$out" HOOK "$mode: .git/hooks writable"
		expect_not_contains "$out" CONFIG "$mode: .git/config writable"
		expect_not_contains "$out" MOVED "$mode: .git could be renamed"
		expect_not_contains "$out" RMHOOKS "$mode: hooks removed"
		expect_contains "$out" COMMITTED "$mode: git commit inside"
		[ ! -e "$P/.git/hooks/pre-commit" ] || fail "$mode: hook reached the host"
	done
	expect_eq "$(git -C "$P" log -1 --format=%s)" agent "rw: the commit is in the host's repository"
	run_isd exec --profile none --workspace "$P" --git-writable -- sh -c 'echo "exit 0" >.git/hooks/pre-commit'
	expect_rc 0 "--git-writable"
	[ -f "$P/.git/hooks/pre-commit" ] || fail "--git-writable: hook not written"
}

test_git_worktree_pointer_readonly() {
	make_project
	init_repo
	git -C "$P" worktree add -q "$T/wt" 2>/dev/null || skip "git worktree unavailable"
	run_isd exec --profile none --workspace "$T/wt" -- sh -c 'echo "gitdir: /tmp/evil" >.git 2>/dev/null && echo WROTE; git status --short >/dev/null && echo STATUS'
	expect_not_contains "$out" WROTE "a worktree's .git pointer is read-only"
	case "$(cat "$T/wt/.git")" in gitdir:*"$P"*) ;; *) fail "worktree pointer changed: $(cat "$T/wt/.git")" ;; esac
}

# Inside a container, $XDG_STATE_HOME is often on the container's overlay,
# which cannot hold another overlay's upper layer: the cow workspace is a
# copy there (src/workspace-fallback.c), said in one note, and the session
# holds the change like any other.  (Before: one line with the fixes, and
# no run.)
test_cow_upper_on_overlay_copies() {
	make_project
	mkdir -p "$T/o/l" "$T/o/u" "$T/o/w" "$T/o/m"
	unshare -Urm true 2>/dev/null || skip "unshare -Urm not permitted here"
	unsafe=
	[ "$(id -u)" -ne 0 ] || unsafe=--unsafe-host-root # unshare -Ur as root maps only host root
	unshare -Urm sh -c '
		mount -t overlay -o "lowerdir=$1/l,upperdir=$1/u,workdir=$1/w,userxattr" ov "$1/m" || exit 77
		XDG_STATE_HOME=$1/m/state "$2" exec $4 --profile none --workspace "$3:cow" -- sh -c "echo new >g" >"$1/out" 2>"$1/err"
		echo $? >"$1/rc"
		cd "$3" && XDG_STATE_HOME=$1/m/state "$2" diff >"$1/diff" 2>&1' sh "$T/o" "$ISD" "$P" "$unsafe"
	[ -f "$T/o/rc" ] || skip "no overlayfs in a user namespace here"
	rc=$(cat "$T/o/rc")
	err=$(grep -v -e '^isd: warning: --unsafe-host-root' -e '^isd: session [0-9a-f]* keeps ' "$T/o/err")
	expect_rc 0 "cow workspace with sessions on an overlay"
	[ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] || fail "not one line: $err"
	expect_contains "$err" "isd: note: isd's store ("
	expect_contains "$err" "the cow workspace and the agent's state are copies"
	[ ! -e "$P/g" ] || fail "the change reached the project"
	expect_contains "$(cat "$T/o/diff")" "+new" "isd diff: $(cat "$T/o/diff")"
}

# A pattern that matches half the tree is a mistake: one line, nothing run.
test_masks_too_many_one_line() {
	make_project
	mkdir -p "$P/many"
	(cd "$P/many" && seq 4100 | sed 's/$/.log/' | xargs touch)
	run_isd exec --profile none --workspace "$P" --mask '*.log' -- echo ran
	expect_rc 125 "4100 masked paths"
	[ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] || fail "not one line: $err"
	expect_contains "$err" "more than 4096 paths match"
	expect_not_contains "$out" ran
	run_isd exec --profile none --workspace "$P" --mask '*.log' --unmask 'many/4*' --unmask 'many/1*' -- sh -c 'wc -c <many/2.log; wc -c <many/41.log'
	expect_rc 0 "--unmask brings it under the limit"
}

# git on the host must never run what the agent wrote ($T/pwned).
host_git_clean() {
	rm -f "$T/pwned"
	git -C "$P" status >/dev/null 2>&1
	[ ! -e "$T/pwned" ] || fail "$1: git on the host ran the agent's command"
}

# A rw workspace has no review, and the user watches the agent with git
# status on the host: a commondir sending git to a config of the agent's
# (core.fsmonitor) must not exist even while the run goes on.  It has a
# stand-in naming .git itself for the run, read-only, gone at the end.
test_git_commondir_rw() {
	make_project
	init_repo
	"$ISD" exec --profile none --workspace "$P:rw" -- sh -c "
		mkdir -p .git/c && cp -r .git/objects .git/refs .git/HEAD .git/c/
		printf '[core]\n\tfsmonitor = \"touch $T/pwned; false\"\n' >.git/c/config
		(printf 'c\n' >.git/commondir) 2>/dev/null && echo WROTE
		(mv .git/commondir .git/cd-old && mv .git/cd-old .git/commondir) 2>/dev/null && echo MOVED
		: >ready; while [ ! -e done ]; do sleep 0.1; done; echo end" >"$T/out" 2>"$T/err" </dev/null &
	pid=$!
	# In the workspace: the sandbox has its own /tmp.
	for _ in $(seq 100); do
		[ -e "$P/ready" ] || ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.1
	done
	[ -e "$P/ready" ] || fail "the payload did not start: $(cat "$T/err")"
	# The agent is still running: the host's git status sees its .git.
	git -C "$P" status >/dev/null 2>&1
	[ ! -e "$T/pwned" ] || fail "git status on the host ran the agent's core.fsmonitor during the run"
	expect_eq "$(cat "$P/.git/commondir")" . "the stand-in names .git itself"
	: >"$P/done"
	wait "$pid"
	rc=$? out=$(cat "$T/out") err=$(cat "$T/err")
	expect_rc 0
	expect_contains "$out" end
	expect_not_contains "$out" WROTE "rw: .git/commondir writable"
	expect_not_contains "$out" MOVED "rw: the commondir stand-in could be moved"
	[ ! -e "$P/.git/commondir" ] || fail "the commondir stand-in left on the host"
	host_git_clean "rw commondir, after the run"
	# A submodule's config and a linked worktree's commondir are covered
	# too, also against a rename of the directory above them.
	mkdir -p "$P/.git/modules/sub/hooks" "$P/.git/modules/sub/objects" "$P/.git/modules/sub/refs" "$P/.git/worktrees/w"
	printf '[core]\n\tbare = false\n' >"$P/.git/modules/sub/config"
	echo ref: refs/heads/main >"$P/.git/modules/sub/HEAD"
	echo ../.. >"$P/.git/worktrees/w/commondir"
	mkdir -p "$P/.git/info" && : >"$P/.git/info/attributes"
	run_isd exec --profile none --workspace "$P" -- sh -c '
		(echo "[core] fsmonitor = x" >>.git/modules/sub/config) 2>/dev/null && echo SUBCONFIG
		(echo x >.git/modules/sub/hooks/post-checkout) 2>/dev/null && echo SUBHOOK
		(echo .. >.git/modules/sub/commondir) 2>/dev/null && echo SUBCOMMONDIR
		(echo /tmp >.git/worktrees/w/commondir) 2>/dev/null && echo WTCOMMON
		(echo "* filter=x" >.git/info/attributes) 2>/dev/null && echo ATTR
		mv .git/modules/sub .git/modules/old 2>/dev/null && echo RENAMEDSUB
		mv .git/modules .git/m 2>/dev/null && echo RENAMEDMODULES
		mv .git/worktrees/w .git/worktrees/x 2>/dev/null && echo RENAMEDWT; true'
	expect_rc 0
	expect_not_contains "$out" SUBCONFIG "a submodule's config writable"
	expect_not_contains "$out" SUBHOOK "a submodule's hooks writable"
	expect_not_contains "$out" SUBCOMMONDIR "a submodule's commondir could be made"
	expect_not_contains "$out" WTCOMMON "a worktree's commondir writable"
	expect_not_contains "$out" ATTR "info/attributes writable"
	expect_not_contains "$out" RENAMED "a directory above a covered file renamed"
	[ ! -e "$P/.git/modules/sub/commondir" ] || fail "the submodule's commondir stand-in left on the host"
}

# Two rw runs of one project share the stand-ins: the first to end leaves
# them to the other (an unlink on the host would detach the other run's
# read-only bind), the last removes them.
test_git_standins_shared_rw() {
	make_project
	init_repo
	for n in 1 2; do
		"$ISD" exec --profile none --workspace "$P:rw" -- sh -c "
			: >ready$n; while [ ! -e done$n ]; do sleep 0.1; done
			(printf 'c\n' >.git/commondir) 2>/dev/null && echo WROTE; echo end" >"$T/out$n" 2>&1 </dev/null &
		eval "pid$n=\$!"
		for _ in $(seq 100); do
			[ -e "$P/ready$n" ] && break
			sleep 0.1
		done
		[ -e "$P/ready$n" ] || fail "run $n did not start: $(cat "$T/out$n")"
	done
	: >"$P/done1"
	wait "$pid1"
	expect_eq "$(cat "$P/.git/commondir" 2>/dev/null)" . "the stand-in kept for the run still going on"
	: >"$P/done2"
	wait "$pid2"
	expect_contains "$(cat "$T/out2")" end
	expect_not_contains "$(cat "$T/out2")" WROTE "the second run's stand-in was lost when the first ended"
	[ ! -e "$P/.git/commondir" ] || fail "the last run left the stand-in"
}

# The user's work in a rw workspace is on the host at once and whole:
# commits, a new branch, checkout, rebase, gc, a linked worktree, with the
# stand-ins in place.
test_git_agent_flow_rw() {
	make_project
	init_repo
	base=$(git -C "$P" rev-parse HEAD)
	run_isd exec --profile none -e GIT_AUTHOR_NAME -e GIT_AUTHOR_EMAIL -e GIT_COMMITTER_NAME -e GIT_COMMITTER_EMAIL \
		--workspace "$P:rw" -- sh -ec '
		git add -A && git commit -qm one
		git checkout -qb feature && echo f >f && git add f && git commit -qm feature
		git checkout -q - && echo m >m && git add m && git commit -qm two
		git checkout -q feature && git rebase -q - && git gc -q --prune=now
		git worktree add -q wt 2>/dev/null && git -C wt log -1 --format=%s
		git status --short; echo FLOW-OK'
	expect_rc 0 "the agent's git flow"
	expect_contains "$out" FLOW-OK
	expect_eq "$(git -C "$P" log --format=%s "$base"..feature | tr '\n' ' ')" "feature two one " "the rebased branch on the host"
	expect_eq "$(git -C "$P" rev-parse --abbrev-ref HEAD)" feature "HEAD on the host"
	git -C "$P" fsck --strict >"$T/fsck" 2>&1 || fail "git fsck on the host: $(cat "$T/fsck")"
	expect_eq "$(git -C "$P" status --porcelain --untracked-files=no)" "" "the host's index matches HEAD"
	expect_eq "$(git -C "$P/wt" log -1 --format=%s)" feature "the linked worktree on the host"
	for f in commondir config.worktree info/attributes; do
		[ ! -e "$P/.git/$f.isd-held" ] || fail "a legitimate flow had $f held"
	done
	[ ! -e "$P/.git/commondir" ] || fail "the commondir stand-in left on the host"
	expect_not_contains "$err" "held" "nothing held after a legitimate flow"
}

# git status in the project runs git in each submodule: a submodule's .git
# file rewritten during a rw run (to a repository with core.fsmonitor)
# would run the agent's command on the host's next git status.
test_git_submodule_pointer_rw() {
	make_project
	init_repo
	git init -q "$T/subsrc" && git -C "$T/subsrc" commit -q --allow-empty -m sub
	git -C "$P" -c protocol.file.allow=always submodule add -q "$T/subsrc" lib 2>"$T/sm" || skip "git submodule add unavailable: $(cat "$T/sm")"
	git -C "$P" commit -qm submodule
	"$ISD" exec --profile none --workspace "$P:rw" -- sh -c "
		git init -q --bare evil && git config -f evil/config core.bare false &&
		git config -f evil/config core.fsmonitor 'touch $T/pwned; false'
		(printf 'gitdir: ../evil\n' >lib/.git) 2>/dev/null && echo WROTE
		(mv lib/.git lib/old && mv lib/old lib/.git) 2>/dev/null && echo MOVED
		(mv lib lib2 && mv lib2 lib) 2>/dev/null && echo MOVEDDIR
		: >ready; while [ ! -e done ]; do sleep 0.1; done" >"$T/out" 2>"$T/err" </dev/null &
	pid=$!
	for _ in $(seq 100); do
		[ -e "$P/ready" ] || ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.1
	done
	[ -e "$P/ready" ] || fail "the payload did not start: $(cat "$T/err")"
	git -C "$P" status >/dev/null 2>&1
	[ ! -e "$T/pwned" ] || fail "git status on the host ran a command of the agent's through the submodule"
	: >"$P/done"
	wait "$pid"
	rc=$? out=$(cat "$T/out") err=$(cat "$T/err")
	expect_rc 0
	expect_not_contains "$out" WROTE "a submodule's .git file writable"
	expect_not_contains "$out" MOVED "a submodule's .git file or directory renamed"
	host_git_clean "submodule pointer, after the run"
}

# A repository the agent makes in a rw workspace (git init sub, a new
# submodule's git directory, a .git file pointing out) cannot be covered
# while the run goes on: at the end its executable configuration is held
# under a name the user sees, one line per repository.
test_git_new_repository_held_rw() {
	make_project
	init_repo
	run_isd exec --profile none -e GIT_AUTHOR_NAME -e GIT_AUTHOR_EMAIL -e GIT_COMMITTER_NAME -e GIT_COMMITTER_EMAIL \
		--workspace "$P:rw" -- sh -c "
		git init -q sub && git -C sub config core.fsmonitor 'touch $T/pwned; false' &&
		printf '#!/bin/sh\ntouch $T/pwned\n' >sub/.git/hooks/post-commit && chmod +x sub/.git/hooks/post-commit &&
		git init -q plain && echo INIT
		d=\$(printf 'esc\033[2Jape') && mkdir -p \"\$d\" && printf 'gitdir: /tmp/evil\n' >\"\$d/.git\"
		git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && echo GITLINK
		git init -q src2 && git -C src2 commit -q --allow-empty -m x &&
		git -c protocol.file.allow=always submodule add -q ./src2 mod 2>/dev/null &&
		git config -f .git/modules/mod/config core.sshCommand 'touch $T/pwned' && echo SUBMODULE"
	expect_rc 0
	expect_contains "$out" INIT
	expect_contains "$err" "in the repository $P/sub/.git (core.fsmonitor, hooks/post-commit): held config as config.isd-held, hooks as hooks.isd-held"
	expect_not_contains "$err" "$P/plain" "a repository without executable configuration is left alone"
	expect_contains "$err" "$P/esc^[[2Jape (.git pointing at /tmp/evil): held .git as .git.isd-held"
	expect_contains "$out" SUBMODULE
	expect_contains "$err" "in the repository $P/.git/modules/mod (core.sshcommand): held config as config.isd-held"
	[ "$(printf '%s\n' "$err" | grep -c 'held')" -eq 3 ] || fail "not one line per repository: $err"
	rm -f "$T/pwned"
	git -C "$P/sub" status >/dev/null 2>&1
	git -C "$P/sub" commit -q --allow-empty -m host >/dev/null 2>&1
	git -C "$P" status >/dev/null 2>&1
	[ ! -e "$T/pwned" ] || fail "git on the host ran the new repository's fsmonitor or hook"
	grep -q fsmonitor "$P/sub/.git/config.isd-held" || fail "the held config is not where the line says"
	# The same check runs again: what it held is not held twice, and a
	# config the user moves back (after review) is the user's.
	run_isd exec --profile none --workspace "$P:rw" -- true
	expect_not_contains "$err" "held" "held again"
}
# Where there was no repository, git init in a rw workspace would hand
# the host a config of the agent's.
test_git_new_repository_rw() {
	make_project
	command -v git >/dev/null || skip "git (git) is not installed"
	run_isd exec --profile none --workspace "$P" -- sh -c "
		git init -q 2>/dev/null && git config core.fsmonitor 'touch $T/pwned; false' 2>/dev/null && echo INIT
		mkdir .git/x 2>/dev/null && echo MKDIR; echo ok"
	expect_rc 0
	expect_not_contains "$out" INIT "rw: git init where there was no repository"
	expect_not_contains "$out" MKDIR "rw: the .git placeholder is writable"
	[ ! -e "$P/.git" ] || fail "the .git placeholder (or a repository) is left on the host"
	run_isd exec --profile none --workspace "$P" --git-writable -- sh -c 'git init -q && echo INIT'
	expect_contains "$out" INIT "--git-writable allows git init"
}

# The walk for new repositories is bounded; where it stops, it says so.
test_git_hold_walk_bounded_rw() {
	make_project
	init_repo
	deep=$(printf 'd/%.0s' $(seq 70))
	run_isd exec --profile none --workspace "$P:rw" -- sh -c "
		mkdir -p $deep && git init -q $deep/r && git -C $deep/r config core.fsmonitor 'touch $T/pwned; false' && echo DEEP"
	expect_rc 0
	expect_contains "$out" DEEP
	expect_contains "$err" "looked for git repositories the sandbox made or changed in $P down to 64 levels"
	expect_contains "$err" "find $P -name .git"
}

# core.hooksPath into the work tree (husky): the hooks directory is as
# read-only as .git/hooks, also when it does not exist yet.
test_git_hookspath_protected() {
	make_project
	init_repo
	git -C "$P" config core.hooksPath .husky/_
	for mode in rw cow; do
		run_isd exec --profile none --workspace "$P:$mode" -- sh -c "
			mkdir -p .husky/_ 2>/dev/null; printf '#!/bin/sh\ntouch $T/pwned\n' >.husky/_/pre-commit 2>/dev/null && echo HOOK
			echo x >.husky/other && echo WORKTREE"
		expect_rc 0
		expect_not_contains "$out" HOOK "$mode: a hook in core.hooksPath"
		expect_contains "$out" WORKTREE "$mode: the rest of the work tree is writable"
	done
	[ ! -e "$P/.husky/_/pre-commit" ] || fail "the hook reached the host"
	git -C "$P" -c user.name=u -c user.email=u@u commit -q --allow-empty -m probe
	[ ! -e "$T/pwned" ] || fail "git commit on the host ran the agent's hook"
}

# $m: the masked paths of a --print-spec run with the patterns of
# test_masks_hide_secrets plus id_rsa*, each in brackets, sorted.
masked_now() {
	run_isd exec --print-spec --profile none --workspace "$P:cow" --mask .env --mask '.env.*' --mask '*.pem' \
		--mask .aws/ --mask 'id_rsa*' -- true
	expect_rc 0 "--print-spec with masks"
	m=$(printf '%s' "$out" | python3 -c '
import json, sys
print(" ".join("[%s]" % p for p in sorted(json.load(sys.stdin)["workspace"]["masked"])))')
}

# The record: in the runtime directory when there is one of the caller's
# (some tests make one), else in the cache directory.
mask_dir() {
	echo "${XDG_RUNTIME_DIR:-$XDG_CACHE_HOME}/isd/masks"
}

mask_record() {
	ls "$(mask_dir)"/*.masks 2>/dev/null
}

# A tree whose directories the walk may reuse: its times older than the
# racy window (a directory changed in the last two seconds is read again).
settled_project() {
	make_project
	unset XDG_RUNTIME_DIR
	if [ "${1:-}" = run ]; then
		mkdir -m 0700 "$T/run"
		export XDG_RUNTIME_DIR=$T/run
	fi
	sleep 2.2
	masked_now
	first=$m
	[ -n "$(mask_record)" ] || fail "the walk left no record in $(mask_dir)"
}

# The walk's record of a project is reused only for directories that stat
# as they did: a secret added to an existing directory, a new directory,
# a rename into a masked name, a renamed directory are all seen at once.
test_mask_record_sees_changes() {
	settled_project run
	ino=$(stat -c %i "$(mask_record)")
	masked_now
	expect_eq "$m" "$first" "an unchanged tree, from the record"
	expect_eq "$(stat -c %i "$(mask_record)")" "$ino" "an unchanged tree leaves the record as it is"
	echo s >"$P/sub/deep/.env"
	masked_now
	expect_contains "$m" "[sub/deep/.env]" "a secret added to an existing directory"
	mkdir -p "$P/new/deeper"
	echo k >"$P/new/deeper/id_rsa"
	masked_now
	expect_contains "$m" "[new/deeper/id_rsa]" "a secret in a new directory"
	mv "$P/config/prod.env" "$P/config/.env.prod"
	masked_now
	expect_contains "$m" "[config/.env.prod]" "a file renamed into a masked name"
	mv "$P/sub" "$P/moved"
	masked_now
	expect_contains "$m" "[moved/.env.local]" "a renamed directory"
	expect_not_contains "$m" "[sub/.env.local]" "a renamed directory"
	rm "$P/link"
	ln -s certs "$P/link.pem"
	masked_now
	expect_contains "$m" "[link.pem]" "a link made in place of another"
}

# A payload of a rw workspace writes a secret and sets its directory's
# mtime back: the ctime, which user space cannot set, still differs.
test_mask_record_mtime_set_back() {
	settled_project
	run_isd exec --profile none --workspace "$P:rw" -- sh -c \
		'touch -r sub/deep sub/ref && echo s >sub/deep/id_rsa_new && touch -r sub/ref sub/deep && rm sub/ref && touch -r sub/deep sub'
	expect_rc 0 "the payload's change"
	masked_now
	expect_contains "$m" "[sub/deep/id_rsa_new]" "a secret behind a restored mtime"
}

# The patterns are part of the record's key: other patterns, another walk.
test_mask_record_per_patterns() {
	settled_project
	run_isd exec --print-spec --profile none --workspace "$P:cow" --mask 'notes*' -- true
	expect_rc 0
	expect_contains "$out" '"notes.txt"' "other patterns are not answered from the record"
}

# forge_record: the record rewritten to say that no directory holds a
# .env (the name ".env" replaced by ".xyz", the checksum made again):
# what a payload that could write isd's cache would do.
forge_record() {
	python3 - "$(mask_record)" <<'PY' || fail "cannot forge the record"
import struct, sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
key_len = struct.unpack_from("<I", d, 8)[0]
body = bytes(d[32 + key_len:]).replace(b"\x04\x00.env", b"\x04\x00.xyz")
d = d[:32 + key_len] + body
struct.pack_into("<Q", d, 24, 0)
h = 0xcbf29ce484222325
for b in d:
    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
struct.pack_into("<Q", d, 24, h)
open(p, "wb").write(d)
PY
}

# The record is trusted only when it is the caller's, in isd's own
# directories, not writable by others, not a link, intact; a forged one
# that is all of these is what guard.c keeps every sandbox from writing.
test_mask_record_foreign_ignored() {
	settled_project
	expect_contains "$first" "[.env]" "the secret before"
	forge_record
	masked_now
	expect_not_contains "$m" "[.env]" "the forged record is read (else this test proves nothing)"
	rec=$(mask_record)
	chmod 0620 "$rec"
	masked_now
	expect_contains "$m" "[.env]" "a group-writable record"
	forge_record
	chmod 0600 "$rec"
	chmod 0777 "$(mask_dir)"
	masked_now
	expect_contains "$m" "[.env]" "a record in a directory others can write"
	chmod 0700 "$(mask_dir)"
	forge_record
	mv "$rec" "$T/elsewhere"
	ln -s "$T/elsewhere" "$rec"
	masked_now
	expect_contains "$m" "[.env]" "a record that is a link"
	rm -f "$rec"
	masked_now
	forge_record
	printf 'x' | dd of="$(mask_record)" bs=1 seek=40 conv=notrunc 2>/dev/null
	masked_now
	expect_contains "$m" "[.env]" "a damaged record"
	# Machine root only: chown needs it.
	if [ "$(id -u)" -eq 0 ] && [ "$(awk 'NR == 1 {print $3}' /proc/self/uid_map)" = 4294967295 ]; then
		forge_record
		chown 65534 "$(mask_record)"
		masked_now
		expect_contains "$m" "[.env]" "a record owned by someone else"
	fi
}

# A mount inside the project shows as another device and inode at its
# path: the directory is read again when something is mounted over it, and
# when that goes away.
test_mask_record_mount_inside() {
	[ "$(id -u)" -eq 0 ] && [ "$(awk 'NR == 1 {print $3}' /proc/self/uid_map)" = 4294967295 ] ||
		skip "mounting inside the project needs isd's caller to be the host's root"
	settled_project
	mkdir "$T/other"
	echo s >"$T/other/.env"
	mount --bind "$T/other" "$P/sub/deep" || fail "cannot bind a directory into the project"
	at_teardown "umount '$P/sub/deep' 2>/dev/null"
	masked_now
	expect_contains "$m" "[sub/deep/.env]" "a secret on a mount made since the last walk"
	umount "$P/sub/deep"
	masked_now
	expect_not_contains "$m" "[sub/deep/.env]" "the mount gone"
	expect_eq "$m" "$first" "the mount gone"
}
