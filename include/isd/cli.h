/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Command-line parsing of `isd exec` into a struct isd_spec. */
#ifndef ISD_CLI_H
#define ISD_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "isd/spec.h"

/* Facts about the caller that parsing needs (injectable for unit tests). */
struct isd_caller {
	uint32_t uid, gid;
	const char *home;  /* caller's $HOME */
	const char *cwd;   /* for relative bind sources */
	char **environ;    /* caller's environment, for -e NAME and defaults */
	bool stdin_tty, stdout_tty;
};

void isd_caller_from_process(struct isd_caller *caller);
/* NAME's value in the caller's environment, or NULL. */
const char *isd_caller_getenv(const struct isd_caller *caller, const char *name);

/* Parse `isd exec` arguments (argv[0] is "exec").  Fills spec, including the
 * implicit defaults (tmpfs /tmp, /var/tmp, /run; the environment).
 * Returns 0, ISD_CLI_HELP_SHOWN after printing --help, or -errno with the
 * message recorded. */
#define ISD_CLI_HELP_SHOWN 1
int isd_cli_parse_exec(int argc, char **argv, const struct isd_caller *caller, struct isd_spec *spec);

/* Individual option parsers, exported for unit tests. */
int isd_cli_parse_tmpfs(const char *arg, struct isd_mount *m);
int isd_cli_parse_volume(const char *arg, const char *cwd, struct isd_mount *m);
int isd_cli_parse_mount(const char *arg, const char *cwd, struct isd_mount *m);
int isd_cli_parse_cpus(const char *arg, uint64_t period_us, uint64_t *quota_us);

void isd_cli_exec_usage(FILE *out);

#endif
