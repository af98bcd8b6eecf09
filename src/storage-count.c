/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The storage watcher's counts of a running session, made in the owner's
 * view (isd/owner-view.h) so that a directory the payload made unreadable
 * is read without giving it back a mode the payload would see (the
 * session's files are the sandbox's view).  A thread cannot enter a user
 * namespace and the watcher counts often, so one child per sandbox enters
 * the view once and counts on request over a socketpair.  It also holds
 * the inotify watches of what it counted (src/storage-notify.c), reads
 * their events between counts and wakes the watcher through an eventfd
 * when they reach what the watcher armed it for.  Where no such child can
 * be had (root, no user namespaces), both run in isd.
 */
#define _GNU_SOURCE
#include "isd/storage.h"
#include "isd/owner-view.h"
#include "isd/process.h"
#include "isd/util.h"
#include "storage-notify.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct isd_storage_counter {
	pid_t pid; /* 0: the count runs in isd */
	int fd;
	struct isd_storage_activity *activity; /* shared with the child */
	int wake_fd;                           /* the child's eventfd */
	struct isd_storage_notify *notify;     /* in isd (pid 0) */
	bool mapped;                           /* activity is mmap()ed, else malloc()ed */
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

static void count_one(int fd, char *const *paths, const struct timespec *since, struct isd_storage_notify *n,
		      const struct count_request *req)
{
	struct count_reply rep;
	struct isd_storage_usage u;
	struct timespec c0, c1;

	memset(&rep, 0, sizeof(rep));
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	isd_storage_notify_reset(n);
	isd_storage_account_notify(paths, since, req->limited ? &req->lim : NULL, n, &u);
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

static _Noreturn void serve(int fd, int wake_fd, char *const *paths, const struct timespec *since,
			    struct isd_storage_activity *activity)
{
	static const int quiet[] = {SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGHUP, SIGPIPE};
	struct isd_storage_notify *n;
	char c;

	/* Ends with isd (its terminal's signals are isd's to handle). */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		signal(quiet[i], SIG_IGN);
	if (getppid() == 1)
		_exit(0);
	/* Nothing of isd's stays open here (the session's lock among them). */
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	wake_fd = fcntl(wake_fd, F_DUPFD_CLOEXEC, 10);
	if (fd < 0 || wake_fd < 0 || dup3(fd, 3, O_CLOEXEC) < 0 || dup3(wake_fd, 4, O_CLOEXEC) < 0)
		_exit(1);
	(void)syscall(SYS_close_range, 5U, ~0U, 0U);
	fd = 3;
	wake_fd = 4;
	c = isd_owner_view_enter() == 0 && isd_owner_view_active() ? 'y' : 'n';
	if (send(fd, &c, 1, MSG_NOSIGNAL) != 1 || c != 'y')
		_exit(0);
	/* In the view: it watches what it can read. */
	n = isd_storage_notify_new(activity, wake_fd);
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = isd_storage_notify_fd(n), .events = POLLIN}};
		struct count_request req;
		ssize_t got;

		if (poll(p, n ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (p[1].revents & POLLIN)
			(void)isd_storage_notify_drain(n);
		if (!p[0].revents)
			continue;
		got = recv(fd, &req, sizeof(req), MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got != (ssize_t)sizeof(req))
			_exit(0);
		count_one(fd, paths, since, n, &req);
	}
}

static struct isd_storage_counter *counter_new(void)
{
	struct isd_storage_counter *c = isd_xcalloc(1, sizeof(*c));
	void *shared = mmap(NULL, sizeof(*c->activity), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	c->fd = -1;
	c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	/* Without either, the statvfs trigger and the periodic count, as
	 * where inotify is out of watches. */
	if (shared == MAP_FAILED)
		shared = NULL;
	c->mapped = shared != NULL;
	c->activity = shared ? shared : isd_xcalloc(1, sizeof(*c->activity));
	if (!shared || c->wake_fd < 0)
		atomic_store(&c->activity->flags, ISD_ACTIVITY_LIMITED);
	return c;
}

/* The count and the watches in isd itself. */
static void counter_here(struct isd_storage_counter *c)
{
	if (!(atomic_load(&c->activity->flags) & ISD_ACTIVITY_LIMITED))
		c->notify = isd_storage_notify_new(c->activity, -1);
}

int isd_storage_counter_start(char *const *paths, const struct timespec *since, struct isd_storage_counter **out)
{
	struct isd_storage_counter *c;
	int sv[2], status;
	char ok = 0;
	pid_t pid;

	*out = NULL;
	if (!paths || !paths[0])
		return 0;
	c = counter_new();
	/* Root reads every mode already: the count runs in isd. */
	if (isd_owner_view_active() || !c->mapped || c->wake_fd < 0) {
		counter_here(c);
		*out = c;
		return 0;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		isd_storage_counter_stop(c);
		return isd_error(-errno, "starting the storage watcher's counting process: a socketpair");
	}
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		isd_storage_counter_stop(c);
		return isd_error(-errno, "starting the storage watcher's counting process: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		serve(sv[1], c->wake_fd, paths, since, c->activity);
	}
	close(sv[1]);
	if (recv(sv[0], &ok, 1, 0) != 1 || ok != 'y') {
		/* No user namespace can be made here (nested without them, a
		 * denying LSM): the count runs in isd, as it always did, and
		 * gives a mode-000 directory its owner's read and search while
		 * it is in it (src/storage.c). */
		close(sv[0]);
		isd_wait_pid(pid, &status);
		counter_here(c);
		*out = c;
		return 0;
	}
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
	if (!c->pid) {
		isd_storage_notify_reset(c->notify);
		return isd_storage_account_notify(paths, since, lim, c->notify, u);
	}
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
	if (c->pid > 0)
		(void)isd_wait_pid(c->pid, &status);
	isd_storage_notify_free(c->notify);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	if (c->mapped)
		munmap(c->activity, sizeof(*c->activity));
	else
		free(c->activity);
	free(c);
}

int isd_storage_counter_poll_fd(const struct isd_storage_counter *c)
{
	if (!c)
		return -1;
	return c->pid ? c->wake_fd : isd_storage_notify_fd(c->notify);
}

bool isd_storage_counter_woken(struct isd_storage_counter *c)
{
	uint64_t v;

	if (!c)
		return false;
	if (!c->pid)
		return isd_storage_notify_drain(c->notify);
	return read(c->wake_fd, &v, sizeof(v)) == (ssize_t)sizeof(v);
}

void isd_storage_counter_arm(struct isd_storage_counter *c, uint64_t bytes, uint64_t inodes)
{
	if (!c)
		return;
	atomic_store(&c->activity->wake_bytes, bytes);
	atomic_store(&c->activity->wake_inodes, inodes);
	atomic_store(&c->activity->armed, true);
}

const struct isd_storage_activity *isd_storage_counter_activity(const struct isd_storage_counter *c)
{
	return c ? c->activity : NULL;
}
