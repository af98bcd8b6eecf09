# SPDX-License-Identifier: LGPL-2.1-or-later
# isd build and isd image, offline: base images are OCI layouts made here
# from busybox (a gzip layer, config, manifest, index written with tar,
# gzip and sha256sum), the store lives in $T.

# Every isd call of a test uses the test's own store ($T exists only once
# the test runs).
store() {
	export XDG_DATA_HOME="$T/data" XDG_CACHE_HOME="$T/cache" XDG_CONFIG_HOME="$T/config"
	# Image trees belong to subordinate ids: isd removes them before
	# lib.sh's teardown removes $T.
	trap 'stop_servers; remove_images; test_teardown' EXIT
}

# Servers a test started (registries, token and https servers).
stop_servers() {
	[ -f "$T/pids" ] || return 0
	for p in $(cat "$T/pids"); do
		kill "$p" 2>/dev/null
	done
	for p in $(cat "$T/pids"); do
		wait "$p" 2>/dev/null
	done
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
	chmod 0777 "$T/proj" # root's map is 1:1, its uid 1000 is not root
	run_isd exec --image mapped -v "$T/proj:/proj" -- sh -c 'id -u; touch /proj/made; busybox stat -c %u:%g /srv/other /srv/rootfile /proj/made'
	expect_rc 0 "exec with the image's map"
	expect_eq "$out" "1000
4242:4343
0:0
1000:1000"
	# Inside 1000 is the caller: what the payload makes is ours.
	owner=$(id -u)
	[ "$owner" -ne 0 ] || owner=1000
	expect_eq "$(stat -c %u "$T/proj/made")" "$owner" "owner on the host"
	run_isd exec --image mapped --print-spec -- true
	expect_contains "$out" '"uid_map"'
	# -u 0 is the image's root (a subordinate id on the host).
	run_isd exec --image mapped -u 0 -- sh -c 'id -u; busybox stat -c %u /srv/rootfile'
	expect_rc 0
	expect_eq "$out" "0
0"
}

# ---- registries: Debian's docker-registry on 127.0.0.1, fixtures pushed
# with skopeo, nothing but loopback ever contacted ----

