/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's state as copy-on-write layers owned by a store, merged into
 * the host when the sandbox ends; what is code-bearing stays held (see
 * include/isd/agent-state.h).  The merge treats everything in the upper
 * layers as hostile: it goes by descriptors beneath the host's state
 * directory, never follows a symlink, and writes by rename.
 */
#define _GNU_SOURCE
#include "agent-state-internal.h"
#include "mount-fs.h"
#include "mount.h"
#include "isd/fsutil.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "isd/path-util.h"

#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct isd_agent_state_run {
	struct state_store store;
	const struct isd_spec *spec;
	char **upper, **work, **file; /* per spec mount, NULL when not a state mount */
	size_t n;
};

/* ---- the spec (parse time) ---- */

static bool exists_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A state file directly in the home (~/.claude.json) is saved as agents
 * save files atomically: a lock (~/.claude.json.lock) and a temporary file
 * beside it, renamed over it.  In the home the sandbox shows read-only
 * both fail (EROFS) and the bound copy is never written.  A tmpfs at the
 * home's top level lets them succeed; the rename onto the bound copy then
 * fails (EBUSY), which is when agents write it in place.  What else goes
 * there stays in memory (bounded) and is gone at exit: the tmpfs holds no
 * host file, only the mount points of what is bound beneath the home,
 * which are mounted over it (deeper paths are mounted later), so the
 * sandbox sees exactly what it saw of the home before.  Left out where
 * something already shows the home or a parent of it (the user's -v, an
 * image's home): a tmpfs would hide what that shows. */
static void add_home_top(struct isd_spec *spec, const char *home, char **files, const char *agent)
{
	_cleanup_free_ char *dst = isd_xstrdup(home);
	bool top_file = false;
	struct isd_mount *m;

	for (size_t n = strlen(dst); n > 1 && dst[n - 1] == '/';)
		dst[--n] = '\0';
	for (size_t i = 0; files && files[i]; i++)
		top_file |= !strchr(files[i], '/');
	if (!top_file || dst[0] != '/' || !dst[1] || spec->rootfs)
		return;
	for (size_t i = 0; i < spec->n_mounts; i++)
		if (isd_path_under(dst, spec->mounts[i].destination) && strcmp(spec->mounts[i].destination, "/"))
			return;
	m = isd_spec_add_mount(spec);
	m->type = ISD_MOUNT_TMPFS;
	m->destination = isd_steal_ptr(dst);
	m->size = 100ULL << 20;
	m->mode = 0755;
	m->has_mode = true;
	m->home_top = true;
	m->implicit = true;
	m->origin = isd_xasprintf("--agent-state %s: a state file in the home; its top level writable, discarded", agent);
}

int isd_agent_state_add(struct isd_spec *spec, const char *home, const char *agent, const char *origin)
{
	const struct isd_agent_table *t = isd_agents();
	const struct isd_agent *a;
	_cleanup_strv_ char **dirs = NULL, **files = NULL;

	if (!agent[0])
		return 0;
	if (!t)
		return -EINVAL; /* the table's error is recorded */
	a = isd_agent_find(t, agent);
	if (a) {
		dirs = isd_strv_copy(a->state_dirs);
		files = isd_strv_copy(a->state_files);
	} else {
		isd_strv_push(&dirs, isd_xasprintf(".%s", agent));
	}
	free(spec->agent_state);
	spec->agent_state = isd_xstrdup(agent);
	for (int kind = 0; kind < 2; kind++) {
		char **list = kind == 0 ? dirs : files;
		for (size_t i = 0; list && list[i]; i++) {
			_cleanup_free_ char *path = isd_xasprintf("%s/%s", home, list[i]);
			struct isd_mount *m;
			_cleanup_free_ char *root = state_root();

			/* The user's own -v for it wins. */
			if (isd_spec_find_mount(spec, path) >= 0)
				continue;
			/* The store would lie in its own lower layer (overlayfs
			 * refuses it), and the payload would see its own upper. */
			if (isd_path_under(root, path))
				return isd_error(0, "--agent-state %s: the state %s contains isd's store %s; name a narrower "
						 "directory in agents.conf%s%s", agent, path, root, a ? " (" : "", a ? a->origin : "");

			m = isd_spec_add_mount(spec);
			m->type = kind == 0 ? ISD_MOUNT_OVERLAY : ISD_MOUNT_BIND;
			m->source = isd_xstrdup(path);
			m->destination = isd_xstrdup(path);
			m->create = kind == 0 ? ISD_CREATE_DIR : ISD_CREATE_FILE;
			m->agent_state = true;
			m->origin = isd_xstrdup(origin);
		}
	}
	add_home_top(spec, home, files, agent);
	/* The agent's own code where it lives in its state: the host's copy,
	 * read-only, so that it runs and cannot be replaced. */
	for (size_t i = 0; a && a->exec_dirs && a->exec_dirs[i]; i++) {
		_cleanup_free_ char *path = isd_xasprintf("%s/%s", home, a->exec_dirs[i]);
		struct isd_mount *m;

		if (!exists_dir(path) || isd_spec_find_mount(spec, path) >= 0)
			continue;
		m = isd_spec_add_mount(spec);
		m->type = ISD_MOUNT_BIND;
		m->source = isd_xstrdup(path);
		m->destination = isd_xstrdup(path);
		m->readonly = true;
		m->origin = isd_xasprintf("agent table %s", a->origin);
	}
	return 0;
}

/* ---- items: what a layer holds, classified ---- */

void state_items_free(struct state_items *it)
{
	for (size_t i = 0; i < it->n; i++) {
		free(it->v[i].change.path);
		isd_guard_result_free(&it->v[i].guard);
	}
	free(it->v);
	it->v = NULL;
	it->n = 0;
}

static bool same_file_content(int a_dfd, const char *a, int b_dfd, const char *b)
{
	_cleanup_free_ char *x = NULL, *y = NULL;
	size_t xn = 0, yn = 0;
	_cleanup_close_ int fa = openat(a_dfd, a, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	_cleanup_close_ int fb = openat(b_dfd, b, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fa < 0 || fb < 0 || isd_read_fd(fa, &x, &xn) < 0 || isd_read_fd(fb, &y, &yn) < 0)
		return false;
	return xn == yn && !memcmp(x, y, xn);
}

static int file_layer_items(struct state_store *s, size_t i, const struct isd_agent *a, struct state_items *out)
{
	_cleanup_free_ char *hname = NULL, *rel = layer_home_rel(s, i, NULL);
	_cleanup_close_ int hp = host_file_parent(s->layers[i].path, &hname);
	_cleanup_close_ int lfd = -1;
	_cleanup_free_ char *ldir = isd_xasprintf("%zu", i);
	struct stat hst, nst;
	bool have_host;
	struct state_item *it;

	lfd = openat(s->dir_fd, ldir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0 || fstatat(lfd, "file", &nst, AT_SYMLINK_NOFOLLOW) < 0)
		return 0; /* nothing held */
	have_host = hp >= 0 && fstatat(hp, hname, &hst, AT_SYMLINK_NOFOLLOW) == 0;
	if (have_host && S_ISREG(hst.st_mode) && (hst.st_mode & 07777) == (nst.st_mode & 07777) &&
	    same_file_content(hp, hname, lfd, "file"))
		return 0;
	out->v = isd_xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
	it = &out->v[out->n++];
	memset(it, 0, sizeof(*it));
	it->change.path = isd_xstrdup("");
	it->change.status = have_host ? ISD_CHANGE_MODIFIED : ISD_CHANGE_ADDED;
	it->change.old_mode = have_host ? hst.st_mode : 0;
	it->change.new_mode = nst.st_mode;
	it->change.content = true;
	return isd_guard_classify(a, rel, hp, hname, lfd, "file", it->change.old_mode, nst.st_mode, &it->guard);
}

int layer_items(struct state_store *s, size_t i, struct state_items *out)
{
	const struct isd_agent *a = store_agent(s);
	_cleanup_close_ int host_fd = -1, upper_fd = -1;
	_cleanup_free_ char *up = isd_xasprintf("%zu/upper", i);
	struct isd_changes all = {0};
	const char *held_dir = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if (!s->layers[i].dir)
		return file_layer_items(s, i, a, out);
	upper_fd = openat(s->dir_fd, up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (upper_fd < 0)
		return 0;
	host_fd = open(s->layers[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (host_fd < 0) {
		if (errno != ENOENT)
			return isd_error(-errno, "opening %s", s->layers[i].path);
		/* The host lost it: everything is new. */
		if (isd_mkdir_p(s->layers[i].path, 0700) < 0 ||
		    (host_fd = open(s->layers[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			return isd_error(-errno, "creating %s", s->layers[i].path);
	}
	r = isd_changes_collect(host_fd, upper_fd, &all);
	if (r < 0)
		return r;
	out->v = isd_xcalloc(all.n ? all.n : 1, sizeof(*out->v));
	for (size_t k = 0; k < all.n && r == 0; k++) {
		struct isd_change *e = &all.v[k];
		struct state_item *it = &out->v[out->n++];
		_cleanup_free_ char *rel = layer_home_rel(s, i, e->path);
		_cleanup_close_ int hp = -1, np = -1;
		const char *hname, *nname;

		it->change = *e;
		e->path = NULL;
		/* Below a held directory: part of it. */
		if (held_dir && isd_path_below(it->change.path, held_dir)) {
			it->guard.hold = ISD_HOLD_WHOLE;
			continue;
		}
		hp = open_parent_beneath(host_fd, it->change.path, &hname);
		np = open_parent_beneath(upper_fd, it->change.path, &nname);
		r = isd_guard_classify(a, rel, hp, hname, np, nname, it->change.old_mode,
				       it->change.status == ISD_CHANGE_DELETED ? 0 : it->change.new_mode, &it->guard);
		if (it->guard.hold == ISD_HOLD_WHOLE && S_ISDIR(it->change.new_mode))
			held_dir = it->change.path;
	}
	isd_changes_free(&all);
	return r;
}

/* ---- the merge ---- */

static int unlink_upper(int upper_fd, const char *rel)
{
	const char *name;
	_cleanup_close_ int p = open_parent_beneath(upper_fd, rel, &name);

	if (p < 0)
		return p;
	return unlinkat(p, name, 0) < 0 && errno != ENOENT ? -errno : 0;
}

static int write_merged(struct state_store *s, size_t i, int host_fd, const struct state_item *it)
{
	_cleanup_close_ int hp = -1;
	_cleanup_free_ char *hname = NULL;
	const char *name;
	struct stat st;
	int r = record_before(s, i, host_fd, s->layers[i].dir ? it->change.path : "");

	if (r < 0)
		return r;
	if (s->layers[i].dir) {
		hp = open_parent_beneath(host_fd, it->change.path, &name);
	} else {
		hp = host_file_parent(s->layers[i].path, &hname);
		name = hname;
	}
	if (hp < 0)
		return hp;
	r = replace_file_text(hp, name, it->guard.merged, fstatat(hp, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_mode : 0600);
	return r < 0 ? isd_error(r, "writing %s/%s", s->layers[i].path, it->change.path) : 0;
}

static size_t merge_layer(struct state_store *s, size_t i, size_t *merged)
{
	struct state_items items;
	struct isd_changes apply = {0};
	_cleanup_close_ int host_fd = -1, upper_fd = -1;
	_cleanup_free_ char *up = isd_xasprintf("%zu/upper", i);
	size_t held = 0, applied = 0, refused = 0;
	int r;

	r = layer_items(s, i, &items);
	if (r < 0) {
		isd_error_print("merging the agent's state");
		return 0;
	}
	host_fd = s->layers[i].dir ? open(s->layers[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (!s->layers[i].dir) {
		_cleanup_free_ char *hname = NULL;
		host_fd = host_file_parent(s->layers[i].path, &hname);
	}
	upper_fd = s->layers[i].dir ? openat(s->dir_fd, up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	for (size_t k = 0; k < items.n; k++) {
		struct state_item *it = &items.v[k];
		/* Entries of a held directory go with it. */
		bool top_of_held = it->guard.why != NULL;

		switch (it->guard.hold) {
		case ISD_HOLD_TRANSIENT:
			if (s->layers[i].dir)
				unlink_upper(upper_fd, it->change.path);
			break;
		case ISD_HOLD_WHOLE:
			held += top_of_held;
			break;
		case ISD_HOLD_KEYS:
			held++; /* written below, once its directory exists */
			break;
		case ISD_HOLD_NONE:
			if ((r = record_before(s, i, host_fd, s->layers[i].dir ? it->change.path : "")) < 0) {
				/* Without a way back it waits for isd apply --state. */
				if (r != -ENOSPC)
					isd_error_print("backing up the agent's state");
				held++;
				break;
			}
			if (!s->layers[i].dir) {
				_cleanup_free_ char *hname = NULL, *ldir = isd_xasprintf("%zu", i);
				_cleanup_close_ int hp = host_file_parent(s->layers[i].path, &hname);
				_cleanup_close_ int lfd = openat(s->dir_fd, ldir, O_PATH | O_DIRECTORY | O_CLOEXEC);
				_cleanup_free_ char *tmp = isd_xasprintf(".%s.isd-merge", hname);
				unlinkat(hp, tmp, 0);
				if (hp < 0 || lfd < 0 || copy_file_into(lfd, "file", hp, tmp, it->change.new_mode) < 0 ||
				    renameat(hp, tmp, hp, hname) < 0) {
					isd_warn("merging %s from the sandbox failed: %s", s->layers[i].path, strerror(errno));
					held++;
				} else {
					(*merged)++;
				}
				break;
			}
			apply.v = isd_xrealloc(apply.v, (apply.n + 1) * sizeof(*apply.v));
			apply.v[apply.n] = it->change;
			apply.v[apply.n++].path = isd_xstrdup(it->change.path);
			break;
		}
	}
	/* The backups are on disk before what they keep goes. */
	if (s->backup_files) {
		_cleanup_close_ int sfd = openat(s->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sfd < 0 || syncfs(sfd) < 0)
			isd_warn("flushing the backups in %s: %s", s->dir, strerror(errno));
	}
	if (apply.n) {
		r = isd_changes_apply(host_fd, upper_fd, &apply, 0, true, &applied, &refused);
		if (r < 0)
			isd_error_print("merging the agent's state");
		*merged += applied;
		/* All or nothing: with one refused, none went. */
		held += refused ? apply.n - applied : 0;
	} else if (upper_fd >= 0) {
		(void)isd_changes_prune(host_fd, upper_fd);
	}
	for (size_t k = 0; k < items.n; k++)
		if (items.v[k].guard.hold == ISD_HOLD_KEYS && write_merged(s, i, host_fd, &items.v[k]) < 0)
			isd_error_print("merging the agent's state");
	isd_changes_free(&apply);
	state_items_free(&items);
	return held;
}

size_t store_merge(struct state_store *s, bool quiet)
{
	size_t held = 0, merged = 0;

	for (size_t i = 0; i < s->n_layers; i++)
		held += merge_layer(s, i, &merged);
	s->merged = true;
	/* A store that is removed right after needs no record. */
	if ((held || store_has_way_back(s)) && store_save(s) == 0)
		store_mark_merged(s, true);
	if (!quiet && held)
		fprintf(stderr, "isd: the agent's state: %zu code-bearing change%s held (isd diff shows %s; "
				"isd apply --state %s takes %s)\n",
			held, held == 1 ? "" : "s", held == 1 ? "it" : "them", s->id, held == 1 ? "it" : "them");
	return held;
}

/* ---- the run ---- */

static void new_id(char id[13])
{
	uint8_t b[6] = {0};
	(void)!getrandom(b, sizeof(b), 0);
	for (int i = 0; i < 6; i++)
		sprintf(id + 2 * i, "%02x", b[i]);
}

/* The stopped store id has the same layers as spec: its backups counts
 * go on in s. */
static bool reusable(const char *root, const char *id, const struct isd_spec *spec, struct state_store *s)
{
	struct state_store old;
	size_t k = 0;
	bool same;

	if (store_load(root, id, &old) < 0) {
		isd_error_clear();
		store_free(&old);
		return false;
	}
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		if (!m->agent_state)
			continue;
		if (k >= old.n_layers || strcmp(old.layers[k].path, m->source) || old.layers[k].dir != (m->type == ISD_MOUNT_OVERLAY))
			break;
		k++;
	}
	same = k == old.n_layers;
	for (size_t i = 0; same && i < spec->n_mounts; i++)
		same = !spec->mounts[i].agent_state || k-- > 0;
	if (same) {
		s->backup_bytes = old.backup_bytes;
		s->backup_files = old.backup_files;
		s->records = old.records;
		s->started_ns = old.started_ns;
	}
	store_free(&old);
	return same;
}

static void run_free(struct isd_agent_state_run *run)
{
	for (size_t i = 0; i < run->n; i++) {
		free(run->upper[i]);
		free(run->work[i]);
		free(run->file[i]);
	}
	free(run->upper);
	free(run->work);
	free(run->file);
	store_free(&run->store);
	free(run);
}

int isd_agent_state_begin(const struct isd_spec *spec, const char *id, const char *home,
			  struct isd_mount_extras *extras, struct isd_agent_state_run **out)
{
	struct isd_agent_state_run *run;
	struct state_store *s;
	_cleanup_free_ char *root = NULL;
	char fresh[13];
	struct timespec ts;
	bool reuse = false, recycled = false;
	_cleanup_free_ char *spare = NULL;
	int r;

	*out = NULL;
	if (!spec->agent_state)
		return 0;
	isd_agent_state_gc(false, false);
	root = state_root();
	r = isd_mkdir_p(root, 0700);
	if (r < 0)
		return isd_error(r, "creating %s", root);
	if (!id) {
		new_id(fresh);
		id = fresh;
	}
	run = isd_xcalloc(1, sizeof(*run));
	s = &run->store;
	s->lock_fd = s->dir_fd = -1;
	run->spec = spec;
	run->n = spec->n_mounts;
	run->upper = isd_xcalloc(run->n, sizeof(char *));
	run->work = isd_xcalloc(run->n, sizeof(char *));
	run->file = isd_xcalloc(run->n, sizeof(char *));
	s->id = isd_xstrdup(id);
	s->dir = isd_xasprintf("%s/%s", root, id);
	s->agent = isd_xstrdup(spec->agent_state);
	s->project = isd_xstrdup(spec->workspace.path ? spec->workspace.path : spec->workdir ? spec->workdir : "");
	s->home = isd_xstrdup(home ? home : "");
	clock_gettime(CLOCK_REALTIME, &ts);
	s->started_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	spare = isd_xasprintf("%s/%s", root, STORE_SPARE);
	if (renameat2(AT_FDCWD, spare, AT_FDCWD, s->dir, RENAME_NOREPLACE) == 0) {
		recycled = true;
		(void)chmod(s->dir, 0700);
	} else if (mkdir(s->dir, 0700) < 0) {
		/* isd exec --session ID: the session's store goes on, with what
		 * it holds (the agent sees its own configuration again). */
		if (errno == EEXIST)
			reuse = reusable(root, id, spec, s);
		if (!reuse && errno == EEXIST) {
			new_id(fresh);
			free(s->id);
			free(s->dir);
			s->id = isd_xstrdup(fresh);
			s->dir = isd_xasprintf("%s/%s", root, fresh);
		}
		if (!reuse && mkdir(s->dir, 0700) < 0) {
			r = isd_error(-errno, "creating the agent state store %s", s->dir);
			goto fail;
		}
	}
	s->dir_fd = open(s->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0 || (r = store_lock(s, false)) < 0) {
		r = s->dir_fd < 0 ? isd_error(-errno, "opening %s", s->dir) : r;
		goto fail;
	}
	if (reuse)
		store_mark_merged(s, false);
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		size_t n = s->n_layers;
		_cleanup_free_ char *ldir = isd_xasprintf("%s/%zu", s->dir, n);

		if (!m->agent_state)
			continue;
		s->layers = isd_xrealloc(s->layers, (n + 1) * sizeof(*s->layers));
		s->layers[n].path = isd_xstrdup(m->source);
		s->layers[n].dir = m->type == ISD_MOUNT_OVERLAY;
		s->n_layers++;
		if (mkdir(ldir, 0700) < 0 && !((reuse || recycled) && errno == EEXIST)) {
			r = isd_error(-errno, "creating %s", ldir);
			goto fail;
		}
		if (s->layers[n].dir) {
			run->upper[i] = isd_xasprintf("%s/upper", ldir);
			run->work[i] = isd_xasprintf("%s/work", ldir);
			if ((mkdir(run->upper[i], 0700) < 0 && !((reuse || recycled) && errno == EEXIST)) ||
			    (mkdir(run->work[i], 0700) < 0 && !((reuse || recycled) && errno == EEXIST))) {
				r = isd_error(-errno, "creating %s", run->upper[i]);
				goto fail;
			}
			/* The layer is volatile: the kernel leaves a mark in
			 * work/ that refuses the next mount.  The last one
			 * ended with its sandbox and was merged (or is
			 * re-entered as it is), so the mark goes. */
			if ((reuse || recycled)) {
				_cleanup_close_ int wfd = open(run->work[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (wfd < 0 || isd_rm_rf_at(wfd, "work") < 0) {
					r = isd_error(wfd < 0 ? -errno : -EIO, "clearing %s", run->work[i]);
					goto fail;
				}
			}
		} else if (reuse && faccessat(AT_FDCWD, (run->file[i] = isd_xasprintf("%s/file", ldir)), F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
			; /* the held copy */
		} else {
			_cleanup_free_ char *hname = NULL;
			_cleanup_close_ int hp = host_file_parent(m->source, &hname), lfd = open(ldir, O_PATH | O_DIRECTORY | O_CLOEXEC);
			struct stat st;

			struct stat cst;

			free(run->file[i]);
			run->file[i] = isd_xasprintf("%s/file", ldir);
			if (hp < 0 || lfd < 0 || fstatat(hp, hname, &st, 0) < 0 || !S_ISREG(st.st_mode)) {
				r = isd_error(-EINVAL, "copying the agent's state file %s (a regular file)", m->source);
				goto fail;
			}
			/* A recycled store's copy is most often the host's file
			 * as the last run left it. */
			if (recycled && fstatat(lfd, "file", &cst, AT_SYMLINK_NOFOLLOW) == 0) {
				if (S_ISREG(cst.st_mode) && (cst.st_mode & 07777) == (st.st_mode & 07777) &&
				    same_file_content(hp, hname, lfd, "file"))
					continue;
				unlinkat(lfd, "file", 0);
			}
			if ((r = copy_file_into(hp, hname, lfd, "file", st.st_mode)) < 0) {
				r = isd_error(r < 0 ? r : -EINVAL, "copying the agent's state file %s (a regular file)", m->source);
				goto fail;
			}
		}
	}
	r = recycled ? store_save_recycled(s) : store_save(s);
	if (r < 0)
		goto fail;
	extras->state_upper = (const char *const *)run->upper;
	extras->state_work = (const char *const *)run->work;
	extras->state_file = (const char *const *)run->file;
	*out = run;
	return 0;
fail:
	if (s->dir_fd >= 0 && !reuse)
		store_remove(s);
	run_free(run);
	return r;
}

size_t isd_agent_state_end(struct isd_agent_state_run *run)
{
	size_t held;

	if (!run)
		return 0;
	held = store_merge(&run->store, false);
	if (!held && !store_has_way_back(&run->store) && !store_recycle(&run->store))
		store_remove(&run->store);
	run_free(run);
	store_trim();
	return held;
}

/* Programs installed the way agents are (npm, bun, under the home): their
 * failure without a profile is most likely the read-only, empty home. */
static bool looks_like_agent(const struct isd_spec *spec, const char *home)
{
	const char *cmd = spec->argv ? spec->argv[0] : NULL;
	const char *origin = isd_spec_get_origin(spec, "command");
	char line[128] = "";
	FILE *f;

	if (!cmd || cmd[0] != '/')
		return false;
	if (strstr(cmd, "/node_modules/") || (origin && !strcmp(origin, "command resolution") && home && home[0] &&
					      isd_path_below(cmd, home)))
		return true;
	f = fopen(cmd, "re");
	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	return !strncmp(line, "#!", 2) && (strstr(line, "node") || strstr(line, "bun") || strstr(line, "deno"));
}

void isd_agent_state_hint_at_exit(const struct isd_spec *spec, const char *home, int exit_code)
{
	const char *base;

	if (exit_code < 1 || exit_code > 125 || spec->agent || spec->agent_state || !looks_like_agent(spec, home))
		return;
	for (size_t i = 0; spec->profiles && spec->profiles[i]; i++)
		if (strcmp(spec->profiles[i], "none"))
			return;
	base = spec->command_name ? spec->command_name : spec->argv[0];
	if (strrchr(base, '/'))
		base = strrchr(base, '/') + 1;
	fprintf(stderr, "isd: %s exited with %d without a profile: your home is read-only and empty inside, so what it "
			"writes there fails (EROFS, ENOENT); for a coding agent add --agent %s (its state in ~/.%s, or an "
			"entry in ~/.config/isd/profiles/agents.conf) or --profile agent\n",
		base, exit_code, base, base);
}

int isd_agent_state_new_overlay(const char *lower, const char *upper, const char *work)
{
	const char *opts[] = {"lowerdir", lower, "upperdir", upper, "workdir", work, "userxattr", NULL, "volatile", NULL, NULL};
	int fd = isd_mount_new_fs("overlay", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				  "the agent's state");

	if (fd < 0)
		isd_error_hint("the agent's state is a copy-on-write layer: it needs overlayfs in a user namespace "
			       "(Linux 5.11 or newer); -v %s:%s binds it plainly, without the guard", lower, lower);
	return fd;
}

int isd_agent_state_clone(const struct isd_mount *m, size_t i, const struct isd_mount_extras *x)
{
	if (m->type == ISD_MOUNT_OVERLAY) {
		if (!x->state_upper || !x->state_upper[i])
			return isd_error(-EINVAL, "mounting the agent's state %s: no store", m->source);
		return isd_agent_state_new_overlay(m->source, x->state_upper[i], x->state_work[i]);
	}
	if (!x->state_file || !x->state_file[i])
		return isd_error(-EINVAL, "mounting the agent's state %s: no store", m->source);
	return isd_mount_clone_tree(AT_FDCWD, x->state_file[i], MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				    m->source);
}
