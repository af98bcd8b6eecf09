/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host side of netless networking: one thread of isd running an epoll
 * loop over the listening sockets the sandbox handed over (see
 * isd_net_sandbox_listeners()).  Per connection: read the request (HTTP
 * CONNECT or absolute URI, SOCKS5, or a captured connection to a fake
 * address), decide with the allowlist, resolve on the host (worker
 * threads), refuse answers that point at the host's own or private
 * addresses, connect from the host's network namespace and relay with
 * half-close.  Sockets are non-blocking and edge-triggered: one slow or
 * stuck peer never holds up another.
 */
#define _GNU_SOURCE
#include "proxy-internal.h"
#include "isd/spec.h"
#include "isd/process.h"
#include "isd/util.h"
#include "testhooks.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <unistd.h>

#define conn_of(evp, member) ((struct conn *)((char *)(evp) - offsetof(struct conn, member)))

void proxy_format_target(const char *host, uint16_t port, char *buf, size_t len)
{
	if (strchr(host, ':'))
		snprintf(buf, len, "[%s]:%u", host, port);
	else
		snprintf(buf, len, "%s:%u", host, port);
}

static bool is_own_addr(const struct isd_proxy *p, const struct isd_addr *a)
{
	for (size_t i = 0; i < p->n_own; i++)
		if (isd_addr_equal(&p->own[i], a))
			return true;
	return false;
}

static void on_connected(struct isd_proxy *p, struct conn *c)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	static const uint8_t socks_ok[] = {5, 0, 0, 1, 0, 0, 0, 0, 0, 0};
	int one = 1;

	if (c->kind != CK_FORWARD_UNIX)
		setsockopt(c->ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->deadline = 0;
	if (c->kind == CK_PROXY && c->socks) {
		proxy_buf_append(p, &c->u2c, socks_ok, sizeof(socks_ok));
		c->own_down = sizeof(socks_ok);
	} else if (c->kind == CK_PROXY && !strcmp(c->what, "CONNECT")) {
		proxy_buf_append(p, &c->u2c, ok, sizeof(ok) - 1);
		c->own_down = sizeof(ok) - 1;
	}
	if (c->sni_check) {
		c->state = ST_SNI;
		c->deadline = time(NULL) + HEAD_TIMEOUT;
	} else {
		proxy_in_to_upstream(p, c);
		c->state = ST_RELAY;
	}
	proxy_pump(p, c);
}

socklen_t proxy_sockaddr(const struct isd_addr *a, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		s4->sin_addr = a->v4;
		return sizeof(*s4);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	s6->sin6_addr = a->v6;
	return sizeof(*s6);
}

bool proxy_connect_begin(struct isd_proxy *p, struct conn *c, int fd, const struct sockaddr_storage *ss, socklen_t sl)
{
	if (connect(fd, (const struct sockaddr *)ss, sl) < 0 && errno != EINPROGRESS)
		return false;
	c->ufd = fd;
	proxy_epoll_add(p, fd, &c->uev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
	c->state = ST_CONNECTING;
	c->deadline = time(NULL) + CONNECT_TIMEOUT;
	return true;
}

static void connect_next(struct isd_proxy *p, struct conn *c, int last_err)
{
	while (c->next_addr < c->n_addrs) {
		struct isd_addr *a = &c->addrs[c->next_addr++];
		struct sockaddr_storage ss;
		socklen_t sl = proxy_sockaddr(a, c->port, &ss);
		int fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			last_err = errno;
			continue;
		}
		c->connected = *a;
		if (proxy_connect_begin(p, c, fd, &ss, sl))
			return;
		last_err = errno;
		close(fd);
	}
	{
		char reason[512], addr[INET6_ADDRSTRLEN];
		isd_addr_format(&c->connected, addr, sizeof(addr));
		snprintf(reason, sizeof(reason), "connecting to %s failed: %s", addr, strerror(last_err));
		proxy_conn_fail(p, c, last_err == ETIMEDOUT ? 504 : 502, reason);
	}
}

