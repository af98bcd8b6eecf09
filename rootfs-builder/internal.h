/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers shared by the files of rootfs-builder/ only. */
#ifndef ISD_BUILD_INTERNAL_H
#define ISD_BUILD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* rm -rf of name below dirfd without ever following a symlink. */
int isd_rm_rf_at(int dirfd, const char *name);
/* mkdir -p of a relative path below dirfd (symlinks inside followed as the
 * kernel does: callers run chrooted into the tree). */
int isd_mkdir_p_at(int dirfd, const char *path, mode_t mode);

/* "sha256:HEX" of a file, or -errno. */
int isd_sha256_fd(int fd, char out[80]);
/* Incremental sha256 (OpenSSL EVP). */
struct isd_sha256;
struct isd_sha256 *isd_sha256_new(void);
void isd_sha256_update(struct isd_sha256 *h, const void *data, size_t len);
/* Writes "sha256:HEX" and frees h. */
void isd_sha256_final(struct isd_sha256 *h, char out[80]);

/* Looks a user (or numeric uid) up in the passwd file of the tree at rootfd
 * without NSS (a hostile image's libraries are never loaded), resolving the
 * path inside the tree. */
int isd_image_lookup_user(int rootfd, const char *user, uint32_t *uid, uint32_t *gid);
int isd_image_lookup_group(int rootfd, const char *group, uint32_t *gid);

/* COPY/ADD sources: cleaned context-relative names, wildcards expanded;
 * refused when they leave the context. */
int isd_copy_expand_sources(int ctxfd, char *const *sources, char ***out);
/* Feeds names, modes, contents and link targets of the sources to h. */
int isd_copy_hash(int ctxfd, char *const *expanded, struct isd_sha256 *h);
/* Copies the sources to dest (absolute in the image) as root of the
 * image's user namespace, chrooted into rootfs. */
struct isd_idmap;
int isd_copy_run(const char *rootfs, const struct isd_idmap *map, int ctxfd, char *const *expanded,
		 const char *dest, bool dest_is_dir, const char *chown, const char *chmod);

/* Puts "prefix" (formatted) before the recorded error message; returns r. */
int isd_error_prefix(int r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
