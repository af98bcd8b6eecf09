/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.json to spec: each field mapped, each refusal naming its JSON
 * path.  Fixtures are small documents built around one field; the
 * defaults of `runc spec` (written by hand from the runtime-spec) are
 * files in tests/unit/oci/. */
#define _GNU_SOURCE
#include "check.h"
#include "isd/oci.h"
#include "isd/seccomp.h"
#include "isd/util.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>

static const char *fixtures = "tests/unit/oci";

static struct isd_spec spec;
static struct isd_oci_extra extra;

/* A minimal valid document with PROCESS (the inside of "process"), TOP
 * (more top-level members, each ending in ",") and LINUX (more members of
 * "linux", each starting with ","). */
static char *doc(const char *process, const char *top, const char *linux_more)
{
	return isd_xasprintf("{\"ociVersion\": \"1.1.0\", %s"
			     "\"root\": {\"path\": \"rootfs\"},"
			     "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]%s%s},"
			     "\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"pid\"}, "
			     "{\"type\": \"uts\"}, {\"type\": \"network\"}, {\"type\": \"user\"}, {\"type\": \"ipc\"}]%s}}",
			     top ? top : "", process ? ", " : "", process ? process : "",
			     linux_more ? linux_more : "");
}

static int load_text(const char *text, unsigned flags)
{
	isd_spec_free(&spec);
	isd_oci_extra_free(&extra);
	isd_spec_init(&spec);
	isd_oci_extra_init(&extra);
	isd_error_clear();
	return isd_oci_config_parse(text, strlen(text), "/bundle", "ctr1", flags, &spec, &extra);
}

static int load(const char *process, const char *top, const char *linux_more, unsigned flags)
{
	_cleanup_free_ char *text = doc(process, top, linux_more);
	return load_text(text, flags);
}

/* The load fails and its one message names want (the JSON path and why). */
static void refused_(const char *file, int line, int r, const char *want)
{
	if (r >= 0 || !strstr(isd_error_message(), want)) {
		fprintf(stderr, "%s:%d: expected a refusal with \"%s\", got %d: %s\n", file, line, want, r,
			isd_error_message());
		failures++;
	}
}
#define REFUSED(r, want) refused_(__FILE__, __LINE__, (r), (want))

static bool has_note(const char *want)
{
	for (size_t i = 0; extra.notes && extra.notes[i]; i++)
		if (strstr(extra.notes[i], want))
			return true;
	return false;
}

static void test_minimal(void)
{
	CHECK(load(NULL, NULL, NULL, 0) == 0);
	CHECK(!strcmp(spec.argv[0], "sh") && !spec.argv[1]);
	CHECK(!strcmp(spec.rootfs, "/bundle/rootfs"));
	CHECK(spec.writable_root);
	CHECK(!strcmp(spec.workdir, "/"));
	CHECK(!spec.tty);
	CHECK(spec.network == ISD_NET_NONE);
	CHECK(!spec.pid_host);
	CHECK(!strcmp(spec.seccomp, "unconfined"));
	CHECK(spec.landlock_off);
	CHECK(!extra.seccomp);
	CHECK(!strcmp(extra.config_path, "/bundle/config.json"));
	CHECK(!strcmp(extra.container_id, "ctr1"));
	CHECK(extra.ns[ISD_OCI_NS_MNT].mode == ISD_OCI_NS_NEW);
	CHECK(extra.ns[ISD_OCI_NS_CGROUP].mode == ISD_OCI_NS_SHARE);
	CHECK(!extra.notes);
}

static void test_process(void)
{
	CHECK(load("\"terminal\": true, \"env\": [\"A=1\", \"B=\"], \"cwd\": \"/work//x/\"", NULL, NULL, 0) == 0);
	CHECK(spec.tty && spec.interactive);
	CHECK(!strcmp(spec.env[0], "A=1") && !strcmp(spec.env[1], "B=") && !spec.env[2]);
	CHECK(!strcmp(spec.workdir, "/work/x"));
	CHECK(load("\"args\": [\"/bin/echo\", \"\", \"a b\"]", NULL, NULL, 0) == 0);
	CHECK(isd_strv_len(spec.argv) == 3 && !strcmp(spec.argv[2], "a b"));
	CHECK(load("\"consoleSize\": {\"height\": 40, \"width\": 120}", NULL, NULL, 0) == 0);
	CHECK(extra.has_console_size && extra.console_height == 40 && extra.console_width == 120);
	CHECK(load("\"user\": {\"uid\": 1000, \"gid\": 100, \"umask\": 18, \"additionalGids\": [5, 4294967295]}",
		   NULL, NULL, 0) == 0);
	CHECK(spec.uid == 1000 && spec.gid == 100);
	CHECK(extra.has_umask && extra.umask == 022);
	CHECK(extra.n_additional_gids == 2 && extra.additional_gids[1] == UINT32_MAX);
	CHECK(load("\"noNewPrivileges\": true, \"oomScoreAdj\": -1000", NULL, NULL, 0) == 0);
	CHECK(extra.no_new_privileges && extra.has_oom_score_adj && extra.oom_score_adj == -1000);
	CHECK(load("\"apparmorProfile\": \"containers-default\", \"selinuxLabel\": \"\"", NULL, NULL, 0) == 0);
	CHECK(!strcmp(extra.apparmor_profile, "containers-default") && !extra.selinux_label);

	REFUSED(load("\"env\": [\"NOEQUALS\"]", NULL, NULL, 0), "process.env[0]: \"NOEQUALS\" is not NAME=VALUE");
	REFUSED(load("\"env\": [\"=x\"]", NULL, NULL, 0), "process.env[0]");
	REFUSED(load("\"env\": \"A=1\"", NULL, NULL, 0), "process.env: expected an array, got a string");
	REFUSED(load("\"cwd\": \"relative\"", NULL, NULL, 0), "process.cwd: \"relative\" is not an absolute path");
	REFUSED(load("\"cwd\": \"/a/../b\"", NULL, NULL, 0), "process.cwd");
	REFUSED(load("\"cwd\": \"/a\\nb\"", NULL, NULL, 0), "process.cwd: the path holds a control character");
	REFUSED(load("\"args\": []", NULL, NULL, 0), "process.args: no command given");
	REFUSED(load("\"args\": [\"\"]", NULL, NULL, 0), "process.args: no command given");
	REFUSED(load("\"args\": [1]", NULL, NULL, 0), "process.args[0]: expected a string, got an integer");
	REFUSED(load("\"terminal\": \"yes\"", NULL, NULL, 0), "process.terminal: expected a boolean");
	REFUSED(load("\"user\": {\"uid\": 4294967296}", NULL, NULL, 0), "process.user.uid: 4294967296 is out of range");
	REFUSED(load("\"user\": {\"uid\": -1}", NULL, NULL, 0), "process.user.uid: -1 is negative");
	REFUSED(load("\"user\": {\"uid\": 1.5}", NULL, NULL, 0), "process.user.uid: expected an integer, got a fractional");
	REFUSED(load("\"user\": {\"gid\": 99999999999999999999999}", NULL, NULL, 0), "process.user.gid");
	REFUSED(load("\"user\": {\"umask\": 512}", NULL, NULL, 0), "process.user.umask: 512 is out of range");
	REFUSED(load("\"user\": {\"additionalGids\": [1, -5]}", NULL, NULL, 0), "process.user.additionalGids[1]");
	REFUSED(load("\"consoleSize\": {\"height\": 70000}", NULL, NULL, 0), "process.consoleSize.height");
	REFUSED(load("\"oomScoreAdj\": 1001", NULL, NULL, 0), "process.oomScoreAdj: 1001 is out of range (-1000..1000)");
	REFUSED(load("\"scheduler\": {\"policy\": \"SCHED_FIFO\"}", NULL, NULL, 0), "process.scheduler: not supported");
	REFUSED(load("\"ioPriority\": {\"class\": \"IOPRIO_CLASS_RT\"}", NULL, NULL, 0), "process.ioPriority");
	REFUSED(load_text("{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": \"r\"}, \"process\": {\"args\": [\"sh\"]}, "
			  "\"linux\": {\"namespaces\": [{\"type\": \"mount\"}]}}", 0),
		"process.cwd: missing");
}

