# SPDX-License-Identifier: LGPL-2.1-or-later
# Attacks on the review of a cow session: whatever `isd apply` writes,
# `isd diff` shows in a form a human reads correctly, and nothing the
# payload wrote runs on the host without an explicit yes.  (The ordinary
# use of diff/apply/discard: session.sh.)

make_project() {
	P=$T/proj
	mkdir -p "$P/src"
	printf 'all:\n\t@echo build\n' >"$P/Makefile"
	echo keep >"$P/keep.txt"
	echo a >"$P/src/a.txt"
	export XDG_STATE_HOME=$T/state
	# A session starts at a coarse clock tick.
	sleep 0.05
}

sessions() {
	ls "$XDG_STATE_HOME/isd/sessions" 2>/dev/null | grep -v '^\.'
}

# Runs sh -c SCRIPT in a cow session of $P: $id is the session.
cow() {
	run_isd exec --profile none -e GIT_AUTHOR_NAME=a -e GIT_AUTHOR_EMAIL=a@a -e GIT_COMMITTER_NAME=a \
		-e GIT_COMMITTER_EMAIL=a@a --workspace "$P:cow" -- sh -c "$1"
	expect_rc 0 "the payload (stderr: $err)"
	id=$(sessions | tail -n1)
	[ -n "$id" ] || fail "no session kept"
}

# No byte of the session reaches the terminal raw: the file $1 holds
# isd's output; with colour, only isd's own SGR sequences (ESC [ digits m).
expect_visible() {
	asserted
	LC_ALL=C tr -d '\n\t -~' <"$1" | od -An -c | tr -d ' \n' >"$T/raw"
	if [ "${2:-}" = color ]; then
		sed 's/\x1b\[[0-9;]*m//g' "$1" | LC_ALL=C tr -d '\n\t -~' | od -An -c | tr -d ' \n' >"$T/raw"
	fi
	[ ! -s "$T/raw" ] || fail "raw control bytes reach the terminal: $(cat "$T/raw") in: $(cat -v "$1")"
}

