/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connect guard (src/connect-guard.h).  Landlock's TCP connect rule
 * names a port, never an address: with only that rule a netless payload
 * reaches every host, loopback or remote, at the relay's port.  So in
 * netless the payload's Landlock domain refuses every TCP connect of its
 * own (no port rule at all), and connect(2) is a seccomp notification
 * that isd answers:
 *
 * - isd takes the socket itself (pidfd_getfd), so what it checks is the
 *   socket the payload named, whatever the payload's fd table becomes
 *   (where a seccomp profile refuses isd pidfd_getfd, a socket of isd's
 *   takes its place: answer_replaced);
 * - an IP socket's address is read once, checked, and isd connects the
 *   socket with an address it built itself (never CONTINUE on a check of
 *   the payload's memory, which another thread rewrites at will), then
 *   answers the kernel's result: 0, EINPROGRESS on a non-blocking socket
 *   (whose flag is the open file's, shared with isd's copy), ECONNREFUSED;
 *   anything but 127.0.0.1:relay_port (or ::ffff:127.0.0.1 on an IPv6
 *   socket, or AF_UNSPEC, a disconnect) is refused with EACCES, as
 *   Landlock refuses, but a --forward's port on 127.0.0.1, which isd
 *   connects to the forward's target (resolved once, before the run), as
 *   the full tier's relay would: how an agent reaches a local model;
 * - any other socket (AF_UNIX: its path is resolved in the payload's
 *   Landlock domain and cwd, which isd does not have) or a descriptor that
 *   is no socket goes on in the kernel (CONTINUE).  Were the descriptor
 *   swapped for an IP socket meanwhile, the kernel's connect runs in the
 *   payload's domain, which refuses every TCP connect: the race gains
 *   nothing.
 *
 * isd connects with its own credentials but the same network (the tier
 * has no namespace), and without Landlock: only to the relay.  A blocking
 * connect to the relay on the loopback ends at once (the kernel completes
 * it from the relay's backlog); meanwhile the payload's other connects
 * wait, which is the payload's to suffer alone.  A payload that is not
 * dumpable (prctl PR_SET_DUMPABLE) cannot be read by a rootless isd: its
 * connects to IP are refused (EACCES).
 *
 * What else could reach an address: sendto/sendmsg/sendmmsg carry one,
 * but on TCP (the only IP sockets netless creates, src/sandbox-landlock-
 * plan.c) it is ignored but with MSG_FASTOPEN, which the socket filter
 * refuses; TCP_FASTOPEN_CONNECT takes its address from connect(2), here;
 * io_uring, whose operations no filter sees, is refused (ENOSYS).
 *
 * One filter chain holds one listener: with the activity log in this
 * tier, its exec rules and these share one filter, whose notifications
 * the log's listener answers, a connect by isd_connect_guard_answer
 * (src/activity.c, dispatched by the syscall number).
 */
#define _GNU_SOURCE
#include "connect-guard.h"
#include "isd/process.h"
#include "isd/seccomp.h"
#include "isd/util.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
/* Refused as Landlock refuses a connect (and a payload reads it so). */
#define REFUSED (-EACCES)
/* The kernel's own connect(2), for what is no IP socket. */
#define PASS 1

struct guard_forward {
	uint16_t sandbox_port;
	bool v4; /* the target: v4 (mapped on IPv6 sockets), else v6 */
	struct sockaddr_in to4;
	struct sockaddr_in6 to6;
};

struct isd_connect_guard {
	struct sock_filter *filter;
	unsigned short len;
	uint16_t port;
	bool take_fds; /* pidfd_getfd works */
	struct guard_forward forwards[ISD_CONNECT_GUARD_MAX_FORWARDS];
	size_t n_forwards;
	int listener;
	int stop_pipe[2];
	bool thread_started;
	pthread_t thread;
};

/* Whether this process may take a descriptor of another at all: without,
 * answer_replaced. */
int isd_connect_guard_possible(void)
{
	_cleanup_close_ int self = (int)syscall(SYS_pidfd_open, getpid(), 0), fd = -1;

	if (self < 0)
		return -errno;
	fd = (int)syscall(SYS_pidfd_getfd, self, self, 0);
	return fd < 0 ? -errno : 0;
}

int isd_connect_guard_new(uint16_t relay_port, struct isd_connect_guard **out)
{
	struct isd_connect_guard *g = isd_xcalloc(1, sizeof(*g));
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r;

	g->take_fds = isd_connect_guard_possible() == 0;
	g->port = relay_port;
	g->listener = g->stop_pipe[0] = g->stop_pipe[1] = -1;
	if (!ctx) {
		free(g);
		return isd_error(-ENOMEM, "creating the connect guard's seccomp filter");
	}
	/* Other architectures (i386, x32) the socket filter refuses whole. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0);
	if (r == 0)
		r = isd_seccomp_export(ctx, &g->filter, &g->len);
	seccomp_release(ctx);
	if (r < 0) {
		isd_connect_guard_free(g);
		return isd_error(r, "building the connect guard's seccomp filter");
	}
	*out = g;
	return 0;
}

int isd_connect_guard_install(const struct isd_connect_guard *g, int sock)
{
	struct sock_fprog prog = {.len = g->len, .filter = g->filter};
	unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);

	/* Before Linux 5.19 a signal interrupts the wait for isd's answer
	 * (the connect, done by isd, then says EISCONN when restarted). */
	int r;

	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		return errno == EBUSY ? -EBUSY : isd_error(-errno, "installing the connect guard's seccomp filter");
	r = isd_send_with_fd(sock, "l", 1, (int)fd);
	close((int)fd);
	return r < 0 ? isd_error(r, "passing the connect guard's listener to isd") : 0;
}

static bool is_relay4(const struct in_addr *a)
{
	return a->s_addr == htonl(INADDR_LOOPBACK);
}

int isd_connect_guard_check(int domain, const void *addr, size_t len, uint16_t relay_port,
			    struct sockaddr_storage *dst, socklen_t *dst_len)
{
	sa_family_t family;

	memset(dst, 0, sizeof(*dst));
	/* As the kernel's move_addr_to_kernel and inet_stream_connect. */
	if (len > sizeof(struct sockaddr_storage) || len < sizeof(sa_family_t))
		return -EINVAL;
	memcpy(&family, addr, sizeof(family));
	if (family == AF_UNSPEC) {
		dst->ss_family = AF_UNSPEC;
		*dst_len = sizeof(sa_family_t);
		return 0;
	}
	if (domain == AF_INET && family == AF_INET) {
		struct sockaddr_in in, *out = (struct sockaddr_in *)dst;

		if (len < sizeof(in))
			return -EINVAL;
		memcpy(&in, addr, sizeof(in));
		if (!is_relay4(&in.sin_addr) || ntohs(in.sin_port) != relay_port)
			return REFUSED;
		out->sin_family = AF_INET;
		out->sin_port = htons(relay_port);
		out->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*dst_len = sizeof(*out);
		return 0;
	}
	if (domain == AF_INET6 && family == AF_INET6) {
		struct sockaddr_in6 in6, *out = (struct sockaddr_in6 *)dst;
		struct in_addr v4;

		/* SIN6_LEN_RFC2133: the kernel takes one without scope id */
		if (len < 24)
			return -EINVAL;
		memset(&in6, 0, sizeof(in6));
		memcpy(&in6, addr, len < sizeof(in6) ? len : sizeof(in6));
		memcpy(&v4, &in6.sin6_addr.s6_addr[12], sizeof(v4));
		if (!IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr) || !is_relay4(&v4) || ntohs(in6.sin6_port) != relay_port)
			return REFUSED;
		out->sin6_family = AF_INET6;
		out->sin6_port = htons(relay_port);
		out->sin6_addr.s6_addr[10] = out->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&out->sin6_addr.s6_addr[12], &v4, sizeof(v4));
		*dst_len = sizeof(*out);
		return 0;
	}
	return REFUSED;
}

