/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host-side name resolution for the proxy.  getaddrinfo() blocks, and one
 * slow name must never hold up the other connections, so a few worker
 * threads resolve and hand finished jobs back to the relay thread through
 * a pipe (the job pointer is the message).
 */
#define _GNU_SOURCE
#include "proxy-internal.h"
#include "isd/util.h"

#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void *worker_main(void *arg)
{
	struct isd_proxy *p = arg;

	for (;;) {
		struct resolve_job *job;
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG};
		struct addrinfo *res = NULL;

		pthread_mutex_lock(&p->lock);
		while (!p->queue && !p->stopping)
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->stopping) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		job = p->queue;
		p->queue = job->next;
		pthread_mutex_unlock(&p->lock);

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
		/* A pointer is smaller than PIPE_BUF: the write is atomic. */
		if (write(p->resolved_pipe[1], &job, sizeof(job)) != sizeof(job))
			free(job); /* only when the relay thread is gone */
	}
}

int proxy_resolver_start(struct isd_proxy *p)
{
	sigset_t all, old;

	if (pipe2(p->resolved_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	/* isd's signal handlers belong to the main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (size_t i = 0; i < sizeof(p->workers) / sizeof(p->workers[0]); i++) {
		if (pthread_create(&p->workers[i], NULL, worker_main, p) != 0)
			break;
		p->n_workers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return p->n_workers ? 0 : -EAGAIN;
}

void proxy_resolver_stop(struct isd_proxy *p)
{
	struct resolve_job *job;

	if (p->resolved_pipe[0] < 0)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	/* A worker stuck in getaddrinfo() finishes its lookup first; its
	 * write then fails on the closed pipe or lands in it. */
	for (size_t i = 0; i < p->n_workers; i++)
		pthread_join(p->workers[i], NULL);
	while (p->queue) {
		job = p->queue;
		p->queue = job->next;
		free(job);
	}
	while (read(p->resolved_pipe[0], &job, sizeof(job)) == sizeof(job))
		free(job);
	close(p->resolved_pipe[0]);
	close(p->resolved_pipe[1]);
	p->resolved_pipe[0] = p->resolved_pipe[1] = -1;
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
}

void proxy_resolver_submit(struct isd_proxy *p, struct conn *c, const char *name)
{
	struct resolve_job *job = isd_xcalloc(1, sizeof(*job)), **tail;

	job->conn = c;
	snprintf(job->name, sizeof(job->name), "%s", name);
	c->job = job;
	pthread_mutex_lock(&p->lock);
	for (tail = &p->queue; *tail; tail = &(*tail)->next)
		;
	*tail = job;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void proxy_resolver_collect(struct isd_proxy *p, void (*done)(struct isd_proxy *, struct conn *, struct resolve_job *))
{
	struct resolve_job *job;

	while (read(p->resolved_pipe[0], &job, sizeof(job)) == sizeof(job)) {
		struct conn *c = job->conn;
		if (c) {
			c->job = NULL;
			done(p, c, job);
		}
		free(job);
	}
}
