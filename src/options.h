/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parsers for the values of `isd exec` options (used by cli.c and tests). */
#ifndef ISD_OPTIONS_H
#define ISD_OPTIONS_H

#include <stdint.h>

#include "isd/caller.h"
#include "isd/spec.h"

/* A host path as the user means it: relative to cwd, symlinks resolved. */
char *isd_options_absolute_source(const char *src, const char *cwd);
/* An absolute, normalized destination inside the sandbox. */
int isd_options_parse_destination(const char *what, const char *dst, char **out);
/* --tmpfs DST[:OPTS], -v SRC:DST[:OPTS], --mount type=...: on failure
 * nothing stays allocated in m. */
int isd_options_parse_tmpfs(const char *arg, struct isd_mount *m);
int isd_options_parse_volume(const char *arg, const char *cwd, struct isd_mount *m);
int isd_options_parse_mount(const char *arg, const char *cwd, struct isd_mount *m);
/* --cpus N.N as a CFS quota for the given period. */
int isd_options_parse_cpus(const char *arg, uint64_t period_us, uint64_t *quota_us);
/* Look a user up (by name, or by uid when name is NULL) in the image's own
 * /etc/passwd, resolved inside the image. */
int isd_options_passwd_lookup(const struct isd_spec *spec, const char *name, uint32_t uid, uint32_t *uid_out,
			      uint32_t *gid_out, char **home_out, char **user_out);
/* --image NAME: "host" or a tree in the image store. */
int isd_options_resolve_image(struct isd_spec *spec, const char *name);

/* -e NAME[=VALUE] (copied from the caller when there is no value). */
int isd_options_add_env(struct isd_spec *spec, const struct isd_caller *caller, const char *arg, const char *origin);
/* --env-file FILE: NAME=VALUE or NAME lines, # comments. */
int isd_options_read_env_file(struct isd_spec *spec, const struct isd_caller *caller, const char *path);
/* --security-opt seccomp=...|no-new-privileges[:true]. */
int isd_options_security_opt(struct isd_spec *spec, const char *arg);
/* -u UID[:GID] or a user name of the image, resolved once the image is known. */
int isd_options_user(struct isd_spec *spec, const char *arg);
/* A tmpfs of isd's own at dst unless a mount is already there. */
void isd_options_implicit_tmpfs(struct isd_spec *spec, const char *dst, uint64_t size, bool exec);
/* HOME, USER, LOGNAME, PATH, TERM, LANG/LC_*, then -e/--env-file in order. */
void isd_options_default_env(struct isd_spec *spec, const struct isd_caller *caller, char **user_env);

#endif
