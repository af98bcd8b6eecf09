#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""dnsquery.py NAME [udp|tcp]: ask 127.0.0.1:53 for NAME's A record.
Prints "A <address>", "NXDOMAIN", "NOERROR-EMPTY" or "RCODE <n>"; the
sandbox's DNS stub is the only server it ever talks to."""
import socket
import struct
import sys


def query(name, proto):
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    q += b"\0" + struct.pack(">HH", 1, 1)
    if proto == "tcp":
        s = socket.create_connection(("127.0.0.1", 53), timeout=5)
        s.sendall(struct.pack(">H", len(q)) + q)
        data = b""
        while len(data) < 2 or len(data) < 2 + struct.unpack(">H", data[:2])[0]:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        r = data[2:]
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(5)
        s.sendto(q, ("127.0.0.1", 53))
        r, _ = s.recvfrom(4096)
    rcode = r[3] & 0x0F
    ancount = struct.unpack(">H", r[6:8])[0]
    if rcode == 3:
        return "NXDOMAIN"
    if rcode != 0:
        return "RCODE %d" % rcode
    if ancount == 0:
        return "NOERROR-EMPTY"
    return "A " + socket.inet_ntoa(r[-4:])


if __name__ == "__main__":
    print(query(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "udp"))
