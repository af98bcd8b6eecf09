/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openat2(2) and its user-space stand-in (see include/isd/resolve.h).
 *
 * The walk keeps one descriptor for where it is and, when scoped, the
 * device and inode of every directory above it: ".." opens the real parent
 * and must find the directory it came from (else EAGAIN, the kernel's
 * answer to a racing rename), so the walk never climbs above the root it
 * was given whatever is renamed meanwhile, and it holds no descriptor per
 * level however deep the path.  No component is ever opened through a
 * symlink by the kernel (O_NOFOLLOW everywhere); link bodies are read with
 * readlinkat and spliced into what is left of the path.
 */
#define _GNU_SOURCE
#include "isd/resolve.h"
#include "isd/util.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif
#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif
#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000
#endif

#define MAX_LINKS 40 /* the kernel's MAXSYMLINKS */
#define SCOPED (RESOLVE_BENEATH | RESOLVE_IN_ROOT)
#define HANDLED (SCOPED | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
/* What openat2 accepts beside O_PATH (EINVAL there; openat ignores them). */
#define O_PATH_FLAGS (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* Set once openat2 answered ENOSYS: the kernel lacks it, or a seccomp
 * filter (an outer isd's) refuses it, for the rest of the process. */
static int openat2_missing;

/* A scoped lookup through ".." answers EAGAIN when any rename or mount
 * happened on the system meanwhile (the kernel's rename_lock and mount_lock
 * sequence counts), and the walk does when a directory moved under it:
 * both are worth a retry, as runc and libpathrs do; only a system busy
 * renaming for the whole time sees the EAGAIN.  O_CREAT may have created
 * the file before failing only in the last step, where no ".." is. */
#define EAGAIN_RETRIES 64

static int openat2_once(int dfd, const char *path, uint64_t flags, uint64_t resolve)
{
	if (!__atomic_load_n(&openat2_missing, __ATOMIC_RELAXED)) {
		struct open_how how = {.flags = flags, .mode = 0, .resolve = resolve};
		int fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));

		if (fd >= 0 || errno != ENOSYS)
			return fd;
		__atomic_store_n(&openat2_missing, 1, __ATOMIC_RELAXED);
	}
	return isd_openat2_emulated(dfd, path, flags, resolve);
}

int isd_openat2(int dfd, const char *path, uint64_t flags, uint64_t resolve)
{
	int fd = -1;

	for (int i = 0; i < EAGAIN_RETRIES; i++) {
		fd = openat2_once(dfd, path, flags, resolve);
		if (fd >= 0 || errno != EAGAIN || (resolve & RESOLVE_CACHED))
			break;
	}
	return fd;
}

struct dir_id {
	dev_t dev;
	ino_t ino;
};

struct walk {
	uint64_t resolve;
	int root; /* scoped: the directory dfd names */
	int cur;
	struct dir_id *up; /* scoped: the directories above cur, root first */
	size_t depth, cap;
	unsigned links;
	char *rest; /* the path still to walk, from pos */
	size_t pos;
};

static void replace_cur(struct walk *w, int fd)
{
	close(w->cur);
	w->cur = fd;
}

static int descend(struct walk *w, int fd)
{
	struct stat st;

	if (w->resolve & SCOPED) {
		if (fstat(w->cur, &st) < 0) {
			int r = -errno;
			close(fd);
			return r;
		}
		if (w->depth == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 16;
			w->up = isd_xrealloc(w->up, w->cap * sizeof(*w->up));
		}
		w->up[w->depth++] = (struct dir_id){st.st_dev, st.st_ino};
	}
	replace_cur(w, fd);
	return 0;
}