static void test_capabilities(void)
{
	CHECK(load("\"capabilities\": {\"bounding\": [\"CAP_SYS_ADMIN\", \"CAP_CHOWN\"], "
		   "\"permitted\": [\"CAP_CHOWN\", \"kill\"], \"effective\": [\"CAP_CHOWN\"], "
		   "\"inheritable\": [\"CAP_CHOWN\"], \"ambient\": [\"CAP_CHOWN\"]}",
		   NULL, NULL, 0) == 0);
	CHECK(extra.caps[ISD_OCI_CAP_BOUNDING] == ((UINT64_C(1) << 21) | 1));
	CHECK(extra.caps[ISD_OCI_CAP_PERMITTED] == ((UINT64_C(1) << 5) | 1));
	CHECK(extra.caps[ISD_OCI_CAP_EFFECTIVE] == 1 && extra.caps[ISD_OCI_CAP_AMBIENT] == 1);
	CHECK(!extra.notes);
	/* what the kernel could not hold is dropped, never widened */
	CHECK(load("\"capabilities\": {\"effective\": [\"CAP_KILL\"], \"ambient\": [\"CAP_KILL\"], "
		   "\"permitted\": [\"CAP_KILL\"]}", NULL, NULL, 0) == 0);
	CHECK(extra.caps[ISD_OCI_CAP_EFFECTIVE] == (UINT64_C(1) << 5));
	CHECK(extra.caps[ISD_OCI_CAP_AMBIENT] == 0);
	CHECK(has_note("process.capabilities.ambient: CAP_KILL dropped"));

	REFUSED(load("\"capabilities\": {\"bounding\": [\"CAP_FLY\"]}", NULL, NULL, 0),
		"process.capabilities.bounding[0]: \"CAP_FLY\" is not a capability isd knows");
	REFUSED(load("\"capabilities\": {\"effective\": [\"CAP_KILL\", 7]}", NULL, NULL, 0),
		"process.capabilities.effective[1]: expected a string");
	REFUSED(load("\"capabilities\": {\"permitted\": \"CAP_KILL\"}", NULL, NULL, 0),
		"process.capabilities.permitted: expected an array");
	CHECK(!strcmp(isd_oci_cap_name(40), "CAP_CHECKPOINT_RESTORE") && !isd_oci_cap_name(41));
}

static void test_rlimits(void)
{
	CHECK(load("\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1024, \"hard\": 4096}, "
		   "{\"type\": \"RLIMIT_CORE\", \"soft\": 18446744073709551615, \"hard\": 18446744073709551615}]",
		   NULL, NULL, 0) == 0);
	CHECK(extra.n_rlimits == 2);
	CHECK(extra.rlimits[0].resource == RLIMIT_NOFILE && extra.rlimits[0].soft == 1024 &&
	      extra.rlimits[0].hard == 4096);
	CHECK(extra.rlimits[1].resource == RLIMIT_CORE && extra.rlimits[1].soft == UINT64_MAX);

	REFUSED(load("\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 5, \"hard\": 4}]", NULL, NULL, 0),
		"process.rlimits[0]: soft limit 5 is above the hard limit 4");
	REFUSED(load("\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1, \"hard\": 1}, "
		     "{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1, \"hard\": 1}]", NULL, NULL, 0),
		"process.rlimits[1].type: RLIMIT_NOFILE is given twice");
	REFUSED(load("\"rlimits\": [{\"type\": \"RLIMIT_FOO\", \"soft\": 1, \"hard\": 1}]", NULL, NULL, 0),
		"process.rlimits[0].type: \"RLIMIT_FOO\" is not a resource limit");
	REFUSED(load("\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1}]", NULL, NULL, 0),
		"process.rlimits[0].hard: missing");
	/* json-c reads an integer past 2^64-1 as 2^64-1: here RLIM_INFINITY, above the hard limit */
	REFUSED(load("\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 18446744073709551616, \"hard\": 1}]",
		     NULL, NULL, 0),
		"process.rlimits[0]: soft limit");
}

static void test_root_hostname(void)
{
	const char *top = "\"hostname\": \"box-1.example\", \"domainname\": \"example\",";

	CHECK(load(NULL, top, NULL, 0) == 0);
	CHECK(!strcmp(spec.hostname, "box-1.example") && !strcmp(extra.domainname, "example"));
	CHECK(load_text("{\"ociVersion\": \"1.0.2-dev\", \"root\": {\"path\": \"/srv/root/\", \"readonly\": true}, "
			"\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}, "
			"\"linux\": {\"namespaces\": [{\"type\": \"mount\"}]}}", 0) == 0);
	CHECK(!strcmp(spec.rootfs, "/srv/root") && !spec.writable_root);
	CHECK(spec.network == ISD_NET_HOST && spec.pid_host);

	REFUSED(load_text("{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": \"r\"}, \"hostname\": \"h\", "
			  "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}, "
			  "\"linux\": {\"namespaces\": [{\"type\": \"mount\"}]}}", 0),
		"hostname: needs a \"uts\" namespace");
	REFUSED(load(NULL, "\"hostname\": \"a\\nb\",", NULL, 0), "hostname: contains a space or control character");
	REFUSED(load(NULL, "\"hostname\": \"0123456789012345678901234567890123456789012345678901234567890123456789\",",
		     NULL, 0), "hostname: longer than 64 bytes");
	REFUSED(load_text("{\"ociVersion\": \"1.1.0\", \"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}}", 0),
		"root: missing");
	REFUSED(load_text("{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": \"../x\"}, "
			  "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}}", 0),
		"root.path");
	REFUSED(load_text("{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": \"r\"}, "
			  "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}}", 0),
		"linux: missing");
	REFUSED(load_text("{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": \"r\"}, "
			  "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}, \"linux\": {}}", 0),
		"linux.namespaces: no \"mount\" namespace");
}

static void test_top_level(void)
{
	REFUSED(load_text("{\"root\": {\"path\": \"r\"}}", 0), "ociVersion: missing");
	REFUSED(load_text("{\"ociVersion\": \"2.0.0\"}", 0), "ociVersion: \"2.0.0\" is not supported");
	REFUSED(load_text("{\"ociVersion\": \"1.0.0-rc5\"}", 0), "ociVersion: \"1.0.0-rc5\" is not supported");
	REFUSED(load_text("[]", 0), "top level: expected an object, got an array");
	REFUSED(load_text("{\"ociVersion\": \"1.1.0\",", 0), "invalid JSON");
	REFUSED(load_text("{} {}", 0), "invalid JSON");
	REFUSED(load_text("", 0), "invalid JSON");
	{
		/* hostile shapes: nesting past json-c's depth bound, a file past 16 MiB */
		char deep[300];
		size_t big = ((size_t)16 << 20) + 1;
		char *huge = isd_xmalloc(big + 1);

		memset(deep, '[', sizeof(deep) - 1);
		deep[sizeof(deep) - 1] = '\0';
		REFUSED(load_text(deep, 0), "invalid JSON");
		memset(huge, ' ', big);
		huge[big] = '\0';
		REFUSED(load_text(huge, 0), "larger than 16777216 bytes");
		free(huge);
	}
	REFUSED(load(NULL, "\"vm\": {\"hypervisor\": {\"path\": \"/bin/qemu\"}},", NULL, 0), "vm: isd-runtime does not");
	/* the runtime-spec's extensibility rule: unknown properties are ignored, with a note */
	CHECK(load("\"future\": 1", "\"windows\": {}, \"somethingNew\": true,", ", \"later\": 2", 0) == 0);
	CHECK(has_note("top level: unknown property \"somethingNew\" ignored"));
	CHECK(has_note("process: unknown property \"future\""));
	CHECK(has_note("linux: unknown property \"later\""));
	CHECK(has_note("windows: ignored"));
	{
		/* notes are bounded: the 65th and later are counted */
		char *top = isd_xstrdup("");
		for (int i = 0; i < 100; i++) {
			char *next = isd_xasprintf("%s\"x%d\": 1,", top, i);
			free(top);
			top = next;
		}
		CHECK(load(NULL, top, NULL, 0) == 0);
		CHECK(isd_strv_len(extra.notes) == 65 && extra.notes_left_out == 36);
		CHECK(has_note("36 more notes left out"));
		free(top);
	}
	{
		/* a NUL inside a string is refused, not cut short */
		static const char text[] = "{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": \"r\\u0000x\"}}";
		REFUSED(load_text(text, 0), "root.path: string contains a NUL");
	}
}

