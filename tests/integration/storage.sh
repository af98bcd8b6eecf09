# SPDX-License-Identifier: LGPL-2.1-or-later
# The disk as a limit (--storage-opt, src/storage*.c): what the payload
# writes through a cow session stops at size= (EFBIG for one file, a
# freeze for the sum), an inode flood at inodes=, a writer through a rw
# bind at min-free=; the session stays reviewable.

MiB=1048576
# What the session may hold past its bound: what a writer at disk speed
# puts down between two looks of the watcher (10 ms) and one count.
SLACK=$((64 * MiB))

storage_project() {
	P=$T/proj
	mkdir -p "$P"
	echo keep >"$P/keep.txt"
	export XDG_STATE_HOME=$T/state
	sleep 0.05
}

session_id() {
	ls "$XDG_STATE_HOME/isd/sessions" 2>/dev/null | grep -v '^\.' | head -n1
}

# Allocated bytes of what the session's upper layer holds.
upper_bytes() {
	du -sB1 "$XDG_STATE_HOME/isd/sessions/$1/upper" | cut -f1
}

# What the session holds while it runs: the upper layer, and in the
# landlock tier the workspace's copy (whose project part is a few bytes).
held_bytes() {
	du -csB1 "$XDG_STATE_HOME/isd/sessions/$1/upper" "$XDG_STATE_HOME/isd/sessions/$1/landlock-copy" 2>/dev/null |
		tail -n1 | cut -f1
}

# The landlock tier (--isolation landlock: no namespaces) runs the same
# payloads: $tier is its option, empty for the full tier.
tier=
need_landlock_tier() {
	run_isd exec --isolation landlock --profile none -- true
	[ "$rc" -eq 0 ] || skip "the landlock tier cannot run here: $err"
	tier="--isolation landlock"
}

# start_cow ARGS... -- SCRIPT: isd exec in the background ($bg), its
# output in $T/bg.out and $T/bg.err.
start_cow() {
	"$ISD" exec $tier --profile none --workspace "$P:cow" "$@" >"$T/bg.out" 2>"$T/bg.err" </dev/null &
	bg=$!
	at_teardown "kill -9 $bg 2>/dev/null; wait $bg 2>/dev/null"
}

# wait_frozen: until the watcher says the sandbox is frozen (or it ended).
wait_frozen() {
	n=0
	while ! grep -q 'the sandbox is frozen' "$T/bg.err" 2>/dev/null; do
		kill -0 "$bg" 2>/dev/null || fail "the sandbox ended without a freeze: $(cat "$T/bg.out" "$T/bg.err")"
		n=$((n + 1))
		[ "$n" -lt 600 ] || fail "no freeze within 60 s: $(cat "$T/bg.err")"
		sleep 0.1
	done
}

finish_bg() {
	wait "$bg"
	rc=$?
	out=$(cat "$T/bg.out")
	err=$(cat "$T/bg.err")
}

# The review works on what was kept: diff lists it, apply brings it.
expect_reviewable() {
	id=$1 want=$2
	run_isd diff --stat "$id"
	expect_rc 0 "isd diff of the frozen session"
	expect_contains "$out" "$want" "isd diff"
	run_isd apply "$id"
	expect_rc 0 "isd apply of the frozen session"
	[ -e "$P/$want" ] || fail "isd apply did not bring $want"
}

test_one_file_gets_efbig_and_the_sandbox_runs_on() {
	storage_project
	run_isd exec --profile none --workspace "$P:cow" --storage-opt size=200M -- sh -c '
		dd if=/dev/zero of=big bs=1M count=1000 2>&1 | grep -v records; echo "dd: $?"
		truncate -s 900M sparse 2>&1; dd if=/dev/zero of=sparse2 bs=1M seek=900 count=1 2>&1 | grep -v records
		echo second command runs'
	expect_rc 0 "a single file stopped at its limit"
	expect_contains "$out" "File too large" "the writer gets EFBIG"
	expect_contains "$out" "second command runs"
	expect_not_contains "$err" "frozen" "one file alone stays below the bound"
	id=$(session_id)
	b=$(upper_bytes "$id")
	[ "$b" -le $((200 * MiB)) ] || fail "the upper layer holds $b bytes, over 200 MiB"
	[ "$(stat -c %s "$XDG_STATE_HOME/isd/sessions/$id/upper/big")" -eq $((200 * MiB / 16 * 15)) ] ||
		fail "big is not 15/16 of the bound: $(stat -c %s "$XDG_STATE_HOME/isd/sessions/$id/upper/big")"
	expect_reviewable "$id" big
}