need_registry() {
	command -v docker-registry >/dev/null || skip "docker-registry is not installed (apt-get install docker-registry)"
	command -v skopeo >/dev/null || skip "skopeo is not installed (apt-get install skopeo)"
	command -v python3 >/dev/null || skip "python3 is not installed"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_http() {
	i=0
	until curl -s -o /dev/null "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "$1 did not come up: $(cat "$T"/*.log 2>/dev/null)"
		sleep 0.1
	done
}

# start_registry NAME [AUTH_YAML]: a registry on a free loopback port
# storing in $T/regdata (shared by every registry of the test); its
# address goes to $REG.
start_registry() {
	port=$(free_port)
	{
		printf 'version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\n'
		printf 'storage:\n  filesystem:\n    rootdirectory: %s/regdata\n  delete:\n    enabled: true\n' "$T"
		printf 'http:\n  addr: 127.0.0.1:%s\n  secret: isd-test-secret\n' "$port"
		[ -z "${2:-}" ] || printf '%s\n' "$2"
	} >"$T/$1.yml"
	docker-registry serve "$T/$1.yml" >"$T/$1.log" 2>&1 &
	echo $! >>"$T/pids"
	REG=127.0.0.1:$port
	wait_http "http://$REG/v2/"
}

# push SRC NAME:TAG: an OCI layout ref into the test registry $REG.
push() {
	skopeo --insecure-policy copy --quiet ${3:-} --dest-tls-verify=false "oci:$1" "docker://$REG/$2" >"$T/skopeo.log" 2>&1 ||
		fail "skopeo copy $1 -> $2: $(cat "$T/skopeo.log")"
}

# The registry's stored data of a blob.
reg_blob() {
	h=${1#sha256:}
	echo "$T/regdata/docker/registry/v2/blobs/sha256/$(echo "$h" | cut -c1-2)/$h/data"
}

layer_digest() {
	"$ISD" image inspect "$1" | sed -n 's/.*"base_digest": "\(sha256:[0-9a-f]*\)".*/\1/p'
}

test_registry_pull() {
	store
	need_registry
	base_layout
	start_registry reg
	push "$T/base:bb-multi" test/bb:v1 --all
	mkdir -p "$T/ctx"
	echo added >"$T/ctx/file"
	printf 'FROM %s/test/bb:v1\nCOPY file /file\n' "$REG" >"$T/ctx/Containerfile"
	run_isd build -t pulled "$T/ctx"
	expect_rc 0 "build FROM a registry"
	expect_contains "$out" "$REG/test/bb:v1 @ sha256:"
	run_isd exec --image pulled -- sh -c 'cat /file; echo $MARK'
	expect_eq "$out" "added
one"
	[ -n "$(ls "$T/cache/isd/blobs/sha256")" ] || fail "nothing in the blob cache"
	# The same manifest pinned by digest (the index picked this machine's).
	digest=$(layer_digest pulled)
	printf 'FROM %s/test/bb@%s\nCOPY file /file\n' "$REG" "$digest" >"$T/ctx/Containerfile"
	run_isd build -t pinned "$T/ctx"
	expect_rc 0 "FROM @sha256:"
	expect_eq "$(layer_digest pinned)" "$digest"
	# A pin nothing has.
	printf 'FROM %s/test/bb@sha256:%s\n' "$REG" "$(printf x | sha256sum | cut -d' ' -f1)" >"$T/ctx/Containerfile"
	run_isd build -t nopin "$T/ctx"
	expect_rc 125 "a digest nobody has"
	expect_contains "$err" "HTTP 404"
	# A short name comes only from an alias.
	printf 'FROM nosuchshortname\n' >"$T/ctx/Containerfile"
	run_isd build -t short "$T/ctx"
	expect_rc 125
	expect_contains "$err" "short name without an alias"
	mkdir -p "$T/config/isd"
	printf '# test\nalias mybb %s/test/bb\n' "$REG" >"$T/config/isd/registries.conf"
	printf 'FROM mybb:v1\n' >"$T/ctx/Containerfile"
	run_isd build -t aliased "$T/ctx"
	expect_rc 0 "FROM an alias"
	expect_eq "$(layer_digest aliased)" "$digest"
	# Mirrors come first; one that does not answer falls through.
	dead=127.0.0.1:$(free_port)
	printf 'mirror %s %s\nmirror %s %s\n' "$dead" "$REG" "$REG" "$dead" >"$T/config/isd/registries.conf"
	rm -rf "$T/cache"
	printf 'FROM %s/test/bb:v1\n' "$dead" >"$T/ctx/Containerfile"
	run_isd build -t mirrored "$T/ctx"
	expect_rc 0 "FROM through a mirror"
	expect_eq "$(layer_digest mirrored)" "$digest"
	rm -rf "$T/cache"
	printf 'FROM %s/test/bb:v1\n' "$REG" >"$T/ctx/Containerfile"
	run_isd build -t fellthrough "$T/ctx"
	expect_rc 0 "a dead mirror"
	expect_contains "$err" "trying the next host"
}

test_registry_cache_and_pull() {
	store
	need_registry
	base_layout
	start_registry reg
	push "$T/base:bb" test/bb:v1
	mkdir -p "$T/ctx"
	printf 'FROM %s/test/bb:v1\n' "$REG" >"$T/ctx/Containerfile"
	run_isd build -t follow "$T/ctx"
	expect_rc 0
	# A re-push of the tag: nothing changes until --pull looks it up.
	echo v2 >"$T/baseroot/version"
	make_layout "$T/v2" bb "$T/baseroot" two
	push "$T/v2:bb" test/bb:v1
	run_isd build -t follow "$T/ctx"
	expect_rc 0
	expect_contains "$out" "up to date"
	run_isd build -t follow --pull "$T/ctx"
	expect_rc 0 "--pull"
	expect_not_contains "$out" "up to date"
	run_isd exec --image follow -- sh -c 'cat /version; echo $MARK'
	expect_eq "$out" "v2
two"
	# With the registry gone, the cache alone builds; --pull needs it.
	stop_servers
	rm "$T/pids"
	run_isd build -t follow --no-cache "$T/ctx"
	expect_rc 0 "a cached base without network"
	run_isd build -t follow --pull "$T/ctx"
	expect_rc 125 "--pull without the registry"
	expect_contains "$err" "GET http"
}

test_registry_corrupt_blob() {
	store
	need_registry
	base_layout
	start_registry reg
	push "$T/base:bb" test/bb:v1
	layer=$(ls -S "$T"/regdata/docker/registry/v2/blobs/sha256/*/*/data | head -n1)
	hex=$(basename "$(dirname "$layer")")
	printf 'x' | dd of="$layer" bs=1 seek=1000 conv=notrunc 2>/dev/null
	mkdir -p "$T/ctx"
	printf 'FROM %s/test/bb:v1\n' "$REG" >"$T/ctx/Containerfile"
	run_isd build -t corrupt "$T/ctx"
	expect_rc 125 "a corrupted blob"
	expect_contains "$err" "does not match its digest sha256:$hex"
	[ ! -e "$T/cache/isd/blobs/sha256/$hex" ] || fail "a corrupted blob entered the cache"
	[ ! -e "$T/data/isd/images/corrupt/current" ] || fail "a corrupted base was published"
}

test_registry_resume() {
	store
	need_registry
	base_layout
	start_registry reg
	push "$T/base:bb" test/bb:v1
	layer=$(ls -S "$T"/regdata/docker/registry/v2/blobs/sha256/*/*/data | head -n1)
	hex=$(basename "$(dirname "$layer")")
	size=$(stat -c %s "$layer")
	half=$((size / 2))
	mkdir -p "$T/cache/isd/blobs/partial" "$T/ctx"
	# An interrupted download: the first half is there.
	head -c $half "$layer" >"$T/cache/isd/blobs/partial/$hex"
	printf 'FROM %s/test/bb:v1\n' "$REG" >"$T/ctx/Containerfile"
	run_isd build -t resumed "$T/ctx"
	expect_rc 0 "resume"
	expect_contains "$out" "resuming at byte $half"
	expect_contains "$out" "$size bytes"
	cmp "$layer" "$T/cache/isd/blobs/sha256/$hex" || fail "the resumed blob differs"
	# A stale partial file (not a prefix of the blob) costs a second
	# download, not the build.
	rm -rf "$T/cache"
	mkdir -p "$T/cache/isd/blobs/partial"
	head -c $half /dev/zero >"$T/cache/isd/blobs/partial/$hex"
	run_isd build -t resumed --no-cache "$T/ctx"
	expect_rc 0 "a stale partial download"
	cmp "$layer" "$T/cache/isd/blobs/sha256/$hex" || fail "the re-downloaded blob differs"
}

# Token auth as Docker Hub, quay.io and registry.fedoraproject.org's peers
# do it: 401 with a Bearer challenge, an anonymous token from the realm.
test_registry_token() {
	store
	need_registry
	command -v openssl >/dev/null || skip "openssl is not installed"
	base_layout
	start_registry plain
	push "$T/base:bb" test/bb:v1
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/token.key" -out "$T/token.crt" -days 1 \
		-subj /CN=isd-test-token >/dev/null 2>&1 || fail "openssl could not make a key"
	python3 "$ISD_TEST_SRCDIR/tests/build/token-server.py" "$T/token.port" "$T/token.key" "$T/token.crt" \
		isd-test-issuer "$T/token-requests.log" &
	echo $! >>"$T/pids"
	i=0
	until [ -s "$T/token.port" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "the token server did not start"
		sleep 0.1
	done
	tport=$(cat "$T/token.port")
	start_registry auth "auth:
  token:
    realm: http://127.0.0.1:$tport/token
    service: isd-test-registry
    issuer: isd-test-issuer
    rootcertbundle: $T/token.crt"
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$REG/v2/")" = 401 ] || fail "the registry does not want a token"
	mkdir -p "$T/ctx"
	printf 'FROM %s/test/bb:v1\n' "$REG" >"$T/ctx/Containerfile"
	run_isd build -t tokened "$T/ctx"
	expect_rc 0 "build through token auth"
	grep -q "scope=repository%3Atest%2Fbb%3Apull" "$T/token-requests.log" ||
		grep -q "scope=repository:test/bb:pull" "$T/token-requests.log" ||
		fail "no token asked for: $(cat "$T/token-requests.log")"
	run_isd exec --image tokened -- cat /etc/passwd
	expect_contains "$out" "agent:x:1000"
}

# ---- ADD --checksum=sha256:... https://... from a loopback https server
# with a throw-away certificate (ISD_CA_FILE / --ca-file) ----

start_https() {
	command -v python3 >/dev/null || skip "python3 is not installed"
	command -v openssl >/dev/null || skip "openssl is not installed"
	rm -f "$T/https.port"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/https.key" -out "$T/https.crt" -days 1 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 ||
		fail "openssl could not make a certificate"
	python3 "$ISD_TEST_SRCDIR/tests/build/https-server.py" "$1" "$T/https.crt" "$T/https.key" "$T/https.port" \
		"$T/https-requests.log" &
	echo $! >>"$T/pids"
	i=0
	until [ -s "$T/https.port" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "the https server did not start"
		sleep 0.1
	done
	URL=https://127.0.0.1:$(cat "$T/https.port")
}

test_build_add_url() {
	store
	base_layout
	mkdir -p "$T/srv/rel" "$T/ctx"
	printf '#!/bin/sh\necho tool ran\n' >"$T/srv/rel/tool"
	echo plain >"$T/srv/notes.txt"
	start_https "$T/srv"
	tool=$(sha "$T/srv/rel/tool")
	notes=$(sha "$T/srv/notes.txt")
	cat >"$T/ctx/Containerfile" <<-EOF
	FROM oci:$T/base:bb
	ADD --chmod=0755 --checksum=sha256:$tool $URL/rel/tool /usr/local/bin/tool
	ADD --checksum=sha256:$notes $URL/notes.txt /docs/
	EOF
	# The certificate is checked: unknown without the CA.
	run_isd build -t fetched "$T/ctx"
	expect_rc 125 "an unknown certificate"
	expect_contains "$err" "line 2: "
	ISD_CA_FILE="$T/https.crt" run_isd build -t fetched "$T/ctx"
	expect_rc 0 "ADD https with ISD_CA_FILE"
	run_isd exec --image fetched -- sh -c '/usr/local/bin/tool; cat /docs/notes.txt; busybox stat -c "%a %u:%g" /usr/local/bin/tool /docs/notes.txt'
	expect_eq "$out" "tool ran
plain
755 0:0
600 0:0"
	# Cached by checksum: a rebuild needs no server.
	stop_servers
	rm "$T/pids"
	run_isd build -t fetched --no-cache "$T/ctx"
	expect_rc 0 "ADD from the cache"
	# A file whose content is not what --checksum says is refused.
	start_https "$T/srv"
	echo changed >"$T/srv/notes.txt"
	printf 'FROM oci:%s:bb\nADD --checksum=sha256:%s %s/notes.txt /n\n' "$T/base" "$(printf x | sha256sum | cut -d' ' -f1)" "$URL" >"$T/ctx/Containerfile"
	run_isd build -t wrong --ca-file "$T/https.crt" "$T/ctx"
	expect_rc 125 "a wrong checksum"
	expect_contains "$err" "does not match its digest"
	[ ! -e "$T/data/isd/images/wrong/current" ] || fail "a wrong download was published"
	# Without --checksum: refused with the line, before any request.
	printf 'FROM oci:%s:bb\n\nADD %s/notes.txt /n\n' "$T/base" "$URL" >"$T/ctx/Containerfile"
	: >"$T/https-requests.log"
	run_isd build -t unpinned --ca-file "$T/https.crt" "$T/ctx"
	expect_rc 125
	expect_contains "$err" "line 3: ADD $URL/notes.txt: a download needs --checksum"
	[ ! -s "$T/https-requests.log" ] || fail "an unpinned ADD made a request"
}

# ---- FROM fedora-release:NN from a loopback "Fedora download site": the
# base layout as Fedora's oci.tar.xz, a CHECKSUM clearsigned with a
# throw-away key (made here in a temporary GNUPGHOME) ----

need_gpg() {
	for t in gpg gpgv xz; do
		command -v $t >/dev/null || skip "$t is not installed (apt-get install gnupg gpgv xz-utils)"
	done
}

# gpg_key NAME: a signing key in $T/gpg-NAME; its public keys in
# $T/NAME.gpg (binary) and $T/NAME.asc (armored).
gpg_key() {
	mkdir -p "$T/gpg-$1"
	chmod 700 "$T/gpg-$1"
	GNUPGHOME="$T/gpg-$1" gpg --batch --quiet --passphrase '' --quick-gen-key "isd test $1 <$1@example.invalid>" \
		ed25519 sign never >/dev/null 2>&1 || fail "gpg could not make a key"
	GNUPGHOME="$T/gpg-$1" gpg --batch --quiet --export >"$T/$1.gpg"
	GNUPGHOME="$T/gpg-$1" gpg --batch --quiet --armor --export >"$T/$1.asc"
}

# sign NAME IN OUT: IN clearsigned by NAME's key.
sign() {
	GNUPGHOME="$T/gpg-$1" gpg --batch --quiet --yes --pinentry-mode loopback --passphrase '' --clearsign \
		-o "$3" "$2" || fail "gpg could not sign"
	GNUPGHOME="$T/gpg-$1" gpgconf --kill gpg-agent 2>/dev/null || true
}

# fedora_site VERSION: $T/site/VERSION/Container/ARCH/images/ with the base
# layout as Fedora's archive and its CHECKSUM (text in $T/checksum.txt,
# signed by key "good"); the server's address in $URL, registries.conf
# pointing there.
fedora_site() {
	need_gpg
	base_layout
	[ -f "$T/good.gpg" ] || gpg_key good
	FDIR=$T/site/$1/Container/$(uname -m)/images
	ANAME=Fedora-Container-Base-Generic-$1-1.2.$(uname -m).oci.tar.xz
	mkdir -p "$FDIR"
	# Fedora's archives hold one image (index.json: one manifest).
	rm -rf "$T/fedlayout"
	cp -r "$T/base" "$T/fedlayout"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["manifests"] = d["manifests"][:1]; json.dump(d, open(sys.argv[1], "w"))' \
		"$T/fedlayout/index.json"
	(cd "$T/fedlayout" && tar --sort=name -cf - oci-layout index.json blobs) | xz -T1 -c >"$FDIR/$ANAME"
	echo "unrelated" >"$FDIR/README"
	{
		echo "# $ANAME: $(stat -c %s "$FDIR/$ANAME") bytes"
		echo "SHA256 ($ANAME) = $(sha "$FDIR/$ANAME")"
	} >"$T/checksum.txt"
	SUM=$FDIR/Fedora-Container-$1-1.2-$(uname -m)-CHECKSUM
	sign good "$T/checksum.txt" "$SUM"
	[ -n "${URL:-}" ] || start_https "$T/site"
	mkdir -p "$T/config/isd"
	echo "fedora-release-url $URL/" >"$T/config/isd/registries.conf"
	mkdir -p "$T/ctx"
	printf 'FROM fedora-release:%s\nENV FROM_FEDORA=yes\n' "$1" >"$T/ctx/Containerfile"
}

test_build_fedora_release() {
	store
	fedora_site 41
	export ISD_CA_FILE="$T/https.crt"
	run_isd build -t fed --keyring "$T/good.gpg" "$T/ctx"
	expect_rc 0 "a good signature"
	expect_contains "$out" "$ANAME (signature good"
	grep -q "/41/Container/$(uname -m)/images/Fedora-Container-41-1.2-$(uname -m)-CHECKSUM" "$T/https-requests.log" ||
		fail "no CHECKSUM fetched: $(cat "$T/https-requests.log")"
	run_isd exec --image fed -- sh -c 'echo $MARK $FROM_FEDORA; cat /etc/passwd'
	expect_contains "$out" "one yes"
	expect_contains "$out" "agent:x:1000"
	# The digest is remembered: a rebuild needs no server, and no key.
	stop_servers
	rm "$T/pids"
	run_isd build -t fed --no-cache "$T/ctx"
	expect_rc 0 "a rebuild from the cache"
	# The host's key, armored as Fedora ships it (ISD_RPM_GPG_DIR stands
	# in for /etc/pki/rpm-gpg); --pull asks the site again.
	URL=
	fedora_site 41
	mkdir -p "$T/rpm-gpg"
	cp "$T/good.asc" "$T/rpm-gpg/RPM-GPG-KEY-fedora-41-primary"
	: >"$T/https-requests.log"
	ISD_RPM_GPG_DIR=$T/rpm-gpg run_isd build -t fed2 --pull "$T/ctx"
	expect_rc 0 "the host's armored key"
	grep -q CHECKSUM "$T/https-requests.log" || fail "--pull did not look again"
}

# expect_refused WHAT TEXT: the build fails naming TEXT, nothing published.
expect_refused() {
	run_isd build -t refused --keyring "$T/good.gpg" "$T/ctx"
	expect_rc 125 "$1"
	expect_contains "$err" "$2"
	[ ! -e "$T/data/isd/images/refused/current" ] || fail "$1: an image was published"
	[ -z "$(ls "$T/cache/isd/refs" 2>/dev/null)" ] || fail "$1: a digest was remembered"
}

test_build_fedora_release_refusals() {
	store
	fedora_site 41
	export ISD_CA_FILE="$T/https.crt"
	# No keyring: the error names both fixes, before any request.
	: >"$T/https-requests.log"
	ISD_RPM_GPG_DIR=$T/nowhere run_isd build -t refused "$T/ctx"
	expect_rc 125 "no keyring"
	expect_contains "$err" "RPM-GPG-KEY-fedora-41-primary"
	expect_contains "$err" "--keyring FILE"
	[ ! -s "$T/https-requests.log" ] || fail "requests without a keyring"
	# A CHECKSUM changed after it was signed.
	cp "$SUM" "$T/sum.orig"
	sed -i "s/\(SHA256 .*= \)./\10/" "$SUM"
	cmp -s "$SUM" "$T/sum.orig" && sed -i "s/\(SHA256 .*= \)./\11/" "$SUM"
	expect_refused "a tampered CHECKSUM" "signature is not good"
	# Signed by a key the keyring does not hold.
	gpg_key wrong
	sign wrong "$T/checksum.txt" "$SUM"
	expect_refused "a wrong key" "signature is not good"
	# Unsigned lines around a good signature are never read.
	{
		echo "SHA256 ($ANAME) = $(printf x | sha256sum | cut -d' ' -f1)"
		cat "$T/sum.orig"
		echo "SHA256 (Fedora-Container-Base-Generic-41-9.9.$(uname -m).oci.tar.xz) = $(printf y | sha256sum | cut -d' ' -f1)"
	} >"$SUM"
	run_isd build -t outside --keyring "$T/good.gpg" "$T/ctx"
	expect_rc 0 "unsigned lines around the signed text"
	expect_contains "$out" "$ANAME (signature"
	"$ISD" image rm outside >/dev/null
	rm -rf "$T/cache"
	# An archive that is not the one the CHECKSUM names.
	cp "$T/sum.orig" "$SUM"
	echo junk | xz -c >>"$FDIR/$ANAME"
	expect_refused "a changed archive" "does not match its digest"
}

# ---- dnf and rpm in a RUN step (issue #7): an image made from this
# machine's own Debian packages (tests/build/debian-closure.py, no mirror),
# a local repository made with rpmbuild and createrepo_c ----

test_build_run_dnf_install() {
	store
	need_subids
	for t in dnf rpm rpmbuild createrepo_c dpkg-query python3; do
		command -v $t >/dev/null || skip "$t is not installed (apt-get install dnf rpm createrepo-c)"
	done
	# The image: dnf, rpm and a shell with their dependencies, copied from
	# the host's installed packages (documentation left out).
	python3 "$ISD_TEST_SRCDIR/tests/build/debian-closure.py" dnf rpm dash coreutils >"$T/files" 2>"$T/closure-err" ||
		skip "dnf's dependencies are not all installed here: $(cat "$T/closure-err")"
	grep -v -E '^/usr/share/(doc|man|info|locale|lintian)/' "$T/files" >"$T/files.img"
	r=$T/dnfroot
	mkdir -p "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib" "$r/usr/lib64" "$r/etc" "$r/tmp" "$r/root" "$r/var/tmp"
	for d in bin sbin lib lib64; do
		ln -s usr/$d "$r/$d"
	done
	tar -C / --no-recursion --ignore-failed-read -cf - -T "$T/files.img" 2>/dev/null |
		tar -C "$r" --keep-directory-symlink -xf - || fail "copying the host's packages"
	# daemon and adm exist in the image with Debian's ids.
	printf 'root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n' >"$r/etc/passwd"
	printf 'root:x:0:\ndaemon:x:1:\nadm:x:4:\n' >"$r/etc/group"
	make_layout "$T/dnfbase" dnf "$r"
	rm -rf "$r"
	# The package: one file root:adm 0640, one daemon:daemon 0644.
	mkdir -p "$T/rpmbuild/SPECS" "$T/ctx/repo"
	cat >"$T/rpmbuild/SPECS/isdprobe.spec" <<-'EOF'
	Name: isdprobe
	Version: 1.0
	Release: 1
	Summary: isd test package
	License: LGPL-2.1-or-later
	BuildArch: noarch
	%description
	Files with owners and modes from %%attr.
	%install
	mkdir -p %{buildroot}/usr/share/isdprobe
	echo secret > %{buildroot}/usr/share/isdprobe/adm-file
	echo daemon > %{buildroot}/usr/share/isdprobe/daemon-file
	%files
	%dir /usr/share/isdprobe
	%attr(0640,root,adm) /usr/share/isdprobe/adm-file
	%attr(0644,daemon,daemon) /usr/share/isdprobe/daemon-file
	EOF
	rpmbuild --define "_topdir $T/rpmbuild" --nodeps -bb "$T/rpmbuild/SPECS/isdprobe.spec" >"$T/rpmbuild.log" 2>&1 ||
		fail "rpmbuild: $(tail -5 "$T/rpmbuild.log")"
	cp "$T"/rpmbuild/RPMS/noarch/isdprobe-1.0-1.noarch.rpm "$T/ctx/repo/" || fail "no rpm built"
	createrepo_c -q "$T/ctx/repo" || fail "createrepo_c"
	cat >"$T/ctx/Containerfile" <<-EOF
	FROM oci:$T/dnfbase:dnf
	COPY repo /repo
	RUN dnf -y -q --setopt=reposdir=/nonexistent --setopt=install_weak_deps=False --repofrompath=local,file:///repo --repo local --nogpgcheck install isdprobe
	EOF
	run_isd build -t dnfimg "$T/ctx"
	expect_rc 0 "build with dnf install"
	run_isd exec --image dnfimg -u 0 -- stat -c '%U:%G %a %n' /usr/share/isdprobe/adm-file /usr/share/isdprobe/daemon-file
	expect_rc 0 "stat in the image"
	expect_eq "$out" "root:adm 640 /usr/share/isdprobe/adm-file
daemon:daemon 644 /usr/share/isdprobe/daemon-file"
	# On the host the image's ids are the build's map: 1:1 for root,
	# keep-id over the caller's subordinate range otherwise.
	su=0 sg=0
	if [ "$(id -u)" -ne 0 ]; then
		su=$(awk -F: -v n="$(id -un)" -v u="$(id -u)" '$1 == n || $1 == u { print $2; exit }' /etc/subuid)
		sg=$(awk -F: -v n="$(id -un)" -v u="$(id -u)" '$1 == n || $1 == u { print $2; exit }' /etc/subgid)
	fi
	tree=$T/data/isd/images/dnfimg/current/rootfs/usr/share/isdprobe
	expect_eq "$(stat -c '%u:%g %a' "$tree/adm-file")" "$su:$((sg + 4)) 640" "adm-file on the host"
	expect_eq "$(stat -c '%u:%g %a' "$tree/daemon-file")" "$((su + 1)):$((sg + 1)) 644" "daemon-file on the host"
	run_isd exec --image dnfimg -u 0 -- rpm -q isdprobe
	expect_rc 0 "rpm -q in the image"
	expect_eq "$out" "isdprobe-1.0-1.noarch"
}

# ---- isd build against buildah (issue #7): the same Containerfile built by
# both, their trees compared without timestamps ----

test_build_matches_buildah() {
	store
	need_subids
	command -v buildah >/dev/null || skip "buildah is not installed"
	command -v python3 >/dev/null || skip "python3 is not installed"
	base_layout
	B="buildah --root $T/buildah/root --runroot $T/buildah/run --storage-driver vfs"
	# An unprivileged caller reads and removes buildah's storage (subordinate
	# ids) in `buildah unshare`; root does without (and its buildah unshare
	# may not work at all).
	U="$B unshare"
	[ "$(id -u)" -ne 0 ] || U=
	trap '$U rm -rf "$T/buildah"; stop_servers; remove_images; test_teardown' EXIT
	$B images >"$T/buildah.log" 2>&1 || skip "buildah cannot run here: $(tail -1 "$T/buildah.log")"
	mkdir -p "$T/ctx/files/sub"
	echo one >"$T/ctx/files/one"
	printf 'exec\n' >"$T/ctx/files/sub/tool"
	chmod 0750 "$T/ctx/files/sub/tool"
	chmod 0700 "$T/ctx/files/sub"
	ln -s one "$T/ctx/files/one-link"
	cat >"$T/ctx/Containerfile" <<-EOF
	ARG BASE
	FROM \$BASE
	COPY files /srv/files
	COPY --chown=1000:1000 files/one /home/agent/one
	ENV GREETING=hello
	WORKDIR /work/dir
	RUN mkdir -p /data/sub /data/other && echo hi > /data/f && chmod 0600 /data/f && chown 4242:4343 /data/f && \\
		ln -s f /data/link && ln /data/f /data/hard && ln -s /nowhere /data/dangling && \\
		chmod 2750 /data/sub && chown agent:agent /data/sub && touch /data/sub/mine && chown 1000:1000 /data/sub/mine && \\
		chmod 1777 /data/other && chmod 4755 /data/f && echo "\$GREETING" > greeting && \\
		chown 65534:65534 /data/other && chown -h 5:6 /data/link && \\
		chown -R agent:agent /home/agent
	USER agent
	RUN echo by-agent > /home/agent/made && chmod 0604 /home/agent/made
	EOF
	run_isd build -t same --build-arg "BASE=oci:$T/base:bb" "$T/ctx"
	expect_rc 0 "isd build"
	# buildah 1.28 takes no transport in FROM: the layout is pulled first
	# (by a relative name: it names the image after the path, in lowercase).
	id=$(cd "$T" && $B pull -q oci:base:bb 2>"$T/pull.log") || fail "buildah pull: $(tail -3 "$T/pull.log")"
	$B tag "$id" localhost/isd-bb >"$T/pull.log" 2>&1 || fail "buildah tag: $(cat "$T/pull.log")"
	(cd "$T/ctx" && $B bud --isolation chroot --pull-never --build-arg BASE=localhost/isd-bb -t same -f Containerfile . >"$T/bud.log" 2>&1) ||
		fail "buildah bud: $(tail -3 "$T/bud.log")"
	lister=$ISD_TEST_SRCDIR/tests/build/tree-listing.py
	isdtree=$T/data/isd/images/same/current/rootfs
	if [ "$(id -u)" -eq 0 ]; then
		python3 "$lister" "$isdtree" >"$T/isd.list" || fail "listing isd's tree"
		opt=
	else
		opt=--isd-unshare
	fi
	$U sh -c 'c=$('"$B"' from --pull-never localhost/same) && m=$('"$B"' mount "$c") || exit 1
		python3 "$1" "$m" >"$2/buildah.list" && { [ -z "$3" ] || python3 "$1" "$3" "$4" >"$2/isd.list"; }
		rc=$?; '"$B"' umount "$c" >/dev/null; exit $rc' \
		sh "$lister" "$T" "$opt" "$isdtree" >"$T/unshare.log" 2>&1 || fail "listing the trees: $(tail -3 "$T/unshare.log")"
	# Left out: /etc/hostname, /etc/hosts, /etc/resolv.conf, empty files
	# both tools leave behind as mount points of their RUN sandboxes, 0755
	# in buildah (and /etc/hostname only there), 0644 in isd.  (The tree's
	# root itself is not listed.)
	for f in isd buildah; do
		grep -v -E '^/etc/(hostname|hosts|resolv\.conf) ' "$T/$f.list" >"$T/$f.cmp"
	done
	# Something was compared: RUN's, COPY's and USER's results are there.
	for p in '/data/f file uid=4242 gid=4343 mode=4755 links=2' '/data/hard file uid=4242 gid=4343 mode=4755 links=2' \
		'/data/link link uid=5 gid=6' '/data/other dir uid=65534 gid=65534 mode=1777' '/srv/files/sub/tool file uid=0 gid=0 mode=0750' \
		'/home/agent/made file uid=1000 gid=1000 mode=0604' '/work/dir/greeting file'; do
		grep -q "^$p" "$T/isd.cmp" || fail "no '$p' in isd's tree: $(cat "$T/isd.cmp")"
	done
	diff -u "$T/buildah.cmp" "$T/isd.cmp" >"$T/diff" || fail "isd's tree differs from buildah's:
$(head -40 "$T/diff")"
}
