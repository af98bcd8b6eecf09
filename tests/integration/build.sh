# SPDX-License-Identifier: LGPL-2.1-or-later
# isd build and isd image, offline: base images are OCI layouts made here
# from busybox (tests/build/lib.sh: written with tar, gzip and sha256sum,
# or with umoci), the store lives in $T.

. "$ISD_TEST_SRCDIR/tests/build/lib.sh"

test_build_scratch_copy() {
	store
	mkdir -p "$T/ctx/sub/deep"
	need_busybox
	cp "$BUSYBOX" "$T/ctx/busybox"
	echo hello >"$T/ctx/sub/a.txt"
	echo deep >"$T/ctx/sub/deep/b.txt"
	ln -s a.txt "$T/ctx/sub/link"
	mkdir -p "$T/arch/inner"
	echo packed >"$T/arch/inner/p.txt"
	(cd "$T/arch" && tar -czf "$T/ctx/pack.tar.gz" inner)
	cat >"$T/ctx/Containerfile" <<-'EOF'
	FROM scratch
	ARG WHO=world
	ENV GREETING="hello $WHO" PATH=/bin
	COPY busybox /bin/
	COPY sub /data/
	COPY --chmod=0640 sub/a.txt sub/deep/b.txt /files/
	WORKDIR /work
	ADD pack.tar.gz sub/a.txt ./
	LABEL org.example.who=$WHO
	CMD ["/bin/busybox", "sh"]
	EOF
	run_isd build -t scratchy --build-arg WHO=isd "$T/ctx"
	expect_rc 0 "build"
	expect_contains "$out" "STEP 10/10: CMD"
	run_isd exec --image scratchy -- /bin/busybox sh -c 'cat /data/a.txt /data/deep/b.txt; /bin/busybox readlink /data/link; /bin/busybox stat -c %a /files/a.txt /files/b.txt; cat /work/inner/p.txt /work/a.txt'
	expect_rc 0 "exec --image"
	expect_eq "$out" "hello
deep
a.txt
640
640
packed
hello"
	run_isd image inspect scratchy
	expect_rc 0
	expect_contains "$out" '"GREETING=hello isd"'
	expect_contains "$out" '"org.example.who": "isd"'
	expect_contains "$out" '"workdir": "/work"'
	expect_contains "$out" '"base": "scratch"'
}

test_build_noop_rebuild() {
	store
	mkdir -p "$T/ctx"
	echo one >"$T/ctx/file"
	printf 'FROM scratch\nCOPY file /file\n' >"$T/ctx/Containerfile"
	run_isd build -t noop "$T/ctx"
	expect_rc 0
	first=$(readlink "$T/data/isd/images/noop/current")
	run_isd build -t noop "$T/ctx"
	expect_rc 0
	expect_contains "$out" "noop is up to date"
	expect_eq "$(readlink "$T/data/isd/images/noop/current")" "$first" "unchanged rebuild"
	# A changed context file, a build arg and --no-cache all rebuild.
	echo two >"$T/ctx/file"
	run_isd build -t noop "$T/ctx"
	expect_rc 0
	expect_not_contains "$out" "up to date"
	second=$(readlink "$T/data/isd/images/noop/current")
	[ "$second" != "$first" ] || fail "a changed context file did not rebuild"
	run_isd build -t noop --no-cache "$T/ctx"
	expect_rc 0
	[ "$(readlink "$T/data/isd/images/noop/current")" != "$second" ] || fail "--no-cache did not rebuild"
	# The old trees stay until pruned; then only the current one is left.
	[ "$(ls "$T/data/isd/images/noop" | wc -l)" -eq 4 ] || fail "expected three trees and current"
	run_isd image prune
	expect_rc 0
	expect_contains "$out" "removed 2 old trees"
	[ "$(ls "$T/data/isd/images/noop" | wc -l)" -eq 2 ] || fail "prune left old trees"
}

