/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CDI spec files (src/cdi.h): parsed and checked whole with json-c, then
 * the requested device's edits gathered.  A spec is host configuration,
 * yet its strings reach messages on a terminal, so they are shown through
 * isd's visible-text helper, and a spec file others could write is not
 * read.
 */
#define _GNU_SOURCE
#include "cdi.h"
#include "isd/util.h"
#include "isd/visible.h"

#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* ---- names ---- */

static bool name_ok(const char *s, size_t len, const char *extra)
{
	if (!len || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr(extra, c)) || !c)
			return false;
	}
	return true;
}

static bool kind_ok(const char *kind)
{
	const char *slash = strchr(kind, '/');

	return slash && name_ok(kind, (size_t)(slash - kind), "_.-") && name_ok(slash + 1, strlen(slash + 1), "_.-");
}

bool isd_cdi_is_request(const char *arg)
{
	const char *slash = strchr(arg, '/'), *eq = strchr(arg, '=');
	return arg[0] != '/' && slash && eq && slash < eq;
}

int isd_cdi_parse_request(const char *arg, char **kind, char **name)
{
	const char *eq = strchr(arg, '=');
	_cleanup_free_ char *k = eq ? strndup(arg, (size_t)(eq - arg)) : NULL;

	if (!k || !kind_ok(k) || !name_ok(eq + 1, strlen(eq + 1), "_.:-"))
		return isd_error(0, "--device %s: not a CDI device name (expected VENDOR/CLASS=NAME, e.g. nvidia.com/gpu=all, "
				    "or a path such as /dev/dri)", arg);
	*kind = isd_steal_ptr(k);
	*name = isd_xstrdup(eq + 1);
	return 0;
}

/* ---- one spec ---- */

struct ctx {
	const char *file;
	char where[160]; /* JSON path of the value being read */
};

static int bad(const struct ctx *c, const char *value, const char *why)
{
	_cleanup_free_ char *v = value ? isd_visible_str(value) : NULL;

	return isd_error(0, "CDI spec %s: %s%s%s%s: %s", c->file, c->where, v ? " \"" : "", v ? v : "", v ? "\"" : "", why);
}

static void at(struct ctx *c, const char *parent, const char *key, int index)
{
	char buf[160];

	if (index >= 0)
		snprintf(buf, sizeof(buf), "%s%s%s[%d]", parent, *parent ? "." : "", key, index);
	else
		snprintf(buf, sizeof(buf), "%s%s%s", parent, *parent ? "." : "", key);
	memcpy(c->where, buf, sizeof(buf));
}

/* A string without NUL bytes (JSON's \u0000 would cut a C string short). */
static int get_string(struct ctx *c, json_object *v, char **out)
{
	if (!json_object_is_type(v, json_type_string))
		return bad(c, NULL, "expected a string");
	if ((size_t)json_object_get_string_len(v) != strlen(json_object_get_string(v)))
		return bad(c, NULL, "holds a NUL byte");
	*out = isd_xstrdup(json_object_get_string(v));
	return 0;
}

static int get_path(struct ctx *c, json_object *v, char **out)
{
	_cleanup_free_ char *s = NULL, *norm = NULL;
	int r = get_string(c, v, &s);

	if (r < 0)
		return r;
	if (s[0] != '/' || isd_normalize_abs_path(s, &norm) < 0)
		return bad(c, s, "must be an absolute path without '..'");
	*out = isd_steal_ptr(norm);
	return 0;
}

/* Every key of o must be one of known (NULL-terminated). */
static int known_keys(struct ctx *c, json_object *o, const char *const *known)
{
	json_object_object_foreach(o, key, val) {
		bool found = false;
		(void)val;
		for (size_t i = 0; known[i] && !found; i++)
			found = !strcmp(key, known[i]);
		if (!found) {
			_cleanup_free_ char *k = isd_visible_str(key);
			char why[300];
			snprintf(why, sizeof(why), "unknown key \"%s\": isd does not know what it asks for, and will not give "
						   "the device without it", k);
			return bad(c, NULL, why);
		}
	}
	return 0;
}

