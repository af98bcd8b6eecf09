/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The landlock tier's cow workspace (src/workspace-copy.h): a copy of the
 * project (reflinked where the file system can), and after the run what
 * differs, written as the upper layer of an overlay, so that the session is
 * like any other to isd diff, apply and discard.
 *
 * The payload owns the copy: every name in it is read with *at() calls
 * relative to descriptors and O_NOFOLLOW, never through a path it could
 * have turned into a symlink.  Only what changed after the copy was made
 * (its ctime, which no unprivileged process can set back) is compared.
 */
#define _GNU_SOURCE
#include "workspace-copy.h"
#include "workspace.h"
#include "isd/fsutil.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define MAX_DEPTH 256

/* One extent [off, end) of in to the same place of out. */
static int copy_extent(int in, int out, off_t off, off_t end)
{
	char buf[65536];

	while (off < end) {
		loff_t a = off, b = off;
		ssize_t n = copy_file_range(in, &a, out, &b, (size_t)(end - off), 0);
		if (n == 0)
			return 0; /* shorter meanwhile */
		if (n > 0) {
			off += n;
			continue;
		}
		if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
			return -errno;
		n = pread(in, buf, (size_t)(end - off) < sizeof(buf) ? (size_t)(end - off) : sizeof(buf), off);
		if (n <= 0)
			return n < 0 ? -errno : 0;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = pwrite(out, buf + done, (size_t)(n - done), off + done);
			if (w < 0)
				return -errno;
			done += w;
		}
		off += n;
	}
	return 0;
}

/* The holes stay holes: a sparse file the payload made costs its
 * allocated blocks in the session, as the storage bound counted it, not
 * its length. */
static int copy_bytes(int in, int out)
{
	struct stat st;
	off_t off = 0;
	int r;

	if (ioctl(out, FICLONE, in) == 0)
		return 0;
	if (fstat(in, &st) < 0)
		return -errno;
	while (off < st.st_size) {
		off_t data = lseek(in, off, SEEK_DATA), hole;
		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0) /* no SEEK_DATA here: all of it */
			return (r = copy_extent(in, out, off, st.st_size)) < 0 ? r : 0;
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0 || hole > st.st_size)
			hole = st.st_size;
		if ((r = copy_extent(in, out, data, hole)) < 0)
			return r;
		off = hole;
	}
	return ftruncate(out, st.st_size) < 0 ? -errno : 0;
}

/* One entry name of src_dfd copied to dst_dfd (empty when masked). */
static int copy_file_at(int src_dfd, int dst_dfd, const char *name, const struct stat *st, bool empty)
{
	_cleanup_close_ int in = -1, out = -1;

	out = openat(dst_dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st->st_mode & 07777);
	if (out < 0)
		return -errno;
	if (empty)
		return 0;
	in = openat(src_dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -errno;
	return copy_bytes(in, out);
}

static bool is_masked(char *const *masked, const char *rel, bool is_dir)
{
	for (size_t i = 0; masked && masked[i]; i++) {
		size_t n = strlen(masked[i]);
		bool dir_mask = n && masked[i][n - 1] == '/';

		if (dir_mask ? (is_dir && !strncmp(masked[i], rel, n - 1) && !rel[n - 1]) : !strcmp(masked[i], rel))
			return true;
	}
	return false;
}

static int copy_tree(int src, int dst, char *const *masked, const char *prefix, int depth)
{
	DIR *d;
	struct dirent *de;
	int r = 0, dup_fd;

	if (depth > MAX_DEPTH)
		return -ELOOP;
	dup_fd = openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dup_fd < 0 || !(d = fdopendir(dup_fd))) {
		if (dup_fd >= 0)
			close(dup_fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(d))) {
		_cleanup_free_ char *rel = NULL;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(src, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			break;
		}
		rel = prefix[0] ? isd_xasprintf("%s/%s", prefix, de->d_name) : isd_xstrdup(de->d_name);
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int s = -1, t = -1;
			if (mkdirat(dst, de->d_name, 0700) < 0) {
				r = -errno;
				break;
			}
			/* A masked directory is there, empty. */
			if (is_masked(masked, rel, true)) {
				(void)fchmodat(dst, de->d_name, st.st_mode & 07777, 0);
				continue;
			}
			s = openat(src, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			t = openat(dst, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (s < 0 || t < 0) {
				r = -errno;
				break;
			}
			r = copy_tree(s, t, masked, rel, depth + 1);
			if (r == 0 && fchmod(t, st.st_mode & 07777) < 0)
				r = -errno;
		} else if (S_ISREG(st.st_mode)) {
			r = copy_file_at(src, dst, de->d_name, &st, is_masked(masked, rel, false));
		} else if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlinkat(src, de->d_name, target, sizeof(target) - 1);
			if (n < 0)
				r = -errno;
			else {
				target[n] = '\0';
				r = symlinkat(target, dst, de->d_name) < 0 ? -errno : 0;
			}
		}
		/* fifos, sockets and devices are not part of a project */
		if (r < 0)
			isd_error(r, "copying %s of the workspace", rel);
	}
	closedir(d);
	return r;
}

