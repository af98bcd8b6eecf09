/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd-runtime: what of config.json's extra the sandbox carries out.  Each
 * field is applied, matched by what isd makes anyway (as strict or
 * stricter), warned about where leaving it out costs function only (the
 * list is in isd-runtime(8)), or refused with one line: never dropped in
 * silence when dropping it would confine the payload less than asked.
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "isd/oci.h"
#include "isd/spec.h"
#include "isd/util.h"
#include "mount-proc.h"
#include "oci-config.h"
#include "rootful.h"
#include "userns.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#ifndef MS_LAZYTIME
#define MS_LAZYTIME (1 << 25)
#endif

/* Flags isd's own binds and tmpfs meet or exceed: nosuid and nodev always,
 * the access-time ones only change what stat reports. */
#define MET_FLAGS (MS_NOSUID | MS_NODEV | MS_NOATIME | MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME | MS_LAZYTIME)

/* The mounts every engine writes, which isd makes itself as strictly. */
static bool is_standard(const struct isd_oci_mount *m)
{
	static const struct {
		const char *dst;
		enum isd_oci_mount_type type, or_type;
	} std[] = {
		{ "/proc", ISD_OCI_MOUNT_PROC, ISD_OCI_MOUNT_PROC },
		{ "/sys", ISD_OCI_MOUNT_SYSFS, ISD_OCI_MOUNT_BIND },
		{ "/dev", ISD_OCI_MOUNT_TMPFS, ISD_OCI_MOUNT_TMPFS },
		{ "/dev/pts", ISD_OCI_MOUNT_DEVPTS, ISD_OCI_MOUNT_DEVPTS },
		{ "/dev/shm", ISD_OCI_MOUNT_TMPFS, ISD_OCI_MOUNT_BIND },
		{ "/dev/mqueue", ISD_OCI_MOUNT_MQUEUE, ISD_OCI_MOUNT_BIND },
		{ "/sys/fs/cgroup", ISD_OCI_MOUNT_CGROUP, ISD_OCI_MOUNT_CGROUP },
	};

	for (size_t i = 0; i < ARRAY_LEN(std); i++)
		if (!strcmp(m->destination, std[i].dst))
			return m->type == std[i].type || m->type == std[i].or_type;
	return false;
}

