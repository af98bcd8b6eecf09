/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox's file system, in order: sources are cloned (open_tree)
 * before anything covers them, then the root tmpfs with the image, isd's
 * /dev, /proc and /sys, the user's mounts (parents first), the generated
 * files, and pivot_root.  The descriptor primitives (and the resolution of
 * destinations inside the root) are in mount-fs.c.
 */
#define _GNU_SOURCE
#include "mount.h"
#include "isd/agent-state.h"
#include "mount-dev.h"
#include "mount-fs.h"
#include "mount-proc.h"
#include "isd/syscalls.h"
#include "testhooks.h"
#include "userns.h"
#include "isd/util.h"
#include "workspace.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

const char *const isd_host_image_entries[] = {"usr", "etc", "opt", "bin", "sbin", "lib",
					      "lib32", "lib64", "libx32", NULL};

static bool keep_host_entry(const char *name)
{
	for (size_t i = 0; isd_host_image_entries[i]; i++)
		if (!strcmp(name, isd_host_image_entries[i]))
			return true;
	return false;
}

/* The image's own /dev, /proc, /sys, /tmp and /run are never used: isd
 * builds those, so a hostile image cannot redirect them. */
static bool keep_image_entry(const char *name)
{
	static const char *const skip[] = {"dev", "proc", "sys", "tmp", "run", NULL};

	for (size_t i = 0; skip[i]; i++)
		if (!strcmp(name, skip[i]))
			return false;
	return true;
}

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty", NULL};
#define N_DEV_NODES 6

/* Sources cloned before the root tmpfs is attached anywhere, so that no
 * staging mount can cover them. */
struct sources {
	int dev[N_DEV_NODES];
	int *devices; /* the spec's devices (mount-dev.h) */
	int *binds; /* one per spec mount, -1 for tmpfs */
	int image;  /* directory fd of the image root */
	int *layer_dirs; /* per overlay: the mount of the directory of upper and work */
	int proc;   /* clone of the outer /proc (--pid=host) */
	int sys;    /* clone of the outer /sys (--network=host) */
};

static void sources_close(struct sources *s, size_t n_mounts, size_t n_devices)
{
	for (size_t i = 0; i < N_DEV_NODES; i++)
		if (s->dev[i] >= 0)
			close(s->dev[i]);
	isd_mount_dev_close(s->devices, n_devices);
	for (size_t i = 0; s->binds && i < n_mounts; i++)
		if (s->binds[i] >= 0)
			close(s->binds[i]);
	free(s->binds);
	if (s->image >= 0)
		close(s->image);
	for (size_t i = 0; s->layer_dirs && i < n_mounts; i++)
		if (s->layer_dirs[i] >= 0)
			close(s->layer_dirs[i]);
	free(s->layer_dirs);
	if (s->proc >= 0)
		close(s->proc);
	if (s->sys >= 0)
		close(s->sys);
}

