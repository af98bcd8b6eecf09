/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * inotify on the directories a storage count walks (see storage-notify.h).
 *
 * The statvfs trigger reads the payload's growth off the file system's
 * free space; another program freeing space meanwhile hides it, and a
 * flood then ran to the next periodic count (335 MB for a bound of
 * 100 MiB, 3007 files for 2000, in CI beside parallel tests).  Events
 * name what changed: a created name is an inode, a written file is
 * stat()ed for its blocks.  The estimate is an upper bound, so it only
 * asks for a count sooner; the count stays what decides.
 *
 * The names come from the payload.  They are only joined to the paths of
 * directories a count opened and stat()ed or watched (never opened, read
 * or written); a component swapped for a symbolic link meanwhile makes
 * isd look at some other file, which can only ask for a count early.
 *
 * Not seen: writes through a shared mmap (no event) and to a file whose
 * name is gone (a count follows: STALE).  The statvfs trigger and the
 * periodic count still cover those.
 */
#define _GNU_SOURCE
#include "storage-notify.h"
#include "isd/fsutil.h"
#include "isd/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_MASK (IN_CREATE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_ONLYDIR)
/* Files whose blocks at the last count are known; past this many the
 * table starts over (a file then counts whole once more). */
#define FILES_MAX 65536
#define WD_EMPTY 0
#define WD_GONE (-1)

struct dir_slot {
	int wd;
	char *path;
};

struct file_blocks {
	uint64_t base, cur; /* 512-byte blocks: at the last count, last seen */
};

struct isd_storage_notify {
	struct isd_storage_activity *a;
	int fd, wake_fd;
	struct dir_slot *dirs;
	size_t dirs_cap, dirs_used; /* used: live and gone slots */
	struct isd_inode_map file_index;
	struct file_blocks *files;
	size_t n_files, files_cap;
	uint64_t bytes, inodes; /* what a is told */
	uint32_t move_cookie;   /* the last IN_MOVED_FROM of a directory */
};

static size_t wd_hash(int wd, size_t cap)
{
	return ((size_t)wd * 2654435761u) & (cap - 1);
}

static struct dir_slot *dir_find(struct isd_storage_notify *n, int wd)
{
	if (!n->dirs_cap)
		return NULL;
	for (size_t i = wd_hash(wd, n->dirs_cap), k = 0; k < n->dirs_cap; i = (i + 1) & (n->dirs_cap - 1), k++) {
		if (n->dirs[i].wd == wd)
			return &n->dirs[i];
		if (n->dirs[i].wd == WD_EMPTY)
			return NULL;
	}
	return NULL;
}

static void dir_insert_slot(struct dir_slot *v, size_t cap, int wd, char *path)
{
	size_t i = wd_hash(wd, cap);

	while (v[i].wd != WD_EMPTY && v[i].wd != WD_GONE)
		i = (i + 1) & (cap - 1);
	v[i].wd = wd;
	v[i].path = path;
}

/* wd names path from now on (a directory watched again after a move). */
static void dir_set(struct isd_storage_notify *n, int wd, const char *path)
{
	struct dir_slot *s = dir_find(n, wd);

	if (s) {
		if (strcmp(s->path, path)) {
			free(s->path);
			s->path = isd_xstrdup(path);
		}
		return;
	}
	if ((n->dirs_used + 1) * 4 >= n->dirs_cap * 3) {
		size_t cap = n->dirs_cap ? n->dirs_cap * 2 : 256;
		struct dir_slot *v = isd_xcalloc(cap, sizeof(*v));
		size_t used = 0;
		for (size_t i = 0; i < n->dirs_cap; i++)
			if (n->dirs[i].wd > 0) {
				dir_insert_slot(v, cap, n->dirs[i].wd, n->dirs[i].path);
				used++;
			}
		free(n->dirs);
		n->dirs = v;
		n->dirs_cap = cap;
		n->dirs_used = used;
	}
	dir_insert_slot(n->dirs, n->dirs_cap, wd, isd_xstrdup(path));
	n->dirs_used++;
}

