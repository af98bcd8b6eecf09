/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * linux.namespaces entries with a path: the container joins a namespace
 * the engine made (rootless podman's user and network namespaces, a pod's
 * infra container's net, ipc, uts and pid; a cgroup namespace).
 *
 * Every path is opened and its type checked (NS_GET_NSTYPE) while the
 * config is read, before anything exists on the system.  The joining
 * itself happens in a child of the runtime, which setns()es (user first:
 * its capabilities are what the other joins need) and makes the sandbox
 * from there, so that the sandbox shares those namespaces instead of
 * making its own; the runtime stays where it was, for the hooks that run
 * in its namespaces (prestart, createRuntime, poststart, poststop) and
 * for the state it writes.  The child hands the sandbox's init, pty and
 * cgroup back and exits; init, set up by then, is reparented to the
 * runtime (a subreaper for the moment), so that `run` waits for it as
 * for a child of its own.
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "isd/oci.h"
#include "isd/process.h"
#include "isd/sandbox.h"
#include "isd/spec.h"
#include "isd/util.h"
#include "mount.h"
#include "userns.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef NS_GET_NSTYPE
#define NS_GET_NSTYPE _IO(0xb7, 0x3)
#endif

static const int clone_flag[ISD_OCI_NS_COUNT] = {
	[ISD_OCI_NS_PID] = CLONE_NEWPID, [ISD_OCI_NS_NET] = CLONE_NEWNET,	  [ISD_OCI_NS_MNT] = CLONE_NEWNS,
	[ISD_OCI_NS_IPC] = CLONE_NEWIPC, [ISD_OCI_NS_UTS] = CLONE_NEWUTS,	  [ISD_OCI_NS_USER] = CLONE_NEWUSER,
	[ISD_OCI_NS_CGROUP] = CLONE_NEWCGROUP,
};

/* The order of setns(): the user namespace first (joining it gives the
 * capabilities over what it owns), the pid namespace last (it only
 * applies to children).  Not the cgroup namespace: the sandbox's init
 * joins that once in its cgroup (the joiner reads its own cgroup's path,
 * which would then be relative to the joined one's root). */
static const enum isd_oci_ns join_order[] = {
	ISD_OCI_NS_USER, ISD_OCI_NS_IPC, ISD_OCI_NS_UTS, ISD_OCI_NS_NET, ISD_OCI_NS_PID,
};

static const char *type_of_flag(int flag)
{
	for (int k = 0; k < ISD_OCI_NS_COUNT; k++)
		if (clone_flag[k] == flag)
			return isd_oci_ns_name(k);
	return NULL;
}

void rt_ns_init(struct rt_ns *j)
{
	for (int k = 0; k < ISD_OCI_NS_COUNT; k++)
		j->fd[k] = -1;
	j->shared = 0;
}

void rt_ns_close(struct rt_ns *j)
{
	for (int k = 0; k < ISD_OCI_NS_COUNT; k++)
		if (j->fd[k] >= 0)
			close(j->fd[k]);
	rt_ns_init(j);
}

int rt_ns_plan(struct isd_spec *spec, const struct isd_oci_extra *x)
{
	const struct isd_oci_namespace *ns = x->ns;

	/* isd builds the tree in a mount namespace of its own, from the
	 * bundle's root: a joined one would hold somebody else's tree. */
	if (ns[ISD_OCI_NS_MNT].mode == ISD_OCI_NS_JOIN)
		return RT_ERR(-EOPNOTSUPP, "%s: linux.namespaces (mount): joining the mount namespace %s is not "
					   "supported by isd-runtime: it builds every container in one of its own",
			      x->config_path, ns[ISD_OCI_NS_MNT].path);
	/* The container's /proc is a procfs of the pid namespace, which only
	 * a user namespace owning it may mount: isd's own cannot. */
	if (ns[ISD_OCI_NS_PID].mode == ISD_OCI_NS_JOIN && ns[ISD_OCI_NS_USER].mode != ISD_OCI_NS_JOIN)
		return RT_ERR(-EOPNOTSUPP, "%s: linux.namespaces (pid): joining the pid namespace %s needs its user "
					   "namespace joined too (a \"user\" entry with a path): isd's own user namespace "
					   "cannot mount its /proc", x->config_path, ns[ISD_OCI_NS_PID].path);
	/* joined by init, from the sandbox's user namespace, which must own it */
	if (ns[ISD_OCI_NS_CGROUP].mode == ISD_OCI_NS_JOIN && ns[ISD_OCI_NS_USER].mode != ISD_OCI_NS_JOIN)
		return RT_ERR(-EOPNOTSUPP, "%s: linux.namespaces (cgroup): joining the cgroup namespace %s needs its "
					   "user namespace joined too (a \"user\" entry with a path)", x->config_path,
			      ns[ISD_OCI_NS_CGROUP].path);
	/* Joined by the child that makes the sandbox, so the caller's from
	 * the sandbox's side: the engine configured it. */
	if (ns[ISD_OCI_NS_NET].mode == ISD_OCI_NS_JOIN)
		spec->network = ISD_NET_HOST;
	/* no pid namespace of its own: init is not its pid 1 (isd_init_main's
	 * --pid host way), its children are born in the joined one */
	if (ns[ISD_OCI_NS_PID].mode == ISD_OCI_NS_JOIN)
		spec->pid_host = true;
	return 0;
}

int rt_ns_open(const struct isd_oci_extra *x, struct rt_ns *j)
{
	rt_ns_init(j);
	for (int k = 0; k < ISD_OCI_NS_COUNT; k++) {
		const char *path = x->ns[k].path;
		int fd, type;

		if (x->ns[k].mode != ISD_OCI_NS_JOIN)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			int r = -errno;
			rt_ns_close(j);
			return isd_error(r, "%s: linux.namespaces (%s): opening %s", x->config_path, isd_oci_ns_name(k),
					 path);
		}
		j->fd[k] = fd;
		type = ioctl(fd, NS_GET_NSTYPE);
		if (type != clone_flag[k]) {
			const char *is = type < 0 ? NULL : type_of_flag(type);
			rt_ns_close(j);
			if (!is)
				return RT_ERR(-EINVAL, "%s: linux.namespaces (%s): %s is not a namespace file",
					      x->config_path, isd_oci_ns_name(k), path);
			return RT_ERR(-EINVAL, "%s: linux.namespaces (%s): %s is a %s namespace, not a %s one",
				      x->config_path, isd_oci_ns_name(k), path, is, isd_oci_ns_name(k));
		}
		j->shared |= (unsigned long)clone_flag[k];
	}
	return 0;
}