/* o is an object of only the known keys; parent gets its place. */
static int object_with(struct ctx *c, json_object *o, const char *const *known, char parent[160])
{
	memcpy(parent, c->where, 160);
	if (!json_object_is_type(o, json_type_object))
		return bad(c, NULL, "expected an object");
	return known_keys(c, o, known);
}

static int parse_node(struct ctx *c, json_object *o, struct isd_cdi_node *n)
{
	static const char *const keys[] = {"path", "hostPath", "type", "major", "minor", "fileMode", "permissions",
					   "uid", "gid", NULL};
	char parent[160];
	json_object *v;
	int r;

	if ((r = object_with(c, o, keys, parent)) < 0)
		return r;
	at(c, parent, "path", -1);
	if (!json_object_object_get_ex(o, "path", &v))
		return bad(c, NULL, "missing");
	if ((r = get_path(c, v, &n->path)) < 0)
		return r;
	at(c, parent, "hostPath", -1);
	if (json_object_object_get_ex(o, "hostPath", &v) && (r = get_path(c, v, &n->host_path)) < 0)
		return r;
	at(c, parent, "permissions", -1);
	if (json_object_object_get_ex(o, "permissions", &v) && (r = get_string(c, v, &n->permissions)) < 0)
		return r;
	at(c, parent, "type", -1);
	if (json_object_object_get_ex(o, "type", &v)) {
		const char *t = json_object_get_string(v);
		if (!json_object_is_type(v, json_type_string) || (strcmp(t, "c") && strcmp(t, "b") && strcmp(t, "u")))
			return bad(c, t, "expected \"c\" or \"b\"");
		n->type = t[0] == 'u' ? 'c' : t[0];
	}
	for (int k = 0; k < 2; k++) {
		at(c, parent, k ? "minor" : "major", -1);
		if (!json_object_object_get_ex(o, k ? "minor" : "major", &v))
			continue;
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 || json_object_get_int64(v) > 0xfffff)
			return bad(c, NULL, "expected a device number");
		*(k ? &n->minor : &n->major) = (unsigned)json_object_get_int64(v);
		n->has_number = true;
	}
	return 0;
}

static int parse_mount(struct ctx *c, json_object *o, struct isd_cdi_mount *m)
{
	static const char *const keys[] = {"hostPath", "containerPath", "options", "type", NULL};
	/* Propagation and atime are isd's own choice; isd binds nosuid and
	 * nodev always. */
	static const char *const harmless[] = {"bind", "rbind", "nosuid", "nodev", "noexec", "exec", "rw",
					       "private", "rprivate", "slave", "rslave", "shared", "rshared",
					       "relatime", "norelatime", "noatime", "strictatime", NULL};
	char parent[160];
	json_object *v;
	int r;

	if ((r = object_with(c, o, keys, parent)) < 0)
		return r;
	for (int k = 0; k < 2; k++) {
		at(c, parent, k ? "containerPath" : "hostPath", -1);
		if (!json_object_object_get_ex(o, k ? "containerPath" : "hostPath", &v))
			return bad(c, NULL, "missing");
		if ((r = get_path(c, v, k ? &m->container_path : &m->host_path)) < 0)
			return r;
	}
	at(c, parent, "type", -1);
	if (json_object_object_get_ex(o, "type", &v) &&
	    (!json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), "bind")))
		return bad(c, json_object_get_string(v), "isd makes only bind mounts of a CDI spec");
	if (!json_object_object_get_ex(o, "options", &v))
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return bad(c, NULL, "options: expected an array of strings");
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *opt = json_object_array_get_idx(v, i);
		const char *s = json_object_get_string(opt);
		bool ok = false;

		at(c, parent, "options", (int)i);
		if (!json_object_is_type(opt, json_type_string))
			return bad(c, NULL, "expected a string");
		if (!strcmp(s, "ro") || !strcmp(s, "readonly")) {
			m->readonly = true;
			continue;
		}
		for (size_t k = 0; harmless[k] && !ok; k++)
			ok = !strcmp(s, harmless[k]);
		if (!ok)
			return bad(c, s, "a mount option isd does not give (isd binds nosuid and nodev, read-only with \"ro\")");
	}
	return 0;
}

