/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One idiom for the arguments of isd's subcommands (all but `isd exec`,
 * whose options are a table of their own, src/cli-table.c): --help and -h
 * print the usage on standard output and exit 0; an unknown option, a
 * missing value or one operand too many is one line
 *   isd: NAME: unknown option '--x' (see isd NAME --help)
 * and exit status 125.
 *
 *	struct isd_cli_args a = ISD_CLI_ARGS(&log_command, argc, argv);
 *	while (isd_cli_next(&a))
 *		switch (a.id) {
 *		case LOG_JSON: json = true; break;
 *		case ISD_CLI_OPERAND: id = a.value; break;
 *		}
 *	if (a.exit >= 0)
 *		return a.exit;
 */
#ifndef ISD_CLI_ARGS_H
#define ISD_CLI_ARGS_H

#include <stdbool.h>
#include <stdio.h>

enum {
	ISD_CLI_NO_VALUE = 0,       /* also false */
	ISD_CLI_VALUE = 1,          /* also true */
	ISD_CLI_OPTIONAL_VALUE = 2, /* only as --color=WHEN; value NULL without */
};

struct isd_cli_flag {
	const char *name; /* "--json" */
	char short_name;  /* 'n' for -n, or 0 */
	int takes_value;  /* ISD_CLI_VALUE: --file FILE or --file=FILE */
	int id;           /* what isd_cli_next reports, > 0 */
};

struct isd_cli_command {
	const char *name;           /* "log", "session prune": as messages name it */
	void (*usage)(FILE *out);   /* the --help text */
	const struct isd_cli_flag *flags; /* ended by an entry without name; may be NULL */
	int max_operands;           /* -1: any number */
};

#define ISD_CLI_OPERAND 0

struct isd_cli_args {
	const struct isd_cli_command *cmd;
	int argc;
	char **argv; /* argv[0] is the command's own name */
	int i;
	bool options_done; /* after "--" */
	int operands;
	int id;            /* the flag's id, or ISD_CLI_OPERAND */
	const char *value; /* the flag's value, or the operand */
	int exit;          /* -1 while parsing or at the end; 0 after --help, 125 after an error */
};

#define ISD_CLI_ARGS(command, ac, av) \
	((struct isd_cli_args){.cmd = (command), .argc = (ac), .argv = (av), .i = 1, .exit = -1})

/* The next flag or operand: true with id and value set; false at the
 * end (exit -1), after printing --help (exit 0) or an error (exit 125). */
bool isd_cli_next(struct isd_cli_args *a);

/* A wrong use the command itself finds: the same one line, 125. */
__attribute__((format(printf, 2, 3))) int isd_cli_usage_error(const struct isd_cli_command *cmd, const char *fmt, ...);

/* For a command of subcommands (isd session list|prune): argv[1] names
 * one of subs, which runs with argv + 1.  --help, -h and help print usage;
 * none or an unknown one is the one line and 125. */
struct isd_cli_subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
};
int isd_cli_dispatch(const char *name, void (*usage)(FILE *out), const struct isd_cli_subcommand *subs, int argc,
		     char **argv);

#endif
