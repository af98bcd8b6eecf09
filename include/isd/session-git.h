/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a session's changes mean to git on the host: the review that `isd
 * diff` prints and `isd apply` enforces, from one classification so that
 * the two never disagree.  Executable configuration (config keys that name
 * commands or redirect git's lookups, hooks, commondir, .git pointer
 * files, a new repository's config) and history loss (objects removed,
 * shallow, grafts, replace refs) are refused by apply unless the user
 * names them (--allow-git-exec, --allow-history-loss).  Every text is
 * escaped for the terminal already.  No libgit2: isd apply runs it too.
 */
#ifndef ISD_SESSION_GIT_H
#define ISD_SESSION_GIT_H

#include <stdbool.h>
#include <stdint.h>

#include "isd/session-changes.h"

enum isd_git_kind {
	ISD_GIT_EXEC,    /* makes git on the host run something, or look elsewhere for it */
	ISD_GIT_HISTORY, /* removes or rewrites history */
	ISD_GIT_INFO,    /* other configuration, a new repository: shown, not refused */
};

struct isd_git_finding {
	enum isd_git_kind kind;
	char *path; /* the change's path (raw bytes: quote it to print) */
	char *text; /* one line, quoted */
};

struct isd_git_review {
	struct isd_git_finding *v;
	size_t n;
	size_t n_exec, n_history;
};

/* Flags for isd_git_check_apply(). */
#define ISD_GIT_ALLOW_EXEC 1u
#define ISD_GIT_ALLOW_HISTORY_LOSS 2u

/* Classify the changes c (project_fd: the project, upper_fd: the session's
 * upper layer).  Reads the project's and the session's git files, the
 * user's global git config for core.hooksPath; never follows a symlink,
 * never opens anything but regular files. */
int isd_git_review(int project_fd, int upper_fd, const struct isd_changes *c, struct isd_git_review *out);
void isd_git_review_free(struct isd_git_review *r);

/* Print the review's findings (nothing when there are none): executable
 * configuration and history loss first and loud. */
void isd_git_review_print(const struct isd_git_review *r, bool color);

/* One of isd apply's checks (isd_apply_check_all()): every finding that
 * a->git_allow does not name is refused; the repository's refs (HEAD,
 * refs/, packed-refs) and index are one unit: when one of them changed on
 * the host since the session started, all are refused unless a->force.
 * 0 or -errno. */
struct isd_apply;
int isd_git_check_apply(struct isd_apply *a);

/* Of the review (src/session-git-objects.c): how many objects the
 * deletions under gitdir/objects/ (or of gitdir or objects/ as a whole)
 * remove that no pack or loose object holds once c is applied.
 * *at_least when more were deleted than isd looks up or a deleted pack's
 * index could not be read (*unreadable). */
size_t isd_git_objects_lost(int project_fd, int upper_fd, const struct isd_changes *c, const char *gitdir,
			    bool *at_least, bool *unreadable);

/* True for .git/index: it goes with the session's HEAD, whatever git on
 * the host did to it (a refresh by git status) since the session started;
 * isd_git_check_apply() decides about the unit. */
bool isd_git_follows_head(const char *path);

#endif
