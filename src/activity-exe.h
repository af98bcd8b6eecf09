/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which executable an exec really ran (src/activity-exe.c): an exec record
 * waits, after isd let the exec go on, until isd saw the process's new
 * image (its "exe"), knew the exec failed ("ran": false), or must say it
 * cannot know ("exe_unknown": why).  Records leave in the order the execs
 * came, so that a parent's is always before its children's.
 */
#ifndef ISD_ACTIVITY_EXE_H
#define ISD_ACTIVITY_EXE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct isd_exe_watch;

/* write gets a finished record, its newline included. */
struct isd_exe_watch *isd_exe_watch_new(void (*write)(void *arg, const char *rec, size_t len), void *arg);
/* Writes what waits (as unknown where it must) and frees. */
void isd_exe_watch_free(struct isd_exe_watch *w);

/* Before the exec of thread tid (of process tgid) goes on: what its image
 * is now.  dirfd is its /proc directory (O_PATH, opened while the
 * notification was valid; -1: none), which the watch takes.  Returns a
 * handle for add or cancel, which come next. */
int isd_exe_watch_before(struct isd_exe_watch *w, pid_t tid, pid_t tgid, int dirfd);
/* After it went on: the record (a JSON object, no newline), which waits. */
void isd_exe_watch_add(struct isd_exe_watch *w, int handle, const char *rec, size_t len);
/* Drops what before took, for a notification that was not valid. */
void isd_exe_watch_cancel(struct isd_exe_watch *w, int handle);

/* Thread tid of tgid is stopped in a notified system call: an exec of
 * it that waits is over one way or the other.  What it settled is
 * written by isd_exe_watch_flush, once the caller goes on. */
void isd_exe_watch_stopped(struct isd_exe_watch *w, pid_t tid, pid_t tgid);
void isd_exe_watch_flush(struct isd_exe_watch *w);
/* The milliseconds to the next look (poll's timeout; -1: nothing waits),
 * and the look. */
int isd_exe_watch_timeout(const struct isd_exe_watch *w);
void isd_exe_watch_tick(struct isd_exe_watch *w);

#endif
