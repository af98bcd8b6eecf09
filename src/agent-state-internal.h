/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent state store (layout in include/isd/agent-state.h), shared by
 * agent-state.c (the run and the merge) and agent-state-cmd.c (commands). */
#ifndef ISD_AGENT_STATE_INTERNAL_H
#define ISD_AGENT_STATE_INTERNAL_H

#include "agent-guard.h"
#include "isd/agent-state.h"
#include "isd/session-changes.h"

#include <stdint.h>

struct state_layer {
	char *path; /* absolute host path */
	bool dir;
};

struct state_records;

struct state_store {
	char *id, *dir, *agent, *project;
	char *home; /* the caller's home the layers' paths are relative to */
	int64_t started_ns;
	bool merged;
	struct state_layer *layers;
	size_t n_layers;
	uint64_t backup_bytes, backup_files;
	uint64_t records; /* how many: a way back for isd state restore */
	struct state_records *rec; /* loaded on first use */
	int lock_fd;
	int dir_fd;
};

/* How deep the copies of the host's state go; deeper is refused, not cut. */
#define STATE_TREE_DEPTH_MAX 256

/* One item of a layer as the guard sees it. */
struct state_item {
	struct isd_change change; /* path relative to the layer ("" for a file layer) */
	struct isd_guard_result guard;
	bool pending; /* not code-bearing, but not merged (backup limit, refused) */
};

struct state_items {
	struct state_item *v;
	size_t n;
};

char *state_root(void);
int store_load(const char *root, const char *id, struct state_store *s);
int store_save(struct state_store *s);
int store_save_recycled(struct state_store *s);
void store_mark_merged(struct state_store *s, bool merged);
bool store_marked_merged(int root_fd, const char *id);
/* A store that ends empty is kept as the next one (STORE_SPARE in the
 * root): making and removing a store's directories is what a start costs
 * on a file system that discards freed blocks.  False: remove it. */
#define STORE_SPARE "spare"
bool store_recycle(struct state_store *s);
/* After a sandbox: the full isd gc once the stores pile up. */
void store_trim(void);
int store_lock(struct state_store *s, bool wait);
void store_free(struct state_store *s);
int store_remove(struct state_store *s);
char **store_ids(const char *root);
/* The home-relative path of layer i's entry rel ("" for the layer). */
char *layer_home_rel(const struct state_store *s, size_t i, const char *rel);
const struct isd_agent *store_agent(const struct state_store *s);

/* Layer i's items: every change, classified.  host_fd/upper_fd (dir
 * layers) are returned open. */
int layer_items(struct state_store *s, size_t i, struct state_items *out);
void state_items_free(struct state_items *it);

/* Records (src/agent-state-records.c): before the host's entry (layer i,
 * rel) changes, keep how it was unless a record covers it already: "A" when
 * there is none, "B" with a copy in backup/i/rel; -ENOSPC when the copy
 * would exceed the bound. */
int record_before(struct state_store *s, size_t i, int host_fd, const char *rel);
int records_load(struct state_store *s);
void records_free(struct state_records *r);
/* The record that holds for (layer, rel): the deepest at or above it; 'A',
 * 'B' or 0. */
char records_find(const struct state_records *r, size_t layer, const char *rel);
bool records_any(const struct state_records *r, size_t layer);
/* Drop the records and backups of the layers drop[] names (restored). */
int records_drop_layers(struct state_store *s, const bool *drop);
/* A copy of (sdfd, name) as (ddfd, name): files, symlinks, directories;
 * with merge, what exists at the destination stays. */
int copy_tree(int sdfd, const char *name, int ddfd, unsigned depth, bool merge);
/* Write text to dfd/name atomically (temp file and rename), mode kept. */
int replace_file_text(int dfd, const char *name, const char *text, mode_t mode);
int copy_file_into(int src_dfd, const char *src_name, int dst_dfd, const char *dst_name, mode_t mode);
/* The parent directory of rel beneath root (no symlinks), and its last name. */
int open_parent_beneath(int root, const char *rel, const char **name);
int host_file_parent(const char *path, char **name);

/* Merge a stopped store into the host; returns held items. */
size_t store_merge(struct state_store *s, bool quiet);
/* Whether the store is worth keeping without held items: a way back. */
static inline bool store_has_way_back(const struct state_store *s)
{
	return s->backup_files || s->records;
}
size_t store_held(struct state_store *s);
/* isd state restore [ID] (src/agent-state-restore.c). */
int state_restore(const char *id);
int find_store(const char *arg, int want, struct state_store *out);
enum { WANT_ANY, WANT_HELD, WANT_BACKUP };

#endif
