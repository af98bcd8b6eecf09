/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Everything is done with the new mount API on file descriptors: sources are
 * cloned (open_tree) before anything covers them, destinations are resolved
 * component by component inside the new root without ever following a
 * symlink out of it, and mounts are attached to those descriptors
 * (move_mount), so no path is looked up twice and nothing can race us.
 *
 * A destination that does not exist is created.  When its parent lies in a
 * read-only bind of the image, that directory is "shadowed": a tmpfs takes
 * its place holding binds of every original entry, so the mount point can be
 * created without writing a byte into the image on the host.
 */
#define _GNU_SOURCE
#include "isd/mount.h"
#include "isd/syscalls.h"
#include "isd/userns.h"
#include "isd/util.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SYMLINKS 40

struct builder {
	int root;          /* the sandbox's root tmpfs, attached at a staging dir */
	int generated;     /* tmpfs beneath it holding generated files */
	unsigned n_generated;
	int *readonly_later; /* tmpfs mounts to make read-only once populated */
	size_t n_readonly_later;
	bool writable_image; /* isd build's RUN: never write generated files into it */
};

static void remember_readonly(struct builder *b, int fd)
{
	b->readonly_later = isd_xrealloc(b->readonly_later, (b->n_readonly_later + 1) * sizeof(int));
	b->readonly_later[b->n_readonly_later++] = fd;
}

/* The kernel explains fsconfig failures in the fs context's log. */
static void append_fs_log(int fsfd)
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
		append_fs_log(fsfd);
		return r;
	}
	return 0;
}

/* A detached mount of a new filesystem instance. */
static int new_fs(const char *fstype, const char *const *options, unsigned attrs, const char *what)
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
		append_fs_log(fsfd);
		return r;
	}
	mfd = isd_fsmount(fsfd, FSMOUNT_CLOEXEC, attrs);
	if (mfd < 0)
		return isd_error(-errno, "mounting %s for %s", fstype, what);
	return mfd;
}

static int new_tmpfs(uint64_t size, uint32_t mode, const uint32_t *uid, const uint32_t *gid,
		     unsigned attrs, const char *what)
{
	char size_s[32], mode_s[16], uid_s[16], gid_s[16];
	const char *opts[10];
	size_t n = 0;

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
	return new_fs("tmpfs", opts, attrs, what);
}

/* A private, recursive copy of an existing tree with extra restrictions.
 * AT_RECURSIVE on mount_setattr makes every submount read-only too, which a
 * classic MS_REMOUNT|MS_BIND cannot do. */