void isd_workspace_copy_baseline(struct timespec *since)
{
	struct timespec fine;

	clock_gettime(CLOCK_REALTIME, &fine);
	for (int i = 0; i < 1000; i++) {
		clock_gettime(CLOCK_REALTIME_COARSE, since);
		if (since->tv_sec > fine.tv_sec || (since->tv_sec == fine.tv_sec && since->tv_nsec > fine.tv_nsec))
			return;
		nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	}
}

int isd_workspace_copy(const char *project, const char *dst, char *const *masked)
{
	_cleanup_close_ int s = -1, t = -1;
	struct stat st;
	int r;

	s = open(project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s < 0 || fstat(s, &st) < 0)
		return isd_error(-errno, "opening the workspace %s to copy it", project);
	if (mkdir(dst, 0700) < 0)
		return isd_error(-errno, "creating the workspace's copy %s", dst);
	t = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t < 0)
		return isd_error(-errno, "opening the workspace's copy %s", dst);
	r = copy_tree(s, t, masked, "", 0);
	if (r == 0 && fchmod(t, st.st_mode & 07777) < 0)
		r = isd_error(-errno, "copying the workspace's mode");
	return r;
}

/* ---- the copy's changes as an upper layer ---- */

struct to_upper {
	int copy_root, upper_root;
	char *const *masked;
	struct timespec since; /* when the copy was finished */
	size_t n_changes;
	/* files of the copy with several names, and the first name each got
	 * in the upper layer: the others are links to it, as in the copy
	 * (and as the storage bound counted them) */
	char **linked;
	/* entries of the copy isd made readable, to their modes */
	struct isd_inode_map forced;
	size_t n_linked;
	struct isd_inode_map linked_at; /* to the index in linked */
	/* the upper layer's directories get their modes at the end, deepest
	 * first: a link's first name stays reachable in a directory the
	 * payload made unreadable */
	struct dir_mode {
		char *path;
		mode_t mode;
	} *modes;
	size_t n_modes;
};

/* fstatat of the copy, with the mode the payload left (unlock_tree). */
static int copy_stat(const struct to_upper *u, int dfd, const char *name, struct stat *st)
{
	size_t mode;

	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (isd_inode_map_find(&u->forced, st->st_dev, st->st_ino, &mode))
		st->st_mode = (st->st_mode & S_IFMT) | (mode_t)mode;
	return 0;
}

/* The payload is gone, and may have left what its owner cannot read
 * (chmod 000): isd gives the copy's entries their owner's read (and
 * search) before reading them, and keeps their modes for the upper
 * layer.  Root reads every mode already. */
