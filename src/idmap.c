/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ids of a built image.  Package managers create files owned by many
 * users, so an image needs many ids: like podman's keep-id, inside 1000 is
 * the caller and every other id 0-65535 comes from the caller's subordinate
 * range.  Every operation on an image tree (extracting layers, copying,
 * removing) runs as root of a user namespace with this map, so the tree's
 * owners are the same whichever step wrote it.
 */
#define _GNU_SOURCE
#include "isd/image.h"
#include "userns.h"
#include "isd/process.h"
#include "isd/util.h"
#include "isd/fsutil.h"

#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define KEEP_ID 1000
/* Root maps its own ids only when it has at least the usual 65536. */
#define ROOT_MIN_IDS 65536

/* First range of name (or numeric uid) in a subuid/subgid file. */
static bool find_subid(const char *file, const char *name, uint32_t id, uint32_t *start, uint32_t *count)
{
	_cleanup_free_ char *text = NULL;
	char idstr[16], *save = NULL;

	if (isd_read_file_at(AT_FDCWD, file, &text, NULL) < 0)
		return false;
	snprintf(idstr, sizeof(idstr), "%u", id);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2;
		if (!c1)
			continue;
		*c1++ = '\0';
		c2 = strchr(c1, ':');
		if (!c2)
			continue;
		*c2++ = '\0';
		if ((name && !strcmp(line, name)) || !strcmp(line, idstr)) {
			if (isd_parse_uint32(c1, start) < 0 || isd_parse_uint32(c2, count) < 0 || *count == 0)
				continue;
			return true;
		}
	}
	return false;
}

static bool helper_present(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/usr/bin/%s", name);
	if (access(path, X_OK) == 0)
		return true;
	snprintf(path, sizeof(path), "/bin/%s", name);
	return access(path, X_OK) == 0;
}

/* keep-id layout over a subordinate range of count ids, all of it (as
 * podman does): inside 0-999 and 1001-count. */
static size_t keep_id_ranges(struct isd_id_range *r, uint32_t self, uint32_t start, uint32_t count)
{
	size_t n = 0;
	uint32_t low = count < KEEP_ID ? count : KEEP_ID;

	r[n++] = (struct isd_id_range){0, start, low};
	r[n++] = (struct isd_id_range){KEEP_ID, self, 1};
	if (count > KEEP_ID)
		r[n++] = (struct isd_id_range){KEEP_ID + 1, start + KEEP_ID, count - KEEP_ID};
	return n;
}

/* How many ids from 0 up exist in our namespace (root's own ids: all of
 * them on a host, fewer in a container that was given a part). */
static uint32_t ids_from_zero(const char *map_file)
{
	_cleanup_free_ char *text = NULL;
	char *save = NULL;

	if (isd_read_file_at(AT_FDCWD, map_file, &text, NULL) < 0)
		return 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long in, out, n;
		if (sscanf(line, "%lu %lu %lu", &in, &out, &n) == 3 && in == 0)
			return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	}
	return 0;
}

bool isd_idmap_maps(const struct isd_id_range *r, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (id >= r[i].inside && id - r[i].inside < r[i].count)
			return true;
	return false;
}

uint32_t isd_idmap_top(const struct isd_id_range *r, size_t n)
{
	uint32_t top = 0;

	for (size_t i = 0; i < n; i++)
		if (r[i].count && r[i].inside + (r[i].count - 1) > top)
			top = r[i].inside + (r[i].count - 1);
	return top;
}

int isd_idmap_for_caller(struct isd_idmap *map)
{
	const char *uid_file = getenv("ISD_SUBID_FILE_UID"), *gid_file = getenv("ISD_SUBID_FILE_GID");
	struct passwd *pw;
	uint32_t us = 0, uc = 0, gs = 0, gc = 0;

	memset(map, 0, sizeof(*map));
	map->caller_uid = getuid();
	map->caller_gid = getgid();

	/* Root that owns the ids (not `unshare -r`) maps all it has 1:1. */
	if (map->caller_uid == 0) {
		uint32_t nu = ids_from_zero("/proc/self/uid_map"), ng = ids_from_zero("/proc/self/gid_map");
		if (nu >= ROOT_MIN_IDS && ng >= ROOT_MIN_IDS) {
			map->uid[0] = (struct isd_id_range){0, 0, nu};
			map->gid[0] = (struct isd_id_range){0, 0, ng};
			map->n_uid = map->n_gid = 1;
			map->full = true;
			return 0;
		}
	}
	pw = getpwuid(map->caller_uid);
	if (map->caller_uid != 0 &&
	    find_subid(uid_file ? uid_file : "/etc/subuid", pw ? pw->pw_name : NULL, map->caller_uid, &us, &uc) &&
	    find_subid(gid_file ? gid_file : "/etc/subgid", pw ? pw->pw_name : NULL, map->caller_uid, &gs, &gc) &&
	    isd_userns_ids_mapped("/proc/self/uid_map", us, uc) && isd_userns_ids_mapped("/proc/self/gid_map", gs, gc) &&
	    helper_present("newuidmap") && helper_present("newgidmap")) {
		map->n_uid = keep_id_ranges(map->uid, map->caller_uid, us, uc);
		map->n_gid = keep_id_ranges(map->gid, map->caller_gid, gs, gc);
		map->full = true;
		return 0;
	}
	map->uid[0] = (struct isd_id_range){0, map->caller_uid, 1};
	map->gid[0] = (struct isd_id_range){0, map->caller_gid, 1};
	map->n_uid = map->n_gid = 1;
	map->full = false;
	return 0;
}

