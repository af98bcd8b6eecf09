/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File-tree helpers shared by the runtime and isd build (src/fsutil.c). */
#ifndef ISD_FSUTIL_H
#define ISD_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* rm -rf of name below dirfd without ever following a symlink, however
 * deep the tree; a directory that cannot be entered or emptied (the
 * kernel's mode 000 work/work, a read-only directory of an image) is made
 * so first.  0 also when name is not there; on failure the message says
 * what could not be removed. */
int isd_rm_rf_at(int dirfd, const char *name);
/* mkdir -p of path below dirfd (AT_FDCWD: of path itself); each component
 * made gets mode.  Symlinks on the way are followed as the kernel does:
 * for isd's own directories, or a tree the caller is chrooted into. */
int isd_mkdir_p_at(int dirfd, const char *path, mode_t mode);
int isd_mkdir_p(const char *path, mode_t mode); /* isd_mkdir_p_at(AT_FDCWD, ...) */
/* The same below a directory a sandbox could have written, never following
 * a symlink: an O_PATH descriptor of the last directory in *out. */
int isd_mkdir_p_open_at(int dirfd, const char *path, mode_t mode, int *out);

/* dfd/path replaced by data in one step: a new file beside it (O_EXCL,
 * never through a symlink) with mode, written, fsync()ed when durable,
 * then renamed over path.  A reader sees the old file or the whole new
 * one; a failure leaves nothing behind and says what it was writing. */
int isd_replace_file_at(int dfd, const char *path, const void *data, size_t len, mode_t mode, bool durable);

/* Files by their inode, for the other names of a hard link: (dev, ino)
 * to a value of the caller's.  Returns true with *found its value when
 * (dev, ino) is there, else adds it with value. */
struct isd_inode_map {
	struct isd_inode_slot {
		uint64_t dev, ino;
		size_t value;
		bool used;
	} *slot;
	size_t cap, n;
};
bool isd_inode_map_find_or_add(struct isd_inode_map *m, uint64_t dev, uint64_t ino, size_t value, size_t *found);
bool isd_inode_map_find(const struct isd_inode_map *m, uint64_t dev, uint64_t ino, size_t *found);
void isd_inode_map_free(struct isd_inode_map *m);

/* An image's users and groups, read without NSS (a hostile image's
 * libraries are never loaded) from its /etc/passwd and /etc/group, resolved
 * inside the tree at rootfd, regular files only; a line with fewer fields
 * than the format has does not count. */
struct isd_image_user {
	uint32_t uid, gid;
	char *name, *home; /* malloc'ed */
};
/* The passwd entry named name or, when name is NULL, of uid. */
int isd_image_passwd(int rootfd, const char *name, uint32_t uid, struct isd_image_user *out);
/* USER/--chown's rule: a name, or a uid (then without an entry its gid is
 * the uid, as in Docker). */
int isd_image_lookup_user(int rootfd, const char *user, uint32_t *uid, uint32_t *gid);
int isd_image_lookup_group(int rootfd, const char *group, uint32_t *gid);

#endif
