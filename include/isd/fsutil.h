/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File-tree helpers shared by the runtime and isd build (src/fsutil.c). */
#ifndef ISD_FSUTIL_H
#define ISD_FSUTIL_H

#include <stdint.h>
#include <sys/types.h>

/* rm -rf of name below dirfd without ever following a symlink. */
int isd_rm_rf_at(int dirfd, const char *name);
/* mkdir -p of a relative path below dirfd (symlinks inside followed as the
 * kernel does: callers run chrooted into the tree). */
int isd_mkdir_p_at(int dirfd, const char *path, mode_t mode);

/* Looks a user (or numeric uid) up in the passwd file of the tree at rootfd
 * without NSS (a hostile image's libraries are never loaded), resolving the
 * path inside the tree. */
int isd_image_lookup_user(int rootfd, const char *user, uint32_t *uid, uint32_t *gid);
int isd_image_lookup_group(int rootfd, const char *group, uint32_t *gid);

#endif