static int clone_sources(const struct isd_spec *spec, const struct isd_mount_extras *extras, struct sources *s)
{
	for (size_t i = 0; i < N_DEV_NODES; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/dev/%s", dev_nodes[i]);
		/* nosuid,noexec: set on all of /dev at once (setup_dev) */
		s->dev[i] = isd_mount_clone_tree(AT_FDCWD, path, 0, path);
		if (s->dev[i] < 0)
			return s->dev[i];
	}
	{
		int r = isd_mount_dev_clone(spec, extras->sources_prepared ? extras->device_fds : NULL, &s->devices);
		if (r < 0)
			return r;
	}
	/* All -1 before the first can fail: sources_close closes them all. */
	s->binds = isd_xcalloc(spec->n_mounts, sizeof(int));
	s->layer_dirs = isd_xcalloc(spec->n_mounts, sizeof(int));
	for (size_t i = 0; i < spec->n_mounts; i++)
		s->binds[i] = s->layer_dirs[i] = -1;
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		unsigned attrs = isd_testhook_bind_attrs(m->destination, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
								  (m->readonly ? MOUNT_ATTR_RDONLY : 0) |
								  (m->noexec ? MOUNT_ATTR_NOEXEC : 0));

		if (extras->sources_prepared) {
			/* This process's copies of isd's clones (src/rootful.c);
			 * overlays are made once a tmpfs can hold their layers. */
			s->binds[i] = extras->bind_fds[i];
			s->layer_dirs[i] = extras->layer_dir_fds[i];
			if (m->readonly && !(attrs & MOUNT_ATTR_RDONLY) && s->binds[i] >= 0) { /* a test hook's */
				struct mount_attr rw = {.attr_clr = MOUNT_ATTR_RDONLY};
				if (isd_mount_setattr(s->binds[i], "", AT_EMPTY_PATH | AT_RECURSIVE, &rw) < 0)
					return isd_error(-errno, "the test hook's writable %s", m->destination);
			}
			continue;
		}
		if (m->type == ISD_MOUNT_OVERLAY && (m->agent_state ? extras->state_copy && extras->state_copy[i]
								       : extras->workspace_copy != NULL)) {
			/* A copy, bound (layer_dirs stays -1: no overlay). */
			s->binds[i] = isd_mount_clone_tree(AT_FDCWD, m->agent_state ? extras->state_copy[i] : extras->workspace_copy,
							   attrs | (m->agent_state ? MOUNT_ATTR_NOEXEC : 0), m->source);
			if (s->binds[i] < 0)
				return s->binds[i];
			continue;
		}
		if (m->agent_state && m->type == ISD_MOUNT_OVERLAY && extras->state_upper && extras->state_upper[i]) {
			/* Like the workspace's: its store's host path stays out
			 * of mountinfo (upper and work share one directory). */
			_cleanup_free_ char *store = isd_xstrdup(extras->state_upper[i]);
			char *slash = strrchr(store, '/');
			if (slash && slash != store)
				*slash = '\0';
			s->binds[i] = isd_mount_clone_tree(AT_FDCWD, m->source, 0, m->source);
			if (s->binds[i] < 0)
				return s->binds[i];
			s->layer_dirs[i] = isd_mount_clone_tree(AT_FDCWD, store, 0, "the agent's state store");
			if (s->layer_dirs[i] < 0)
				return s->layer_dirs[i];
			continue;
		}
		if (m->agent_state) {
			s->binds[i] = isd_agent_state_clone(m, i, extras);
			if (s->binds[i] < 0)
				return s->binds[i];
			continue;
		}
		if (m->type == ISD_MOUNT_OVERLAY) {
			if (!extras->workspace_session)
				return isd_error(-EINVAL, "mounting the cow workspace %s: no session", m->source);
			s->binds[i] = isd_mount_clone_tree(AT_FDCWD, m->source, 0, m->source);
			if (s->binds[i] < 0)
				return s->binds[i];
			s->layer_dirs[i] = isd_mount_clone_tree(AT_FDCWD, extras->workspace_session, 0,
								"the session's directory");
			if (s->layer_dirs[i] < 0)
				return s->layer_dirs[i];
			continue;
		}
		if (m->type != ISD_MOUNT_BIND || m->rebind)
			continue;
		s->binds[i] = isd_mount_clone(AT_FDCWD, m->source, attrs, !m->nonrecursive, m->source);
		if (s->binds[i] < 0)
			return s->binds[i];
	}
	/* A root caller's image comes as a mount, opened once attached. */
	if (!extras->sources_prepared || extras->image_fd < 0) {
		s->image = open(spec->rootfs ? spec->rootfs : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (s->image < 0)
			return isd_error(-errno, "opening the root filesystem %s", spec->rootfs ? spec->rootfs : "/");
	}
	if (spec->pid_host && !extras->pid_joined) {
		s->proc = isd_mount_clone_tree(AT_FDCWD, "/proc", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, "/proc");
		if (s->proc < 0)
			return s->proc;
	}
	if (spec->network == ISD_NET_HOST) {
		s->sys = isd_mount_clone_tree(AT_FDCWD, "/sys", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, "/sys");
		if (s->sys < 0)
			return s->sys;
	}
	return 0;
}

static int attach_at(struct isd_mount_builder *b, int mfd, const char *path, enum isd_node_kind kind, const char *what)
{
	_cleanup_close_ int target = isd_mount_resolve_create(b, path, kind, true);

	if (target < 0)
		return target;
	return isd_mount_attach(mfd, target, what);
}

/* The message queues of the sandbox's IPC namespace.  One the sandbox's
 * user namespace does not own (isd-runtime joined it, as root) refuses
 * the mount: the directory stays empty, which costs function only. */
