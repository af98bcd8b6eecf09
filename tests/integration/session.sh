# SPDX-License-Identifier: LGPL-2.1-or-later
# isd diff, apply, discard and session list on the sessions that
# `isd exec --workspace DIR:cow` leaves.  (The workspace itself as the
# sandbox sees it: workspace.sh.)

# A project with one of everything a change can touch.
make_project() {
	P=$T/proj
	mkdir -p "$P/d" "$P/big"
	printf 'one\ntwo\nthree\n' >"$P/a.txt"
	echo bye >"$P/gone.txt"
	echo keep >"$P/keep.txt"
	printf '#!/bin/sh\necho run\n' >"$P/run.sh"
	chmod 755 "$P/run.sh"
	echo plain >"$P/plain.sh"
	echo f >"$P/d/f"
	for i in $(seq 50); do echo "$i" >"$P/big/$i"; done
	ln -s a.txt "$P/link"
	ln -s a.txt "$P/tofile"
	export XDG_STATE_HOME=$T/state
	# A session starts at a coarse clock tick: a file changed within the
	# tick before it counts as changed during it.
	sleep 0.05
}

# Everything apply must reproduce: paths, types, modes, link targets and
# contents (run in the directory to digest).
DIGEST='{ find . -printf "%p %y %m %l\n" | LC_ALL=C sort; find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum; } | sha256sum'

tree_digest() {
	(cd "$1" && sh -c "$DIGEST")
}

sessions() {
	ls "$XDG_STATE_HOME/isd/sessions" 2>/dev/null | grep -v '^\.'
}

# Every kind of change, then the digest of what the sandbox sees.
CHANGES='
	printf "one\nTWO\nthree\n" >a.txt
	rm gone.txt
	chmod 644 run.sh
	chmod 755 plain.sh
	mv d d2
	rm -rf big
	ln -sfn gone.txt link
	rm tofile && echo nowfile >tofile
	ln -s a.txt newlink
	echo s >"sp ace"
	echo n >"$(printf "new\nline")"
	echo c >"$(printf "caf\351")"
	exec 3<>keep.txt
	mkdir emptydir
'

# Runs CHANGES in a cow session of $P: $id is the session, $inside the
# digest of the sandbox's view.
cow_changes() {
	run_isd exec --profile none --workspace "$P:cow" -- sh -c "$CHANGES
		$DIGEST"
	expect_rc 0 "the changes in the sandbox (stderr: $err)"
	inside=$out
	id=$(sessions)
	[ -n "$id" ] || fail "no session kept"
	expect_contains "$err" "session $id keeps 14 changes to $P: isd diff $id, isd apply $id, isd discard $id"
}