static void describe_hook(json_object *o, char **out)
{
	json_object *name = NULL, *path = NULL;

	json_object_object_get_ex(o, "hookName", &name);
	json_object_object_get_ex(o, "path", &path);
	*out = isd_xasprintf("%s %s", name ? json_object_get_string(name) : "(unnamed)",
			     path ? json_object_get_string(path) : "(no path)");
}

/* Each element of the array o[key] (missing: none), its place in c. */
static int each_item(struct ctx *c, json_object *o, const char *parent, const char *key,
		     int (*fn)(struct ctx *c, json_object *item, struct isd_cdi_edits *e), struct isd_cdi_edits *e)
{
	json_object *v;
	int r;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	at(c, parent, key, -1);
	if (!json_object_is_type(v, json_type_array))
		return bad(c, NULL, "expected an array");
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		at(c, parent, key, (int)i);
		if ((r = fn(c, json_object_array_get_idx(v, i), e)) < 0)
			return r;
	}
	return 0;
}

static int env_item(struct ctx *c, json_object *item, struct isd_cdi_edits *e)
{
	char *s = NULL;
	int r = get_string(c, item, &s);

	if (r < 0)
		return r;
	isd_strv_push(&e->env, s);
	if (s[0] == '=' || !strchr(s, '=') || strcspn(s, "=") != strcspn(s, "=\t\n\r\x1b"))
		return bad(c, s, "expected NAME=VALUE");
	return 0;
}

static int node_item(struct ctx *c, json_object *item, struct isd_cdi_edits *e)
{
	e->nodes = isd_xrealloc(e->nodes, (e->n_nodes + 1) * sizeof(*e->nodes));
	memset(&e->nodes[e->n_nodes], 0, sizeof(*e->nodes));
	return parse_node(c, item, &e->nodes[e->n_nodes++]);
}

static int mount_item(struct ctx *c, json_object *item, struct isd_cdi_edits *e)
{
	e->mounts = isd_xrealloc(e->mounts, (e->n_mounts + 1) * sizeof(*e->mounts));
	memset(&e->mounts[e->n_mounts], 0, sizeof(*e->mounts));
	return parse_mount(c, item, &e->mounts[e->n_mounts++]);
}

static int parse_edits(struct ctx *c, json_object *o, struct isd_cdi_edits *e)
{
	static const char *const keys[] = {"env", "deviceNodes", "mounts", "hooks", "additionalGids", "intelRdt",
					   "netDevices", NULL};
	char parent[160];
	json_object *v;
	int r;

	if ((r = object_with(c, o, keys, parent)) < 0)
		return r;
	for (const char *const *k = (const char *const[]){"additionalGids", "intelRdt", "netDevices", NULL}; *k; k++) {
		at(c, parent, *k, -1);
		if (json_object_object_get_ex(o, *k, &v) && !(json_object_is_type(v, json_type_array) && !json_object_array_length(v)))
			return bad(c, NULL, "isd cannot give this (no groups beyond the caller's, no RDT class, no network "
					    "device in a sandbox), and will not give the device without it");
	}
	if (json_object_object_get_ex(o, "hooks", &v)) {
		at(c, parent, "hooks", -1);
		if (!json_object_is_type(v, json_type_array))
			return bad(c, NULL, "expected an array");
		if (json_object_array_length(v))
			describe_hook(json_object_array_get_idx(v, 0), &e->hook);
	}
	if ((r = each_item(c, o, parent, "env", env_item, e)) < 0 || (r = each_item(c, o, parent, "deviceNodes", node_item, e)) < 0)
		return r;
	return each_item(c, o, parent, "mounts", mount_item, e);
}

