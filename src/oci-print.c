/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --print-spec of an OCI container: isd's spec JSON with the settings
 * config.json decides put right (isd exec's fixed ones would lie), and an
 * "oci" object with the rest of the plan. */
#define _GNU_SOURCE
#include "oci-config.h"
#include "isd/util.h"

#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>

static json_object *strv_json(char *const *v)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; v && v[i]; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

static json_object *flags_json(unsigned long flags, unsigned long propagation)
{
	static const struct {
		unsigned long bit;
		const char *name;
	} names[] = {
		{ MS_RDONLY, "ro" },	       { MS_NOSUID, "nosuid" },	      { MS_NODEV, "nodev" },
		{ MS_NOEXEC, "noexec" },       { MS_SYNCHRONOUS, "sync" },    { MS_DIRSYNC, "dirsync" },
		{ MS_MANDLOCK, "mand" },       { MS_NOATIME, "noatime" },     { MS_NODIRATIME, "nodiratime" },
		{ MS_RELATIME, "relatime" },   { MS_STRICTATIME, "strictatime" }, { 1ul << 25, "lazytime" },
		{ 256, "nosymfollow" },
	};
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (flags & names[i].bit)
			json_object_array_add(a, json_object_new_string(names[i].name));
	if (propagation) {
		const char *p = propagation & MS_SHARED ? "shared" : propagation & MS_SLAVE ? "slave"
				: propagation & MS_PRIVATE ? "private" : "unbindable";
		char buf[16];
		snprintf(buf, sizeof(buf), "%s%s", propagation & MS_REC ? "r" : "", p);
		json_object_array_add(a, json_object_new_string(buf));
	}
	return a;
}

static json_object *mounts_json(const struct isd_oci_extra *e)
{
	static const char *const type_names[] = {
		[ISD_OCI_MOUNT_BIND] = "bind",	   [ISD_OCI_MOUNT_TMPFS] = "tmpfs",
		[ISD_OCI_MOUNT_PROC] = "proc",	   [ISD_OCI_MOUNT_SYSFS] = "sysfs",
		[ISD_OCI_MOUNT_DEVPTS] = "devpts", [ISD_OCI_MOUNT_MQUEUE] = "mqueue",
		[ISD_OCI_MOUNT_CGROUP] = "cgroup2",
	};
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < e->n_mounts; i++) {
		const struct isd_oci_mount *m = &e->mounts[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "type", json_object_new_string(type_names[m->type]));
		if (m->source)
			json_object_object_add(o, "source", json_object_new_string(m->source));
		json_object_object_add(o, "destination", json_object_new_string(m->destination));
		if (m->type == ISD_OCI_MOUNT_BIND)
			json_object_object_add(o, "recursive", json_object_new_boolean(m->recursive));
		json_object_object_add(o, "flags", flags_json(m->flags, m->propagation));
		if (m->data)
			json_object_object_add(o, "data", json_object_new_string(m->data));
		if (m->size)
			json_object_object_add(o, "size", json_object_new_uint64(m->size));
		if (m->has_mode) {
			char mode[8];
			snprintf(mode, sizeof(mode), "%04o", m->mode);
			json_object_object_add(o, "mode", json_object_new_string(mode));
		}
		if (m->copy_up)
			json_object_object_add(o, "copy_up", json_object_new_boolean(true));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *caps_json(uint64_t set)
{
	json_object *a = json_object_new_array();

	for (unsigned cap = 0; cap <= ISD_OCI_CAP_LAST; cap++)
		if (set & (UINT64_C(1) << cap))
			json_object_array_add(a, json_object_new_string(isd_oci_cap_name(cap)));
	return a;
}

static json_object *namespaces_json(const struct isd_oci_extra *e)
{
	json_object *o = json_object_new_object();

	for (unsigned k = 0; k < ISD_OCI_NS_COUNT; k++) {
		const struct isd_oci_namespace *ns = &e->ns[k];
		json_object_object_add(o, isd_oci_ns_name(k),
				       ns->mode == ISD_OCI_NS_JOIN ? json_object_new_string(ns->path)
								   : json_object_new_boolean(ns->mode == ISD_OCI_NS_NEW));
	}
	return o;
}

static json_object *rlimits_json(const struct isd_oci_extra *e)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < e->n_rlimits; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "type", json_object_new_string(oci_rlimit_name(e->rlimits[i].resource)));
		json_object_object_add(o, "soft", json_object_new_uint64(e->rlimits[i].soft));
		json_object_object_add(o, "hard", json_object_new_uint64(e->rlimits[i].hard));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *devices_json(const struct isd_oci_extra *e)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < e->n_devices; i++) {
		const struct isd_oci_device *d = &e->devices[i];
		json_object *o = json_object_new_object();
		char type[2] = { d->type, 0 };

		json_object_object_add(o, "path", json_object_new_string(d->path));
		json_object_object_add(o, "type", json_object_new_string(type));
		json_object_object_add(o, "major", json_object_new_int64(d->major));
		json_object_object_add(o, "minor", json_object_new_int64(d->minor));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *device_rules_json(const struct isd_oci_extra *e)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < e->n_device_rules; i++) {
		const struct isd_oci_device_rule *d = &e->device_rules[i];
		char text[96], major[24] = "*", minor[24] = "*";

		if (d->major >= 0)
			snprintf(major, sizeof(major), "%lld", (long long)d->major);
		if (d->minor >= 0)
			snprintf(minor, sizeof(minor), "%lld", (long long)d->minor);
		snprintf(text, sizeof(text), "%s %c %s:%s %s", d->allow ? "allow" : "deny", d->type, major, minor,
			 d->access);
		json_object_array_add(a, json_object_new_string(text));
	}
	return a;
}

