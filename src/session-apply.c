/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd apply`: a session's changes into the host project.  Every parent
 * directory is opened from the project's descriptor with RESOLVE_BENEATH
 * and RESOLVE_NO_SYMLINKS, so that a symlink that appeared in the project
 * can never carry a write outside of it; each file arrives whole (a
 * temporary file in its directory, renamed over the old one).
 */
#define _GNU_SOURCE
#include "session-apply.h"
#include "isd/fsutil.h"
#include "isd/session-changes.h"
#include "isd/session-git.h"
#include "isd/session.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "isd/visible.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

/* What apply does with one change, decided by the check. */
struct plan {
	char *tmp;  /* the staged copy's temporary name next to the change's path */
	ssize_t in; /* the outermost new directory holding the change, or -1 */
	mode_t mode; /* the mode to give it (setuid and setgid stripped) */
	bool checked;
};

struct run {
	struct isd_apply *a;
	struct plan *plan;
	int sync_fd[8]; /* one directory per filesystem the changes touch */
	size_t nsync;
	/* files of the session with several names: to the first change staged
	 * of each, whose copy the others link (300 links of a file are one
	 * file's blocks in the session, and in the project) */
	struct isd_inode_map linked;
};

/* The parent directory of path (relative to root), never through a
 * symlink nor outside root; *name points into path. */
static int open_parent(int root, const char *path, const char **name)
{
	_cleanup_free_ char *parent = isd_xstrdup(path);
	char *slash = strrchr(parent, '/');
	int fd;

	if (!slash) {
		*name = path;
		fd = openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	*slash = '\0';
	*name = path + (slash - parent) + 1;
	fd = isd_openat2(root, parent, O_PATH | O_DIRECTORY | O_CLOEXEC,
			 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	return fd < 0 ? -errno : fd;
}

/* "isd: apply: KIND PATH: WHY", the path quoted (it is the sandbox's). */
__attribute__((format(printf, 3, 0))) static void say(const char *kind, const char *path, const char *fmt,
						       va_list ap)
{
	_cleanup_free_ char *q = isd_quote_path("", path);
	char why[512];

	vsnprintf(why, sizeof(why), fmt, ap);
	fprintf(stderr, "isd: apply: %s%s: %s\n", kind, q, why);
}

void isd_apply_refuse(struct isd_apply *a, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("refused ", path, fmt, ap);
	va_end(ap);
	a->refused++;
}

void isd_apply_note(const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("note: ", path, fmt, ap);
	va_end(ap);
}

static bool changed_since(const struct stat *st, int64_t started_ns)
{
	return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec >= started_ns;
}

/* The first non-directory under dfd/name changed since the start (a
 * directory's own ctime moves with every entry added or removed, so it
 * says nothing about its files). */
static int tree_changed(int dfd, const char *name, int64_t started_ns, bool *changed)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int it = -1;
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	it = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (it < 0 || !(d = fdopendir(it)))
		return -errno;
	it = -1;
	while (!*changed && r == 0 && (de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			r = tree_changed(fd, de->d_name, started_ns, changed);
		else
			*changed = changed_since(&st, started_ns);
	}
	closedir(d);
	return r;
}

static char *temp_name(void)
{
	unsigned char rnd[6] = {0};

	(void)!getrandom(rnd, sizeof(rnd), 0);
	return isd_xasprintf(".isd-apply-%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
}

static int copy_range(int in, int out, off_t from, off_t to)
{
	char buf[65536];
	loff_t off_in = from, off_out = from;
	bool plain = false;

	while (off_in < to) {
		size_t want = (size_t)(to - off_in);
		ssize_t n;

		if (!plain) {
			n = copy_file_range(in, &off_in, out, &off_out, want, 0);
			if (n > 0)
				continue;
			if (n == 0)
				return -EIO; /* the file shrank under us */
			if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
				return -errno;
			plain = true;
		}
		n = pread(in, buf, want < sizeof(buf) ? want : sizeof(buf), off_in);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = pwrite(out, buf + done, (size_t)(n - done), off_out);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -errno;
			done += w;
			off_out += w;
		}
		off_in += n;
	}
	return 0;
}

/* The data of in, and holes where it has holes: a 2 GiB sparse file stays
 * one that takes no space. */
static int copy_sparse(int in, int out, off_t size)
{
	off_t pos = 0;
	int r;

	while (pos < size) {
		off_t data = lseek(in, pos, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break; /* only a hole is left */
		if (data < 0)
			return copy_range(in, out, pos, size); /* no SEEK_DATA here */
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0 || hole > size)
			hole = size;
		if ((r = copy_range(in, out, data, hole)) < 0)
			return r;
		pos = hole;
	}
	return ftruncate(out, size) < 0 ? -errno : 0;
}

/* The session's file, symlink (upfd/uname) as dstfd/dst, mode given. */
static int make_copy(int upfd, const char *uname, int dstfd, const char *dst, const struct stat *ust, mode_t mode)
{
	_cleanup_close_ int in = -1, out = -1;
	struct timespec times[2] = {ust->st_atim, ust->st_mtim};
	struct stat st;
	int r;

	if (S_ISLNK(ust->st_mode)) {
		char target[PATH_MAX + 1];
		ssize_t n = readlinkat(upfd, uname, target, sizeof(target) - 1);

		if (n < 0)
			return -errno;
		target[n] = '\0';
		return symlinkat(target, dstfd, dst) < 0 ? -errno : 0;
	}
	/* O_NONBLOCK: whatever the name is now, open never waits (a fifo). */
	in = openat(upfd, uname, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	/* The owner may read what the sandbox made unreadable. */
	if (in < 0 && errno == EACCES && fchmodat(upfd, uname, (ust->st_mode & 07777) | 0400, 0) == 0) {
		in = openat(upfd, uname, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fchmodat(upfd, uname, ust->st_mode & 07777, 0) < 0)
			isd_warn("restoring the mode of %s in the session: %s", uname, strerror(errno));
	}
	if (in < 0)
		return -errno;
	if (fstat(in, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADFD;
	out = openat(dstfd, dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	r = copy_sparse(in, out, st.st_size);
	if (r == 0 && (fchmod(out, mode) < 0 || futimens(out, times) < 0))
		r = -errno;
	if (r < 0)
		unlinkat(dstfd, dst, 0);
	return r;
}

static bool is_new_dir(const struct isd_change *e)
{
	return S_ISDIR(e->new_mode) && (e->status == ISD_CHANGE_ADDED || e->status == ISD_CHANGE_TYPE);
}

/* Where the staged copy of change i is: the temporary name of its
 * outermost new directory, then the rest of its path. */
static char *staged_path(const struct run *run, size_t i)
{
	const struct isd_change *e = &run->a->changes->v[i];
	const struct plan *p = &run->plan[i];
	const struct isd_change *top;
	const char *slash;

	if (p->in < 0)
		return NULL;
	top = &run->a->changes->v[p->in];
	slash = strrchr(top->path, '/');
	return isd_xasprintf("%.*s%s%s", slash ? (int)(slash - top->path + 1) : 0, top->path, run->plan[p->in].tmp,
			     e->path + strlen(top->path));
}

static const char *type_name(mode_t m)
{
	return S_ISFIFO(m) ? "a fifo" : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "a special file";
}

static int check_one(struct run *run, size_t i)
{
	struct isd_apply *a = run->a;
	const struct isd_change *e = &a->changes->v[i];
	struct plan *p = &run->plan[i];
	_cleanup_close_ int hpfd = -1, upfd = -1;
	const char *name, *uname;
	struct stat hst, ust;
	bool have, changed = false;
	int r;

	if (e->status != ISD_CHANGE_DELETED) {
		upfd = open_parent(a->upper_fd, e->path, &uname);
		if (upfd < 0 || fstatat(upfd, uname, &ust, AT_SYMLINK_NOFOLLOW) < 0)
			return isd_error(upfd < 0 ? upfd : -errno, "reading %s in the session's upper layer", e->path);
		if (!S_ISREG(ust.st_mode) && !S_ISLNK(ust.st_mode) && !S_ISDIR(ust.st_mode)) {
			isd_apply_refuse(a, e->path, "%s: isd apply writes files, directories and symlinks only", type_name(ust.st_mode));
			return 0;
		}
		if ((ust.st_mode & S_IFMT) != (e->new_mode & S_IFMT)) {
			isd_apply_refuse(a, e->path, "changed in the session since it was compared (is it running?)");
			return 0;
		}
		p->mode = ust.st_mode & 07777;
		if (!S_ISDIR(ust.st_mode))
			p->mode &= (mode_t)~(S_ISUID | S_ISGID);
	}
	p->checked = true;
	if (p->in >= 0)
		return 0; /* inside a new directory: nothing of the project there */
	hpfd = open_parent(a->project_fd, e->path, &name);
	if (hpfd < 0) {
		isd_apply_refuse(a, e->path, "%s",
				 hpfd == -ELOOP || hpfd == -EXDEV ? "a symlink in its directory's path could lead outside the project"
				 : hpfd == -ENOENT || hpfd == -ENOTDIR ? "its directory is not a directory in the project"
								      : strerror(-hpfd));
		return 0;
	}
	have = fstatat(hpfd, name, &hst, AT_SYMLINK_NOFOLLOW) == 0;
	if (!have && errno != ENOENT)
		return isd_error(-errno, "reading %s in the project", e->path);
	/* The index goes with the session's HEAD (isd_git_check_apply()). */
	if (have && !a->force && !isd_git_follows_head(e->path)) {
		/* A directory the session creates whole, where the host made one
		 * meanwhile: taking it would replace what the host put there. */
		if (S_ISDIR(hst.st_mode) && is_new_dir(e))
			changed = true;
		else if (!S_ISDIR(hst.st_mode))
			changed = changed_since(&hst, a->started_ns);
		else if (!S_ISDIR(e->new_mode) && (r = tree_changed(hpfd, name, a->started_ns, &changed)) < 0)
			return isd_error(r, "reading %s in the project", e->path);
		if (changed)
			isd_apply_refuse(a, e->path, "changed on the host since the session started (--force overwrites it)");
	}
	return 0;
}

static int cmp_change_path(const void *key, const void *elem)
{
	return strcmp(key, ((const struct isd_change *)elem)->path);
}

/* Each change's outermost new directory: the shortest of its parents
 * that the changes create. */
static void plan_init(struct run *run)
{
	const struct isd_changes *c = run->a->changes;

	run->plan = isd_xcalloc(c->n ? c->n : 1, sizeof(*run->plan));
	for (size_t i = 0; i < c->n; i++) {
		_cleanup_free_ char *prefix = isd_xstrdup(c->v[i].path);

		run->plan[i].in = -1;
		for (char *slash = strchr(prefix, '/'); slash; slash = strchr(slash + 1, '/')) {
			const struct isd_change *dir;

			*slash = '\0';
			dir = bsearch(prefix, c->v, c->n, sizeof(*c->v), cmp_change_path);
			*slash = '/';
			if (dir && is_new_dir(dir)) {
				run->plan[i].in = dir - c->v;
				break;
			}
		}
	}
}

int isd_apply_check_all(struct isd_apply *a)
{
	struct run run = {.a = a};
	int r = 0;

	plan_init(&run);
	for (size_t i = 0; i < a->changes->n && r == 0; i++)
		r = check_one(&run, i);
	if (r == 0)
		r = isd_git_check_apply(a);
	free(run.plan);
	return r;
}

static void remember_fs(struct run *run, int dirfd)
{
	struct stat st, other;

	if (fstat(dirfd, &st) < 0)
		return;
	for (size_t i = 0; i < run->nsync; i++)
		if (fstat(run->sync_fd[i], &other) == 0 && other.st_dev == st.st_dev)
			return;
	if (run->nsync < sizeof(run->sync_fd) / sizeof(run->sync_fd[0]))
		run->sync_fd[run->nsync++] = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* One syncfs per filesystem, not an fsync per file. */
static int sync_all(struct run *run)
{
	for (size_t i = 0; i < run->nsync; i++)
		if (run->sync_fd[i] >= 0 && syncfs(run->sync_fd[i]) < 0)
			return isd_error(-errno, "flushing the project to disk");
	return 0;
}

/* A link to the staged copy of an earlier change of the same file. */
static int link_staged(struct run *run, size_t i, const struct stat *ust, int dfd, const char *name)
{
	_cleanup_free_ char *at = NULL;
	_cleanup_close_ int first_dfd = -1;
	const struct isd_change *first;
	const char *first_name, *slash;
	size_t j;

	if (!isd_inode_map_find_or_add(&run->linked, ust->st_dev, ust->st_ino, i, &j) ||
	    (run->plan[j].in < 0 && !run->plan[j].tmp))
		return -ENOENT;
	first = &run->a->changes->v[j];
	at = staged_path(run, j);
	if (!at) {
		slash = strrchr(first->path, '/');
		at = isd_xasprintf("%.*s%s", slash ? (int)(slash - first->path + 1) : 0, first->path, run->plan[j].tmp);
	}
	first_dfd = open_parent(run->a->project_fd, at, &first_name);
	if (first_dfd < 0)
		return first_dfd;
	return linkat(first_dfd, first_name, dfd, name, 0) < 0 ? -errno : 0;
}

static int stage_one(struct run *run, size_t i)
{
	const struct isd_change *e = &run->a->changes->v[i];
	struct plan *p = &run->plan[i];
	_cleanup_free_ char *at = staged_path(run, i), *tmp = NULL;
	_cleanup_close_ int dfd = -1, upfd = -1;
	const char *name, *uname;
	struct stat ust;
	int r;

	if (e->status == ISD_CHANGE_DELETED || (e->status == ISD_CHANGE_MODIFIED && (!e->content || S_ISDIR(e->new_mode))))
		return 0;
	dfd = open_parent(run->a->project_fd, at ? at : e->path, &name);
	if (dfd < 0)
		return isd_error(dfd, "opening the directory of %s in the project", e->path);
	if (!at)
		name = tmp = temp_name();
	remember_fs(run, dfd);
	if (S_ISDIR(e->new_mode)) {
		/* Writable until its entries are in; its mode comes last. */
		if (mkdirat(dfd, name, 0700) < 0)
			return isd_error(-errno, "creating %s", e->path);
	} else {
		upfd = open_parent(run->a->upper_fd, e->path, &uname);
		if (upfd < 0 || fstatat(upfd, uname, &ust, AT_SYMLINK_NOFOLLOW) < 0)
			return isd_error(upfd < 0 ? upfd : -errno, "reading %s in the session's upper layer", e->path);
		r = -ENOENT;
		if (S_ISREG(ust.st_mode) && ust.st_nlink > 1)
			r = link_staged(run, i, &ust, dfd, name);
		if (r < 0)
			r = make_copy(upfd, uname, dfd, name, &ust, p->mode);
		if (r < 0)
			return isd_error(r == -EBADFD ? -EINVAL : r, "writing a copy of %s next to it", e->path);
	}
	/* Only what this apply created is ever removed again (unstage). */
	p->tmp = isd_steal_ptr(tmp);
	return 0;
}

/* Staged directories get their modes children first, so that a read-only
 * one still took its entries. */
static int stage_dir_modes(struct run *run)
{
	for (size_t i = run->a->changes->n; i-- > 0;) {
		const struct isd_change *e = &run->a->changes->v[i];
		_cleanup_free_ char *at = NULL;
		_cleanup_close_ int dfd = -1;
		const char *name;

		if (!is_new_dir(e) || (run->plan[i].in < 0 && !run->plan[i].tmp))
			continue;
		at = staged_path(run, i);
		dfd = open_parent(run->a->project_fd, at ? at : e->path, &name);
		if (dfd < 0 || fchmodat(dfd, at ? name : run->plan[i].tmp, run->plan[i].mode, 0) < 0)
			return isd_error(dfd < 0 ? dfd : -errno, "changing the mode of %s", e->path);
	}
	return 0;
}

/* What staging left that is not in place: gone, the project as it was. */
static void unstage(struct run *run)
{
	for (size_t i = 0; i < run->a->changes->n; i++) {
		_cleanup_close_ int dfd = -1;
		const char *name;

		if (!run->plan[i].tmp)
			continue;
		dfd = open_parent(run->a->project_fd, run->a->changes->v[i].path, &name);
		if (dfd >= 0 && unlinkat(dfd, run->plan[i].tmp, 0) < 0 && errno != ENOENT)
			(void)isd_rm_rf_at(dfd, run->plan[i].tmp);
	}
}

static int commit_one(struct run *run, size_t i)
{
	const struct isd_change *e = &run->a->changes->v[i];
	struct plan *p = &run->plan[i];
	_cleanup_close_ int dfd = -1;
	const char *name;
	struct stat hst;
	bool have;
	int r;

	if (p->in >= 0 || (e->status == ISD_CHANGE_MODIFIED && S_ISDIR(e->new_mode)))
		return 0; /* in place with its directory; directory modes come last */
	dfd = open_parent(run->a->project_fd, e->path, &name);
	if (dfd < 0)
		return isd_error(dfd, "opening the directory of %s in the project", e->path);
	remember_fs(run, dfd);
	have = fstatat(dfd, name, &hst, AT_SYMLINK_NOFOLLOW) == 0;
	if (e->status == ISD_CHANGE_MODIFIED && !e->content) {
		if (fchmodat(dfd, name, p->mode, 0) < 0)
			return isd_error(-errno, "changing the mode of %s", e->path);
	} else if (e->status == ISD_CHANGE_DELETED || (have && (S_ISDIR(hst.st_mode) || S_ISDIR(e->new_mode)))) {
		/* A directory cannot be renamed over, nor over a file: what is
		 * there goes first. */
		if (have && (S_ISDIR(hst.st_mode) ? (r = isd_rm_rf_at(dfd, name)) < 0
						  : (r = unlinkat(dfd, name, 0) < 0 ? isd_error(-errno, "removing %s", e->path) : 0) < 0))
			return r;
	}
	if (p->tmp) {
		if (renameat(dfd, p->tmp, dfd, name) < 0)
			return isd_error(-errno, "renaming the new %s into place", e->path);
		free(p->tmp);
		p->tmp = NULL;
	}
	return 0;
}

/* Setuid and setgid bits that were not applied: said, and gone from the
 * session too, so that what was applied leaves it. */
static void strip_notes(struct run *run)
{
	for (size_t i = 0; i < run->a->changes->n; i++) {
		const struct isd_change *e = &run->a->changes->v[i];
		_cleanup_close_ int upfd = -1;
		const char *uname;

		if (!e->new_mode || S_ISDIR(e->new_mode) || S_ISLNK(e->new_mode) || !(e->new_mode & (S_ISUID | S_ISGID)))
			continue;
		isd_apply_note(e->path, "applied without its setuid/setgid bits (mode %04o, not %04o)",
			       (unsigned)run->plan[i].mode, (unsigned)(e->new_mode & 07777));
		upfd = open_parent(run->a->upper_fd, e->path, &uname);
		if (upfd >= 0)
			(void)fchmodat(upfd, uname, run->plan[i].mode, 0);
	}
}

/* Mode changes of directories that were there, children first. */
static int commit_dir_modes(struct run *run)
{
	for (size_t i = run->a->changes->n; i-- > 0;) {
		const struct isd_change *e = &run->a->changes->v[i];
		_cleanup_close_ int dfd = -1;
		const char *name;

		if (e->status != ISD_CHANGE_MODIFIED || !S_ISDIR(e->new_mode))
			continue;
		dfd = open_parent(run->a->project_fd, e->path, &name);
		if (dfd < 0 || fchmodat(dfd, name, run->plan[i].mode, 0) < 0)
			return isd_error(dfd < 0 ? dfd : -errno, "changing the mode of %s", e->path);
	}
	return 0;
}

int isd_apply_run(struct isd_apply *a)
{
	struct run run = {.a = a};
	int r = 0;

	a->applied = 0;
	a->refused = 0;
	plan_init(&run);
	for (size_t i = 0; i < a->changes->n && r == 0; i++)
		r = check_one(&run, i);
	if (r == 0)
		r = isd_git_check_apply(a);
	if (r < 0 || a->refused)
		goto out;
	remember_fs(&run, a->project_fd);
	for (size_t i = 0; i < a->changes->n && r == 0; i++)
		r = stage_one(&run, i);
	if (r == 0)
		r = stage_dir_modes(&run);
	/* The copies' data on disk before any of them has its name. */
	if (r == 0)
		r = sync_all(&run);
	if (r < 0) {
		unstage(&run);
		goto out;
	}
	for (size_t i = 0; i < a->changes->n && r == 0; i++)
		r = commit_one(&run, i);
	if (r == 0)
		r = commit_dir_modes(&run);
	if (r < 0) {
		/* Rare (the disk fails between two renames): the session keeps
		 * every change, apply can run again. */
		unstage(&run);
		goto out;
	}
	strip_notes(&run);
	/* On disk before the upper layer forgets them. */
	if ((r = sync_all(&run)) < 0)
		goto out;
	a->applied = isd_changes_count(a->changes);
	r = isd_changes_prune(a->project_fd, a->upper_fd);
out:
	for (size_t i = 0; i < a->changes->n; i++)
		free(run.plan[i].tmp);
	free(run.plan);
	isd_inode_map_free(&run.linked);
	for (size_t i = 0; i < run.nsync; i++)
		if (run.sync_fd[i] >= 0)
			close(run.sync_fd[i]);
	return r;
}

int isd_changes_apply(int project_fd, int upper_fd, const struct isd_changes *c, int64_t started_ns, bool force,
		      size_t *applied, size_t *refused)
{
	struct isd_apply a = {.project_fd = project_fd, .upper_fd = upper_fd, .changes = c, .started_ns = started_ns,
			      .force = force};
	int r = isd_apply_run(&a);

	*applied = a.applied;
	*refused = a.refused;
	return r;
}
