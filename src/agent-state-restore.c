/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd state restore [ID]: the agent's state as it was before session ID.
 * What ID's merges and every later session's (and isd apply --state of
 * them) added goes, what they changed or deleted comes back from their
 * backups (src/agent-state-records.c), and what no merge touched stays as
 * it is now.  For a path the oldest of those sessions that recorded it
 * knows how it was.
 *
 * The restored state is built beside the live one (hard links for what
 * stays, copies of the backups) and swapped in by one rename per state
 * path (RENAME_EXCHANGE); a failure before or during the swaps puts back
 * what was swapped, so the host's state is either restored or unchanged.
 */
#define _GNU_SOURCE
#include "agent-state-internal.h"
#include "isd/fsutil.h"
#include "isd/syscalls.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* A store taking part, oldest first. */
struct undo {
	struct state_store s;
	ssize_t layer;	/* its layer with the path being restored, or -1 */
	int backup_fd;	/* its backup/LAYER, or -1 */
};

struct build {
	struct undo *u;
	size_t n;
	const char *path; /* the live state directory's path */
	int host_fd;	/* the live state directory, or -1 */
	int stage_fd;	/* the copy being built */
	size_t put_back, removed;
};

static int open_beneath(int root, const char *rel, int flags)
{
	if (!rel[0])
		return openat(root, ".", flags | O_CLOEXEC);
	return isd_openat2(root, rel, (uint64_t)(flags | O_CLOEXEC), RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

static int lstat_beneath(int root, const char *rel, struct stat *st)
{
	const char *name;
	_cleanup_close_ int p = -1;

	if (root < 0)
		return -ENOENT;
	if (!rel[0])
		return fstat(root, st) < 0 ? -errno : 0;
	p = open_parent_beneath(root, rel, &name);
	if (p < 0)
		return p;
	return fstatat(p, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* Where (layer, rel) was before the first store: the host as it is now
 * (*fd = host), a backup (*fd = its backup directory), or nowhere (-1). */
static int source_fd(const struct build *b, const char *rel)
{
	for (size_t k = 0; k < b->n; k++) {
		char t;
		if (b->u[k].layer < 0)
			continue;
		t = records_find(b->u[k].s.rec, (size_t)b->u[k].layer, rel);
		if (t == 'A')
			return -1;
		if (t == 'B')
			return b->u[k].backup_fd;
	}
	return b->host_fd;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_names(int root, const char *rel, char ***names)
{
	int fd = root >= 0 ? open_beneath(root, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			isd_strv_push(names, isd_xstrdup(de->d_name));
	closedir(d);
}

static int build_node(struct build *b, const char *rel, unsigned depth);

/* The entries of directory rel (staged already): every name the host or a
 * backup has there. */
static int build_dir(struct build *b, const char *rel, unsigned depth)
{
	_cleanup_strv_ char **names = NULL;
	size_t n;
	int r = 0;

	if (depth > STATE_TREE_DEPTH_MAX)
		return isd_error(0, "restoring %s: it is deeper than %d directories", b->path, STATE_TREE_DEPTH_MAX);
	add_names(b->host_fd, rel, &names);
	for (size_t k = 0; k < b->n; k++)
		add_names(b->u[k].backup_fd, rel, &names);
	n = isd_strv_len(names);
	if (n)
		qsort(names, n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < n && r == 0; i++) {
		_cleanup_free_ char *child = NULL;
		if (i && !strcmp(names[i], names[i - 1]))
			continue;
		child = rel[0] ? isd_xasprintf("%s/%s", rel, names[i]) : isd_xstrdup(names[i]);
		r = build_node(b, child, depth + 1);
	}
	return r;
}

static int link_or_copy(int sp, const char *name, int dp, const struct stat *st)
{
	if (linkat(sp, name, dp, name, 0) == 0)
		return 0;
	if (errno != EXDEV && errno != EPERM && errno != EMLINK)
		return -errno;
	if (S_ISREG(st->st_mode) || S_ISLNK(st->st_mode))
		return copy_tree(sp, name, dp, 0, false);
	return 0; /* a socket or FIFO that cannot be linked means nothing after a restart */
}

static int build_node(struct build *b, const char *rel, unsigned depth)
{
	int src = source_fd(b, rel);
	struct stat st, hst;
	bool live = lstat_beneath(b->host_fd, rel, &hst) == 0;
	_cleanup_close_ int sp = -1, dp = -1;
	const char *name, *dname;
	int r;

	if (src < 0 || lstat_beneath(src, rel, &st) < 0) {
		b->removed += live;
		return 0;
	}
	sp = open_parent_beneath(src, rel, &name);
	dp = open_parent_beneath(b->stage_fd, rel, &dname);
	if (sp < 0 || dp < 0)
		return isd_error(sp < 0 ? sp : dp, "restoring %s/%s", b->path, rel);
	if (S_ISDIR(st.st_mode)) {
		if (mkdirat(dp, dname, 0700) < 0)
			return isd_error(-errno, "restoring %s/%s", b->path, rel);
		r = build_dir(b, rel, depth);
		fchmodat(dp, dname, st.st_mode & 07777, 0);
		b->put_back += src != b->host_fd && !live;
		return r;
	}
	if (src == b->host_fd) {
		r = link_or_copy(sp, name, dp, &st);
	} else {
		r = copy_tree(sp, name, dp, 0, false);
		b->put_back++;
	}
	return r < 0 ? isd_error(r, "restoring %s/%s", b->path, rel) : 0;
}

/* ---- the swaps ---- */

enum swap_how { SWAP_EXCHANGE, SWAP_IN, SWAP_OUT };

struct swap {
	int parent_fd;
	char *live, *staged, *shown;
	enum swap_how how;
	bool done;	/* nothing to swap */
	bool swapped;
};

static char *staging_name(const char *live)
{
	uint32_t rnd = 0;
	(void)!getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK);
	return isd_xasprintf(".%.40s.isd-restore-%08x", live, rnd);
}

static int do_swap(struct swap *w, bool undo)
{
	int r;

	if (w->how == SWAP_EXCHANGE)
		r = renameat2(w->parent_fd, w->staged, w->parent_fd, w->live, RENAME_EXCHANGE);
	else if ((w->how == SWAP_IN) != undo)
		r = renameat2(w->parent_fd, w->staged, w->parent_fd, w->live, RENAME_NOREPLACE);
	else
		r = renameat2(w->parent_fd, w->live, w->parent_fd, w->staged, RENAME_NOREPLACE);
	return r < 0 ? -errno : 0;
}

static void swap_free(struct swap *w)
{
	if (w->parent_fd >= 0)
		close(w->parent_fd);
	free(w->live);
	free(w->staged);
	free(w->shown);
}

/* ---- one state path ---- */

static int stage_layer(struct undo *u, size_t n, const char *path, bool dir, struct swap *w, size_t *put_back,
		       size_t *removed)
{
	struct build b = {.u = u, .n = n, .path = path, .host_fd = -1, .stage_fd = -1};
	_cleanup_free_ char *real = NULL, *parent = NULL;
	struct stat st;
	int src, r;

	memset(w, 0, sizeof(*w));
	w->parent_fd = -1;
	w->shown = isd_xstrdup(path);
	if (!dir) {
		_cleanup_close_ int hp = host_file_parent(path, &w->live);
		bool live;

		if (hp < 0)
			return isd_error(hp, "opening the directory of %s", path);
		live = fstatat(hp, w->live, &st, AT_SYMLINK_NOFOLLOW) == 0;
		b.host_fd = hp;
		src = source_fd(&b, "");
		w->parent_fd = fcntl(hp, F_DUPFD_CLOEXEC, 3);
		w->staged = staging_name(w->live);
		if (src == hp)
			return 1; /* as it was */
		if (src < 0 || fstatat(src, "file", &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (!live)
				return 1;
			w->how = SWAP_OUT;
			(*removed)++;
			return 0;
		}
		r = copy_file_into(src, "file", hp, w->staged, st.st_mode);
		if (r < 0)
			return isd_error(r, "restoring %s", path);
		w->how = live ? SWAP_EXCHANGE : SWAP_IN;
		(*put_back)++;
		return 0;
	}
	real = realpath(path, NULL);
	if (real) {
		const char *slash = strrchr(real, '/');
		parent = slash == real ? isd_xstrdup("/") : strndup(real, (size_t)(slash - real));
		w->live = isd_xstrdup(slash + 1);
		b.host_fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (b.host_fd < 0)
			return isd_error(-errno, "opening %s", path);
	} else {
		const char *slash = strrchr(path, '/');
		parent = strndup(path, (size_t)(slash - path));
		w->live = isd_xstrdup(slash + 1);
		if (isd_mkdir_p(parent, 0700) < 0)
			return isd_error(-errno, "creating %s", parent);
	}
	w->parent_fd = open(parent[0] ? parent : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	w->staged = staging_name(w->live);
	if (w->parent_fd < 0 || mkdirat(w->parent_fd, w->staged, 0700) < 0 ||
	    (b.stage_fd = openat(w->parent_fd, w->staged, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		r = isd_error(-errno, "creating a directory beside %s for its restored copy", path);
		goto out;
	}
	w->how = b.host_fd >= 0 ? SWAP_EXCHANGE : SWAP_IN;
	r = build_dir(&b, "", 0);
	if (r == 0 && b.host_fd >= 0 && fstat(b.host_fd, &st) == 0)
		fchmodat(w->parent_fd, w->staged, st.st_mode & 07777, 0);
	*put_back += b.put_back;
	*removed += b.removed;
out:
	if (b.host_fd >= 0)
		close(b.host_fd);
	if (b.stage_fd >= 0)
		close(b.stage_fd);
	return r;
}

/* ---- the stores taking part ---- */

static ssize_t layer_with(const struct state_store *s, const char *path)
{
	for (size_t i = 0; i < s->n_layers; i++)
		if (!strcmp(s->layers[i].path, path))
			return (ssize_t)i;
	return -1;
}

static void undo_free(struct undo *u, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (u[k].backup_fd >= 0)
			close(u[k].backup_fd);
		store_free(&u[k].s);
	}
	free(u);
}

static bool has_path(const struct state_store *s, char *const *paths)
{
	for (size_t i = 0; paths[i]; i++)
		if (layer_with(s, paths[i]) >= 0)
			return true;
	return false;
}

/* Every store with one of the state paths, each locked (a running sandbox
 * on them is refused). */
static int gather(char *const *paths, struct undo **out, size_t *n_out)
{
	_cleanup_free_ char *root = state_root();
	_cleanup_strv_ char **ids = store_ids(root);
	struct undo *u = NULL;
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; ids && ids[i] && r == 0; i++) {
		struct state_store s;

		if (store_load(root, ids[i], &s) < 0 || !has_path(&s, paths)) {
			isd_error_clear();
			store_free(&s);
			continue;
		}
		if ((r = store_lock(&s, false)) < 0)
			r = isd_error(r, "state restore: session %s uses the same state; restore once it has ended", s.id);
		else if (!s.merged)
			r = isd_error(-EBUSY, "state restore: session %s has not been merged yet (isd gc merges it)", s.id);
		if (r < 0) {
			store_free(&s);
			break;
		}
		u = isd_xrealloc(u, (n + 1) * sizeof(*u));
		u[n].s = s;
		u[n].layer = -1;
		u[n].backup_fd = -1;
		n++;
	}
	*out = u;
	*n_out = n;
	return r;
}

static int undo_cmp(const void *a, const void *b)
{
	const struct undo *x = a, *y = b;
	return x->s.started_ns < y->s.started_ns ? -1 : x->s.started_ns > y->s.started_ns;
}

int state_restore(const char *arg)
{
	struct state_store chosen;
	struct undo *u = NULL;
	size_t n = 0, first = 0, n_layers = 0, put_back = 0, removed = 0;
	struct swap *w = NULL;
	_cleanup_free_ char **paths = NULL;
	_cleanup_free_ bool *dirs = NULL;
	_cleanup_free_ char *id = NULL;
	bool mixed = false;
	int r;

	isd_agent_state_gc(false, false);
	r = find_store(arg, WANT_BACKUP, &chosen);
	if (r == 0 && !store_has_way_back(&chosen))
		r = isd_error(-ENOENT, "agent state %s: its merges changed nothing on the host (isd state list)", chosen.id);
	if (r < 0) {
		store_free(&chosen);
		goto out;
	}
	id = isd_xstrdup(chosen.id);
	n_layers = chosen.n_layers;
	paths = isd_xcalloc(n_layers + 1, sizeof(char *));
	dirs = isd_xcalloc(n_layers + 1, sizeof(bool));
	for (size_t i = 0; i < n_layers; i++) {
		paths[i] = isd_xstrdup(chosen.layers[i].path);
		dirs[i] = chosen.layers[i].dir;
	}
	{
		int64_t since = chosen.started_ns;
		store_free(&chosen);
		r = gather(paths, &u, &n);
		if (r < 0)
			goto out;
		qsort(u, n, sizeof(*u), undo_cmp);
		while (first < n && (u[first].s.started_ns < since || (u[first].s.started_ns == since && strcmp(u[first].s.id, id))))
			first++;
		if (first == n) {
			r = isd_error(-ENOENT, "agent state %s: gone while restoring", id);
			goto out;
		}
	}
	for (size_t k = first; k < n; k++)
		if ((r = records_load(&u[k].s)) < 0)
			goto out;
	if (u[first].s.backup_files && !u[first].s.records) {
		r = isd_error(-EINVAL, "agent state %s was kept by an older isd without records; its backups are in %s/backup",
			      id, u[first].s.dir);
		goto out;
	}
	w = isd_xcalloc(n_layers + 1, sizeof(*w));
	for (size_t i = 0; i < n_layers; i++)
		w[i].parent_fd = -1;
	for (size_t i = 0; i < n_layers && r == 0; i++) {
		bool any = false;
		for (size_t k = first; k < n; k++) {
			_cleanup_free_ char *b = NULL;
			ssize_t l = layer_with(&u[k].s, paths[i]);
			u[k].layer = l;
			if (u[k].backup_fd >= 0)
				close(u[k].backup_fd);
			u[k].backup_fd = -1;
			if (l < 0 || !records_any(u[k].s.rec, (size_t)l)) {
				u[k].layer = -1;
				continue;
			}
			any = true;
			b = isd_xasprintf("backup/%zd", l);
			u[k].backup_fd = openat(u[k].s.dir_fd, b, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (!any) {
			w[i].done = true; /* nothing of it to undo */
			continue;
		}
		r = stage_layer(u + first, n - first, paths[i], dirs[i], &w[i], &put_back, &removed);
		if (r == 1) {
			w[i].done = true;
			r = 0;
		}
	}
	/* Swap every path in; on a failure, swap back what went. */
	for (size_t i = 0; i < n_layers && r == 0; i++) {
		if (w[i].done)
			continue;
		r = do_swap(&w[i], false);
		if (r < 0) {
			r = isd_error(r, "state restore: swapping in the restored %s", paths[i]);
			for (size_t k = i; k-- > 0;) {
				int e;
				if (!w[k].swapped)
					continue;
				if ((e = do_swap(&w[k], true)) < 0 && (mixed = true))
					isd_warn("state restore: %s could not be swapped back (%s); what was there is %s beside it",
						 paths[k], strerror(-e), w[k].staged);
				else
					w[k].swapped = false;
			}
			break;
		}
		w[i].swapped = true;
	}
	/* Beside the live state now: the unused copy, or the state it
	 * replaced (kept when it could not be swapped back). */
	for (size_t i = 0; i < n_layers; i++) {
		bool unused = !w[i].swapped && w[i].how != SWAP_OUT, replaced = w[i].swapped && r == 0;
		if (w[i].done || !w[i].staged || w[i].parent_fd < 0 || !(unused || replaced))
			continue;
		if (isd_rm_rf_at(w[i].parent_fd, w[i].staged) < 0) {
			isd_warn("state restore: removing %s beside %s failed: %s", w[i].staged, paths[i], isd_error_message());
			isd_error_clear();
		}
	}
	if (r == 0) {
		for (size_t k = first; k < n; k++) {
			bool *drop = isd_xcalloc(u[k].s.n_layers + 1, sizeof(bool));
			for (size_t i = 0; i < n_layers; i++) {
				ssize_t l = layer_with(&u[k].s, paths[i]);
				if (l >= 0)
					drop[l] = true;
			}
			if (records_drop_layers(&u[k].s, drop) < 0) {
				isd_error_print("state restore: dropping the used records");
			}
			free(drop);
			(void)store_save(&u[k].s);
			if (!store_has_way_back(&u[k].s) && !store_held(&u[k].s))
				store_remove(&u[k].s);
		}
		printf("isd: state restore: the agent's state is as it was before session %s: %zu entr%s put back, %zu removed%s\n",
		       id, put_back, put_back == 1 ? "y" : "ies", removed, n - first > 1 ? " (later sessions undone too)" : "");
	}
out:
	for (size_t i = 0; w && i < n_layers; i++)
		swap_free(&w[i]);
	free(w);
	for (size_t i = 0; paths && i < n_layers; i++)
		free(paths[i]);
	undo_free(u, n);
	if (r < 0) {
		_cleanup_free_ char *m = isd_xasprintf("state restore: %s; %s", isd_error_message(),
						      mixed ? "the state is partly restored (see the warnings)"
							    : "the host's state is unchanged");
		isd_error_raw(r, m);
		isd_error_print("state restore failed");
		return ISD_EXIT_FAILURE;
	}
	return 0;
}
