/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd diff's view of the project's git metadata.  An agent that commits
 * changes dozens of files under .git (objects, index, logs, refs); as
 * patches they are noise, while what a reviewer wants is which branches
 * moved and the new commits.  Part of isd-diff (it needs libgit2).
 */
#ifndef ISD_DIFF_GIT_H
#define ISD_DIFF_GIT_H

#include <stdbool.h>
#include <stddef.h>

#include "isd/session-changes.h"

/* True for a change of the project's own .git directory or inside it (a
 * worktree's .git pointer file is an ordinary change). */
bool isd_diff_git_path(const struct isd_change *e);

/* The files a change stands for: 1, or a deleted tree's file count. */
size_t isd_diff_git_files(const struct isd_change *e);

/* One block for the changes of c that isd_diff_git_path() selects: how
 * many files changed, each branch or tag that moved (old -> new) with the
 * subjects of its new commits, read from the session's objects and the
 * project's together, a changed HEAD. */
void isd_diff_git_summary(const char *project, const char *upper, int project_fd, int upper_fd,
			  const struct isd_changes *c, bool color);

#endif
