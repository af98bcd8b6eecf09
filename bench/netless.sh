#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# netless (isd's own proxy) against direct loopback, the floor, and against
# the chain it replaces: tinyproxy on the host, socat from TCP to a unix
# socket bound into the sandbox, socat inside back to TCP for HTTP_PROXY.
# Same run, same server, same client:
#   - throughput of one download (BENCH_MB, default 200 MB)
#   - latency of BENCH_N (default 1000) small requests, one connection each
# Prints every side (medians of BENCH_ROUNDS runs against direct) and the
# ratios.  Everything stays on 127.0.0.1.
# Needs: isd (ISD=path, default ./build/src/isd), python3; tinyproxy and
# socat for the chain (left out when missing).
# Not run in CI:  apt-get install tinyproxy socat && sh bench/netless.sh
set -eu
ISD=${ISD:-./build/src/isd}
MB=${BENCH_MB:-200}
N=${BENCH_N:-1000}
SPY=/usr/bin/python3
command -v python3 >/dev/null || { echo "bench: python3 is not installed"; exit 1; }
chain=yes
for tool in tinyproxy socat; do
	command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || { echo "bench: $tool is not installed (apt-get install tinyproxy socat): no chain"; chain=; }
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
# through HTTP_PROXY on a new connection each, the median latency.  With
# PROXY_PORT=direct it asks the server itself (on the host).
cat >"$D/client.py" <<'EOF'
import http.client, os, statistics, sys, time
direct = os.environ["PROXY_PORT"] == "direct"
url = sys.argv[1]
port = int(url.rsplit(":", 1)[1]) if direct else int(os.environ["PROXY_PORT"])
def get(path, sink=False):
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("GET", path if direct else url + path)
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
print("%.1f %.3f" % (mbps, statistics.median(lat) if lat else 0), flush=True)
if os.environ.get("PAUSE"):
    time.sleep(float(os.environ["PAUSE"]))
EOF
cp "$D/client.py" "$D/sock/client.py"

# direct on the host (the floor) and isd netless, alternated BENCH_ROUNDS
# (default 3) times so that both see the same machine; medians of each.
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
: >"$D/direct" && : >"$D/netless"
r=0
while [ $r -lt "${BENCH_ROUNDS:-3}" ]; do
	PROXY_PORT=direct python3 "$D/client.py" "$URL" "$N" >>"$D/direct"
	"$ISD" exec --network netless --allow "127.0.0.1:$PORT" -v "$D/sock:/bench:ro" \
		-e PROXY_PORT=3128 -- "$SPY" /bench/client.py "$URL" "$N" >>"$D/netless"
	r=$((r + 1))
done
# CPU time of isd itself (the relay thread; not the sandbox) for one
# download, read from /proc while the payload pauses after it.
"$ISD" exec --network netless --allow "127.0.0.1:$PORT" -v "$D/sock:/bench:ro" \
	-e PROXY_PORT=3128 -e PAUSE=1 -- "$SPY" /bench/client.py "$URL" 0 >"$D/cpu.out" &
cpu_pid=$!
while [ ! -s "$D/cpu.out" ]; do sleep 0.02; done
relay_ms=$(awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) * 1000 / hz}' "/proc/$cpu_pid/stat")
wait $cpu_pid
direct="$(cut -d' ' -f1 "$D/direct" | median) $(cut -d' ' -f2 "$D/direct" | median)"
netless="$(cut -d' ' -f1 "$D/netless" | median) $(cut -d' ' -f2 "$D/netless" | median)"

if [ -n "$chain" ]; then
	# tinyproxy + socat + socat
	TP=$((PORT + 1))
	cat >"$D/tinyproxy.conf" <<-EOF
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
fi

set -- $direct
d_tp=$1 d_lat=$2
set -- $netless
n_tp=$1 n_lat=$2
ratio() { echo "$1 $2" | awk '{printf "%.2f", $1 / $2}'; }
printf 'download %s MB:   netless %8s MB/s   direct %8s MB/s   ratio %sx (goal >= 0.9x)\n' \
	"$MB" "$n_tp" "$d_tp" "$(ratio "$n_tp" "$d_tp")"
printf '%s small requests: netless %8s ms     direct %8s ms     median latency ratio %s (goal <= 1.3)\n' \
	"$N" "$n_lat" "$d_lat" "$(ratio "$n_lat" "$d_lat")"
printf 'isd CPU time for the %s MB download: %s ms (%s ms per GB)\n' "$MB" "$relay_ms" \
	"$(echo "$relay_ms $MB" | awk '{printf "%.0f", $1 * 1024 / $2}')"
[ -n "$chain" ] || exit 0
set -- $chain
c_tp=$1 c_lat=$2
printf 'download %s MB:   netless %8s MB/s   tinyproxy+socat %8s MB/s   ratio %sx\n' \
	"$MB" "$n_tp" "$c_tp" "$(ratio "$n_tp" "$c_tp")"
printf '%s small requests: netless %8s ms     tinyproxy+socat %8s ms     median latency ratio %s (lower is better)\n' \
	"$N" "$n_lat" "$c_lat" "$(ratio "$n_lat" "$c_lat")"
