# SPDX-License-Identifier: LGPL-2.1-or-later
# Network modes: none, host, netless (allowlist proxy, DNS stub, capture,
# forwards) and private.  Traffic goes only to servers this file starts on
# the host's loopback, or in a network namespace it creates itself.

NETDIR=$ISD_TEST_SRCDIR/tests/network
# The python3 of the host image, as the payload sees it (not a shim in $HOME).
SPY=/usr/bin/python3

# Throw-away CA and a certificate for web.test and other.test.
make_certs() {
	command -v openssl >/dev/null || skip "openssl (openssl) is not installed"
	(
		cd "$T" || exit 1
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem \
			-days 2 -subj /CN=isd-test-ca -addext basicConstraints=critical,CA:TRUE \
			-addext keyUsage=critical,keyCertSign,cRLSign &&
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout leaf.key \
				-out leaf.csr -subj /CN=web.test &&
			printf 'subjectAltName=DNS:web.test,DNS:other.test\nbasicConstraints=CA:FALSE\n' >leaf.ext &&
			openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out leaf.pem -days 2 \
				-extfile leaf.ext
	) >"$T/openssl.log" 2>&1 || fail "making test certificates: $(cat "$T/openssl.log")"
}

# start_server NAME ARGS...: runs serve.py, waits for its port, sets
# ${NAME}_PORT; every server is stopped when the test exits.
start_server() {
	name=$1
	shift
	"$HPY" "$NETDIR/serve.py" "$@" &
	echo $! >>"$T/pids"
	wait_until 10 test -s "$T/$name.port" || fail "test server $name did not start"
	eval "${name}_PORT=\$(cat \"\$T/\$name.port\")"
}

stop_servers() {
	[ -f "$T/pids" ] && kill $(cat "$T/pids") 2>/dev/null
	wait 2>/dev/null
}

# Servers, content and the usual netless flags ($NL).
net_setup() {
	command -v curl >/dev/null || skip "curl (curl) is not installed"
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	HPY=$(command -v python3) || skip "python3 (python3) is not installed"
	at_teardown stop_servers
	make_certs
	mkdir -p "$T/www"
	echo hello >"$T/www/hello.txt"
	start_server http http "$T/www" "$T/http.port"
	start_server https https "$T/www" "$T/https.port" "$T/leaf.pem" "$T/leaf.key"
	NL="--network netless --add-host web.test:127.0.0.1 --allow web.test:$https_PORT --allow web.test:$http_PORT -v $T/ca.pem:/ca.pem:ro -v $NETDIR:/net:ro"
}

