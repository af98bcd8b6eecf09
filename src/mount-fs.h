/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The file-descriptor primitives of mount.c, in mount-fs.c: new filesystem
 * instances, private clones of trees, attaching them, and resolving (and
 * creating) destinations inside the new root without following a symlink
 * out of it.  Not part of the mount module's interface.
 */
#ifndef ISD_MOUNT_FS_H
#define ISD_MOUNT_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct isd_mount_builder {
	int root;          /* the sandbox's root tmpfs, attached at a staging dir */
	int generated;     /* tmpfs beneath it holding generated files */
	unsigned n_generated;
	int *readonly_later; /* tmpfs mounts to make read-only once populated */
	size_t n_readonly_later;
	bool writable_image; /* isd build's RUN: never write generated files into it */
};

enum isd_node_kind { ISD_NODE_DIR, ISD_NODE_FILE };
typedef bool (*isd_mount_entry_filter)(const char *name);

/* The kernel explains fsconfig failures in the fs context's log: its
 * first line as a hint ("kernel says: ...") to the recorded error. */
void isd_mount_fs_log_hint(int fsfd);
/* Make fd's mount read-only once the whole tree is built. */
void isd_mount_remember_readonly(struct isd_mount_builder *b, int fd);
/* A detached mount of a new instance of fstype; options are key/value pairs. */
int isd_mount_new_fs(const char *fstype, const char *const *options, unsigned attrs, const char *what);
int isd_mount_new_tmpfs(uint64_t size, uint32_t mode, const uint32_t *uid, const uint32_t *gid, unsigned attrs,
			const char *what);
int isd_mount_new_tmpfs_named(const char *source, uint64_t size, uint32_t mode, const uint32_t *uid,
			      const uint32_t *gid, unsigned attrs, const char *what);
/* A private recursive clone of dfd/path with attr_set added to every mount. */
int isd_mount_clone_tree(int dfd, const char *path, unsigned attr_set, const char *what);
/* The same, the mount at path alone without recursive (isd-runtime's
 * "bind" of a directory: what the mounts beneath it cover shows, as the
 * kernel allows; in a user namespace it refuses a mount with locked
 * submounts, EINVAL). */
int isd_mount_clone(int dfd, const char *path, unsigned attr_set, bool recursive, const char *what);
int isd_mount_attach(int mfd, int target_fd, const char *what);
int isd_mount_set_readonly(int mfd, const char *what);
int isd_mount_placeholder(int dirfd, const char *name, bool is_dir, mode_t mode);
/* Recreate srcdir's entries in dstdir: symlinks as such, the rest bound. */
int isd_mount_mirror_entries(int srcdir, int dstdir, isd_mount_entry_filter keep, unsigned attr_set,
			     const char *where);
/* path inside the root as an O_PATH fd, created (and read-only parents
 * shadowed) when create; never leaves the root. */
int isd_mount_resolve_create(struct isd_mount_builder *b, const char *path, enum isd_node_kind kind, bool create);

/* A detached clone's clone, made now, in *fd's place (mountinfo lists
 * mounts in the order they were made): false where the kernel refuses. */
bool isd_mount_reclone(int *fd);
/* The mount attached at path, cloned again and the clone put in its
 * place (where isd_mount_reclone was refused); 0 when a step is refused. */
int isd_mount_renew_attached(struct isd_mount_builder *b, int *fd, const char *path, enum isd_node_kind kind);

#endif
