/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The session store (layout in include/isd/session.h) and `isd session
 * list` / `isd discard`.  Nothing but the flock on ID/lock says whether a
 * session runs, so a crashed isd leaves a stopped session that apply,
 * diff and discard take as it is.
 */
#define _GNU_SOURCE
#include "isd/activity.h"
#include "isd/cli-args.h"
#include "isd/fsutil.h"
#include "isd/owner-view.h"
#include "isd/session.h"
#include "isd/storage.h"
#include "isd/session-changes.h"
#include "isd/util.h"
#include "isd/path-util.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#define ID_LEN 12

char *isd_session_root(void)
{
	return isd_xdg_path("XDG_STATE_HOME", ".local/state", "isd/sessions");
}

/* The walks over a session hold two directories open per level (the
 * upper layer's and the project's): the soft limit (often 1024) would stop
 * them in a tree 500 levels deep, the hard one (often 2^19 or more) does
 * not in any tree a project holds.  Beyond it, the walk fails with the
 * path it was at. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static bool valid_id_prefix(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > ID_LEN)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

static void session_init(struct isd_session *s)
{
	memset(s, 0, sizeof(*s));
	s->lock_fd = -1;
}

void isd_session_free(struct isd_session *s)
{
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s->id);
	free(s->dir);
	free(s->project);
	isd_strv_free(s->command);
	session_init(s);
}

char *isd_session_upper(const struct isd_session *s)
{
	return isd_xasprintf("%s/upper", s->dir);
}

char *isd_session_work(const struct isd_session *s)
{
	return isd_xasprintf("%s/work", s->dir);
}

static char *lock_path(const struct isd_session *s)
{
	return isd_xasprintf("%s/lock", s->dir);
}

static int write_json(const struct isd_session *s)
{
	_cleanup_free_ char *final = isd_xasprintf("%s/session.json", s->dir), *text = NULL;
	json_object *o = json_object_new_object(), *cmd = json_object_new_array();
	int r;

	json_object_object_add(o, "id", json_object_new_string(s->id));
	json_object_object_add(o, "project", json_object_new_string(s->project));
	json_object_object_add(o, "started_ns", json_object_new_int64(s->started_ns));
	json_object_object_add(o, "keep", json_object_new_boolean(s->keep));
	for (size_t i = 0; s->command && s->command[i]; i++)
		json_object_array_add(cmd, json_object_new_string(s->command[i]));
	json_object_object_add(o, "command", cmd);
	text = isd_xasprintf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
									      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	/* A session is only ever seen with its whole description. */
	r = isd_replace_file_at(AT_FDCWD, final, text, strlen(text), 0600, true);
	return r;
}

int isd_session_load(const char *root, const char *id, struct isd_session *out)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s/session.json", root, id), *text = NULL;
	json_object *o, *v;
	int r;

	session_init(out);
	r = isd_read_file_at(AT_FDCWD, path, &text, NULL);
	if (r < 0)
		return isd_error(r, "reading %s", path);
	o = json_tokener_parse(text);
	if (!o || !json_object_object_get_ex(o, "project", &v) || !json_object_is_type(v, json_type_string) ||
	    json_object_get_string(v)[0] != '/') {
		json_object_put(o);
		return isd_error(0, "%s is not a session description (no absolute \"project\")", path);
	}
	out->id = isd_xstrdup(id);
	out->dir = isd_xasprintf("%s/%s", root, id);
	out->project = isd_xstrdup(json_object_get_string(v));
	if (json_object_object_get_ex(o, "started_ns", &v))
		out->started_ns = json_object_get_int64(v);
	if (json_object_object_get_ex(o, "keep", &v))
		out->keep = json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "command", &v) && json_object_is_type(v, json_type_array))
		for (size_t i = 0; i < json_object_array_length(v); i++)
			isd_strv_push(&out->command, isd_xstrdup(json_object_get_string(json_object_array_get_idx(v, i))));
	json_object_put(o);
	return 0;
}

/* Every session id in root, sorted (half-created and half-removed
 * directories have no session.json or a dot name). */
