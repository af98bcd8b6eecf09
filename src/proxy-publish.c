/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --publish at run time, --forward the other way round.  isd listens on
 * the host's address (bound before the sandbox exists) and, for each
 * connection it accepts there, asks the socket factory for a TCP socket of
 * the sandbox's network namespace, connects it to 127.0.0.1:PORT inside
 * (then [::1]:PORT: servers told to bind "localhost" often take ::1 only)
 * and relays with the tunnel code and its bounded buffers.
 *
 * The factory is a process forked from isd that enters the sandbox's user
 * and network namespaces (init hands over the namespace, as it hands over
 * its listening sockets) and answers each request with a new socket over
 * SCM_RIGHTS.  A socket stays in the namespace it was made in wherever its
 * descriptor goes, so the relay itself never leaves the host's namespaces.
 * Entering takes CAP_SYS_ADMIN over the sandbox's user namespace, which
 * its creator holds without privileges, and a single-threaded process
 * (setns into a user namespace), hence a process and not a thread of isd.
 * It is no process of the sandbox (not in its pid or mount namespace, nor
 * its cgroup), keeps no capability and is not dumpable: a payload that
 * can see it (--pid host) cannot trace it, only kill it, which ends the
 * published ports and nothing else.
 */
#define _GNU_SOURCE
#include "proxy-internal.h"
#include "isd/util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define FACTORY_READY_TIMEOUT_MS 10000

struct factory_request {
	uint64_t cookie;
	int32_t family;
	int32_t unused;
};

struct factory_reply {
	uint64_t cookie; /* 0: the factory is ready (or failed: stage) */
	int32_t err;     /* -errno, 0 with a socket attached */
	int32_t stage;
};

enum { STAGE_USERNS = 1, STAGE_ENTER_USERNS, STAGE_ENTER_NETNS, STAGE_CAPS };

/* ---- the factory (async-signal-safe calls only: isd has threads) ---- */

static void factory_send(int sock, const struct factory_reply *reply, int fd)
{
	(void)!isd_send_with_fd(sock, reply, sizeof(*reply), fd);
}

static _Noreturn void factory_fail(int sock, int stage)
{
	struct factory_reply reply = {.err = -errno, .stage = stage};

	factory_send(sock, &reply, -1);
	_exit(1);
}

