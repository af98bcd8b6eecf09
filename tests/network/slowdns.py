#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""slowdns.py READYFILE LOGFILE: a name server on 127.0.0.1:53 (UDP and
TCP) that never answers, so that a host-side lookup stalls for as long as
the test wants.  Run it only in a network namespace the test made (it
brings that namespace's lo up); every query name goes to LOGFILE.  Stops
on SIGTERM or by itself after 120 s."""
import fcntl
import os
import select
import signal
import socket
import struct
import sys
import threading

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def lo_up():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ifr = struct.pack("16sH14x", b"lo", 0)
    flags = struct.unpack("16sH14x", fcntl.ioctl(s, SIOCGIFFLAGS, ifr))[1]
    fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))
    s.close()


def qname(msg):
    labels, p = [], 12
    while p < len(msg) and msg[p]:
        labels.append(msg[p + 1 : p + 1 + msg[p]].decode(errors="replace"))
        p += 1 + msg[p]
    return ".".join(labels)


def main():
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    t = threading.Timer(120, lambda: os._exit(0))
    t.daemon = True
    t.start()
    lo_up()
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 53))
    l = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("127.0.0.1", 53))
    l.listen(16)
    log = open(sys.argv[2], "a", buffering=1)
    with open(sys.argv[1], "w") as f:
        f.write("ready\n")
    held = []
    while True:
        r, _, _ = select.select([u, l] + held, [], [])
        for s in r:
            if s is u:
                msg, _ = u.recvfrom(4096)
                log.write(qname(msg) + "\n")
            elif s is l:
                held.append(l.accept()[0])
            else:
                msg = s.recv(4096)
                if not msg:
                    held.remove(s)
                    s.close()
                elif len(msg) > 14:
                    log.write(qname(msg[2:]) + "\n")


if __name__ == "__main__":
    main()
