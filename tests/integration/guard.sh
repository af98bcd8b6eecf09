# SPDX-License-Identifier: LGPL-2.1-or-later
# isd's own directories (profiles, seccomp profiles, the filter cache,
# images, sessions) cannot be changed from inside a sandbox, whatever
# writable bind contains them (src/guard.c).

# A home in $T with isd's directories where XDG's defaults put them, and a
# runtime directory for the seccomp cache.
guard_home() {
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	h=$T/home
	mkdir -p "$h/proj" "$h/.config/isd/profiles"
	mkdir -m 700 "$T/run"
	unset XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME
	export HOME=$h XDG_RUNTIME_DIR=$T/run
}

# What a payload told to weaken the next sandbox tries: forge every cached
# filter into allow-all (the checksum has no secret), plant a profile and
# a seccomp profile named "default", in place, through a hard link, and
# after renaming each directory on the way aside.  Prints WROTE PATH for
# each write that reached the file a later isd reads.
write_forger() {
	cat >"$T/forge.py" <<'EOF'
import os, struct, sys
home, run = sys.argv[1], sys.argv[-1]
def fnv(h, data):
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xffffffffffffffff
    return h
def forge(path):
    data = open(path, "rb").read()
    magic, key_len, n, flags, res, _ = struct.unpack("<8sIIIIQ", data[:32])
    key = data[32:32 + key_len]
    insns = struct.pack("<HBBI", 6, 0, 0, 0x7fff0000)  # RET ALLOW
    hdr = struct.pack("<8sIIIIQ", magic, key_len, 1, flags, res, 0)
    s = fnv(fnv(fnv(0xcbf29ce484222325, hdr), key), insns)
    return hdr[:24] + struct.pack("<Q", s) + key + insns
if sys.argv[1] == "--one":  # forge SRC into DST on the host, by hand
    os.makedirs(os.path.dirname(sys.argv[3]), exist_ok=True)
    open(sys.argv[3], "wb").write(forge(sys.argv[2]))
    os.chmod(sys.argv[3], 0o600)
    sys.exit(0)
allow_all = b'{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": []}'
targets = {}
for base in (home, run):
    for d, _, files in os.walk(base):
        for f in files:
            if f.endswith(".bpf"):
                targets[os.path.join(d, f)] = forge(os.path.join(d, f))
targets[home + "/.config/isd/profiles/evil.conf"] = b"--security-opt seccomp=unconfined\n"
targets[home + "/.config/isd/seccomp-profiles/default.json"] = allow_all
targets[home + "/.local/state/isd/sessions/planted"] = b"x"
def write(path, data):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        print("WROTE", path)
    except OSError as e:
        print("refused", path, e.strerror)
for path, data in targets.items():
    write(path, data)
    if os.path.exists(path):  # a hard link elsewhere in the writable tree
        try:
            os.link(path, home + "/link")
            write(home + "/link", data)
            os.unlink(home + "/link")
        except OSError as e:
            print("refused link", path, e.strerror)
    base = home if path.startswith(home + "/") else run
    d = os.path.dirname(path)
    while len(d) > len(base):  # rename each directory on the way aside
        try:
            os.rename(d, d + ".moved")
            print("RENAMED", d)
            write(path, data)
        except OSError as e:
            print("refused rename", d, e.strerror)
        d = os.path.dirname(d)
EOF
}

host_state() {
	(cd "$h" && find . "$T/run" -path ./proj -prune -o -print | sort
	 find "$T/run" "$h/.config" "$h/.cache" "$h/.local" -type f -exec sha256sum {} + 2>/dev/null | sort)
}

