/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A root caller's sandbox.  Dropping every capability does not make uid 0
 * harmless: the kernel lets host root write global sysctls (core_pattern
 * runs a program as root on the next crash), and files root creates through
 * a bind belong to root on the host.  So the payload of a root caller is
 * never host uid 0: its ids inside (0, or those of -u) map to an
 * unprivileged host id, root's subordinate range in /etc/subuid and
 * /etc/subgid when it has one (ids nobody else uses), else 65534 (nobody,
 * nogroup, which by convention owns no files).
 *
 * root's own files stay usable through idmapped mounts: isd, still root on
 * the host, clones every bind source and the workspace and maps on-disk uid
 * 0 to the payload's host id, so the payload works on them as their owner
 * and what it creates is owned by root on disk.  The clones cross into the
 * sandbox as descriptors, since the payload's id cannot even look up a path
 * beneath /root.
 */
#define _GNU_SOURCE
#include "rootful.h"
#include "isolation.h"
#include "mount.h"
#include "mount-dev.h"
#include "isd/syscalls.h"
#include "userns.h"
#include "isd/process.h"
#include "isd/util.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define NOBODY 65534
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif

/* Start of root's first range in a subuid/subgid file (its size in
 * *count), or -1. */
static int64_t subid_range(const char *file, uint32_t *count_out)
{
	_cleanup_free_ char *text = NULL;
	char *save = NULL;

	if (isd_read_file_at(AT_FDCWD, file, &text, NULL) < 0)
		return -1;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2;
		uint32_t start, count;

		if (!c1)
			continue;
		*c1++ = '\0';
		c2 = strchr(c1, ':');
		if (!c2)
			continue;
		*c2++ = '\0';
		if ((strcmp(line, "root") && strcmp(line, "0")) || isd_parse_uint32(c1, &start) < 0 ||
		    isd_parse_uint32(c2, &count) < 0 || count == 0 || start == 0)
			continue;
		if (count_out)
			*count_out = count;
		return start;
	}
	return -1;
}

/* Our uid 0 is the host's root unless a user namespace maps it to another
 * id (isd run by root inside `unshare -r`, a rootless container, another
 * sandbox).  The maps only say what our ids are one namespace up; a
 * sysctl file, owned by the host's root, shows as uid 0 exactly when our 0
 * is that root, however deep the namespaces go. */
static bool uid0_is_host_root(void)
{
	struct stat st;

	if (stat("/proc/sys/kernel/core_pattern", &st) < 0 && stat("/proc/sys/kernel", &st) < 0)
		return true; /* no procfs to tell: assume the worst */
	return st.st_uid == 0;
}

static uint32_t pick(const char *subid_file, const char *map_file)
{
	int64_t start = subid_range(subid_file, NULL);

	if (start > 0 && isd_userns_ids_mapped(map_file, (uint32_t)start, 1))
		return (uint32_t)start;
	return NOBODY;
}

static bool ranges_reach_host_root(const struct isd_id_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].outside == 0 && r[i].count > 0)
			return true;
	return false;
}