int isd_connect_guard_add_forward(struct isd_connect_guard *g, uint16_t sandbox_port, const char *host,
				  uint16_t host_port)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL, *pick = NULL;
	struct guard_forward *f;
	int r;

	if (g->n_forwards >= ISD_CONNECT_GUARD_MAX_FORWARDS)
		return isd_error(-E2BIG, "--forward: this tier takes %d at most", ISD_CONNECT_GUARD_MAX_FORWARDS);
	r = getaddrinfo(host, NULL, &hints, &res);
	if (r)
		return isd_error(-EHOSTUNREACH, "--forward %u:%s:%u: resolving %s: %s", sandbox_port, host, host_port,
				 host, gai_strerror(r));
	/* IPv4 first: it serves both kinds of socket. */
	for (struct addrinfo *a = res; a && !pick; a = a->ai_next)
		if (a->ai_family == AF_INET)
			pick = a;
	for (struct addrinfo *a = res; a && !pick; a = a->ai_next)
		if (a->ai_family == AF_INET6)
			pick = a;
	if (!pick) {
		freeaddrinfo(res);
		return isd_error(-EHOSTUNREACH, "--forward %u:%s:%u: no IP address for %s", sandbox_port, host,
				 host_port, host);
	}
	f = &g->forwards[g->n_forwards++];
	memset(f, 0, sizeof(*f));
	f->sandbox_port = sandbox_port;
	f->v4 = pick->ai_family == AF_INET;
	if (f->v4) {
		memcpy(&f->to4, pick->ai_addr, sizeof(f->to4));
		f->to4.sin_port = htons(host_port);
		f->to6.sin6_family = AF_INET6;
		f->to6.sin6_port = htons(host_port);
		f->to6.sin6_addr.s6_addr[10] = f->to6.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&f->to6.sin6_addr.s6_addr[12], &f->to4.sin_addr, 4);
	} else {
		memcpy(&f->to6, pick->ai_addr, sizeof(f->to6));
		f->to6.sin6_port = htons(host_port);
	}
	freeaddrinfo(res);
	return 0;
}

