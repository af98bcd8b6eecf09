/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The activity log's listener (isd/activity.h): a thread of isd's that the
 * payload hands its seccomp listener to, started while the sandbox sets
 * itself up, then, once the run lives past its start, a process of its
 * own session forked from that thread; and its end with the run.
 */
#define _GNU_SOURCE
#include "isd/activity.h"
#include "activity-exe.h"
#include "activity-internal.h"
#include "testhooks.h"
#include "isd/process.h"
#include "isd/syscalls.h"
#include "isd/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* How long a run's listener stays a thread (isd_activity_prestart). */
#define HANDOVER_MS 100

static bool hand_over(struct isd_activity *a);

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* poll's timeout: the watch's next look, or the hand-over's time. */
static int loop_timeout(const struct isd_activity *a)
{
	int t = isd_exe_watch_timeout(a->exe);
	uint64_t now;

	if (!a->handover_ns || t >= 0)
		return t;
	now = monotonic_ns();
	return now >= a->handover_ns ? 0 : (int)((a->handover_ns - now) / 1000000u) + 1;
}

static void *listen_loop(void *arg)
{
	struct isd_activity *a = arg;
	struct pollfd p[2] = {{.fd = a->listener, .events = POLLIN}, {.fd = a->stop_pipe[0], .events = POLLIN}};

	for (;;) {
		int n = poll(p, 2, loop_timeout(a));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		/* Nothing waits, in the kernel or in the watch: the moment a
		 * process can take over with nothing in flight. */
		if (n == 0 && a->handover_ns && monotonic_ns() >= a->handover_ns && isd_exe_watch_timeout(a->exe) < 0 &&
		    hand_over(a))
			return NULL;
		/* a caller waits: it comes before the looks; busy before the
		 * notification is taken, so that isd never sees it clear while
		 * a record may still come of it */
		if (p[0].revents & POLLIN) {
			__atomic_store_n(&a->share->busy, 1, __ATOMIC_SEQ_CST);
			activity_handle_one(a);
		} else if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
			break; /* every task under the filter is gone */
		}
		isd_exe_watch_tick(a->exe);
		if (isd_exe_watch_timeout(a->exe) < 0)
			__atomic_store_n(&a->share->busy, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Every exec stops its caller twice until isd answered (the exec, then
 * set_tid_address): on a busy machine most of the log's cost is the wait
 * for the listener to be scheduled, and for the caller to be again.  This
 * flag (Linux 6.6) has each side wake the other on the CPU it is leaving,
 * as a hand-off; older kernels say EINVAL, and only the cost differs. */
static void ask_sync_wake_up(int listener)
{
	(void)!ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (unsigned long)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
}

/*
 * A run that lives past its start gets a listener that is a process of
 * its own, in a session of its own.  Each exec waits twice for the
 * listener to run; as a thread of isd it is in the session of isd's
 * caller, and with the scheduler's autogroups (a task group per session)
 * it then shares one turn with all that session runs: a busy loop in that
 * session made every exec wait for it (an exec loop took twice as long).
 * Alone in its session it has its own turn.  It is forked from the
 * listener's thread with nothing in flight (hand_over), a copy of its
 * state, keeps only its three descriptors and takes no signal.
 */
static _Noreturn void listener_main(struct isd_activity *a)
{
	int fds[3] = {a->listener, a->stop_pipe[0], a->log_fd}, null_fd;

	prctl(PR_SET_DUMPABLE, 0);
	/* No parent-death signal: it would come with the end of the thread
	 * that forked this process, which is now.  The process ends with the
	 * sandbox (its last task gone, the listener hangs up) or when isd
	 * closes the stop pipe, so also when isd is killed. */
	setsid();
	for (int i = 0; i < 3; i++)
		if ((fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 100)) < 0)
			_exit(1);
	for (int i = 0; i < 3; i++)
		if (dup3(fds[i], 3 + i, O_CLOEXEC) < 0)
			_exit(1);
	isd_close_range(6, ~0U, 0);
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; null_fd >= 0 && fd < 3; fd++)
		dup2(null_fd, fd);
	a->listener = 3;
	a->stop_pipe[0] = 4;
	a->log_fd = 5;
	a->handover_ns = 0;
	listen_loop(a);
	/* what still waits, in order */
	isd_exe_watch_free(a->exe);
	if (isd_testhook_activity_end_delay_ms())
		nanosleep(&(struct timespec){.tv_sec = isd_testhook_activity_end_delay_ms() / 1000,
					     .tv_nsec = (long)(isd_testhook_activity_end_delay_ms() % 1000) * 1000000},
			  NULL);
	_exit(0);
}

