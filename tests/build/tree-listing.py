#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# tree-listing.py [--isd-unshare] ROOT: an mtree-like listing of the tree
# ROOT, one line a path in name order: path, type, uid, gid, mode (with
# setuid/setgid/sticky), link count of regular files, symlink target or
# sha256 of regular files, device numbers.  Timestamps are left out.
#
# --isd-unshare: ROOT is an isd image tree built by an unprivileged caller
# (inside 1000 = the caller, 0-999 and 1001- = the subordinate range) and
# this runs in `buildah unshare` (0 = the caller, 1-65536 = the subordinate
# range): the ids printed are translated back to the image's own.
import hashlib
import os
import stat
import sys


def image_id(n, isd_unshare):
    if not isd_unshare:
        return n
    if n == 0:
        return 1000
    if n <= 1000:
        return n - 1
    return n


def main():
    args = sys.argv[1:]
    isd_unshare = bool(args) and args[0] == "--isd-unshare"
    if isd_unshare:
        args = args[1:]
    root = args[0]
    paths = []
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            paths.append(os.path.join(d, n))
    for p in sorted(paths):
        st = os.lstat(p)
        m = st.st_mode
        rel = "/" + os.path.relpath(p, root)
        extra = ""
        if stat.S_ISREG(m):
            kind = "file"
            h = hashlib.sha256()
            with open(p, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 16), b""):
                    h.update(chunk)
            extra = "links=%d sha256=%s" % (st.st_nlink, h.hexdigest())
        elif stat.S_ISDIR(m):
            kind = "dir"
        elif stat.S_ISLNK(m):
            kind = "link"
            extra = "-> " + os.readlink(p)
        elif stat.S_ISCHR(m) or stat.S_ISBLK(m):
            kind = "char" if stat.S_ISCHR(m) else "block"
            extra = "dev=%d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
        elif stat.S_ISFIFO(m):
            kind = "fifo"
        else:
            kind = "socket"
        print("%s %s uid=%d gid=%d mode=%04o %s" % (
            rel, kind, image_id(st.st_uid, isd_unshare), image_id(st.st_gid, isd_unshare),
            stat.S_IMODE(m), extra))


main()
