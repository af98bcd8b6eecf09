/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cow workspace without a mount namespace (the landlock tier,
 * src/workspace-copy.c): the payload works on a copy, and what it changed
 * becomes the session's upper layer, as an overlay would have written it.
 */
#ifndef ISD_WORKSPACE_COPY_H
#define ISD_WORKSPACE_COPY_H

#include <time.h>

/* project copied to dst (a new directory): reflinks (FICLONE) where the
 * file system has them, else copy_file_range; the masked paths
 * (relative, directories ending in "/") empty. */
int isd_workspace_copy(const char *project, const char *dst, char *const *masked);

/* The since of isd_workspace_copy_to_upper, taken once the copies are
 * made: later than every ctime they got (a ctime can be finer than the
 * coarse clock), earlier than every ctime to come (never before the
 * coarse clock's now): the coarse clock once it passed the fine one. */
void isd_workspace_copy_baseline(struct timespec *since);

/* After the run: every entry of copy that differs from project (changed
 * since since, the time the copy was finished) into upper, deletions as
 * whiteouts, a directory that replaced something else opaque; masked
 * paths never.  Returns the number of changes or -errno (recorded). */
int isd_workspace_copy_to_upper(const char *project, const char *copy, const char *upper, char *const *masked,
				const struct timespec *since);

#endif
