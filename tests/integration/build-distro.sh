# SPDX-License-Identifier: LGPL-2.1-or-later
# isd build against distributions' own tools, offline: FROM
# fedora-release:NN from a loopback "Fedora download site", dnf and rpm in
# a RUN step, the same build as buildah bud.

. "$ISD_TEST_SRCDIR/tests/build/lib.sh"

# ---- FROM fedora-release:NN from a loopback "Fedora download site": the
# base layout as Fedora's oci.tar.xz, a CHECKSUM clearsigned with a
# throw-away key (made here in a temporary GNUPGHOME) ----

need_gpg() {
	for t in gpg gpgv xz; do
		command -v $t >/dev/null || skip "$t (gnupg gpgv xz-utils) is not installed"
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
		command -v $t >/dev/null || skip "$t (dnf rpm createrepo-c) is not installed"
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
	# shellcheck disable=SC2046
	run_isd exec --image dnfimg -u 0 $(image_owner_view) -- stat -c '%U:%G %a %n' /usr/share/isdprobe/adm-file /usr/share/isdprobe/daemon-file
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
	command -v buildah >/dev/null || skip "buildah (buildah) is not installed"
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	base_layout
	B="buildah --root $T/buildah/root --runroot $T/buildah/run --storage-driver vfs"
	# An unprivileged caller reads and removes buildah's storage (subordinate
	# ids) in `buildah unshare`; root does without (and its buildah unshare
	# may not work at all).
	U="$B unshare"
	[ "$(id -u)" -ne 0 ] || U=
	at_teardown '$U rm -rf "$T/buildah"'
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