test_diff_escapes_control_bytes() {
	make_project
	command -v git >/dev/null || skip "git (git) is not installed"
	git -C "$P" init -q
	git -C "$P" symbolic-ref HEAD refs/heads/main
	git -C "$P" add -A
	git -C "$P" -c user.name=u -c user.email=u@u commit -qm base
	sleep 0.05
	# The terminal would show "@echo build" while make runs id; a name,
	# a commit subject, a branch and HEAD with escapes of their own.
	cow 'printf "all:\n\tid #\r\t@echo build\033[K\n" >Makefile
		printf "x\n" >"$(printf "n\033]0;title\007ame")"
		printf "bidi \342\200\256 x \302\233 y \377\n" >bidi.txt
		git add -A && git commit -qm "$(printf "subject \033[2J\rfake")"
		echo x >"$(printf ".git/refs/heads/br\033[1Anch")"
		git rev-parse HEAD >.git/refs/heads/evil
		printf "ref: refs/heads/\033[8mhidden\n" >.git/HEAD'
	for args in "diff $id" "diff --stat $id" "diff --name-only $id" "diff $id -- Makefile" "diff --ignored $id"; do
		# shellcheck disable=SC2086
		run_isd $args
		expect_rc 0 "$args"
		expect_visible "$T/out"
		expect_visible "$T/err"
	done
	run_isd diff "$id"
	expect_contains "$out" "$(printf '+\tid #^M\t@echo build^[[K')" "the Makefile line as its bytes are"
	expect_contains "$out" "Makefile holds" "a note on the escaped file"
	expect_contains "$out" '<U+202E> x <U+009B> y <FF>' "bidi, C1 and a byte that is not UTF-8"
	expect_contains "$out" 'subject ^[[2J^Mfake' "the commit subject"
	expect_contains "$out" "HEAD: refs/heads/main -> refs/heads/^[[8mhidden" "HEAD"
	run_isd diff --color=always "$id"
	expect_rc 0
	expect_visible "$T/out" color
	expect_contains "$out" "$(printf '\033[7m^M\033[27m')" "an escape in reverse video"
	# An error message that names a path of the session.
	run_isd apply "$(printf '%s\033[2J' "$id")"
	expect_visible "$T/err"
}

# One refusal (a file the host changed meanwhile) used to leave the rest
# applied: HEAD moved, the index old.  Now nothing changes, and nothing
# staged is left behind.
test_apply_all_or_nothing() {
	make_project
	cow 'echo agent >keep.txt; echo agent >src/a.txt; mkdir -p new/deep && echo n >new/deep/f; rm Makefile'
	expect_contains "$err" "session $id keeps 4 changes" "the count at the end of the run"
	sleep 0.05
	echo host >"$P/src/a.txt"
	before=$(cd "$P" && find . -printf '%p %s %m\n' | LC_ALL=C sort)
	run_isd apply "$id"
	expect_rc 1 "apply with a refusal"
	expect_contains "$err" "refused src/a.txt: changed on the host since the session started"
	expect_contains "$err" "nothing was applied"
	expect_eq "$(cd "$P" && find . -printf '%p %s %m\n' | LC_ALL=C sort)" "$before" "the project after a refused apply"
	run_isd apply "$id" --force
	expect_rc 0 "apply --force"
	expect_contains "$out" "applied 4 changes of session $id"
	expect_eq "$(cat "$P/src/a.txt") $(cat "$P/keep.txt") $(cat "$P/new/deep/f")" "agent agent n" "applied whole"
	[ ! -e "$P/Makefile" ] || fail "the deletion was not applied"
	[ -z "$(find "$P" -name '.isd-apply-*')" ] || fail "staged files left: $(find "$P" -name '.isd-apply-*')"
	# A directory the session made, that the host made meanwhile, is
	# merged into, never replaced: the host's file in it stays.
	cow 'mkdir -p made && echo agent >made/a'
	sleep 0.05
	mkdir "$P/made" && echo host >"$P/made/mine"
	run_isd apply "$id"
	expect_rc 0 "apply into a directory the host made"
	expect_eq "$(ls "$P/made" | tr '\n' ' ')" "a mine " "the host's directory"
}

# A fifo where a file was is shown for what it is, and apply refuses it
# (a reader of it on the host would block or read what a writer feeds).
test_fifo_shown_and_refused() {
	make_project
	cow 'rm keep.txt && mkfifo keep.txt && mkfifo src/new.fifo && echo x >ok.txt'
	run_isd diff "$id"
	expect_rc 0 "diff"
	expect_contains "$out" "# isd: new fifo keep.txt in the session: isd apply refuses special files"
	expect_contains "$out" "# isd: new fifo src/new.fifo in the session"
	expect_contains "$out" "$(printf 'diff --git a/keep.txt b/keep.txt\ndeleted file mode 100644')"
	expect_not_contains "$out" "$(printf 'diff --git a/keep.txt b/keep.txt\nnew file mode')" "a fifo shown as a file"
	run_isd diff --stat "$id"
	expect_contains "$out" "new fifo (isd apply refuses it)"
	run_isd apply "$id"
	expect_rc 1 "apply of a fifo"
	expect_contains "$err" "refused keep.txt: a fifo: isd apply writes files, directories and symlinks only"
	[ -f "$P/keep.txt" ] && [ ! -e "$P/ok.txt" ] || fail "apply changed the project despite a refusal"
	run_isd apply "$id" ok.txt
	expect_rc 0 "apply of the rest"
	[ -f "$P/ok.txt" ] || fail "ok.txt not applied"
}

# libgit2 opens object files blocking: a fifo among the session's objects
# hung isd diff.  The fifo is there when diff runs.
test_diff_fifo_in_objects_does_not_hang() {
	make_project
	command -v git >/dev/null || skip "git (git) is not installed"
	command -v timeout >/dev/null || skip "timeout (coreutils) is not installed"
	git -C "$P" init -q
	git -C "$P" add -A
	git -C "$P" -c user.name=u -c user.email=u@u commit -qm base
	sleep 0.05
	cow 'echo b >keep.txt && git commit -qam two && h=$(git rev-parse HEAD) &&
		f=.git/objects/$(echo "$h" | cut -c1-2)/$(echo "$h" | cut -c3-) && rm -f "$f" && mkfifo "$f" &&
		mkfifo src/pipe && echo changed >src/a.txt'
	timeout 20 "$ISD" diff "$id" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -ne 124 ] || fail "isd diff hung on a fifo in the session"
	expect_rc 0 "diff with a fifo among the objects"
	expect_contains "$(cat "$T/out")" "holds something that is not a file (a fifo?)"
	expect_contains "$(cat "$T/out")" "+changed"
}