static void test_namespaces(void)
{
	CHECK(load_text("{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": \"r\"}, "
			"\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}, \"linux\": {\"namespaces\": ["
			"{\"type\": \"mount\"}, {\"type\": \"network\", \"path\": \"/run/netns/x\"}, "
			"{\"type\": \"pid\", \"path\": \"\"}, {\"type\": \"cgroup\"}]}}", 0) == 0);
	CHECK(extra.ns[ISD_OCI_NS_NET].mode == ISD_OCI_NS_JOIN && !strcmp(extra.ns[ISD_OCI_NS_NET].path, "/run/netns/x"));
	CHECK(extra.ns[ISD_OCI_NS_PID].mode == ISD_OCI_NS_NEW && !extra.ns[ISD_OCI_NS_PID].path);
	CHECK(extra.ns[ISD_OCI_NS_CGROUP].mode == ISD_OCI_NS_NEW);
	CHECK(extra.ns[ISD_OCI_NS_USER].mode == ISD_OCI_NS_SHARE);
	CHECK(spec.network == ISD_NET_NONE && !spec.pid_host);

	REFUSED(load(NULL, NULL, ", \"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"pid\"}, {\"type\": \"time\"}]", 0),
		"linux.namespaces[2].type: \"time\" is not supported");
	REFUSED(load(NULL, NULL, ", \"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"mount\"}]", 0),
		"linux.namespaces[1].type: \"mount\" is given twice");
	REFUSED(load(NULL, NULL, ", \"namespaces\": [{\"type\": \"mount\", \"path\": \"proc/1/ns/mnt\"}]", 0),
		"linux.namespaces[0].path: \"proc/1/ns/mnt\" is not an absolute path");
	REFUSED(load(NULL, NULL, ", \"namespaces\": [{\"path\": \"/x\"}]", 0), "linux.namespaces[0].type: missing");
}

static void test_id_mappings(void)
{
	CHECK(load(NULL, NULL, ", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}, "
		   "{\"containerID\": 1, \"hostID\": 100000, \"size\": 65536}], "
		   "\"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]", 0) == 0);
	CHECK(spec.n_uid_ranges == 2 && spec.uid_ranges[1].inside == 1 && spec.uid_ranges[1].outside == 100000 &&
	      spec.uid_ranges[1].count == 65536);
	CHECK(spec.n_gid_ranges == 1 && spec.gid_ranges[0].outside == 1000);
	CHECK(load(NULL, NULL, ", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 5, \"size\": 1}, "
		   "{\"containerID\": 4294967295, \"hostID\": 0, \"size\": 1}]", 0) == 0);

	REFUSED(load(NULL, NULL, ", \"uidMappings\": [{\"containerID\": 4294967295, \"hostID\": 0, \"size\": 2}]", 0),
		"linux.uidMappings[0]: the range ends beyond id 4294967295");
	REFUSED(load(NULL, NULL, ", \"gidMappings\": [{\"containerID\": 0, \"hostID\": 5, \"size\": 0}]", 0),
		"linux.gidMappings[0]: size 0 maps nothing");
	REFUSED(load(NULL, NULL, ", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 5, \"size\": 10}, "
		     "{\"containerID\": 9, \"hostID\": 50, \"size\": 1}]", 0),
		"linux.uidMappings[1]: containerID range overlaps linux.uidMappings[0]");
	REFUSED(load("\"user\": {\"uid\": 1000}", NULL, ", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]", 0),
		"process.user.uid: 1000 is not mapped by linux.uidMappings");
	REFUSED(load("\"user\": {\"gid\": 0, \"additionalGids\": [0, 5]}", NULL,
		     ", \"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]", 0),
		"process.user.additionalGids[1]: 5 is not mapped by linux.gidMappings");
	CHECK(load("\"user\": {\"uid\": 65536}", NULL, ", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}, "
		   "{\"containerID\": 1, \"hostID\": 100000, \"size\": 65536}]", 0) == 0);
	REFUSED(load(NULL, NULL, ", \"uidMappings\": [{\"containerID\": 0, \"size\": 1}]", 0),
		"linux.uidMappings[0].hostID: missing");
	REFUSED(load_text("{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": \"r\"}, "
			  "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}, \"linux\": {\"namespaces\": ["
			  "{\"type\": \"mount\"}], \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1, \"size\": 1}]}}", 0),
		"linux.uidMappings: needs a new \"user\" namespace");
}

static void test_paths(void)
{
	CHECK(load(NULL, NULL, ", \"maskedPaths\": [\"/proc/kcore\", \"/sys//firmware/\"], "
		   "\"readonlyPaths\": [\"/proc/sys\"], \"rootfsPropagation\": \"rslave\", \"mountLabel\": \"x\"", 0) == 0);
	CHECK(isd_strv_len(extra.masked_paths) == 2 && !strcmp(extra.masked_paths[1], "/sys/firmware"));
	CHECK(!strcmp(extra.readonly_paths[0], "/proc/sys"));
	CHECK(extra.rootfs_propagation == (MS_SLAVE | MS_REC));
	CHECK(!strcmp(extra.mount_label, "x"));

	REFUSED(load(NULL, NULL, ", \"maskedPaths\": [\"proc/kcore\"]", 0), "linux.maskedPaths[0]");
	REFUSED(load(NULL, NULL, ", \"readonlyPaths\": [\"/\"]", 0), "linux.readonlyPaths[0]: \"/\" is the whole");
	REFUSED(load(NULL, NULL, ", \"rootfsPropagation\": \"everywhere\"", 0),
		"linux.rootfsPropagation: \"everywhere\" is not a propagation");
	REFUSED(load(NULL, NULL, ", \"timeOffsets\": {\"monotonic\": {\"secs\": 1}}", 0), "linux.timeOffsets: not supported");
	REFUSED(load(NULL, NULL, ", \"intelRdt\": {\"closID\": \"x\"}", 0), "linux.intelRdt: not supported");
}