static int setup_mqueue(struct isd_mount_builder *b, int dev)
{
	static const char *const opts[] = {"source", "mqueue", NULL}; /* as runc and crun name it */
	_cleanup_close_ int mq = -1;

	if (mkdirat(dev, "mqueue", 0755) < 0)
		return isd_error(-errno, "creating /dev/mqueue");
	mq = isd_mount_new_fs("mqueue", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, "/dev/mqueue");
	if (mq == -EPERM || mq == -EACCES) {
		isd_error_clear();
		return 0;
	}
	if (mq < 0)
		return mq;
	return attach_at(b, mq, "/dev/mqueue", ISD_NODE_DIR, "mqueue on /dev/mqueue");
}

static int setup_dev(struct isd_mount_builder *b, const struct isd_spec *spec, struct sources *s,
		     const struct isd_mount_extras *extras)
{
	static const char *const devpts_opts[] = {"source", "devpts", "newinstance", NULL, "ptmxmode", "0666",
						   "mode", "0620", NULL};
	static const char *const links[][2] = {
		{"ptmx", "pts/ptmx"},          {"fd", "/proc/self/fd"},
		{"stdin", "/proc/self/fd/0"},  {"stdout", "/proc/self/fd/1"},
		{"stderr", "/proc/self/fd/2"}, {"core", "/proc/kcore"},
	};
	struct mount_attr nosuid_noexec = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC};
	_cleanup_close_ int dev = -1, pts = -1, shm = -1;
	int r;

	if (!b->writable_image && !extras->no_nested_mounts) {
		_cleanup_close_ int devdir = isd_mount_resolve_create(b, "/dev", ISD_NODE_DIR, true);
		if (devdir < 0)
			return devdir;
		r = isd_mount_proc_hidden(b, devdir, !spec->pid_host || extras->pid_joined, spec->network != ISD_NET_HOST);
		if (r < 0)
			return r;
	}
	dev = isd_mount_new_tmpfs(64 << 10, 0755, NULL, NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, "/dev");
	if (dev < 0)
		return dev;
	r = attach_at(b, dev, "/dev", ISD_NODE_DIR, "tmpfs on /dev");
	if (r < 0)
		return r;
	for (size_t i = 0; i < N_DEV_NODES; i++) {
		/* the placeholder's own descriptor is the mount point */
		_cleanup_close_ int target = openat(dev, dev_nodes[i], O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
						    0644);
		if (target < 0)
			return isd_error(-errno, "creating /dev/%s", dev_nodes[i]);
		r = isd_mount_attach(s->dev[i], target, dev_nodes[i]);
		if (r < 0)
			return r;
	}
	r = isd_mount_dev_attach(spec, dev, s->devices);
	if (r < 0)
		return r;
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlinkat(links[i][1], dev, links[i][0]) < 0)
			return isd_error(-errno, "creating /dev/%s", links[i][0]);
	if (mkdirat(dev, "pts", 0755) < 0 || mkdirat(dev, "shm", 01777) < 0)
		return isd_error(-errno, "creating /dev/pts and /dev/shm");
	pts = isd_mount_new_fs("devpts", devpts_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, "/dev/pts");
	if (pts < 0)
		return pts;
	r = attach_at(b, pts, "/dev/pts", ISD_NODE_DIR, "devpts on /dev/pts");
	if (r < 0)
		return r;
	shm = isd_mount_new_tmpfs_named("shm", 64 << 20, 01777, NULL, NULL,
			MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, "/dev/shm");
	if (shm < 0)
		return shm;
	r = attach_at(b, shm, "/dev/shm", ISD_NODE_DIR, "tmpfs on /dev/shm");
	if (r < 0)
		return r;
	if (extras->mqueue && (r = setup_mqueue(b, dev)) < 0)
		return r;
	/* the device binds, with one call for all */
	if (isd_mount_setattr(dev, "", AT_EMPTY_PATH | AT_RECURSIVE, &nosuid_noexec) < 0)
		return isd_error(-errno, "making the devices of /dev nosuid,noexec");
	isd_mount_remember_readonly(b, isd_steal_fd(dev));
	return 0;
}

/* Named as runc and crun name them: mountinfo's source column. */
static const char *const proc_opts[] = {"source", "proc", NULL};
static const char *const sysfs_opts[] = {"source", "sysfs", NULL};

/* Whether any gid of [lo, hi] is mapped into this user namespace
 * (gid_map read through proc). */