int isd_cdi_parse_spec(const char *text, const char *file, struct isd_cdi_spec *out)
{
	static const char *const keys[] = {"cdiVersion", "kind", "annotations", "devices", "containerEdits", NULL};
	static const char *const dev_keys[] = {"name", "annotations", "containerEdits", NULL};
	struct ctx c = {.file = file};
	enum json_tokener_error jerr;
	json_object *root = json_tokener_parse_verbose(text, &jerr), *v, *devs;
	int r = 0;

	memset(out, 0, sizeof(*out));
	out->file = isd_xstrdup(file);
	if (!root)
		return isd_error(0, "CDI spec %s: not JSON (%s); isd reads JSON specs only", file, json_tokener_error_desc(jerr));
	if (!json_object_is_type(root, json_type_object)) {
		r = bad(&c, NULL, "expected an object");
		goto out;
	}
	if ((r = known_keys(&c, root, keys)) < 0)
		goto out;
	at(&c, "", "cdiVersion", -1);
	if (!json_object_object_get_ex(root, "cdiVersion", &v) || !json_object_is_type(v, json_type_string)) {
		r = bad(&c, NULL, "missing, or not a string");
		goto out;
	}
	at(&c, "", "kind", -1);
	if (!json_object_object_get_ex(root, "kind", &v) || (r = get_string(&c, v, &out->kind)) < 0) {
		r = r < 0 ? r : bad(&c, NULL, "missing");
		goto out;
	}
	if (!kind_ok(out->kind)) {
		r = bad(&c, out->kind, "not a kind VENDOR/CLASS (such as nvidia.com/gpu)");
		goto out;
	}
	at(&c, "", "containerEdits", -1);
	if (json_object_object_get_ex(root, "containerEdits", &v) && (r = parse_edits(&c, v, &out->edits)) < 0)
		goto out;
	at(&c, "", "devices", -1);
	if (!json_object_object_get_ex(root, "devices", &devs) || !json_object_is_type(devs, json_type_array) ||
	    !json_object_array_length(devs)) {
		r = bad(&c, NULL, "missing, or not a list of devices");
		goto out;
	}
	out->devices = isd_xcalloc(json_object_array_length(devs), sizeof(*out->devices));
	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		json_object *d = json_object_array_get_idx(devs, i);
		struct isd_cdi_device *dev = &out->devices[i];
		char parent[160];

		out->n_devices = i + 1;
		at(&c, "", "devices", (int)i);
		memcpy(parent, c.where, sizeof(parent));
		if (!json_object_is_type(d, json_type_object)) {
			r = bad(&c, NULL, "expected an object");
			goto out;
		}
		if ((r = known_keys(&c, d, dev_keys)) < 0)
			goto out;
		at(&c, parent, "name", -1);
		if (!json_object_object_get_ex(d, "name", &v) || (r = get_string(&c, v, &dev->name)) < 0) {
			r = r < 0 ? r : bad(&c, NULL, "missing");
			goto out;
		}
		if (!name_ok(dev->name, strlen(dev->name), "_.:-")) {
			r = bad(&c, dev->name, "not a device name (letters, digits, _ . : -)");
			goto out;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(out->devices[j].name, dev->name)) {
				r = bad(&c, dev->name, "the same name as an earlier device");
				goto out;
			}
		at(&c, parent, "containerEdits", -1);
		if (!json_object_object_get_ex(d, "containerEdits", &v)) {
			r = bad(&c, NULL, "missing");
			goto out;
		}
		if ((r = parse_edits(&c, v, &dev->edits)) < 0)
			goto out;
	}
out:
	json_object_put(root);
	return r;
}

void isd_cdi_edits_free(struct isd_cdi_edits *e)
{
	for (size_t i = 0; i < e->n_nodes; i++) {
		free(e->nodes[i].path);
		free(e->nodes[i].host_path);
		free(e->nodes[i].permissions);
	}
	free(e->nodes);
	for (size_t i = 0; i < e->n_mounts; i++) {
		free(e->mounts[i].host_path);
		free(e->mounts[i].container_path);
	}
	free(e->mounts);
	isd_strv_free(e->env);
	free(e->hook);
	memset(e, 0, sizeof(*e));
}

