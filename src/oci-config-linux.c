/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.json: the linux object (namespaces, id maps, devices, sysctl,
 * masked and read-only paths, seccomp, propagation) and the checks that
 * span sections.  resources and cgroupsPath: oci-resources.c. */
#define _GNU_SOURCE
#include "oci-config.h"
#include "isd/seccomp.h"
#include "isd/util.h"

#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static int parse_namespaces(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "type", "path", NULL };
	struct isd_oci_namespace *ns = c->extra->ns;
	char p[256], q[256];
	size_t n;
	int r;

	if ((r = oci_array(c, "linux.namespaces", o, &n)) < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(o, i), *v;
		const char *type, *path;
		unsigned k = 0;

		oci_path(p, sizeof(p), "linux.namespaces[%zu]", i);
		if ((r = oci_want(c, p, e, json_type_object)) < 0)
			return r;
		oci_unknown_keys(c, p, e, known);
		oci_path(q, sizeof(q), "%s.type", p);
		if (!(v = oci_field(e, "type")))
			return oci_err(c, q, "missing");
		if ((r = oci_string(c, q, v, &type)) < 0)
			return r;
		while (k < ISD_OCI_NS_COUNT && strcmp(type, isd_oci_ns_name(k)))
			k++;
		if (k == ISD_OCI_NS_COUNT)
			return oci_err(c, q, "\"%.64s\" is not supported (pid, network, mount, ipc, uts, user, cgroup)",
				       type);
		if (ns[k].mode != ISD_OCI_NS_SHARE)
			return oci_err(c, q, "\"%s\" is given twice", type);
		ns[k].mode = ISD_OCI_NS_NEW;
		oci_path(q, sizeof(q), "%s.path", p);
		if ((v = oci_field(e, "path"))) {
			if ((r = oci_string(c, q, v, &path)) < 0)
				return r;
			if (*path) {
				if ((r = oci_abs_path(c, q, path, NULL, &ns[k].path)) < 0)
					return r;
				ns[k].mode = ISD_OCI_NS_JOIN;
			}
		}
	}
	return 0;
}

static int parse_id_map(struct oci_ctx *c, const char *path, struct json_object *o, struct isd_id_range **out,
			size_t *n_out)
{
	static const char *const known[] = { "containerID", "hostID", "size", NULL };
	_cleanup_free_ struct isd_id_range *ranges = NULL;
	char p[256], q[256];
	size_t n;
	int r;

	if ((r = oci_array(c, path, o, &n)) < 0)
		return r;
	if (n > OCI_MAX_ID_LINES)
		return oci_err(c, path, "more than %d ranges (the kernel's limit)", OCI_MAX_ID_LINES);
	ranges = isd_xcalloc(n ? n : 1, sizeof(*ranges));
	for (size_t i = 0; i < n; i++) {
		static const char *const keys[] = { "containerID", "hostID", "size" };
		struct json_object *e = json_object_array_get_idx(o, i), *v;
		uint32_t val[3];

		oci_path(p, sizeof(p), "%s[%zu]", path, i);
		if ((r = oci_want(c, p, e, json_type_object)) < 0)
			return r;
		oci_unknown_keys(c, p, e, known);
		for (size_t k = 0; k < ARRAY_LEN(keys); k++) {
			oci_path(q, sizeof(q), "%s.%s", p, keys[k]);
			if (!(v = oci_field(e, keys[k])))
				return oci_err(c, q, "missing");
			if ((r = oci_u32(c, q, v, &val[k])) < 0)
				return r;
		}
		if (val[2] == 0)
			return oci_err(c, p, "size 0 maps nothing");
		/* 64-bit sums: a range ending past 2^32 wraps in 32 bits */
		if ((uint64_t)val[0] + val[2] > (uint64_t)UINT32_MAX + 1 ||
		    (uint64_t)val[1] + val[2] > (uint64_t)UINT32_MAX + 1)
			return oci_err(c, p, "the range ends beyond id 4294967295");
		for (size_t j = 0; j < i; j++) {
			const struct isd_id_range *o2 = &ranges[j];
			if ((uint64_t)val[0] < (uint64_t)o2->inside + o2->count &&
			    (uint64_t)o2->inside < (uint64_t)val[0] + val[2])
				return oci_err(c, p, "containerID range overlaps %s[%zu] (the kernel refuses it)", path, j);
			if ((uint64_t)val[1] < (uint64_t)o2->outside + o2->count &&
			    (uint64_t)o2->outside < (uint64_t)val[1] + val[2])
				return oci_err(c, p, "hostID range overlaps %s[%zu] (the kernel refuses it)", path, j);
		}
		ranges[i] = (struct isd_id_range){ .inside = val[0], .outside = val[1], .count = val[2] };
	}
	free(*out);
	*out = isd_steal_ptr(ranges);
	*n_out = n;
	return 0;
}