test_build_refusals() {
	store
	mkdir -p "$T/ctx"
	printf 'FROM scratch\nCOPY a /a\nONBUILD RUN true\n' >"$T/ctx/Containerfile"
	run_isd build -t refused "$T/ctx"
	expect_rc 125
	expect_contains "$err" "Containerfile:3: ONBUILD is not supported"
	printf 'FROM scratch\n\nCOPY --from=builder /a /a\n' >"$T/ctx/Containerfile"
	run_isd build -t refused "$T/ctx"
	expect_rc 125
	expect_contains "$err" ":3: COPY --from"
	printf 'FROM scratch\nRUN <<EOF\ntrue\nEOF\n' >"$T/ctx/Containerfile"
	run_isd build -t refused "$T/ctx"
	expect_contains "$err" ":2: heredocs"
	# (no registry is contacted: short names need an alias, and a bad
	# reference is refused before any request)
	printf 'FROM notanalias:41\n' >"$T/ctx/Containerfile"
	run_isd build -t refused "$T/ctx"
	expect_rc 125
	expect_contains "$err" "short name without an alias"
	printf 'FROM registry.example/UPPER/case\n' >"$T/ctx/Containerfile"
	run_isd build -t refused "$T/ctx"
	expect_rc 125
	expect_contains "$err" "not a valid image reference"
	run_isd build "$T/ctx"
	expect_rc 125
	expect_contains "$err" "isd: build: no image name given"
	run_isd build --frob -t x "$T/ctx"
	expect_rc 125
	expect_contains "$err" "isd: build: unknown option '--frob' (see isd build --help)"
	run_isd build -t x "$T/ctx" "$T/ctx"
	expect_rc 125
	expect_contains "$err" "isd: build: unexpected argument"
	run_isd build --help
	expect_rc 0
	expect_contains "$out" "Usage: isd build -t NAME"
	run_isd build -t ../x "$T/ctx"
	expect_contains "$err" "not a valid image name"
	[ ! -e "$T/data/isd/images/refused/current" ] || fail "a refused build published an image"
}

test_build_copy_stays_in_context() {
	store
	mkdir -p "$T/ctx" "$T/outside"
	echo secret >"$T/outside/secret"
	ln -s "$T/outside/secret" "$T/ctx/abs-link"
	ln -s ../outside/secret "$T/ctx/rel-link"
	ln -s ../outside "$T/ctx/dir-link"
	printf 'FROM scratch\nCOPY ../outside/secret /s\n' >"$T/ctx/Containerfile"
	run_isd build -t esc "$T/ctx"
	expect_rc 125 "COPY ../"
	expect_contains "$err" "outside the build context"
	for l in abs-link rel-link dir-link/secret; do
		printf 'FROM scratch\nCOPY %s /s\n' "$l" >"$T/ctx/Containerfile"
		run_isd build -t esc "$T/ctx"
		expect_rc 125 "COPY $l"
	done
	# Inside a copied directory a symlink is copied as a symlink.
	mkdir -p "$T/ctx/d"
	ln -s "$T/outside/secret" "$T/ctx/d/link"
	printf 'FROM scratch\nCOPY d /d/\n' >"$T/ctx/Containerfile"
	run_isd build -t esc "$T/ctx"
	expect_rc 0
	expect_eq "$(readlink "$T/data/isd/images/esc/current/rootfs/d/link")" "$T/outside/secret"
}

test_build_from_oci_layout() {
	store
	base_layout
	mkdir -p "$T/ctx"
	echo added >"$T/ctx/file"
	printf 'FROM oci:%s:bb\nCOPY --chown=agent file /home/agent/file\nUSER agent\nWORKDIR /home/agent\n' "$T/base" >"$T/ctx/Containerfile"
	run_isd build -t fromoci "$T/ctx"
	expect_rc 0 "build FROM oci:"
	expect_contains "$out" "layer 1/1"
	run_isd exec --image fromoci -u 1000 -- sh -c 'echo $MARK; cat /home/agent/file; ls -n /home/agent/file'
	expect_rc 0
	expect_contains "$out" "added"
	run_isd image inspect fromoci
	expect_contains "$out" '"MARK=one"'
	expect_contains "$out" '"user": "agent"'
	expect_contains "$out" '"uid": 1000'
	expect_contains "$out" '"base_digest": "sha256:'
	# The same image through a multi-platform index, relative to the
	# context, and as an oci-archive.
	cp -r "$T/base" "$T/ctx/layout"
	printf 'FROM oci:layout:bb-multi\n' >"$T/ctx/Containerfile"
	run_isd build -t multi "$T/ctx"
	expect_rc 0 "FROM an image index"
	(cd "$T/base" && tar -cf "$T/ctx/base.tar" .)
	printf 'FROM oci-archive:base.tar:bb\n' >"$T/ctx/Containerfile"
	run_isd build -t archived "$T/ctx"
	expect_rc 0 "FROM oci-archive:"
	run_isd exec --image archived -- cat /etc/passwd
	expect_contains "$out" "agent:x:1000"
	printf 'FROM oci:layout:nope\n' >"$T/ctx/Containerfile"
	run_isd build -t missing "$T/ctx"
	expect_contains "$err" "no image named 'nope'"
}