static void test_mounts(void)
{
	const struct isd_oci_mount *m;

	CHECK(load(NULL, "\"mounts\": ["
		   "{\"destination\": \"/data\", \"type\": \"bind\", \"source\": \"/srv/data\", \"options\": [\"rbind\", \"ro\", \"nosuid\", \"nodev\", \"noexec\", \"rprivate\"]},"
		   "{\"destination\": \"rel/dir\", \"source\": \"vol\", \"options\": [\"bind\", \"shared\"]},"
		   "{\"destination\": \"/tmp\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"size=1g\", \"mode=1777\", \"tmpcopyup\"]},"
		   "{\"destination\": \"/proc\", \"type\": \"proc\"},"
		   "{\"destination\": \"/sys/fs/cgroup\", \"type\": \"cgroup\", \"options\": [\"ro\", \"rw\"]}],",
		   NULL, 0) == 0);
	CHECK(extra.n_mounts == 5);
	m = &extra.mounts[0];
	CHECK(m->type == ISD_OCI_MOUNT_BIND && m->recursive && !strcmp(m->source, "/srv/data") &&
	      !strcmp(m->destination, "/data"));
	CHECK(m->flags == (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC) && m->propagation == (MS_PRIVATE | MS_REC));
	m = &extra.mounts[1];
	CHECK(m->type == ISD_OCI_MOUNT_BIND && !m->recursive && !strcmp(m->source, "/bundle/vol") &&
	      !strcmp(m->destination, "/rel/dir") && m->propagation == MS_SHARED);
	m = &extra.mounts[2];
	CHECK(m->type == ISD_OCI_MOUNT_TMPFS && m->size == (UINT64_C(1) << 30) && m->has_mode && m->mode == 01777);
	CHECK(m->copy_up && !strcmp(m->data, "size=1g,mode=1777"));
	CHECK(extra.mounts[3].type == ISD_OCI_MOUNT_PROC && !extra.mounts[3].data);
	CHECK(extra.mounts[4].type == ISD_OCI_MOUNT_CGROUP && extra.mounts[4].flags == 0);

	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"overlay\", \"source\": \"o\"}],", NULL, 0),
		"mounts[0].type: \"overlay\" is not supported");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"source\": \"/y\"}],", NULL, 0),
		"mounts[0].type: missing");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"bind\"}],", NULL, 0),
		"mounts[0].source: missing");
	REFUSED(load(NULL, "\"mounts\": [{\"type\": \"tmpfs\"}],", NULL, 0), "mounts[0].destination: missing");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/\", \"type\": \"tmpfs\"}],", NULL, 0),
		"mounts[0].destination: a mount over \"/\"");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/a/../etc\", \"type\": \"tmpfs\"}],", NULL, 0),
		"mounts[0].destination");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"tmpfs\", \"options\": [\"frobnicate\"]}],",
		     NULL, 0),
		"mounts[0].options[0]: \"frobnicate\" is not a mount option isd knows");
	/* a bind's key=value options are data, which the kernel ignores for
	 * a bind, as runc and crun pass it; bare words stay flags, refused
	 * unless known, and idmap= is a crun setting, not data */
	CHECK(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"bind\", \"source\": \"/y\", "
		   "\"options\": [\"nosuid\", \"mode=755\", \"size=1k\", \"rbind\", \"rshared\"]}],", NULL, 0) == 0);
	CHECK(extra.n_mounts == 1 && extra.mounts[0].type == ISD_OCI_MOUNT_BIND && extra.mounts[0].data &&
	      !strcmp(extra.mounts[0].data, "mode=755,size=1k") && extra.mounts[0].propagation == (MS_SHARED | MS_REC));
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"bind\", \"source\": \"/y\", \"options\": [\"nosiud\"]}],",
		     NULL, 0),
		"mounts[0].options[0]: \"nosiud\" is not a mount option isd knows");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"bind\", \"source\": \"/y\", \"options\": [\"rnoatime\"]}],",
		     NULL, 0),
		"mounts[0].options[0]: \"rnoatime\" is not a mount option isd knows");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"bind\", \"source\": \"/y\", "
		     "\"options\": [\"idmap=uids=0-1-1\"]}],", NULL, 0),
		"mounts[0].options[0]: \"idmap=uids=0-1-1\" is not a mount option isd knows");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"bind\", \"source\": \"/y\", "
		     "\"options\": [\"a=1,exec\"]}],", NULL, 0),
		"mounts[0].options[0]");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"tmpfs\", \"options\": [\"size=lots\"]}],",
		     NULL, 0),
		"mounts[0].options[0]: \"size=lots\": not a size");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"tmpfs\", \"options\": [\"mode=8\"]}],",
		     NULL, 0),
		"mounts[0].options[0]: \"mode=8\": not an octal mode");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"tmpfs\", \"options\": [\"size=1,exec\"]}],",
		     NULL, 0),
		"a comma would smuggle");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"tmpfs\", \"options\": [\"uid=root\"]}],", NULL, 0),
		"mounts[0].options[0]: \"uid=root\": not a number");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"source\": \"/y\", \"options\": [\"rbind\", \"idmap\"]}],",
		     NULL, 0),
		"mounts[0].options[1]: \"idmap\": idmapped mounts are not supported");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"source\": \"/y\", \"options\": [\"rbind\", \"rro\"]}],",
		     NULL, 0),
		"mounts[0].options[1]: \"rro\"");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"source\": \"/y\", \"options\": [\"bind\"], "
		     "\"uidMappings\": []}],", NULL, 0),
		"mounts[0].uidMappings: idmapped mounts are not supported");
	REFUSED(load(NULL, "\"mounts\": [{\"destination\": \"/x\", \"type\": \"proc\", \"options\": [\"tmpcopyup\"]}],",
		     NULL, 0),
		"mounts[0].options[0]: \"tmpcopyup\" is for tmpfs mounts");
}

static void test_hooks(void)
{
	CHECK(load(NULL, "\"hooks\": {\"createRuntime\": [{\"path\": \"/usr/bin/hook\", \"args\": [\"hook\", \"x\"], "
		   "\"env\": [\"A=1\"], \"timeout\": 5}], \"poststop\": [{\"path\": \"/bin/true\"}]},", NULL, 0) == 0);
	CHECK(extra.hooks[ISD_OCI_HOOK_CREATE_RUNTIME].n == 1);
	CHECK(!strcmp(extra.hooks[ISD_OCI_HOOK_CREATE_RUNTIME].hooks[0].path, "/usr/bin/hook"));
	CHECK(!strcmp(extra.hooks[ISD_OCI_HOOK_CREATE_RUNTIME].hooks[0].args[1], "x"));
	CHECK(extra.hooks[ISD_OCI_HOOK_CREATE_RUNTIME].hooks[0].timeout == 5);
	CHECK(extra.hooks[ISD_OCI_HOOK_POSTSTOP].n == 1 && !extra.hooks[ISD_OCI_HOOK_POSTSTOP].hooks[0].args);
	CHECK(extra.hooks[ISD_OCI_HOOK_PRESTART].n == 0);

	REFUSED(load(NULL, "\"hooks\": {\"poststart\": [{\"path\": \"hook\"}]},", NULL, 0),
		"hooks.poststart[0].path: \"hook\" is not an absolute path");
	REFUSED(load(NULL, "\"hooks\": {\"poststart\": [{\"path\": \"/h\", \"timeout\": 0}]},", NULL, 0),
		"hooks.poststart[0].timeout: 0 is out of range");
	REFUSED(load(NULL, "\"hooks\": {\"prestart\": [{\"args\": []}]},", NULL, 0), "hooks.prestart[0].path: missing");
	REFUSED(load(NULL, "\"hooks\": {\"poststop\": [{\"path\": \"/h\", \"env\": [\"X\"]}]},", NULL, 0),
		"hooks.poststop[0].env[0]: \"X\" is not NAME=VALUE");
}

