/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "isd/process.h"

#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <sys/wait.h>

int isd_wait_pid(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

void isd_kill_and_reap(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGKILL);
	(void)isd_wait_pid(*pid, NULL);
	*pid = -1;
}