static void on_resolved(struct isd_proxy *p, struct conn *c, struct resolve_job *job)
{
	char reason[1200] = "", addr[INET6_ADDRSTRLEN], target[300];
	size_t kept = 0;

	if (job->err || !job->n_addrs) {
		snprintf(reason, sizeof(reason), "cannot resolve %s on the host: %s", c->host,
			 job->err ? gai_strerror(job->err) : "no address");
		proxy_conn_fail(p, c, 502, reason);
		return;
	}
	for (size_t i = 0; i < job->n_addrs; i++) {
		const struct isd_addr *a = &job->addrs[i];
		enum isd_addr_class cls = isd_addr_classify(a);
		bool ok = c->no_policy || isd_allow_addr(p->cfg, a, c->port) ||
			  (cls == ISD_ADDR_PUBLIC && !is_own_addr(p, a));

		if (!ok && !kept && !reason[0]) {
			/* no DNS rebinding onto the host's services */
			isd_addr_format(a, addr, sizeof(addr));
			proxy_format_target(addr, c->port, target, sizeof(target));
			snprintf(reason, sizeof(reason),
				 "%s resolves to %s, a%s %s address; isd refuses such answers unless the address itself is allowed: add --allow %s",
				 c->host, addr, cls == ISD_ADDR_PUBLIC ? "n" : "", cls != ISD_ADDR_PUBLIC ? isd_addr_class_name(cls) : "own (this host's)",
				 target);
		}
		if (ok && kept < sizeof(c->addrs) / sizeof(c->addrs[0]))
			c->addrs[kept++] = *a;
	}
	if (!kept) {
		proxy_conn_fail(p, c, 403, reason);
		return;
	}
	c->n_addrs = kept;
	c->next_addr = 0;
	connect_next(p, c, ECONNREFUSED);
}

static void resolved_cb(struct isd_proxy *p, struct conn *c, struct resolve_job *job)
{
	on_resolved(p, c, job);
}

