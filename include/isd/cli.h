/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Command-line parsing of `isd exec` into a struct isd_spec. */
#ifndef ISD_CLI_H
#define ISD_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "isd/caller.h"
#include "isd/spec.h"

/* Parse `isd exec` arguments (argv[0] is "exec").  Fills spec, including the
 * implicit defaults (tmpfs /tmp, /var/tmp, /run; the environment).
 * Returns 0, ISD_CLI_HELP_SHOWN after printing --help, or -errno with the
 * message recorded. */
#define ISD_CLI_HELP_SHOWN 1
int isd_cli_parse_exec(int argc, char **argv, const struct isd_caller *caller, struct isd_spec *spec);

void isd_cli_exec_usage(FILE *out);

#endif
