/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.json: linux.devices.  isd-runtime never makes device nodes (a
 * user namespace cannot mknod): each listed device is the host's node of
 * that path, checked against the config's numbers and bound into the
 * container (src/device.c, the spec's devices), with the access the
 * device rules leave it. */
#define _GNU_SOURCE
#include "oci-config.h"
#include "device.h"
#include "isd/util.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

int oci_parse_devices(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "type", "path", "major", "minor", "fileMode", "uid", "gid", NULL };
	struct isd_oci_extra *e = c->extra;
	char p[256], q[256];
	size_t n;
	int r;

	if ((r = oci_array(c, "linux.devices", o, &n)) < 0)
		return r;
	e->devices = isd_xcalloc(n ? n : 1, sizeof(*e->devices));
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(o, i), *v;
		struct isd_oci_device *dev = &e->devices[i];
		const char *s;

		oci_path(p, sizeof(p), "linux.devices[%zu]", i);
		if ((r = oci_want(c, p, d, json_type_object)) < 0)
			return r;
		oci_unknown_keys(c, p, d, known);
		e->n_devices++;
		oci_path(q, sizeof(q), "%s.path", p);
		if (!(v = oci_field(d, "path")))
			return oci_err(c, q, "missing");
		if ((r = oci_string(c, q, v, &s)) < 0 || (r = oci_abs_path(c, q, s, NULL, &dev->path)) < 0)
			return r;
		if (!strcmp(dev->path, "/"))
			return oci_err(c, q, "\"/\" is not a device node");
		for (size_t j = 0; j < i; j++)
			if (!strcmp(e->devices[j].path, dev->path))
				return oci_err(c, q, "%s is given twice (linux.devices[%zu])", dev->path, j);
		oci_path(q, sizeof(q), "%s.type", p);
		if (!(v = oci_field(d, "type")))
			return oci_err(c, q, "missing (c, b, u or p)");
		if ((r = oci_string(c, q, v, &s)) < 0)
			return r;
		if (strlen(s) != 1 || !strchr("cbup", s[0]))
			return oci_err(c, q, "\"%.16s\" is not a device type (c, b, u, p)", s);
		dev->type = s[0];
		if (dev->type != 'p') {
			static const char *const nums[] = { "major", "minor" };
			uint32_t *out[] = { &dev->major, &dev->minor };
			for (size_t k = 0; k < ARRAY_LEN(nums); k++) {
				oci_path(q, sizeof(q), "%s.%s", p, nums[k]);
				if (!(v = oci_field(d, nums[k])))
					return oci_err(c, q, "missing (a %s device has numbers)", dev->type == 'b' ? "block" : "character");
				if ((r = oci_u32(c, q, v, out[k])) < 0)
					return r;
			}
		}
		oci_path(q, sizeof(q), "%s.fileMode", p);
		if ((v = oci_field(d, "fileMode"))) {
			unsigned ifmt = dev->type == 'b' ? S_IFBLK : dev->type == 'p' ? S_IFIFO : S_IFCHR;
			uint64_t mode;
			/* podman writes stat's st_mode, the type's bits with the
			 * permissions (020666 for a character device): runc and
			 * crun take them where they agree with type */
			if ((r = oci_u64(c, q, v, S_IFMT | 07777, &mode)) < 0)
				return r;
			if ((mode & S_IFMT) && (mode & S_IFMT) != ifmt)
				return oci_err(c, q, "%#llo: its file type bits are not those of type %c (%#o)",
					       (unsigned long long)mode, dev->type, ifmt);
			dev->file_mode = (uint32_t)(mode & 07777);
			dev->has_file_mode = true;
		}
		oci_path(q, sizeof(q), "%s.uid", p);
		if ((v = oci_field(d, "uid")) && (r = oci_u32(c, q, v, &dev->uid)) < 0)
			return r;
		dev->has_uid = v != NULL;
		oci_path(q, sizeof(q), "%s.gid", p);
		if ((v = oci_field(d, "gid")) && (r = oci_u32(c, q, v, &dev->gid)) < 0)
			return r;
		dev->has_gid = v != NULL;
	}
	return 0;
}

/* What the device rules leave of a device's access, rules in order over
 * an allow-all start (the device cgroup's reading). */
static void device_access(const struct isd_oci_extra *e, const struct isd_oci_device *d, bool *r, bool *w)
{
	char type = d->type == 'u' ? 'c' : d->type;

	*r = *w = true;
	for (size_t i = 0; i < e->n_device_rules; i++) {
		const struct isd_oci_device_rule *rule = &e->device_rules[i];

		if ((rule->type != 'a' && rule->type != type) || (rule->major >= 0 && rule->major != d->major) ||
		    (rule->minor >= 0 && rule->minor != d->minor))
			continue;
		if (strchr(rule->access, 'r'))
			*r = rule->allow;
		if (strchr(rule->access, 'w'))
			*w = rule->allow;
	}
}

int oci_bind_devices(struct oci_ctx *c)
{
	struct isd_oci_extra *e = c->extra;

	for (size_t i = 0; i < e->n_devices; i++) {
		const struct isd_oci_device *d = &e->devices[i];
		_cleanup_free_ char *what = NULL;
		const struct isd_device *bound;
		mode_t want = d->type == 'b' ? S_IFBLK : S_IFCHR;
		char p[64];
		struct stat st;
		bool r, w;
		int err;

		oci_path(p, sizeof(p), "linux.devices[%zu]", i);
		what = isd_xasprintf("%s: %s", c->cfg, p);
		if (d->type == 'p')
			return oci_err(c, p, "a FIFO (type p) is not supported: isd-runtime binds host device nodes");
		device_access(e, d, &r, &w);
		/* no device cgroup to narrow it: what the rules deny is refused,
		 * a denied write makes the bind read-only (src/device.c) */
		if (!r)
			return oci_err(c, p, "%s is denied reading by linux.resources.devices: allow it or leave it out "
				       "(isd-runtime has no device cgroup)", d->path);
		if (stat(d->path, &st) == 0 && S_ISDIR(st.st_mode))
			return oci_err(c, p, "the host's %s is a directory, not a device node", d->path);
		if ((err = isd_device_add(c->spec, d->path, d->path, w ? "rw" : "r", what, c->cfg)) < 0)
			return oci_visible_error(err);
		for (bound = NULL, err = 0; (size_t)err < c->spec->n_devices; err++)
			if (!strcmp(c->spec->devices[err].path, d->path))
				bound = &c->spec->devices[err];
		if (!bound || bound->type != want || bound->rdev != makedev(d->major, d->minor))
			return oci_err(c, p, "the host's %s is not the %s device %u:%u the config names "
				       "(isd-runtime binds the host's node at that path)", d->path,
				       want == S_IFBLK ? "block" : "character", d->major, d->minor);
		if (d->has_file_mode && stat(bound->host, &st) == 0 && (st.st_mode & 07777) != d->file_mode)
			oci_note(c, p, "fileMode %04o not applied: a bound node keeps the host's mode %04o", d->file_mode,
				 (unsigned)(st.st_mode & 07777));
	}
	return 0;
}
