/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host side of a workspace's git protection, around the run: the
 * directories to cover that must exist (.git/hooks, core.hooksPath), a rw
 * workspace's stand-ins (src/workspace-git.h), and after the run
 * the hold of what no stand-in covers (src/git-hold.c).
 *
 * Runs of one project share the stand-ins: each holds a shared flock on
 * every one for its run, and only a run that then gets it exclusively
 * removes it.  Removing one under another run would undo that run's
 * protection: an unlink in one mount namespace detaches the read-only
 * binds of the same name in the others.
 */
#define _GNU_SOURCE
#include "git-hold.h"
#include "isd/syscalls.h"
#include "isd/fsutil.h"
#include "isd/util.h"
#include "workspace-git.h"
#include "workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BENEATH (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

struct standin {
	char *rel; /* relative to the workspace, no trailing "/" */
	bool dir;
	int fd; /* holds the shared lock; -1: not isd's, left alone */
};

struct isd_workspace_host {
	struct timespec started;
	bool hold; /* rw, git not handed to the agent: held at the end */
	struct standin *v;
	size_t n;
};

const char *isd_workspace_standin_text(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "commondir") ? ISD_GIT_SELF_COMMONDIR : ISD_GIT_STANDIN;
}

static bool fd_is_standin(int fd, const char *path)
{
	const char *want = isd_workspace_standin_text(path);
	size_t n = strlen(want);
	char buf[256];
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == n &&
	       pread(fd, buf, sizeof(buf), 0) == (ssize_t)n && !memcmp(buf, want, n);
}

bool isd_workspace_is_standin(int dir, const char *path)
{
	_cleanup_close_ int fd = isd_openat2(dir, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, BENEATH);

	return fd >= 0 && fd_is_standin(fd, path);
}

static bool fd_is_empty_dir(int fd)
{
	int dup_fd = dup(fd);
	struct dirent *e;
	bool empty = true;
	DIR *d;

	if (dup_fd < 0 || !(d = fdopendir(dup_fd))) {
		if (dup_fd >= 0)
			close(dup_fd);
		return false;
	}
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* The directory above rel, made (mkdir -p) when create, never through a
 * link; *base the last name of rel. */
static int open_parent(int root, const char *rel, bool create, const char **base)
{
	_cleanup_free_ char *copy = isd_xstrdup(rel);
	char *slash = strrchr(copy, '/'), *save = NULL;
	int cur = dup(root);

	*base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	if (cur < 0 || !slash)
		return cur < 0 ? -errno : cur;
	*slash = '\0';
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next;

		if (create && mkdirat(cur, c, 0755) < 0 && errno != EEXIST) {
			int r = -errno;
			close(cur);
			return r;
		}
		next = openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		if (next < 0)
			return -errno;
		cur = next;
	}
	return cur;
}

