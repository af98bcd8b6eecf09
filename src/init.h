/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pid 1 of the sandbox: reaps orphans, forwards signals, reports the exit. */
#ifndef ISD_INIT_H
#define ISD_INIT_H

#include <signal.h>
#include <sys/types.h>

/* The signals isd forwards from the caller to the payload. */
#define ISD_N_FORWARDED_SIGNALS 8
extern const int isd_forwarded_signals[ISD_N_FORWARDED_SIGNALS];

/* Block the forwarded signals and SIGCHLD (before forking the payload, so
 * that none is lost); the payload restores old_mask. */
int isd_init_block_signals(sigset_t *old_mask);

/* Run as init until the payload exits; returns the status isd should exit
 * with: the payload's own code, or 128+N when signal N killed it. */
int isd_init_run(pid_t payload);
/* The same, but returns -1 as soon as stop_sig (blocked by the caller)
 * arrives. */
int isd_init_run_until(pid_t payload, int stop_sig);

/* Without a pid namespace (--pid host), as a child subreaper: SIGKILL every
 * descendant until none is left (but exclude, a helper of isd's own). */
void isd_init_kill_descendants(pid_t exclude);

/* Docker's convention for a wait status. */
int isd_exit_status_from_wait(int status);

#endif