/* Policy, then resolution, then connect. */
static void decide(struct isd_proxy *p, struct conn *c)
{
	struct isd_addr lit;
	const struct isd_add_host *h;
	const struct isd_allow_rule *rule = NULL;

	c->state = ST_RESOLVING;
	c->deadline = time(NULL) + 2 * CONNECT_TIMEOUT;
	if (c->kind == CK_FORWARD_UNIX) {
		const char *path = p->cfg->forwards_unix[c->fwd_index].host_path;
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
			char reason[600];
			snprintf(reason, sizeof(reason), "connecting to %s failed: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			proxy_conn_fail(p, c, 502, reason);
			return;
		}
		c->ufd = fd;
		proxy_epoll_add(p, fd, &c->uev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
		on_connected(p, c);
		return;
	}
	if (!c->no_policy && !(rule = isd_allow_match(p->cfg, c->host, c->port))) {
		proxy_deny_not_allowed(p, c);
		return;
	}
	if (rule)
		c->rule = rule->text;
	if (isd_addr_parse(c->host, &lit) == 0) {
		c->addrs[0] = lit;
		c->n_addrs = 1;
		connect_next(p, c, ECONNREFUSED);
		return;
	}
	h = isd_netcfg_find_host(p->cfg, c->host);
	if (h) {
		/* --add-host NAME:IP makes IP explicitly allowed for NAME. */
		c->addrs[0] = h->addr;
		c->n_addrs = 1;
		connect_next(p, c, ECONNREFUSED);
		return;
	}
	proxy_resolver_submit(p, c, c->host);
}

/* What a request the parser refused asked for, for its record: the
 * request line's target as the sandbox wrote it (the record escapes it),
 * cut to fit. */
static void keep_raw_target(struct conn *c)
{
	const char *b = c->in.data + c->in.off, *end = b + c->in.len, *t = memchr(b, ' ', c->in.len);
	size_t n = 0;

	if (!t)
		return;
	for (t++; t + n < end && n < sizeof(c->host) - 1 && !strchr(" \r\n", t[n]) && t[n]; n++)
		;
	memcpy(c->host, t, n);
	c->host[n] = '\0';
}

static void http_head(struct isd_proxy *p, struct conn *c)
{
	struct isd_http_request req;
	int r = isd_http_parse_request(c->in.data + c->in.off, c->in.len, 80, &req);

	if (r == 0)
		return;
	snprintf(c->what, sizeof(c->what), "%s", r > 0 ? req.method : "request");
	if (r < 0)
		keep_raw_target(c);
	if (r == -E2BIG) {
		proxy_conn_fail(p, c, 400, "request line or header fields too large");
		return;
	}
	if (r == -ENOTSUP) {
		proxy_conn_fail(p, c, 400, "https:// URLs go through CONNECT; set HTTPS_PROXY");
		return;
	}
	if (r < 0) {
		proxy_conn_fail(p, c, 400, "malformed HTTP request");
		return;
	}
	if (!req.connect && !req.absolute) {
		proxy_conn_fail(p, c, 400, "this is isd's proxy: send CONNECT or an absolute http:// URI");
		return;
	}
	snprintf(c->host, sizeof(c->host), "%s", req.host);
	c->port = req.port;
	if (req.absolute) {
		/* rewritten once connected (proxy_in_to_upstream) */
		c->head_len = (size_t)r;
	} else {
		c->sni_check = true;
		c->in.off += (size_t)r;
		c->in.len -= (size_t)r;
	}
	decide(p, c);
}

static void socks_head(struct isd_proxy *p, struct conn *c)
{
	const uint8_t *b = (const uint8_t *)c->in.data + c->in.off;
	uint8_t cmd = 0;
	int r;

	if (c->state == ST_HEAD) {
		bool no_auth;
		r = isd_socks5_parse_greeting(b, c->in.len, &no_auth);
		if (r == 0)
			return;
		if (r < 0 || !no_auth) {
			static const uint8_t refuse[] = {5, 0xff};
			proxy_report_conn(p, c, ISD_NET_FAILED,
					  r < 0 ? "malformed SOCKS5 greeting" : "SOCKS5 without the no-authentication method",
					  false);
			proxy_buf_append(p, &c->u2c, refuse, sizeof(refuse));
			c->state = ST_LINGER;
			c->deadline = time(NULL) + LINGER_TIMEOUT;
			proxy_pump(p, c);
			return;
		}
		proxy_buf_append(p, &c->u2c, "\x05\x00", 2);
		c->in.off += (size_t)r;
		c->in.len -= (size_t)r;
		c->state = ST_SOCKS_REQ;
		if (!proxy_pump(p, c))
			return;
		b = (const uint8_t *)c->in.data + c->in.off;
	}
	r = isd_socks5_parse_request(b, c->in.len, c->host, sizeof(c->host), &c->port, &cmd);
	if (r == 0)
		return;
	if (r < 0 || cmd != 1) {
		static const uint8_t unsupported[] = {5, 7, 0, 1, 0, 0, 0, 0, 0, 0};
		proxy_report_conn(p, c, ISD_NET_FAILED,
				  r < 0 ? "malformed SOCKS5 request" : "SOCKS5 command other than CONNECT", false);
		proxy_buf_append(p, &c->u2c, unsupported, sizeof(unsupported));
		c->state = ST_LINGER;
		c->deadline = time(NULL) + LINGER_TIMEOUT;
		proxy_pump(p, c);
		return;
	}
	c->in.off += (size_t)r;
	c->in.len -= (size_t)r;
	c->sni_check = true;
	decide(p, c);
}

/* A captured connection: the fake address named the host already; the
 * ClientHello (443) or Host field (80) must name the same one. */
static void capture_head(struct isd_proxy *p, struct conn *c)
{
	char reason[1200];

	if (c->port == 443) {
		char sni[256];
		int r = isd_tls_parse_sni((const uint8_t *)c->in.data + c->in.off, c->in.len, sni, sizeof(sni));
		if (r == 0)
			return;
		if (r < 0) {
			proxy_conn_fail(p, c, 403, "not a TLS ClientHello on port 443");
			return;
		}
		if (sni[0] && strcmp(sni, c->host)) {
			snprintf(reason, sizeof(reason), "TLS server name %s differs from %s", sni, c->host);
			proxy_conn_fail(p, c, 403, reason);
			return;
		}
	} else {
		struct isd_http_request req;
		int r = isd_http_parse_request(c->in.data + c->in.off, c->in.len, 80, &req);
		if (r == 0)
			return;
		if (r < 0) {
			proxy_conn_fail(p, c, 400, "malformed HTTP request");
			return;
		}
		if (strcmp(req.host, c->host)) {
			snprintf(reason, sizeof(reason), "Host %s differs from %s", req.host, c->host);
			proxy_conn_fail(p, c, 403, reason);
			return;
		}
		/* Only this request was checked: it goes up with "Connection:
		 * close", so that the server takes no second one (with another
		 * Host) on this connection; the client reconnects for it. */
		c->head_len = (size_t)r;
	}
	decide(p, c);
}

static void sni_check(struct isd_proxy *p, struct conn *c)
{
	char sni[256], reason[1200];
	int r;

	if (!c->in.len)
		return;
	/* Whatever the port, a tunnel that starts TLS must name its target;
	 * on 443 it must start TLS.  Other protocols (ssh, ...) pass. */
	if (c->in.data[c->in.off] != 0x16 && c->port != 443) {
		r = 1;
		sni[0] = '\0';
	} else {
		r = isd_tls_parse_sni((const uint8_t *)c->in.data + c->in.off, c->in.len, sni, sizeof(sni));
	}
	if (r == 0)
		return;
	if (r < 0) {
		proxy_conn_fail(p, c, 403, c->port == 443 ? "a tunnel to port 443 must start with a TLS ClientHello"
						    : "malformed TLS ClientHello");
		return;
	}
	/* An IP-literal target has no name to compare. */
	if (sni[0] && strcmp(sni, c->host) && isd_addr_parse(c->host, &(struct isd_addr){0}) < 0) {
		snprintf(reason, sizeof(reason), "TLS server name %s differs from the CONNECT target %s (refused: domain fronting)",
			 sni, c->host);
		proxy_conn_fail(p, c, 403, reason);
		return;
	}
	c->sni_check = false;
	proxy_in_to_upstream(p, c);
	c->state = ST_RELAY;
	c->deadline = 0;
	proxy_pump(p, c);
}

static void client_event(struct isd_proxy *p, struct conn *c)
{
	size_t max = c->state == ST_SNI || (c->kind == CK_CAPTURE && c->port == 443) ? 16384 + 5 :
		     ISD_HTTP_MAX_HEADER + 1;
	int r;

	if (c->kind == CK_DNS_TCP) {
		proxy_dns_tcp_event(p, c);
		return;
	}

	switch (c->state) {
	case ST_HEAD:
	case ST_SOCKS_REQ:
	case ST_SNI:
		do
			r = proxy_buf_fill(p, c, c->cfd, &c->in, max);
		while (r == 1);
		if (r == -2 || (r == -1 && c->state != ST_SNI)) {
			if (r == -2)
				c->why_closed = "reading its request failed";
			proxy_conn_close(p, c);
			return;
		}
		if (c->state == ST_SNI) {
			if (r == -1 && !c->in.len) {
				proxy_conn_close(p, c);
				return;
			}
			sni_check(p, c);
			return;
		}
		if (c->kind == CK_CAPTURE)
			capture_head(p, c);
		else if (c->socks || (c->in.len && c->in.data[c->in.off] == 5)) {
			c->socks = true;
			snprintf(c->what, sizeof(c->what), "SOCKS5");
			socks_head(p, c);
		} else
			http_head(p, c);
		return;
	case ST_RESOLVING:
	case ST_CONNECTING:
		return; /* read later: backpressure until upstream exists */
	case ST_RELAY:
	case ST_LINGER:
		proxy_pump(p, c);
		return;
	}
}

static void upstream_event(struct isd_proxy *p, struct conn *c)
{
	if (c->state == ST_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err == 0) {
			/* Still in progress: the edge was not the connect. */
			struct sockaddr_storage ss;
			socklen_t sl = sizeof(ss);
			if (getpeername(c->ufd, (struct sockaddr *)&ss, &sl) < 0 && errno == ENOTCONN)
				return;
			on_connected(p, c);
			return;
		}
		close(c->ufd);
		c->ufd = -1;
		if (c->kind == CK_PUBLISH)
			proxy_publish_connect_failed(p, c, err);
		else
			connect_next(p, c, err);
		return;
	}
	if (c->state == ST_RELAY || c->state == ST_SNI)
		proxy_pump(p, c);
}

