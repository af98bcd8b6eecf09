/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "device.h"
#include "isd/fsutil.h"
#include "isd/spec.h"
#include "isolation.h"
#include "landlock.h"
#include "mount-proc.h"
#include "isd/util.h"
#include "workspace.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void isd_spec_init(struct isd_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->limits.cpu_period_us = 100000;
}

void isd_spec_free(struct isd_spec *spec)
{
	isd_strv_free(spec->argv);
	isd_strv_free(spec->env);
	free(spec->image);
	free(spec->rootfs);
	for (size_t i = 0; i < spec->n_mounts; i++) {
		free(spec->mounts[i].source);
		free(spec->mounts[i].destination);
		free(spec->mounts[i].origin);
		isd_strv_free(spec->mounts[i].links);
	}
	free(spec->rlimits);
	free(spec->groups);
	free(spec->host_groups);
	isd_strv_free(spec->readonly_paths);
	isd_strv_free(spec->masked_paths);
	isd_strv_free(spec->profiles);
	isd_strv_free(spec->origins);
	free(spec->agent);
	free(spec->agent_state);
	free(spec->command_name);
	free(spec->mounts);
	isd_device_free_all(spec);
	isd_workspace_free(&spec->workspace);
	free(spec->workdir);
	free(spec->hostname);
	free(spec->seccomp);
	free(spec->seccomp_also);
	free(spec->activity_log);
	free(spec->isolation_why);
	free(spec->limits.cpuset_cpus);
	free(spec->uid_ranges);
	free(spec->gid_ranges);
	isd_netcfg_free(&spec->net);
	memset(spec, 0, sizeof(*spec));
}

struct isd_mount *isd_spec_add_mount(struct isd_spec *spec)
{
	struct isd_mount *m;

	spec->mounts = isd_xrealloc(spec->mounts, (spec->n_mounts + 1) * sizeof(*spec->mounts));
	m = &spec->mounts[spec->n_mounts++];
	memset(m, 0, sizeof(*m));
	return m;
}

ssize_t isd_spec_find_mount(const struct isd_spec *spec, const char *dst)
{
	for (size_t i = 0; i < spec->n_mounts; i++)
		if (!strcmp(spec->mounts[i].destination, dst))
			return (ssize_t)i;
	return -1;
}

static ssize_t env_index(char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, len) && env[i][len] == '=')
			return (ssize_t)i;
	return -1;
}

void isd_spec_setenv(struct isd_spec *spec, const char *name, const char *value)
{
	char *entry = isd_xasprintf("%s=%s", name, value);
	ssize_t i = env_index(spec->env, name);

	if (i >= 0) {
		free(spec->env[i]);
		spec->env[i] = entry;
	} else {
		isd_strv_push(&spec->env, entry);
	}
}

const char *isd_spec_getenv(const struct isd_spec *spec, const char *name)
{
	ssize_t i = env_index(spec->env, name);
	return i >= 0 ? spec->env[i] + strlen(name) + 1 : NULL;
}

static ssize_t origin_index(char *const *origins, const char *key)
{
	size_t len = strlen(key);

	for (size_t i = 0; origins && origins[i]; i++)
		if (!strncmp(origins[i], key, len) && origins[i][len] == '\t')
			return (ssize_t)i;
	return -1;
}

void isd_spec_set_origin(struct isd_spec *spec, const char *key, const char *origin)
{
	char *entry = isd_xasprintf("%s\t%s", key, origin);
	ssize_t i = origin_index(spec->origins, key);

	if (i >= 0) {
		free(spec->origins[i]);
		spec->origins[i] = entry;
	} else {
		isd_strv_push(&spec->origins, entry);
	}
}

const char *isd_spec_get_origin(const struct isd_spec *spec, const char *key)
{
	ssize_t i = origin_index(spec->origins, key);
	return i >= 0 ? spec->origins[i] + strlen(key) + 1 : NULL;
}

const char *isd_limit_name(unsigned bit)
{
	static const char *const names[ISD_LIMIT_COUNT] = {
		"memory", "memory-swap", "memory-reservation", "cpus", "cpu-shares",
		"cpu-weight", "cpuset-cpus", "pids-limit", "blkio-weight",
	};

	if (!bit || (bit & (bit - 1)) || bit >= 1u << ISD_LIMIT_COUNT)
		return NULL;
	return names[__builtin_ctz(bit)];
}

