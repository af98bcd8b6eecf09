/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.json: the entry points, the top level, and the typed readers
 * every section uses (one error line naming the JSON path). */
#define _GNU_SOURCE
#include "json-util.h"
#include "oci-config.h"
#include "isd/util.h"
#include "isd/visible.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Messages quote the config's strings, and they reach a terminal: an
 * ESC sequence in a key or value is shown, never acted on. */
static char *visible_line(const char *cfg, const char *path, const char *msg)
{
	_cleanup_free_ char *line = isd_xasprintf("%s: %s: %s", cfg, path, msg);
	return isd_visible_str(line);
}

int oci_err(const struct oci_ctx *c, const char *path, const char *fmt, ...)
{
	_cleanup_free_ char *line = NULL;
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	line = visible_line(c->cfg, path, msg);
	return isd_error(0, "%s", line);
}

int oci_visible_error(int r)
{
	_cleanup_free_ char *line = isd_visible_str(isd_error_message());

	isd_error_raw(r, line);
	return r;
}

void oci_note(const struct oci_ctx *c, const char *path, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	/* a file of a million unknown keys must not become a million lines */
	if (isd_strv_len(c->extra->notes) >= OCI_MAX_NOTES) {
		c->extra->notes_left_out++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	isd_strv_push(&c->extra->notes, visible_line(c->cfg, path, msg));
}

void oci_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

struct json_object *oci_field(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	if (!obj || !json_object_is_type(obj, json_type_object) || !json_object_object_get_ex(obj, key, &v) ||
	    json_object_is_type(v, json_type_null))
		return NULL;
	return v;
}

void oci_unknown_keys(const struct oci_ctx *c, const char *path, struct json_object *obj,
		      const char *const *known)
{
	json_object_object_foreach(obj, key, val) {
		bool ok = false;
		(void)val;
		for (size_t i = 0; !ok && known[i]; i++)
			ok = !strcmp(key, known[i]);
		if (!ok)
			oci_note(c, path, "unknown property \"%.64s\" ignored (runtime-spec: unknown properties are ignored)",
				 key);
	}
}

int oci_want(const struct oci_ctx *c, const char *path, struct json_object *o, enum json_type type)
{
	static const char *const want[] = {
		[json_type_boolean] = "a boolean", [json_type_int] = "an integer",
		[json_type_object] = "an object",  [json_type_array] = "an array",
		[json_type_string] = "a string",
	};

	if (!json_object_is_type(o, type))
		return oci_err(c, path, "expected %s, got %s", want[type] ? want[type] : "?", isd_json_type_name(o));
	return 0;
}

int oci_string(const struct oci_ctx *c, const char *path, struct json_object *o, const char **out)
{
	int r = oci_want(c, path, o, json_type_string);
	size_t len;

	if (r < 0)
		return r;
	*out = json_object_get_string(o);
	len = (size_t)json_object_get_string_len(o);
	if (strlen(*out) != len)
		return oci_err(c, path, "string contains a NUL character");
	if (len > OCI_MAX_STRING)
		return oci_err(c, path, "string longer than %d bytes", OCI_MAX_STRING);
	return 0;
}

int oci_bool(const struct oci_ctx *c, const char *path, struct json_object *o, bool *out)
{
	int r = oci_want(c, path, o, json_type_boolean);

	if (r < 0)
		return r;
	*out = json_object_get_boolean(o);
	return 0;
}

/* json-c keeps integers beyond int64 as uint64 and saturates past 2^64-1:
 * harmless, a field whose range reaches UINT64_MAX reads that as
 * "unlimited", and every narrower one refuses it. */
int oci_u64(const struct oci_ctx *c, const char *path, struct json_object *o, uint64_t max, uint64_t *out)
{
	int r = oci_want(c, path, o, json_type_int);

	if (r < 0)
		return r;
	if (json_object_get_int64(o) < 0)
		return oci_err(c, path, "%" PRId64 " is negative", json_object_get_int64(o));
	*out = json_object_get_uint64(o);
	if (*out > max)
		return oci_err(c, path, "%" PRIu64 " is out of range (at most %" PRIu64 ")", *out, max);
	return 0;
}

int oci_i64(const struct oci_ctx *c, const char *path, struct json_object *o, int64_t min, int64_t max,
	    int64_t *out)
{
	int r = oci_want(c, path, o, json_type_int);
	int64_t v;

	if (r < 0)
		return r;
	v = json_object_get_int64(o);
	/* a value beyond INT64_MAX reads back as INT64_MAX */
	if (v == INT64_MAX && json_object_get_uint64(o) > (uint64_t)INT64_MAX)
		return oci_err(c, path, "%" PRIu64 " is out of range (at most %" PRId64 ")",
			       json_object_get_uint64(o), max);
	if (v < min || v > max)
		return oci_err(c, path, "%" PRId64 " is out of range (%" PRId64 "..%" PRId64 ")", v, min, max);
	*out = v;
	return 0;
}

int oci_u32(const struct oci_ctx *c, const char *path, struct json_object *o, uint32_t *out)
{
	uint64_t v;
	int r = oci_u64(c, path, o, UINT32_MAX, &v);

	if (r >= 0)
		*out = (uint32_t)v;
	return r;
}

int oci_array(const struct oci_ctx *c, const char *path, struct json_object *o, size_t *n)
{
	int r = oci_want(c, path, o, json_type_array);

	if (r < 0)
		return r;
	*n = json_object_array_length(o);
	if (*n > OCI_MAX_ITEMS)
		return oci_err(c, path, "more than %d entries", OCI_MAX_ITEMS);
	return 0;
}

int oci_strv(const struct oci_ctx *c, const char *path, struct json_object *o, bool allow_empty, char ***out)
{
	_cleanup_strv_ char **v = NULL;
	char p[256];
	size_t n;
	int r;

	if ((r = oci_array(c, path, o, &n)) < 0)
		return r;
	v = isd_xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		const char *s;

		oci_path(p, sizeof(p), "%s[%zu]", path, i);
		if ((r = oci_string(c, p, json_object_array_get_idx(o, i), &s)) < 0)
			return r;
		if (!*s && !allow_empty)
			return oci_err(c, p, "empty string");
		v[i] = isd_xstrdup(s);
	}
	isd_strv_free(*out);
	*out = isd_steal_ptr(v);
	return 0;
}

