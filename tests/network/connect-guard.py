# SPDX-License-Identifier: LGPL-2.1-or-later
# The landlock tier's netless connect guard (src/connect-guard.c), attacked.
#   connect-guard.py decoy DIR   outside the sandbox: once DIR/relay.port
#       names the relay's port, listens on 127.0.0.2 at that same port
#       (Landlock rules the port, not the address) and appends what each
#       connection sends to DIR/decoy.log; DIR/decoy.ready when listening.
#   connect-guard.py attack DIR [ALLOWED_PORT]   inside: writes the relay's
#       port, waits for the decoy, then tries to reach it every way it can
#       ("reached NAME" or "refused NAME ERRNO"), and the allowed server
#       through the relay ("relay: TEXT").
import ctypes
import errno
import mmap
import os
import platform
import select
import signal
import socket
import sys
import time
import urllib.request

DECOY = "127.0.0.2"


def decoy(d):
    while not os.path.exists(d + "/relay.port") or not open(d + "/relay.port").read():
        time.sleep(0.05)
    port = int(open(d + "/relay.port").read())
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((DECOY, port))
    s.listen(64)
    open(d + "/decoy.ready", "w").close()
    while True:
        c, _ = s.accept()
        c.settimeout(2)
        try:
            data = c.recv(100)
        except OSError:
            data = b"(nothing)"
        with open(d + "/decoy.log", "ab") as f:
            f.write(data + b"\n")
        c.close()


def attack(d, allowed):
    relay = int(os.environ["http_proxy"].rstrip("/").rsplit(":", 1)[1])
    open(d + "/relay.port", "w").write(str(relay))
    while not os.path.exists(d + "/decoy.ready"):
        time.sleep(0.05)

    def t(name, f):
        try:
            f()
            print("reached", name)
        except OSError as e:
            print("refused", name, e.errno)
        sys.stdout.flush()

    def blocking(fam=socket.AF_INET, host=DECOY):
        s = socket.socket(fam)
        s.settimeout(3)
        s.connect((host, relay))
        s.sendall(b"connect")
        s.close()

    def nonblocking(host=DECOY, what=b"nonblock"):
        s = socket.socket()
        s.setblocking(False)
        r = s.connect_ex((host, relay))
        if r == errno.EINPROGRESS:
            select.select([], [s], [], 3)
            r = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if r:
            raise OSError(r, os.strerror(r))
        s.setblocking(True)
        s.sendall(what)
        s.close()

    def tfo_connect():
        # TCP_FASTOPEN_CONNECT: connect(2) only notes the address, the
        # first send makes the connection
        s = socket.socket()
        s.setsockopt(socket.IPPROTO_TCP, 30, 1)
        s.connect((DECOY, relay))
        s.sendall(b"tfo-connect")
        s.close()

    def sendto():
        s = socket.socket()
        s.sendto(b"sendto", socket.MSG_FASTOPEN, (DECOY, relay))
        s.close()

    def sendto_plain():
        s = socket.socket()
        s.sendto(b"sendto-plain", 0, (DECOY, relay))
        s.close()

    def disconnect_then():
        s = socket.socket()
        s.connect(("127.0.0.1", relay))
        libc = ctypes.CDLL(None, use_errno=True)
        unspec = ctypes.create_string_buffer(16)
        if libc.connect(s.fileno(), unspec, 16) != 0:
            raise OSError(ctypes.get_errno(), "AF_UNSPEC")
        s.connect((DECOY, relay))
        s.sendall(b"after-unspec")
        s.close()

    def sockaddr_in(host):
        b = bytearray(16)
        b[0:2] = socket.AF_INET.to_bytes(2, sys.byteorder)
        b[2:4] = relay.to_bytes(2, "big")
        b[4:8] = socket.inet_aton(host)
        return bytes(b)

    def twin(files, loop):
        # loop() runs in a second process until killed: truly at once with
        # this one (threads of python take turns), sharing the descriptor
        # table when files (clone CLONE_FILES, as threads do)
        libc = ctypes.CDLL(None, use_errno=True)
        rp, wp = os.pipe()
        nr = {"x86_64": 56, "aarch64": 220}[platform.machine()]
        pid = libc.syscall(nr, (0x400 if files else 0) | signal.SIGCHLD, 0, 0, 0, 0)
        if pid == 0:
            os.write(wp, b"x")
            while True:
                loop()
        os.read(rp, 1)
        return pid

    def race(name, files, setup, loop, addr, fd):
        libc = ctypes.CDLL(None, use_errno=True)
        pid = twin(files, loop)
        won = 0
        end = time.monotonic() + 1
        try:
            while time.monotonic() < end:
                s = setup()
                if libc.connect(fd(s), addr, 16) == 0:
                    won += 1
                    try:
                        os.write(fd(s), name.encode())
                    except OSError:
                        pass
                if s is not None:
                    s.close()
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        print("race", name, "done")

    def flip_address(name, good):
        # the address rewritten between isd's read and the kernel's (a
        # guard that checked and let the kernel go on loses): from the
        # relay's, or from a unix one, which the kernel may be let to do
        m = mmap.mmap(-1, 16, mmap.MAP_SHARED)
        bad = sockaddr_in(DECOY)

        def loop():
            m[0:16] = bad
            m[0:16] = good
        addr = ctypes.c_char.from_buffer(m)
        race(name, False, socket.socket, loop, ctypes.byref(addr), lambda s: s.fileno())

    def swap_socket():
        # the descriptor swapped between a unix socket (which the guard
        # lets the kernel connect) and an IP one
        u = socket.socket(socket.AF_UNIX)
        fd = os.dup(u.fileno())

        def loop():
            i = socket.socket()
            os.dup2(i.fileno(), fd)
            i.close()
            os.dup2(u.fileno(), fd)
        addr = ctypes.create_string_buffer(sockaddr_in(DECOY), 16)
        race("swap", True, lambda: None, loop, addr, lambda s: fd)

    t("connect", blocking)
    t("connect6", lambda: blocking(socket.AF_INET6, "::ffff:" + DECOY))
    t("nonblock", nonblocking)
    t("tfo-connect", tfo_connect)
    t("sendto", sendto)
    t("sendto-plain", sendto_plain)
    t("after-unspec", disconnect_then)
    flip_address("flip", sockaddr_in("127.0.0.1"))
    flip_address("flip-family", socket.AF_UNIX.to_bytes(2, sys.byteorder) + b"/nonexistent\0\0")
    swap_socket()
    # what must keep working: the relay, blocking, non-blocking, IPv6
    t("relay-nonblock", lambda: nonblocking("127.0.0.1", b""))
    t("relay6", lambda: blocking(socket.AF_INET6, "::ffff:127.0.0.1"))
    if allowed:
        for v in ("no_proxy", "NO_PROXY"):
            os.environ.pop(v, None)
        o = urllib.request.build_opener(urllib.request.ProxyHandler({"http": os.environ["http_proxy"]}))
        try:
            print("relay:", o.open("http://127.0.0.1:%s/hello.txt" % allowed, timeout=5).read().decode().strip())
        except Exception as e:
            print("relay: failed:", e)


if sys.argv[1] == "decoy":
    decoy(sys.argv[2])
else:
    attack(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
