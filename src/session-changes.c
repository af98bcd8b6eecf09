/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The comparison of a session's upper layer with the live project (see
 * include/isd/session-changes.h).  Every directory is opened relative to
 * its parent's descriptor with O_NOFOLLOW, so neither a symlink in the
 * project nor one the sandbox made can move the walk elsewhere.
 */
#define _GNU_SOURCE
#include "isd/session-changes.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "isd/path-util.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#define OPAQUE_XATTR "user.overlay.opaque"

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

static char *join(const char *prefix, const char *name)
{
	return prefix[0] ? isd_xasprintf("%s/%s", prefix, name) : isd_xstrdup(name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_change(const void *a, const void *b)
{
	return strcmp(((const struct isd_change *)a)->path, ((const struct isd_change *)b)->path);
}

/* The sorted entry names of a directory (a fresh description: readdir on
 * a dup would move the caller's offset). */
static int list_names(int dfd, char ***out, size_t *n_out)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		int r = -errno;
		close(fd);
		return r;
	}
	errno = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		isd_strv_push(&names, isd_xstrdup(de->d_name));
		n++;
	}
	closedir(d);
	if (names)
		qsort(names, n, sizeof(char *), cmp_str);
	*out = names;
	if (n_out)
		*n_out = n;
	return 0;
}

static bool has_name(char **sorted, size_t n, const char *name)
{
	return sorted && bsearch(&name, sorted, n, sizeof(char *), cmp_str) != NULL;
}

static int open_dir_at(int dfd, const char *name)
{
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static bool dir_is_opaque(int fd)
{
	char v[4];
	ssize_t n = fgetxattr(fd, OPAQUE_XATTR, v, sizeof(v));

	return n == 1 && v[0] == 'y';
}

/* 0 when absent (*present false), -errno on other errors. */
static int stat_at(int dfd, const char *name, struct stat *st, bool *present)
{
	*present = false;
	if (dfd < 0)
		return 0;
	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) == 0) {
		*present = true;
		return 0;
	}
	return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
}

