/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --storage-opt: parsing, the floor, --print-spec, the payload's
 * RLIMIT_FSIZE, and the accounting of what isd keeps on the host disk for a
 * sandbox (see isd/storage.h for the whole design).
 */
#define _GNU_SOURCE
#include "isd/storage.h"
#include "isd/activity.h"
#include "isd/fsutil.h"
#include "isd/owner-view.h"
#include "isd/spec.h"
#include "isd/util.h"
#include "storage-notify.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int parse_one(struct isd_storage_opts *o, const char *kv, size_t len, unsigned *seen)
{
	static const char *const keys[] = {"size", "inodes", "min-free"};
	char buf[64];
	const char *v;
	size_t klen;

	if (len >= sizeof(buf))
		return isd_error(0, "--storage-opt %.*s: too long", (int)len, kv);
	memcpy(buf, kv, len);
	buf[len] = '\0';
	v = strchr(buf, '=');
	if (!v || v == buf || !v[1])
		return isd_error(0, "--storage-opt %s: expected KEY=VALUE (size=, inodes=, min-free=)", buf);
	klen = (size_t)(v - buf);
	v++;
	/* "size=1g,size=2g": a key twice in one option is a slip of the
	 * fingers (a later option, the command line's over a profile's,
	 * does replace it). */
	for (unsigned k = 0; k < 3; k++)
		if (klen == strlen(keys[k]) && !strncmp(buf, keys[k], klen)) {
			if (*seen & (1U << k))
				return isd_error(0, "--storage-opt %.*s: given twice", (int)klen, buf);
			*seen |= 1U << k;
		}
	if (klen == 4 && !strncmp(buf, "size", 4)) {
		if (isd_parse_size(v, &o->size) < 0)
			return isd_error(0, "--storage-opt %s: invalid size (expected N[k|m|g|t], 0 for none)", buf);
		/* Below a megabyte, the bound would stop the payload's first
		 * writes (a session's own files count): a typo, not a wish. */
		if (o->size && o->size < (1ULL << 20))
			return isd_error(0, "--storage-opt %s: at least 1m (or 0 for no bound)", buf);
		return 0;
	}
	if (klen == 6 && !strncmp(buf, "inodes", 6)) {
		uint64_t n;
		if (isd_parse_size(v, &n) < 0 || strspn(v, "0123456789") != strlen(v))
			return isd_error(0, "--storage-opt %s: expected a number of files (0 for none)", buf);
		if (n && n < 16)
			return isd_error(0, "--storage-opt %s: at least 16 (or 0 for no bound)", buf);
		o->inodes = n;
		return 0;
	}
	if (klen == 8 && !strncmp(buf, "min-free", 8)) {
		size_t n = strlen(v);
		o->min_free_set = true;
		o->min_free = 0;
		o->min_free_pct = 0;
		if (n > 1 && v[n - 1] == '%') {
			char pct[8];
			uint32_t p;
			if (n - 1 >= sizeof(pct))
				return isd_error(0, "--storage-opt %s: expected a percentage 0..50", buf);
			memcpy(pct, v, n - 1);
			pct[n - 1] = '\0';
			if (isd_parse_uint32(pct, &p) < 0 || p > 50)
				return isd_error(0, "--storage-opt %s: expected a percentage 0..50", buf);
			o->min_free_pct = p;
			return 0;
		}
		if (isd_parse_size(v, &o->min_free) < 0)
			return isd_error(0, "--storage-opt %s: invalid size (expected N[k|m|g|t] or N%%, 0 for none)", buf);
		return 0;
	}
	return isd_error(0, "--storage-opt %s: unknown option (known: size=, inodes=, min-free=)", buf);
}

int isd_storage_parse_opt(struct isd_storage_opts *o, const char *arg)
{
	struct isd_storage_opts next = *o;
	const char *p = arg;
	unsigned seen = 0;

	do {
		size_t len = strcspn(p, ",");
		int r = parse_one(&next, p, len, &seen);
		if (r < 0)
			return r;
		p += len;
	} while (*p++ == ',');
	*o = next;
	return 0;
}

uint64_t isd_storage_file_limit(const struct isd_storage_opts *o)
{
	return o->size - o->size / 16;
}

uint64_t isd_storage_floor(const struct isd_storage_opts *o, uint64_t total)
{
	uint64_t pct;

	if (o->min_free_set)
		return o->min_free_pct ? total / 100 * o->min_free_pct : o->min_free;
	pct = total / 100 * ISD_STORAGE_DEFAULT_FLOOR_PCT;
	return pct < ISD_STORAGE_DEFAULT_FLOOR ? pct : ISD_STORAGE_DEFAULT_FLOOR;
}

