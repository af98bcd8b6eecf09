/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `isd exec --help`: every option of the table, grouped as in isd-exec(1). */
#include "cli-table.h"
#include "isd/cli.h"

#include <stdio.h>
#include <string.h>

#define HELP_COLUMN 30

static const char *const headings[ISD_EXEC_N_GROUPS] = {
	[ISD_EXEC_ROOTFS] = "Root filesystem:",
	[ISD_EXEC_MOUNTS] = "Mounts:",
	[ISD_EXEC_PROCESS] = "Process:",
	[ISD_EXEC_ISOLATION] = "Isolation:",
	[ISD_EXEC_LIMITS] = "Limits (cgroup v2):",
	[ISD_EXEC_STORAGE] = "Disk:",
	[ISD_EXEC_AGENTS] = "Profiles and agents:",
	[ISD_EXEC_WORKSPACE] = "Workspace (the project, at its own path, the working directory):",
	[ISD_EXEC_OTHER] = "Other:",
	[ISD_EXEC_COMPAT] = "Accepted for Docker compatibility and ignored (isd always does this):",
	[ISD_EXEC_REFUSED] = "Refused (isd never does this):",
};

/* "  -v, --volume FORM" for each form of the value; the help starts at
 * HELP_COLUMN on the last one (after two spaces when that is longer, on
 * a line of its own when it would not fit), its further lines below it. */
static void print_option(FILE *out, const struct isd_exec_option *o)
{
	const char *form = o->value_name ? o->value_name : "";
	const char *help = o->help;
	int col;

	for (;;) {
		size_t n = strcspn(form, "\n");

		if (o->short_name)
			col = fprintf(out, "  -%c, --%s", o->short_name, o->name);
		else
			col = fprintf(out, "      --%s", o->name);
		if (o->takes_value)
			col += fprintf(out, " %.*s", (int)n, form);
		if (!form[n])
			break;
		fputc('\n', out);
		form += n + 1;
	}
	while (help && *help) {
		size_t n = strcspn(help, "\n");

		if (col + 2 > HELP_COLUMN && col + 2 + (int)n <= 80) {
			fputs("  ", out);
		} else {
			if (col + 2 > HELP_COLUMN) {
				fputc('\n', out);
				col = 0;
			}
			fprintf(out, "%*s", HELP_COLUMN - col, "");
		}
		fprintf(out, "%.*s\n", (int)n, help);
		help += n + (help[n] == '\n');
		col = 0;
	}
	if (col)
		fputc('\n', out);
}

void isd_exec_print_options(FILE *out)
{
	for (int g = 0; g < ISD_EXEC_N_GROUPS; g++) {
		fprintf(out, "%s\n", headings[g]);
		for (size_t i = 0; i < isd_exec_n_options; i++)
			if (isd_exec_options[i].group == (enum isd_exec_group)g)
				print_option(out, &isd_exec_options[i]);
	}
}

void isd_cli_exec_usage(FILE *out)
{
	fputs("Usage: isd exec [OPTIONS] [--] COMMAND [ARG...]\n"
	      "\n"
	      "Run COMMAND in a new rootless sandbox: read-only root, own user, mount,\n"
	      "pid, network, ipc, uts and cgroup namespaces, no capabilities,\n"
	      "no_new_privs and a seccomp filter.  Options follow `docker run`.\n"
	      "\n",
	      out);
	isd_exec_print_options(out);
}