test_diff_lists_every_change() {
	make_project
	before=$(tree_digest "$P")
	cow_changes
	expect_eq "$(tree_digest "$P")" "$before" "the host project during the session"
	run_isd diff "$id" --name-only
	expect_rc 0 "diff --name-only"
	expect_eq "$out" "$({ printf 'M\ta.txt\n'; for i in $(seq 50); do printf 'D\tbig/%s\n' "$i"; done | LC_ALL=C sort
		printf '%s\n' 'A	"caf\351"' 'D	d/f' 'A	d2/f' 'A	emptydir/' \
		'D	gone.txt' 'M	link' 'A	"new\nline"' 'A	newlink' 'M	plain.sh' 'M	run.sh' 'A	sp ace' 'T	tofile'; })" \
		"diff --name-only: every deleted file"
	run_isd diff "$id"
	expect_rc 0 "diff"
	for want in "$(printf 'diff --git a/big/37 b/big/37\ndeleted file mode 100644')" \
		"$(printf 'diff --git a/d/f b/d/f\ndeleted file mode 100644')" \
		"$(printf 'diff --git a/run.sh b/run.sh\nold mode 100755\nnew mode 100644')" \
		"$(printf 'diff --git a/plain.sh b/plain.sh\nold mode 100644\nnew mode 100755')" \
		"$(printf -- '-two\n+TWO')" \
		"$(printf 'diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644')" \
		"$(printf 'diff --git a/newlink b/newlink\nnew file mode 120000')" \
		"$(printf -- '-a.txt\n\\ No newline at end of file\n+gone.txt\n\\ No newline at end of file')" \
		"$(printf 'diff --git a/tofile b/tofile\ndeleted file mode 120000')" \
		"$(printf 'diff --git a/tofile b/tofile\nnew file mode 100644')" \
		'diff --git "a/new\nline" "b/new\nline"' '+++ "b/caf\351"' '+++ b/sp ace' 'new empty directory emptydir/'; do
		expect_contains "$out" "$want" "diff"
	done
	expect_not_contains "$out" "keep.txt" "a copy-up without change"
	# PATHs inside a deleted tree show its files; from a subdirectory, no ID.
	mkdir "$P/sub"
	(cd "$P/sub" && "$ISD" diff -- ../big/7 ../a.txt) >"$T/out" 2>"$T/err" || fail "diff from a subdirectory: $(cat "$T/err")"
	out=$(cat "$T/out")
	expect_contains "$out" "$(printf 'diff --git a/big/7 b/big/7\ndeleted file mode 100644')" "diff PATH in a tree"
	expect_contains "$out" "+TWO" "diff PATH"
	expect_not_contains "$out" "run.sh" "diff PATH selects"
	rmdir "$P/sub"
	run_isd diff "$id" --stat
	expect_contains "$out" " a.txt " "--stat"
	expect_contains "$out" "| 2 +-" "--stat"
	expect_contains "$out" "63 files changed" "--stat"
	# The whole patch is git's: git apply turns a copy into the sandbox's
	# view (but for the empty directory, which git cannot carry).
	command -v git >/dev/null || return 0
	cp -a "$P" "$T/copy"
	run_isd diff "$id" -- .
	printf '%s\n' "$out" >"$T/patch"
	(cd "$T/copy" && git apply "$T/patch") || fail "git apply of isd diff failed"
	mkdir "$T/copy/emptydir"
	expect_eq "$(tree_digest "$T/copy")" "$inside" "git apply of isd diff"
}

test_apply_makes_host_equal_sandbox() {
	make_project
	cow_changes
	run_isd apply "$id"
	expect_rc 0 "apply"
	expect_contains "$out" "applied"
	expect_contains "$out" "session $id has no changes left and is removed"
	expect_eq "$(tree_digest "$P")" "$inside" "the host project after apply"
	[ -z "$(sessions)" ] || fail "session left after a full apply: $(sessions)"
	run_isd session list
	expect_rc 0
	expect_not_contains "$out" "$id"
}

test_rm_rf_then_apply_and_discard() {
	make_project
	before=$(tree_digest "$P")
	run_isd exec --profile none --workspace "$P:cow" -- sh -c 'rm -rf ./* ./.[!.]* 2>&1; ls -A | wc -l'
	expect_rc 0
	expect_eq "$out" 0 "the sandbox saw an empty project"
	expect_eq "$(tree_digest "$P")" "$before" "the host after rm -rf inside"
	id=$(sessions)
	run_isd diff "$id" --name-only
	expect_eq "$(printf "%s\n" "$out" | grep -c "^D")" "$(find "$P" ! -type d | wc -l)" "every file deleted: $out"
	# discard: the session goes, the project stays.
	run_isd discard "$id"
	expect_rc 0 "discard"
	expect_contains "$out" "discarded session $id"
	[ -z "$(sessions)" ] || fail "discard left $(sessions)"
	expect_eq "$(tree_digest "$P")" "$before" "the host after discard"
	# Once more, applied this time.
	run_isd exec --profile none --workspace "$P:cow" -- sh -c 'rm -rf ./* ./.[!.]*'
	cd "$P" || fail "cd $P"
	run_isd apply
	cd "$T" || fail "cd $T"
	expect_rc 0 "apply without ID from the project (stderr: $err)"
	[ -z "$(ls -A "$P")" ] || fail "apply of rm -rf left: $(ls -A "$P")"
}

