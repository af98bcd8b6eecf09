/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent state store on disk (layout in include/isd/agent-state.h), and
 * the descriptor-based copies the merge, the backups and isd state restore
 * make: never through a symlink, always beneath the directory they start
 * from, written by rename.
 */
#define _GNU_SOURCE
#include "agent-state-internal.h"
#include "isd/fsutil.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "isd/path-util.h"

#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

char *state_root(void)
{
	return isd_xdg_path("XDG_STATE_HOME", ".local/state", "isd/agent-state");
}

/* ---- the store ---- */

void store_free(struct state_store *s)
{
	free(s->id);
	free(s->dir);
	free(s->agent);
	free(s->project);
	free(s->home);
	for (size_t i = 0; i < s->n_layers; i++)
		free(s->layers[i].path);
	free(s->layers);
	records_free(s->rec);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	memset(s, 0, sizeof(*s));
	s->lock_fd = s->dir_fd = -1;
}

/* in_place: over the existing file, without a new inode (a recycled
 * store, whose state.json is rewritten before the sandbox runs: a torn
 * write there loses nothing, the store being empty). */
static int save(struct state_store *s, bool in_place);

int store_save(struct state_store *s)
{
	return save(s, false);
}

static int save(struct state_store *s, bool in_place)
{
	json_object *o = json_object_new_object(), *layers = json_object_new_array();
	_cleanup_free_ char *final = isd_xasprintf("%s/state.json", s->dir);
	const char *text;
	int r;

	json_object_object_add(o, "id", json_object_new_string(s->id));
	json_object_object_add(o, "agent", json_object_new_string(s->agent));
	json_object_object_add(o, "project", json_object_new_string(s->project ? s->project : ""));
	json_object_object_add(o, "home", json_object_new_string(s->home ? s->home : ""));
	json_object_object_add(o, "started_ns", json_object_new_int64(s->started_ns));
	json_object_object_add(o, "merged", json_object_new_boolean(s->merged));
	json_object_object_add(o, "backup_bytes", json_object_new_int64((int64_t)s->backup_bytes));
	json_object_object_add(o, "backup_files", json_object_new_int64((int64_t)s->backup_files));
	json_object_object_add(o, "records", json_object_new_int64((int64_t)s->records));
	for (size_t i = 0; i < s->n_layers; i++) {
		json_object *l = json_object_new_object();
		json_object_object_add(l, "path", json_object_new_string(s->layers[i].path));
		json_object_object_add(l, "dir", json_object_new_boolean(s->layers[i].dir));
		json_object_array_add(layers, l);
	}
	json_object_object_add(o, "layers", layers);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	if (in_place) {
		_cleanup_close_ int fd = open(final, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		size_t len = strlen(text);

		if (fd >= 0 && pwrite(fd, text, len, 0) == (ssize_t)len && ftruncate(fd, (off_t)len) == 0) {
			json_object_put(o);
			return 0;
		}
	}
	r = isd_replace_file_at(AT_FDCWD, final, text, strlen(text), 0600, false);
	json_object_put(o);
	return r;
}

int store_save_recycled(struct state_store *s)
{
	return save(s, true);
}

/* The store directory's sticky bit: merged (a hint for the check before
 * every sandbox; state.json says it for sure). */
void store_mark_merged(struct state_store *s, bool merged)
{
	(void)chmod(s->dir, merged ? 01700 : 0700);
}

bool store_marked_merged(int root_fd, const char *id)
{
	struct stat st;
	return fstatat(root_fd, id, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_ISVTX);
}

static bool dir_empty(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	bool empty = d != NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	return empty;
}

bool store_recycle(struct state_store *s)
{
	_cleanup_free_ char *rootp = state_root();
	_cleanup_close_ int root = open(rootp, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (root < 0 || store_has_way_back(s))
		return false;
	for (size_t i = 0; i < s->n_layers; i++) {
		_cleanup_free_ char *up = isd_xasprintf("%zu/upper", i);
		if (s->layers[i].dir && !dir_empty(s->dir_fd, up))
			return false;
	}
	/* A spare is an empty, merged store of no layers until the next
	 * sandbox writes its own record: whatever happens between, no
	 * merge takes its leftovers (the copies of state files). */
	{
		size_t n = s->n_layers;
		s->n_layers = 0;
		s->merged = true;
		if (save(s, true) < 0) {
			isd_error_clear();
			s->n_layers = n;
			return false;
		}
		s->n_layers = n;
	}
	/* Unlocked first: whoever takes the spare locks it. */
	if (s->lock_fd >= 0) {
		close(s->lock_fd);
		s->lock_fd = -1;
	}
	return renameat2(root, s->id, root, STORE_SPARE, RENAME_NOREPLACE) == 0;
}

static bool valid_id(const char *s)
{
	return strlen(s) == 12 && strspn(s, "0123456789abcdef") == 12;
}

int store_load(const char *root, const char *id, struct state_store *s)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	json_object *o, *v, *layers;
	int r;

	memset(s, 0, sizeof(*s));
	s->lock_fd = s->dir_fd = -1;
	if (!valid_id(id))
		return isd_error(-EINVAL, "agent state %s: not a store id", id);
	s->dir = isd_xasprintf("%s/%s", root, id);
	path = isd_xasprintf("%s/state.json", s->dir);
	r = isd_read_file_at(AT_FDCWD, path, &text, NULL);
	if (r < 0)
		return isd_error(r, "reading %s", path);
	o = json_tokener_parse(text);
	if (!o || !json_object_object_get_ex(o, "layers", &layers) || !json_object_is_type(layers, json_type_array)) {
		json_object_put(o);
		return isd_error(-EINVAL, "%s: not an agent state record", path);
	}
	s->id = isd_xstrdup(id);
	s->agent = isd_xstrdup(json_object_object_get_ex(o, "agent", &v) ? json_object_get_string(v) : "");
	s->project = isd_xstrdup(json_object_object_get_ex(o, "project", &v) ? json_object_get_string(v) : "");
	s->home = isd_xstrdup(json_object_object_get_ex(o, "home", &v) ? json_object_get_string(v) : "");
	s->started_ns = json_object_object_get_ex(o, "started_ns", &v) ? json_object_get_int64(v) : 0;
	s->merged = json_object_object_get_ex(o, "merged", &v) && json_object_get_boolean(v);
	s->backup_bytes = json_object_object_get_ex(o, "backup_bytes", &v) ? (uint64_t)json_object_get_int64(v) : 0;
	s->backup_files = json_object_object_get_ex(o, "backup_files", &v) ? (uint64_t)json_object_get_int64(v) : 0;
	s->records = json_object_object_get_ex(o, "records", &v) ? (uint64_t)json_object_get_int64(v) : 0;
	s->n_layers = json_object_array_length(layers);
	s->layers = isd_xcalloc(s->n_layers ? s->n_layers : 1, sizeof(*s->layers));
	for (size_t i = 0; i < s->n_layers; i++) {
		json_object *l = json_object_array_get_idx(layers, i);
		s->layers[i].path = isd_xstrdup(json_object_object_get_ex(l, "path", &v) ? json_object_get_string(v) : "");
		s->layers[i].dir = json_object_object_get_ex(l, "dir", &v) && json_object_get_boolean(v);
		if (s->layers[i].path[0] != '/') {
			json_object_put(o);
			return isd_error(-EINVAL, "%s: layer %zu has no absolute path", path, i);
		}
	}
	json_object_put(o);
	s->dir_fd = open(s->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0)
		return isd_error(-errno, "opening %s", s->dir);
	return 0;
}

/* LOCK_EX: the sandbox that uses it, or a command working on it. */
int store_lock(struct state_store *s, bool wait)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/lock", s->dir);

	s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->lock_fd < 0)
		return isd_error(-errno, "opening %s", path);
	if (flock(s->lock_fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
		int r = -errno;
		close(s->lock_fd);
		s->lock_fd = -1;
		return r == -EWOULDBLOCK ? isd_error(-EBUSY, "agent state %s is in use by a running sandbox", s->id)
					 : isd_error(r, "locking %s", path);
	}
	return 0;
}