const char *isd_network_mode_name(enum isd_network_mode mode)
{
	switch (mode) {
	case ISD_NET_NONE:
		return "none";
	case ISD_NET_HOST:
		return "host";
	case ISD_NET_PRIVATE:
		return "private";
	case ISD_NET_NETLESS:
		return "netless";
	}
	return "?";
}

static bool valid_hostname(const char *h)
{
	size_t len = strlen(h);

	if (len == 0 || len > 64 || h[0] == '-' || h[0] == '.')
		return false;
	for (const char *p = h; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
			return false;
	return true;
}

/* Paths isd itself builds; a user mount exactly there would hide them. */
static bool reserved_destination(const char *dst)
{
	static const char *const reserved[] = {"/", "/proc", "/dev", "/sys", "/dev/pts"};

	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (!strcmp(dst, reserved[i]))
			return true;
	return !strncmp(dst, "/proc/", 6);
}

int isd_spec_validate(const struct isd_spec *spec)
{
	struct stat st;
	int r;

	if (!spec->argv || !spec->argv[0] || !spec->argv[0][0])
		return isd_error(0, "exec: no command given (usage: isd exec [OPTIONS] [--] COMMAND [ARG...])");

	if (spec->rootfs) {
		if (stat(spec->rootfs, &st) < 0)
			return isd_error(-errno, "using root filesystem %s", spec->rootfs);
		if (!S_ISDIR(st.st_mode))
			return isd_error(0, "using root filesystem %s: not a directory", spec->rootfs);
	}

	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];

		if (m->destination[0] != '/')
			return isd_error(0, "mount destination '%s': must be an absolute path",
					 m->destination);
		if (reserved_destination(m->destination))
			return isd_error(0, "mount destination '%s': reserved, isd builds it itself",
					 m->destination);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(spec->mounts[j].destination, m->destination))
				return isd_error(0, "mount destination '%s': given twice",
						 m->destination);
		/* Only the sandbox's own ids exist in its user namespace
		 * (all of them with an image's map of several ranges). */
		if (spec->n_uid_ranges)
			; /* the kernel refuses ids outside the map at mount time */
		else if (m->has_uid && m->uid != spec->uid)
			return isd_error(0, "--tmpfs %s: uid=%u is not mapped in the sandbox; only the sandbox user %u exists (use uid=%u or --user %u)",
					 m->destination, m->uid, spec->uid, spec->uid, m->uid);
		if (!spec->n_gid_ranges && m->has_gid && m->gid != spec->gid)
			return isd_error(0, "--tmpfs %s: gid=%u is not mapped in the sandbox; only the sandbox group %u exists (use gid=%u or --user UID:%u)",
					 m->destination, m->gid, spec->gid, spec->gid, m->gid);
		if (m->type == ISD_MOUNT_BIND) {
			if (!m->source || m->source[0] != '/')
				return isd_error(0, "bind mount to %s: source must be an absolute path",
						 m->destination);
			if (stat(m->source, &st) < 0 && !(errno == ENOENT && m->create))
				return isd_error(-errno, "bind mount source %s", m->source);
		}
	}

	if (spec->workdir && spec->workdir[0] != '/')
		return isd_error(0, "--workdir '%s': must be an absolute path", spec->workdir);
	if (spec->hostname && !valid_hostname(spec->hostname))
		return isd_error(0, "--hostname '%s': not a valid host name (letters, digits, '-', '.', at most 64)",
				 spec->hostname);
	for (size_t i = 0; spec->env && spec->env[i]; i++) {
		const char *eq = strchr(spec->env[i], '=');
		if (!eq || eq == spec->env[i])
			return isd_error(0, "environment entry '%s': expected NAME=VALUE", spec->env[i]);
	}
	if (spec->limits.memory_swap > 0 && spec->limits.memory == 0)
		return isd_error(0, "--memory-swap needs --memory as well (Docker's rule: swap is memory plus swap)");
	if (spec->limits.memory_swap > 0 && (uint64_t)spec->limits.memory_swap < spec->limits.memory)
		return isd_error(0, "--memory-swap (%lld) must be at least --memory (%llu)",
				 (long long)spec->limits.memory_swap,
				 (unsigned long long)spec->limits.memory);
	r = isd_device_validate(spec);
	return r < 0 ? r : isd_netcfg_validate(spec);
}