static _Noreturn void factory_main(int sock_in, int netns_in, pid_t parent)
{
	struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct caps[2];
	struct factory_reply ready = {0};
	const int sock = 3, netns = 4;
	sigset_t all;
	int userns, null_fd;

	prctl(PR_SET_DUMPABLE, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	/* No signal of the caller's terminal (a Ctrl-C is the payload's), nor
	 * any of isd's handlers: it ends with isd or when isd closes its end. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	setsid();
	/* Only its two descriptors, at fixed numbers, and /dev/null. */
	sock_in = fcntl(sock_in, F_DUPFD, 100);
	netns_in = fcntl(netns_in, F_DUPFD, 100);
	if (sock_in < 0 || netns_in < 0 || dup2(sock_in, sock) < 0 || dup2(netns_in, netns) < 0)
		_exit(1);
	syscall(SYS_close_range, 5U, ~0U, 0U);
	null_fd = open("/dev/null", O_RDWR);
	for (int fd = 0; null_fd >= 0 && fd < 3; fd++)
		dup2(null_fd, fd);
	if (null_fd > 4)
		close(null_fd);

	userns = ioctl(netns, NS_GET_USERNS);
	if (userns < 0)
		factory_fail(sock, STAGE_USERNS);
	if (setns(userns, CLONE_NEWUSER) < 0)
		factory_fail(sock, STAGE_ENTER_USERNS);
	if (setns(netns, CLONE_NEWNET) < 0)
		factory_fail(sock, STAGE_ENTER_NETNS);
	close(userns);
	close(netns);
	/* Joining the user namespace gave every capability in it: none is
	 * needed to make sockets. */
	memset(caps, 0, sizeof(caps));
	if (syscall(SYS_capset, &head, caps) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		factory_fail(sock, STAGE_CAPS);
	prctl(PR_SET_DUMPABLE, 0);
	factory_send(sock, &ready, -1);

	for (;;) {
		struct factory_request req;
		struct factory_reply reply = {0};
		ssize_t n = recv(sock, &req, sizeof(req), 0);
		int fd;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		if ((size_t)n != sizeof(req) || !req.cookie)
			continue;
		fd = socket(req.family == AF_INET6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		reply.cookie = req.cookie;
		reply.err = fd < 0 ? -errno : 0;
		factory_send(sock, &reply, fd);
		if (fd >= 0)
			close(fd);
	}
}

/* ---- isd's side ---- */

int proxy_publish_listen(struct isd_proxy *p)
{
	for (size_t i = 0; i < p->cfg->n_publish; i++) {
		const struct isd_publish *pub = &p->cfg->publish[i];
		struct sockaddr_storage ss;
		socklen_t sl = proxy_sockaddr(&pub->addr, pub->host_port, &ss);
		char addr[INET6_ADDRSTRLEN], shown[INET6_ADDRSTRLEN + 8];
		int fd = socket(pub->addr.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
		struct listener *l;

		isd_addr_format(&pub->addr, addr, sizeof(addr));
		proxy_format_target(addr, pub->host_port, shown, sizeof(shown));
		if (fd < 0)
			return isd_error(-errno, "--publish: creating a socket for %s", shown);
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		/* [::] means IPv6 only: 0.0.0.0 is written out when wanted. */
		if (pub->addr.family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, SOMAXCONN) < 0) {
			int r = isd_error(-errno, "--publish: listening on %s on the host", shown);

			if (r == -EADDRINUSE)
				isd_error_hint("another program has that port; publish another host port");
			else if (r == -EACCES)
				isd_error_hint("ports below net.ipv4.ip_unprivileged_port_start need privileges; "
					       "publish a higher host port");
			else if (r == -EADDRNOTAVAIL)
				isd_error_hint("%s is not an address of this host", addr);
			close(fd);
			return r;
		}
		l = isd_xcalloc(1, sizeof(*l));
		l->ev.kind = EV_LISTENER;
		l->fd = fd;
		l->role = ISD_NET_FD_PUBLISH;
		l->index = (uint32_t)i;
		l->next = p->listeners;
		p->listeners = l;
	}
	return 0;
}

int proxy_publish_start(struct isd_proxy *p)
{
	static const char *const stages[] = {
		[STAGE_USERNS] = "finding its user namespace",
		[STAGE_ENTER_USERNS] = "entering its user namespace",
		[STAGE_ENTER_NETNS] = "entering it",
		[STAGE_CAPS] = "dropping capabilities",
	};
	struct factory_reply ready;
	struct pollfd pfd;
	pid_t parent = getpid(), pid;
	int sv[2], r;
	ssize_t n;

	if (!p->cfg->n_publish)
		return 0;
	if (p->netns_fd < 0)
		return isd_error(-EPROTO, "--publish: the sandbox did not hand over its network namespace");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return isd_error(-errno, "--publish: creating the socket factory's socket");
	pid = fork();
	if (pid < 0) {
		r = isd_error(-errno, "--publish: starting the socket factory");
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0)
		factory_main(sv[1], p->netns_fd, parent);
	close(sv[1]);
	close(p->netns_fd);
	p->netns_fd = -1;
	p->factory_pid = pid;
	p->factory_fd = sv[0];
	pfd = (struct pollfd){.fd = sv[0], .events = POLLIN};
	do
		r = poll(&pfd, 1, FACTORY_READY_TIMEOUT_MS);
	while (r < 0 && errno == EINTR);
	n = r > 0 ? recv(sv[0], &ready, sizeof(ready), MSG_DONTWAIT) : -1;
	if (n != (ssize_t)sizeof(ready) || ready.cookie || ready.err) {
		int stage = n == (ssize_t)sizeof(ready) ? ready.stage : 0;

		r = isd_error(n == (ssize_t)sizeof(ready) && ready.err ? ready.err : -EPROTO,
			      "--publish: the socket factory for the sandbox's network namespace failed %s",
			      stage > 0 && stage <= STAGE_CAPS ? stages[stage] : "to start");
		proxy_publish_stop(p);
		return r;
	}
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	proxy_epoll_add(p, sv[0], &p->factory_ev, EPOLLIN | EPOLLRDHUP | EPOLLET);
	return 0;
}

void proxy_publish_stop(struct isd_proxy *p)
{
	if (p->netns_fd >= 0)
		close(p->netns_fd);
	p->netns_fd = -1;
	if (p->factory_fd >= 0)
		close(p->factory_fd); /* the factory's recv ends: it exits */
	p->factory_fd = -1;
	/* Killed also when stopped (SIGSTOP from a payload that sees it),
	 * but only while it is still an unreaped child of ours, whose pid
	 * nothing else can have: --pid host has isd reap what was left. */
	if (p->factory_pid > 0 && waitpid(p->factory_pid, NULL, WNOHANG) == 0) {
		kill(p->factory_pid, SIGKILL);
		while (waitpid(p->factory_pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	p->factory_pid = -1;
}

static void request_socket(struct isd_proxy *p, struct conn *c)
{
	struct factory_request req = {.cookie = ++p->next_cookie, .family = c->addrs[c->next_addr].family};
	char reason[200];

	c->cookie = req.cookie;
	c->state = ST_RESOLVING;
	c->deadline = time(NULL) + CONNECT_TIMEOUT;
	if (p->factory_fd < 0) {
		proxy_conn_fail(p, c, 502, "the socket factory for the sandbox's network namespace is gone");
		return;
	}
	if (send(p->factory_fd, &req, sizeof(req), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(req)) {
		snprintf(reason, sizeof(reason), "asking for a socket in the sandbox: %s", strerror(errno));
		proxy_conn_fail(p, c, 502, reason);
	}
}

void proxy_publish_accept(struct isd_proxy *p, const struct listener *l, int fd)
{
	const struct isd_publish *pub = &p->cfg->publish[l->index];
	struct conn *c = proxy_conn_new(p, CK_PUBLISH, fd);

	c->no_policy = true;
	c->fwd_index = (int)l->index;
	snprintf(c->what, sizeof(c->what), "publish");
	snprintf(c->host, sizeof(c->host), "127.0.0.1");
	c->port = pub->sandbox_port;
	c->addrs[0] = (struct isd_addr){.family = AF_INET, .v4.s_addr = htonl(INADDR_LOOPBACK)};
	c->addrs[1] = (struct isd_addr){.family = AF_INET6, .v6 = IN6ADDR_LOOPBACK_INIT};
	c->n_addrs = 2;
	c->next_addr = 0;
	request_socket(p, c);
}

void proxy_publish_connect_failed(struct isd_proxy *p, struct conn *c, int err)
{
	char reason[300];

	if (c->next_addr == 1)
		c->publish_err = err;
	/* Only "nobody there" moves on to ::1; a timeout is the answer. */
	if (c->next_addr < c->n_addrs && err == ECONNREFUSED) {
		request_socket(p, c);
		return;
	}
	snprintf(c->host, sizeof(c->host), "127.0.0.1");
	if (c->publish_err == ECONNREFUSED && (err == ECONNREFUSED || err == EADDRNOTAVAIL || err == EAFNOSUPPORT ||
					       err == ENETUNREACH))
		snprintf(reason, sizeof(reason), "nothing listens on port %u in the sandbox (127.0.0.1 and ::1 refused)",
			 c->port);
	else
		snprintf(reason, sizeof(reason), "connecting to port %u in the sandbox failed: %s", c->port,
			 strerror(c->publish_err ? c->publish_err : err));
	proxy_conn_fail(p, c, 502, reason);
}

/* A socket made inside: connect it to the next loopback address. */
static void connect_inside(struct isd_proxy *p, struct conn *c, int fd)
{
	const struct isd_addr *a = &c->addrs[c->next_addr++];
	struct sockaddr_storage ss;
	socklen_t sl = proxy_sockaddr(a, c->port, &ss);
	int err;

	c->connected = *a;
	if (a->family == AF_INET6)
		snprintf(c->host, sizeof(c->host), "::1");
	if (proxy_connect_begin(p, c, fd, &ss, sl))
		return;
	err = errno;
	close(fd);
	proxy_publish_connect_failed(p, c, err);
}

static struct conn *waiting_for(struct isd_proxy *p, uint64_t cookie)
{
	for (struct conn *c = p->conns; c; c = c->next)
		if (c->kind == CK_PUBLISH && c->state == ST_RESOLVING && c->cookie == cookie)
			return c;
	return NULL;
}

void proxy_publish_factory_event(struct isd_proxy *p)
{
	for (;;) {
		struct factory_reply reply;
		int fd = -1;
		ssize_t n = p->factory_fd < 0 ? 0 : isd_recv_with_fd(p->factory_fd, &reply, sizeof(reply), MSG_DONTWAIT, &fd);
		struct conn *c;

		if (n == -EAGAIN || n == -EINTR)
			return;
		if (n <= 0) {
			/* Gone (killed): what waits for it fails, later
			 * connections too; the sandbox goes on. */
			/* (no line of its own: with --pid host it is killed
			 * at the end of every run) */
			if (p->factory_fd >= 0) {
				close(p->factory_fd);
				p->factory_fd = -1;
			}
			for (struct conn *w = p->conns, *next; w; w = next) {
				next = w->next;
				if (w->kind == CK_PUBLISH && w->state == ST_RESOLVING)
					proxy_conn_fail(p, w, 502, "the socket factory is gone");
			}
			return;
		}
		c = (size_t)n == sizeof(reply) && reply.cookie ? waiting_for(p, reply.cookie) : NULL;
		if (!c) {
			/* its client left while the socket was being made */
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (fd < 0 && c->next_addr > 0) {
			/* no IPv6 in the sandbox: ::1 is not there either */
			c->next_addr++;
			proxy_publish_connect_failed(p, c, reply.err < 0 ? -reply.err : EPROTO);
			continue;
		}
		if (fd < 0) {
			char reason[200];

			snprintf(reason, sizeof(reason), "creating a socket in the sandbox: %s",
				 strerror(reply.err < 0 ? -reply.err : EPROTO));
			proxy_conn_fail(p, c, 502, reason);
			continue;
		}
		connect_inside(p, c, fd);
	}
}
