/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Profiles: files of `isd exec` options, one per line, `#` comments, with
 * ${HOME} ${PWD} ${UID} ${GID} ${USER} ${PWD_MANGLED} ${AGENT} expanded.
 * They are spliced into the command line where --profile stands, so one
 * parser serves both and later options override earlier ones.
 */
#ifndef ISD_PROFILE_H
#define ISD_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

struct isd_profile_vars {
	const char *home, *pwd, *user, *agent;
	uint32_t uid, gid;
};

/* argv with where each element came from ("command line", or
 * "profile agent (/usr/share/isd/profiles/agent.conf:12)"). */
struct isd_args {
	char **argv;
	char **origin;
	int argc;
};

void isd_args_free(struct isd_args *a);
void isd_args_push(struct isd_args *a, const char *arg, const char *origin);

/* The file a profile name resolves to: $XDG_CONFIG_HOME/isd/profiles/NAME.conf,
 * /etc/isd/profiles/NAME.conf, then the installed defaults. */
int isd_profile_find(const char *name, char **path_out);
/* Every directory searched, in order (for `isd profile list`). */
char **isd_profile_dirs(void);

/* Append the options of profile NAME (expanded) to out.  depth guards
 * against profiles that include each other. */
int isd_profile_expand(const char *name, const struct isd_profile_vars *vars, struct isd_args *out, int depth);

/* Parse profile text (exported for unit tests); origin_name labels errors. */
int isd_profile_parse_text(const char *text, const char *origin_name, const struct isd_profile_vars *vars,
			   struct isd_args *out, int depth);

/* `isd profile list|show NAME|edit NAME`. */
int isd_profile_main(int argc, char **argv);

/* The file of the named host set of --allow @NAME (allow-sets/NAME.allow
 * in the profile search path). */
int isd_profile_find_allow_set(const char *name, char **path_out);

#endif
