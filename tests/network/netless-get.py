# SPDX-License-Identifier: LGPL-2.1-or-later
# Inside a netless sandbox: GET /hello.txt from an allowed and a denied
# server on 127.0.0.1 through isd's relay ($http_proxy), and the allowed
# one directly.  netless-get.py ALLOWED_PORT DENIED_PORT prints
# "allowed: TEXT", "denied: TEXT", "direct: TEXT", where TEXT is the body,
# "http CODE" or "failed: REASON".
import os
import sys
import urllib.error
import urllib.request

# The loopback is in NO_PROXY, for the forwards of the full tier.
for v in ("no_proxy", "NO_PROXY"):
    os.environ.pop(v, None)


def get(port, proxy=True):
    h = {"http": os.environ["http_proxy"]} if proxy else {}
    o = urllib.request.build_opener(urllib.request.ProxyHandler(h))
    try:
        return o.open("http://127.0.0.1:%s/hello.txt" % port, timeout=5).read().decode().strip()
    except urllib.error.HTTPError as e:
        return "http %d" % e.code
    except Exception as e:
        return "failed: %s" % e


print("allowed:", get(sys.argv[1]))
print("denied:", get(sys.argv[2]))
print("direct:", get(sys.argv[1], proxy=False))