static int clone_tree(int dfd, const char *path, unsigned attr_set, const char *what)
{
	int fd = isd_open_tree(dfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
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

static int attach(int mfd, int target_fd, const char *what)
{
	if (isd_move_mount(mfd, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return isd_error(-errno, "mounting %s", what);
	return 0;
}

static int set_readonly(int mfd, const char *what)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};

	if (isd_mount_setattr(mfd, "", AT_EMPTY_PATH, &attr) < 0)
		return isd_error(-errno, "making %s read-only", what);
	return 0;
}

/* Placeholder of the same kind as the entry a bind will cover it with. */
static int make_placeholder(int dirfd, const char *name, bool is_dir, mode_t mode)
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

typedef bool (*entry_filter)(const char *name);

/* Recreate the entries of srcdir inside dstdir: symlinks as symlinks, every
 * other entry as a bind of the original (recursive, with attr_set added). */
static int mirror_entries(int srcdir, int dstdir, entry_filter keep, unsigned attr_set, const char *where)
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
		r = make_placeholder(dstdir, name, S_ISDIR(st.st_mode), st.st_mode);
		if (r < 0) {
			r = isd_error(r, "creating the mount point for %s/%s", where, name);
			break;
		}
		clone = clone_tree(srcdir, name, attr_set, name);
		if (clone < 0) {
			r = clone;
			break;
		}
		target = openat(dstdir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (target < 0) {
			r = isd_error(-errno, "opening the mount point for %s/%s", where, name);
			break;
		}
		r = attach(clone, target, name);
		if (r < 0)
			break;
	}
	closedir(d);
	return r;
}

/* Replace the read-only directory dirfd (at path inside the root) by a tmpfs
 * that shows the same entries, so that new mount points can be made in it. */
static int shadow_directory(struct builder *b, int dirfd, const char *path)
{
	struct stat st;
	int tmp, r;

	if (fstat(dirfd, &st) < 0)
		return isd_error(-errno, "inspecting %s", path);
	tmp = new_tmpfs(1 << 20, st.st_mode & 07777, NULL, NULL,
			MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, path);
	if (tmp < 0)
		return tmp;
	r = attach(tmp, dirfd, path);
	if (r == 0)
		r = mirror_entries(dirfd, tmp, NULL, 0, path[0] ? path : "/");
	if (r < 0) {
		close(tmp);
		return r;
	}
	remember_readonly(b, tmp);
	return dup(tmp);
}

enum node_kind { NODE_DIR, NODE_FILE };

/*
 * Resolve path inside the root, creating what is missing.  Symlinks are
 * followed, but only inside the root ("/" and ".." stop at it), like
 * RESOLVE_IN_ROOT; every component is opened with O_NOFOLLOW relative to its
 * parent, so the kernel never follows a link on our behalf.
 * Returns an O_PATH fd of the final node, or -errno.
 */
static int resolve_create(struct builder *b, const char *path, enum node_kind kind, bool create)
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
			r = last && kind == NODE_FILE ? make_placeholder(cur, comp, false, 0644)
						      : make_placeholder(cur, comp, true, 0755);
			if (r == -EROFS || r == -EPERM || r == -EACCES) {
				int shadow = shadow_directory(b, cur, cur_path);
				if (shadow < 0) {
					close(cur);
					return isd_error(shadow, "creating the mount point %s inside the read-only %s",
							 path, cur_path[0] ? cur_path : "/");
				}
				close(cur);
				cur = shadow;
				r = last && kind == NODE_FILE ? make_placeholder(cur, comp, false, 0644)
							      : make_placeholder(cur, comp, true, 0755);
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
		if (kind == NODE_DIR && !S_ISDIR(st.st_mode)) {
			close(cur);
			return isd_error(-ENOTDIR, "mounting a directory on %s", path);
		}
		if (kind == NODE_FILE && S_ISDIR(st.st_mode)) {
			close(cur);
			return isd_error(-EISDIR, "mounting a file on %s", path);
		}
	}
	return cur;
}

static const char *const host_image_entries[] = {"usr", "etc", "opt", "bin", "sbin", "lib",
						   "lib32", "lib64", "libx32", NULL};

static bool keep_host_entry(const char *name)
{
	for (size_t i = 0; host_image_entries[i]; i++)
		if (!strcmp(name, host_image_entries[i]))
			return true;
	return false;
}

/* The image's own /dev, /proc, /sys, /tmp and /run are never used: isd
 * builds those, so a hostile image cannot redirect them. */
static bool keep_image_entry(const char *name)
{
	static const char *const skip[] = {"dev", "proc", "sys", "tmp", "run", NULL};

	for (size_t i = 0; skip[i]; i++)
		if (!strcmp(name, skip[i]))
			return false;
	return true;
}

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty", NULL};
#define N_DEV_NODES 6

/* Sources cloned before the root tmpfs is attached anywhere, so that no
 * staging mount can cover them. */
struct sources {
	int dev[N_DEV_NODES];
	int *binds; /* one per spec mount, -1 for tmpfs */
	int image;  /* directory fd of the image root */
	int proc;   /* clone of the outer /proc (--pid=host) */
	int sys;    /* clone of the outer /sys (--network=host) */
};

static void sources_close(struct sources *s, size_t n_mounts)
{
	for (size_t i = 0; i < N_DEV_NODES; i++)
		if (s->dev[i] >= 0)
			close(s->dev[i]);
	for (size_t i = 0; s->binds && i < n_mounts; i++)
		if (s->binds[i] >= 0)
			close(s->binds[i]);
	free(s->binds);
	if (s->image >= 0)
		close(s->image);
	if (s->proc >= 0)
		close(s->proc);
	if (s->sys >= 0)
		close(s->sys);
}

