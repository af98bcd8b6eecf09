/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd-runtime update: new limits for a container's cgroup while it runs,
 * as `podman update` and containerd's shim (Kubernetes' in-place resize)
 * ask runc for them: `update --resources FILE|- ID`, a LinuxResources
 * object, and runc's flags on top of it.  The object is read by the rules
 * of config.json's linux.resources (src/oci-resources.c), so an update
 * cannot ask for what create would refuse; only what it names changes.
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "isd/cgroup.h"
#include "isd/oci.h"
#include "isd/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void update_usage(FILE *out)
{
	fputs("Usage: isd-runtime update [--resources FILE|-] [OPTIONS] ID\n"
	      "Change the limits of container ID's cgroup: FILE (- for stdin) holds a LinuxResources\n"
	      "object of the OCI spec; the options set single values on top of it:\n"
	      "  --memory N, --memory-swap N (memory plus swap), --memory-reservation N   bytes (k, m, g), -1 none\n"
	      "  --cpu-quota N, --cpu-period N (microseconds), --cpu-share N, --cpuset-cpus LIST\n"
	      "  --pids-limit N (-1 none), --blkio-weight N (10..1000)\n",
	      out);
}

enum {
	U_RESOURCES = 1,
	U_MEMORY,
	U_MEMORY_SWAP,
	U_MEMORY_RESERVATION,
	U_CPU_QUOTA,
	U_CPU_PERIOD,
	U_CPU_SHARE,
	U_CPUSET_CPUS,
	U_CPUSET_MEMS,
	U_PIDS_LIMIT,
	U_BLKIO_WEIGHT,
	U_KERNEL_MEMORY,
	U_KERNEL_MEMORY_TCP,
	U_CPU_RT_PERIOD,
	U_CPU_RT_RUNTIME,
	U_L3_CACHE_SCHEMA,
	U_MEM_BW_SCHEMA,
};

static const struct rt_opt update_opts[] = {
	{"resources", 'r', true, U_RESOURCES},
	{"memory", 0, true, U_MEMORY},
	{"memory-swap", 0, true, U_MEMORY_SWAP},
	{"memory-reservation", 0, true, U_MEMORY_RESERVATION},
	{"cpu-quota", 0, true, U_CPU_QUOTA},
	{"cpu-period", 0, true, U_CPU_PERIOD},
	{"cpu-share", 0, true, U_CPU_SHARE},
	{"cpuset-cpus", 0, true, U_CPUSET_CPUS},
	{"cpuset-mems", 0, true, U_CPUSET_MEMS},
	{"pids-limit", 0, true, U_PIDS_LIMIT},
	{"blkio-weight", 0, true, U_BLKIO_WEIGHT},
	{"kernel-memory", 0, true, U_KERNEL_MEMORY},
	{"kernel-memory-tcp", 0, true, U_KERNEL_MEMORY_TCP},
	{"cpu-rt-period", 0, true, U_CPU_RT_PERIOD},
	{"cpu-rt-runtime", 0, true, U_CPU_RT_RUNTIME},
	{"l3-cache-schema", 0, true, U_L3_CACHE_SCHEMA},
	{"mem-bw-schema", 0, true, U_MEM_BW_SCHEMA},
	{0},
};

/* Where each flag goes in the LinuxResources object; bytes: runc's sizes
 * with units. */
static const struct {
	int id;
	const char *object, *key;
	bool bytes, string;
} flag_fields[] = {
	{U_MEMORY, "memory", "limit", true, false},
	{U_MEMORY_SWAP, "memory", "swap", true, false},
	{U_MEMORY_RESERVATION, "memory", "reservation", true, false},
	{U_KERNEL_MEMORY, "memory", "kernel", true, false},
	{U_KERNEL_MEMORY_TCP, "memory", "kernelTCP", true, false},
	{U_CPU_QUOTA, "cpu", "quota", false, false},
	{U_CPU_PERIOD, "cpu", "period", false, false},
	{U_CPU_SHARE, "cpu", "shares", false, false},
	{U_CPU_RT_PERIOD, "cpu", "realtimePeriod", false, false},
	{U_CPU_RT_RUNTIME, "cpu", "realtimeRuntime", false, false},
	{U_CPUSET_CPUS, "cpu", "cpus", false, true},
	{U_CPUSET_MEMS, "cpu", "mems", false, true},
	{U_PIDS_LIMIT, "pids", "limit", false, false},
	{U_BLKIO_WEIGHT, "blockIO", "weight", false, false},
};

struct flag_value {
	int id;
	const char *value;
};

