/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a store's merges did to the host's state, for isd state restore:
 * before the merge (or isd apply --state) writes an entry, the store
 * records it once, as "A" when the host had nothing there (restore removes
 * it) or as "B" with a copy of the host's entry in backup/N/PATH (restore
 * puts it back).  The first record of a path wins: it is the host's state
 * before the session.  A record covers everything beneath its path, and
 * within one store a deeper record is older than the one above it (a
 * covered path is never recorded again), so the deepest record of a path
 * is the one that holds.
 *
 * The file `records` in the store: "<A|B><layer> <path>\0" appended, read
 * back whole (a record cut short by a crash is dropped).
 */
#define _GNU_SOURCE
#include "agent-state-internal.h"
#include "isd/fsutil.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct state_records {
	char **keys; /* "<layer>/<path>", open addressing */
	char *types;
	size_t cap, n;
	int fd; /* the file, open for appending once a merge writes */
};

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static size_t slot(const struct state_records *r, const char *key, size_t n)
{
	size_t i = (size_t)hash(key, n) & (r->cap - 1);

	while (r->keys[i] && (strlen(r->keys[i]) != n || memcmp(r->keys[i], key, n)))
		i = (i + 1) & (r->cap - 1);
	return i;
}

static void set_add(struct state_records *r, char *key, char type)
{
	size_t i;

	if (2 * (r->n + 1) > r->cap) {
		struct state_records bigger = {.cap = r->cap ? 2 * r->cap : 64};
		bigger.keys = isd_xcalloc(bigger.cap, sizeof(char *));
		bigger.types = isd_xcalloc(bigger.cap, 1);
		for (size_t k = 0; k < r->cap; k++)
			if (r->keys[k]) {
				size_t j = slot(&bigger, r->keys[k], strlen(r->keys[k]));
				bigger.keys[j] = r->keys[k];
				bigger.types[j] = r->types[k];
			}
		free(r->keys);
		free(r->types);
		bigger.n = r->n;
		bigger.fd = r->fd;
		*r = bigger;
	}
	i = slot(r, key, strlen(key));
	if (r->keys[i]) {
		free(key); /* the first record of a path wins */
		return;
	}
	r->keys[i] = key;
	r->types[i] = type;
	r->n++;
}

void records_free(struct state_records *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->cap; i++)
		free(r->keys[i]);
	if (r->fd >= 0)
		close(r->fd);
	free(r->keys);
	free(r->types);
	free(r);
}

int records_load(struct state_store *s)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	_cleanup_close_ int fd = -1;

	if (s->rec)
		return 0;
	s->rec = isd_xcalloc(1, sizeof(*s->rec));
	s->rec->fd = -1;
	fd = openat(s->dir_fd, "records", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : isd_error(-errno, "reading %s/records", s->dir);
	if (isd_read_fd(fd, &text, &len) < 0)
		return isd_error(-errno, "reading %s/records", s->dir);
	for (size_t off = 0; off < len;) {
		const char *rec = text + off, *end = memchr(rec, '\0', len - off);
		char *sp;
		unsigned long layer;

		if (!end)
			break;
		off = (size_t)(end - text) + 1;
		layer = strtoul(rec + 1, &sp, 10);
		if ((rec[0] != 'A' && rec[0] != 'B') || sp == rec + 1 || *sp != ' ' || layer >= s->n_layers)
			continue;
		set_add(s->rec, isd_xasprintf("%lu/%s", layer, sp + 1), rec[0]);
	}
	return 0;
}

char records_find(const struct state_records *r, size_t layer, const char *rel)
{
	char type = 0;
	_cleanup_free_ char *key = NULL;
	size_t base, len;

	if (!r || !r->n)
		return 0;
	key = isd_xasprintf("%zu/%s", layer, rel);
	len = strlen(key);
	base = len - strlen(rel);
	/* key[0..n): one of rel's parents, or rel ("" for a file layer) */
	for (size_t n = base; n <= len; n++) {
		size_t i;
		if (n < len && key[n] != '/')
			continue;
		i = slot(r, key, n);
		if (r->keys[i])
			type = r->types[i];
	}
	return type;
}

bool records_any(const struct state_records *r, size_t layer)
{
	_cleanup_free_ char *prefix = isd_xasprintf("%zu/", layer);
	size_t n = strlen(prefix);

	for (size_t i = 0; r && i < r->cap; i++)
		if (r->keys[i] && !strncmp(r->keys[i], prefix, n))
			return true;
	return false;
}

static int records_append(struct state_store *s, char type, size_t layer, const char *rel)
{
	_cleanup_free_ char *line = isd_xasprintf("%c%zu %s", type, layer, rel);

	if (s->rec->fd < 0)
		s->rec->fd = openat(s->dir_fd, "records", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->rec->fd < 0 || isd_write_all(s->rec->fd, line, strlen(line) + 1) < 0)
		return isd_error(-errno, "writing %s/records", s->dir);
	set_add(s->rec, isd_xasprintf("%zu/%s", layer, rel), type);
	s->records++;
	return 0;
}

/* ---- the copies of the host's entries ---- */

