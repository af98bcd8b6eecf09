/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysprobe: calls syscalls directly (no libc wrappers that might fall back
 * or translate) and prints one line per probe: "NAME RESULT", RESULT being
 * "OK" or the errno name ("mount EPERM").  Built static so that it runs in
 * any sandbox root.
 *
 *   sysprobe            all probes
 *   sysprobe NAME...    only these
 *
 * Arguments are chosen so that, without a filter, the kernel answers
 * something other than EPERM where it can (invalid flags, bad fds): an
 * EPERM then comes from the seccomp filter.  Probes that would change the
 * process (namespaces, clone) run in a child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MS_NOUSER
#define MS_NOUSER (1U << 31)
#endif
#define X32_BIT 0x40000000UL

static const char *result(long rc, int err)
{
	static char buf[32];
	const char *name;

	if (rc >= 0)
		return "OK";
	name = strerrorname_np(err);
	if (name)
		return name;
	snprintf(buf, sizeof(buf), "errno%d", err);
	return buf;
}

static void report(const char *name, long rc)
{
	int err = errno;
	printf("%s %s\n", name, result(rc, err));
	fflush(stdout);
}

#define SYS(...) (errno = 0, syscall(__VA_ARGS__))

/* Runs fn in a child; the child's exit status carries the errno (0 = ok). */
static void in_child(const char *name, long (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		report(name, -1);
		return;
	}
	if (pid == 0) {
		long rc = fn();
		_exit(rc < 0 ? (errno & 0xff) : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		printf("%s CRASHED(%d)\n", name, WIFSIGNALED(status) ? WTERMSIG(status) : -1);
		fflush(stdout);
		return;
	}
	errno = WEXITSTATUS(status);
	report(name, errno ? -1 : 0);
}

/* A raw clone without CLONE_VM is a fork: the child leaves at once. */
static long raw_clone(unsigned long flags)
{
	long rc = SYS(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (rc == 0)
		syscall(SYS_exit_group, 0);
	if (rc > 0)
		waitpid((pid_t)rc, NULL, 0);
	return rc;
}

static long p_clone_newuser(void) { return raw_clone(CLONE_NEWUSER); }
static long p_clone_newns(void) { return raw_clone(CLONE_NEWNS); }
static long p_clone_newnet(void) { return raw_clone(CLONE_NEWNET); }
static long p_clone_newpid(void) { return raw_clone(CLONE_NEWPID); }
static long p_clone_plain(void) { return raw_clone(0); }
static long p_unshare_newuser(void) { return SYS(SYS_unshare, CLONE_NEWUSER); }
static long p_unshare_newns(void) { return SYS(SYS_unshare, CLONE_NEWNS); }
static long p_unshare_newnet(void) { return SYS(SYS_unshare, CLONE_NEWNET); }
static long p_unshare_newpid(void) { return SYS(SYS_unshare, CLONE_NEWPID); }
static long p_unshare_newipc(void) { return SYS(SYS_unshare, CLONE_NEWIPC); }
static long p_unshare_newuts(void) { return SYS(SYS_unshare, CLONE_NEWUTS); }
static long p_unshare_newcgroup(void) { return SYS(SYS_unshare, CLONE_NEWCGROUP); }
static long p_unshare_newtime(void) { return SYS(SYS_unshare, 0x80 /* CLONE_NEWTIME */); }
static long p_unshare_fs(void) { return SYS(SYS_unshare, CLONE_FS | CLONE_FILES); }

static long p_clone3(void)
{
	struct clone_args ca = { .exit_signal = SIGCHLD };
	long rc = SYS(SYS_clone3, &ca, sizeof(ca));
	if (rc == 0)
		syscall(SYS_exit_group, 0);
	if (rc > 0)
		waitpid((pid_t)rc, NULL, 0);
	return rc;
}

/* i386 getpid (20) through the 32-bit entry: the filter must not let a
 * foreign ABI through.  Runs in a child: without IA32 emulation the
 * instruction faults. */
static long p_int80(void)
{
	long rc = 20;
	__asm__ volatile("int $0x80" : "+a"(rc) : : "memory", "r8", "r9", "r10", "r11");
	rc = (int)rc; /* the 32-bit ABI answers in eax */
	if (rc < 0 && rc > -4096) {
		errno = (int)-rc;
		return -1;
	}
	return rc;
}

static int open_pty(int *master)
{
	int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC), s;
	if (m < 0)
		return -1;
	if (grantpt(m) < 0 || unlockpt(m) < 0)
		return -1;
	/* not O_NOCTTY: it becomes the controlling terminal of the child's
	 * new session, which is what TIOCSTI needs to get past the kernel */
	s = open(ptsname(m), O_RDWR | O_CLOEXEC);
	*master = m;
	return s;
}

static long tiocsti(unsigned long request)
{
	int m, s;
	char c = '#';

	if (setsid() < 0)
		return -1;
	if ((s = open_pty(&m)) < 0)
		return -1;
	return SYS(SYS_ioctl, s, request, &c);
}

static long p_tiocsti(void) { return tiocsti(TIOCSTI); }
static long p_tiocsti_hi(void) { return tiocsti(TIOCSTI | (1UL << 32)); }
static long p_tiocsti_hi2(void) { return tiocsti(TIOCSTI | 0xdead00000000UL); }

static long p_tioclinux(void)
{
	int m, s;
	char subcode = 6; /* TIOCL_GETSHIFTSTATE: harmless */
	if ((s = open_pty(&m)) < 0)
		return -1;
	return SYS(SYS_ioctl, s, TIOCLINUX, &subcode);
}

static long p_ioctl_ok(void)
{
	int m, s, n = 0;
	if ((s = open_pty(&m)) < 0)
		return -1;
	return SYS(SYS_ioctl, m, FIONREAD | (1UL << 40), &n); /* high bits: ignored by the kernel */
}

static void seccomp_status(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f) {
		printf("seccomp UNKNOWN\n");
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8)) {
			printf("seccomp %ld\n", strtol(line + 8, NULL, 10));
			break;
		}
	fclose(f);
	fflush(stdout);
}