void isd_spec_drop_missing_optional(struct isd_spec *spec)
{
	size_t kept = 0;

	for (size_t i = 0; i < spec->n_mounts; i++) {
		struct isd_mount *m = &spec->mounts[i];
		struct stat st;

		if (m->type == ISD_MOUNT_BIND && m->optional && stat(m->source, &st) < 0 && errno == ENOENT) {
			free(m->source);
			free(m->destination);
			free(m->origin);
			continue;
		}
		spec->mounts[kept++] = *m;
	}
	spec->n_mounts = kept;
}

int isd_spec_create_sources(const struct isd_spec *spec)
{
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		int r = 0, fd;

		if (m->create == ISD_CREATE_DIR) {
			r = isd_mkdir_p(m->source, 0700);
		} else if (m->create == ISD_CREATE_FILE) {
			fd = open(m->source, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
			if (fd >= 0) {
				/* An empty JSON object: what the agent starts from. */
				r = isd_write_all(fd, "{}\n", 3);
				close(fd);
			} else if (errno != EEXIST) {
				r = -errno;
			}
		}
		if (r < 0)
			return isd_error(r, "creating %s for the sandbox", m->source);
	}
	return 0;
}

static json_object *strv_json(char *const *strv)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; strv && strv[i]; i++)
		json_object_array_add(arr, json_object_new_string(strv[i]));
	return arr;
}

static json_object *mount_json(const struct isd_mount *m)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "type", json_object_new_string(m->type == ISD_MOUNT_BIND ? "bind" : m->type == ISD_MOUNT_OVERLAY ? "overlay" : "tmpfs"));
	if (m->source)
		json_object_object_add(o, "source", json_object_new_string(m->source));
	json_object_object_add(o, "destination", json_object_new_string(m->destination));
	json_object_object_add(o, "readonly", json_object_new_boolean(m->readonly));
	if (m->optional)
		json_object_object_add(o, "optional", json_object_new_boolean(true));
	if (m->rebind)
		json_object_object_add(o, "onto_itself", json_object_new_boolean(true));
	if (m->type == ISD_MOUNT_BIND && m->noexec)
		json_object_object_add(o, "noexec", json_object_new_boolean(true));
	if (m->agent_state)
		json_object_object_add(o, "agent_state", json_object_new_boolean(true));
	if (m->create)
		json_object_object_add(o, "create_if_missing",
				       json_object_new_string(m->create == ISD_CREATE_DIR ? "directory" : "file"));
	if (m->type == ISD_MOUNT_TMPFS) {
		json_object_object_add(o, "size", json_object_new_uint64(m->size));
		json_object_object_add(o, "exec", json_object_new_boolean(m->exec));
		if (m->has_mode) {
			char mode[8];
			snprintf(mode, sizeof(mode), "%04o", m->mode);
			json_object_object_add(o, "mode", json_object_new_string(mode));
		}
		if (m->has_uid)
			json_object_object_add(o, "uid", json_object_new_int64(m->uid));
		if (m->has_gid)
			json_object_object_add(o, "gid", json_object_new_int64(m->gid));
		if (m->links) {
			json_object *links = json_object_new_object();
			for (size_t i = 0; m->links[i]; i++) {
				const char *tab = strchr(m->links[i], '\t');
				_cleanup_free_ char *name = strndup(m->links[i], (size_t)(tab - m->links[i]));
				json_object_object_add(links, name, json_object_new_string(tab + 1));
			}
			json_object_object_add(o, "links", links);
		}
	}
	json_object_object_add(o, "nosuid", json_object_new_boolean(true));
	json_object_object_add(o, "nodev", json_object_new_boolean(true));
	json_object_object_add(o, "origin", json_object_new_string(m->origin ? m->origin : m->implicit ? "isd" : "command line"));
	return o;
}