static int unlock_tree(struct to_upper *u, int dfd, int depth)
{
	DIR *d;
	struct dirent *de;
	int r = 0, fd;

	if (geteuid() == 0)
		return 0;
	if (depth > MAX_DEPTH)
		return -ELOOP;
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(d))) {
		mode_t need;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		need = S_ISDIR(st.st_mode) ? S_IRWXU : S_ISREG(st.st_mode) ? S_IRUSR : 0;
		if ((st.st_mode & need) != need) {
			_cleanup_close_ int p = openat(dfd, de->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			char proc[64];
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p);
			if (p < 0 || chmod(proc, (st.st_mode & 07777) | need) < 0) {
				r = -errno;
				break;
			}
			isd_inode_map_find_or_add(&u->forced, st.st_dev, st.st_ino, st.st_mode & 07777, NULL);
		}
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			r = sub < 0 ? -errno : unlock_tree(u, sub, depth + 1);
		}
	}
	closedir(d);
	return r;
}

static void defer_mode(struct to_upper *u, const char *path, mode_t mode)
{
	u->modes = isd_xrealloc(u->modes, (u->n_modes + 1) * sizeof(*u->modes));
	u->modes[u->n_modes++] = (struct dir_mode){isd_xstrdup(path[0] ? path : "."), mode & 07777};
}

static size_t depth_of(const char *p)
{
	size_t n = 0;
	for (; *p; p++)
		n += *p == '/';
	return n;
}

static int deeper_first(const void *a, const void *b)
{
	size_t x = depth_of(((const struct dir_mode *)a)->path), y = depth_of(((const struct dir_mode *)b)->path);
	return x < y ? 1 : x > y ? -1 : 0;
}

static bool changed_since(const struct stat *st, const struct timespec *since)
{
	return st->st_ctim.tv_sec > since->tv_sec ||
	       (st->st_ctim.tv_sec == since->tv_sec && st->st_ctim.tv_nsec >= since->tv_nsec);
}

