/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The relay's connections: buffers, the edge-triggered pump that moves
 * bytes both ways with half-close, and the answers that end a connection
 * (HTTP 4xx/5xx, SOCKS5 replies).
 */
#define _GNU_SOURCE
#include "proxy-internal.h"
#include "isd/util.h"

#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

void proxy_epoll_add(struct isd_proxy *p, int fd, struct ev *ev, uint32_t events)
{
	struct epoll_event e = {.events = events, .data.ptr = ev};
	epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &e);
}

struct conn *proxy_conn_new(struct isd_proxy *p, enum conn_kind kind, int cfd)
{
	struct conn *c = isd_xcalloc(1, sizeof(*c));

	c->cev.kind = EV_CLIENT;
	c->uev.kind = EV_UPSTREAM;
	c->cfd = cfd;
	c->ufd = -1;
	c->pipe_c2u[0] = c->pipe_c2u[1] = c->pipe_u2c[0] = c->pipe_u2c[1] = -1;
	c->kind = kind;
	c->state = ST_HEAD;
	c->fwd_index = -1;
	c->deadline = time(NULL) + HEAD_TIMEOUT;
	clock_gettime(CLOCK_REALTIME, &c->start);
	clock_gettime(CLOCK_MONOTONIC, &c->mono);
	c->next = p->conns;
	if (p->conns)
		p->conns->prev = c;
	p->conns = c;
	p->n_conns++;
	proxy_epoll_add(p, cfd, &c->cev, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
	return c;
}

void proxy_conn_close(struct isd_proxy *p, struct conn *c)
{
	/* (a tunnel whose ClientHello never came was open: allowed too) */
	if ((c->state == ST_RELAY || c->state == ST_SNI) && c->kind != CK_DNS_TCP)
		proxy_report_conn(p, c, ISD_NET_ALLOWED, NULL, false);
	else if ((c->state == ST_RESOLVING || c->state == ST_CONNECTING) && c->kind != CK_DNS_TCP)
		proxy_report_conn(p, c, ISD_NET_FAILED, "the sandbox ended before it was connected", false);
	else if ((c->state == ST_HEAD || c->state == ST_SOCKS_REQ) && c->kind != CK_DNS_TCP)
		/* an attempt that asked for nothing is one too */
		proxy_report_conn(p, c, ISD_NET_FAILED,
				  c->why_closed ? c->why_closed :
				  c->in.len || c->state == ST_SOCKS_REQ ? "it closed before its request was whole" :
				  "it closed before it sent a request", false);
	proxy_resolver_cancel(p, c);
	close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	proxy_tunnel_close(c);
	proxy_buf_release(p, &c->in);
	proxy_buf_release(p, &c->c2u);
	proxy_buf_release(p, &c->u2c);
	if (c->mem_wait)
		p->n_mem_wait--;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	p->n_conns--;
	/* Freed after the current batch of events, which may still name it. */
	c->dead = true;
	c->next = p->dead;
	p->dead = c;
}

void proxy_free_dead(struct isd_proxy *p)
{
	while (p->dead) {
		struct conn *c = p->dead;
		p->dead = c->next;
		free(c);
	}
}

/*
 * Memory.  isd runs outside the sandbox's cgroup, so what the relay holds
 * for the payload is bounded here: every buffer has its own cap (RELAY_BUF,
 * the head limit, DNS_OUT_MAX) and is allocated only when data comes.
 * Up to BUF_FLOOR a buffer is always granted, so that every connection can
 * move; beyond it, all buffers together stay under PROXY_MEM_MAX.  A
 * buffer that cannot grow leaves its side unread (the kernel's buffers then
 * push back on the sender); under pressure, empty buffers give their memory
 * back, and connections that could not grow are retried (retry_mem_waiters).
 */
static bool pressure(const struct isd_proxy *p)
{
	return p->n_mem_wait || p->mem + RELAY_BUF > PROXY_MEM_MAX;
}

static bool buf_reserve(struct isd_proxy *p, struct conn *c, struct relay_buf *b, size_t cap, bool force)
{
	if (b->cap >= cap)
		return true;
	if (!force && p->mem - b->cap + cap > PROXY_MEM_MAX) {
		if (b->cap < BUF_FLOOR)
			cap = BUF_FLOOR;
		else {
			if (c && !c->mem_wait) {
				c->mem_wait = true;
				p->n_mem_wait++;
			}
			return false;
		}
	}
	b->data = isd_xrealloc(b->data, cap);
	p->mem += cap - b->cap;
	b->cap = cap;
	return true;
}

void proxy_buf_release(struct isd_proxy *p, struct relay_buf *b)
{
	p->mem -= b->cap;
	free(b->data);
	*b = (struct relay_buf){0};
}

/* For the relay's own short answers (SOCKS replies, error pages, the
 * rewritten request head, which replaces the one read): always taken. */
void proxy_buf_append(struct isd_proxy *p, struct relay_buf *b, const void *data, size_t len)
{
	if (b->off + b->len + len > b->cap) {
		if (b->len && b->off)
			memmove(b->data, b->data + b->off, b->len);
		b->off = 0;
		buf_reserve(p, NULL, b, b->len + len, true);
	}
	memcpy(b->data + b->off + b->len, data, len);
	b->len += len;
}

/* Room for at least want more bytes, within max in all; false: the cap or
 * the total is reached (then c waits for memory unless the cap was it). */
bool proxy_buf_room(struct isd_proxy *p, struct conn *c, struct relay_buf *b, size_t want, size_t max)
{
	size_t cap;

	if (b->len + want > max)
		return false;
	if (b->off + b->len + want <= b->cap)
		return true;
	if (b->off) {
		memmove(b->data, b->data + b->off, b->len);
		b->off = 0;
		if (b->len + want <= b->cap)
			return true;
	}
	/* Heads and answers grow as data comes (most are small); a relay
	 * buffer that fills at all is soon full: one allocation. */
	cap = max >= RELAY_BUF && b->cap >= BUF_FLOOR ? max : b->cap ? b->cap * 2 : BUF_FLOOR;
	while (cap < b->len + want)
		cap *= 2;
	return buf_reserve(p, c, b, cap < max ? cap : max, false) && b->off + b->len + want <= b->cap;
}

/* Reads what is there into b, up to max bytes in total; 1 read something,
 * 0 EAGAIN or full (or waiting for memory), -1 EOF, -2 error. */
int proxy_buf_fill(struct isd_proxy *p, struct conn *c, int fd, struct relay_buf *b, size_t max)
{
	ssize_t n;

	if (!proxy_buf_room(p, c, b, 1, max))
		return 0;
	n = read(fd, b->data + b->off + b->len, b->cap - b->off - b->len);
	if (n > 0) {
		b->len += (size_t)n;
		return 1;
	}
	if (!b->len && pressure(p))
		proxy_buf_release(p, b);
	if (n == 0)
		return -1;
	return errno == EAGAIN || errno == EINTR ? 0 : -2;
}

int proxy_buf_flush(struct isd_proxy *p, int fd, struct relay_buf *b, uint64_t *count)
{
	ssize_t n;

	if (!b->len)
		return 0;
	n = send(fd, b->data + b->off, b->len, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -2;
	b->off += (size_t)n;
	b->len -= (size_t)n;
	if (!b->len) {
		b->off = 0;
		if (pressure(p))
			proxy_buf_release(p, b);
	}
	if (count)
		*count += (uint64_t)n;
	return 1;
}

/* Moves the bytes still held from the head phase into the upstream
 * buffer: an absolute-URI request rewritten (parsed again: the head is
 * still in c->in, unchanged since it was checked). */
void proxy_in_to_upstream(struct isd_proxy *p, struct conn *c)
{
	if (c->head_len) {
		struct isd_http_request req;
		size_t len = 0;

		if (isd_http_parse_request(c->in.data + c->in.off, c->in.len, 80, &req) == (int)c->head_len) {
			_cleanup_free_ char *head = isd_http_rewrite_request(c->in.data + c->in.off, &req, &len);
			proxy_buf_append(p, &c->c2u, head, len);
		}
		c->in.off += c->head_len;
		c->in.len -= c->head_len;
		c->head_len = 0;
	}
	if (c->in.len)
		proxy_buf_append(p, &c->c2u, c->in.data + c->in.off, c->in.len);
	/* the head is done: its buffer goes back */
	proxy_buf_release(p, &c->in);
}

/* Returns false when the connection was closed. */
bool proxy_pump(struct isd_proxy *p, struct conn *c)
{
	bool progress = true;

	if (c->state == ST_RELAY && !c->splice_tried)
		proxy_tunnel_open(p, c);
	while (progress) {
		int r;

		progress = false;
		if (c->state == ST_RELAY) {
			r = proxy_tunnel_step(p, c);
			if (r == -2)
				goto close;
			progress = r > 0;
			continue;
		}
		if (c->state == ST_SNI && !c->u_eof) {
			r = proxy_buf_fill(p, c, c->ufd, &c->u2c, RELAY_BUF);
			if (r == -1)
				c->u_eof = true;
			else if (r == -2)
				goto close;
			progress |= r != 0;
		}
		r = proxy_buf_flush(p, c->cfd, &c->u2c, c->state == ST_SNI ? &c->down : NULL);
		if (r == -2)
			goto close;
		progress |= r > 0;
		if ((c->u_eof || c->state == ST_LINGER) && !c->u2c.len && !c->c_shut) {
			shutdown(c->cfd, SHUT_WR);
			c->c_shut = true;
		}
		if (c->state == ST_LINGER && !c->c_eof) {
			char junk[4096];
			ssize_t n = read(c->cfd, junk, sizeof(junk));
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				c->c_eof = true;
			progress |= n > 0;
		}
	}
	if (c->state == ST_RELAY && c->c_shut && c->u_shut)
		goto close;
	if (c->state == ST_LINGER && c->c_shut && c->c_eof)
		goto close;
	return true;
close:
	proxy_conn_close(p, c);
	return false;
}

/* An answer the client can read, then the connection ends. */
void proxy_conn_fail(struct isd_proxy *p, struct conn *c, int status, const char *reason)
{
	static const uint8_t socks_denied[] = {5, 2, 0, 1, 0, 0, 0, 0, 0, 0};
	static const uint8_t socks_failed[] = {5, 4, 0, 1, 0, 0, 0, 0, 0, 0};
	char target[300];

	proxy_format_target(c->host[0] ? c->host : "?", c->port, target, sizeof(target));
	proxy_report_conn(p, c, status == 403 ? ISD_NET_DENIED : ISD_NET_FAILED, reason, status != 400);
	if (c->ufd >= 0) {
		close(c->ufd);
		c->ufd = -1;
	}
	if (c->state == ST_SNI) {
		/* the tunnel was answered already: only closing is left */
		proxy_conn_close(p, c);
		return;
	}
	if (c->kind == CK_PROXY && c->socks) {
		proxy_buf_append(p, &c->u2c, status == 403 ? socks_denied : socks_failed, sizeof(socks_denied));
	} else if (c->kind == CK_PROXY) {
		char head[512];
		const char *text = status == 403 ? "Forbidden" : status == 400 ? "Bad Request" :
				   status == 504 ? "Gateway Timeout" : "Bad Gateway";
		_cleanup_free_ char *body = isd_xasprintf("isd: %s %s %s: %s\n", c->what, target,
							  status == 403 ? "denied" : "failed", reason);
		int n = snprintf(head, sizeof(head),
				 "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
				 "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, text, strlen(body));
		proxy_buf_append(p, &c->u2c, head, (size_t)n);
		proxy_buf_append(p, &c->u2c, body, strlen(body));
	} else {
		/* capture, forward, or a tunnel already answered: only closing is
		 * left.  A published port's client learns it at once (a reset,
		 * as when nothing listens), not from an empty answer. */
		if (c->kind == CK_PUBLISH)
			setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &(struct linger){.l_onoff = 1, .l_linger = 0},
				   sizeof(struct linger));
		proxy_conn_close(p, c);
		return;
	}
	c->state = ST_LINGER;
	c->deadline = time(NULL) + LINGER_TIMEOUT;
	proxy_pump(p, c);
}

void proxy_deny_not_allowed(struct isd_proxy *p, struct conn *c)
{
	char target[300], reason[700];

	proxy_format_target(c->host, c->port, target, sizeof(target));
	snprintf(reason, sizeof(reason), "%s is not in the allowlist; add --allow %s", target, target);
	proxy_conn_fail(p, c, 403, reason);
}

