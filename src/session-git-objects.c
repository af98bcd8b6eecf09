/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The git review's object count (see include/isd/session-git.h): which
 * objects a session's deletions under a repository's objects/ remove, and
 * how many of them no pack or loose object holds once the changes are
 * applied.  Loose objects are named by their path, packs by their .idx
 * (v1 or v2, mapped, binary-searched), so that git gc in the session,
 * which moves objects into a new pack, loses nothing.
 */
#define _GNU_SOURCE
#include "isd/session-git.h"
#include "git-config.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "isd/path-util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/stat.h>

#define HASH_MAX 32
/* Deleted objects isd looks up; a bigger loss is reported as "at least". */
#define MAX_IDS (4u << 20)

static int open_beneath(int root, const char *path, int flags)
{
	return isd_openat2(root, path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
			   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

struct ids {
	unsigned char (*v)[HASH_MAX];
	size_t n, cap;
	bool truncated;
};

static void ids_add(struct ids *s, const unsigned char *id, size_t hs)
{
	if (s->n == MAX_IDS) {
		s->truncated = true;
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->v = isd_xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	memset(s->v[s->n], 0, HASH_MAX);
	memcpy(s->v[s->n++], id, hs);
}

static int cmp_id(const void *a, const void *b)
{
	return memcmp(a, b, HASH_MAX);
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool parse_hex(const char *hex, size_t hs, unsigned char *out)
{
	for (size_t i = 0; i < hs; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return hex[2 * hs] == '\0';
}

/* A pack index (v1 or v2), read with pread: a session still running may
 * truncate its files, which would kill a mapping's reader (SIGBUS). */
struct pack_idx {
	int fd;
	size_t n, stride, offset; /* ids at offset + i * stride */
};

static uint32_t be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static bool idx_open(int root, const char *path, size_t hs, struct pack_idx *x)
{
	unsigned char head[8], count[4];
	struct stat st;

	*x = (struct pack_idx){.fd = open_beneath(root, path, O_RDONLY)};
	if (x->fd < 0 || fstat(x->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 1032 ||
	    pread(x->fd, head, 8, 0) != 8)
		goto fail;
	if (!memcmp(head, "\377tOc", 4)) {
		x->stride = hs;
		x->offset = 8 + 1024;
	} else {
		x->stride = hs + 4;
		x->offset = 1024 + 4;
	}
	if (pread(x->fd, count, 4, (off_t)(x->offset - 4 - (x->stride == hs ? 0 : 4))) != 4)
		goto fail;
	x->n = be32(count);
	if (x->offset + x->n * x->stride > (size_t)st.st_size)
		goto fail;
	return true;
fail:
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
	return false;
}

static void idx_close(struct pack_idx *x)
{
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
}

static bool idx_id(const struct pack_idx *x, size_t i, unsigned char *id, size_t hs)
{
	return pread(x->fd, id, hs, (off_t)(x->offset + i * x->stride)) == (ssize_t)hs;
}

static bool idx_has(const struct pack_idx *x, const unsigned char *id, size_t hs)
{
	size_t lo = 0, hi = x->n;
	unsigned char at[HASH_MAX];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c;

		if (!idx_id(x, mid, at, hs))
			return false;
		c = memcmp(at, id, hs);
		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

struct objects {
	int project_fd, upper_fd;
	const struct isd_changes *c;
	const char *gitdir; /* "x/.git" */
	size_t hs;
	struct ids gone;
	bool pack_unreadable;
};

/* A path of the object store relative to objects/: one loose object, or
 * the objects of a pack (its .idx, read from the project). */
static void deleted_object(struct objects *o, const char *in_objects)
{
	unsigned char id[HASH_MAX];
	char hex[2 * HASH_MAX + 1];
	const char *base = base_name(in_objects);
	size_t n = strlen(base);

	if (strlen(in_objects) == 2 * o->hs + 1 && in_objects[2] == '/') {
		memcpy(hex, in_objects, 2);
		memcpy(hex + 2, in_objects + 3, 2 * o->hs - 2);
		hex[2 * o->hs] = '\0';
		if (parse_hex(hex, o->hs, id))
			ids_add(&o->gone, id, o->hs);
		return;
	}
	if (!strncmp(in_objects, "pack/pack-", 10) && n > 9 &&
	    (!strcmp(base + n - 5, ".pack") || !strcmp(base + n - 4, ".idx"))) {
		int stem = (int)(strlen(in_objects) - (base[n - 1] == 'k' ? 5 : 4));
		_cleanup_free_ char *idx = isd_xasprintf("%s/objects/%.*s.idx", o->gitdir, stem, in_objects);
		struct pack_idx x;

		if (!idx_open(o->project_fd, idx, o->hs, &x)) {
			o->pack_unreadable = true;
			return;
		}
		/* The names in blocks: one read per id would be millions. */
		{
			size_t per = 65536 / x.stride;
			_cleanup_free_ unsigned char *buf = isd_xmalloc(per * x.stride);

			for (size_t i = 0; i < x.n; i += per) {
				size_t k = x.n - i < per ? x.n - i : per;
				if (pread(x.fd, buf, k * x.stride, (off_t)(x.offset + i * x.stride)) != (ssize_t)(k * x.stride)) {
					o->pack_unreadable = true;
					break;
				}
				for (size_t j = 0; j < k; j++)
					ids_add(&o->gone, buf + j * x.stride, o->hs);
			}
		}
		idx_close(&x);
	}
}

/* The project's files under a deleted directory of the object store. */
static void deleted_tree(struct objects *o, const char *in_objects, int depth)
{
	_cleanup_free_ char *path = in_objects[0] ? isd_xasprintf("%s/objects/%s", o->gitdir, in_objects)
						  : isd_xasprintf("%s/objects", o->gitdir);
	int fd = open_beneath(o->project_fd, path, O_RDONLY | O_DIRECTORY);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	if (depth > 3 || !(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		_cleanup_free_ char *sub = NULL;

		if (de->d_name[0] == '.')
			continue;
		sub = in_objects[0] ? isd_xasprintf("%s/%s", in_objects, de->d_name) : isd_xstrdup(de->d_name);
		if (de->d_type == DT_DIR)
			deleted_tree(o, sub, depth + 1);
		else if (de->d_type == DT_REG)
			deleted_object(o, sub);
	}
	closedir(d);
}

static bool deleted_in_changes(const struct isd_changes *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].old_mode && (c->v[i].status == ISD_CHANGE_DELETED || c->v[i].status == ISD_CHANGE_TYPE) &&
		    isd_path_under(path, c->v[i].path))
			return true;
	}
	return false;
}

/* Whether id is still somewhere once the changes are applied: loose in
 * the session or the project, or in a pack that stays or arrives. */
static bool still_there(struct objects *o, const unsigned char *id, char **packs, int *pack_root)
{
	char hex[2 * HASH_MAX + 1];
	_cleanup_free_ char *loose = NULL;
	struct stat st;

	for (size_t i = 0; i < o->hs; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	loose = isd_xasprintf("%s/objects/%.2s/%s", o->gitdir, hex, hex + 2);
	if ((fstatat(o->upper_fd, loose, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) ||
	    (!deleted_in_changes(o->c, loose) && fstatat(o->project_fd, loose, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	     S_ISREG(st.st_mode)))
		return true;
	for (size_t i = 0; packs && packs[i]; i++) {
		struct pack_idx x;
		bool has;

		if (!idx_open(pack_root[i], packs[i], o->hs, &x))
			continue;
		has = idx_has(&x, id, o->hs);
		idx_close(&x);
		if (has)
			return true;
	}
	return false;
}

/* The packs of the merged view: the project's that stay, the session's. */
static void list_packs(struct objects *o, char ***packs, int **roots, size_t *n)
{
	_cleanup_free_ char *dir = isd_xasprintf("%s/objects/pack", o->gitdir);
	int sides[2] = {o->upper_fd, o->project_fd};

	for (int s = 0; s < 2; s++) {
		int fd = open_beneath(sides[s], dir, O_RDONLY | O_DIRECTORY);
		struct dirent *de;
		DIR *d;

		if (fd < 0)
			continue;
		if (!(d = fdopendir(fd))) {
			close(fd);
			continue;
		}
		while ((de = readdir(d))) {
			size_t len = strlen(de->d_name);
			_cleanup_free_ char *path = NULL, *pack = NULL;
			struct stat st;

			if (len < 5 || strcmp(de->d_name + len - 4, ".idx"))
				continue;
			path = isd_xasprintf("%s/%s", dir, de->d_name);
			pack = isd_xasprintf("%s/%.*s.pack", dir, (int)(len - 4), de->d_name);
			if (s == 1 && (deleted_in_changes(o->c, path) || deleted_in_changes(o->c, pack)))
				continue;
			/* Without its .pack an index holds nothing. */
			if (fstatat(sides[s], pack, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
			    (s == 1 || fstatat(o->project_fd, pack, &st, AT_SYMLINK_NOFOLLOW) < 0))
				continue;
			*packs = isd_xrealloc(*packs, (*n + 2) * sizeof(char *));
			*roots = isd_xrealloc(*roots, (*n + 1) * sizeof(int));
			(*packs)[*n] = isd_steal_ptr(path);
			(*roots)[(*n)++] = sides[s];
			(*packs)[*n] = NULL;
		}
		closedir(d);
	}
}

/* The object format of the repository (extensions.objectFormat). */
static size_t hash_size(int project_fd, const char *gitdir)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/config", gitdir), *text = NULL;
	_cleanup_close_ int fd = open_beneath(project_fd, path, O_RDONLY);
	struct isd_git_config conf;
	struct stat st;
	size_t len, hs = 20;
	bool found;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || isd_read_fd(fd, &text, &len) < 0)
		return hs;
	(void)isd_git_config_parse(text, len, &conf);
	const char *fmt = isd_git_config_get(&conf, "extensions.objectformat", &found);
	if (fmt && !strcmp(fmt, "sha256"))
		hs = 32;
	isd_git_config_free(&conf);
	return hs;
}

size_t isd_git_objects_lost(int project_fd, int upper_fd, const struct isd_changes *c, const char *gitdir,
			    bool *at_least, bool *unreadable)
{
	struct objects o = {.project_fd = project_fd, .upper_fd = upper_fd, .c = c, .gitdir = gitdir,
			    .hs = hash_size(project_fd, gitdir)};
	size_t lost = 0, n_packs = 0;
	char **packs = NULL;
	int *roots = NULL;

	for (size_t i = 0; i < c->n; i++) {
		const struct isd_change *e = &c->v[i];
		const char *p = isd_path_rest(e->path, gitdir);

		if (!e->old_mode || (e->status != ISD_CHANGE_DELETED && e->status != ISD_CHANGE_TYPE) || !p)
			continue;
		/* The repository, its object store or a part of it. */
		if (!p[0] || !strcmp(p, "objects"))
			deleted_tree(&o, "", 0);
		else if (!strncmp(p, "objects/", 8))
			S_ISDIR(e->old_mode) ? deleted_tree(&o, p + 8, 1) : deleted_object(&o, p + 8);
	}
	if (o.gone.n) {
		qsort(o.gone.v, o.gone.n, HASH_MAX, cmp_id);
		list_packs(&o, &packs, &roots, &n_packs);
		for (size_t i = 0; i < o.gone.n; i++)
			if ((i == 0 || memcmp(o.gone.v[i], o.gone.v[i - 1], HASH_MAX)) &&
			    !still_there(&o, o.gone.v[i], packs, roots))
				lost++;
	}
	*at_least = o.gone.truncated || o.pack_unreadable;
	*unreadable = o.pack_unreadable;
	isd_strv_free(packs);
	free(roots);
	free(o.gone.v);
	return lost;
}