static int pread_full(int fd, char *buf, size_t n, off_t at)
{
	for (size_t got = 0; got < n;) {
		ssize_t k = pread(fd, buf + got, n - got, at + (off_t)got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		got += (size_t)k;
	}
	return 0;
}

/* Sparse files of one size with the same holes: only their data is
 * compared (a 2 GiB sparse file is no 2 GiB read).  *decided false when
 * the holes differ or the filesystem cannot say: then read it all. */
static int same_sparse(int a, int b, off_t size, char *buf, bool *same, bool *decided)
{
	off_t pos = 0;
	int r;

	*decided = false;
	while (pos < size) {
		off_t da = lseek(a, pos, SEEK_DATA), db = lseek(b, pos, SEEK_DATA), ha, hb;

		if (da < 0 && db < 0 && errno == ENXIO) {
			break; /* holes up to the end on both sides */
		}
		if (da < 0 || db < 0 || da != db)
			return 0;
		ha = lseek(a, da, SEEK_HOLE);
		hb = lseek(b, db, SEEK_HOLE);
		if (ha < 0 || hb < 0 || ha != hb)
			return 0;
		for (off_t at = da; at < ha;) {
			size_t n = ha - at > 65536 ? 65536 : (size_t)(ha - at);

			if ((r = pread_full(a, buf, n, at)) < 0 || (r = pread_full(b, buf + 65536, n, at)) < 0)
				return r;
			if (memcmp(buf, buf + 65536, n)) {
				*same = false;
				*decided = true;
				return 0;
			}
			at += (off_t)n;
		}
		pos = ha;
	}
	*same = true;
	*decided = true;
	return 0;
}

static int same_file_content(int dfd_a, int dfd_b, const char *name, bool *same)
{
	/* O_NONBLOCK: a fifo that a running session swapped in since the
	 * stat never blocks the open; it is no regular file, so a change. */
	_cleanup_close_ int a = openat(dfd_a, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	_cleanup_close_ int b = openat(dfd_b, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ char *buf = isd_xmalloc(2 * 65536);
	struct stat sa, sb;

	*same = false;
	/* A file the sandbox made unreadable (chmod 000) cannot be shown
	 * equal: a change, which diff and apply then report. */
	if (a < 0 || b < 0)
		return errno == EACCES || errno == ENXIO ? 0 : -errno;
	if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0)
		return -errno;
	if (!S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode))
		return 0;
	if (sa.st_size == sb.st_size && (off_t)sa.st_blocks * 512 < sa.st_size) {
		bool decided;
		int r = same_sparse(a, b, sa.st_size, buf, same, &decided);

		if (r < 0 || decided)
			return r;
		if (lseek(a, 0, SEEK_SET) < 0 || lseek(b, 0, SEEK_SET) < 0)
			return -errno;
	}
	for (;;) {
		ssize_t na = read(a, buf, 65536), nb;
		size_t got = 0;

		if (na < 0)
			return -errno;
		/* A short read of one side must not look like a difference. */
		while (got < (size_t)na) {
			nb = read(b, buf + 65536 + got, (size_t)na - got);
			if (nb < 0)
				return -errno;
			if (nb == 0)
				return 0;
			got += (size_t)nb;
		}
		if (memcmp(buf, buf + 65536, (size_t)na))
			return 0;
		if (na == 0) {
			char extra;
			nb = read(b, &extra, 1);
			if (nb < 0)
				return -errno;
			*same = nb == 0;
			return 0;
		}
	}
}

static int same_link_target(int dfd_a, int dfd_b, const char *name, bool *same)
{
	char a[PATH_MAX + 1], b[PATH_MAX + 1];
	ssize_t na = readlinkat(dfd_a, name, a, sizeof(a)), nb = readlinkat(dfd_b, name, b, sizeof(b));

	if (na < 0 || nb < 0)
		return -errno;
	*same = na == nb && !memcmp(a, b, (size_t)na);
	return 0;
}

/* Both entries exist with the same type: do content and mode agree? */
static int compare_entries(int upper_dfd, int lower_dfd, const char *name, const struct stat *ust,
			   const struct stat *lst, bool *content_differs, bool *mode_differs)
{
	bool same = true;
	int r = 0;

	*mode_differs = !S_ISLNK(ust->st_mode) && (ust->st_mode & 07777) != (lst->st_mode & 07777);
	if (S_ISREG(ust->st_mode))
		r = ust->st_size != lst->st_size ? (same = false, 0) : same_file_content(upper_dfd, lower_dfd, name, &same);
	else if (S_ISLNK(ust->st_mode))
		r = same_link_target(upper_dfd, lower_dfd, name, &same);
	else if (S_ISCHR(ust->st_mode) || S_ISBLK(ust->st_mode))
		same = ust->st_rdev == lst->st_rdev;
	*content_differs = !same;
	return r;
}

static int count_tree(int dfd, const char *name, uint64_t *files)
{
	_cleanup_close_ int fd = open_dir_at(dfd, name);
	_cleanup_strv_ char **names = NULL;
	int r;

	if (fd < 0)
		return -errno;
	r = list_names(fd, &names, NULL);
	for (size_t i = 0; r == 0 && names && names[i]; i++) {
		struct stat st;

		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = errno == ENOENT ? 0 : -errno;
		else if (S_ISDIR(st.st_mode))
			r = count_tree(fd, names[i], files);
		else
			(*files)++;
	}
	return r;
}

static struct isd_change *push(struct isd_changes *c, char *path, enum isd_change_status status)
{
	struct isd_change *e;

	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->v = isd_xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	e = &c->v[c->n++];
	memset(e, 0, sizeof(*e));
	e->path = path;
	e->status = status;
	return e;
}

static int push_deleted(struct isd_changes *out, int lower_dfd, const char *name, const char *path, const struct stat *lst)
{
	struct isd_change *e = push(out, isd_xstrdup(path), ISD_CHANGE_DELETED);
	int r;

	e->old_mode = lst->st_mode;
	if (!S_ISDIR(lst->st_mode))
		return 0;
	r = count_tree(lower_dfd, name, &e->tree_files);
	return r < 0 ? isd_error(r, "reading %s in the project", path) : 0;
}

static int walk_dir(struct isd_changes *out, int upper_dfd, int lower_dfd, bool opaque, const char *prefix);

/* name exists in the upper layer (and is no whiteout). */
static int walk_entry(struct isd_changes *out, int upper_dfd, int lower_dfd, const char *name, const char *path,
		      const struct stat *ust, const struct stat *lst, bool opaque)
{
	bool content = false, mode = false;
	_cleanup_close_ int ufd = -1, lfd = -1;
	struct isd_change *e;
	int r;

	if (!lst || (ust->st_mode & S_IFMT) != (lst->st_mode & S_IFMT)) {
		e = push(out, isd_xstrdup(path), lst ? ISD_CHANGE_TYPE : ISD_CHANGE_ADDED);
		e->new_mode = ust->st_mode;
		if (lst) {
			e->old_mode = lst->st_mode;
			if (S_ISDIR(lst->st_mode) && (r = count_tree(lower_dfd, name, &e->tree_files)) < 0)
				return isd_error(r, "reading %s in the project", path);
		}
		if (!S_ISDIR(ust->st_mode))
			return 0;
		/* Nothing of the project shows through a directory that
		 * replaced something else: its entries are all new. */
		ufd = open_dir_at(upper_dfd, name);
		if (ufd < 0)
			return isd_error(-errno, "reading %s in the session's upper layer", path);
		return walk_dir(out, ufd, -1, false, path);
	}
	if (S_ISDIR(ust->st_mode)) {
		if ((ust->st_mode & 07777) != (lst->st_mode & 07777)) {
			e = push(out, isd_xstrdup(path), ISD_CHANGE_MODIFIED);
			e->old_mode = lst->st_mode;
			e->new_mode = ust->st_mode;
		}
		ufd = open_dir_at(upper_dfd, name);
		if (ufd < 0)
			return isd_error(-errno, "reading %s in the session's upper layer", path);
		lfd = open_dir_at(lower_dfd, name);
		if (lfd < 0)
			return isd_error(-errno, "reading %s in the project", path);
		/* Below an opaque directory the lookup never reaches the lower
		 * layer again, so every directory there is opaque too. */
		return walk_dir(out, ufd, lfd, opaque || dir_is_opaque(ufd), path);
	}
	r = compare_entries(upper_dfd, lower_dfd, name, ust, lst, &content, &mode);
	if (r < 0)
		return isd_error(r, "comparing %s with the project", path);
	if (content || mode) {
		e = push(out, isd_xstrdup(path), ISD_CHANGE_MODIFIED);
		e->old_mode = lst->st_mode;
		e->new_mode = ust->st_mode;
		e->content = content;
	}
	return 0;
}

static int walk_dir(struct isd_changes *out, int upper_dfd, int lower_dfd, bool opaque, const char *prefix)
{
	_cleanup_strv_ char **names = NULL, **lower_names = NULL;
	size_t n = 0;
	int r;

	r = list_names(upper_dfd, &names, &n);
	if (r < 0)
		return isd_error(r, "reading %s in the session's upper layer", prefix[0] ? prefix : ".");
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path = join(prefix, names[i]);
		struct stat ust, lst;
		bool in_lower;

		if (fstatat(upper_dfd, names[i], &ust, AT_SYMLINK_NOFOLLOW) < 0)
			return isd_error(-errno, "reading %s in the session's upper layer", path);
		r = stat_at(lower_dfd, names[i], &lst, &in_lower);
		if (r < 0)
			return isd_error(r, "reading %s in the project", path);
		if (is_whiteout(&ust)) {
			if (in_lower && (r = push_deleted(out, lower_dfd, names[i], path, &lst)) < 0)
				return r;
			continue;
		}
		r = walk_entry(out, upper_dfd, lower_dfd, names[i], path, &ust, in_lower ? &lst : NULL, opaque);
		if (r < 0)
			return r;
	}
	if (!opaque || lower_dfd < 0)
		return 0;
	r = list_names(lower_dfd, &lower_names, NULL);
	if (r < 0)
		return isd_error(r, "reading %s in the project", prefix[0] ? prefix : ".");
	for (size_t i = 0; lower_names && lower_names[i]; i++) {
		_cleanup_free_ char *path = NULL;
		struct stat lst;

		if (has_name(names, n, lower_names[i]))
			continue;
		path = join(prefix, lower_names[i]);
		if (fstatat(lower_dfd, lower_names[i], &lst, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			return isd_error(-errno, "reading %s in the project", path);
		}
		r = push_deleted(out, lower_dfd, lower_names[i], path, &lst);
		if (r < 0)
			return r;
	}
	return 0;
}

int isd_changes_collect(int project_fd, int upper_fd, struct isd_changes *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = walk_dir(out, upper_fd, project_fd, false, "");
	if (r < 0) {
		isd_changes_free(out);
		return r;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_change);
	return 0;
}

void isd_changes_free(struct isd_changes *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

size_t isd_changes_count(const struct isd_changes *c)
{
	size_t count = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct isd_change *e = &c->v[i];

		if (e->status == ISD_CHANGE_ADDED && S_ISDIR(e->new_mode) && i + 1 < c->n &&
		    isd_path_below(c->v[i + 1].path, e->path))
			continue;
		count++;
	}
	return count;
}

static void push_copy(struct isd_changes *out, const struct isd_change *e)
{
	struct isd_change *c = push(out, isd_xstrdup(e->path), e->status);

	c->old_mode = e->old_mode;
	c->new_mode = e->new_mode;
	c->content = e->content;
	c->tree_files = e->tree_files;
}

/* Every non-directory under dfd/name as a deletion of its own. */
static int push_deleted_files(struct isd_changes *out, int dfd, const char *name, const char *path)
{
	_cleanup_close_ int fd = open_dir_at(dfd, name);
	_cleanup_strv_ char **names = NULL;
	int r;

	if (fd < 0)
		return isd_error(-errno, "reading %s in the project", path);
	r = list_names(fd, &names, NULL);
	if (r < 0)
		return isd_error(r, "reading %s in the project", path);
	for (size_t i = 0; names && names[i]; i++) {
		_cleanup_free_ char *sub = join(path, names[i]);
		struct stat st;

		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			r = push_deleted_files(out, fd, names[i], sub);
			if (r < 0)
				return r;
		} else {
			push(out, isd_xstrdup(sub), ISD_CHANGE_DELETED)->old_mode = st.st_mode;
		}
	}
	return 0;
}