int isd_rootful_apply(struct isd_spec *spec, uint32_t caller_uid, uint32_t caller_gid)
{
	/* A built image's id map, as root made it, maps its ids 1:1, so the
	 * image's root would be the host's: for isd exec --image it is not
	 * used (isd build's RUN keeps it, as a rootful docker build does). */
	if (caller_uid == 0 && spec->n_uid_ranges && !spec->build_caps && !spec->unsafe_host_root &&
	    ranges_reach_host_root(spec->uid_ranges, spec->n_uid_ranges) && uid0_is_host_root()) {
		fprintf(stderr, "isd: note: running as root: the image's id map is not used, since it maps the "
				"image's root to the host's; files the image gives to other ids show as nobody "
				"(--unsafe-host-root keeps the map)\n");
		free(spec->uid_ranges);
		free(spec->gid_ranges);
		spec->uid_ranges = spec->gid_ranges = NULL;
		spec->n_uid_ranges = spec->n_gid_ranges = 0;
	}
	if (caller_uid != 0 || spec->n_uid_ranges || !uid0_is_host_root())
		return 0;
	if (spec->unsafe_host_root) {
		isd_warn("--unsafe-host-root: the payload runs as the host's root (uid 0, no capabilities): it can "
			 "write global sysctls such as kernel.core_pattern and leave root-owned files in every "
			 "writable bind");
		return 0;
	}
	spec->idmap_disk_uid = caller_uid;
	spec->idmap_disk_gid = caller_gid;
	spec->host_uid = pick("/etc/subuid", "/proc/self/uid_map");
	spec->host_gid = pick("/etc/subgid", "/proc/self/gid_map");
	if (!isd_userns_ids_mapped("/proc/self/uid_map", spec->host_uid, 1) || !isd_userns_ids_mapped("/proc/self/gid_map", spec->host_gid, 1))
		return isd_error(0, "running as root: no unprivileged id (%u:%u) exists in this user namespace to run "
				    "the payload as; give root a range in /etc/subuid and /etc/subgid, or accept "
				    "host root with --unsafe-host-root", spec->host_uid, spec->host_gid);
	spec->idmapped = true;
	return 0;
}

int isd_rootful_map_groups(struct isd_spec *spec)
{
	uint32_t count = 0, next = 1;
	int64_t start;

	if (!spec->idmapped || !spec->n_groups)
		return 0;
	/* a line of gid_map each, which the parent writes in one go */
	if (spec->n_groups > 64)
		return isd_error(-E2BIG, "process.user.additionalGids: as root, isd maps 64 groups at most");
	start = subid_range("/etc/subgid", &count);
	free(spec->host_groups);
	spec->host_groups = isd_xcalloc(spec->n_groups, sizeof(*spec->host_groups));
	for (size_t i = 0; i < spec->n_groups; i++) {
		size_t j;

		/* the primary group, or one listed twice, has its line already */
		for (j = 0; j < i && spec->groups[j] != spec->groups[i]; j++)
			;
		if (spec->groups[i] == spec->gid || j < i) {
			spec->host_groups[i] = spec->groups[i] == spec->gid ? spec->host_gid : spec->host_groups[j];
			continue;
		}
		if (start != spec->host_gid || next >= count ||
		    !isd_userns_ids_mapped("/proc/self/gid_map", spec->host_gid + next, 1))
			return isd_error(-EINVAL, "process.user.additionalGids: as root, each group maps to an unused id "
						  "of root's range in /etc/subgid, beyond the primary group's (%u), and %s",
					 spec->host_gid, start != spec->host_gid ? "root has none" : "that range is too small");
		spec->host_groups[i] = spec->host_gid + next++;
	}
	return 0;
}

/* A container's root: uid 0 of the host (rootful docker/podman) without
 * CAP_SYS_ADMIN, which cloning a mount needs. */
static void explain_clone_refused(bool and_auto)
{
	isd_error_hint("isd runs as root without CAP_SYS_ADMIN, as a container's root does: a root caller's binds are "
		       "handed to the payload's unprivileged id through idmapped mounts, which need it; fix: run isd as a "
		       "user in the container (docker/podman --user 1000, Kubernetes runAsUser: 1000), or give the container "
		       "--cap-add SYS_ADMIN");
	if (and_auto)
		isd_isolation_hint_auto();
}

