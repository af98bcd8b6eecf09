/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "isd/path-util.h"
#include "isd/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *isd_path_rest(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 0)
		return path;
	if (n == 1 && dir[0] == '/')
		return path[0] == '/' ? path + 1 : NULL;
	/* "/a" holds "/a/b", not "/ab". */
	if (strncmp(path, dir, n) || (path[n] != '\0' && path[n] != '/'))
		return NULL;
	return path[n] ? path + n + 1 : path + n;
}

bool isd_path_under(const char *path, const char *dir)
{
	return isd_path_rest(path, dir) != NULL;
}

bool isd_path_below(const char *path, const char *dir)
{
	const char *rest = isd_path_rest(path, dir);

	return rest && rest[0];
}

bool isd_path_search(const char *path, const char *name, char *buf, size_t size,
		     bool (*found)(const char *candidate, void *ctx), void *ctx)
{
	for (const char *p = path ? path : ""; *p;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int n = snprintf(buf, size, "%.*s/%s", (int)len, p, name);

		if (p[0] == '/' && n > 0 && (size_t)n < size && found(buf, ctx))
			return true;
		p += len;
		if (*p)
			p++;
	}
	return false;
}

bool isd_path_is_executable(const char *candidate, void *ctx)
{
	struct stat st;

	(void)ctx;
	return stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0;
}

bool isd_find_program(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH");

	return isd_path_search(path && path[0] ? path : "/usr/local/bin:/usr/bin:/bin", name, buf, size,
			       isd_path_is_executable, NULL) ||
	       isd_path_search("/usr/sbin:/usr/bin", name, buf, size, isd_path_is_executable, NULL);
}

int isd_project_relative(const char *project, const char *cwd, const char *arg, char **out)
{
	_cleanup_free_ char *abs = NULL, *norm = NULL;
	const char *rest;

	if (arg[0] == '/')
		abs = isd_xstrdup(arg);
	else if (cwd && isd_path_under(cwd, project))
		abs = isd_xasprintf("%s/%s", cwd, arg);
	else
		abs = isd_xasprintf("%s/%s", project, arg);
	if (isd_resolve_abs_path_lexically(abs, &norm) < 0)
		return isd_error(0, "%s: not a path", arg);
	rest = isd_path_rest(norm, project);
	if (!rest)
		return isd_error(0, "%s is not in the session's project %s", arg, project);
	*out = isd_xstrdup(rest);
	return 0;
}