# Setuid and setgid bits do not reach the host: stripped, with a note.
test_apply_strips_setuid() {
	make_project
	cow 'cp /bin/sh suid && chmod 6755 suid 2>/dev/null; echo changed >keep.txt; chmod 4755 keep.txt 2>/dev/null; true'
	# Whether or not the sandbox let the payload set them, the session has them.
	chmod 6755 "$XDG_STATE_HOME/isd/sessions/$id/upper/suid" || fail "chmod in the session"
	chmod 4755 "$XDG_STATE_HOME/isd/sessions/$id/upper/keep.txt" || fail "chmod in the session"
	run_isd diff "$id"
	expect_contains "$out" "new file mode 106755"
	run_isd apply "$id"
	expect_rc 0 "apply"
	expect_contains "$err" "note: suid: applied without its setuid/setgid bits (mode 0755, not 6755)"
	expect_contains "$err" "note: keep.txt: applied without its setuid/setgid bits (mode 0755, not 4755)"
	expect_eq "$(stat -c %a "$P/suid") $(stat -c %a "$P/keep.txt")" "755 755" "modes on the host"
	expect_contains "$out" "has no changes left and is removed" "what was applied left the session"
	# Inside a new directory too.
	cow 'mkdir -p bin && cp /bin/sh bin/tool'
	chmod 4755 "$XDG_STATE_HOME/isd/sessions/$id/upper/bin/tool" || fail "chmod in the session"
	run_isd apply "$id"
	expect_rc 0 "apply"
	expect_contains "$err" "note: bin/tool: applied without its setuid/setgid bits"
	expect_eq "$(stat -c %a "$P/bin/tool")" 755 "mode on the host"
}

# A 2 GiB sparse file takes no space in the session: nor after apply.
test_apply_keeps_holes() {
	make_project
	cow 'truncate -s 2G sparse.img && printf data | dd of=sparse.img bs=1 seek=1073741824 conv=notrunc 2>/dev/null
		truncate -s 64M small.img && printf data | dd of=small.img bs=1 seek=33554432 conv=notrunc 2>/dev/null'
	up=$XDG_STATE_HOME/isd/sessions/$id/upper/sparse.img
	[ "$(stat -c %b "$up")" -lt 1024 ] || skip "the session's filesystem does not keep holes"
	run_isd diff --stat "$id"
	expect_contains "$out" "sparse.img | Bin 0 -> 2147483648 bytes"
	run_isd diff "$id" -- sparse.img
	expect_contains "$out" "# isd: sparse.img (2147483648 bytes) is not shown: over 64 MiB or unreadable; isd apply takes it as it is"
	run_isd apply "$id"
	expect_rc 0 "apply"
	expect_eq "$(stat -c %s "$P/sparse.img")" 2147483648 "apparent size"
	[ "$(stat -c %b "$P/sparse.img")" -lt 1024 ] || fail "apply filled the holes: $(du -h "$P/sparse.img")"
	expect_eq "$(dd if="$P/sparse.img" bs=1 skip=1073741824 count=4 2>/dev/null)" data "the data in the middle"
	[ -z "$(sessions)" ] || fail "the applied sparse file still counts as a change"
	# One byte of its data changed: a change, though the holes agree.
	cow 'printf D | dd of=small.img bs=1 seek=33554433 conv=notrunc 2>/dev/null'
	run_isd diff --name-only "$id"
	expect_eq "$out" "$(printf 'M\tsmall.img')" "a changed byte in a sparse file"
}