static int dotdot(struct walk *w)
{
	struct stat st;
	int fd;

	if ((w->resolve & SCOPED) && w->depth == 0)
		return w->resolve & RESOLVE_BENEATH ? -EXDEV : 0;
	fd = openat(w->cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (w->resolve & SCOPED) {
		const struct dir_id *want = &w->up[w->depth - 1];

		if (fstat(fd, &st) < 0 || st.st_dev != want->dev || st.st_ino != want->ino) {
			close(fd);
			return -EAGAIN; /* moved while we walked: the caller may retry */
		}
		w->depth--;
	}
	replace_cur(w, fd);
	return 0;
}

/* The kernel's fs.protected_symlinks rule for a trailing link, applied
 * whatever the sysctl says: in a sticky world-writable directory only a
 * link of the follower or of the directory's owner is followed. */
static int may_follow_trailing(const struct walk *w, const struct stat *link)
{
	struct stat dir;

	if (link->st_uid == geteuid())
		return 0;
	if (fstat(w->cur, &dir) < 0)
		return -errno;
	if ((dir.st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH) || dir.st_uid == link->st_uid)
		return 0;
	return -EACCES;
}

/* Follows the symlink linkfd (an O_PATH|O_NOFOLLOW descriptor of a name in
 * cur): checks it as the kernel's pick_link does, then puts its body in
 * front of what is left of the path. */
static int follow(struct walk *w, int linkfd, bool trailing)
{
	char body[PATH_MAX];
	struct statfs sfs;
	struct stat st;
	ssize_t n;
	size_t tail;
	char *next;
	int r;

	if (w->links++ >= MAX_LINKS)
		return -ELOOP;
	if (fstat(linkfd, &st) < 0)
		return -errno;
	if (trailing && (r = may_follow_trailing(w, &st)) < 0)
		return r;
	if (w->resolve & RESOLVE_NO_SYMLINKS)
		return -ELOOP;
	if (fstatfs(linkfd, &sfs) < 0)
		return -errno;
	if (sfs.f_flags & ST_NOSYMFOLLOW)
		return -ELOOP;
	/* Magic links (/proc/PID/fd/N, root, cwd, exe, ns/...) jump without
	 * a path the walk could check: every link of a procfs is refused,
	 * the harmless /proc/self too. */
	if ((unsigned long)sfs.f_type == PROC_SUPER_MAGIC)
		return w->resolve & RESOLVE_NO_MAGICLINKS ? -ELOOP : -EXDEV;
	n = readlinkat(linkfd, "", body, sizeof(body));
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENOENT;
	if ((size_t)n >= sizeof(body))
		return -ENAMETOOLONG;
	if (body[0] == '/') {
		int fd;

		if (w->resolve & RESOLVE_BENEATH)
			return -EXDEV;
		if (w->resolve & RESOLVE_IN_ROOT) {
			fd = fcntl(w->root, F_DUPFD_CLOEXEC, 3);
			w->depth = 0;
		} else {
			fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		}
		if (fd < 0)
			return -errno;
		replace_cur(w, fd);
	}
	/* What follows the link keeps its leading "/" (or is empty), so a
	 * trailing slash after the link stays one after its body. */
	tail = strlen(w->rest + w->pos);
	next = isd_xmalloc((size_t)n + tail + 1);
	memcpy(next, body, (size_t)n);
	memcpy(next + n, w->rest + w->pos, tail + 1);
	free(w->rest);
	w->rest = next;
	w->pos = 0;
	return 0;
}

/* A component with more after it: a directory to enter or a link to follow. */
static int step(struct walk *w, const char *name)
{
	_cleanup_close_ int fd = openat(w->cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int r;

	if (fd >= 0) {
		r = descend(w, fd);
		fd = -1;
		return r;
	}
	if (errno != ENOTDIR)
		return -errno;
	fd = openat(w->cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISLNK(st.st_mode))
		return -ENOTDIR;
	return follow(w, fd, false);
}

/* The last component: 1 when it was a link to follow (the walk goes on),
 * else the descriptor opened with the caller's flags, or -errno. */
static int last(struct walk *w, const char *name, uint64_t flags, bool slash)
{
	bool nofollow = (flags & O_NOFOLLOW) || ((flags & O_CREAT) && (flags & O_EXCL));
	_cleanup_close_ int probe = -1;
	struct stat st;
	int fd, err;

	if (slash) {
		/* "name/": a directory, through a link if need be */
		if (flags & O_CREAT)
			return -EISDIR;
		flags |= O_DIRECTORY;
		nofollow = false;
	}
	probe = openat(w->cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (probe >= 0) {
		if (fstat(probe, &st) < 0)
			return -errno;
		if (S_ISLNK(st.st_mode) && !nofollow) {
			err = follow(w, probe, true);
			return err < 0 ? err : 1;
		}
	} else if (errno != ENOENT || !(flags & O_CREAT)) {
		return -errno;
	}
	fd = openat(w->cur, name, (int)(flags | O_NOFOLLOW), 0);
	if (fd >= 0) {
		/* Only an O_PATH open returns a link; one that appeared since
		 * the probe is followed. */
		if (nofollow || !(flags & O_PATH) || fstat(fd, &st) < 0 || !S_ISLNK(st.st_mode))
			return fd;
		close(probe);
		probe = fd;
	} else {
		err = errno;
		if (nofollow || (err != ELOOP && err != ENOTDIR))
			return -err;
		close(probe);
		probe = openat(w->cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (probe < 0 || fstat(probe, &st) < 0 || !S_ISLNK(st.st_mode))
			return -err;
	}
	err = follow(w, probe, true);
	return err < 0 ? err : 1;
}

static int walk(struct walk *w, uint64_t flags)
{
	char name[PATH_MAX];

	for (;;) {
		const char *p = w->rest + w->pos, *rem;
		size_t len;
		bool final, slash;
		int r;

		while (*p == '/')
			p++;
		if (!*p) { /* ended on a directory: "/", ".", "a/.." */
			int fd = openat(w->cur, ".", (int)flags, 0);
			return fd < 0 ? -errno : fd;
		}
		len = strcspn(p, "/");
		memcpy(name, p, len);
		name[len] = '\0';
		w->pos = (size_t)(p - w->rest) + len;
		rem = w->rest + w->pos;
		final = rem[strspn(rem, "/")] == '\0';
		slash = final && *rem == '/';

		if (!strcmp(name, "."))
			continue;
		if (!strcmp(name, "..")) {
			r = dotdot(w);
		} else if (!final) {
			r = step(w, name);
		} else {
			r = last(w, name, flags, slash);
			if (r != 1)
				return r;
			r = 0;
		}
		if (r < 0)
			return r;
	}
}

static int emulate(struct walk *w, int dfd, const char *path, uint64_t flags)
{
	if (w->resolve & ~(HANDLED | RESOLVE_CACHED))
		return -EINVAL; /* RESOLVE_NO_XDEV and flags newer than isd */
	if ((w->resolve & RESOLVE_BENEATH) && (w->resolve & RESOLVE_IN_ROOT))
		return -EINVAL;
	if (flags >> 32 || ((flags & O_PATH) && (flags & ~(uint64_t)O_PATH_FLAGS)))
		return -EINVAL;
	if (w->resolve & RESOLVE_CACHED)
		return -EAGAIN;
	if (!path)
		return -EFAULT;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (!*path)
		return -ENOENT;
	if (!w->resolve) {
		int fd = openat(dfd, path, (int)flags, 0);
		return fd < 0 ? -errno : fd;
	}
	if (path[0] == '/' && (w->resolve & RESOLVE_BENEATH))
		return -EXDEV;
	if (path[0] == '/' && !(w->resolve & RESOLVE_IN_ROOT))
		w->cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else
		w->cur = openat(dfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->cur < 0)
		return -errno;
	if (w->resolve & SCOPED) {
		w->root = fcntl(w->cur, F_DUPFD_CLOEXEC, 3);
		if (w->root < 0)
			return -errno;
	}
	w->rest = isd_xstrdup(path);
	return walk(w, flags);
}

int isd_openat2_emulated(int dfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct walk w = {.resolve = resolve, .root = -1, .cur = -1};
	int r = emulate(&w, dfd, path, flags);

	if (w.cur >= 0)
		close(w.cur);
	if (w.root >= 0)
		close(w.root);
	free(w.up);
	free(w.rest);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}
