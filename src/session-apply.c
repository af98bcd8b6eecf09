/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd apply`: a session's changes into the host project.  Every parent
 * directory is opened from the project's descriptor with RESOLVE_BENEATH
 * and RESOLVE_NO_SYMLINKS, so that a symlink that appeared in the project
 * can never carry a write outside of it; each file arrives whole (a
 * temporary file in its directory, renamed over the old one).
 */
#define _GNU_SOURCE
#include "isd/session-changes.h"
#include "isd/session.h"
#include "isd/syscalls.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

struct dir_mode {
	char *path;
	mode_t mode;
};

struct applier {
	int project_fd, upper_fd;
	int64_t started_ns;
	bool force;
	size_t applied, refused;
	struct dir_mode *dirs;
	size_t ndirs;
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

static void refuse(struct applier *a, const char *path, const char *why)
{
	_cleanup_free_ char *q = isd_quote_path("", path);

	fprintf(stderr, "isd: apply: refused %s: %s\n", q, why);
	a->refused++;
}

static bool changed_since(const struct stat *st, int64_t started_ns)
{
	return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec >= started_ns;
}

/* The first non-directory under dfd/name changed since the start (a
 * directory's own ctime moves with every entry added or removed, also by
 * an earlier partial apply, so it says nothing about its files). */
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

static int copy_fd(int in, int out)
{
	char buf[65536];

	for (;;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);

		if (n == 0)
			return 0;
		if (n > 0)
			continue;
		if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			return -errno;
		break;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		if ((r = isd_write_all(out, buf, (size_t)n)) < 0)
			return r;
	}
}

/* The upper entry's copy as tmp in hpfd: a regular file, symlink or fifo. */
static int make_temp(int upfd, int hpfd, const char *name, const char *tmp, const struct stat *ust)
{
	if (S_ISLNK(ust->st_mode)) {
		char target[PATH_MAX + 1];
		ssize_t n = readlinkat(upfd, name, target, sizeof(target) - 1);

		if (n < 0)
			return -errno;
		target[n] = '\0';
		return symlinkat(target, hpfd, tmp) < 0 ? -errno : 0;
	}
	if (S_ISFIFO(ust->st_mode))
		return mknodat(hpfd, tmp, S_IFIFO | 0600, 0) < 0 || fchmodat(hpfd, tmp, ust->st_mode & 07777, 0) < 0 ? -errno : 0;
	{
		_cleanup_close_ int in = openat(upfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
		_cleanup_close_ int out = -1;
		struct timespec times[2] = {ust->st_atim, ust->st_mtim};
		int r;

		/* The owner may read what the sandbox made unreadable. */
		if (in < 0 && errno == EACCES && fchmodat(upfd, name, (ust->st_mode & 07777) | 0400, 0) == 0) {
			in = openat(upfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
			if (fchmodat(upfd, name, ust->st_mode & 07777, 0) < 0)
				isd_warn("restoring the mode of %s in the session: %s", name, strerror(errno));
		}
		if (in < 0)
			return -errno;
		out = openat(hpfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out < 0)
			return -errno;
		r = copy_fd(in, out);
		if (r == 0 && (fchmod(out, ust->st_mode & 07777) < 0 || futimens(out, times) < 0))
			r = -errno;
		if (r < 0)
			unlinkat(hpfd, tmp, 0);
		return r;
	}
}

static int apply_file(struct applier *a, const struct isd_change *e, int hpfd, const char *name,
		      const struct stat *hst)
{
	_cleanup_close_ int upfd = -1;
	_cleanup_free_ char *tmp = NULL;
	const char *uname;
	struct stat ust;
	int r;

	upfd = open_parent(a->upper_fd, e->path, &uname);
	if (upfd < 0 || fstatat(upfd, uname, &ust, AT_SYMLINK_NOFOLLOW) < 0)
		return isd_error(upfd < 0 ? upfd : -errno, "reading %s in the session's upper layer", e->path);
	if (!S_ISREG(ust.st_mode) && !S_ISLNK(ust.st_mode) && !S_ISFIFO(ust.st_mode)) {
		refuse(a, e->path, "isd applies files, directories, symlinks and fifos only");
		return 0;
	}
	if (e->status == ISD_CHANGE_MODIFIED && !e->content) {
		if (fchmodat(hpfd, name, ust.st_mode & 07777, AT_SYMLINK_NOFOLLOW) < 0)
			return isd_error(-errno, "changing the mode of %s", e->path);
		return 0;
	}
	tmp = temp_name();
	r = make_temp(upfd, hpfd, uname, tmp, &ust);
	if (r < 0)
		return isd_error(r, "writing a copy of %s next to it", e->path);
	/* A directory cannot be renamed over: it goes only once its
	 * replacement is ready. */
	if (hst && S_ISDIR(hst->st_mode) && (r = isd_remove_tree_at(hpfd, name)) < 0) {
		unlinkat(hpfd, tmp, 0);
		return r;
	}
	if (renameat(hpfd, tmp, hpfd, name) < 0) {
		r = isd_error(-errno, "renaming the new %s into place", e->path);
		unlinkat(hpfd, tmp, 0);
		return r;
	}
	return 0;
}

static int apply_one(struct applier *a, const struct isd_change *e)
{
	_cleanup_close_ int hpfd = -1;
	const char *name;
	struct stat hst;
	bool have, changed = false;
	int r;

	hpfd = open_parent(a->project_fd, e->path, &name);
	if (hpfd < 0) {
		refuse(a, e->path,
		       hpfd == -ELOOP || hpfd == -EXDEV ? "a symlink in its directory's path could lead outside the project"
		       : hpfd == -ENOENT || hpfd == -ENOTDIR ? "its directory is not a directory in the project"
							    : strerror(-hpfd));
		return 0;
	}
	have = fstatat(hpfd, name, &hst, AT_SYMLINK_NOFOLLOW) == 0;
	if (!have && errno != ENOENT)
		return isd_error(-errno, "reading %s in the project", e->path);
	if (have && !a->force) {
		if (!S_ISDIR(hst.st_mode))
			changed = changed_since(&hst, a->started_ns);
		else if (!S_ISDIR(e->new_mode) && (r = tree_changed(hpfd, name, a->started_ns, &changed)) < 0)
			return isd_error(r, "reading %s in the project", e->path);
		if (changed) {
			refuse(a, e->path, "changed on the host since the session started (--force overwrites it)");
			return 0;
		}
	}
	if (e->status == ISD_CHANGE_DELETED) {
		if (have && (S_ISDIR(hst.st_mode) ? (r = isd_remove_tree_at(hpfd, name)) < 0
						  : (r = unlinkat(hpfd, name, 0) < 0 ? isd_error(-errno, "removing %s", e->path) : 0) < 0))
			return r;
	} else if (S_ISDIR(e->new_mode)) {
		if (have && !S_ISDIR(hst.st_mode) && unlinkat(hpfd, name, 0) < 0)
			return isd_error(-errno, "removing %s", e->path);
		/* Writable until its entries are in; its mode comes last. */
		if ((!have || !S_ISDIR(hst.st_mode)) && mkdirat(hpfd, name, 0700) < 0 && errno != EEXIST)
			return isd_error(-errno, "creating %s", e->path);
		a->dirs = isd_xrealloc(a->dirs, (a->ndirs + 1) * sizeof(*a->dirs));
		a->dirs[a->ndirs].path = isd_xstrdup(e->path);
		a->dirs[a->ndirs++].mode = e->new_mode & 07777;
	} else if ((r = apply_file(a, e, hpfd, name, have ? &hst : NULL)) < 0) {
		return r;
	}
	a->applied++;
	return 0;
}

/* Children before parents, so that a read-only directory still took its
 * entries. */
static int set_dir_modes(struct applier *a)
{
	int r = 0;

	for (size_t i = a->ndirs; i-- > 0;) {
		_cleanup_close_ int pfd = -1;
		const char *name;

		if (r == 0) {
			pfd = open_parent(a->project_fd, a->dirs[i].path, &name);
			if (pfd < 0 || fchmodat(pfd, name, a->dirs[i].mode, AT_SYMLINK_NOFOLLOW) < 0)
				r = isd_error(pfd < 0 ? pfd : -errno, "changing the mode of %s", a->dirs[i].path);
		}
		free(a->dirs[i].path);
	}
	free(a->dirs);
	a->dirs = NULL;
	a->ndirs = 0;
	return r;
}

int isd_changes_apply(int project_fd, int upper_fd, const struct isd_changes *c, int64_t started_ns, bool force,
		      size_t *applied, size_t *refused)
{
	struct applier a = {.project_fd = project_fd, .upper_fd = upper_fd, .started_ns = started_ns, .force = force};
	int r = 0;

	for (size_t i = 0; i < c->n && r == 0; i++)
		r = apply_one(&a, &c->v[i]);
	if (set_dir_modes(&a) < 0 && r == 0)
		r = -EIO;
	*applied = a.applied;
	*refused = a.refused;
	if (r < 0)
		return r;
	/* On disk before the upper layer forgets them. */
	if (syncfs(project_fd) < 0)
		return isd_error(-errno, "syncing the project");
	return isd_changes_prune(project_fd, upper_fd);
}

/* ------------------------------------------------------------------ */

static int apply_usage(void)
{
	fputs("Usage: isd apply [ID] [--force] [PATH...]\n"
	      "\n"
	      "Copy a stopped session's changes (all, or those at or under PATHs) into its\n"
	      "project.  A file changed on the host since the session started is refused\n"
	      "unless --force.  Applied changes leave the session; a session with none left\n"
	      "is removed.  Without ID: the latest session of the current directory's project.\n",
	      stdout);
	return 0;
}

static int cmd_apply(struct isd_session *s, char **paths, bool force, int *code)
{
	_cleanup_free_ char *upper = isd_session_upper(s), *cwd = getcwd(NULL, 0);
	_cleanup_close_ int pfd = open(s->project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int ufd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_strv_ char **rel = NULL;
	struct isd_changes all, sel;
	size_t applied = 0, refused = 0, left = 0;
	int r;

	if (pfd < 0)
		return isd_error(-errno, "opening the project %s of session %s", s->project, s->id);
	if (ufd < 0)
		return isd_error(-errno, "opening %s", upper);
	for (size_t i = 0; paths && paths[i]; i++) {
		char *p;

		if ((r = isd_project_relative(s->project, cwd, paths[i], &p)) < 0)
			return r;
		isd_strv_push(&rel, p);
	}
	if ((r = isd_changes_collect(pfd, ufd, &all)) < 0)
		return r;
	r = isd_changes_select(pfd, &all, rel, false, &sel);
	isd_changes_free(&all);
	if (r < 0)
		return r;
	r = isd_changes_apply(pfd, ufd, &sel, s->started_ns, force, &applied, &refused);
	isd_changes_free(&sel);
	if (r < 0)
		return r;
	if ((r = isd_session_count_changes(s, &left)) < 0)
		return r;
	printf("applied %zu change%s to %s\n", applied, applied == 1 ? "" : "s", s->project);
	if (left == 0) {
		if ((r = isd_session_remove(s)) < 0)
			return r;
		printf("session %s has no changes left and is removed\n", s->id);
	} else {
		printf("session %s keeps %zu change%s: isd diff %s\n", s->id, left, left == 1 ? "" : "s", s->id);
	}
	if (refused) {
		fprintf(stderr, "isd: apply: refused %zu change%s (listed above)\n", refused, refused == 1 ? "" : "s");
		*code = 1;
	}
	return 0;
}

int isd_session_cmd_apply(int argc, char **argv)
{
	_cleanup_strv_ char **operands = NULL;
	struct isd_session s;
	bool force = false, consumed = false, dashdash = false, id_allowed = true;
	int r, code = 0;

	for (int i = 1; i < argc; i++) {
		if (!dashdash && !strcmp(argv[i], "--"))
			dashdash = true;
		else if (!dashdash && !strcmp(argv[i], "--force"))
			force = true;
		else if (!dashdash && (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")))
			return apply_usage();
		else if (!dashdash && argv[i][0] == '-' && argv[i][1])
		{
			fprintf(stderr, "isd: apply: unknown option %s (see isd apply --help)\n", argv[i]);
			return ISD_EXIT_FAILURE;
		}
		else {
			/* After "--" there are only PATHs. */
			if (!operands && dashdash)
				id_allowed = false;
			isd_strv_push(&operands, isd_xstrdup(argv[i]));
		}
	}
	r = isd_session_from_arg(operands && id_allowed ? operands[0] : NULL, true, &s, &consumed);
	if (r == 0) {
		r = cmd_apply(&s, operands ? operands + consumed : NULL, force, &code);
		isd_session_free(&s);
	}
	if (r < 0) {
		isd_error_print("apply failed");
		return ISD_EXIT_FAILURE;
	}
	return code;
}
