/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The containers' state under --root: ROOT/ID/state.json (replaced in one
 * rename, so a reader never sees half of it) and ROOT/ID/exec.fifo, the
 * start gate, there from create until start.  Every command that changes
 * a container holds an exclusive flock on its directory.  What the state
 * says is checked against the system when read: the init's pid counts
 * only while its start time is the one recorded (a pid can be reused).
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "isd/fsutil.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STATE_FILE "state.json"

bool rt_cgroup_frozen(const char *cg)
{
	_cleanup_free_ char *path = NULL, *v = NULL;

	if (!cg)
		return false;
	path = isd_xasprintf("%s/cgroup.freeze", cg);
	return isd_read_file_at(AT_FDCWD, path, &v, NULL) == 0 && v[0] == '1';
}

const char *rt_status_name(enum rt_status s)
{
	switch (s) {
	case RT_CREATING:
		return "creating";
	case RT_CREATED:
		return "created";
	case RT_RUNNING:
		return "running";
	case RT_PAUSED:
		return "paused";
	case RT_STOPPED:
		return "stopped";
	}
	return "unknown";
}

int rt_check_id(const char *id)
{
	if (!id || !id[0])
		return isd_error(0, "a container id is needed");
	if (strcmp(id, ".") == 0 || strcmp(id, "..") == 0 || strlen(id) > 1024)
		return isd_error(0, "invalid container id '%s'", id);
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("_+.-", *p)))
			return isd_error(0, "invalid container id '%s': only letters, digits and _ + . - are allowed", id);
	return 0;
}

int rt_root_open(bool create, int *out)
{
	int fd;

	if (!rt_global.root)
		return RT_ERR(-ENOENT, "finding the state directory: $XDG_RUNTIME_DIR is not set (fix: --root DIR)");
	if (create) {
		int r = isd_mkdir_p(rt_global.root, 0700);
		if (r < 0)
			return isd_error(r, "creating the state directory %s", rt_global.root);
	}
	fd = open(rt_global.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return isd_error(-errno, "opening the state directory %s", rt_global.root);
	*out = fd;
	return 0;
}

int rt_container_lock(const char *id, bool create, int *dirfd)
{
	int r = rt_container_open(id, create, dirfd);

	while (r == 0 && flock(*dirfd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			r = isd_error(-errno, "locking the state of container %s", id);
			close(*dirfd);
			*dirfd = -1;
		}
	}
	return r;
}

int rt_container_open(const char *id, bool create, int *dirfd)
{
	_cleanup_close_ int root = -1;
	int fd, r;

	r = rt_check_id(id);
	if (r < 0)
		return r;
	r = rt_root_open(create, &root);
	if (r == -ENOENT && !create && rt_global.root)
		return RT_ERR(-ENOENT, "container %s does not exist", id);
	if (r < 0)
		return r;
	if (create && mkdirat(root, id, 0700) < 0) {
		if (errno == EEXIST)
			return RT_ERR(-EEXIST, "container %s already exists (in %s)", id, rt_global.root);
		return isd_error(-errno, "creating the state of container %s in %s", id, rt_global.root);
	}
	fd = openat(root, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return RT_ERR(-ENOENT, "container %s does not exist", id);
		return isd_error(-errno, "opening the state of container %s", id);
	}
	*dirfd = fd;
	return 0;
}

uint64_t rt_pid_start_time(pid_t pid)
{
	char path[64];
	_cleanup_free_ char *stat = NULL;
	const char *p;
	unsigned long long start;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pid <= 0 || isd_read_file_at(AT_FDCWD, path, &stat, NULL) < 0)
		return 0;
	/* after the command's name, which may hold anything but ends at
	 * the last ')': state is field 3, starttime field 22 */
	p = strrchr(stat, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &start) != 1)
		return 0;
	/* a zombie has exited: stopped, as runc says */
	if (sscanf(p + 1, " %c", path) == 1 && (path[0] == 'Z' || path[0] == 'X'))
		return 0;
	return start;
}