static bool can_clone_mounts(void)
{
	int fd = isd_open_tree(AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int idmap_userns(uint32_t disk_uid, uint32_t host_uid, uint32_t disk_gid, uint32_t host_gid)
{
	int ready[2], fd = -1, r = 0;
	char path[64], map[64];
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return isd_error(-errno, "creating a pipe for the idmapped mounts' user namespace");
	/* A process of its own holds the namespace while its maps are
	 * written and its descriptor taken; it waits for EOF. */
	pid = (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, NULL);
	if (pid < 0) {
		r = isd_error(-errno, "creating the user namespace of the idmapped mounts");
		isd_userns_explain_failure(r);
		/* Docker's profile refuses the namespace; past it, a
		 * container's root would meet the next refusal. */
		if (!can_clone_mounts())
			explain_clone_refused(false);
		close(ready[0]);
		close(ready[1]);
		return r;
	}
	if (pid == 0) {
		char c;
		close(ready[1]);
		(void)!read(ready[0], &c, 1);
		_exit(0);
	}
	close(ready[0]);
	snprintf(map, sizeof(map), "%u %u 1\n", disk_uid, host_uid);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	r = isd_write_file_at(AT_FDCWD, path, map, 0, 0);
	if (r == 0) {
		snprintf(map, sizeof(map), "%u %u 1\n", disk_gid, host_gid);
		snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
		r = isd_write_file_at(AT_FDCWD, path, map, 0, 0);
	}
	if (r < 0) {
		isd_error(r, "writing %s (\"%.*s\")", path, (int)strcspn(map, "\n"), map);
	} else {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			r = isd_error(-errno, "opening %s", path);
	}
	close(ready[1]);
	isd_wait_pid(pid, NULL);
	return r < 0 ? r : fd;
}

/* A clone made here, in the caller's mount namespace, is in the peer
 * group of a shared source: mounts the payload made beneath it would
 * appear on the host.  It becomes a slave, as everything the sandbox's
 * own namespace holds (isd_mount_setup): the host's mount events come in,
 * none go out; unless the config asks shared for that bind
 * (host_peers), the OCI meaning of shared, as runc and crun keep it. */
static int clone_source_as(int userns_fd, int dfd, const char *path, unsigned attrs, bool host_peers, bool recursive,
			   bool *idmapped, const char *what);

static int clone_source(int userns_fd, int dfd, const char *path, unsigned attrs, bool host_peers, bool *idmapped,
			const char *what)
{
	return clone_source_as(userns_fd, dfd, path, attrs, host_peers, true, idmapped, what);
}

/* recursive false: isd-runtime's "bind" of a directory (isd/spec.h) */
static int clone_source_as(int userns_fd, int dfd, const char *path, unsigned attrs, bool host_peers, bool recursive,
			   bool *idmapped, const char *what)
{
	struct mount_attr attr = {.attr_set = attrs}, slave = {.propagation = MS_SLAVE};
	int fd = isd_open_tree(dfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0) |
						   AT_SYMLINK_NOFOLLOW | (path[0] ? 0 : AT_EMPTY_PATH));
	int r;

	if (fd < 0) {
		r = isd_error(-errno, "cloning %s", what);
		if (r == -EPERM)
			explain_clone_refused(true);
		return r;
	}
	if (!host_peers && isd_mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &slave) < 0) {
		r = isd_error(-errno, "making the mount of %s a slave of the host's", what);
		close(fd);
		return r;
	}
	/* Above the setup descriptor and the standard ones, so that the
	 * child's descriptor shuffling cannot overwrite it. */
	r = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	close(fd);
	if (r < 0)
		return isd_error(-errno, "cloning %s", what);
	fd = r;
	*idmapped = false;
	if (userns_fd >= 0) {
		struct mount_attr idmap = {.attr_set = attrs | MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns_fd};
		if (isd_mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &idmap) == 0) {
			*idmapped = true;
			return fd;
		}
		isd_warn("%s: its file system refuses an idmapped mount (%s); the payload sees root's files there "
			 "as nobody's and cannot change them (--unsafe-host-root would run it as host root instead)",
			 what, strerror(errno));
	}
	if (attrs && isd_mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr) < 0) {
		r = isd_error(-errno, "restricting the mount of %s", what);
		close(fd);
		return r;
	}
	return fd;
}

static char *dir_of(const char *path)
{
	char *d = isd_xstrdup(path), *slash = strrchr(d, '/');

	if (slash && slash != d)
		*slash = '\0';
	return d;
}

