/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The storage watcher's counts of a running session, made in the owner's
 * view (isd/owner-view.h) so that a directory the payload made unreadable
 * is read without giving it back a mode the payload would see (the
 * session's files are the sandbox's view).  A thread cannot enter a user
 * namespace and the watcher counts often, so one child per sandbox enters
 * the view once and counts on request over a socketpair.
 */
#define _GNU_SOURCE
#include "isd/storage.h"
#include "isd/owner-view.h"
#include "isd/process.h"
#include "isd/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct isd_storage_counter {
	pid_t pid;
	int fd;
};

struct count_request {
	bool limited;
	struct isd_storage_limits lim;
};

struct count_reply {
	uint64_t bytes, inodes, baseline, cpu_ns;
	bool interrupted;
	char unaccounted[PATH_MAX + 64]; /* "" when all was counted */
};

static _Noreturn void serve(int fd, char *const *paths, const struct timespec *since)
{
	static const int quiet[] = {SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGHUP, SIGPIPE};
	struct count_reply rep;
	struct count_request req;
	char c;

	/* Ends with isd (its terminal's signals are isd's to handle). */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		signal(quiet[i], SIG_IGN);
	if (getppid() == 1)
		_exit(0);
	/* Nothing of isd's stays open here (the session's lock among them). */
	if (dup3(fd, 3, O_CLOEXEC) < 0 && fd != 3)
		_exit(1);
	(void)syscall(SYS_close_range, 4U, ~0U, 0U);
	fd = 3;
	c = isd_owner_view_enter() == 0 && isd_owner_view_active() ? 'y' : 'n';
	if (send(fd, &c, 1, MSG_NOSIGNAL) != 1 || c != 'y')
		_exit(0);
	for (;;) {
		struct isd_storage_usage u;
		struct timespec c0, c1;
		ssize_t n = recv(fd, &req, sizeof(req), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(req))
			_exit(0);
		memset(&rep, 0, sizeof(rep));
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
		isd_storage_account_limited(paths, since, req.limited ? &req.lim : NULL, &u);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
		rep.cpu_ns = (uint64_t)(c1.tv_sec - c0.tv_sec) * 1000000000ULL + (uint64_t)c1.tv_nsec - (uint64_t)c0.tv_nsec;
		rep.bytes = u.bytes;
		rep.inodes = u.inodes;
		rep.baseline = u.baseline;
		rep.interrupted = u.interrupted;
		if (u.unaccounted)
			snprintf(rep.unaccounted, sizeof(rep.unaccounted), "%s", u.unaccounted);
		free(u.unaccounted);
		if (send(fd, &rep, sizeof(rep), MSG_NOSIGNAL) != (ssize_t)sizeof(rep))
			_exit(0);
	}
}

int isd_storage_counter_start(char *const *paths, const struct timespec *since, struct isd_storage_counter **out)
{
	struct isd_storage_counter *c;
	int sv[2], status;
	char ok = 0;
	pid_t pid;

	*out = NULL;
	/* Root reads every mode already: the count runs in isd. */
	if (isd_owner_view_active() || !paths || !paths[0])
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return isd_error(-errno, "starting the storage watcher's counting process: a socketpair");
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return isd_error(-errno, "starting the storage watcher's counting process: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		serve(sv[1], paths, since);
	}
	close(sv[1]);
	if (recv(sv[0], &ok, 1, 0) != 1 || ok != 'y') {
		/* No user namespace can be made here (nested without them, a
		 * denying LSM): the count runs in isd, as it always did, and
		 * gives a mode-000 directory its owner's read and search while
		 * it is in it (src/storage.c). */
		close(sv[0]);
		isd_wait_pid(pid, &status);
		return 0;
	}
	c = isd_xcalloc(1, sizeof(*c));
	c->pid = pid;
	c->fd = sv[0];
	*out = c;
	return 0;
}

pid_t isd_storage_counter_pid(const struct isd_storage_counter *c)
{
	return c ? c->pid : 0;
}

int isd_storage_counter_count(struct isd_storage_counter *c, char *const *paths, const struct timespec *since,
			      const struct isd_storage_limits *lim, struct isd_storage_usage *u)
{
	struct count_request req = {.limited = lim != NULL};
	struct count_reply rep;
	ssize_t n;

	if (!c || !paths)
		return isd_storage_account_limited(paths, since, lim, u);
	if (lim)
		req.lim = *lim;
	if (c->fd >= 0 && send(c->fd, &req, sizeof(req), MSG_NOSIGNAL) == (ssize_t)sizeof(req)) {
		do
			n = recv(c->fd, &rep, sizeof(rep), 0);
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(rep)) {
			rep.unaccounted[sizeof(rep.unaccounted) - 1] = '\0';
			u->bytes = rep.bytes;
			u->inodes = rep.inodes;
			u->baseline = rep.baseline;
			u->interrupted = rep.interrupted;
			u->cpu_ns = rep.cpu_ns;
			u->unaccounted = rep.unaccounted[0] ? isd_xstrdup(rep.unaccounted) : NULL;
			return 0;
		}
	}
	/* Gone (killed): not counted in isd instead, which would change the
	 * modes the payload sees; the bound cannot be checked, so it says so. */
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	memset(u, 0, sizeof(*u));
	u->unaccounted = isd_xasprintf("%s (the counting process ended)", paths[0]);
	return 0;
}

void isd_storage_counter_stop(struct isd_storage_counter *c)
{
	int status;

	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	/* EOF ends it; reaped already where isd killed its children. */
	(void)isd_wait_pid(c->pid, &status);
	free(c);
}