int rt_state_pidfd(const struct rt_state *st)
{
	int fd;

	if (st->pid <= 0 || !st->pid_start)
		return -ESRCH;
	fd = (int)syscall(SYS_pidfd_open, st->pid, 0);
	if (fd < 0)
		return -errno;
	/* checked after the pidfd is open: a match now holds for the fd */
	if (rt_pid_start_time(st->pid) != st->pid_start) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

static char *get_string(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return isd_xstrdup(json_object_get_string(v));
}

int rt_state_read(int dirfd, const char *id, struct rt_state *st)
{
	_cleanup_free_ char *text = NULL;
	json_object *o, *v;
	struct stat sb;
	int r;

	memset(st, 0, sizeof(*st));
	r = isd_read_file_at(dirfd, STATE_FILE, &text, NULL);
	if (r == -ENOENT) {
		/* a create that has not written it yet, or died before */
		st->id = isd_xstrdup(id);
		st->status = RT_CREATING;
		return 0;
	}
	if (r < 0)
		return isd_error(r, "reading the state of container %s", id);
	o = json_tokener_parse(text);
	if (!o)
		return RT_ERR(-EINVAL, "reading the state of container %s: %s/%s/%s is not JSON", id, rt_global.root, id,
				 STATE_FILE);
	st->id = isd_xstrdup(id);
	st->bundle = get_string(o, "bundle");
	st->rootfs = get_string(o, "rootfs");
	st->created = get_string(o, "created");
	st->owner = get_string(o, "owner");
	st->oci_version = get_string(o, "ociVersion");
	st->cgroup = get_string(o, "isd.cgroup");
	if (json_object_object_get_ex(o, "isd.hooks", &v))
		st->hooks_json = isd_xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	if (json_object_object_get_ex(o, "pid", &v))
		st->pid = (pid_t)json_object_get_int(v);
	if (json_object_object_get_ex(o, "isd.pidStart", &v))
		st->pid_start = (uint64_t)json_object_get_uint64(v);
	if (json_object_object_get_ex(o, "annotations", &v) && json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, val)
			isd_strv_push(&st->annotations, isd_xasprintf("%s=%s", key, json_object_get_string(val)));
	}
	json_object_put(o);
	if (st->pid > 0 && rt_pid_start_time(st->pid) == st->pid_start && st->pid_start)
		st->status = fstatat(dirfd, RT_FIFO, &sb, AT_SYMLINK_NOFOLLOW) == 0 ? RT_CREATED : RT_RUNNING;
	else
		st->status = RT_STOPPED;
	if (st->status == RT_RUNNING && rt_cgroup_frozen(st->cgroup))
		st->status = RT_PAUSED;
	return 0;
}

static json_object *state_object(const struct rt_state *st, bool internal)
{
	json_object *o = json_object_new_object(), *ann = json_object_new_object();
	/* creating: the hooks' view, the init there */
	bool alive = st->status == RT_CREATED || st->status == RT_RUNNING || st->status == RT_PAUSED ||
		     st->status == RT_CREATING;

	json_object_object_add(o, "ociVersion", json_object_new_string(st->oci_version ? st->oci_version : "1.0.2"));
	json_object_object_add(o, "id", json_object_new_string(st->id));
	json_object_object_add(o, "pid", json_object_new_int(internal || alive ? st->pid : 0));
	json_object_object_add(o, "status", json_object_new_string(rt_status_name(st->status)));
	json_object_object_add(o, "bundle", json_object_new_string(st->bundle ? st->bundle : ""));
	json_object_object_add(o, "rootfs", json_object_new_string(st->rootfs ? st->rootfs : ""));
	json_object_object_add(o, "created", json_object_new_string(st->created ? st->created : ""));
	json_object_object_add(o, "owner", json_object_new_string(st->owner ? st->owner : ""));
	for (size_t i = 0; st->annotations && st->annotations[i]; i++) {
		_cleanup_free_ char *key = isd_xstrdup(st->annotations[i]);
		char *eq = strchr(key, '=');
		if (!eq)
			continue;
		*eq = '\0';
		json_object_object_add(ann, key, json_object_new_string(eq + 1));
	}
	json_object_object_add(o, "annotations", ann);
	if (internal) {
		json_object_object_add(o, "isd.pidStart", json_object_new_uint64(st->pid_start));
		if (st->cgroup)
			json_object_object_add(o, "isd.cgroup", json_object_new_string(st->cgroup));
		if (st->hooks_json)
			json_object_object_add(o, "isd.hooks", json_tokener_parse(st->hooks_json));
	}
	return o;
}