static int prepare_overlay(int userns, const struct isd_mount *m, const char *layer_dir, int *lower, int *dir)
{
	bool idmapped;

	*lower = clone_source(userns, AT_FDCWD, m->source, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false, &idmapped,
			      m->source);
	if (*lower >= 0 && !idmapped)
		return isd_error(-EOPNOTSUPP, "%s: a copy-on-write layer as root needs an idmapped mount of it, which "
					      "its file system refuses; bind it read-write instead (--workspace %s:rw)",
				 m->source, m->source);
	if (*lower >= 0)
		*dir = clone_source(userns, AT_FDCWD, layer_dir, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false, &idmapped,
				     layer_dir);
	if (*lower >= 0 && *dir >= 0 && !idmapped)
		return isd_error(-EOPNOTSUPP, "%s: a copy-on-write layer as root needs an idmapped mount of %s, which "
					      "its file system refuses; set XDG_STATE_HOME elsewhere",
				 m->source, layer_dir);
	return *lower < 0 ? *lower : *dir < 0 ? *dir : 0;
}

int isd_rootful_prepare(const struct isd_spec *spec, const char *session_dir, struct isd_mount_extras *extras)
{
	_cleanup_close_ int userns = -1;
	bool idmapped;
	int r = 0;

	if (!spec->idmapped)
		return 0;
	userns = idmap_userns(spec->idmap_disk_uid, spec->host_uid, spec->idmap_disk_gid, spec->host_gid);
	if (userns < 0)
		return userns;
	extras->sources_prepared = true;
	extras->image_fd = -1;
	extras->bind_fds = isd_xcalloc(spec->n_mounts ? spec->n_mounts : 1, sizeof(int));
	extras->layer_dir_fds = isd_xcalloc(spec->n_mounts ? spec->n_mounts : 1, sizeof(int));
	for (size_t i = 0; i < spec->n_mounts; i++)
		extras->bind_fds[i] = extras->layer_dir_fds[i] = -1;
	extras->device_fds = isd_xcalloc(spec->n_devices ? spec->n_devices : 1, sizeof(int));
	for (size_t i = 0; i < spec->n_devices; i++)
		extras->device_fds[i] = -1;
	/* The payload's unprivileged id is neither the owner nor in the
	 * group of a node such as a 0660 root:render one, which root, the
	 * caller, opens.  A node of its own gives it what --device asked,
	 * no more (the devtmpfs of /dev refuses an idmapped mount). */
	for (size_t i = 0; i < spec->n_devices && r >= 0; i++) {
		int fd;
		if (spec->devices[i].isd_node)
			continue;
		r = fd = isd_mount_dev_own_node(&spec->devices[i], spec->host_uid, spec->host_gid);
		if (fd >= 0) { /* above the descriptors the child shuffles, as clone_source's */
			r = extras->device_fds[i] = fcntl(fd, F_DUPFD_CLOEXEC, 10);
			close(fd);
			if (r < 0)
				r = isd_error(-errno, "keeping the node of %s", spec->devices[i].host);
		}
	}
	for (size_t i = 0; i < spec->n_mounts && r >= 0; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (m->readonly ? MOUNT_ATTR_RDONLY : 0) |
				 (m->noexec ? MOUNT_ATTR_NOEXEC : 0);

		if (m->type == ISD_MOUNT_OVERLAY && (m->agent_state ? extras->state_copy && extras->state_copy[i]
								       : extras->workspace_copy != NULL)) {
			/* src/workspace-fallback.c's copy, bound */
			r = extras->bind_fds[i] = clone_source(userns, AT_FDCWD,
							       m->agent_state ? extras->state_copy[i] : extras->workspace_copy,
							       attrs | (m->agent_state ? MOUNT_ATTR_NOEXEC : 0), false, &idmapped,
							       m->source);
		} else if (m->type == ISD_MOUNT_OVERLAY) {
			_cleanup_free_ char *dir = NULL;
			if (m->agent_state && extras->state_upper && extras->state_upper[i])
				dir = dir_of(extras->state_upper[i]);
			else if (!m->agent_state && session_dir)
				dir = isd_xstrdup(session_dir);
			else
				return isd_error(-EINVAL, "mounting %s: no copy-on-write store", m->source);
			r = prepare_overlay(userns, m, dir, &extras->bind_fds[i], &extras->layer_dir_fds[i]);
		} else if (m->agent_state) {
			if (!extras->state_file || !extras->state_file[i])
				return isd_error(-EINVAL, "mounting the agent's state %s: no store", m->source);
			r = extras->bind_fds[i] = clone_source(userns, AT_FDCWD, extras->state_file[i],
							       attrs | MOUNT_ATTR_NOEXEC, false, &idmapped, m->source);
		} else if (m->type == ISD_MOUNT_BIND && !m->rebind) {
			r = extras->bind_fds[i] = clone_source_as(userns, AT_FDCWD, m->source, attrs, m->propagation & MS_SHARED,
								  !m->nonrecursive, &idmapped, m->source);
		}
	}
	/* Read-only (but an OCI bundle's root that is not root.readonly),
	 * and idmapped like the binds so that the image's root-owned files
	 * (mode 0600 ones too) are the payload's to read, as they are a root
	 * payload's in any container. */
	if (r >= 0 && spec->rootfs)
		r = extras->image_fd = clone_source(userns, AT_FDCWD, spec->rootfs,
						    (spec->writable_root ? 0 : MOUNT_ATTR_RDONLY) | MOUNT_ATTR_NOSUID |
							    MOUNT_ATTR_NODEV,
						    false, &idmapped, spec->rootfs);
	return r < 0 ? r : 0;
}

