# SPDX-License-Identifier: LGPL-2.1-or-later
# Seccomp profiles, seen from inside the sandbox.  SYSPROBE is the static
# helper tests/seccomp/sysprobe.c: it prints "NAME RESULT" per probe
# ("mount EPERM", "getpid OK").

: "${SYSPROBE:?SYSPROBE must point at the static tests/seccomp/sysprobe}"

# Hermetic: no user profile in ~/.config shadows the shipped ones, and each
# test starts with an empty cache.
seccomp_env() {
	export XDG_CONFIG_HOME="$T/config" XDG_CACHE_HOME="$T/cache" XDG_RUNTIME_DIR="$T/run"
}

# run_sysprobe PROFILE [PROBE...]
run_sysprobe() {
	seccomp_env
	_profile=$1
	shift
	run_isd exec -v "$SYSPROBE:/helper:ro" --security-opt "seccomp=$_profile" -- /helper "$@"
	expect_rc 0 "sysprobe under $_profile"
}

# probe_is NAME EXPECTED: the result the last run printed for NAME
probe_is() {
	_got=$(printf '%s\n' "$out" | sed -n "s/^$1 //p" | head -n1)
	[ "$_got" = "$2" ] || fail "$1: expected $2, got '${_got:-nothing}' (profile $_profile)"
}

probe_is_not() {
	_got=$(printf '%s\n' "$out" | sed -n "s/^$1 //p" | head -n1)
	[ -n "$_got" ] || fail "$1: no result"
	[ "$_got" != "$2" ] || fail "$1: must not be $2 (profile $_profile)"
}

test_seccomp_status() {
	run_sysprobe default seccomp
	probe_is seccomp 2
	run_sysprobe unconfined seccomp
	probe_is seccomp 0
	# no --security-opt: the default profile
	run_isd exec -v "$SYSPROBE:/helper:ro" -- /helper seccomp
	probe_is seccomp 2
}

test_seccomp_default_denies_families() {
	run_sysprobe default
	for p in mount umount2 fsopen fsconfig fsmount fspick move_mount open_tree mount_setattr \
		pivot_root chroot setns keyctl add_key request_key bpf perf_event_open userfaultfd \
		kexec_load kexec_file_load init_module finit_module delete_module open_by_handle_at \
		name_to_handle_at swapon swapoff reboot \
		clone_newuser clone_newns clone_newnet clone_newpid \
		unshare_newuser unshare_newns unshare_newnet unshare_newpid unshare_newipc \
		unshare_newuts unshare_newcgroup unshare_newtime; do
		probe_is "$p" EPERM
	done
	# ENOSYS where it makes programs fall back
	probe_is clone3 ENOSYS
	probe_is io_uring_setup ENOSYS
	probe_is syscall_1000 ENOSYS
	probe_is socket_vsock EAFNOSUPPORT
	# what must keep working
	for p in getpid clone unshare_fs socket_unix ioctl_fionread; do
		probe_is "$p" OK
	done
}

# The same probes without a filter answer differently: the EPERMs above
# come from the filter, not from the missing capabilities.
test_seccomp_filter_is_the_cause() {
	run_sysprobe unconfined mount umount2 setns keyctl add_key request_key name_to_handle_at \
		userfaultfd clone3 io_uring_setup socket_vsock
	for p in mount umount2 setns keyctl add_key request_key name_to_handle_at userfaultfd; do
		probe_is_not "$p" EPERM
	done
	probe_is clone3 OK
	probe_is_not io_uring_setup ENOSYS
	probe_is_not socket_vsock EAFNOSUPPORT
}

test_seccomp_tiocsti() {
	run_sysprobe default tiocsti tiocsti_hi tiocsti_hi2 tioclinux ioctl_fionread
	if printf '%s\n' "$out" | grep -q '^tiocsti ENOENT'; then
		skip "no /dev/ptmx in the sandbox"
	fi
	# CVE-2019-10063: high bits of the request must not slip past
	probe_is tiocsti EPERM
	probe_is tiocsti_hi EPERM
	probe_is tiocsti_hi2 EPERM
	probe_is tioclinux EPERM
	probe_is ioctl_fionread OK
	# and without the filter the injection really works on this kernel
	# (dev.tty.legacy_tiocsti=1), so the test above means something
	run_sysprobe unconfined tiocsti
	case "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" in
	0) ;;
	*) probe_is tiocsti OK ;;
	esac
}