char *isd_idmap_format(const struct isd_idmap *map)
{
	char *s = isd_xstrdup("uid");

	for (int pass = 0; pass < 2; pass++) {
		const struct isd_id_range *r = pass ? map->gid : map->uid;
		size_t n = pass ? map->n_gid : map->n_uid;

		for (size_t i = 0; i < n; i++) {
			char *t = isd_xasprintf("%s%s%u:%u:%u", s, i ? "," : " ", r[i].inside, r[i].outside, r[i].count);
			free(s);
			s = t;
		}
		if (!pass) {
			char *t = isd_xasprintf("%s gid", s);
			free(s);
			s = t;
		}
	}
	return s;
}

struct result_msg {
	int32_t code;
	char text[ISD_ERROR_MAX];
};

static _Noreturn void child_run(const struct isd_idmap *map, int ready_w, int go_r, int res_w,
				int (*fn)(void *), void *arg)
{
	struct result_msg msg = {0};
	char c;
	int r;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		r = isd_error(-errno, "creating a user namespace for the image's ids");
		isd_userns_explain_failure(r);
		goto out;
	}
	(void)!write(ready_w, "r", 1);
	if (read(go_r, &c, 1) != 1)
		_exit(1);
	if (map->full) {
		r = isd_userns_become(0, 0);
		/* Changing ids cleared the parent-death signal. */
		if (r == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1))
			_exit(1);
	} else {
		r = isd_userns_write_own_maps(0, map->caller_uid, 0, map->caller_gid);
	}
	if (r < 0)
		goto out;
	/* Nothing mounted here may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		r = isd_error(-errno, "making the helper's mounts private");
		goto out;
	}
	r = fn(arg);
out:
	msg.code = r;
	if (r < 0)
		snprintf(msg.text, sizeof(msg.text), "%s", isd_error_message());
	(void)!write(res_w, &msg, sizeof(msg));
	_exit(r < 0 ? 1 : 0);
}

int isd_idmap_run(const struct isd_idmap *map, int (*fn)(void *arg), void *arg)
{
	int ready[2] = {-1, -1}, go[2] = {-1, -1}, res[2] = {-1, -1};
	struct result_msg msg = {0};
	int r = 0, status;
	pid_t pid;
	char c;

	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0) {
		r = isd_error(-errno, "creating pipes");
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		r = isd_error(-errno, "forking the id-mapped helper");
		goto out;
	}
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		close(res[0]);
		child_run(map, ready[1], go[0], res[1], fn, arg);
	}
	close(ready[1]);
	close(go[0]);
	close(res[1]);
	ready[1] = go[0] = res[1] = -1;
	if (read(ready[0], &c, 1) == 1) {
		if (map->full)
			r = isd_userns_write_child_maps(pid, map->uid, map->n_uid, map->gid, map->n_gid);
		if (r < 0)
			kill(pid, SIGKILL);
		else
			(void)!write(go[1], "g", 1);
	}
	close(go[1]);
	go[1] = -1;
	if (r == 0) {
		ssize_t n;
		do
			n = read(res[0], &msg, sizeof(msg));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(msg))
			r = isd_error(-EIO, "the id-mapped helper died");
		else if (msg.code < 0)
			r = isd_error_raw(msg.code, msg.text);
	}
	isd_wait_pid(pid, &status);
out:
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (go[i] >= 0)
			close(go[i]);
		if (res[i] >= 0)
			close(res[i]);
	}
	return r;
}

static int remove_fn(void *arg)
{
	const char *path = arg;
	_cleanup_free_ char *parent = isd_xstrdup(path);
	char *slash = strrchr(parent, '/');
	_cleanup_close_ int dfd = -1;
	int r;

	if (!slash || !slash[1])
		return isd_error(-EINVAL, "removing %s", path);
	*slash = '\0';
	dfd = open(parent[0] ? parent : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return isd_error(-errno, "opening %s", parent);
	r = isd_rm_rf_at(dfd, slash + 1);
	if (r < 0 && r != -ENOENT)
		return isd_error(r, "removing %s", path);
	return 0;
}

int isd_idmap_remove_tree(const struct isd_idmap *map, const char *path)
{
	return isd_idmap_run(map, remove_fn, (void *)path);
}