static void dir_forget(struct isd_storage_notify *n, int wd)
{
	struct dir_slot *s = dir_find(n, wd);

	if (!s)
		return;
	free(s->path);
	s->path = NULL;
	s->wd = WD_GONE;
}

static void flag(struct isd_storage_notify *n, uint32_t f)
{
	atomic_fetch_or(&n->a->flags, f);
}

struct isd_storage_notify *isd_storage_notify_new(struct isd_storage_activity *a, int wake_fd)
{
	struct isd_storage_notify *n;
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd < 0) {
		atomic_fetch_or(&a->flags, ISD_ACTIVITY_LIMITED);
		return NULL;
	}
	n = isd_xcalloc(1, sizeof(*n));
	n->a = a;
	n->fd = fd;
	n->wake_fd = wake_fd;
	return n;
}

void isd_storage_notify_free(struct isd_storage_notify *n)
{
	if (!n)
		return;
	close(n->fd);
	for (size_t i = 0; i < n->dirs_cap; i++)
		free(n->dirs[i].path);
	free(n->dirs);
	isd_inode_map_free(&n->file_index);
	free(n->files);
	free(n);
}

int isd_storage_notify_fd(const struct isd_storage_notify *n)
{
	return n ? n->fd : -1;
}

/* target: a path, or /proc/self/fd/N (a link to follow: fd true). */
static int add_watch(struct isd_storage_notify *n, const char *target, bool fd, const char *path)
{
	int wd = inotify_add_watch(n->fd, target, DIR_MASK | (fd ? 0 : IN_DONT_FOLLOW));

	if (wd < 0) {
		int r = -errno;
		/* Out of watches (fs.inotify.max_user_watches) is for the
		 * whole run.  A directory gone holds nothing (where its path
		 * is old, a move said STALE); one that cannot be watched
		 * holds what only a count sees. */
		if (r == -ENOSPC)
			flag(n, ISD_ACTIVITY_LIMITED);
		else if (r != -ENOENT && r != -ENOTDIR)
			flag(n, ISD_ACTIVITY_LOST);
		return r;
	}
	dir_set(n, wd, path);
	return wd;
}

