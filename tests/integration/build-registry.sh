# SPDX-License-Identifier: LGPL-2.1-or-later
# isd build's downloads: FROM a registry (Debian's docker-registry on
# 127.0.0.1, fixtures pushed with skopeo, token servers and credentials),
# ADD --checksum URL from a loopback https server.  Nothing but loopback is
# ever contacted.

. "$ISD_TEST_SRCDIR/tests/build/lib.sh"

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
	base_layout
	start_registry plain
	push "$T/base:bb" test/bb:v1
	start_token_registry
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

# ---- fixture variants (tests/build/lib.sh, made with umoci and skopeo),
# credentials, progress ----

# The umoci fixture pushed as OCI and, converted by skopeo, as Docker v2
# schema 2: both pull to the same tree.
test_registry_fixture_formats() {
	store
	need_registry
	need_subids
	fixture_layout
	start_registry reg
	push "$T/fix:img" test/fix:oci
	push "$T/fix:img" test/fix:v2s2 "--format v2s2"
	mkdir -p "$T/ctx"
	for tag in oci v2s2; do
		printf 'FROM %s/test/fix:%s\nRUN touch /shared/by-run\n' "$REG" "$tag" >"$T/ctx/Containerfile"
		run_isd build -t "fix-$tag" "$T/ctx"
		expect_rc 0 "build FROM the $tag fixture"
		check_fixture "fix-$tag"
	done
	manifest=$T/cache/isd/blobs/sha256/$(layer_digest fix-v2s2 | cut -d: -f2)
	grep -q 'application/vnd.docker.distribution.manifest.v2+json' "$manifest" ||
		fail "the v2s2 pull was no Docker manifest: $(cat "$manifest")"
	grep -q 'application/vnd.docker.image.rootfs.diff.tar.gzip' "$manifest" || fail "no Docker layer type"
	manifest=$T/cache/isd/blobs/sha256/$(layer_digest fix-oci | cut -d: -f2)
	grep -q 'application/vnd.oci.image.layer.v1.tar+gzip' "$manifest" || fail "the oci pull was no OCI manifest"
}

# An index of two platforms made with umoci (the other one listed first),
# as an OCI index and as a Docker manifest list (skopeo --format v2s2):
# isd takes this machine's.
test_registry_multiarch() {
	store
	need_registry
	need_umoci
	make_busybox_root "$T/mine"
	arch >"$T/mine/etc/platform"
	mkdir -p "$T/other/etc" "$T/other/bin"
	other_arch >"$T/other/etc/platform"
	umoci_image "$T/ma" other "$T/other" "$(other_arch)" other
	umoci_image "$T/ma" mine "$T/mine" "$(arch)" mine
	oci_index "$T/ma" multi other mine
	oci_index "$T/ma" foreign other
	start_registry reg
	push "$T/ma:multi" test/multi:oci --all
	push "$T/ma:multi" test/multi:list "--all --format v2s2"
	push "$T/ma:foreign" test/multi:foreign --all
	type=$(curl -s -o /dev/null -w '%{content_type}' -H 'Accept: application/vnd.docker.distribution.manifest.list.v2+json' \
		"http://$REG/v2/test/multi/manifests/list")
	expect_eq "$type" application/vnd.docker.distribution.manifest.list.v2+json "skopeo's manifest list"
	mkdir -p "$T/ctx"
	for tag in oci list; do
		printf 'FROM %s/test/multi:%s\n' "$REG" "$tag" >"$T/ctx/Containerfile"
		run_isd build -t "multi-$tag" "$T/ctx"
		expect_rc 0 "build FROM the $tag index"
		run_isd exec --image "multi-$tag" -- sh -c 'cat /etc/platform; echo $MARK'
		expect_eq "$out" "$(arch)
mine" "the $tag index gave this machine's image"
	done
	printf 'FROM %s/test/multi:foreign\n' "$REG" >"$T/ctx/Containerfile"
	run_isd build -t foreign "$T/ctx"
	expect_rc 125 "an index without this machine"
	expect_contains "$err" "has no manifest for linux/$(arch)"
}