static json_object *limits_json(const struct isd_limits *l)
{
	json_object *o = json_object_new_object();

	if (l->memory)
		json_object_object_add(o, "memory", json_object_new_uint64(l->memory));
	if (l->memory_swap)
		json_object_object_add(o, "memory_swap", json_object_new_int64(l->memory_swap));
	if (l->memory_reservation)
		json_object_object_add(o, "memory_reservation", json_object_new_uint64(l->memory_reservation));
	if (l->cpu_quota_us) {
		json_object_object_add(o, "cpu_quota_us", json_object_new_uint64(l->cpu_quota_us));
		json_object_object_add(o, "cpu_period_us", json_object_new_uint64(l->cpu_period_us));
	}
	if (l->cpu_weight)
		json_object_object_add(o, "cpu_weight", json_object_new_uint64(l->cpu_weight));
	if (l->cpuset_cpus)
		json_object_object_add(o, "cpuset_cpus", json_object_new_string(l->cpuset_cpus));
	if (l->pids_limit)
		json_object_object_add(o, "pids_limit", json_object_new_int64(l->pids_limit));
	if (l->blkio_weight)
		json_object_object_add(o, "blkio_weight", json_object_new_uint64(l->blkio_weight));
	json_object_object_add(o, "enforcement",
			       json_object_new_string(l->mode == ISD_LIMITS_STRICT ? "strict" : "best-effort"));
	/* The profile's defaults, which an unable host notes instead of refusing. */
	if (l->soft) {
		json_object *soft = json_object_new_array();
		for (unsigned i = 0; i < ISD_LIMIT_COUNT; i++)
			if (l->soft & (1u << i))
				json_object_array_add(soft, json_object_new_string(isd_limit_name(1u << i)));
		json_object_object_add(o, "soft", soft);
	}
	return o;
}