static void accept_on(struct isd_proxy *p, struct listener *l)
{
	for (int i = 0; i < 64; i++) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), one = 1;
		struct conn *c;

		if (fd < 0)
			return;
		if (p->n_conns >= p->max_conns) {
			proxy_report_refused(p, l, fd);
			continue;
		}
		if (l->role != ISD_NET_FD_FORWARD_UNIX)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		switch (l->role) {
		case ISD_NET_FD_PROXY:
			proxy_conn_new(p, CK_PROXY, fd);
			break;
		case ISD_NET_FD_DNS_TCP:
			c = proxy_conn_new(p, CK_DNS_TCP, fd);
			c->deadline = time(NULL) + DNS_IDLE_TIMEOUT;
			break;
		case ISD_NET_FD_CAPTURE: {
			struct sockaddr_in local = {0};
			socklen_t sl = sizeof(local);
			const char *name = NULL;
			char addr[INET_ADDRSTRLEN] = "?";

			c = proxy_conn_new(p, CK_CAPTURE, fd);
			snprintf(c->what, sizeof(c->what), "capture");
			if (getsockname(fd, (struct sockaddr *)&local, &sl) == 0 && local.sin_family == AF_INET) {
				name = proxy_fake_lookup(p, ntohl(local.sin_addr.s_addr));
				c->port = ntohs(local.sin_port);
				inet_ntop(AF_INET, &local.sin_addr, addr, sizeof(addr));
			}
			if (!name) {
				snprintf(c->host, sizeof(c->host), "%s", addr);
				proxy_conn_fail(p, c, 403, "no name stands for this address (only the DNS stub's answers are reachable)");
				break;
			}
			snprintf(c->host, sizeof(c->host), "%s", name);
			if (c->port != 80 && c->port != 443)
				decide(p, c);
			break;
		}
		case ISD_NET_FD_FORWARD:
			c = proxy_conn_new(p, CK_FORWARD, fd);
			c->no_policy = true;
			c->rule = "--forward";
			c->fwd_index = (int)l->index;
			snprintf(c->what, sizeof(c->what), "forward");
			snprintf(c->host, sizeof(c->host), "%s", p->cfg->forwards[l->index].host);
			c->port = p->cfg->forwards[l->index].host_port;
			decide(p, c);
			break;
		case ISD_NET_FD_FORWARD_UNIX: {
			struct ucred cred = {0};
			socklen_t cl = sizeof(cred);

			c = proxy_conn_new(p, CK_FORWARD_UNIX, fd);
			/* The kernel's word for who called connect(); a TCP peer
			 * has none (see isd/net-record.h). */
			if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cred.pid > 0) {
				long ppid;

				c->host_pid = cred.pid;
				isd_process_status(cred.pid, &c->pid, &ppid, NULL);
			}
			c->no_policy = true;
			c->rule = "--forward-unix";
			c->fwd_index = (int)l->index;
			snprintf(c->what, sizeof(c->what), "forward-unix");
			snprintf(c->host, sizeof(c->host), "%s", p->cfg->forwards_unix[l->index].host_path);
			decide(p, c);
			break;
		}
		case ISD_NET_FD_PUBLISH:
			proxy_publish_accept(p, l, fd);
			break;
		default:
			close(fd);
		}
	}
}