test_apply_refuses_host_changes() {
	make_project
	run_isd exec --profile none --workspace "$P:cow" -- sh -c 'echo sandbox >a.txt; echo sandbox >plain.sh; echo new >big/new'
	id=$(sessions)
	sleep 0.05
	echo host >"$P/a.txt"
	# A symlink out of the project where the session has a directory.
	mkdir "$T/outside"
	mv "$P/big" "$T/big.moved"
	ln -s "$T/outside" "$P/big"
	run_isd apply "$id"
	expect_rc 1 "apply with host changes"
	expect_contains "$err" "refused a.txt: changed on the host since the session started"
	expect_contains "$err" "refused big:"
	expect_contains "$err" "refused 2 changes (listed above); nothing was applied"
	expect_eq "$(cat "$P/a.txt")" host "a refused file is untouched"
	expect_eq "$(cat "$P/plain.sh")" plain "all or nothing: the others are not applied either"
	[ -z "$(ls -A "$T/outside")" ] || fail "apply wrote through a symlink: $(ls -A "$T/outside")"
	run_isd diff "$id" --name-only
	expect_eq "$out" "$(printf 'M\ta.txt\nT\tbig/\nA\tbig/new\nM\tplain.sh')" "what is left"
	run_isd apply "$id" --force a.txt plain.sh
	expect_rc 0 "apply --force PATH"
	expect_eq "$(cat "$P/a.txt")" sandbox "--force"
	expect_eq "$(cat "$P/plain.sh")" sandbox "PATH"
	expect_contains "$out" "keeps 2 changes"
	[ -z "$(ls -A "$T/outside")" ] || fail "apply wrote through a symlink"
}

test_running_session_refused_then_kill() {
	make_project
	"$ISD" exec --profile none --workspace "$P:cow" -- sh -c 'echo kept >survivor; sleep 60' >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		id=$(sessions)
		[ -n "$id" ] && [ -e "$XDG_STATE_HOME/isd/sessions/$id/upper/survivor" ] && break
		sleep 0.1
	done
	run_isd session list
	expect_contains "$out" "$id"
	expect_contains "$out" running "session list"
	run_isd apply "$id"
	expect_rc 125 "apply of a running session"
	expect_contains "$err" "session $id ($P) is running"
	run_isd discard "$id"
	expect_rc 125 "discard of a running session"
	run_isd diff "$id" --name-only
	expect_eq "$out" "A	survivor" "diff of a running session"
	kill -9 $pid
	wait $pid 2>/dev/null
	for _ in $(seq 50); do
		run_isd apply "$id"
		[ "$rc" -ne 125 ] && break
		sleep 0.1
	done
	expect_rc 0 "apply after kill -9 (stderr: $err)"
	expect_eq "$(cat "$P/survivor")" kept "applied after kill -9"
}

test_session_list_json_and_errors() {
	make_project
	run_isd exec --profile none --workspace "$P:cow" -- sh -c 'echo x >x; dd if=/dev/zero of=blob bs=1k count=64 2>/dev/null'
	id=$(sessions)
	run_isd session list --json
	expect_rc 0
	printf '%s' "$out" | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert len(s) == 1, s
s = s[0]
assert s["id"] == sys.argv[1] and s["project"] == sys.argv[2], s
assert s["state"] == "stopped" and s["changes"] == 2 and s["upper_bytes"] >= 65536, s
assert s["command"] == ["sh", "-c", "echo x >x; dd if=/dev/zero of=blob bs=1k count=64 2>/dev/null"], s
' "$id" "$P" || fail "session list --json: $out"
	run_isd session list
	expect_contains "$out" "$id"
	expect_contains "$out" stopped
	for args in "discard ffffffffffff" "discard zz" "apply ffffffffffff" "session bogus" "diff --bogus" \
		"apply --bogus" "discard --bogus" "discard a b" "diff --color=sometimes"; do
		# shellcheck disable=SC2086
		run_isd $args
		expect_rc 125 "$args"
		[ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] || fail "$args: not one line: $err"
	done
	(cd "$T" && "$ISD" diff) >/dev/null 2>"$T/err"
	expect_contains "$(cat "$T/err")" "no session for $T"
}

