/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a rw run leaves for git on the host to run, held (see
 * src/git-hold.h).  Runs after the sandbox is gone: nothing moves
 * under the walk but the user's own work, and still no name is followed
 * through a link.
 */
#define _GNU_SOURCE
#include "git-hold.h"
#include "git-config.h"
#include "isd/path-util.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "workspace-git.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define STR_(x) #x
#define STR(x) STR_(x)
#define BENEATH (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
/* modules/a/b/c: a submodule's name may hold "/". */
#define MAX_MODULE_DEPTH 8
/* Submodules of submodules of ...: the walk's fds stay few. */
#define MAX_GITDIR_NESTING 8
/* Each one is compared with all before it. */
#define MAX_GITDIRS 10000

struct walk {
	const char *root_path;
	int root;
	long long since_ns;
	char *const *pinned;
	dev_t root_dev;
	bool leaf_counts; /* the root's file system counts a directory's subdirectories in its links */
	size_t dirs;
	bool bounded, too_deep;
	int repos;
	struct {
		dev_t dev;
		ino_t ino;
	} *seen;
	size_t n_seen;
};

/* One repository's report. */
struct report {
	char *why;  /* what git would run: "core.fsmonitor, hooks/post-checkout" */
	char *held; /* "config as config.isd-held, ..." */
	bool failed;
};

static void append(char **list, const char *item)
{
	char *old = *list;

	*list = old ? isd_xasprintf("%s, %s", old, item) : isd_xstrdup(item);
	free(old);
}

static bool changed(const struct walk *w, const struct stat *st)
{
	long long t = (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
	/* File systems with coarse times truncate them: one without
	 * nanoseconds may be up to 2 s before the change. */
	long long slack = st->st_ctim.tv_nsec ? 10000000LL : 2000000000LL;

	return t + slack >= w->since_ns;
}

static bool pinned(const struct walk *w, const char *rel)
{
	for (size_t i = 0; w->pinned && w->pinned[i]; i++) {
		size_t n = strlen(w->pinned[i]);
		const char *p = w->pinned[i];

		if (!strcmp(p, rel) || (n && p[n - 1] == '/' && !strncmp(p, rel, n - 1) && !rel[n - 1]))
			return true;
	}
	return false;
}

static char *join(const char *a, const char *b)
{
	return a[0] ? isd_xasprintf("%s/%s", a, b) : isd_xstrdup(b);
}

static char *read_small(int dir, const char *name)
{
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	char *text = NULL;
	struct stat st;
	size_t len;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || isd_read_fd(fd, &text, &len) < 0)
		return NULL;
	if (memchr(text, '\0', len)) {
		free(text);
		return NULL;
	}
	return text;
}

/* name (in dir) moved to name.isd-held (or .isd-held-N): never over
 * something. */
