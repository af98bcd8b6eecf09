/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading an activity log record by record, also while a run still writes
 * it (`isd log --follow`).  A record is one line; what the reader hands on
 * is always a whole line: the end of the file may be a record isd is in
 * the middle of writing, which waits for its newline.  The log is hostile
 * input (--file takes any file): a line is bounded, a longer one is
 * reported once and skipped up to its end.
 *
 * The end of a run is the end of its lock on the log (isd_activity_open
 * takes it; it goes with the last descriptor, also when isd is killed).
 * The reader asks "still written?" before it reads to the end of the
 * file, so that the records written just before the lock went are read
 * too; in between it sleeps on inotify (a write, or the writer's close),
 * with a timeout for what inotify misses.
 */
#define _GNU_SOURCE
#include "activity-log.h"
#include "isd/util.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

/* isd's longest record is about 460 KiB (src/activity.c, REC_CAP). */
#define MAX_LINE (1u << 20)
#define READ_CHUNK (64u << 10)
#define FOLLOW_TIMEOUT_MS 1000

struct reader {
	int fd;
	char *buf;
	size_t len, cap;
	bool skipping; /* within a line past MAX_LINE */
	const struct isd_activity_reader *r;
};

/* The complete lines in the buffer, then what is left moved to its start. */
static void hand_on_lines(struct reader *rd)
{
	size_t start = 0;

	for (;;) {
		char *nl = memchr(rd->buf + start, '\n', rd->len - start);
		size_t n;

		if (!nl)
			break;
		n = (size_t)(nl - (rd->buf + start)) + 1;
		if (rd->skipping)
			rd->skipping = false;
		else
			rd->r->line(rd->r->arg, rd->buf + start, n);
		start += n;
	}
	if (rd->len - start >= MAX_LINE) {
		if (!rd->skipping)
			rd->r->line(rd->r->arg, NULL, 0);
		rd->skipping = true;
		start = rd->len;
	}
	memmove(rd->buf, rd->buf + start, rd->len - start);
	rd->len -= start;
}

/* Everything there is now; 0 at the end of the file. */
static int read_to_end(struct reader *rd)
{
	for (;;) {
		ssize_t n;

		if (rd->cap - rd->len < READ_CHUNK) {
			rd->cap = rd->len + READ_CHUNK;
			rd->buf = isd_xrealloc(rd->buf, rd->cap);
		}
		n = read(rd->fd, rd->buf + rd->len, rd->cap - rd->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		rd->len += (size_t)n;
		hand_on_lines(rd);
	}
}

static int watch_log(int fd)
{
	char path[64];
	int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);

	if (in < 0)
		return -1;
	/* the descriptor's own file, wherever it was renamed to */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (inotify_add_watch(in, path, IN_MODIFY | IN_CLOSE_WRITE) < 0) {
		close(in);
		return -1;
	}
	return in;
}

static void wait_for_more(int in)
{
	char events[4096];

	if (in < 0) {
		poll(NULL, 0, FOLLOW_TIMEOUT_MS / 4);
		return;
	}
	if (poll(&(struct pollfd){.fd = in, .events = POLLIN}, 1, FOLLOW_TIMEOUT_MS) > 0)
		while (read(in, events, sizeof(events)) > 0)
			;
}

int isd_activity_read(int fd, const struct isd_activity_reader *r)
{
	struct reader rd = {.fd = fd, .r = r};
	_cleanup_close_ int in = r->still_written ? watch_log(fd) : -1;
	int ret;

	for (;;) {
		bool more = r->still_written && r->still_written(r->arg);

		ret = read_to_end(&rd);
		fflush(stdout);
		if (ret < 0 || !more)
			break;
		wait_for_more(in);
	}
	/* a run killed in the middle of a record's write */
	if (ret == 0 && rd.len && !rd.skipping)
		r->line(r->arg, NULL, 0);
	free(rd.buf);
	return ret;
}
