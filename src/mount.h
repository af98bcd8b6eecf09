/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox's file system: a fresh tmpfs root holding read-only binds of
 * the image, isd's own /dev, a fresh /proc and /sys, the user's binds and
 * tmpfs mounts, then pivot_root.  All of it happens inside the new mount
 * namespace; the host's mounts are never changed.
 */
#ifndef ISD_MOUNT_H
#define ISD_MOUNT_H

#include <stdbool.h>

#include "isd/spec.h"

struct isd_mount_extras {
	const char *hosts;       /* content for /etc/hosts */
	const char *resolv_conf; /* content for /etc/resolv.conf */
	bool cgroup2;            /* mount the sandbox's own cgroup2 at /sys/fs/cgroup */
	bool no_nested_mounts;   /* the payload can mount nothing (seccomp) */
	bool mqueue;             /* the IPC namespace's mqueue at /dev/mqueue (isd-runtime's config) */
	char *const *sysctl;     /* "key=value" to write through the fresh /proc (isd-runtime's config) */
	/* isd_sandbox_detached's preserved_fds: kept open into the sandbox
	 * and handed to the payload as 3, 4, ... */
	const int *preserved_fds;
	size_t n_preserved_fds;
	/* spec->pid_host, but in a pid namespace isd-runtime joined: a
	 * procfs of it, not the outer /proc */
	bool pid_joined;
	/* isd_sandbox_detached's cgroupns_fd: init joins it instead of
	 * making a cgroup namespace (-1: makes one) */
	int cgroupns_fd;
	const char *workspace_upper; /* the cow workspace's session: overlay upper */
	const char *workspace_work;  /* and work directories */
	/* per spec mount, for agent_state ones (src/agent-state.c): the
	 * overlay's upper and work, or the copy of a state file */
	const char *const *state_upper, *const *state_work, *const *state_file;
	const char *workspace_session; /* the directory holding both */
	/* Where overlayfs cannot write the store (src/workspace-fallback.c):
	 * the cow workspace's copy and, per spec mount, an agent state
	 * directory's, bound at their places instead of an overlay. */
	const char *workspace_copy;
	char *const *state_copy;
	/* A root caller's sources, cloned and idmapped on the host
	 * (src/rootful.c), per spec mount: the bind's source or the
	 * overlay's lower layer, and an overlay's directory holding upper and
	 * work (-1 where none); and the image.  Unset: the child clones by
	 * path. */
	bool sources_prepared;
	int *bind_fds, *layer_dir_fds;
	int image_fd;
	/* per spec device: a node of the payload's own (src/mount-dev.h),
	 * or -1 for the bind of the host node */
	int *device_fds;
};

/* Builds the whole file system tree and pivots into it.  On return the
 * process's root and cwd are the sandbox's "/".  Nothing of the old root is
 * reachable. */
int isd_mount_setup(const struct isd_spec *spec, const struct isd_mount_extras *extras);

/* The host's directories the sandbox shows read-only (image "host"), by
 * their names in /; command.c finds the payload's command by the same list. */
extern const char *const isd_host_image_entries[];

/* linux.sysctl's "key=value" entries (those starting with only_prefix,
 * or all) written through the procfs proc, whose /proc/sys/net is the
 * network namespace of the caller at open.  A value the file holds
 * already is not written (see mount.c). */
int isd_write_sysctls(int proc, char *const *sysctl, const char *only_prefix);

#endif
