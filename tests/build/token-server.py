#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A registry token server for isd's tests, on loopback only: GET /token
# answers {"token": JWT} granting the requested scopes, signed RS256 with a
# throw-away key whose certificate the registry trusts (auth: token:
# rootcertbundle).  Signing goes through the openssl command, so nothing
# beyond python3 and openssl is needed.  With USER:PASSWORD, a token needs
# those credentials (Basic), as Docker Hub's and quay.io's do for private
# images; the log says which user asked ("-" for none), never a password.
#   token-server.py PORTFILE KEY CERT ISSUER LOGFILE [USER:PASSWORD]
import base64, http.server, json, subprocess, sys, time, urllib.parse

portfile, key, cert, issuer, logfile = sys.argv[1:6]
creds = sys.argv[6] if len(sys.argv) > 6 else None


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def cert_der():
    pem = open(cert).read()
    body = pem.split("-----BEGIN CERTIFICATE-----")[1].split("-----END CERTIFICATE-----")[0]
    return "".join(body.split())  # x5c: standard base64 of the DER


def sign(payload):
    header = {"alg": "RS256", "typ": "JWT", "x5c": [cert_der()]}
    signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(payload).encode())
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key], input=signing_input.encode(),
                         capture_output=True, check=True).stdout
    return signing_input + "." + b64(sig)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        given = None
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            try:
                given = base64.b64decode(auth[6:]).decode()
            except ValueError:
                given = ""
        with open(logfile, "a") as f:
            f.write("%s %s user=%s\n" % (url.path, url.query, given.split(":")[0] if given else "-"))
        if url.path != "/token":
            self.send_error(404)
            return
        if creds and given != creds:
            body = b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}'
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="isd-test-token"')
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        access = []
        for scope in q.get("scope", []):
            parts = scope.split(":")
            if len(parts) == 3:
                access.append({"type": parts[0], "name": parts[1], "actions": parts[2].split(",")})
        now = int(time.time())
        token = sign({"iss": issuer, "sub": "isd-test", "aud": q.get("service", [""])[0], "exp": now + 600,
                      "nbf": now - 10, "iat": now, "jti": str(now), "access": access})
        body = json.dumps({"token": token, "expires_in": 600}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
server.timeout = 1
deadline = time.time() + 600  # never outlives a test run
while time.time() < deadline:
    server.handle_request()
