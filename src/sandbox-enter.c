/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One more process in a running sandbox (isd-runtime exec): the payload's
 * confinement, reached from the outside.
 *
 * caller                      helper (fork)                 process (fork)
 * -------------------------   --------------------------    -------------------------------
 * seccomp program, Landlock   cgroup, setns(pidfd of init:
 * plan, subreaper             those of user, mount, ipc, uts,
 *                             net, cgroup, pid not its own)
 *                             fork -----------------------> pty, cwd, ids, no capabilities,
 *                             its pid to the caller, exit   Landlock, seccomp, execve
 * read the setup socket: the
 * pid, the pty, an error, or
 * EOF (= execve done)
 *
 * The helper is needed because a process never enters a pid namespace
 * itself: only its children are born in it.  Its child comes to the
 * caller, a subreaper, when it exits.
 */
#define _GNU_SOURCE
#include "isd/sandbox.h"
#include "caps.h"
#include "init.h"
#include "landlock.h"
#include "pty.h"
#include "userns.h"
#include "isd/process.h"
#include "isd/seccomp.h"
#include "isd/syscalls.h"
#include "isd/util.h"

#include <fcntl.h>
#include <linux/securebits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static _Noreturn void fail_to(int sock, int code)
{
	struct setup_message msg = {.type = SETUP_ERROR, .exit_code = code};

	snprintf(msg.text, sizeof(msg.text), "%s", isd_error_message()[0] ? isd_error_message() : "entering the sandbox failed");
	(void)!send(sock, &msg, sizeof(msg), MSG_NOSIGNAL);
	_exit(code);
}

/* The caller's preserved descriptors at 3, 4, ... (not close-on-exec),
 * the socket to the caller moved above them. */
static int hand_over_preserved(const int *fds, size_t n, int *sock)
{
	int s;

	if (!n)
		return 0;
	s = fcntl(*sock, F_DUPFD_CLOEXEC, (int)(3 + n));
	if (s < 0)
		return isd_error(-errno, "moving the setup socket above the preserved descriptors");
	*sock = s;
	for (size_t i = 0; i < n; i++)
		if (dup2(fds[i], (int)(3 + i)) < 0)
			return isd_error(-errno, "handing descriptor %zu to the process", 3 + i);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}

static _Noreturn void process_main(const struct isd_spec *spec, const struct isd_seccomp_program *seccomp,
				   const struct isd_landlock_plan *landlock, const struct isd_sandbox_entered *e, int sock)
{
	int fd, r;

	if (spec->tty) {
		int master, slave;
		struct setup_message msg = {.type = SETUP_PTY};

		/* the sandbox's devpts, as its payload's terminal is */
		if (isd_pty_open(&master, &slave) < 0)
			fail_to(sock, ISD_EXIT_FAILURE);
		r = isd_send_with_fd(sock, &msg, sizeof(msg), master);
		close(master);
		if (r < 0 || setsid() < 0 || isd_pty_attach(slave) < 0) {
			if (r < 0)
				isd_error(r, "handing the terminal to isd");
			else if (!isd_error_message()[0])
				isd_error(-errno, "starting a session for the terminal");
			fail_to(sock, ISD_EXIT_FAILURE);
		}
	}
	fd = isd_openat2(AT_FDCWD, spec->workdir ? spec->workdir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC,
			 RESOLVE_NO_MAGICLINKS);
	if (fd < 0 || fchdir(fd) < 0) {
		isd_error(-errno, "changing to the working directory %s", spec->workdir ? spec->workdir : "/");
		fail_to(sock, ISD_EXIT_FAILURE);
	}
	close(fd);
	/* setns gave every capability of the sandbox's user namespace: kept
	 * through the change of ids only to become isd-runtime's config sets
	 * (as the payload's), or to be dropped, all of them */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP) < 0) {
		isd_error(-errno, "setting securebits");
		fail_to(sock, ISD_EXIT_FAILURE);
	}
	if (isd_init_apply_rlimits(spec) < 0 || isd_userns_become_in_groups(spec->uid, spec->gid, spec->groups, spec->n_groups) < 0 ||
	    (!spec->config_caps && isd_caps_drop_all() < 0))
		fail_to(sock, ISD_EXIT_FAILURE);
	prctl(PR_SET_DUMPABLE, 0);
	if (isd_landlock_apply(landlock) < 0 || hand_over_preserved(e->preserved_fds, e->n_preserved_fds, &sock) < 0 ||
	    isd_init_apply_privileges(spec, seccomp) < 0)
		fail_to(sock, ISD_EXIT_FAILURE);
	prctl(PR_SET_DUMPABLE, 1);
	r = isd_init_exec_command(spec->argv, spec->env, isd_spec_getenv(spec, "PATH"), false);
	fail_to(sock, r == -ENOENT ? ISD_EXIT_NOT_FOUND : ISD_EXIT_CANNOT_EXEC);
}

/* The sandbox's namespaces, and those isd-runtime joined by path, may be
 * (--pid host, a network namespace shared with the caller) or not be the
 * caller's; entering one's own again needs privilege over it the caller
 * may lack. */