static bool any_gid_mapped(int proc, unsigned long lo, unsigned long hi)
{
	_cleanup_free_ char *map = NULL;
	unsigned long inside, outside, count;
	int used;

	if (isd_read_file_at(proc, "self/gid_map", &map, NULL) < 0)
		return true;
	for (const char *p = map; sscanf(p, "%lu %lu %lu%n", &inside, &outside, &count, &used) == 3; p += used)
		if (inside <= hi && lo < inside + count)
			return true;
	return false;
}

/* Whether writing value would change nothing, so it need not be written:
 * the current value is the same numbers, or it is a ping_group_range of
 * gids this user namespace does not map, which no process in it can hold
 * (the kernel refuses it with EINVAL, and "nobody may ping" is what it
 * gives already).  A joined network namespace (a pod's) was set by its
 * maker, and the sandbox's own user namespace may not write it. */
static bool sysctl_unchanged(int proc, int fd, const char *key, const char *value)
{
	char cur[256];
	unsigned long lo, hi, want[8], have[8];
	ssize_t n = pread(fd, cur, sizeof(cur) - 1, 0);
	int nw = 0, nh = 0, used;

	if (n > 0) {
		cur[n] = '\0';
		for (const char *p = value; nw < 8 && sscanf(p, "%lu%n", &want[nw], &used) == 1; p += used)
			nw++;
		for (const char *p = cur; nh < 8 && sscanf(p, "%lu%n", &have[nh], &used) == 1; p += used)
			nh++;
		if (nw > 0 && nw == nh && !memcmp(want, have, (size_t)nw * sizeof(*want)))
			return true;
	}
	return !strcmp(key, "net.ipv4.ping_group_range") && sscanf(value, "%lu %lu", &lo, &hi) == 2 && lo <= hi &&
	       !any_gid_mapped(proc, lo, hi);
}

/* linux.sysctl (isd-runtime; only keys of the sandbox's own namespaces
 * get this far): written by init, which is in those namespaces, through
 * its fresh procfs before /proc/sys is made read-only.  "a.b.c" is
 * "a/b/c"; a key with "/" is a path already (runc's rule). */
