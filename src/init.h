/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pid 1 of the sandbox: sets the sandbox up, starts the payload, reaps
 * orphans, forwards signals, reports the exit. */
#ifndef ISD_INIT_H
#define ISD_INIT_H

#include "isd/activity.h"
#include "isd/seccomp.h"
#include "isd/spec.h"
#include "isd/util.h"
#include "landlock.h"
#include "mount.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The setup socket between isd on the host and init: init reports a
 * failure (one setup_message) or hands descriptors over, EOF means the
 * payload's execve went through. */
#define SETUP_FD 3
/* The cow session's lock, held by init until the sandbox's last process is
 * gone, so that the session counts as running as long as one lives. */
#define SESSION_LOCK_FD 4
/* With an activity log: the socket to its listening thread
 * (isd_activity_prestart), which the payload sends its listener to. */
#define ACTIVITY_FD 5
/* What init gets when isd dies, with --pid host (see isd_init_main). */
#define ISD_INIT_DEATH_SIGNAL SIGPWR

enum setup_message_type {
	SETUP_ERROR,
	SETUP_PTY, /* carries the pty master as SCM_RIGHTS */
	SETUP_NET, /* a listening socket for isd's relay; exit_code = ISD_NET_FD_TAG */
	SETUP_ACTIVITY, /* no exec listener: exit_code = -errno (it goes to ACTIVITY_FD) */
	SETUP_READY,    /* the payload waits at the start gate */
	SETUP_PID,      /* isd_sandbox_enter: the entered process's pid in exit_code */
};

struct setup_message {
	int32_t type;
	int32_t exit_code;
	char text[ISD_ERROR_MAX];
};

/* What isd_sandbox_run hands to init, across clone3. */
struct isd_init_args {
	const struct isd_spec *spec;
	const struct isd_seccomp_program *seccomp;
	const struct isd_activity *activity;
	struct isd_landlock_plan landlock;
	struct isd_mount_extras extras;
	bool wait_for_cgroup; /* the parent moves us into the cgroup first */
	int start_gate_fd;    /* -1, or the fifo of isd_sandbox_detached */
	bool detached;        /* the sandbox outlives isd: no parent-death signal once set up */
	unsigned long shared_ns; /* isd_sandbox_detached's: CLONE_NEW* not made but the caller's */
};

/* pid 1 of the sandbox, in the child of clone3 (src/sandbox.c): the ids,
 * cgroup namespace, host name, loopback, file system and pivot_root, the
 * pty, then the payload with its capabilities, Landlock and seccomp; it
 * waits as init until the payload exits.  Every failure goes to isd over
 * SETUP_FD. */
_Noreturn void isd_init_main(const struct isd_init_args *a);

/* spec's rlimits (isd-runtime's process.rlimits) on the calling process,
 * for the payload and each process exec'd into the sandbox. */
int isd_init_apply_rlimits(const struct isd_spec *spec);
/* The payload's privileges, last before its execve: isd-runtime's config
 * sets (spec->config_caps) or none, and the seccomp filter last; but
 * without no_new_privs loading it needs CAP_SYS_ADMIN, so then (as runc
 * and crun do) the filter comes before the sets are taken.  Also for
 * isd-runtime exec's processes. */
struct isd_seccomp_program;
int isd_init_apply_privileges(const struct isd_spec *spec, const struct isd_seccomp_program *seccomp);
/* In the payload: execve argv[0] searched on the payload's PATH (not the
 * caller's); returns -ENOENT (127) or another -errno (126), recorded.  The
 * landlock tier's payload uses it too. */
int isd_init_exec_command(char *const argv[], char *const envp[], const char *path_env, bool not_on_caller_path);

/* The signals isd forwards from the caller to the payload. */
#define ISD_N_FORWARDED_SIGNALS 8
extern const int isd_forwarded_signals[ISD_N_FORWARDED_SIGNALS];

/* Block the forwarded signals and SIGCHLD (before forking the payload, so
 * that none is lost); the payload restores old_mask. */
int isd_init_block_signals(sigset_t *old_mask);

/* Run as init until the payload exits; returns the status isd should exit
 * with: the payload's own code, or 128+N when signal N killed it; -1 as
 * soon as stop_sig (blocked by the caller; 0: none) arrives. */
int isd_init_run_until(pid_t payload, int stop_sig);

/* Without a pid namespace (--pid host), as a child subreaper: SIGKILL every
 * descendant until none is left but the n_keep helpers of isd's own in
 * keep (0: none): the storage watcher, the network helper, the activity
 * log's listener, which answers the last of them until they are gone and
 * may still hold their records. */
void isd_init_kill_descendants(const pid_t *keep, size_t n_keep);

/* Docker's convention for a wait status. */
int isd_exit_status_from_wait(int status);

#endif