int isd_sandbox_foreign_namespaces(pid_t init_pid)
{
	static const struct {
		const char *name;
		int flag;
	} ns[] = {
		{"user", CLONE_NEWUSER}, {"mnt", CLONE_NEWNS},	       {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS},
		{"net", CLONE_NEWNET},	 {"cgroup", CLONE_NEWCGROUP}, {"pid", CLONE_NEWPID},
	};
	int flags = 0;

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		char path[64];
		struct stat mine, its;

		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)init_pid, ns[i].name);
		if (stat(path, &its) < 0)
			return isd_error(-errno, "reading the sandbox's namespaces (%s)", path);
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns[i].name);
		if (stat(path, &mine) < 0 || mine.st_dev != its.st_dev || mine.st_ino != its.st_ino)
			flags |= ns[i].flag;
	}
	return flags;
}

static _Noreturn void helper_main(const struct isd_spec *spec, const struct isd_seccomp_program *seccomp,
				  const struct isd_landlock_plan *landlock, int pidfd, pid_t init_pid,
				  const char *cgroup_dir, const struct isd_sandbox_entered *e, int sock)
{
	int flags = isd_sandbox_foreign_namespaces(init_pid);
	struct setup_message msg = {.type = SETUP_PID};
	pid_t pid;

	if (flags < 0)
		fail_to(sock, ISD_EXIT_FAILURE);

	if (cgroup_dir) {
		_cleanup_free_ char *procs = isd_xasprintf("%s/cgroup.procs", cgroup_dir);
		int r = isd_write_file_at(AT_FDCWD, procs, "0", O_WRONLY, 0);
		if (r < 0) {
			isd_error(r, "joining the sandbox's cgroup %s", cgroup_dir);
			fail_to(sock, ISD_EXIT_FAILURE);
		}
	}
	if (setns(pidfd, flags) < 0) {
		isd_error(-errno, "joining the sandbox's namespaces");
		fail_to(sock, ISD_EXIT_FAILURE);
	}
	close(pidfd);
	pid = fork();
	if (pid < 0) {
		isd_error(-errno, "starting a process in the sandbox");
		fail_to(sock, ISD_EXIT_FAILURE);
	}
	if (pid == 0)
		process_main(spec, seccomp, landlock, e, sock);
	msg.exit_code = pid;
	(void)!send(sock, &msg, sizeof(msg), MSG_NOSIGNAL);
	_exit(0);
}

int isd_sandbox_enter(const struct isd_spec *spec, pid_t init_pid, const char *cgroup_dir,
		      struct isd_sandbox_entered *e)
{
	struct isd_seccomp_program seccomp = {0};
	struct isd_landlock_plan landlock;
	struct setup_message err = {0};
	bool got_err = false;
	_cleanup_close_ int pidfd = -1;
	int sv[2] = {-1, -1}, code = ISD_EXIT_FAILURE, status;
	pid_t helper = -1;

	e->pid = -1;
	e->pty_master = -1;
	isd_landlock_plan(spec, &landlock);
	if (isd_seccomp_prepare_stacked(spec->seccomp, spec->seccomp_also, &seccomp) < 0)
		goto out;
	pidfd = (int)syscall(SYS_pidfd_open, init_pid, 0);
	if (pidfd < 0) {
		isd_error(-errno, "finding the sandbox's init (pid %d)", (int)init_pid);
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		isd_error(-errno, "creating the setup socket");
		goto out;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		isd_error(-errno, "becoming the subreaper of the process in the sandbox");
		goto out;
	}
	fflush(NULL);
	helper = fork();
	if (helper < 0) {
		isd_error(-errno, "starting a process in the sandbox");
		goto out;
	}
	if (helper == 0) {
		close(sv[0]);
		/* nothing of the caller but stdio crosses into the sandbox */
		isd_close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
		helper_main(spec, &seccomp, &landlock, pidfd, init_pid, cgroup_dir, e, sv[1]);
	}
	close(sv[1]);
	sv[1] = -1;
	for (;;) {
		struct setup_message m;
		int passed;
		ssize_t n = isd_recv_with_fd(sv[0], &m, sizeof(m), 0, &passed);

		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		if (passed >= 0 && (size_t)n == sizeof(m) && m.type == SETUP_PTY && e->pty_master < 0)
			e->pty_master = passed;
		else if (passed >= 0)
			close(passed);
		if ((size_t)n == sizeof(m) && m.type == SETUP_PID)
			e->pid = m.exit_code;
		if ((size_t)n == sizeof(m) && m.type == SETUP_ERROR && !got_err) {
			err = m;
			err.text[sizeof(err.text) - 1] = '\0';
			got_err = true;
		}
	}
	/* the process is ours once the helper is gone */
	isd_wait_pid(helper, &status);
	helper = -1;
	if (got_err) {
		isd_error_raw(-EIO, err.text);
		code = err.exit_code;
		if (e->pid > 0)
			isd_wait_pid(e->pid, NULL);
		e->pid = -1;
	} else if (e->pid <= 0) {
		isd_error(-EIO, "entering the sandbox: the helper ended without starting the process");
	} else {
		code = 0;
	}
out:
	isd_kill_and_reap(&helper);
	if (code != 0 && e->pty_master >= 0) {
		close(e->pty_master);
		e->pty_master = -1;
	}
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	isd_seccomp_program_free(&seccomp);
	isd_landlock_plan_free(&landlock);
	return code;
}
