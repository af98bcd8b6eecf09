#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# netless (isd's own proxy) against the chain it replaces: tinyproxy on the
# host, socat from TCP to a unix socket bound into the sandbox, socat inside
# back to TCP for HTTP_PROXY.  Same run, same server, same client:
#   - throughput of one download (BENCH_MB, default 200 MB)
#   - latency of BENCH_N (default 1000) small requests, one connection each
# Prints both sides and the ratios.  Everything stays on 127.0.0.1.
# Needs: isd (ISD=path, default ./build/src/isd), tinyproxy, socat, python3.
# Not run in CI:  apt-get install tinyproxy socat && sh bench/netless.sh
set -eu
ISD=${ISD:-./build/src/isd}
MB=${BENCH_MB:-200}
N=${BENCH_N:-1000}
SPY=/usr/bin/python3
for tool in tinyproxy socat python3; do
	command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || { echo "bench: $tool is not installed (apt-get install tinyproxy socat python3)"; exit 1; }
done
TINYPROXY=$(command -v tinyproxy || echo /usr/sbin/tinyproxy)
D=$(mktemp -d "${TMPDIR:-/tmp}/isd-bench-net.XXXXXX")
chmod 755 "$D"
pids=""
cleanup() {
	# shellcheck disable=SC2086
	[ -z "$pids" ] || kill $pids 2>/dev/null || true
	rm -rf "$D"
}
trap cleanup EXIT INT TERM

mkdir "$D/www" "$D/sock"
head -c $((MB * 1024 * 1024)) /dev/zero >"$D/www/big"
printf 'small\n' >"$D/www/small"
python3 "$(dirname "$0")/../tests/network/serve.py" http "$D/www" "$D/http.port" &
pids="$pids $!"
while [ ! -s "$D/http.port" ]; do sleep 0.05; done
PORT=$(cat "$D/http.port")
URL=http://127.0.0.1:$PORT

# The client, run inside the sandbox: a download timed, then N requests
# through HTTP_PROXY on a new connection each, the median latency.
cat >"$D/client.py" <<'EOF'
import http.client, os, statistics, sys, time
proxy_port = int(os.environ["PROXY_PORT"])
url = sys.argv[1]
def get(path, sink=False):
    c = http.client.HTTPConnection("127.0.0.1", proxy_port)
    c.request("GET", url + path)
    r = c.getresponse()
    n = 0
    while True:
        b = r.read(1 << 20)
        if not b:
            break
        n += len(b)
    c.close()
    if r.status != 200:
        sys.exit("status %d" % r.status)
    return n
t = time.monotonic()
n = get("/big")
mbps = n / (time.monotonic() - t) / 1e6
lat = []
for _ in range(int(sys.argv[2])):
    t = time.monotonic()
    get("/small")
    lat.append((time.monotonic() - t) * 1000)
print("%.1f %.3f" % (mbps, statistics.median(lat)))
EOF
cp "$D/client.py" "$D/sock/client.py"

# isd netless
netless=$("$ISD" exec --network netless --allow "127.0.0.1:$PORT" -v "$D/sock:/bench:ro" \
	-e PROXY_PORT=3128 -- "$SPY" /bench/client.py "$URL" "$N")

# tinyproxy + socat + socat
TP=$((PORT + 1))
cat >"$D/tinyproxy.conf" <<EOF
Port $TP
Listen 127.0.0.1
Timeout 600
MaxClients 200
Allow 127.0.0.1
LogLevel Critical
EOF
"$TINYPROXY" -d -c "$D/tinyproxy.conf" >/dev/null 2>&1 &
pids="$pids $!"
socat "UNIX-LISTEN:$D/sock/proxy.sock,fork,mode=666" "TCP:127.0.0.1:$TP" &
pids="$pids $!"
while [ ! -S "$D/sock/proxy.sock" ]; do sleep 0.05; done
sleep 0.3
chain=$("$ISD" exec --network none -v "$D/sock:/bench" -e PROXY_PORT=3129 -- sh -c \
	"socat TCP-LISTEN:3129,fork,reuseaddr,bind=127.0.0.1 UNIX-CONNECT:/bench/proxy.sock & sleep 0.3; $SPY /bench/client.py $URL $N; kill \$!")

set -- $netless
n_tp=$1 n_lat=$2
set -- $chain
c_tp=$1 c_lat=$2
printf 'download %s MB:   netless %8s MB/s   tinyproxy+socat %8s MB/s   ratio %.2fx (target >= 2x)\n' \
	"$MB" "$n_tp" "$c_tp" "$(echo "$n_tp $c_tp" | awk '{print $1 / $2}')"
printf '%s small requests: netless %8s ms     tinyproxy+socat %8s ms     median latency ratio %.2f (lower is better)\n' \
	"$N" "$n_lat" "$c_lat" "$(echo "$n_lat $c_lat" | awk '{print $1 / $2}')"