static int join_all(const struct rt_ns *j)
{
	for (size_t i = 0; i < sizeof(join_order) / sizeof(join_order[0]); i++) {
		enum isd_oci_ns k = join_order[i];

		if (j->fd[k] >= 0 && setns(j->fd[k], clone_flag[k]) < 0)
			return isd_error(-errno, "joining the %s namespace of linux.namespaces", isd_oci_ns_name(k));
	}
	return 0;
}

/* isd's rule for a root caller (src/rootful.c): the payload is never the
 * host's uid 0.  In a joined user namespace the ids are its own, so the
 * rule is checked there: a file of the host's root (a sysctl) shows as
 * the id that root has in the namespace, a mapped one when it has one. */
static int check_not_host_root(const struct isd_spec *spec)
{
	struct stat st;

	if (stat("/proc/sys/kernel/core_pattern", &st) < 0)
		return 0; /* no procfs: the root caller's check before joining stands */
	if (st.st_uid == spec->uid && isd_userns_ids_mapped("/proc/self/uid_map", st.st_uid, 1))
		return RT_ERR(-EPERM, "process.user.uid %u: in the joined user namespace that is the host's root, "
				      "which isd never runs a payload as", spec->uid);
	return 0;
}

/* What the child that joined sends back. */
struct joined_result {
	int code;
	pid_t init_pid;
	char cgroup_dir[PATH_MAX];
	char text[1024];
};

