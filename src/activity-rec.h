/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the activity log's writer: how a record is built (src/activity-
 * rec.c) and written (src/activity.c), shared by the exec records and the
 * network ones (src/activity-net.c).  Two write: the exec listener (a
 * process of its own; a thread of isd's where the landlock tier needs
 * one, isd_activity_join_guard) and the relay (a thread of isd's); each
 * builds in its own buffer,
 * and activity_write holds the log's lock, which they share.
 */
#ifndef ISD_ACTIVITY_REC_H
#define ISD_ACTIVITY_REC_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

struct isd_activity;

struct rec {
	char *buf;
	size_t len, cap; /* cap: what it can hold; longer records are cut */
};

void rec_putn(struct rec *r, const char *s, size_t n);
void rec_puts(struct rec *r, const char *s);
void rec_printf(struct rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string of bytes from the sandbox, pure ASCII. */
void rec_json_str(struct rec *r, const char *str, size_t n);
/* "time":"..." of ts (NULL: now) */
void rec_time_at(struct rec *r, const struct timespec *ts);
/* "key":"..." of ts (NULL: now) */
void rec_time_key(struct rec *r, const char *key, const struct timespec *ts);
/* r, ended by a newline, within the log's bound (else counted dropped). */
void activity_write(struct isd_activity *a, struct rec *r);

#endif
