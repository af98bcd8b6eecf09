/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host-side name resolution for the proxy.  getaddrinfo() blocks, and one
 * slow name must never hold up the other connections, so a few worker
 * threads resolve and hand finished jobs back to the relay thread (a list
 * under the lock, an eventfd to wake it).
 *
 * Who owns a job: the queue until a worker takes it, that worker until it
 * is done, the done list until the relay thread collects it.  A connection
 * only points at its job; closing it detaches the job under the lock.
 * getaddrinfo() cannot be interrupted, so the workers are detached and the
 * resolver's state is shared with them by reference count: stopping
 * (sandbox exit) never waits for a slow lookup, and a worker that finishes
 * after it frees its job and, last out, the state.
 */
#define _GNU_SOURCE
#include "proxy-internal.h"
#include "isd/util.h"

#include <netdb.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define N_WORKERS 4

struct proxy_resolver {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct resolve_job *queue, *done;
	bool stopping;
	unsigned refs; /* the relay and each running worker */
	int event_fd;
};

static void jobs_free(struct resolve_job *j)
{
	while (j) {
		struct resolve_job *next = j->next;
		free(j);
		j = next;
	}
}

/* Called with the lock held; unlocks (and may free r). */
static void unref_unlock(struct proxy_resolver *r)
{
	bool last = --r->refs == 0;

	pthread_mutex_unlock(&r->lock);
	if (!last)
		return;
	jobs_free(r->queue);
	jobs_free(r->done);
	close(r->event_fd);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
}

static void resolve(struct resolve_job *job)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG};
	struct addrinfo *res = NULL;

	job->err = getaddrinfo(job->name, NULL, &hints, &res);
	for (struct addrinfo *ai = res; ai && job->n_addrs < 16; ai = ai->ai_next) {
		struct isd_addr *a = &job->addrs[job->n_addrs];
		if (ai->ai_family == AF_INET) {
			a->family = AF_INET;
			a->v4 = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		} else if (ai->ai_family == AF_INET6) {
			a->family = AF_INET6;
			a->v6 = ((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		} else {
			continue;
		}
		job->n_addrs++;
	}
	if (res)
		freeaddrinfo(res);
}

static void *worker_main(void *arg)
{
	struct proxy_resolver *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct resolve_job *job;
		uint64_t one = 1;

		while (!r->queue && !r->stopping)
			pthread_cond_wait(&r->cond, &r->lock);
		if (r->stopping)
			break;
		job = r->queue;
		r->queue = job->next;
		pthread_mutex_unlock(&r->lock);

		resolve(job);

		pthread_mutex_lock(&r->lock);
		if (r->stopping) {
			free(job);
			break;
		}
		job->next = r->done;
		r->done = job;
		/* Cannot fail short of 2^64 - 1 pending wake-ups; the job is
		 * on the list whatever happens to the counter. */
		(void)!write(r->event_fd, &one, sizeof(one));
	}
	unref_unlock(r);
	return NULL;
}

int proxy_resolver_start(struct isd_proxy *p)
{
	struct proxy_resolver *r = isd_xcalloc(1, sizeof(*r));
	pthread_attr_t attr;
	sigset_t all, old;
	size_t started = 0;

	r->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->event_fd < 0) {
		int e = -errno;
		free(r);
		return e;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->refs = 1;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* isd's signal handlers belong to the main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < N_WORKERS; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, worker_main, r) != 0)
			break;
		r->refs++;
		started++;
	}
	pthread_mutex_unlock(&r->lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	p->resolver = r;
	p->resolved_fd = r->event_fd;
	if (!started) {
		proxy_resolver_stop(p);
		return -EAGAIN;
	}
	return 0;
}

/* After the relay thread ended and every connection is closed. */
void proxy_resolver_stop(struct isd_proxy *p)
{
	struct proxy_resolver *r = p->resolver;

	if (!r)
		return;
	p->resolver = NULL;
	p->resolved_fd = -1;
	pthread_mutex_lock(&r->lock);
	r->stopping = true;
	jobs_free(r->queue);
	jobs_free(r->done);
	r->queue = r->done = NULL;
	pthread_cond_broadcast(&r->cond);
	unref_unlock(r);
}

void proxy_resolver_submit(struct isd_proxy *p, struct conn *c, const char *name)
{
	struct proxy_resolver *r = p->resolver;
	struct resolve_job *job = isd_xcalloc(1, sizeof(*job)), **tail;

	job->conn = c;
	snprintf(job->name, sizeof(job->name), "%s", name);
	c->job = job;
	pthread_mutex_lock(&r->lock);
	for (tail = &r->queue; *tail; tail = &(*tail)->next)
		;
	*tail = job;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

void proxy_resolver_cancel(struct isd_proxy *p, struct conn *c)
{
	struct proxy_resolver *r = p->resolver;

	if (!c->job)
		return;
	if (!r) {
		/* cannot happen: connections close before the resolver stops */
		c->job = NULL;
		return;
	}
	pthread_mutex_lock(&r->lock);
	/* Not taken yet: nobody else will ever see it. */
	for (struct resolve_job **j = &r->queue; *j; j = &(*j)->next)
		if (*j == c->job) {
			*j = c->job->next;
			free(c->job);
			c->job = NULL;
			break;
		}
	if (c->job)
		c->job->conn = NULL;
	pthread_mutex_unlock(&r->lock);
	c->job = NULL;
}

void proxy_resolver_collect(struct isd_proxy *p, void (*done)(struct isd_proxy *, struct conn *, struct resolve_job *))
{
	struct proxy_resolver *r = p->resolver;
	struct resolve_job *list, *rev = NULL;
	uint64_t n;

	(void)!read(r->event_fd, &n, sizeof(n));
	pthread_mutex_lock(&r->lock);
	list = r->done;
	r->done = NULL;
	pthread_mutex_unlock(&r->lock);
	while (list) { /* in the order they finished */
		struct resolve_job *next = list->next;
		list->next = rev;
		rev = list;
		list = next;
	}
	while (rev) {
		struct resolve_job *job = rev;
		struct conn *c;

		rev = job->next;
		/* Owned by this thread now: only a close from a callback of this
		 * batch can still detach it (through c->job, under the lock). */
		pthread_mutex_lock(&r->lock);
		c = job->conn;
		pthread_mutex_unlock(&r->lock);
		if (c) {
			c->job = NULL;
			done(p, c, job);
		}
		free(job);
	}
}
