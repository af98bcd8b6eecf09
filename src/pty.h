/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pseudo-terminals for `isd exec -t`.  The pty comes from the sandbox's own
 * devpts instance, so the payload never holds a descriptor of the caller's
 * terminal; isd on the host relays between the two, with the caller's
 * terminal in raw mode for as long as the relay runs.
 */
#ifndef ISD_PTY_H
#define ISD_PTY_H

#include <stdbool.h>
#include <sys/types.h>

/* In the sandbox (after pivot_root): a new pty pair from /dev/ptmx. */
int isd_pty_open(int *master, int *slave);

/* In the payload, after setsid(): make slave the controlling terminal and
 * stdin, stdout and stderr. */
int isd_pty_attach(int slave);

/* Parent side.  Puts the caller's terminal (if stdin is one) into raw mode;
 * isd_pty_restore_terminal() undoes it and is safe to call repeatedly and
 * from a signal handler. */
void isd_pty_raw_terminal(void);
void isd_pty_restore_terminal(void);
/* For isd's own messages while the relay runs: lines must end in \r\n. */
bool isd_pty_terminal_is_raw(void);

/* Copy the caller's window size to the pty (and so SIGWINCH inside). */
void isd_pty_sync_winsize(int master);

/* Relay until the payload's side is closed and child has exited.  Returns
 * 0 when the pty gives EOF/EIO after the child is gone, 1 when the caller's
 * output went away (the caller then closes master: a hang-up inside).  wake_fd becomes
 * readable on SIGWINCH/SIGCHLD (a self-pipe).  Stdin is forwarded when
 * forward_stdin.  child_exited(ctx) reaps the child without blocking. */
int isd_pty_relay(int master, int wake_fd, bool forward_stdin, bool (*child_exited)(void *ctx), void *ctx);

/* The sandbox's child, as the terminal session waits for it: reaped by
 * isd_pty_run when it exits first (reaped, status). */
struct isd_pty_child {
	pid_t pid;
	int status;
	bool reaped;
};

/* The whole terminal session on the caller's side: raw mode for exactly
 * as long as the relay runs, the window size now and on every SIGWINCH,
 * SIGPIPE ignored from then on (a closed stdout is a hang-up inside, not a
 * reason for isd to die).  The caller's SIGWINCH and SIGCHLD dispositions
 * are back when it returns, and nothing of it stays in the process: one
 * sandbox after another can each have one.  *master is closed (-1) when
 * the caller's output went away. */
int isd_pty_run(int *master, bool forward_stdin, struct isd_pty_child *child);

#endif