int isd_connect_guard_decide(const struct isd_connect_guard *g, int domain, const void *addr, size_t len,
			     struct sockaddr_storage *dst, socklen_t *dst_len)
{
	int r = isd_connect_guard_check(domain, addr, len, g->port, dst, dst_len);
	sa_family_t family;
	struct in_addr v4;
	uint16_t port;

	if (r != REFUSED)
		return r;
	/* Not the relay: a forward's port on 127.0.0.1, its target built
	 * by isd.  (The check above held the lengths: at least a family.) */
	memcpy(&family, addr, sizeof(family));
	if (family != domain || len < (domain == AF_INET ? sizeof(struct sockaddr_in) : 24))
		return REFUSED;
	if (domain == AF_INET) {
		struct sockaddr_in in;
		memcpy(&in, addr, sizeof(in));
		v4 = in.sin_addr;
		port = ntohs(in.sin_port);
	} else {
		struct sockaddr_in6 in6;
		memset(&in6, 0, sizeof(in6));
		memcpy(&in6, addr, len < sizeof(in6) ? len : sizeof(in6));
		if (!IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr))
			return REFUSED;
		memcpy(&v4, &in6.sin6_addr.s6_addr[12], sizeof(v4));
		port = ntohs(in6.sin6_port);
	}
	if (!is_relay4(&v4))
		return REFUSED;
	for (size_t i = 0; i < g->n_forwards; i++) {
		const struct guard_forward *f = &g->forwards[i];
		if (f->sandbox_port != port)
			continue;
		memset(dst, 0, sizeof(*dst));
		if (domain == AF_INET && !f->v4)
			return -ENETUNREACH; /* an IPv6 target, an IPv4 socket */
		if (domain == AF_INET) {
			memcpy(dst, &f->to4, sizeof(f->to4));
			*dst_len = sizeof(f->to4);
		} else {
			memcpy(dst, &f->to6, sizeof(f->to6));
			*dst_len = sizeof(f->to6);
		}
		return 0;
	}
	return REFUSED;
}