# Whether this kernel runs the 32-bit entry at all: without IA32
# emulation (or with it off at boot, ia32_emulation=0, as on some
# virtual machines' kernels) int 0x80 faults before any filter sees it.
host_has_int80() {
	run_sysprobe unconfined int80_getpid
	case "$out" in
	*"int80_getpid CRASHED"*) return 1 ;;
	esac
	probe_is int80_getpid OK
}

# int80_getpid under a filter: EPERM; where the kernel has no 32-bit
# entry, the fault (as without the filter) is all that can be seen.
int80_refused() {
	if [ "$int80" = yes ]; then
		probe_is int80_getpid EPERM
	else
		probe_is int80_getpid 'CRASHED(11)'
	fi
}

test_seccomp_foreign_abis() {
	int80=no
	host_has_int80 && int80=yes
	run_sysprobe default int80_getpid x32_getpid
	int80_refused
	probe_is x32_getpid EPERM
}

test_seccomp_nested_profile() {
	int80=no
	host_has_int80 && int80=yes
	run_sysprobe nested
	probe_is seccomp 2
	probe_is clone3 OK
	probe_is_not setns EPERM
	probe_is_not mount EPERM
	for p in keyctl bpf userfaultfd tiocsti tiocsti_hi x32_getpid open_by_handle_at; do
		probe_is "$p" EPERM
	done
	int80_refused
	# a real nested sandbox; mapping root of a new user namespace needs
	# CAP_SETFCAP (Linux >= 5.12), which the payload does not have: run as 1000
	command -v bwrap >/dev/null || return 0
	run_isd exec -u 1000:1000 --security-opt seccomp=nested -- \
		bwrap --ro-bind / / --proc /proc --dev /dev --unshare-all sh -c 'echo nested-ok'
	expect_rc 0 "bwrap under nested"
	expect_eq "$out" nested-ok
	run_isd exec -u 1000:1000 --security-opt seccomp=default -- \
		bwrap --ro-bind / / --proc /proc --dev /dev --unshare-all true
	[ "$rc" -ne 0 ] || fail "bwrap must not start under the default profile"
}

test_seccomp_custom_profile_path() {
	seccomp_env
	cat >"$T/deny-getpid.json" <<-'EOF'
	{
		"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [
			{ "names": ["getpid"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13 }
		]
	}
	EOF
	run_isd exec -v "$SYSPROBE:/helper:ro" --security-opt "seccomp=$T/deny-getpid.json" -- /helper getpid seccomp
	expect_rc 0
	probe_is getpid EACCES
	probe_is seccomp 2
	# by name, from $XDG_CONFIG_HOME
	mkdir -p "$T/config/isd/seccomp-profiles"
	cp "$T/deny-getpid.json" "$T/config/isd/seccomp-profiles/mine.json"
	run_isd exec -v "$SYSPROBE:/helper:ro" --security-opt seccomp=mine -- /helper getpid
	probe_is getpid EACCES
}

test_seccomp_bad_profiles() {
	seccomp_env
	run_isd exec --security-opt seccomp=no-such-profile -- true
	expect_rc 125
	expect_contains "$err" 'seccomp profile "no-such-profile" not found'
	printf '{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["read"],"action":"SCMP_ACT_ALLOW","args":[{"index":0,"value":1,"op":"SCMP_CMP_FOO"}]}]}' >"$T/bad.json"
	run_isd exec --security-opt "seccomp=$T/bad.json" -- true
	expect_rc 125
	expect_contains "$err" "seccomp profile $T/bad.json: syscalls[0].args[0].op: unknown operator \"SCMP_CMP_FOO\""
	run_isd seccomp check "$T/bad.json"
	expect_rc 125
	expect_contains "$err" 'syscalls[0].args[0].op'
	printf '{"defaultAction":"SCMP_ACT_NOTIFY"}' >"$T/notify.json"
	run_isd seccomp check "$T/notify.json"
	expect_rc 125
	expect_contains "$err" "isd has none"
}