test_guard_home_rw_cannot_change_next_sandbox() {
	guard_home
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	write_forger
	cd "$h/proj" || fail "cd"
	# the first creates isd's missing directories to cover them
	run_isd exec --profile none -v "$h:$h" -v "$T/run:$T/run" -- true
	expect_rc 0 "first sandbox"
	[ -n "$(find "$h" "$T/run" -name '*.bpf')" ] || fail "no cached filter to attack"
	before=$(host_state)
	run_isd exec --profile none -v "$h:$h" -v "$T/run:$T/run" -v "$T/forge.py:/forge.py:ro" -- python3 /forge.py "$h" "$T/run"
	expect_rc 0 "the forger ran"
	expect_not_contains "$out" "WROTE" "a write to isd's directories"
	expect_not_contains "$out" "RENAMED" "renaming a directory on the way to isd's"
	expect_contains "$out" "refused link"
	expect_eq "$(host_state)" "$before" "isd's directories on the host"
	# the next sandboxes still get the default filter and no planted profile
	for p in none agent; do
		run_isd exec --profile $p --workspace "$h/proj:rw" -- unshare -U true
		expect_rc 1 "unshare -U under --profile $p after the attack (stderr: $err)"
		expect_contains "$err" "Operation not permitted"
	done
	run_isd profile list
	expect_not_contains "$out" "evil"
}

# The same, with isd's directories moved by XDG variables into a writable
# bind that is not $HOME.
test_guard_xdg_dirs() {
	guard_home
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	write_forger
	mkdir -p "$T/x/config/isd/profiles"
	export XDG_CONFIG_HOME=$T/x/config XDG_CACHE_HOME=$T/x/cache XDG_STATE_HOME=$T/x/state XDG_DATA_HOME=$T/x/data
	cd "$h/proj" || fail "cd"
	run_isd exec --profile none -v "$T/x:$T/x" -- sh -c \
		"for d in config state data; do mv $T/x/\$d $T/x/\$d.moved && echo RENAMED \$d; done; \
		 mkdir -p $T/x/config/isd/seccomp-profiles && echo WROTE config"
	expect_rc 1
	expect_not_contains "$out" "WROTE"
	expect_not_contains "$out" "RENAMED"
	[ ! -e "$T/x/config/isd/seccomp-profiles" ] || fail "a seccomp profile directory was planted"
	[ -d "$T/x/state/isd" ] && [ -d "$T/x/data/isd" ] || fail "isd's directories were not created to be covered"
	run_isd exec --profile none --print-spec -v "$T/x:$T/x" -- true
	printf '%s' "$out" | python3 -c '
import json, sys
t = sys.argv[1]
m = {x["destination"]: x for x in json.load(sys.stdin)["mounts"]}
c = m[t + "/x/config/isd"]
assert c["readonly"] and c["onto_itself"] and c["source"] == t + "/x/config/isd", c
assert c["origin"].startswith("isd guard: isd\x27s configuration"), c
for d in ("config", "state", "cache", "data"):
    p = m[t + "/x/" + d]
    assert not p["readonly"] and p["onto_itself"] and "cannot rename" in p["origin"], p
    assert m[t + "/x/" + d + "/isd"]["readonly"]
' "$T" || fail "print-spec of the guard: $out"
}

# A filter cache forged on the host where earlier versions kept it (what a
# sandbox with -v $HOME:$HOME could write) is not loaded.
test_guard_forged_cache_not_loaded() {
	guard_home
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	write_forger
	cd "$h/proj" || fail "cd"
	run_isd exec --profile none -- true
	expect_rc 0
	f=$(find "$h" "$T/run" -name '*.bpf' | head -n1)
	[ -n "$f" ] || fail "no cached filter"
	python3 "$T/forge.py" --one "$f" "$T/forged" && mkdir -p "$h/.cache/isd/seccomp" &&
		mv "$T/forged" "$h/.cache/isd/seccomp/${f##*/}" || fail "forging"
	rm -rf "$T/run/isd"
	for run in "$T/run" ""; do
		XDG_RUNTIME_DIR=$run run_isd exec --profile none -- unshare -U true
		expect_rc 1 "unshare -U with a forged cache in ~/.cache (XDG_RUNTIME_DIR=$run)"
		expect_contains "$err" "Operation not permitted"
	done
}

