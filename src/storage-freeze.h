/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The storage watcher's freeze of a sandbox (src/storage-freeze.c): its
 * cgroup's cgroup.freeze when it has a cgroup, else SIGSTOP to each of its
 * processes; and the process tree both that and the count of files held
 * open walk.
 */
#ifndef ISD_STORAGE_FREEZE_H
#define ISD_STORAGE_FREEZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct isd_proc_info {
	pid_t pid, ppid;
	char state;
	unsigned long long start;
};

/* Every process of /proc (caller frees *out); its count. */
size_t isd_proc_list(struct isd_proc_info **out);
/* Whether v[i] descends from tree (not tree itself). */
bool isd_proc_descendant(const struct isd_proc_info *v, size_t n, size_t i, pid_t tree);

/* Files tree's descendants (but skip) hold open after deleting them (or
 * made with O_TMPFILE) on a file system of devs, or on an overlay: their
 * allocated bytes and their number added (each inode once). */
void isd_proc_count_held(pid_t tree, pid_t skip, const dev_t *devs, size_t n_devs, uint64_t *bytes, uint64_t *inodes);

struct isd_freezer {
	int cgroup_fd; /* the sandbox's cgroup, or -1: SIGSTOP instead */
	pid_t tree;    /* its descendants are the sandbox */
	pid_t skip;    /* a descendant that is not (the watcher's counting process), or 0 */
	int *stopped;  /* pidfds of the processes SIGSTOP stopped */
	size_t n_stopped;
};

/* Stops the sandbox.  settled: returns only once none of its processes
 * runs (cgroup.events says frozen, or a pass of SIGSTOP found none
 * running), so what a count sees next is what they wrote.  false when
 * that could not be made sure of. */
bool isd_freezer_freeze(struct isd_freezer *f, bool settled);
void isd_freezer_thaw(struct isd_freezer *f);
/* SIGKILL to what SIGSTOP stopped (the sandbox's end). */
void isd_freezer_kill(struct isd_freezer *f);

#endif