static bool same_content(int a_dfd, int b_dfd, const char *name)
{
	_cleanup_close_ int a = openat(a_dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int b = openat(b_dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char x[65536], y[65536];

	if (a < 0 || b < 0)
		return false;
	for (;;) {
		ssize_t n = read(a, x, sizeof(x)), m;
		if (n < 0)
			return false;
		m = n ? read(b, y, (size_t)n) : read(b, y, 1);
		if (m != n || memcmp(x, y, (size_t)n))
			return false;
		if (n == 0)
			return true;
	}
}

/* The upper directory for the entries of rel, made on first use, each
 * directory on the way with the mode of the copy's (the payload is gone:
 * nothing changes the copy any more). */
static int upper_dir(struct to_upper *u, const char *rel, int *fd)
{
	_cleanup_free_ char *p = isd_xstrdup(rel);

	if (*fd >= 0)
		return 0;
	for (char *slash = p; rel[0]; slash++) {
		struct stat st;
		char c = *slash;

		if (c != '/' && c != '\0')
			continue;
		*slash = '\0';
		if (copy_stat(u, u->copy_root, p, &st) < 0 || !S_ISDIR(st.st_mode))
			return -ENOTDIR;
		if (mkdirat(u->upper_root, p, 0700) < 0 && errno != EEXIST)
			return -errno;
		defer_mode(u, p, st.st_mode);
		*slash = c;
		if (!c)
			break;
	}
	*fd = rel[0] ? openat(u->upper_root, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		     : dup(u->upper_root);
	return *fd < 0 ? -errno : 0;
}

static int setxattr_opaque(int dfd, const char *name)
{
	char path[64];
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return setxattr(path, "user.overlay.opaque", "y", 1, 0) < 0 ? -errno : 0;
}

static int copy_entry_to(struct to_upper *u, int copy_dfd, int udfd, const char *rel, const char *name,
			 const struct stat *st, int depth);

/* All of a directory of the copy (rel in it) into a new directory of the
 * upper layer. */
static int copy_all(struct to_upper *u, int copy_dfd, int udfd, const char *rel, int depth)
{
	DIR *d;
	struct dirent *de;
	int r = 0, fd = openat(copy_dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (depth > MAX_DEPTH)
		return -ELOOP;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((r = copy_stat(u, copy_dfd, de->d_name, &st)) == 0)
			r = copy_entry_to(u, copy_dfd, udfd, rel, de->d_name, &st, depth + 1);
	}
	closedir(d);
	return r;
}

static int copy_entry_to(struct to_upper *u, int copy_dfd, int udfd, const char *rel, const char *name,
			 const struct stat *st, int depth)
{
	_cleanup_free_ char *path = rel[0] ? isd_xasprintf("%s/%s", rel, name) : isd_xstrdup(name);

	if (S_ISREG(st->st_mode) && st->st_nlink > 1) {
		size_t first;
		int r;
		if (isd_inode_map_find_or_add(&u->linked_at, st->st_dev, st->st_ino, u->n_linked, &first))
			return linkat(u->upper_root, u->linked[first], udfd, name, 0) < 0 ? -errno : 0;
		u->linked = isd_xrealloc(u->linked, (u->n_linked + 1) * sizeof(*u->linked));
		u->linked[u->n_linked++] = isd_xstrdup(path);
		return (r = copy_file_at(copy_dfd, udfd, name, st, false)) < 0 ? r : 0;
	}
	if (S_ISREG(st->st_mode))
		return copy_file_at(copy_dfd, udfd, name, st, false);
	if (S_ISLNK(st->st_mode)) {
		char target[4096];
		ssize_t n = readlinkat(copy_dfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		return symlinkat(target, udfd, name) < 0 ? -errno : 0;
	}
	if (S_ISDIR(st->st_mode)) {
		_cleanup_close_ int s = -1, t = -1;
		int r;
		if (mkdirat(udfd, name, 0755) < 0 && errno != EEXIST)
			return -errno;
		s = openat(copy_dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		t = openat(udfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s < 0 || t < 0)
			return -errno;
		r = copy_all(u, s, t, path, depth);
		defer_mode(u, path, st->st_mode);
		return r;
	}
	return 0; /* what the payload made that a project does not hold */
}

static int whiteout(int udfd, const char *name)
{
	return mknodat(udfd, name, S_IFCHR | 0000, makedev(0, 0)) < 0 ? -errno : 0;
}

static int diff_dir(struct to_upper *u, int orig, int copy, int upper_root, const char *rel, int depth);

/* name in the project (ost, or NULL when new) against the copy (cst, or
 * NULL when deleted). */
static int diff_entry(struct to_upper *u, int orig, int copy, int upper_root, const char *rel, int *udfd,
		      const char *name, const struct stat *ost, const struct stat *cst, int depth)
{
	_cleanup_free_ char *path = rel[0] ? isd_xasprintf("%s/%s", rel, name) : isd_xstrdup(name);
	bool odir = ost && S_ISDIR(ost->st_mode), cdir = cst && S_ISDIR(cst->st_mode);
	int r;

	/* A masked path cannot change, as in the full tier. */
	if (is_masked(u->masked, path, odir))
		return 0;
	if (ost && cst && odir && cdir) {
		_cleanup_close_ int o = openat(orig, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int c = openat(copy, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (o < 0 || c < 0)
			return -errno;
		if ((ost->st_mode & 07777) != (cst->st_mode & 07777)) {
			_cleanup_close_ int t = -1;
			if ((r = upper_dir(u, path, &t)) < 0)
				return r;
			u->n_changes++;
		}
		return diff_dir(u, o, c, upper_root, path, depth + 1);
	}
	if (ost && cst && (ost->st_mode & S_IFMT) == (cst->st_mode & S_IFMT) && !changed_since(cst, &u->since))
		return 0;
	if (ost && cst && S_ISREG(ost->st_mode) && S_ISREG(cst->st_mode) && ost->st_size == cst->st_size &&
	    (ost->st_mode & 07777) == (cst->st_mode & 07777) && same_content(orig, copy, name))
		return 0;
	if (ost && cst && S_ISLNK(ost->st_mode) && S_ISLNK(cst->st_mode)) {
		char a[4096], b[4096];
		ssize_t n = readlinkat(orig, name, a, sizeof(a)), m = readlinkat(copy, name, b, sizeof(b));
		if (n >= 0 && n == m && !memcmp(a, b, (size_t)n))
			return 0;
	}
	if ((r = upper_dir(u, rel, udfd)) < 0)
		return r;
	u->n_changes++;
	if (!cst)
		return whiteout(*udfd, name);
	r = copy_entry_to(u, copy, *udfd, rel, name, cst, depth);
	/* A directory where the project has something else hides it. */
	if (r == 0 && cdir && ost)
		r = setxattr_opaque(*udfd, name);
	return r;
}

static int read_names(int dfd, char ***names)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	*names = NULL;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			isd_strv_push(names, isd_xstrdup(de->d_name));
	closedir(d);
	return 0;
}

static int diff_dir(struct to_upper *u, int orig, int copy, int upper_root, const char *rel, int depth)
{
	_cleanup_strv_ char **onames = NULL, **cnames = NULL;
	_cleanup_close_ int udfd = -1;
	int r;

	if (depth > MAX_DEPTH)
		return -ELOOP;
	if ((r = read_names(orig, &onames)) < 0 || (r = read_names(copy, &cnames)) < 0)
		return r;
	for (size_t i = 0; cnames && cnames[i] && r == 0; i++) {
		struct stat ost, cst;
		bool in_orig = fstatat(orig, cnames[i], &ost, AT_SYMLINK_NOFOLLOW) == 0;
		if (copy_stat(u, copy, cnames[i], &cst) < 0)
			continue;
		r = diff_entry(u, orig, copy, upper_root, rel, &udfd, cnames[i], in_orig ? &ost : NULL, &cst, depth);
	}
	for (size_t i = 0; onames && onames[i] && r == 0; i++) {
		struct stat ost, cst;
		if (fstatat(copy, onames[i], &cst, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			continue;
		if (fstatat(orig, onames[i], &ost, AT_SYMLINK_NOFOLLOW) == 0)
			r = diff_entry(u, orig, copy, upper_root, rel, &udfd, onames[i], &ost, NULL, depth);
	}
	return r;
}

int isd_workspace_copy_to_upper(const char *project, const char *copy, const char *upper, char *const *masked,
				const struct timespec *since)
{
	_cleanup_close_ int o = -1, c = -1, u = -1;
	struct to_upper tu = {.masked = masked, .since = *since};
	int r;

	o = open(project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	c = open(copy, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	u = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (o < 0 || c < 0 || u < 0)
		return isd_error(-errno, "opening the workspace, its copy %s and the session's layer %s", copy, upper);
	tu.copy_root = c;
	tu.upper_root = u;
	r = unlock_tree(&tu, c, 0);
	if (r == 0)
		r = diff_dir(&tu, o, c, u, "", 0);
	if (tu.n_modes) /* none recorded: modes is NULL */
		qsort(tu.modes, tu.n_modes, sizeof(*tu.modes), deeper_first);
	for (size_t i = 0; i < tu.n_modes; i++) {
		if (r == 0 && fchmodat(u, tu.modes[i].path, tu.modes[i].mode, 0) < 0)
			r = -errno;
		free(tu.modes[i].path);
	}
	free(tu.modes);
	for (size_t i = 0; i < tu.n_linked; i++)
		free(tu.linked[i]);
	free(tu.linked);
	isd_inode_map_free(&tu.linked_at);
	isd_inode_map_free(&tu.forced);
	if (r < 0)
		return isd_error(r, "recording the changes of the workspace's copy %s in the session", copy);
	return (int)(tu.n_changes > 0x7fffffff ? 0x7fffffff : tu.n_changes);
}