int store_remove(struct state_store *s)
{
	_cleanup_close_ int root = -1;
	_cleanup_free_ char *rootp = state_root();

	root = open(rootp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	return isd_rm_rf_at(root, s->id);
}

char **store_ids(const char *root)
{
	DIR *d = opendir(root);
	char **ids = NULL;
	struct dirent *de;

	if (!d)
		return NULL;
	while ((de = readdir(d)))
		if (valid_id(de->d_name))
			isd_strv_push(&ids, isd_xstrdup(de->d_name));
	closedir(d);
	/* Ids are random: sorted only so that every command walks them alike. */
	for (size_t i = 0; ids && ids[i]; i++)
		for (size_t k = i + 1; ids[k]; k++)
			if (strcmp(ids[k], ids[i]) < 0) {
				char *t = ids[i];
				ids[i] = ids[k];
				ids[k] = t;
			}
	return ids;
}

/* Guards match paths relative to the home of the run, whatever HOME the
 * command that reads the store has. */
char *layer_home_rel(const struct state_store *s, size_t i, const char *rel)
{
	const char *home = s->home && s->home[0] ? s->home : getenv("HOME");
	const char *p = s->layers[i].path;
	const char *rest = home && home[0] ? isd_path_rest(p, home) : NULL;

	if (rest && rest[0])
		p = rest;
	else if (p[0] == '/')
		p++;
	return rel && rel[0] ? isd_xasprintf("%s/%s", p, rel) : isd_xstrdup(p);
}

const struct isd_agent *store_agent(const struct state_store *s)
{
	return isd_agent_find(isd_agents(), s->agent);
}

/* ---- descriptors and copies ---- */

int open_parent_beneath(int root, const char *rel, const char **name)
{
	const char *slash = strrchr(rel, '/');
	_cleanup_free_ char *dir = NULL;
	int fd;

	*name = slash ? slash + 1 : rel;
	if (!slash)
		return fcntl(root, F_DUPFD_CLOEXEC, 3) < 0 ? -errno : fcntl(root, F_DUPFD_CLOEXEC, 3);
	dir = strndup(rel, (size_t)(slash - rel));
	fd = isd_openat2(root, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	return fd < 0 ? -errno : fd;
}

int host_file_parent(const char *path, char **name)
{
	_cleanup_free_ char *real = realpath(path, NULL);
	const char *p = real ? real : path;
	const char *slash = strrchr(p, '/');
	_cleanup_free_ char *dir = strndup(p, (size_t)(slash - p));
	int fd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	*name = isd_xstrdup(slash + 1);
	return fd < 0 ? -errno : fd;
}

int copy_file_into(int src_dfd, const char *src_name, int dst_dfd, const char *dst_name, mode_t mode)
{
	_cleanup_close_ int in = openat(src_dfd, src_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	_cleanup_close_ int out = -1;
	char buf[65536];
	ssize_t n = 0;
	struct stat st;

	if (in < 0)
		return -errno;
	out = openat(dst_dfd, dst_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0777);
	if (out < 0)
		return -errno;
	/* A reflink where the file system has them costs nothing. */
	if (ioctl(out, FICLONE, in) < 0)
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (isd_write_all(out, buf, (size_t)n) < 0)
				return -errno;
	if (n < 0)
		return -errno;
	/* The times go with the content: agents order sessions by them. */
	if (fstat(in, &st) == 0)
		(void)futimens(out, (const struct timespec[2]){st.st_atim, st.st_mtim});
	return 0;
}

int replace_file_text(int dfd, const char *name, const char *text, mode_t mode)
{
	return isd_replace_file_at(dfd, name, text, strlen(text), mode & 0777, false);
}