void isd_cdi_spec_free(struct isd_cdi_spec *spec)
{
	free(spec->file);
	free(spec->kind);
	isd_cdi_edits_free(&spec->edits);
	for (size_t i = 0; i < spec->n_devices; i++) {
		free(spec->devices[i].name);
		isd_cdi_edits_free(&spec->devices[i].edits);
	}
	free(spec->devices);
	memset(spec, 0, sizeof(*spec));
}

/* ---- the spec directories ---- */

char **isd_cdi_default_dirs(const char *env_value)
{
	char **dirs = NULL;

	if (env_value && env_value[0]) {
		_cleanup_free_ char *copy = isd_xstrdup(env_value);
		char *save = NULL;
		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
			isd_strv_push(&dirs, isd_xstrdup(d));
	}
	if (!dirs) {
		isd_strv_push(&dirs, isd_xstrdup("/etc/cdi"));
		isd_strv_push(&dirs, isd_xstrdup("/var/run/cdi"));
	}
	return dirs;
}

static void append_edits(struct isd_cdi_edits *to, const struct isd_cdi_edits *from)
{
	to->nodes = isd_xrealloc(to->nodes, (to->n_nodes + from->n_nodes + 1) * sizeof(*to->nodes));
	for (size_t i = 0; i < from->n_nodes; i++) {
		const struct isd_cdi_node *n = &from->nodes[i];
		to->nodes[to->n_nodes++] = (struct isd_cdi_node){
			.path = isd_xstrdup(n->path), .host_path = n->host_path ? isd_xstrdup(n->host_path) : NULL,
			.permissions = n->permissions ? isd_xstrdup(n->permissions) : NULL, .type = n->type,
			.has_number = n->has_number, .major = n->major, .minor = n->minor};
	}
	to->mounts = isd_xrealloc(to->mounts, (to->n_mounts + from->n_mounts + 1) * sizeof(*to->mounts));
	for (size_t i = 0; i < from->n_mounts; i++) {
		const struct isd_cdi_mount *m = &from->mounts[i];
		bool dup = false;
		/* "all" gathered from its devices may name a mount twice */
		for (size_t j = 0; j < to->n_mounts && !dup; j++)
			dup = !strcmp(to->mounts[j].host_path, m->host_path) &&
			      !strcmp(to->mounts[j].container_path, m->container_path) && to->mounts[j].readonly == m->readonly;
		if (!dup)
			to->mounts[to->n_mounts++] = (struct isd_cdi_mount){.host_path = isd_xstrdup(m->host_path),
									     .container_path = isd_xstrdup(m->container_path),
									     .readonly = m->readonly};
	}
	for (size_t i = 0; from->env && from->env[i]; i++)
		isd_strv_push(&to->env, isd_xstrdup(from->env[i]));
	if (from->hook && !to->hook)
		to->hook = isd_xstrdup(from->hook);
}

/* A spec file must be as trustworthy as isd: root's or the caller's, and
 * writable by nobody else.  Read either way (only a spec of the requested
 * kind is refused for it); 1 when trusted, 0 when not. */
static int read_spec_file(int dirfd, const char *name, const char *file, char **text, char *why, size_t why_len)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return isd_error(-errno, "reading the CDI spec %s", file);
	if (!S_ISREG(st.st_mode))
		return isd_error(0, "reading the CDI spec %s: not a regular file", file);
	if (isd_read_fd(fd, text, NULL) < 0)
		return isd_error(-EIO, "reading the CDI spec %s", file);
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		snprintf(why, why_len, "owned by uid %u with mode %o, which others could write (fix: chown root and chmod go-w)",
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return 0;
	}
	return 1;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The kind a file names, without checking the rest (only specs of the
 * requested kind are checked whole). */