test_many_files_freeze_then_resume_and_end() {
	storage_project
	start_cow --storage-opt size=200M -- sh -c '
		i=0; while [ $i -lt 1000 ]; do dd if=/dev/zero of=f$i bs=1M count=1 2>/dev/null || echo "dd failed at $i"; i=$((i + 1)); done
		echo all written'
	wait_frozen
	id=$(session_id)
	b=$(upper_bytes "$id")
	[ "$b" -le $((200 * MiB + SLACK)) ] || fail "frozen at $b bytes, over 200 MiB + slack: $(cat "$T/bg.err")"
	[ "$b" -ge $((150 * MiB)) ] || fail "frozen early, at $b bytes"
	expect_contains "$(cat "$T/bg.err")" "$XDG_STATE_HOME/isd/sessions/$id holds" "the message names the session"
	expect_contains "$(cat "$T/bg.err")" "isd resume $id" "the message says how to go on"
	# Frozen means stopped: nothing grows while it is.
	sleep 0.5
	[ "$(upper_bytes "$id")" -eq "$b" ] || fail "the upper layer grew while frozen: $b -> $(upper_bytes "$id")"
	run_isd session list
	expect_contains "$out" "frozen" "isd session list shows the freeze"
	expect_contains "$out" "200.0M" "isd session list shows the bound"
	# The user's word: on by a grace, then frozen again.
	run_isd resume "$id"
	expect_rc 0 "isd resume"
	n=0
	while [ "$(grep -c 'the sandbox is frozen' "$T/bg.err")" -lt 2 ]; do
		n=$((n + 1))
		[ "$n" -lt 300 ] || fail "no second freeze after the grace: $(cat "$T/bg.err")"
		sleep 0.1
	done
	b=$(upper_bytes "$id")
	[ "$b" -le $((220 * MiB + SLACK)) ] || fail "frozen again at $b bytes, past the grace"
	run_isd resume --end "$id"
	expect_rc 0 "isd resume --end"
	finish_bg
	expect_rc 137 "a sandbox ended at its bound"
	expect_not_contains "$out" "all written" "the writer never finished"
	expect_contains "$err" "isd diff $id" "the session is kept"
	expect_reviewable "$id" f0
}

test_sparse_and_hard_links_count_their_blocks_once() {
	storage_project
	run_isd exec --profile none --workspace "$P:cow" --storage-opt size=200M -- sh -c '
		dd if=/dev/zero of=sparse bs=1M seek=180 count=1 2>/dev/null
		dd if=/dev/zero of=data bs=1M count=120 2>/dev/null
		i=0; while [ $i -lt 300 ]; do ln data link$i; i=$((i + 1)); done
		mkdir -p a/b; mv data a/b/moved; mv a renamed
		sleep 1; echo done'
	expect_rc 0 "holes and links are not growth"
	expect_contains "$out" "done"
	expect_not_contains "$err" "frozen" "a sparse file and 300 links of one file stay below 200 MiB"
	id=$(session_id)
	b=$(upper_bytes "$id")
	[ "$b" -le $((200 * MiB)) ] || fail "the upper layer holds $b bytes"
	# Links of the data past the bound are still counted: a second 120
	# MiB file is the sum that freezes (a third one keeps the writer going
	# long enough for a watcher that comes late on a loaded machine).
	rm -rf "$XDG_STATE_HOME"
	start_cow --storage-opt size=200M -- sh -c '
		dd if=/dev/zero of=one bs=1M count=120 2>/dev/null; ln one two; ln one three
		dd if=/dev/zero of=four bs=1M count=120 2>/dev/null
		dd if=/dev/zero of=five bs=1M count=120 2>/dev/null; echo all written'
	wait_frozen
	run_isd resume --end "$(session_id)"
	finish_bg
	expect_not_contains "$out" "all written"
}

test_inode_flood_stops_at_the_bound() {
	storage_project
	start_cow --storage-opt inodes=2000 -- sh -c 'i=0; while :; do : >f$i || break; i=$((i + 1)); done; echo stopped at $i'
	wait_frozen
	id=$(session_id)
	files=$(find "$XDG_STATE_HOME/isd/sessions/$id/upper" | wc -l)
	[ "$files" -ge 1900 ] && [ "$files" -le 3000 ] || fail "frozen at $files files for a bound of 2000"
	expect_contains "$(cat "$T/bg.err")" "files, its bound is 2000" "the message names the bound"
	run_isd resume --end "$id"
	finish_bg
	expect_rc 137
	run_isd diff --stat "$id"
	expect_rc 0 "isd diff after an inode flood"
}

