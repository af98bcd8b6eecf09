/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.json: linux.resources onto isd's limits (the cgroup plan of
 * isd exec, Docker's semantics: OCI took them from Docker), the device
 * rules, and linux.cgroupsPath in both of runc's syntaxes. */
#define _GNU_SOURCE
#include "oci-config.h"
#include "isd/cgroup.h"
#include "isd/util.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A field isd cannot enforce: refused when it asks for something, quiet
 * when it holds the value that asks for nothing (engines write zeros). */
static int refuse_set(struct oci_ctx *c, struct json_object *obj, const char *path, const char *key,
		      const char *why)
{
	struct json_object *v = oci_field(obj, key);
	char p[256];

	if (!v)
		return 0;
	if ((json_object_is_type(v, json_type_int) && json_object_get_int64(v) == 0) ||
	    (json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v)) ||
	    (json_object_is_type(v, json_type_string) && !*json_object_get_string(v)) ||
	    (json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0) ||
	    (json_object_is_type(v, json_type_object) && json_object_object_length(v) == 0))
		return 0;
	oci_path(p, sizeof(p), "%s.%s", path, key);
	return oci_err(c, p, "not supported: %s", why);
}

/* OCI's int64 limits: > 0 a value, 0 or -1 none (runc's reading). */
static int limit_i64(struct oci_ctx *c, struct json_object *obj, const char *path, const char *key, int64_t *out,
		     bool *set)
{
	struct json_object *v = oci_field(obj, key);
	char p[256];
	int r;

	*set = false;
	if (!v)
		return 0;
	oci_path(p, sizeof(p), "%s.%s", path, key);
	if ((r = oci_i64(c, p, v, -1, INT64_MAX, out)) < 0)
		return r;
	*set = *out != 0;
	return 0;
}

