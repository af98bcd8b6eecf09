/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CDI spec files (src/cdi.c): what a well-formed spec gives, every way a
 * spec is refused (malformed, unknown keys, relative and ".." paths,
 * hostile strings, hooks), and how a request picks devices ("all", kinds,
 * directories overriding each other). */
#define _GNU_SOURCE
#include "cdi.h"
#include "check.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char good[] =
	"{\"cdiVersion\":\"0.6.0\",\"kind\":\"example.com/gpu\",\"annotations\":{\"a\":\"b\"},"
	"\"containerEdits\":{\"env\":[\"EXAMPLE=1\"]},"
	"\"devices\":["
	"{\"name\":\"zero\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/example-gpu0\",\"hostPath\":\"/dev/zero\","
	"\"permissions\":\"rw\",\"type\":\"c\",\"major\":1,\"minor\":5}],"
	"\"mounts\":[{\"hostPath\":\"/srv/lib\",\"containerPath\":\"/usr/lib/example\",\"options\":[\"ro\",\"nosuid\",\"bind\"]}]}},"
	"{\"name\":\"null\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/example-gpu1\",\"hostPath\":\"/dev/null\"}]}}]}";

/* The spec of one device whose containerEdits are edits. */
static char *with_edits(const char *edits)
{
	return isd_xasprintf("{\"cdiVersion\":\"0.6.0\",\"kind\":\"example.com/gpu\",\"devices\":[{\"name\":\"d\","
			     "\"containerEdits\":%s}]}", edits);
}

/* Refused, with the message containing want. */
static void refused(const char *text, const char *want)
{
	struct isd_cdi_spec s;
	int r = isd_cdi_parse_spec(text, "/etc/cdi/t.json", &s);

	CHECK(r < 0);
	if (r < 0 && !strstr(isd_error_message(), want))
		fprintf(stderr, "expected '%s' in: %s\n", want, isd_error_message());
	CHECK(r < 0 && strstr(isd_error_message(), want));
	CHECK(r < 0 && strstr(isd_error_message(), "/etc/cdi/t.json"));
	isd_cdi_spec_free(&s);
}

static void refused_edits(const char *edits, const char *want)
{
	_cleanup_free_ char *t = with_edits(edits);
	refused(t, want);
}

static void test_good(void)
{
	struct isd_cdi_spec s;

	CHECK(isd_cdi_parse_spec(good, "g.json", &s) == 0);
	CHECK(s.kind && !strcmp(s.kind, "example.com/gpu"));
	CHECK(s.n_devices == 2 && !strcmp(s.devices[0].name, "zero"));
	CHECK(s.edits.env && !strcmp(s.edits.env[0], "EXAMPLE=1"));
	CHECK(s.devices[0].edits.n_nodes == 1 && !strcmp(s.devices[0].edits.nodes[0].host_path, "/dev/zero"));
	CHECK(s.devices[0].edits.nodes[0].type == 'c' && s.devices[0].edits.nodes[0].major == 1 &&
	      s.devices[0].edits.nodes[0].minor == 5);
	CHECK(s.devices[0].edits.n_mounts == 1 && s.devices[0].edits.mounts[0].readonly);
	CHECK(!s.devices[1].edits.nodes[0].permissions && !s.devices[1].edits.nodes[0].has_number);
	isd_cdi_spec_free(&s);
}

static void test_malformed(void)
{
	refused("{\"cdiVersion\":", "not JSON");
	refused("[1,2]", "expected an object");
	refused("{\"kind\":\"example.com/gpu\",\"devices\":[]}", "cdiVersion");
	refused("{\"cdiVersion\":\"0.6.0\",\"kind\":\"gpu\",\"devices\":[{\"name\":\"d\",\"containerEdits\":{}}]}",
		"not a kind VENDOR/CLASS");
	refused("{\"cdiVersion\":\"0.6.0\",\"kind\":\"example.com/gpu\",\"devices\":[]}", "not a list of devices");
	refused("{\"cdiVersion\":\"0.6.0\",\"kind\":\"example.com/gpu\",\"devices\":[{\"name\":\"d\"}]}", "containerEdits");
	refused("{\"cdiVersion\":\"0.6.0\",\"kind\":\"example.com/gpu\",\"devices\":[{\"name\":\"d\",\"containerEdits\":{}},"
		"{\"name\":\"d\",\"containerEdits\":{}}]}", "the same name as an earlier device");
	refused("{\"cdiVersion\":\"0.6.0\",\"kind\":\"example.com/gpu\",\"devices\":[{\"name\":\"-x\",\"containerEdits\":{}}]}",
		"not a device name");
	refused("{\"cdiVersion\":\"0.6.0\",\"kind\":\"example.com/gpu\",\"extra\":1,\"devices\":[]}", "unknown key \"extra\"");
	refused_edits("{\"deviceNodes\":[{\"hostPath\":\"/dev/zero\"}]}", "deviceNodes[0].path: missing");
	refused_edits("{\"deviceNodes\":[{\"path\":\"/dev/x\",\"major\":\"1\"}]}", "expected a device number");
	refused_edits("{\"deviceNodes\":{\"path\":\"/dev/x\"}}", "expected an array");
	refused_edits("{\"env\":[\"NOVALUE\"]}", "expected NAME=VALUE");
	refused_edits("{\"env\":[\"=x\"]}", "expected NAME=VALUE");
}

