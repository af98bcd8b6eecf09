/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mask walk's record of a project (src/mask-cache.c): per directory
 * walked, what identified it then (device, inode, mtime, ctime) and what
 * the walk took from it (the names that matched, the subdirectories it
 * went on into).  The walk (src/workspace-mask.c) reuses a directory's
 * entry only when the directory still stats the same; this file only
 * stores and loads, and trusts nothing it cannot check.
 */
#ifndef ISD_MASK_CACHE_H
#define ISD_MASK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct isd_mask_dir {
	char *path; /* from the workspace root, "" for the root itself */
	uint64_t dev, ino;
	int64_t mtime_sec, ctime_sec;
	uint32_t mtime_nsec, ctime_nsec;
	bool trusted;   /* may be reused while it stats the same */
	char **subdirs; /* names the walk went on into */
	char **found;   /* names that matched; directories end in "/" */
};

struct isd_mask_cache {
	struct isd_mask_dir *dirs;
	size_t n;
	size_t *slots; /* open addressing by path: index + 1, 0 empty */
	size_t cap;
};

/* Everything a record depends on: the project, the patterns, the walk's
 * rules (isd's version).  The file is named by its hash and holds it
 * whole, so a collision or another pattern set is a miss. */
char *isd_mask_cache_key(const char *project, char *const *masks, char *const *unmasks, size_t *len);

/* 0 with *out filled, or <0 without a message: a missing, foreign,
 * damaged or stale file is a miss, never an error. */
int isd_mask_cache_load(const char *key, size_t key_len, struct isd_mask_cache *out);
const struct isd_mask_dir *isd_mask_cache_find(const struct isd_mask_cache *c, const char *path);
void isd_mask_cache_free(struct isd_mask_cache *c);

/* Best effort (no message): the file replaced in one step. */
int isd_mask_cache_store(const char *key, size_t key_len, struct isd_mask_dir *const *dirs, size_t n);

void isd_mask_dir_free(struct isd_mask_dir *d);

#endif