static bool same_file(int parent, const char *base, int fd)
{
	struct stat a, b;

	return fstatat(parent, base, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* The stand-in at s->rel, made unless there, locked shared; s->fd stays -1
 * when something else is there (it is covered read-only all the same). */
static int make_standin(int root, const char *path, struct standin *s)
{
	const char *base, *text = isd_workspace_standin_text(s->rel);
	_cleanup_close_ int parent = open_parent(root, s->rel, true, &base);

	if (parent < 0)
		return isd_error(parent, "creating the directory of %s/%s, a stand-in that keeps the sandbox from "
					 "redirecting git's configuration (or use --git-writable)", path, s->rel);
	/* Another run may remove it between our look and our lock. */
	for (int tries = 0; tries < 8; tries++) {
		_cleanup_close_ int fd = -1;

		if (s->dir) {
			if (mkdirat(parent, base, 0755) < 0 && errno != EEXIST)
				break;
			fd = openat(parent, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		} else {
			fd = openat(parent, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
			if (fd >= 0 && isd_write_all(fd, text, strlen(text)) < 0) {
				int r = isd_error(-errno, "writing %s/%s, a stand-in for the run", path, s->rel);
				(void)unlinkat(parent, base, 0);
				return r;
			}
			if (fd >= 0 || errno == EEXIST) {
				if (fd >= 0)
					close(fd);
				fd = openat(parent, base, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
			}
		}
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0)
			break;
		if (s->dir ? !fd_is_empty_dir(fd) : !fd_is_standin(fd, s->rel))
			return 0;
		if (flock(fd, LOCK_SH) < 0)
			break;
		if (same_file(parent, base, fd)) {
			s->fd = isd_steal_fd(fd);
			return 0;
		}
	}
	return isd_error(-(errno ? errno : EAGAIN),
			 "creating %s/%s, a stand-in that keeps the sandbox from %s (or use --git-writable)", path, s->rel,
			 s->dir ? "making a repository there" : "redirecting git's configuration");
}

int isd_workspace_prepare_host(const struct isd_spec *spec, struct isd_workspace_host **out)
{
	const struct isd_workspace *ws = &spec->workspace;
	_cleanup_close_ int root = -1;
	struct isd_workspace_host *h;

	*out = NULL;
	if (!ws->path || ws->mode == ISD_WORKSPACE_RO || ws->git_writable)
		return 0;
	root = open(ws->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return isd_error(-errno, "opening the workspace %s", ws->path);
	h = isd_xcalloc(1, sizeof(*h));
	/* The clock file times come from: whatever the run changes is newer. */
	clock_gettime(CLOCK_REALTIME_COARSE, &h->started);
	*out = h;
	/* git init creates it too; it must exist to be covered. */
	if (ws->git_pin && mkdirat(root, ".git/hooks", 0755) < 0 && errno != EEXIST)
		return isd_error(-errno, "creating %s/.git/hooks to protect it (or use --git-writable)", ws->path);
	for (size_t i = 0; ws->git_hooks_dirs && ws->git_hooks_dirs[i]; i++) {
		_cleanup_free_ char *p = isd_xasprintf("%s/%s", ws->path, ws->git_hooks_dirs[i]);
		int r = isd_mkdir_p(p, 0755);
		if (r < 0)
			return isd_error(r, "creating %s (core.hooksPath) to protect it (or use --git-writable)", p);
	}
	h->n = isd_strv_len(ws->git_placeholders);
	h->v = isd_xcalloc(h->n ? h->n : 1, sizeof(*h->v));
	for (size_t i = 0; i < h->n; i++) {
		struct standin *s = &h->v[i];
		size_t len = strlen(ws->git_placeholders[i]);
		int r;

		s->fd = -1;
		s->dir = ws->git_placeholders[i][len - 1] == '/';
		s->rel = isd_xstrdup(ws->git_placeholders[i]);
		if (s->dir)
			s->rel[len - 1] = '\0';
		r = make_standin(root, ws->path, s);
		if (r < 0)
			return r;
	}
	h->hold = ws->mode == ISD_WORKSPACE_RW;
	return 0;
}

void isd_workspace_cleanup_host(const struct isd_spec *spec, struct isd_workspace_host *h)
{
	const struct isd_workspace *ws = &spec->workspace;
	_cleanup_close_ int root = -1;

	if (!h)
		return;
	root = open(ws->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = h->n; i-- > 0;) {
		struct standin *s = &h->v[i];
		const char *base;
		_cleanup_close_ int parent = -1;

		if (s->fd >= 0 && root >= 0 && flock(s->fd, LOCK_EX | LOCK_NB) == 0 &&
		    (parent = open_parent(root, s->rel, false, &base)) >= 0 && same_file(parent, base, s->fd) &&
		    (s->dir ? fd_is_empty_dir(s->fd) : fd_is_standin(s->fd, s->rel)))
			(void)unlinkat(parent, base, s->dir ? AT_REMOVEDIR : 0);
		if (s->fd >= 0)
			close(s->fd);
		free(s->rel);
	}
	if (h->hold && root >= 0)
		isd_git_hold(ws->path, &h->started, ws->git_readonly);
	free(h->v);
	free(h);
}
