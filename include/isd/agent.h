/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent table: which commands are agents, where each keeps its state,
 * what in that state makes the agent run something (guarded), and what it
 * needs from the sandbox (environment, hosts).  It is data, not code: the
 * file agents.conf in every profile directory (isd_profile_dirs(), the
 * user's first), in sections "[NAME]"; a section in an earlier directory
 * replaces the one of the same name in a later one, so a user adds or
 * changes an agent in ~/.config/isd/profiles/agents.conf.
 */
#ifndef ISD_AGENT_H
#define ISD_AGENT_H

#include <stdbool.h>
#include <stddef.h>

struct isd_args;

/* "keys FILE KEY..." : JSON keys of FILE (relative to the home) that make
 * the agent run something; a KEY is a dotted path whose "*" matches any
 * member ("projects.*.mcpServers"). */
struct isd_agent_keys {
	char *file;
	char **keys;
};

struct isd_agent {
	char *name;
	char *origin;      /* "FILE:LINE" of its section */
	char **commands;   /* file names that are this agent (claude, claude.exe) */
	char **packages;   /* npm packages (npx PKG, bunx PKG, pnpm dlx PKG) */
	char **state_dirs; /* relative to the home */
	char **state_files;
	char **guards;     /* relative to the home; "DIR/" is DIR and all below, else fnmatch(FNM_PATHNAME) */
	char **transient;  /* base-name globs never merged into the host (pid files) */
	char **exec_dirs;  /* relative to the home: the agent's own code there, bound read-only and executable */
	char **allow;      /* --allow values */
	char **env;        /* -e values: NAME (passed when set) or NAME=VALUE */
	struct isd_agent_keys *keys;
	size_t n_keys;
};

struct isd_agent_table {
	struct isd_agent *v;
	size_t n;
};

/* Read every agents.conf (errors name FILE:LINE). */
int isd_agent_table_load(struct isd_agent_table *t);
/* Parse one file's text into t (sections replace those of the same name
 * when replace is set, else are only added when new); exported for tests. */
int isd_agent_table_parse(struct isd_agent_table *t, const char *text, const char *origin, bool replace);
void isd_agent_table_free(struct isd_agent_table *t);

/* The table of this process, loaded once; NULL (with the error recorded)
 * when a file is broken. */
const struct isd_agent_table *isd_agents(void);

const struct isd_agent *isd_agent_find(const struct isd_agent_table *t, const char *name);

/* The agent argv runs: argv[0] by file name, or a package runner (npx PKG,
 * bunx PKG, pnpm dlx PKG, yarn dlx PKG, bun x PKG) of a known package.
 * *via_runner says which. */
const struct isd_agent *isd_agent_for_command(const struct isd_agent_table *t, char *const *argv, bool *via_runner);
/* The agent an installed file is (real: its links followed), by its file
 * name or the npm package it lies in: .../node_modules/@openai/codex/bin/
 * codex.js, .../@openai/codex/vendor/TRIPLE/codex/codex, or a link of
 * another name to one of them. */
const struct isd_agent *isd_agent_for_file(const struct isd_agent_table *t, const char *real);

/* The options the agent profile takes from a's entry (--allow, -e), after
 * the profile and before the command line; via_runner adds what npx, bunx
 * and pnpm dlx need (--allow @npm, caches on /tmp).  a may be NULL. */
void isd_agent_push_args(const struct isd_agent *a, bool via_runner, struct isd_args *out);

/* Whether rel (relative to the home) is guarded for agent a, and the key
 * list for it (or NULL). */
bool isd_agent_guarded(const struct isd_agent *a, const char *rel);
const struct isd_agent_keys *isd_agent_keys_for(const struct isd_agent *a, const char *rel);
bool isd_agent_transient(const struct isd_agent *a, const char *rel);

#endif
