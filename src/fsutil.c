/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File-tree helpers shared by the runtime and isd build: removal and
 * mkdir -p below a directory fd, and user lookups in an image without NSS
 * (a hostile image's libraries are never loaded). */
#define _GNU_SOURCE
#include "isd/util.h"
#include "isd/fsutil.h"
#include "isd/resolve.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int isd_rm_rf_at(int dfd, const char *name)
{
	int fd;
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (unlinkat(dfd, name, 0) == 0)
		return 0;
	if (errno == ENOENT)
		return -ENOENT;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (unlinkat(dfd, name, AT_REMOVEDIR) == 0)
		return 0;
	if (errno != ENOTEMPTY && errno != EEXIST && errno != EACCES && errno != EPERM)
		return -errno;
	/* O_NOFOLLOW: a symlink named like a directory is unlinked above, never
	 * entered. */
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = isd_rm_rf_at(dirfd(d), de->d_name);
		if (r < 0 && r != -ENOENT)
			break;
		r = 0;
	}
	closedir(d);
	if (r < 0)
		return r;
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0)
		return -errno;
	return 0;
}

int isd_mkdir_p_at(int dirfd, const char *path, mode_t mode)
{
	_cleanup_free_ char *copy = isd_xstrdup(path);

	for (char *p = copy;; p++) {
		if (*p == '/' || !*p) {
			char saved = *p;
			*p = '\0';
			if (copy[0] && mkdirat(dirfd, copy, mode) < 0 && errno != EEXIST)
				return -errno;
			*p = saved;
			if (!saved)
				break;
		}
	}
	return 0;
}

/* The file at path inside the tree (symlinks resolved inside it). */
static int read_in_root(int rootfd, const char *path, char **text)
{
	_cleanup_close_ int fd =
		isd_openat2(rootfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (16 << 20))
		return -EINVAL;
	return isd_read_fd(fd, text, NULL);
}

/* Field idx of the line of a colon file whose first field (or, when
 * numeric, field num_idx) matches key. */
static int colon_lookup(int rootfd, const char *path, const char *key, size_t num_idx, char *fields[7],
			char **text)
{
	char *save = NULL;
	int r = read_in_root(rootfd, path, text);

	if (r < 0)
		return r;
	for (char *line = strtok_r(*text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = 0;
		char *p = line;

		memset(fields, 0, 7 * sizeof(char *));
		while (n < 7 && p) {
			fields[n++] = p;
			p = strchr(p, ':');
			if (p)
				*p++ = '\0';
		}
		if (n <= num_idx)
			continue;
		if (!strcmp(fields[0], key) || !strcmp(fields[num_idx], key))
			return 0;
	}
	return -ENOENT;
}

int isd_image_lookup_user(int rootfd, const char *user, uint32_t *uid, uint32_t *gid)
{
	_cleanup_free_ char *text = NULL;
	char *f[7];
	bool numeric = isd_parse_uint32(user, uid) == 0;

	if (colon_lookup(rootfd, "etc/passwd", user, 2, f, &text) == 0 && f[3] &&
	    isd_parse_uint32(f[2], uid) == 0 && isd_parse_uint32(f[3], gid) == 0)
		return 0;
	if (numeric) {
		*gid = *uid; /* Docker: a numeric user without a passwd entry */
		return 0;
	}
	return -ENOENT;
}

int isd_image_lookup_group(int rootfd, const char *group, uint32_t *gid)
{
	_cleanup_free_ char *text = NULL;
	char *f[7];

	if (isd_parse_uint32(group, gid) == 0)
		return 0;
	if (colon_lookup(rootfd, "etc/group", group, 2, f, &text) == 0 && isd_parse_uint32(f[2], gid) == 0)
		return 0;
	return -ENOENT;
}
