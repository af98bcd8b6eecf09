/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The full tier's copies (src/workspace-fallback.h).  A plain `podman run`
 * of an image puts the home, and so isd's session store, on the
 * container's overlayfs, which overlayfs refuses as an upper layer
 * ("not supported as upperdir"): the cow workspace and the agent's state
 * could not be mounted at all.  Rather than refuse, or write to the
 * project, isd copies them (reflinks where the file system has them,
 * src/workspace-copy.c), binds the copies at their places, and after the
 * run writes what the payload changed as the upper layers an overlay
 * would have written, so that isd diff, apply and the agent state's
 * guarded merge see a session like any other.
 */
#define _GNU_SOURCE
#include "workspace-fallback.h"
#include "workspace-copy.h"
#include "isd/fsutil.h"
#include "isd/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define COPY_NAME "full-copy"

bool isd_copy_fallback_needed(const char *dir)
{
	struct statfs fs;

	return dir && statfs(dir, &fs) == 0 && fs.f_type == OVERLAYFS_SUPER_MAGIC;
}

/* The directory of path (an upper layer's: its store). */
static char *dir_of(const char *path)
{
	char *d = isd_xstrdup(path), *slash = strrchr(d, '/');

	if (slash && slash != d)
		*slash = '\0';
	return d;
}

static void remove_copy(const char *store)
{
	_cleanup_close_ int dir = open(store, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (dir >= 0)
		(void)isd_rm_rf_at(dir, COPY_NAME);
}

int isd_copy_fallback_begin(const struct isd_spec *spec, const char *session_dir, const char *upper,
			    const char *const *state_upper, struct isd_copy_fallback *f)
{
	const char *on_overlay = NULL;
	int r;

	memset(f, 0, sizeof(*f));
	if (session_dir && isd_copy_fallback_needed(upper))
		on_overlay = upper;
	for (size_t i = 0; !on_overlay && state_upper && i < spec->n_mounts; i++)
		if (spec->mounts[i].agent_state && spec->mounts[i].type == ISD_MOUNT_OVERLAY &&
		    isd_copy_fallback_needed(state_upper[i]))
			on_overlay = state_upper[i];
	if (!on_overlay)
		return 0;
	/* One store: what holds one upper layer holds them all. */
	fprintf(stderr, "isd: note: isd's store (%s) is on overlayfs, which overlayfs cannot write to (the home on a "
			"container's image): the cow workspace and the agent's state are copies, kept as sessions as "
			"usual (isd diff, isd apply)\n", on_overlay);
	if (session_dir) {
		remove_copy(session_dir);
		f->workspace = isd_xasprintf("%s/" COPY_NAME, session_dir);
		if ((r = isd_workspace_copy(spec->workspace.path, f->workspace, spec->workspace.masked)) < 0)
			return r;
	}
	f->n_state = spec->n_mounts;
	f->state = isd_xcalloc(f->n_state ? f->n_state : 1, sizeof(char *));
	for (size_t i = 0; state_upper && i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		_cleanup_free_ char *store = NULL;

		if (!m->agent_state || m->type != ISD_MOUNT_OVERLAY || !state_upper[i])
			continue;
		store = dir_of(state_upper[i]);
		remove_copy(store);
		f->state[i] = isd_xasprintf("%s/" COPY_NAME, store);
		if ((r = isd_workspace_copy(m->source, f->state[i], NULL)) < 0)
			return r;
	}
	isd_workspace_copy_baseline(&f->since);
	return 0;
}

void isd_copy_fallback_end(const struct isd_spec *spec, const char *upper, const char *const *state_upper,
			   struct isd_copy_fallback *f, bool *keep)
{
	for (size_t i = 0; i < f->n_state; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		_cleanup_free_ char *store = NULL;

		if (!f->state[i])
			continue;
		if (f->since.tv_sec && isd_workspace_copy_to_upper(m->source, f->state[i], state_upper[i], NULL, &f->since) < 0) {
			isd_error_print("keeping the agent's state failed");
			fprintf(stderr, "isd: the agent's copy of %s stays in %s\n", m->source, f->state[i]);
		} else {
			store = dir_of(state_upper[i]);
			remove_copy(store);
		}
		free(f->state[i]);
	}
	free(f->state);
	if (f->workspace) {
		_cleanup_free_ char *session = dir_of(f->workspace);

		/* Nothing the payload did is dropped: the copy stays. */
		if (f->since.tv_sec && isd_workspace_copy_to_upper(spec->workspace.path, f->workspace, upper,
								    spec->workspace.masked, &f->since) < 0) {
			isd_error_print("keeping the workspace's changes failed");
			fprintf(stderr, "isd: the payload's copy of the workspace stays in %s\n", f->workspace);
			*keep = true;
		} else {
			remove_copy(session);
		}
		free(f->workspace);
	}
	memset(f, 0, sizeof(*f));
}
