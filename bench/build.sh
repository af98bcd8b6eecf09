#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# isd build timings on this machine, each against the same work done by
# other tools in the same run:
#   - a FROM scratch build with a COPY of busybox and its no-op rebuild
#     (the build key check: parse, plan, context hash) against cp;
#   - a build with one RUN step (one sandbox start);
#   - against umoci (`umoci unpack --rootless`, the same image): the
#     extraction of one large layer (`isd build --no-cache` of FROM oci:)
#     and the no-op rebuild of that image.
# Prints means and ratios; never asserts a time.  The store and the image
# live in a temporary directory.  Not run in CI.
#
#   bench/build.sh [ISD_BINARY]      (needs hyperfine, busybox, python3;
#                                     umoci for the comparison)
#   RUNS=20 LARGE_RUNS=5 LAYER_SRC=/usr/share   (the large layer's tree)
set -eu
ISD=${1:-$(dirname "$0")/../build/src/isd}
RUNS=${RUNS:-20}
LARGE_RUNS=${LARGE_RUNS:-5}
LAYER_SRC=${LAYER_SRC:-/usr/share}
command -v hyperfine >/dev/null || { echo "bench: install hyperfine" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench: install python3" >&2; exit 2; }
bb=$(command -v busybox) || { echo "bench: install busybox-static" >&2; exit 2; }
work=$(mktemp -d)
export XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache"
trap '"$ISD" image rm scratch run large >/dev/null 2>&1; rm -rf "$work" 2>/dev/null || chmod -R u+rwX "$work" 2>/dev/null; rm -rf "$work"' EXIT

# ratio JSON A B: mean(B) / mean(A) of two commands hyperfine measured.
ratio() {
	python3 - "$@" <<-'PY'
	import json, sys
	res = {r["command"]: r["mean"] for r in json.load(open(sys.argv[1]))["results"]}
	a, b = sys.argv[2], sys.argv[3]
	print(f"  {b}: {res[b] * 1000:.1f} ms = {res[b] / res[a]:.3g} x {a} ({res[a] * 1000:.1f} ms)")
	PY
}

mkdir -p "$work/ctx"
cp "$bb" "$work/ctx/busybox"
printf 'FROM scratch\nCOPY busybox /bin/busybox\n' >"$work/ctx/Containerfile"
printf 'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "true"]\n' >"$work/ctx/Containerfile.run"
"$ISD" build -q -t scratch "$work/ctx"

hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$work/small.json" \
	-n "cp busybox" "cp $bb $work/copy" \
	-n "isd build (no-op)" "$ISD build -q -t scratch $work/ctx" \
	-n "isd build --no-cache (COPY)" "$ISD build -q --no-cache -t scratch $work/ctx"
if "$ISD" build -q -t run -f "$work/ctx/Containerfile.run" "$work/ctx" 2>/dev/null; then
	hyperfine -N --warmup 2 --runs "$RUNS" \
		-n "isd build --no-cache (COPY + RUN)" "$ISD build -q --no-cache -t run -f $work/ctx/Containerfile.run $work/ctx"
else
	echo "bench: RUN skipped (no subordinate ids here)"
fi
"$ISD" image prune >/dev/null

# ---- one large layer: isd against umoci unpack --rootless ----
if ! command -v umoci >/dev/null; then
	echo "bench: umoci comparison skipped (apt-get install umoci)"
	exit 0
fi
# An OCI layout holding LAYER_SRC as one gzip layer (what registries
# serve), written with tar, gzip and sha256sum as the tests do.
layout=$work/layout
mkdir -p "$layout/blobs/sha256"
echo '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
blob() {
	d=$(sha256sum "$1" | cut -d' ' -f1)
	s=$(stat -c %s "$1")
	mv "$1" "$layout/blobs/sha256/$d"
	echo "$d $s"
}
case $(uname -m) in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
echo "bench: packing $LAYER_SRC as one layer"
tar -C "$LAYER_SRC" --ignore-failed-read --warning=none --numeric-owner --owner=0 --group=0 -cf "$work/layer.tar" . 2>/dev/null || true
diff=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
gzip -1 -n -c "$work/layer.tar" >"$work/layer.tgz"
usize=$(stat -c %s "$work/layer.tar")
rm "$work/layer.tar"
set -- $(blob "$work/layer.tgz")
ldig=$1 lsize=$2
printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
	"$arch" "$diff" >"$work/config"
set -- $(blob "$work/config")
cdig=$1 csize=$2
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' \
	"$cdig" "$csize" "$ldig" "$lsize" >"$work/manifest"
set -- $(blob "$work/manifest")
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"large"}}]}' \
	"$1" "$2" >"$layout/index.json"
echo "bench: layer $((lsize >> 20)) MiB gzip, $((usize >> 20)) MiB unpacked"

mkdir -p "$work/lctx"
printf 'FROM oci:%s:large\n' "$layout" >"$work/lctx/Containerfile"
"$ISD" build -q -t large "$work/lctx"
umoci unpack --rootless --image "$layout:large" "$work/bundle" >/dev/null ||
	{ echo "bench: umoci unpack --rootless failed here; comparison skipped"; exit 0; }
# Each run starts from nothing to unpack into: umoci's bundle removed,
# isd's previous trees pruned (untimed, --prepare).
hyperfine -N --runs "$LARGE_RUNS" --export-json "$work/large.json" \
	--prepare "rm -rf $work/bundle" \
	-n "umoci unpack --rootless" "umoci unpack --rootless --image $layout:large $work/bundle" \
	--prepare "$ISD image prune" \
	-n "isd build --no-cache (large layer)" "$ISD build -q --no-cache -t large $work/lctx" \
	--prepare "true" \
	-n "isd build (no-op, large)" "$ISD build -q -t large $work/lctx"
rm -rf "$work/bundle"

echo
echo "bench: ratios (no assertion)"
ratio "$work/small.json" "cp busybox" "isd build (no-op)"
ratio "$work/small.json" "cp busybox" "isd build --no-cache (COPY)"
ratio "$work/large.json" "umoci unpack --rootless" "isd build --no-cache (large layer)"
ratio "$work/large.json" "umoci unpack --rootless" "isd build (no-op, large)"
"$ISD" image prune >/dev/null
