/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * After a rw run (no review): the repositories the payload made or changed
 * in the workspace whose executable configuration git on the host would
 * run (git init sub, a submodule's or linked worktree's new git directory,
 * a .git file or link pointing out of the workspace, a nested repository's
 * config or hooks) have it moved aside under a name the user sees
 * (config.isd-held, hooks.isd-held, .git.isd-held), one isd: line each.
 *
 * "Changed" is a change time from the run on: the kernel sets it on every
 * write, rename and chmod, and nothing lets a process set it back.  The
 * walk is bounded (directories, depth) and says so when it stops; it does
 * not enter git's object store or a directory without subdirectories.
 */
#ifndef ISD_GIT_HOLD_H
#define ISD_GIT_HOLD_H

#include <time.h>

#define ISD_GIT_HOLD_MAX_DIRS 200000
#define ISD_GIT_HOLD_MAX_DEPTH 64

/* root: the workspace; since: the run's start (CLOCK_REALTIME_COARSE);
 * pinned: paths (relative, directories ending in "/") that were read-only
 * for the run and cannot have changed.  Returns how many repositories had
 * something held. */
int isd_git_hold(const char *root, const struct timespec *since, char *const *pinned);

#endif
