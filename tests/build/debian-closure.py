#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# debian-closure.py PKG...: prints, one a line, the files of the installed
# Debian packages PKG and of everything they depend on (Depends and
# Pre-Depends, recursively; of alternatives and virtual packages the
# installed ones), as dpkg lists them.  The integration tests make an image
# from this machine's own packages with it: no mirror, no network.
import subprocess
import sys


def installed():
    """name -> (deps, provides) of every installed package."""
    out = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package}\t${db:Status-Abbrev}\t${Pre-Depends}, ${Depends}\t${Provides}\n"],
        capture_output=True, text=True, check=True).stdout
    pkgs, provides = {}, {}
    for line in out.splitlines():
        name, status, deps, prov = (line.split("\t") + ["", "", ""])[:4]
        if not status.startswith("ii"):
            continue
        pkgs[name] = deps
        for p in prov.split(","):
            p = p.strip().split(" ")[0].split(":")[0]
            if p:
                provides.setdefault(p, []).append(name)
    return pkgs, provides


def main():
    pkgs, provides = installed()
    todo, seen = list(sys.argv[1:]), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in pkgs:
            sys.exit("debian-closure: %s is not installed" % name)
        seen.add(name)
        for dep in pkgs[name].split(","):
            dep = dep.strip()
            if not dep:
                continue
            for alt in dep.split("|"):
                a = alt.strip().split(" ")[0].split(":")[0]
                if a in pkgs:
                    todo.append(a)
                    break
                if a in provides:
                    todo.append(provides[a][0])
                    break
            else:
                sys.exit("debian-closure: nothing installed satisfies %s (for %s)" % (dep, name))
    files = subprocess.run(["dpkg-query", "-L"] + sorted(seen), capture_output=True, text=True, check=True).stdout
    for f in files.splitlines():
        if f.startswith("/") and f != "/.":
            print(f)


main()
