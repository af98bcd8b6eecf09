/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* isd_sandbox_run twice in one process, as isd build runs one sandbox per
 * RUN step: each run waits for its own payload and leaves the process as
 * it found it (descriptors, signal dispositions). */
#define _GNU_SOURCE
#include "isd/caller.h"
#include "isd/cli.h"
#include "isd/sandbox.h"
#include "isd/spec.h"
#include "isd/util.h"

#include "check.h"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* isd exec -t -- sh -c 'exit CODE' in this process; its exit code. */
static int run(int code)
{
	/* The sleep keeps the terminal open after the payload exits: isd reaps
	 * the sandbox before the relay ends. */
	_cleanup_free_ char *script = isd_xasprintf("sleep 10 & exit %d", code);
	const char *args[] = {"exec", "--profile", "none", "--network", "none", "-t", "--", "/bin/sh", "-c", script, NULL};
	struct isd_caller caller;
	struct isd_spec spec;
	int r;

	isd_caller_from_process(&caller);
	isd_spec_init(&spec);
	r = isd_cli_parse_exec(10, (char **)args, &caller, &spec);
	if (r == 0)
		r = isd_spec_validate(&spec);
	r = r < 0 ? r : isd_sandbox_run(&spec);
	isd_spec_free(&spec);
	return r;
}

static bool same_action(int sig, const struct sigaction *before)
{
	struct sigaction now;

	return sigaction(sig, NULL, &now) == 0 && now.sa_handler == before->sa_handler;
}

/* Where the host gives no user namespace the sandbox cannot start (the
 * integration suite says why); nothing here to test. */
static bool have_userns(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(void)
{
	static const int sigs[] = {SIGCHLD, SIGWINCH, SIGINT, SIGTERM};
	struct sigaction before[4];
	int fds;

	if (!have_userns()) {
		fprintf(stderr, "SKIP: this host gives no user namespace\n");
		return 77;
	}
	for (size_t i = 0; i < 4; i++)
		sigaction(sigs[i], NULL, &before[i]);
	/* The first run warms up what stays open on purpose (the seccomp
	 * cache, the caller's terminal, isd's error buffer). */
	CHECK(run(0) == 0);
	fds = open_fds();
	/* The second run waits for its own payload, not for the first's. */
	CHECK(run(3) == 3);
	CHECK(run(5) == 5);
	CHECK(open_fds() == fds);
	for (size_t i = 0; i < 4; i++)
		CHECK(same_action(sigs[i], &before[i]));
	return check_result();
}
