/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What in an agent's state is code-bearing: the table's guarded paths and
 * JSON keys, and generically a file with an exec bit, an ELF or "#!"
 * header, or a symlink.  Shared by the merge at exit, `isd diff` and
 * `isd apply --state`, so all three decide alike.
 */
#ifndef ISD_AGENT_GUARD_H
#define ISD_AGENT_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "isd/agent.h"

enum isd_hold {
	ISD_HOLD_NONE,      /* merges into the host */
	ISD_HOLD_TRANSIENT, /* never reaches the host (pid files) */
	ISD_HOLD_WHOLE,     /* held as a whole until isd apply --state */
	ISD_HOLD_KEYS,      /* the file merges without its changed guarded keys */
};

struct isd_key_change {
	char *key;       /* for display: projects["/p"].mcpServers */
	char *old_value; /* compact JSON, NULL when the host has none */
	char *new_value;
};

struct isd_guard_result {
	enum isd_hold hold;
	char *why; /* WHOLE: the reason, for display */
	struct isd_key_change *keys;
	size_t n_keys;
	char *merged; /* KEYS: the new file with the held keys as on the host */
};

void isd_guard_result_free(struct isd_guard_result *g);

/* Classify one changed entry.  home_rel: its path relative to the home;
 * host (dfd, name): the host's entry (may be missing); new (dfd, name): the
 * changed entry (upper layer or the state file's copy); new_mode: its mode
 * (0 for a deletion); old_mode: the host's (0 when new). */
int isd_guard_classify(const struct isd_agent *a, const char *home_rel, int host_dfd, const char *host_name,
		       int new_dfd, const char *new_name, mode_t old_mode, mode_t new_mode,
		       struct isd_guard_result *out);

/* For isd apply --state: the host's JSON text with the guarded keys that
 * the new text adds or changes taken from it. */
int isd_guard_take_keys(const char *host_text, const char *new_text, char *const *patterns, char **out);

/* s made visible (isd/visible.h), cut at max bytes. */
char *isd_guard_visible(const char *s, size_t max);

#endif
