/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "isd/userns.h"
#include "isd/util.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int write_proc_self(const char *file, const char *content)
{
	int r = isd_write_file_at(AT_FDCWD, file, content, 0, 0);

	if (r < 0)
		return isd_error(r, "writing %s (\"%.*s\")", file, (int)strcspn(content, "\n"), content);
	return 0;
}

int isd_userns_write_own_maps(uint32_t inside_uid, uint32_t host_uid, uint32_t inside_gid,
			      uint32_t host_gid)
{
	char map[64];
	int r;

	r = write_proc_self("/proc/self/setgroups", "deny");
	if (r < 0 && r != -ENOENT)
		return r;
	snprintf(map, sizeof(map), "%u %u 1\n", inside_uid, host_uid);
	r = write_proc_self("/proc/self/uid_map", map);
	if (r == -EPERM && host_uid == 0) {
		/* Linux 5.12+: mapping uid 0 needs CAP_SETFCAP in the parent
		 * namespace, which e.g. a payload of another sandbox lacks. */
		isd_error_hint("mapping uid 0 needs CAP_SETFCAP since Linux 5.12; inside another sandbox, run that one with a non-zero uid (isd exec -u 1000)");
		return r;
	}
	if (r < 0) {
		isd_userns_explain_failure(r);
		return r;
	}
	snprintf(map, sizeof(map), "%u %u 1\n", inside_gid, host_gid);
	r = write_proc_self("/proc/self/gid_map", map);
	if (r < 0)
		isd_userns_explain_failure(r);
	return r;
}

static long read_sysctl(const char *path)
{
	_cleanup_free_ char *text = NULL;

	if (isd_read_file_at(AT_FDCWD, path, &text, NULL) < 0)
		return -1;
	return strtol(text, NULL, 10);
}

static bool under_seccomp_filter(void)
{
	_cleanup_free_ char *status = NULL;
	const char *line;

	if (isd_read_file_at(AT_FDCWD, "/proc/self/status", &status, NULL) < 0)
		return false;
	line = strstr(status, "\nSeccomp:");
	return line && strtol(line + 9, NULL, 10) == 2;
}

void isd_userns_explain_failure(int err)
{
	if (read_sysctl("/proc/sys/user/max_user_namespaces") == 0) {
		isd_error_hint("user.max_user_namespaces is 0; fix: sysctl -w user.max_user_namespaces=15000");
		return;
	}
	if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0) {
		isd_error_hint("kernel.unprivileged_userns_clone is 0; fix: sysctl -w kernel.unprivileged_userns_clone=1");
		return;
	}
	if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1) {
		isd_error_hint("Ubuntu's kernel.apparmor_restrict_unprivileged_userns=1 takes capabilities away in new user namespaces; "
			       "fix: install isd's AppArmor profile (packaging/apparmor/isd) or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0");
		return;
	}
	if (under_seccomp_filter() && (err == -EPERM || err == -EACCES || err == -ENOSYS)) {
		isd_error_hint("isd itself runs under a seccomp filter that forbids namespaces (Seccomp: 2 in /proc/self/status); "
			       "inside an isd sandbox, start the outer one with --security-opt seccomp=nested");
		return;
	}
	if (err == -EPERM || err == -EACCES)
		isd_error_hint("unprivileged user namespaces look disabled here, or isd runs inside a container whose seccomp profile forbids them");
	else if (err == -ENOSPC || err == -EUSERS)
		isd_error_hint("the user namespace limit (user.max_user_namespaces) is reached");
}
