/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rm -rf of a session's trees (isd discard, a fully applied session, a
 * staged copy that apply drops again) without following a symlink and
 * without a descriptor per level: a payload can build a tree deeper than
 * any limit on open files.
 */
#define _GNU_SOURCE
#include "isd/session-changes.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static int open_dir_at(int dfd, const char *name)
{
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The first entry of the directory fd, or NULL when it is empty. */
static char *first_entry(int fd)
{
	int it = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	char *name = NULL;
	DIR *d;

	if (it < 0 || !(d = fdopendir(it))) {
		if (it >= 0)
			close(it);
		return NULL;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			name = isd_xstrdup(de->d_name);
			break;
		}
	closedir(d);
	return name;
}

static int open_removable(int dfd, const char *name)
{
	int fd = open_dir_at(dfd, name);
	struct stat st;

	/* The kernel's mode 000 work/work, or what the sandbox made so. */
	if (fd < 0 && errno == EACCES && fchmodat(dfd, name, 0700, 0) == 0)
		fd = open_dir_at(dfd, name);
	if (fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 0700) != 0700)
		(void)fchmod(fd, st.st_mode | 0700);
	return fd;
}

/* rm -rf with one descriptor at a time, however deep the tree: down into
 * the first subdirectory, back up through ".." once it is empty (the
 * names on the way are kept, not descriptors). */
static int remove_tree(int dfd, const char *name, const char *path)
{
	_cleanup_strv_ char **stack = NULL;
	size_t depth = 0;
	int fd;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return isd_error(-errno, "removing %s", path);
	fd = open_removable(dfd, name);
	if (fd < 0)
		return isd_error(-errno, "removing %s", path);
	for (;;) {
		char *entry = first_entry(fd);

		if (entry) {
			int child;

			if (unlinkat(fd, entry, 0) == 0 || errno == ENOENT) {
				free(entry);
				continue;
			}
			if ((errno != EISDIR && errno != EPERM) || (child = open_removable(fd, entry)) < 0) {
				int r = -errno;
				free(entry);
				close(fd);
				return isd_error(r, "removing %s (%zu levels down)", path, depth + 1);
			}
			close(fd);
			fd = child;
			isd_strv_push(&stack, entry);
			depth++;
			continue;
		}
		if (depth == 0) {
			close(fd);
			break;
		}
		{
			int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			close(fd);
			if (parent < 0)
				return isd_error(-errno, "removing %s", path);
			fd = parent;
			depth--;
			if (unlinkat(fd, stack[depth], AT_REMOVEDIR) < 0 && errno != ENOENT) {
				int r = -errno;
				close(fd);
				return isd_error(r, "removing %s (%zu levels down)", path, depth + 1);
			}
			free(stack[depth]);
			stack[depth] = NULL;
		}
	}
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return isd_error(-errno, "removing %s", path);
	return 0;
}

int isd_remove_tree_at(int dfd, const char *name)
{
	return remove_tree(dfd, name, name);
}