static char **list_ids(const char *root)
{
	DIR *d = opendir(root);
	struct dirent *de;
	char **ids = NULL;
	size_t n = 0;

	while (d && (de = readdir(d))) {
		_cleanup_free_ char *json = NULL;

		if (strlen(de->d_name) != ID_LEN || !valid_id_prefix(de->d_name))
			continue;
		json = isd_xasprintf("%s/%s/session.json", root, de->d_name);
		if (access(json, F_OK) < 0)
			continue;
		isd_strv_push(&ids, isd_xstrdup(de->d_name));
		n++;
	}
	if (d)
		closedir(d);
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && strcmp(ids[k - 1], ids[k]) > 0; k--) {
			char *t = ids[k];
			ids[k] = ids[k - 1];
			ids[k - 1] = t;
		}
	return ids;
}

static int take_lock(struct isd_session *s)
{
	_cleanup_free_ char *path = lock_path(s);
	_cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return isd_error(-errno, "opening %s", path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		_cleanup_free_ char *msg = NULL;

		if (errno != EWOULDBLOCK)
			return isd_error(-errno, "locking %s", path);
		msg = isd_xasprintf("session %s (%s) is running: wait for its isd exec to end", s->id, s->project);
		return isd_error_raw(-EBUSY, msg);
	}
	s->lock_fd = isd_steal_fd(fd);
	return 0;
}

static void new_id(char id[ID_LEN + 1])
{
	unsigned char rnd[ID_LEN / 2];

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (size_t i = 0; i < sizeof(rnd); i++)
			rnd[i] = (unsigned char)((ts.tv_nsec >> (i * 5)) ^ getpid() ^ i);
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(id + 2 * i, 3, "%02x", rnd[i]);
}

int isd_session_create(const char *project, char *const *command, bool keep, struct isd_session *out)
{
	_cleanup_free_ char *root = NULL, *upper = NULL, *work = NULL;
	struct timespec ts;
	struct stat st;
	char id[ID_LEN + 1];
	int r;

	session_init(out);
	root = isd_session_root();
	if ((r = isd_mkdir_p(root, 0700)) < 0)
		return isd_error(r, "creating %s", root);
	for (int tries = 0;; tries++) {
		new_id(id);
		free(out->dir);
		out->dir = isd_xasprintf("%s/%s", root, id);
		if (mkdir(out->dir, 0700) == 0)
			break;
		if (errno != EEXIST || tries > 16) {
			r = isd_error(-errno, "creating %s", out->dir);
			goto fail;
		}
	}
	out->id = isd_xstrdup(id);
	out->project = isd_xstrdup(project);
	out->command = isd_strv_copy(command);
	out->keep = keep;
	/* Before the overlay exists, so that a host file changed while it is
	 * mounted has a ctime at or after it. */
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	out->started_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	/* Locked before session.json makes it visible: no one sees it
	 * stopped while it starts. */
	if ((r = take_lock(out)) < 0)
		goto fail;
	upper = isd_session_upper(out);
	work = isd_session_work(out);
	if (mkdir(upper, 0700) < 0 || mkdir(work, 0700) < 0) {
		r = isd_error(-errno, "creating %s", upper);
		goto fail;
	}
	/* The overlay's root shows the upper root's mode, not the project's;
	 * the session directory (0700) keeps others out either way. */
	if (stat(project, &st) < 0 || chmod(upper, st.st_mode & 07777) < 0) {
		r = isd_error(-errno, "giving %s the mode of %s", upper, project);
		goto fail;
	}
	if ((r = write_json(out)) < 0)
		goto fail;
	return 0;
fail:
	if (out->dir && out->id)
		(void)isd_session_remove(out);
	isd_session_free(out);
	return r;
}

int isd_session_for_workspace(const char *workspace, const char *id, char *const *command, bool keep,
			      struct isd_session *out)
{
	int r = id ? isd_session_open(id, true, out) : isd_session_create(workspace, command, keep, out);

	if (r < 0)
		return r;
	if (isd_path_below(out->dir, workspace)) {
		r = isd_error(-EINVAL, "--workspace %s:cow: the session directory %s lies inside the workspace; "
				       "set XDG_STATE_HOME outside it", workspace, out->dir);
		isd_session_remove(out);
		isd_session_free(out);
		return r;
	}
	return 0;
}

