/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The subcommands' argument idiom: flags, values, operands, "--", and the
 * one-line refusals with exit status 125 (what they print is read back
 * from stderr).
 */
#define _GNU_SOURCE
#include "isd/cli-args.h"
#include "isd/util.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { T_JSON = 1, T_FILE, T_DRY, T_COLOR };
static const struct isd_cli_flag flags[] = {
	{"--json", 0, ISD_CLI_NO_VALUE, T_JSON},
	{"--file", 0, ISD_CLI_VALUE, T_FILE},
	{"--dry-run", 'n', ISD_CLI_NO_VALUE, T_DRY},
	{"--color", 0, ISD_CLI_OPTIONAL_VALUE, T_COLOR},
	{0},
};

static void usage(FILE *out)
{
	fputs("Usage: isd thing [--json] [--file FILE] [-n] [ID]\n", out);
}

static const struct isd_cli_command thing = {"thing", usage, flags, 1};

/* Runs the parse over args; the flags seen as "id=value " pairs, and what
 * went to stderr. */
static int run(const struct isd_cli_command *cmd, const char *const *args, char *seen, size_t n, char *err, size_t errn)
{
	int argc = 0, saved = dup(STDERR_FILENO);
	FILE *tmp = tmpfile();
	struct isd_cli_args a;
	size_t len = 0;

	while (args[argc])
		argc++;
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	a = ISD_CLI_ARGS(cmd, argc, (char **)args);
	seen[0] = '\0';
	while (isd_cli_next(&a))
		len += (size_t)snprintf(seen + len, n - len, "%d=%s ", a.id, a.value ? a.value : "-");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	err[fread(err, 1, errn - 1, tmp)] = '\0';
	fclose(tmp);
	return a.exit;
}

static void test_next(void)
{
	char seen[256], err[512];

	{
		const char *args[] = {"thing", "--json", "--file", "f", "-n", "abc", NULL};
		CHECK(run(&thing, args, seen, sizeof(seen), err, sizeof(err)) == -1);
		CHECK(!strcmp(seen, "1=- 2=f 3=- 0=abc ") && !err[0]);
	}
	{
		const char *args[] = {"thing", "--file=x=y", "--color", "--color=never", NULL};
		CHECK(run(&thing, args, seen, sizeof(seen), err, sizeof(err)) == -1);
		CHECK(!strcmp(seen, "2=x=y 4=- 4=never "));
	}
	{
		/* After "--", an option's name is an operand. */
		const char *args[] = {"thing", "--", "--json", NULL};
		CHECK(run(&thing, args, seen, sizeof(seen), err, sizeof(err)) == -1);
		CHECK(!strcmp(seen, "0=--json "));
	}
	{
		const char *args[] = {"thing", "--jsn", NULL};
		CHECK(run(&thing, args, seen, sizeof(seen), err, sizeof(err)) == ISD_EXIT_FAILURE);
		CHECK(!strcmp(err, "isd: thing: unknown option '--jsn' (see isd thing --help)\n"));
	}
	{
		const char *args[] = {"thing", "--json=yes", NULL};
		CHECK(run(&thing, args, seen, sizeof(seen), err, sizeof(err)) == ISD_EXIT_FAILURE);
		CHECK(!strcmp(err, "isd: thing: option '--json' takes no value (see isd thing --help)\n"));
	}
	{
		const char *args[] = {"thing", "--file", NULL};
		CHECK(run(&thing, args, seen, sizeof(seen), err, sizeof(err)) == ISD_EXIT_FAILURE);
		CHECK(!strcmp(err, "isd: thing: option '--file' needs a value (see isd thing --help)\n"));
	}
	{
		const char *args[] = {"thing", "a", "b", NULL};
		CHECK(run(&thing, args, seen, sizeof(seen), err, sizeof(err)) == ISD_EXIT_FAILURE);
		CHECK(!strcmp(seen, "0=a "));
		CHECK(!strcmp(err, "isd: thing: unexpected argument 'b' (see isd thing --help)\n"));
	}
	{
		const char *args[] = {"thing", "-x", NULL};
		CHECK(run(&thing, args, seen, sizeof(seen), err, sizeof(err)) == ISD_EXIT_FAILURE);
		CHECK(!strcmp(err, "isd: thing: unknown option '-x' (see isd thing --help)\n"));
	}
	{
		/* A subcommand's message points at its command's --help. */
		const struct isd_cli_command sub = {"thing list", usage, NULL, 0};
		const char *args[] = {"list", "--json", NULL};
		CHECK(run(&sub, args, seen, sizeof(seen), err, sizeof(err)) == ISD_EXIT_FAILURE);
		CHECK(!strcmp(err, "isd: thing list: unknown option '--json' (see isd thing --help)\n"));
	}
}

static int ran_list;

static int list_run(int argc, char **argv)
{
	ran_list = argc;
	(void)argv;
	return 7;
}

static int prune_run(int argc, char **argv)
{
	(void)argc, (void)argv;
	return 8;
}

static int dispatch(const char *const *args, char *err, size_t errn)
{
	static const struct isd_cli_subcommand subs[] = {{"list", list_run}, {"ls", list_run}, {"prune", prune_run}, {0}};
	int argc = 0, saved = dup(STDERR_FILENO), r;
	FILE *tmp = tmpfile();

	while (args[argc])
		argc++;
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	r = isd_cli_dispatch("thing", usage, subs, argc, (char **)args);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	err[fread(err, 1, errn - 1, tmp)] = '\0';
	fclose(tmp);
	return r;
}

static void test_dispatch(void)
{
	char err[512];

	{
		const char *args[] = {"thing", "ls", "x", NULL};
		CHECK(dispatch(args, err, sizeof(err)) == 7 && ran_list == 2);
	}
	{
		const char *args[] = {"thing", NULL};
		CHECK(dispatch(args, err, sizeof(err)) == ISD_EXIT_FAILURE);
		CHECK(!strcmp(err, "isd: thing: expected a subcommand: list, prune (see isd thing --help)\n"));
	}
	{
		const char *args[] = {"thing", "frob", NULL};
		CHECK(dispatch(args, err, sizeof(err)) == ISD_EXIT_FAILURE);
		CHECK(!strcmp(err, "isd: thing: unknown subcommand 'frob'; known: list, prune (see isd thing --help)\n"));
	}
}

int main(void)
{
	test_next();
	test_dispatch();
	return check_result();
}