/* The prestarted thread's hand-over (see isd_activity_prestart): a copy
 * of the thread, forked from it with nothing in flight, goes on answering
 * as the listener's process; the thread ends.  False: no process (isd
 * said stop, or the fork failed), the thread goes on. */
static bool hand_over(struct isd_activity *a)
{
	pid_t pid = -1;

	pthread_mutex_lock(&a->handover_lock);
	if (!a->handover_off) {
		pid = fork();
		if (pid == 0)
			listener_main(a);
		if (pid > 0)
			a->listener_pid = pid;
	}
	pthread_mutex_unlock(&a->handover_lock);
	a->handover_ns = 0;
	if (pid < 0)
		return false;
	/* the process answers: this thread keeps no copy */
	close(a->listener);
	a->listener = -1;
	return true;
}

static void *prestarted_thread(void *arg)
{
	struct isd_activity *a = arg;
	struct pollfd p[2] = {{.fd = a->prestart_sock, .events = POLLIN}, {.fd = a->stop_pipe[0], .events = POLLIN}};
	int32_t code = 0;
	int fd = -1;
	ssize_t n;

	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
	if (p[1].revents || !(p[0].revents & (POLLIN | POLLHUP)))
		return NULL;
	do
		n = isd_recv_with_fd(a->prestart_sock, &code, sizeof(code), 0, &fd);
	while (n == -EINTR);
	/* Nothing: the payload failed, or had no listener, which it says
	 * here in the landlock tier (the full tier's init tells isd). */
	if (fd < 0) {
		if (n == (ssize_t)sizeof(code) && code < 0)
			isd_activity_off(a, code);
		return NULL;
	}
	a->listener = fd;
	ask_sync_wake_up(a->listener);
	activity_write_header(a, 0);
	if (!a->in_thread)
		a->handover_ns = monotonic_ns() + HANDOVER_MS * 1000000ull;
	return listen_loop(a);
}

/*
 * The listener, a thread of isd's started while the sandbox sets itself
 * up, that waits for the payload to send it the listener (*payload_end):
 * a process forked when the listener came cost the payload's first
 * execve 1.5-2.5 ms on this class of machine (the fork, the copy-on-write
 * faults of both sides, the new process's wait for a CPU), and forked
 * before the sandbox it took as much CPU from the sandbox's set-up; a
 * thread costs neither.
 * A run that lives past its start (HANDOVER_MS) gets the process of its
 * own session, forked off the thread once nothing is in flight (see
 * listener_main for why a process).
 */
int isd_activity_prestart(struct isd_activity *a, int *payload_end)
{
	_cleanup_close_ int low = -1;
	int sv[2] = {-1, -1};
	int r = 0;

	*payload_end = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(a->stop_pipe, O_CLOEXEC) < 0) {
		r = isd_error(-errno, "creating the activity log's sockets");
		goto out;
	}
	/* The sandbox's end goes to a fixed number there: from above the
	 * fixed ones (src/init.h), as every descriptor that crosses does. */
	low = sv[0];
	if ((sv[0] = fcntl(low, F_DUPFD_CLOEXEC, 10)) < 0) {
		r = isd_error(-errno, "moving the activity log's socket");
		goto out;
	}
	a->prestart_sock = sv[1];
	sv[1] = -1;
	*payload_end = sv[0];
	sv[0] = -1;
out:
	for (int i = 0; i < 2; i++)
		if (sv[i] >= 0)
			close(sv[i]);
	return r;
}

int isd_activity_listen(struct isd_activity *a)
{
	sigset_t all, old;
	int r;

	if (a->prestart_sock < 0 || a->thread_started)
		return 0;
	/* Signals are the main thread's (forwarding, the terminal relay). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&a->thread, NULL, prestarted_thread, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		/* A listener sent now is dropped with the socket, and the
		 * payload's exec fails (ENOSYS) instead of waiting. */
		close(a->prestart_sock);
		a->prestart_sock = -1;
		return isd_error(r, "starting the activity log's thread");
	}
	a->thread_started = true;
	return 0;
}