static bool file_kind_is(const char *text, const char *kind)
{
	json_object *root = json_tokener_parse(text), *k;
	bool same = root && json_object_is_type(root, json_type_object) && json_object_object_get_ex(root, "kind", &k) &&
		    json_object_is_type(k, json_type_string) && !strcmp(json_object_get_string(k), kind);

	json_object_put(root);
	return same;
}

struct found {
	struct isd_cdi_spec *specs;
	size_t n_specs;
	size_t *spec_dir; /* index of each spec's directory */
	char **yaml, **unreadable;
};

static void found_free(struct found *f)
{
	for (size_t i = 0; i < f->n_specs; i++)
		isd_cdi_spec_free(&f->specs[i]);
	free(f->specs);
	free(f->spec_dir);
	isd_strv_free(f->yaml);
	isd_strv_free(f->unreadable);
}

static int load_dir(const char *dir, size_t dir_index, const char *kind, struct found *f)
{
	_cleanup_strv_ char **names = NULL;
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;
	int r = 0;

	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : isd_error(-errno, "reading the CDI spec directory %s", dir);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len > 5 && !strcmp(de->d_name + len - 5, ".json"))
			isd_strv_push(&names, isd_xstrdup(de->d_name)), n++;
		else if ((len > 5 && !strcmp(de->d_name + len - 5, ".yaml")) || (len > 4 && !strcmp(de->d_name + len - 4, ".yml")))
			isd_strv_push(&f->yaml, isd_xasprintf("%s/%s", dir, de->d_name));
	}
	if (n)
		qsort(names, n, sizeof(*names), compare_names);
	for (size_t i = 0; r == 0 && i < n; i++) {
		_cleanup_free_ char *file = isd_xasprintf("%s/%s", dir, names[i]), *text = NULL;
		json_object *probe;

		char why[160] = "";
		int trusted = read_spec_file(dirfd(d), names[i], file, &text, why, sizeof(why));

		if (trusted < 0) {
			isd_strv_push(&f->unreadable, isd_xstrdup(file));
			continue;
		}
		probe = json_tokener_parse(text);
		json_object_put(probe);
		if (!probe)
			isd_strv_push(&f->unreadable, isd_xstrdup(file));
		if (!probe || !file_kind_is(text, kind))
			continue;
		if (!trusted) {
			r = isd_error(0, "reading the CDI spec %s of kind %s: %s", file, kind, why);
			break;
		}
		f->specs = isd_xrealloc(f->specs, (f->n_specs + 1) * sizeof(*f->specs));
		f->spec_dir = isd_xrealloc(f->spec_dir, (f->n_specs + 1) * sizeof(*f->spec_dir));
		r = isd_cdi_parse_spec(text, file, &f->specs[f->n_specs]);
		f->spec_dir[f->n_specs++] = dir_index;
	}
	closedir(d);
	return r;
}

/* One line of what was looked at, for a request nothing answered. */
static char *looked_at(char *const *dirs, const struct found *f)
{
	char *s = NULL;
	size_t len = 0, cap = 0;

	for (size_t i = 0; dirs[i]; i++) {
		isd_append(&s, &len, &cap, i ? ", " : "", i ? 2 : 0);
		isd_append(&s, &len, &cap, dirs[i], strlen(dirs[i]));
	}
	for (size_t i = 0; f->unreadable && f->unreadable[i]; i++) {
		isd_append(&s, &len, &cap, i ? ", " : "; not read: ", i ? 2 : 11);
		isd_append(&s, &len, &cap, f->unreadable[i], strlen(f->unreadable[i]));
	}
	for (size_t i = 0; f->yaml && f->yaml[i]; i++) {
		isd_append(&s, &len, &cap, i ? ", " : "; isd reads only .json specs, not ", i ? 2 : 34);
		isd_append(&s, &len, &cap, f->yaml[i], strlen(f->yaml[i]));
	}
	return s ? s : isd_xstrdup("");
}

