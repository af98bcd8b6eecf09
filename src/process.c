/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "isd/process.h"
#include "isd/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

void isd_process_status(pid_t pid, long *ns_pid, long *ppid, long *tgid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	isd_process_status_at(AT_FDCWD, path, ns_pid, ppid, tgid);
}

void isd_process_status_at(int dirfd, const char *path, long *ns_pid, long *ppid, long *tgid)
{
	char buf[2048];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	char *p;

	*ns_pid = *ppid = -1;
	if (tgid)
		*tgid = -1;
	fd = dirfd == -1 ? -1 : openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return;
	buf[n] = '\0';
	if (tgid && (p = strstr(buf, "\nTgid:")))
		*tgid = strtol(p + 6, NULL, 10);
	if ((p = strstr(buf, "\nPPid:")))
		*ppid = strtol(p + 6, NULL, 10);
	if ((p = strstr(buf, "\nNSpid:"))) {
		char *end = strchrnul(p + 1, '\n');

		*end = '\0';
		p = strrchr(p, '\t');
		if (p)
			*ns_pid = strtol(p + 1, NULL, 10);
	}
}