static bool wanted(int argc, char **argv, const char *name)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	char handle_buf[sizeof(unsigned int) * 2 + 128] = { 0 };
	int mount_id;
	static const struct {
		const char *name;
		long (*fn)(void);
	} children[] = {
		{ "clone_newuser", p_clone_newuser },	  { "clone_newns", p_clone_newns },
		{ "clone_newnet", p_clone_newnet },	  { "clone_newpid", p_clone_newpid },
		{ "clone", p_clone_plain },		  { "clone3", p_clone3 },
		{ "unshare_newuser", p_unshare_newuser }, { "unshare_newns", p_unshare_newns },
		{ "unshare_newnet", p_unshare_newnet },	  { "unshare_newpid", p_unshare_newpid },
		{ "unshare_newipc", p_unshare_newipc },	  { "unshare_newuts", p_unshare_newuts },
		{ "unshare_newcgroup", p_unshare_newcgroup }, { "unshare_newtime", p_unshare_newtime },
		{ "unshare_fs", p_unshare_fs },		  { "int80_getpid", p_int80 },
		{ "tiocsti", p_tiocsti },		  { "tiocsti_hi", p_tiocsti_hi },
		{ "tiocsti_hi2", p_tiocsti_hi2 },	  { "tioclinux", p_tioclinux },
		{ "ioctl_fionread", p_ioctl_ok },
	};

#define PROBE(name, call)                   \
	do {                                \
		if (wanted(argc, argv, name)) \
			report(name, call);  \
	} while (0)

	if (wanted(argc, argv, "seccomp"))
		seccomp_status();
	PROBE("getpid", SYS(SYS_getpid));
	PROBE("mount", SYS(SYS_mount, "none", "/", "tmpfs", MS_NOUSER, NULL));
	PROBE("umount2", SYS(SYS_umount2, "/", 0x80000000UL));
	PROBE("fsopen", SYS(SYS_fsopen, "tmpfs", 0));
	PROBE("fsconfig", SYS(SYS_fsconfig, -1, 0, NULL, NULL, 0));
	PROBE("fsmount", SYS(SYS_fsmount, -1, 0, 0));
	PROBE("fspick", SYS(SYS_fspick, -1, "", 0));
	PROBE("move_mount", SYS(SYS_move_mount, -1, "", -1, "", 0));
	PROBE("open_tree", SYS(SYS_open_tree, -1, "", 0));
	PROBE("mount_setattr", SYS(SYS_mount_setattr, -1, "", 0, NULL, 0));
	PROBE("pivot_root", SYS(SYS_pivot_root, "/nonexistent-isd", "/nonexistent-isd"));
	PROBE("chroot", SYS(SYS_chroot, "/nonexistent-isd"));
	PROBE("setns", SYS(SYS_setns, -1, 0));
	PROBE("keyctl", SYS(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -2 /* thread keyring */, 0));
	PROBE("add_key", SYS(SYS_add_key, "isd-no-such-type", "isd", "x", 1, -2));
	PROBE("request_key", SYS(SYS_request_key, "user", "isd-no-such-key", NULL, 0));
	PROBE("bpf", SYS(SYS_bpf, -1, NULL, 0));
	PROBE("perf_event_open", SYS(SYS_perf_event_open, NULL, 0, -1, -1, 0));
	PROBE("userfaultfd", SYS(SYS_userfaultfd, ~0));
	PROBE("kexec_load", SYS(SYS_kexec_load, 0, 0, NULL, ~0UL));
	PROBE("kexec_file_load", SYS(SYS_kexec_file_load, -1, -1, 0, NULL, ~0UL));
	PROBE("init_module", SYS(SYS_init_module, NULL, 0, ""));
	PROBE("finit_module", SYS(SYS_finit_module, -1, "", ~0));
	PROBE("delete_module", SYS(SYS_delete_module, "isd-no-such-module", 0));
	PROBE("open_by_handle_at", SYS(SYS_open_by_handle_at, -1, handle_buf, 0));
	PROBE("name_to_handle_at", SYS(SYS_name_to_handle_at, AT_FDCWD, "/", handle_buf, &mount_id, 0));
	PROBE("swapon", SYS(SYS_swapon, "/nonexistent-isd", 0));
	PROBE("swapoff", SYS(SYS_swapoff, "/nonexistent-isd"));
	PROBE("reboot", SYS(SYS_reboot, 0, 0, 0, NULL)); /* bad magic: never reboots */
	PROBE("io_uring_setup", SYS(SYS_io_uring_setup, 1, NULL));
	PROBE("x32_getpid", SYS(SYS_getpid | X32_BIT));
	PROBE("socket_vsock", SYS(SYS_socket, 40 /* AF_VSOCK */, SOCK_STREAM, 0));
	PROBE("socket_unix", SYS(SYS_socket, AF_UNIX, SOCK_STREAM, 0));
	PROBE("syscall_1000", SYS(1000));
	for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++)
		if (wanted(argc, argv, children[i].name))
			in_child(children[i].name, children[i].fn);
	return 0;
}
