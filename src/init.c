/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "isd/init.h"
#include "isd/util.h"

#include <sys/wait.h>

const int isd_forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};
const size_t isd_n_forwarded_signals = sizeof(isd_forwarded_signals) / sizeof(isd_forwarded_signals[0]);

int isd_exit_status_from_wait(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return ISD_EXIT_FAILURE;
}

int isd_init_block_signals(sigset_t *old_mask)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < isd_n_forwarded_signals; i++)
		sigaddset(&set, isd_forwarded_signals[i]);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, old_mask) < 0)
		return isd_error(-errno, "blocking signals in the sandbox's init");
	return 0;
}

int isd_init_run(pid_t payload)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < isd_n_forwarded_signals; i++)
		sigaddset(&set, isd_forwarded_signals[i]);
	sigaddset(&set, SIGCHLD);

	for (;;) {
		siginfo_t info;
		int sig = sigwaitinfo(&set, &info);

		if (sig < 0)
			continue; /* EINTR */
		if (sig != SIGCHLD) {
			/* The payload leads its own session and process group, so
			 * the whole group gets it, as a terminal would do. */
			if (kill(-payload, sig) < 0)
				kill(payload, sig);
			continue;
		}
		for (;;) {
			int status;
			pid_t pid = waitpid(-1, &status, WNOHANG);

			if (pid <= 0)
				break;
			/* When the payload is gone, init leaves and the kernel
			 * kills whatever it left behind in the pid namespace. */
			if (pid == payload)
				return isd_exit_status_from_wait(status);
		}
	}
}
