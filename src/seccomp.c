/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seccomp profiles (Docker/OCI JSON) -> libseccomp -> BPF, with a cache of
 * the exported BPF so that starting a sandbox never compiles, and the
 * `isd seccomp` subcommand.  Three files: this one parses profiles
 * (architectures, actions, operators, includes/excludes), seccomp-bpf.c
 * compiles, caches and installs, seccomp-check.c explains.
 *
 * The parent does everything that can fail (resolve, parse, compile, cache);
 * the sandbox child only hands the ready BPF to seccomp(2).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isd/seccomp.h"
#include "json-util.h"
#include "seccomp-internal.h"
#include "isd/util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>


/* ------------------------------------------------------------------ */
/* Parser.  Every message names the element by its JSON path. */

struct parse_ctx {
	const char *origin;
	struct isd_seccomp_target target;
	unsigned kmaj, kmin, kpatch;
	struct isd_seccomp_profile *p;
};

static int perr(const struct parse_ctx *pc, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int perr(const struct parse_ctx *pc, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return isd_error(0, "seccomp profile %s: %s: %s", pc->origin, path, msg);
}

/* JSON paths ("syscalls[3].args[0].op") only label messages: truncation
 * is harmless, hence vsnprintf out of sight of -Wformat-truncation. */
static void jpath(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void jpath(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* Go's encoding/json treats null like an absent field; so do we. */
static struct json_object *field(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	return v;
}

/* A misspelt key ("errnoret") would otherwise silently change meaning. */
static int check_keys(const struct parse_ctx *pc, const char *path, struct json_object *obj,
		      const char *const *allowed)
{
	json_object_object_foreach(obj, key, val) {
		bool ok = !strcmp(key, "comment");
		(void)val;
		for (size_t i = 0; !ok && allowed[i]; i++)
			ok = !strcmp(key, allowed[i]);
		if (!ok)
			return perr(pc, path, "unknown field \"%s\"", key);
	}
	return 0;
}

static int want_type(const struct parse_ctx *pc, const char *path, struct json_object *o,
		     enum json_type type, const char *what)
{
	if (!json_object_is_type(o, type))
		return perr(pc, path, "expected %s, got %s", what, isd_json_type_name(o));
	return 0;
}

static int get_string(const struct parse_ctx *pc, const char *path, struct json_object *o,
		      const char **out)
{
	int r = want_type(pc, path, o, json_type_string, "a string");
	if (r < 0)
		return r;
	*out = json_object_get_string(o);
	if (strlen(*out) != (size_t)json_object_get_string_len(o))
		return perr(pc, path, "string contains a NUL character");
	return 0;
}

static int get_u64(const struct parse_ctx *pc, const char *path, struct json_object *o, uint64_t max,
		   uint64_t *out)
{
	int r = want_type(pc, path, o, json_type_int, "an unsigned integer");
	if (r < 0)
		return r;
	if (json_object_get_int64(o) < 0)
		return perr(pc, path, "expected an unsigned integer, got %" PRId64,
			    json_object_get_int64(o));
	*out = json_object_get_uint64(o);
	if (*out > max)
		return perr(pc, path, "%" PRIu64 " is out of range (at most %" PRIu64 ")", *out, max);
	return 0;
}

static int parse_action(const struct parse_ctx *pc, const char *path, const char *s,
			struct json_object *errno_ret, const char *errno_path, uint32_t *out)
{
	uint64_t data = EPERM;
	bool takes_data = !strcmp(s, "SCMP_ACT_ERRNO") || !strcmp(s, "SCMP_ACT_TRACE");
	int r;

	if (errno_ret) {
		if (!takes_data)
			return perr(pc, errno_path, "only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take a return value");
		r = get_u64(pc, errno_path, errno_ret, ERRNO_RET_MAX, &data);
		if (r < 0)
			return r;
		/* The kernel caps the errno at 4095 anyway; libseccomp
		 * refuses 4095 and up (Docker's example.json uses 12345). */
		if (!strcmp(s, "SCMP_ACT_ERRNO") && data > ERRNO_MAX) {
			isd_strv_push(&pc->p->notes, isd_xasprintf("%s: %" PRIu64 " is not an errno, using %d",
								   errno_path, data, ERRNO_MAX));
			data = ERRNO_MAX;
		}
	}
	if (!strcmp(s, "SCMP_ACT_ALLOW"))
		*out = SCMP_ACT_ALLOW;
	else if (!strcmp(s, "SCMP_ACT_ERRNO"))
		*out = SCMP_ACT_ERRNO((uint32_t)data);
	else if (!strcmp(s, "SCMP_ACT_TRACE"))
		*out = SCMP_ACT_TRACE((uint32_t)data);
	else if (!strcmp(s, "SCMP_ACT_KILL") || !strcmp(s, "SCMP_ACT_KILL_THREAD"))
		*out = SCMP_ACT_KILL_THREAD;
	else if (!strcmp(s, "SCMP_ACT_KILL_PROCESS"))
		*out = SCMP_ACT_KILL_PROCESS;
	else if (!strcmp(s, "SCMP_ACT_TRAP"))
		*out = SCMP_ACT_TRAP;
	else if (!strcmp(s, "SCMP_ACT_LOG"))
		*out = SCMP_ACT_LOG;
	else if (!strcmp(s, "SCMP_ACT_NOTIFY"))
		return perr(pc, path, "SCMP_ACT_NOTIFY needs a seccomp agent listening for "
				      "notifications; isd has none");
	else
		return perr(pc, path, "unknown action \"%s\"", s);
	return 0;
}

static int get_arch(const struct parse_ctx *pc, const char *path, struct json_object *o,
		    const struct arch_info **out)
{
	const char *s;
	int r = get_string(pc, path, o, &s);
	if (r < 0)
		return r;
	*out = isd_seccomp_arch_by_name(s);
	if (!*out)
		return perr(pc, path, "unknown architecture \"%s\"", s);
	return 0;
}

static bool profile_has_arch(const struct isd_seccomp_profile *p, uint32_t token)
{
	for (size_t i = 0; token && i < p->n_arches; i++)
		if (p->arches[i] == token)
			return true;
	return false;
}

static void profile_add_arch(struct isd_seccomp_profile *p, uint32_t token)
{
	if (token && !profile_has_arch(p, token) &&
	    p->n_arches < sizeof(p->arches) / sizeof(p->arches[0]))
		p->arches[p->n_arches++] = token;
}

static bool is_compat_arch(uint32_t native, uint32_t token)
{
	const struct arch_info *a = isd_seccomp_arch_by_token(native);
	return a && token && (a->compat[0] == token || a->compat[1] == token);
}

static int parse_arches(struct parse_ctx *pc, struct json_object *root)
{
	struct json_object *list = field(root, "architectures"), *map = field(root, "archMap");
	char path[128];
	int r;

	if (list && map)
		return perr(pc, "architectures", "use either \"architectures\" or \"archMap\", not both");
	if (list) {
		r = want_type(pc, "architectures", list, json_type_array, "an array");
		if (r < 0)
			return r;
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			const struct arch_info *a;
			jpath(path, sizeof(path), "architectures[%zu]", i);
			r = get_arch(pc, path, json_object_array_get_idx(list, i), &a);
			if (r < 0)
				return r;
			/* Other architectures can never run on this kernel. */
			if (is_compat_arch(pc->target.arch, a->token))
				profile_add_arch(pc->p, a->token);
		}
	}
	if (map) {
		static const char *const keys[] = { "architecture", "subArchitectures", NULL };
		r = want_type(pc, "archMap", map, json_type_array, "an array");
		if (r < 0)
			return r;
		for (size_t i = 0; i < json_object_array_length(map); i++) {
			struct json_object *e = json_object_array_get_idx(map, i), *v, *subs;
			const struct arch_info *a;
			bool native;

			jpath(path, sizeof(path), "archMap[%zu]", i);
			if ((r = want_type(pc, path, e, json_type_object, "an object")) < 0 ||
			    (r = check_keys(pc, path, e, keys)) < 0)
				return r;
			v = field(e, "architecture");
			jpath(path, sizeof(path), "archMap[%zu].architecture", i);
			if (!v)
				return perr(pc, path, "missing");
			if ((r = get_arch(pc, path, v, &a)) < 0)
				return r;
			native = a->token && a->token == pc->target.arch;
			subs = field(e, "subArchitectures");
			if (!subs)
				continue;
			jpath(path, sizeof(path), "archMap[%zu].subArchitectures", i);
			if ((r = want_type(pc, path, subs, json_type_array, "an array")) < 0)
				return r;
			for (size_t j = 0; j < json_object_array_length(subs); j++) {
				const struct arch_info *sa;
				jpath(path, sizeof(path), "archMap[%zu].subArchitectures[%zu]", i, j);
				if ((r = get_arch(pc, path, json_object_array_get_idx(subs, j), &sa)) < 0)
					return r;
				if (native)
					profile_add_arch(pc->p, sa->token);
			}
		}
	}
	return 0;
}

static int parse_flags(struct parse_ctx *pc, struct json_object *root)
{
	struct json_object *flags = field(root, "flags"), *listener = field(root, "listenerPath");
	char path[128];
	const char *s;
	int r;

	if (listener) {
		if ((r = get_string(pc, "listenerPath", listener, &s)) < 0)
			return r;
		if (*s)
			return perr(pc, "listenerPath", "isd has no seccomp agent to pass notifications to");
	}
	if ((listener = field(root, "listenerMetadata")) &&
	    (r = get_string(pc, "listenerMetadata", listener, &s)) < 0)
		return r;
	if (!flags)
		return 0;
	if ((r = want_type(pc, "flags", flags, json_type_array, "an array")) < 0)
		return r;
	for (size_t i = 0; i < json_object_array_length(flags); i++) {
		jpath(path, sizeof(path), "flags[%zu]", i);
		if ((r = get_string(pc, path, json_object_array_get_idx(flags, i), &s)) < 0)
			return r;
		if (!strcmp(s, "SECCOMP_FILTER_FLAG_LOG"))
			pc->p->flags |= SECCOMP_FILTER_FLAG_LOG;
		else if (!strcmp(s, "SECCOMP_FILTER_FLAG_SPEC_ALLOW"))
			pc->p->flags |= SECCOMP_FILTER_FLAG_SPEC_ALLOW;
		else if (!strcmp(s, "SECCOMP_FILTER_FLAG_TSYNC"))
			; /* the payload starts single-threaded: nothing to sync */
		else
			return perr(pc, path, "unsupported flag \"%s\"", s);
	}
	return 0;
}

/* "major.minor[.patch...]" with anything after a '-' ignored (uname). */
static int parse_kernel_version(const char *s, bool strict, unsigned v[3])
{
	const char *p = s;

	v[0] = v[1] = v[2] = 0;
	for (int i = 0; i < 3; i++) {
		unsigned long n;
		char *end;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		n = strtoul(p, &end, 10);
		if (errno || n > 1000000)
			return -EINVAL;
		v[i] = (unsigned)n;
		p = end;
		if (*p != '.') {
			if (i == 0)
				return -EINVAL;
			break;
		}
		p++;
	}
	return strict && *p ? -EINVAL : 0;
}

static bool kernel_at_least(const struct parse_ctx *pc, const unsigned v[3])
{
	if (pc->kmaj != v[0])
		return pc->kmaj > v[0];
	if (pc->kmin != v[1])
		return pc->kmin > v[1];
	return pc->kpatch >= v[2];
}

/* Parses includes/excludes; when the entry does not apply to this payload
 * (no capabilities) on this machine, *skip gets the first reason. */
static int parse_filter(struct parse_ctx *pc, const char *path, struct json_object *o, bool include,
			enum isd_seccomp_skip *skip)
{
	static const char *const keys[] = { "caps", "arches", "minKernel", NULL };
	struct json_object *caps, *arches, *mk;
	char sub[192];
	int r;

	if ((r = want_type(pc, path, o, json_type_object, "an object")) < 0 ||
	    (r = check_keys(pc, path, o, keys)) < 0)
		return r;
	if ((caps = field(o, "caps"))) {
		const char *s;
		jpath(sub, sizeof(sub), "%s.caps", path);
		if ((r = want_type(pc, sub, caps, json_type_array, "an array")) < 0)
			return r;
		for (size_t i = 0; i < json_object_array_length(caps); i++) {
			jpath(sub, sizeof(sub), "%s.caps[%zu]", path, i);
			if ((r = get_string(pc, sub, json_object_array_get_idx(caps, i), &s)) < 0)
				return r;
		}
		/* No capabilities: an include by caps never holds, an exclude
		 * by caps never fires. */
		if (include && json_object_array_length(caps) > 0 && !*skip)
			*skip = ISD_SECCOMP_SKIP_CAPS;
	}
	if ((arches = field(o, "arches"))) {
		bool any = false;
		size_t n;
		jpath(sub, sizeof(sub), "%s.arches", path);
		if ((r = want_type(pc, sub, arches, json_type_array, "an array")) < 0)
			return r;
		n = json_object_array_length(arches);
		for (size_t i = 0; i < n; i++) {
			const struct arch_info *a;
			jpath(sub, sizeof(sub), "%s.arches[%zu]", path, i);
			if ((r = get_arch(pc, sub, json_object_array_get_idx(arches, i), &a)) < 0)
				return r;
			any |= a->token == pc->target.arch || profile_has_arch(pc->p, a->token);
		}
		if (n > 0 && any != include && !*skip)
			*skip = ISD_SECCOMP_SKIP_ARCH;
	}
	if ((mk = field(o, "minKernel"))) {
		const char *s;
		unsigned v[3];
		jpath(sub, sizeof(sub), "%s.minKernel", path);
		if ((r = get_string(pc, sub, mk, &s)) < 0)
			return r;
		if (parse_kernel_version(s, true, v) < 0)
			return perr(pc, sub, "\"%s\" is not a kernel version like \"5.8\"", s);
		if (kernel_at_least(pc, v) != include && !*skip)
			*skip = ISD_SECCOMP_SKIP_KERNEL;
	}
	return 0;
}

static int parse_arg(struct parse_ctx *pc, const char *path, struct json_object *o,
		     struct isd_seccomp_cond *c)
{
	static const char *const keys[] = { "index", "value", "valueTwo", "op", NULL };
	struct json_object *v;
	char sub[192];
	const char *s;
	uint64_t idx;
	int r;

	if ((r = want_type(pc, path, o, json_type_object, "an object")) < 0 ||
	    (r = check_keys(pc, path, o, keys)) < 0)
		return r;
	jpath(sub, sizeof(sub), "%s.index", path);
	if (!(v = field(o, "index")))
		return perr(pc, sub, "missing");
	if ((r = get_u64(pc, sub, v, SECCOMP_ARGS_MAX - 1, &idx)) < 0)
		return r;
	c->index = (unsigned)idx;
	jpath(sub, sizeof(sub), "%s.value", path);
	if (!(v = field(o, "value")))
		return perr(pc, sub, "missing");
	if ((r = get_u64(pc, sub, v, UINT64_MAX, &c->value)) < 0)
		return r;
	jpath(sub, sizeof(sub), "%s.valueTwo", path);
	c->value_two = 0;
	if ((v = field(o, "valueTwo")) && (r = get_u64(pc, sub, v, UINT64_MAX, &c->value_two)) < 0)
		return r;
	jpath(sub, sizeof(sub), "%s.op", path);
	if (!(v = field(o, "op")))
		return perr(pc, sub, "missing");
	if ((r = get_string(pc, sub, v, &s)) < 0)
		return r;
	c->op = isd_seccomp_op_by_name(s);
	if (c->op >= 0)
		return 0;
	return perr(pc, sub, "unknown operator \"%s\"", s);
}

/* The number handed to seccomp_rule_add() (native numbering; libseccomp
 * translates by name for the other arches), or a NR_* marker. */
static int resolve_syscall(const struct isd_seccomp_profile *p, const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR)
		return NR_UNKNOWN;
	for (size_t i = 0; i < p->n_arches; i++)
		if (seccomp_syscall_resolve_name_arch(p->arches[i], name) >= 0)
			return nr;
	return NR_NOT_HERE;
}

static int parse_rule(struct parse_ctx *pc, size_t i, struct json_object *o, struct isd_seccomp_rule *rule)
{
	static const char *const keys[] = { "name", "names", "action", "errnoRet", "args",
					    "includes", "excludes", NULL };
	struct json_object *name = NULL, *names, *v;
	char path[128], sub[192];
	const char *s;
	int r;

	rule->json_index = i;
	jpath(path, sizeof(path), "syscalls[%zu]", i);
	if ((r = want_type(pc, path, o, json_type_object, "an object")) < 0 ||
	    (r = check_keys(pc, path, o, keys)) < 0)
		return r;

	names = field(o, "names");
	if ((v = field(o, "name"))) {
		if (names)
			return perr(pc, path, "use either \"name\" or \"names\", not both");
		name = v;
	} else if (!names) {
		return perr(pc, path, "missing \"names\"");
	} else {
		jpath(sub, sizeof(sub), "%s.names", path);
		if ((r = want_type(pc, sub, names, json_type_array, "an array")) < 0)
			return r;
		if (json_object_array_length(names) == 0)
			return perr(pc, sub, "empty");
	}
	rule->n_names = name ? 1 : json_object_array_length(names);
	rule->names = isd_xcalloc(rule->n_names + 1, sizeof(char *));
	rule->nrs = isd_xcalloc(rule->n_names, sizeof(int));
	for (size_t j = 0; j < rule->n_names; j++) {
		if (name)
			jpath(sub, sizeof(sub), "%s.name", path);
		else
			jpath(sub, sizeof(sub), "%s.names[%zu]", path, j);
		if ((r = get_string(pc, sub, name ? name : json_object_array_get_idx(names, j), &s)) < 0)
			return r;
		if (!*s)
			return perr(pc, sub, "empty syscall name");
		rule->names[j] = isd_xstrdup(s);
	}

	jpath(sub, sizeof(sub), "%s.action", path);
	if (!(v = field(o, "action")))
		return perr(pc, sub, "missing");
	if ((r = get_string(pc, sub, v, &s)) < 0)
		return r;
	{
		char epath[192];
		jpath(epath, sizeof(epath), "%s.errnoRet", path);
		if ((r = parse_action(pc, sub, s, field(o, "errnoRet"), epath, &rule->action)) < 0)
			return r;
	}

	if ((v = field(o, "args"))) {
		jpath(sub, sizeof(sub), "%s.args", path);
		if ((r = want_type(pc, sub, v, json_type_array, "an array")) < 0)
			return r;
		rule->n_conds = json_object_array_length(v);
		if (rule->n_conds > 4 * SECCOMP_ARGS_MAX)
			return perr(pc, sub, "too many conditions (%zu)", rule->n_conds);
		rule->conds = isd_xcalloc(rule->n_conds, sizeof(*rule->conds));
		for (size_t j = 0; j < rule->n_conds; j++) {
			jpath(sub, sizeof(sub), "%s.args[%zu]", path, j);
			if ((r = parse_arg(pc, sub, json_object_array_get_idx(v, j), &rule->conds[j])) < 0)
				return r;
		}
	}

	/* Docker evaluates excludes first; the outcome is the same. */
	if ((v = field(o, "excludes"))) {
		jpath(sub, sizeof(sub), "%s.excludes", path);
		if ((r = parse_filter(pc, sub, v, false, &rule->skip)) < 0)
			return r;
	}
	if ((v = field(o, "includes"))) {
		jpath(sub, sizeof(sub), "%s.includes", path);
		if ((r = parse_filter(pc, sub, v, true, &rule->skip)) < 0)
			return r;
	}
	/* libseccomp refuses rules that repeat the default action. */
	if (!rule->skip && rule->action == pc->p->default_action)
		rule->skip = ISD_SECCOMP_SKIP_REDUNDANT;

	for (size_t j = 0; j < rule->n_names; j++) {
		rule->nrs[j] = resolve_syscall(pc->p, rule->names[j]);
		if (rule->nrs[j] == NR_UNKNOWN)
			pc->p->n_unknown_names++;
	}
	return 0;
}

int isd_seccomp_target_native(struct isd_seccomp_target *target)
{
	struct utsname u;

	memset(target, 0, sizeof(*target));
	target->arch = seccomp_arch_native();
	if (uname(&u) < 0)
		return isd_error(-errno, "uname");
	snprintf(target->release, sizeof(target->release), "%s", u.release);
	return 0;
}

static int parse_json(const struct parse_ctx *pc, const char *buf, size_t len, struct json_object **out)
{
	struct json_tokener *tok;
	struct json_object *root;
	enum json_tokener_error jerr;
	size_t end, line = 1, col = 1;

	if (len > PROFILE_MAX)
		return isd_error(0, "seccomp profile %s: larger than %d bytes", pc->origin, PROFILE_MAX);
	tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	if (!tok)
		return isd_error(-ENOMEM, "seccomp profile %s: parsing", pc->origin);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue) {
		/* A NUL ends a bare top-level value ("null", "1"); whatever
		 * else is still open was cut short. */
		root = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok) == json_tokener_success ? json_tokener_success
									  : json_tokener_continue;
	}
	json_tokener_free(tok);
	if (jerr == json_tokener_success) {
		if (end > 0 && end <= len && buf[end - 1] == '\0')
			end--; /* json-c counts the NUL that ended it */
		while (end < len && (buf[end] == ' ' || buf[end] == '\t' || buf[end] == '\r' || buf[end] == '\n'))
			end++;
		if (end == len) {
			*out = root;
			return 0;
		}
		json_object_put(root);
	}
	for (size_t i = 0; i < end && i < len; i++) {
		if (buf[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	if (jerr == json_tokener_continue)
		return isd_error(0, "seccomp profile %s: invalid JSON: unexpected end of input", pc->origin);
	return isd_error(0, "seccomp profile %s: invalid JSON at line %zu, column %zu: %s", pc->origin,
			 line, col, jerr == json_tokener_success ? "data after the end of the document"
								   : json_tokener_error_desc(jerr));
}

int isd_seccomp_parse_buffer(const char *buf, size_t len, const char *origin,
			     const struct isd_seccomp_target *target, struct isd_seccomp_profile **out)
{
	static const char *const keys[] = { "defaultAction", "defaultErrnoRet", "architectures",
					    "archMap", "syscalls", "flags", "listenerPath",
					    "listenerMetadata", NULL };
	struct parse_ctx pc = { .origin = origin };
	struct json_object *root = NULL, *v, *syscalls;
	struct isd_seccomp_profile *p;
	unsigned kv[3];
	const char *s;
	int r;

	if (target)
		pc.target = *target;
	else if ((r = isd_seccomp_target_native(&pc.target)) < 0)
		return r;
	if (parse_kernel_version(pc.target.release, false, kv) < 0)
		return isd_error(0, "cannot understand the kernel release \"%s\"", pc.target.release);
	pc.kmaj = kv[0];
	pc.kmin = kv[1];
	pc.kpatch = kv[2];
	if (!isd_seccomp_arch_by_token(pc.target.arch))
		return isd_error(0, "seccomp: unsupported native architecture 0x%" PRIx32, pc.target.arch);

	if ((r = parse_json(&pc, buf, len, &root)) < 0)
		return r;

	p = pc.p = isd_xcalloc(1, sizeof(*p));
	p->origin = isd_xstrdup(origin);
	p->arches[p->n_arches++] = pc.target.arch;

	if ((r = want_type(&pc, "top level", root, json_type_object, "an object")) < 0 ||
	    (r = check_keys(&pc, "top level", root, keys)) < 0)
		goto out;
	if (!(v = field(root, "defaultAction"))) {
		r = perr(&pc, "defaultAction", "missing");
		goto out;
	}
	if ((r = get_string(&pc, "defaultAction", v, &s)) < 0 ||
	    (r = parse_action(&pc, "defaultAction", s, field(root, "defaultErrnoRet"),
			      "defaultErrnoRet", &p->default_action)) < 0 ||
	    (r = parse_arches(&pc, root)) < 0 || (r = parse_flags(&pc, root)) < 0)
		goto out;

	if ((syscalls = field(root, "syscalls"))) {
		if ((r = want_type(&pc, "syscalls", syscalls, json_type_array, "an array")) < 0)
			goto out;
		p->n_rules = json_object_array_length(syscalls);
		p->rules = isd_xcalloc(p->n_rules, sizeof(*p->rules));
		for (size_t i = 0; i < p->n_rules; i++)
			if ((r = parse_rule(&pc, i, json_object_array_get_idx(syscalls, i), &p->rules[i])) < 0)
				goto out;
	}
	*out = isd_steal_ptr(p);
	r = 0;
out:
	json_object_put(root);
	isd_seccomp_profile_free(p);
	return r;
}

void isd_seccomp_profile_free(struct isd_seccomp_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_rules; i++) {
		isd_strv_free(p->rules[i].names);
		free(p->rules[i].nrs);
		free(p->rules[i].conds);
	}
	free(p->rules);
	isd_strv_free(p->notes);
	free(p->origin);
	free(p);
}