struct json_object *isd_storage_to_json(const struct isd_storage_opts *o)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "size", json_object_new_uint64(o->size));
	json_object_object_add(j, "inodes", json_object_new_uint64(o->inodes));
	if (!o->min_free_set) {
		json_object_object_add(j, "min_free", json_object_new_string("default: the smaller of 2 GiB and 5 % of each file system"));
	} else if (o->min_free_pct) {
		char pct[16];
		snprintf(pct, sizeof(pct), "%u%%", o->min_free_pct);
		json_object_object_add(j, "min_free", json_object_new_string(pct));
	} else {
		json_object_object_add(j, "min_free", json_object_new_uint64(o->min_free));
	}
	json_object_object_add(j, "covers", json_object_new_string(
		"size and inodes: the cow session and the agent's state store on the host; "
		"min-free: every file system holding a writable host path"));
	json_object_object_add(j, "enforcement", json_object_new_string(
		o->size ? "a file past 15/16 of size: EFBIG (RLIMIT_FSIZE); the sum past size or inodes, a floor reached: the sandbox is frozen"
			: "a floor reached: the sandbox is frozen"));
	return j;
}

int isd_storage_payload_limits(const struct isd_storage_opts *o)
{
	struct rlimit rl = {.rlim_cur = isd_storage_file_limit(o), .rlim_max = isd_storage_file_limit(o)};
	struct sigaction ign = {.sa_handler = SIG_IGN};

	if (!o->size)
		return 0;
	/* A limit already lower (the caller's ulimit -f) stays. */
	{
		struct rlimit cur;
		if (getrlimit(RLIMIT_FSIZE, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && cur.rlim_max < rl.rlim_max)
			rl.rlim_max = rl.rlim_cur = cur.rlim_max;
	}
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
		return isd_error(-errno, "setting the payload's file size limit (RLIMIT_FSIZE, --storage-opt size=)");
	/* The write fails with EFBIG instead of killing the writer. */
	if (sigaction(SIGXFSZ, &ign, NULL) < 0)
		return isd_error(-errno, "ignoring SIGXFSZ");
	return 0;
}

/* Deeper than this, a directory is not walked but counts as a breach (the
 * walk holds one descriptor per level). */
#define WALK_MAX_DEPTH 192

/* The file systems a limited count looks at: those of the counted paths'
 * directories, as the watcher's statvfs trigger does. */
#define PROBE_MAX 8
#define PROBE_EVERY 64 /* entries between two looks */

struct probe {
	char *path;
	dev_t dev;
	uint64_t avail, iavail;
};

struct walk {
	uint64_t bytes, inodes, baseline;
	struct timespec since; /* 0: everything counts */
	struct isd_inode_map seen; /* hard links count once */
	char *unaccounted; /* the first directory that could not be counted */
	const struct isd_storage_limits *lim; /* NULL: none */
	struct isd_storage_notify *notify;    /* watches each directory read, or NULL */
	struct probe probe[PROBE_MAX];
	size_t n_probe;
	unsigned entries;
	bool interrupted;
};

static bool probe_take(const char *path, uint64_t *avail, uint64_t *iavail)
{
	struct statvfs sv;

	if (statvfs(path, &sv) < 0)
		return false;
	*avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	*iavail = sv.f_files ? (uint64_t)sv.f_favail : UINT64_MAX;
	return true;
}

static void probes_start(struct walk *w, char *const *paths)
{
	for (size_t i = 0; paths && paths[i] && w->n_probe < PROBE_MAX; i++) {
		_cleanup_free_ char *dir = isd_xstrdup(paths[i]);
		char *slash = strrchr(dir, '/');
		struct probe *p = &w->probe[w->n_probe];
		struct stat st;
		size_t k;

		if (slash && slash != dir)
			*slash = '\0';
		if (stat(dir, &st) < 0)
			continue;
		for (k = 0; k < w->n_probe && w->probe[k].dev != st.st_dev; k++)
			;
		if (k < w->n_probe || !probe_take(dir, &p->avail, &p->iavail))
			continue;
		p->dev = st.st_dev;
		p->path = dir;
		dir = NULL;
		w->n_probe++;
	}
}

/* Every PROBE_EVERY entries: over a limit, the rest is not worth counting
 * with the payload running (a shell loop fills a directory as fast as a
 * walk reads it: it would chase the writer). */
static void check_limits(struct walk *w)
{
	const struct isd_storage_limits *l = w->lim;
	uint64_t db, di, fs_db = 0, fs_di = 0;

	if ((l->bytes && w->bytes > l->bytes) || (l->inodes && w->inodes > l->inodes)) {
		w->interrupted = true;
		return;
	}
	if (++w->entries % PROBE_EVERY || (l->drop_bytes == UINT64_MAX && l->drop_inodes == UINT64_MAX))
		return;
	/* What inotify saw made since the count began, where that is more
	 * than the free space says. */
	isd_storage_notify_growth(w->notify, &db, &di);
	for (size_t i = 0; i < w->n_probe; i++) {
		uint64_t avail, iavail;
		if (!probe_take(w->probe[i].path, &avail, &iavail))
			continue;
		if (w->probe[i].avail > avail)
			fs_db += w->probe[i].avail - avail;
		if (iavail != UINT64_MAX && w->probe[i].iavail > iavail)
			fs_di += w->probe[i].iavail - iavail;
	}
	db = fs_db > db ? fs_db : db;
	di = fs_di > di ? fs_di : di;
	w->interrupted = db >= l->drop_bytes || di >= l->drop_inodes;
}

static void count(struct walk *w, const struct stat *st)
{
	/* A copy's own entry, unchanged: its bytes are the project's (a
	 * reflink's, or what the copy cost before the sandbox ran). */
	if ((w->since.tv_sec || w->since.tv_nsec) &&
	    (st->st_ctim.tv_sec < w->since.tv_sec ||
	     (st->st_ctim.tv_sec == w->since.tv_sec && st->st_ctim.tv_nsec < w->since.tv_nsec))) {
		w->baseline++;
		return;
	}
	if (st->st_nlink > 1 && !S_ISDIR(st->st_mode) && isd_inode_map_find_or_add(&w->seen, st->st_dev, st->st_ino, 0, NULL))
		return;
	w->bytes += (uint64_t)st->st_blocks * 512;
	w->inodes++;
}

/* A directory the payload made unreadable (chmod 000 inside: the upper
 * layer's directory is the host user's) is read in the owner's view
 * (src/storage-count.c for a running session).  Only where no user
 * namespace can be made, it is read by giving its owner read and search
 * while the walk is in it (a running payload can see that); its mode is
 * put back after (unless the payload changed it meanwhile). */
struct forced {
	int path_fd;
	mode_t mode;
};

static int open_dir_forced(int parent, const char *name, const struct stat *st, struct forced *f)
{
	int path = openat(parent, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	char proc[64];
	struct stat now;
	int fd;

	f->path_fd = -1;
	/* The view reads what it can without a mode changed: the rest is
	 * not the owner's to change either. */
	if (isd_owner_view_active()) {
		if (path >= 0)
			close(path);
		return -EACCES;
	}
	if (path < 0)
		return -errno;
	if (fstat(path, &now) < 0 || now.st_ino != st->st_ino || now.st_uid != geteuid()) {
		close(path);
		return -EACCES;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", path);
	if (chmod(proc, (now.st_mode & 07777) | S_IRUSR | S_IXUSR) < 0) {
		close(path);
		return -EACCES;
	}
	f->path_fd = path;
	f->mode = now.st_mode & 07777;
	fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -EACCES : fd;
}

static void forced_done(struct forced *f)
{
	char proc[64];
	struct stat now;

	if (f->path_fd < 0)
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->path_fd);
	if (fstat(f->path_fd, &now) == 0 && (now.st_mode & 07777) == (f->mode | S_IRUSR | S_IXUSR))
		(void)!chmod(proc, f->mode);
	close(f->path_fd);
	f->path_fd = -1;
}

static void walk_dir(struct walk *w, int dfd, const char *path, unsigned depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (!d) {
		close(dfd);
		return;
	}
	while (!w->interrupted && (e = readdir(d))) {
		struct forced forced = {.path_fd = -1};
		struct stat st;
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT && !w->unaccounted) /* gone meanwhile is fine */
				w->unaccounted = isd_xasprintf("%s/%s (%s)", path, e->d_name, strerror(errno));
			continue;
		}
		count(w, &st);
		if (w->lim)
			check_limits(w);
		if (!S_ISDIR(st.st_mode) || w->interrupted)
			continue;
		if (depth >= WALK_MAX_DEPTH) {
			if (!w->unaccounted)
				w->unaccounted = isd_xasprintf("%s/%s (deeper than %d directories)", path, e->d_name, WALK_MAX_DEPTH);
			continue;
		}
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			sub = errno == EACCES ? open_dir_forced(dirfd(d), e->d_name, &st, &forced) : -errno;
		if (sub < 0) {
			forced_done(&forced);
			if (sub != -ENOENT && sub != -ENOTDIR && !w->unaccounted)
				w->unaccounted = isd_xasprintf("%s/%s (cannot be read)", path, e->d_name);
			continue;
		}
		{
			/* The watches need the whole path, a message only its start. */
			_cleanup_free_ char *subpath = depth < 8 || w->notify ? isd_xasprintf("%s/%s", path, e->d_name)
									     : isd_xstrdup(path);
			isd_storage_notify_watch_dir(w->notify, sub, subpath);
			walk_dir(w, sub, subpath, depth + 1);
		}
		forced_done(&forced);
	}
	closedir(d);
}