int oci_abs_path(const struct oci_ctx *c, const char *path, const char *s, const char *base, char **out)
{
	_cleanup_free_ char *joined = NULL;

	if (!*s)
		return oci_err(c, path, "empty path");
	if (strlen(s) >= OCI_MAX_PATH)
		return oci_err(c, path, "path longer than %d bytes", OCI_MAX_PATH - 1);
	/* a newline in a mount point would forge lines of /proc/self/mountinfo */
	for (const char *q = s; *q; q++)
		if ((unsigned char)*q < ' ' || *q == 0x7f)
			return oci_err(c, path, "the path holds a control character");
	if (s[0] != '/') {
		if (!base)
			return oci_err(c, path, "\"%.256s\" is not an absolute path", s);
		joined = isd_xasprintf("%s/%s", base, s);
		s = joined;
	}
	if (isd_normalize_abs_path(s, out) < 0)
		return oci_err(c, path, "\"%.256s\": a \"..\" component is not allowed", s);
	return 0;
}

/* ------------------------------------------------------------------ */

void isd_oci_extra_init(struct isd_oci_extra *extra)
{
	memset(extra, 0, sizeof(*extra));
}

static void hook_free(struct isd_oci_hook *h)
{
	free(h->path);
	isd_strv_free(h->args);
	isd_strv_free(h->env);
}

void isd_oci_extra_free(struct isd_oci_extra *e)
{
	free(e->bundle);
	free(e->config_path);
	free(e->container_id);
	free(e->oci_version);
	free(e->additional_gids);
	free(e->rlimits);
	free(e->apparmor_profile);
	free(e->selinux_label);
	free(e->domainname);
	for (size_t i = 0; i < e->n_mounts; i++) {
		free(e->mounts[i].source);
		free(e->mounts[i].destination);
		free(e->mounts[i].data);
	}
	free(e->mounts);
	for (size_t i = 0; i < ISD_OCI_NS_COUNT; i++)
		free(e->ns[i].path);
	for (size_t i = 0; i < e->n_devices; i++)
		free(e->devices[i].path);
	free(e->devices);
	free(e->device_rules);
	free(e->cgroups_path);
	free(e->cgroup_dir);
	free(e->cgroup_slice);
	free(e->cgroup_unit);
	free(e->seccomp);
	free(e->seccomp_origin);
	isd_strv_free(e->masked_paths);
	isd_strv_free(e->readonly_paths);
	isd_strv_free(e->sysctl);
	free(e->mount_label);
	for (size_t k = 0; k < ISD_OCI_HOOK_COUNT; k++) {
		for (size_t i = 0; i < e->hooks[k].n; i++)
			hook_free(&e->hooks[k].hooks[i]);
		free(e->hooks[k].hooks);
	}
	isd_strv_free(e->annotations);
	isd_strv_free(e->notes);
	memset(e, 0, sizeof(*e));
}