static bool still_valid(int listener, const struct seccomp_notif *req)
{
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0;
}

/* A pidfd of the calling thread, whose fd table the call names. */
static int open_caller(const struct seccomp_notif *req)
{
	long ns_pid, ppid, tgid = -1;
	int fd = (int)syscall(SYS_pidfd_open, (pid_t)req->pid, PIDFD_THREAD);

	if (fd >= 0 || errno != EINVAL)
		return fd;
	/* Before Linux 6.9 only a thread group's leader has a pidfd; its
	 * threads share its fd table (but for unshare(CLONE_FILES), whose
	 * socket then goes only to the relay, or on to the kernel, all the
	 * same). */
	isd_process_status((pid_t)req->pid, &ns_pid, &ppid, &tgid);
	return tgid > 0 ? (int)syscall(SYS_pidfd_open, (pid_t)tgid, 0) : -1;
}

/* The call's address, read once into buf: its length, or -errno. */
static int read_address(int listener, const struct seccomp_notif *req, unsigned char *buf)
{
	int len = (int)req->data.args[2];

	if (len < 0 || (size_t)len > sizeof(struct sockaddr_storage))
		return -EINVAL;
	if (len > 0) {
		struct iovec local = {.iov_base = buf, .iov_len = (size_t)len};
		struct iovec remote = {.iov_base = (void *)(uintptr_t)req->data.args[1], .iov_len = (size_t)len};

		if (process_vm_readv((pid_t)req->pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
			return errno == EPERM ? REFUSED : -EFAULT;
	}
	/* what was read was the caller's, alive since */
	return still_valid(listener, req) ? len : REFUSED;
}

/* With pidfd_getfd: the payload's own socket, connected by isd. */
static int answer_taken(const struct isd_connect_guard *g, int listener, const struct seccomp_notif *req)
{
	_cleanup_close_ int pidfd = -1, sock = -1;
	struct sockaddr_storage dst;
	unsigned char buf[sizeof(struct sockaddr_storage)];
	int domain = 0, len, r;
	socklen_t dst_len = 0, dlen = sizeof(domain);
	struct stat st;

	pidfd = open_caller(req);
	/* valid after the pidfd: its pid is the caller's, not a reuse */
	if (pidfd < 0 || !still_valid(listener, req))
		return REFUSED;
	sock = (int)syscall(SYS_pidfd_getfd, pidfd, (int)req->data.args[0], 0);
	if (sock < 0)
		return errno == EBADF ? -EBADF : REFUSED;
	if (fstat(sock, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) < 0 || (domain != AF_INET && domain != AF_INET6))
		return PASS;
	if ((len = read_address(listener, req, buf)) < 0)
		return len;
	r = isd_connect_guard_decide(g, domain, buf, (size_t)len, &dst, &dst_len);
	if (r < 0)
		return r;
	return connect(sock, (struct sockaddr *)&dst, dst_len) < 0 ? -errno : 0;
}

/* The file status flags of the caller's descriptor fd, or -errno. */
static int fd_flags(const struct seccomp_notif *req, int fd)
{
	char path[64], text[256];
	_cleanup_close_ int f = -1;
	unsigned flags;
	ssize_t n;
	char *at;

	snprintf(path, sizeof(path), "/proc/%u/fdinfo/%d", req->pid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return errno == ENOENT ? -EBADF : REFUSED;
	n = read(f, text, sizeof(text) - 1);
	if (n <= 0)
		return REFUSED;
	text[n] = '\0';
	at = strstr(text, "flags:");
	return at && sscanf(at + 6, "%o", &flags) == 1 ? (int)(flags & 07777777) : REFUSED;
}

/* Without pidfd_getfd (Docker's default profile refuses it): what the
 * address says, never the socket.  No IP address: the kernel's connect,
 * in the payload's Landlock domain, which refuses every TCP connect (an
 * address rewritten meanwhile gains nothing).  The relay's: a socket isd
 * makes and connects takes the descriptor's place (SECCOMP_ADDFD_FLAG_
 * SETFD, as dup2 does), non-blocking and close-on-exec as the one it
 * replaces.  What the payload set on its own socket (TCP_NODELAY,
 * buffers) is lost: isd's has TCP_NODELAY, as a loopback's may. */
static int answer_replaced(const struct isd_connect_guard *g, int listener, const struct seccomp_notif *req)
{
	unsigned char buf[sizeof(struct sockaddr_storage)];
	struct sockaddr_storage dst;
	socklen_t dst_len = 0;
	sa_family_t family;
	int fd = (int)req->data.args[0], len = read_address(listener, req, buf), flags, one = 1, r;
	_cleanup_close_ int sock = -1;
	struct seccomp_notif_addfd add = {.id = req->id, .flags = SECCOMP_ADDFD_FLAG_SETFD, .newfd = (uint32_t)fd};

	if (len < 0)
		return len;
	if ((size_t)len < sizeof(family))
		return PASS;
	memcpy(&family, buf, sizeof(family));
	if (family != AF_INET && family != AF_INET6)
		return PASS;
	if ((r = isd_connect_guard_decide(g, family, buf, (size_t)len, &dst, &dst_len)) < 0)
		return r;
	if (fd < 0 || (flags = fd_flags(req, fd)) < 0)
		return fd < 0 ? -EBADF : flags;
	sock = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	(void)setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(sock, (struct sockaddr *)&dst, dst_len) < 0)
		return -errno;
	if ((flags & O_NONBLOCK) && fcntl(sock, F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	add.srcfd = (uint32_t)sock;
	add.newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 ? -errno : 0;
}

void isd_connect_guard_answer(const struct isd_connect_guard *g, int listener, const struct seccomp_notif *req)
{
	struct seccomp_notif_resp resp;
	int r = g->take_fds ? answer_taken(g, listener, req) : answer_replaced(g, listener, req);

	memset(&resp, 0, sizeof(resp));
	resp.id = req->id;
	if (r == PASS)
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	else
		resp.error = r;
	(void)!ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static void handle_one(const struct isd_connect_guard *g)
{
	struct seccomp_notif req;

	memset(&req, 0, sizeof(req));
	if (ioctl(g->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return; /* ENOENT: the caller died before we got to it */
	isd_connect_guard_answer(g, g->listener, &req);
}

static void *listen_loop(void *arg)
{
	const struct isd_connect_guard *g = arg;
	struct pollfd p[2] = {{.fd = g->listener, .events = POLLIN}, {.fd = g->stop_pipe[0], .events = POLLIN}};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents & POLLIN)
			handle_one(g);
		else if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			break; /* every task under the filter is gone */
	}
	return NULL;
}

int isd_connect_guard_start(struct isd_connect_guard *g, int sock)
{
	sigset_t all, old;
	ssize_t n;
	char c;
	int r;

	do
		n = isd_recv_with_fd(sock, &c, 1, 0, &g->listener);
	while (n == -EINTR);
	if (g->listener < 0)
		return 0;
	if (pipe2(g->stop_pipe, O_CLOEXEC) < 0)
		return isd_error(-errno, "creating the connect guard's pipe");
	/* Signals are the main thread's (forwarding, the terminal relay). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&g->thread, NULL, listen_loop, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return isd_error(r, "starting the connect guard's thread");
	g->thread_started = true;
	return 0;
}

void isd_connect_guard_free(struct isd_connect_guard *g)
{
	if (!g)
		return;
	if (g->thread_started) {
		(void)!write(g->stop_pipe[1], "x", 1);
		pthread_join(g->thread, NULL);
	}
	/* Closed, the listener fails what still waits (ENOSYS): nothing of
	 * the payload hangs on a guard that is gone. */
	if (g->listener >= 0)
		close(g->listener);
	for (int i = 0; i < 2; i++)
		if (g->stop_pipe[i] >= 0)
			close(g->stop_pipe[i]);
	free(g->filter);
	free(g);
}