# A rw bind on a small file system the test makes (a 300 MiB tmpfs in a
# user and mount namespace of its own), which holds the project too: the
# writer stops at the floor, the message names the bind's source, the file
# system keeps its floor, and the sandbox goes on when space is back.
test_min_free_floor_on_a_rw_bind() {
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	unshare -Urm true 2>/dev/null || skip "unshare -Urm is not allowed here"
	unsafe=
	[ "$(id -u)" -ne 0 ] || unsafe=--unsafe-host-root # unshare -Ur as root maps only host root
	mkdir -p "$T/fs"
	cat >"$T/scenario" <<'EOF'
set -u
mount -t tmpfs -o size=300M tmpfs "$T/fs" || exit 99
mkdir "$T/fs/proj" "$T/fs/out"
echo keep >"$T/fs/proj/keep.txt"
dd if=/dev/zero of="$T/fs/filler" bs=1M count=100 2>/dev/null
"$ISD" exec $unsafe --profile none --workspace "$T/fs/proj:cow" -v "$T/fs/out:/out" --storage-opt min-free=100M -- \
	sh -c 'i=0; while [ $i -lt 150 ]; do dd if=/dev/zero bs=1M count=1 2>/dev/null || exit 1; i=$((i + 1)); done >/out/big; echo done' \
	>"$T/out" 2>"$T/err" &
bg=$!
n=0
while ! grep -q 'the sandbox is frozen' "$T/err"; do
	n=$((n + 1))
	if [ $n -gt 300 ] || ! kill -0 $bg 2>/dev/null; then echo "no freeze" >"$T/result"; kill -9 $bg; exit 1; fi
	sleep 0.1
done
sleep 0.3
df -B1 --output=avail "$T/fs" | tail -n1 >"$T/avail"
stat -c %s "$T/fs/out/big" >"$T/frozen_size"
rm "$T/fs/filler"
wait $bg
echo $? >"$T/rc"
EOF
	T=$T ISD=$ISD unsafe=$unsafe XDG_STATE_HOME=$T/state unshare -Urm sh "$T/scenario"
	[ -e "$T/rc" ] || fail "the scenario did not finish: $(cat "$T/result" "$T/err" 2>/dev/null)"
	rc=$(cat "$T/rc")
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_contains "$err" "the file system of $T/fs/out has" "the message names the bind's source"
	expect_contains "$err" "below the floor of 100.0 MiB"
	avail=$(cat "$T/avail")
	[ "$avail" -ge $((50 * MiB)) ] || fail "the file system kept $avail bytes, the floor is 100 MiB"
	[ "$(cat "$T/frozen_size")" -lt $((150 * MiB)) ] || fail "the writer was not stopped: $(cat "$T/frozen_size")"
	expect_contains "$err" "space is back; the sandbox goes on"
	expect_rc 0 "the writer finished once space was back"
	expect_contains "$out" "done"
}

test_floor_below_at_start_is_refused() {
	storage_project
	run_isd exec --profile none --workspace "$P:cow" --storage-opt min-free=100% -- true
	expect_rc 125 "an impossible floor is an option error"
	run_isd exec --profile none --workspace "$P:cow" --storage-opt min-free=50% -- true
	avail=$(df -B1 --output=avail "$T" | tail -n1)
	size=$(df -B1 --output=size "$T" | tail -n1)
	if [ "$avail" -lt $((size / 2)) ]; then
		expect_rc 125 "a file system below an explicit floor"
		expect_contains "$err" "below the floor of" "the message names the floor"
		expect_contains "$err" "min-free" "the fix"
	else
		expect_rc 0 "a file system above the floor"
	fi
}

test_agent_profile_default_in_print_spec() {
	mkdir -p "$T/proj"
	(cd "$T/proj" && "$ISD" exec --print-spec -- claude) >"$T/out" 2>"$T/err"
	rc=$?
	expect_rc 0 "--print-spec -- claude"
	python3 - "$T/out" <<'EOF' || fail "storage in --print-spec: $(cat "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["storage"]["size"] == 10 << 30, d["storage"]
assert d["origins"]["storage:size"].startswith("profile ") and "agent.conf" in d["origins"]["storage:size"], d["origins"]
EOF
	asserted
	(cd "$T/proj" && "$ISD" exec --print-spec --storage-opt size=1g,inodes=5000 -- claude) >"$T/out" 2>"$T/err"
	python3 - "$T/out" <<'EOF' || fail "the command line over the profile: $(cat "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["storage"]["size"] == 1 << 30 and d["storage"]["inodes"] == 5000, d["storage"]
assert d["origins"]["storage:size"] == "command line", d["origins"]
EOF
	for bad in size=1k size=x inodes=3 min-free=60% foo=1 size; do
		run_isd exec --print-spec --storage-opt "$bad" -- true
		expect_rc 125 "--storage-opt $bad"
		expect_contains "$err" "--storage-opt" "the message names the option"
	done
}

# A directory made unreadable inside (chmod 000: on the host it is the
# user's own directory in the upper layer) still counts: its files are the
# sum that freezes, not a place to hide them.  The writer goes 150 MiB past
# the bound (in files under the per-file limit), so a freeze that comes late
# on a loaded machine still stops it before its end.
test_unreadable_directory_still_counts() {
	storage_project
	start_cow --storage-opt size=200M -- sh -c '
		mkdir hide; dd if=/dev/zero of=hide/x bs=1M count=150 2>/dev/null; chmod 000 hide
		dd if=/dev/zero of=more bs=1M count=100 2>/dev/null
		dd if=/dev/zero of=more2 bs=1M count=100 2>/dev/null; echo all written'
	wait_frozen
	id=$(session_id)
	expect_contains "$(cat "$T/bg.err")" "$XDG_STATE_HOME/isd/sessions/$id holds" "counted, not unaccountable"
	[ "$(stat -c %a "$XDG_STATE_HOME/isd/sessions/$id/upper/hide")" = 0 ] || fail "the directory's mode was not put back"
	run_isd resume --end "$id"
	finish_bg
	expect_not_contains "$out" "all written"
}


