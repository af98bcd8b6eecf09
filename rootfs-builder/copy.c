/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * COPY and ADD from the build context.  Sources are resolved inside the
 * context (RESOLVE_IN_ROOT: neither ".." nor a symlink leads out of it) and
 * opened on the host; then a helper that is root of the image's user
 * namespace chroots into the image and writes the copies, so the
 * destination, whatever symlinks the image holds, is always inside it.
 * Inside a copied directory, symlinks are copied as symlinks, never
 * followed.  The same walk feeds the build key (file names, modes,
 * contents, link targets).
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int open_in_context(int ctxfd, const char *rel, int flags)
{
	return isd_openat2(ctxfd, rel[0] ? rel : ".", (uint64_t)flags | O_CLOEXEC, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

/* Context-relative, cleaned source names, wildcards (in the last name)
 * expanded. */
int isd_copy_expand_sources(int ctxfd, char *const *sources, char ***out)
{
	char **list = NULL;

	for (size_t i = 0; sources[i]; i++) {
		_cleanup_free_ char *clean = NULL;
		char *slash;
		size_t len = 0;
		const char *src = sources[i];

		clean = isd_xmalloc(strlen(src) + 1);
		for (const char *p = src; *p;) {
			size_t n;
			while (*p == '/')
				p++;
			n = strcspn(p, "/");
			if (!n)
				break;
			if (n == 2 && !strncmp(p, "..", 2)) {
				isd_strv_free(list);
				return isd_error(0, "source '%s' is outside the build context", src);
			}
			if (!(n == 1 && *p == '.')) {
				if (len)
					clean[len++] = '/';
				memcpy(clean + len, p, n);
				len += n;
			}
			p += n;
		}
		clean[len] = '\0';
		slash = strrchr(clean, '/');
		if (strpbrk(slash ? slash + 1 : clean, "*?[")) {
			_cleanup_free_ char *dir = slash ? strndup(clean, (size_t)(slash - clean)) : isd_xstrdup("");
			const char *pattern = slash ? slash + 1 : clean;
			int dfd;
			DIR *d;
			struct dirent *de;
			size_t before = isd_strv_len(list);

			if (strpbrk(dir, "*?[")) {
				isd_strv_free(list);
				return isd_error(0, "source '%s': wildcards are supported in the last name only", src);
			}
			dfd = open_in_context(ctxfd, dir, O_RDONLY | O_DIRECTORY);
			d = dfd >= 0 ? fdopendir(dfd) : NULL;
			while (d && (de = readdir(d))) {
				if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
					continue;
				if (fnmatch(pattern, de->d_name, FNM_PERIOD) == 0)
					isd_strv_push(&list, dir[0] ? isd_xasprintf("%s/%s", dir, de->d_name)
								    : isd_xstrdup(de->d_name));
			}
			if (d)
				closedir(d);
			else if (dfd >= 0)
				close(dfd);
			if (isd_strv_len(list) == before) {
				isd_strv_free(list);
				return isd_error(0, "source '%s' matches nothing in the build context", src);
			}
			qsort(list + before, isd_strv_len(list) - before, sizeof(char *), cmp_str);
		} else {
			_cleanup_close_ int fd = open_in_context(ctxfd, clean, O_PATH);
			if (fd < 0) {
				int r = isd_error(-errno, "source '%s' in the build context", src);
				isd_strv_free(list);
				return r;
			}
			isd_strv_push(&list, isd_steal_ptr(clean));
		}
	}
	*out = list ? list : isd_xcalloc(1, sizeof(char *));
	return 0;
}

static void hash_str(struct isd_sha256 *h, const char *s)
{
	isd_sha256_update(h, s, strlen(s) + 1);
}

static int hash_node(struct isd_sha256 *h, int dfd, const char *name, const char *rel, int depth)
{
	struct stat st;
	char line[128];

	if (depth > 256)
		return isd_error(-ELOOP, "%s: too deep", rel);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW | (name[0] ? 0 : AT_EMPTY_PATH)) < 0)
		return isd_error(-errno, "reading %s in the build context", rel);
	snprintf(line, sizeof(line), "%o", (unsigned)st.st_mode);
	hash_str(h, rel);
	hash_str(h, line);
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return isd_error(-errno, "reading the symlink %s", rel);
		target[n] = '\0';
		hash_str(h, target);
	} else if (S_ISREG(st.st_mode)) {
		_cleanup_close_ int fd = name[0] ? openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : dup(dfd);
		char digest[80];
		if (fd < 0 || isd_sha256_fd(fd, digest) < 0)
			return isd_error(-errno, "reading %s in the build context", rel);
		hash_str(h, digest);
	} else if (S_ISDIR(st.st_mode)) {
		int fd = name[0] ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : dup(dfd);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *de;
		char **names = NULL;
		int r = 0;

		if (!d) {
			if (fd >= 0)
				close(fd);
			return isd_error(-errno, "listing %s in the build context", rel);
		}
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				isd_strv_push(&names, isd_xstrdup(de->d_name));
		if (names)
			qsort(names, isd_strv_len(names), sizeof(char *), cmp_str);
		for (size_t i = 0; names && names[i] && r == 0; i++) {
			_cleanup_free_ char *child = isd_xasprintf("%s/%s", rel, names[i]);
			r = hash_node(h, dirfd(d), names[i], child, depth + 1);
		}
		isd_strv_free(names);
		closedir(d);
		return r;
	}
	return 0;
}