/* Keys isd cannot honour, and what it never does. */
static void test_unknown_and_refused_keys(void)
{
	struct isd_cdi_spec s;
	_cleanup_free_ char *hooked = with_edits("{\"hooks\":[{\"hookName\":\"createContainer\",\"path\":\"/usr/bin/nvidia-ctk\"}]}");

	refused_edits("{\"futureKey\":[]}", "unknown key \"futureKey\"");
	refused_edits("{\"deviceNodes\":[{\"path\":\"/dev/x\",\"cgroup\":1}]}", "unknown key \"cgroup\"");
	refused_edits("{\"additionalGids\":[44]}", "additionalGids");
	refused_edits("{\"netDevices\":[{\"hostInterfaceName\":\"eth0\"}]}", "netDevices");
	refused_edits("{\"mounts\":[{\"hostPath\":\"/a\",\"containerPath\":\"/b\",\"options\":[\"suid\"]}]}", "suid");
	refused_edits("{\"mounts\":[{\"hostPath\":\"/a\",\"containerPath\":\"/b\",\"type\":\"tmpfs\"}]}", "only bind mounts");
	/* a hook parses (the spec may have other devices) and is recorded */
	CHECK(isd_cdi_parse_spec(hooked, "h.json", &s) == 0);
	CHECK(s.devices[0].edits.hook && !strcmp(s.devices[0].edits.hook, "createContainer /usr/bin/nvidia-ctk"));
	isd_cdi_spec_free(&s);
}

static void test_hostile_paths_and_strings(void)
{
	refused_edits("{\"deviceNodes\":[{\"path\":\"dev/zero\"}]}", "must be an absolute path without '..'");
	refused_edits("{\"deviceNodes\":[{\"path\":\"/dev/x\",\"hostPath\":\"/dev/../etc/passwd\"}]}", "without '..'");
	refused_edits("{\"mounts\":[{\"hostPath\":\"../../home\",\"containerPath\":\"/x\"}]}", "hostPath \"../../home\"");
	refused_edits("{\"mounts\":[{\"hostPath\":\"/a\",\"containerPath\":\"/usr/../../etc\"}]}", "containerPath");
	refused_edits("{\"mounts\":[{\"hostPath\":\"/a\",\"containerPath\":\"x\"}]}", "containerPath \"x\"");
	/* JSON's \u0000 would cut the C string to "/dev/zero" */
	refused_edits("{\"deviceNodes\":[{\"path\":\"/dev/x\",\"hostPath\":\"/dev/zero\\u0000/../etc\"}]}", "NUL byte");
	/* a terminal escape in a refused value is shown, never sent */
	refused_edits("{\"deviceNodes\":[{\"path\":\"rel\\u001b[2J\\u202e\"}]}", "rel^[[2J<U+202E>");
	CHECK(!strchr(isd_error_message(), '\x1b'));
	refused_edits("{\"env\":[\"A\\u001bB=1\"]}", "A^[B=1");
}

static void test_requests(void)
{
	_cleanup_free_ char *kind = NULL, *name = NULL;

	CHECK(isd_cdi_is_request("nvidia.com/gpu=all"));
	CHECK(!isd_cdi_is_request("/dev/dri"));
	CHECK(!isd_cdi_is_request("/dev/x=y/z"));
	CHECK(isd_cdi_parse_request("nvidia.com/gpu=all", &kind, &name) == 0);
	CHECK(kind && !strcmp(kind, "nvidia.com/gpu") && name && !strcmp(name, "all"));
	CHECK(isd_cdi_parse_request("a/b=", &kind, &name) < 0);
	CHECK(isd_cdi_parse_request("a/b=x y", &kind, &name) < 0);
	CHECK(isd_cdi_parse_request("a/=x", &kind, &name) < 0);
}

static char dir1[64], dir2[64];

static void write_spec(const char *dir, const char *name, const char *text, mode_t mode)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "we");

	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static int resolve(const char *request, struct isd_cdi_edits *e, char **files)
{
	char *dirs[] = {dir1, dir2, NULL};
	return isd_cdi_resolve(dirs, request, e, files);
}