# The count of a running session never changes a mode the payload set: a
# payload that watches its chmod 000 directory while the watcher counts
# often (near the bound, a walk every few ticks; many entries keep the walk
# inside it long) sees 000 all along, and what it holds still counts.
test_unreadable_directory_keeps_its_mode_while_counted() {
	storage_project
	start_cow --storage-opt size=200M -- sh -c '
		mkdir d; dd if=/dev/zero of=d/x bs=1M count=150 2>/dev/null
		i=0; while [ $i -lt 3000 ]; do : >d/f$i; i=$((i + 1)); done
		chmod 000 d
		seen=""; i=0
		while [ $i -lt 2000 ]; do
			m=$(stat -c %a d)
			[ "$m" = 0 ] || seen="$seen $m"
			i=$((i + 1))
		done
		echo "modes seen:${seen:- none other}"
		i=0; while [ $i -lt 300 ]; do dd if=/dev/zero of=more$i bs=1M count=1 2>/dev/null; i=$((i + 1)); done
		echo all written'
	wait_frozen
	id=$(session_id)
	expect_contains "$(cat "$T/bg.out")" "modes seen: none other" "the payload saw its directory change mode"
	expect_contains "$(cat "$T/bg.err")" "$XDG_STATE_HOME/isd/sessions/$id holds" "d's file counts, d is not unaccountable"
	[ "$(stat -c %a "$XDG_STATE_HOME/isd/sessions/$id/upper/d")" = 0 ] || fail "d's mode changed on the host"
	run_isd resume --end "$id"
	finish_bg
	expect_not_contains "$out" "all written"
}

# The landlock tier: the watcher counts the workspace's copy (what changed
# since it was made, not the project it starts with) and the private
# TMPDIR, which stands for the full tier's size-bounded /tmp but lies on
# the host disk.  The sum freezes the sandbox, one file gets EFBIG, and
# the session ends reviewable.
test_landlock_tier_freezes_at_the_bound() {
	need_landlock_tier
	storage_project
	dd if=/dev/zero of="$P/old" bs=1M count=150 2>/dev/null
	start_cow --storage-opt size=200M -- sh -c '
		dd if=/dev/zero of=big bs=1M count=1000 2>&1 | grep -v records; rm big
		dd if=/dev/zero of="$TMPDIR/scratch" bs=1M count=100 2>/dev/null
		echo second command runs
		i=0; while [ $i -lt 1000 ]; do dd if=/dev/zero of=f$i bs=1M count=1 2>/dev/null || echo "dd failed at $i"; i=$((i + 1)); done
		echo all written'
	wait_frozen
	id=$(session_id)
	b=$(held_bytes "$id")
	# the copy holds the project's 150 MiB, which do not count
	[ "$b" -le $((350 * MiB + SLACK)) ] || fail "frozen at $b bytes, over 150 + 200 MiB + slack: $(cat "$T/bg.err")"
	expect_contains "$(cat "$T/bg.out")" "File too large" "one file gets EFBIG"
	expect_contains "$(cat "$T/bg.out")" "second command runs"
	expect_contains "$(cat "$T/bg.err")" "$XDG_STATE_HOME/isd/sessions/$id holds" "the message names the session"
	expect_not_contains "$(cat "$T/bg.err")" "does not watch" "no note that the tier lacks the bound"
	n=$(ls "$XDG_STATE_HOME/isd/sessions/$id/landlock-copy/proj" | grep -c '^f')
	# 100 MiB in TMPDIR count: 200 files of 1 MiB would fit without
	[ "$n" -le $((100 + SLACK / MiB)) ] || fail "$n files of 1 MiB beside 100 MiB in TMPDIR, for a bound of 200 MiB"
	sleep 0.5
	# not grown (a directory block given back meanwhile, 4 KiB once in CI,
	# is no write of the payload's)
	[ "$(held_bytes "$id")" -le "$b" ] || fail "the session grew while frozen: $b -> $(held_bytes "$id")"
	run_isd resume --end "$id"
	expect_rc 0 "isd resume --end"
	finish_bg
	expect_rc 137 "a sandbox ended at its bound"
	expect_not_contains "$out" "all written"
	u=$(upper_bytes "$id")
	[ "$u" -le $((200 * MiB + SLACK)) ] || fail "the upper layer holds $u bytes after the run"
	ls -d "${TMPDIR:-/tmp}"/isd-landlock-* 2>/dev/null | while read -r d; do
		[ "$(stat -c %U "$d")" != "$(id -un)" ] || [ ! -e "$d/tmp/scratch" ] || fail "the private TMPDIR $d stayed"
	done
	expect_reviewable "$id" f0
}

