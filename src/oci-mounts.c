/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.json: mounts.  Every option is known or refused: an option isd
 * passed on unread could be one that weakens the mount. */
#define _GNU_SOURCE
#include "oci-config.h"
#include "isd/util.h"

#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif
#ifndef MS_LAZYTIME
#define MS_LAZYTIME (1 << 25)
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	const char *name;
	unsigned long set, clear;
} flag_options[] = {
	{ "defaults", 0, 0 },
	{ "ro", MS_RDONLY, 0 },
	{ "rw", 0, MS_RDONLY },
	{ "nosuid", MS_NOSUID, 0 },
	{ "suid", 0, MS_NOSUID },
	{ "nodev", MS_NODEV, 0 },
	{ "dev", 0, MS_NODEV },
	{ "noexec", MS_NOEXEC, 0 },
	{ "exec", 0, MS_NOEXEC },
	{ "sync", MS_SYNCHRONOUS, 0 },
	{ "async", 0, MS_SYNCHRONOUS },
	{ "dirsync", MS_DIRSYNC, 0 },
	{ "mand", MS_MANDLOCK, 0 },
	{ "nomand", 0, MS_MANDLOCK },
	{ "noatime", MS_NOATIME, 0 },
	{ "atime", 0, MS_NOATIME },
	{ "nodiratime", MS_NODIRATIME, 0 },
	{ "diratime", 0, MS_NODIRATIME },
	{ "relatime", MS_RELATIME, 0 },
	{ "norelatime", 0, MS_RELATIME },
	{ "strictatime", MS_STRICTATIME, 0 },
	{ "nostrictatime", 0, MS_STRICTATIME },
	{ "lazytime", MS_LAZYTIME, 0 },
	{ "nolazytime", 0, MS_LAZYTIME },
	{ "nosymfollow", MS_NOSYMFOLLOW, 0 },
	{ "symfollow", 0, MS_NOSYMFOLLOW },
};

