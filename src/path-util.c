/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "isd/path-util.h"

#include <string.h>

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