# A sparse file and many hard links are what they cost in the copy, and
# the session's upper layer made from it after the run: holes stay holes,
# links stay links (a copy of each would be 40 times the data), in the
# session and in the project after isd apply.
test_landlock_tier_sparse_and_links_stay_small() {
	need_landlock_tier
	storage_project
	run_isd exec $tier --profile none --workspace "$P:cow" --storage-opt size=200M -- sh -c '
		dd if=/dev/zero of=sparse bs=1M seek=180 count=1 2>/dev/null
		dd if=/dev/zero of=data bs=1M count=120 2>/dev/null
		i=0; while [ $i -lt 40 ]; do ln data link$i; i=$((i + 1)); done
		mkdir hidden; ln data hidden/x; chmod 000 hidden
		echo done'
	expect_rc 0 "holes and links are not growth"
	expect_contains "$out" "done"
	expect_not_contains "$err" "frozen"
	id=$(session_id)
	u=$(upper_bytes "$id")
	[ "$u" -le $((200 * MiB)) ] || fail "the upper layer holds $u bytes for 121 MiB of data"
	[ "$(stat -c %h "$XDG_STATE_HOME/isd/sessions/$id/upper/link7")" -ge 40 ] || fail "link7 is not a link in the upper layer"
	[ "$(stat -c %a "$XDG_STATE_HOME/isd/sessions/$id/upper/hidden")" = 0 ] || fail "hidden's mode was not kept"
	chmod 755 "$XDG_STATE_HOME/isd/sessions/$id/upper/hidden"
	expect_reviewable "$id" link7
	[ "$(stat -c %h "$P/link7")" -ge 40 ] || fail "isd apply made link7 a copy of its own"
	[ "$(du -sB1 "$P" | cut -f1)" -le $((200 * MiB)) ] || fail "isd apply wrote $(du -sh "$P") for 121 MiB of data"
}

test_landlock_tier_inode_flood_stops_at_the_bound() {
	need_landlock_tier
	storage_project
	i=0
	mkdir "$P/many"
	while [ $i -lt 3000 ]; do : >"$P/many/p$i"; i=$((i + 1)); done
	start_cow --storage-opt inodes=2000 -- sh -c 'i=0; while :; do : >f$i || break; i=$((i + 1)); done; echo stopped at $i'
	wait_frozen
	id=$(session_id)
	files=$(ls "$XDG_STATE_HOME/isd/sessions/$id/landlock-copy/proj" | grep -c '^f')
	echo "frozen at $files new files for a bound of 2000"
	# The loop makes 100000 files a second and more, faster than a count
	# reads the copy's 5000: the count runs frozen once the free inodes
	# say the bound may be crossed, so the slack is what the loop makes
	# in a look or two (a millisecond each, more on a loaded machine),
	# not while a count runs.
	[ "$files" -ge 1900 ] && [ "$files" -le 3000 ] || fail "frozen at $files new files for a bound of 2000 (the project's 3000 do not count)"
	run_isd resume --end "$id"
	finish_bg
	expect_rc 137
	run_isd diff --stat "$id"
	expect_rc 0 "isd diff after an inode flood"
}

# The same for bytes: dd's to a tmpfs beside a copy of 3000 files (a
# count of the running sandbox takes longer than the writer needs for the
# room left) stop within the slack of the bound.
test_landlock_tier_size_flood_stops_at_the_bound() {
	need_landlock_tier
	storage_project
	i=0
	mkdir "$P/many"
	while [ $i -lt 3000 ]; do : >"$P/many/p$i"; i=$((i + 1)); done
	start_cow --storage-opt size=100M -- sh -c 'i=0; while :; do dd if=/dev/zero of=f$i bs=1M count=16 2>/dev/null || break; i=$((i + 1)); done; echo stopped at $i'
	wait_frozen
	id=$(session_id)
	b=$(du -cB1 "$XDG_STATE_HOME/isd/sessions/$id/landlock-copy/proj"/f* | tail -n1 | cut -f1)
	echo "frozen at $b bytes for a bound of 100 MiB"
	[ "$b" -ge $((90 * MiB)) ] && [ "$b" -le $((100 * MiB + SLACK)) ] || fail "frozen at $b bytes for a bound of 100 MiB"
	expect_contains "$(cat "$T/bg.err")" "its bound is 100.0 MiB" "the message names the bound"
	expect_not_contains "$(cat "$T/bg.out")" "stopped at" "the writer never finished"
	run_isd resume --end "$id"
	finish_bg
	expect_rc 137
}