int isd_session_open(const char *id, bool lock, struct isd_session *out)
{
	_cleanup_free_ char *root = NULL, *found = NULL, *others = NULL;
	_cleanup_strv_ char **ids = NULL;
	size_t n = strlen(id), matches = 0;
	int r;

	session_init(out);
	raise_fd_limit();
	if (!valid_id_prefix(id))
		return isd_error(0, "'%s' is not a session id (12 hex digits, or a prefix of one)", id);
	root = isd_session_root();
	ids = list_ids(root);
	for (size_t i = 0; ids && ids[i]; i++) {
		char *joined;

		if (strncmp(ids[i], id, n))
			continue;
		matches++;
		if (!found) {
			found = isd_xstrdup(ids[i]);
			continue;
		}
		joined = isd_xasprintf("%s%s%s", others ? others : "", others ? ", " : "", ids[i]);
		free(others);
		others = joined;
	}
	if (matches == 0)
		return isd_error(-ENOENT, "no session %s in %s (isd session list shows them)", id, root);
	if (matches > 1)
		return isd_error(0, "session id %s is ambiguous: %s, %s", id, found, others);
	if ((r = isd_session_load(root, found, out)) < 0)
		return r;
	if (lock && (r = take_lock(out)) < 0) {
		isd_session_free(out);
		return r;
	}
	return 0;
}


static void local_time(int64_t ns, char *buf, size_t size);

/* After a crash there may be several sessions of a project, the newest
 * one empty: the newest session with changes is the one meant, and isd
 * says which it took (on stderr, so that a diff stays a diff). */
int isd_session_find_latest(const char *dir, bool lock, struct isd_session *out)
{
	_cleanup_free_ char *root = NULL, *best = NULL, *newest = NULL;
	_cleanup_strv_ char **ids = NULL;
	int64_t best_ns = INT64_MIN, newest_ns = INT64_MIN;
	size_t best_count = 0, others = 0;
	bool best_changed = false;
	char when[32];
	int r;

	session_init(out);
	raise_fd_limit();
	root = isd_session_root();
	ids = list_ids(root);
	for (size_t i = 0; ids && ids[i]; i++) {
		struct isd_session s;
		size_t count = 0;
		bool changed;

		if (isd_session_load(root, ids[i], &s) < 0)
			continue;
		if (!isd_path_under(dir, s.project)) {
			isd_session_free(&s);
			continue;
		}
		others++;
		/* A session that cannot be counted may hold anything. */
		changed = isd_session_count_changes(&s, &count) < 0 || count > 0;
		if (s.started_ns >= newest_ns) {
			newest_ns = s.started_ns;
			free(newest);
			newest = isd_xstrdup(s.id);
		}
		if ((changed && !best_changed) || (changed == best_changed && s.started_ns >= best_ns)) {
			best_ns = s.started_ns;
			best_changed = changed;
			best_count = count;
			free(best);
			best = isd_xstrdup(s.id);
		}
		isd_session_free(&s);
	}
	isd_error_clear();
	if (!best)
		return isd_error(-ENOENT, "no session for %s (isd session list shows them all; give an ID)", dir);
	if ((r = isd_session_load(root, best, out)) < 0)
		return r;
	local_time(out->started_ns, when, sizeof(when));
	fprintf(stderr, "isd: session %s of %s (started %s, %zu change%s)", out->id, out->project, when, best_count,
		best_count == 1 ? "" : "s");
	if (strcmp(best, newest))
		fprintf(stderr, "; the newer session %s has no changes", newest);
	if (others > 1)
		fprintf(stderr, "; %zu other session%s of this project: isd session list", others - 1, others == 2 ? "" : "s");
	fputc('\n', stderr);
	if (lock && (r = take_lock(out)) < 0) {
		isd_session_free(out);
		return r;
	}
	return 0;
}

int isd_session_from_arg(const char *arg, bool lock, struct isd_session *out, bool *consumed)
{
	_cleanup_free_ char *root = NULL, *cwd = NULL;
	_cleanup_strv_ char **ids = NULL;
	int r;

	*consumed = false;
	if (arg && valid_id_prefix(arg)) {
		root = isd_session_root();
		ids = list_ids(root);
		for (size_t i = 0; ids && ids[i]; i++)
			if (!strncmp(ids[i], arg, strlen(arg))) {
				*consumed = true;
				return isd_session_open(arg, lock, out);
			}
	}
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return isd_error(-errno, "finding the current directory");
	r = isd_session_find_latest(cwd, lock, out);
	return r;
}

bool isd_session_is_running(const struct isd_session *s)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;

	if (s->lock_fd >= 0)
		return true;
	path = lock_path(s);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	return flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
}