static void test_annotations(void)
{
	const char *isd_ones = "\"annotations\": {\"org.example\": \"1\", \"run.oci.isd.network\": \"netless\", "
			       "\"run.oci.isd.allow\": \"api.example.com:443, 10.0.0.1:80\", "
			       "\"run.oci.isd.seccomp\": \"agent\", \"run.oci.isd.isolation\": \"landlock\"},";

	CHECK(load(NULL, isd_ones, NULL, ISD_OCI_LOAD_ANNOTATIONS) == 0);
	CHECK(spec.network == ISD_NET_NETLESS);
	CHECK(spec.net.n_allow == 2);
	CHECK(!strcmp(spec.seccomp, "default"));
	CHECK(!spec.landlock_off);
	CHECK(!strcmp(extra.annotations[0], "org.example=1"));
	CHECK(!extra.notes);
	/* not allowed: read and checked, not applied, and said so */
	CHECK(load(NULL, isd_ones, NULL, 0) == 0);
	CHECK(spec.network == ISD_NET_NONE && spec.net.n_allow == 0);
	CHECK(!strcmp(spec.seccomp, "unconfined") && spec.landlock_off);
	CHECK(has_note("annotations.run.oci.isd.network: not applied"));

	REFUSED(load(NULL, "\"annotations\": {\"run.oci.isd.network\": \"host\"},", NULL, ISD_OCI_LOAD_ANNOTATIONS),
		"annotations.run.oci.isd.network: \"host\" is not supported (netless)");
	REFUSED(load(NULL, "\"annotations\": {\"run.oci.isd.network\": \"host\"},", NULL, 0),
		"annotations.run.oci.isd.network");
	REFUSED(load(NULL, "\"annotations\": {\"run.oci.isd.netwrk\": \"netless\"},", NULL, ISD_OCI_LOAD_ANNOTATIONS),
		"annotations.run.oci.isd.netwrk: not an isd annotation");
	REFUSED(load(NULL, "\"annotations\": {\"run.oci.isd.allow\": \"example.com:443\"},", NULL, ISD_OCI_LOAD_ANNOTATIONS),
		"annotations.run.oci.isd.allow: needs run.oci.isd.network=netless");
	REFUSED(load(NULL, "\"annotations\": {\"run.oci.isd.network\": \"netless\", \"run.oci.isd.allow\": \"example.com:99999\"},",
		     NULL, ISD_OCI_LOAD_ANNOTATIONS),
		"annotations.run.oci.isd.allow");
	REFUSED(load(NULL, "\"annotations\": {\"run.oci.isd.seccomp\": \"tight\"},", NULL, ISD_OCI_LOAD_ANNOTATIONS),
		"annotations.run.oci.isd.seccomp: \"tight\" is not supported (agent)");
	/* the operator's per-pod choice of isd's capability rule (issue 17) */
	CHECK(load(NULL, "\"annotations\": {\"run.oci.isd.capabilities\": \"none\"},", NULL, ISD_OCI_LOAD_ANNOTATIONS) == 0);
	CHECK(extra.caps_none);
	CHECK(load(NULL, "\"annotations\": {\"run.oci.isd.capabilities\": \"none\"},", NULL, 0) == 0);
	CHECK(!extra.caps_none && has_note("annotations.run.oci.isd.capabilities: not applied"));
	REFUSED(load(NULL, "\"annotations\": {\"run.oci.isd.capabilities\": \"all\"},", NULL, ISD_OCI_LOAD_ANNOTATIONS),
		"annotations.run.oci.isd.capabilities: \"all\" is not supported (none)");
	REFUSED(load(NULL, "\"annotations\": {\"a\": 1},", NULL, 0), "annotations.a: expected a string");
	REFUSED(load(NULL, "\"annotations\": {\"a=b\": \"1\"},", NULL, 0), "annotations.a=b: the key holds \"=\"");
	/* the config's strings reach a terminal in messages: escapes shown, never sent */
	REFUSED(load(NULL, "\"annotations\": {\"run.oci.isd.\\u001b[2J\": \"1\"},", NULL, 0),
		"annotations.run.oci.isd.^[[2J: not an isd annotation");
	CHECK(!strchr(isd_error_message(), '\033'));
	CHECK(load(NULL, "\"\\u001b]0;pwned\\u0007\": 1,", NULL, 0) == 0);
	CHECK(has_note("unknown property \"^[]0;pwned^G\""));
	REFUSED(load(NULL, NULL, ", \"seccomp\": {\"defaultAction\": \"\\u001b[31m\"}", 0), "^[[31m");
	CHECK(!strchr(isd_error_message(), '\033'));
	REFUSED(load_text("{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": \"r\"}, "
			  "\"annotations\": {\"run.oci.isd.network\": \"netless\"}, "
			  "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}, "
			  "\"linux\": {\"namespaces\": [{\"type\": \"mount\"}]}}", ISD_OCI_LOAD_ANNOTATIONS),
		"netless needs a \"network\" namespace");
}

static void test_resources(void)
{
	const struct isd_limits *l = &spec.limits;

	CHECK(load(NULL, NULL, ", \"resources\": {\"memory\": {\"limit\": 536870912, \"reservation\": 268435456, "
		   "\"swap\": 1073741824, \"kernel\": 0, \"swappiness\": 0, \"disableOOMKiller\": false}, "
		   "\"cpu\": {\"shares\": 1024, \"quota\": 50000, \"period\": 100000, \"cpus\": \"0-1\", \"mems\": \"\", "
		   "\"realtimeRuntime\": 0}, \"pids\": {\"limit\": 512}, \"blockIO\": {\"weight\": 500, "
		   "\"weightDevice\": []}, \"hugepageLimits\": []}", 0) == 0);
	CHECK(l->memory == 512u << 20 && l->memory_reservation == 256u << 20 && l->memory_swap == 1 << 30);
	/* shares 1024: the default weight, no cpu controller needed */
	CHECK(l->cpu_weight == 0 && l->cpu_quota_us == 50000 && l->cpu_period_us == 100000);
	CHECK(l->cpuset_cpus && !strcmp(l->cpuset_cpus, "0-1"));
	CHECK(l->pids_limit == 512 && l->blkio_weight == 500 && l->mode == ISD_LIMITS_STRICT);
	/* -1 and 0 are "none", as runc reads them */
	CHECK(load(NULL, NULL, ", \"resources\": {\"memory\": {\"limit\": -1, \"swap\": -1}, \"cpu\": {\"quota\": -1}, "
		   "\"pids\": {\"limit\": -1}}", 0) == 0);
	CHECK(l->memory == 0 && l->memory_swap == -1 && l->cpu_quota_us == 0 && l->pids_limit == 0);
	CHECK(load(NULL, NULL, ", \"resources\": {\"pids\": {\"limit\": 0}}", 0) == 0);
	CHECK(l->pids_limit == 0);
	CHECK(load(NULL, NULL, ", \"resources\": {\"cpu\": {\"shares\": 2048}}", 0) == 0);
	CHECK(l->cpu_weight == 174);

	REFUSED(load(NULL, NULL, ", \"resources\": {\"memory\": {\"kernel\": 1048576}}", 0),
		"linux.resources.memory.kernel: not supported");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"memory\": {\"disableOOMKiller\": true}}", 0),
		"linux.resources.memory.disableOOMKiller: not supported");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"memory\": {\"limit\": -2}}", 0),
		"linux.resources.memory.limit: -2 is out of range");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"memory\": {\"limit\": 1073741824, \"swap\": 1048576}}", 0),
		"linux.resources.memory.swap: 1048576 is below memory.limit 1073741824");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"memory\": {\"swap\": 1048576}}", 0),
		"linux.resources.memory.swap: needs memory.limit");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"memory\": {\"limit\": 4096}}", 0),
		"linux.resources.memory.limit: 4096 is below the minimum of 6 MiB");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"memory\": {\"limit\": 10485760, \"reservation\": 20971520}}", 0),
		"linux.resources.memory.reservation: 20971520 is above memory.limit");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"cpu\": {\"quota\": 500}}", 0),
		"linux.resources.cpu.quota: 500 is below the kernel's minimum");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"cpu\": {\"period\": 10}}", 0),
		"linux.resources.cpu.period: 10 is out of range");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"cpu\": {\"shares\": 1}}", 0), "linux.resources.cpu.shares: 1 is out");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"cpu\": {\"shares\": 262145}}", 0), "linux.resources.cpu.shares");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"cpu\": {\"mems\": \"0\"}}", 0), "linux.resources.cpu.mems: not supported");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"cpu\": {\"realtimeRuntime\": 950000}}", 0),
		"linux.resources.cpu.realtimeRuntime: not supported");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"cpu\": {\"cpus\": \"0;rm\"}}", 0),
		"linux.resources.cpu.cpus: \"0;rm\" is not a CPU list");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"cpu\": {\"period\": 2000000}}", 0), "linux.resources.cpu.period");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": 1}]}}", 0),
		"linux.resources.blockIO.throttleReadBpsDevice: not supported");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"blockIO\": {\"weight\": 5}}", 0), "linux.resources.blockIO.weight: 5");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 1}]}", 0),
		"linux.resources.hugepageLimits: not supported");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"unified\": {\"memory.high\": \"1\"}}", 0),
		"linux.resources.unified: not supported");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"pids\": {\"limit\": \"5\"}}", 0),
		"linux.resources.pids.limit: expected an integer");
}

