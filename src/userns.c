/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "userns.h"
#include "isolation.h"
#include "isd/spec.h"
#include "isd/process.h"
#include "isd/util.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <grp.h>
#include <sys/wait.h>

static int write_proc_self(const char *file, const char *content)
{
	int r = isd_write_file_at(AT_FDCWD, file, content, 0, 0);

	if (r < 0) {
		isd_error(r, "writing %s (\"%.*s\")", file, (int)strcspn(content, "\n"), content);
		/* A process may always write its own maps unless a Landlock
		 * domain forbids /proc writes: isd inside another isd sandbox. */
		if (r == -EACCES)
			isd_error_hint("isd runs inside a Landlock domain that forbids writing /proc (another isd sandbox?); "
				       "start the outer one with --security-opt seccomp=nested, or --security-opt landlock=off");
		return r;
	}
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
		isd_isolation_hint_auto();
		return;
	}
	if (under_seccomp_filter() && (err == -EPERM || err == -EACCES || err == -ENOSYS)) {
		/* The filter is an outer container's (Docker's and podman's
		 * default profiles refuse clone with namespace flags) or an
		 * outer isd's: the fix names both. */
		isd_error_hint("isd itself runs under a seccomp filter that forbids namespaces (Seccomp: 2 in /proc/self/status); "
			       "in a Docker or podman container, run it with --security-opt seccomp=unconfined (Kubernetes: "
			       "securityContext.seccompProfile.type: Unconfined); inside an isd sandbox, start the outer one with "
			       "--security-opt seccomp=nested (with a profile of your own, also --security-opt landlock=off)");
		isd_isolation_hint_auto();
		return;
	}
	if (err == -EPERM || err == -EACCES)
		isd_error_hint("unprivileged user namespaces look disabled here, or isd runs inside a container whose seccomp profile forbids them");
	else if (err == -ENOSPC || err == -EUSERS)
		isd_error_hint("the user namespace limit (user.max_user_namespaces) is reached");
}

/* --- Maps of several ranges (isd build) ------------------------------
 * A process cannot map ids other than its own into a user namespace; the
 * setuid helpers newuidmap/newgidmap can, within the caller's ranges in
 * /etc/subuid and /etc/subgid.  They must be run by the parent for the
 * child, hence these functions are called from the parent's side. */

static int write_map_directly(pid_t pid, const char *file, const struct isd_id_range *r, size_t n)
{
	char path[64], text[4096]; /* isd-runtime's additional groups: a line each */
	size_t len = 0;
	int rc;

	for (size_t i = 0; i < n && len < sizeof(text); i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%u %u %u\n", r[i].inside, r[i].outside,
					r[i].count);
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	rc = isd_write_file_at(AT_FDCWD, path, text, 0, 0);
	if (rc < 0)
		return isd_error(rc, "writing %s", path);
	return 0;
}

static int run_map_helper(const char *helper, pid_t pid, const struct isd_id_range *r, size_t n)
{
	char *argv[3 + 3 * 8 + 1];
	char nums[3 * 8 + 1][16];
	size_t a = 0;
	int status, err;
	pid_t child;

	if (n > 8)
		return isd_error(-E2BIG, "%s: too many ranges", helper);
	argv[a++] = (char *)helper;
	snprintf(nums[0], sizeof(nums[0]), "%d", (int)pid);
	argv[a++] = nums[0];
	for (size_t i = 0; i < n; i++) {
		snprintf(nums[1 + 3 * i], 16, "%u", r[i].inside);
		snprintf(nums[2 + 3 * i], 16, "%u", r[i].outside);
		snprintf(nums[3 + 3 * i], 16, "%u", r[i].count);
		argv[a++] = nums[1 + 3 * i];
		argv[a++] = nums[2 + 3 * i];
		argv[a++] = nums[3 + 3 * i];
	}
	argv[a] = NULL;
	child = fork();
	if (child < 0)
		return isd_error(-errno, "starting %s", helper);
	if (child == 0) {
		execvp(helper, argv);
		if (errno == ENOENT) {
			char path[64];
			snprintf(path, sizeof(path), "/usr/bin/%s", helper);
			execv(path, argv);
		}
		_exit(127);
	}
	err = isd_wait_pid(child, &status);
	if (err < 0)
		return isd_error(err, "waiting for %s", helper);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		isd_error(-ENOENT, "running %s", helper);
		isd_error_hint("install the uidmap package (newuidmap, newgidmap)");
		return -ENOENT;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		isd_error(0, "%s failed to map the subordinate ids of /etc/sub%cid", helper, helper[3]);
		isd_error_hint("fix: sudo usermod --add-subuids 100000-165535 --add-subgids 100000-165535 $USER");
		return -EPERM;
	}
	return 0;
}