# Another program freeing space on the same file system while the
# payload floods (a build beside it cleaning up, parallel tests: CI saw
# 335 MB for a bound of 100 MiB and 3007 files for 2000) hides the flood
# from the free space, and the copy's 20000 files make a count dear, so
# periodic counts are far apart.  inotify still sees each file made and
# written (src/storage-notify.c): the flood stops within the slack.
freed_space_beside() {
	what=$1
	need_landlock_tier
	storage_project
	command -v fallocate >/dev/null || skip "fallocate (util-linux) is not installed"
	[ "$(df -Pk "$T" | awk 'NR == 2 { print $4 }')" -gt $((8 * 1024 * 1024)) ] || skip "less than 8 GiB free on $T"
	mkdir "$P/many" "$T/ballast"
	i=0
	while [ $i -lt 20000 ]; do : >"$P/many/p$i"; i=$((i + 1)); done
	# 16 pieces, freed one each 50 ms while the flood runs: faster than
	# it writes, so the free space only grows
	i=0
	while [ $i -lt 16 ]; do
		if [ "$what" = size ]; then
			fallocate -l 128M "$T/ballast/$i" || skip "fallocate does not work on $T"
		else
			mkdir "$T/ballast/$i"
			(cd "$T/ballast/$i" && j=0 && while [ $j -lt 2000 ]; do : >b$j; j=$((j + 1)); done)
		fi
		i=$((i + 1))
	done
	if [ "$what" = size ]; then
		flood='dd if=/dev/zero of=f$i bs=1M count=16 2>/dev/null || break'
		opt=size=100M
	else
		flood=': >f$i || break'
		opt=inodes=2000
	fi
	start_cow --storage-opt $opt -- sh -c "echo ready; sleep 0.2; i=0; while :; do $flood; i=\$((i + 1)); done; echo stopped at \$i"
	n=0
	until grep -q ready "$T/bg.out" 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 600 ] || fail "the sandbox did not start: $(cat "$T/bg.err")"
		sleep 0.05
	done
	i=0
	while [ $i -lt 16 ]; do
		rm -rf "$T/ballast/$i"
		sleep 0.05
		i=$((i + 1))
	done
	wait_frozen
	id=$(session_id)
	copy=$XDG_STATE_HOME/isd/sessions/$id/landlock-copy/proj
	if [ "$what" = size ]; then
		b=$(du -cB1 "$copy"/f* | tail -n1 | cut -f1)
		echo "frozen at $b bytes for a bound of 100 MiB with 2 GiB freed beside"
		[ "$b" -ge $((90 * MiB)) ] && [ "$b" -le $((100 * MiB + SLACK)) ] || fail "frozen at $b bytes for a bound of 100 MiB with 2 GiB freed beside"
	else
		files=$(ls "$copy" | grep -c '^f')
		echo "frozen at $files new files for a bound of 2000 with 32000 files freed beside"
		[ "$files" -ge 1900 ] && [ "$files" -le 3000 ] || fail "frozen at $files new files for a bound of 2000 with 32000 files freed beside"
	fi
	expect_not_contains "$(cat "$T/bg.out")" "stopped at" "the writer never finished"
	run_isd resume --end "$id"
	finish_bg
	expect_rc 137
}

test_landlock_tier_size_flood_beside_freed_space_stops_at_the_bound() {
	freed_space_beside size
}

test_landlock_tier_inode_flood_beside_freed_space_stops_at_the_bound() {
	freed_space_beside inodes
}

# Rename tricks: a file written outside the counted area (the sandbox's
# /tmp, or TMPDIR) and moved or linked into the workspace, a file renamed
# over a counted one whose other name keeps its blocks, directories
# renamed back and forth while they fill, a file deleted but held open.
# The sum still freezes the sandbox at the bound, and the session ends
# reviewable.
rename_tricks() {
	storage_project
	start_cow --storage-opt size=200M -- sh -c '
		t=${TMPDIR:-/tmp}
		dd if=/dev/zero of="$t/a" bs=1M count=60 2>/dev/null; mv "$t/a" a
		dd if=/dev/zero of="$t/b" bs=1M count=30 2>/dev/null; ln "$t/b" b 2>/dev/null || cp "$t/b" b
		ln a a2; dd if=/dev/zero of=c bs=1M count=20 2>/dev/null; mv c a
		mkdir d
		(i=0; while [ $i -lt 40 ]; do dd if=/dev/zero of=d/f$i bs=1M count=1 2>/dev/null; i=$((i + 1)); done) &
		j=0; while [ $j -lt 100 ]; do mv d e 2>/dev/null; mv e d 2>/dev/null; j=$((j + 1)); done
		wait
		echo renamed
		exec 3>held; rm held; dd if=/dev/zero bs=1M count=100 >&3 2>/dev/null
		i=0; while [ $i -lt 200 ]; do dd if=/dev/zero of=g$i bs=1M count=1 2>/dev/null; i=$((i + 1)); done
		echo all written'
	wait_frozen
	id=$(session_id)
	b=$(held_bytes "$id")
	[ "$b" -le $((200 * MiB + SLACK)) ] || fail "frozen at $b bytes, over 200 MiB + slack: $(cat "$T/bg.err")"
	expect_contains "$(cat "$T/bg.out")" "renamed" "the renames ran before the bound"
	# what the deleted file holds counted: the 150 MiB before it and its
	# 100 MiB freeze the sandbox; without it, some 50 files of g fit
	n=$(find "$XDG_STATE_HOME/isd/sessions/$id" -name 'g*' | wc -l)
	[ "$n" -lt 25 ] || fail "$n files of 1 MiB beside 100 MiB held by a deleted file: $(cat "$T/bg.err")"
	run_isd resume --end "$id"
	finish_bg
	expect_rc 137
	expect_not_contains "$out" "all written"
	u=$(upper_bytes "$id")
	[ "$u" -le $((200 * MiB + SLACK)) ] || fail "the upper layer holds $u bytes after the run"
	expect_reviewable "$id" a2
}

test_rename_tricks_stay_at_the_bound() {
	rename_tricks
}

test_landlock_tier_rename_tricks_stay_at_the_bound() {
	need_landlock_tier
	rename_tricks
}