# A deleted directory is every file of it, as git diff has it: listed, and
# real deletions that git apply carries out.
test_diff_deleted_directory_per_file() {
	make_project
	mkdir -p "$P/src/deep" "$P/lib"
	echo b >"$P/src/deep/b.txt"
	echo l >"$P/lib/l.txt"
	sleep 0.05
	cow 'rm -rf src && rm -rf lib && echo now-a-file >lib'
	run_isd diff --name-only "$id"
	expect_eq "$out" "$(printf 'A\tlib\nD\tlib/l.txt\nD\tsrc/a.txt\nD\tsrc/deep/b.txt')" "--name-only"
	run_isd diff "$id"
	expect_not_contains "$out" "deleted tree"
	command -v git >/dev/null || return 0
	cp -a "$P" "$T/copy"
	printf '%s\n' "$out" >"$T/patch"
	(cd "$T/copy" && git apply "$T/patch") || fail "git apply of the deletions failed"
	[ ! -e "$T/copy/src" ] && [ "$(cat "$T/copy/lib")" = now-a-file ] || fail "git apply: $(ls -R "$T/copy")"
}

# A force-added file that .gitignore matches is project content: shown.
# What .gitignore ignores is not shown, and not applied without asking:
# a .pth in .venv runs in every python of that environment on the host.
test_ignored_and_tracked_ignored() {
	make_project
	command -v git >/dev/null || skip "git (git) is not installed"
	printf '*.cfg\n.venv/\n' >"$P/.gitignore"
	echo tracked >"$P/app.cfg"
	git -C "$P" init -q
	git -C "$P" add -A
	git -C "$P" add -f app.cfg
	git -C "$P" -c user.name=u -c user.email=u@u commit -qm base
	sleep 0.05
	cow 'echo agent >app.cfg; mkdir -p .venv/lib/site-packages .venv/bin
		echo "import os; os.system(\"id\")" >.venv/lib/site-packages/evil.pth
		echo data >.venv/lib/site-packages/plain.txt
		printf "#!/bin/sh\nid\n" >.venv/bin/tool && chmod 755 .venv/bin/tool'
	run_isd diff --name-only "$id"
	expect_contains "$out" "$(printf 'M\tapp.cfg')" "a tracked file that .gitignore matches"
	expect_not_contains "$out" "plain.txt"
	run_isd diff "$id"
	expect_contains "$out" "+agent" "its patch"
	expect_contains "$out" "# isd: ignored by .gitignore but runs code: .venv/lib/site-packages/evil.pth"
	expect_contains "$out" "# isd: ignored by .gitignore but runs code: .venv/bin/tool"
	expect_not_contains "$out" "plain.txt" "an ignored file that runs nothing is only counted"
	run_isd apply "$id"
	expect_rc 0 "apply"
	expect_contains "$err" "3 changes that the project's .gitignore ignores not applied, among them files that run code"
	[ ! -e "$P/.venv" ] || fail "apply took ignored files: $(find "$P/.venv")"
	expect_eq "$(cat "$P/app.cfg")" agent "the tracked-ignored file is applied"
	run_isd apply --include-ignored "$id"
	expect_rc 0 "apply --include-ignored"
	expect_contains "$err" "note: .venv/lib/site-packages/evil.pth: ignored by .gitignore and runs code on the host"
	[ -f "$P/.venv/lib/site-packages/evil.pth" ] || fail "--include-ignored"
}

# 1500 levels: one descriptor per level made diff, apply and discard
# fail, and discard left a hidden .removing-ID behind.
test_deep_tree() {
	make_project
	# The soft limit most users have (root here may have more).
	ulimit -S -n 1024 2>/dev/null || skip "ulimit -S -n is not supported by this shell"
	cow 'd=$(printf "d/%.0s" $(seq 1500)) && mkdir -p "$d" && echo bottom >"${d}f"'
	run_isd diff --name-only "$id"
	expect_rc 0 "diff of a deep tree"
	expect_contains "$out" "d/d/d/d/f" "the file at the bottom"
	run_isd discard "$id"
	expect_rc 0 "discard of a deep tree"
	[ -z "$(ls -A "$XDG_STATE_HOME/isd/sessions")" ] || fail "discard left: $(ls -A "$XDG_STATE_HOME/isd/sessions")"
	cow 'd=$(printf "d/%.0s" $(seq 1500)) && mkdir -p "$d" && echo bottom >"${d}f"'
	run_isd apply "$id"
	expect_rc 0 "apply of a deep tree"
	expect_eq "$(cat "$P/$(printf 'd/%.0s' $(seq 1500))f")" bottom "the file at the bottom, on the host"
	[ -z "$(sessions)" ] || fail "apply left the session"
}

