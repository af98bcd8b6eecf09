/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "init.h"
#include "isd/process.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

const int isd_forwarded_signals[ISD_N_FORWARDED_SIGNALS] = {SIGINT,  SIGTERM, SIGHUP,   SIGQUIT,
							    SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

int isd_exit_status_from_wait(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return ISD_EXIT_FAILURE;
}

int isd_init_block_signals(sigset_t *old_mask)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < ISD_N_FORWARDED_SIGNALS; i++)
		sigaddset(&set, isd_forwarded_signals[i]);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, old_mask) < 0)
		return isd_error(-errno, "blocking signals in the sandbox's init");
	return 0;
}

int isd_init_run(pid_t payload)
{
	return isd_init_run_until(payload, 0);
}

int isd_init_run_until(pid_t payload, int stop_sig)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < ISD_N_FORWARDED_SIGNALS; i++)
		sigaddset(&set, isd_forwarded_signals[i]);
	sigaddset(&set, SIGCHLD);
	if (stop_sig)
		sigaddset(&set, stop_sig);

	for (;;) {
		siginfo_t info;
		int sig = sigwaitinfo(&set, &info);

		if (sig < 0)
			continue; /* EINTR */
		if (stop_sig && sig == stop_sig)
			return -1;
		if (sig != SIGCHLD) {
			/* The payload leads its own session and process group, so
			 * the whole group gets it, as a terminal would do. */
			if (kill(-payload, sig) < 0)
				kill(payload, sig);
			continue;
		}
		for (;;) {
			int status;
			pid_t pid = waitpid(-1, &status, WNOHANG);

			if (pid <= 0)
				break;
			/* When the payload is gone, init leaves and the kernel
			 * kills whatever it left behind in the pid namespace. */
			if (pid == payload)
				return isd_exit_status_from_wait(status);
		}
	}
}

/* Children of self, from each /proc/PID/stat's ppid field (works without
 * CONFIG_PROC_CHILDREN), SIGKILLed and reaped.  A child's pid cannot be
 * reused before we reap it, so killing what is listed is safe. */
static size_t kill_children(pid_t self, pid_t exclude)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t *pids = NULL;
	size_t n = 0, cap = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[64], buf[512], *close_paren;
		long pid = strtol(e->d_name, NULL, 10), ppid;
		ssize_t len;
		int fd;

		if (pid <= 0 || pid == exclude)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		close_paren = strrchr(buf, ')');
		if (!close_paren || sscanf(close_paren + 1, " %*c %ld", &ppid) != 1 || ppid != self)
			continue;
		kill((pid_t)pid, SIGKILL);
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			pids = isd_xrealloc(pids, cap * sizeof(*pids));
		}
		pids[n++] = (pid_t)pid;
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		isd_wait_pid(pids[i], NULL);
	free(pids);
	return n;
}

void isd_init_kill_descendants(pid_t exclude)
{
	pid_t self = getpid();

	/* As a child subreaper, every orphan of the tree comes to us: kill
	 * the children, reap them, and their children are ours next. */
	for (int round = 0; round < 100000 && kill_children(self, exclude) > 0; round++)
		;
}