static int clone_sources(const struct isd_spec *spec, struct sources *s)
{
	for (size_t i = 0; i < N_DEV_NODES; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/dev/%s", dev_nodes[i]);
		s->dev[i] = clone_tree(AT_FDCWD, path, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, path);
		if (s->dev[i] < 0)
			return s->dev[i];
	}
	s->binds = isd_xcalloc(spec->n_mounts, sizeof(int));
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (m->readonly ? MOUNT_ATTR_RDONLY : 0);

		s->binds[i] = -1;
		if (m->type != ISD_MOUNT_BIND)
			continue;
		s->binds[i] = clone_tree(AT_FDCWD, m->source, attrs, m->source);
		if (s->binds[i] < 0)
			return s->binds[i];
	}
	s->image = open(spec->rootfs ? spec->rootfs : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->image < 0)
		return isd_error(-errno, "opening the root filesystem %s", spec->rootfs ? spec->rootfs : "/");
	if (spec->pid_host) {
		s->proc = clone_tree(AT_FDCWD, "/proc", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, "/proc");
		if (s->proc < 0)
			return s->proc;
	}
	if (spec->network == ISD_NET_HOST) {
		s->sys = clone_tree(AT_FDCWD, "/sys", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, "/sys");
		if (s->sys < 0)
			return s->sys;
	}
	return 0;
}

static int attach_at(struct builder *b, int mfd, const char *path, enum node_kind kind, const char *what)
{
	_cleanup_close_ int target = resolve_create(b, path, kind, true);

	if (target < 0)
		return target;
	return attach(mfd, target, what);
}

