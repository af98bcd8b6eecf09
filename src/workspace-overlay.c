/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cow workspace's overlay, made in the sandbox from two mounts: the
 * project (lower) and the session's directory (holding upper and work),
 * cloned by the child itself or, for a root caller, cloned and idmapped by
 * isd on the host (src/rootful.c).  They are attached beneath the
 * generated-files tmpfs, which leaves with the old root at pivot_root, and
 * handed to overlayfs as descriptors (Linux 6.13) or, on older kernels, as
 * /proc/self/fd paths: either way the overlay's options in
 * /proc/self/mountinfo name no host path (no upperdir=/home/you/...).
 */
#define _GNU_SOURCE
#include "workspace.h"
#include "mount-fs.h"
#include "isd/syscalls.h"
#include "isd/util.h"

#include <stdio.h>
#include <sys/stat.h>

#ifndef FSCONFIG_SET_FD
#define FSCONFIG_SET_FD 5
#endif

static int attach_layer(struct isd_mount_builder *b, int mnt, const char *name)
{
	_cleanup_close_ int target = -1;

	if (mkdirat(b->generated, name, 0700) < 0)
		return isd_error(-errno, "creating the mount point of the cow workspace's %s", name);
	target = openat(b->generated, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (target < 0)
		return isd_error(-errno, "opening the mount point of the cow workspace's %s", name);
	return isd_mount_attach(mnt, target, name);
}

static int open_layer(struct isd_mount_builder *b, const char *path, const char *what)
{
	int fd = openat(b->generated, path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return isd_error(-errno, "opening the cow workspace's %s", what);
	return fd;
}

static int config_failed(int fsfd, const char *key, const char *project)
{
	int r = isd_error(-errno, "configuring overlay option %s= for the cow workspace %s", key, project);

	isd_mount_fs_log_hint(fsfd);
	isd_error_hint("a cow workspace needs overlayfs in a user namespace (Linux 5.11 or newer) and "
		       "$XDG_STATE_HOME on a file system overlayfs can write to (ext4, xfs, btrfs, tmpfs); "
		       "or use --workspace %s:rw", project);
	return r;
}

/* The layers as descriptors; before Linux 6.13 "lowerdir+" takes none, and
 * the layers go by /proc/self/fd paths instead. */
static int overlay_context(int lower, int upper, int work, const char *project)
{
	const int fds[3] = {lower, upper, work};
	static const char *const fd_keys[3] = {"lowerdir+", "upperdir", "workdir"};
	static const char *const path_keys[3] = {"lowerdir", "upperdir", "workdir"};
	int fsfd = isd_fsopen("overlay", FSOPEN_CLOEXEC);
	bool by_fd = true;

	if (fsfd < 0)
		return isd_error(-errno, "creating overlay for the cow workspace %s", project);
	for (int i = 0; i < 3; i++) {
		char path[32];
		int ok;

		if (by_fd) {
			ok = isd_fsconfig(fsfd, FSCONFIG_SET_FD, fd_keys[i], NULL, fds[i]) == 0;
			if (!ok && i == 0) {
				/* Not this kernel: a fresh context, by path. */
				close(fsfd);
				fsfd = isd_fsopen("overlay", FSOPEN_CLOEXEC);
				if (fsfd < 0)
					return isd_error(-errno, "creating overlay for the cow workspace %s", project);
				by_fd = false;
			}
		}
		if (!by_fd) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
			ok = isd_fsconfig(fsfd, FSCONFIG_SET_STRING, path_keys[i], path, 0) == 0;
		}
		if (!ok) {
			int r = config_failed(fsfd, path_keys[i], project);
			close(fsfd);
			return r;
		}
	}
	return fsfd;
}

int isd_workspace_new_overlay(struct isd_mount_builder *b, int lower_mnt, int session_mnt, size_t index,
			      unsigned attrs, bool volatile_upper, const char *project)
{
	_cleanup_close_ int lower = -1, upper = -1, work = -1, fsfd = -1;
	char lname[32], sname[32], path[48];
	int r, mfd;

	snprintf(lname, sizeof(lname), "cow-lower-%zu", index);
	snprintf(sname, sizeof(sname), "cow-store-%zu", index);
	r = attach_layer(b, lower_mnt, lname);
	if (r == 0)
		r = attach_layer(b, session_mnt, sname);
	if (r < 0)
		return r;
	if ((lower = open_layer(b, lname, "project")) < 0)
		return lower;
	snprintf(path, sizeof(path), "%s/upper", sname);
	if ((upper = open_layer(b, path, "upper directory")) < 0)
		return upper;
	snprintf(path, sizeof(path), "%s/work", sname);
	if ((work = open_layer(b, path, "work directory")) < 0)
		return work;
	fsfd = overlay_context(lower, upper, work, project);
	if (fsfd < 0)
		return fsfd;
	/* userxattr: the only way for an unprivileged overlay to record
	 * whiteouts' opaque directories (trusted.* needs the host's root). */
	/* volatile (the agent's state, merged right after the run): without
	 * it the kernel syncs the upper layer's whole file system when the
	 * sandbox's mounts go, and the exit waits for everyone's dirty data. */
	if (isd_fsconfig(fsfd, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
	    (volatile_upper && isd_fsconfig(fsfd, FSCONFIG_SET_FLAG, "volatile", NULL, 0) < 0) ||
	    isd_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		r = isd_error(-errno, "creating overlay for the cow workspace %s", project);
		isd_mount_fs_log_hint(fsfd);
		if (r == -EPERM || r == -EINVAL || r == -ENODEV)
			isd_error_hint("a cow workspace needs overlayfs in a user namespace (Linux 5.11 or newer) and "
				       "$XDG_STATE_HOME on a file system overlayfs can write to (ext4, xfs, btrfs, tmpfs); "
				       "or use --workspace %s:rw", project);
		return r;
	}
	mfd = isd_fsmount(fsfd, FSMOUNT_CLOEXEC, attrs);
	if (mfd < 0)
		return isd_error(-errno, "mounting overlay for the cow workspace %s", project);
	return mfd;
}
