/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Landlock rule list as a pure function of the spec (src/landlock.c):
 * which mounts get write rules, which never do, and when there is none. */
#include "check.h"
#include "landlock.h"
#include "isd/spec.h"

#include <string.h>

static const struct isd_landlock_rule *find(const struct isd_landlock_plan *p, const char *path)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (!strcmp(p->rules[i].path, path))
			return &p->rules[i];
	return NULL;
}

static void add_mount(struct isd_spec *spec, int type, const char *dst, bool readonly, bool rebind)
{
	struct isd_mount *m = isd_spec_add_mount(spec);

	m->type = type;
	m->source = type == ISD_MOUNT_TMPFS ? NULL : isd_xstrdup("/srv/host");
	m->destination = isd_xstrdup(dst);
	m->readonly = readonly;
	m->rebind = rebind;
}

int main(void)
{
	struct isd_spec spec;
	struct isd_landlock_plan plan;
	const struct isd_landlock_rule *r, *dev;

	/* what isd exec gets: rw binds, tmpfs and the workspace, never a
	 * read-only mount or a guard's rebind */
	isd_spec_init(&spec);
	add_mount(&spec, ISD_MOUNT_BIND, "/rw", false, false);
	add_mount(&spec, ISD_MOUNT_BIND, "/ro", true, false);
	add_mount(&spec, ISD_MOUNT_TMPFS, "/tmp", false, false);
	add_mount(&spec, ISD_MOUNT_TMPFS, "/rotmp", true, false);
	add_mount(&spec, ISD_MOUNT_OVERLAY, "/proj", false, false);
	add_mount(&spec, ISD_MOUNT_BIND, "/rw/pinned", false, true);
	spec.workspace.path = isd_xstrdup("/proj");
	isd_landlock_plan(&spec, &plan);
	CHECK(plan.enabled);
	CHECK(find(&plan, "/rw") && find(&plan, "/tmp") && find(&plan, "/dev/shm"));
	CHECK((r = find(&plan, "/proj")) && !strcmp(r->why, "the cow workspace"));
	CHECK(!find(&plan, "/ro") && !find(&plan, "/rotmp") && !find(&plan, "/rw/pinned"));
	CHECK(!find(&plan, "/") && !find(&plan, "/proc") && !find(&plan, "/dev"));
	/* every writable place has the same rights (moves gain nothing);
	 * devices only write, truncate and ioctl */
	r = find(&plan, "/rw");
	dev = find(&plan, "/dev/null");
	CHECK(r && find(&plan, "/tmp")->access == r->access && find(&plan, "/proj")->access == r->access);
	CHECK(dev && find(&plan, "/dev/pts") && (dev->access & r->access) == dev->access && dev->access != r->access);
	CHECK(isd_landlock_handled(1) == 0 && (isd_landlock_handled(2) & r->access) == isd_landlock_handled(2));
	CHECK((isd_landlock_handled(7) & ~isd_landlock_handled(2)) != 0); /* truncate, ioctl_dev */
	isd_landlock_plan_free(&plan);

	/* isd build's RUN: its writable root */
	spec.writable_root = true;
	isd_landlock_plan(&spec, &plan);
	CHECK(plan.enabled && (r = find(&plan, "/")) && r->access == find(&plan, "/rw")->access);
	isd_landlock_plan_free(&plan);
	spec.writable_root = false;

	/* none where a sandbox must nest, or when asked */
	spec.seccomp = isd_xstrdup("nested");
	isd_landlock_plan(&spec, &plan);
	CHECK(!plan.enabled && plan.n_rules == 0 && strstr(plan.off_reason, "seccomp=nested"));
	isd_landlock_plan_free(&plan);
	free(spec.seccomp);
	spec.seccomp = isd_xstrdup("unconfined");
	isd_landlock_plan(&spec, &plan);
	CHECK(plan.enabled); /* seccomp only */
	isd_landlock_plan_free(&plan);
	spec.landlock_off = true;
	isd_landlock_plan(&spec, &plan);
	CHECK(!plan.enabled && strstr(plan.off_reason, "landlock=off"));
	isd_landlock_plan_free(&plan);
	isd_spec_free(&spec);
	return check_result();
}
