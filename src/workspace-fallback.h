/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The full tier's copies (src/workspace-fallback.c): where overlayfs
 * cannot write the session's store, the cow workspace and the agent's
 * state directories are copies bound at their places, and what changed
 * becomes their upper layers after the run, as the landlock tier does.
 */
#ifndef ISD_WORKSPACE_FALLBACK_H
#define ISD_WORKSPACE_FALLBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "isd/spec.h"

struct isd_copy_fallback {
	char *workspace; /* the workspace's copy, or NULL */
	char **state;    /* per spec mount: an agent state directory's copy */
	size_t n_state;
	struct timespec since; /* what changed after it is the payload's */
};

/* Whether dir (an upper layer's) lies on a file system overlayfs cannot
 * write to as an upper layer: overlayfs itself. */
bool isd_copy_fallback_needed(const char *dir);

/* The copies, where needed: the workspace's into session_dir (its upper
 * is upper), each overlay agent state directory's beside its upper
 * (state_upper, per spec mount).  Says so in one note.  0 or -errno. */
int isd_copy_fallback_begin(const struct isd_spec *spec, const char *session_dir, const char *upper,
			    const char *const *state_upper, struct isd_copy_fallback *f);

/* After the run: each copy's changes into its upper layer, the copy
 * gone; a copy whose changes could not be kept stays (*keep: the
 * session must stay). */
void isd_copy_fallback_end(const struct isd_spec *spec, const char *upper, const char *const *state_upper,
			   struct isd_copy_fallback *f, bool *keep);

#endif