static int count_changes(void *arg, uint64_t *count)
{
	const struct isd_session *s = arg;
	_cleanup_free_ char *upper = isd_session_upper(s);
	_cleanup_close_ int pfd = open(s->project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int ufd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct isd_changes c;
	int r;

	raise_fd_limit();
	if (pfd < 0)
		return isd_error(-errno, "opening the project %s of session %s", s->project, s->id);
	if (ufd < 0)
		return isd_error(-errno, "opening %s", upper);
	r = isd_changes_collect(pfd, ufd, &c);
	if (r < 0)
		return r;
	*count = isd_changes_count(&c);
	isd_changes_free(&c);
	return 0;
}

/* An upper layer without an entry holds no change (isd_changes_collect
 * reads nothing else), and saying so needs no owner's view, whose
 * namespace costs a fork and, with a subordinate range, newuidmap and
 * newgidmap: at the end of every run that changed nothing.  One the
 * caller cannot read (the payload chmod'ed the workspace's root, which
 * copies it up) is counted the long way. */
static bool upper_empty(const struct isd_session *s)
{
	_cleanup_free_ char *upper = isd_session_upper(s);
	int fd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	bool empty = true;
	DIR *d;

	if (fd < 0)
		return false;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return false;
	}
	errno = 0;
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	empty = empty && errno == 0;
	closedir(d);
	return empty;
}

int isd_session_count_changes(const struct isd_session *s, size_t *count)
{
	uint64_t n = 0;
	int r;

	if (upper_empty(s)) {
		*count = 0;
		return 0;
	}
	r = isd_owner_view_call(count_changes, (void *)s, &n);

	*count = (size_t)n;
	return r;
}

void isd_session_finish(struct isd_session *s)
{
	size_t count = 0;
	int r = isd_session_count_changes(s, &count);

	if (r < 0) {
		isd_warn("session %s kept: %s", s->id, isd_error_message());
	} else if (count == 0 && !s->keep) {
		isd_session_keep_log(s);
		if (isd_session_remove(s) < 0)
			isd_warn("%s", isd_error_message());
	} else {
		/* What the line below promises is on disk before it is said: the
		 * agent's last writes may still be only in the page cache. */
		_cleanup_free_ char *upper = isd_session_upper(s);
		_cleanup_close_ int fd = open(upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || syncfs(fd) < 0)
			isd_warn("session %s: flushing %s to disk: %s", s->id, upper, strerror(errno));
		if (count == 0)
			/* Kept for --workspace-keep, or for agent state it holds
			 * (said in the line before): no project change to count. */
			fprintf(stderr, "isd: session %s is kept, with no change to %s: isd diff %s, isd discard %s\n", s->id,
				s->project, s->id, s->id);
		else
			fprintf(stderr, "isd: session %s keeps %zu change%s to %s: isd diff %s, isd apply %s, isd discard %s\n",
				s->id, count, count == 1 ? "" : "s", s->project, s->id, s->id, s->id);
	}
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	s->lock_fd = -1;
}

int isd_session_remove(struct isd_session *s)
{
	_cleanup_free_ char *root = isd_xstrdup(s->dir), *name = NULL;
	_cleanup_close_ int rootfd = -1;
	char *slash = strrchr(root, '/');
	int r;

	if (!slash)
		return isd_error(0, "removing session %s: %s is not a path", s->id, s->dir);
	*slash = '\0';
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return isd_error(-errno, "removing session %s: opening %s", s->id, root);
	/* Gone from every listing at once; the slow removal of a big upper
	 * layer that is interrupted leaves only a dot directory behind. */
	name = isd_xasprintf(".removing-%s", s->id);
	if (renameat(rootfd, s->id, rootfd, name) < 0)
		return isd_error(-errno, "removing session %s", s->id);
	r = isd_rm_rf_at(rootfd, name);
	if (r < 0)
		return r;
	return 0;
}

/* ------------------------------------------------------------------ */
/* isd session list, isd discard                                       */

static uint64_t tree_bytes(int dfd, const char *name)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	uint64_t sum = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d)
		return 0;
	fd = -1;
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		sum += (uint64_t)st.st_blocks * 512;
		if (S_ISDIR(st.st_mode))
			sum += tree_bytes(dirfd(d), de->d_name);
	}
	closedir(d);
	return sum;
}

static void local_time(int64_t ns, char *buf, size_t size)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, size, "?");
}