char *isd_spec_to_json(const struct isd_spec *spec)
{
	json_object *root = json_object_new_object();
	json_object *ns = json_object_new_object();
	json_object *mounts = json_object_new_array();
	json_object *user = json_object_new_object();
	char *text;

	json_object_object_add(root, "isd_version", json_object_new_string(ISD_VERSION));
	json_object_object_add(root, "command", strv_json(spec->argv));
	json_object_object_add(root, "env", strv_json(spec->env));
	json_object_object_add(root, "image", json_object_new_string(spec->image ? spec->image : "host"));
	if (spec->rootfs)
		json_object_object_add(root, "rootfs", json_object_new_string(spec->rootfs));
	json_object_object_add(root, "root_readonly", json_object_new_boolean(true));
	json_object_object_add(root, "workdir", json_object_new_string(spec->workdir ? spec->workdir : "/"));
	json_object_object_add(root, "tty", json_object_new_boolean(spec->tty));
	json_object_object_add(root, "interactive", json_object_new_boolean(spec->interactive));
	json_object_object_add(root, "hostname", json_object_new_string(spec->hostname ? spec->hostname : ""));

	json_object_object_add(user, "uid", json_object_new_int64(spec->uid));
	json_object_object_add(user, "gid", json_object_new_int64(spec->gid));
	json_object_object_add(user, "host_uid", json_object_new_int64(spec->host_uid));
	json_object_object_add(user, "host_gid", json_object_new_int64(spec->host_gid));
	if (spec->n_uid_ranges) { /* an image's map (newuidmap), "inside:outside:count" */
		json_object *um = json_object_new_array(), *gm = json_object_new_array();
		char range[48];
		for (size_t i = 0; i < spec->n_uid_ranges; i++) {
			snprintf(range, sizeof(range), "%u:%u:%u", spec->uid_ranges[i].inside,
				 spec->uid_ranges[i].outside, spec->uid_ranges[i].count);
			json_object_array_add(um, json_object_new_string(range));
		}
		for (size_t i = 0; i < spec->n_gid_ranges; i++) {
			snprintf(range, sizeof(range), "%u:%u:%u", spec->gid_ranges[i].inside,
				 spec->gid_ranges[i].outside, spec->gid_ranges[i].count);
			json_object_array_add(gm, json_object_new_string(range));
		}
		json_object_object_add(user, "uid_map", um);
		json_object_object_add(user, "gid_map", gm);
	}
	if (spec->idmapped) { /* a root caller (src/rootful.c) */
		json_object *im = json_object_new_object();
		json_object_object_add(im, "disk_uid", json_object_new_int64(spec->idmap_disk_uid));
		json_object_object_add(im, "disk_gid", json_object_new_int64(spec->idmap_disk_gid));
		json_object_object_add(im, "mounts", json_object_new_string("every bind and the workspace"));
		json_object_object_add(user, "idmapped", im);
	}
	if (spec->unsafe_host_root)
		json_object_object_add(user, "unsafe_host_root", json_object_new_boolean(true));
	json_object_object_add(root, "user", user);
	{
		json_object *ro = json_object_new_array(), *masked = json_object_new_array();
		for (const char *const *p = isd_mount_proc_readonly_paths(); *p; p++)
			json_object_array_add(ro, json_object_new_string(*p));
		for (const char *const *p = isd_mount_proc_masked_paths(); *p; p++)
			json_object_array_add(masked, json_object_new_string(*p));
		json_object_object_add(root, "readonly_paths", ro);
		json_object_object_add(root, "masked_paths", masked);
	}

	json_object_object_add(ns, "user", json_object_new_boolean(true));
	json_object_object_add(ns, "mount", json_object_new_boolean(true));
	json_object_object_add(ns, "pid", json_object_new_boolean(!spec->pid_host));
	json_object_object_add(ns, "net", json_object_new_boolean(spec->network != ISD_NET_HOST));
	json_object_object_add(ns, "ipc", json_object_new_boolean(true));
	json_object_object_add(ns, "uts", json_object_new_boolean(true));
	json_object_object_add(ns, "cgroup", json_object_new_boolean(true));
	json_object_object_add(root, "namespaces", ns);
	json_object_object_add(root, "network", json_object_new_string(isd_network_mode_name(spec->network)));
	json_object_object_add(root, "network_config", isd_netcfg_to_json(spec));

	for (size_t i = 0; i < spec->n_mounts; i++)
		json_object_array_add(mounts, mount_json(&spec->mounts[i]));
	json_object_object_add(root, "mounts", mounts);
	if (spec->workspace.path) {
		const struct isd_workspace *ws = &spec->workspace;
		json_object *w = json_object_new_object();
		json_object_object_add(w, "path", json_object_new_string(ws->path));
		json_object_object_add(w, "mode", json_object_new_string(isd_workspace_mode_name(ws->mode)));
		if (ws->mode == ISD_WORKSPACE_COW) {
			json_object_object_add(w, "keep", json_object_new_boolean(ws->keep));
			json_object_object_add(w, "session", ws->session ? json_object_new_string(ws->session) : NULL);
		}
		json_object_object_add(w, "masks", strv_json(ws->masks));
		json_object_object_add(w, "unmasks", strv_json(ws->unmasks));
		json_object_object_add(w, "masked", strv_json(ws->masked));
		json_object_object_add(w, "git_readonly", strv_json(ws->git_readonly));
		json_object_object_add(w, "git_pinned", json_object_new_boolean(ws->git_pin));
		json_object_object_add(w, "git_placeholders", strv_json(ws->git_placeholders));
		json_object_object_add(root, "workspace", w);
	}

	json_object_object_add(root, "proc", json_object_new_string(spec->pid_host ? "bind of the outer /proc, read-only" : "fresh procfs"));
	json_object_object_add(root, "dev", json_object_new_string("isd tmpfs: null zero full random urandom tty, devpts, shm"));
	json_object_object_add(root, "devices", isd_device_to_json(spec));
	json_object_object_add(root, "capabilities", json_object_new_array());
	json_object_object_add(root, "no_new_privileges", json_object_new_boolean(true));
	json_object_object_add(root, "seccomp", json_object_new_string(spec->seccomp ? spec->seccomp : "default"));
	json_object_object_add(root, "isolation", isd_isolation_to_json(spec));
	json_object_object_add(root, "landlock", isd_landlock_to_json(spec));
	json_object_object_add(root, "limits", limits_json(&spec->limits));
	json_object_object_add(root, "storage", isd_storage_to_json(&spec->storage));
	json_object_object_add(root, "profiles", strv_json(spec->profiles));
	if (spec->agent)
		json_object_object_add(root, "agent", json_object_new_string(spec->agent));
	{
		json_object *origins = json_object_new_object();
		for (size_t i = 0; spec->origins && spec->origins[i]; i++) {
			char *tab = strchr(spec->origins[i], '\t');
			_cleanup_free_ char *key = strndup(spec->origins[i], (size_t)(tab - spec->origins[i]));
			json_object_object_add(origins, key, json_object_new_string(tab + 1));
		}
		json_object_object_add(root, "origins", origins);
	}

	text = isd_xstrdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return text;
}
