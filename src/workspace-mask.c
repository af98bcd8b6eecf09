/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --mask: the patterns, and the walk of the workspace's tree that finds
 * what they match before the sandbox starts.
 *
 * The walk reads every directory of the project, and on a big project
 * that is most of a start.  So it keeps what it found (src/mask-cache.c)
 * and, the next time, reuses a directory's part only when the directory
 * still has the device, inode, mtime and ctime it had: what the patterns
 * match are names, and a name appears, goes or changes in a directory
 * only by a link, unlink or rename in it, each of which sets the
 * directory's mtime and ctime.  The ctime cannot be set back from user
 * space (utimensat sets it to now), so a payload that edits a directory
 * cannot make it look unchanged.  The rest of the rules are git's for its
 * index, and for the same reasons:
 *  - racy timestamps: a directory changed in the second or two before the
 *    walk began is read again next time, since a later change in the same
 *    timestamp tick would leave its times as they are;
 *  - only file systems that keep those times (ext4, xfs, btrfs, tmpfs,
 *    f2fs, bcachefs, zfs): a directory on any other (NFS, FUSE, overlay,
 *    vfat) is read every time;
 *  - a mount inside the project changes the device and inode that the
 *    path stats as, so a directory mounted over is read again, and so is
 *    one whose mount went away;
 *  - the record names the patterns and the project, and is a miss for
 *    any other.
 */
#define _GNU_SOURCE
#include "workspace.h"
#include "workspace-mask.h"
#include "mask-cache.h"
#include "isd/syscalls.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* One mount per masked path: a pattern that matches half the tree is a
 * mistake, and the kernel's mount limit would end the sandbox anyway. */
#define MAX_MASKED 4096
/* Deeper trees are not projects; the bound keeps the walk's fds finite. */
#define MAX_DEPTH 128

/* A --mask pattern, taken apart once: the walk matches every name in the
 * tree against every pattern, and most patterns (".env", "*.pem") need no
 * fnmatch at all. */
struct mask_pattern {
	char *text;    /* without a trailing "/" and leading any-depth "**<slash>" */
	bool dir_only; /* it ended in "/" */
	bool anchored; /* it has a "/": matched against the path from the root */
	enum { MATCH_EXACT, MATCH_SUFFIX, MATCH_PREFIX, MATCH_GLOB } kind;
	size_t len;
};

static bool is_literal(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strchr("*?[\\", s[i]))
			return false;
	return true;
}

static void compile_mask(const char *pattern, struct mask_pattern *m)
{
	char *t = isd_xstrdup(pattern);
	size_t n = strlen(t);

	*m = (struct mask_pattern){0};
	if (n && t[n - 1] == '/') {
		m->dir_only = true;
		t[--n] = '\0';
	}
	/* "**<slash>x" is git's spelling of "x at any depth". */
	while (!strncmp(t, "**/", 3)) {
		memmove(t, t + 3, n - 2);
		n -= 3;
	}
	m->anchored = strchr(t, '/') != NULL;
	if (t[0] == '/')
		memmove(t, t + 1, n--);
	m->text = t;
	m->len = n;
	m->kind = MATCH_GLOB;
	if (m->anchored)
		return;
	if (is_literal(t, n))
		m->kind = MATCH_EXACT;
	else if (n > 1 && t[0] == '*' && is_literal(t + 1, n - 1))
		m->kind = MATCH_SUFFIX;
	else if (n > 1 && t[n - 1] == '*' && is_literal(t, n - 1))
		m->kind = MATCH_PREFIX;
}

static bool match_mask(const struct mask_pattern *m, const char *relpath, const char *name, bool is_dir)
{
	size_t n;

	if (m->dir_only && !is_dir)
		return false;
	if (m->anchored)
		return fnmatch(m->text, relpath, FNM_PATHNAME) == 0;
	switch (m->kind) {
	case MATCH_EXACT:
		return !strcmp(name, m->text);
	case MATCH_SUFFIX:
		n = strlen(name);
		return n >= m->len - 1 && !memcmp(name + n - (m->len - 1), m->text + 1, m->len - 1);
	case MATCH_PREFIX:
		return !strncmp(name, m->text, m->len - 1);
	default:
		return fnmatch(m->text, name, 0) == 0;
	}
}

