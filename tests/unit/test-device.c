/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --device (src/device.c): Docker's split of HOST[:CONTAINER][:PERMS], the
 * permissions, and where a node may go in isd's /dev. */
#include "check.h"
#include "device.h"
#include "isd/spec.h"

#include <string.h>
#include <sys/stat.h>

static void split(const char *arg, const char *host, const char *container, const char *perms)
{
	char *h = NULL, *c = NULL, *p = NULL;

	CHECK(isd_device_split(arg, &h, &c, &p) == 0);
	CHECK(h && !strcmp(h, host));
	CHECK(container ? c && !strcmp(c, container) : !c);
	CHECK(p && !strcmp(p, perms));
	free(h), free(c), free(p);
}

static void test_split(void)
{
	char *h, *c, *p;

	split("/dev/dri", "/dev/dri", NULL, "rwm");
	split("/dev/zero:/dev/gpu0", "/dev/zero", "/dev/gpu0", "rwm");
	split("/dev/zero:r", "/dev/zero", NULL, "r");
	split("/dev/zero:/dev/gpu0:rw", "/dev/zero", "/dev/gpu0", "rw");
	split("/dev/zero::r", "/dev/zero", NULL, "r");
	CHECK(isd_device_split("/a:/b:r:x", &h, &c, &p) < 0);
	CHECK(isd_device_split(":/b", &h, &c, &p) < 0);
}

static void test_perms(void)
{
	bool w, m;

	CHECK(isd_device_parse_perms("t", "rwm", &w, &m) == 0 && w && m);
	CHECK(isd_device_parse_perms("t", "r", &w, &m) == 0 && !w && !m);
	CHECK(isd_device_parse_perms("t", "rr", &w, &m) < 0);
	CHECK(isd_device_parse_perms("t", "w", &w, &m) < 0 && strstr(isd_error_message(), "leave out r"));
	CHECK(isd_device_parse_perms("t", "rx", &w, &m) < 0);
	CHECK(isd_device_parse_perms("t", "", &w, &m) < 0);
}

static void test_places(void)
{
	struct isd_spec spec;
	struct stat st;

	if (stat("/dev/zero", &st) < 0 || !S_ISCHR(st.st_mode))
		return; /* no /dev here: nothing to bind */
	isd_spec_init(&spec);
	CHECK(isd_device_add_arg(&spec, "/dev/zero:/dev/gpu0:r", "t") == 0);
	CHECK(spec.n_devices == 1 && !strcmp(spec.devices[0].path, "/dev/gpu0") && !spec.devices[0].write);
	CHECK(spec.devices[0].rdev == st.st_rdev && spec.devices[0].type == S_IFCHR);
	/* the same node again at the same place: the later request says how */
	CHECK(isd_device_add_arg(&spec, "/dev/zero:/dev/gpu0:rw", "t2") == 0);
	CHECK(spec.n_devices == 1 && spec.devices[0].write && !strcmp(spec.devices[0].origin, "t2"));
	CHECK(isd_device_add_arg(&spec, "/dev/null:/dev/gpu0", "t") < 0);
	CHECK(isd_device_add_arg(&spec, "/dev/null:/dev/gpu0/x", "t") < 0);
	CHECK(isd_device_add_arg(&spec, "/dev/zero:/dev", "t") < 0);
	CHECK(isd_device_add_arg(&spec, "/dev/zero:/devx/a", "t") < 0);
	CHECK(isd_device_add_arg(&spec, "/dev/zero:/dev/shm/z", "t") < 0);
	CHECK(isd_device_add_arg(&spec, "/dev/zero:/dev/stdout", "t") < 0);
	CHECK(isd_device_add_arg(&spec, "/dev/zero:/dev/null", "t") < 0);
	CHECK(isd_device_add_arg(&spec, "/dev/zero:/dev/zero/x", "t") < 0);
	CHECK(isd_device_add_arg(&spec, "/dev/zero", "t") == 0);
	CHECK(spec.n_devices == 2 && spec.devices[1].isd_node);
	CHECK(isd_device_add_arg(&spec, "/etc/passwd", "t") < 0 && strstr(isd_error_message(), "a regular file"));
	isd_spec_free(&spec);
}

int main(void)
{
	test_split();
	test_perms();
	test_places();
	return check_result();
}
