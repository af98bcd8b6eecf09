/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The spec's device nodes in isd's /dev (src/mount-dev.h).  The plan
 * resolved each host path once (src/device.c); here the resolved path is
 * opened without following any link, and only the device number the plan
 * saw is bound: a node swapped since, or a link put in its place, fails.
 */
#define _GNU_SOURCE
#include "mount-dev.h"
#include "mount-fs.h"
#include "isd/resolve.h"
#include "isd/syscalls.h"
#include "isd/util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* The resolved host path, opened without following anything, if it is
 * still the node the plan saw. */
static int open_checked(const struct isd_device *d)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = isd_openat2(AT_FDCWD, d->host, O_PATH | O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0)
		return isd_error(-errno, "opening the device %s for %s", d->host, d->path);
	if (fstat(fd, &st) < 0)
		return isd_error(-errno, "inspecting the device %s", d->host);
	if ((st.st_mode & S_IFMT) != d->type || st.st_rdev != d->rdev)
		return isd_error(0, "binding the device %s at %s: it is no longer the %s device %u:%u isd checked "
				    "(it changed since; run again)", d->host, d->path, d->type == S_IFBLK ? "block" : "char",
				 major(d->rdev), minor(d->rdev));
	return isd_steal_fd(fd);
}

/* nosuid and noexec as isd's own nodes; without w read-only, which
 * Landlock makes true for the node (src/landlock.c). */
static unsigned node_attrs(const struct isd_device *d)
{
	return MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC | (d->write ? 0 : MOUNT_ATTR_RDONLY);
}

int isd_mount_dev_own_node(const struct isd_device *d, uint32_t uid, uint32_t gid)
{
	_cleanup_close_ int host = open_checked(d), mnt = -1;
	mode_t mode = d->write ? 0600 : 0400;

	if (host < 0)
		return host;
	/* A tmpfs of the host's user namespace: nodes in it open (one a
	 * user namespace mounts would be nodev), and nothing but this node
	 * is ever in it. */
	mnt = isd_mount_new_tmpfs(4096, 0700, NULL, NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, d->path);
	if (mnt < 0)
		return mnt;
	if (mknodat(mnt, "node", d->type | mode, d->rdev) < 0) {
		int r = isd_error(-errno, "making a node of the device %s for %s", d->host, d->path);
		if (r == -EPERM)
			isd_error_hint("as root, isd gives the payload's unprivileged id a node of each --device of its own, "
				       "which needs CAP_MKNOD; fix: run isd as a user in the device's group, or give the "
				       "container --cap-add MKNOD");
		return r;
	}
	if (fchownat(mnt, "node", uid, gid, AT_SYMLINK_NOFOLLOW) < 0 || fchmodat(mnt, "node", mode, 0) < 0)
		return isd_error(-errno, "giving the node of %s to the payload's id %u:%u", d->host, uid, gid);
	return isd_mount_clone_tree(mnt, "node", node_attrs(d), d->path);
}

int isd_mount_dev_clone(const struct isd_spec *spec, const int *prepared, int **out)
{
	int *fds = isd_xcalloc(spec->n_devices ? spec->n_devices : 1, sizeof(int));

	*out = fds;
	for (size_t i = 0; i < spec->n_devices; i++)
		fds[i] = -1;
	for (size_t i = 0; i < spec->n_devices; i++) {
		const struct isd_device *d = &spec->devices[i];
		_cleanup_close_ int fd = -1;

		if (d->isd_node)
			continue;
		if (prepared && prepared[i] >= 0) {
			/* This process's copy of a root caller's node (src/rootful.c) */
			fds[i] = prepared[i];
			continue;
		}
		fd = open_checked(d);
		if (fd < 0)
			return fd;
		fds[i] = isd_mount_clone_tree(fd, "", node_attrs(d), d->path);
		if (fds[i] < 0)
			return fds[i];
	}
	return 0;
}

/* The directories of path beneath /dev, made in the tmpfs (no link is
 * followed: the tmpfs is isd's, and only it has written there). */
static int parent_dir(int devfd, const char *rel, const char **leaf)
{
	_cleanup_free_ char *copy = isd_xstrdup(rel);
	int cur = dup(devfd);
	char *p = copy, *slash;

	if (cur < 0)
		return -errno;
	while ((slash = strchr(p, '/'))) {
		int next;
		*slash = '\0';
		if (mkdirat(cur, p, 0755) < 0 && errno != EEXIST) {
			int r = -errno;
			close(cur);
			return r;
		}
		next = openat(cur, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		if (next < 0)
			return -errno;
		cur = next;
		p = slash + 1;
	}
	*leaf = rel + (p - copy);
	return cur;
}

int isd_mount_dev_attach(const struct isd_spec *spec, int devfd, const int *clones)
{
	for (size_t i = 0; i < spec->n_devices; i++) {
		const struct isd_device *d = &spec->devices[i];
		_cleanup_close_ int dir = -1, target = -1;
		const char *leaf = NULL;
		int r;

		if (d->isd_node)
			continue;
		dir = parent_dir(devfd, d->path + 5, &leaf);
		if (dir < 0)
			return isd_error(dir, "creating the directories of %s", d->path);
		r = isd_mount_placeholder(dir, leaf, false, 0644);
		if (r < 0)
			return isd_error(r, "creating %s", d->path);
		target = openat(dir, leaf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (target < 0)
			return isd_error(-errno, "opening %s", d->path);
		r = isd_mount_attach(clones[i], target, d->path);
		if (r < 0)
			return r;
	}
	return 0;
}

void isd_mount_dev_close(int *clones, size_t n)
{
	for (size_t i = 0; clones && i < n; i++)
		if (clones[i] >= 0)
			close(clones[i]);
	free(clones);
}