# After a crash a project has several sessions, the newest one empty:
# diff and apply without an ID take the newest with changes and say so;
# discard --all, session prune and gc clear the store.
test_choosing_the_session() {
	make_project
	cow 'echo agent >keep.txt'
	first=$id
	sleep 0.05
	run_isd exec --profile none --workspace "$P:cow" --workspace-keep -- true
	expect_rc 0 "an empty kept session"
	[ "$(sessions | wc -l)" -eq 2 ] || fail "two sessions expected: $(sessions)"
	cd "$P" || fail "cd"
	run_isd diff --name-only
	expect_eq "$out" "$(printf 'M\tkeep.txt')" "diff without ID"
	expect_contains "$err" "session $first of $P ("
	expect_contains "$err" "1 change)"
	expect_contains "$err" "has no changes"
	run_isd apply
	expect_rc 0 "apply without ID"
	expect_contains "$err" "session $first of $P"
	expect_contains "$out" "applied 1 change of session $first"
	expect_eq "$(cat "$P/keep.txt")" agent "applied"
	# prune: the empty one goes; a half-removed one goes with gc.
	mkdir -p "$XDG_STATE_HOME/isd/sessions/.removing-0123456789ab/upper/deep"
	run_isd session prune
	expect_rc 0 "session prune"
	[ -z "$(ls -A "$XDG_STATE_HOME/isd/sessions")" ] || fail "prune left: $(ls -A "$XDG_STATE_HOME/isd/sessions")"
	mkdir -p "$XDG_STATE_HOME/isd/sessions/.removing-0123456789ab/upper/deep"
	run_isd gc
	expect_contains "$out" ".removing-0123456789ab (a half-removed session)"
	[ ! -e "$XDG_STATE_HOME/isd/sessions/.removing-0123456789ab" ] || fail "gc left the half-removed session"
	cd "$T" || fail "cd"
	cow 'echo 1 >one'
	cow 'echo 2 >two'
	cd "$P" || fail "cd"
	run_isd discard --all
	expect_rc 0 "discard --all"
	[ "$(printf '%s\n' "$out" | grep -c '^discarded session')" -eq 2 ] || fail "discard --all: $out"
	[ -z "$(sessions)" ] || fail "discard --all left $(sessions)"
	cd "$T" || fail "cd"
}

# A write that fails while staging (a directory of the project that is
# read-only on the host) leaves the project as it was: nothing of the
# change set is in place, no temporary file is left.
test_apply_staging_failure_changes_nothing() {
	make_project
	[ "$(id -u)" -ne 0 ] || skip "root writes into read-only directories (run as a user)"
	mkdir "$P/ro" && echo old >"$P/ro/f"
	sleep 0.05
	cow 'echo agent >keep.txt; echo new >ro/f2; rm Makefile'
	chmod 555 "$P/ro"
	at_teardown "chmod 755 '$P/ro'"
	before=$(cd "$P" && find . -printf '%p %s %m\n' | LC_ALL=C sort)
	run_isd apply "$id"
	expect_rc 125 "apply with a directory it cannot write"
	expect_contains "$err" "ro/f2"
	expect_eq "$(cd "$P" && find . -printf '%p %s %m\n' | LC_ALL=C sort)" "$before" "the project after a failed apply"
	run_isd diff --name-only "$id"
	expect_eq "$out" "$(printf 'D\tMakefile\nM\tkeep.txt\nM\tro/\nA\tro/f2')" "the session keeps everything (ro/ differs in mode now)"
}

