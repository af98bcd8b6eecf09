/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * features (the runtime-spec's features.md document, which engines read
 * to learn what a runtime takes) and spec (a starting config.json, as
 * runc spec writes one).
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "isd/oci.h"
#include "isd/util.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static json_object *strings(const char *const *v)
{
	json_object *a = json_object_new_array();

	for (; *v; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

static void print_json(json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void features_usage(FILE *out)
{
	fputs("Usage: isd-runtime features\nWhat this runtime supports, as the runtime-spec's features JSON.\n", out);
}

int rt_cmd_features(int argc, char **argv)
{
	static const char *const mount_options[] = {
		"async", "atime", "bind", "defaults", "dev", "diratime", "exec", "noatime", "nodev", "nodiratime",
		"noexec", "norelatime", "nostrictatime", "nosuid", "private", "rbind", "relatime", "rprivate",
		"rshared", "rslave", "runbindable", "ro", "rw", "shared", "slave", "strictatime", "suid", "sync",
		"unbindable", NULL};
	static const char *const actions[] = {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL",
					      "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG",
					      "SCMP_ACT_TRAP", NULL};
	static const char *const operators[] = {"SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_LE",
						"SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE", NULL};
	static const char *const archs[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32",
					    "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM", NULL};
	struct rt_args a = RT_ARGS("features", NULL, features_usage, argc, argv);
	json_object *o = json_object_new_object(), *linux_ = json_object_new_object(), *arr, *sub, *ann;
	const struct scmp_version *v = seccomp_version();
	char buf[64];

	if (rt_next(&a)) {
		json_object_put(o);
		json_object_put(linux_);
		return rt_failf("features: takes no operand ('%s')", a.value);
	}
	if (a.exit >= 0) {
		json_object_put(o);
		json_object_put(linux_);
		return a.exit;
	}
	json_object_object_add(o, "ociVersionMin", json_object_new_string("1.0.0"));
	json_object_object_add(o, "ociVersionMax", json_object_new_string("1.1.0"));
	/* createContainer and startContainer need a root runtime (runtime-hooks.c) */
	json_object_object_add(o, "hooks", strings(rt_hooks_inside_supported()
		? (const char *const[]){"prestart", "createRuntime", "createContainer", "startContainer", "poststart",
					"poststop", NULL}
		: (const char *const[]){"prestart", "createRuntime", "poststart", "poststop", NULL}));
	json_object_object_add(o, "mountOptions", strings(mount_options));

	arr = json_object_new_array();
	for (int k = 0; k < ISD_OCI_NS_COUNT; k++)
		json_object_array_add(arr, json_object_new_string(isd_oci_ns_name(k)));
	json_object_object_add(linux_, "namespaces", arr);
	arr = json_object_new_array();
	for (unsigned c = 0; c <= ISD_OCI_CAP_LAST; c++)
		if (isd_oci_cap_name(c))
			json_object_array_add(arr, json_object_new_string(isd_oci_cap_name(c)));
	json_object_object_add(linux_, "capabilities", arr);
	sub = json_object_new_object();
	json_object_object_add(sub, "v1", json_object_new_boolean(0));
	json_object_object_add(sub, "v2", json_object_new_boolean(1));
	json_object_object_add(sub, "systemd", json_object_new_boolean(1));
	json_object_object_add(sub, "systemdUser", json_object_new_boolean(1));
	json_object_object_add(sub, "rdma", json_object_new_boolean(0));
	json_object_object_add(linux_, "cgroup", sub);
	sub = json_object_new_object();
	json_object_object_add(sub, "enabled", json_object_new_boolean(1));
	json_object_object_add(sub, "actions", strings(actions));
	json_object_object_add(sub, "operators", strings(operators));
	json_object_object_add(sub, "archs", strings(archs));
	json_object_object_add(linux_, "seccomp", sub);
	sub = json_object_new_object();
	json_object_object_add(sub, "enabled", json_object_new_boolean(0));
	json_object_object_add(linux_, "apparmor", sub);
	sub = json_object_new_object();
	json_object_object_add(sub, "enabled", json_object_new_boolean(0));
	json_object_object_add(linux_, "selinux", sub);
	sub = json_object_new_object();
	json_object_object_add(sub, "enabled", json_object_new_boolean(0));
	json_object_object_add(linux_, "intelRdt", sub);
	json_object_object_add(o, "linux", linux_);

	ann = json_object_new_object();
	snprintf(buf, sizeof(buf), "%u.%u.%u", v->major, v->minor, v->micro);
	json_object_object_add(ann, "io.github.seccomp.libseccomp.version", json_object_new_string(buf));
	json_object_object_add(ann, "org.opencontainers.runc.checkpoint.enabled", json_object_new_string("false"));
	json_object_object_add(ann, "run.oci.isd.version", json_object_new_string(ISD_VERSION));
	json_object_object_add(o, "annotations", ann);
	print_json(o);
	return 0;
}

static json_object *mount_entry(const char *dst, const char *type, const char *src, const char *const *options)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "destination", json_object_new_string(dst));
	json_object_object_add(m, "type", json_object_new_string(type));
	json_object_object_add(m, "source", json_object_new_string(src));
	json_object_object_add(m, "options", strings(options));
	return m;
}

static json_object *id_map(uint32_t host)
{
	json_object *a = json_object_new_array(), *m = json_object_new_object();

	json_object_object_add(m, "containerID", json_object_new_int(0));
	json_object_object_add(m, "hostID", json_object_new_int64(host));
	json_object_object_add(m, "size", json_object_new_int(1));
	json_object_array_add(a, m);
	return a;
}

/* runc's example config (runc spec), for a bundle with ./rootfs. */
static json_object *default_config(bool rootless)
{
	static const char *const caps[] = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL};
	static const char *const env[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
					  "TERM=xterm", NULL};
	static const char *const args[] = {"sh", NULL};
	static const char *const masked[] = {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
					     "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
					     "/proc/sched_debug", "/sys/firmware", "/proc/scsi", NULL};
	static const char *const ro[] = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL};
	static const char *const nss[] = {"pid", "network", "ipc", "uts", "mount", "cgroup", NULL};
	json_object *c = json_object_new_object(), *p = json_object_new_object(), *o, *lin = json_object_new_object();
	json_object *mounts = json_object_new_array(), *arr;

	json_object_object_add(c, "ociVersion", json_object_new_string("1.0.2"));
	json_object_object_add(p, "terminal", json_object_new_boolean(1));
	o = json_object_new_object();
	json_object_object_add(o, "uid", json_object_new_int(0));
	json_object_object_add(o, "gid", json_object_new_int(0));
	json_object_object_add(p, "user", o);
	json_object_object_add(p, "args", strings(args));
	json_object_object_add(p, "env", strings(env));
	json_object_object_add(p, "cwd", json_object_new_string("/"));
	o = json_object_new_object();
	json_object_object_add(o, "bounding", strings(caps));
	json_object_object_add(o, "effective", strings(caps));
	json_object_object_add(o, "permitted", strings(caps));
	json_object_object_add(p, "capabilities", o);
	arr = json_object_new_array();
	o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string("RLIMIT_NOFILE"));
	json_object_object_add(o, "hard", json_object_new_int(1024));
	json_object_object_add(o, "soft", json_object_new_int(1024));
	json_object_array_add(arr, o);
	json_object_object_add(p, "rlimits", arr);
	json_object_object_add(p, "noNewPrivileges", json_object_new_boolean(1));
	json_object_object_add(c, "process", p);
	o = json_object_new_object();
	json_object_object_add(o, "path", json_object_new_string("rootfs"));
	json_object_object_add(o, "readonly", json_object_new_boolean(1));
	json_object_object_add(c, "root", o);
	json_object_object_add(c, "hostname", json_object_new_string("isd"));

	json_object_array_add(mounts, mount_entry("/proc", "proc", "proc", (const char *const[]){NULL}));
	json_object_array_add(mounts, mount_entry("/dev", "tmpfs", "tmpfs",
					    (const char *const[]){"nosuid", "strictatime", "mode=755", "size=65536k", NULL}));
	json_object_array_add(mounts, mount_entry("/dev/pts", "devpts", "devpts",
					    rootless ? (const char *const[]){"nosuid", "noexec", "newinstance", "ptmxmode=0666",
									    "mode=0620", NULL}
						     : (const char *const[]){"nosuid", "noexec", "newinstance", "ptmxmode=0666",
									    "mode=0620", "gid=5", NULL}));
	json_object_array_add(mounts, mount_entry("/dev/shm", "tmpfs", "shm",
					    (const char *const[]){"nosuid", "noexec", "nodev", "mode=1777", "size=65536k",
								  NULL}));
	json_object_array_add(mounts, mount_entry("/dev/mqueue", "mqueue", "mqueue",
					    (const char *const[]){"nosuid", "noexec", "nodev", NULL}));
	if (rootless)
		json_object_array_add(mounts, mount_entry("/sys", "none", "/sys",
						    (const char *const[]){"rbind", "nosuid", "noexec", "nodev", "ro", NULL}));
	else {
		json_object_array_add(mounts, mount_entry("/sys", "sysfs", "sysfs",
						    (const char *const[]){"nosuid", "noexec", "nodev", "ro", NULL}));
		json_object_array_add(mounts, mount_entry("/sys/fs/cgroup", "cgroup", "cgroup",
						    (const char *const[]){"nosuid", "noexec", "nodev", "relatime", "ro", NULL}));
	}
	json_object_object_add(c, "mounts", mounts);

	arr = json_object_new_array();
	for (size_t i = 0; nss[i]; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "type", json_object_new_string(nss[i]));
		json_object_array_add(arr, o);
	}
	if (rootless) {
		o = json_object_new_object();
		json_object_object_add(o, "type", json_object_new_string("user"));
		json_object_array_add(arr, o);
		json_object_object_add(lin, "uidMappings", id_map(getuid()));
		json_object_object_add(lin, "gidMappings", id_map(getgid()));
	} else {
		json_object *res = json_object_new_object(), *devs = json_object_new_array(), *d = json_object_new_object();
		json_object_object_add(d, "allow", json_object_new_boolean(0));
		json_object_object_add(d, "access", json_object_new_string("rwm"));
		json_object_array_add(devs, d);
		json_object_object_add(res, "devices", devs);
		json_object_object_add(lin, "resources", res);
	}
	json_object_object_add(lin, "namespaces", arr);
	json_object_object_add(lin, "maskedPaths", strings(masked));
	json_object_object_add(lin, "readonlyPaths", strings(ro));
	json_object_object_add(c, "linux", lin);
	return c;
}