int isd_userns_write_child_maps(pid_t pid, const struct isd_id_range *uid, size_t n_uid,
				const struct isd_id_range *gid, size_t n_gid)
{
	int r;

	/* A privileged caller writes the maps itself (it may map any id of
	 * its namespace); everybody else goes through the setuid helpers. */
	if (geteuid() == 0) {
		r = write_map_directly(pid, "uid_map", uid, n_uid);
		if (r == 0)
			r = write_map_directly(pid, "gid_map", gid, n_gid);
		return r;
	}
	r = run_map_helper("newuidmap", pid, uid, n_uid);
	if (r == 0)
		r = run_map_helper("newgidmap", pid, gid, n_gid);
	return r;
}

/* Whether the process's supplementary groups are exactly groups (in any
 * order): set already, by init before it dropped the capability. */
static bool groups_are(const uint32_t *groups, size_t n)
{
	gid_t have[256];
	int k = getgroups(256, have);

	if (k < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (int j = 0; j < k && !found; j++)
			found = have[j] == groups[i];
		if (!found)
			return false;
	}
	for (int j = 0; j < k; j++) {
		bool found = false;
		for (size_t i = 0; i < n && !found; i++)
			found = have[j] == groups[i];
		if (!found)
			return false;
	}
	return true;
}

static int set_groups(const uint32_t *groups, size_t n, uint32_t gid)
{
	_cleanup_free_ gid_t *list = NULL;
	bool primary_only = true;

	if (!n) {
		if (setgroups(0, NULL) < 0 && errno != EPERM)
			return isd_error(-errno, "clearing the supplementary groups");
		return 0;
	}
	if (groups_are(groups, n))
		return 0;
	list = isd_xcalloc(n, sizeof(*list));
	for (size_t i = 0; i < n; i++) {
		list[i] = groups[i];
		primary_only &= groups[i] == gid;
	}
	if (setgroups(n, list) == 0)
		return 0;
	/* denied (EPERM): only the primary group asked, which the payload
	 * has anyway (crun too leaves setgroups out then); any other group
	 * is refused, not left out */
	if (errno == EPERM && primary_only)
		return 0;
	if (errno == EPERM)
		return isd_error(-EPERM, "setting the additional groups (process.user.additionalGids): setgroups is "
					 "denied in the container's user namespace (as newgidmap denies it for a map of "
					 "the caller's own gid only)");
	if (errno == EINVAL)
		return isd_error(-EINVAL, "setting the additional groups (process.user.additionalGids): one of them is "
					  "not mapped in the container's user namespace");
	return isd_error(-errno, "setting the additional groups (process.user.additionalGids)");
}

int isd_userns_become(uint32_t uid, uint32_t gid)
{
	return isd_userns_become_in_groups(uid, gid, NULL, 0);
}

int isd_userns_become_in_groups(uint32_t uid, uint32_t gid, const uint32_t *groups, size_t n_groups)
{
	int r = set_groups(groups, n_groups, gid);

	if (r < 0)
		return r;
	if (setresgid(gid, gid, gid) < 0)
		return isd_error(-errno, "switching to gid %u in the user namespace", gid);
	if (setresuid(uid, uid, uid) < 0)
		return isd_error(-errno, "switching to uid %u in the user namespace", uid);
	return 0;
}

bool isd_userns_ids_mapped(const char *map_file, uint32_t start, uint32_t count)
{
	_cleanup_free_ char *text = NULL;
	char *save = NULL;

	if (isd_read_file_at(AT_FDCWD, map_file, &text, NULL) < 0)
		return false;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long in, out, n;
		if (sscanf(line, "%lu %lu %lu", &in, &out, &n) == 3 && start >= in &&
		    (unsigned long)start + count <= in + n)
			return true;
	}
	return false;
}