test_network_options_validated() {
	for bad in "--network bogus" "--allow x.test" "--network netless --allow bad_host!" \
		"--network netless --allow x.test:99999" "--network netless --allow x.test:0" \
		"--network netless --proxy-port 0" "--network host --forward 8080:127.0.0.1:80" \
		"--network netless --forward 3128:127.0.0.1:80" "--add-host nocolon" \
		"--network netless --allow-file $T/missing" "--forward-unix relative:/x"; do
		# shellcheck disable=SC2086
		run_isd exec $bad -- true
		expect_rc 125 "$bad"
		[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "$bad: error must be one line: $err"
	done
	run_isd exec --allow x.test -- true
	expect_contains "$err" "need --network netless"
	run_isd exec --network bogus -- true
	expect_contains "$err" "known: none, host, private, netless"
	printf '# comment\napi.x.test\n*.cdn.x.test:*  # trailing\n\n' >"$T/allow"
	run_isd exec --print-spec --network netless --allow-file "$T/allow" --add-host h.test:127.0.0.1 \
		--forward 9000:127.0.0.1:9001 -- true
	expect_rc 0
	expect_contains "$out" '"network_config"'
	expect_contains "$out" '"host": "*.cdn.x.test"'
	expect_contains "$out" '"port": "*"'
	expect_contains "$out" '"host": "api.x.test"'
	expect_contains "$out" '"h.test:127.0.0.1"'
	expect_contains "$out" '"sandbox": 9000'
	expect_contains "$out" 'HTTPS_PROXY=http://127.0.0.1:3128'
	# the audit shows a long name whole (a name may have 253 bytes)
	long=$(printf 'a%.0s' $(seq 60)).$(printf 'b%.0s' $(seq 60)).$(printf 'c%.0s' $(seq 60)).example.test
	run_isd exec --print-spec --network netless --allow "*.$long:8443" --allow "$long" -- true
	expect_rc 0
	expect_contains "$out" "\"host\": \"*.$long\"" "a long wildcard name in --print-spec"
	expect_contains "$out" "\"host\": \"$long\"" "a long name in --print-spec"
	printf 'bad host!\n' >"$T/allow"
	run_isd exec --network netless --allow-file "$T/allow" -- true
	expect_rc 125
	expect_contains "$err" "line 1"
}

test_network_host_warns() {
	run_isd exec --network host -- true
	expect_rc 0
	expect_contains "$err" "warning"
	expect_contains "$err" "loopback"
	expect_contains "$err" "abstract unix sockets"
	run_isd exec --network none -- true
	expect_eq "$err" "" "no warning for none"
}

test_network_none_forward() {
	net_setup
	run_isd exec --network none --forward "9000:127.0.0.1:$http_PORT" -- sh -c 'cat /proc/net/route | wc -l; curl -sS http://127.0.0.1:9000/hello.txt'
	expect_rc 0
	expect_eq "$out" "1
hello" "a forwarded port reaches the host's loopback server; no routes"
	run_isd exec --network none -- curl -sS --max-time 5 "http://127.0.0.1:$http_PORT/hello.txt"
	[ "$rc" -ne 0 ] || fail "none: the host's loopback is reachable"
}

test_netless_https_allowed() {
	net_setup
	# shellcheck disable=SC2086
	run_isd exec $NL -- sh -c "env | grep -c -i -E '^(https?|all|no)_proxy=' ; curl -sS --cacert /ca.pem https://web.test:$https_PORT/hello.txt"
	expect_rc 0
	expect_eq "$out" "8
hello" "HTTPS through CONNECT with certificate verification"
	# shellcheck disable=SC2086
	run_isd exec $NL -- curl -sS "http://web.test:$http_PORT/hello.txt"
	expect_eq "$out" hello "plain http:// through the proxy"
	# ALL_PROXY is socks5h: names resolve host-side
	# shellcheck disable=SC2086
	run_isd exec $NL -- env -u HTTPS_PROXY -u https_proxy curl -sS --cacert /ca.pem "https://web.test:$https_PORT/hello.txt"
	expect_eq "$out" hello "SOCKS5 through ALL_PROXY"
}

test_netless_denied() {
	net_setup
	# shellcheck disable=SC2086
	run_isd exec $NL -- curl -sS -x http://127.0.0.1:3128 -o /dev/null -w '%{http_code}' http://evil.test/
	expect_eq "$out" 403 "plain http to a name not allowed"
	expect_contains "$err" "--allow evil.test:80"
	# shellcheck disable=SC2086
	run_isd exec $NL -- curl -sS -p -x http://127.0.0.1:3128 https://evil.test:8443/
	[ "$rc" -ne 0 ] || fail "CONNECT to a name not allowed succeeded"
	expect_contains "$err" "denied CONNECT evil.test:8443"
	expect_contains "$err" "add --allow evil.test:8443"
	# the body names the rule too
	# shellcheck disable=SC2086
	run_isd exec $NL -- curl -sS -x http://127.0.0.1:3128 http://evil.test:81/
	expect_contains "$out" "add --allow evil.test:81"
	# an IP literal only when listed as such
	# shellcheck disable=SC2086
	run_isd exec $NL -- curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$http_PORT/hello.txt" -x http://127.0.0.1:3128 --noproxy ''
	expect_eq "$out" 403 "IP literal not listed"
	# shellcheck disable=SC2086
	run_isd exec $NL --allow "127.0.0.1:$http_PORT" -- curl -sS "http://127.0.0.1:$http_PORT/hello.txt" -x http://127.0.0.1:3128 --noproxy ''
	expect_eq "$out" hello "IP literal listed"
	# SOCKS5 refusal
	# shellcheck disable=SC2086
	run_isd exec $NL -- curl -sS --max-time 10 --socks5-hostname 127.0.0.1:3128 http://evil.test/
	[ "$rc" -ne 0 ] || fail "SOCKS5 to a name not allowed succeeded"
	expect_contains "$err" "denied SOCKS5 evil.test:80"
}

test_netless_direct_fails() {
	net_setup
	# shellcheck disable=SC2086
	run_isd exec $NL -- sh -c "cat /proc/net/route | wc -l; curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:$http_PORT/hello.txt || echo refused"
	expect_eq "$out" "1
refused" "no routes, the host's loopback unreachable"
	# a fake address that no name stands for
	# shellcheck disable=SC2086
	run_isd exec $NL -- sh -c "curl -sS --noproxy '*' --max-time 5 http://198.18.7.7/ || echo refused"
	expect_contains "$out" refused
}

test_netless_forward() {
	net_setup
	# shellcheck disable=SC2086
	run_isd exec $NL --forward "127.0.0.1:$http_PORT" --forward "9001:localhost:$http_PORT" -- sh -c \
		"curl -sS http://127.0.0.1:$http_PORT/hello.txt; curl -sS http://localhost:9001/hello.txt"
	expect_rc 0
	expect_eq "$out" "hello
hello" "--forward in netless mode (NO_PROXY covers loopback)"
}

test_netless_forward_unix() {
	net_setup
	"$HPY" "$NETDIR/serve.py" unix-echo "$T/echo.sock" &
	echo $! >>"$T/pids"
	wait_until 10 test -S "$T/echo.sock" || fail "unix echo server did not start"
	run_isd exec --network none --forward-unix "/run/agent/echo.sock:$T/echo.sock" -- "$SPY" -c '
import socket
s = socket.socket(socket.AF_UNIX); s.connect("/run/agent/echo.sock"); s.sendall(b"hi\n"); print(s.recv(100).decode().strip())'
	expect_rc 0
	expect_eq "$out" "echo: hi" "--forward-unix"
	run_isd exec --network none --forward-unix "/usr/echo.sock:$T/echo.sock" -- true
	expect_rc 125 "a sandbox path on the read-only root"
	expect_contains "$err" "/usr/echo.sock"
}

test_netless_parallel_downloads() {
	net_setup
	head -c 262144 /dev/urandom >"$T/www/blob"
	want=$(sha256sum <"$T/www/blob" | cut -d' ' -f1)
	args=""
	i=0
	while [ $i -lt 200 ]; do
		args="$args -o /tmp/f$i https://web.test:$https_PORT/blob"
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	run_isd exec $NL -- sh -c "curl -sS --cacert /ca.pem -Z --parallel-max 200 $args && sha256sum /tmp/f* | cut -d' ' -f1 | sort | uniq -c"
	expect_rc 0
	expect_eq "$(echo $out)" "200 $want" "200 parallel downloads intact"
}

test_netless_malformed_request() {
	net_setup
	# shellcheck disable=SC2086
	run_isd exec $NL -- "$SPY" -c "
import socket
def ask(data):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(data)
    r = b''
    while True:
        c = s.recv(4096)
        if not c: break
        r += c
    return r.split(b'\r\n')[0].decode()
print(ask(b'GARBAGE\x01 / HTTP/1.1\r\n\r\n'))
print(ask(b'GET http://web.test:$http_PORT/ HTTP/1.1\r\nX: ' + b'a' * 40000 + b'\r\n\r\n'))
print(ask(b'GET http://web.test:$http_PORT/ HTTP/1.1\r\n folded\r\n\r\n'))
print(ask(b'GET /hello.txt HTTP/1.1\r\nHost: web.test\r\n\r\n'))
print(ask(b'GET http://web.test:$http_PORT/hello.txt HTTP/1.1\r\nHost: web.test\r\n\r\n'))
"
	expect_rc 0
	expect_eq "$out" "HTTP/1.1 400 Bad Request
HTTP/1.1 400 Bad Request
HTTP/1.1 400 Bad Request
HTTP/1.1 400 Bad Request
HTTP/1.1 200 OK" "malformed requests get 400, then the proxy serves"
}

test_netless_dns_and_capture() {
	net_setup
	# shellcheck disable=SC2086
	run_isd exec $NL -- sh -c "python3=$SPY
		\$python3 /net/dnsquery.py web.test; \$python3 /net/dnsquery.py WEB.test. tcp
		\$python3 /net/dnsquery.py evil.test; \$python3 /net/dnsquery.py evil.test tcp"
	expect_rc 0
	expect_eq "$out" "A 198.18.0.2
A 198.18.0.2
NXDOMAIN
NXDOMAIN" "the DNS stub answers allowed names only"
	expect_contains "$err" "denied DNS evil.test: evil.test is not in the allowlist (add --allow evil.test for HTTPS, --allow evil.test:PORT for another port)"
	# a tool that ignores the proxy variables: /etc/hosts and the DNS
	# stub lead to the fake address, the capture applies the allowlist
	# shellcheck disable=SC2086
	run_isd exec $NL -- sh -c "curl -sS --noproxy '*' --cacert /ca.pem https://web.test:$https_PORT/hello.txt
		ip=\$($SPY /net/dnsquery.py web.test | cut -d' ' -f2)
		curl -sS --noproxy '*' --cacert /ca.pem --connect-to web.test:$https_PORT:\$ip:$https_PORT https://web.test:$https_PORT/hello.txt
		curl -sS --noproxy '*' http://web.test:$http_PORT/hello.txt"
	expect_rc 0
	expect_eq "$out" "hello
hello
hello" "capture of an allowed name"
	start=$(date +%s)
	# shellcheck disable=SC2086
	run_isd exec $NL -- curl -sS --noproxy '*' --max-time 20 https://evil.test/
	[ "$rc" -ne 0 ] || fail "a name not allowed was reached"
	[ $(($(date +%s) - start)) -lt 10 ] || fail "a name not allowed took more than 10 s to fail"
	expect_contains "$err" "denied DNS evil.test"
}

test_netless_no_rebinding_to_host() {
	net_setup
	# the host resolves localhost to loopback: refused unless that address is allowed
	run_isd exec --network netless --allow "localhost:$http_PORT" -- env -u NO_PROXY -u no_proxy \
		curl -sS -o /dev/null -w '%{http_code}' "http://localhost:$http_PORT/hello.txt"
	expect_eq "$out" 403 "a name resolving to loopback"
	expect_contains "$err" "resolves to"
	expect_contains "$err" "loopback"
	run_isd exec --network netless --allow "localhost:$http_PORT" --allow "127.0.0.1:$http_PORT" -- \
		env -u NO_PROXY -u no_proxy curl -sS "http://localhost:$http_PORT/hello.txt"
	expect_eq "$out" hello "allowed when the address itself is allowed"
	# --add-host makes its address explicitly allowed for that name
	run_isd exec --network netless --allow "localhost:$http_PORT" --add-host localhost:127.0.0.1 -- \
		env -u NO_PROXY -u no_proxy curl -sS "http://localhost:$http_PORT/hello.txt"
	expect_eq "$out" hello "--add-host address"
}

test_netless_sni_must_match() {
	net_setup
	# shellcheck disable=SC2086
	run_isd exec $NL -- sh -c "openssl s_client -proxy 127.0.0.1:3128 -connect web.test:$https_PORT -servername web.test \
		-CAfile /ca.pem -verify_return_error </dev/null 2>&1 | grep -q 'Verify return code: 0' && echo verified"
	expect_eq "$out" verified "matching SNI"
	# shellcheck disable=SC2086
	run_isd exec $NL -- sh -c "openssl s_client -proxy 127.0.0.1:3128 -connect web.test:$https_PORT -servername other.test \
		-CAfile /ca.pem </dev/null >/dev/null 2>&1; echo done"
	expect_contains "$err" "TLS server name other.test differs from the CONNECT target web.test"
}

test_netless_network_log() {
	net_setup
	# shellcheck disable=SC2086
	run_isd exec $NL --network-log "$T/net.log" -- sh -c "curl -sS --cacert /ca.pem https://web.test:$https_PORT/hello.txt; curl -sS -o /dev/null http://evil.test/"
	expect_eq "$out" hello
	expect_not_contains "$err" "denied" "denials go to the log file"
	log=$(cat "$T/net.log")
	expect_contains "$log" "allowed CONNECT web.test:$https_PORT via 127.0.0.1 up="
	expect_contains "$log" "denied GET evil.test:80"
	printf '%s\n' "$log" | grep -q '^20[0-9-]*T[0-9:]*Z ' || fail "log lines start with a UTC time: $log"
}

private_usable() {
	command -v pasta >/dev/null || command -v slirp4netns >/dev/null ||
		[ -x /usr/bin/pasta ] || [ -x /usr/bin/slirp4netns ] || skip "neither pasta (passt) nor slirp4netns (slirp4netns) is installed"
	[ -r /dev/net/tun ] && [ -w /dev/net/tun ] || skip "/dev/net/tun is not usable by this user (mode 0600: chmod 0666 /dev/net/tun)"
	awk '$2 == "00000000" {found = 1} END {exit !found}' /proc/net/route ||
		skip "isd's own network namespace has no default route to share (nested with an unshared network?)"
}

# private_check HELPER: the sandbox has an interface, an address and a
# default route; the host's loopback services stay out of reach.
private_check() {
	export ISD_PRIVATE_NET_HELPER=$1
	run_isd exec --network private -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | grep -v "^lo$" | head -1
		awk "\$2 == \"00000000\" {print \"default via\", \$1}" /proc/net/route | head -1'
	expect_rc 0 "$1"
	iface=$(printf '%s\n' "$out" | head -1)
	[ -n "$iface" ] || fail "$1: no interface besides lo: $out $err"
	expect_contains "$out" "default via $iface" "$1: a default route"
	run_isd exec --network private -- sh -c "awk '/32 host LOCAL/ {print prev} {prev = \$2}' /proc/net/fib_trie | grep -v '^127\.' | head -1"
	[ -n "$out" ] || fail "$1: no address on $iface"
	run_isd exec --network private -- curl -sS --max-time 5 "http://127.0.0.1:$http_PORT/hello.txt"
	[ "$rc" -ne 0 ] || fail "$1: the host's loopback service is reachable"
	unset ISD_PRIVATE_NET_HELPER
}

test_private_network_pasta() {
	command -v pasta >/dev/null || [ -x /usr/bin/pasta ] || skip "pasta (package passt) is not installed"
	private_usable
	net_setup
	private_check pasta
}

test_private_network_slirp4netns() {
	command -v slirp4netns >/dev/null || [ -x /usr/bin/slirp4netns ] || skip "slirp4netns (slirp4netns) is not installed"
	private_usable
	net_setup
	private_check slirp4netns
}

test_private_missing_helper() {
	run_isd exec --network private --print-spec -- true
	expect_rc 0
	expect_contains "$out" '"network": "private"'
	ISD_PRIVATE_NET_HELPER=none run_isd exec --network private -- true
	expect_rc 125 "no pasta and no slirp4netns"
	expect_contains "$err" "install the package passt"
}

test_private_reaches_test_netns() {
	[ "$(id -u)" -eq 0 ] || skip "making a network namespace with a veth pair needs root"
	command -v ip >/dev/null || skip "ip (iproute2) is not installed"
	private_usable
	net_setup
	ns=isdtest-$$
	ip netns add "$ns" || skip "ip netns add failed (nested without privileges?)"
	at_teardown "ip netns del $ns 2>/dev/null; ip link del isdv$$ 2>/dev/null"
	ip link add "isdv$$" type veth peer name eth0 netns "$ns" || skip "creating a veth pair failed"
	ip addr add 10.213.77.1/30 dev "isdv$$"
	ip link set "isdv$$" up
	ip -n "$ns" addr add 10.213.77.2/30 dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
	SERVE_ADDR=10.213.77.2 ip netns exec "$ns" "$HPY" "$NETDIR/serve.py" http "$T/www" "$T/ns.port" &
	echo $! >>"$T/pids"
	wait_until 10 test -s "$T/ns.port" || fail "server in $ns did not start"
	run_isd exec --network private -- curl -sS --max-time 10 "http://10.213.77.2:$(cat "$T/ns.port")/hello.txt"
	expect_rc 0
	expect_eq "$out" hello "private reaches a server in the test's own namespace"
}

# isd_in_test_netns SCRIPT: runs SCRIPT (sh) in a mount and network
# namespace of the test's own, as root in it (unshare -r for a user), with
# a name server on its loopback that never answers (slowdns.py) and
# /etc/resolv.conf and nsswitch.conf pointing at it: host-side lookups
# stall for as long as RES_OPTIONS says, and nothing leaves the machine.
isd_in_test_netns() {
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	HPY=$(command -v python3) || skip "python3 (python3) is not installed"
	[ "$(id -u)" -eq 0 ] && u="" || u=-r
	unshare $u -mn true 2>/dev/null || skip "unshare $u -mn is not permitted here"
	printf 'nameserver 127.0.0.1\n' >"$T/resolv.conf"
	printf 'hosts: files dns\n' >"$T/nsswitch.conf"
	cat >"$T/inner.sh" <<INNER
mount --bind "$T/resolv.conf" /etc/resolv.conf || exit 99
mount --bind "$T/nsswitch.conf" /etc/nsswitch.conf || exit 99
"$HPY" "$NETDIR/slowdns.py" "$T/dns.ready" "$T/dns.log" &
dns=\$!
i=0
while [ ! -s "$T/dns.ready" ] && [ \$i -lt 200 ]; do i=\$((i + 1)); sleep 0.05; done
$1
rc=\$?
kill \$dns
exit \$rc
INNER
	unshare $u -mn sh "$T/inner.sh" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	[ "$rc" -ne 99 ] || skip "bind mounts in the test's mount namespace failed: $err"
}

# The sandbox ends while the relay waits for a name: isd neither touches the
# freed lookup (ASan build) nor waits for it to finish.
test_netless_exit_during_slow_resolution() {
	command -v curl >/dev/null || skip "curl (curl) is not installed"
	: >"$T/dns.log"
	isd_in_test_netns "start=\$(date +%s)
RES_OPTIONS='timeout:25 attempts:1' \"$ISD\" exec --network netless --allow slow.test:80 -v \"$T:/t:ro\" -- sh -c '
	curl -sS --max-time 60 -x http://127.0.0.1:3128 http://slow.test/ >/dev/null 2>&1 &
	i=0
	until grep -q slow.test /t/dns.log; do
		i=\$((i + 1)); [ \$i -lt 200 ] || { echo no lookup; exit 3; }; sleep 0.05
	done
	echo the host resolves'
rc=\$?
echo took=\$((\$(date +%s) - start))
exit \$rc"
	expect_rc 0 "isd exits cleanly during a lookup"
	expect_contains "$out" "the host resolves" "the lookup was in flight when the sandbox ended"
	expect_not_contains "$err" "AddressSanitizer"
	took=$(printf '%s\n' "$out" | sed -n 's/^took=//p')
	[ "$took" -lt 15 ] || fail "isd waited ${took} s for a lookup nobody needs any more (the name server stalls 25 s)"
}

# kB of a field of /proc/PID/status (VmRSS, VmHWM).
status_kb() {
	awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"
}

# sink_has N: the sink has recorded N uploads.
sink_has() {
	[ "$(wc -l <"$T/sink.result" 2>/dev/null || echo 0)" -ge "$1" ]
}

# A payload that floods DNS over TCP and never reads an answer: isd (outside
# every cgroup) stops reading its queries once 16 KiB of answers wait, its
# memory stays put (bound: 64 MiB over what it held before the flood), and
# the connection ends by the DNS idle rule.
test_netless_dns_tcp_flood_bounded() {
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	mkdir "$T/sync"
	chmod 777 "$T/sync"
	"$ISD" exec --network netless --add-host web.test:127.0.0.1 --allow web.test -v "$NETDIR:/net:ro" \
		-v "$T/sync:/sync" -- "$SPY" /net/dnsflood.py /sync 64 >"$T/out" 2>"$T/err" </dev/null &
	pid=$!
	wait_until 20 test -e "$T/sync/ready" || { kill $pid; fail "the payload did not start: $(cat "$T/err")"; }
	before=$(status_kb $pid VmRSS)
	: >"$T/sync/go"
	wait_until 60 test -e "$T/sync/done" || { kill $pid; fail "the flood did not end within 60 s"; }
	peak=$(status_kb $pid VmHWM)
	: >"$T/sync/end"
	wait $pid
	rc=$?
	err=$(cat "$T/err")
	expect_rc 0
	how=$(cat "$T/sync/done")
	grew=$(((peak - before) / 1024))
	echo "isd: VmRSS ${before} kB before the flood, VmHWM ${peak} kB after ($grew MiB more); flood: $how"
	[ "$grew" -lt 64 ] || fail "isd's memory grew by $grew MiB while the payload flooded DNS over TCP ($how)"
	expect_contains "$how" "reset" "isd ends a DNS connection that does not move"
}

# DNS over TCP ends by its own idle rule (10 s without a query answered),
# not by the 30 s limit for request heads: a connection that keeps asking
# lives on, a silent one ends.
test_netless_dns_tcp_idle_rule() {
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	run_isd exec --network netless --add-host web.test:127.0.0.1 --allow web.test -- "$SPY" -c '
import socket, struct, time
q = struct.pack(">HHHHHH", 7, 0x0100, 1, 0, 0, 0) + b"\x03web\x04test\x00" + struct.pack(">HH", 1, 1)
busy = socket.create_connection(("127.0.0.1", 53), timeout=5)
idle = socket.create_connection(("127.0.0.1", 53), timeout=5)
start = time.monotonic()
def ask():
    busy.sendall(struct.pack(">H", len(q)) + q)
    n = struct.unpack(">H", busy.recv(2))[0]
    return len(busy.recv(n)) == n
for t in (0, 7, 14, 21, 28, 35):
    time.sleep(max(0, start + t - time.monotonic()))
    try:
        print("t=%d answered" % t if ask() else "t=%d short" % t)
    except (OSError, struct.error) as e:
        print("t=%d %s" % (t, e or "closed"))
    if t == 14:
        idle.settimeout(0.5)
        try:
            print("idle:", "closed" if idle.recv(1) == b"" else "data")
        except OSError as e:
            print("idle:", e)
'
	expect_rc 0
	expect_eq "$out" "t=0 answered
t=7 answered
t=14 answered
idle: closed
t=21 answered
t=28 answered
t=35 answered" "a DNS connection in use past 30 s, a silent one closed"
}

# An absolute URI names the target; a different Host field must not reach
# a virtual host the allowlist never saw on the allowed server.
test_netless_absolute_uri_host() {
	net_setup
	# shellcheck disable=SC2086
	run_isd exec $NL -- "$SPY" -c "
import socket
for host in (b'other.internal:9999', b'web.test:$http_PORT', None):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(b'GET http://web.test:$http_PORT/host HTTP/1.1\r\n' + (b'Host: ' + host + b'\r\n' if host else b'') + b'\r\n')
    r = b''
    while True:
        c = s.recv(4096)
        if not c: break
        r += c
    print(r.split(b'\r\n\r\n', 1)[-1].decode().strip())
"
	expect_rc 0
	expect_eq "$out" "Host: web.test:$http_PORT
Host: web.test:$http_PORT
Host: web.test:$http_PORT" "the server sees the allowed target's Host"
}

# Many uploads to a server that reads nothing yet: isd's buffers fill, and
# all together stay under the relay's total (32 MiB; the test allows 56 MiB
# over isd's memory before, where 512 full 128 KiB buffers would take 64);
# once the server reads, the connections that waited for memory resume and
# every upload arrives whole.  Tunnels splice through kernel pipes when
# descriptors allow: a descriptor limit too low for four more per tunnel
# makes them copy through isd's buffers, the case with memory to bound.
test_netless_total_memory_bounded() {
	net_setup
	mkdir "$T/sync"
	chmod 777 "$T/sync"
	start_server sink sink "$T/sink.port" "$T/sync/drain" "$T/sink.result"
	# Under pressure empty buffers are given back and taken again: in an
	# ASan build its quarantine would keep every one (isd's heap does not).
	# shellcheck disable=SC2086
	(
		ulimit -n 1400 || exit 99
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" exec "$ISD" exec $NL --allow "web.test:$sink_PORT" -v "$T/sync:/sync" -- "$SPY" -c "
import os, socket, time
N, SIZE = 512, 512 << 10
def wait_for(name):
    for _ in range(1200):
        if os.path.exists('/sync/' + name):
            return
        time.sleep(0.05)
    raise SystemExit('no ' + name)
open('/sync/ready', 'w').close()
wait_for('go')
conns, sent = [], []
for i in range(N):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    s.settimeout(60)
    s.connect(('127.0.0.1', 3128))
    s.sendall(b'CONNECT web.test:$sink_PORT HTTP/1.1\r\n\r\n')
    r = b''
    while not r.endswith(b'\r\n\r\n'):
        r += s.recv(1)
    assert r.startswith(b'HTTP/1.1 200'), r
    s.setblocking(False)
    conns.append(s)
    sent.append(0)
chunk = b'x' * (64 << 10)
end = time.monotonic() + 4
while time.monotonic() < end:
    for i, s in enumerate(conns):
        try:
            sent[i] += s.send(chunk[:SIZE - sent[i]]) if sent[i] < SIZE else 0
        except BlockingIOError:
            pass
    time.sleep(0.01)
print('in flight: %d MiB' % (sum(sent) >> 20))
open('/sync/full', 'w').close()
wait_for('drain')
for i, s in enumerate(conns):
    s.settimeout(60)
    s.sendall(chunk * (SIZE // len(chunk)))
    s.close()
"
	) >"$T/out" 2>"$T/err" </dev/null &
	pid=$!
	wait_until 20 test -e "$T/sync/ready" || { kill $pid; fail "the payload did not start: $(cat "$T/err")"; }
	before=$(status_kb $pid VmRSS)
	: >"$T/sync/go"
	wait_until 60 test -e "$T/sync/full" ||
		{ kill $pid; fail "the payload did not fill its connections: $(cat "$T/err")"; }
	peak=$(status_kb $pid VmHWM)
	: >"$T/sync/drain"
	wait $pid
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_rc 0
	grew=$(((peak - before) / 1024))
	echo "isd: VmRSS ${before} kB before, VmHWM ${peak} kB with 512 stalled uploads ($grew MiB more); $out"
	[ "$grew" -lt 56 ] || fail "isd's memory grew by $grew MiB for 512 stalled uploads"
	# The last uploads may still be on their way: the check below says so.
	wait_until 30 sink_has 512 || :
	expect_eq "$(sort "$T/sink.result" | uniq -c | sed 's/^ *//')" "512 1048576" "every upload arrives whole"
}

# A denied lookup of a git host says how to reach it over ssh, with the
# caller's agent socket when there is one (a lookup tells no port, and
# --allow github.com alone means HTTPS).
test_netless_dns_denial_ssh_hint() {
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	run_isd exec --network netless -v "$NETDIR:/net:ro" -- $SPY /net/dnsquery.py github.com
	expect_eq "$out" NXDOMAIN
	expect_contains "$err" "add --allow github.com for HTTPS, --allow github.com:22 for git over ssh"
	SSH_AUTH_SOCK=$T/agent.sock "$ISD" exec --network netless -v "$NETDIR:/net:ro" -- $SPY /net/dnsquery.py github.com >"$T/out" 2>"$T/err" </dev/null
	expect_contains "$(cat "$T/err")" "--allow github.com:22 --forward-unix /run/ssh-agent.sock:\$SSH_AUTH_SOCK -e SSH_AUTH_SOCK=/run/ssh-agent.sock"
}

# With a terminal, a denial is not printed into the payload's screen (a TUI
# redraws over it): one summary line comes after the payload is done.
test_netless_denials_summed_up_after_a_terminal() {
	command -v script >/dev/null || skip "script (bsdutils) is not installed"
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	script -qec "\"$ISD\" exec -t --network netless -v \"$NETDIR:/net:ro\" -- sh -c '$SPY /net/dnsquery.py evil.test; $SPY /net/dnsquery.py other.test; echo PAYLOAD-DONE'" /dev/null </dev/null >"$T/tty" 2>&1
	out=$(tr -d '\r' <"$T/tty")
	expect_contains "$out" PAYLOAD-DONE
	expect_contains "$out" "isd: network: 2 requests denied while the terminal was in use: denied DNS evil.test"
	expect_contains "$out" "--network-log FILE records every one"
	# nothing of it before the payload's last line
	before=$(printf '%s\n' "$out" | sed '/PAYLOAD-DONE/q')
	expect_not_contains "$before" "denied DNS" "a denial printed into the payload's terminal"
}

# The capture of port 80 checks the Host of a request: a second request on
# the same connection, with another Host, must not reach the server (a
# virtual host the allowlist never saw).  Port 80 of the host's loopback is
# the test's own in a network namespace of its own.
test_netless_capture_80_one_request() {
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	HPY=$(command -v python3) || skip "python3 (python3) is not installed"
	mkdir -p "$T/www"
	isd_in_test_netns "SERVE_PORT=80 \"$HPY\" \"$NETDIR/serve.py\" http \"$T/www\" \"$T/web.port\" &
web=\$!
i=0
while [ ! -s \"$T/web.port\" ] && [ \$i -lt 200 ]; do i=\$((i + 1)); sleep 0.05; done
\"$ISD\" exec --network netless --add-host web.test:127.0.0.1 --allow web.test:80 -- \"$SPY\" -c '
import socket
s = socket.create_connection((\"web.test\", 80), timeout=10)
s.sendall(b\"GET /host HTTP/1.1\\r\\nHost: web.test\\r\\n\\r\\nGET /host HTTP/1.1\\r\\nHost: other.internal\\r\\n\\r\\n\")
r = b\"\"
s.settimeout(3)
while True:
    try:
        c = s.recv(4096)
    except OSError:
        break
    if not c: break
    r += c
print(r.count(b\"HTTP/1.\"), [l.decode().strip() for l in r.split(b\"\\r\\n\") if l.startswith(b\"Host:\")])
'
rc=\$?
kill \$web
exit \$rc"
	expect_rc 0
	expect_eq "$out" "1 ['Host: web.test']" "one request per captured connection, the checked one"
}

# The relay's internal functions are prefixed (or static): none of the names
# they had is a global symbol of isd, where it could collide with another
# module or a library's.
test_relay_symbols_prefixed() {
	command -v nm >/dev/null || skip "nm (binutils) is not installed"
	nm -g --defined-only "$ISD" >"$T/syms" 2>/dev/null || skip "isd has no symbol table (stripped)"
	bare=$(awk '{print $3}' "$T/syms" | grep -xE 'epoll_add|conn_new|conn_close|free_dead|buf_append|buf_fill|in_to_upstream|pump|conn_fail|deny_not_allowed|format_target|dns_handle_udp|dns_handle_tcp|fake_lookup|fakes_init|fakes_free|resolver_start|resolver_stop|resolver_submit|resolver_collect')
	expect_eq "$bare" "" "unprefixed global symbols of the relay"
	expect_contains "$(cat "$T/syms")" "proxy_pump" "the symbol table lists the relay's functions"
}

# ---- -p/--publish: a host port reaches a server inside ----

publish_setup() {
	command -v curl >/dev/null || skip "curl (curl) is not installed"
	[ -x "$SPY" ] || skip "$SPY (python3) is not installed"
	HPY=$(command -v python3) || skip "python3 (python3) is not installed"
	mkdir -p "$T/www" "$T/ctl"
	echo hello >"$T/www/hello.txt"
	head -c 2000000 /dev/urandom >"$T/www/big.bin"
}

# A port of the host's loopback that is free now.
free_port() {
	"$HPY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# publish_start ARGS...: isd exec ARGS in the background; its payload serves
# $T/www over HTTP on the sandbox's 127.0.0.1:8000 and [::1]:8001 until the
# test ends it (publish_finish).
publish_start() {
	"$ISD" exec -v "$T/www:/srv:ro" -v "$T/ctl:/ctl" "$@" -- /bin/sh -c '
		cd /srv || exit 1
		'"$SPY"' -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 & a=$!
		'"$SPY"' -m http.server 8001 --bind ::1 >/dev/null 2>&1 & b=$!
		i=0
		while [ ! -e /ctl/done ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
		kill $a $b
		echo payload-done' >"$T/pub.out" 2>"$T/pub.err" </dev/null &
	PUB_PID=$!
	at_teardown "touch '$T/ctl/done'; wait $PUB_PID 2>/dev/null"
}

publish_finish() {
	touch "$T/ctl/done"
	wait "$PUB_PID"
	rc=$?
	out=$(cat "$T/pub.out")
	err=$(cat "$T/pub.err")
}

# publish_fetch URL: $got, once the server inside answers (it is starting).
publish_fetch() {
	wait_until 15 publish_answers "$1" || fail "$1 never answered: $(cat "$T/curl.err"); isd: $(cat "$T/pub.err")"
}

publish_answers() {
	got=$(curl -sS --max-time 5 "$1" 2>"$T/curl.err") && return 0
	kill -0 "$PUB_PID" 2>/dev/null || fail "isd ended: $(cat "$T/pub.err")"
	return 1
}

# publish_listens ADDR_HEX PORT: the host has a listening socket there.
publish_listens() {
	awk -v want="$1:$(printf %04X "$2")" '$2 == want && $4 == "0A" {found = 1} END {exit !found}' /proc/net/tcp
}

test_publish_none() {
	publish_setup
	hp=$(free_port)
	hp6=$(free_port)
	publish_start --network none -p "$hp:8000" -p "$hp6:8001/tcp"
	publish_fetch "http://127.0.0.1:$hp/hello.txt"
	expect_eq "$got" hello "--network none: the host fetches from the server inside"
	publish_listens 0100007F "$hp" || fail "the published port is not on the host's 127.0.0.1 alone: $(cat /proc/net/tcp)"
	# (a file of /proc has no size: -s would not do)
	if grep -q . /proc/net/if_inet6 2>/dev/null; then
		publish_fetch "http://127.0.0.1:$hp6/hello.txt"
		expect_eq "$got" hello "a server that listens on ::1 only"
	fi
	publish_finish
	expect_rc 0
	expect_eq "$out" payload-done
}

test_publish_netless() {
	publish_setup
	hp=$(free_port)
	publish_start --network netless -p "0.0.0.0:$hp:8000"
	publish_fetch "http://127.0.0.1:$hp/hello.txt"
	expect_eq "$got" hello "--network netless, an explicit 0.0.0.0"
	publish_listens 00000000 "$hp" || fail "0.0.0.0:$hp does not listen: $(cat /proc/net/tcp)"
	publish_finish
	expect_rc 0
	expect_eq "$out" payload-done
}

test_publish_private_pasta() {
	command -v pasta >/dev/null || [ -x /usr/bin/pasta ] || skip "pasta (package passt) is not installed"
	private_usable
	publish_setup
	hp=$(free_port)
	ISD_PRIVATE_NET_HELPER=pasta publish_start --network private -p "$hp:8000"
	publish_fetch "http://127.0.0.1:$hp/hello.txt"
	expect_eq "$got" hello "--network private (pasta)"
	publish_finish
	expect_rc 0
	expect_eq "$out" payload-done
}

# Nothing listens on the sandbox port: that client gets a reset, isd and
# the sandbox go on; many connections at once each get their whole answer.
test_publish_refused_and_concurrent() {
	publish_setup
	hp=$(free_port)
	hq=$(free_port)
	publish_start --network none -p "$hp:8000" -p "$hq:8009"
	publish_fetch "http://127.0.0.1:$hp/hello.txt"
	got=$("$HPY" -c '
import socket, sys
# nothing sent: a close with unread data would be a reset anyway.  The
# reset can come before connect() returns (a loaded machine): the same answer.
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
    print("data" if s.recv(100) else "closed")
except ConnectionResetError:
    print("reset")' "$hq")
	expect_eq "$got" reset "a published port with nothing behind it resets the connection"
	got=$("$HPY" -c '
import hashlib, socket, sys
want = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30) for _ in range(16)]
for s in reversed(socks):
    s.sendall(b"GET /big.bin HTTP/1.0\r\n\r\n")
ok = 0
for s in socks:
    data = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        data += d
    body = data.split(b"\r\n\r\n", 1)[1]
    ok += hashlib.sha256(body).hexdigest() == want
print(ok)' "$hp" "$T/www/big.bin")
	expect_eq "$got" 16 "16 connections open at once, each with the whole file"
	publish_fetch "http://127.0.0.1:$hp/hello.txt"
	expect_eq "$got" hello "isd still relays"
	publish_finish
	expect_rc 0
	expect_eq "$out" payload-done "the sandbox went on"
	expect_contains "$err" "nothing listens on port 8009 in the sandbox"
}

test_publish_validated() {
	publish_setup
	for bad in "-p 18000" "-p 0:80" "-p 8080:70000" "-p 80:80/udp" "-p 8080:80 -p 8080:81" \
		"-p 0.0.0.0:8080:80 -p 127.0.0.1:8080:81" "-p bogus:8080:80" "-p 1:2:3:4" "-p 8000-8002:80-81" \
		"--network host -p 8080:80" "--network netless -p 8080:3128" "--network netless -p 8080:53" \
		"--forward 9000:127.0.0.1:80 -p 8080:9000"; do
		# shellcheck disable=SC2086
		run_isd exec $bad -- true
		expect_rc 125 "$bad"
		[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "$bad: error must be one line: $err"
	done
	run_isd exec --network host -p 8080:80 -- true
	expect_contains "$err" "does not apply to --network host"
	# A host port isd cannot have: one line, and the payload never ran.
	"$HPY" -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(60)' >"$T/held" &
	held=$!
	at_teardown "kill $held 2>/dev/null"
	wait_until 5 test -s "$T/held" || fail "the port holder did not start"
	hp=$(cat "$T/held")
	run_isd exec -v "$T/ctl:/ctl" -p "$hp:8000" -- touch /ctl/ran
	expect_rc 125 "a host port in use"
	expect_eq "$(printf '%s\n' "$err" | wc -l)" 1 "one line: $err"
	expect_contains "$err" "--publish: listening on 127.0.0.1:$hp on the host"
	[ ! -e "$T/ctl/ran" ] || fail "the payload ran although its published port could not be had"
	# --print-spec, and a profile's --publish
	mkdir -p "$T/config/isd/profiles"
	printf -- '--publish 127.0.0.1:18080:3000\n-p 0.0.0.0:18081-18082:4000-4001/tcp\n' >"$T/config/isd/profiles/web.conf"
	XDG_CONFIG_HOME=$T/config run_isd exec --print-spec --profile web -p '[::1]:18083:5000' -p 18084:6000 -- true
	expect_rc 0
	got=$(printf '%s' "$out" | "$HPY" -c 'import json, sys
for p in json.load(sys.stdin)["network_config"]["publish"]:
    print(p["host"], p["host_port"], p["sandbox_port"])')
	expect_eq "$got" "127.0.0.1 18080 3000
0.0.0.0 18081 4000
0.0.0.0 18082 4001
::1 18083 5000
127.0.0.1 18084 6000" "--print-spec lists every published port, 127.0.0.1 by default"
}

# With --pid host the payload sees the socket factory (a child of isd that
# is not init): it holds no capability and cannot be traced or read (isd
# makes it not dumpable; so does the kernel when joining the user namespace
# changed its capabilities, with fs.suid_dumpable 0).
test_publish_factory_confined() {
	publish_setup
	hp=$(free_port)
	run_isd exec --pid host --network none -p "$hp:8000" -- "$SPY" -c '
import os
def status(p):
    return dict(l.rstrip("\n").split(":\t", 1) for l in open("/proc/%s/status" % p) if ":\t" in l)
def cmdline(p):
    return open("/proc/%s/cmdline" % p, "rb").read()
chain, p = [], os.getpid()
while p > 1:
    p = int(status(p)["PPid"])
    chain.append(p)
mine = cmdline(chain[0])            # init: isd cloned, not executed
isd = [q for q in chain if cmdline(q) == mine][-1]
import time
# isd starts the factory with its relay, after this payload'"'"'s execve
for attempt in range(100):
    found = []
    for q in os.listdir("/proc"):
        if not q.isdigit() or int(q) in chain:
            continue
        try:
            s = status(q)
            if int(s["PPid"]) == isd and cmdline(q) == mine:
                found.append((q, s))
        except OSError:
            continue
    if found:
        break
    time.sleep(0.05)
for q, s in found:
    print("caps", s["CapEff"], s["CapPrm"])
    try:
        open("/proc/%s/environ" % q).read()
        print("environ readable")
    except PermissionError:
        print("environ refused")
print("factories", len(found))'
	expect_rc 0 "$err"
	expect_contains "$out" "factories 1" "the payload sees the factory under --pid host"
	expect_contains "$out" "caps 0000000000000000 0000000000000000" "the factory holds no capability"
	expect_contains "$out" "environ refused" "the factory cannot be read (not dumpable)"
}
