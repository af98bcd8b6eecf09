/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount module's primitives, all on file descriptors (the new mount
 * API): nothing is looked up by path twice and nothing can race us.  A
 * destination that does not exist is created; when its parent lies in a
 * read-only bind of the image, that directory is "shadowed": a tmpfs takes
 * its place holding binds of every original entry, so the mount point can
 * be created without writing a byte into the image on the host.
 */
#define _GNU_SOURCE
#include "mount-fs.h"
#include "isd/syscalls.h"
#include "userns.h"
#include "isd/util.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SYMLINKS 40

void isd_mount_remember_readonly(struct isd_mount_builder *b, int fd)
{
	b->readonly_later = isd_xrealloc(b->readonly_later, (b->n_readonly_later + 1) * sizeof(int));
	b->readonly_later[b->n_readonly_later++] = fd;
}

void isd_mount_fs_log_hint(int fsfd)
{
	char msg[256];
	ssize_t n = read(fsfd, msg, sizeof(msg) - 1);

	if (n > 2) {
		msg[n] = '\0';
		if (msg[n - 1] == '\n')
			msg[n - 1] = '\0';
		isd_error_hint("kernel says: %s", msg + 2);
	}
}

static int fs_set(int fsfd, const char *fstype, const char *key, const char *value)
{
	if (isd_fsconfig(fsfd, value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key, value, 0) < 0) {
		int r = isd_error(-errno, "configuring %s option %s%s%s", fstype, key, value ? "=" : "",
				  value ? value : "");
		isd_mount_fs_log_hint(fsfd);
		return r;
	}
	return 0;
}

/* A detached mount of a new filesystem instance. */
int isd_mount_new_fs(const char *fstype, const char *const *options, unsigned attrs, const char *what)
{
	_cleanup_close_ int fsfd = isd_fsopen(fstype, FSOPEN_CLOEXEC);
	int mfd, r;

	if (fsfd < 0)
		return isd_error(-errno, "creating %s for %s", fstype, what);
	for (size_t i = 0; options && options[i]; i += 2) {
		r = fs_set(fsfd, fstype, options[i], options[i + 1]);
		if (r < 0)
			return r;
	}
	if (isd_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		r = isd_error(-errno, "creating %s for %s", fstype, what);
		isd_mount_fs_log_hint(fsfd);
		return r;
	}
	mfd = isd_fsmount(fsfd, FSMOUNT_CLOEXEC, attrs);
	if (mfd < 0)
		return isd_error(-errno, "mounting %s for %s", fstype, what);
	return mfd;
}

int isd_mount_new_tmpfs(uint64_t size, uint32_t mode, const uint32_t *uid, const uint32_t *gid,
		     unsigned attrs, const char *what)
{
	return isd_mount_new_tmpfs_named("tmpfs", size, mode, uid, gid, attrs, what);
}

/* source is what mountinfo shows; runc and crun name their mounts by
 * type ("tmpfs", "shm"), and OCI conformance checks compare it with the
 * config's source. */
int isd_mount_new_tmpfs_named(const char *source, uint64_t size, uint32_t mode, const uint32_t *uid,
			      const uint32_t *gid, unsigned attrs, const char *what)
{
	char size_s[32], mode_s[16], uid_s[16], gid_s[16];
	const char *opts[12];
	size_t n = 0;

	opts[n++] = "source";
	opts[n++] = source;
	snprintf(mode_s, sizeof(mode_s), "%o", mode);
	opts[n++] = "mode";
	opts[n++] = mode_s;
	if (size) {
		snprintf(size_s, sizeof(size_s), "%llu", (unsigned long long)size);
		opts[n++] = "size";
		opts[n++] = size_s;
	}
	if (uid) {
		snprintf(uid_s, sizeof(uid_s), "%u", *uid);
		opts[n++] = "uid";
		opts[n++] = uid_s;
	}
	if (gid) {
		snprintf(gid_s, sizeof(gid_s), "%u", *gid);
		opts[n++] = "gid";
		opts[n++] = gid_s;
	}
	opts[n] = NULL;
	return isd_mount_new_fs("tmpfs", opts, attrs, what);
}

/* A private, recursive copy of an existing tree with extra restrictions.
 * AT_RECURSIVE on mount_setattr makes every submount read-only too, which a
 * classic MS_REMOUNT|MS_BIND cannot do. */
int isd_mount_clone_tree(int dfd, const char *path, unsigned attr_set, const char *what)
{
	return isd_mount_clone(dfd, path, attr_set, true, what);
}

int isd_mount_clone(int dfd, const char *path, unsigned attr_set, bool recursive, const char *what)
{
	int fd = isd_open_tree(dfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0) |
						  AT_SYMLINK_NOFOLLOW | (path[0] ? 0 : AT_EMPTY_PATH));
	struct mount_attr attr = {.attr_set = attr_set};

	if (fd < 0)
		return isd_error(-errno, "cloning %s", what);
	if (attr_set && isd_mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr) < 0) {
		int r = isd_error(-errno, "restricting the mount of %s", what);
		close(fd);
		return r;
	}
	return fd;
}

