/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd resume [--end] ID`: the user's word for a sandbox the storage
 * watcher froze (src/storage-watch.c).  ID is the cow session's id (its
 * storage.json names the isd process) or, without a session, the pid the
 * freeze message names.  The request is a signal to that isd process,
 * which must be an isd of this user.
 */
#define _GNU_SOURCE
#include "isd/cli-args.h"
#include "isd/storage.h"
#include "isd/cgroup.h"
#include "isd/session.h"
#include "isd/util.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

int isd_storage_read_state(const char *session_dir, uint64_t *size, pid_t *pid, bool *frozen)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", session_dir, ISD_STORAGE_STATE_FILE), *text = NULL;
	json_object *j, *v;
	int r = isd_read_file_at(AT_FDCWD, path, &text, NULL);

	*size = 0;
	*pid = 0;
	*frozen = false;
	if (r < 0)
		return r;
	j = json_tokener_parse(text);
	if (!j)
		return -EINVAL;
	if (json_object_object_get_ex(j, "size", &v))
		*size = (uint64_t)json_object_get_uint64(v);
	if (json_object_object_get_ex(j, "pid", &v))
		*pid = (pid_t)json_object_get_int(v);
	if (json_object_object_get_ex(j, "frozen", &v))
		*frozen = json_object_get_boolean(v);
	json_object_put(j);
	return 0;
}

/* The pid must be an isd of ours that catches the signal (a watcher
 * runs in it): a stale number may have been reused, and the signal's
 * default action ends a process. */
static int check_isd(pid_t pid, int sig)
{
	const char *cgt;
	unsigned long long mask;

	char path[64], comm[32] = "";
	_cleanup_free_ char *status = NULL;
	int fd;
	ssize_t n;
	const char *uid;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return isd_error(-ESRCH, "no process %d", (int)pid);
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n > 0 && comm[n - 1] == '\n')
		comm[n - 1] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (strncmp(comm, "isd", 3) || isd_read_file_at(AT_FDCWD, path, &status, NULL) < 0 ||
	    !(uid = strstr(status, "\nUid:")) || (uid_t)strtoul(uid + 5, NULL, 10) != getuid())
		return isd_error(-ESRCH, "process %d is not an isd of yours", (int)pid);
	cgt = strstr(status, "\nSigCgt:");
	mask = cgt ? strtoull(cgt + 8, NULL, 16) : 0;
	if (!(mask & (1ULL << (sig - 1))))
		return isd_error(-ESRCH, "isd %d watches no sandbox's storage", (int)pid);
	return 0;
}

static void resume_usage(FILE *out)
{
	fputs("Usage: isd resume [--end] ID\n"
	      "\n"
	      "Lets a sandbox that isd froze at a storage bound (--storage-opt) go on, the\n"
	      "bound moved by a grace, or with --end ends it.  ID is the session's id, or\n"
	      "the number the freeze message names.\n",
	      out);
}

enum { RESUME_END = 1 };
static const struct isd_cli_flag resume_flags[] = {{"--end", 0, false, RESUME_END}, {0}};
static const struct isd_cli_command resume_command = {"resume", resume_usage, resume_flags, 1};

int isd_storage_resume_main(int argc, char **argv)
{
	struct isd_cli_args a = ISD_CLI_ARGS(&resume_command, argc, argv);
	bool end = false;
	const char *id = NULL;
	pid_t pid = 0;
	int r;

	while (isd_cli_next(&a)) {
		if (a.id == RESUME_END)
			end = true;
		else
			id = a.value;
	}
	if (a.exit >= 0)
		return a.exit;
	if (!id)
		return isd_cli_usage_error(&resume_command, "which sandbox? expected an ID");
	if (strspn(id, "0123456789") == strlen(id) && strlen(id) < 10) {
		pid = (pid_t)atoi(id);
	} else {
		struct isd_session s;
		uint64_t size;
		bool frozen;

		r = isd_session_open(id, false, &s);
		if (r < 0)
			goto fail;
		r = isd_storage_read_state(s.dir, &size, &pid, &frozen);
		isd_session_free(&s);
		if (r < 0 || pid <= 0) {
			r = isd_error(-ESRCH, "session %s: no isd runs its sandbox", id);
			goto fail;
		}
		if (!frozen && !end)
			fprintf(stderr, "isd: note: session %s is not frozen\n", id);
	}
	r = check_isd(pid, end ? ISD_STORAGE_SIG_END : ISD_STORAGE_SIG_RESUME);
	if (r < 0)
		goto fail;
	if (kill(pid, end ? ISD_STORAGE_SIG_END : ISD_STORAGE_SIG_RESUME) < 0) {
		r = isd_error(-errno, "signalling isd %d", (int)pid);
		goto fail;
	}
	return 0;
fail:
	isd_error_print("resume failed");
	return ISD_EXIT_FAILURE;
}

int isd_storage_diagnose(char *detail, size_t dlen, char *fix, size_t flen)
{
	struct isd_cgroup_diagnosis d;
	_cleanup_free_ char *root = isd_session_root();
	_cleanup_free_ char *probe = isd_xstrdup(root);
	struct isd_storage_opts defaults = {0};
	const char *how;
	struct statvfs sv;
	char a[32], b[32], where[256] = "";
	int level = 0, pidfd;

	/* The nearest existing ancestor of the session store. */
	while (statvfs(probe, &sv) < 0) {
		char *slash = strrchr(probe, '/');
		if (!slash || slash == probe) {
			snprintf(probe, 2, "/");
			if (statvfs(probe, &sv) < 0)
				memset(&sv, 0, sizeof(sv));
			break;
		}
		*slash = '\0';
	}
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd >= 0)
		close(pidfd);
	/* A sandbox has a cgroup when it has limits (the agent profile's). */
	if (isd_cgroup_diagnose(ISD_CG_MEMORY | ISD_CG_CPU | ISD_CG_PIDS, &d) == 0)
		how = "a freeze through the sandbox's cgroup (cgroup.freeze) when it has limits, as the agent "
		      "profile's, else by SIGSTOP to each of its processes";
	else if (pidfd >= 0)
		how = "a freeze by SIGSTOP to each process of the sandbox (no delegated cgroup)";
	else {
		how = "no freeze: this kernel has no pidfd_open and isd no delegated cgroup";
		level = 2;
		snprintf(fix, flen, "Linux 5.3 or later, or a delegated cgroup v2 (isd doctor's cgroup check)");
	}
	if (sv.f_blocks) {
		uint64_t total = (uint64_t)sv.f_blocks * sv.f_frsize, avail = (uint64_t)sv.f_bavail * sv.f_frsize;
		uint64_t floor = isd_storage_floor(&defaults, total);
		snprintf(where, sizeof(where), "; the session store (%s) has %s free, its default floor is %s", probe,
			 isd_format_size(avail, a, sizeof(a), 0), isd_format_size(floor, b, sizeof(b), 0));
		if (avail < floor && level < 1) {
			level = 1;
			snprintf(fix, flen, "free space on %s: below the floor, isd does not watch it (--storage-opt min-free= sets one)", probe);
		}
	}
	snprintf(detail, dlen, "no disk quota for an unprivileged user: one file past 15/16 of size= gets EFBIG (exact, "
			       "RLIMIT_FSIZE); the sum, inodes= and min-free= are watched by isd, %s%s",
		 how, where);
	return level;
}
