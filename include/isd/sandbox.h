/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Creating and running one sandbox from a validated spec. */
#ifndef ISD_SANDBOX_H
#define ISD_SANDBOX_H

#include <sys/types.h>

#include "isd/spec.h"

/* Runs the payload to completion; returns isd's exit status (the payload's,
 * 128+N for signal N, 125/126/127 for isd's own failures, already printed). */
int isd_sandbox_run(const struct isd_spec *spec);

/* A sandbox that outlives the process that made it (isd-runtime's create,
 * runc's model): no supervisor stays on the host, the sandbox's init is
 * reparented to the caller's subreaper when the caller exits, and its
 * exit status is the payload's.  What needs isd on the host for the whole
 * run (the network relay, a cow session, the activity log, the storage
 * watcher, the landlock tier) is refused. */
struct isd_sandbox_detached {
	/* In: a fifo opened O_RDWR (so that the gate never sees a hang-up)
	 * on which the payload waits for one byte, right before its seccomp
	 * filter and execve: the created-but-not-started state.  The command
	 * is looked up on the payload's PATH before, so a missing one fails
	 * the create.  -1: no gate. */
	int start_gate_fd;
	/* In: namespaces of the caller that the sandbox shares instead of
	 * making its own (CLONE_NEWUSER, CLONE_NEWIPC, CLONE_NEWUTS,
	 * CLONE_NEWCGROUP): isd-runtime has setns()ed into the ones its
	 * config.json names by path.  A shared user namespace gets no maps
	 * (it has its own), and spec->uid/gid are its ids.  The network and
	 * pid namespaces follow spec->network and spec->pid_host; with
	 * spec->pid_host, CLONE_NEWPID says the caller joined one for its
	 * children (setns), of which the sandbox mounts a /proc.  0: none. */
	unsigned long shared_ns;
	/* In: the sandbox's cgroup (isd-runtime's linux.cgroupsPath, as
	 * isd_cgroup_prepare_path() takes it), else, with cgroup_name, isd's
	 * placement under that name instead of isd-<pid>-<rand> (which isd gc
	 * would take for a dead isd's).  NULL: isd's placement and name. */
	const char *cgroup_path, *cgroup_name;
	/* In: the IPC namespace's message queues at /dev/mqueue. */
	bool mqueue;
	/* In: "key=value" sysctls of the sandbox's own namespaces
	 * (isd-runtime's linux.sysctl, checked namespaced), or NULL. */
	char *const *sysctl;
	/* In: descriptors the payload gets as 3, 4, ... (isd-runtime's
	 * --preserve-fds), none of them below 3 + n_preserved_fds + 16 (the
	 * sandbox's own fixed numbers are small); n = 0: stdio only. */
	const int *preserved_fds;
	size_t n_preserved_fds;
	/* In: a cgroup namespace init joins instead of making its own, or
	 * -1 (isd-runtime's linux.namespaces cgroup path; the sandbox's user
	 * namespace must own it). */
	int cgroupns_fd;
	/* Out */
	pid_t init_pid;   /* the sandbox's pid 1, as the caller sees it */
	int pty_master;   /* spec->tty: the pty's master, else -1 (the caller's to close) */
	char *cgroup_dir; /* the cgroup made for spec->limits, NULL when none (the caller frees) */
};

/* Returns once the payload waits at the gate (or, without one, once it
 * ran execve): 0, or isd's exit status (125/126/127) with the message
 * recorded, not printed; nothing of the sandbox is left then. */
int isd_sandbox_create_detached(const struct isd_spec *spec, struct isd_sandbox_detached *d);

/* What isd_sandbox_create_detached() left on the host, once the sandbox
 * ended (or to end it): kills what is left in the cgroup and removes it.
 * Returns 0 or -errno (recorded); a cgroup that is gone already is 0. */
int isd_sandbox_remove_cgroup(const char *cgroup_dir);

/* isd-runtime exec: spec->argv (with spec->env, workdir, uid, gid and
 * tty) as one more process of the running sandbox whose init is init_pid,
 * confined as its payload is: the sandbox's namespaces (as spec->pid_host
 * and spec->network say it has them) and cgroup_dir (or NULL), no
 * capabilities, no_new_privs, spec's Landlock rules, spec->seccomp last
 * before execve.  The caller becomes a child subreaper: the process is
 * its child when this returns (once execve went through).  Returns 0 or
 * isd's exit status (125/126/127) with the message recorded. */
struct isd_sandbox_entered {
	pid_t pid;      /* the process, as the caller sees it */
	int pty_master; /* spec->tty: the pty's master (the caller's to close), else -1 */
	/* In: as isd_sandbox_detached's, the process's 3, 4, ... */
	const int *preserved_fds;
	size_t n_preserved_fds;
};
int isd_sandbox_enter(const struct isd_spec *spec, pid_t init_pid, const char *cgroup_dir,
		      struct isd_sandbox_entered *e);
/* The CLONE_NEW* flags of init_pid's namespaces that are not the
 * caller's own (compared by inode), for setns() of its pidfd; -errno,
 * recorded, when they cannot be read. */
int isd_sandbox_foreign_namespaces(pid_t init_pid);

#endif
