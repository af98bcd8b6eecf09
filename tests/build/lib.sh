# SPDX-License-Identifier: LGPL-2.1-or-later
# Helpers of isd build's integration tests (tests/integration/build*.sh),
# sourced by each: the test's own store, base images made here (OCI
# layouts written with tar, gzip and sha256sum, or with umoci), loopback
# registries (Debian's docker-registry), token and https servers.

# Every isd call of a test uses the test's own store ($T exists only once
# the test runs).
store() {
	export XDG_DATA_HOME="$T/data" XDG_CACHE_HOME="$T/cache" XDG_CONFIG_HOME="$T/config"
	# Image trees belong to subordinate ids: isd removes them before
	# lib.sh's teardown removes $T.
	at_teardown 'stop_servers; remove_images'
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

# $BUSYBOX, set in the caller's shell: a helper that can skip is not
# called inside $(...), where the command around it would still run once.
need_busybox() {
	BUSYBOX=$(command -v busybox) || skip "busybox (busybox-static) is not installed"
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
	need_busybox
	mkdir -p "$r/bin" "$r/etc" "$r/home/agent" "$r/tmp" "$r/root"
	cp "$BUSYBOX" "$r/bin/busybox"
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

# ---- registries: Debian's docker-registry on 127.0.0.1, fixtures pushed
# with skopeo, nothing but loopback ever contacted ----

need_registry() {
	command -v docker-registry >/dev/null || skip "docker-registry (docker-registry) is not installed"
	command -v skopeo >/dev/null || skip "skopeo (skopeo) is not installed"
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
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
# skopeo reads the caller's auth file by default: /run/containers/UID, a
# 0700 root directory once podman ran as root, unreadable (EACCES, fatal)
# inside `unshare -r` where the test user looks like uid 0.  The test's own
# empty file keeps the push independent of what the machine ran before.
push() {
	[ -f "$T/skopeo-auth.json" ] || echo '{"auths":{}}' >"$T/skopeo-auth.json"
	skopeo --insecure-policy copy --quiet ${3:-} --dest-authfile "$T/skopeo-auth.json" --dest-tls-verify=false "oci:$1" "docker://$REG/$2" >"$T/skopeo.log" 2>&1 ||
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

# ---- ADD --checksum=sha256:... https://... from a loopback https server
# with a throw-away certificate (ISD_CA_FILE / --ca-file) ----

start_https() {
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	command -v openssl >/dev/null || skip "openssl (openssl) is not installed"
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

# start_token_server [USER:PASSWORD]: the token server of tests/build/
# (its certificate in $T/token.crt, requests logged to
# $T/token-requests.log), asking for those credentials when given; then a
# registry trusting its tokens, its address in $REG.
start_token_registry() {
	command -v openssl >/dev/null || skip "openssl (openssl) is not installed"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/token.key" -out "$T/token.crt" -days 1 \
		-subj /CN=isd-test-token >/dev/null 2>&1 || fail "openssl could not make a key"
	rm -f "$T/token.port"
	python3 "$ISD_TEST_SRCDIR/tests/build/token-server.py" "$T/token.port" "$T/token.key" "$T/token.crt" \
		isd-test-issuer "$T/token-requests.log" ${1:+"$1"} &
	echo $! >>"$T/pids"
	i=0
	until [ -s "$T/token.port" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "the token server did not start"
		sleep 0.1
	done
	start_registry auth "auth:
  token:
    realm: http://127.0.0.1:$(cat "$T/token.port")/token
    service: isd-test-registry
    issuer: isd-test-issuer
    rootcertbundle: $T/token.crt"
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$REG/v2/")" = 401 ] || fail "the registry does not want a token"
}

# ---- fixtures made with umoci (rootless): owners, set-id bits, xattrs,
# ids above 65535, file capabilities, several platforms ----

need_umoci() {
	command -v umoci >/dev/null || skip "umoci (umoci) is not installed"
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
}

# Whether $T's file system keeps user.* xattrs (tmpfs before Linux 6.6
# does not).
user_xattrs() {
	python3 -c 'import os, sys; open(sys.argv[1], "w").close(); os.setxattr(sys.argv[1], "user.isd", b"1")' \
		"$T/xattr-probe" 2>/dev/null
}

# owner PATH UID GID: the owner `umoci insert --rootless` writes for PATH
# into the layer: its user.rootlesscontainers xattr (a protobuf: uid is
# field 1, gid field 2, varints; 0 is left out).
owner() {
	python3 - "$@" <<-'PY' || fail "cannot set user.rootlesscontainers on $1"
	import os, sys
	def varint(n):
	    out = b""
	    while True:
	        low, n = n & 0x7F, n >> 7
	        if not n:
	            return out + bytes([low])
	        out += bytes([low | 0x80])
	path, uid, gid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	value = (b"\x08" + varint(uid) if uid else b"") + (b"\x10" + varint(gid) if gid else b"")
	os.setxattr(path, "user.rootlesscontainers", value)
	PY
}

# umoci_image LAYOUT TAG ROOTFS ARCH [MARK]: an image of ROOTFS (owners as
# owner() set them) for linux/ARCH, MARK in its environment.
umoci_image() {
	[ -d "$1" ] || umoci init --layout "$1" >"$T/umoci.log" 2>&1 || fail "umoci init: $(cat "$T/umoci.log")"
	{
		umoci new --image "$1:$2" &&
			umoci insert --rootless --image "$1:$2" "$3" / &&
			umoci config --image "$1:$2" --os linux --architecture "$4" --config.env PATH=/bin \
				--config.env "MARK=${5:-$4}" --config.cmd sh
	} >"$T/umoci.log" 2>&1 || fail "umoci could not make $1:$2: $(cat "$T/umoci.log")"
}

# umoci_add_layer LAYOUT TAG TAR: one more layer, from a tar made here.
umoci_add_layer() {
	umoci raw add-layer --image "$1:$2" "$3" >"$T/umoci.log" 2>&1 || fail "umoci raw add-layer: $(cat "$T/umoci.log")"
}

# oci_index LAYOUT TAG REF...: an image index of the REFs (each with its
# config's platform), in that order, under TAG.
oci_index() {
	python3 "$ISD_TEST_SRCDIR/tests/build/oci-index.py" "$@" || fail "could not write the index $1:$2"
}

# The image's root filesystem in the store.
image_root() {
	echo "$T/data/isd/images/$1/$(readlink "$T/data/isd/images/$1/current")/rootfs"
}

# map_id NAME uid|gid INSIDE: the host id of INSIDE in the image's map
# (empty when the map has none).
map_id() {
	"$ISD" image inspect "$1" | python3 -c '
import json, sys
m = json.load(sys.stdin)[sys.argv[1] + "_map"]
i = int(sys.argv[2])
print(next((o + i - s for s, o, n in m if s <= i < s + n), ""))' "$2" "$3"
}

# The other platform's GOARCH (an index must not give it).
other_arch() {
	[ "$(arch)" = arm64 ] && echo amd64 || echo arm64
}

# fixture_layout: $T/fix:img, made with umoci from a busybox root: a
# setgid directory of group staff (50) holding a file of agent:staff, a
# file with a user.* xattr (when the file system keeps them), and a second
# layer (a tar made here) with a file carrying security.capability
# (cap_net_raw+ep, revision 2, as images hold it).
fixture_layout() {
	need_umoci
	[ -d "$T/fix" ] && return 0
	r=$T/froot
	make_busybox_root "$r"
	printf 'staff:x:50:agent\n' >>"$r/etc/group"
	mkdir -p "$r/shared" "$r/data"
	echo team >"$r/shared/notes"
	echo blue >"$r/data/colored"
	chmod 2775 "$r/shared"
	chmod 0664 "$r/shared/notes"
	owner "$r/shared" 0 50
	owner "$r/shared/notes" 1000 50
	if user_xattrs; then
		python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.color", b"blue")' "$r/data/colored" ||
			fail "cannot set user.color"
	fi
	umoci_image "$T/fix" img "$r" "$(arch)" fixture
	python3 - "$T/caps.tar" <<-'PY' || fail "cannot write the capability layer"
	import io, sys, tarfile
	data = b"#!/bin/sh\necho capped\n"
	with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
	    ti = tarfile.TarInfo("bin/capped")
	    ti.size, ti.mode, ti.mtime = len(data), 0o755, 1700000000
	    ti.pax_headers = {"SCHILY.xattr.security.capability": "\x01\x00\x00\x02\x20" + "\x00" * 15}
	    t.addfile(ti, io.BytesIO(data))
	PY
	umoci_add_layer "$T/fix" img "$T/caps.tar"
}

# check_fixture NAME: the tree of an image built FROM the fixture with
# `RUN touch /shared/by-run` (which the setgid directory gives group 50):
# modes with their set-id bits, owners (inside and on the host), the
# user.* xattr, the file capability stored for the image's root.
check_fixture() {
	# shellcheck disable=SC2046
	run_isd exec --image "$1" $(image_owner_view) -- busybox stat -c '%a %u:%g %n' /shared /shared/notes /shared/by-run /data/colored /bin/capped
	expect_rc 0 "exec --image $1"
	expect_eq "$out" "2775 0:50 /shared
664 1000:50 /shared/notes
644 0:50 /shared/by-run
644 0:0 /data/colored
755 0:0 /bin/capped" "$1: modes and owners"
	root=$(image_root "$1")
	expect_eq "$(stat -c '%a %g' "$root/shared")" "2775 $(map_id "$1" gid 50)" "$1: /shared on the host"
	if user_xattrs; then
		expect_eq "$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.color").decode())' "$root/data/colored")" \
			blue "$1: user.color"
	fi
	python3 - "$root/bin/capped" "$(map_id "$1" uid 0)" <<-'PY' || fail "$1: security.capability of /bin/capped"
	import os, struct, sys
	v, rootid = os.getxattr(sys.argv[1], "security.capability"), int(sys.argv[2])
	if rootid == 0:  # the host's root keeps revision 2
	    ok = len(v) == 20 and v[3] == 2
	else:  # written for the image's root: revision 3, its host id
	    ok = len(v) == 24 and v[3] == 3 and struct.unpack("<I", v[20:24])[0] == rootid
	if not (ok and v[4] == 0x20):
	    sys.exit("got %s, want cap_net_raw+ep for root %d" % (v.hex(), rootid))
	PY
}

# What `isd exec --image` needs to show an image's owners as the build
# stored them: as root, the image's 1:1 id map is used only with
# --unsafe-host-root (else the payload is never host root, and other
# owners show as nobody).
image_owner_view() {
	[ "$(id -u)" -ne 0 ] || echo --unsafe-host-root
}