static int account(struct walk *w, const char *path)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	count(w, &st);
	if (!S_ISDIR(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	isd_storage_notify_watch_dir(w->notify, fd, path);
	walk_dir(w, fd, path, 0);
	return 0;
}

int isd_storage_account_notify(char *const *paths, const struct timespec *since, const struct isd_storage_limits *lim,
			       struct isd_storage_notify *n, struct isd_storage_usage *u)
{
	struct walk w = {.lim = lim, .notify = n};

	if (since)
		w.since = *since;
	if (lim)
		probes_start(&w, paths);
	for (size_t i = 0; paths && paths[i] && !w.interrupted; i++)
		(void)account(&w, paths[i]);
	isd_inode_map_free(&w.seen);
	for (size_t i = 0; i < w.n_probe; i++)
		free(w.probe[i].path);
	u->bytes = w.bytes;
	u->inodes = w.inodes;
	u->baseline = w.baseline;
	u->unaccounted = w.unaccounted;
	u->interrupted = w.interrupted;
	u->cpu_ns = 0;
	return 0;
}

int isd_storage_account_limited(char *const *paths, const struct timespec *since, const struct isd_storage_limits *lim,
				struct isd_storage_usage *u)
{
	return isd_storage_account_notify(paths, since, lim, NULL, u);
}

int isd_storage_account_all(char *const *paths, const struct timespec *since, struct isd_storage_usage *u)
{
	return isd_storage_account_limited(paths, since, NULL, u);
}

int isd_storage_account(const char *path, uint64_t *bytes, uint64_t *inodes)
{
	char *paths[] = {(char *)path, NULL};
	struct isd_storage_usage u;

	isd_storage_account_all(paths, NULL, &u);
	free(u.unaccounted);
	*bytes = u.bytes;
	*inodes = u.inodes;
	return 0;
}

static void push_unique(char ***v, const char *path)
{
	for (size_t i = 0; *v && (*v)[i]; i++)
		if (!strcmp((*v)[i], path))
			return;
	isd_strv_push(v, isd_xstrdup(path));
}

static char *parent_of(const char *path, int levels)
{
	char *p = isd_xstrdup(path);

	while (levels-- > 0) {
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			break;
		*slash = '\0';
	}
	return p;
}

void isd_storage_scope_collect(const struct isd_spec *spec, const char *session_dir,
			       const char *const *state_upper, const char *const *state_file, size_t n,
			       struct isd_storage_scope *scope)
{
	memset(scope, 0, sizeof(*scope));
	scope->session_dir = session_dir;
	if (session_dir) {
		/* upper/ and the activity log; work/ is the kernel's scratch
		 * (its mode 000 "work" directory holds nothing for long). */
		_cleanup_free_ char *upper = isd_xasprintf("%s/upper", session_dir);
		_cleanup_free_ char *log = isd_xasprintf("%s/" ISD_ACTIVITY_FILE, session_dir);
		push_unique(&scope->accounted, upper);
		push_unique(&scope->accounted, log);
		push_unique(&scope->writable, session_dir);
	}
	for (size_t i = 0; i < n; i++) {
		/* STORE/N/upper, STORE/N/file */
		const char *p = state_upper && state_upper[i] ? state_upper[i] : state_file && state_file[i] ? state_file[i] : NULL;
		_cleanup_free_ char *store = NULL;
		if (!p)
			continue;
		push_unique(&scope->accounted, p);
		store = parent_of(p, 2);
		push_unique(&scope->writable, store);
	}
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		if (m->type == ISD_MOUNT_BIND && !m->readonly && m->source && !m->agent_state)
			push_unique(&scope->writable, m->source);
	}
	if (spec->workspace.path && spec->workspace.mode == ISD_WORKSPACE_RW)
		push_unique(&scope->writable, spec->workspace.path);
}

void isd_storage_scope_free(struct isd_storage_scope *scope)
{
	isd_strv_free(scope->accounted);
	isd_strv_free(scope->writable);
	scope->accounted = scope->writable = NULL;
}