int isd_write_sysctls(int proc, char *const *sysctl, const char *only_prefix)
{
	for (size_t i = 0; sysctl && sysctl[i]; i++) {
		const char *eq = strchr(sysctl[i], '=');
		_cleanup_free_ char *path = NULL, *key = NULL;
		_cleanup_close_ int fd = -1;
		size_t len;

		if (only_prefix && strncmp(sysctl[i], only_prefix, strlen(only_prefix)))
			continue;
		if (!eq)
			return isd_error(-EINVAL, "the sysctl %s has no value", sysctl[i]);
		key = isd_xasprintf("%.*s", (int)(eq - sysctl[i]), sysctl[i]);
		path = isd_xasprintf("sys/%s", key);
		if (!strchr(key, '/'))
			for (char *p = path + 4; *p; p++)
				*p = *p == '.' ? '/' : *p;
		fd = openat(proc, path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return isd_error(-errno, "setting the sysctl %s", sysctl[i]);
		if (sysctl_unchanged(proc, fd, key, eq + 1))
			continue;
		len = strlen(eq + 1);
		errno = EIO; /* a short write sets none */
		if (write(fd, eq + 1, len) != (ssize_t)len)
			return isd_error(-errno, "setting the sysctl %s", sysctl[i]);
	}
	return 0;
}

/* /proc before /dev and /sys after it: mountinfo lists mounts in the order
 * they were made, and OCI configs (and the conformance suite that checks
 * the order) list them so. */
static int setup_proc(struct isd_mount_builder *b, const struct isd_spec *spec, struct sources *s,
		      const struct isd_mount_extras *extras)
{
	unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	_cleanup_close_ int proc = -1;
	int r;

	if (spec->pid_host && !extras->pid_joined) {
		r = isd_write_sysctls(s->proc, extras->sysctl, NULL);
		if (r == 0)
			r = attach_at(b, s->proc, "/proc", ISD_NODE_DIR, "the outer /proc");
	} else {
		proc = isd_mount_new_fs("proc", proc_opts, attrs, "/proc");
		if (proc < 0) {
			if (proc == -EPERM || proc == -EBUSY) {
				isd_error(proc, "mounting a fresh /proc for the sandbox's pid namespace");
				isd_error_hint("isd runs inside a container whose /proc has masked or read-only submounts, "
					       "so the kernel refuses a new procfs; fix: run the outer container with an unmasked /proc "
					       "(docker/podman: --security-opt systempaths=unconfined), or use --pid=host "
					       "(no pid namespace, the outer /proc read-only), or --isolation auto, which takes that");
			}
			return proc;
		}
		r = isd_write_sysctls(proc, extras->sysctl, NULL);
		if (r == 0)
			r = attach_at(b, proc, "/proc", ISD_NODE_DIR, "procfs on /proc");
	}
	return r;
}

static int setup_sys(struct isd_mount_builder *b, const struct isd_spec *spec, struct sources *s,
		     const struct isd_mount_extras *extras)
{
	unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	_cleanup_close_ int sys = -1;
	int r;

	if (spec->network == ISD_NET_HOST) {
		r = attach_at(b, s->sys, "/sys", ISD_NODE_DIR, "the outer /sys");
		if (r < 0)
			return r;
	} else {
		sys = isd_mount_new_fs("sysfs", sysfs_opts, attrs | MOUNT_ATTR_RDONLY, "/sys");
		/* sysfs is a convenience (CPU lists, cgroup limits); a host that
		 * refuses it still gets a working sandbox with an empty /sys. */
		if (sys >= 0) {
			r = attach_at(b, sys, "/sys", ISD_NODE_DIR, "sysfs on /sys");
			if (r < 0)
				return r;
		} else {
			isd_error_clear();
			_cleanup_close_ int dir = isd_mount_resolve_create(b, "/sys", ISD_NODE_DIR, true);
			if (dir < 0)
				return dir;
		}
	}
	if (extras->cgroup2 && sys >= 0) {
		_cleanup_close_ int cg = isd_mount_new_fs("cgroup2", NULL, attrs | MOUNT_ATTR_RDONLY, "/sys/fs/cgroup");
		if (cg < 0)
			return cg;
		r = attach_at(b, cg, "/sys/fs/cgroup", ISD_NODE_DIR, "cgroup2 on /sys/fs/cgroup");
		if (r < 0)
			return r;
	}
	return isd_mount_proc_restrict(b);
}

static int compare_depth(const void *a, const void *b)
{
	const struct isd_mount *const *ma = a, *const *mb = b;
	int da = 0, db = 0;

	for (const char *p = (*ma)->destination; *p; p++)
		da += *p == '/';
	for (const char *p = (*mb)->destination; *p; p++)
		db += *p == '/';
	if (da != db)
		return da - db;
	return *ma < *mb ? -1 : *ma > *mb;
}

/* The sandbox's own view of a path bound onto itself (guard.h). */
static int rebind(struct isd_mount_builder *b, const struct isd_mount *m)
{
	_cleanup_close_ int target = isd_mount_resolve_create(b, m->destination, ISD_NODE_DIR, false);
	_cleanup_close_ int src = -1;

	if (target < 0)
		return target;
	src = isd_mount_clone_tree(target, "", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (m->readonly ? MOUNT_ATTR_RDONLY : 0),
				   m->destination);
	if (src < 0)
		return src;
	return isd_mount_attach(src, target, m->destination);
}

/* isd-runtime's propagation of one mount (isd/spec.h), on the mount
 * itself once attached, as crun sets it; MS_REC: its submounts too.  The
 * sandbox's mount namespace took every mount as a slave (isd_mount_setup)
 * and the binds are clones of those or, from a root caller, made slaves
 * of the host's (src/rootful.c) unless shared was asked: making one
 * shared gives it a peer group of the sandbox's own, which the host is
 * not in. */
static int set_propagation(int mfd, unsigned long prop, const char *what)
{
	struct mount_attr attr = {.propagation = prop & ~(unsigned long)MS_REC};

	if (!attr.propagation)
		return 0;
	if (isd_mount_setattr(mfd, "", AT_EMPTY_PATH | (prop & MS_REC ? AT_RECURSIVE : 0), &attr) < 0)
		return isd_error(-errno, "setting the propagation of %s", what);
	return 0;
}

static int setup_user_mounts(struct isd_mount_builder *b, const struct isd_spec *spec, struct sources *s)
{
	const struct isd_mount **order = isd_xcalloc(spec->n_mounts, sizeof(*order));
	int r = 0;

	/* Parents before children, whatever order the options came in;
	 * an OCI config's in its own order. */
	for (size_t i = 0; i < spec->n_mounts; i++)
		order[i] = &spec->mounts[i];
	if (!spec->mounts_listed_order)
		qsort(order, spec->n_mounts, sizeof(*order), compare_depth);

	for (size_t k = 0; k < spec->n_mounts && r == 0; k++) {
		const struct isd_mount *m = order[k];
		size_t i = (size_t)(m - spec->mounts);

		if (m->rebind) {
			r = rebind(b, m);
		} else if (m->type != ISD_MOUNT_TMPFS) {
			struct stat st;
			if (fstat(s->binds[i], &st) < 0) {
				r = isd_error(-errno, "inspecting %s", m->source);
				break;
			}
			enum isd_node_kind kind = S_ISDIR(st.st_mode) ? ISD_NODE_DIR : ISD_NODE_FILE;
			/* An OCI config's mounts show in mountinfo in its order
			 * (isd_mount_reclone); isd exec's start skips the cost. */
			bool renewed = spec->mounts_listed_order && isd_mount_reclone(&s->binds[i]);

			r = attach_at(b, s->binds[i], m->destination, kind, m->destination);
			if (r == 0 && !renewed && spec->mounts_listed_order)
				r = isd_mount_renew_attached(b, &s->binds[i], m->destination, kind);
			if (r == 0)
				r = set_propagation(s->binds[i], m->propagation, m->destination);
		} else {
			unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					 (m->exec ? 0 : MOUNT_ATTR_NOEXEC);
			_cleanup_close_ int t = isd_mount_new_tmpfs(m->size, m->has_mode ? m->mode : 01777,
							  m->has_uid ? &m->uid : NULL,
							  m->has_gid ? &m->gid : NULL, attrs, m->destination);
			if (t < 0) {
				r = t;
				break;
			}
			r = attach_at(b, t, m->destination, ISD_NODE_DIR, m->destination);
			if (r == 0)
				r = set_propagation(t, m->propagation, m->destination);
			for (size_t l = 0; r == 0 && m->links && m->links[l]; l++) {
				_cleanup_free_ char *name = isd_xstrdup(m->links[l]);
				char *tab = strchr(name, '\t');
				*tab = '\0';
				if (symlinkat(tab + 1, t, name) < 0)
					r = isd_error(-errno, "creating the link %s/%s", m->destination, name);
			}
			/* A read-only tmpfs still has to receive the mount points of
			 * mounts below it, so it turns read-only at the end. */
			if (r == 0 && m->readonly)
				isd_mount_remember_readonly(b, isd_steal_fd(t));
		}
	}
	free(order);
	return r;
}

/* Put content at path: written in place when the file lives on one of our
 * tmpfs mounts, otherwise bound over the image's file. */
static int place_file(struct isd_mount_builder *b, const char *path, const char *content)
{
	_cleanup_close_ int target = isd_mount_resolve_create(b, path, ISD_NODE_FILE, true);
	_cleanup_close_ int fd = -1, clone = -1;
	char proc_path[64], name[16];
	int r;

	if (target < 0)
		return target;
	{
		struct stat st;
		if (fstat(target, &st) < 0)
			return isd_error(-errno, "inspecting %s", path);
		/* A FIFO or device here would block us or be clobbered. */
		if (!S_ISREG(st.st_mode))
			return isd_error(0, "generating %s: the image's file is not a regular file (mode %o); refusing to touch it",
					 path, st.st_mode);
	}
	snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", target);
	fd = b->writable_image ? -1 : open(proc_path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (b->writable_image)
		errno = EROFS; /* bound over, like in a read-only image */
	if (fd >= 0)
		return isd_write_all(fd, content, strlen(content)) < 0 ? isd_error(-errno, "writing %s", path) : 0;
	if (errno != EROFS && errno != EACCES && errno != EPERM)
		return isd_error(-errno, "writing %s", path);

	/* The generated file stays in a tmpfs that is attached (so that it can
	 * be cloned, and so that shadowing can clone the bind again) but hidden
	 * under the root, and goes away with the old root at pivot_root. */
	snprintf(name, sizeof(name), "%u", b->n_generated++);
	r = isd_write_file_at(b->generated, name, content, O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
	if (r < 0)
		return isd_error(r, "generating %s", path);
	clone = isd_open_tree(b->generated, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (clone < 0)
		return isd_error(-errno, "preparing %s", path);
	{
		struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC};
		if (isd_mount_setattr(clone, "", AT_EMPTY_PATH, &attr) < 0)
			return isd_error(-errno, "restricting %s", path);
	}
	return isd_mount_attach(clone, target, path);
}

static int staging_dir(const char **out)
{
	static const char *const candidates[] = {"/tmp", "/run", "/var/tmp", "/mnt", "/dev", "/"};
	struct stat st;

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		if (stat(candidates[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			*out = candidates[i];
			return 0;
		}
	}
	return isd_error(-ENOENT, "finding a directory to build the sandbox root on");
}

static int build_root(struct isd_mount_builder *b, const struct isd_spec *spec, struct sources *s)
{
	static const char *const host_dirs[] = {"home", "root", "var", NULL};
	unsigned ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	int r;

	if (spec->rootfs)
		return isd_mount_mirror_entries(s->image, b->root, keep_image_entry, ro, spec->rootfs);

	r = isd_mount_mirror_entries(s->image, b->root, keep_host_entry, ro, "/");
	if (r < 0)
		return r;
	for (size_t i = 0; host_dirs[i]; i++)
		if (mkdirat(b->root, host_dirs[i], i == 1 ? 0700 : 0755) < 0)
			return isd_error(-errno, "creating /%s", host_dirs[i]);
	if (symlinkat("../run", b->root, "var/run") < 0 || symlinkat("../run/lock", b->root, "var/lock") < 0)
		return isd_error(-errno, "creating /var/run");
	return 0;
}

/* The new mount API and openat2 arrived in Linux 5.2 to 5.12; an older
 * kernel (or a seccomp profile of an outer container that predates them)
 * answers ENOSYS, which alone would say little. */
static int explain_enosys(int r)
{
	if (r == -ENOSYS)
		isd_error_hint("isd needs Linux 5.12 or newer (open_tree, fsopen, move_mount, mount_setattr, openat2); "
			       "inside a container, its seccomp profile may also block them");
	return r;
}

int isd_mount_setup(const struct isd_spec *spec, const struct isd_mount_extras *extras)
{
	struct isd_mount_builder b = {.root = -1, .generated = -1};
	struct sources s = {.image = -1, .proc = -1, .sys = -1};
	const char *staging = "/tmp";
	int r;

	for (size_t i = 0; i < N_DEV_NODES; i++)
		s.dev[i] = -1;

	/* Mount events must not travel back to the host, nor from it into
	 * half-built state. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		r = isd_error(-errno, "making the sandbox's mounts private");
		/* The first mount operation: where AppArmor's userns restriction
		 * or a hostile outer seccomp profile shows itself. */
		isd_userns_explain_failure(r);
		goto out;
	}
	r = clone_sources(spec, extras, &s);
	if (r < 0)
		goto out;
	r = staging_dir(&staging);
	if (r < 0)
		goto out;
	b.generated = isd_mount_new_tmpfs(1 << 20, 0755, NULL, NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				"generated files");
	if (b.generated < 0) {
		r = b.generated;
		goto out;
	}
	if (isd_move_mount(b.generated, "", AT_FDCWD, staging, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		r = isd_error(-errno, "attaching a tmpfs at %s", staging);
		goto out;
	}
	if (extras->sources_prepared && extras->image_fd >= 0) {
		r = isd_mount_placeholder(b.generated, "image", true, 0700);
		s.image = r < 0 ? -1 : openat(b.generated, "image", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		r = s.image < 0 ? isd_error(r < 0 ? r : -errno, "preparing the image's mount point")
				: isd_mount_attach(extras->image_fd, s.image, spec->rootfs);
		if (r == 0) {
			close(s.image);
			s.image = openat(b.generated, "image", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (s.image < 0)
				r = isd_error(-errno, "opening the root filesystem %s", spec->rootfs);
		}
		if (r < 0)
			goto out;
	}
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (m->agent_state ? MOUNT_ATTR_NOEXEC : 0);
		int lower = s.binds[i];

		if (m->type != ISD_MOUNT_OVERLAY || s.layer_dirs[i] < 0)
			continue;
		r = s.binds[i] = isd_workspace_new_overlay(&b, lower, s.layer_dirs[i], i, attrs, m->agent_state, m->source);
		close(lower);
		if (r < 0)
			goto out;
	}
	/* isd build's RUN: the image tree itself, read-write, is the root. */
	b.writable_image = spec->writable_root;
	if (spec->writable_root)
		b.root = isd_mount_clone_tree(s.image, "", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, spec->rootfs);
	else
		b.root = isd_mount_new_tmpfs(4 << 20, 0755, NULL, NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "the root");
	if (b.root < 0) {
		r = b.root;
		goto out;
	}
	if (isd_move_mount(b.root, "", AT_FDCWD, staging, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		r = isd_error(-errno, "attaching the sandbox root at %s", staging);
		goto out;
	}

	r = spec->writable_root ? 0 : build_root(&b, spec, &s);
	if (r < 0)
		goto out;
	r = setup_proc(&b, spec, &s, extras);
	if (r < 0)
		goto out;
	r = setup_dev(&b, spec, &s, extras);
	if (r < 0)
		goto out;
	r = setup_sys(&b, spec, &s, extras);
	if (r < 0)
		goto out;
	r = setup_user_mounts(&b, spec, &s);
	if (r < 0)
		goto out;
	r = isd_workspace_protect(&b, spec);
	if (r < 0)
		goto out;
	r = place_file(&b, "/etc/hosts", extras->hosts);
	if (r < 0)
		goto out;
	r = place_file(&b, "/etc/resolv.conf", extras->resolv_conf);
	if (r < 0)
		goto out;
	/* Programs that read the name from the file (shell prompts, some
	 * agents' telemetry) must see what hostname(1) says, as in Docker:
	 * the namespace's name, which is the inherited one where setting it
	 * was refused. */
	{
		struct utsname u;
		_cleanup_free_ char *name = isd_xasprintf("%s\n", uname(&u) == 0 ? u.nodename : spec->hostname);
		r = place_file(&b, "/etc/hostname", name);
	}
	if (r < 0)
		goto out;
	r = isd_mount_paths_restrict(&b, spec->readonly_paths, spec->masked_paths);
	if (r < 0)
		goto out;
	if (spec->workdir) {
		int fd = isd_mount_resolve_create(&b, spec->workdir, ISD_NODE_DIR, true);
		if (fd < 0) {
			r = fd;
			goto out;
		}
		close(fd);
	}
	{
		const char *home = isd_spec_getenv(spec, "HOME");
		if (!spec->rootfs && home && home[0] == '/' && strcmp(home, "/")) {
			int fd = isd_mount_resolve_create(&b, home, ISD_NODE_DIR, true);
			if (fd < 0) {
				r = fd;
				goto out;
			}
			close(fd);
		}
	}

	for (size_t i = 0; i < b.n_readonly_later; i++) {
		r = isd_mount_set_readonly(b.readonly_later[i], "a tmpfs of the sandbox");
		if (r < 0)
			goto out;
	}
	r = spec->writable_root ? 0 : isd_mount_set_readonly(b.root, "the sandbox root");
	if (r < 0)
		goto out;

	/* pivot_root(".", ".") stacks the old root on the new one; detaching
	 * it leaves nothing of the host's tree reachable. */
	if (fchdir(b.root) < 0 || isd_pivot_root(".", ".") < 0) {
		r = isd_error(-errno, "pivot_root into the sandbox root");
		goto out;
	}
	if (umount2(".", MNT_DETACH) < 0) {
		r = isd_error(-errno, "detaching the host's root");
		goto out;
	}
	if (chdir("/") < 0) {
		r = isd_error(-errno, "entering the sandbox root");
		goto out;
	}
	/* linux.rootfsPropagation, as runc and crun set it after pivot_root:
	 * the root is isd's own tmpfs (or a clone of the image's), so shared
	 * makes a peer group of the sandbox's own. */
	if (spec->rootfs_propagation && mount(NULL, "/", NULL, spec->rootfs_propagation, NULL) < 0) {
		r = isd_error(-errno, "setting the propagation of the root (linux.rootfsPropagation)");
		goto out;
	}
	r = 0;
out:
	sources_close(&s, spec->n_mounts, spec->n_devices);
	for (size_t i = 0; i < b.n_readonly_later; i++)
		close(b.readonly_later[i]);
	free(b.readonly_later);
	if (b.root >= 0)
		close(b.root);
	if (b.generated >= 0)
		close(b.generated);
	return explain_enosys(r);
}