static const char *option_name(int id)
{
	for (const struct rt_opt *o = update_opts; o->name; o++)
		if (o->id == id)
			return o->name;
	return "?";
}

static int flag_number(const char *name, const char *value, bool bytes, int64_t *out)
{
	uint64_t u;
	char *end;

	errno = 0;
	*out = strtoll(value, &end, 10);
	if (!errno && *value && !*end)
		return 0;
	if (bytes && isd_parse_size(value, &u) == 0 && u <= INT64_MAX) {
		*out = (int64_t)u;
		return 0;
	}
	return RT_ERR(-EINVAL, "update: --%s %s: not %s", name, value, bytes ? "a size (bytes, or with k, m, g)" : "a number");
}

/* The resources object with the flags set in it, as JSON text. */
static int merge_flags(const char *text, size_t len, const struct flag_value *flags, size_t n, char **out)
{
	struct json_object *root = text ? json_tokener_parse(text) : json_object_new_object();
	int r = 0;

	(void)len;
	if (!root || !json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		return RT_ERR(-EINVAL, "update: the resources are not a JSON object");
	}
	for (size_t i = 0; i < n && r == 0; i++)
		for (size_t f = 0; f < sizeof(flag_fields) / sizeof(flag_fields[0]); f++) {
			struct json_object *o, *v;
			int64_t x;

			if (flag_fields[f].id != flags[i].id)
				continue;
			if (!json_object_object_get_ex(root, flag_fields[f].object, &o) ||
			    !json_object_is_type(o, json_type_object)) {
				o = json_object_new_object();
				json_object_object_add(root, flag_fields[f].object, o);
			}
			if (flag_fields[f].string)
				v = json_object_new_string(flags[i].value);
			else if ((r = flag_number(option_name(flags[i].id), flags[i].value, flag_fields[f].bytes, &x)) < 0)
				break;
			else
				v = json_object_new_int64(x);
			json_object_object_add(o, flag_fields[f].key, v);
		}
	if (r == 0)
		*out = isd_xstrdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
	json_object_put(root);
	return r;
}

/* One cgroup file of the container: where its controller is not enabled
 * for the container's cgroup (create enables only what the config's limits
 * need), enabled in the parent first. */
static int write_limit(const char *cg, unsigned controller, const char *file, const char *value)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", cg, file), *parent = NULL, *ctl_file = NULL;
	char ctl[64];
	int r;

	r = isd_write_file_at(AT_FDCWD, path, value, O_WRONLY, 0);
	if (r != -ENOENT)
		return r < 0 ? isd_error(r, "update: writing %s to %s", value, path) : 0;
	parent = isd_xstrdup(cg);
	*strrchr(parent, '/') = '\0';
	ctl_file = isd_xasprintf("%s/cgroup.subtree_control", parent);
	isd_cgroup_controllers_string(controller, ctl, sizeof(ctl), "+");
	if ((r = isd_write_file_at(AT_FDCWD, ctl_file, ctl, O_WRONLY, 0)) < 0)
		return isd_error(r, "update: %s: the container's cgroup has no %s controller, and enabling it in %s "
				    "failed (a controller the host's cgroup v2 does not delegate to you)",
				 file, ctl + 1, ctl_file);
	if ((r = isd_write_file_at(AT_FDCWD, path, value, O_WRONLY, 0)) < 0)
		return isd_error(r, "update: writing %s to %s", value, path);
	return 0;
}

/* cpu.max holds quota and period together: what the update leaves out
 * is kept. */
static int write_cpu_max(const char *cg, const struct isd_limits *l, bool lift_quota)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/cpu.max", cg), *now = NULL;
	char quota[32] = "max", value[64];
	uint64_t period = 100000;

	if (isd_read_file_at(AT_FDCWD, path, &now, NULL) == 0 && sscanf(now, "%31s %" SCNu64, quota, &period) < 1)
		snprintf(quota, sizeof(quota), "max");
	if (lift_quota)
		snprintf(quota, sizeof(quota), "max");
	else if (l->cpu_quota_us)
		snprintf(quota, sizeof(quota), "%" PRIu64, l->cpu_quota_us);
	if (l->cpu_period_us)
		period = l->cpu_period_us;
	snprintf(value, sizeof(value), "%s %" PRIu64, quota, period);
	return write_limit(cg, ISD_CG_CPU, "cpu.max", value);
}