test_build_verifies_blobs() {
	store
	base_layout
	mkdir -p "$T/ctx"
	cp -r "$T/base" "$T/ctx/layout"
	# Corrupt the layer blob: same name, other content.
	for f in "$T/ctx/layout/blobs/sha256/"*; do
		if gzip -t "$f" 2>/dev/null; then
			chmod u+w "$f"
			printf 'x' | dd of="$f" bs=1 seek=100 conv=notrunc 2>/dev/null
		fi
	done
	printf 'FROM oci:layout:bb\n' >"$T/ctx/Containerfile"
	run_isd build -t corrupt "$T/ctx"
	expect_rc 125 "a corrupted layer"
	[ ! -e "$T/data/isd/images/corrupt/current" ] || fail "a corrupted base was published"
}

test_build_base_change_rebuilds() {
	store
	base_layout
	mkdir -p "$T/ctx"
	cp -r "$T/base" "$T/ctx/layout"
	printf 'FROM oci:layout:bb\n' >"$T/ctx/Containerfile"
	run_isd build -t follow "$T/ctx"
	expect_rc 0
	run_isd build -t follow --pull "$T/ctx"
	expect_contains "$out" "up to date"
	# "Re-push" of the tag: a new layout with other content.
	rm -rf "$T/ctx/layout"
	echo v2 >"$T/baseroot/version"
	make_layout "$T/ctx/layout" bb "$T/baseroot" two
	run_isd build -t follow --pull "$T/ctx"
	expect_rc 0
	expect_not_contains "$out" "up to date"
	run_isd exec --image follow -- cat /version
	expect_eq "$out" v2
}

test_build_run() {
	store
	need_subids
	base_layout
	mkdir -p "$T/ctx"
	cat >"$T/ctx/Containerfile" <<-EOF
	FROM oci:$T/base:bb
	ARG PKG=demo
	RUN id -u > /built-by && echo "\$PKG" > /pkg && mkdir -p /home/agent/ws && chown -R agent:agent /home/agent
	RUN grep -q '^CapEff:.*0*a80425fb' /proc/self/status && test "\$(cat /proc/1/cmdline | wc -c)" -gt 0
	USER agent
	RUN id -u > /home/agent/ws/me && touch /home/agent/ws/made-by-agent
	RUN ["sh", "-c", "echo exec-form > /home/agent/ws/exec"]
	WORKDIR /home/agent/ws
	EOF
	run_isd build -t ran "$T/ctx"
	expect_rc 0 "build with RUN"
	expect_contains "$out" "STEP 3/8: RUN id -u"
	run_isd exec --image ran -u 1000 -- sh -c 'cat /built-by /pkg /home/agent/ws/me /home/agent/ws/exec; ls -n /home/agent/ws/made-by-agent'
	expect_rc 0
	expect_contains "$out" "0
demo
1000
exec-form"
	# Inside 1000 is the caller: the agent's files are ours on the host.
	[ "$(stat -c %u "$T/data/isd/images/ran/current/rootfs/home/agent/ws/made-by-agent")" = "$(id -u)" ] ||
		[ "$(id -u)" -eq 0 ] || fail "agent's file not owned by the caller on the host"
	# A failing RUN fails the build and keeps the old image.
	before=$(readlink "$T/data/isd/images/ran/current")
	printf 'FROM oci:%s:bb\nRUN exit 3\n' "$T/base" >"$T/ctx/Containerfile"
	run_isd build -t ran "$T/ctx"
	expect_rc 125
	expect_contains "$err" "line 2: RUN failed with exit status 3"
	expect_eq "$(readlink "$T/data/isd/images/ran/current")" "$before"
	[ -z "$(ls -d "$T/data/isd/images/ran/.build-"* 2>/dev/null)" ] || fail "the failed build's tree was left"
}

