/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The subcommands' argument idiom (isd/cli-args.h). */
#include "isd/cli-args.h"
#include "isd/util.h"

#include <stdarg.h>
#include <string.h>

__attribute__((format(printf, 2, 0))) static void vreport(const char *name, const char *fmt, va_list ap)
{
	fprintf(stderr, "isd: %s: ", name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see isd %.*s --help)\n", (int)strcspn(name, " "), name);
}

int isd_cli_usage_error(const struct isd_cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cmd->name, fmt, ap);
	va_end(ap);
	return ISD_EXIT_FAILURE;
}

static bool stop(struct isd_cli_args *a, int code)
{
	a->exit = code;
	return false;
}

__attribute__((format(printf, 2, 3))) static bool fail(struct isd_cli_args *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(a->cmd->name, fmt, ap);
	va_end(ap);
	return stop(a, ISD_EXIT_FAILURE);
}

static const struct isd_cli_flag *find_long(const struct isd_cli_flag *flags, const char *arg, size_t n)
{
	for (const struct isd_cli_flag *f = flags; f && f->name; f++)
		if (strlen(f->name) == n && !strncmp(f->name, arg, n))
			return f;
	return NULL;
}

static const struct isd_cli_flag *find_short(const struct isd_cli_flag *flags, char c)
{
	for (const struct isd_cli_flag *f = flags; f && f->name; f++)
		if (f->short_name == c)
			return f;
	return NULL;
}

static bool operand(struct isd_cli_args *a, const char *arg)
{
	if (a->cmd->max_operands >= 0 && a->operands >= a->cmd->max_operands)
		return fail(a, "unexpected argument '%s'", arg);
	a->operands++;
	a->id = ISD_CLI_OPERAND;
	a->value = arg;
	return true;
}

bool isd_cli_next(struct isd_cli_args *a)
{
	const struct isd_cli_flag *f;
	const char *arg, *eq;

	if (a->exit >= 0 || a->i >= a->argc)
		return false;
	arg = a->argv[a->i++];
	if (a->options_done || arg[0] != '-' || !arg[1])
		return operand(a, arg);
	if (!strcmp(arg, "--")) {
		a->options_done = true;
		return isd_cli_next(a);
	}
	if (arg[1] == '-') {
		eq = strchr(arg, '=');
		f = find_long(a->cmd->flags, arg, eq ? (size_t)(eq - arg) : strlen(arg));
		if (!f && !strcmp(arg, "--help")) {
			a->cmd->usage(stdout);
			return stop(a, 0);
		}
		if (!f)
			return fail(a, "unknown option '%.*s'", (int)(eq ? eq - arg : (int)strlen(arg)), arg);
		if (eq && !f->takes_value)
			return fail(a, "option '%s' takes no value", f->name);
		a->value = eq ? eq + 1 : NULL;
	} else {
		f = arg[2] ? NULL : find_short(a->cmd->flags, arg[1]);
		if (!f && !strcmp(arg, "-h")) {
			a->cmd->usage(stdout);
			return stop(a, 0);
		}
		if (!f)
			return fail(a, "unknown option '%s'", arg);
		a->value = NULL;
	}
	if (f->takes_value == ISD_CLI_VALUE && !a->value) {
		if (a->i >= a->argc)
			return fail(a, "option '%s' needs a value", arg);
		a->value = a->argv[a->i++];
	}
	a->id = f->id;
	return true;
}

int isd_cli_dispatch(const char *name, void (*usage)(FILE *out), const struct isd_cli_subcommand *subs, int argc,
		     char **argv)
{
	char known[256] = "";
	size_t len = 0;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
		usage(stdout);
		return 0;
	}
	for (const struct isd_cli_subcommand *s = subs; s->name; s++) {
		if (argc >= 2 && !strcmp(argv[1], s->name))
			return s->run(argc - 1, argv + 1);
		/* An alias (ls for list) follows its command and is not listed. */
		if (len < sizeof(known) && !(s > subs && s[-1].run == s->run))
			len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", len ? ", " : "", s->name);
	}
	{
		struct isd_cli_command cmd = {.name = name};
		if (argc < 2)
			return isd_cli_usage_error(&cmd, "expected a subcommand: %s", known);
		return isd_cli_usage_error(&cmd, "unknown subcommand '%s'; known: %s", argv[1], known);
	}
}