int isd_copy_hash(int ctxfd, char *const *expanded, struct isd_sha256 *h)
{
	for (size_t i = 0; expanded[i]; i++) {
		/* A source that is a symlink inside the context is copied as
		 * its target, so its target is what is hashed. */
		_cleanup_close_ int fd = open_in_context(ctxfd, expanded[i], O_RDONLY);
		int r;

		if (fd < 0)
			return isd_error(-errno, "source '%s' in the build context", expanded[i]);
		r = hash_node(h, fd, "", expanded[i], 0);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ------------------------------------------------------------------ */

struct copy_args {
	int rootfd;
	int *fds;      /* opened sources */
	char **names;  /* their context-relative names */
	size_t n;
	const char *dest;
	bool dest_is_dir;
	const char *chown, *chmod;
	bool keep_owner; /* many ids mapped; else everything belongs to root */
};

struct owner {
	uint32_t uid, gid;
	bool has_mode;
	uint32_t mode;
};

static int copy_file_fd(int src, const struct stat *st, const char *target, const struct owner *o)
{
	_cleanup_close_ int out = -1;
	struct timespec times[2] = {st->st_atim, st->st_mtim};
	struct stat cur;

	if (lstat(target, &cur) == 0) {
		if (S_ISDIR(cur.st_mode))
			return isd_error(-EISDIR, "copying to %s: a directory is in the way", target);
		unlink(target);
	}
	out = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return isd_error(-errno, "creating %s", target);
	for (;;) {
		char buf[65536];
		ssize_t n = read(src, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return isd_error(-errno, "reading the source of %s", target);
		if (n == 0)
			break;
		if (isd_write_all(out, buf, (size_t)n) < 0)
			return isd_error(-errno, "writing %s", target);
	}
	if (fchown(out, o->uid, o->gid) < 0 || fchmod(out, o->has_mode ? o->mode : st->st_mode & 07777) < 0)
		return isd_error(-errno, "setting the owner and mode of %s", target);
	futimens(out, times);
	return 0;
}

static int copy_dir_contents(int srcdir, const char *target, const struct owner *o, int depth);

static int copy_entry(int dfd, const char *name, const char *target, const struct owner *o, int depth)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return isd_error(-errno, "reading %s", name);
	if (S_ISDIR(st.st_mode)) {
		_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat cur;
		if (fd < 0)
			return isd_error(-errno, "opening %s", name);
		if (lstat(target, &cur) == 0 && !S_ISDIR(cur.st_mode))
			unlink(target);
		if (mkdir(target, 0700) < 0 && errno != EEXIST)
			return isd_error(-errno, "creating %s", target);
		if (lchown(target, o->uid, o->gid) < 0 || chmod(target, o->has_mode ? o->mode : st.st_mode & 07777) < 0)
			return isd_error(-errno, "setting the owner and mode of %s", target);
		return copy_dir_contents(fd, target, o, depth + 1);
	}
	if (S_ISLNK(st.st_mode)) {
		char link[4096];
		ssize_t n = readlinkat(dfd, name, link, sizeof(link) - 1);
		struct stat cur;
		if (n < 0)
			return isd_error(-errno, "reading the symlink %s", name);
		link[n] = '\0';
		if (lstat(target, &cur) == 0 && !S_ISDIR(cur.st_mode))
			unlink(target);
		if (symlink(link, target) < 0 || lchown(target, o->uid, o->gid) < 0)
			return isd_error(-errno, "creating the symlink %s", target);
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return isd_error(-errno, "opening %s", name);
		return copy_file_fd(fd, &st, target, o);
	}
	isd_warn("COPY: skipping %s: not a file, directory or symlink", name);
	return 0;
}

static int copy_dir_contents(int srcdir, const char *target, const struct owner *o, int depth)
{
	int fd = dup(srcdir);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int r = 0;

	if (depth > 256)
		return isd_error(-ELOOP, "copying to %s: too deep", target);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return isd_error(-errno, "listing a source directory");
	}
	rewinddir(d);
	while (r == 0 && (de = readdir(d))) {
		_cleanup_free_ char *child = NULL;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		child = isd_xasprintf("%s/%s", target, de->d_name);
		r = copy_entry(dirfd(d), de->d_name, child, o, depth);
	}
	closedir(d);
	return r;
}

static int copy_fn(void *arg)
{
	struct copy_args *a = arg;
	struct owner o = {0};
	_cleanup_close_ int root = -1;
	_cleanup_free_ char *dest_dir = NULL;
	int r;

	if (fchdir(a->rootfd) < 0 || chroot(".") < 0 || chdir("/") < 0)
		return isd_error(-errno, "entering the image tree");
	close(a->rootfd);
	umask(0);
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (a->chown) {
		_cleanup_free_ char *user = isd_xstrdup(a->chown);
		char *group = strchr(user, ':');
		if (group)
			*group++ = '\0';
		if (isd_image_lookup_user(root, user, &o.uid, &o.gid) < 0)
			return isd_error(0, "--chown=%s: no user '%s' in the image's /etc/passwd", a->chown, user);
		if (group && isd_image_lookup_group(root, group, &o.gid) < 0)
			return isd_error(0, "--chown=%s: no group '%s' in the image's /etc/group", a->chown, group);
		if (!a->keep_owner && (o.uid || o.gid)) {
			isd_warn("--chown=%s: without subordinate ids every file belongs to you (root inside)", a->chown);
			o.uid = o.gid = 0;
		}
	}
	if (a->chmod) {
		o.has_mode = true;
		isd_parse_octal_mode(a->chmod, &o.mode);
	}
	/* The destination's missing parents belong to root, like Docker's. */
	dest_dir = a->dest_is_dir ? isd_xstrdup(a->dest) : strndup(a->dest, (size_t)(strrchr(a->dest, '/') - a->dest));
	if (dest_dir[0]) {
		r = isd_mkdir_p_at(AT_FDCWD, dest_dir, 0755);
		if (r < 0)
			return isd_error(r, "creating %s in the image", dest_dir);
	}
	for (size_t i = 0; i < a->n; i++) {
		struct stat st;
		const char *base = strrchr(a->names[i], '/');

		base = base ? base + 1 : a->names[i];
		if (fstat(a->fds[i], &st) < 0)
			return isd_error(-errno, "reading %s", a->names[i]);
		if (S_ISDIR(st.st_mode)) {
			/* Docker copies a directory's contents, not the directory. */
			if (!a->dest_is_dir) {
				r = isd_mkdir_p_at(AT_FDCWD, a->dest, 0755);
				if (r < 0)
					return isd_error(r, "creating %s in the image", a->dest);
			}
			r = copy_dir_contents(a->fds[i], a->dest, &o, 0);
		} else {
			struct stat cur;
			_cleanup_free_ char *target = NULL;
			if (a->dest_is_dir || (stat(a->dest, &cur) == 0 && S_ISDIR(cur.st_mode)))
				target = isd_xasprintf("%s/%s", strcmp(a->dest, "/") ? a->dest : "", base[0] ? base : "file");
			else
				target = isd_xstrdup(a->dest);
			r = copy_file_fd(a->fds[i], &st, target, &o);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int isd_copy_run(const char *rootfs, const struct isd_idmap *map, int ctxfd, char *const *expanded,
		 const char *dest, bool dest_is_dir, const char *chown, const char *chmod)
{
	struct copy_args a = {.dest = dest, .dest_is_dir = dest_is_dir, .chown = chown, .chmod = chmod,
			      .keep_owner = map->full};
	int r = 0;

	a.n = isd_strv_len(expanded);
	a.names = (char **)expanded;
	a.fds = isd_xcalloc(a.n + 1, sizeof(int));
	for (size_t i = 0; i < a.n; i++)
		a.fds[i] = -1;
	for (size_t i = 0; i < a.n && r == 0; i++) {
		a.fds[i] = open_in_context(ctxfd, expanded[i], O_RDONLY);
		if (a.fds[i] < 0)
			r = isd_error(-errno, "opening '%s' in the build context", expanded[i]);
	}
	a.rootfd = open(rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r == 0 && a.rootfd < 0)
		r = isd_error(-errno, "opening %s", rootfs);
	if (r == 0)
		r = isd_idmap_run(map, copy_fn, &a);
	for (size_t i = 0; i < a.n; i++)
		if (a.fds[i] >= 0)
			close(a.fds[i]);
	if (a.rootfd >= 0)
		close(a.rootfd);
	free(a.fds);
	return r;
}