static void test_cgroups_path(void)
{
	CHECK(load(NULL, NULL, ", \"cgroupsPath\": \"/machine/ctr1\"", 0) == 0);
	CHECK(!strcmp(extra.cgroup_dir, "/machine/ctr1") && !extra.cgroup_unit);
	CHECK(load(NULL, NULL, ", \"cgroupsPath\": \"pods//ctr1/\"", 0) == 0);
	CHECK(!strcmp(extra.cgroup_dir, "pods/ctr1"));
	CHECK(load(NULL, NULL, ", \"cgroupsPath\": \"machine-libpod.slice:libpod:abc\"", ISD_OCI_LOAD_SYSTEMD_CGROUP) == 0);
	CHECK(!strcmp(extra.cgroup_slice, "machine-libpod.slice") && !strcmp(extra.cgroup_unit, "libpod-abc.scope"));
	CHECK(!strcmp(extra.cgroup_dir, "/machine.slice/machine-libpod.slice/libpod-abc.scope"));
	CHECK(load(NULL, NULL, ", \"cgroupsPath\": \"-.slice::abc\"", ISD_OCI_LOAD_SYSTEMD_CGROUP) == 0);
	CHECK(!strcmp(extra.cgroup_dir, "/abc.scope"));
	CHECK(load(NULL, NULL, ", \"cgroupsPath\": \"system.slice::kubepods-burstable.slice\"", ISD_OCI_LOAD_SYSTEMD_CGROUP) == 0);
	CHECK(!strcmp(extra.cgroup_dir, "/kubepods.slice/kubepods-burstable.slice"));

	REFUSED(load(NULL, NULL, ", \"cgroupsPath\": \"/a/../b\"", 0), "linux.cgroupsPath");
	REFUSED(load(NULL, NULL, ", \"cgroupsPath\": \"/\"", 0), "linux.cgroupsPath: \"/\" is the root cgroup");
	REFUSED(load(NULL, NULL, ", \"cgroupsPath\": \"machine.slice:libpod:abc\"", 0),
		"linux.cgroupsPath: \"machine.slice:libpod:abc\" is systemd's slice:prefix:name: pass --systemd-cgroup");
	REFUSED(load(NULL, NULL, ", \"cgroupsPath\": \"/a/b\"", ISD_OCI_LOAD_SYSTEMD_CGROUP),
		"linux.cgroupsPath: \"/a/b\" is not slice:prefix:name");
	REFUSED(load(NULL, NULL, ", \"cgroupsPath\": \"machine:libpod:abc\"", ISD_OCI_LOAD_SYSTEMD_CGROUP),
		"\"machine\" is not a systemd slice name");
	REFUSED(load(NULL, NULL, ", \"cgroupsPath\": \"a--b.slice:x:abc\"", ISD_OCI_LOAD_SYSTEMD_CGROUP),
		"is not a systemd slice name");
	REFUSED(load(NULL, NULL, ", \"cgroupsPath\": \"machine.slice:x:..\"", ISD_OCI_LOAD_SYSTEMD_CGROUP),
		"the name part is empty or not a plain name");
	REFUSED(load(NULL, NULL, ", \"cgroupsPath\": \"machine.slice:x/y:z\"", ISD_OCI_LOAD_SYSTEMD_CGROUP),
		"the prefix is not a plain name");
}

/* Devices are the host's nodes of that path: /dev/full (1:7) is on every
 * Linux host and open to everyone. */
static void test_devices(void)
{
	const struct isd_oci_device *d;

	CHECK(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/full\", \"type\": \"c\", \"major\": 1, \"minor\": 7, "
		   "\"fileMode\": 438, \"uid\": 0, \"gid\": 0}], "
		   "\"resources\": {\"devices\": [{\"allow\": false, \"access\": \"rwm\"}, "
		   "{\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 7, \"access\": \"rwm\"}]}", 0) == 0);
	CHECK(extra.n_devices == 1 && extra.n_device_rules == 2);
	if (extra.n_devices == 1 && extra.n_device_rules == 2) {
		d = &extra.devices[0];
		CHECK(!strcmp(d->path, "/dev/full") && d->type == 'c' && d->major == 1 && d->minor == 7);
		CHECK(d->file_mode == 0666 && d->has_file_mode && d->has_uid && d->has_gid);
		CHECK(!extra.device_rules[0].allow && extra.device_rules[0].type == 'a' &&
		      extra.device_rules[0].major == -1 && !strcmp(extra.device_rules[1].access, "rwm"));
	}
	CHECK(spec.n_devices == 1 && !strcmp(spec.devices[0].path, "/dev/full") && spec.devices[0].write);
	/* a rule taking writing away: bound read-only */
	CHECK(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/full\", \"type\": \"c\", \"major\": 1, \"minor\": 7}], "
		   "\"resources\": {\"devices\": [{\"allow\": false, \"type\": \"c\", \"major\": 1, \"access\": \"w\"}]}", 0) == 0);
	CHECK(spec.n_devices == 1 && !spec.devices[0].write);
	if (access("/dev/net/tun", R_OK | W_OK) == 0) {
		CHECK(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/net/tun\", \"type\": \"c\", \"major\": 10, "
			   "\"minor\": 200, \"fileMode\": 384}]", 0) == 0);
		CHECK(spec.n_devices == 1 && !spec.devices[0].isd_node);
		CHECK(has_note("linux.devices[0]: fileMode 0600 not applied"));
	}

	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/full\", \"type\": \"c\", \"major\": 1, \"minor\": 7}], "
		     "\"resources\": {\"devices\": [{\"allow\": false, \"access\": \"rwm\"}]}", 0),
		"linux.devices[0]: /dev/full is denied reading by linux.resources.devices");
	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/full\", \"type\": \"c\", \"major\": 1, \"minor\": 8}]", 0),
		"linux.devices[0]: the host's /dev/full is not the character device 1:8");
	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/full\", \"type\": \"b\", \"major\": 1, \"minor\": 7}]", 0),
		"is not the block device 1:7");
	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/isd-no-such-node\", \"type\": \"c\", \"major\": 1, \"minor\": 7}]", 0),
		"linux.devices[0]: opening the host node /dev/isd-no-such-node");
	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev\", \"type\": \"c\", \"major\": 1, \"minor\": 7}]", 0),
		"linux.devices[0]: the host's /dev is a directory");
	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/fifo\", \"type\": \"p\"}]", 0),
		"linux.devices[0]: a FIFO (type p) is not supported");
	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/x\", \"type\": \"q\", \"major\": 1, \"minor\": 1}]", 0),
		"linux.devices[0].type: \"q\" is not a device type");
	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/x\", \"type\": \"c\", \"minor\": 1}]", 0),
		"linux.devices[0].major: missing");
	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"dev/x\", \"type\": \"c\", \"major\": 1, \"minor\": 1}]", 0),
		"linux.devices[0].path");
	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/x\", \"type\": \"c\", \"major\": 1, \"minor\": 1}, "
		     "{\"path\": \"/dev//x\", \"type\": \"c\", \"major\": 1, \"minor\": 3}]", 0),
		"linux.devices[1].path: /dev/x is given twice");
	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/x\", \"type\": \"c\", \"major\": 1, \"minor\": 1, "
		     "\"fileMode\": 65535}]", 0),
		"linux.devices[0].fileMode");
	/* podman's fileMode: stat's st_mode, 020666 for a character device */
	CHECK(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/full\", \"type\": \"c\", \"major\": 1, \"minor\": 7, "
		   "\"fileMode\": 8630}]", 0) == 0);
	CHECK(spec.n_devices == 1 && !has_note("fileMode"));
	REFUSED(load(NULL, NULL, ", \"devices\": [{\"path\": \"/dev/full\", \"type\": \"c\", \"major\": 1, \"minor\": 7, "
		     "\"fileMode\": 25014}]", 0),
		"linux.devices[0].fileMode: 060666: its file type bits are not those of type c");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"devices\": [{\"allow\": true, \"access\": \"rwx\"}]}", 0),
		"linux.resources.devices[0].access: \"rwx\" is not an access");
	REFUSED(load(NULL, NULL, ", \"resources\": {\"devices\": [{\"access\": \"r\"}]}", 0),
		"linux.resources.devices[0].allow: missing");
}