static const struct {
	const char *name;
	unsigned long flags;
} propagation_options[] = {
	{ "shared", MS_SHARED },	 { "rshared", MS_SHARED | MS_REC },
	{ "slave", MS_SLAVE },		 { "rslave", MS_SLAVE | MS_REC },
	{ "private", MS_PRIVATE },	 { "rprivate", MS_PRIVATE | MS_REC },
	{ "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
};

/* Options with "=" each file system takes, passed on as data. */
static const char *const tmpfs_data[] = { "size", "mode", "uid", "gid", "nr_inodes", "nr_blocks", "huge", NULL };
static const char *const devpts_data[] = { "newinstance", "ptmxmode", "mode", "gid", "uid", "max", NULL };
static const char *const proc_data[] = { "hidepid", "subset", "gid", NULL };
static const char *const cgroup_data[] = { "nsdelegate", "memory_recursiveprot", "favordynmods", NULL };
static const char *const no_data[] = { NULL };

static const struct {
	const char *type;
	enum isd_oci_mount_type t;
	const char *const *data;
} types[] = {
	{ "tmpfs", ISD_OCI_MOUNT_TMPFS, tmpfs_data },	{ "proc", ISD_OCI_MOUNT_PROC, proc_data },
	{ "sysfs", ISD_OCI_MOUNT_SYSFS, no_data },	{ "devpts", ISD_OCI_MOUNT_DEVPTS, devpts_data },
	{ "mqueue", ISD_OCI_MOUNT_MQUEUE, no_data },	{ "cgroup", ISD_OCI_MOUNT_CGROUP, cgroup_data },
	{ "cgroup2", ISD_OCI_MOUNT_CGROUP, cgroup_data }, { "bind", ISD_OCI_MOUNT_BIND, no_data },
};

/* tmpfs's size: N with k, m, g, t (binary), or a percentage of RAM. */
static int tmpfs_size(const char *s, uint64_t *out)
{
	uint64_t v = 0, mult = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	switch (*p) {
	case '\0':
		break;
	case '%':
		if (p[1] || v > 100)
			return -EINVAL;
		*out = 0; /* the kernel's share of RAM: not a byte count */
		return 0;
	case 'k': case 'K': mult = UINT64_C(1) << 10; break;
	case 'm': case 'M': mult = UINT64_C(1) << 20; break;
	case 'g': case 'G': mult = UINT64_C(1) << 30; break;
	case 't': case 'T': mult = UINT64_C(1) << 40; break;
	default:
		return -EINVAL;
	}
	if (*p && *p != '%' && p[1])
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*out = v * mult;
	return 0;
}

static int append_data(char **data, const char *opt)
{
	if (*data) {
		char *joined = isd_xasprintf("%s,%s", *data, opt);
		free(*data);
		*data = joined;
	} else {
		*data = isd_xstrdup(opt);
	}
	return 0;
}

static int data_option(struct oci_ctx *c, const char *path, struct isd_oci_mount *m, const char *const *allowed,
		       const char *opt, char **data)
{
	const char *eq = strchr(opt, '=');
	size_t klen = eq ? (size_t)(eq - opt) : strlen(opt);
	bool ok = false;

	for (size_t i = 0; allowed[i] && !ok; i++)
		ok = strlen(allowed[i]) == klen && !strncmp(allowed[i], opt, klen);
	/* A bind's key=value options: runc and crun pass them as data, which
	 * the kernel ignores for a bind (crun's open_tree does not even take
	 * it), so they are read and left out the same way (mounts' mode= and
	 * size= the suite gives every mount).  Not a bare word: every mount
	 * flag is one, and a word isd does not know (a misspelt "nosiud", a
	 * newer runtime's flag such as crun's "rnoatime") left out would be a
	 * setting dropped where runc or crun apply it.  Nor idmap=, which
	 * crun applies (an idmapped mount of its own map). */
	if (!ok && m->type == ISD_OCI_MOUNT_BIND && eq && klen > 0 && !(klen == 5 && !strncmp(opt, "idmap", 5)) &&
	    !(klen == 6 && !strncmp(opt, "ridmap", 6)) && !strchr(opt, ','))
		return append_data(data, opt);
	if (!ok)
		return oci_err(c, path, "\"%.64s\" is not a mount option isd knows for this type", opt);
	if (strchr(opt, ','))
		return oci_err(c, path, "\"%.64s\": a comma would smuggle in another option", opt);
	/* numbers where the kernel takes numbers: a clear error here, not EINVAL at mount */
	if (eq && (!strncmp(opt, "uid", klen) || !strncmp(opt, "gid", klen) || !strncmp(opt, "nr_inodes", klen) ||
		   !strncmp(opt, "max", klen)) && (!eq[1] || strspn(eq + 1, "0123456789") != strlen(eq + 1)))
		return oci_err(c, path, "\"%.64s\": not a number", opt);
	if (m->type == ISD_OCI_MOUNT_TMPFS && eq && !strncmp(opt, "size", klen) &&
	    tmpfs_size(eq + 1, &m->size) < 0)
		return oci_err(c, path, "\"%.64s\": not a size (N, Nk, Nm, Ng, Nt or N%%)", opt);
	if (m->type == ISD_OCI_MOUNT_TMPFS && eq && !strncmp(opt, "mode", klen)) {
		if (isd_parse_octal_mode(eq + 1, &m->mode) < 0)
			return oci_err(c, path, "\"%.64s\": not an octal mode up to 7777", opt);
		m->has_mode = true;
	}
	return append_data(data, opt);
}

static int mount_option(struct oci_ctx *c, const char *path, struct isd_oci_mount *m, const char *const *data_ok,
			const char *opt, char **data)
{
	static const char *const refused[][2] = {
		{ "idmap", "idmapped mounts are not supported" },
		{ "ridmap", "idmapped mounts are not supported" },
		{ "rro", "recursive mount attributes are not supported" },
		{ "rrw", "recursive mount attributes are not supported" },
		{ "rnosuid", "recursive mount attributes are not supported" },
		{ "rnodev", "recursive mount attributes are not supported" },
		{ "rnoexec", "recursive mount attributes are not supported" },
		{ "remount", "a remount changes a mount isd did not make" },
		{ "move", "a move takes a mount isd did not make" },
		{ "copy-symlink", "not supported" },
		{ "z", "SELinux relabelling is the engine's" },
		{ "Z", "SELinux relabelling is the engine's" },
	};

	for (size_t i = 0; i < ARRAY_LEN(flag_options); i++)
		if (!strcmp(opt, flag_options[i].name)) {
			m->flags = (m->flags & ~flag_options[i].clear) | flag_options[i].set;
			return 0;
		}
	for (size_t i = 0; i < ARRAY_LEN(propagation_options); i++)
		if (!strcmp(opt, propagation_options[i].name)) {
			m->propagation = propagation_options[i].flags;
			return 0;
		}
	if (!strcmp(opt, "bind") || !strcmp(opt, "rbind"))
		return 0; /* read with the type */
	if (!strcmp(opt, "tmpcopyup") || !strcmp(opt, "notmpcopyup")) {
		if (m->type != ISD_OCI_MOUNT_TMPFS)
			return oci_err(c, path, "\"%s\" is for tmpfs mounts", opt);
		m->copy_up = !strcmp(opt, "tmpcopyup");
		return 0;
	}
	for (size_t i = 0; i < ARRAY_LEN(refused); i++)
		if (!strcmp(opt, refused[i][0]))
			return oci_err(c, path, "\"%s\": %s", opt, refused[i][1]);
	if (!*opt)
		return oci_err(c, path, "empty option");
	return data_option(c, path, m, data_ok, opt, data);
}

static int mount_type(struct oci_ctx *c, const char *path, struct json_object *o, bool bind_opt,
		      struct isd_oci_mount *m, const char *const **data_ok)
{
	struct json_object *v = oci_field(o, "type");
	char p[256];
	const char *s = NULL;
	int r;

	oci_path(p, sizeof(p), "%s.type", path);
	if (v && (r = oci_string(c, p, v, &s)) < 0)
		return r;
	/* runc's rule: a "bind" option makes it a bind, whatever the type says */
	if (bind_opt) {
		m->type = ISD_OCI_MOUNT_BIND;
		*data_ok = no_data;
		return 0;
	}
	if (!s || !*s || !strcmp(s, "none"))
		return oci_err(c, p, "missing (and no \"bind\" or \"rbind\" option)");
	for (size_t i = 0; i < ARRAY_LEN(types); i++)
		if (!strcmp(s, types[i].type)) {
			m->type = types[i].t;
			*data_ok = types[i].data;
			return 0;
		}
	return oci_err(c, p, "\"%.64s\" is not supported (bind, tmpfs, proc, sysfs, devpts, mqueue, cgroup)", s);
}

static int parse_mount(struct oci_ctx *c, const char *path, struct json_object *o, struct isd_oci_mount *m)
{
	static const char *const known[] = { "destination", "source", "type", "options", "uidMappings",
					     "gidMappings", NULL };
	const char *const *data_ok = no_data;
	_cleanup_strv_ char **options = NULL;
	struct json_object *v;
	bool bind_opt = false;
	char p[256];
	const char *s;
	int r;

	if ((r = oci_want(c, path, o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, path, o, known);
	if (oci_field(o, "uidMappings") || oci_field(o, "gidMappings")) {
		oci_path(p, sizeof(p), "%s.%s", path, oci_field(o, "uidMappings") ? "uidMappings" : "gidMappings");
		return oci_err(c, p, "idmapped mounts are not supported");
	}
	oci_path(p, sizeof(p), "%s.destination", path);
	if (!(v = oci_field(o, "destination")))
		return oci_err(c, p, "missing");
	/* runc reads a relative destination as below "/" */
	if ((r = oci_string(c, p, v, &s)) < 0 || (r = oci_abs_path(c, p, s, "/", &m->destination)) < 0)
		return r;
	if (!strcmp(m->destination, "/"))
		return oci_err(c, p, "a mount over \"/\" would hide root.path");
	oci_path(p, sizeof(p), "%s.options", path);
	if ((v = oci_field(o, "options")) && (r = oci_strv(c, p, v, true, &options)) < 0)
		return r;
	for (size_t i = 0; options && options[i]; i++)
		if (!strcmp(options[i], "bind") || !strcmp(options[i], "rbind")) {
			bind_opt = true;
			m->recursive |= !strcmp(options[i], "rbind");
		}
	if ((r = mount_type(c, path, o, bind_opt, m, &data_ok)) < 0)
		return r;
	for (size_t i = 0; options && options[i]; i++) {
		oci_path(p, sizeof(p), "%s.options[%zu]", path, i);
		if ((r = mount_option(c, p, m, data_ok, options[i], &m->data)) < 0)
			return r;
	}

	oci_path(p, sizeof(p), "%s.source", path);
	v = oci_field(o, "source");
	if (m->type == ISD_OCI_MOUNT_BIND) {
		if (!v)
			return oci_err(c, p, "missing (the host path to bind)");
		if ((r = oci_string(c, p, v, &s)) < 0 || (r = oci_abs_path(c, p, s, c->extra->bundle, &m->source)) < 0)
			return r;
	} else if (v) {
		if ((r = oci_string(c, p, v, &s)) < 0)
			return r;
		if (*s)
			m->source = isd_xstrdup(s);
	}
	return 0;
}

int oci_parse_mounts(struct oci_ctx *c, struct json_object *o)
{
	struct isd_oci_extra *e = c->extra;
	char p[64];
	size_t n;
	int r;

	if ((r = oci_array(c, "mounts", o, &n)) < 0)
		return r;
	e->mounts = isd_xcalloc(n ? n : 1, sizeof(*e->mounts));
	for (size_t i = 0; i < n; i++) {
		oci_path(p, sizeof(p), "mounts[%zu]", i);
		e->n_mounts++;
		if ((r = parse_mount(c, p, json_object_array_get_idx(o, i), &e->mounts[i])) < 0)
			return r;
	}
	return 0;
}