# A payload that takes the owner's permissions away from what it wrote
# (a mode-000 directory, a mode-000 or write-only file, a search-only
# directory) must not hide it from the review nor break it: diff shows
# the content and modes, apply writes them with those modes, discard
# removes the session.
test_unreadable_entries() {
	make_project
	cow 'mkdir d; echo x >d/f; chmod 000 d; echo secret >z; chmod 000 z; echo w >wo; chmod 0200 wo;
		mkdir s; echo y >s/g; chmod 0100 s; mkdir t; echo q >t/h; chmod 0300 t'
	expect_contains "$err" "keeps 5 changes" "the count at exit"
	run_isd session list
	expect_rc 0 "session list"
	expect_contains "$out" " 5 " "the count in session list"
	run_isd diff "$id"
	expect_rc 0 "diff (stderr: $err)"
	for f in d/f z wo s/g t/h; do expect_contains "$out" "+++ b/$f"; done
	expect_contains "$out" "new file mode 100000"
	expect_contains "$out" "new file mode 100200"
	expect_contains "$out" "+secret"
	expect_contains "$out" "+x"
	expect_contains "$out" "+q"
	run_isd diff --name-only "$id"
	expect_rc 0 "diff --name-only"
	expect_contains "$out" "d/f"
	run_isd discard "$id"
	expect_rc 0 "discard (stderr: $err)"
	[ -z "$(ls -A "$XDG_STATE_HOME/isd/sessions")" ] || fail "discard left: $(ls -A "$XDG_STATE_HOME/isd/sessions")"
	cow 'mkdir d; echo x >d/f; chmod 000 d; echo secret >z; chmod 000 z; echo w >wo; chmod 0200 wo;
		mkdir s; echo y >s/g; chmod 0100 s'
	run_isd apply "$id"
	expect_rc 0 "apply (stderr: $err)"
	expect_eq "$(stat -c %a "$P/d" "$P/z" "$P/wo" "$P/s" | tr '\n' ' ')" "0 0 200 100 " "modes on the host"
	chmod 700 "$P/d" "$P/s"
	chmod 600 "$P/z" "$P/wo"
	expect_eq "$(cat "$P/d/f" "$P/z" "$P/wo" "$P/s/g" | tr '\n' ' ')" "x secret w y " "content on the host"
	[ -z "$(sessions)" ] || fail "apply left the session"
	cow 'mkdir d; echo x >d/f; chmod 000 d'
	run_isd gc
	expect_rc 0 "gc (stderr: $err)"
	run_isd discard "$id"
	expect_rc 0 "discard (stderr: $err)"
	[ -z "$(ls -A "$XDG_STATE_HOME/isd/sessions")" ] || fail "discard left: $(ls -A "$XDG_STATE_HOME/isd/sessions")"
}

# What an image that keeps ownership lets the payload do: chown its files
# to ids of the caller's subordinate range, unreadable to the caller.
# diff maps that range too and shows them.
test_unreadable_subordinate_owner() {
	[ "$(id -u)" != 0 ] || skip "needs an unprivileged caller with a subordinate range"
	grep -q "^$(id -un):" /etc/subuid 2>/dev/null || skip "no range in /etc/subuid for $(id -un)"
	command -v newuidmap >/dev/null || skip "newuidmap (uidmap) is not installed"
	unshare --map-auto --map-root-user true 2>/dev/null || skip "unshare --map-auto (util-linux >= 2.38) does not work here"
	make_project
	cow 'echo sub >u; mkdir e; echo y >e/f'
	U=$XDG_STATE_HOME/isd/sessions/$id/upper
	unshare --map-auto --map-root-user sh -c "chown -R 5:5 '$U/u' '$U/e' && chmod 000 '$U/u' && chmod 700 '$U/e' && chmod 000 '$U/e/f'" ||
		fail "chown into the subordinate range"
	cat "$U/u" 2>/dev/null && fail "the file is readable to the caller: the test shows nothing"
	run_isd diff "$id"
	expect_rc 0 "diff (stderr: $err)"
	expect_contains "$out" "+sub"
	expect_contains "$out" "+++ b/e/f"
	expect_contains "$out" "+y"
	unshare --map-auto --map-root-user rm -rf "$U/u" "$U/e" || fail "cleaning up"
	run_isd discard "$id"
	expect_rc 0 "discard (stderr: $err)"
}