static void test_sysctl(void)
{
	CHECK(load(NULL, NULL, ", \"sysctl\": {\"net.ipv4.ip_forward\": \"1\", \"kernel.shmmax\": \"4096\", "
		   "\"net/ipv4/conf/eth0.1/forwarding\": \"0\", \"fs.mqueue.msg_max\": \"10\"}", 0) == 0);
	CHECK(isd_strv_len(extra.sysctl) == 4 && !strcmp(extra.sysctl[0], "net.ipv4.ip_forward=1"));

	REFUSED(load(NULL, NULL, ", \"sysctl\": {\"kernel.core_pattern\": \"|/bin/sh\"}", 0),
		"linux.sysctl.kernel.core_pattern: not namespaced");
	REFUSED(load(NULL, NULL, ", \"sysctl\": {\"vm.overcommit_memory\": \"1\"}", 0), "linux.sysctl.vm.overcommit_memory: not namespaced");
	REFUSED(load(NULL, NULL, ", \"sysctl\": {\"net/../../kernel/x\": \"1\"}", 0), "not a sysctl name");
	REFUSED(load(NULL, NULL, ", \"sysctl\": {\"net.ipv4.ip_forward\": 1}", 0),
		"linux.sysctl.net.ipv4.ip_forward: expected a string");
	REFUSED(load(NULL, NULL, ", \"sysctl\": {\"net.core.somaxconn\": \"1\\n2\"}", 0), "the value holds a newline");
	REFUSED(load_text("{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": \"r\"}, "
			  "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}, \"linux\": {\"namespaces\": ["
			  "{\"type\": \"mount\"}], \"sysctl\": {\"net.ipv4.ip_forward\": \"1\"}}}", 0),
		"linux.sysctl.net.ipv4.ip_forward: needs a \"network\" namespace");
}

static void test_seccomp(void)
{
	CHECK(load(NULL, NULL, ", \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 1, "
		   "\"architectures\": [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_AARCH64\"], \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\"], "
		   "\"syscalls\": [{\"names\": [\"read\", \"write\", \"exit_group\"], \"action\": \"SCMP_ACT_ALLOW\"}, "
		   "{\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0, \"value\": 0, "
		   "\"op\": \"SCMP_CMP_EQ\"}]}]}", 0) == 0);
	CHECK(extra.seccomp && strstr(extra.seccomp, "\"SCMP_ACT_ERRNO\""));
	CHECK(!strcmp(spec.seccomp, "unconfined")); /* isd's own profile only by annotation */
	{
		struct isd_seccomp_program prog;
		CHECK(isd_seccomp_prepare_buffer(extra.seccomp, strlen(extra.seccomp), extra.seccomp_origin, &prog) == 0);
		CHECK(prog.filter && prog.len > 0 && !prog.unconfined);
		isd_seccomp_program_free(&prog);
	}

	REFUSED(load(NULL, NULL, ", \"seccomp\": {\"defaultAction\": \"SCMP_ACT_FLY\"}", 0),
		"/bundle/config.json linux.seccomp: defaultAction");
	REFUSED(load(NULL, NULL, ", \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"/run/agent.sock\"}", 0),
		"linux.seccomp: listenerPath");
	REFUSED(load(NULL, NULL, ", \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], "
		     "\"action\": \"SCMP_ACT_NOTIFY\"}]}", 0),
		"linux.seccomp: syscalls[0]");
	REFUSED(load(NULL, NULL, ", \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], "
		     "\"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 9, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}]}]}", 0),
		"linux.seccomp: syscalls[0].args[0].index");
	REFUSED(load(NULL, NULL, ", \"seccomp\": []", 0), "linux.seccomp: expected an object");
}

static void test_personality(void)
{
	CHECK(load(NULL, NULL, ", \"personality\": {\"domain\": \"LINUX\"}", 0) == 0);
	REFUSED(load(NULL, NULL, ", \"personality\": {\"domain\": \"LINUX32\"}", 0),
		"linux.personality.domain: \"LINUX32\" is not supported");
	REFUSED(load(NULL, NULL, ", \"personality\": {\"domain\": \"LINUX\", \"flags\": [\"X\"]}", 0),
		"linux.personality.flags: not supported");
}

static int load_fixture(const char *name, unsigned flags)
{
	_cleanup_free_ char *dir = isd_xasprintf("%s/%s", fixtures, name);
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *path = isd_xasprintf("%s.json", dir);
	size_t len;
	int r = isd_read_file_at(AT_FDCWD, path, &text, &len);

	isd_spec_free(&spec);
	isd_oci_extra_free(&extra);
	isd_spec_init(&spec);
	isd_oci_extra_init(&extra);
	if (r < 0) {
		fprintf(stderr, "reading %s: %s\n", path, strerror(-r));
		return r;
	}
	return isd_oci_config_parse(text, len, "/bundle", name, flags, &spec, &extra);
}

/* --print-spec tells what config.json decided, not isd exec's fixed values. */
static void check_plan_json(const char *json)
{
	struct json_object *root = json ? json_tokener_parse(json) : NULL, *v, *oci = NULL;

	CHECK(root != NULL);
	if (!root)
		return;
	CHECK(json_object_object_get_ex(root, "root_readonly", &v) && json_object_get_boolean(v));
	CHECK(json_object_object_get_ex(root, "mounts", &v) && json_object_array_length(v) == 7);
	CHECK(!strcmp(json_object_get_string(json_object_object_get(json_object_array_get_idx(v, 6), "type")), "cgroup2"));
	CHECK(json_object_object_get_ex(root, "namespaces", &v) &&
	      !json_object_get_boolean(json_object_object_get(v, "network")) &&
	      json_object_get_boolean(json_object_object_get(v, "user")));
	CHECK(json_object_object_get_ex(root, "masked_paths", &v) && json_object_array_length(v) == 10);
	/* the payload's sets: isd-runtime's rt_apply_config grants the config's */
	CHECK(json_object_object_get_ex(root, "capabilities", &v) &&
	      json_object_array_length(json_object_object_get(v, "effective")) == 0);
	CHECK(json_object_object_get_ex(root, "no_new_privileges", &v) && json_object_get_boolean(v));
	CHECK(json_object_object_get_ex(root, "seccomp", &v) && !strcmp(json_object_get_string(v), "unconfined"));
	CHECK(!json_object_object_get_ex(root, "proc", &v));
	CHECK(json_object_object_get_ex(root, "oci", &oci));
	if (oci) {
		CHECK(json_object_object_get_ex(oci, "rlimits", &v) &&
		      !strcmp(json_object_get_string(json_object_object_get(json_object_array_get_idx(v, 0), "type")),
			      "RLIMIT_NOFILE"));
		CHECK(json_object_object_get_ex(oci, "notes", &v) && json_object_array_length(v) == 3);
		CHECK(json_object_object_get_ex(oci, "bundle", &v) && !strcmp(json_object_get_string(v), "/bundle"));
	}
	json_object_put(root);
}