static int session_list(bool as_json)
{
	_cleanup_free_ char *root = NULL;
	_cleanup_strv_ char **ids = NULL;
	json_object *arr = json_object_new_array();
	int r;

	root = isd_session_root();
	ids = list_ids(root);
	if (!as_json)
		printf("%-12s  %-19s  %-7s  %7s  %8s  %11s  %7s  %7s  %s\n", "ID", "STARTED", "STATE", "CHANGES", "COMMANDS",
		       "CONNECTIONS", "SIZE", "LIMIT", "PROJECT");
	for (size_t i = 0; ids && ids[i]; i++) {
		struct isd_session s;
		_cleanup_free_ char *upper_name = isd_xasprintf("%s/upper", ids[i]);
		_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		char started[32], size[32], changes[32] = "?", limit[32] = "-", commands[32] = "-", conns[32] = "-";
		bool running, frozen;
		uint64_t bytes, bound;
		pid_t watcher;
		size_t count, n_commands = 0, n_conns = 0;
		int rc_commands;

		if (isd_session_load(root, ids[i], &s) < 0)
			continue;
		running = isd_session_is_running(&s);
		/* --storage-opt size= of its last run (src/storage-watch.c) */
		if (isd_storage_read_state(s.dir, &bound, &watcher, &frozen) < 0)
			bound = 0, frozen = false;
		frozen = frozen && running;
		if (bound)
			isd_format_size(bound, limit, sizeof(limit), ISD_SIZE_COMPACT);
		bytes = rootfd >= 0 ? tree_bytes(rootfd, upper_name) : 0;
		r = isd_session_count_changes(&s, &count);
		if (r == 0)
			snprintf(changes, sizeof(changes), "%zu", count);
		rc_commands = isd_activity_count(s.dir, &n_commands, &n_conns);
		if (rc_commands == 0) {
			snprintf(commands, sizeof(commands), "%zu", n_commands);
			snprintf(conns, sizeof(conns), "%zu", n_conns);
		}
		local_time(s.started_ns, started, sizeof(started));
		isd_format_size(bytes, size, sizeof(size), ISD_SIZE_COMPACT);
		if (as_json) {
			json_object *o = json_object_new_object(), *cmd = json_object_new_array();

			json_object_object_add(o, "id", json_object_new_string(s.id));
			json_object_object_add(o, "project", json_object_new_string(s.project));
			json_object_object_add(o, "started", json_object_new_string(started));
			json_object_object_add(o, "started_ns", json_object_new_int64(s.started_ns));
			json_object_object_add(o, "state", json_object_new_string(frozen ? "frozen" : running ? "running" : "stopped"));
			json_object_object_add(o, "size_limit", json_object_new_int64((int64_t)bound));
			json_object_object_add(o, "changes", r == 0 ? json_object_new_int64((int64_t)count) : NULL);
			json_object_object_add(o, "commands", rc_commands == 0 ? json_object_new_int64((int64_t)n_commands) : NULL);
			json_object_object_add(o, "connections", rc_commands == 0 ? json_object_new_int64((int64_t)n_conns) : NULL);
			json_object_object_add(o, "upper_bytes", json_object_new_int64((int64_t)bytes));
			json_object_object_add(o, "keep", json_object_new_boolean(s.keep));
			for (size_t k = 0; s.command && s.command[k]; k++)
				json_object_array_add(cmd, json_object_new_string(s.command[k]));
			json_object_object_add(o, "command", cmd);
			json_object_array_add(arr, o);
		} else {
			printf("%-12s  %-19s  %-7s  %7s  %8s  %11s  %7s  %7s  %s\n", s.id, started,
			       frozen ? "frozen" : running ? "running" : "stopped", changes, commands, conns, size, limit,
			       s.project);
		}
		isd_session_free(&s);
	}
	isd_error_clear();
	if (as_json)
		puts(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(arr);
	return 0;
}

static void session_usage(FILE *out)
{
	fputs("Usage: isd session list [--json]\n"
	      "       isd session prune [--dry-run]\n"
	      "\n"
	      "Copy-on-write workspace sessions (isd exec --workspace DIR:cow): id, start,\n"
	      "running or stopped, changes not applied yet, commands run and connections made\n"
	      "(isd log), size of the upper layer, project.\n"
	      "prune removes every stopped session without changes, and half-removed ones.\n"
	      "See also: isd diff, isd apply, isd discard.\n",
	      out);
}

static int session_prune_cmd(int argc, char **argv)
{
	static const struct isd_cli_flag flags[] = {{"--dry-run", 'n', false, 1}, {0}};
	static const struct isd_cli_command cmd = {"session prune", session_usage, flags, 0};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);
	bool dry_run = false;

	while (isd_cli_next(&a))
		dry_run = true;
	if (a.exit >= 0)
		return a.exit;
	if (isd_session_prune(dry_run) < 0) {
		isd_error_print("session prune failed");
		return ISD_EXIT_FAILURE;
	}
	return 0;
}