test_build_run_needs_subids() {
	store
	base_layout
	mkdir -p "$T/ctx"
	printf 'FROM oci:%s:bb\nRUN true\n' "$T/base" >"$T/ctx/Containerfile"
	ISD_SUBID_FILE_UID=/nonexistent run_isd build -t nosub "$T/ctx"
	# Only a root that owns many ids (not uid 0 of `unshare -r`, which
	# maps a single one) needs no subordinate range.
	if [ "$(id -u)" -eq 0 ] && [ "$(awk '{ n += $3 } END { print (n > 65536) }' /proc/self/uid_map)" = 1 ]; then
		expect_rc 0 "root owns every id: RUN needs no subordinate range"
	else
		expect_rc 125
		expect_contains "$err" "usermod --add-subuids"
	fi
}

test_build_kill9_keeps_old() {
	store
	need_subids
	base_layout
	mkdir -p "$T/ctx"
	printf 'FROM oci:%s:bb\nRUN echo first > /which\n' "$T/base" >"$T/ctx/Containerfile"
	run_isd build -t killed "$T/ctx"
	expect_rc 0
	old=$(readlink "$T/data/isd/images/killed/current")
	printf 'FROM oci:%s:bb\nRUN echo second > /which && sleep 61\n' "$T/base" >"$T/ctx/Containerfile"
	"$ISD" build -t killed "$T/ctx" >"$T/build.out" 2>&1 &
	pid=$!
	i=0
	until grep -q "STEP 2/2" "$T/build.out" 2>/dev/null && [ -n "$(ls -d "$T/data/isd/images/killed/.build-"*/rootfs/which 2>/dev/null)" ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || { kill -9 $pid; fail "the build did not reach RUN: $(cat "$T/build.out")"; }
		sleep 0.1
	done
	kill -9 $pid
	wait $pid 2>/dev/null
	sleep 0.5
	! proc_running "sleep 61" || fail "the RUN step outlived isd"
	expect_eq "$(readlink "$T/data/isd/images/killed/current")" "$old" "current after kill -9"
	run_isd exec --image killed -- cat /which
	expect_eq "$out" first
	run_isd image prune
	expect_rc 0
	expect_contains "$out" "removed 1 old tree"
	[ -z "$(ls -d "$T/data/isd/images/killed/.build-"* 2>/dev/null)" ] || fail "prune left the killed build"
}

test_image_commands() {
	store
	mkdir -p "$T/ctx"
	echo x >"$T/ctx/x"
	printf 'FROM scratch\nCOPY x /x\n' >"$T/ctx/Containerfile"
	run_isd build -q -t one "$T/ctx"
	expect_rc 0
	expect_eq "$out" ""
	run_isd build -q -t two "$T/ctx"
	run_isd image ls
	expect_rc 0
	expect_contains "$out" "one "
	expect_contains "$out" "two "
	run_isd image rm one
	expect_rc 0
	[ ! -e "$T/data/isd/images/one" ] || fail "rm left the image"
	run_isd image inspect one
	expect_rc 125
	run_isd exec --image one -- true
	expect_rc 125 "exec of a removed image"
	run_isd image rm nothere
	expect_rc 125
	run_isd image frob
	expect_rc 125
	expect_contains "$err" "isd: image: unknown subcommand 'frob'"
	run_isd image inspect
	expect_rc 125
	expect_contains "$err" "isd: image inspect: expected an image NAME (see isd image --help)"
	run_isd image --help
	expect_rc 0
	expect_contains "$out" "Usage: isd image COMMAND"
}


# isd exec --image NAME runs with the image's ENV, USER and WORKDIR unless
# -e, -u or -w say otherwise.
test_exec_image_config() {
	store
	base_layout
	mkdir -p "$T/ctx"
	echo data >"$T/ctx/file"
	cat >"$T/ctx/Containerfile" <<-EOF
	FROM oci:$T/base:bb
	ENV GREETING="hello image" PATH=/bin:/opt/tools
	COPY --chown=agent file /srv/app/file
	WORKDIR /srv/app
	USER agent
	EOF
	run_isd build -t cfg "$T/ctx"
	expect_rc 0 "build"
	run_isd exec --image cfg -- sh -c 'id -u; id -g; pwd; echo "$GREETING|$HOME|$USER|$PATH|$MARK"'
	expect_rc 0 "exec with the image's defaults"
	expect_eq "$out" "1000
1000
/srv/app
hello image|/home/agent|agent|/bin:/opt/tools|one"
	run_isd exec --image cfg -u 0 -w /tmp -e GREETING=override -e PATH=/bin -- sh -c 'id -u; pwd; echo "$GREETING|$HOME|$PATH"'
	expect_rc 0 "exec with -u -w -e"
	expect_eq "$out" "0
/tmp
override|/root|/bin"
	run_isd exec --image cfg -u agent -- id -u
	expect_eq "$out" 1000 "-u NAME"
	run_isd exec --image cfg --print-spec -- true
	expect_rc 0
	expect_contains "$out" '"user": "image"'
	expect_contains "$out" '"workdir": "image"'
	expect_contains "$out" '"env:GREETING": "image"'
	expect_contains "$out" '"GREETING=hello image"'
	expect_contains "$out" '"workdir": "/srv/app"'
	run_isd exec --image cfg --print-spec -u 0 -w /tmp -- true
	expect_contains "$out" '"user": "command line"'
	expect_contains "$out" '"workdir": "command line"'
	# The host image and --rootfs keep isd's defaults.
	run_isd exec --rootfs "$T/data/isd/images/cfg/current/rootfs" -- sh -c 'id -u; pwd; echo "$GREETING"'
	expect_eq "$out" "$(id -u)
/" "--rootfs ignores meta.json"
}

# With a subordinate range, the image's other owners keep their ids: the
# sandbox gets the build's map (inside 1000 = the caller).
test_exec_image_idmap() {
	store
	need_subids
	base_layout
	mkdir -p "$T/ctx"
	cat >"$T/ctx/Containerfile" <<-EOF
	FROM oci:$T/base:bb
	RUN mkdir -p /srv && touch /srv/other /srv/rootfile && chown 4242:4343 /srv/other && chown -R agent:agent /home/agent
	USER agent
	WORKDIR /home/agent
	EOF
	run_isd build -t mapped "$T/ctx"
	expect_rc 0 "build"
	mkdir -p "$T/proj"
	if [ "$(id -u)" -eq 0 ]; then
		exec_image_idmap_as_root
		return
	fi
	run_isd exec --image mapped -v "$T/proj:/proj" -- sh -c 'id -u; touch /proj/made; busybox stat -c %u:%g /srv/other /srv/rootfile /proj/made'
	expect_rc 0 "exec with the image's map"
	expect_eq "$out" "1000
4242:4343
0:0
1000:1000"
	# Inside 1000 is the caller: what the payload makes is ours.
	expect_eq "$(stat -c %u "$T/proj/made")" "$(id -u)" "owner on the host"
	run_isd exec --image mapped --print-spec -- true
	expect_contains "$out" '"uid_map"'
	# -u 0 is the image's root (a subordinate id on the host).
	run_isd exec --image mapped -u 0 -- sh -c 'id -u; busybox stat -c %u /srv/rootfile'
	expect_rc 0
	expect_eq "$out" "0
0"
}

# As root, the image's map is root's own ids 1:1: the image's root would
# be the host's.  It is not used: the payload is never host uid 0 (seen
# from the host), the image still runs, and --unsafe-host-root keeps it.
exec_image_idmap_as_root() {
	run_isd exec --image mapped -u 0 -v "$T/proj:/proj" -- sh -c 'touch /proj/made; cat /proc/self/uid_map'
	expect_rc 0 "exec --image as root: $err"
	expect_contains "$err" "running as root: the image's id map is not used"
	printf '%s\n' "$out" | awk '$2 == 0 { bad = 1 } END { exit bad }' || fail "the payload's map reaches host root: $out"
	expect_eq "$(stat -c %u "$T/proj/made")" 0 "what the payload makes in root's bind is root's on disk"
	run_isd exec --image mapped -u 0 --unsafe-host-root -- cat /proc/self/uid_map
	expect_rc 0 "with --unsafe-host-root"
	expect_contains "$(printf '%s\n' "$out" | awk '{ print $2 }')" 0 "--unsafe-host-root keeps the image's map"
}

# A base made with umoci (tests/build/lib.sh: fixture_layout): set-id
# directories, owners, user.* xattrs and file capabilities survive the
# extraction, and RUN sees the setgid directory work.
test_build_umoci_fixture() {
	store
	need_subids
	fixture_layout
	mkdir -p "$T/ctx"
	printf 'FROM oci:%s:img\nRUN touch /shared/by-run\n' "$T/fix" >"$T/ctx/Containerfile"
	run_isd build -t fixture "$T/ctx"
	expect_rc 0 "build FROM the umoci fixture"
	check_fixture fixture
}

# high_ids_layout: $T/hi:img with files owned by 100000:100000, one of
# them set-uid.
high_ids_layout() {
	need_umoci
	make_busybox_root "$T/hroot"
	mkdir -p "$T/hroot/data"
	echo high >"$T/hroot/data/high"
	echo suid >"$T/hroot/data/suid"
	chmod 4755 "$T/hroot/data/suid"
	owner "$T/hroot/data/high" 100000 100000
	owner "$T/hroot/data/suid" 100000 100000
	umoci_image "$T/hi" img "$T/hroot" "$(arch)"
	mkdir -p "$T/ctx"
	printf 'FROM oci:%s:img\n' "$T/hi" >"$T/ctx/Containerfile"
}

# Ids above 65535 in a layer: kept when the subordinate range is large
# enough (and RUN can chown to them), else given to root with a warning
# and set-uid dropped.
test_build_high_ids() {
	store
	need_subids
	high_ids_layout
	# A range that ends below 100000: a part of the real one (newuidmap
	# allows no more), named through ISD_SUBID_FILE_UID/_GID.
	if [ "$(id -u)" -ne 0 ]; then
		for f in uid gid; do
			line=$(grep -m1 -e "^$(id -un):" -e "^$(id -u):" "/etc/sub$f")
			start=$(echo "$line" | cut -d: -f2)
			count=$(echo "$line" | cut -d: -f3)
			[ "$count" -le 65536 ] || count=65536
			echo "$(id -un):$start:$count" >"$T/sub$f"
		done
		export ISD_SUBID_FILE_UID="$T/subuid" ISD_SUBID_FILE_GID="$T/subgid"
		run_isd build -t small "$T/ctx"
		expect_rc 0 "ids beyond the range"
		expect_contains "$err" "2 entries owned by ids beyond your subordinate range (the first: uid 100000 gid 100000"
		run_isd exec --image small -- busybox stat -c '%u:%g %a %n' /data/high /data/suid
		expect_eq "$out" "0:0 644 /data/high
0:0 755 /data/suid" "flattened to root, set-uid dropped"
		unset ISD_SUBID_FILE_UID ISD_SUBID_FILE_GID
	fi
	# The caller's whole range (root: its own ids).
	run_isd build -t high "$T/ctx"
	expect_rc 0 "build with the caller's map"
	top=$("$ISD" image inspect high | python3 -c 'import json, sys; print(max(s + n - 1 for s, o, n in json.load(sys.stdin)["uid_map"]))')
	if [ "$top" -lt 100000 ]; then
		expect_contains "$err" "the image's ids end at $top"
		echo "(the range of $(id -un) ends at $top: ids above it only checked as flattened)" >&2
		return 0
	fi
	expect_not_contains "$err" "beyond your subordinate range"
	printf 'FROM oci:%s:img\nRUN touch /data/made && chown 100001:100002 /data/made\n' "$T/hi" >"$T/ctx/Containerfile"
	run_isd build -t high "$T/ctx"
	expect_rc 0 "RUN chown to ids above 65535"
	# shellcheck disable=SC2046
	run_isd exec --image high $(image_owner_view) -- busybox stat -c '%u:%g %a %n' /data/high /data/suid /data/made
	expect_eq "$out" "100000:100000 644 /data/high
100000:100000 4755 /data/suid
100001:100002 644 /data/made" "ids above 65535 kept"
	expect_eq "$(stat -c %u:%g "$(image_root high)/data/high")" "$(map_id high uid 100000):$(map_id high gid 100000)" \
		"the host's owner of /data/high"
}