static void test_rootless_default(void)
{
	_cleanup_free_ char *json = NULL;

	CHECK(load_fixture("rootless", 0) == 0);
	CHECK(!strcmp(spec.argv[0], "sh") && spec.tty && !strcmp(spec.hostname, "isd"));
	CHECK(!spec.writable_root && !strcmp(spec.rootfs, "/bundle/rootfs"));
	CHECK(spec.network == ISD_NET_HOST); /* runc's rootless default shares the network */
	CHECK(spec.n_uid_ranges == 1 && spec.uid_ranges[0].outside == 1000);
	CHECK(extra.n_mounts == 7);
	CHECK(extra.mounts[5].type == ISD_OCI_MOUNT_BIND && extra.mounts[5].recursive &&
	      !strcmp(extra.mounts[5].source, "/sys"));
	CHECK(extra.mounts[1].size == 65536 * 1024 && extra.mounts[1].mode == 0755);
	CHECK(extra.mounts[2].type == ISD_OCI_MOUNT_DEVPTS &&
	      !strcmp(extra.mounts[2].data, "newinstance,ptmxmode=0666,mode=0620"));
	CHECK(extra.no_new_privileges && extra.n_rlimits == 1);
	CHECK(isd_strv_len(extra.masked_paths) == 10 && isd_strv_len(extra.readonly_paths) == 5);
	/* runc 1.1 dropped inheritable: its ambient set cannot be held */
	CHECK(extra.caps[ISD_OCI_CAP_AMBIENT] == 0 && has_note("process.capabilities.ambient"));
	json = isd_oci_plan_to_json(&spec, &extra);
	check_plan_json(json);
}

/* What `runc spec` prints as root: its own network namespace, a deny-all
 * device rule (nothing is listed to deny), sysfs, devpts with gid=5. */
static void test_root_default(void)
{
	CHECK(load_fixture("runc", 0) == 0);
	CHECK(spec.network == ISD_NET_NONE && !spec.pid_host && !strcmp(spec.hostname, "runc"));
	CHECK(!spec.n_uid_ranges && extra.ns[ISD_OCI_NS_USER].mode == ISD_OCI_NS_SHARE);
	CHECK(extra.n_device_rules == 1 && !extra.device_rules[0].allow);
	CHECK(extra.mounts[5].type == ISD_OCI_MOUNT_SYSFS && extra.mounts[5].flags == (MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY));
	CHECK(!strcmp(extra.mounts[2].data, "newinstance,ptmxmode=0666,mode=0620,gid=5"));
	CHECK(extra.caps[ISD_OCI_CAP_EFFECTIVE] == ((UINT64_C(1) << 29) | (UINT64_C(1) << 5) | (UINT64_C(1) << 10)));
	CHECK(!extra.notes);
}

/* What podman (rootless, vfs, with isd's annotations) and containerd's
 * ctr hand a runtime, written by hand from their documented defaults. */
static void test_engine_configs(void)
{
	CHECK(load_fixture("podman-rootless", ISD_OCI_LOAD_ANNOTATIONS | ISD_OCI_LOAD_SYSTEMD_CGROUP) == 0);
	CHECK(spec.network == ISD_NET_NETLESS && spec.net.n_allow == 1 && !strcmp(spec.seccomp, "default"));
	CHECK(extra.seccomp && spec.limits.pids_limit == 2048 && spec.n_uid_ranges == 2);
	CHECK(extra.cgroup_dir && !strcmp(extra.cgroup_dir, "/user.slice/libpod-0123abcd.scope"));
	CHECK(extra.n_mounts == 11 && extra.mounts[9].copy_up && extra.mounts[2].recursive);
	CHECK(isd_strv_len(extra.sysctl) == 1 && isd_strv_len(extra.annotations) == 6);
	CHECK(!extra.notes);
	CHECK(load_fixture("containerd", 0) == 0);
	CHECK(!strcmp(extra.apparmor_profile, "cri-containerd.apparmor.d") && !spec.hostname);
	/* its shares 1024 is the default weight: no cpu controller asked */
	CHECK(!strcmp(extra.cgroup_dir, "/default/ctr1") && spec.limits.cpu_weight == 0);
	CHECK(extra.n_additional_gids == 2 && extra.n_mounts == 8 && !extra.notes);
}

/* Nothing the plan read may fall between plan and maker. */
static void test_refuse_unapplied(void)
{
	CHECK(load_fixture("rootless", 0) == 0);
	isd_error_clear();
	CHECK(isd_oci_refuse_unapplied(&extra, 0) == -EOPNOTSUPP);
	CHECK(strstr(isd_error_message(), "/bundle/config.json: mounts: set, but isd-runtime does not carry it out"));
	CHECK(isd_oci_refuse_unapplied(&extra, ISD_OCI_APPLIES_MOUNTS | ISD_OCI_APPLIES_CAPS) == -EOPNOTSUPP);
	CHECK(strstr(isd_error_message(), ": process.rlimits: set"));
	CHECK(isd_oci_refuse_unapplied(&extra, ISD_OCI_APPLIES_MOUNTS | ISD_OCI_APPLIES_CAPS | ISD_OCI_APPLIES_RLIMITS) == -EOPNOTSUPP);
	CHECK(strstr(isd_error_message(), ": linux.maskedPaths: set"));
	CHECK(isd_oci_refuse_unapplied(&extra, ISD_OCI_APPLIES_MOUNTS | ISD_OCI_APPLIES_CAPS | ISD_OCI_APPLIES_RLIMITS |
					       ISD_OCI_APPLIES_MASKED_PATHS) == 0);
	CHECK(load(NULL, NULL, NULL, 0) == 0);
	CHECK(isd_oci_refuse_unapplied(&extra, 0) == 0); /* a bare config asks for nothing extra */
	CHECK(load(NULL, "\"hooks\": {\"poststop\": [{\"path\": \"/h\"}]},", NULL, 0) == 0);
	CHECK(isd_oci_refuse_unapplied(&extra, ~(unsigned)ISD_OCI_APPLIES_HOOKS) == -EOPNOTSUPP);
	CHECK(strstr(isd_error_message(), ": hooks: set"));
}

int main(int argc, char **argv)
{
	if (argc > 1)
		fixtures = argv[1];
	isd_spec_init(&spec);
	isd_oci_extra_init(&extra);
	test_minimal();
	test_process();
	test_capabilities();
	test_rlimits();
	test_root_hostname();
	test_top_level();
	test_namespaces();
	test_id_mappings();
	test_paths();
	test_mounts();
	test_hooks();
	test_annotations();
	test_resources();
	test_cgroups_path();
	test_devices();
	test_sysctl();
	test_seccomp();
	test_personality();
	test_rootless_default();
	test_root_default();
	test_engine_configs();
	test_refuse_unapplied();
	isd_spec_free(&spec);
	isd_oci_extra_free(&extra);
	return check_result();
}
