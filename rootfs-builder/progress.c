/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A download's progress line on a terminal:
 *
 *   layer 1/3 sha256:0123456789ab  [=======>        ]  12.3 MiB / 40.1 MiB  5.2 MiB/s
 *
 * drawn on stderr with a carriage return, at most ten times a second, and
 * erased when the download ends (the build's own line about the blob
 * follows on stdout).  Only when stderr is a terminal (and TERM is not
 * "dumb"): logs and pipes get nothing extra.
 */
#define _GNU_SOURCE
#include "isd/util.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#define REDRAW_NS 100000000LL /* 0.1 s */
#define BAR_MIN 5             /* a bar of fewer cells is left out */
#define BAR_MAX 30

struct isd_progress {
	char *label;
	uint64_t first;  /* bytes already there when it started (a resume): not
			  * part of the rate */
	uint64_t last_done;
	int64_t start_ns, last_ns;
	bool drawn;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

bool isd_progress_wanted(void)
{
	const char *term = getenv("TERM");

	return isatty(STDERR_FILENO) && !(term && !strcmp(term, "dumb"));
}

struct isd_progress *isd_progress_new(const char *label, uint64_t already)
{
	struct isd_progress *p;

	if (!label || !isd_progress_wanted())
		return NULL;
	p = isd_xcalloc(1, sizeof(*p));
	p->label = isd_xstrdup(label);
	p->start_ns = now_ns();
	p->first = already;
	return p;
}

static int term_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

static void draw(struct isd_progress *p, uint64_t done, uint64_t total, int64_t now)
{
	char tail[128], got[32], all[32], rate[32], bar[BAR_MAX + 4] = "";
	double secs = (double)(now - p->start_ns) / 1e9;
	int width = term_width(), room, label_len = (int)strlen(p->label);

	isd_format_size(done, got, sizeof(got), 0);
	isd_format_size(total, all, sizeof(all), 0);
	isd_format_size(secs > 0.001 && done >= p->first ? (uint64_t)((double)(done - p->first) / secs) : 0, rate,
			sizeof(rate), 0);
	/* Fixed widths: the line keeps its layout while the numbers change. */
	if (total)
		snprintf(tail, sizeof(tail), "%10s / %-10s %10s/s", got, all, rate);
	else
		snprintf(tail, sizeof(tail), "%10s %10s/s", got, rate);
	/* On one line, never wrapped: the numbers first, then the label
	 * (shortened if need be), then a bar in the room left. */
	room = width - 1 - 4 - (int)strlen(tail);
	if (total && room - label_len - 3 >= BAR_MIN) {
		int cells = room - label_len - 3 > BAR_MAX ? BAR_MAX : room - label_len - 3;
		int full = (int)((double)(done > total ? total : done) / (double)total * cells);
		bar[0] = '[';
		for (int i = 0; i < cells; i++)
			bar[1 + i] = i < full ? '=' : i == full ? '>' : ' ';
		memcpy(bar + 1 + cells, "] ", 3);
	}
	if (label_len > room)
		label_len = room > 0 ? room : 0;
	/* \033[K: nothing of a longer earlier line stays behind. */
	fprintf(stderr, "\r  %.*s  %s%s\033[K", label_len, p->label, bar, tail);
	fflush(stderr);
	p->drawn = true;
	p->last_done = done;
}

void isd_progress_update(struct isd_progress *p, uint64_t done, uint64_t total)
{
	int64_t now;

	if (!p)
		return;
	now = now_ns();
	if (p->drawn && (done == p->last_done || (now - p->last_ns < REDRAW_NS && done != total)))
		return;
	p->last_ns = now;
	draw(p, done, total, now);
}

void isd_progress_end(struct isd_progress *p)
{
	if (!p)
		return;
	if (p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	free(p->label);
	free(p);
}
