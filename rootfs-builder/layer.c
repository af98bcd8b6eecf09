/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Applying a layer (a tar, plain or compressed) to an image tree, safely
 * whatever the archive holds.  The extraction runs in a helper that is root
 * of a user namespace with the image's id map and is chrooted into the
 * tree; the layer's descriptor is opened before.  So ".." stops at the
 * tree's root, absolute symlinks and hardlink targets resolve inside it,
 * and there is no /proc to reach outside: a hostile layer can only ever
 * write inside the tree.  On top of that every entry name is cleaned and
 * refused if it climbs with "..", and size and entry count are capped
 * (decompression bombs).
 *
 * The stream is hashed while it is read: the blob as stored (its digest)
 * and the uncompressed tar (its diff_id).  libarchive decompresses in a
 * first archive whose raw output is the tar stream, which a second archive
 * parses, so both hashes come from one pass.
 *
 * OCI whiteouts: ".wh.NAME" removes NAME of the lower layers, and
 * ".wh..wh..opq" empties its directory of everything the lower layers put
 * there; entries of the layer itself are never removed by them.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"
#include "internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define WHITEOUT ".wh."
#define OPAQUE ".wh..wh..opq"

/* The paths written by this layer (so that its whiteouts spare them). */
struct pathset {
	char **slots;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static bool pathset_has(const struct pathset *set, const char *p)
{
	if (!set->cap)
		return false;
	for (size_t i = hash_str(p) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
		if (!set->slots[i])
			return false;
		if (!strcmp(set->slots[i], p))
			return true;
	}
}

static void pathset_add(struct pathset *set, const char *p)
{
	if (pathset_has(set, p))
		return;
	if ((set->n + 1) * 2 > set->cap) {
		struct pathset bigger = {.cap = set->cap ? set->cap * 2 : 1024};
		bigger.slots = isd_xcalloc(bigger.cap, sizeof(char *));
		for (size_t i = 0; i < set->cap; i++) {
			if (set->slots[i]) {
				size_t j = hash_str(set->slots[i]) & (bigger.cap - 1);
				while (bigger.slots[j])
					j = (j + 1) & (bigger.cap - 1);
				bigger.slots[j] = set->slots[i];
			}
		}
		free(set->slots);
		set->slots = bigger.slots;
		set->cap = bigger.cap;
	}
	for (size_t i = hash_str(p) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
		if (!set->slots[i]) {
			set->slots[i] = isd_xstrdup(p);
			set->n++;
			return;
		}
	}
}

static void pathset_free(struct pathset *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slots[i]);
	free(set->slots);
}

/* "./a//b/" -> "a/b", "/" -> "" (the root); -EINVAL for any "..". */
static int clean_path(const char *in, char **out)
{
	char *res = isd_xmalloc(strlen(in) + 1);
	size_t len = 0;

	for (const char *p = in; *p;) {
		size_t n;
		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0)
			break;
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			free(res);
			return -EINVAL;
		}
		if (!(n == 1 && p[0] == '.')) {
			if (len)
				res[len++] = '/';
			memcpy(res + len, p, n);
			len += n;
		}
		p += n;
	}
	res[len] = '\0';
	*out = res;
	return 0;
}

struct stream {
	int fd;
	struct isd_sha256 *blob_hash, *tar_hash;
	struct archive *outer; /* decompression, raw format */
	uint64_t tar_bytes, max_bytes;
	bool too_big;
	char buf[65536];
};

static la_ssize_t outer_read(struct archive *a, void *data, const void **buf)
{
	struct stream *s = data;
	ssize_t n;

	do
		n = read(s->fd, s->buf, sizeof(s->buf));
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		archive_set_error(a, errno, "reading the layer");
		return -1;
	}
	isd_sha256_update(s->blob_hash, s->buf, (size_t)n);
	*buf = s->buf;
	return n;
}

static la_ssize_t inner_read(struct archive *a, void *data, const void **buf)
{
	static char block[65536];
	struct stream *s = data;
	la_ssize_t n = archive_read_data(s->outer, block, sizeof(block));

	if (n < 0) {
		archive_set_error(a, archive_errno(s->outer), "%s", archive_error_string(s->outer));
		return -1;
	}
	s->tar_bytes += (uint64_t)n;
	if (s->tar_bytes > s->max_bytes) {
		s->too_big = true;
		archive_set_error(a, EFBIG, "the layer expands beyond its size limit");
		return -1;
	}
	isd_sha256_update(s->tar_hash, block, (size_t)n);
	*buf = block;
	return n;
}