# A token server that wants credentials (as for private images): they
# come from auth.json or docker's config.json; none, or wrong ones, give
# one error naming the registry and the file; no secret is ever printed.
test_registry_credentials() {
	store
	need_registry
	base_layout
	start_registry plain
	push "$T/base:bb" test/private:v1
	start_token_registry alice:s3cret-pw
	unset REGISTRY_AUTH_FILE
	export XDG_RUNTIME_DIR="$T/run" DOCKER_CONFIG="$T/docker"
	mkdir -p "$T/run/containers" "$T/config/containers" "$T/docker" "$T/ctx"
	printf 'FROM %s/test/private:v1\n' "$REG" >"$T/ctx/Containerfile"
	run_isd build -t private "$T/ctx"
	expect_rc 125 "no credentials"
	expect_contains "$err" "$REG wants credentials (HTTP 401 for its token server"
	expect_contains "$err" "$T/run/containers/auth.json, $T/config/containers/auth.json, $T/docker/config.json"
	# Wrong ones, under docker's old URL key.
	printf '{"auths": {"http://%s/v2/": {"auth": "%s"}}}\n' "$REG" "$(printf alice:wrong-pw | base64)" \
		>"$T/docker/config.json"
	run_isd build -t private "$T/ctx"
	expect_rc 125 "wrong credentials"
	expect_contains "$err" "$REG refused the credentials for it in $T/docker/config.json"
	expect_not_contains "$out$err" "wrong-pw"
	grep -q "user=alice" "$T/token-requests.log" || fail "no credentials in the token request"
	# The right ones in the first file, under the repository's namespace
	# (more specific than the registry's entry).
	printf '{"auths": {"%s": {"auth": "%s"}, "%s/test": {"auth": "%s"}}}\n' "$REG" "$(printf bob:nope | base64)" \
		"$REG" "$(printf alice:s3cret-pw | base64)" >"$T/run/containers/auth.json"
	run_isd build -t private "$T/ctx"
	expect_rc 0 "credentials from auth.json"
	expect_not_contains "$out$err" "s3cret"
	run_isd exec --image private -- cat /etc/passwd
	expect_contains "$out" "agent:x:1000"
	# REGISTRY_AUTH_FILE is the only file read.
	rm -rf "$T/cache"
	mv "$T/run/containers/auth.json" "$T/mine.json"
	REGISTRY_AUTH_FILE=$T/mine.json run_isd build -t private --no-cache "$T/ctx"
	expect_rc 0 "REGISTRY_AUTH_FILE"
	rm -rf "$T/cache"
	cp "$T/mine.json" "$T/config/containers/auth.json"
	REGISTRY_AUTH_FILE=$T/none.json run_isd build -t private --no-cache "$T/ctx"
	expect_rc 125 "REGISTRY_AUTH_FILE without an entry"
	expect_contains "$err" "none for it are in $T/none.json"
}

# A registry with Basic authentication (htpasswd, bcrypt).
test_registry_basic_auth() {
	store
	need_registry
	command -v htpasswd >/dev/null || skip "htpasswd (apache2-utils) is not installed"
	base_layout
	htpasswd -Bbn carol 'pa55:w0rd' >"$T/htpasswd" 2>/dev/null || fail "htpasswd -B failed"
	start_registry basic "auth:
  htpasswd:
    realm: isd-test
    path: $T/htpasswd"
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$REG/v2/")" = 401 ] || fail "the registry wants no credentials"
	push "$T/base:bb" test/bb:v1 "--dest-creds carol:pa55:w0rd"
	unset REGISTRY_AUTH_FILE
	export XDG_RUNTIME_DIR="$T/run" DOCKER_CONFIG="$T/docker"
	mkdir -p "$T/run/containers" "$T/ctx"
	printf 'FROM %s/test/bb:v1\n' "$REG" >"$T/ctx/Containerfile"
	run_isd build -t basic "$T/ctx"
	expect_rc 125 "no credentials"
	expect_contains "$err" "$REG wants credentials (HTTP 401 for GET http://$REG/v2/test/bb/manifests/v1)"
	printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$REG" "$(printf carol:bad | base64)" >"$T/run/containers/auth.json"
	run_isd build -t basic "$T/ctx"
	expect_rc 125 "wrong credentials"
	expect_contains "$err" "$REG refused the credentials for it in $T/run/containers/auth.json"
	printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$REG" "$(printf carol:pa55:w0rd | base64)" >"$T/run/containers/auth.json"
	run_isd build -t basic "$T/ctx"
	expect_rc 0 "Basic credentials"
	expect_not_contains "$out$err" "w0rd"
	run_isd exec --image basic -- cat /etc/passwd
	expect_contains "$out" "agent:x:1000"
}

# On a terminal every blob shows bytes, total and rate on stderr; logs
# (no terminal) get the plain lines only.
test_registry_progress() {
	store
	need_registry
	command -v script >/dev/null || skip "script (bsdutils) is not installed"
	base_layout
	start_registry reg
	push "$T/base:bb" test/bb:v1
	mkdir -p "$T/ctx"
	printf 'FROM %s/test/bb:v1\n' "$REG" >"$T/ctx/Containerfile"
	size=$(stat -c %s "$(ls -S "$T"/regdata/docker/registry/v2/blobs/sha256/*/*/data | head -n1)")
	TERM=xterm script -qec "'$ISD' build -t tty '$T/ctx'" "$T/typescript" </dev/null >/dev/null 2>&1
	rc=$?
	expect_rc 0 "build on a terminal (script)"
	python3 - "$T/typescript" "$size" <<-'PY' || fail "no progress line: $(cat -v "$T/typescript")"
	import re, sys
	text, size = open(sys.argv[1], "rb").read().decode(errors="replace"), int(sys.argv[2])
	frames = [f for f in text.replace("\n", "\r").split("\r") if "layer 1/1 sha256:" in f and "/s" in f]
	# "  layer 1/1 sha256:0123456789ab  [====>   ]    1.2 MiB / 2.0 MiB      5.0 MiB/s"
	if not frames or not all(re.search(r" / [0-9.]+ (B|KiB|MiB) +[0-9.]+ (B|KiB|MiB|GiB)/s", f) for f in frames):
	    sys.exit("frames: %r" % frames)
	if not any(re.search(r" ([0-9.]+ [KM]i?B) / \1 ", f) for f in frames):
	    sys.exit("no frame at the end of the download: %r" % frames)
	if "%d bytes" % size not in text:
	    sys.exit("no final line with %d bytes" % size)
	PY
	# Without a terminal: nothing but the lines.
	rm -rf "$T/cache"
	run_isd build -t plain "$T/ctx"
	expect_rc 0
	expect_contains "$out" "$size bytes"
	expect_not_contains "$err" "/s"
	case "$out$err" in *"$(printf '\r')"*) fail "a carriage return in plain output" ;; esac
}
