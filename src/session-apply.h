/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd apply` is all or nothing: every change is checked first and each
 * refusal listed; only when none is refused is everything staged next to
 * its place (temporary names in the project, copies of the session's
 * files), flushed, and then renamed into place.  A refusal, or a failure
 * while staging, leaves the project as it was.
 *
 * A check that refuses something (host changes, special files, and the
 * git checks of src/session-git.c) joins isd_apply_check_all() and calls
 * isd_apply_refuse() for each change it refuses; isd_apply_note() says
 * what apply does differently from the session (setuid bits stripped).
 */
#ifndef ISD_SESSION_APPLY_H
#define ISD_SESSION_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isd/session-changes.h"

struct isd_apply {
	int project_fd, upper_fd;
	const struct isd_changes *changes;
	int64_t started_ns;
	bool force; /* --force: overwrite what changed on the host since the start */
	unsigned git_allow; /* ISD_GIT_ALLOW_* (include/isd/session-git.h) */
	size_t refused, applied;
};

/* Every check over every change; a.refused counts the refusals (each
 * already on stderr).  -errno only when a check itself failed. */
int isd_apply_check_all(struct isd_apply *a);

void isd_apply_refuse(struct isd_apply *a, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void isd_apply_note(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Check, then (nothing refused) stage, flush, commit, flush, and prune
 * the upper layer of what the project now has. */
int isd_apply_run(struct isd_apply *a);

#endif
