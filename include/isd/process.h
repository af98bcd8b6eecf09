/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Waiting for isd's own children, and what /proc says of a process
 * (src/process.c). */
#ifndef ISD_PROCESS_H
#define ISD_PROCESS_H

#include <sys/types.h>

/* waitpid(pid, status, 0), again after EINTR; status may be NULL.
 * Returns 0 or -errno. */
int isd_wait_pid(pid_t pid, int *status);

/* crun's cleanup_pid: a child that must not outlive a failed start is
 * killed (SIGKILL) and reaped, and *pid becomes -1; nothing when *pid is
 * not positive (not started, or reaped already).  With _cleanup_pid_ it
 * runs when the variable goes out of scope. */
void isd_kill_and_reap(pid_t *pid);
#define _cleanup_pid_ __attribute__((cleanup(isd_kill_and_reap)))

/* The pid of host pid `pid` in its innermost pid namespace (a sandbox's),
 * the host pid of its parent and of its thread group (tgid may be NULL),
 * from /proc/PID/status; -1 when unknown (it is gone). */
void isd_process_status(pid_t pid, long *ns_pid, long *ppid, long *tgid);
/* The same from the status file at path, under dirfd (the process's /proc
 * directory and "status"; -1: unknown). */
void isd_process_status_at(int dirfd, const char *path, long *ns_pid, long *ppid, long *tgid);

#endif