# The full tier with isd's store on overlayfs (the home on a container's
# image): the payload writes to copies of the workspace and the agent's
# state (src/workspace-fallback.c), not to upper layers, and the watcher
# counts those copies as the landlock tier's: what changed since they were
# made.  Made here as isolation/full_cow_with_store_on_overlayfs does:
# isd nested in an isd whose cow workspace holds the inner store.  The
# inner script ($T/outer/inner.sh, given as the test's body) prints
# key=value lines, read back from $out.  (Before: nothing was counted,
# the floods ran to their end.)
run_nested_on_overlay_store() {
	cat >"$T/outer/inner.sh"
	user=
	if [ "$(id -u)" -eq 0 ]; then
		# (uid 0 inside an isd cannot map itself again)
		user="-u 1000"
		chmod -R a+rwX "$T/outer"
	fi
	run_isd exec $user --security-opt seccomp=nested --profile none -v "$(dirname "$ISD"):$(dirname "$ISD"):ro" \
		-v "$ISD_TEST_SRCDIR:$ISD_TEST_SRCDIR:ro" -e ISD="$ISD" --workspace "$T/outer:cow" -w "$T/outer" -- sh "$T/outer/inner.sh"
	case $out in
	*store-fs=overlayfs*) ;;
	*) skip "no nested full tier with its store on overlayfs here: $out $err" ;;
	esac
	expect_rc 0 "$err"
}

# The inner script's helpers: flood STATE LIMIT SCRIPT runs SCRIPT in a
# cow sandbox of proj bound by LIMIT in the background, waits up to 60 s
# for the freeze (frozen=1, else frozen=0 and the sandbox killed), and
# leaves its session in $id.
NESTED_LIB='
export HOME=$PWD/home
mkdir -p "$HOME"
cd proj || exit 1
echo "store-fs=$(stat -f -c %T .)"
flood() {
	export XDG_STATE_HOME=$HOME/../$1
	"$ISD" exec --profile none --workspace "$PWD:cow" --storage-opt "$2" -- sh -c "$3" >"$HOME/bg.out" 2>"$HOME/bg.err" </dev/null &
	bg=$!
	n=0 frozen=0
	while [ $n -lt 600 ] && kill -0 $bg 2>/dev/null; do
		grep -q "the sandbox is frozen" "$HOME/bg.err" && { frozen=1; break; }
		n=$((n + 1)); sleep 0.1
	done
	echo "frozen=$frozen"
	id=$(ls "$XDG_STATE_HOME/isd/sessions" | grep -v "^[.]" | head -n1)
	copy=$XDG_STATE_HOME/isd/sessions/$id/full-copy
	[ -d "$copy" ] && echo "copy=yes"
}
end_flood() {
	if [ $frozen = 1 ]; then "$ISD" resume --end "$id" >/dev/null 2>&1; echo "resume=$?"; else kill -9 $bg; fi
	wait $bg; echo "flood-rc=$?"
	sed "s/^/bg-out: /" "$HOME/bg.out"; sed "s/^/bg-err: /" "$HOME/bg.err"
	"$ISD" diff --stat "$id" >"$HOME/diff.out" 2>&1; echo "diff=$?"
	sed "s/^/diff: /" "$HOME/diff.out"
}
'

# An inode flood stops at the bound; the project's 3000 files in the
# copy do not count.
test_full_tier_copies_inode_flood_stops_at_the_bound() {
	mkdir -p "$T/outer/proj/many"
	i=0
	while [ $i -lt 3000 ]; do : >"$T/outer/proj/many/p$i"; i=$((i + 1)); done
	# at most 30000 files: without a bound the test fails, not the disk
	run_nested_on_overlay_store <<EOF
$NESTED_LIB
flood state inodes=2000 'echo kept >kept; i=0; while [ \$i -lt 30000 ]; do : >f\$i || break; i=\$((i + 1)); done; echo stopped at \$i'
echo "files=\$(find "\$copy" -name "f*" -type f | wc -l)"
end_flood
EOF
	expect_contains "$out" "frozen=1" "the inode flood froze the sandbox: $out"
	expect_contains "$out" "copy=yes" "the tier wrote to a copy"
	files=$(printf '%s\n' "$out" | sed -n 's/^files=//p')
	echo "frozen at $files new files for a bound of 2000"
	[ "$files" -ge 1900 ] && [ "$files" -le 3000 ] || fail "frozen at $files new files for a bound of 2000 (the project's 3000 do not count)"
	expect_contains "$out" "bg-err: isd: " "the watcher's message"
	expect_not_contains "$out" "bg-out: stopped at" "the writer never finished"
	expect_contains "$out" "resume=0" "isd resume --end"
	expect_contains "$out" "flood-rc=137" "a sandbox ended at its bound"
	expect_contains "$out" "diff=0" "isd diff after the flood"
	expect_contains "$out" "diff:  kept " "what was written before the bound is kept"
}

