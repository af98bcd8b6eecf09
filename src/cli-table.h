/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one table of `isd exec` options (cli-table.c).  Everything else
 * about an option is derived from its entry: getopt_long's arrays, which
 * options take a separate value when the command is looked for, where the
 * setting came from (--print-spec's origins), which limit a profile made
 * soft, and the --help listing.  An option added anywhere else is a bug
 * that tests/unit/test-cli.c catches.
 */
#ifndef ISD_CLI_TABLE_H
#define ISD_CLI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Headings of `isd exec --help`, in the order printed. */
enum isd_exec_group {
	ISD_EXEC_ROOTFS,
	ISD_EXEC_MOUNTS,
	ISD_EXEC_PROCESS,
	ISD_EXEC_ISOLATION,
	ISD_EXEC_LIMITS,
	ISD_EXEC_STORAGE,
	ISD_EXEC_AGENTS,
	ISD_EXEC_WORKSPACE,
	ISD_EXEC_OTHER,
	ISD_EXEC_COMPAT,  /* accepted for Docker compatibility and ignored */
	ISD_EXEC_REFUSED, /* Docker's, refused with a reason */
	ISD_EXEC_N_GROUPS,
};

struct isd_exec_parse; /* the parse in progress (src/cli-internal.h) */

struct isd_exec_option {
	const char *name;  /* long name without "--" */
	const char *alias; /* a second long name for the same option, or NULL */
	char short_name;   /* -X, or 0 */
	bool takes_value;
	enum isd_exec_group group;
	/* The value as --help shows it ("SRC:DST[:ro|rw]"); alternative
	 * forms separated by '\n', each shown on its own line. */
	const char *value_name;
	/* --help text after the option; '\n' continues it on the next line. */
	const char *help;
	/* isd_spec_set_origin key recorded when the option was taken, or
	 * NULL (the handler records it when the key depends on the value). */
	const char *origin_key;
	unsigned limit; /* ISD_LIMIT_* of a limit option, else 0 */
	/* Takes the option (arg is NULL for one without a value); 0 or
	 * -errno with the message recorded. */
	int (*handle)(struct isd_exec_parse *p, const char *arg);
};

extern const struct isd_exec_option isd_exec_options[];
extern const size_t isd_exec_n_options;

/* The entry of --NAME as getopt_long takes it: the exact name or alias,
 * or an unambiguous prefix (--prof for --profile); NAME may go on with
 * "=VALUE".  NULL when unknown or ambiguous. */
const struct isd_exec_option *isd_exec_option_long(const char *name);
/* The entry of -C, or NULL. */
const struct isd_exec_option *isd_exec_option_short(char c);

/* Which element of argv (argv[0] is "exec") is the command: options end
 * at the first non-option or after "--"; options that take a separate
 * value skip it. */
int isd_exec_find_command(int argc, char **argv);

/* The --help listing, grouped, derived from the table. */
void isd_exec_print_options(FILE *out);

#endif