static void tree_usage(int dfd, const char *name, uint64_t *bytes, uint64_t *files, unsigned depth)
{
	struct stat st;
	int fd;
	DIR *d;
	struct dirent *de;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	(*files)++;
	if (!S_ISDIR(st.st_mode)) {
		*bytes += (uint64_t)st.st_size;
		return;
	}
	if (depth > STATE_TREE_DEPTH_MAX || (fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			tree_usage(dirfd(d), de->d_name, bytes, files, depth + 1);
	closedir(d);
}

int copy_tree(int sdfd, const char *name, int ddfd, unsigned depth, bool merge)
{
	struct stat st;
	int r = 0;

	if (fstatat(sdfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISREG(st.st_mode)) {
		r = copy_file_into(sdfd, name, ddfd, name, st.st_mode);
		return merge && r == -EEXIST ? 0 : r;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(sdfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		r = symlinkat(target, ddfd, name) < 0 ? -errno : 0;
		if (r == 0)
			(void)utimensat(ddfd, name, (const struct timespec[2]){st.st_atim, st.st_mtim}, AT_SYMLINK_NOFOLLOW);
		return merge && r == -EEXIST ? 0 : r;
	}
	if (!S_ISDIR(st.st_mode))
		return 0; /* the host's state has no devices or FIFOs to keep */
	if (depth > STATE_TREE_DEPTH_MAX)
		return -ELOOP;
	if (mkdirat(ddfd, name, 0700) < 0 && !(merge && errno == EEXIST))
		return -errno;
	{
		int sfd = openat(sdfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int dfd = openat(ddfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d;
		struct dirent *de;

		if (sfd < 0 || dfd < 0) {
			if (sfd >= 0)
				close(sfd);
			return -errno;
		}
		d = fdopendir(sfd);
		if (!d) {
			close(sfd);
			return -errno;
		}
		while (r == 0 && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				r = copy_tree(dirfd(d), de->d_name, dfd, depth + 1, merge);
		closedir(d);
		fchmodat(ddfd, name, st.st_mode & 07777, 0);
	}
	return r;
}

int record_before(struct state_store *s, size_t i, int host_fd, const char *rel)
{
	_cleanup_close_ int hp = -1, bp = -1;
	_cleanup_free_ char *bdir = NULL, *parent = NULL, *hname = NULL;
	const char *name, *slash;
	uint64_t bytes = 0, files = 0;
	struct stat st;
	int r = records_load(s);

	if (r < 0)
		return r;
	if (records_find(s->rec, i, rel))
		return 0; /* the host's state before the session is kept already */
	if (s->layers[i].dir) {
		hp = open_parent_beneath(host_fd, rel, &name);
	} else {
		hp = host_file_parent(s->layers[i].path, &hname);
		name = hname;
	}
	if (hp < 0 || fstatat(hp, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return records_append(s, 'A', i, rel);
	tree_usage(hp, name, &bytes, &files, 0);
	if (s->backup_bytes + bytes > ISD_STATE_BACKUP_MAX_BYTES || s->backup_files + files > ISD_STATE_BACKUP_MAX_FILES)
		return -ENOSPC;
	slash = s->layers[i].dir ? strrchr(rel, '/') : NULL;
	parent = slash ? strndup(rel, (size_t)(slash - rel)) : isd_xstrdup("");
	bdir = isd_xasprintf("backup/%zu%s%s", i, parent[0] ? "/" : "", parent);
	r = isd_mkdir_p_open_at(s->dir_fd, bdir, 0700, &bp);
	if (r < 0)
		return isd_error(r, "creating %s/%s", s->dir, bdir);
	/* A directory may hold older records' copies already (the deeper
	 * entries of a later deletion): those stay, being older. */
	if (s->layers[i].dir)
		r = copy_tree(hp, name, bp, 0, true);
	else
		r = copy_file_into(hp, name, bp, "file", st.st_mode);
	if (r < 0)
		return isd_error(r, "backing up %s/%s into %s", s->layers[i].path, rel, s->dir);
	s->backup_bytes += bytes;
	s->backup_files += files;
	return records_append(s, 'B', i, rel);
}

int records_drop_layers(struct state_store *s, const bool *drop)
{
	_cleanup_free_ char *text = NULL, *kept = NULL;
	size_t len = 0, n_kept = 0;
	uint64_t records = 0, bytes = 0, files = 0;
	_cleanup_close_ int fd = openat(s->dir_fd, "records", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int dfd = openat(s->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = 0;

	if (dfd < 0)
		return isd_error(-errno, "opening %s", s->dir);
	if (fd >= 0 && isd_read_fd(fd, &text, &len) < 0)
		return isd_error(-errno, "reading %s/records", s->dir);
	kept = isd_xcalloc(len + 1, 1);
	for (size_t off = 0; off < len;) {
		const char *rec = text + off, *end = memchr(rec, '\0', len - off);
		unsigned long layer;

		if (!end)
			break;
		off = (size_t)(end - text) + 1;
		layer = strtoul(rec + 1, NULL, 10);
		if (layer < s->n_layers && drop[layer])
			continue;
		memcpy(kept + n_kept, rec, (size_t)(end - rec) + 1);
		n_kept += (size_t)(end - rec) + 1;
		records++;
	}
	if (n_kept) {
		if ((r = isd_replace_file_at(dfd, "records", kept, n_kept, 0600, false)) < 0)
			return isd_error_prefix(r, "%s: ", s->dir);
	} else if (unlinkat(dfd, "records", 0) < 0 && errno != ENOENT) {
		return isd_error(-errno, "removing %s/records", s->dir);
	}
	records_free(s->rec);
	s->rec = NULL;
	for (size_t i = 0; i < s->n_layers; i++) {
		_cleanup_free_ char *b = isd_xasprintf("backup/%zu", i);
		if (drop[i]) {
			if ((r = isd_rm_rf_at(dfd, b)) < 0)
				return r;
		} else {
			tree_usage(dfd, b, &bytes, &files, 0);
			files -= files > 0; /* not the directory backup/N itself */
		}
	}
	s->records = records;
	s->backup_bytes = bytes;
	s->backup_files = files;
	return 0;
}