char *rt_state_json(const struct rt_state *st, bool pretty)
{
	json_object *o = state_object(st, false);
	char *s = isd_xstrdup(json_object_to_json_string_ext(
		o, (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN) |
			   JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

int rt_state_write(int dirfd, const struct rt_state *st)
{
	json_object *o = state_object(st, true);
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	int r = isd_replace_file_at(dirfd, STATE_FILE, s, strlen(s), 0600, false);

	json_object_put(o);
	return r < 0 ? isd_error_prefix(r, "saving the state of container %s: ", st->id) : 0;
}

void rt_state_free(struct rt_state *st)
{
	free(st->id);
	free(st->bundle);
	free(st->rootfs);
	free(st->created);
	free(st->owner);
	free(st->oci_version);
	free(st->cgroup);
	free(st->hooks_json);
	isd_strv_free(st->annotations);
	memset(st, 0, sizeof(*st));
}

int rt_container_remove(int rootfd, const char *id)
{
	int r = isd_rm_rf_at(rootfd, id);

	return r < 0 ? isd_error_prefix(r, "removing the state of container %s: ", id) : 0;
}

static void push_pid(pid_t **pids, size_t *n, size_t *cap, pid_t pid)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*pids = isd_xrealloc(*pids, *cap * sizeof(**pids));
	}
	(*pids)[(*n)++] = pid;
}

static bool pid_ns_of(pid_t pid, struct stat *st)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	return stat(path, st) == 0;
}

/* Whether pid is pid 1 of its pid namespace (NSpid's last field). */
static bool is_ns_init(pid_t pid)
{
	char path[64];
	_cleanup_free_ char *text = NULL;
	const char *line, *last;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (isd_read_file_at(AT_FDCWD, path, &text, NULL) < 0 || !(line = strstr(text, "\nNSpid:")))
		return false;
	line += 8;
	last = line;
	for (const char *p = line; *p && *p != '\n'; p++)
		if (*p == '\t' || *p == ' ')
			last = p + 1;
	return last[0] == '1' && (last[1] == '\n' || last[1] == '\0');
}

static void add_same_pid_ns(pid_t **pids, size_t *n, size_t *cap, const pid_t *all, size_t n_all, pid_t init)
{
	struct stat ns, self, other;
	size_t known = *n;

	if (!pid_ns_of((*pids)[1], &ns) || !pid_ns_of(getpid(), &self) || ns.st_ino == self.st_ino)
		return; /* no pid namespace of its own */
	/* a pid namespace it joined (a pod's) holds others' processes too */
	if (!is_ns_init(init))
		return;
	for (size_t i = 0; i < n_all; i++) {
		bool seen = false;
		for (size_t k = 0; k < known && !seen; k++)
			seen = (*pids)[k] == all[i];
		if (!seen && pid_ns_of(all[i], &other) && other.st_ino == ns.st_ino && other.st_dev == ns.st_dev)
			push_pid(pids, n, cap, all[i]);
	}
}

pid_t rt_pid_parent(long pid)
{
	char path[64], buf[512], *p;
	_cleanup_close_ int fd = -1;
	ssize_t n;
	long ppid;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %*c %ld", &ppid) == 1 ? (pid_t)ppid : -1;
}

/* init and its descendants: every process of the container, since the
 * orphans of its pid namespace come to its init (and without one, init
 * is their subreaper).  From /proc/PID/stat, which init, not dumpable,
 * lets its owner read where /proc/PID/ns does not. */
pid_t *rt_container_pids(const struct rt_state *st, size_t *n)
{
	pid_t *pids = NULL, *all = NULL, *parents = NULL;
	size_t cap = 0, n_all = 0, cap_all = 0, cap_par = 0, n_par = 0;
	DIR *d;
	struct dirent *e;

	*n = 0;
	if (st->status != RT_CREATED && st->status != RT_RUNNING && st->status != RT_PAUSED)
		return NULL;
	push_pid(&pids, n, &cap, st->pid);
	d = opendir("/proc");
	while (d && (e = readdir(d))) {
		long pid = strtol(e->d_name, NULL, 10);
		if (pid > 0 && pid != st->pid) {
			push_pid(&all, &n_all, &cap_all, (pid_t)pid);
			push_pid(&parents, &n_par, &cap_par, rt_pid_parent(pid));
		}
	}
	if (d)
		closedir(d);
	/* breadth first: each round adds the children of what is known */
	for (size_t done = 0; done < *n; done++)
		for (size_t i = 0; i < n_all; i++)
			if (parents[i] == pids[done])
				push_pid(&pids, n, &cap, all[i]);
	/* and what exec started, whose parent is outside: by the pid
	 * namespace of init's first child (init's own is not readable) */
	if (*n > 1)
		add_same_pid_ns(&pids, n, &cap, all, n_all, st->pid);
	free(all);
	free(parents);
	return pids;
}