static void spec_usage(FILE *out)
{
	fputs("Usage: isd-runtime spec [--rootless] [--bundle DIR]\n"
	      "Write a default config.json into DIR (default: the working directory) for a\n"
	      "root file system in DIR/rootfs; --rootless maps root inside onto you.\n",
	      out);
}

int rt_cmd_spec(int argc, char **argv)
{
	static const struct rt_opt opts[] = {{"rootless", 0, false, 1}, {"bundle", 'b', true, 2}, {0}};
	struct rt_args a = RT_ARGS("spec", opts, spec_usage, argc, argv);
	const char *bundle = ".";
	bool rootless = false;
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	json_object *c;
	const char *text;
	int r;

	while (rt_next(&a)) {
		if (a.id == 1)
			rootless = true;
		else if (a.id == 2)
			bundle = a.value;
		else
			return rt_failf("spec: takes no operand ('%s')", a.value);
	}
	if (a.exit >= 0)
		return a.exit;
	path = isd_xasprintf("%s/config.json", bundle);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 && errno == EEXIST)
		return rt_failf("writing %s: it exists already (remove it first)", path);
	if (fd < 0)
		return rt_failf("writing %s: %s", path, strerror(errno));
	c = default_config(rootless);
	text = json_object_to_json_string_ext(c, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							JSON_C_TO_STRING_NOSLASHESCAPE);
	r = isd_write_all(fd, text, strlen(text));
	if (r == 0)
		r = isd_write_all(fd, "\n", 1);
	json_object_put(c);
	return r < 0 ? rt_failf("writing %s: %s", path, strerror(-r)) : 0;
}