# Colour as git has it with --color, none in a pipe by default or with
# NO_COLOR; stripping the escapes gives the plain patch back.
test_diff_color() {
	make_project
	cow_changes
	run_isd diff "$id" -- a.txt
	plain=$out
	expect_not_contains "$plain" "$(printf '\033')" "no colour in a pipe"
	run_isd diff --color "$id" -- a.txt
	expect_contains "$out" "$(printf '\033[31m-two\033[m')" "removal in red"
	expect_contains "$out" "$(printf '\033[32m+TWO\033[m')" "addition in green"
	expect_contains "$out" "$(printf '\033[36m@@')" "hunk header in cyan"
	expect_eq "$(printf '%s\n' "$out" | sed 's/\x1b\[[0-9;]*m//g')" "$plain" "the text under the colour"
	run_isd diff --color=never "$id" -- a.txt
	expect_eq "$out" "$plain" "--color=never"
	run_isd diff --color=sometimes "$id"
	expect_rc 125 "a bad --color value"
}

# What the project's .gitignore ignores (build outputs, dependencies) is
# counted, not shown, unless asked for; deletions always show; apply takes
# everything.
test_diff_hides_ignored() {
	make_project
	command -v git >/dev/null || skip "git (git) is not installed"
	printf 'build/\n*.o\n' >"$P/.gitignore"
	echo old >"$P/old.o"
	git -C "$P" init -q
	sleep 0.05
	run_isd exec --profile none --workspace "$P:cow" -- sh -c '
		mkdir -p build/deep && echo bin >build/deep/out && echo 1 >build/x
		echo obj >new.o && rm old.o && echo CHANGED >keep.txt'
	expect_rc 0
	id=$(sessions)
	run_isd diff --name-only "$id"
	expect_eq "$out" "$(printf 'M\tkeep.txt\nD\told.o')" "ignored additions hidden, the deletion shown"
	expect_contains "$err" "3 changed files that the project's .gitignore ignores not shown"
	run_isd diff --name-only --ignored "$id"
	expect_eq "$out" "$(printf 'A\tbuild/deep/out\nA\tbuild/x\nM\tkeep.txt\nA\tnew.o\nD\told.o')" "--ignored"
	expect_not_contains "$err" "ignores"
	run_isd diff --name-only "$id" -- build
	expect_eq "$out" "$(printf 'A\tbuild/deep/out\nA\tbuild/x')" "a PATH selects ignored files"
	run_isd apply "$id"
	expect_rc 0
	expect_contains "$err" "3 changes that the project's .gitignore ignores not applied"
	[ ! -e "$P/build" ] && [ ! -e "$P/new.o" ] && [ ! -e "$P/old.o" ] && [ "$(cat "$P/keep.txt")" = CHANGED ] ||
		fail "apply takes what is not ignored, and deletions"
	run_isd apply --include-ignored "$id"
	expect_rc 0
	[ -f "$P/build/deep/out" ] && [ -f "$P/new.o" ] || fail "apply --include-ignored takes ignored changes"
}

# An agent's commits are dozens of files under .git: diff shows which
# branches and tags moved and the new commits' subjects instead; PATHs
# and --name-only still reach every file.
test_diff_summarizes_git() {
	make_project
	command -v git >/dev/null || skip "git (git) is not installed"
	git -C "$P" init -q -b main 2>/dev/null || git -C "$P" init -q
	git -C "$P" checkout -q -B main
	git -C "$P" add -A
	git -C "$P" -c user.name=u -c user.email=u@u commit -qm base
	base=$(git -C "$P" rev-parse --short=7 HEAD)
	sleep 0.05
	run_isd exec --profile none -e GIT_AUTHOR_NAME=a -e GIT_AUTHOR_EMAIL=a@a -e GIT_COMMITTER_NAME=a \
		-e GIT_COMMITTER_EMAIL=a@a --workspace "$P:cow" -- sh -c '
		echo more >>keep.txt && git commit -qam "Second: keep more"
		git checkout -qb topic && echo t >t.txt && git add t.txt && git commit -qm "Topic work" && git tag v1
		git checkout -q main'
	expect_rc 0 "commits in a cow workspace"
	id=$(sessions)
	run_isd diff "$id"
	expect_contains "$out" "git metadata .git/: "
	expect_contains "$out" "$(printf '  branch main: %s -> ' "$base")"
	expect_contains "$out" "Second: keep more"
	expect_contains "$out" "  branch topic: new at "
	expect_contains "$out" "Topic work"
	expect_contains "$out" "  tag v1: new at "
	expect_contains "$out" "diff --git a/keep.txt b/keep.txt"
	expect_not_contains "$out" "diff --git a/.git/" "no patches of git's own files"
	[ "$(printf '%s\n' "$out" | grep -c 'Topic work')" -eq 2 ] || fail "topic's commit under topic and v1 only: $out"
	run_isd diff --stat "$id"
	expect_contains "$out" "changed files of git metadata"
	run_isd diff "$id" -- .git/refs/heads/main
	expect_contains "$out" "diff --git a/.git/refs/heads/main b/.git/refs/heads/main"
	run_isd diff --name-only "$id"
	expect_contains "$out" "$(printf 'A\t.git/refs/heads/topic')"
	run_isd apply "$id"
	expect_rc 0
	expect_eq "$(git -C "$P" log -1 --format=%s topic)" "Topic work" "the applied repository has the agent's branch"
	git -C "$P" fsck --no-progress >"$T/fsck" 2>&1 || fail "the applied repository does not pass git fsck"
}