static int apply(const char *cg, struct isd_limits *l, unsigned lift)
{
	struct isd_cgroup_write w[ISD_CGROUP_MAX_WRITES];
	bool cpu = l->cpu_quota_us || l->cpu_period_us || (lift & ISD_LIMIT_CPUS);
	uint64_t quota = l->cpu_quota_us;
	int n, r;

	l->cpu_quota_us = 0; /* cpu.max is written whole, below */
	n = isd_cgroup_limit_writes(l, w);
	l->cpu_quota_us = quota;
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		/* derived defaults (create's swap equal to memory) are create's */
		if (w[i].explicit_request && (r = write_limit(cg, w[i].controller, w[i].file, w[i].value)) < 0)
			return r;
	if ((lift & ISD_LIMIT_MEMORY) && (r = write_limit(cg, ISD_CG_MEMORY, "memory.max", "max")) < 0)
		return r;
	if ((lift & ISD_LIMIT_MEMORY_SWAP) && (r = write_limit(cg, ISD_CG_MEMORY, "memory.swap.max", "max")) < 0)
		return r;
	if ((lift & ISD_LIMIT_PIDS_LIMIT) && (r = write_limit(cg, ISD_CG_PIDS, "pids.max", "max")) < 0)
		return r;
	return cpu ? write_cpu_max(cg, l, lift & ISD_LIMIT_CPUS) : 0;
}

static int read_resources(const char *from, char **text, size_t *len)
{
	int r;

	if (!strcmp(from, "-"))
		r = isd_read_fd(STDIN_FILENO, text, len);
	else
		r = isd_read_file_at(AT_FDCWD, from, text, len);
	return r < 0 ? isd_error(r, "update: reading the resources from %s", !strcmp(from, "-") ? "stdin" : from) : 0;
}

int rt_cmd_update(int argc, char **argv)
{
	struct rt_args a = RT_ARGS("update", update_opts, update_usage, argc, argv);
	_cleanup_free_ struct flag_value *flags = NULL;
	_cleanup_free_ char *text = NULL, *merged = NULL, *label = NULL;
	_cleanup_close_ int dirfd = -1;
	const char *id = NULL, *from = NULL;
	struct isd_limits limits;
	struct rt_state st;
	unsigned lift = 0;
	size_t n = 0, len = 0;
	int r;

	flags = isd_xcalloc((size_t)argc + 1, sizeof(*flags));
	while (rt_next(&a)) {
		if (a.id == U_RESOURCES)
			from = a.value;
		else if (a.id == U_L3_CACHE_SCHEMA || a.id == U_MEM_BW_SCHEMA)
			return rt_failf("update: --%s: not supported: isd sets no Intel RDT schemata",
					a.id == U_L3_CACHE_SCHEMA ? "l3-cache-schema" : "mem-bw-schema");
		else if (a.id)
			flags[n++] = (struct flag_value){a.id, a.value};
		else if (!id)
			id = a.value;
		else
			return rt_failf("update: one container id only (%s, then %s)", id, a.value);
	}
	if (a.exit >= 0)
		return a.exit;
	if (!id)
		return rt_failf("update: a container id is needed (usage: isd-runtime update [--resources FILE|-] ID)");
	if (!from && !n)
		return rt_failf("update: nothing to change: give --resources FILE (or - for stdin), or an option");
	if (from && read_resources(from, &text, &len) < 0)
		return rt_fail();
	label = isd_xasprintf("update --resources %s", from ? from : "(the options)");
	/* the file first, so that its errors name it as it is */
	if (text && isd_oci_update_parse(text, len, label, &limits, &lift) < 0)
		return rt_fail();
	if (text)
		free(limits.cpuset_cpus);
	if (merge_flags(text, len, flags, n, &merged) < 0 ||
	    isd_oci_update_parse(merged, strlen(merged), label, &limits, &lift) < 0)
		return rt_fail();

	if (rt_container_lock(id, false, &dirfd) < 0 || rt_state_read(dirfd, id, &st) < 0) {
		free(limits.cpuset_cpus);
		return rt_fail();
	}
	if (st.status == RT_STOPPED || st.status == RT_CREATING)
		r = RT_ERR(-EINVAL, "update: container %s is %s", id, rt_status_name(st.status));
	else if (!st.cgroup)
		r = RT_ERR(-EOPNOTSUPP, "update: container %s has no cgroup of its own (no cgroup v2 hierarchy, or none "
					"delegated to the caller when it was created), and its limits are a cgroup's", id);
	else
		r = apply(st.cgroup, &limits, lift);
	free(limits.cpuset_cpus);
	rt_state_free(&st);
	return r < 0 ? rt_fail() : 0;
}
