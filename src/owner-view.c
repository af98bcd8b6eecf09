/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The owner's view of a session's upper layer: see include/isd/owner-view.h. */
#define _GNU_SOURCE
#include "isd/owner-view.h"
#include "isd/image.h"
#include "isd/process.h"
#include "isd/util.h"
#include "userns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int entered;

static int write_file(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	return write(fd, text, len) == (ssize_t)len ? 0 : -errno;
}

int isd_owner_view_active(void)
{
	return entered || geteuid() == 0;
}

/* With a subordinate range (what an image that keeps ownership maps, so
 * what a payload can chown its files to): the caller's uid as 0 and the
 * range from 1, written by newuidmap/newgidmap from a child that stays
 * outside.  1 entered, 0 no range or no helper (nothing changed), <0 the
 * namespace is made but not mapped. */
static int enter_full(void)
{
	struct isd_idmap now;
	struct isd_id_range uid[2], gid[2];
	pid_t self = getpid(), pid;
	int go[2], done[2], r = 0, status;
	char c = 0;

	if (isd_idmap_for_caller(&now) < 0 || !now.full || now.caller_uid == 0)
		return 0;
	uid[0] = (struct isd_id_range){0, now.caller_uid, 1};
	gid[0] = (struct isd_id_range){0, now.caller_gid, 1};
	/* The subordinate range: what keep_id_ranges put around the caller. */
	uid[1] = (struct isd_id_range){1, now.uid[0].outside, 0};
	gid[1] = (struct isd_id_range){1, now.gid[0].outside, 0};
	for (size_t i = 0; i < now.n_uid; i++)
		if (now.uid[i].outside != now.caller_uid)
			uid[1].count += now.uid[i].count;
	for (size_t i = 0; i < now.n_gid; i++)
		if (now.gid[i].outside != now.caller_gid)
			gid[1].count += now.gid[i].count;
	if (!uid[1].count || !gid[1].count)
		return 0;
	if (pipe2(go, O_CLOEXEC) < 0)
		return 0;
	if (pipe2(done, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return 0;
	}
	pid = fork();
	if (pid < 0) {
		r = 0;
		goto out;
	}
	if (pid == 0) {
		close(go[1]);
		close(done[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		r = isd_userns_write_child_maps(self, uid, 2, gid, 2);
		_exit(write(done[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(go[0]);
	close(done[1]);
	go[0] = done[1] = -1;
	if (unshare(CLONE_NEWUSER) < 0) {
		close(go[1]);
		go[1] = -1;
		isd_wait_pid(pid, &status);
		r = 0;
		goto out;
	}
	r = -EIO;
	if (write(go[1], &c, 1) == 1 && read(done[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
		r = -EIO;
	isd_wait_pid(pid, &status);
	if (r == 0)
		r = 1;
	else if (r < 0) {
		/* Unmapped yet: the caller's own id alone still can be. */
		char map[64];
		snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)now.caller_uid);
		if (write_file("/proc/self/uid_map", map) == 0) {
			(void)write_file("/proc/self/setgroups", "deny");
			snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)now.caller_gid);
			r = write_file("/proc/self/gid_map", map) == 0 ? 1 : -EPERM;
		} else {
			r = -EPERM;
		}
	}
out:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (done[i] >= 0)
			close(done[i]);
	}
	return r;
}

static bool self_map_works(uid_t uid, gid_t gid)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (pid == 0) {
		char map[64];

		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
		if (write_file("/proc/self/uid_map", map) < 0)
			_exit(1);
		(void)write_file("/proc/self/setgroups", "deny");
		snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
		_exit(write_file("/proc/self/gid_map", map) < 0);
	}
	return isd_wait_pid(pid, &status) >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int isd_owner_view_enter(void)
{
	struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct caps[2] = {{0}};
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];

	if (isd_owner_view_active())
		return 0;
	switch (enter_full()) {
	case 1:
		goto caps;
	case 0:
		break;
	default:
		goto broken;
	}
	/* Reads by the modes, as without the view, where no namespace can be
	 * made and mapped: tried in a child first, since a namespace made here
	 * but left unmapped cannot be left. */
	if (!self_map_works(uid, gid) || unshare(CLONE_NEWUSER) < 0)
		return 0;
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0)
		goto broken;
	(void)write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
	if (write_file("/proc/self/gid_map", map) < 0)
		goto broken;
caps:
	/* Only reading and searching: a program run from here (a pager)
	 * gets nothing back on execve as uid 0 of this namespace.
	 * (Refused where an LSM denies the namespace every capability, as
	 * Ubuntu's restricted user namespaces do: then none comes back.) */
	for (int c = 0; c <= 63; c++)
		if (c != CAP_DAC_READ_SEARCH && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL &&
		    errno != EPERM)
			goto broken;
	caps[0].effective = caps[0].permitted = 1U << CAP_DAC_READ_SEARCH;
	if (syscall(SYS_capset, &head, caps) < 0)
		goto broken;
	entered = 1;
	return 0;
broken:
	/* Half-made (no map: every file reads as nobody's): not a view to
	 * go on with. */
	return isd_error(-errno ? -errno : -EPERM, "entering a user namespace to read the session as its owner");
}

struct call_result {
	int r;
	uint64_t value;
	char message[1024];
};

int isd_owner_view_call(int (*fn)(void *arg, uint64_t *out), void *arg, uint64_t *out)
{
	struct call_result res = {0};
	int fds[2], status;
	size_t got = 0;
	pid_t pid;

	if (isd_owner_view_active())
		return fn(arg, out);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return isd_error(-errno, "reading the session as its owner: a pipe");
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return isd_error(-errno, "reading the session as its owner: fork");
	}
	if (pid == 0) {
		close(fds[0]);
		res.r = isd_owner_view_enter();
		if (res.r == 0)
			res.r = fn(arg, &res.value);
		if (res.r < 0)
			snprintf(res.message, sizeof(res.message), "%s", isd_error_message());
		_exit(write(fds[1], &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : 1);
	}
	close(fds[1]);
	while (got < sizeof(res)) {
		ssize_t n = read(fds[0], (char *)&res + got, sizeof(res) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	isd_wait_pid(pid, &status);
	if (got < sizeof(res))
		return isd_error(-EIO, "reading the session as its owner: the helper process ended early");
	res.message[sizeof(res.message) - 1] = '\0';
	if (res.r < 0)
		return isd_error_raw(res.r, res.message);
	*out = res.value;
	return 0;
}