bool isd_workspace_mask_matches(const char *pattern, const char *relpath, bool is_dir)
{
	struct mask_pattern m;
	const char *base = strrchr(relpath, '/');
	bool r;

	compile_mask(pattern, &m);
	r = match_mask(&m, relpath, base ? base + 1 : relpath, is_dir);
	free(m.text);
	return r;
}

/* The walk is the kernel's work, one directory read at a time, and a
 * project has thousands of directories: a few threads share a queue of
 * them.  Workers take the lock once per directory, never per entry, and
 * never record errors themselves (the error message is per thread, and
 * only the main thread reports one). */
#define WALK_THREADS_MAX 4
/* Directories whose ctime is this close to the walk's start (seconds) are
 * not reused: git's racy rule, with a second to spare for a clock that
 * ticks coarser than it reads. */
#define RACY_SECONDS 2

struct walk_dir {
	char *path; /* from the root, "" for the root itself */
	unsigned depth;
};

struct mount_seen {
	uint64_t id;
	bool keeps_times;
};

struct mask_walk {
	struct mask_pattern *masks, *unmasks;
	size_t n_masks, n_unmasks;
	int root_fd;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct walk_dir *queue;
	size_t n_queue, cap_queue;
	unsigned busy; /* workers reading a directory */
	bool done;
	bool too_many; /* more than MAX_MASKED matches */
	char **found;
	size_t n_found;
	/* The record: the earlier one, and the directories of this walk
	 * (entries of the earlier one reused, or read now). */
	struct isd_mask_cache old;
	int64_t start_sec; /* CLOCK_REALTIME_COARSE, the clock of file times */
	struct isd_mask_dir **dirs;
	size_t n_dirs, cap_dirs;
	bool reread;  /* some directory was read: the record is rewritten, */
	bool trusted; /* when one of its entries can be reused at all */
	struct mount_seen mounts[16];
	size_t n_mounts;
};

static bool matches_any(const struct mask_pattern *p, size_t n, const char *rel, const char *name, bool is_dir)
{
	for (size_t i = 0; i < n; i++)
		if (match_mask(&p[i], rel, name, is_dir))
			return true;
	return false;
}

/* Called with the lock held. */
static void queue_push(struct mask_walk *w, char *path, unsigned depth)
{
	if (w->n_queue == w->cap_queue) {
		w->cap_queue = w->cap_queue ? 2 * w->cap_queue : 64;
		w->queue = isd_xrealloc(w->queue, w->cap_queue * sizeof(*w->queue));
	}
	w->queue[w->n_queue++] = (struct walk_dir){path, depth};
}

