#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""dnsflood.py SYNCDIR MB: inside the sandbox, floods the DNS stub over TCP
(127.0.0.1:53) with MB MiB of queries and never reads an answer.  Steps are
paced through files in SYNCDIR so that the test can measure isd between
them: writes "ready", waits for "go", floods, writes "done" with how the
flood ended (sent: MiB, then reset, timeout or all), waits for "end"."""
import os
import socket
import struct
import sys
import time


def wait_for(path):
    for _ in range(1200):
        if os.path.exists(path):
            return
        time.sleep(0.05)
    sys.exit("no " + path)


def main():
    sync, mb = sys.argv[1], int(sys.argv[2])
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0) + b"\x03web\x04test\x00" + struct.pack(">HH", 1, 1)
    block = (struct.pack(">H", len(q)) + q) * 4096
    open(os.path.join(sync, "ready"), "w").close()
    wait_for(os.path.join(sync, "go"))
    s = socket.create_connection(("127.0.0.1", 53), timeout=5)
    # past isd's DNS idle rule, short of the 30 s head deadline of old
    s.settimeout(25)
    sent, how = 0, "all"
    try:
        while sent < mb << 20:
            s.sendall(block)
            sent += len(block)
    except socket.timeout:
        how = "timeout"
    except OSError:
        how = "reset"
    with open(os.path.join(sync, "done.tmp"), "w") as f:
        f.write("sent %d MiB, %s\n" % (sent >> 20, how))
    os.rename(os.path.join(sync, "done.tmp"), os.path.join(sync, "done"))
    wait_for(os.path.join(sync, "end"))


if __name__ == "__main__":
    main()