static json_object *hooks_json(const struct isd_oci_extra *e)
{
	json_object *o = json_object_new_object();

	for (unsigned k = 0; k < ISD_OCI_HOOK_COUNT; k++) {
		json_object *a = json_object_new_array();

		if (!e->hooks[k].n) {
			json_object_put(a);
			continue;
		}
		for (size_t i = 0; i < e->hooks[k].n; i++) {
			const struct isd_oci_hook *h = &e->hooks[k].hooks[i];
			json_object *ho = json_object_new_object();
			json_object_object_add(ho, "path", json_object_new_string(h->path));
			json_object_object_add(ho, "args", strv_json(h->args));
			json_object_object_add(ho, "env", strv_json(h->env));
			if (h->timeout)
				json_object_object_add(ho, "timeout", json_object_new_int(h->timeout));
			json_object_array_add(a, ho);
		}
		json_object_object_add(o, isd_oci_hook_name(k), a);
	}
	return o;
}

static json_object *oci_json(const struct isd_oci_extra *e)
{
	json_object *o = json_object_new_object(), *caps = json_object_new_object();
	static const char *const sets[ISD_OCI_CAP_SET_COUNT] = { "bounding", "effective", "inheritable",
								  "permitted", "ambient" };

	json_object_object_add(o, "bundle", json_object_new_string(e->bundle));
	json_object_object_add(o, "oci_version", json_object_new_string(e->oci_version));
	if (e->container_id)
		json_object_object_add(o, "container_id", json_object_new_string(e->container_id));
	if (e->has_console_size) {
		json_object *cs = json_object_new_object();
		json_object_object_add(cs, "height", json_object_new_int64(e->console_height));
		json_object_object_add(cs, "width", json_object_new_int64(e->console_width));
		json_object_object_add(o, "console_size", cs);
	}
	{
		json_object *g = json_object_new_array();
		for (size_t i = 0; i < e->n_additional_gids; i++)
			json_object_array_add(g, json_object_new_int64(e->additional_gids[i]));
		json_object_object_add(o, "additional_gids", g);
	}
	if (e->has_umask) {
		char umask[8];
		snprintf(umask, sizeof(umask), "%04o", e->umask);
		json_object_object_add(o, "umask", json_object_new_string(umask));
	}
	json_object_object_add(o, "rlimits", rlimits_json(e));
	for (unsigned s = 0; s < ISD_OCI_CAP_SET_COUNT; s++)
		json_object_object_add(caps, sets[s], caps_json(e->caps[s]));
	json_object_object_add(o, "capabilities", caps);
	json_object_object_add(o, "no_new_privileges", json_object_new_boolean(e->no_new_privileges));
	if (e->has_oom_score_adj)
		json_object_object_add(o, "oom_score_adj", json_object_new_int(e->oom_score_adj));
	if (e->apparmor_profile)
		json_object_object_add(o, "apparmor_profile", json_object_new_string(e->apparmor_profile));
	if (e->selinux_label)
		json_object_object_add(o, "selinux_label", json_object_new_string(e->selinux_label));
	if (e->mount_label)
		json_object_object_add(o, "mount_label", json_object_new_string(e->mount_label));
	if (e->domainname)
		json_object_object_add(o, "domainname", json_object_new_string(e->domainname));
	json_object_object_add(o, "mounts", mounts_json(e));
	json_object_object_add(o, "namespaces", namespaces_json(e));
	json_object_object_add(o, "devices", devices_json(e));
	json_object_object_add(o, "device_rules", device_rules_json(e));
	if (e->cgroups_path) {
		json_object *cg = json_object_new_object();
		json_object_object_add(cg, "path", json_object_new_string(e->cgroups_path));
		json_object_object_add(cg, "dir", json_object_new_string(e->cgroup_dir));
		if (e->cgroup_unit) {
			json_object_object_add(cg, "slice", json_object_new_string(e->cgroup_slice));
			json_object_object_add(cg, "unit", json_object_new_string(e->cgroup_unit));
		}
		json_object_object_add(o, "cgroup", cg);
	}
	json_object_object_add(o, "seccomp", e->seccomp ? json_tokener_parse(e->seccomp) : NULL);
	json_object_object_add(o, "masked_paths", strv_json(e->masked_paths));
	json_object_object_add(o, "readonly_paths", strv_json(e->readonly_paths));
	json_object_object_add(o, "sysctl", strv_json(e->sysctl));
	if (e->rootfs_propagation)
		json_object_object_add(o, "rootfs_propagation", flags_json(0, e->rootfs_propagation));
	json_object_object_add(o, "hooks", hooks_json(e));
	json_object_object_add(o, "annotations", strv_json(e->annotations));
	json_object_object_add(o, "notes", strv_json(e->notes));
	return o;
}

