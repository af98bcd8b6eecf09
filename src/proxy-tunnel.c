/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The relay of an established tunnel: splice(2) through a pipe per
 * direction, so that the bytes are never copied into isd and take none of
 * its memory (a pipe's pages are the kernel's, bounded by its pipe limits
 * per user).  What the relay itself still holds for a direction (the
 * rewritten request, bytes that came with the head, the proxy's 200) goes
 * first.  Where splice is refused, or descriptors are short, a direction
 * copies through its buffer instead.
 */
#define _GNU_SOURCE
#include "proxy-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

void proxy_tunnel_close(struct conn *c)
{
	for (int i = 0; i < 2; i++) {
		if (c->pipe_c2u[i] >= 0)
			close(c->pipe_c2u[i]);
		if (c->pipe_u2c[i] >= 0)
			close(c->pipe_u2c[i]);
		c->pipe_c2u[i] = c->pipe_u2c[i] = -1;
	}
}

void proxy_tunnel_open(struct isd_proxy *p, struct conn *c)
{
	c->splice_tried = true;
	/* Four more descriptors per connection: only while plenty are left
	 * for accepting (each connection needs two in any case). */
	if (p->n_conns * 6 + 64 > p->fd_limit)
		return;
	if (pipe2(c->pipe_c2u, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(c->pipe_u2c, O_CLOEXEC | O_NONBLOCK) < 0)
		proxy_tunnel_close(c);
}

struct dir {
	int src, dst;
	int *pipe;
	size_t *in_pipe;
	struct relay_buf *buf;
	bool *src_eof, *dst_shut;
	uint64_t *count;
};

static int copy_dir(struct isd_proxy *p, struct conn *c, const struct dir *d)
{
	int progress = 0, r;

	if (!*d->src_eof) {
		r = proxy_buf_fill(p, c, d->src, d->buf, RELAY_BUF);
		if (r == -2)
			return -2;
		if (r == -1)
			*d->src_eof = true;
		progress = r != 0;
	}
	r = proxy_buf_flush(p, d->dst, d->buf, d->count);
	if (r == -2)
		return -2;
	return progress || r > 0;
}

static int splice_dir(struct conn *c, const struct dir *d)
{
	int progress = 0;
	ssize_t n;

	if (*d->in_pipe) {
		n = splice(d->pipe[0], NULL, d->dst, NULL, *d->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0) {
			*d->in_pipe -= (size_t)n;
			*d->count += (uint64_t)n;
			progress = 1;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			return -2;
		}
	}
	if (!*d->src_eof && *d->in_pipe < SPLICE_MAX) {
		/* EAGAIN: nothing to read, or a pipe whose slots hold less
		 * than SPLICE_MAX; either way draining it comes first. */
		n = splice(d->src, NULL, d->pipe[1], NULL, SPLICE_MAX - *d->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0) {
			*d->in_pipe += (size_t)n;
			progress = 1;
		} else if (n == 0) {
			*d->src_eof = true;
			progress = 1;
		} else if (errno == EINVAL && !c->in_c2u && !c->in_u2c) {
			/* these sockets cannot splice: copy both ways */
			proxy_tunnel_close(c);
			return 1;
		} else if (errno != EAGAIN && errno != EINTR) {
			return -2;
		}
	}
	return progress;
}

/* One direction: 1 moved something, 0 nothing (EAGAIN), -2 error. */
static int relay_dir(struct isd_proxy *p, struct conn *c, const struct dir *d)
{
	int progress = 0, r;

	if (d->buf->len && d->pipe[0] >= 0) {
		r = proxy_buf_flush(p, d->dst, d->buf, d->count);
		if (r == -2)
			return -2;
		progress = r > 0;
		if (d->buf->len)
			return progress;
	}
	r = d->pipe[0] >= 0 ? splice_dir(c, d) : copy_dir(p, c, d);
	if (r == -2)
		return -2;
	progress |= r > 0;
	if (*d->src_eof && !d->buf->len && !*d->in_pipe && !*d->dst_shut) {
		shutdown(d->dst, SHUT_WR);
		*d->dst_shut = true;
	}
	return progress;
}

int proxy_tunnel_step(struct isd_proxy *p, struct conn *c)
{
	struct dir up = {c->cfd, c->ufd, c->pipe_c2u, &c->in_c2u, &c->c2u, &c->c_eof, &c->u_shut, &c->up};
	struct dir down = {c->ufd, c->cfd, c->pipe_u2c, &c->in_u2c, &c->u2c, &c->u_eof, &c->c_shut, &c->down};
	int r1, r2;

	r1 = relay_dir(p, c, &up);
	if (r1 == -2)
		return -2;
	r2 = relay_dir(p, c, &down);
	if (r2 == -2)
		return -2;
	return r1 > 0 || r2 > 0;
}
