/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The workspace: the project directory the payload works on, in one of
 * three modes (rw, ro, cow), with secret masks and protected git metadata.
 * The host side (parsing, resolving masks against the host's tree, creating
 * a missing .git/hooks) runs before the sandbox; the mounts themselves run
 * in the child, on the tree mount.c builds.
 */
#ifndef ISD_WORKSPACE_H
#define ISD_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>

#include "isd/spec.h"

struct isd_mount_builder;

/* "DIR[:MODE]" (MODE rw|ro|cow, default rw); DIR relative to cwd. */
int isd_workspace_parse(const char *arg, const char *cwd, char **path, enum isd_workspace_mode *mode);
const char *isd_workspace_mode_name(enum isd_workspace_mode mode);

/* The workspace's mount (and working directory); 1 when there is a
 * workspace, 0 when none, or -errno. */
int isd_workspace_to_mount(struct isd_spec *spec, const char *caller_home, struct isd_mount *out);

/* gitignore-like: a pattern without "/" matches a name at any depth, one
 * with "/" the path from the workspace root, a trailing "/" directories
 * only (fnmatch(3) wildcards). */
bool isd_workspace_mask_matches(const char *pattern, const char *relpath, bool is_dir);

/* Host side, after options and profiles: the workspace mount, the masked
 * paths and the git metadata to protect, recorded in the spec. */
int isd_workspace_resolve(struct isd_spec *spec);

/* Host side, right before the sandbox (src/workspace-git-host.c): creates
 * .git/hooks when missing so that it can be covered read-only, and a rw
 * workspace's stand-ins; *out (NULL: nothing to do after) is for
 * cleanup_host. */
struct isd_workspace_host;
int isd_workspace_prepare_host(const struct isd_spec *spec, struct isd_workspace_host **out);

/* Host side, after the sandbox: removes the stand-ins no other run still
 * uses, then holds the executable configuration of the repositories the
 * run made or changed in a rw workspace (src/git-hold.c); frees h. */
void isd_workspace_cleanup_host(const struct isd_spec *spec, struct isd_workspace_host *h);

/* Child side: a detached overlay mount from the project's and the
 * session directory's mounts (src/workspace-overlay.c). */
int isd_workspace_new_overlay(struct isd_mount_builder *b, int lower_mnt, int session_mnt, size_t index,
			      unsigned attrs, bool volatile_upper, const char *project);

/* Child side, once the workspace is mounted: masks and git protection. */
int isd_workspace_protect(struct isd_mount_builder *b, const struct isd_spec *spec);

void isd_workspace_free(struct isd_workspace *ws);

#endif