int isd_cdi_resolve(char *const *dirs, const char *request, struct isd_cdi_edits *out, char **files)
{
	_cleanup_free_ char *kind = NULL, *name = NULL, *where = NULL, *names = NULL;
	struct found f = {0};
	/* the device of each name: its spec, or -1 where a later one of
	 * another directory replaced it */
	size_t n_all = 0, *pick_spec = NULL, *pick_dev = NULL, n_pick = 0;
	size_t names_len = 0, names_cap = 0, files_len = 0, files_cap = 0;
	bool *used = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	*files = NULL;
	r = isd_cdi_parse_request(request, &kind, &name);
	for (size_t i = 0; r == 0 && dirs[i]; i++)
		r = load_dir(dirs[i], i, kind, &f);
	if (r < 0)
		goto out;
	for (size_t s = 0; s < f.n_specs; s++)
		n_all += f.specs[s].n_devices;
	pick_spec = isd_xcalloc(n_all + 1, sizeof(size_t));
	pick_dev = isd_xcalloc(n_all + 1, sizeof(size_t));
	for (size_t s = 0; s < f.n_specs; s++)
		for (size_t d = 0; d < f.specs[s].n_devices; d++) {
			const char *dn = f.specs[s].devices[d].name;
			size_t k = 0;
			while (k < n_pick && strcmp(f.specs[pick_spec[k]].devices[pick_dev[k]].name, dn))
				k++;
			if (k < n_pick && f.spec_dir[pick_spec[k]] == f.spec_dir[s]) {
				r = isd_error(0, "--device %s: the CDI specs %s and %s both define %s=%s (fix: remove one)", request,
					      f.specs[pick_spec[k]].file, f.specs[s].file, kind, dn);
				goto out;
			}
			pick_spec[k] = s, pick_dev[k] = d;
			n_pick += k == n_pick;
		}
	if (!n_pick) {
		where = looked_at(dirs, &f);
		r = isd_error(0, "--device %s: no CDI spec of kind %s in %s (fix: generate one, e.g. nvidia-ctk cdi generate "
				 "--format=json --output=/etc/cdi/nvidia.json, or name its directory with --cdi-spec-dir)",
			      request, kind, where);
		goto out;
	}
	used = isd_xcalloc(f.n_specs, sizeof(bool));
	{
		bool all = !strcmp(name, "all"), any = false;
		for (size_t k = 0; k < n_pick; k++) {
			const struct isd_cdi_device *d = &f.specs[pick_spec[k]].devices[pick_dev[k]];
			isd_append(&names, &names_len, &names_cap, k ? ", " : "", k ? 2 : 0);
			isd_append(&names, &names_len, &names_cap, d->name, strlen(d->name));
			if (!strcmp(d->name, name))
				all = false;
		}
		for (size_t k = 0; k < n_pick; k++) {
			size_t s = pick_spec[k];
			const struct isd_cdi_device *d = &f.specs[s].devices[pick_dev[k]];
			if (!all && strcmp(d->name, name))
				continue;
			any = true;
			if (!used[s]) {
				used[s] = true;
				append_edits(out, &f.specs[s].edits);
				isd_append(files, &files_len, &files_cap, files_len ? ", " : "", files_len ? 2 : 0);
				isd_append(files, &files_len, &files_cap, f.specs[s].file, strlen(f.specs[s].file));
			}
			append_edits(out, &d->edits);
			if (out->hook) {
				_cleanup_free_ char *h = isd_visible_str(out->hook);
				r = isd_error(0, "--device %s: the CDI spec %s asks for the hook %s, a host program run on the "
						 "payload's behalf, which isd never does (fix: a spec without hooks; what the hook "
						 "would do, such as ldconfig, the payload can do itself)", request, f.specs[s].file, h);
				goto out;
			}
		}
		if (!any) {
			_cleanup_free_ char *v = isd_visible_str(names);
			r = isd_error(0, "--device %s: the CDI specs of kind %s have no device %s (they have: %s)", request, kind,
				      name, v);
		}
	}
out:
	if (r < 0) {
		isd_cdi_edits_free(out);
		free(*files);
		*files = NULL;
	}
	free(used);
	free(pick_spec);
	free(pick_dev);
	found_free(&f);
	return r;
}
