#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A static https server for isd's tests, on 127.0.0.1 only, with a
# throw-away certificate: serves DIR, writes its port to PORTFILE and each
# request path to LOGFILE.  Stops by itself after ten minutes.
#   https-server.py DIR CERT KEY PORTFILE LOGFILE
import functools, http.server, os, ssl, sys, time

root, cert, key, portfile, logfile = sys.argv[1:6]


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        with open(logfile, "a") as f:
            f.write(self.path + "\n")


server = http.server.HTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=root))
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
with open(portfile + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(portfile + ".tmp", portfile)
server.timeout = 1
deadline = time.time() + 600
while time.time() < deadline:
    server.handle_request()