int isd_activity_listen_on(struct isd_activity *a, int sock)
{
	if (a->listener >= 0 || a->thread_started)
		return 0;
	if ((a->prestart_sock = fcntl(sock, F_DUPFD_CLOEXEC, 3)) < 0 ||
	    (a->stop_pipe[1] < 0 && pipe2(a->stop_pipe, O_CLOEXEC) < 0))
		return isd_error(-errno, "preparing the activity log's thread");
	return isd_activity_listen(a);
}

int isd_activity_send_listener(int payload_end, int listener_fd)
{
	int32_t code = 0;

	return isd_send_with_fd(payload_end, &code, sizeof(code), listener_fd);
}

void isd_activity_off(struct isd_activity *a, int err)
{
	fprintf(stderr, "isd: note: the activity log records no commands in this run: %s\n",
		err == -EBUSY ? "an outer seccomp filter already has a listener (isd inside isd?)" : strerror(-err));
	activity_write_header(a, err);
}

pid_t isd_activity_listener_pid(struct isd_activity *a)
{
	pid_t pid;

	if (!a)
		return 0;
	/* asked when the sandbox is over: no hand-over after this one */
	pthread_mutex_lock(&a->handover_lock);
	a->handover_off = true;
	pid = a->listener_pid > 0 ? a->listener_pid : 0;
	pthread_mutex_unlock(&a->handover_lock);
	return pid;
}

void isd_activity_free(struct isd_activity *a)
{
	if (!a)
		return;
	if (a->thread_started) {
		/* No process is forked from now on.  The thread ends at the
		 * pipe's end (closed, not written: the process may be gone
		 * already, no task left under the filter, and a write would
		 * be SIGPIPE), then what still waits is written. */
		pthread_mutex_lock(&a->handover_lock);
		a->handover_off = true;
		pthread_mutex_unlock(&a->handover_lock);
		close(a->stop_pipe[1]);
		a->stop_pipe[1] = -1;
		pthread_join(a->thread, NULL);
	}
	if (a->listener_pid > 0) {
		if (a->stop_pipe[1] >= 0)
			close(a->stop_pipe[1]);
		a->stop_pipe[1] = -1;
		/* When the sandbox is gone no notification can come any more
		 * (a task's is withdrawn as it dies); a process that holds no
		 * record then has written all it will.  Its end (the teardown
		 * of a copy of isd's memory, once it is scheduled) is then not
		 * waited for: it ends of itself, and with isd. */
		if (__atomic_load_n(&a->share->busy, __ATOMIC_ACQUIRE))
			(void)isd_wait_pid(a->listener_pid, NULL);
		else
			(void)waitpid(a->listener_pid, NULL, WNOHANG);
	}
	/* what still waits, in order, before the dropped line counts */
	isd_exe_watch_free(a->exe);
	a->exe = NULL;
	if (a->share && a->share->dropped && a->log_fd >= 0) {
		a->rec.len = 0;
		rec_puts(&a->rec, "{\"type\":\"dropped\",");
		rec_time_at(&a->rec, NULL);
		rec_printf(&a->rec, ",\"records\":%" PRIu64 "}\n", a->share->dropped);
		(void)!isd_write_all(a->log_fd, a->rec.buf, a->rec.len);
	}
	if (a->listener >= 0)
		close(a->listener);
	for (int i = 0; i < 2; i++)
		if (a->stop_pipe[i] >= 0)
			close(a->stop_pipe[i]);
	if (a->log_fd >= 0)
		close(a->log_fd);
	if (a->prestart_sock >= 0)
		close(a->prestart_sock);
	pthread_mutex_destroy(&a->handover_lock);
	isd_strv_free(a->initial_argv);
	free(a->initial_cwd);
	free(a->filter);
	free(a->rec.buf);
	free(a->scratch);
	if (a->share) {
		pthread_mutex_destroy(&a->share->lock);
		munmap(a->share, sizeof(*a->share));
	}
	free(a);
}