void isd_rootful_release(const struct isd_spec *spec, struct isd_mount_extras *extras)
{
	if (!extras->sources_prepared)
		return;
	for (size_t i = 0; i < spec->n_mounts; i++) {
		if (extras->bind_fds[i] >= 0)
			close(extras->bind_fds[i]);
		if (extras->layer_dir_fds[i] >= 0)
			close(extras->layer_dir_fds[i]);
	}
	for (size_t i = 0; i < spec->n_devices; i++)
		if (extras->device_fds[i] >= 0)
			close(extras->device_fds[i]);
	free(extras->bind_fds);
	free(extras->layer_dir_fds);
	free(extras->device_fds);
	extras->bind_fds = extras->layer_dir_fds = extras->device_fds = NULL;
	if (extras->image_fd >= 0)
		close(extras->image_fd);
	extras->sources_prepared = false;
}

static int compare_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

void isd_rootful_close_other_fds(const struct isd_spec *spec, const struct isd_mount_extras *extras,
				 unsigned first, int also_keep)
{
	int *keep;
	size_t n = 0;
	unsigned from = first;

	keep = isd_xcalloc(2 * spec->n_mounts + spec->n_devices + extras->n_preserved_fds + 3, sizeof(int));
	if (also_keep >= 0)
		keep[n++] = also_keep;
	for (size_t i = 0; i < extras->n_preserved_fds; i++)
		keep[n++] = extras->preserved_fds[i];
	if (extras->cgroupns_fd >= 0)
		keep[n++] = extras->cgroupns_fd;
	for (size_t i = 0; extras->sources_prepared && i < spec->n_mounts; i++) {
		if (extras->bind_fds[i] >= 0)
			keep[n++] = extras->bind_fds[i];
		if (extras->layer_dir_fds[i] >= 0)
			keep[n++] = extras->layer_dir_fds[i];
	}
	for (size_t i = 0; extras->sources_prepared && i < spec->n_devices; i++)
		if (extras->device_fds[i] >= 0)
			keep[n++] = extras->device_fds[i];
	if (extras->sources_prepared && extras->image_fd >= 0)
		keep[n++] = extras->image_fd;
	qsort(keep, n, sizeof(int), compare_ints);
	for (size_t i = 0; i < n; i++) {
		if ((unsigned)keep[i] < from)
			continue;
		if ((unsigned)keep[i] > from)
			isd_close_range(from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	isd_close_range(from, ~0U, 0);
	free(keep);
}
