/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sandbox's cgroup at a path its caller chose: isd-runtime's
 * linux.cgroupsPath, which the engines name ("/libpod_parent/libpod-ID",
 * "machine.slice:libpod:ID") and read back for stats, as runc does.
 * isd's own placement (cgroup.c) is not consulted: the engine decided.
 */
#define _GNU_SOURCE
#include "isd/cgroup.h"
#include "isd/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Removes what make_dirs() created, deepest first (abs is cut short). */
static void remove_created(char *abs, size_t created_from)
{
	while (created_from && strlen(abs) > created_from) {
		char *slash = strrchr(abs, '/');

		(void)rmdir(abs);
		if (!slash)
			return;
		*slash = '\0';
	}
}

static bool populated(const char *dir)
{
	_cleanup_free_ char *file = isd_xasprintf("%s/cgroup.events", dir), *text = NULL;

	return isd_read_file_at(AT_FDCWD, file, &text, NULL) == 0 && strstr(text, "populated 1");
}

/* Every directory below start down to abs, each parent giving its child
 * the controllers ctl ("+memory +pids", "" for none).  *created_from: the
 * offset in abs of the first directory made (0: none). */
static int make_dirs(const char *path, char *abs, size_t start, const char *ctl, size_t *created_from)
{
	*created_from = 0;
	for (char *p = abs + start; p;) {
		char *next = strchr(p + 1, '/');
		int r;

		/* abs[0 .. p) is the parent, which exists */
		if (*ctl) {
			*p = '\0';
			_cleanup_free_ char *sc = isd_xasprintf("%s/cgroup.subtree_control", abs);
			*p = '/';
			r = isd_write_file_at(AT_FDCWD, sc, ctl, O_WRONLY, 0);
			if (r < 0) {
				_cleanup_free_ char *have = NULL, *cf = NULL;
				*p = '\0';
				cf = isd_xasprintf("%s/cgroup.controllers", abs);
				/* ENOENT: a controller the hierarchy lacks (v1 has it on
				 * a hybrid host), which engines would read as a missing
				 * command from "No such file or directory" */
				if (r == -ENOENT && isd_read_file_at(AT_FDCWD, cf, &have, NULL) == 0) {
					have[strcspn(have, "\n")] = '\0';
					r = isd_error(-EOPNOTSUPP, "linux.cgroupsPath %s: linux.resources need %s, but the cgroup v2 "
								   "hierarchy at %s has only \"%s\" (the others are cgroup v1's here: "
								   "leave those limits out, podman --pids-limit=-1)",
						      path, ctl, abs, have);
				} else {
					r = isd_error(r, "linux.cgroupsPath %s: enabling %s in %s", path, ctl, abs);
				}
				*p = '/';
				return r;
			}
		}
		if (next)
			*next = '\0';
		if (mkdir(abs, 0755) == 0) {
			if (!*created_from)
				*created_from = (size_t)(p - abs);
		} else if (errno != EEXIST) {
			r = -errno;
			isd_error(r, "linux.cgroupsPath %s: creating the cgroup %s", path, abs);
			if (next)
				*next = '/';
			return r;
		}
		if (next)
			*next = '/';
		p = next;
	}
	return 0;
}

int isd_cgroup_prepare_path(const struct isd_limits *limits, const char *path, struct isd_cgroup *cg)
{
	struct isd_cgroup_write writes[ISD_CGROUP_MAX_WRITES];
	_cleanup_free_ char *pc = NULL, *mi = NULL, *v2 = NULL, *mnt = NULL, *own = NULL, *abs = NULL;
	unsigned needed = isd_cgroup_needed_controllers(limits), v1 = 0;
	char ctl[96] = "", *slash;
	struct statfs sfs = {0};
	size_t created_from = 0;
	int n = 0, r;

	isd_cgroup_init(cg);
	if (needed && (n = isd_cgroup_limit_writes(limits, writes)) < 0)
		return n;
	if (isd_read_file_at(AT_FDCWD, "/proc/self/cgroup", &pc, NULL) < 0 ||
	    isd_cgroup_parse_proc_cgroup(pc, &v2, &v1) < 0 || !v2 ||
	    isd_read_file_at(AT_FDCWD, "/proc/self/mountinfo", &mi, NULL) < 0 ||
	    isd_cgroup_find_dir(mi, v2, &mnt, &own) < 0 || !mnt || !own)
		return needed ? isd_error(-EOPNOTSUPP, "linux.cgroupsPath %s: no cgroup v2 hierarchy to make it in "
						       "(the limits of linux.resources need one)", path)
			      : 0;
	if (strstr(path, "..") || !path[0] || !strcmp(path, "/"))
		return isd_error(-EINVAL, "linux.cgroupsPath %s: not a cgroup below the root", path);
	/* mountinfo still lists a hierarchy another mount covers (a tmpfs over
	 * it, as in a runtime-tools setup): directories made there are no
	 * cgroup, and CLONE_INTO_CGROUP would answer a bare EBADF. */
	if (statfs(mnt, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		if (!needed)
			return 0;
		return isd_error(-EOPNOTSUPP, "linux.cgroupsPath %s: the cgroup v2 hierarchy's mount point %s is covered by "
					      "another mount (file system type 0x%lx), so the limits of linux.resources "
					      "have no cgroup to go in: unmount what covers it",
				 path, mnt, (unsigned long)sfs.f_type);
	}
	abs = path[0] == '/' ? isd_xasprintf("%s%s", mnt, path) : isd_xasprintf("%s/%s", own, path);
	if (strlen(strrchr(abs, '/') + 1) >= sizeof(cg->name))
		return isd_error(-ENAMETOOLONG, "linux.cgroupsPath %s: the last name is too long", path);
	if (needed)
		isd_cgroup_controllers_string(needed, ctl, sizeof(ctl), "+");
	r = make_dirs(path, abs, path[0] == '/' ? strlen(mnt) : strlen(own), ctl, &created_from);
	if (r == 0 && !created_from && populated(abs))
		r = isd_error(-EBUSY, "linux.cgroupsPath %s: the cgroup %s holds processes already", path, abs);
	if (r < 0) {
		remove_created(abs, created_from);
		/* Nothing to enforce: a caller that may not make cgroups here
		 * (rootless, no delegation) runs the container in its own. */
		if (!needed && (r == -EACCES || r == -EPERM || r == -EROFS || r == -ENOENT)) {
			isd_error_clear();
			return 0;
		}
		return r;
	}
	slash = strrchr(abs, '/');
	*slash = '\0';
	r = isd_cgroup_open(abs, slash + 1, cg);
	*slash = '/';
	if (r < 0) {
		remove_created(abs, created_from);
		return isd_error(r, "linux.cgroupsPath %s: opening the cgroup %s", path, abs);
	}
	for (int i = 0; i < n; i++) {
		if (!(needed & writes[i].controller))
			continue;
		r = isd_write_file_at(cg->dirfd, writes[i].file, writes[i].value, O_WRONLY, 0);
		if (r < 0 && !writes[i].explicit_request && r == -ENOENT)
			continue; /* a derived default the kernel lacks (swap accounting off) */
		if (r < 0) {
			isd_error(r, "linux.resources: setting %s (%s=%s in %s)", writes[i].option, writes[i].file,
				  writes[i].value, abs);
			isd_cgroup_destroy(cg);
			remove_created(abs, created_from);
			return r;
		}
	}
	return 0;
}
