/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd's own directories (configuration, cache, data, state, runtime) are
 * what later sandboxes load: profiles, seccomp profiles, the compiled
 * filter cache, images, sessions.  No sandbox may change them, whatever
 * writable bind (or workspace) happens to contain them.
 */
#ifndef ISD_GUARD_H
#define ISD_GUARD_H

#include "isd/spec.h"

/* isd's directories as absolute host paths, symlinks resolved (NULL
 * terminated; caller frees with isd_strv_free).  what_out, when not NULL,
 * gets a parallel list of what each holds. */
char **isd_guard_dirs(char ***what_out);

/* For every writable bind and the workspace whose source contains one of
 * isd's directories: cover that directory with a read-only bind of the
 * sandbox's own view onto itself, and pin every directory between the
 * bind's root and it (a mount point cannot be renamed or removed, so the
 * payload cannot move the cover away and put its own directory there).
 * The directories are created on the host when the sandbox starts if they
 * are missing.  A writable bind of (something inside) one of isd's
 * directories is refused, and so is a symlink on the way to one that the
 * payload could replace.  Call after every mount is in the spec, before
 * validation. */
int isd_guard_apply(struct isd_spec *spec);

#endif