# A repository of the project, committed, for the git review tests.
git_project() {
	make_project
	command -v git >/dev/null || skip "git (git) is not installed"
	git -C "$P" init -q -b main 2>/dev/null || git -C "$P" init -q
	git -C "$P" checkout -q -B main
	git -C "$P" add -A
	git -C "$P" -c user.name=u -c user.email=u@u commit -qm base
	GITENV="-e GIT_AUTHOR_NAME=a -e GIT_AUTHOR_EMAIL=a@a -e GIT_COMMITTER_NAME=a -e GIT_COMMITTER_EMAIL=a@a"
	sleep 0.05
}

# The host's git must never run what the agent wrote: $T/pwned appears
# when it does.
host_git_runs_nothing() {
	rm -f "$T/pwned"
	git -C "$P" status >/dev/null 2>&1
	git -C "$P" -c user.name=u -c user.email=u@u commit -q --allow-empty -m probe >/dev/null 2>&1
	[ ! -e "$T/pwned" ] || fail "$1: git on the host ran the agent's command"
}

# commondir sends git to a config of the agent's (core.fsmonitor runs on
# the next git status): shown as executable, refused, applied when named.
test_git_commondir_refused() {
	git_project
	run_isd exec --profile none --workspace "$P:cow" -- sh -c "
		mkdir -p .git/c && cp -r .git/objects .git/refs .git/HEAD .git/c/ 2>/dev/null
		printf '[core]\n\tfsmonitor = \"touch $T/pwned; false\"\n' >.git/c/config
		printf 'c\n' >.git/commondir && echo WROTE"
	expect_rc 0
	expect_contains "$out" WROTE "cow: the agent writes commondir in its layer"
	id=$(sessions)
	run_isd diff "$id"
	expect_contains "$out" "!! executable git configuration"
	expect_contains "$out" ".git/commondir: commondir: git reads config, hooks and objects from c"
	expect_contains "$out" ".git/c/config: + core.fsmonitor = \"touch $T/pwned; false\""
	run_isd diff --stat "$id"
	expect_contains "$out" "!! executable git configuration"
	run_isd apply "$id"
	expect_rc 1 "apply refuses executable git configuration"
	expect_contains "$err" "refused .git/commondir: commondir: git reads config"
	expect_contains "$err" "(--allow-git-exec takes it)"
	expect_contains "$err" "nothing was applied"
	[ ! -e "$P/.git/commondir" ] && [ ! -e "$P/.git/c" ] || fail "refused, yet written"
	host_git_runs_nothing "after the refused apply"
	run_isd apply --allow-git-exec "$id"
	expect_rc 0 "--allow-git-exec takes it"
	[ "$(cat "$P/.git/commondir")" = c ] || fail "--allow-git-exec: commondir not applied"
}