int isd_mount_attach(int mfd, int target_fd, const char *what)
{
	if (isd_move_mount(mfd, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return isd_error(-errno, "mounting %s", what);
	return 0;
}

int isd_mount_set_readonly(int mfd, const char *what)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};

	if (isd_mount_setattr(mfd, "", AT_EMPTY_PATH, &attr) < 0)
		return isd_error(-errno, "making %s read-only", what);
	return 0;
}

/* Placeholder of the same kind as the entry a bind will cover it with. */
int isd_mount_placeholder(int dirfd, const char *name, bool is_dir, mode_t mode)
{
	if (is_dir) {
		if (mkdirat(dirfd, name, mode & 07777) < 0 && errno != EEXIST)
			return -errno;
	} else {
		int fd = openat(dirfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0 && errno != EEXIST)
			return -errno;
		if (fd >= 0)
			close(fd);
	}
	return 0;
}


/* Recreate the entries of srcdir inside dstdir: symlinks as symlinks, every
 * other entry as a bind of the original (recursive, with attr_set added). */
int isd_mount_mirror_entries(int srcdir, int dstdir, isd_mount_entry_filter keep, unsigned attr_set, const char *where)
{
	int listfd = openat(srcdir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (listfd < 0)
		return isd_error(-errno, "listing %s", where);
	d = fdopendir(listfd);
	if (!d) {
		close(listfd);
		return isd_error(-errno, "listing %s", where);
	}
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		_cleanup_close_ int clone = -1, target = -1;
		struct stat st;

		if (!strcmp(name, ".") || !strcmp(name, "..") || (keep && !keep(name)))
			continue;
		if (fstatat(srcdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = isd_error(-errno, "inspecting %s/%s", where, name);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			char link[PATH_MAX];
			ssize_t n = readlinkat(srcdir, name, link, sizeof(link) - 1);
			if (n < 0) {
				r = isd_error(-errno, "reading symlink %s/%s", where, name);
				break;
			}
			link[n] = '\0';
			if (symlinkat(link, dstdir, name) < 0 && errno != EEXIST) {
				r = isd_error(-errno, "recreating symlink %s/%s", where, name);
				break;
			}
			continue;
		}
		r = isd_mount_placeholder(dstdir, name, S_ISDIR(st.st_mode), st.st_mode);
		if (r < 0) {
			r = isd_error(r, "creating the mount point for %s/%s", where, name);
			break;
		}
		clone = isd_mount_clone_tree(srcdir, name, attr_set, name);
		if (clone < 0) {
			r = clone;
			break;
		}
		target = openat(dstdir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (target < 0) {
			r = isd_error(-errno, "opening the mount point for %s/%s", where, name);
			break;
		}
		r = isd_mount_attach(clone, target, name);
		if (r < 0)
			break;
	}
	closedir(d);
	return r;
}

/* Replace the read-only directory dirfd (at path inside the root) by a tmpfs
 * that shows the same entries, so that new mount points can be made in it. */
static int shadow_directory(struct isd_mount_builder *b, int dirfd, const char *path)
{
	struct stat st;
	int tmp, r;

	if (fstat(dirfd, &st) < 0)
		return isd_error(-errno, "inspecting %s", path);
	tmp = isd_mount_new_tmpfs(1 << 20, st.st_mode & 07777, NULL, NULL,
			MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, path);
	if (tmp < 0)
		return tmp;
	r = isd_mount_attach(tmp, dirfd, path);
	if (r == 0)
		r = isd_mount_mirror_entries(dirfd, tmp, NULL, 0, path[0] ? path : "/");
	if (r < 0) {
		close(tmp);
		return r;
	}
	isd_mount_remember_readonly(b, tmp);
	return dup(tmp);
}


/*
 * Resolve path inside the root, creating what is missing.  Symlinks are
 * followed, but only inside the root ("/" and ".." stop at it), like
 * RESOLVE_IN_ROOT; every component is opened with O_NOFOLLOW relative to its
 * parent, so the kernel never follows a link on our behalf.
 * Returns an O_PATH fd of the final node, or -errno.
 */
int isd_mount_resolve_create(struct isd_mount_builder *b, const char *path, enum isd_node_kind kind, bool create)
{
	_cleanup_free_ char *rem = isd_xstrdup(path);
	_cleanup_free_ char *cur_path = isd_xstrdup("");
	int cur = dup(b->root);
	int links = 0, r;

	if (cur < 0)
		return isd_error(-errno, "resolving %s", path);
	for (;;) {
		char *p = rem, *comp, *next;
		bool last;
		int fd;
		struct stat st;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		comp = p;
		next = strchr(p, '/');
		if (next)
			*next++ = '\0';
		else
			next = p + strlen(p);
		while (*next == '/')
			next++;
		last = *next == '\0';

		if (!strcmp(comp, ".")) {
			memmove(rem, next, strlen(next) + 1);
			continue;
		}
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(cur_path, '/');
			if (slash)
				*slash = '\0';
			close(cur);
			cur = cur_path[0] ? isd_openat2(b->root, cur_path, O_PATH | O_DIRECTORY | O_CLOEXEC,
							 RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
					  : dup(b->root);
			if (cur < 0)
				return isd_error(-errno, "resolving %s", path);
			memmove(rem, next, strlen(next) + 1);
			continue;
		}

		fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && create) {
			r = last && kind == ISD_NODE_FILE ? isd_mount_placeholder(cur, comp, false, 0644)
						      : isd_mount_placeholder(cur, comp, true, 0755);
			if (r == -EROFS || r == -EPERM || r == -EACCES) {
				int shadow = shadow_directory(b, cur, cur_path);
				if (shadow < 0) {
					close(cur);
					return isd_error(shadow, "creating the mount point %s inside the read-only %s",
							 path, cur_path[0] ? cur_path : "/");
				}
				close(cur);
				cur = shadow;
				r = last && kind == ISD_NODE_FILE ? isd_mount_placeholder(cur, comp, false, 0644)
							      : isd_mount_placeholder(cur, comp, true, 0755);
			}
			if (r < 0) {
				close(cur);
				return isd_error(r, "creating %s/%s for %s", cur_path, comp, path);
			}
			fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		if (fd < 0) {
			r = -errno;
			close(cur);
			return isd_error(r, "resolving %s at %s/%s", path, cur_path, comp);
		}
		if (fstat(fd, &st) < 0) {
			r = -errno;
			close(fd);
			close(cur);
			return isd_error(r, "inspecting %s/%s", cur_path, comp);
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);
			char *joined;

			close(fd);
			if (n < 0 || ++links > MAX_SYMLINKS) {
				close(cur);
				return isd_error(n < 0 ? -errno : -ELOOP, "resolving %s: symlink %s/%s", path,
						 cur_path, comp);
			}
			target[n] = '\0';
			joined = isd_xasprintf("%s/%s", target, next);
			free(rem);
			rem = joined;
			if (target[0] == '/') {
				close(cur);
				cur = dup(b->root);
				cur_path[0] = '\0';
			}
			continue;
		}
		if (!last && !S_ISDIR(st.st_mode)) {
			close(fd);
			close(cur);
			return isd_error(-ENOTDIR, "resolving %s at %s/%s", path, cur_path, comp);
		}
		close(cur);
		cur = fd;
		{
			char *np = isd_xasprintf("%s/%s", cur_path, comp);
			free(cur_path);
			cur_path = np;
		}
		memmove(rem, next, strlen(next) + 1);
	}
	{
		struct stat st;
		if (fstat(cur, &st) < 0) {
			r = -errno;
			close(cur);
			return isd_error(r, "inspecting %s", path);
		}
		if (kind == ISD_NODE_DIR && !S_ISDIR(st.st_mode)) {
			close(cur);
			return isd_error(-ENOTDIR, "mounting a directory on %s", path);
		}
		if (kind == ISD_NODE_FILE && S_ISDIR(st.st_mode)) {
			close(cur);
			return isd_error(-EISDIR, "mounting a file on %s", path);
		}
	}
	return cur;
}

/*
 * /proc/self/mountinfo lists a namespace's mounts in the order they were
 * made (Linux 6.8 on: by their unique id), not attached, and every bind's
 * source was cloned at the start, before the root: the binds came first,
 * ahead of "/" (the OCI runtime-tools suite's mounts test checks the
 * config's order there).  A clone of the clone made now takes its place
 * in that order, with the same flags and peers.  Where the kernel will
 * not clone a detached mount (older kernels; 6.18 clones those made in
 * the caller's own mount namespace only) the first clone stays.
 */
bool isd_mount_reclone(int *fd)
{
	int fresh = isd_open_tree(*fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);

	if (fresh < 0)
		return false;
	close(*fd);
	*fd = fresh;
	return true;
}

/* Where that cannot be (isd's clone of a root caller's bind, made before
 * the sandbox in the host's namespace: clones of another namespace's
 * detached mounts are refused), a clone of it once attached here, put in
 * its place.  Only for an OCI config (mounts_listed_order): isd exec's
 * order is its own.  Any step refused leaves the first clone. */
int isd_mount_renew_attached(struct isd_mount_builder *b, int *fd, const char *path, enum isd_node_kind kind)
{
	_cleanup_close_ int at = isd_mount_resolve_create(b, path, kind, false), at2 = -1;
	int fresh;
	char proc[64];

	if (at < 0) {
		isd_error_clear();
		return 0;
	}
	fresh = isd_open_tree(at, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (fresh < 0)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", at);
	if (umount2(proc, MNT_DETACH) < 0) {
		close(fresh);
		return 0;
	}
	close(*fd);
	*fd = fresh;
	at2 = isd_mount_resolve_create(b, path, kind, true);
	if (at2 < 0)
		return at2;
	return isd_mount_attach(fresh, at2, path);
}