static void hold(int dir, const char *name, struct report *rp)
{
	for (int i = 1; i < 100; i++) {
		_cleanup_free_ char *to = i == 1 ? isd_xasprintf("%s.isd-held", name)
						 : isd_xasprintf("%s.isd-held-%d", name, i);
		_cleanup_free_ char *item = NULL;

		if (renameat2(dir, name, dir, to, RENAME_NOREPLACE) < 0) {
			struct stat st;
			if (errno == EEXIST)
				continue;
			/* A file system without RENAME_NOREPLACE. */
			if (errno != EINVAL || fstatat(dir, to, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
			    renameat(dir, name, dir, to) < 0)
				break;
		}
		item = isd_xasprintf("%s as %s", name, to);
		append(&rp->held, item);
		return;
	}
	rp->failed = true;
	{
		_cleanup_free_ char *item = isd_xasprintf("%s NOT moved (%s): remove it", name, strerror(errno));
		append(&rp->held, item);
	}
}

/* config or config.worktree: held when git would run something it says,
 * or when isd cannot read it as git would. */
static void check_config(struct walk *w, int g, const char *grel, const char *name, struct report *rp)
{
	_cleanup_free_ char *rel = join(grel, name), *text = NULL, *why = NULL;
	struct isd_git_config c;
	struct stat st;

	if (pinned(w, rel) || fstatat(g, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !changed(w, &st))
		return;
	if (!S_ISREG(st.st_mode) || !(text = read_small(g, name))) {
		why = isd_xasprintf("%s that is not a readable file", name);
	} else {
		/* git refuses such a file: what it would do otherwise is unknown. */
		if (isd_git_config_parse(text, strlen(text), &c) < 0)
			why = isd_xasprintf("%s that git cannot read", name);
		for (size_t i = 0; i < c.n; i++)
			/* Where a new submodule's work tree is: no code. */
			if (strcmp(c.v[i].key, "core.worktree") && isd_git_key_executable(c.v[i].key, c.v[i].value) &&
			    !(why && strstr(why, c.v[i].key)))
				append(&why, c.v[i].key);
		isd_git_config_free(&c);
	}
	if (!why)
		return;
	append(&rp->why, why);
	hold(g, name, rp);
}

static void check_commondir(struct walk *w, int g, const char *grel, bool linked, struct report *rp)
{
	_cleanup_free_ char *rel = join(grel, "commondir"), *text = NULL, *why = NULL;
	struct stat st;

	if (pinned(w, rel) || fstatat(g, "commondir", &st, AT_SYMLINK_NOFOLLOW) < 0 || !changed(w, &st))
		return;
	text = read_small(g, "commondir");
	/* Itself (a stand-in another run still holds), or the repository a
	 * linked worktree of git worktree add belongs to. */
	if (text && (!strcmp(text, ISD_GIT_SELF_COMMONDIR) || (linked && !strcmp(text, "../..\n"))))
		return;
	if (text)
		text[strcspn(text, "\n")] = '\0';
	why = isd_xasprintf("commondir %s", text ? text : "(not a readable file)");
	append(&rp->why, why);
	hold(g, "commondir", rp);
}

static void check_hooks(struct walk *w, int g, const char *grel, struct report *rp)
{
	_cleanup_free_ char *rel = join(grel, "hooks/"), *why = NULL;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd;

	rel[strlen(rel) - 1] = '\0';
	if (pinned(w, rel) || fstatat(g, "hooks", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		if (!changed(w, &st))
			return;
		why = isd_xstrdup("hooks that is not a directory");
	} else if ((fd = openat(g, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		if (!(d = fdopendir(fd))) {
			close(fd);
			return;
		}
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			struct stat h;

			/* git runs a hook by its exact name: samples never. */
			if (e->d_name[0] == '.' || (n > 7 && !strcmp(e->d_name + n - 7, ".sample")) ||
			    fstatat(dirfd(d), e->d_name, &h, AT_SYMLINK_NOFOLLOW) < 0 || !changed(w, &h))
				continue;
			if (!why) {
				why = isd_xasprintf("hooks/%s", e->d_name);
			} else if (!strstr(why, ", ...")) {
				char *old = why;
				why = isd_xasprintf("%s, ...", old);
				free(old);
			}
		}
		closedir(d);
	}
	if (!why)
		return;
	append(&rp->why, why);
	hold(g, "hooks", rp);
}

static bool looks_like_gitdir(int dir)
{
	struct stat st;

	return fstatat(dir, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) &&
	       ((fstatat(dir, "objects", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
		 fstatat(dir, "refs", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) ||
		fstatat(dir, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0);
}

static void report(struct walk *w, const char *grel, struct report *rp)
{
	_cleanup_free_ char *where = join(w->root_path, grel);

	if (!rp->held)
		goto out;
	w->repos++;
	isd_warn("the sandbox left git configuration that runs commands in the repository %s (%s): held %s, so that "
		 "git on the host does not run it; review it before you move it back",
		 where, rp->why, rp->held);
out:
	free(rp->why);
	free(rp->held);
}

static void examine_gitdir(struct walk *w, int g, const char *grel, bool linked, unsigned nesting);

typedef void (*subdir_fn)(struct walk *w, int sub, const char *srel, unsigned depth, unsigned nesting);

/* fn for each directory in dir (no dot names, never through a link). */
static void each_subdir(struct walk *w, int dir, const char *rel, subdir_fn fn, unsigned depth, unsigned nesting)
{
	struct dirent *e;
	DIR *d;
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		_cleanup_close_ int sub = -1;
		_cleanup_free_ char *srel = NULL;

		if (e->d_name[0] == '.' ||
		    (sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		srel = join(rel, e->d_name);
		fn(w, sub, srel, depth, nesting);
	}
	closedir(d);
}

/* modules/: each submodule's git directory, at any depth of its name. */
static void module_entry(struct walk *w, int sub, const char *srel, unsigned depth, unsigned nesting)
{
	if (looks_like_gitdir(sub))
		examine_gitdir(w, sub, srel, false, nesting + 1);
	else if (depth < MAX_MODULE_DEPTH)
		each_subdir(w, sub, srel, module_entry, depth + 1, nesting);
	else
		w->too_deep = true;
}

static void examine_modules(struct walk *w, int dir, const char *rel, unsigned depth, unsigned nesting)
{
	each_subdir(w, dir, rel, module_entry, depth, nesting);
}

static void worktree_entry(struct walk *w, int sub, const char *srel, unsigned depth, unsigned nesting)
{
	examine_gitdir(w, sub, srel, true, nesting + 1);
}

static void examine_worktrees(struct walk *w, int dir, const char *rel, unsigned nesting)
{
	each_subdir(w, dir, rel, worktree_entry, 0, nesting);
}

/* A git directory (g, grel relative to the workspace): what of it git
 * reads as configuration or runs, then the git directories inside it. */
static void examine_gitdir(struct walk *w, int g, const char *grel, bool linked, unsigned nesting)
{
	struct report rp = {0};
	struct stat st;

	if (nesting > MAX_GITDIR_NESTING) {
		w->too_deep = true;
		return;
	}
	if (w->n_seen >= MAX_GITDIRS) {
		w->bounded = true;
		return;
	}
	if (fstat(g, &st) < 0)
		return;
	for (size_t i = 0; i < w->n_seen; i++)
		if (w->seen[i].dev == st.st_dev && w->seen[i].ino == st.st_ino)
			return;
	w->seen = isd_xrealloc(w->seen, (w->n_seen + 1) * sizeof(*w->seen));
	w->seen[w->n_seen].dev = st.st_dev;
	w->seen[w->n_seen++].ino = st.st_ino;

	check_config(w, g, grel, "config", &rp);
	check_config(w, g, grel, "config.worktree", &rp);
	check_commondir(w, g, grel, linked, &rp);
	check_hooks(w, g, grel, &rp);
	report(w, grel, &rp);
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "worktrees" : "modules";
		_cleanup_close_ int sub = openat(g, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_free_ char *srel = join(grel, name);

		if (sub < 0)
			continue;
		if (i)
			examine_worktrees(w, sub, srel, nesting);
		else
			examine_modules(w, sub, srel, 0, nesting);
	}
}

/* A .git file (gitdir: X) or link made or changed by the run: the git
 * directory it names if that is in the workspace, else the pointer held. */
static void examine_pointer(struct walk *w, int dir, const char *rel, const struct stat *st)
{
	_cleanup_free_ char *text = NULL, *abs = NULL, *norm = NULL, *why = NULL;
	_cleanup_free_ char *grel = join(rel, ".git");
	const char *rest;
	struct report rp = {0};

	if (!changed(w, st) || pinned(w, grel))
		return;
	if (S_ISREG(st->st_mode) && (text = read_small(dir, ".git")) && !strncmp(text, "gitdir: ", 8)) {
		char *to = text + 8;

		to[strcspn(to, "\r\n")] = '\0';
		abs = to[0] == '/' ? isd_xstrdup(to) : isd_xasprintf("%s/%s", w->root_path, grel);
		if (to[0] != '/') {
			/* Relative to the directory that holds the .git file. */
			*strrchr(abs, '/') = '\0';
			norm = isd_xasprintf("%s/%s", abs, to);
			free(abs);
			abs = isd_steal_ptr(norm);
		}
		if (isd_resolve_abs_path_lexically(abs, &norm) == 0 && (rest = isd_path_rest(norm, w->root_path))) {
			const char *in = rest[0] ? rest : ".";
			_cleanup_close_ int g =
				isd_openat2(w->root, in, O_RDONLY | O_DIRECTORY | O_CLOEXEC, BENEATH);

			if (g >= 0 && looks_like_gitdir(g)) {
				const char *slash = strrchr(in, '/');
				bool linked = slash && slash - in >= 9 && !strncmp(slash - 9, "worktrees", 9);
				examine_gitdir(w, g, in, linked, 0);
				return;
			}
		}
		why = isd_xasprintf(".git pointing at %s", to);
	} else if (S_ISLNK(st->st_mode)) {
		char target[4096];
		ssize_t len = readlinkat(dir, ".git", target, sizeof(target) - 1);

		target[len > 0 ? len : 0] = '\0';
		why = isd_xasprintf(".git a link to %s", target);
	} else {
		why = isd_xstrdup(".git that git cannot read as a repository");
	}
	append(&rp.why, why);
	hold(dir, ".git", &rp);
	report(w, rel, &rp);
}

static void walk(struct walk *w, int dir, const char *rel, unsigned depth)
{
	char **subdirs = NULL;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd;

	if (fstat(dir, &st) < 0)
		return;
	/* No subdirectory (where the file system counts them): only a .git
	 * file or link can be here. */
	if (w->leaf_counts && st.st_dev == w->root_dev && st.st_nlink == 2) {
		if (fstatat(dir, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
			examine_pointer(w, dir, rel, &st);
		return;
	}
	if (looks_like_gitdir(dir)) {
		/* A bare repository: git run in it reads its config and hooks. */
		examine_gitdir(w, dir, rel, false, 0);
		return;
	}
	if ((fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		bool is_dir = e->d_type == DT_DIR;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type == DT_UNKNOWN || !strcmp(e->d_name, ".git")) {
			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			is_dir = S_ISDIR(st.st_mode);
		}
		if (!strcmp(e->d_name, ".git")) {
			_cleanup_close_ int g = -1;
			_cleanup_free_ char *grel = join(rel, ".git");

			if (!is_dir)
				examine_pointer(w, dirfd(d), rel, &st);
			else if ((g = openat(dirfd(d), ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
				examine_gitdir(w, g, grel, false, 0);
		} else if (is_dir) {
			isd_strv_push(&subdirs, isd_xstrdup(e->d_name));
		}
	}
	closedir(d);
	for (size_t i = 0; subdirs && subdirs[i]; i++) {
		_cleanup_close_ int sub = -1;
		_cleanup_free_ char *srel = NULL;

		if (w->dirs >= ISD_GIT_HOLD_MAX_DIRS) {
			w->bounded = true;
			break;
		}
		if (depth + 1 >= ISD_GIT_HOLD_MAX_DEPTH) {
			w->too_deep = true;
			break;
		}
		w->dirs++;
		/* Most directories of a big tree are leaves: two lookups, no open. */
		if (w->leaf_counts && fstatat(dir, subdirs[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
		    st.st_dev == w->root_dev && st.st_nlink == 2) {
			_cleanup_free_ char *dot = isd_xasprintf("%s/.git", subdirs[i]);
			if (fstatat(dir, dot, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
				continue;
		}
		sub = openat(dir, subdirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		srel = join(rel, subdirs[i]);
		walk(w, sub, srel, depth + 1);
	}
	isd_strv_free(subdirs);
}

int isd_git_hold(const char *root, const struct timespec *since, char *const *pinned)
{
	struct walk w = {.root_path = root, .pinned = pinned};

	w.since_ns = (long long)since->tv_sec * 1000000000LL + since->tv_nsec;
	w.root = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.root < 0) {
		isd_warn("looking for git repositories the sandbox made in %s: %s; check them before you run git there",
			 root, strerror(errno));
		return 0;
	}
	{
		struct statfs fs;
		struct stat st;

		if (fstat(w.root, &st) == 0 && fstatfs(w.root, &fs) == 0) {
			w.root_dev = st.st_dev;
			/* ext2/3/4, xfs, tmpfs (btrfs and overlayfs do not count). */
			w.leaf_counts = fs.f_type == 0xEF53 || fs.f_type == 0x58465342 || fs.f_type == 0x01021994;
		}
	}
	walk(&w, w.root, "", 0);
	if (w.bounded || w.too_deep)
		isd_warn("looked for git repositories the sandbox made or changed in %s %s only: check the others "
			 "(find %s -name .git) before you run git in them",
			 root,
			 w.bounded ? "in the first " STR(ISD_GIT_HOLD_MAX_DIRS) " directories and " STR(MAX_GITDIRS)
				     " git directories"
				   : "down to " STR(ISD_GIT_HOLD_MAX_DEPTH) " levels (" STR(MAX_GITDIR_NESTING)
				     " of nested submodules)",
			 root);
	close(w.root);
	free(w.seen);
	return w.repos;
}