test_seccomp_check_docker_fixtures() {
	seccomp_env
	for f in default.json default-old-format.json example.json conditional_include.json; do
		run_isd seccomp check "$ISD_TEST_SRCDIR/tests/seccomp/docker/$f"
		expect_rc 0 "isd seccomp check $f"
		expect_contains "$out" "default action: ERRNO(EPERM)" "$f"
		run_isd seccomp check --json "$ISD_TEST_SRCDIR/tests/seccomp/docker/$f"
		expect_rc 0 "isd seccomp check --json $f"
		expect_contains "$out" '"valid":true' "$f"
	done
	# and a sandbox starts under Docker's own default profile
	run_isd exec -v "$SYSPROBE:/helper:ro" \
		--security-opt "seccomp=$ISD_TEST_SRCDIR/tests/seccomp/docker/default.json" -- /helper seccomp clone3 mount
	expect_rc 0
	probe_is seccomp 2
	probe_is clone3 ENOSYS
	probe_is mount EPERM
}

test_seccomp_check_shipped() {
	seccomp_env
	run_isd seccomp check default
	expect_rc 0
	expect_contains "$out" "default action: ERRNO(ENOSYS)"
	expect_contains "$out" "mount=ERRNO(EPERM)"
	expect_not_contains "$out" "warning:"
	run_isd seccomp check nested
	expect_rc 0
	expect_contains "$out" "mount=ALLOW"
	run_isd seccomp check --pfc default
	expect_rc 0
	expect_contains "$out" 'filter for syscall "mount"'
	run_isd seccomp list
	expect_rc 0
	expect_contains "$out" "default"
	expect_contains "$out" "nested"
	expect_contains "$out" "unconfined"
}

test_seccomp_cache() {
	seccomp_env
	mkdir -m 700 "$T/run"
	run_isd exec -- true
	expect_rc 0
	n=$(ls "$T/run/isd/seccomp" | grep -c '\.bpf$')
	[ "$n" -eq 1 ] || fail "one cached filter expected, found $n"
	[ ! -e "$T/cache/isd/seccomp" ] || fail "the cache must not be under XDG_CACHE_HOME"
	f=$(ls "$T/run/isd/seccomp"/*.bpf)
	expect_eq "$(stat -c %a "$f")" 600 "cache file mode"
	expect_eq "$(stat -c %a "$T/run/isd/seccomp")" 700 "cache dir mode"
	before=$(stat -c %Y.%i "$f")
	run_isd exec -- true
	expect_rc 0
	expect_eq "$(stat -c %Y.%i "$f")" "$before" "cache reused, not rewritten"
	# a damaged cache is recompiled, not trusted
	printf 'garbage' >"$f"
	run_isd exec -v "$SYSPROBE:/helper:ro" -- /helper mount seccomp
	expect_rc 0
	probe_is mount EPERM
	[ "$(stat -c %s "$f")" -gt 100 ] || fail "cache not rewritten"
	# no usable runtime directory: the cache home's isd/bpf, reused
	export XDG_RUNTIME_DIR=/proc/isd-no-cache
	run_isd exec -v "$SYSPROBE:/helper:ro" -- /helper mount
	expect_rc 0
	probe_is mount EPERM
	f=$(ls "$T/cache/isd/bpf"/*.bpf) || fail "no filter cached under XDG_CACHE_HOME/isd/bpf"
	expect_eq "$(stat -c %a "$f")" 600 "fallback cache file mode"
	before=$(stat -c %Y.%i "$f")
	unset XDG_RUNTIME_DIR
	run_isd exec -v "$SYSPROBE:/helper:ro" -- /helper mount
	expect_rc 0
	probe_is mount EPERM
	expect_eq "$(stat -c %Y.%i "$f")" "$before" "fallback cache reused"
	# an unwritable cache is not an error
	rm -rf "$T/cache"
	export XDG_CACHE_HOME=/proc/isd-no-cache
	run_isd exec -v "$SYSPROBE:/helper:ro" -- /helper mount
	expect_rc 0
	probe_is mount EPERM
}

# ---- normal developer workloads run under the default profile ----

workload() {
	seccomp_env
	run_isd exec --tmpfs /w:exec -w /w -e HOME=/w "$@"
}

test_seccomp_workload_shell() {
	workload -- sh -c '
		set -e
		x=$(echo hello | tr a-z A-Z)
		( cd /tmp && pwd ) >/dev/null
		printf "%s\n" b a | sort | head -n1 >/w/f
		read y </w/f
		trap "" USR1; kill -USR1 $$
		sleep 0.1 & wait
		echo "$x $y"'
	expect_rc 0 "shell script: $err"
	expect_eq "$out" "HELLO a"
}

test_seccomp_workload_git() {
	command -v git >/dev/null || skip "git (git) is not installed"
	workload -e GIT_AUTHOR_NAME=isd -e GIT_AUTHOR_EMAIL=isd@example.org \
		-e GIT_COMMITTER_NAME=isd -e GIT_COMMITTER_EMAIL=isd@example.org -- sh -c '
		set -e
		git init -q r && cd r
		echo hi >f && git add f && git commit -qm first
		git log --oneline | wc -l
		git gc -q && git fsck --no-progress 2>&1 && git status --short | wc -l'
	expect_rc 0 "git: $err"
	expect_eq "$(printf '%s' "$out" | tr '\n' ' ')" "1 0" "git output"
}

test_seccomp_workload_cc() {
	command -v cc >/dev/null || skip "cc (gcc) is not installed"
	workload -- sh -c '
		set -e
		cat >t.c <<EOF
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
extern char **environ;
static void *run(void *a) { return a; }
int main(void) {
	pthread_t t; pid_t pid; int st;
	char *argv[] = { "true", NULL };
	if (pthread_create(&t, NULL, run, NULL) || pthread_join(t, NULL)) return 1;
	/* glibc tries clone3 first: ENOSYS must make it fall back */
	if (posix_spawnp(&pid, "true", NULL, NULL, argv, environ) || waitpid(pid, &st, 0) != pid) return 2;
	printf("cc-ok %d\n", WEXITSTATUS(st));
	return 0;
}
EOF
		cc -O2 -pthread -o t t.c && ./t'
	expect_rc 0 "cc: $err"
	expect_eq "$out" "cc-ok 0"
}