char *isd_oci_plan_to_json(const struct isd_spec *spec, const struct isd_oci_extra *e)
{
	_cleanup_free_ char *base = isd_spec_to_json(spec);
	json_object *root = json_tokener_parse(base);
	char *text;

	if (!root)
		return isd_xstrdup(base);
	/* isd exec's fixed settings that config.json decides here */
	json_object_object_add(root, "root_readonly", json_object_new_boolean(!spec->writable_root));
	json_object_object_add(root, "readonly_paths", strv_json(e->readonly_paths));
	json_object_object_add(root, "masked_paths", strv_json(e->masked_paths));
	json_object_object_add(root, "namespaces", namespaces_json(e));
	json_object_object_add(root, "mounts", mounts_json(e));
	/* what the payload gets: the config's sets, or none (isd's rule) */
	{
		const struct isd_cap_sets *c = &spec->caps;
		bool on = spec->config_caps;
		json_object *caps = json_object_new_object();

		json_object_object_add(caps, "bounding", caps_json(on ? c->bounding : 0));
		json_object_object_add(caps, "effective", caps_json(on ? c->effective : 0));
		json_object_object_add(caps, "permitted", caps_json(on ? c->permitted : 0));
		json_object_object_add(caps, "inheritable", caps_json(on ? c->inheritable : 0));
		json_object_object_add(caps, "ambient", caps_json(on ? c->ambient : 0));
		json_object_object_add(root, "capabilities", caps);
	}
	json_object_object_add(root, "no_new_privileges", json_object_new_boolean(!spec->config_caps || spec->no_new_privs));
	json_object_object_del(root, "proc");
	json_object_object_del(root, "dev");
	json_object_object_add(root, "oci", oci_json(e));
	text = isd_xstrdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return text;
}