int oci_parse_json(const struct oci_ctx *c, const char *buf, size_t len, struct json_object **out)
{
	struct json_tokener *tok;
	struct json_object *root;
	enum json_tokener_error jerr;
	size_t end;

	if (len > ISD_READ_FILE_MAX || len > INT32_MAX)
		return isd_error(0, "%s: larger than %d bytes", c->cfg, ISD_READ_FILE_MAX);
	tok = json_tokener_new_ex(64);
	if (!tok)
		return isd_error(-ENOMEM, "%s: parsing", c->cfg);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr != json_tokener_success) {
		size_t line = 1;

		for (size_t i = 0; i < end && i < len; i++)
			line += buf[i] == '\n';
		json_object_put(root);
		return isd_error(0, "%s: invalid JSON near line %zu: %s", c->cfg, line,
				 jerr == json_tokener_continue ? "unexpected end of input"
							       : json_tokener_error_desc(jerr));
	}
	while (end < len && (buf[end] == ' ' || buf[end] == '\t' || buf[end] == '\r' || buf[end] == '\n'))
		end++;
	if (end != len) {
		json_object_put(root);
		return isd_error(0, "%s: invalid JSON: data after the end of the document", c->cfg);
	}
	*out = root;
	return 0;
}

static int parse_version(struct oci_ctx *c, struct json_object *root)
{
	struct json_object *v = oci_field(root, "ociVersion");
	const char *s;
	int r;

	if (!v)
		return oci_err(c, "ociVersion", "missing (e.g. \"1.1.0\")");
	if ((r = oci_string(c, "ociVersion", v, &s)) < 0)
		return r;
	/* 1.0.0-rc versions differ in shape (seccomp, rlimits); 1.x are
	 * compatible with each other. */
	if (strncmp(s, "1.", 2) || s[2] < '0' || s[2] > '9' || strstr(s, "-rc"))
		return oci_err(c, "ociVersion", "\"%.64s\" is not supported (isd-runtime reads runtime-spec 1.x)", s);
	c->extra->oci_version = isd_xstrdup(s);
	return 0;
}