void isd_storage_notify_watch_dir(struct isd_storage_notify *n, int dfd, const char *path)
{
	char proc[64];

	if (!n || (atomic_load(&n->a->flags) & ISD_ACTIVITY_LIMITED))
		return;
	/* By the open descriptor: what was counted is what is watched. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);
	(void)add_watch(n, proc, true, path);
}

static void publish(struct isd_storage_notify *n)
{
	atomic_store(&n->a->bytes, n->bytes);
	atomic_store(&n->a->inodes, n->inodes);
}

/* A file written or made: its blocks now against those at the count. */
static void file_seen(struct isd_storage_notify *n, const char *path, bool made)
{
	struct stat st;
	size_t idx;
	uint64_t before, after;

	if (lstat(path, &st) < 0) {
		/* Written after its unlink, or gone again: a count says. */
		if (!made)
			flag(n, ISD_ACTIVITY_STALE);
		return;
	}
	if (!S_ISREG(st.st_mode))
		return;
	if (!isd_inode_map_find(&n->file_index, st.st_dev, st.st_ino, &idx)) {
		if (n->n_files >= FILES_MAX) {
			isd_inode_map_free(&n->file_index);
			memset(&n->file_index, 0, sizeof(n->file_index));
			n->n_files = 0;
		}
		if (n->n_files == n->files_cap) {
			n->files_cap = n->files_cap ? n->files_cap * 2 : 64;
			n->files = isd_xrealloc(n->files, n->files_cap * sizeof(*n->files));
		}
		idx = n->n_files++;
		/* Unknown at the count: all of it may be new. */
		n->files[idx].base = n->files[idx].cur = 0;
		(void)isd_inode_map_find_or_add(&n->file_index, st.st_dev, st.st_ino, idx, NULL);
	}
	before = n->files[idx].cur > n->files[idx].base ? n->files[idx].cur - n->files[idx].base : 0;
	n->files[idx].cur = (uint64_t)st.st_blocks;
	after = n->files[idx].cur > n->files[idx].base ? n->files[idx].cur - n->files[idx].base : 0;
	/* bytes holds before's share: never below 0. */
	n->bytes = n->bytes + after * 512 - before * 512;
}

static void one_event(struct isd_storage_notify *n, const struct inotify_event *e)
{
	struct dir_slot *d;
	_cleanup_free_ char *path = NULL;

	if (e->mask & IN_Q_OVERFLOW) {
		flag(n, ISD_ACTIVITY_LOST);
		return;
	}
	if (e->mask & IN_IGNORED) {
		dir_forget(n, e->wd);
		return;
	}
	d = dir_find(n, e->wd);
	if (!d || !e->len || !e->name[0])
		return;
	path = isd_xasprintf("%s/%s", d->path, e->name);
	if (e->mask & IN_ISDIR) {
		if (e->mask & IN_MOVED_FROM) {
			n->move_cookie = e->cookie;
			flag(n, ISD_ACTIVITY_STALE);
			return;
		}
		if (!(e->mask & (IN_CREATE | IN_MOVED_TO)))
			return;
		n->inodes++;
		/* Moved in from outside what was counted, with whatever it
		 * holds: only a count knows. */
		if ((e->mask & IN_MOVED_TO) && (!e->cookie || e->cookie != n->move_cookie))
			flag(n, ISD_ACTIVITY_LOST);
		(void)add_watch(n, path, false, path);
		return;
	}
	if (e->mask & (IN_CREATE | IN_MOVED_TO))
		n->inodes++;
	if (e->mask & IN_MOVED_FROM)
		return;
	file_seen(n, path, (e->mask & (IN_CREATE | IN_MOVED_TO)) != 0);
}

static bool wake_due(struct isd_storage_notify *n)
{
	struct isd_storage_activity *a = n->a;

	if (!atomic_load(&a->armed))
		return false;
	return n->bytes >= atomic_load(&a->wake_bytes) || n->inodes >= atomic_load(&a->wake_inodes) ||
	       (atomic_load(&a->flags) & (ISD_ACTIVITY_STALE | ISD_ACTIVITY_LOST));
}

static void read_queued(struct isd_storage_notify *n)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t len = read(n->fd, buf, sizeof(buf));
		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			break;
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			one_event(n, e);
			p += sizeof(*e) + e->len;
		}
	}
	publish(n);
}

void isd_storage_notify_growth(struct isd_storage_notify *n, uint64_t *bytes, uint64_t *inodes)
{
	*bytes = *inodes = 0;
	if (!n)
		return;
	read_queued(n);
	*bytes = n->bytes;
	*inodes = n->inodes;
}

bool isd_storage_notify_drain(struct isd_storage_notify *n)
{
	uint64_t one = 1;

	if (!n)
		return false;
	read_queued(n);
	if (!wake_due(n))
		return false;
	atomic_store(&n->a->armed, false);
	if (n->wake_fd >= 0)
		(void)!write(n->wake_fd, &one, sizeof(one));
	return true;
}

void isd_storage_notify_reset(struct isd_storage_notify *n)
{
	if (!n)
		return;
	read_queued(n);
	for (size_t i = 0; i < n->n_files; i++)
		n->files[i].base = n->files[i].cur;
	n->bytes = n->inodes = 0;
	n->move_cookie = 0;
	atomic_fetch_and(&n->a->flags, ~(ISD_ACTIVITY_STALE | ISD_ACTIVITY_LOST));
	publish(n);
}
