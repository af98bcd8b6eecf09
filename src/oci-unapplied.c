/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Between plan and maker: what config.json set that the maker does not
 * carry out becomes one refusal, never a field quietly dropped. */
#define _GNU_SOURCE
#include "isd/oci.h"
#include "isd/util.h"

#include <string.h>

static bool any_caps(const struct isd_oci_extra *e)
{
	for (unsigned s = 0; s < ISD_OCI_CAP_SET_COUNT; s++)
		if (e->caps[s])
			return true;
	return false;
}

static bool any_hooks(const struct isd_oci_extra *e)
{
	for (unsigned k = 0; k < ISD_OCI_HOOK_COUNT; k++)
		if (e->hooks[k].n)
			return true;
	return false;
}

static bool any_join(const struct isd_oci_extra *e)
{
	for (unsigned k = 0; k < ISD_OCI_NS_COUNT; k++)
		if (e->ns[k].mode == ISD_OCI_NS_JOIN)
			return true;
	return false;
}

int isd_oci_refuse_unapplied(const struct isd_oci_extra *e, unsigned applies)
{
	const struct {
		unsigned bit;
		bool set;
		const char *path;
	} fields[] = {
		{ ISD_OCI_APPLIES_MOUNTS, e->n_mounts > 0, "mounts" },
		{ ISD_OCI_APPLIES_CAPS, any_caps(e), "process.capabilities" },
		{ ISD_OCI_APPLIES_RLIMITS, e->n_rlimits > 0, "process.rlimits" },
		{ ISD_OCI_APPLIES_MASKED_PATHS, e->masked_paths != NULL, "linux.maskedPaths" },
		{ ISD_OCI_APPLIES_MASKED_PATHS, e->readonly_paths != NULL, "linux.readonlyPaths" },
		{ ISD_OCI_APPLIES_SYSCTL, e->sysctl != NULL, "linux.sysctl" },
		{ ISD_OCI_APPLIES_LSM, e->apparmor_profile != NULL, "process.apparmorProfile" },
		{ ISD_OCI_APPLIES_LSM, e->selinux_label != NULL, "process.selinuxLabel" },
		{ ISD_OCI_APPLIES_LSM, e->mount_label != NULL, "linux.mountLabel" },
		{ ISD_OCI_APPLIES_OOM_SCORE, e->has_oom_score_adj, "process.oomScoreAdj" },
		{ ISD_OCI_APPLIES_GROUPS, e->n_additional_gids > 0, "process.user.additionalGids" },
		{ ISD_OCI_APPLIES_UMASK, e->has_umask, "process.user.umask" },
		{ ISD_OCI_APPLIES_CGROUP_PATH, e->cgroups_path != NULL, "linux.cgroupsPath" },
		{ ISD_OCI_APPLIES_PROPAGATION, e->rootfs_propagation != 0, "linux.rootfsPropagation" },
		{ ISD_OCI_APPLIES_DOMAINNAME, e->domainname != NULL, "domainname" },
		{ ISD_OCI_APPLIES_HOOKS, any_hooks(e), "hooks" },
		{ ISD_OCI_APPLIES_JOIN, any_join(e), "linux.namespaces (a path to join)" },
		{ ISD_OCI_APPLIES_SECCOMP, e->seccomp != NULL, "linux.seccomp" },
		{ ISD_OCI_APPLIES_CONSOLE_SIZE, e->has_console_size, "process.consoleSize" },
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].set && !(applies & fields[i].bit))
			return isd_error(-EOPNOTSUPP, "%s: %s: set, but isd-runtime does not carry it out yet",
					 e->config_path ? e->config_path : "config.json", fields[i].path);
	return 0;
}