static void expire(struct isd_proxy *p)
{
	time_t now = time(NULL);

	for (struct conn *c = p->conns, *next; c; c = next) {
		next = c->next;
		if (!c->deadline || c->deadline > now)
			continue;
		if (c->state == ST_CONNECTING) {
			close(c->ufd);
			c->ufd = -1;
			if (c->kind == CK_PUBLISH)
				proxy_publish_connect_failed(p, c, ETIMEDOUT);
			else
				connect_next(p, c, ETIMEDOUT);
		} else if (c->state == ST_RESOLVING) {
			proxy_conn_fail(p, c, 504, c->kind == CK_PUBLISH ? "no socket came from the sandbox's network namespace in time"
									  : "resolving the name on the host timed out");
		} else if (c->state != ST_RELAY) {
			c->why_closed = "it sent no whole request in time";
			proxy_conn_close(p, c);
		}
	}
	proxy_report_tick(p);
}

/* Connections that stopped reading for want of memory, once some is back:
 * no edge will come for bytes already waiting in their sockets. */
static void retry_mem_waiters(struct isd_proxy *p)
{
	for (struct conn *c = p->conns, *next; c && p->n_mem_wait; c = next) {
		next = c->next;
		if (!c->mem_wait)
			continue;
		if (p->mem + RELAY_BUF > PROXY_MEM_MAX)
			return;
		c->mem_wait = false;
		p->n_mem_wait--;
		/* (this may close c, never another connection: next stays) */
		if (c->state == ST_RELAY || c->state == ST_SNI)
			proxy_pump(p, c);
		else
			client_event(p, c);
	}
}

