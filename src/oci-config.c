/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.json: process, root, hostname, hooks and annotations. */
#define _GNU_SOURCE
#include "oci-config.h"
#include "isd/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* ---- process ---- */

static const char *const cap_names[ISD_OCI_CAP_LAST + 1] = {
	"CAP_CHOWN",		"CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
	"CAP_FSETID",		"CAP_KILL",	    "CAP_SETGID",	   "CAP_SETUID",
	"CAP_SETPCAP",		"CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
	"CAP_NET_ADMIN",	"CAP_NET_RAW",	    "CAP_IPC_LOCK",	   "CAP_IPC_OWNER",
	"CAP_SYS_MODULE",	"CAP_SYS_RAWIO",    "CAP_SYS_CHROOT",	   "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT",	"CAP_SYS_ADMIN",    "CAP_SYS_BOOT",	   "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE",	"CAP_SYS_TIME",	    "CAP_SYS_TTY_CONFIG",  "CAP_MKNOD",
	"CAP_LEASE",		"CAP_AUDIT_WRITE",  "CAP_AUDIT_CONTROL",   "CAP_SETFCAP",
	"CAP_MAC_OVERRIDE",	"CAP_MAC_ADMIN",    "CAP_SYSLOG",	   "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND",	"CAP_AUDIT_READ",   "CAP_PERFMON",	   "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
};

const char *isd_oci_cap_name(unsigned cap)
{
	return cap <= ISD_OCI_CAP_LAST ? cap_names[cap] : NULL;
}

/* The kernel's last capability: one it does not know cannot be granted. */
static unsigned kernel_cap_last(void)
{
	_cleanup_free_ char *text = NULL;
	uint32_t v;

	if (isd_read_file_at(AT_FDCWD, "/proc/sys/kernel/cap_last_cap", &text, NULL) < 0)
		return ISD_OCI_CAP_LAST;
	text[strcspn(text, "\n")] = '\0';
	if (isd_parse_uint32(text, &v) < 0 || v > ISD_OCI_CAP_LAST)
		return ISD_OCI_CAP_LAST;
	return v;
}