/* sel lies inside the tree that deleted change e removes. */
static int select_inside_tree(int project_fd, const char *sel, bool expand, struct isd_changes *out)
{
	_cleanup_free_ char *parent = isd_xstrdup(sel);
	char *slash = strrchr(parent, '/');
	const char *name = slash ? slash + 1 : parent;
	_cleanup_close_ int pfd = -1;
	struct stat st;

	if (slash)
		*slash = '\0';
	pfd = slash ? isd_openat2(project_fd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC,
				  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
		    : openat(project_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0; /* not in the project: nothing of it to delete */
	if (!S_ISDIR(st.st_mode)) {
		push(out, isd_xstrdup(sel), ISD_CHANGE_DELETED)->old_mode = st.st_mode;
		return 0;
	}
	if (expand)
		return push_deleted_files(out, pfd, name, sel);
	return push_deleted(out, pfd, name, sel, &st);
}

int isd_changes_select(int project_fd, const struct isd_changes *all, char *const *paths, bool expand,
		       struct isd_changes *out)
{
	size_t w = 0;
	int r;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < all->n; i++) {
		const struct isd_change *e = &all->v[i];
		bool tree = (e->status == ISD_CHANGE_DELETED || e->status == ISD_CHANGE_TYPE) && S_ISDIR(e->old_mode);
		bool selected = !paths || !paths[0];

		for (size_t k = 0; !selected && paths[k]; k++) {
			if (isd_path_under(e->path, paths[k])) {
				selected = true;
			} else if (isd_path_below(paths[k], e->path)) {
				/* A file needs its new directory, wherever it
				 * came from. */
				if (S_ISDIR(e->new_mode) && e->status != ISD_CHANGE_MODIFIED)
					selected = true;
				if (tree && e->status == ISD_CHANGE_DELETED) {
					r = select_inside_tree(project_fd, paths[k], expand, out);
					if (r < 0)
						goto fail;
				}
			}
		}
		if (!selected)
			continue;
		/* A deleted tree is a deletion per file, as git has it, up to
		 * a bound (then one line that says how to list it). */
		if (tree && expand && e->tree_files <= ISD_CHANGES_EXPAND_MAX) {
			r = select_inside_tree(project_fd, e->path, true, out);
			if (r < 0)
				goto fail;
			if (e->status == ISD_CHANGE_DELETED)
				continue;
			/* What replaced the directory is new. */
			push_copy(out, e);
			out->v[out->n - 1].status = ISD_CHANGE_ADDED;
			out->v[out->n - 1].old_mode = 0;
			out->v[out->n - 1].tree_files = 0;
			continue;
		}
		push_copy(out, e);
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_change);
	/* Overlapping PATHs select some entries twice. */
	for (size_t i = 0; i < out->n; i++) {
		if (w > 0 && !strcmp(out->v[w - 1].path, out->v[i].path)) {
			free(out->v[i].path);
			continue;
		}
		out->v[w++] = out->v[i];
	}
	out->n = w;
	return 0;
fail:
	isd_changes_free(out);
	return r;
}

/* ------------------------------------------------------------------ */

static int prune_dir(int upper_dfd, int lower_dfd, bool opaque, bool *empty);

/* Can the opaque directory upper_dfd become a plain merged one?  Only when
 * the project shows nothing through it that the upper layer does not
 * cover with an entry of its own. */
static int drop_opacity(int upper_dfd, int lower_dfd, bool *dropped)
{
	_cleanup_strv_ char **lower_names = NULL, **names = NULL;
	int r;

	*dropped = false;
	if ((r = list_names(lower_dfd, &lower_names, NULL)) < 0 || (r = list_names(upper_dfd, &names, NULL)) < 0)
		return r;
	for (size_t i = 0; lower_names && lower_names[i]; i++) {
		struct stat st;

		if (fstatat(upper_dfd, lower_names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || is_whiteout(&st))
			return 0;
	}
	/* Its subdirectories were opaque by inheritance: they say so
	 * themselves before the parent stops saying it for them. */
	for (size_t i = 0; names && names[i]; i++) {
		_cleanup_close_ int fd = open_dir_at(upper_dfd, names[i]);

		if (fd >= 0 && fsetxattr(fd, OPAQUE_XATTR, "y", 1, 0) < 0)
			return -errno;
	}
	if (fremovexattr(upper_dfd, OPAQUE_XATTR) < 0 && errno != ENODATA)
		return -errno;
	*dropped = true;
	return 0;
}

static int prune_entry(int upper_dfd, int lower_dfd, const char *name, bool opaque, bool *keep)
{
	struct stat ust, lst;
	bool in_lower, content, mode;
	int r;

	*keep = true;
	if (fstatat(upper_dfd, name, &ust, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? (*keep = false, 0) : -errno;
	if ((r = stat_at(lower_dfd, name, &lst, &in_lower)) < 0)
		return r;
	if (is_whiteout(&ust)) {
		if (in_lower)
			return 0;
	} else if (opaque || !in_lower || (ust.st_mode & S_IFMT) != (lst.st_mode & S_IFMT)) {
		return 0;
	} else if (S_ISDIR(ust.st_mode)) {
		_cleanup_close_ int ufd = open_dir_at(upper_dfd, name), lfd = open_dir_at(lower_dfd, name);
		bool empty = false;

		if (ufd < 0 || lfd < 0)
			return -errno;
		r = prune_dir(ufd, lfd, dir_is_opaque(ufd), &empty);
		if (r < 0 || !empty || dir_is_opaque(ufd) || (ust.st_mode & 07777) != (lst.st_mode & 07777))
			return r;
		if (unlinkat(upper_dfd, name, AT_REMOVEDIR) < 0)
			return -errno;
		*keep = false;
		return 0;
	} else {
		r = compare_entries(upper_dfd, lower_dfd, name, &ust, &lst, &content, &mode);
		if (r < 0 || content || mode)
			return r;
	}
	if (unlinkat(upper_dfd, name, 0) < 0)
		return -errno;
	*keep = false;
	return 0;
}

static int prune_dir(int upper_dfd, int lower_dfd, bool opaque, bool *empty)
{
	_cleanup_strv_ char **names = NULL;
	size_t kept = 0;
	struct stat st;
	int r;

	if (opaque && (r = drop_opacity(upper_dfd, lower_dfd, &opaque)) < 0)
		return r;
	opaque = dir_is_opaque(upper_dfd);
	if ((r = list_names(upper_dfd, &names, NULL)) < 0)
		return r;
	/* A directory the sandbox made read-only: writable for as long as
	 * entries leave it, its mode is part of what it shows. */
	if (fstat(upper_dfd, &st) < 0)
		return -errno;
	if ((st.st_mode & 0300) != 0300 && fchmod(upper_dfd, (st.st_mode & 07777) | 0300) < 0)
		return -errno;
	for (size_t i = 0; names && names[i] && r == 0; i++) {
		bool keep;

		r = prune_entry(upper_dfd, lower_dfd, names[i], opaque, &keep);
		kept += keep;
	}
	if ((st.st_mode & 0300) != 0300 && fchmod(upper_dfd, st.st_mode & 07777) < 0 && r == 0)
		r = -errno;
	*empty = kept == 0;
	return r;
}

int isd_changes_prune(int project_fd, int upper_fd)
{
	bool empty;
	int r = prune_dir(upper_fd, project_fd, false, &empty);

	return r < 0 ? isd_error(r, "removing applied entries from the session's upper layer") : 0;
}