static int parse_paths(struct oci_ctx *c, const char *path, struct json_object *o, char ***out)
{
	_cleanup_strv_ char **raw = NULL;
	char p[256];
	int r;

	if ((r = oci_strv(c, path, o, false, &raw)) < 0)
		return r;
	for (size_t i = 0; raw[i]; i++) {
		char *norm;

		oci_path(p, sizeof(p), "%s[%zu]", path, i);
		if ((r = oci_abs_path(c, p, raw[i], NULL, &norm)) < 0)
			return r;
		if (!strcmp(norm, "/")) {
			free(norm);
			return oci_err(c, p, "\"/\" is the whole container");
		}
		isd_strv_push(out, norm);
	}
	return 0;
}

static int parse_propagation(struct oci_ctx *c, struct json_object *o)
{
	static const struct {
		const char *name;
		unsigned long flags;
	} table[] = {
		{ "shared", MS_SHARED },	 { "rshared", MS_SHARED | MS_REC },
		{ "slave", MS_SLAVE },		 { "rslave", MS_SLAVE | MS_REC },
		{ "private", MS_PRIVATE },	 { "rprivate", MS_PRIVATE | MS_REC },
		{ "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
	};
	const char *s;
	int r;

	if ((r = oci_string(c, "linux.rootfsPropagation", o, &s)) < 0)
		return r;
	if (!*s)
		return 0;
	for (size_t i = 0; i < ARRAY_LEN(table); i++)
		if (!strcmp(s, table[i].name)) {
			c->extra->rootfs_propagation = table[i].flags;
			return 0;
		}
	return oci_err(c, "linux.rootfsPropagation", "\"%.64s\" is not a propagation (shared, slave, private, "
		       "unbindable, each also with \"r\")", s);
}

/* Only sysctls of the container's own namespaces: any other one would
 * change the host for everyone (runc's list). */
static int sysctl_namespace(const char *key)
{
	static const char *const ipc[] = { "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
					   "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced" };

	for (size_t i = 0; i < ARRAY_LEN(ipc); i++)
		if (!strcmp(key, ipc[i]))
			return ISD_OCI_NS_IPC;
	if (!strncmp(key, "fs.mqueue.", 10))
		return ISD_OCI_NS_IPC;
	if (!strncmp(key, "net.", 4))
		return ISD_OCI_NS_NET;
	if (!strcmp(key, "kernel.hostname") || !strcmp(key, "kernel.domainname"))
		return ISD_OCI_NS_UTS;
	return -1;
}

static int parse_sysctl(struct oci_ctx *c, struct json_object *o)
{
	size_t n = 0;
	int r;

	if ((r = oci_want(c, "linux.sysctl", o, json_type_object)) < 0)
		return r;
	json_object_object_foreach(o, key, val) {
		_cleanup_free_ char *dotted = NULL;
		char p[320];
		const char *s;
		int ns;

		oci_path(p, sizeof(p), "linux.sysctl.%.200s", key);
		if (++n > OCI_MAX_ITEMS)
			return oci_err(c, "linux.sysctl", "more than %d entries", OCI_MAX_ITEMS);
		if ((r = oci_string(c, p, val, &s)) < 0)
			return r;
		if (strchr(s, '\n'))
			return oci_err(c, p, "the value holds a newline");
		/* "net/ipv4/ip_forward" is the same key; a component of "." or
		 * ".." would leave /proc/sys */
		dotted = isd_xstrdup(key);
		if (strchr(dotted, '/'))
			for (char *q = dotted; *q; q++)
				*q = *q == '/' ? '.' : *q;
		if (!*key || strlen(key) > 256 || key[0] == '.' || key[0] == '/' || strstr(key, "..") ||
		    strstr(key, "//") || strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") != strlen(key))
			return oci_err(c, p, "not a sysctl name");
		ns = sysctl_namespace(dotted);
		if (ns < 0)
			return oci_err(c, p, "not namespaced: it would change the host (only net.*, fs.mqueue.*, "
				       "the IPC ones and kernel.hostname/domainname)");
		if (c->extra->ns[ns].mode == ISD_OCI_NS_SHARE)
			return oci_err(c, p, "needs a \"%s\" namespace in linux.namespaces (it would change the host)",
				       isd_oci_ns_name(ns));
		isd_strv_push(&c->extra->sysctl, isd_xasprintf("%s=%s", key, s));
	}
	return 0;
}

static int parse_seccomp(struct oci_ctx *c, struct json_object *o)
{
	struct isd_oci_extra *e = c->extra;
	struct isd_seccomp_profile *profile = NULL;
	const char *text;
	int r;

	if ((r = oci_want(c, "linux.seccomp", o, json_type_object)) < 0)
		return r;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	e->seccomp = isd_xstrdup(text);
	e->seccomp_origin = isd_xasprintf("%s linux.seccomp", c->cfg);
	/* isd's one compiler of this format (Docker's, which OCI's is a
	 * subset of): parsed here so that a bad profile fails the load */
	if ((r = isd_seccomp_parse_buffer(e->seccomp, strlen(e->seccomp), e->seccomp_origin, NULL, &profile)) < 0)
		return oci_visible_error(r);
	isd_seccomp_profile_free(profile);
	return 0;
}

static int parse_personality(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "domain", "flags", NULL };
	struct json_object *v;
	const char *s;
	int r;

	if ((r = oci_want(c, "linux.personality", o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, "linux.personality", o, known);
	if ((v = oci_field(o, "domain"))) {
		if ((r = oci_string(c, "linux.personality.domain", v, &s)) < 0)
			return r;
		if (strcmp(s, "LINUX"))
			return oci_err(c, "linux.personality.domain", "\"%.32s\" is not supported (LINUX)", s);
	}
	if ((v = oci_field(o, "flags")) &&
	    (!json_object_is_type(v, json_type_array) || json_object_array_length(v) > 0))
		return oci_err(c, "linux.personality.flags", "not supported");
	return 0;
}

int oci_parse_linux(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = {
		"namespaces", "uidMappings", "gidMappings", "timeOffsets", "devices", "netDevices",
		"cgroupsPath", "rootfsPropagation", "resources", "seccomp", "sysctl", "maskedPaths",
		"readonlyPaths", "mountLabel", "intelRdt", "personality", "memoryPolicy", NULL
	};
	static const struct {
		const char *key, *why;
	} unsupported[] = {
		{ "timeOffsets", "isd-runtime makes no time namespace" },
		{ "netDevices", "isd-runtime moves no network device into the container" },
		{ "intelRdt", "isd-runtime does not manage Intel RDT" },
		{ "memoryPolicy", "isd-runtime sets no NUMA memory policy" },
	};
	struct isd_oci_extra *e = c->extra;
	struct json_object *v;
	int r;

	if (!o)
		return oci_err(c, "linux", "missing (namespaces and the rest of a Linux container)");
	if ((r = oci_want(c, "linux", o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, "linux", o, known);
	for (size_t i = 0; i < ARRAY_LEN(unsupported); i++)
		if (oci_field(o, unsupported[i].key)) {
			char p[64];
			oci_path(p, sizeof(p), "linux.%s", unsupported[i].key);
			return oci_err(c, p, "not supported: %s", unsupported[i].why);
		}
	if ((v = oci_field(o, "namespaces")) && (r = parse_namespaces(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "uidMappings")) &&
	    (r = parse_id_map(c, "linux.uidMappings", v, &c->spec->uid_ranges, &c->spec->n_uid_ranges)) < 0)
		return r;
	if ((v = oci_field(o, "gidMappings")) &&
	    (r = parse_id_map(c, "linux.gidMappings", v, &c->spec->gid_ranges, &c->spec->n_gid_ranges)) < 0)
		return r;
	if ((v = oci_field(o, "maskedPaths")) && (r = parse_paths(c, "linux.maskedPaths", v, &e->masked_paths)) < 0)
		return r;
	if ((v = oci_field(o, "readonlyPaths")) &&
	    (r = parse_paths(c, "linux.readonlyPaths", v, &e->readonly_paths)) < 0)
		return r;
	if ((v = oci_field(o, "rootfsPropagation")) && (r = parse_propagation(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "devices")) && (r = oci_parse_devices(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "resources")) && (r = oci_parse_resources(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "cgroupsPath")) && (r = oci_parse_cgroups_path(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "sysctl")) && (r = parse_sysctl(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "seccomp")) && (r = parse_seccomp(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "personality")) && (r = parse_personality(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "mountLabel"))) {
		const char *s;
		if ((r = oci_string(c, "linux.mountLabel", v, &s)) < 0)
			return r;
		if (*s)
			e->mount_label = isd_xstrdup(s);
	}
	return 0;
}

static bool id_mapped(const struct isd_id_range *r, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (id >= r[i].inside && (uint64_t)id < (uint64_t)r[i].inside + r[i].count)
			return true;
	return false;
}

/* With maps of its own, an id outside them does not exist in the
 * container: setuid there fails after everything is built. */
static int check_ids_mapped(struct oci_ctx *c)
{
	const struct isd_spec *spec = c->spec;
	const struct isd_oci_extra *e = c->extra;

	if (spec->n_uid_ranges && !id_mapped(spec->uid_ranges, spec->n_uid_ranges, spec->uid))
		return oci_err(c, "process.user.uid", "%u is not mapped by linux.uidMappings", spec->uid);
	if (spec->n_gid_ranges && !id_mapped(spec->gid_ranges, spec->n_gid_ranges, spec->gid))
		return oci_err(c, "process.user.gid", "%u is not mapped by linux.gidMappings", spec->gid);
	for (size_t i = 0; spec->n_gid_ranges && i < e->n_additional_gids; i++)
		if (!id_mapped(spec->gid_ranges, spec->n_gid_ranges, e->additional_gids[i])) {
			char p[64];
			oci_path(p, sizeof(p), "process.user.additionalGids[%zu]", i);
			return oci_err(c, p, "%u is not mapped by linux.gidMappings", e->additional_gids[i]);
		}
	return 0;
}

int oci_finish(struct oci_ctx *c)
{
	const struct isd_oci_namespace *ns = c->extra->ns;
	struct isd_spec *spec = c->spec;

	if (ns[ISD_OCI_NS_MNT].mode == ISD_OCI_NS_SHARE)
		return oci_err(c, "linux.namespaces", "no \"mount\" namespace: isd-runtime builds every container in one");
	if (spec->hostname && ns[ISD_OCI_NS_UTS].mode == ISD_OCI_NS_SHARE)
		return oci_err(c, "hostname", "needs a \"uts\" namespace in linux.namespaces (it would rename the host)");
	if (c->extra->domainname && ns[ISD_OCI_NS_UTS].mode == ISD_OCI_NS_SHARE)
		return oci_err(c, "domainname", "needs a \"uts\" namespace in linux.namespaces (it would rename the host)");
	if ((spec->n_uid_ranges || spec->n_gid_ranges) && ns[ISD_OCI_NS_USER].mode != ISD_OCI_NS_NEW)
		return oci_err(c, spec->n_uid_ranges ? "linux.uidMappings" : "linux.gidMappings",
			       "needs a new \"user\" namespace in linux.namespaces (one joined by path has its maps)");
	if (spec->network == ISD_NET_NETLESS && ns[ISD_OCI_NS_NET].mode == ISD_OCI_NS_SHARE)
		return oci_err(c, "annotations." ISD_OCI_ANNOTATION_NETWORK,
			       "netless needs a \"network\" namespace in linux.namespaces");
	if (spec->network != ISD_NET_NETLESS)
		spec->network = ns[ISD_OCI_NS_NET].mode == ISD_OCI_NS_SHARE ? ISD_NET_HOST : ISD_NET_NONE;
	spec->pid_host = ns[ISD_OCI_NS_PID].mode == ISD_OCI_NS_SHARE;
	if (check_ids_mapped(c) < 0)
		return -EINVAL;
	return oci_bind_devices(c);
}