/* Removes what lower layers left in dir, sparing this layer's paths. */
static int make_opaque(const char *dir, const struct pathset *set)
{
	_cleanup_close_ int fd = open(dir[0] ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : isd_error(-errno, "opening %s", dir);
	d = fdopendir(fd);
	if (!d)
		return isd_error(-errno, "listing %s", dir);
	fd = -1;
	while ((de = readdir(d)) && r == 0) {
		_cleanup_free_ char *child = NULL;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		child = dir[0] ? isd_xasprintf("%s/%s", dir, de->d_name) : isd_xstrdup(de->d_name);
		if (!pathset_has(set, child)) {
			r = isd_rm_rf_at(dirfd(d), de->d_name);
			if (r < 0 && r != -ENOENT)
				r = isd_error(r, "removing %s (opaque whiteout)", child);
			else
				r = 0;
		} else if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
			r = make_opaque(child, set);
		}
	}
	closedir(d);
	return r;
}

struct apply_args {
	int rootfd, layer_fd;
	const struct isd_layer_opts *opts;
	const struct isd_idmap *map;
	bool keep_owner;
	struct isd_layer_result *res; /* shared with the parent */
};

/* An owner beyond the map cannot be chowned to (the kernel says EINVAL,
 * which libarchive only warns about): the entry goes to the image's root,
 * counted for one warning.  A file losing its owner or group also loses
 * its set-id bit, so that no file becomes set-uid root that was not. */
static void unmapped_owner(struct archive_entry *e, const struct apply_args *a)
{
	la_int64_t uid = archive_entry_uid(e), gid = archive_entry_gid(e);
	bool uid_ok = uid >= 0 && uid <= UINT32_MAX && isd_idmap_maps(a->map->uid, a->map->n_uid, (uint32_t)uid);
	bool gid_ok = gid >= 0 && gid <= UINT32_MAX && isd_idmap_maps(a->map->gid, a->map->n_gid, (uint32_t)gid);
	mode_t perm = archive_entry_perm(e);

	if (uid_ok && gid_ok)
		return;
	if (!a->res->ids_unmapped++) {
		a->res->unmapped_uid = (uint32_t)uid;
		a->res->unmapped_gid = (uint32_t)gid;
	}
	if (archive_entry_filetype(e) != AE_IFDIR) {
		if (!uid_ok)
			perm &= ~(mode_t)S_ISUID;
		if (!gid_ok)
			perm &= ~(mode_t)S_ISGID;
		archive_entry_set_perm(e, perm);
	}
	if (!uid_ok)
		archive_entry_set_uid(e, 0);
	if (!gid_ok)
		archive_entry_set_gid(e, 0);
}

/* One entry's name checks and whiteout handling.  Returns 1 when the entry
 * is done (a whiteout), 0 to extract it, -errno on refusal. */
static int prepare_entry(struct archive_entry *e, const struct apply_args *a, struct pathset *set,
			 char ***opaque, char **path_out)
{
	_cleanup_free_ char *path = NULL, *link = NULL;
	const char *name = archive_entry_pathname(e), *hard = archive_entry_hardlink(e), *base;
	mode_t type = archive_entry_filetype(e);
	struct stat st;

	if (!name || clean_path(name, &path) < 0)
		return isd_error(-EPERM, "layer entry '%s' climbs out of the root with '..'; refusing the layer",
				 name ? name : "");
	if (hard) {
		if (clean_path(hard, &link) < 0 || !link[0])
			return isd_error(-EPERM, "layer entry '%s' is a hardlink to '%s' outside the root; refusing the layer",
					 path, hard);
		archive_entry_set_hardlink(e, link);
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (a->opts->whiteouts && !strncmp(base, WHITEOUT, strlen(WHITEOUT))) {
		_cleanup_free_ char *dir = strndup(path, (size_t)(base - path) ? (size_t)(base - path) - 1 : 0);
		if (!strcmp(base, OPAQUE)) {
			isd_strv_push(opaque, isd_steal_ptr(dir));
		} else if (strncmp(base, WHITEOUT WHITEOUT, 2 * strlen(WHITEOUT))) {
			_cleanup_free_ char *victim = dir[0] ? isd_xasprintf("%s/%s", dir, base + strlen(WHITEOUT))
							     : isd_xstrdup(base + strlen(WHITEOUT));
			if (!pathset_has(set, victim)) {
				int r = isd_rm_rf_at(AT_FDCWD, victim);
				if (r < 0 && r != -ENOENT && r != -ENOTDIR)
					return isd_error(r, "removing %s (whiteout)", victim);
			}
		}
		return 1;
	}
	if (!path[0]) /* the root itself: its metadata stays the tree's */
		return 1;
	archive_entry_set_pathname(e, path);

	/* A directory replaces a non-directory and the other way round. */
	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) != (type == AE_IFDIR) &&
	    !hard) {
		int r = isd_rm_rf_at(AT_FDCWD, path);
		if (r < 0 && r != -ENOENT)
			return isd_error(r, "replacing %s", path);
	}
	/* No device can be made in a user namespace: an empty file keeps the
	 * name (isd never uses an image's /dev anyway). */
	if (type == AE_IFCHR || type == AE_IFBLK) {
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0);
		archive_entry_set_size(e, 0);
		archive_entry_set_rdev(e, 0);
	}
	if (!a->keep_owner) {
		if (archive_entry_uid(e) != 0 || archive_entry_gid(e) != 0)
			a->res->ownership_flattened++;
		archive_entry_set_uid(e, 0);
		archive_entry_set_gid(e, 0);
	} else {
		unmapped_owner(e, a);
	}
	pathset_add(set, path);
	*path_out = isd_steal_ptr(path);
	return 0;
}

