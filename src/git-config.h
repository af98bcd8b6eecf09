/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * git's configuration files as git reads them, for isd's review of what an
 * agent wrote into a repository (isd diff, isd apply) and for the sandbox's
 * protection of the files a repository's config names (include.path,
 * core.hooksPath).  isd itself never runs git: the parser follows git's own
 * (config.c) closely, and a file it cannot read counts as dangerous, since
 * git would read it differently or not at all.
 */
#ifndef ISD_GIT_CONFIG_H
#define ISD_GIT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* One "key = value": key as git canonicalises it (section and name lower
 * case, a subsection as written: "remote.Origin.url"); value NULL for a
 * bare key (boolean true). */
struct isd_git_entry {
	char *key;
	char *value;
};

struct isd_git_config {
	struct isd_git_entry *v;
	size_t n;
};

/* Parse text (len bytes, may hold NULs, which git refuses).  -EINVAL when
 * git would refuse the file; what was read until then stays in *out. */
int isd_git_config_parse(const char *text, size_t len, struct isd_git_config *out);
void isd_git_config_free(struct isd_git_config *c);

/* The last value of key, or NULL (also for a bare key: *found says). */
const char *isd_git_config_get(const struct isd_git_config *c, const char *key, bool *found);

/* True when key makes git run a command (core.fsmonitor, core.sshCommand,
 * filter and diff drivers, aliases, credential helpers, editors, pagers,
 * ...) or look for configuration, hooks or commands elsewhere
 * (include.path, includeIf, core.hooksPath, core.worktree,
 * core.attributesFile, protocol.*.allow).  Documented in isd(1). */
bool isd_git_key_executable(const char *key, const char *value);

/* A pathname value of git's config ("~/" is HOME, a relative one is
 * relative to base, the directory of the file that says it) resolved
 * lexically, as a path relative to dir ("" for dir itself); NULL when it
 * lies outside dir, or when it starts with "~/" and there is no HOME. */
char *isd_git_config_pathname(const char *value, const char *base, const char *dir);

#endif