static void *loop_main(void *arg)
{
	struct isd_proxy *p = arg;
	time_t last_expire = time(NULL);

	for (;;) {
		struct epoll_event events[64];
		int n = epoll_wait(p->epfd, events, 64, 1000);

		for (int i = 0; i < n; i++) {
			struct ev *ev = events[i].data.ptr;

			switch (ev->kind) {
			case EV_WAKE:
				return NULL;
			case EV_LISTENER:
				accept_on(p, (struct listener *)ev);
				break;
			case EV_DNS_UDP:
				proxy_dns_udp(p, ((struct listener *)ev)->fd);
				break;
			case EV_RESOLVED:
				proxy_resolver_collect(p, resolved_cb);
				break;
			case EV_FACTORY:
				proxy_publish_factory_event(p);
				break;
			case EV_CLIENT:
			case EV_UPSTREAM: {
				/* A connection closed by an earlier event of this
				 * batch may still have one here: look it up. */
				struct conn *c = ev->kind == EV_CLIENT ? conn_of(ev, cev) : conn_of(ev, uev);
				if (c->dead)
					break;
				if (ev->kind == EV_CLIENT)
					client_event(p, c);
				else
					upstream_event(p, c);
				break;
			}
			}
		}
		if (p->n_mem_wait)
			retry_mem_waiters(p);
		proxy_free_dead(p);
		if (time(NULL) != last_expire) {
			last_expire = time(NULL);
			expire(p);
		}
	}
}

/* ---- API ---- */

static void host_own_addrs(struct isd_proxy *p)
{
	struct ifaddrs *ifa = NULL;

	if (getifaddrs(&ifa) < 0)
		return;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		struct isd_addr a = {0};
		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			a.family = AF_INET;
			a.v4 = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			a.family = AF_INET6;
			a.v6 = ((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
		} else {
			continue;
		}
		p->own = isd_xrealloc(p->own, (p->n_own + 1) * sizeof(*p->own));
		p->own[p->n_own++] = a;
	}
	freeifaddrs(ifa);
}

int isd_proxy_new(const struct isd_spec *spec, struct isd_proxy **out)
{
	const struct isd_netcfg *cfg = &spec->net;
	struct isd_proxy *p;

	*out = NULL;
	/* isd build's RUN steps use the host network by design (Docker's
	 * default for builds): no warning on every step. */
	if (spec->network == ISD_NET_HOST && !spec->build_caps)
		isd_warn("--network host: the sandbox can reach services on the host's loopback and its abstract unix sockets (use --network netless for agents)");
	if (spec->network != ISD_NET_NETLESS && !cfg->n_forwards && !cfg->n_forwards_unix && !cfg->n_publish)
		return 0;
	p = isd_xcalloc(1, sizeof(*p));
	p->spec = spec;
	p->cfg = cfg;
	p->wake_fd = -1;
	p->epfd = -1;
	p->resolved_fd = -1;
	p->netns_fd = -1;
	p->factory_fd = -1;
	p->factory_pid = -1;
	p->wake_ev.kind = EV_WAKE;
	p->resolved_ev.kind = EV_RESOLVED;
	p->factory_ev.kind = EV_FACTORY;
	p->quiet_denials = spec->tty && !cfg->log_path;
	if (cfg->log_path) {
		int fd = open(cfg->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd < 0 || !(p->log = fdopen(fd, "a"))) {
			int r = isd_error(-errno, "opening --network-log %s", cfg->log_path);
			if (fd >= 0)
				close(fd);
			free(p);
			return r;
		}
	}
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->epfd < 0 || p->wake_fd < 0) {
		int r = isd_error(-errno, "setting up the network relay");
		isd_proxy_free(p);
		return r;
	}
	/* The host's ports are taken now, before the sandbox exists: one
	 * that cannot be had ends the run before the payload starts. */
	if (cfg->n_publish) {
		int r = proxy_publish_listen(p);
		if (r < 0) {
			isd_proxy_free(p);
			return r;
		}
	}
	host_own_addrs(p);
	proxy_fakes_init(p);
	*out = p;
	return 0;
}