# Without a runtime directory the filter is cached in ~/.cache/isd/bpf
# (seccomp-bpf.c): reused, out of reach of a sandbox with -v $HOME:$HOME,
# and not loaded from a directory that is a link or writable by others.
test_guard_cache_home_fallback() {
	guard_home
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	unset XDG_RUNTIME_DIR
	write_forger
	cd "$h/proj" || fail "cd"
	run_isd exec --profile none -- true
	expect_rc 0
	f=$(find "$h/.cache/isd/bpf" -name '*.bpf' | head -n1)
	[ -n "$f" ] || fail "no filter cached in ~/.cache/isd/bpf"
	before=$(stat -c %Y.%i "$f")
	run_isd exec --profile none -- true
	expect_rc 0
	expect_eq "$(stat -c %Y.%i "$f")" "$before" "cache reused, not rewritten"
	run_isd exec --profile none -v "$h:$h" -v "$T/forge.py:/forge.py:ro" -- python3 /forge.py "$h" "$T/run"
	expect_rc 0 "the forger ran"
	expect_not_contains "$out" "WROTE" "a write to isd's directories"
	python3 "$T/forge.py" --one "$f" "$T/forged" && mv "$T/forged" "$f" || fail "forging"
	chmod g+w "$h/.cache/isd/bpf"
	run_isd exec --profile none -- unshare -U true
	expect_rc 1 "unshare -U with a forged filter in a group-writable directory"
	expect_contains "$err" "Operation not permitted"
	chmod g-w "$h/.cache/isd/bpf"
	python3 "$T/forge.py" --one "$f" "$T/forged" && mv "$T/forged" "$f" || fail "forging"
	mv "$h/.cache/isd/bpf" "$h/.cache/isd/elsewhere" && ln -s elsewhere "$h/.cache/isd/bpf"
	run_isd exec --profile none -- unshare -U true
	expect_rc 1 "unshare -U with a forged filter behind a link"
	expect_contains "$err" "Operation not permitted"
}

# Writable binds of isd's directories themselves, and symlinks the payload
# could re-point, are refused before anything starts.
test_guard_refusals() {
	guard_home
	cd "$h/proj" || fail "cd"
	run_isd exec --profile none -v "$h/.config/isd:/x" -- true
	expect_rc 125
	expect_contains "$err" "the writable mount of $h/.config/isd: that is isd's configuration"
	expect_contains "$err" "-v $h/.config/isd:/x:ro"
	run_isd exec --profile none -v "$h/.config/isd/profiles:/x" -- true
	expect_rc 125
	run_isd exec --profile none -v "$h/.config/isd:/x:ro" -- true
	expect_rc 0 "read-only is fine"
	mkdir -p "$h/dots/config"
	mv "$h/.config/isd" "$h/dots/config/isd"
	rmdir "$h/.config"
	ln -s dots/config "$h/.config"
	run_isd exec --profile none -v "$h:$h" -- true
	expect_rc 125 "a symlink to isd's configuration inside the bind"
	expect_contains "$err" "through the symlink $h/.config"
	run_isd exec --profile none -v "$h/dots:$h/dots" -- true
	expect_rc 0 "the symlink itself is out of reach"
}

# A cow workspace that holds isd's configuration (a dotfiles repository
# at ~/dots with XDG_CONFIG_HOME in it): nothing planted there reaches the
# session, so isd apply cannot carry it to the host.
test_guard_cow_workspace() {
	guard_home
	mkdir -p "$h/dots/config/isd/profiles"
	export XDG_CONFIG_HOME=$h/dots/config XDG_STATE_HOME=$T/state
	cd "$h/dots" || fail "cd"
	run_isd exec --profile none --workspace "$h/dots:cow" -- sh -c \
		"mv $h/dots/config $h/dots/moved && echo RENAMED; mv $h/dots/config/isd $h/dots/config/x && echo RENAMED; \
		 echo x >$h/dots/config/isd/profiles/evil.conf && echo WROTE; echo ok >$h/dots/file"
	expect_not_contains "$out" "RENAMED"
	expect_not_contains "$out" "WROTE"
	run_isd diff --stat
	expect_rc 0
	expect_contains "$out" "file"
	expect_not_contains "$out" "config"
	expect_not_contains "$out" "moved"
}