static _Noreturn void joiner_main(const struct isd_spec *spec, const struct rt_ns *j, struct isd_sandbox_detached *d,
				  int sock)
{
	static struct joined_result res;

	res.code = join_all(j) < 0 || ((j->shared & CLONE_NEWUSER) && check_not_host_root(spec) < 0) ? ISD_EXIT_FAILURE
												       : 0;
	/* A joined network namespace's sysctls are written here, by the
	 * joiner, which has the capabilities of the namespace's owner (the
	 * engine's user namespace, or the one joined): the sandbox's own user
	 * namespace, below it, may not (EPERM). */
	if (res.code == 0 && j->fd[ISD_OCI_NS_NET] >= 0 && d->sysctl) {
		_cleanup_close_ int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
		char **rest = NULL;

		if (proc < 0 || isd_write_sysctls(proc, d->sysctl, "net.") < 0)
			res.code = ISD_EXIT_FAILURE;
		for (size_t i = 0; d->sysctl[i]; i++)
			if (strncmp(d->sysctl[i], "net.", 4))
				isd_strv_push(&rest, isd_xstrdup(d->sysctl[i]));
		d->sysctl = rest;
	}
	if (res.code == 0) {
		d->shared_ns = j->shared & (unsigned long)(CLONE_NEWUSER | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID);
		d->cgroupns_fd = j->fd[ISD_OCI_NS_CGROUP];
		res.code = isd_sandbox_create_detached(spec, d);
	}
	if (res.code == 0) {
		res.init_pid = d->init_pid;
		snprintf(res.cgroup_dir, sizeof(res.cgroup_dir), "%s", d->cgroup_dir ? d->cgroup_dir : "");
	} else {
		snprintf(res.text, sizeof(res.text), "%s", isd_error_message());
	}
	if (isd_send_with_fd(sock, &res, sizeof(res), res.code == 0 ? d->pty_master : -1) < 0 && d->init_pid > 0)
		kill(d->init_pid, SIGKILL);
	_exit(0);
}

int rt_ns_create_detached(const struct isd_spec *spec, const struct rt_ns *j, struct isd_sandbox_detached *d)
{
	static struct joined_result res;
	int sv[2], status, pty = -1;
	ssize_t n;
	pid_t pid;

	d->init_pid = -1;
	d->pty_master = -1;
	d->cgroup_dir = NULL;
	if (!j->shared)
		return isd_sandbox_create_detached(spec, d);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return isd_error(-errno, "creating the socket to the namespace joiner"), ISD_EXIT_FAILURE;
	/* init comes to us when the joiner exits (run waits for it) */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		isd_error(-errno, "becoming the subreaper of the container's init");
		goto fail;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		isd_error(-errno, "starting the namespace joiner");
		goto fail;
	}
	if (pid == 0) {
		close(sv[0]);
		joiner_main(spec, j, d, sv[1]);
	}
	close(sv[1]);
	memset(&res, 0, sizeof(res));
	do
		n = isd_recv_with_fd(sv[0], &res, sizeof(res), 0, &pty);
	while (n == -EINTR);
	close(sv[0]);
	isd_wait_pid(pid, &status);
	if (n != (ssize_t)sizeof(res)) {
		if (pty >= 0)
			close(pty);
		return isd_error(-EIO, "the namespace joiner ended without making the container"), ISD_EXIT_FAILURE;
	}
	if (res.code != 0) {
		res.text[sizeof(res.text) - 1] = '\0';
		isd_error_raw(-EIO, res.text[0] ? res.text : "making the container in its joined namespaces failed");
		return res.code;
	}
	d->init_pid = res.init_pid;
	d->pty_master = pty;
	res.cgroup_dir[sizeof(res.cgroup_dir) - 1] = '\0';
	d->cgroup_dir = res.cgroup_dir[0] ? isd_xstrdup(res.cgroup_dir) : NULL;
	return 0;
fail:
	close(sv[0]);
	close(sv[1]);
	return ISD_EXIT_FAILURE;
}

_Static_assert(sizeof(((struct rt_ns *)0)->fd) / sizeof(int) == ISD_OCI_NS_COUNT, "rt_ns.fd: one per namespace type");