test_seccomp_workload_python() {
	command -v python3 >/dev/null || skip "python3 (python3) is not installed"
	workload -- python3 -c '
import concurrent.futures, multiprocessing, os, subprocess, tempfile
with tempfile.NamedTemporaryFile(dir="/w") as f:
    f.write(b"x"); f.flush()
out = subprocess.run(["echo", "sub"], capture_output=True, text=True).stdout.strip()
with concurrent.futures.ThreadPoolExecutor(2) as ex:
    sq = sum(ex.map(lambda v: v * v, range(4)))
with multiprocessing.Pool(2) as pool:
    mp = sum(pool.map(abs, [-1, -2]))
print(out, sq, mp, len(os.urandom(4)))'
	expect_rc 0 "python: $err"
	expect_eq "$out" "sub 14 3 4"
}

test_seccomp_workload_node() {
	command -v node >/dev/null || skip "node (nodejs) is not installed"
	# libuv tries io_uring first; ENOSYS must send it to its thread pool
	workload -- node -e '
const fs = require("fs"), cp = require("child_process");
const { Worker } = require("worker_threads");
fs.writeFileSync("/w/x", "file");
fs.promises.readFile("/w/x", "utf8").then((d) => {
  const w = new Worker("require(\"worker_threads\").parentPort.postMessage(6*7)", { eval: true });
  w.on("message", (m) => console.log(d, cp.execSync("echo sub").toString().trim(), m));
});'
	expect_rc 0 "node: $err"
	expect_eq "$out" "file sub 42"
}

test_seccomp_workload_make() {
	command -v make >/dev/null || skip "make (make) is not installed"
	workload -- sh -c 'printf "all: a b\n\t@echo done\na:\n\t@true\nb:\n\t@true\n" >Makefile && make -s -j2'
	expect_rc 0 "make: $err"
	expect_eq "$out" "done"
}

test_seccomp_workload_go() {
	command -v go >/dev/null || skip "go (golang-go) is not installed"
	goroot=$(go env GOROOT)
	workload -e GOCACHE=/w/cache -e GOPATH=/w/go -e GOFLAGS=-mod=mod -e "PATH=$goroot/bin:/usr/bin:/bin" -- sh -c '
		set -e
		cat >main.go <<EOF
package main

import (
	"fmt"
	"os/exec"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	n := make([]int, 8)
	for i := range n {
		wg.Add(1)
		go func(i int) { defer wg.Done(); n[i] = i }(i)
	}
	wg.Wait()
	out, err := exec.Command("echo", "sub").Output()
	if err != nil {
		panic(err)
	}
	fmt.Printf("go-ok %d %s", n[7], out)
}
EOF
		printf "module t\n\ngo 1.19\n" >go.mod
		go build -o t . && ./t'
	expect_rc 0 "go: $err"
	expect_eq "$out" "go-ok 7 sub"
}