# A size flood stops at the bound, while a write under it runs to its
# end and is kept; the project's 120 MiB in the copy do not count.
test_full_tier_copies_size_flood_stops_at_the_bound() {
	mkdir -p "$T/outer/proj"
	dd if=/dev/zero of="$T/outer/proj/old" bs=1M count=120 2>/dev/null
	# at most 1 GiB: without a bound the test fails, not the disk
	run_nested_on_overlay_store <<EOF
$NESTED_LIB
export XDG_STATE_HOME=\$HOME/../under
"\$ISD" exec --profile none --workspace "\$PWD:cow" --storage-opt size=100M -- dd if=/dev/zero of=kept bs=1M count=20 2>"\$HOME/under.err"
echo "under=\$?"
sed "s/^/under-err: /" "\$HOME/under.err"
echo "kept=\$(du -B1M "\$XDG_STATE_HOME"/isd/sessions/*/upper/kept | cut -f1)"
flood state size=100M 'i=0; while [ \$i -lt 64 ]; do dd if=/dev/zero of=f\$i bs=1M count=16 2>/dev/null || break; i=\$((i + 1)); done; echo stopped at \$i'
echo "bytes=\$(find "\$copy" -name "f*" -type f -exec du -cB1 {} + | sed -n "s/\ttotal\$//p" | tail -n1)"
end_flood
EOF
	expect_contains "$out" "under=0" "a write under the bound runs to its end"
	expect_not_contains "$out" "under-err: isd: the sandbox is frozen" "no freeze under the bound"
	expect_contains "$out" "kept=20" "the write under the bound is kept after the run"
	expect_contains "$out" "frozen=1" "the size flood froze the sandbox: $out"
	expect_contains "$out" "copy=yes" "the tier wrote to a copy"
	b=$(printf '%s\n' "$out" | sed -n 's/^bytes=//p')
	echo "frozen at $b bytes for a bound of 100 MiB"
	[ "${b:-0}" -ge $((90 * MiB)) ] && [ "$b" -le $((100 * MiB + SLACK)) ] || fail "frozen at $b bytes for a bound of 100 MiB"
	expect_contains "$out" "its bound is 100.0 MiB" "the message names the bound"
	expect_not_contains "$out" "bg-out: stopped at" "the writer never finished"
	expect_contains "$out" "resume=0" "isd resume --end"
	expect_contains "$out" "flood-rc=137" "a sandbox ended at its bound"
	expect_contains "$out" "diff=0" "isd diff after the flood"
	expect_contains "$out" "diff:  f0 " "the session stays reviewable"
}

# The same for the agent's state (its copy beside its store): what the
# payload writes into ~/.pi counts; its settings do not.
test_full_tier_copies_agent_state_flood_stops_at_the_bound() {
	mkdir -p "$T/outer/proj" "$T/outer/home/.pi"
	echo '{}' >"$T/outer/home/.pi/settings.json"
	dd if=/dev/zero of="$T/outer/home/.pi/old" bs=1M count=120 2>/dev/null
	run_nested_on_overlay_store <<EOF
$NESTED_LIB
export XDG_STATE_HOME=\$HOME/../state
"\$ISD" exec --agent pi --workspace "\$PWD:cow" --storage-opt size=100M -- sh -c 'i=0; while [ \$i -lt 64 ]; do dd if=/dev/zero of="\$HOME/.pi/f\$i" bs=1M count=16 2>/dev/null || break; i=\$((i + 1)); done; echo stopped at \$i' >"\$HOME/bg.out" 2>"\$HOME/bg.err" </dev/null &
bg=\$!
n=0 frozen=0
while [ \$n -lt 600 ] && kill -0 \$bg 2>/dev/null; do
	grep -q "the sandbox is frozen" "\$HOME/bg.err" && { frozen=1; break; }
	n=\$((n + 1)); sleep 0.1
done
echo "frozen=\$frozen"
echo "copies=\$(find "\$XDG_STATE_HOME" -name full-copy | wc -l)"
echo "bytes=\$(find "\$XDG_STATE_HOME" -name "f[0-9]*" -type f -exec du -cB1 {} + | sed -n "s/\ttotal\$//p" | tail -n1)"
id=\$(ls "\$XDG_STATE_HOME/isd/sessions" | grep -v "^[.]" | head -n1)
if [ \$frozen = 1 ]; then "\$ISD" resume --end "\$id" >/dev/null 2>&1; echo "resume=\$?"; else kill -9 \$bg; fi
wait \$bg; echo "flood-rc=\$?"
sed "s/^/bg-out: /" "\$HOME/bg.out"; sed "s/^/bg-err: /" "\$HOME/bg.err"
EOF
	expect_contains "$out" "frozen=1" "the flood of the agent's state froze the sandbox: $out"
	expect_contains "$out" "copies=2" "the tier wrote to copies"
	b=$(printf '%s\n' "$out" | sed -n 's/^bytes=//p')
	echo "frozen at $b bytes for a bound of 100 MiB"
	[ "${b:-0}" -ge $((90 * MiB)) ] && [ "$b" -le $((100 * MiB + SLACK)) ] || fail "frozen at $b bytes for a bound of 100 MiB"
	expect_not_contains "$out" "bg-out: stopped at" "the writer never finished"
	expect_contains "$out" "resume=0" "isd resume --end"
	expect_contains "$out" "flood-rc=137" "a sandbox ended at its bound"
}
