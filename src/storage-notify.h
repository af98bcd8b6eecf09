/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The storage watcher's second trigger (src/storage-notify.c): inotify on
 * every directory a count walked, so that what the payload creates and
 * writes there is seen as it happens, whatever other programs do to the
 * free space of the same file system (issue 24).
 */
#ifndef ISD_STORAGE_NOTIFY_H
#define ISD_STORAGE_NOTIFY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* A count is due soon: a directory moved (the watches' paths are old) or
 * a write went to a file no longer there (held open after its unlink). */
#define ISD_ACTIVITY_STALE 1u
/* What happened is not known (the event queue overflowed, a directory
 * moved in from elsewhere, a new directory could not be watched): count
 * frozen now. */
#define ISD_ACTIVITY_LOST 2u
/* inotify is out of watches or instances: the statvfs trigger and the
 * periodic count alone, as before. */
#define ISD_ACTIVITY_LIMITED 4u

/* Growth since the last count as the events tell it, an upper bound
 * (each file's allocated blocks above what they were at the count, a file
 * first seen written counted whole; each name created or moved in one
 * inode).  Shared with the counting process (MAP_SHARED), so plain
 * atomics. */
struct isd_storage_activity {
	_Atomic uint64_t bytes, inodes;
	_Atomic uint32_t flags;
	/* Set by the watcher: the drainer wakes it (wake_fd) once either is
	 * reached or a flag is set, then disarms until the watcher arms it
	 * again. */
	_Atomic uint64_t wake_bytes, wake_inodes;
	_Atomic bool armed;
};

struct isd_storage_notify;

/* NULL where inotify cannot be had (LIMITED is set in a then).  wake_fd:
 * an eventfd written when the watcher is to look (-1: none). */
struct isd_storage_notify *isd_storage_notify_new(struct isd_storage_activity *a, int wake_fd);
void isd_storage_notify_free(struct isd_storage_notify *n);
/* For poll(): readable when events are queued. */
int isd_storage_notify_fd(const struct isd_storage_notify *n);
/* From the count's walk: the directory open at dfd, named path. */
void isd_storage_notify_watch_dir(struct isd_storage_notify *n, int dfd, const char *path);
/* Reads what is queued; true when the watcher is to look now (and then
 * wake_fd was written). */
bool isd_storage_notify_drain(struct isd_storage_notify *n);
/* During a count: what is queued read, the growth since its start. */
void isd_storage_notify_growth(struct isd_storage_notify *n, uint64_t *bytes, uint64_t *inodes);
/* Before a count: what is queued read, then growth starts again at 0. */
void isd_storage_notify_reset(struct isd_storage_notify *n);

/* isd_storage_account_limited with the directories walked watched by n
 * (src/storage.c). */
struct isd_storage_limits;
struct isd_storage_usage;
struct timespec;
int isd_storage_account_notify(char *const *paths, const struct timespec *since, const struct isd_storage_limits *lim,
			       struct isd_storage_notify *n, struct isd_storage_usage *u);

/* The counter's side (src/storage-count.c): what the watcher polls (the
 * counting process's eventfd, or the inotify descriptor where the count
 * runs in isd), whether it is to look now (reads what is queued there),
 * its arming, the shared estimate (NULL for no counter). */
struct isd_storage_counter;
int isd_storage_counter_poll_fd(const struct isd_storage_counter *c);
bool isd_storage_counter_woken(struct isd_storage_counter *c);
void isd_storage_counter_arm(struct isd_storage_counter *c, uint64_t bytes, uint64_t inodes);
const struct isd_storage_activity *isd_storage_counter_activity(const struct isd_storage_counter *c);

#endif
