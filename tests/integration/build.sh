# SPDX-License-Identifier: LGPL-2.1-or-later
# isd build and isd image, offline: base images are OCI layouts made here
# from busybox (a gzip layer, config, manifest, index written with tar,
# gzip and sha256sum), the store lives in $T.

# Every isd call of a test uses the test's own store ($T exists only once
# the test runs).
store() {
	export XDG_DATA_HOME="$T/data"
	# Image trees belong to subordinate ids: isd removes them before
	# lib.sh's teardown removes $T.
	trap 'remove_images; test_teardown' EXIT
}

remove_images() {
	for n in $(ls "$T/data/isd/images" 2>/dev/null); do
		"$ISD" image rm "$n" >/dev/null 2>&1
	done
}

busybox_bin() {
	command -v busybox || skip "busybox (busybox-static) is not installed"
}

# RUN needs many ids: root owning them, or a subordinate range usable
# through newuidmap (not inside a namespace with a single id).
need_subids() {
	full=$(awk 'NR == 1 && $1 == 0 && $2 == 0 && $3 == 4294967295 { print "yes" }' /proc/self/uid_map)
	[ "$full" = yes ] || skip "nested in a user namespace: no subordinate ids for RUN"
	[ "$(id -u)" -eq 0 ] && return 0
	grep -q "^$(id -un):" /etc/subuid 2>/dev/null || grep -q "^$(id -u):" /etc/subuid 2>/dev/null ||
		skip "no subordinate uid range for $(id -un) (usermod --add-subuids)"
	command -v newuidmap >/dev/null || [ -x /usr/bin/newuidmap ] || skip "newuidmap (uidmap) is not installed"
}

sha() {
	sha256sum "$1" | cut -d' ' -f1
}

# blob FILE LAYOUT: moves FILE into LAYOUT's blobs, prints "DIGEST SIZE".
blob() {
	d=$(sha "$1")
	s=$(stat -c %s "$1")
	mv "$1" "$2/blobs/sha256/$d"
	echo "$d $s"
}

arch() {
	case $(uname -m) in
	x86_64) echo amd64 ;;
	aarch64) echo arm64 ;;
	*) uname -m ;;
	esac
}

# make_layout DIR TAG ROOTFS [MARK]: an OCI layout holding ROOTFS as one
# gzip layer, under the ref TAG directly and under TAG-multi through a
# multi-platform index.  MARK goes into the config's environment.
make_layout() {
	dir=$1 tag=$2 src=$3 mark=${4:-one}
	mkdir -p "$dir/blobs/sha256"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
	(cd "$src" && tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@1700000000 -cf "$T/layer.tar" .)
	diff=$(sha "$T/layer.tar")
	gzip -n -c "$T/layer.tar" >"$T/layer.tgz"
	rm "$T/layer.tar"
	set -- $(blob "$T/layer.tgz" "$dir")
	ldig=$1 lsize=$2
	printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/bin","MARK=%s"],"Cmd":["sh"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$(arch)" "$mark" "$diff" >"$T/config"
	set -- $(blob "$T/config" "$dir")
	cdig=$1 csize=$2
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' \
		"$cdig" "$csize" "$ldig" "$lsize" >"$T/manifest"
	set -- $(blob "$T/manifest" "$dir")
	mdig=$1 msize=$2
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"no-such-arch","os":"linux"}},{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"%s","os":"linux"}}]}' \
		"$mdig" "$msize" "$mdig" "$msize" "$(arch)" >"$T/index"
	set -- $(blob "$T/index" "$dir")
	idig=$1 isize=$2
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s"}},{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"%s-multi"}}]}' \
		"$mdig" "$msize" "$tag" "$idig" "$isize" "$tag" >"$dir/index.json"
}

# A busybox root filesystem with an "agent" user.
make_busybox_root() {
	r=$1
	bb=$(busybox_bin)
	mkdir -p "$r/bin" "$r/etc" "$r/home/agent" "$r/tmp" "$r/root"
	cp "$bb" "$r/bin/busybox"
	for t in sh cat ls echo id env mkdir touch sleep true false chown printf grep test rm wc; do
		ln -s busybox "$r/bin/$t"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/home/agent:/bin/sh\n' >"$r/etc/passwd"
	printf 'root:x:0:\nagent:x:1000:\n' >"$r/etc/group"
}

base_layout() {
	[ -d "$T/base" ] && return 0
	make_busybox_root "$T/baseroot"
	make_layout "$T/base" bb "$T/baseroot"
}

test_build_scratch_copy() {
	store
	mkdir -p "$T/ctx/sub/deep"
	cp "$(busybox_bin)" "$T/ctx/busybox"
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
	printf 'FROM docker.io/library/fedora:41\n' >"$T/ctx/Containerfile"
	run_isd build -t refused "$T/ctx"
	expect_rc 125
	expect_contains "$err" "registry images are not supported yet"
	run_isd build "$T/ctx"
	expect_contains "$err" "no image name given"
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
	if [ "$(id -u)" -ne 0 ]; then
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
	! pgrep -f "sleep 61" >/dev/null || fail "the RUN step outlived isd"
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
	expect_contains "$err" "unknown command 'frob'"
}