static int parse_top(struct oci_ctx *c, struct json_object *root)
{
	static const char *const known[] = { "ociVersion", "process", "root",	 "hostname", "domainname",
					     "mounts",	   "hooks",   "annotations", "linux",	 "windows",
					     "solaris",	   "zos",     "vm",	     NULL };
	static const char *const other_platforms[] = { "windows", "solaris", "zos" };
	struct json_object *v;
	int r;

	if ((r = oci_want(c, "top level", root, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, "top level", root, known);
	if ((r = parse_version(c, root)) < 0)
		return r;
	if (oci_field(root, "vm"))
		return oci_err(c, "vm", "isd-runtime does not run containers in virtual machines");
	for (size_t i = 0; i < sizeof(other_platforms) / sizeof(other_platforms[0]); i++)
		if (oci_field(root, other_platforms[i]))
			oci_note(c, other_platforms[i], "ignored: isd-runtime runs Linux containers");
	if (!(v = oci_field(root, "root")))
		return oci_err(c, "root", "missing (the container's root file system)");
	if ((r = oci_parse_root(c, v)) < 0)
		return r;
	if (!(v = oci_field(root, "process")))
		return oci_err(c, "process", "missing (isd-runtime starts a process in every container)");
	if ((r = oci_parse_process(c, v)) < 0 || (r = oci_parse_hostname(c, root)) < 0)
		return r;
	if ((v = oci_field(root, "mounts")) && (r = oci_parse_mounts(c, v)) < 0)
		return r;
	if ((r = oci_parse_linux(c, oci_field(root, "linux"))) < 0)
		return r;
	if ((v = oci_field(root, "hooks")) && (r = oci_parse_hooks(c, v)) < 0)
		return r;
	if ((r = oci_parse_annotations(c, oci_field(root, "annotations"))) < 0)
		return r;
	return oci_finish(c);
}

int isd_oci_config_parse(const char *json, size_t len, const char *bundle_dir, const char *container_id,
			 unsigned flags, struct isd_spec *spec, struct isd_oci_extra *extra)
{
	struct oci_ctx c = { .flags = flags, .spec = spec, .extra = extra };
	struct json_object *root = NULL;
	_cleanup_free_ char *cwd = NULL, *joined = NULL;
	int r;

	if (!bundle_dir || !*bundle_dir)
		bundle_dir = ".";
	if (bundle_dir[0] != '/') {
		if (!(cwd = getcwd(NULL, 0)))
			return isd_error(-errno, "bundle %s: finding the working directory", bundle_dir);
		bundle_dir = joined = isd_xasprintf("%s/%s", cwd, bundle_dir);
	}
	if (isd_resolve_abs_path_lexically(bundle_dir, &extra->bundle) < 0)
		return isd_error(0, "bundle %s: not a usable path", bundle_dir);
	extra->config_path = isd_xasprintf("%s%sconfig.json", extra->bundle,
					   strcmp(extra->bundle, "/") ? "/" : "");
	c.cfg = extra->config_path;
	if (container_id)
		extra->container_id = isd_xstrdup(container_id);

	if ((r = oci_parse_json(&c, json, len, &root)) >= 0)
		r = parse_top(&c, root);
	if (r >= 0 && extra->notes_left_out)
		isd_strv_push(&extra->notes, isd_xasprintf("%s: %zu more notes left out", c.cfg, extra->notes_left_out));
	json_object_put(root);
	if (r < 0) {
		isd_spec_free(spec);
		isd_spec_init(spec);
		isd_oci_extra_free(extra);
		isd_oci_extra_init(extra);
	}
	return r;
}

int isd_oci_config_load(const char *bundle_dir, const char *container_id, unsigned flags,
			struct isd_spec *spec, struct isd_oci_extra *extra)
{
	_cleanup_free_ char *buf = NULL, *path = NULL;
	_cleanup_close_ int dfd = -1;
	size_t len;
	int r;

	if (!bundle_dir || !*bundle_dir)
		bundle_dir = ".";
	path = isd_xasprintf("%s/config.json", bundle_dir);
	dfd = open(bundle_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return isd_error(-errno, "opening the bundle %s", bundle_dir);
	if ((r = isd_read_file_at(dfd, "config.json", &buf, &len)) < 0) {
		if (r == -EFBIG)
			return isd_error(r, "reading %s (at most %d bytes)", path, ISD_READ_FILE_MAX);
		return isd_error(r, "reading %s", path);
	}
	return isd_oci_config_parse(buf, len, bundle_dir, container_id, flags, spec, extra);
}

const char *isd_oci_ns_name(enum isd_oci_ns ns)
{
	static const char *const names[ISD_OCI_NS_COUNT] = {
		[ISD_OCI_NS_PID] = "pid", [ISD_OCI_NS_NET] = "network", [ISD_OCI_NS_MNT] = "mount",
		[ISD_OCI_NS_IPC] = "ipc", [ISD_OCI_NS_UTS] = "uts",	[ISD_OCI_NS_USER] = "user",
		[ISD_OCI_NS_CGROUP] = "cgroup",
	};
	return (unsigned)ns < ISD_OCI_NS_COUNT ? names[ns] : NULL;
}

const char *isd_oci_hook_name(enum isd_oci_hook_kind kind)
{
	static const char *const names[ISD_OCI_HOOK_COUNT] = {
		[ISD_OCI_HOOK_PRESTART] = "prestart",
		[ISD_OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
		[ISD_OCI_HOOK_CREATE_CONTAINER] = "createContainer",
		[ISD_OCI_HOOK_START_CONTAINER] = "startContainer",
		[ISD_OCI_HOOK_POSTSTART] = "poststart",
		[ISD_OCI_HOOK_POSTSTOP] = "poststop",
	};
	return (unsigned)kind < ISD_OCI_HOOK_COUNT ? names[kind] : NULL;
}