# git init and core.fsmonitor where there was no repository.
test_git_new_repository_refused() {
	make_project
	command -v git >/dev/null || skip "git (git) is not installed"
	run_isd exec --profile none --workspace "$P:cow" -- sh -c "
		git init -q && git config core.fsmonitor 'touch $T/pwned; false' && echo INIT"
	expect_rc 0
	expect_contains "$out" INIT
	id=$(sessions)
	run_isd diff "$id"
	expect_contains "$out" ".git: a new repository, made in the session"
	expect_contains "$out" ".git/config: + core.fsmonitor = \"touch $T/pwned; false\""
	expect_contains "$out" "!! executable git configuration"
	run_isd apply "$id"
	expect_rc 1 "a new repository with core.fsmonitor is refused"
	[ ! -e "$P/.git" ] || fail "refused, yet the repository was written"
	run_isd exec --profile none --workspace "$P:cow" -- sh -c 'git init -q && echo INIT'
	id=$(sessions | head -1)
	for s in $(sessions); do run_isd diff "$s"; case $out in *fsmonitor*) ;; *) id=$s ;; esac; done
	run_isd apply "$id"
	expect_rc 0 "a plain new repository is applied ($err)"
	[ -d "$P/.git/objects" ] || fail "the new repository was not applied"
}

# core.hooksPath into the work tree (husky's .husky/_, ignored): a hook
# there is executable configuration even though .gitignore hides it.  (The
# sandbox covers the directory when hooksPath is set at the start,
# workspace.sh; here husky sets it on the host afterwards.)
test_git_hookspath_worktree_refused() {
	git_project
	printf '.husky/_/\n' >"$P/.gitignore"
	sleep 0.05
	run_isd exec --profile none --workspace "$P:cow" -- sh -c "
		mkdir -p .husky/_ && printf '#!/bin/sh\ntouch $T/pwned\n' >.husky/_/pre-commit && chmod +x .husky/_/pre-commit && echo HOOK"
	expect_contains "$out" HOOK
	id=$(sessions)
	git -C "$P" config core.hooksPath .husky/_
	run_isd diff "$id"
	expect_contains "$out" "!! executable git configuration"
	expect_contains "$out" ".husky/_/pre-commit: a hook where core.hooksPath points"
	run_isd apply --include-ignored "$id"
	expect_rc 1 "a hook in core.hooksPath is refused"
	expect_contains "$err" "refused .husky/_/pre-commit: a hook where core.hooksPath points"
	[ ! -e "$P/.husky/_/pre-commit" ] || fail "the hook reached the project"
	host_git_runs_nothing "hooksPath"
}

# rm -rf of the object store is history lost, never "0 changed files".
test_git_objects_deleted_refused() {
	git_project
	git -C "$P" gc -q
	echo more >>"$P/keep.txt" && git -C "$P" -c user.name=u -c user.email=u@u commit -qam loose
	sleep 0.05
	run_isd exec --profile none --workspace "$P:cow" -- sh -c 'rm -rf .git/objects/pack .git/objects/??'
	expect_rc 0
	id=$(sessions)
	run_isd diff "$id"
	expect_not_contains "$out" "0 changed files"
	expect_contains "$out" "!! git history loss"
	expect_contains "$out" "that nothing else holds; history will be lost"
	run_isd apply "$id"
	expect_rc 1 "deleting objects is refused"
	expect_contains "$err" "(--allow-history-loss takes it)"
	git -C "$P" fsck --no-progress >/dev/null 2>&1 || fail "the host's history was damaged"
	# git gc in the session moves objects: nothing is lost.
	run_isd discard "$id"
	run_isd exec --profile none --workspace "$P:cow" -- sh -c 'git gc -q --prune=now'
	id=$(sessions)
	run_isd diff "$id"
	expect_not_contains "$out" "history loss" "git gc keeps every object"
}

# A legitimate session (commits, a branch, deleted files, renamed
# directories), applied after the host's git status refreshed the index:
# the repository is consistent, status clean.
test_git_apply_consistent() {
	git_project
	run_isd exec --profile none $GITENV --workspace "$P:cow" -- sh -c '
		git rm -q gone.txt && mv d d2 && echo x >>keep.txt && git add -A && git commit -qm "agent: work"
		git checkout -qb topic && echo t >t.txt && git add t.txt && git commit -qm topic
		git checkout -q main && mv big huge && git add -A && git commit -qm rename && git status --porcelain'
	expect_rc 0 "the agent's commits"
	expect_eq "$out" "" "clean inside"
	id=$(sessions)
	git -C "$P" status >/dev/null
	run_isd apply "$id"
	expect_rc 0 "apply ($err)"
	git -C "$P" fsck --no-progress >"$T/fsck" 2>&1 || fail "git fsck after apply: $(cat "$T/fsck")"
	expect_eq "$(git -C "$P" status --porcelain)" "" "git status is clean after apply"
	expect_eq "$(git -C "$P" log -1 --format=%s)" rename
	expect_eq "$(git -C "$P" log -1 --format=%s topic)" topic
}

