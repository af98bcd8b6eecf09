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

struct state_store {
	char *id, *dir, *agent, *project;
	char *home; /* the caller's home the layers' paths are relative to */
	int64_t started_ns;
	bool merged;
	struct state_layer *layers;
	size_t n_layers;
	uint64_t backup_bytes, backup_files;
	int lock_fd;
	int dir_fd;
};

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

/* Copy the host's entry (layer i, rel) into backup/i/rel unless a backup of
 * it exists; -ENOSPC when over the bound. */
int backup_entry(struct state_store *s, size_t i, int host_fd, const char *rel);
/* Write text to dfd/name atomically (temp file and rename), mode kept. */
int replace_file_text(int dfd, const char *name, const char *text, mode_t mode);
int copy_file_into(int src_dfd, const char *src_name, int dst_dfd, const char *dst_name, mode_t mode);
/* The parent directory of rel beneath root (no symlinks), and its last name. */
int open_parent_beneath(int root, const char *rel, const char **name);
int host_file_parent(const char *path, char **name);

/* Merge a stopped store into the host; returns held items. */
size_t store_merge(struct state_store *s, bool quiet);

#endif