void isd_proxy_set_sink(struct isd_proxy *p, isd_net_sink_fn *fn, void *ctx)
{
	if (!p)
		return;
	p->sink = fn;
	p->sink_ctx = ctx;
}

void isd_proxy_adopt_fd(struct isd_proxy *p, int32_t tag, int fd)
{
	struct listener *l;
	uint32_t role = (uint32_t)tag >> 24, index = (uint32_t)tag & 0xffffff;

	/* (ISD_NET_FD_PUBLISH sockets are the host's, never the sandbox's) */
	if (!p || role < ISD_NET_FD_PROXY || role > ISD_NET_FD_NETNS ||
	    (role == ISD_NET_FD_FORWARD && index >= p->cfg->n_forwards) ||
	    (role == ISD_NET_FD_FORWARD_UNIX && index >= p->cfg->n_forwards_unix) ||
	    (role == ISD_NET_FD_NETNS && (!p->cfg->n_publish || p->netns_fd >= 0))) {
		close(fd);
		return;
	}
	if (role == ISD_NET_FD_NETNS) {
		p->netns_fd = fd;
		return;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	l = isd_xcalloc(1, sizeof(*l));
	l->ev.kind = role == ISD_NET_FD_DNS_UDP ? EV_DNS_UDP : EV_LISTENER;
	l->fd = fd;
	l->role = (int)role;
	l->index = index;
	l->next = p->listeners;
	p->listeners = l;
}

size_t isd_proxy_held_fds(const struct isd_proxy *p, int *fds, size_t max)
{
	size_t n = 0;
	int own[] = {p->epfd, p->wake_fd, p->netns_fd, p->factory_fd, p->resolved_fd, p->log ? fileno(p->log) : -1};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (own[i] >= 0 && n < max)
			fds[n++] = own[i];
	for (const struct listener *l = p->listeners; l; l = l->next)
		if (n < max)
			fds[n++] = l->fd;
	return n;
}

int isd_proxy_start(struct isd_proxy *p)
{
	struct rlimit rl;
	sigset_t all, old;
	int r;

	if (!p)
		return 0;
	/* Two descriptors per connection: the soft limit of 1024 would cap
	 * the sandbox at a few hundred parallel downloads. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	p->fd_limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (size_t)rl.rlim_cur : 1024;
	/* Two descriptors a connection at least, and some for isd: past the
	 * limit accept would fail and the attempt stay unseen, unrecorded. */
	p->max_conns = isd_testhook_relay_max_conns(MAX_CONNS);
	if (p->fd_limit < 2 * p->max_conns + 256)
		p->max_conns = p->fd_limit > 512 ? (p->fd_limit - 256) / 2 : 128;
	/* Forks: before the resolver's threads exist. */
	r = proxy_publish_start(p);
	if (r < 0)
		return r;
	r = proxy_resolver_start(p);
	if (r < 0)
		return isd_error(r, "starting the network relay's resolver");
	proxy_epoll_add(p, p->wake_fd, &p->wake_ev, EPOLLIN);
	proxy_epoll_add(p, p->resolved_fd, &p->resolved_ev, EPOLLIN);
	for (struct listener *l = p->listeners; l; l = l->next)
		proxy_epoll_add(p, l->fd, &l->ev, EPOLLIN);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&p->thread, NULL, loop_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return isd_error(-r, "starting the network relay thread");
	p->started = true;
	return 0;
}

void isd_proxy_free(struct isd_proxy *p)
{
	if (!p)
		return;
	if (p->started) {
		uint64_t one = 1;
		(void)!write(p->wake_fd, &one, sizeof(one));
		pthread_join(p->thread, NULL);
	}
	/* Connections first: closing one detaches its job from the resolver,
	 * which frees the jobs when it stops. */
	while (p->conns)
		proxy_conn_close(p, p->conns);
	proxy_free_dead(p);
	proxy_resolver_stop(p);
	proxy_publish_stop(p);
	while (p->listeners) {
		struct listener *l = p->listeners;
		p->listeners = l->next;
		close(l->fd);
		free(l);
	}
	proxy_report_summary(p);
	proxy_fakes_free(p);
	free(p->own);
	if (p->log)
		fclose(p->log);
	if (p->epfd >= 0)
		close(p->epfd);
	if (p->wake_fd >= 0)
		close(p->wake_fd);
	free(p);
}