static int parse_memory(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "limit", "reservation", "swap", "kernel", "kernelTCP", "swappiness",
					     "disableOOMKiller", "useHierarchy", "checkBeforeUpdate", NULL };
	static const char *const path = "linux.resources.memory";
	struct isd_limits *l = &c->spec->limits;
	int64_t v;
	bool set;
	int r;

	if ((r = oci_want(c, path, o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, path, o, known);
	if ((r = refuse_set(c, o, path, "kernel", "cgroup v2 has no kernel memory limit")) < 0 ||
	    (r = refuse_set(c, o, path, "kernelTCP", "cgroup v2 has no kernel TCP memory limit")) < 0 ||
	    (r = refuse_set(c, o, path, "swappiness", "cgroup v2 has no per-cgroup swappiness")) < 0 ||
	    (r = refuse_set(c, o, path, "disableOOMKiller", "cgroup v2 cannot turn the OOM killer off")) < 0)
		return r;
	if ((r = limit_i64(c, o, path, "limit", &v, &set)) < 0)
		return r;
	if (set && v > 0)
		l->memory = (uint64_t)v;
	if ((r = limit_i64(c, o, path, "reservation", &v, &set)) < 0)
		return r;
	if (set && v > 0)
		l->memory_reservation = (uint64_t)v;
	if ((r = limit_i64(c, o, path, "swap", &v, &set)) < 0)
		return r;
	if (set)
		l->memory_swap = v; /* Docker's memory+swap, -1 unlimited */
	/* Docker's rules (isd_cgroup_limit_writes), with the config's names */
	if (l->memory && l->memory < 6u << 20)
		return oci_err(c, "linux.resources.memory.limit", "%" PRIu64 " is below the minimum of 6 MiB", l->memory);
	if (l->memory_swap > 0 && !l->memory)
		return oci_err(c, "linux.resources.memory.swap", "needs memory.limit (swap is memory plus swap)");
	if (l->memory_swap > 0 && (uint64_t)l->memory_swap < l->memory)
		return oci_err(c, "linux.resources.memory.swap", "%" PRId64 " is below memory.limit %" PRIu64
			       " (swap is memory plus swap)", l->memory_swap, l->memory);
	if (l->memory && l->memory_reservation > l->memory)
		return oci_err(c, "linux.resources.memory.reservation", "%" PRIu64 " is above memory.limit %" PRIu64,
			       l->memory_reservation, l->memory);
	return 0;
}

static int parse_cpuset(struct oci_ctx *c, const char *path, struct json_object *v, char **out)
{
	const char *s;
	int r;

	if ((r = oci_string(c, path, v, &s)) < 0)
		return r;
	if (!*s)
		return 0;
	if (strlen(s) > 1024 || strspn(s, "0123456789,-") != strlen(s))
		return oci_err(c, path, "\"%.64s\" is not a CPU list (\"0-3,6\")", s);
	*out = isd_xstrdup(s);
	return 0;
}

static int parse_cpu(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "shares", "quota", "burst", "period", "realtimeRuntime",
					     "realtimePeriod", "cpus", "mems", "idle", NULL };
	static const char *const path = "linux.resources.cpu";
	struct isd_limits *l = &c->spec->limits;
	struct json_object *v;
	uint64_t u;
	int64_t q;
	bool set;
	int r;

	if ((r = oci_want(c, path, o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, path, o, known);
	if ((r = refuse_set(c, o, path, "realtimeRuntime", "real-time scheduling budgets are cgroup v1's")) < 0 ||
	    (r = refuse_set(c, o, path, "realtimePeriod", "real-time scheduling budgets are cgroup v1's")) < 0 ||
	    (r = refuse_set(c, o, path, "mems", "isd sets no cpuset.mems")) < 0 ||
	    (r = refuse_set(c, o, path, "idle", "isd sets no cpu.idle")) < 0 ||
	    (r = refuse_set(c, o, path, "burst", "isd sets no cpu.max.burst")) < 0)
		return r;
	if ((v = oci_field(o, "shares"))) {
		if ((r = oci_u64(c, "linux.resources.cpu.shares", v, 262144, &u)) < 0)
			return r;
		if (u == 1)
			return oci_err(c, "linux.resources.cpu.shares", "1 is out of range (2..262144)");
		/* 1024 is weight 100, what every new cgroup starts with: the
		 * placeholder of containerd's and Docker's specs, which needs
		 * no cpu controller (a hybrid host's cgroup2 may have none) */
		l->cpu_weight = isd_cgroup_shares_to_weight(u) == 100 ? 0 : isd_cgroup_shares_to_weight(u);
	}
	if ((r = limit_i64(c, o, path, "quota", &q, &set)) < 0)
		return r;
	if (set && q > 0)
		l->cpu_quota_us = (uint64_t)q;
	if ((v = oci_field(o, "period"))) {
		if ((r = oci_u64(c, "linux.resources.cpu.period", v, 1000000, &u)) < 0)
			return r;
		if (u && u < 1000)
			return oci_err(c, "linux.resources.cpu.period", "%" PRIu64 " is out of range (1000..1000000)", u);
		if (u)
			l->cpu_period_us = u;
	}
	if (l->cpu_quota_us && l->cpu_quota_us < 1000)
		return oci_err(c, "linux.resources.cpu.quota", "%" PRIu64 " is below the kernel's minimum of 1000",
			       l->cpu_quota_us);
	if ((v = oci_field(o, "cpus")) && (r = parse_cpuset(c, "linux.resources.cpu.cpus", v, &l->cpuset_cpus)) < 0)
		return r;
	return 0;
}

static int parse_block_io(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "weight", "leafWeight", "weightDevice", "throttleReadBpsDevice",
					     "throttleWriteBpsDevice", "throttleReadIOPSDevice",
					     "throttleWriteIOPSDevice", NULL };
	static const char *const path = "linux.resources.blockIO";
	struct json_object *v;
	int r;

	if ((r = oci_want(c, path, o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, path, o, known);
	for (size_t i = 1; known[i]; i++)
		if ((r = refuse_set(c, o, path, known[i], "isd sets the io weight only")) < 0)
			return r;
	if ((v = oci_field(o, "weight"))) {
		uint64_t w;
		if ((r = oci_u64(c, "linux.resources.blockIO.weight", v, 1000, &w)) < 0)
			return r;
		if (w && w < 10)
			return oci_err(c, "linux.resources.blockIO.weight", "%" PRIu64 " is out of range (10..1000)", w);
		c->spec->limits.blkio_weight = w;
	}
	return 0;
}

static int parse_device_rules(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "allow", "type", "major", "minor", "access", NULL };
	struct isd_oci_extra *e = c->extra;
	char p[256], q[256];
	size_t n;
	int r;

	if ((r = oci_array(c, "linux.resources.devices", o, &n)) < 0)
		return r;
	e->device_rules = isd_xcalloc(n ? n : 1, sizeof(*e->device_rules));
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(o, i), *v;
		struct isd_oci_device_rule *rule = &e->device_rules[i];
		const char *s;

		oci_path(p, sizeof(p), "linux.resources.devices[%zu]", i);
		if ((r = oci_want(c, p, d, json_type_object)) < 0)
			return r;
		oci_unknown_keys(c, p, d, known);
		oci_path(q, sizeof(q), "%s.allow", p);
		if (!(v = oci_field(d, "allow")))
			return oci_err(c, q, "missing");
		if ((r = oci_bool(c, q, v, &rule->allow)) < 0)
			return r;
		rule->type = 'a';
		oci_path(q, sizeof(q), "%s.type", p);
		if ((v = oci_field(d, "type"))) {
			if ((r = oci_string(c, q, v, &s)) < 0)
				return r;
			if (strlen(s) != 1 || !strchr("acb", s[0]))
				return oci_err(c, q, "\"%.16s\" is not a device type (a, c, b)", s);
			rule->type = s[0];
		}
		rule->major = rule->minor = -1;
		oci_path(q, sizeof(q), "%s.major", p);
		if ((v = oci_field(d, "major")) && (r = oci_i64(c, q, v, -1, UINT32_MAX, &rule->major)) < 0)
			return r;
		oci_path(q, sizeof(q), "%s.minor", p);
		if ((v = oci_field(d, "minor")) && (r = oci_i64(c, q, v, -1, UINT32_MAX, &rule->minor)) < 0)
			return r;
		oci_path(q, sizeof(q), "%s.access", p);
		snprintf(rule->access, sizeof(rule->access), "rwm");
		if ((v = oci_field(d, "access"))) {
			if ((r = oci_string(c, q, v, &s)) < 0)
				return r;
			if (!*s || strlen(s) > 3 || strspn(s, "rwm") != strlen(s))
				return oci_err(c, q, "\"%.16s\" is not an access (a subset of \"rwm\")", s);
			snprintf(rule->access, sizeof(rule->access), "%s", s);
		}
		e->n_device_rules++;
	}
	return 0;
}

int oci_parse_resources(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "memory", "cpu", "pids", "blockIO", "hugepageLimits", "network",
					     "rdma", "unified", "devices", NULL };
	static const char *const path = "linux.resources";
	struct isd_cgroup_write writes[ISD_CGROUP_MAX_WRITES];
	struct json_object *v;
	int r;

	if ((r = oci_want(c, path, o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, path, o, known);
	if ((r = refuse_set(c, o, path, "hugepageLimits", "isd sets no hugetlb limits")) < 0 ||
	    (r = refuse_set(c, o, path, "network", "cgroup v2 has no net_cls or net_prio")) < 0 ||
	    (r = refuse_set(c, o, path, "rdma", "isd sets no rdma limits")) < 0 ||
	    (r = refuse_set(c, o, path, "unified", "isd writes only the files of its own limits")) < 0)
		return r;
	c->spec->limits.mode = ISD_LIMITS_STRICT;
	if ((v = oci_field(o, "memory")) && (r = parse_memory(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "cpu")) && (r = parse_cpu(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "pids"))) {
		static const char *const pids_known[] = { "limit", NULL };
		struct json_object *lim;
		int64_t limit = 0;

		if ((r = oci_want(c, "linux.resources.pids", v, json_type_object)) < 0)
			return r;
		oci_unknown_keys(c, "linux.resources.pids", v, pids_known);
		if ((lim = oci_field(v, "limit")) &&
		    (r = oci_i64(c, "linux.resources.pids.limit", lim, INT64_MIN, INT64_MAX, &limit)) < 0)
			return r;
		c->spec->limits.pids_limit = limit > 0 ? limit : 0; /* <= 0: none, as runc reads it */
	}
	if ((v = oci_field(o, "blockIO")) && (r = parse_block_io(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "devices")) && (r = parse_device_rules(c, v)) < 0)
		return r;
	/* Docker's consistency rules of isd exec's limits, worded for it */
	if ((r = isd_cgroup_limit_writes(&c->spec->limits, writes)) < 0) {
		_cleanup_free_ char *why = isd_xstrdup(isd_error_message());
		return oci_err(c, path, "%s", why);
	}
	return 0;
}

/* ---- cgroupsPath ---- */

static bool plain_name(const char *s)
{
	return *s && strcmp(s, ".") && strcmp(s, "..") && !strchr(s, '/');
}

/* systemd's slice name to its directory: "a-b.slice" is /a.slice/a-b.slice. */
static int expand_slice(struct oci_ctx *c, const char *slice, char **out)
{
	size_t len = strlen(slice), base;
	char *dir = isd_xstrdup("");

	if (!strcmp(slice, "-.slice")) {
		*out = dir;
		return 0;
	}
	if (len <= 6 || strcmp(slice + len - 6, ".slice") || !plain_name(slice) || slice[0] == '-' ||
	    strstr(slice, "--") || slice[len - 7] == '-') {
		free(dir);
		return oci_err(c, "linux.cgroupsPath", "\"%.128s\" is not a systemd slice name (\"machine.slice\")",
			       slice);
	}
	base = len - 6;
	for (size_t i = 0; i <= base; i++)
		if (i == base || slice[i] == '-') {
			char *next = isd_xasprintf("%s/%.*s.slice", dir, (int)i, slice);
			free(dir);
			dir = next;
		}
	*out = dir;
	return 0;
}

static int systemd_path(struct oci_ctx *c, const char *s)
{
	struct isd_oci_extra *e = c->extra;
	const char *a = strchr(s, ':'), *b = a ? strchr(a + 1, ':') : NULL;
	_cleanup_free_ char *slice = NULL, *prefix = NULL, *dir = NULL;
	const char *name;
	int r;

	if (!a || !b || strchr(b + 1, ':'))
		return oci_err(c, "linux.cgroupsPath", "\"%.128s\" is not slice:prefix:name (--systemd-cgroup)", s);
	slice = strndup(s, (size_t)(a - s));
	prefix = strndup(a + 1, (size_t)(b - a - 1));
	name = b + 1;
	if (!slice || !prefix)
		return isd_error(-ENOMEM, "linux.cgroupsPath");
	if (!plain_name(name))
		return oci_err(c, "linux.cgroupsPath", "\"%.128s\": the name part is empty or not a plain name", s);
	if (*prefix && !plain_name(prefix))
		return oci_err(c, "linux.cgroupsPath", "\"%.128s\": the prefix is not a plain name", s);
	if (!*slice) {
		free(slice);
		slice = isd_xstrdup(geteuid() == 0 ? "system.slice" : "user.slice"); /* runc's defaults */
	}
	if ((r = expand_slice(c, slice, &dir)) < 0)
		return r;
	/* a name that is a slice is the unit itself (runc's rule) */
	if (strlen(name) > 6 && !strcmp(name + strlen(name) - 6, ".slice")) {
		_cleanup_free_ char *sub = NULL;
		if (*prefix)
			return oci_err(c, "linux.cgroupsPath", "\"%.128s\": a slice takes no prefix", s);
		e->cgroup_unit = isd_xstrdup(name);
		if ((r = expand_slice(c, name, &sub)) < 0)
			return r;
		e->cgroup_dir = isd_xstrdup(*sub ? sub : "/");
	} else {
		e->cgroup_unit = *prefix ? isd_xasprintf("%s-%s.scope", prefix, name) : isd_xasprintf("%s.scope", name);
		e->cgroup_dir = isd_xasprintf("%s/%s", dir, e->cgroup_unit);
	}
	e->cgroup_slice = isd_steal_ptr(slice);
	return 0;
}

int oci_parse_cgroups_path(struct oci_ctx *c, struct json_object *o)
{
	struct isd_oci_extra *e = c->extra;
	const char *s;
	int r;

	if ((r = oci_string(c, "linux.cgroupsPath", o, &s)) < 0)
		return r;
	if (!*s)
		return 0;
	if (strlen(s) >= OCI_MAX_PATH)
		return oci_err(c, "linux.cgroupsPath", "longer than %d bytes", OCI_MAX_PATH - 1);
	e->cgroups_path = isd_xstrdup(s);
	if (c->flags & ISD_OCI_LOAD_SYSTEMD_CGROUP)
		return systemd_path(c, s);
	if (s[0] != '/' && strchr(s, ':') && !strchr(s, '/'))
		return oci_err(c, "linux.cgroupsPath", "\"%.128s\" is systemd's slice:prefix:name: "
			       "pass --systemd-cgroup, or give a cgroup path", s);
	if ((r = oci_abs_path(c, "linux.cgroupsPath", s, "/", &e->cgroup_dir)) < 0)
		return r;
	if (!strcmp(e->cgroup_dir, "/"))
		return oci_err(c, "linux.cgroupsPath", "\"/\" is the root cgroup, not a container's");
	if (s[0] != '/') { /* relative: below the runtime's own cgroup */
		char *rel = isd_xstrdup(e->cgroup_dir + 1);
		free(e->cgroup_dir);
		e->cgroup_dir = rel;
	}
	return 0;
}

/* ---- isd-runtime update ---- */

/* A value of -1 asks to lift a limit: "max" in cgroup v2 (runc's update). */
static int unlimited_bits(struct oci_ctx *c, struct json_object *root, unsigned *bits)
{
	static const struct {
		const char *object, *key, *path;
		unsigned bit;
	} lifts[] = {
		{"memory", "limit", "linux.resources.memory.limit", ISD_LIMIT_MEMORY},
		{"memory", "swap", "linux.resources.memory.swap", ISD_LIMIT_MEMORY_SWAP},
		{"cpu", "quota", "linux.resources.cpu.quota", ISD_LIMIT_CPUS},
		{"pids", "limit", "linux.resources.pids.limit", ISD_LIMIT_PIDS_LIMIT},
	};
	int r;

	*bits = 0;
	for (size_t i = 0; i < ARRAY_LEN(lifts); i++) {
		struct json_object *o = oci_field(root, lifts[i].object), *v;
		int64_t x;

		if (!o || !json_object_is_type(o, json_type_object) || !(v = oci_field(o, lifts[i].key)))
			continue;
		if ((r = oci_i64(c, lifts[i].path, v, INT64_MIN, INT64_MAX, &x)) < 0)
			return r;
		/* pids: any negative number is "max", as runc reads it */
		if (x == -1 || (x < 0 && lifts[i].bit == ISD_LIMIT_PIDS_LIMIT)) {
			*bits |= lifts[i].bit;
			json_object_object_del(o, lifts[i].key);
		}
	}
	return 0;
}

/* isd has no device cgroup (a container's devices are the nodes it was
 * given): an update cannot take a device away, so a rule that would is
 * refused; allow rules and the leading deny-all that engines repeat from
 * the container's spec change nothing and pass. */
static int check_update_device_rules(struct oci_ctx *c)
{
	for (size_t i = 0; i < c->extra->n_device_rules; i++) {
		const struct isd_oci_device_rule *d = &c->extra->device_rules[i];
		char p[64];

		if (d->allow || (i == 0 && d->type == 'a' && d->major < 0 && d->minor < 0 && !strcmp(d->access, "rwm")))
			continue;
		oci_path(p, sizeof(p), "linux.resources.devices[%zu]", i);
		return oci_err(c, p, "not supported by update: isd has no device cgroup, and the container's device "
				     "nodes are fixed at create");
	}
	return 0;
}

int isd_oci_update_parse(const char *json, size_t len, const char *label, struct isd_limits *out,
			 unsigned *unlimited)
{
	struct isd_spec spec;
	struct isd_oci_extra extra;
	struct oci_ctx c = {.cfg = label, .spec = &spec, .extra = &extra};
	struct json_object *root = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	*unlimited = 0;
	isd_spec_init(&spec);
	isd_oci_extra_init(&extra);
	/* only what the update names changes */
	spec.limits.cpu_period_us = 0;
	r = oci_parse_json(&c, json, len, &root);
	if (r >= 0)
		r = oci_want(&c, "linux.resources", root, json_type_object);
	if (r >= 0)
		r = unlimited_bits(&c, root, unlimited);
	if (r >= 0)
		r = oci_parse_resources(&c, root);
	if (r >= 0)
		r = check_update_device_rules(&c);
	if (r >= 0) {
		*out = spec.limits;
		spec.limits.cpuset_cpus = NULL;
	}
	json_object_put(root);
	isd_spec_free(&spec);
	isd_oci_extra_free(&extra);
	return r;
}