# The review's lines are the agent's bytes made visible: an ESC in a
# config value (clearing the screen, hiding the line) is shown escaped.
test_git_review_escaped() {
	make_project
	command -v git >/dev/null || skip "git (git) is not installed"
	run_isd exec --profile none --workspace "$P:cow" -- sh -c '
		git init -q && git config alias.st "$(printf "!touch x\033[2K\rstatus")"'
	expect_rc 0
	run_isd diff --color=always "$(sessions)"
	expect_contains "$out" '.git/config: + alias.st = "!touch x\033[2K\rstatus"'
	printf '%s' "$out" | sed 's/\x1b\[[0-9;]*m//g' | grep -q "$(printf '\033')" && fail "a raw ESC of the agent's reached the terminal"
	printf '%s' "$out" | grep -q "$(printf '\r')" && fail "a raw CR of the agent's reached the terminal"
	expect_contains "$out" "!! executable git configuration"
}

# HEAD, the refs and the index go together: when the host committed
# meanwhile, none of them (and nothing else) is applied.
test_git_refs_moved_on_host() {
	git_project
	run_isd exec --profile none $GITENV --workspace "$P:cow" -- sh -c '
		echo agent >>keep.txt && git commit -qam agent'
	expect_rc 0
	id=$(sessions)
	echo host >"$P/host.txt" && git -C "$P" add host.txt && git -C "$P" -c user.name=u -c user.email=u@u commit -qm host
	run_isd apply "$id"
	expect_rc 1 "refs moved on the host"
	expect_contains "$err" "refused .git/index: goes with the session's HEAD and refs"
	expect_eq "$(git -C "$P" log -1 --format=%s)" host "the host's branch stays"
	expect_eq "$(git -C "$P" status --porcelain)" "" "the host's repository is consistent"
}

# git gc (pack-refs) in the session moves loose refs into packed-refs: the
# summary shows where the branches went, not "deleted".
test_git_packed_refs_summary() {
	git_project
	base=$(git -C "$P" rev-parse --short=7 HEAD)
	run_isd exec --profile none $GITENV --workspace "$P:cow" -- sh -c '
		echo more >>keep.txt && git commit -qam "Packed work" && git tag v2 && git pack-refs --all'
	expect_rc 0
	run_isd diff "$(sessions)"
	expect_contains "$out" "$(printf '  branch main: %s -> ' "$base")"
	expect_contains "$out" "  tag v2: new at "
	expect_contains "$out" "Packed work"
	expect_not_contains "$out" "deleted (was" "a packed ref is not deleted"
}

# git worktree add in the session: the linked worktree's commondir and
# .git file point into the project's own repository, nothing to refuse.
test_git_worktree_add_not_executable() {
	git_project
	run_isd exec --profile none $GITENV --workspace "$P:cow" -- sh -c 'git worktree add -q wt && echo ADDED'
	expect_contains "$out" ADDED
	run_isd diff "$(sessions)"
	expect_contains "$out" ".git/worktrees/wt/commondir: a linked worktree of this repository"
	expect_contains "$out" "wt/.git: a .git file of a linked worktree or submodule of this repository"
	expect_not_contains "$out" "!!" "git worktree add is not executable configuration"
}

# A new repository whose hooks directory is a link into the work tree.
test_git_hooks_link_refused() {
	make_project
	command -v git >/dev/null || skip "git (git) is not installed"
	run_isd exec --profile none --workspace "$P:cow" -- sh -c '
		git init -q sub && rm -rf sub/.git/hooks && ln -s ../../scripts sub/.git/hooks && echo LINKED'
	expect_contains "$out" LINKED
	run_isd diff "$(sessions)"
	expect_contains "$out" "sub/.git/hooks: not a directory where git reads hooks or configuration"
	run_isd apply "$(sessions)"
	expect_rc 1 "a hooks link is refused"
	[ ! -e "$P/sub" ] || fail "refused, yet written"
}