/* getdents64's record (the kernel's struct linux_dirent64). */
struct walk_dirent {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

#ifndef BCACHEFS_SUPER_MAGIC
#define BCACHEFS_SUPER_MAGIC 0xca451a4e
#endif
#define ZFS_SUPER_MAGIC 0x2fc12fc1

/* File systems that set a directory's mtime and ctime on every change of
 * its entries, from the local clock, at a granularity of a second or
 * finer (ext2/3/4 share the magic; ext3's small inodes have seconds). */
static bool keeps_times(long type)
{
	switch ((unsigned long)type & 0xffffffffUL) {
	case EXT4_SUPER_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case F2FS_SUPER_MAGIC:
	case BCACHEFS_SUPER_MAGIC:
	case ZFS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

/* Whether the mount a directory is on keeps times: asked once per mount
 * and walk.  fd is the directory, or -1 to open path for it. */
static bool mount_keeps_times(struct mask_walk *w, uint64_t mnt_id, int fd, const char *path)
{
	_cleanup_close_ int own = -1;
	struct statfs sf;
	bool ok = false;

	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < w->n_mounts; i++)
		if (w->mounts[i].id == mnt_id) {
			ok = w->mounts[i].keeps_times;
			pthread_mutex_unlock(&w->lock);
			return ok;
		}
	pthread_mutex_unlock(&w->lock);
	if (fd < 0)
		fd = own = isd_openat2(w->root_fd, path[0] ? path : ".", O_PATH | O_DIRECTORY | O_CLOEXEC,
				       RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0 || fstatfs(fd, &sf) < 0)
		return false;
	ok = keeps_times(sf.f_type);
	pthread_mutex_lock(&w->lock);
	if (w->n_mounts < sizeof(w->mounts) / sizeof(w->mounts[0]))
		w->mounts[w->n_mounts++] = (struct mount_seen){mnt_id, ok};
	pthread_mutex_unlock(&w->lock);
	return ok;
}

#define STATX_NEEDED (STATX_TYPE | STATX_INO | STATX_MTIME | STATX_CTIME | STATX_MNT_ID)

static bool same_dir(const struct statx *sx, const struct isd_mask_dir *d)
{
	return (sx->stx_mask & STATX_NEEDED) == STATX_NEEDED && S_ISDIR(sx->stx_mode) &&
	       makedev(sx->stx_dev_major, sx->stx_dev_minor) == d->dev && sx->stx_ino == d->ino &&
	       sx->stx_mtime.tv_sec == d->mtime_sec && sx->stx_mtime.tv_nsec == d->mtime_nsec &&
	       sx->stx_ctime.tv_sec == d->ctime_sec && sx->stx_ctime.tv_nsec == d->ctime_nsec;
}

/* The earlier walk's entry for dir, when it may stand for the directory
 * as it is now: one statx instead of an open, two getdents and a close.
 * The path is resolved from the root through directories that were just
 * found unchanged (or read), so its parts are the directories the entry
 * was made from; a mount on the way shows as another device or inode. */
static const struct isd_mask_dir *reusable(struct mask_walk *w, const char *path)
{
	const struct isd_mask_dir *d = w->old.n ? isd_mask_cache_find(&w->old, path) : NULL;
	struct statx sx;

	if (!d || !d->trusted)
		return NULL;
	if (statx(w->root_fd, path[0] ? path : "", (path[0] ? 0 : AT_EMPTY_PATH) | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
		  STATX_NEEDED, &sx) < 0 ||
	    !same_dir(&sx, d) || !mount_keeps_times(w, sx.stx_mnt_id, -1, path))
		return NULL;
	return d;
}

static void name_push(char ***v, const char *name, bool is_dir)
{
	isd_strv_push(v, is_dir ? isd_xasprintf("%s/", name) : isd_xstrdup(name));
}

/* One directory read: its matches and subdirectories as the record's
 * entry (names), NULL when it cannot be opened (permissions, gone
 * meanwhile): then it has nothing to mask that the sandbox could read
 * either, and the next walk tries again.  getdents' d_type avoids a stat
 * per entry; getdents64 itself, with a buffer that holds a usual
 * directory whole, saves the fstat and two fcntl of each opendir.  The
 * directory's times are taken before its entries are read: a change
 * after that gives it other times, so the entry is never reused for a
 * state it was not read in. */
static struct isd_mask_dir *read_dir(struct mask_walk *w, const struct walk_dir *dir)
{
	static _Thread_local char buf[64 << 10] __attribute__((aligned(8)));
	char path[PATH_MAX];
	size_t rel_len = strlen(dir->path);
	struct isd_mask_dir *d;
	struct statx sx;
	long n;
	_cleanup_close_ int fd = isd_openat2(w->root_fd, rel_len ? dir->path : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC,
					     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

	if (fd < 0)
		return NULL;
	d = isd_xcalloc(1, sizeof(*d));
	d->path = isd_xstrdup(dir->path);
	if (statx(fd, "", AT_EMPTY_PATH, STATX_NEEDED, &sx) == 0 && (sx.stx_mask & STATX_NEEDED) == STATX_NEEDED) {
		d->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
		d->ino = sx.stx_ino;
		d->mtime_sec = sx.stx_mtime.tv_sec;
		d->mtime_nsec = sx.stx_mtime.tv_nsec;
		d->ctime_sec = sx.stx_ctime.tv_sec;
		d->ctime_nsec = sx.stx_ctime.tv_nsec;
		d->trusted = sx.stx_ctime.tv_sec + RACY_SECONDS <= w->start_sec &&
			     mount_keeps_times(w, sx.stx_mnt_id, fd, dir->path);
	}
	memcpy(path, dir->path, rel_len + 1);
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct walk_dirent *e = (struct walk_dirent *)(buf + off);
			size_t name_len = strlen(e->d_name), len = rel_len;
			unsigned char type = e->d_type;
			bool is_dir, dirlike;

			off += e->d_reclen;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (rel_len + name_len + 3 > sizeof(path))
				continue;
			if (type == DT_UNKNOWN) {
				struct stat st;
				if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
					continue;
				type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
			}
			is_dir = type == DT_DIR;
			/* A link matches as what it names: the mount covers its target. */
			dirlike = is_dir || type == DT_LNK;
			if (len)
				path[len++] = '/';
			memcpy(path + len, e->d_name, name_len + 1);
			if (matches_any(w->masks, w->n_masks, path, e->d_name, dirlike) &&
			    !matches_any(w->unmasks, w->n_unmasks, path, e->d_name, dirlike))
				name_push(&d->found, e->d_name, is_dir);
			else if (is_dir && !(dir->depth == 0 && !strcmp(e->d_name, ".git")) && dir->depth < MAX_DEPTH)
				/* The git metadata has its own protection, and its
				 * object store is the largest tree in most projects. */
				name_push(&d->subdirs, e->d_name, false);
			path[rel_len] = '\0';
		}
	}
	if (n < 0) {
		/* Half read: nothing to keep (what was read is still masked). */
		d->trusted = false;
	}
	return d;
}

static char *join(const char *dir, const char *name)
{
	return dir[0] ? isd_xasprintf("%s/%s", dir, name) : isd_xstrdup(name);
}

/* One directory, from the record or read: its matches and its
 * subdirectories handed over at once. */
static void walk_dir(struct mask_walk *w, const struct walk_dir *dir)
{
	const struct isd_mask_dir *old = reusable(w, dir->path);
	struct isd_mask_dir *d = old ? (struct isd_mask_dir *)old : read_dir(w, dir);
	size_t n_found = d ? isd_strv_len(d->found) : 0;

	pthread_mutex_lock(&w->lock);
	if (d && !old)
		w->reread = true;
	if (d && d->trusted)
		w->trusted = true;
	if (w->n_found + n_found > MAX_MASKED) {
		w->too_many = true;
		w->done = true;
	}
	for (size_t i = 0; i < n_found && !w->too_many; i++) {
		isd_strv_push(&w->found, join(dir->path, d->found[i]));
		w->n_found++;
	}
	for (size_t i = 0; d && d->subdirs && d->subdirs[i] && !w->done; i++)
		queue_push(w, join(dir->path, d->subdirs[i]), dir->depth + 1);
	if (d) {
		if (w->n_dirs == w->cap_dirs) {
			w->cap_dirs = w->cap_dirs ? 2 * w->cap_dirs : 256;
			w->dirs = isd_xrealloc(w->dirs, w->cap_dirs * sizeof(*w->dirs));
		}
		w->dirs[w->n_dirs++] = d;
	}
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
}

static void *walker(void *arg)
{
	struct mask_walk *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct walk_dir dir;

		while (!w->n_queue && !w->done)
			pthread_cond_wait(&w->changed, &w->lock);
		if (w->done)
			break;
		dir = w->queue[--w->n_queue];
		w->busy++;
		pthread_mutex_unlock(&w->lock);
		walk_dir(w, &dir);
		free(dir.path);
		pthread_mutex_lock(&w->lock);
		w->busy--;
		if (!w->n_queue && !w->busy) {
			w->done = true;
			pthread_cond_broadcast(&w->changed);
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct mask_pattern *compile_all(char *const *patterns, size_t *n)
{
	struct mask_pattern *p;

	*n = isd_strv_len(patterns);
	p = isd_xcalloc(*n ? *n : 1, sizeof(*p));
	for (size_t i = 0; i < *n; i++)
		compile_mask(patterns[i], &p[i]);
	return p;
}

static void free_all(struct mask_pattern *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i].text);
	free(p);
}

/* ISD_MASK_CACHE=0: every walk reads every directory (benchmarks, and a
 * way out should a file system lie about its times). */
static bool cache_wanted(void)
{
	const char *v = getenv("ISD_MASK_CACHE");

	return !v || strcmp(v, "0");
}

int isd_workspace_resolve_masks(struct isd_workspace *ws)
{
	struct mask_walk w = {.root_fd = -1};
	pthread_t threads[WALK_THREADS_MAX - 1];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n_threads = cpus > 1 ? (unsigned)(cpus < WALK_THREADS_MAX ? cpus : WALK_THREADS_MAX) : 1;
	unsigned started = 0;
	_cleanup_free_ char *key = NULL;
	struct timespec now;
	size_t key_len = 0;
	bool cache = cache_wanted();

	if (!ws->masks)
		return 0;
	w.root_fd = open(ws->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.root_fd < 0)
		return isd_error(-errno, "opening the workspace %s to apply the masks", ws->path);
	/* Before anything is read: a change from here on gets this time or a
	 * later one. */
	clock_gettime(CLOCK_REALTIME_COARSE, &now);
	w.start_sec = now.tv_sec;
	if (cache) {
		key = isd_mask_cache_key(ws->path, ws->masks, ws->unmasks, &key_len);
		(void)isd_mask_cache_load(key, key_len, &w.old);
	}
	w.masks = compile_all(ws->masks, &w.n_masks);
	w.unmasks = compile_all(ws->unmasks, &w.n_unmasks);
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.changed, NULL);
	queue_push(&w, isd_xstrdup(""), 0);
	for (; started < n_threads - 1; started++)
		if (pthread_create(&threads[started], NULL, walker, &w) != 0)
			break;
	walker(&w);
	for (unsigned i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	pthread_cond_destroy(&w.changed);
	pthread_mutex_destroy(&w.lock);

	if (cache && w.reread && w.trusted && !w.too_many && isd_mask_cache_store(key, key_len, w.dirs, w.n_dirs) < 0)
		isd_error_clear(); /* a record that could not be written is no failure */
	for (size_t i = 0; i < w.n_dirs; i++)
		if (w.dirs[i] < w.old.dirs || w.dirs[i] >= w.old.dirs + w.old.n) {
			isd_mask_dir_free(w.dirs[i]);
			free(w.dirs[i]);
		}
	free(w.dirs);
	isd_mask_cache_free(&w.old);
	while (w.n_queue)
		free(w.queue[--w.n_queue].path);
	free(w.queue);
	free_all(w.masks, w.n_masks);
	free_all(w.unmasks, w.n_unmasks);
	close(w.root_fd);
	if (w.too_many) {
		isd_strv_free(w.found);
		return isd_error(0, "masking files in %s: more than %d paths match the --mask patterns; "
				    "narrow them or add --unmask", ws->path, MAX_MASKED);
	}
	/* Threads finish in any order; the spec shows a stable list. */
	if (w.found)
		qsort(w.found, w.n_found, sizeof(char *), compare_strings);
	ws->masked = w.found;
	return 0;
}
