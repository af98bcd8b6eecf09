/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a copy-on-write session changed: the one walk that `isd diff`, `isd
 * apply`, `isd session list` and the end of `isd exec` share.  It compares
 * a session's upper layer with the live project (the overlay's lower
 * layer) as overlayfs itself would merge them (userxattr mode: whiteouts
 * are 0/0 character devices, opaque directories carry
 * user.overlay.opaque="y"; no redirect_dir, no metacopy), so an upper file
 * that is a plain copy-up with the project's content is no change.
 *
 * The walk goes by directory descriptors and never follows a symlink.
 * Paths are byte strings relative to the project ("src/a.c"), without a
 * leading "/"; they may hold any byte but NUL and '/'-separators.
 */
#ifndef ISD_SESSION_CHANGES_H
#define ISD_SESSION_CHANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum isd_change_status {
	ISD_CHANGE_ADDED = 'A',    /* not in the project */
	ISD_CHANGE_DELETED = 'D',  /* whiteout, or hidden by an opaque directory */
	ISD_CHANGE_MODIFIED = 'M', /* same type: content, link target or mode */
	ISD_CHANGE_TYPE = 'T',     /* another type (file, symlink, directory): delete + add */
};

struct isd_change {
	char *path;
	enum isd_change_status status;
	mode_t old_mode; /* st_mode in the project (type included), 0 when added */
	mode_t new_mode; /* st_mode in the upper layer, 0 when deleted */
	bool content;    /* MODIFIED: content or link target differ (else only the mode) */
	/* The project's non-directory entries under a deleted (or replaced)
	 * directory: the whole tree is one change. */
	uint64_t tree_files;
};

struct isd_changes {
	struct isd_change *v;
	size_t n, cap;
};

/* Every change, sorted by path (bytes, as git sorts).  An added directory
 * is a change of its own, followed by its entries. */
int isd_changes_collect(int project_fd, int upper_fd, struct isd_changes *out);

/* The changes at or under one of paths (all when paths is NULL or empty).
 * A path inside a deleted tree selects the project's entries under it: with
 * expand each file is a change of its own (for diffs of it; a directory that
 * a file or symlink replaced becomes the deletion of its files and an added
 * entry), without it the selected subtree is one deleted change.  A tree of
 * more than ISD_CHANGES_EXPAND_MAX files stays one change. */
#define ISD_CHANGES_EXPAND_MAX 20000
int isd_changes_select(int project_fd, const struct isd_changes *all, char *const *paths, bool expand,
		       struct isd_changes *out);

void isd_changes_free(struct isd_changes *c);

/* Changes that `isd session list` and the end of a run count: a directory
 * that is only there to hold added entries does not count by itself. */
size_t isd_changes_count(const struct isd_changes *c);

/* Apply the changes to the project (see src/session-apply.c).  A change
 * whose project path changed at or after started_ns (ctime), or whose
 * parent is not a plain directory beneath project_fd, is refused (listed
 * on stderr, nothing of it written) unless force allows the former.
 * *refused counts them.  Afterwards the upper layer loses every entry that
 * now equals the project. */
int isd_changes_apply(int project_fd, int upper_fd, const struct isd_changes *c, int64_t started_ns, bool force,
		      size_t *applied, size_t *refused);

/* Remove the upper layer's entries that the merged view does not need any
 * more (equal to the project: applied changes, plain copy-ups). */
int isd_changes_prune(int project_fd, int upper_fd);

/* isd_quote_path: isd/visible.h; isd_project_relative: isd/path-util.h. */

#endif