static void test_resolve(void)
{
	struct isd_cdi_edits e;
	char *files = NULL;
	_cleanup_free_ char *hooked = NULL;

	snprintf(dir1, sizeof(dir1), "/tmp/isd-cdi-1.XXXXXX");
	snprintf(dir2, sizeof(dir2), "/tmp/isd-cdi-2.XXXXXX");
	CHECK(mkdtemp(dir1) && mkdtemp(dir2));
	write_spec(dir1, "example.json", good, 0644);
	write_spec(dir1, "broken.json", "{not json", 0644);
	write_spec(dir1, "vendor.yaml", "cdiVersion: 0.6.0\n", 0644);

	CHECK(resolve("example.com/gpu=zero", &e, &files) == 0);
	CHECK(e.n_nodes == 1 && !strcmp(e.nodes[0].path, "/dev/example-gpu0"));
	CHECK(e.n_mounts == 1 && e.env && !strcmp(e.env[0], "EXAMPLE=1") && !e.env[1]);
	CHECK(files && strstr(files, "example.json"));
	isd_cdi_edits_free(&e);
	free(files);

	/* "all" without an "all" device: every device, the spec's edits once */
	CHECK(resolve("example.com/gpu=all", &e, &files) == 0);
	CHECK(e.n_nodes == 2 && e.n_mounts == 1 && isd_strv_len(e.env) == 1);
	isd_cdi_edits_free(&e);
	free(files);

	CHECK(resolve("example.com/gpu=nope", &e, &files) < 0);
	CHECK(strstr(isd_error_message(), "no device nope (they have: zero, null)"));
	/* an unknown kind names where isd looked, and what it could not read */
	CHECK(resolve("other.org/npu=0", &e, &files) < 0);
	CHECK(strstr(isd_error_message(), "no CDI spec of kind other.org/npu"));
	CHECK(strstr(isd_error_message(), "broken.json"));
	CHECK(strstr(isd_error_message(), "only .json specs") && strstr(isd_error_message(), "vendor.yaml"));

	/* a later directory overrides a device; a device named "all" is
	 * itself */
	write_spec(dir2, "example.json",
		   "{\"cdiVersion\":\"0.6.0\",\"kind\":\"example.com/gpu\",\"devices\":["
		   "{\"name\":\"zero\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/example-override\"}]}},"
		   "{\"name\":\"all\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/example-all\"}]}}]}", 0644);
	CHECK(resolve("example.com/gpu=zero", &e, &files) == 0);
	CHECK(e.n_nodes == 1 && !strcmp(e.nodes[0].path, "/dev/example-override"));
	isd_cdi_edits_free(&e);
	free(files);
	CHECK(resolve("example.com/gpu=all", &e, &files) == 0);
	CHECK(e.n_nodes == 1 && !strcmp(e.nodes[0].path, "/dev/example-all"));
	isd_cdi_edits_free(&e);
	free(files);

	/* two files of one directory defining one device */
	write_spec(dir2, "again.json",
		   "{\"cdiVersion\":\"0.6.0\",\"kind\":\"example.com/gpu\",\"devices\":["
		   "{\"name\":\"zero\",\"containerEdits\":{}}]}", 0644);
	CHECK(resolve("example.com/gpu=zero", &e, &files) < 0);
	CHECK(strstr(isd_error_message(), "both define example.com/gpu=zero"));

	/* a spec of the kind that is broken is an error, not skipped */
	write_spec(dir2, "again.json", "{\"cdiVersion\":\"0.6.0\",\"kind\":\"example.com/gpu\",\"devices\":[{\"name\":\"x\"}]}",
		   0644);
	CHECK(resolve("example.com/gpu=zero", &e, &files) < 0);
	CHECK(strstr(isd_error_message(), "again.json"));

	/* hooks are refused, named */
	hooked = with_edits("{\"hooks\":[{\"hookName\":\"createContainer\",\"path\":\"/usr/bin/nvidia-ctk\"}]}");
	write_spec(dir2, "again.json", hooked, 0644);
	CHECK(resolve("example.com/gpu=d", &e, &files) < 0);
	CHECK(strstr(isd_error_message(), "hook createContainer /usr/bin/nvidia-ctk"));

	/* a spec others could write is not read */
	write_spec(dir2, "again.json", good, 0666);
	CHECK(resolve("example.com/gpu=d", &e, &files) < 0);
	CHECK(strstr(isd_error_message(), "again.json"));

	{
		_cleanup_free_ char *cmd = isd_xasprintf("rm -rf '%s' '%s'", dir1, dir2);
		CHECK(system(cmd) == 0);
	}
}

static void test_default_dirs(void)
{
	_cleanup_strv_ char **d = isd_cdi_default_dirs(NULL), **e = isd_cdi_default_dirs("/a:/b");

	CHECK(d && !strcmp(d[0], "/etc/cdi") && !strcmp(d[1], "/var/run/cdi") && !d[2]);
	CHECK(e && !strcmp(e[0], "/a") && !strcmp(e[1], "/b") && !e[2]);
}

int main(void)
{
	test_good();
	test_malformed();
	test_unknown_and_refused_keys();
	test_hostile_paths_and_strings();
	test_requests();
	test_resolve();
	test_default_dirs();
	return check_result();
}