static int copy_data(struct archive *in, struct archive *out, const char *path)
{
	for (;;) {
		const void *buf;
		size_t size;
		la_int64_t offset;
		int r = archive_read_data_block(in, &buf, &size, &offset);

		if (r == ARCHIVE_EOF)
			return 0;
		if (r < ARCHIVE_WARN)
			return isd_error(-EIO, "reading %s from the layer: %s", path, archive_error_string(in));
		if (archive_write_data_block(out, buf, size, offset) < ARCHIVE_WARN)
			return isd_error(-EIO, "writing %s: %s", path, archive_error_string(out));
	}
}

static int extract(struct apply_args *a, struct stream *s, struct archive *inner, struct archive *disk)
{
	struct pathset set = {0};
	_cleanup_strv_ char **opaque = NULL;
	uint64_t max_entries = a->opts->max_entries ? a->opts->max_entries : ISD_LAYER_DEFAULT_MAX_ENTRIES;
	struct archive_entry *e;
	int r = 0;

	for (;;) {
		_cleanup_free_ char *path = NULL;
		int ar = archive_read_next_header(inner, &e);

		if (ar == ARCHIVE_EOF)
			break;
		if (ar < ARCHIVE_WARN) {
			if (s->too_big)
				r = isd_error(-EFBIG, "the layer expands beyond %llu bytes; refusing it (a decompression bomb?)",
					      (unsigned long long)s->max_bytes);
			else
				r = isd_error(-EIO, "reading the layer: %s", archive_error_string(inner));
			break;
		}
		if (++a->res->entries > max_entries) {
			r = isd_error(-EFBIG, "the layer has more than %llu entries; refusing it",
				      (unsigned long long)max_entries);
			break;
		}
		r = prepare_entry(e, a, &set, &opaque, &path);
		if (r < 0)
			break;
		if (r == 1) {
			r = 0;
			continue;
		}
		ar = archive_write_header(disk, e);
		if (ar < ARCHIVE_WARN) {
			r = isd_error(-EIO, "extracting %s: %s", path, archive_error_string(disk));
			break;
		}
		if (archive_entry_size(e) > 0) {
			r = copy_data(inner, disk, path);
			if (r < 0) {
				if (s->too_big)
					r = isd_error(-EFBIG, "the layer expands beyond %llu bytes; refusing it (a decompression bomb?)",
						      (unsigned long long)s->max_bytes);
				break;
			}
		}
		if (archive_write_finish_entry(disk) < ARCHIVE_WARN) {
			r = isd_error(-EIO, "extracting %s: %s", path, archive_error_string(disk));
			break;
		}
	}
	for (size_t i = 0; r == 0 && opaque && opaque[i]; i++)
		r = make_opaque(opaque[i], &set);
	pathset_free(&set);
	return r;
}