static int setup_dev(struct builder *b, struct sources *s)
{
	static const char *const devpts_opts[] = {"newinstance", NULL, "ptmxmode", "0666", "mode", "0620", NULL};
	static const char *const links[][2] = {
		{"ptmx", "pts/ptmx"},          {"fd", "/proc/self/fd"},
		{"stdin", "/proc/self/fd/0"},  {"stdout", "/proc/self/fd/1"},
		{"stderr", "/proc/self/fd/2"}, {"core", "/proc/kcore"},
	};
	_cleanup_close_ int dev = -1, pts = -1, shm = -1;
	int r;

	dev = new_tmpfs(64 << 10, 0755, NULL, NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, "/dev");
	if (dev < 0)
		return dev;
	r = attach_at(b, dev, "/dev", NODE_DIR, "tmpfs on /dev");
	if (r < 0)
		return r;
	for (size_t i = 0; i < N_DEV_NODES; i++) {
		_cleanup_close_ int target = -1;
		r = make_placeholder(dev, dev_nodes[i], false, 0666);
		if (r < 0)
			return isd_error(r, "creating /dev/%s", dev_nodes[i]);
		target = openat(dev, dev_nodes[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (target < 0)
			return isd_error(-errno, "opening /dev/%s", dev_nodes[i]);
		r = attach(s->dev[i], target, dev_nodes[i]);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlinkat(links[i][1], dev, links[i][0]) < 0)
			return isd_error(-errno, "creating /dev/%s", links[i][0]);
	if (mkdirat(dev, "pts", 0755) < 0 || mkdirat(dev, "shm", 01777) < 0)
		return isd_error(-errno, "creating /dev/pts and /dev/shm");
	pts = new_fs("devpts", devpts_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, "/dev/pts");
	if (pts < 0)
		return pts;
	r = attach_at(b, pts, "/dev/pts", NODE_DIR, "devpts on /dev/pts");
	if (r < 0)
		return r;
	shm = new_tmpfs(64 << 20, 01777, NULL, NULL,
			MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, "/dev/shm");
	if (shm < 0)
		return shm;
	r = attach_at(b, shm, "/dev/shm", NODE_DIR, "tmpfs on /dev/shm");
	if (r < 0)
		return r;
	remember_readonly(b, isd_steal_fd(dev));
	return 0;
}

static int setup_proc_sys(struct builder *b, const struct isd_spec *spec, struct sources *s,
			  const struct isd_mount_extras *extras)
{
	unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	_cleanup_close_ int proc = -1, sys = -1;
	int r;

	if (spec->pid_host) {
		r = attach_at(b, s->proc, "/proc", NODE_DIR, "the outer /proc");
	} else {
		proc = new_fs("proc", NULL, attrs, "/proc");
		if (proc < 0) {
			if (proc == -EPERM || proc == -EBUSY) {
				isd_error(proc, "mounting a fresh /proc for the sandbox's pid namespace");
				isd_error_hint("isd runs inside a container whose /proc has masked or read-only submounts, "
					       "so the kernel refuses a new procfs; fix: run the outer container with an unmasked /proc "
					       "(docker/podman: --security-opt systempaths=unconfined), or use --pid=host "
					       "(no pid namespace, the outer /proc read-only)");
			}
			return proc;
		}
		r = attach_at(b, proc, "/proc", NODE_DIR, "procfs on /proc");
	}
	if (r < 0)
		return r;

	if (spec->network == ISD_NET_HOST) {
		r = attach_at(b, s->sys, "/sys", NODE_DIR, "the outer /sys");
		if (r < 0)
			return r;
	} else {
		sys = new_fs("sysfs", NULL, attrs | MOUNT_ATTR_RDONLY, "/sys");
		/* sysfs is a convenience (CPU lists, cgroup limits); a host that
		 * refuses it still gets a working sandbox with an empty /sys. */
		if (sys >= 0) {
			r = attach_at(b, sys, "/sys", NODE_DIR, "sysfs on /sys");
			if (r < 0)
				return r;
		} else {
			isd_error_clear();
			_cleanup_close_ int dir = resolve_create(b, "/sys", NODE_DIR, true);
			if (dir < 0)
				return dir;
		}
	}
	if (extras->cgroup2 && sys >= 0) {
		_cleanup_close_ int cg = new_fs("cgroup2", NULL, attrs | MOUNT_ATTR_RDONLY, "/sys/fs/cgroup");
		if (cg < 0)
			return cg;
		r = attach_at(b, cg, "/sys/fs/cgroup", NODE_DIR, "cgroup2 on /sys/fs/cgroup");
		if (r < 0)
			return r;
	}
	return 0;
}

static int compare_depth(const void *a, const void *b)
{
	const struct isd_mount *const *ma = a, *const *mb = b;
	int da = 0, db = 0;

	for (const char *p = (*ma)->destination; *p; p++)
		da += *p == '/';
	for (const char *p = (*mb)->destination; *p; p++)
		db += *p == '/';
	if (da != db)
		return da - db;
	return *ma < *mb ? -1 : *ma > *mb;
}

static int setup_user_mounts(struct builder *b, const struct isd_spec *spec, struct sources *s)
{
	const struct isd_mount **order = isd_xcalloc(spec->n_mounts, sizeof(*order));
	int r = 0;

	/* Parents before children, whatever order the options came in. */
	for (size_t i = 0; i < spec->n_mounts; i++)
		order[i] = &spec->mounts[i];
	qsort(order, spec->n_mounts, sizeof(*order), compare_depth);

	for (size_t k = 0; k < spec->n_mounts && r == 0; k++) {
		const struct isd_mount *m = order[k];
		size_t i = (size_t)(m - spec->mounts);

		if (m->type == ISD_MOUNT_BIND) {
			struct stat st;
			if (fstat(s->binds[i], &st) < 0) {
				r = isd_error(-errno, "inspecting %s", m->source);
				break;
			}
			r = attach_at(b, s->binds[i], m->destination, S_ISDIR(st.st_mode) ? NODE_DIR : NODE_FILE,
				      m->destination);
		} else {
			unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					 (m->exec ? 0 : MOUNT_ATTR_NOEXEC);
			_cleanup_close_ int t = new_tmpfs(m->size, m->has_mode ? m->mode : 01777,
							  m->has_uid ? &m->uid : NULL,
							  m->has_gid ? &m->gid : NULL, attrs, m->destination);
			if (t < 0) {
				r = t;
				break;
			}
			r = attach_at(b, t, m->destination, NODE_DIR, m->destination);
			/* A read-only tmpfs still has to receive the mount points of
			 * mounts below it, so it turns read-only at the end. */
			if (r == 0 && m->readonly)
				remember_readonly(b, isd_steal_fd(t));
		}
	}
	free(order);
	return r;
}

/* Put content at path: written in place when the file lives on one of our
 * tmpfs mounts, otherwise bound over the image's file. */
static int place_file(struct builder *b, const char *path, const char *content)
{
	_cleanup_close_ int target = resolve_create(b, path, NODE_FILE, true);
	_cleanup_close_ int fd = -1, clone = -1;
	char proc_path[64], name[16];
	int r;

	if (target < 0)
		return target;
	{
		struct stat st;
		if (fstat(target, &st) < 0)
			return isd_error(-errno, "inspecting %s", path);
		/* A FIFO or device here would block us or be clobbered. */
		if (!S_ISREG(st.st_mode))
			return isd_error(0, "generating %s: the image's file is not a regular file (mode %o); refusing to touch it",
					 path, st.st_mode);
	}
	snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", target);
	fd = b->writable_image ? -1 : open(proc_path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (b->writable_image)
		errno = EROFS; /* bound over, like in a read-only image */
	if (fd >= 0)
		return isd_write_all(fd, content, strlen(content)) < 0 ? isd_error(-errno, "writing %s", path) : 0;
	if (errno != EROFS && errno != EACCES && errno != EPERM)
		return isd_error(-errno, "writing %s", path);

	/* The generated file stays in a tmpfs that is attached (so that it can
	 * be cloned, and so that shadowing can clone the bind again) but hidden
	 * under the root, and goes away with the old root at pivot_root. */
	snprintf(name, sizeof(name), "%u", b->n_generated++);
	r = isd_write_file_at(b->generated, name, content, O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
	if (r < 0)
		return isd_error(r, "generating %s", path);
	clone = isd_open_tree(b->generated, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (clone < 0)
		return isd_error(-errno, "preparing %s", path);
	{
		struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC};
		if (isd_mount_setattr(clone, "", AT_EMPTY_PATH, &attr) < 0)
			return isd_error(-errno, "restricting %s", path);
	}
	return attach(clone, target, path);
}

static int staging_dir(const char **out)
{
	static const char *const candidates[] = {"/tmp", "/run", "/var/tmp", "/mnt", "/dev", "/"};
	struct stat st;

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		if (stat(candidates[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			*out = candidates[i];
			return 0;
		}
	}
	return isd_error(-ENOENT, "finding a directory to build the sandbox root on");
}

static int build_root(struct builder *b, const struct isd_spec *spec, struct sources *s)
{
	static const char *const host_dirs[] = {"home", "root", "var", NULL};
	unsigned ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	int r;

	if (spec->rootfs)
		return mirror_entries(s->image, b->root, keep_image_entry, ro, spec->rootfs);

	r = mirror_entries(s->image, b->root, keep_host_entry, ro, "/");
	if (r < 0)
		return r;
	for (size_t i = 0; host_dirs[i]; i++)
		if (mkdirat(b->root, host_dirs[i], i == 1 ? 0700 : 0755) < 0)
			return isd_error(-errno, "creating /%s", host_dirs[i]);
	if (symlinkat("../run", b->root, "var/run") < 0 || symlinkat("../run/lock", b->root, "var/lock") < 0)
		return isd_error(-errno, "creating /var/run");
	return 0;
}

/* The new mount API and openat2 arrived in Linux 5.2 to 5.12; an older
 * kernel (or a seccomp profile of an outer container that predates them)
 * answers ENOSYS, which alone would say little. */
static int explain_enosys(int r)
{
	if (r == -ENOSYS)
		isd_error_hint("isd needs Linux 5.12 or newer (open_tree, fsopen, move_mount, mount_setattr, openat2); "
			       "inside a container, its seccomp profile may also block them");
	return r;
}

int isd_mount_setup(const struct isd_spec *spec, const struct isd_mount_extras *extras)
{
	struct builder b = {.root = -1, .generated = -1};
	struct sources s = {.image = -1, .proc = -1, .sys = -1};
	const char *staging = "/tmp";
	int r;

	for (size_t i = 0; i < N_DEV_NODES; i++)
		s.dev[i] = -1;

	/* Mount events must not travel back to the host, nor from it into
	 * half-built state. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		r = isd_error(-errno, "making the sandbox's mounts private");
		/* The first mount operation: where AppArmor's userns restriction
		 * or a hostile outer seccomp profile shows itself. */
		isd_userns_explain_failure(r);
		goto out;
	}
	r = clone_sources(spec, &s);
	if (r < 0)
		goto out;
	r = staging_dir(&staging);
	if (r < 0)
		goto out;
	b.generated = new_tmpfs(1 << 20, 0755, NULL, NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				"generated files");
	if (b.generated < 0) {
		r = b.generated;
		goto out;
	}
	if (isd_move_mount(b.generated, "", AT_FDCWD, staging, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		r = isd_error(-errno, "attaching a tmpfs at %s", staging);
		goto out;
	}
	/* isd build's RUN: the image tree itself, read-write, is the root. */
	b.writable_image = spec->writable_root;
	if (spec->writable_root)
		b.root = clone_tree(s.image, "", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, spec->rootfs);
	else
		b.root = new_tmpfs(4 << 20, 0755, NULL, NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "the root");
	if (b.root < 0) {
		r = b.root;
		goto out;
	}
	if (isd_move_mount(b.root, "", AT_FDCWD, staging, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		r = isd_error(-errno, "attaching the sandbox root at %s", staging);
		goto out;
	}

	r = spec->writable_root ? 0 : build_root(&b, spec, &s);
	if (r < 0)
		goto out;
	r = setup_dev(&b, &s);
	if (r < 0)
		goto out;
	r = setup_proc_sys(&b, spec, &s, extras);
	if (r < 0)
		goto out;
	r = setup_user_mounts(&b, spec, &s);
	if (r < 0)
		goto out;
	r = place_file(&b, "/etc/hosts", extras->hosts);
	if (r < 0)
		goto out;
	r = place_file(&b, "/etc/resolv.conf", extras->resolv_conf);
	if (r < 0)
		goto out;
	if (spec->workdir) {
		int fd = resolve_create(&b, spec->workdir, NODE_DIR, true);
		if (fd < 0) {
			r = fd;
			goto out;
		}
		close(fd);
	}
	{
		const char *home = isd_spec_getenv(spec, "HOME");
		if (!spec->rootfs && home && home[0] == '/' && strcmp(home, "/")) {
			int fd = resolve_create(&b, home, NODE_DIR, true);
			if (fd < 0) {
				r = fd;
				goto out;
			}
			close(fd);
		}
	}

	for (size_t i = 0; i < b.n_readonly_later; i++) {
		r = set_readonly(b.readonly_later[i], "a tmpfs of the sandbox");
		if (r < 0)
			goto out;
	}
	r = spec->writable_root ? 0 : set_readonly(b.root, "the sandbox root");
	if (r < 0)
		goto out;

	/* pivot_root(".", ".") stacks the old root on the new one; detaching
	 * it leaves nothing of the host's tree reachable. */
	if (fchdir(b.root) < 0 || isd_pivot_root(".", ".") < 0) {
		r = isd_error(-errno, "pivot_root into the sandbox root");
		goto out;
	}
	if (umount2(".", MNT_DETACH) < 0) {
		r = isd_error(-errno, "detaching the host's root");
		goto out;
	}
	if (chdir("/") < 0) {
		r = isd_error(-errno, "entering the sandbox root");
		goto out;
	}
	r = 0;
out:
	sources_close(&s, spec->n_mounts);
	for (size_t i = 0; i < b.n_readonly_later; i++)
		close(b.readonly_later[i]);
	free(b.readonly_later);
	if (b.root >= 0)
		close(b.root);
	if (b.generated >= 0)
		close(b.generated);
	return explain_enosys(r);
}
