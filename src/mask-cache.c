/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mask walk's record, one file per project and pattern set in isd's
 * runtime or cache directory (open_cache_dir), out of every sandbox's
 * reach: a payload that could write the record could hide its own .env
 * from the next run's masks (a checksum has no secret, and a key to
 * authenticate records would sit beside them).  So the
 * file is read only when it is the caller's, in directories that are the
 * caller's and that nobody else can write, opened without following a
 * link; a checksum catches a torn or damaged file; the key inside it
 * (project, patterns, isd's version) must match byte for byte.  What the
 * record says about a directory is still only a claim: the walk checks it
 * against the directory itself before using it.
 */
#define _GNU_SOURCE
#include "mask-cache.h"
#include "isd/fsutil.h"
#include "isd/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC "ISDMASK\1"
/* A project with more directories is not one the cache is for. */
#define MAX_DIRS (1u << 22)
#define MAX_FILE (256u << 20)

struct header {
	char magic[8];
	uint32_t key_len;
	uint32_t n_dirs;
	uint64_t body_len;
	uint64_t checksum; /* FNV-1a 64 of the header (this field 0), key, body */
};

/* One directory's record: these fields, then the path, then n_sub and
 * n_found names, each a uint16_t length and its bytes. */
struct record {
	uint64_t dev, ino;
	int64_t mtime_sec, ctime_sec;
	uint32_t mtime_nsec, ctime_nsec;
	uint32_t flags;
	uint32_t path_len, n_sub, n_found;
};
#define REC_TRUSTED 1u

char *isd_mask_cache_key(const char *project, char *const *masks, char *const *unmasks, size_t *len)
{
	char *key = isd_xasprintf("isd-mask-cache 1\nisd %s\nproject %s\n", ISD_VERSION, project);

	for (size_t i = 0; masks && masks[i]; i++) {
		char *k = isd_xasprintf("%smask %s\n", key, masks[i]);
		free(key);
		key = k;
	}
	for (size_t i = 0; unmasks && unmasks[i]; i++) {
		char *k = isd_xasprintf("%sunmask %s\n", key, unmasks[i]);
		free(key);
		key = k;
	}
	*len = strlen(key);
	return key;
}

/* A directory of the caller's that nobody else can write, opened without
 * following a link (O_PATH: a dirfd for openat and renameat). */
static int open_private(int dfd, const char *name, bool create)
{
	struct stat st;
	int fd;

	if (create && mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* $XDG_RUNTIME_DIR/isd/masks when the runtime directory is the caller's
 * 0700 one (a tmpfs no sandbox sees: each has a fresh /run), else
 * $XDG_CACHE_HOME/isd/masks, which guard.c covers read-only wherever a
 * bind would show it. */
static int open_cache_dir(bool create)
{
	const char *run = isd_runtime_dir(), *base = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	_cleanup_free_ char *root = NULL;
	_cleanup_close_ int fd = -1, isd = -1;
	struct stat st;

	if (run && stat(run, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077))
		root = isd_xstrdup(run);
	else if (base && base[0] == '/')
		root = isd_xstrdup(base);
	else if (home && home[0] == '/' && home[1])
		root = isd_xasprintf("%s/.cache", home);
	else
		return -ENOENT;
	if (create && isd_mkdir_p(root, 0700) < 0)
		return -ENOENT;
	/* The base may be a link (a home on another disk): guard.c refuses
	 * one that a writable mount could repoint. */
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	isd = open_private(fd, "isd", create);
	if (isd < 0)
		return isd;
	return open_private(isd, "masks", create);
}

static char *file_name(const char *key, size_t key_len)
{
	return isd_xasprintf("%016" PRIx64 ".masks", isd_fnv1a(ISD_FNV1A_INIT, key, key_len));
}

struct cursor {
	const unsigned char *p, *end;
};

static bool take(struct cursor *c, void *out, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	memcpy(out, c->p, n);
	c->p += n;
	return true;
}

/* A name the walk could have read from a directory: no "/" (but a
 * found directory's trailing one), never "." or "..". */
static bool valid_name(const char *s, size_t n, bool found)
{
	if (found && n > 1 && s[n - 1] == '/')
		n--;
	if (!n || n > 255 || memchr(s, '/', n) || memchr(s, '\0', n))
		return false;
	return !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' && s[1] == '.');
}

static int take_names(struct cursor *c, uint32_t count, bool found, char ***out)
{
	char **v = isd_xcalloc((size_t)count + 1, sizeof(char *));

	*out = v;
	for (uint32_t i = 0; i < count; i++) {
		uint16_t n;

		if (!take(c, &n, sizeof(n)) || (size_t)(c->end - c->p) < n || !valid_name((const char *)c->p, n, found))
			return -EBADMSG;
		v[i] = strndup((const char *)c->p, n);
		if (!v[i])
			return -ENOMEM;
		c->p += n;
	}
	return 0;
}

static uint64_t hash_path(const char *path)
{
	return isd_fnv1a(ISD_FNV1A_INIT, path, strlen(path));
}

static void index_dirs(struct isd_mask_cache *c)
{
	for (c->cap = 16; c->cap < 2 * c->n; c->cap *= 2)
		;
	c->slots = isd_xcalloc(c->cap, sizeof(*c->slots));
	for (size_t i = 0; i < c->n; i++) {
		size_t s = hash_path(c->dirs[i].path) & (c->cap - 1);

		while (c->slots[s])
			s = (s + 1) & (c->cap - 1);
		c->slots[s] = i + 1;
	}
}

const struct isd_mask_dir *isd_mask_cache_find(const struct isd_mask_cache *c, const char *path)
{
	if (!c->cap)
		return NULL;
	for (size_t s = hash_path(path) & (c->cap - 1); c->slots[s]; s = (s + 1) & (c->cap - 1))
		if (!strcmp(c->dirs[c->slots[s] - 1].path, path))
			return &c->dirs[c->slots[s] - 1];
	return NULL;
}

static int parse(const unsigned char *data, size_t len, const char *key, size_t key_len, struct isd_mask_cache *out)
{
	struct cursor c = {data, data + len};
	struct header h, zero;

	if (!take(&c, &h, sizeof(h)) || memcmp(h.magic, CACHE_MAGIC, 8) || h.key_len != key_len ||
	    h.n_dirs > MAX_DIRS || h.body_len != len - sizeof(h) - key_len || len < sizeof(h) + key_len)
		return -EBADMSG;
	zero = h;
	zero.checksum = 0;
	if (isd_fnv1a(isd_fnv1a(ISD_FNV1A_INIT, &zero, sizeof(zero)), c.p, len - sizeof(h)) != h.checksum)
		return -EBADMSG;
	if (memcmp(c.p, key, key_len))
		return -ESTALE;
	c.p += key_len;
	out->dirs = isd_xcalloc(h.n_dirs ? h.n_dirs : 1, sizeof(*out->dirs));
	for (uint32_t i = 0; i < h.n_dirs; i++) {
		struct isd_mask_dir *d = &out->dirs[i];
		struct record r;
		int e;

		out->n = i + 1;
		if (!take(&c, &r, sizeof(r)) || r.path_len > 4096 || (size_t)(c.end - c.p) < r.path_len ||
		    memchr(c.p, '\0', r.path_len))
			return -EBADMSG;
		d->path = strndup((const char *)c.p, r.path_len);
		if (!d->path)
			return -ENOMEM;
		c.p += r.path_len;
		d->dev = r.dev;
		d->ino = r.ino;
		d->mtime_sec = r.mtime_sec;
		d->ctime_sec = r.ctime_sec;
		d->mtime_nsec = r.mtime_nsec;
		d->ctime_nsec = r.ctime_nsec;
		d->trusted = r.flags & REC_TRUSTED;
		if ((e = take_names(&c, r.n_sub, false, &d->subdirs)) < 0 ||
		    (e = take_names(&c, r.n_found, true, &d->found)) < 0)
			return e;
	}
	if (c.p != c.end)
		return -EBADMSG;
	index_dirs(out);
	return 0;
}

int isd_mask_cache_load(const char *key, size_t key_len, struct isd_mask_cache *out)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	_cleanup_free_ char *name = NULL, *data = NULL;
	struct stat st;
	size_t len;
	int r;

	memset(out, 0, sizeof(*out));
	dfd = open_cache_dir(false);
	if (dfd < 0)
		return dfd;
	name = file_name(key, key_len);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Only the caller's own, which nobody else could have written. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) ||
	    st.st_size > MAX_FILE)
		return -EPERM;
	if ((r = isd_read_fd(fd, &data, &len)) < 0)
		return r;
	r = parse((const unsigned char *)data, len, key, key_len, out);
	if (r < 0)
		isd_mask_cache_free(out);
	return r;
}

struct buf {
	char *data;
	size_t len, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		while (b->len + n > b->cap)
			b->cap = b->cap ? 2 * b->cap : 64 << 10;
		b->data = isd_xrealloc(b->data, b->cap);
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put_names(struct buf *b, char *const *names)
{
	for (size_t i = 0; names && names[i]; i++) {
		uint16_t n = (uint16_t)strlen(names[i]);
		put(b, &n, sizeof(n));
		put(b, names[i], n);
	}
}

int isd_mask_cache_store(const char *key, size_t key_len, struct isd_mask_dir *const *dirs, size_t n)
{
	_cleanup_close_ int dfd = -1;
	_cleanup_free_ char *name = NULL;
	struct header h = {.key_len = (uint32_t)key_len, .n_dirs = (uint32_t)n};
	struct buf b = {0};
	int r;

	if (n > MAX_DIRS)
		return -E2BIG;
	dfd = open_cache_dir(true);
	if (dfd < 0)
		return dfd;
	memcpy(h.magic, CACHE_MAGIC, 8);
	put(&b, &h, sizeof(h));
	put(&b, key, key_len);
	for (size_t i = 0; i < n; i++) {
		const struct isd_mask_dir *d = dirs[i];
		struct record rec = {
			.dev = d->dev, .ino = d->ino,
			.mtime_sec = d->mtime_sec, .ctime_sec = d->ctime_sec,
			.mtime_nsec = d->mtime_nsec, .ctime_nsec = d->ctime_nsec,
			.flags = d->trusted ? REC_TRUSTED : 0,
			.path_len = (uint32_t)strlen(d->path),
			.n_sub = (uint32_t)isd_strv_len(d->subdirs),
			.n_found = (uint32_t)isd_strv_len(d->found),
		};
		put(&b, &rec, sizeof(rec));
		put(&b, d->path, rec.path_len);
		put_names(&b, d->subdirs);
		put_names(&b, d->found);
	}
	h.body_len = b.len - sizeof(h) - key_len;
	h.checksum = isd_fnv1a(isd_fnv1a(ISD_FNV1A_INIT, &h, sizeof(h)), b.data + sizeof(h), b.len - sizeof(h));
	memcpy(b.data, &h, sizeof(h));
	name = file_name(key, key_len);
	r = isd_replace_file_at(dfd, name, b.data, b.len, 0600, false);
	free(b.data);
	return r;
}

void isd_mask_dir_free(struct isd_mask_dir *d)
{
	free(d->path);
	isd_strv_free(d->subdirs);
	isd_strv_free(d->found);
	memset(d, 0, sizeof(*d));
}

void isd_mask_cache_free(struct isd_mask_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		isd_mask_dir_free(&c->dirs[i]);
	free(c->dirs);
	free(c->slots);
	memset(c, 0, sizeof(*c));
}