static int apply_fn(void *arg)
{
	struct apply_args *a = arg;
	struct stream *s = isd_xcalloc(1, sizeof(*s));
	struct archive *outer = NULL, *inner = NULL, *disk = NULL;
	struct archive_entry *raw;
	int flags = ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_XATTR | ARCHIVE_EXTRACT_UNLINK |
		    ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS | ARCHIVE_EXTRACT_SPARSE;
	char blob[80], tar[80];
	int r = 0;

	/* The one place the host's tree ends: from here on "/" is the image. */
	if (fchdir(a->rootfd) < 0 || chroot(".") < 0 || chdir("/") < 0) {
		r = isd_error(-errno, "entering the image tree");
		goto out;
	}
	close(a->rootfd);
	if (a->opts->subdir && a->opts->subdir[0]) {
		r = isd_mkdir_p_at(AT_FDCWD, a->opts->subdir + (a->opts->subdir[0] == '/'), 0755);
		if (r == 0 && chdir(a->opts->subdir) < 0)
			r = -errno;
		if (r < 0) {
			r = isd_error(r, "entering %s in the image", a->opts->subdir);
			goto out;
		}
	}
	umask(0);
	if (a->keep_owner)
		flags |= ARCHIVE_EXTRACT_OWNER;
	s->fd = a->layer_fd;
	s->blob_hash = isd_sha256_new();
	s->tar_hash = isd_sha256_new();
	s->max_bytes = a->opts->max_bytes ? a->opts->max_bytes : ISD_LAYER_DEFAULT_MAX_BYTES;

	outer = archive_read_new();
	archive_read_support_filter_all(outer);
	archive_read_support_format_raw(outer);
	if (archive_read_open(outer, s, NULL, outer_read, NULL) != ARCHIVE_OK ||
	    archive_read_next_header(outer, &raw) != ARCHIVE_OK) {
		r = isd_error(-EIO, "reading the layer: %s", archive_error_string(outer));
		goto out;
	}
	s->outer = outer;
	inner = archive_read_new();
	archive_read_support_format_tar(inner);
	if (archive_read_open(inner, s, NULL, inner_read, NULL) != ARCHIVE_OK) {
		r = isd_error(-EIO, "reading the layer as tar: %s", archive_error_string(inner));
		goto out;
	}
	disk = archive_write_disk_new();
	archive_write_disk_set_options(disk, flags);

	r = extract(a, s, inner, disk);
	if (r == 0 && archive_write_close(disk) < ARCHIVE_WARN)
		r = isd_error(-EIO, "finishing the extraction: %s", archive_error_string(disk));
	if (r < 0)
		goto out;
	/* The hashes cover every byte: the tar's end padding and anything
	 * after the compressed stream. */
	for (const void *buf; inner_read(inner, s, &buf) > 0;)
		;
	if (s->too_big) {
		r = isd_error(-EFBIG, "the layer expands beyond %llu bytes; refusing it",
			      (unsigned long long)s->max_bytes);
		goto out;
	}
	{
		const void *buf;
		while (outer_read(outer, s, &buf) > 0)
			;
	}
	isd_sha256_final(s->blob_hash, blob);
	isd_sha256_final(s->tar_hash, tar);
	s->blob_hash = s->tar_hash = NULL;
	snprintf(a->res->diff_id, sizeof(a->res->diff_id), "%s", tar);
	a->res->bytes = s->tar_bytes;
	if (a->opts->expect_digest && strcmp(a->opts->expect_digest, blob))
		r = isd_error(-EBADMSG, "layer digest mismatch: expected %s, got %s", a->opts->expect_digest, blob);
	else if (a->opts->expect_diff_id && strcmp(a->opts->expect_diff_id, tar))
		r = isd_error(-EBADMSG, "layer diff_id mismatch: expected %s, got %s", a->opts->expect_diff_id, tar);
out:
	if (s->blob_hash)
		isd_sha256_final(s->blob_hash, blob);
	if (s->tar_hash)
		isd_sha256_final(s->tar_hash, tar);
	if (disk)
		archive_write_free(disk);
	if (inner)
		archive_read_free(inner);
	if (outer)
		archive_read_free(outer);
	free(s);
	return r;
}

int isd_layer_apply(const char *root, int layer_fd, const struct isd_idmap *map,
		    const struct isd_layer_opts *opts, struct isd_layer_result *res)
{
	struct apply_args a = {.layer_fd = layer_fd, .opts = opts, .map = map, .keep_owner = map->full};
	struct isd_layer_result *shared;
	int r;

	a.rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a.rootfd < 0)
		return isd_error(-errno, "opening the image tree %s", root);
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		close(a.rootfd);
		return isd_error(-errno, "mapping shared memory");
	}
	memset(shared, 0, sizeof(*shared));
	a.res = shared;
	r = isd_idmap_run(map, apply_fn, &a);
	close(a.rootfd);
	if (res)
		*res = *shared;
	munmap(shared, sizeof(*shared));
	return r;
}

void isd_layer_warn(const char *what, const struct isd_layer_result *res, const struct isd_idmap *map)
{
	if (res->ownership_flattened)
		isd_warn("%s: %llu entries owned by other users are now owned by you (no subordinate ids)", what,
			 (unsigned long long)res->ownership_flattened);
	if (res->ids_unmapped) {
		uint32_t top = isd_idmap_top(map->uid, map->n_uid);
		isd_warn("%s: %llu entries owned by ids beyond your subordinate range (the first: uid %u gid %u; "
			 "the image's ids end at %u) are now owned by root, set-id bits dropped; for their owners "
			 "give %s a range of more ids in /etc/subuid and /etc/subgid",
			 what, (unsigned long long)res->ids_unmapped, res->unmapped_uid, res->unmapped_gid, top,
			 getenv("USER") ? getenv("USER") : "your user");
	}
}