/* tmpfs options beyond size and mode (parsed into the mount already). */
static int check_tmpfs_data(const char *cfg, const struct isd_oci_mount *m)
{
	_cleanup_free_ char *data = m->data ? isd_xstrdup(m->data) : NULL;
	char *save = NULL;

	for (char *t = data ? strtok_r(data, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
		if (strncmp(t, "size=", 5) && strncmp(t, "mode=", 5))
			return RT_ERR(-EOPNOTSUPP, "%s: mounts (%s): tmpfs option \"%s\" is not supported by isd-runtime",
				      cfg, m->destination, t);
	return 0;
}

static int add_bind(struct isd_spec *spec, const char *cfg, const struct isd_oci_mount *m)
{
	char real[PATH_MAX];
	struct stat st;
	struct isd_mount *im;

	if (m->flags & ~(unsigned long)(MET_FLAGS | MS_RDONLY | MS_NOEXEC))
		return RT_ERR(-EOPNOTSUPP, "%s: mounts (%s): bind options other than ro, nosuid, nodev, noexec and "
				    "the atime ones (0x%lx) are not supported by isd-runtime",
			      cfg, m->destination, m->flags & ~(unsigned long)(MET_FLAGS | MS_RDONLY | MS_NOEXEC));
	/* m->data (options of the form key=value, src/oci-mounts.c) is left
	 * out, as crun leaves it: the kernel ignores data on a bind. */
	if (!m->source || !realpath(m->source, real) || stat(real, &st) < 0)
		return isd_error(-errno, "%s: mounts (%s): bind source %s", cfg, m->destination,
				 m->source ? m->source : "(none)");
	/* "bind" of a directory: its source's mount alone, as runc and crun
	 * bind it (what the host's mounts beneath it cover shows, which the
	 * kernel refuses in a user namespace where they are locked: a
	 * rootless caller gets EINVAL then, as from crun) */
	im = isd_spec_add_mount(spec);
	im->type = ISD_MOUNT_BIND;
	im->source = isd_xstrdup(real);
	im->destination = isd_xstrdup(m->destination);
	im->readonly = m->flags & MS_RDONLY;
	im->noexec = m->flags & MS_NOEXEC;
	im->propagation = m->propagation;
	im->nonrecursive = S_ISDIR(st.st_mode) && !m->recursive;
	im->origin = isd_xasprintf("%s mounts", cfg);
	return 0;
}

static int add_tmpfs(struct isd_spec *spec, const char *cfg, const struct isd_oci_mount *m)
{
	struct isd_mount *im;
	int r;

	if (m->flags & ~(unsigned long)(MET_FLAGS | MS_RDONLY | MS_NOEXEC))
		return RT_ERR(-EOPNOTSUPP, "%s: mounts (%s): tmpfs options other than ro, nosuid, nodev, noexec and "
				    "the atime ones (0x%lx) are not supported by isd-runtime",
			      cfg, m->destination, m->flags & ~(unsigned long)(MET_FLAGS | MS_RDONLY | MS_NOEXEC));
	if ((r = check_tmpfs_data(cfg, m)) < 0)
		return r;
	if (m->copy_up)
		rt_warn("%s: mounts (%s): tmpcopyup is left out: the tmpfs starts empty", cfg, m->destination);
	im = isd_spec_add_mount(spec);
	im->type = ISD_MOUNT_TMPFS;
	im->destination = isd_xstrdup(m->destination);
	im->readonly = m->flags & MS_RDONLY;
	im->exec = !(m->flags & MS_NOEXEC);
	im->size = m->size;
	im->mode = m->mode;
	im->has_mode = m->has_mode;
	im->propagation = m->propagation;
	im->origin = isd_xasprintf("%s mounts", cfg);
	return 0;
}

static int apply_mounts(struct isd_spec *spec, const struct isd_oci_extra *x)
{
	const char *cfg = x->config_path;

	/* "in the listed order" (the OCI runtime spec's mounts) */
	spec->mounts_listed_order = true;
	for (size_t i = 0; i < x->n_mounts; i++) {
		const struct isd_oci_mount *m = &x->mounts[i];
		int r;

		/* isd makes these itself, private to the sandbox (their
		 * propagation, shared ones too, is not taken: none of the
		 * engines' configs ask one) */
		if (is_standard(m))
			continue;
		if (isd_spec_find_mount(spec, m->destination) >= 0)
			return RT_ERR(-EEXIST, "%s: mounts (%s): a second mount at the same destination is not "
					      "supported by isd-runtime", cfg, m->destination);
		if (m->type == ISD_OCI_MOUNT_BIND)
			r = add_bind(spec, cfg, m);
		else if (m->type == ISD_OCI_MOUNT_TMPFS)
			r = add_tmpfs(spec, cfg, m);
		else
			r = RT_ERR(-EOPNOTSUPP, "%s: mounts (%s): isd-runtime makes proc, sysfs, devpts, mqueue and "
						"cgroup only at their usual places (/proc, /sys, /dev/pts, /dev/mqueue, "
						"/sys/fs/cgroup)", cfg, m->destination);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool covered(const char *path, const char *const *list)
{
	for (size_t i = 0; list[i]; i++) {
		size_t n = strlen(list[i]);
		if (!strncmp(path, list[i], n) && (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return false;
}

/* isd masks and write-protects its own list in every sandbox; the
 * config's entries beyond it go to the spec, made once the tree is built
 * (a path the kernel or the root lacks is skipped, as runc skips it). */
static void copy_paths(struct isd_spec *spec, const struct isd_oci_extra *x)
{
	const char *const *masked = isd_mount_proc_masked_paths();
	const char *const *ro = isd_mount_proc_readonly_paths();

	for (int pass = 0; pass < 2; pass++) {
		char **list = pass ? x->readonly_paths : x->masked_paths;

		for (size_t i = 0; list && list[i]; i++)
			if (!covered(list[i], masked) && !(pass && covered(list[i], ro)))
				isd_strv_push(pass ? &spec->readonly_paths : &spec->masked_paths, isd_xstrdup(list[i]));
	}
}

static bool lsm_enabled(const char *file)
{
	char c = 0;
	FILE *f = fopen(file, "re");

	if (!f)
		return false;
	c = (char)fgetc(f);
	fclose(f);
	return c == 'Y' || c == '1' || c == '0';
}

/* runc and crun leave out an AppArmor profile or SELinux label on a host
 * without that module; isd-runtime applies neither, so it refuses them
 * where the module would enforce them. */
static int check_lsm(const struct isd_oci_extra *x)
{
	if (x->apparmor_profile && strcmp(x->apparmor_profile, "unconfined") &&
	    lsm_enabled("/sys/module/apparmor/parameters/enabled"))
		return RT_ERR(-EOPNOTSUPP, "%s: process.apparmorProfile %s: AppArmor profiles are not applied by "
				    "isd-runtime (isd confines with seccomp and Landlock instead)",
			      x->config_path, x->apparmor_profile);
	if ((x->selinux_label || x->mount_label) && lsm_enabled("/sys/fs/selinux/enforce"))
		return RT_ERR(-EOPNOTSUPP, "%s: %s: SELinux labels are not applied by isd-runtime", x->config_path,
			      x->selinux_label ? "process.selinuxLabel" : "linux.mountLabel");
	return 0;
}

/* The sandbox's payload sits in a user namespace, where no hard limit can
 * be raised: a root runtime raises its own first (inherited by the
 * sandbox); a hard limit still out of reach fails here, by name. */
static int copy_rlimits(struct isd_spec *spec, const struct isd_oci_extra *x)
{
	free(spec->rlimits);
	spec->rlimits = isd_xcalloc(x->n_rlimits ? x->n_rlimits : 1, sizeof(*spec->rlimits));
	spec->n_rlimits = 0;
	for (size_t i = 0; i < x->n_rlimits; i++) {
		const struct isd_oci_rlimit *l = &x->rlimits[i];
		struct rlimit cur;

		if (getrlimit(l->resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY &&
		    (l->hard == RLIM_INFINITY || l->hard > cur.rlim_max)) {
			struct rlimit raised = {.rlim_cur = cur.rlim_cur, .rlim_max = l->hard};
			if (setrlimit(l->resource, &raised) < 0)
				return RT_ERR(-EPERM, "%s: process.rlimits %s: hard limit %llu is above the caller's %llu "
						      "(raise it with ulimit -H or lower it in the config)",
					      x->config_path, oci_rlimit_name(l->resource), (unsigned long long)l->hard,
					      (unsigned long long)cur.rlim_max);
		}
		spec->rlimits[spec->n_rlimits++] = (struct isd_spec_rlimit){l->resource, l->soft, l->hard};
	}
	return 0;
}

/* process.oomScoreAdj: set on the runtime itself, which the sandbox's
 * processes inherit through fork and exec (runc and crun set it in their
 * init the same way).  Raising it needs no privilege; lowering it below
 * what the caller has does (CAP_SYS_RESOURCE), and a score left higher
 * than asked costs function only: a warning, as before. */
static void apply_oom_score_adj(const struct isd_oci_extra *x)
{
	char buf[16];
	FILE *f;

	if (!x->has_oom_score_adj)
		return;
	snprintf(buf, sizeof(buf), "%d\n", x->oom_score_adj);
	f = fopen("/proc/self/oom_score_adj", "we");
	if (!f || fputs(buf, f) < 0 || fflush(f) != 0)
		rt_warn("%s: process.oomScoreAdj %d: left out (%s)", x->config_path, x->oom_score_adj,
			strerror(errno));
	if (f)
		fclose(f);
}

/* Left out at a cost in function only (isd-runtime(8) lists them). */
static void warn_functional(const struct isd_oci_extra *x)
{
	const char *cfg = x->config_path;

	if (x->domainname)
		rt_warn("%s: domainname: left out (isd-runtime sets none)", cfg);
	if (x->has_umask && x->umask != 022)
		rt_warn("%s: process.user.umask %04o: left out (the payload starts with 0022)", cfg, x->umask);
}

/* process.user.additionalGids, set by setgroups in the container's user
 * namespace as runc and crun set them (src/userns.c), once the ids are
 * known: each must be mapped there, and setgroups allowed.  With a map
 * of the config's (checked mapped by the config's reader) or a joined
 * namespace's, they are; as root, isd maps each to an id of root's
 * subordinate range (src/rootful.c); with isd's own map of the caller's
 * one id (rootless, no linux.gidMappings) no other group exists there
 * and setgroups is denied: refused, not left out.  Only the primary
 * group asked needs no setgroups. */
int rt_apply_groups(struct isd_spec *spec, const struct isd_oci_extra *x)
{
	bool own_map = x->ns[ISD_OCI_NS_USER].mode != ISD_OCI_NS_JOIN && !spec->n_gid_ranges && !spec->idmapped;
	bool other = false;

	for (size_t i = 0; i < x->n_additional_gids; i++)
		other |= x->additional_gids[i] != spec->gid;
	if (!other && own_map)
		return 0;
	/* uid 0 of a user namespace that is not the host's root (rootless
	 * podman's, `unshare --map-users`): the parent maps each group onto
	 * the same id of its own namespace, as crun running there sets it */
	if (own_map && geteuid() == 0) {
		if (x->n_additional_gids > 64) /* a line of gid_map each, written in one go */
			return RT_ERR(-E2BIG, "%s: process.user.additionalGids: isd-runtime maps 64 groups at most",
				      x->config_path);
		spec->host_groups = isd_xcalloc(x->n_additional_gids, sizeof(*spec->host_groups));
		for (size_t i = 0; i < x->n_additional_gids; i++) {
			uint32_t g = x->additional_gids[i];
			spec->host_groups[i] = g == spec->gid ? spec->host_gid : g;
			if (g != spec->gid && (g == spec->host_gid || !isd_userns_ids_mapped("/proc/self/gid_map", g, 1)))
				return RT_ERR(-EINVAL, "%s: process.user.additionalGids: group %u cannot be set: isd-runtime "
						       "maps it onto gid %u of its own user namespace, which %s",
					      x->config_path, g, g, g == spec->host_gid ? "is the primary group's already"
											: "does not exist there");
		}
		own_map = false;
	}
	if (own_map)
		return RT_ERR(-EINVAL, "%s: process.user.additionalGids: a group other than %u cannot be set: the "
				       "container's user namespace maps gid %u only, the caller's own, where setgroups is "
				       "denied (give linux.gidMappings a range of /etc/subgid, or run isd-runtime as root)",
			      x->config_path, spec->gid, spec->gid);
	free(spec->groups);
	spec->groups = isd_xcalloc(x->n_additional_gids, sizeof(*spec->groups));
	if (x->n_additional_gids) /* none: additional_gids is NULL, which memcpy may not take */
		memcpy(spec->groups, x->additional_gids, x->n_additional_gids * sizeof(*spec->groups));
	spec->n_groups = x->n_additional_gids;
	return isd_rootful_map_groups(spec);
}

bool rt_wants_mqueue(const struct isd_oci_extra *x)
{
	/* a bind of the host's /dev/mqueue would show the host's queues: the
	 * container's own IPC namespace's instead, or none without one */
	for (size_t i = 0; i < x->n_mounts; i++)
		if (!strcmp(x->mounts[i].destination, "/dev/mqueue") &&
		    (x->mounts[i].type == ISD_OCI_MOUNT_MQUEUE || x->mounts[i].type == ISD_OCI_MOUNT_BIND))
			return x->ns[ISD_OCI_NS_IPC].mode != ISD_OCI_NS_SHARE;
	return false;
}

/* The engine and the operator decide the container's privileges, as with
 * runc and crun; the sandbox (namespaces, mounts, seccomp) stays isd's. */
static void copy_caps(struct isd_spec *spec, const struct isd_oci_extra *x)
{
	_cleanup_free_ char *origin = isd_xasprintf("%s process.capabilities", x->config_path);

	if (x->caps_none)
		return;
	spec->config_caps = true;
	spec->caps.bounding = x->caps[ISD_OCI_CAP_BOUNDING];
	spec->caps.effective = x->caps[ISD_OCI_CAP_EFFECTIVE];
	spec->caps.permitted = x->caps[ISD_OCI_CAP_PERMITTED];
	spec->caps.inheritable = x->caps[ISD_OCI_CAP_INHERITABLE];
	spec->caps.ambient = x->caps[ISD_OCI_CAP_AMBIENT];
	spec->no_new_privs = x->no_new_privileges;
	isd_spec_set_origin(spec, "capabilities", origin);
}

int rt_apply_config(struct isd_spec *spec, const struct isd_oci_extra *x)
{
	/* Honoured: capabilities and noNewPrivileges below (or by dropping
	 * all, run.oci.isd.capabilities=none), seccomp by
	 * use_config_seccomp(), the hooks that refuse_unsupported() lets
	 * through, the console size at creation; linux.cgroupsPath by the
	 * sandbox's cgroup (isd_cgroup_prepare_path); the namespaces to join by
	 * runtime-ns.c (rt_ns_plan refused what it cannot join); the rest
	 * below. */
	unsigned applies = ISD_OCI_APPLIES_CAPS | ISD_OCI_APPLIES_SECCOMP | ISD_OCI_APPLIES_HOOKS |
			   ISD_OCI_APPLIES_CONSOLE_SIZE | ISD_OCI_APPLIES_CGROUP_PATH | ISD_OCI_APPLIES_RLIMITS |
			   ISD_OCI_APPLIES_MOUNTS | ISD_OCI_APPLIES_MASKED_PATHS | ISD_OCI_APPLIES_LSM |
			   ISD_OCI_APPLIES_SYSCTL | ISD_OCI_APPLIES_DOMAINNAME | ISD_OCI_APPLIES_UMASK |
			   ISD_OCI_APPLIES_OOM_SCORE | ISD_OCI_APPLIES_GROUPS | ISD_OCI_APPLIES_JOIN |
			   ISD_OCI_APPLIES_PROPAGATION;
	int r;

	/* set once the root is in place (src/mount.c): isd's own root
	 * mount, which shared only puts in a peer group of the sandbox's */
	spec->rootfs_propagation = x->rootfs_propagation;
	if ((r = check_lsm(x)) < 0 || (r = apply_mounts(spec, x)) < 0)
		return r;
	copy_paths(spec, x);
	if ((r = copy_rlimits(spec, x)) < 0)
		return r;
	warn_functional(x);
	copy_caps(spec, x);
	apply_oom_score_adj(x);
	return isd_oci_refuse_unapplied(x, applies);
}
