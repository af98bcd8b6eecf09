/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File-tree helpers shared by the runtime and isd build: removal and
 * mkdir -p below a directory fd, and user lookups in an image without NSS
 * (a hostile image's libraries are never loaded).
 *
 * rm -rf (a session's trees, a staged copy, an image's layers and work
 * directories) never follows a symlink and holds no descriptor per level:
 * a payload can build a tree deeper than any limit on open files. */
#define _GNU_SOURCE
#include "isd/util.h"
#include "isd/fsutil.h"
#include "isd/resolve.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

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

static struct isd_inode_slot *inode_slot(const struct isd_inode_map *m, uint64_t dev, uint64_t ino)
{
	size_t i = (size_t)((ino * 0x9E3779B97F4A7C15ULL) ^ dev) & (m->cap - 1);

	while (m->slot[i].used && (m->slot[i].ino != ino || m->slot[i].dev != dev))
		i = (i + 1) & (m->cap - 1);
	return &m->slot[i];
}

bool isd_inode_map_find_or_add(struct isd_inode_map *m, uint64_t dev, uint64_t ino, size_t value, size_t *found)
{
	struct isd_inode_slot *s;

	if ((m->n + 1) * 2 > m->cap) {
		struct isd_inode_map bigger = {.cap = m->cap ? m->cap * 2 : 256, .n = m->n};
		bigger.slot = isd_xcalloc(bigger.cap, sizeof(*bigger.slot));
		for (size_t k = 0; k < m->cap; k++)
			if (m->slot[k].used)
				*inode_slot(&bigger, m->slot[k].dev, m->slot[k].ino) = m->slot[k];
		free(m->slot);
		*m = bigger;
	}
	s = inode_slot(m, dev, ino);
	if (s->used) {
		if (found)
			*found = s->value;
		return true;
	}
	*s = (struct isd_inode_slot){dev, ino, value, true};
	m->n++;
	return false;
}

bool isd_inode_map_find(const struct isd_inode_map *m, uint64_t dev, uint64_t ino, size_t *found)
{
	const struct isd_inode_slot *s = m->cap ? inode_slot(m, dev, ino) : NULL;

	if (!s || !s->used)
		return false;
	*found = s->value;
	return true;
}

void isd_inode_map_free(struct isd_inode_map *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}

int isd_rm_rf_at(int dfd, const char *name)
{
	return remove_tree(dfd, name, name);
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

int isd_mkdir_p(const char *path, mode_t mode)
{
	return isd_mkdir_p_at(AT_FDCWD, path, mode);
}

int isd_mkdir_p_open_at(int dirfd, const char *path, mode_t mode, int *out)
{
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	_cleanup_free_ char *copy = isd_xstrdup(path);
	char *save = NULL;

	if (fd < 0)
		return -errno;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next;
		if (mkdirat(fd, c, mode) < 0 && errno != EEXIST) {
			close(fd);
			return -errno;
		}
		next = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -errno;
		fd = next;
	}
	*out = fd;
	return 0;
}

int isd_replace_file_at(int dfd, const char *path, const void *data, size_t len, mode_t mode, bool durable)
{
	const char *base = strrchr(path, '/');
	int dir_len = base ? (int)(base - path) + 1 : 0;
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int r = 0;

	base = base ? base + 1 : path;
	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		uint32_t rnd = 0;

		(void)!getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK);
		free(tmp);
		tmp = isd_xasprintf("%.*s.%.40s.isd-%08x", dir_len, path, base, rnd ^ (uint32_t)tries);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
		if (fd < 0 && errno != EEXIST)
			return isd_error(-errno, "writing %s", path);
	}
	if (fd < 0)
		return isd_error(-EEXIST, "writing %s", path);
	r = isd_write_all(fd, data, len);
	if (r == 0 && durable && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, path) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dfd, tmp, 0);
		return isd_error(r, "writing %s", path);
	}
	return 0;
}

/* The file at path inside the tree (symlinks resolved inside it); a
 * regular file only: O_NONBLOCK, so that an image's FIFO cannot hang isd. */
static int read_in_root(int rootfd, const char *path, char **text)
{
	_cleanup_close_ int fd = isd_openat2(rootfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
					     RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (16 << 20))
		return -EINVAL;
	return isd_read_fd(fd, text, NULL);
}

/* The first line of the colon file path with at least min fields whose
 * name (field 0) is name or, when name is NULL, whose field id_idx is the
 * number id.  The one rule for passwd and group files of an image. */
static int colon_lookup(int rootfd, const char *path, const char *name, uint32_t id, size_t id_idx, size_t min,
			char *fields[7], char **text)
{
	char *save = NULL;
	int r = read_in_root(rootfd, path, text);

	if (r < 0)
		return r;
	for (char *line = strtok_r(*text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = 0;
		char *p = line;
		uint32_t v;

		memset(fields, 0, 7 * sizeof(char *));
		while (n < 7 && p) {
			fields[n++] = p;
			p = strchr(p, ':');
			if (p)
				*p++ = '\0';
		}
		if (n < min)
			continue;
		if (name ? !strcmp(fields[0], name) : isd_parse_uint32(fields[id_idx], &v) == 0 && v == id)
			return 0;
	}
	return -ENOENT;
}

int isd_image_passwd(int rootfd, const char *name, uint32_t uid, struct isd_image_user *out)
{
	_cleanup_free_ char *text = NULL;
	char *f[7];
	int r = colon_lookup(rootfd, "etc/passwd", name, uid, 2, 7, f, &text);

	if (r < 0)
		return r;
	if (isd_parse_uint32(f[2], &out->uid) < 0 || isd_parse_uint32(f[3], &out->gid) < 0)
		return -EINVAL;
	out->name = isd_xstrdup(f[0]);
	out->home = isd_xstrdup(f[5]);
	return 0;
}

int isd_image_lookup_user(int rootfd, const char *user, uint32_t *uid, uint32_t *gid)
{
	struct isd_image_user u = {0};
	bool numeric = isd_parse_uint32(user, uid) == 0;

	if (isd_image_passwd(rootfd, numeric ? NULL : user, *uid, &u) == 0) {
		*uid = u.uid;
		*gid = u.gid;
		free(u.name);
		free(u.home);
		return 0;
	}
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
	if (colon_lookup(rootfd, "etc/group", group, 0, 2, 3, f, &text) == 0 && isd_parse_uint32(f[2], gid) == 0)
		return 0;
	return -ENOENT;
}
