#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Test servers on the host's loopback for tests/integration/network.sh.

serve.py http DIR PORTFILE            HTTP on 127.0.0.1:<free port>
serve.py https DIR PORTFILE CERT KEY  the same over TLS
serve.py unix-echo PATH               a unix socket that echoes one line
serve.py sink PORTFILE GOFILE RESULT  TCP that reads nothing until GOFILE is
                                      there, then appends each connection's
                                      byte count to RESULT

GET /host answers with the Host field the server received.

SERVE_ADDR and SERVE_PORT override the address and the port (a test's own
network namespace only).
The chosen port goes to PORTFILE once the server listens.  Servers stop on
SIGTERM, and by themselves after --lifetime seconds (default 300) so that a
crashed test never leaves one behind.
"""
import http.server
import os
import signal
import socket
import socketserver
import ssl
import sys
import threading


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        # /host: the Host fields the server received, to see what the
        # relay passed on
        if self.path != "/host":
            return super().do_GET()
        body = ("Host: %s\n" % ", ".join(self.headers.get_all("Host") or [])).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


def lifetime():
    t = threading.Timer(300, lambda: os._exit(0))
    t.daemon = True
    t.start()


def serve_http(directory, portfile, cert=None, key=None):
    os.chdir(directory)
    srv = Server((os.environ.get("SERVE_ADDR", "127.0.0.1"), int(os.environ.get("SERVE_PORT", "0"))), Handler)
    if cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


def serve_unix_echo(path):
    class Echo(socketserver.StreamRequestHandler):
        def handle(self):
            self.wfile.write(b"echo: " + self.rfile.readline())

    class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True

    srv = UnixServer(path, Echo)
    srv.serve_forever()


def serve_sink(portfile, gofile, resultfile):
    """Accepts connections and reads nothing until GOFILE exists; then
    reads each to its end and appends its byte count to RESULTFILE."""
    import select
    import time

    l = socket.socket()
    l.bind((os.environ.get("SERVE_ADDR", "127.0.0.1"), 0))
    l.listen(1024)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(l.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    conns = {}
    while True:
        reading = os.path.exists(gofile)
        r, _, _ = select.select([l] + (list(conns) if reading else []), [], [], 0.05)
        for s in r:
            if s is l:
                conns[l.accept()[0]] = 0
                continue
            b = s.recv(1 << 16)
            if b:
                conns[s] += len(b)
                continue
            with open(resultfile, "a") as f:
                f.write("%d\n" % conns.pop(s))
            s.close()


def main():
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    lifetime()
    kind = sys.argv[1]
    if kind == "http":
        serve_http(sys.argv[2], sys.argv[3])
    elif kind == "https":
        serve_http(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    elif kind == "sink":
        serve_sink(sys.argv[2], sys.argv[3], sys.argv[4])
    elif kind == "unix-echo":
        serve_unix_echo(sys.argv[2])
    else:
        sys.exit("unknown server kind " + kind)


if __name__ == "__main__":
    main()