static int session_list_cmd(int argc, char **argv)
{
	static const struct isd_cli_flag flags[] = {{"--json", 0, false, 1}, {0}};
	static const struct isd_cli_command cmd = {"session list", session_usage, flags, 0};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);
	bool json = false;

	while (isd_cli_next(&a))
		json = true;
	if (a.exit >= 0)
		return a.exit;
	if (session_list(json) < 0) {
		isd_error_print("session list failed");
		return ISD_EXIT_FAILURE;
	}
	return 0;
}

int isd_session_cmd_session(int argc, char **argv)
{
	static const struct isd_cli_subcommand subs[] = {
		{"list", session_list_cmd}, {"ls", session_list_cmd}, {"prune", session_prune_cmd}, {0}};

	return isd_cli_dispatch("session", session_usage, subs, argc, argv);
}

/* isd discard --all: every stopped session of the current directory's
 * project; a running one is named and left alone. */
static int discard_all(void)
{
	_cleanup_free_ char *root = isd_session_root(), *cwd = getcwd(NULL, 0);
	_cleanup_strv_ char **ids = list_ids(root);
	size_t done = 0, running = 0;
	int r = 0;

	if (!cwd)
		return isd_error(-errno, "finding the current directory");
	for (size_t i = 0; ids && ids[i]; i++) {
		struct isd_session s;

		if (isd_session_load(root, ids[i], &s) < 0)
			continue;
		if (isd_path_under(cwd, s.project)) {
			isd_session_free(&s);
			if (isd_session_open(ids[i], true, &s) < 0) {
				fprintf(stderr, "isd: discard: session %s is running: left alone\n", ids[i]);
				running++;
				continue;
			}
			if ((r = isd_session_remove(&s)) < 0) {
				isd_session_free(&s);
				return r;
			}
			printf("discarded session %s (%s)\n", s.id, s.project);
			done++;
		}
		isd_session_free(&s);
	}
	isd_error_clear();
	if (done == 0 && running == 0)
		return isd_error(-ENOENT, "no session for %s (isd session list shows them all)", cwd);
	return 0;
}

static void discard_usage(FILE *out)
{
	fputs("Usage: isd discard [ID | --all]\n\nRemove a stopped session with its changes (without ID: the latest\n"
	      "session with changes of the current directory's project; --all: every stopped\n"
	      "session of it; isd session list shows them).\n",
	      out);
}

int isd_session_cmd_discard(int argc, char **argv)
{
	static const struct isd_cli_flag flags[] = {{"--all", 0, false, 1}, {0}};
	static const struct isd_cli_command cmd = {"discard", discard_usage, flags, 1};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);
	const char *id = NULL;
	bool all = false;
	struct isd_session s;
	int r;

	while (isd_cli_next(&a)) {
		if (a.id == ISD_CLI_OPERAND)
			id = a.value;
		else
			all = true;
	}
	if (a.exit >= 0)
		return a.exit;
	if (all && id)
		return isd_cli_usage_error(&cmd, "either a session ID or --all");
	if (all) {
		if (discard_all() < 0) {
			isd_error_print("discard failed");
			return ISD_EXIT_FAILURE;
		}
		return 0;
	}
	/* Only ever the session named, never a guess from a mistyped id. */
	if (id) {
		r = isd_session_open(id, true, &s);
	} else {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);

		r = cwd ? isd_session_find_latest(cwd, true, &s) : isd_error(-errno, "finding the current directory");
	}
	if (r == 0) {
		r = isd_session_remove(&s);
		if (r == 0)
			printf("discarded session %s (%s)\n", s.id, s.project);
		isd_session_free(&s);
	}
	if (r < 0) {
		isd_error_print("discard failed");
		return ISD_EXIT_FAILURE;
	}
	return 0;
}