static int parse_caps(struct oci_ctx *c, struct json_object *o)
{
	static const char *const sets[ISD_OCI_CAP_SET_COUNT] = {
		[ISD_OCI_CAP_BOUNDING] = "bounding",	     [ISD_OCI_CAP_EFFECTIVE] = "effective",
		[ISD_OCI_CAP_INHERITABLE] = "inheritable", [ISD_OCI_CAP_PERMITTED] = "permitted",
		[ISD_OCI_CAP_AMBIENT] = "ambient",
	};
	static const char *const known[] = { "bounding", "effective", "inheritable", "permitted", "ambient", NULL };
	uint64_t *caps = c->extra->caps;
	unsigned last = kernel_cap_last();
	char p[256];
	int r;

	if ((r = oci_want(c, "process.capabilities", o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, "process.capabilities", o, known);
	for (unsigned s = 0; s < ISD_OCI_CAP_SET_COUNT; s++) {
		struct json_object *list = oci_field(o, sets[s]);
		size_t n;

		if (!list)
			continue;
		oci_path(p, sizeof(p), "process.capabilities.%s", sets[s]);
		if ((r = oci_array(c, p, list, &n)) < 0)
			return r;
		for (size_t i = 0; i < n; i++) {
			const char *name;
			unsigned cap = 0;

			oci_path(p, sizeof(p), "process.capabilities.%s[%zu]", sets[s], i);
			if ((r = oci_string(c, p, json_object_array_get_idx(list, i), &name)) < 0)
				return r;
			if (isd_oci_cap_from_name(name, &cap) < 0)
				return oci_err(c, p, "\"%.64s\" is not a capability isd knows", name);
			/* as runc: a config written for a newer kernel still runs */
			if (cap > last) {
				oci_note(c, p, "%s ignored: not known to this kernel (its last is %s)",
					 cap_names[cap], cap_names[last]);
				continue;
			}
			caps[s] |= UINT64_C(1) << cap;
		}
	}
	/* Sets the kernel cannot hold: runc's own default config has ambient
	 * capabilities that are not inheritable.  What the kernel would not
	 * grant is dropped (stricter, never wider), with a note. */
	for (unsigned cap = 0; cap <= last; cap++) {
		uint64_t bit = UINT64_C(1) << cap;

		if ((caps[ISD_OCI_CAP_EFFECTIVE] & bit) && !(caps[ISD_OCI_CAP_PERMITTED] & bit)) {
			caps[ISD_OCI_CAP_EFFECTIVE] &= ~bit;
			oci_note(c, "process.capabilities.effective",
				 "%s dropped: not in the permitted set (the kernel cannot make it effective)",
				 cap_names[cap]);
		}
		if ((caps[ISD_OCI_CAP_AMBIENT] & bit) &&
		    (!(caps[ISD_OCI_CAP_PERMITTED] & bit) || !(caps[ISD_OCI_CAP_INHERITABLE] & bit))) {
			caps[ISD_OCI_CAP_AMBIENT] &= ~bit;
			oci_note(c, "process.capabilities.ambient",
				 "%s dropped: not both permitted and inheritable (the kernel cannot make it ambient)",
				 cap_names[cap]);
		}
	}
	return 0;
}

/* isd-runtime exec --process FILE: the process object's capability sets
 * and noNewPrivileges, by the rules of config.json's process (absent: none
 * and false, as runc reads a process file). */
int isd_oci_process_caps(const char *json, size_t len, const char *label, struct isd_cap_sets *out, bool *no_new_privs)
{
	struct isd_oci_extra extra;
	struct oci_ctx c = {.cfg = label, .extra = &extra};
	struct json_object *root = NULL, *v;
	int r;

	isd_oci_extra_init(&extra);
	r = oci_parse_json(&c, json, len, &root);
	if (r >= 0)
		r = oci_want(&c, "process", root, json_type_object);
	if (r >= 0 && (v = oci_field(root, "capabilities")))
		r = parse_caps(&c, v);
	if (r >= 0 && (v = oci_field(root, "noNewPrivileges")))
		r = oci_bool(&c, "process.noNewPrivileges", v, &extra.no_new_privileges);
	if (r >= 0) {
		*out = (struct isd_cap_sets){
			.bounding = extra.caps[ISD_OCI_CAP_BOUNDING],
			.effective = extra.caps[ISD_OCI_CAP_EFFECTIVE],
			.permitted = extra.caps[ISD_OCI_CAP_PERMITTED],
			.inheritable = extra.caps[ISD_OCI_CAP_INHERITABLE],
			.ambient = extra.caps[ISD_OCI_CAP_AMBIENT],
		};
		*no_new_privs = extra.no_new_privileges;
	}
	json_object_put(root);
	isd_oci_extra_free(&extra);
	return r;
}

/* A capability's bit from its name (CAP_SYS_ADMIN, sys_admin), or -EINVAL. */
int isd_oci_cap_from_name(const char *name, unsigned *cap)
{
	for (unsigned i = 0; i <= ISD_OCI_CAP_LAST; i++)
		if (!strcasecmp(name, cap_names[i]) || (strncasecmp(name, "CAP_", 4) && !strcasecmp(name, cap_names[i] + 4))) {
			*cap = i;
			return 0;
		}
	return -EINVAL;
}

static const struct {
	const char *name;
	int resource;
	} rlimit_types[] = {
	{ "RLIMIT_AS", RLIMIT_AS },
	{ "RLIMIT_CORE", RLIMIT_CORE },
	{ "RLIMIT_CPU", RLIMIT_CPU },
	{ "RLIMIT_DATA", RLIMIT_DATA },
	{ "RLIMIT_FSIZE", RLIMIT_FSIZE },
	{ "RLIMIT_LOCKS", RLIMIT_LOCKS },
	{ "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
	{ "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
	{ "RLIMIT_NICE", RLIMIT_NICE },
	{ "RLIMIT_NOFILE", RLIMIT_NOFILE },
	{ "RLIMIT_NPROC", RLIMIT_NPROC },
	{ "RLIMIT_RSS", RLIMIT_RSS },
	{ "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
	{ "RLIMIT_RTTIME", RLIMIT_RTTIME },
	{ "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
	{ "RLIMIT_STACK", RLIMIT_STACK },
};

const char *oci_rlimit_name(int resource)
{
	for (size_t i = 0; i < sizeof(rlimit_types) / sizeof(rlimit_types[0]); i++)
		if (rlimit_types[i].resource == resource)
			return rlimit_types[i].name;
	return "?";
}

static int parse_rlimits(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "type", "soft", "hard", NULL };
	struct isd_oci_extra *e = c->extra;
	char p[256], q[256];
	size_t n;
	int r;

	if ((r = oci_array(c, "process.rlimits", o, &n)) < 0)
		return r;
	e->rlimits = isd_xcalloc(n ? n : 1, sizeof(*e->rlimits));
	for (size_t i = 0; i < n; i++) {
		struct json_object *rl = json_object_array_get_idx(o, i), *v;
		struct isd_oci_rlimit *l = &e->rlimits[i];
		const char *type;
		size_t t = 0;

		oci_path(p, sizeof(p), "process.rlimits[%zu]", i);
		if ((r = oci_want(c, p, rl, json_type_object)) < 0)
			return r;
		oci_unknown_keys(c, p, rl, known);
		oci_path(q, sizeof(q), "%s.type", p);
		if (!(v = oci_field(rl, "type")))
			return oci_err(c, q, "missing");
		if ((r = oci_string(c, q, v, &type)) < 0)
			return r;
		while (t < sizeof(rlimit_types) / sizeof(rlimit_types[0]) && strcmp(type, rlimit_types[t].name))
			t++;
		if (t == sizeof(rlimit_types) / sizeof(rlimit_types[0]))
			return oci_err(c, q, "\"%.64s\" is not a resource limit isd knows", type);
		for (size_t j = 0; j < i; j++)
			if (e->rlimits[j].resource == rlimit_types[t].resource)
				return oci_err(c, q, "%s is given twice", type);
		l->resource = rlimit_types[t].resource;
		oci_path(q, sizeof(q), "%s.soft", p);
		if (!(v = oci_field(rl, "soft")))
			return oci_err(c, q, "missing");
		if ((r = oci_u64(c, q, v, UINT64_MAX, &l->soft)) < 0)
			return r;
		oci_path(q, sizeof(q), "%s.hard", p);
		if (!(v = oci_field(rl, "hard")))
			return oci_err(c, q, "missing");
		if ((r = oci_u64(c, q, v, UINT64_MAX, &l->hard)) < 0)
			return r;
		if (l->soft > l->hard)
			return oci_err(c, p, "soft limit %" PRIu64 " is above the hard limit %" PRIu64, l->soft,
				       l->hard);
		e->n_rlimits++;
	}
	return 0;
}

static int parse_user(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "uid", "gid", "umask", "additionalGids", "username", NULL };
	struct isd_oci_extra *e = c->extra;
	struct json_object *v;
	char p[256];
	size_t n;
	int r;

	if ((r = oci_want(c, "process.user", o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, "process.user", o, known);
	if ((v = oci_field(o, "uid")) && (r = oci_u32(c, "process.user.uid", v, &c->spec->uid)) < 0)
		return r;
	if ((v = oci_field(o, "gid")) && (r = oci_u32(c, "process.user.gid", v, &c->spec->gid)) < 0)
		return r;
	if ((v = oci_field(o, "umask"))) {
		uint64_t u;
		if ((r = oci_u64(c, "process.user.umask", v, 0777, &u)) < 0)
			return r;
		e->umask = (uint32_t)u;
		e->has_umask = true;
	}
	if ((v = oci_field(o, "additionalGids"))) {
		if ((r = oci_array(c, "process.user.additionalGids", v, &n)) < 0)
			return r;
		if (n > OCI_MAX_ID_LINES * 2)
			return oci_err(c, "process.user.additionalGids", "more than %d groups", OCI_MAX_ID_LINES * 2);
		e->additional_gids = isd_xcalloc(n ? n : 1, sizeof(*e->additional_gids));
		for (size_t i = 0; i < n; i++) {
			oci_path(p, sizeof(p), "process.user.additionalGids[%zu]", i);
			if ((r = oci_u32(c, p, json_object_array_get_idx(v, i), &e->additional_gids[i])) < 0)
				return r;
		}
		e->n_additional_gids = n;
	}
	if (oci_field(o, "username"))
		oci_note(c, "process.user.username", "ignored: a Windows property");
	return 0;
}

static int parse_env(struct oci_ctx *c, const char *path, struct json_object *o, char ***out)
{
	char p[256];
	int r;

	if ((r = oci_strv(c, path, o, false, out)) < 0)
		return r;
	for (size_t i = 0; (*out)[i]; i++) {
		const char *eq = strchr((*out)[i], '=');

		oci_path(p, sizeof(p), "%s[%zu]", path, i);
		if (!eq || eq == (*out)[i])
			return oci_err(c, p, "\"%.64s\" is not NAME=VALUE", (*out)[i]);
	}
	return 0;
}

static int parse_console_size(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "height", "width", NULL };
	struct isd_oci_extra *e = c->extra;
	struct json_object *v;
	uint64_t h = 0, w = 0;
	int r;

	if ((r = oci_want(c, "process.consoleSize", o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, "process.consoleSize", o, known);
	/* struct winsize holds unsigned short */
	if ((v = oci_field(o, "height")) && (r = oci_u64(c, "process.consoleSize.height", v, UINT16_MAX, &h)) < 0)
		return r;
	if ((v = oci_field(o, "width")) && (r = oci_u64(c, "process.consoleSize.width", v, UINT16_MAX, &w)) < 0)
		return r;
	e->console_height = (uint32_t)h;
	e->console_width = (uint32_t)w;
	e->has_console_size = true;
	return 0;
}

static int opt_string(struct oci_ctx *c, struct json_object *o, const char *key, const char *path, char **out)
{
	struct json_object *v = oci_field(o, key);
	const char *s;
	int r;

	if (!v)
		return 0;
	if ((r = oci_string(c, path, v, &s)) < 0)
		return r;
	if (*s)
		*out = isd_xstrdup(s);
	return 0;
}

int oci_parse_process(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "terminal", "consoleSize", "cwd", "env", "args", "commandLine",
					     "rlimits", "apparmorProfile", "capabilities", "noNewPrivileges",
					     "oomScoreAdj", "scheduler", "selinuxLabel", "ioPriority",
					     "execCPUAffinity", "user", NULL };
	static const char *const unsupported[] = { "scheduler", "ioPriority", "execCPUAffinity" };
	struct isd_oci_extra *e = c->extra;
	struct json_object *v;
	const char *s;
	int r;

	if ((r = oci_want(c, "process", o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, "process", o, known);
	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
		if (oci_field(o, unsupported[i])) {
			char p[64];
			oci_path(p, sizeof(p), "process.%s", unsupported[i]);
			return oci_err(c, p, "not supported by isd-runtime");
		}
	if (oci_field(o, "commandLine"))
		oci_note(c, "process.commandLine", "ignored: a Windows property");

	if ((v = oci_field(o, "terminal")) && (r = oci_bool(c, "process.terminal", v, &c->spec->tty)) < 0)
		return r;
	c->spec->interactive = c->spec->tty;
	if ((v = oci_field(o, "consoleSize")) && (r = parse_console_size(c, v)) < 0)
		return r;
	if (!(v = oci_field(o, "cwd")))
		return oci_err(c, "process.cwd", "missing (an absolute path)");
	if ((r = oci_string(c, "process.cwd", v, &s)) < 0 ||
	    (r = oci_abs_path(c, "process.cwd", s, NULL, &c->spec->workdir)) < 0)
		return r;
	if ((v = oci_field(o, "env")) && (r = parse_env(c, "process.env", v, &c->spec->env)) < 0)
		return r;
	if (!(v = oci_field(o, "args")))
		return oci_err(c, "process.args", "missing (the command to run)");
	if ((r = oci_strv(c, "process.args", v, true, &c->spec->argv)) < 0)
		return r;
	if (!c->spec->argv[0] || !c->spec->argv[0][0])
		return oci_err(c, "process.args", "no command given");
	if ((v = oci_field(o, "user")) && (r = parse_user(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "rlimits")) && (r = parse_rlimits(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "capabilities")) && (r = parse_caps(c, v)) < 0)
		return r;
	if ((v = oci_field(o, "noNewPrivileges")) &&
	    (r = oci_bool(c, "process.noNewPrivileges", v, &e->no_new_privileges)) < 0)
		return r;
	if ((v = oci_field(o, "oomScoreAdj"))) {
		int64_t adj;
		if ((r = oci_i64(c, "process.oomScoreAdj", v, -1000, 1000, &adj)) < 0)
			return r;
		e->oom_score_adj = (int)adj;
		e->has_oom_score_adj = true;
	}
	if ((r = opt_string(c, o, "apparmorProfile", "process.apparmorProfile", &e->apparmor_profile)) < 0 ||
	    (r = opt_string(c, o, "selinuxLabel", "process.selinuxLabel", &e->selinux_label)) < 0)
		return r;
	return 0;
}

/* ---- root, hostname ---- */

int oci_parse_root(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "path", "readonly", NULL };
	struct json_object *v;
	bool readonly = false;
	const char *s;
	int r;

	if ((r = oci_want(c, "root", o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, "root", o, known);
	if (!(v = oci_field(o, "path")))
		return oci_err(c, "root.path", "missing (the root file system, relative to the bundle or absolute)");
	if ((r = oci_string(c, "root.path", v, &s)) < 0 ||
	    (r = oci_abs_path(c, "root.path", s, c->extra->bundle, &c->spec->rootfs)) < 0)
		return r;
	if ((v = oci_field(o, "readonly")) && (r = oci_bool(c, "root.readonly", v, &readonly)) < 0)
		return r;
	c->spec->writable_root = !readonly;
	c->spec->image = isd_xasprintf("oci:%s", c->extra->bundle);
	return 0;
}

/* The kernel takes any bytes up to 64; a newline or control character
 * would only reach someone's terminal or log. */
static int host_name(struct oci_ctx *c, struct json_object *root, const char *key, char **out)
{
	struct json_object *v = oci_field(root, key);
	const char *s;
	int r;

	if (!v)
		return 0;
	if ((r = oci_string(c, key, v, &s)) < 0)
		return r;
	if (strlen(s) > 64)
		return oci_err(c, key, "longer than 64 bytes (the kernel's limit)");
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return oci_err(c, key, "contains a space or control character");
	if (*s)
		*out = isd_xstrdup(s);
	return 0;
}

int oci_parse_hostname(struct oci_ctx *c, struct json_object *root)
{
	int r = host_name(c, root, "hostname", &c->spec->hostname);

	return r < 0 ? r : host_name(c, root, "domainname", &c->extra->domainname);
}

/* ---- hooks ---- */

static int parse_hook(struct oci_ctx *c, const char *path, struct json_object *o, struct isd_oci_hook *h)
{
	static const char *const known[] = { "path", "args", "env", "timeout", NULL };
	struct json_object *v;
	char p[256];
	const char *s;
	int r;

	if ((r = oci_want(c, path, o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, path, o, known);
	oci_path(p, sizeof(p), "%s.path", path);
	if (!(v = oci_field(o, "path")))
		return oci_err(c, p, "missing (an absolute path)");
	if ((r = oci_string(c, p, v, &s)) < 0 || (r = oci_abs_path(c, p, s, NULL, &h->path)) < 0)
		return r;
	oci_path(p, sizeof(p), "%s.args", path);
	if ((v = oci_field(o, "args")) && (r = oci_strv(c, p, v, true, &h->args)) < 0)
		return r;
	oci_path(p, sizeof(p), "%s.env", path);
	if ((v = oci_field(o, "env")) && (r = parse_env(c, p, v, &h->env)) < 0)
		return r;
	oci_path(p, sizeof(p), "%s.timeout", path);
	if ((v = oci_field(o, "timeout"))) {
		int64_t t;
		if ((r = oci_i64(c, p, v, 1, INT32_MAX, &t)) < 0)
			return r;
		h->timeout = (int)t;
	}
	return 0;
}

int oci_parse_hooks(struct oci_ctx *c, struct json_object *o)
{
	static const char *const known[] = { "prestart", "createRuntime", "createContainer",
					     "startContainer", "poststart", "poststop", NULL };
	char p[256];
	int r;

	if ((r = oci_want(c, "hooks", o, json_type_object)) < 0)
		return r;
	oci_unknown_keys(c, "hooks", o, known);
	for (unsigned k = 0; k < ISD_OCI_HOOK_COUNT; k++) {
		struct isd_oci_hooks *hs = &c->extra->hooks[k];
		const char *name = isd_oci_hook_name(k);
		struct json_object *list = oci_field(o, name);
		size_t n;

		if (!list)
			continue;
		oci_path(p, sizeof(p), "hooks.%s", name);
		if ((r = oci_array(c, p, list, &n)) < 0)
			return r;
		hs->hooks = isd_xcalloc(n ? n : 1, sizeof(*hs->hooks));
		for (size_t i = 0; i < n; i++) {
			oci_path(p, sizeof(p), "hooks.%s[%zu]", name, i);
			hs->n++;
			if ((r = parse_hook(c, p, json_object_array_get_idx(list, i), &hs->hooks[i])) < 0)
				return r;
		}
	}
	if (oci_field(o, "prestart"))
		oci_note(c, "hooks.prestart", "deprecated by the runtime-spec (createRuntime is its successor); run as given");
	return 0;
}

/* ---- annotations ---- */

static int isd_annotation(struct oci_ctx *c, const char *key, const char *value, bool apply)
{
	struct isd_spec *spec = c->spec;
	char p[256];

	oci_path(p, sizeof(p), "annotations.%s", key);
	if (!strcmp(key, ISD_OCI_ANNOTATION_NETWORK)) {
		if (strcmp(value, "netless"))
			return oci_err(c, p, "\"%.64s\" is not supported (netless)", value);
		if (apply)
			spec->network = ISD_NET_NETLESS;
	} else if (!strcmp(key, ISD_OCI_ANNOTATION_ALLOW)) {
		_cleanup_free_ char *list = isd_xstrdup(value);
		struct isd_netcfg scratch = { 0 };
		char *save = NULL;
		int r = 0;

		for (char *tok = strtok_r(list, ",", &save); tok && r >= 0; tok = strtok_r(NULL, ",", &save)) {
			tok += strspn(tok, " ");
			tok[strcspn(tok, " ")] = '\0';
			if (*tok)
				r = isd_netcfg_add_allow(apply ? &spec->net : &scratch, tok, p);
		}
		isd_netcfg_free(&scratch);
		if (r < 0) {
			_cleanup_free_ char *why = isd_xstrdup(isd_error_message());
			return oci_err(c, p, "%s", why);
		}
	} else if (!strcmp(key, ISD_OCI_ANNOTATION_SECCOMP)) {
		if (strcmp(value, "agent"))
			return oci_err(c, p, "\"%.64s\" is not supported (agent)", value);
		if (apply) {
			free(spec->seccomp);
			spec->seccomp = isd_xstrdup("default");
		}
	} else if (!strcmp(key, ISD_OCI_ANNOTATION_ISOLATION)) {
		if (strcmp(value, "landlock"))
			return oci_err(c, p, "\"%.64s\" is not supported (landlock)", value);
		if (apply)
			spec->landlock_off = false;
	} else if (!strcmp(key, ISD_OCI_ANNOTATION_CAPABILITIES)) {
		if (strcmp(value, "none"))
			return oci_err(c, p, "\"%.64s\" is not supported (none)", value);
		if (apply)
			c->extra->caps_none = true;
	} else {
		/* isd's own prefix: a misspelt name would drop a confinement */
		return oci_err(c, p, "not an isd annotation (known: %s, %s, %s, %s, %s)", ISD_OCI_ANNOTATION_NETWORK,
			       ISD_OCI_ANNOTATION_ALLOW, ISD_OCI_ANNOTATION_SECCOMP, ISD_OCI_ANNOTATION_ISOLATION,
			       ISD_OCI_ANNOTATION_CAPABILITIES);
	}
	if (!apply)
		oci_note(c, p, "not applied: the operator has not allowed isd's annotations (see isd-runtime(8))");
	return 0;
}

int oci_parse_annotations(struct oci_ctx *c, struct json_object *o)
{
	bool apply = c->flags & ISD_OCI_LOAD_ANNOTATIONS;
	struct json_object *allow = NULL;
	size_t n = 0;
	int r;

	/* OCI containers get what the config asks: no isd seccomp profile,
	 * no Landlock, unless an allowed annotation says otherwise. */
	c->spec->seccomp = isd_xstrdup("unconfined");
	c->spec->landlock_off = true;
	if (!o)
		return 0;
	if ((r = oci_want(c, "annotations", o, json_type_object)) < 0)
		return r;
	json_object_object_foreach(o, key, val) {
		char p[256];
		const char *s;

		oci_path(p, sizeof(p), "annotations.%s", key);
		if (++n > OCI_MAX_ITEMS)
			return oci_err(c, "annotations", "more than %d entries", OCI_MAX_ITEMS);
		if (!*key)
			return oci_err(c, "annotations", "an empty key");
		/* kept as key=value: a key holding "=" would be read back split wrongly */
		if (strchr(key, '='))
			return oci_err(c, p, "the key holds \"=\"");
		if ((r = oci_string(c, p, val, &s)) < 0)
			return r;
		isd_strv_push(&c->extra->annotations, isd_xasprintf("%s=%s", key, s));
		if (!strncmp(key, "run.oci.isd.", 12)) {
			if (!strcmp(key, ISD_OCI_ANNOTATION_ALLOW)) {
				allow = val; /* after the network mode, whatever the order */
				continue;
			}
			if ((r = isd_annotation(c, key, s, apply)) < 0)
				return r;
		}
	}
	if (allow) {
		struct json_object *net = oci_field(o, ISD_OCI_ANNOTATION_NETWORK);

		if (!net || strcmp(json_object_get_string(net), "netless"))
			return oci_err(c, "annotations." ISD_OCI_ANNOTATION_ALLOW,
				       "needs " ISD_OCI_ANNOTATION_NETWORK "=netless (an allowlist is netless's)");
		if ((r = isd_annotation(c, ISD_OCI_ANNOTATION_ALLOW, json_object_get_string(allow), apply)) < 0)
			return r;
	}
	return 0;
}
