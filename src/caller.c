/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who runs isd: the facts about the calling process that planning a
 * sandbox needs (ids, home, working directory, environment, terminals),
 * read once by the front end and passed down, so that the plan (command
 * resolution, profiles, the workspace) takes them as input and unit tests
 * can give a caller of their own.
 */
#define _GNU_SOURCE
#include "isd/caller.h"

#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

void isd_caller_from_process(struct isd_caller *caller)
{
	static char cwd[PATH_MAX];
	const char *home = getenv("HOME");

	caller->uid = getuid();
	caller->gid = getgid();
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(caller->uid);
		home = pw ? pw->pw_dir : "/";
	}
	caller->home = home;
	caller->cwd = getcwd(cwd, sizeof(cwd)) ? cwd : "/";
	caller->environ = environ;
	caller->stdin_tty = isatty(STDIN_FILENO);
	caller->stdout_tty = isatty(STDOUT_FILENO);
}

const char *isd_caller_getenv(const struct isd_caller *caller, const char *name)
{
	size_t len = strlen(name);

	for (char **e = caller->environ; e && *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}
