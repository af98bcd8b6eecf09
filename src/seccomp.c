/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seccomp profiles (Docker/OCI JSON) -> libseccomp -> BPF, with a cache of
 * the exported BPF so that starting a sandbox never compiles, and the
 * `isd seccomp` subcommand.
 *
 * The parent does everything that can fail (resolve, parse, compile, cache);
 * the sandbox child only hands the ready BPF to seccomp(2).
 *
 * One file on purpose: the parser, the compiler, the cache and the report
 * share the profile structures and the error conventions, and the build
 * lists src/seccomp.c alone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isd/seccomp.h"
#include "isd/util.h"

#include <dirent.h>
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

#ifndef ISD_VERSION
#define ISD_VERSION "unknown"
#endif
#ifndef ISD_SECCOMP_PROFILES_DIR
#define ISD_SECCOMP_PROFILES_DIR "/usr/local/share/isd/seccomp-profiles"
#endif
#ifndef ISD_SOURCE_SECCOMP_PROFILES_DIR
#define ISD_SOURCE_SECCOMP_PROFILES_DIR ISD_SECCOMP_PROFILES_DIR
#endif

/* Docker's default profile is 13 KiB; anything near this is a mistake
 * (or /dev/zero). */
#define PROFILE_MAX (1024 * 1024)
#define SECCOMP_ARGS_MAX 6
#define ERRNO_RET_MAX 0xffff /* SECCOMP_RET_DATA */
#define ERRNO_MAX 4094       /* the largest libseccomp takes */

#define NR_UNKNOWN ISD_SECCOMP_NR_UNKNOWN
#define NR_NOT_HERE ISD_SECCOMP_NR_NOT_HERE

/* ------------------------------------------------------------------ */
/* Architectures: Docker uses libseccomp's SCMP_ARCH_* names in
 * "architectures"/"archMap" and Go's GOARCH names in includes/excludes. */

#ifndef SCMP_ARCH_LOONGARCH64
#define SCMP_ARCH_LOONGARCH64 0
#endif
#ifndef SCMP_ARCH_M68K
#define SCMP_ARCH_M68K 0
#endif
#ifndef SCMP_ARCH_SH
#define SCMP_ARCH_SH 0
#endif
#ifndef SCMP_ARCH_SHEB
#define SCMP_ARCH_SHEB 0
#endif

struct arch_info {
	const char *scmp_name;
	const char *aliases[4];
	uint32_t token;     /* 0: this libseccomp cannot filter it */
	uint32_t compat[2]; /* other ABIs the kernel of this arch runs */
};

static const struct arch_info arch_table[] = {
	{ "SCMP_ARCH_X86_64", { "amd64", "x86_64" }, SCMP_ARCH_X86_64, { SCMP_ARCH_X86, SCMP_ARCH_X32 } },
	{ "SCMP_ARCH_X86", { "x86", "386", "i386", "i686" }, SCMP_ARCH_X86, { 0 } },
	{ "SCMP_ARCH_X32", { "x32" }, SCMP_ARCH_X32, { 0 } },
	{ "SCMP_ARCH_AARCH64", { "arm64", "aarch64" }, SCMP_ARCH_AARCH64, { SCMP_ARCH_ARM } },
	{ "SCMP_ARCH_ARM", { "arm" }, SCMP_ARCH_ARM, { 0 } },
	{ "SCMP_ARCH_MIPS", { "mips" }, SCMP_ARCH_MIPS, { 0 } },
	{ "SCMP_ARCH_MIPS64", { "mips64" }, SCMP_ARCH_MIPS64, { SCMP_ARCH_MIPS, SCMP_ARCH_MIPS64N32 } },
	{ "SCMP_ARCH_MIPS64N32", { "mips64n32" }, SCMP_ARCH_MIPS64N32, { SCMP_ARCH_MIPS, SCMP_ARCH_MIPS64 } },
	{ "SCMP_ARCH_MIPSEL", { "mipsel", "mipsle" }, SCMP_ARCH_MIPSEL, { 0 } },
	{ "SCMP_ARCH_MIPSEL64", { "mipsel64", "mips64le" }, SCMP_ARCH_MIPSEL64, { SCMP_ARCH_MIPSEL, SCMP_ARCH_MIPSEL64N32 } },
	{ "SCMP_ARCH_MIPSEL64N32", { "mipsel64n32", "mips64len32" }, SCMP_ARCH_MIPSEL64N32, { SCMP_ARCH_MIPSEL, SCMP_ARCH_MIPSEL64 } },
	{ "SCMP_ARCH_PPC", { "ppc" }, SCMP_ARCH_PPC, { 0 } },
	{ "SCMP_ARCH_PPC64", { "ppc64" }, SCMP_ARCH_PPC64, { SCMP_ARCH_PPC } },
	{ "SCMP_ARCH_PPC64LE", { "ppc64le" }, SCMP_ARCH_PPC64LE, { 0 } },
	{ "SCMP_ARCH_S390", { "s390" }, SCMP_ARCH_S390, { 0 } },
	{ "SCMP_ARCH_S390X", { "s390x" }, SCMP_ARCH_S390X, { SCMP_ARCH_S390 } },
	{ "SCMP_ARCH_PARISC", { "parisc" }, SCMP_ARCH_PARISC, { 0 } },
	{ "SCMP_ARCH_PARISC64", { "parisc64" }, SCMP_ARCH_PARISC64, { SCMP_ARCH_PARISC } },
	{ "SCMP_ARCH_RISCV64", { "riscv64" }, SCMP_ARCH_RISCV64, { 0 } },
	{ "SCMP_ARCH_LOONGARCH64", { "loong64", "loongarch64" }, SCMP_ARCH_LOONGARCH64, { 0 } },
	{ "SCMP_ARCH_M68K", { "m68k" }, SCMP_ARCH_M68K, { 0 } },
	{ "SCMP_ARCH_SH", { "sh" }, SCMP_ARCH_SH, { 0 } },
	{ "SCMP_ARCH_SHEB", { "sheb" }, SCMP_ARCH_SHEB, { 0 } },
};
#define N_ARCHES (sizeof(arch_table) / sizeof(arch_table[0]))

static const struct arch_info *arch_by_name(const char *name)
{
	for (size_t i = 0; i < N_ARCHES; i++) {
		if (!strcmp(arch_table[i].scmp_name, name))
			return &arch_table[i];
		for (size_t j = 0; j < 4 && arch_table[i].aliases[j]; j++)
			if (!strcmp(arch_table[i].aliases[j], name))
				return &arch_table[i];
	}
	return NULL;
}

static const struct arch_info *arch_by_token(uint32_t token)
{
	for (size_t i = 0; token && i < N_ARCHES; i++)
		if (arch_table[i].token == token)
			return &arch_table[i];
	return NULL;
}

static const char *arch_label(uint32_t token)
{
	const struct arch_info *a = arch_by_token(token);
	return a ? a->aliases[1] ? a->aliases[1] : a->aliases[0] : "unknown";
}

/* ------------------------------------------------------------------ */
/* Actions and operators */

const char *isd_seccomp_action_str(uint32_t action, char *buf, size_t size)
{
	uint32_t data = action & 0xffffu;
	const char *e;

	switch (action & 0xffff0000u) {
	case SCMP_ACT_ALLOW:
		return "ALLOW";
	case SCMP_ACT_KILL_PROCESS:
		return "KILL_PROCESS";
	case SCMP_ACT_KILL_THREAD:
		return "KILL_THREAD";
	case SCMP_ACT_TRAP:
		return "TRAP";
	case SCMP_ACT_LOG:
		return "LOG";
	case SCMP_ACT_ERRNO(0):
		e = strerrorname_np((int)data);
		if (e)
			snprintf(buf, size, "ERRNO(%s)", e);
		else
			snprintf(buf, size, "ERRNO(%" PRIu32 ")", data);
		return buf;
	case SCMP_ACT_TRACE(0):
		snprintf(buf, size, "TRACE(%" PRIu32 ")", data);
		return buf;
	default:
		snprintf(buf, size, "0x%08" PRIx32, action);
		return buf;
	}
}

static const struct {
	const char *name;
	enum scmp_compare op;
} op_table[] = {
	{ "SCMP_CMP_NE", SCMP_CMP_NE },	      { "SCMP_CMP_LT", SCMP_CMP_LT },
	{ "SCMP_CMP_LE", SCMP_CMP_LE },	      { "SCMP_CMP_EQ", SCMP_CMP_EQ },
	{ "SCMP_CMP_GE", SCMP_CMP_GE },	      { "SCMP_CMP_GT", SCMP_CMP_GT },
	{ "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

static const char *op_name(int op)
{
	for (size_t i = 0; i < sizeof(op_table) / sizeof(op_table[0]); i++)
		if ((int)op_table[i].op == op)
			return op_table[i].name;
	return "?";
}

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

static const char *type_name(struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
		return "a fractional number";
	case json_type_int:
		return "an integer";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	}
	return "?";
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
		return perr(pc, path, "expected %s, got %s", what, type_name(o));
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
	*out = arch_by_name(s);
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
	const struct arch_info *a = arch_by_token(native);
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

/* Parses includes/excludes; *matched tells whether the filter says "yes"
 * for this payload (no capabilities) on this machine. */
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
	for (size_t i = 0; i < sizeof(op_table) / sizeof(op_table[0]); i++)
		if (!strcmp(s, op_table[i].name)) {
			c->op = (int)op_table[i].op;
			return 0;
		}
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
	char path[128], sub[96];
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
	if (!arch_by_token(pc.target.arch))
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

/* ------------------------------------------------------------------ */
/* Compiling */

void isd_seccomp_ctx_free(void *ctx)
{
	if (ctx)
		seccomp_release(ctx);
}

static int add_rule(scmp_filter_ctx ctx, const struct isd_seccomp_profile *p,
		    const struct isd_seccomp_rule *rule, size_t j)
{
	struct scmp_arg_cmp cmp[SECCOMP_ARGS_MAX];
	bool repeated = false;
	unsigned seen = 0;
	int r = 0;

	for (size_t k = 0; k < rule->n_conds; k++) {
		const struct isd_seccomp_cond *c = &rule->conds[k];
		repeated |= (seen >> c->index) & 1u;
		seen |= 1u << c->index;
	}
	if (!repeated) {
		for (size_t k = 0; k < rule->n_conds; k++)
			cmp[k] = (struct scmp_arg_cmp){ rule->conds[k].index, rule->conds[k].op,
							rule->conds[k].value, rule->conds[k].value_two };
		r = seccomp_rule_add_array(ctx, rule->action, rule->nrs[j], (unsigned)rule->n_conds, cmp);
	} else {
		/* libseccomp cannot AND two tests of one argument; runc (and
		 * so Docker) adds one rule per condition, i.e. ORs them. */
		for (size_t k = 0; k < rule->n_conds && r >= 0; k++) {
			cmp[0] = (struct scmp_arg_cmp){ rule->conds[k].index, rule->conds[k].op,
							rule->conds[k].value, rule->conds[k].value_two };
			r = seccomp_rule_add_array(ctx, rule->action, rule->nrs[j], 1, cmp);
		}
	}
	if (r < 0)
		return isd_error(r == -EEXIST ? 0 : r,
				 "seccomp profile %s: syscalls[%zu]: cannot add the rule for \"%s\"%s",
				 p->origin, rule->json_index, rule->names[j],
				 r == -EEXIST ? ": it conflicts with an earlier rule with the same arguments" : "");
	return 0;
}

int isd_seccomp_build(const struct isd_seccomp_profile *p, void **ctx_out)
{
	scmp_filter_ctx ctx = seccomp_init(p->default_action);
	int r;

	if (!ctx)
		return isd_error(-ENOMEM, "seccomp profile %s: creating the libseccomp filter", p->origin);
	/* Foreign ABIs (int 0x80, x32) are a classic way around a filter
	 * written for the native one: refuse them, without killing. */
	if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM))) < 0 ||
	    (r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0) {
		isd_error(r, "seccomp profile %s: setting filter attributes", p->origin);
		goto fail;
	}
	/* A binary tree of syscall numbers; older libseccomp stays linear. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (p->arches[0] != seccomp_arch_native()) {
		/* Only the tests ask for a foreign target. */
		if ((r = seccomp_arch_add(ctx, p->arches[0])) < 0 ||
		    (r = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE)) < 0) {
			isd_error(r, "seccomp profile %s: selecting architecture %s", p->origin,
				  arch_label(p->arches[0]));
			goto fail;
		}
	}
	for (size_t i = 1; i < p->n_arches; i++) {
		r = seccomp_arch_add(ctx, p->arches[i]);
		if (r < 0 && r != -EEXIST) {
			isd_error(r, "seccomp profile %s: adding architecture %s", p->origin,
				  arch_label(p->arches[i]));
			goto fail;
		}
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct isd_seccomp_rule *rule = &p->rules[i];
		if (rule->skip)
			continue;
		for (size_t j = 0; j < rule->n_names; j++) {
			if (rule->nrs[j] == NR_UNKNOWN || rule->nrs[j] == NR_NOT_HERE)
				continue;
			if ((r = add_rule(ctx, p, rule, j)) < 0)
				goto fail;
		}
	}
	*ctx_out = ctx;
	return 0;
fail:
	seccomp_release(ctx);
	return r;
}

int isd_seccomp_export(void *ctx, struct sock_filter **filter, unsigned short *len)
{
	_cleanup_close_ int fd = memfd_create("isd-seccomp-bpf", MFD_CLOEXEC);
	_cleanup_free_ struct sock_filter *buf = NULL;
	struct stat st;
	ssize_t n;
	int r;

	if (fd < 0)
		return isd_error(-errno, "creating a memfd for the seccomp filter");
	if ((r = seccomp_export_bpf(ctx, fd)) < 0)
		return isd_error(r, "exporting the seccomp filter");
	if (fstat(fd, &st) < 0)
		return isd_error(-errno, "exporting the seccomp filter");
	if (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter))
		return isd_error(-EIO, "exporting the seccomp filter: %lld bytes", (long long)st.st_size);
	if (st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
		return isd_error(-E2BIG, "the seccomp filter has %lld instructions, the kernel takes %d",
				 (long long)(st.st_size / (off_t)sizeof(struct sock_filter)), BPF_MAXINSNS);
	buf = isd_xmalloc((size_t)st.st_size);
	n = pread(fd, buf, (size_t)st.st_size, 0);
	if (n != st.st_size)
		return isd_error(n < 0 ? -errno : -EIO, "reading the exported seccomp filter");
	*len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
	*filter = isd_steal_ptr(buf);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Finding profiles */

static bool valid_name(const char *name)
{
	if (!*name || name[0] == '.' || strlen(name) > 128)
		return false;
	for (const char *c = name; *c; c++)
		if (!(('a' <= *c && *c <= 'z') || ('A' <= *c && *c <= 'Z') || ('0' <= *c && *c <= '9') ||
		      *c == '-' || *c == '_' || *c == '.'))
			return false;
	return true;
}

/* $XDG_x_HOME if absolute (as the spec says), else $HOME/FALLBACK. */
static char *xdg_dir(const char *var, const char *fallback)
{
	const char *v = getenv(var), *home = getenv("HOME");

	if (v && v[0] == '/')
		return isd_xstrdup(v);
	if (home && home[0] == '/')
		return isd_xasprintf("%s/%s", home, fallback);
	return NULL;
}

/* The directories a NAME is looked up in, most specific first. */
static char **search_dirs(void)
{
	_cleanup_free_ char *config = xdg_dir("XDG_CONFIG_HOME", ".config");
	char **dirs = NULL;

	if (config)
		isd_strv_push(&dirs, isd_xasprintf("%s/isd/seccomp-profiles", config));
	isd_strv_push(&dirs, isd_xstrdup("/etc/isd/seccomp-profiles"));
	isd_strv_push(&dirs, isd_xstrdup(ISD_SECCOMP_PROFILES_DIR));
	if (strcmp(ISD_SECCOMP_PROFILES_DIR, ISD_SOURCE_SECCOMP_PROFILES_DIR))
		isd_strv_push(&dirs, isd_xstrdup(ISD_SOURCE_SECCOMP_PROFILES_DIR));
	return dirs;
}

int isd_seccomp_resolve(const char *name_or_path, char **path_out)
{
	_cleanup_strv_ char **dirs = NULL;
	char looked[ISD_ERROR_MAX / 2] = "";

	if (strchr(name_or_path, '/')) {
		char *real = realpath(name_or_path, NULL);
		if (!real)
			return isd_error(-errno, "seccomp profile %s", name_or_path);
		*path_out = real;
		return 0;
	}
	if (!valid_name(name_or_path))
		return isd_error(0, "seccomp profile name \"%s\" is not valid (letters, digits, '-', '_', "
				    "'.'; a path must contain a '/')", name_or_path);
	dirs = search_dirs();
	for (size_t i = 0; dirs[i]; i++) {
		_cleanup_free_ char *path = isd_xasprintf("%s/%s.json", dirs[i], name_or_path);
		struct stat st;
		size_t used = strlen(looked);

		if (stat(path, &st) == 0) {
			*path_out = isd_steal_ptr(path);
			return 0;
		}
		if (errno != ENOENT && errno != ENOTDIR)
			return isd_error(-errno, "seccomp profile \"%s\": looking at %s", name_or_path, path);
		snprintf(looked + used, sizeof(looked) - used, "%s%s", used ? ", " : "", dirs[i]);
	}
	isd_error(0, "seccomp profile \"%s\" not found (looked in %s)", name_or_path, looked);
	if (strlen(name_or_path) > 5 && !strcmp(name_or_path + strlen(name_or_path) - 5, ".json"))
		isd_error_hint("for a file in the current directory write ./%s", name_or_path);
	return -ENOENT;
}

static int read_profile(const char *path, char **buf_out, size_t *len_out)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		return isd_error(-errno, "seccomp profile %s", path);
	if (!S_ISREG(st.st_mode))
		return isd_error(0, "seccomp profile %s: not a regular file", path);
	if (st.st_size > PROFILE_MAX)
		return isd_error(0, "seccomp profile %s: larger than %d bytes", path, PROFILE_MAX);
	buf = isd_xmalloc((size_t)st.st_size + 1);
	while (len <= (size_t)st.st_size) {
		/* one byte more than expected: notices a file that grew */
		ssize_t n = read(fd, buf + len, (size_t)st.st_size + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return isd_error(-errno, "seccomp profile %s", path);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len != (size_t)st.st_size)
		return isd_error(-EAGAIN, "seccomp profile %s: changed while being read", path);
	buf[len] = '\0';
	*buf_out = isd_steal_ptr(buf);
	*len_out = len;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The BPF cache.  The file name is a hash of the key; the file holds the
 * whole key (which contains the profile bytes), so a hash collision or a
 * stale file is recognised by comparing bytes, not trusted. */

#define CACHE_MAGIC "ISDBPF\0\1"

struct cache_header {
	char magic[8];
	uint32_t key_len;
	uint32_t n_insns;
	uint32_t flags;
	uint32_t reserved;
	uint64_t checksum; /* FNV-1a 64 of the header (this field 0), key, BPF */
};

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

static uint64_t cache_checksum(const struct cache_header *hdr, const char *key,
			       const struct sock_filter *insns)
{
	struct cache_header h = *hdr;
	uint64_t sum;

	h.checksum = 0;
	sum = fnv1a(FNV_INIT, &h, sizeof(h));
	sum = fnv1a(sum, key, hdr->key_len);
	return fnv1a(sum, insns, hdr->n_insns * sizeof(*insns));
}

/* Everything the BPF depends on besides the profile. */
static char *cache_key(const char *profile, size_t len, const struct isd_seccomp_target *t,
		       size_t *key_len)
{
	const struct scmp_version *v = seccomp_version();
	_cleanup_free_ char *head = isd_xasprintf(
		"isd-seccomp-cache 1\nisd %s\nlibseccomp %u.%u.%u api %u\narch 0x%" PRIx32 "\nrelease %s\n\n",
		ISD_VERSION, v->major, v->minor, v->micro, seccomp_api_get(), t->arch, t->release);
	size_t hlen = strlen(head);
	char *key = isd_xmalloc(hlen + len);

	memcpy(key, head, hlen);
	memcpy(key + hlen, profile, len);
	*key_len = hlen + len;
	return key;
}

static char *cache_dir(void)
{
	_cleanup_free_ char *base = xdg_dir("XDG_CACHE_HOME", ".cache");
	return base ? isd_xasprintf("%s/isd/seccomp", base) : NULL;
}

static char *cache_file(const char *key, size_t key_len)
{
	_cleanup_free_ char *dir = cache_dir();
	return dir ? isd_xasprintf("%s/%016" PRIx64 ".bpf", dir, fnv1a(FNV_INIT, key, key_len)) : NULL;
}

int isd_seccomp_cache_path(const char *profile_bytes, size_t len, char **path_out)
{
	struct isd_seccomp_target t;
	_cleanup_free_ char *key = NULL;
	size_t key_len;
	int r;

	if ((r = isd_seccomp_target_native(&t)) < 0)
		return r;
	key = cache_key(profile_bytes, len, &t, &key_len);
	*path_out = cache_file(key, key_len);
	return *path_out ? 0 : -ENOENT;
}

/* 0 and the program filled, or <0 (no message: a miss is not an error). */
static int cache_load(const char *path, const char *key, size_t key_len, struct isd_seccomp_program *prog)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	_cleanup_free_ char *data = NULL;
	struct cache_header hdr;
	struct stat st;
	size_t size;
	ssize_t n;

	if (fd < 0)
		return -errno;
	/* Only our own files: anyone else's could weaken the filter. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || (size_t)st.st_size < sizeof(hdr))
		return -EBADMSG;
	n = pread(fd, &hdr, sizeof(hdr), 0);
	if (n != (ssize_t)sizeof(hdr) || memcmp(hdr.magic, CACHE_MAGIC, 8) || hdr.key_len != key_len ||
	    hdr.n_insns == 0 || hdr.n_insns > BPF_MAXINSNS)
		return -EBADMSG;
	size = key_len + hdr.n_insns * sizeof(struct sock_filter);
	if ((size_t)st.st_size != sizeof(hdr) + size)
		return -EBADMSG;
	data = isd_xmalloc(size);
	n = pread(fd, data, size, sizeof(hdr));
	if (n != (ssize_t)size)
		return -EBADMSG;
	if (memcmp(data, key, key_len))
		return -ESTALE;
	{
		struct sock_filter *insns = isd_xmalloc(hdr.n_insns * sizeof(*insns));
		memcpy(insns, data + key_len, hdr.n_insns * sizeof(*insns));
		if (cache_checksum(&hdr, data, insns) != hdr.checksum) {
			free(insns);
			return -EBADMSG;
		}
		prog->filter = insns;
	}
	prog->len = (unsigned short)hdr.n_insns;
	prog->flags = hdr.flags;
	return 0;
}

static int mkdir_private(const char *path)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -EPERM;
	return 0;
}

/* Best effort (read-only home, full disk): failures are not errors. */
static int cache_store(const char *path, const char *key, size_t key_len,
		       const struct isd_seccomp_program *prog)
{
	_cleanup_free_ char *dir = isd_xstrdup(path), *tmp = NULL;
	struct cache_header hdr = { .key_len = (uint32_t)key_len, .n_insns = prog->len, .flags = prog->flags };
	char *slash;
	int fd, r;

	/* .../isd/seccomp/X.bpf: make .../ (XDG says 0700), .../isd, .../isd/seccomp */
	for (int up = 3; up > 0; up--) {
		strcpy(dir, path);
		for (int i = 0; i < up; i++)
			if ((slash = strrchr(dir, '/')))
				*slash = '\0';
		if (!*dir || (r = mkdir_private(dir)) < 0)
			return up == 3 ? 0 : -EPERM; /* an existing XDG dir may be anyone's */
	}
	memcpy(hdr.magic, CACHE_MAGIC, 8);
	hdr.checksum = cache_checksum(&hdr, key, prog->filter);
	tmp = isd_xasprintf("%s.tmpXXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = isd_write_all(fd, &hdr, sizeof(hdr));
	if (r >= 0)
		r = isd_write_all(fd, key, key_len);
	if (r >= 0)
		r = isd_write_all(fd, prog->filter, prog->len * sizeof(struct sock_filter));
	if (close(fd) < 0 && r >= 0)
		r = -errno;
	if (r >= 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

/* ------------------------------------------------------------------ */
/* The API the sandbox uses */

static int compile_profile(const char *buf, size_t len, const char *origin,
			   const struct isd_seccomp_target *t, struct isd_seccomp_program *prog)
{
	struct isd_seccomp_profile *p = NULL;
	void *ctx = NULL;
	int r;

	if ((r = isd_seccomp_parse_buffer(buf, len, origin, t, &p)) < 0)
		return r;
	r = isd_seccomp_build(p, &ctx);
	if (r >= 0)
		r = isd_seccomp_export(ctx, &prog->filter, &prog->len);
	if (r >= 0)
		prog->flags = p->flags;
	isd_seccomp_ctx_free(ctx);
	isd_seccomp_profile_free(p);
	return r;
}

int isd_seccomp_prepare(const char *name_or_path, struct isd_seccomp_program *out)
{
	_cleanup_free_ char *buf = NULL, *key = NULL, *cpath = NULL;
	struct isd_seccomp_target t;
	size_t len, key_len;
	int r;

	memset(out, 0, sizeof(*out));
	if (!name_or_path)
		name_or_path = "default";
	if (!*name_or_path)
		return isd_error(0, "empty seccomp profile name");
	out->name = isd_xstrdup(name_or_path);
	if (!strcmp(name_or_path, "unconfined")) {
		out->unconfined = true;
		return 0;
	}
	if ((r = isd_seccomp_resolve(name_or_path, &out->profile_path)) < 0 ||
	    (r = read_profile(out->profile_path, &buf, &len)) < 0 ||
	    (r = isd_seccomp_target_native(&t)) < 0)
		goto fail;

	key = cache_key(buf, len, &t, &key_len);
	cpath = cache_file(key, key_len);
	if (cpath && cache_load(cpath, key, key_len, out) == 0) {
		out->from_cache = true;
		return 0;
	}
	if ((r = compile_profile(buf, len, out->profile_path, &t, out)) < 0)
		goto fail;
	if (cpath)
		(void)cache_store(cpath, key, key_len, out);
	return 0;
fail:
	isd_seccomp_program_free(out);
	return r;
}

int isd_seccomp_install(const struct isd_seccomp_program *prog)
{
	struct sock_fprog fprog;

	if (!prog || prog->unconfined)
		return 0;
	if (!prog->filter || prog->len == 0)
		return isd_error(-EINVAL, "installing the seccomp filter: none was prepared");
	fprog.len = prog->len;
	fprog.filter = prog->filter;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, prog->flags, &fprog) == 0)
		return 0;
	/* Kernels before 3.17 only have the prctl. */
	if (errno == ENOSYS && prog->flags == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) == 0)
		return 0;
	return isd_error(-errno, "installing the seccomp filter of profile \"%s\"",
			 prog->name ? prog->name : "?");
}

void isd_seccomp_program_free(struct isd_seccomp_program *prog)
{
	if (!prog)
		return;
	free(prog->filter);
	free(prog->name);
	free(prog->profile_path);
	memset(prog, 0, sizeof(*prog));
}

/* ------------------------------------------------------------------ */
/* `isd seccomp check`: what a profile does on this machine */

/* What the filter does with one native syscall, the way libseccomp
 * resolves overlaps: an unconditional rule wins over conditional ones. */
struct view {
	int nr;
	const char *name;
	bool uncond;
	uint32_t action;
	size_t *rules; /* conditional rules (indexes into profile->rules) */
	size_t n_rules;
	bool conflict;
};

struct report {
	const struct isd_seccomp_profile *p;
	struct view *v;
	size_t n;
	size_t n_skipped[ISD_SECCOMP_SKIP_REDUNDANT + 1];
	size_t n_not_here;
	char **warnings;
};

static const struct family {
	const char *name;
	const char *syscalls[14];
} families[] = {
	{ "mount", { "mount", "umount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
		     "open_tree", "mount_setattr", "pivot_root", "chroot" } },
	{ "namespaces", { "clone", "clone3", "unshare", "setns" } },
	{ "keyring", { "add_key", "keyctl", "request_key" } },
	{ "bpf/perf", { "bpf", "perf_event_open" } },
	{ "userfaultfd", { "userfaultfd" } },
	{ "kexec", { "kexec_load", "kexec_file_load" } },
	{ "modules", { "init_module", "finit_module", "delete_module" } },
	{ "file handles", { "open_by_handle_at", "name_to_handle_at" } },
	{ "swap", { "swapon", "swapoff" } },
	{ "reboot", { "reboot" } },
	{ "tty (TIOCSTI)", { "ioctl" } },
	{ "io_uring", { "io_uring_setup", "io_uring_enter", "io_uring_register" } },
	{ "ptrace", { "ptrace", "process_vm_readv", "process_vm_writev" } },
	{ "system", { "syslog", "acct", "quotactl", "settimeofday", "clock_settime", "sethostname",
		      "setdomainname", "iopl", "ioperm", "vhangup", "lookup_dcookie" } },
};

static int view_cmp(const void *a, const void *b)
{
	return strcmp(((const struct view *)a)->name, ((const struct view *)b)->name);
}

static struct view *view_find(struct report *rep, int nr)
{
	for (size_t i = 0; i < rep->n; i++)
		if (rep->v[i].nr == nr)
			return &rep->v[i];
	return NULL;
}

static void report_build(struct report *rep, const struct isd_seccomp_profile *p)
{
	char a[32], b[32];

	memset(rep, 0, sizeof(*rep));
	rep->p = p;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct isd_seccomp_rule *rule = &p->rules[i];
		if (rule->skip) {
			rep->n_skipped[rule->skip]++;
			continue;
		}
		for (size_t j = 0; j < rule->n_names; j++) {
			struct view *v;
			if (rule->nrs[j] == NR_NOT_HERE)
				rep->n_not_here++;
			if (rule->nrs[j] < 0)
				continue; /* unknown, or only on a compat ABI */
			if (!(v = view_find(rep, rule->nrs[j]))) {
				rep->v = isd_xrealloc(rep->v, (rep->n + 1) * sizeof(*rep->v));
				v = &rep->v[rep->n++];
				*v = (struct view){ .nr = rule->nrs[j], .name = rule->names[j] };
			}
			if (rule->n_conds == 0) {
				if (v->uncond && v->action != rule->action && !v->conflict) {
					v->conflict = true;
					isd_strv_push(&rep->warnings,
						      isd_xasprintf("%s: syscalls[%zu] says %s, an earlier rule %s; "
								    "which one applies is up to libseccomp",
								    v->name, rule->json_index,
								    isd_seccomp_action_str(rule->action, a, sizeof(a)),
								    isd_seccomp_action_str(v->action, b, sizeof(b))));
				}
				if (!v->uncond) {
					v->uncond = true;
					v->action = rule->action;
				}
			} else {
				v->rules = isd_xrealloc(v->rules, (v->n_rules + 1) * sizeof(size_t));
				v->rules[v->n_rules++] = i;
			}
		}
	}
	for (size_t i = 0; i < rep->n; i++) {
		struct view *v = &rep->v[i];
		for (size_t k = 0; v->uncond && k < v->n_rules; k++)
			if (p->rules[v->rules[k]].action != v->action) {
				isd_strv_push(&rep->warnings,
					      isd_xasprintf("%s: the conditional rule syscalls[%zu] never applies: an "
							    "unconditional rule for the syscall overrides it",
							    v->name, p->rules[v->rules[k]].json_index));
				break;
			}
	}
	qsort(rep->v, rep->n, sizeof(*rep->v), view_cmp);
	{
		int nr = seccomp_syscall_resolve_name("execve");
		struct view *v = nr >= 0 ? view_find(rep, nr) : NULL;
		if (v ? v->uncond && v->action != SCMP_ACT_ALLOW && v->action != SCMP_ACT_LOG
		      : p->default_action != SCMP_ACT_ALLOW && p->default_action != SCMP_ACT_LOG)
			isd_strv_push(&rep->warnings, isd_xstrdup("execve is not allowed: no command can start "
								  "under this profile"));
	}
}

static void report_free(struct report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		free(rep->v[i].rules);
	free(rep->v);
	isd_strv_free(rep->warnings);
}

static void cond_str(const struct isd_seccomp_cond *c, char *buf, size_t size)
{
	if (c->op == SCMP_CMP_MASKED_EQ)
		snprintf(buf, size, "arg%u & 0x%" PRIx64 " == 0x%" PRIx64, c->index, c->value, c->value_two);
	else
		snprintf(buf, size, "arg%u %s 0x%" PRIx64, c->index,
			 (const char *[]){ "?", "!=", "<", "<=", "==", ">=", ">", "&" }[c->op & 7], c->value);
}

/* "ALLOW", "ERRNO(EPERM)" or "conditional" */
static const char *view_action(const struct report *rep, const char *name, char *buf, size_t size)
{
	int nr = seccomp_syscall_resolve_name(name);
	const struct view *v = NULL;

	for (size_t i = 0; nr >= 0 && i < rep->n; i++)
		if (rep->v[i].nr == nr)
			v = &rep->v[i];
	if (nr < 0)
		return NULL; /* not a syscall here */
	if (v && v->uncond)
		return isd_seccomp_action_str(v->action, buf, size);
	if (v)
		return "conditional";
	return isd_seccomp_action_str(rep->p->default_action, buf, size);
}

static void report_counts(const struct report *rep, size_t *allowed, size_t *conditional, size_t *other)
{
	*allowed = *conditional = *other = 0;
	for (size_t i = 0; i < rep->n; i++) {
		if (!rep->v[i].uncond)
			(*conditional)++;
		else if (rep->v[i].action == SCMP_ACT_ALLOW)
			(*allowed)++;
		else
			(*other)++;
	}
}

static void report_text(const struct report *rep, bool verbose)
{
	const struct isd_seccomp_profile *p = rep->p;
	const struct scmp_version *ver = seccomp_version();
	size_t allowed, conditional, other, names = 0;
	char a[32];

	report_counts(rep, &allowed, &conditional, &other);
	for (size_t i = 0; i < p->n_rules; i++)
		names += p->rules[i].n_names;
	printf("profile: %s\n", p->origin);
	printf("architecture: %s (filter:", arch_label(p->arches[0]));
	for (size_t i = 0; i < p->n_arches; i++)
		printf(" %s", arch_label(p->arches[i]));
	printf("; any other ABI: %s)\n", isd_seccomp_action_str(SCMP_ACT_ERRNO(EPERM), a, sizeof(a)));
	printf("default action: %s\n", isd_seccomp_action_str(p->default_action, a, sizeof(a)));
	printf("entries: %zu with %zu names; skipped: %zu by capabilities, %zu by architecture, "
	       "%zu by kernel version, %zu repeating the default action\n",
	       p->n_rules, names, rep->n_skipped[ISD_SECCOMP_SKIP_CAPS], rep->n_skipped[ISD_SECCOMP_SKIP_ARCH],
	       rep->n_skipped[ISD_SECCOMP_SKIP_KERNEL], rep->n_skipped[ISD_SECCOMP_SKIP_REDUNDANT]);
	printf("names ignored: %zu unknown to libseccomp %u.%u.%u, %zu not on this architecture\n",
	       p->n_unknown_names, ver->major, ver->minor, ver->micro, rep->n_not_here);
	printf("syscalls: %zu allowed, %zu conditional, %zu with another action, the rest %s\n", allowed,
	       conditional, other, isd_seccomp_action_str(p->default_action, a, sizeof(a)));

	printf("\nfamilies:\n");
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		printf("  %-14s", families[f].name);
		for (size_t i = 0; i < 14 && families[f].syscalls[i]; i++) {
			const char *act = view_action(rep, families[f].syscalls[i], a, sizeof(a));
			if (act)
				printf(" %s=%s", families[f].syscalls[i], act);
		}
		printf("\n");
	}

	printf("\nsyscalls not simply allowed:\n");
	for (size_t i = 0; i < rep->n; i++) {
		const struct view *v = &rep->v[i];
		if (v->uncond && v->action != SCMP_ACT_ALLOW)
			printf("  %-20s %s\n", v->name, isd_seccomp_action_str(v->action, a, sizeof(a)));
		else if (!v->uncond) {
			printf("  %-20s conditional:\n", v->name);
			for (size_t k = 0; k < v->n_rules; k++) {
				const struct isd_seccomp_rule *rule = &p->rules[v->rules[k]];
				printf("    %s if", isd_seccomp_action_str(rule->action, a, sizeof(a)));
				for (size_t c = 0; c < rule->n_conds; c++) {
					char cs[96];
					cond_str(&rule->conds[c], cs, sizeof(cs));
					printf("%s %s", c ? " and" : "", cs);
				}
				printf("\n");
			}
			printf("    otherwise %s\n", isd_seccomp_action_str(p->default_action, a, sizeof(a)));
		}
	}
	if (verbose) {
		printf("\nnames ignored (unknown to this libseccomp, or not on this architecture):\n ");
		for (size_t i = 0; i < p->n_rules; i++)
			for (size_t j = 0; !p->rules[i].skip && j < p->rules[i].n_names; j++)
				if (p->rules[i].nrs[j] == NR_UNKNOWN || p->rules[i].nrs[j] == NR_NOT_HERE)
					printf(" %s", p->rules[i].names[j]);
		printf("\n\nentries skipped:\n");
		for (size_t i = 0; i < p->n_rules; i++) {
			static const char *const why[] = { "", "includes.caps (no capabilities)", "arches",
							   "minKernel", "same action as the default" };
			if (p->rules[i].skip)
				printf("  syscalls[%zu] (%s%s): %s\n", p->rules[i].json_index, p->rules[i].names[0],
				       p->rules[i].n_names > 1 ? ", ..." : "", why[p->rules[i].skip]);
		}
	}
	for (size_t i = 0; p->notes && p->notes[i]; i++)
		printf("%snote: %s\n", i ? "" : "\n", p->notes[i]);
	for (size_t i = 0; rep->warnings && rep->warnings[i]; i++)
		printf("%swarning: %s\n", i || p->notes ? "" : "\n", rep->warnings[i]);
}

static struct json_object *jstr(const char *s)
{
	return json_object_new_string(s);
}

static struct json_object *report_json(const struct report *rep)
{
	const struct isd_seccomp_profile *p = rep->p;
	struct json_object *o = json_object_new_object(), *arr, *sys, *fam, *counts;
	size_t allowed, conditional, other;
	char a[32];

	report_counts(rep, &allowed, &conditional, &other);
	json_object_object_add(o, "valid", json_object_new_boolean(1));
	json_object_object_add(o, "profile", jstr(p->origin));
	json_object_object_add(o, "architecture", jstr(arch_label(p->arches[0])));
	arr = json_object_new_array();
	for (size_t i = 0; i < p->n_arches; i++)
		json_object_array_add(arr, jstr(arch_label(p->arches[i])));
	json_object_object_add(o, "filterArchitectures", arr);
	json_object_object_add(o, "badArchAction", jstr(isd_seccomp_action_str(SCMP_ACT_ERRNO(EPERM), a, sizeof(a))));
	json_object_object_add(o, "defaultAction", jstr(isd_seccomp_action_str(p->default_action, a, sizeof(a))));

	counts = json_object_new_object();
	json_object_object_add(counts, "entries", json_object_new_uint64(p->n_rules));
	json_object_object_add(counts, "skippedByCaps", json_object_new_uint64(rep->n_skipped[ISD_SECCOMP_SKIP_CAPS]));
	json_object_object_add(counts, "skippedByArch", json_object_new_uint64(rep->n_skipped[ISD_SECCOMP_SKIP_ARCH]));
	json_object_object_add(counts, "skippedByKernel", json_object_new_uint64(rep->n_skipped[ISD_SECCOMP_SKIP_KERNEL]));
	json_object_object_add(counts, "redundant", json_object_new_uint64(rep->n_skipped[ISD_SECCOMP_SKIP_REDUNDANT]));
	json_object_object_add(counts, "unknownNames", json_object_new_uint64(p->n_unknown_names));
	json_object_object_add(counts, "otherArchNames", json_object_new_uint64(rep->n_not_here));
	json_object_object_add(counts, "allowed", json_object_new_uint64(allowed));
	json_object_object_add(counts, "conditional", json_object_new_uint64(conditional));
	json_object_object_add(counts, "otherAction", json_object_new_uint64(other));
	json_object_object_add(o, "counts", counts);

	sys = json_object_new_object();
	for (size_t i = 0; i < rep->n; i++) {
		const struct view *v = &rep->v[i];
		struct json_object *c, *rules;
		if (v->uncond) {
			json_object_object_add(sys, v->name, jstr(isd_seccomp_action_str(v->action, a, sizeof(a))));
			continue;
		}
		c = json_object_new_object();
		rules = json_object_new_array();
		for (size_t k = 0; k < v->n_rules; k++) {
			const struct isd_seccomp_rule *rule = &p->rules[v->rules[k]];
			struct json_object *r = json_object_new_object(), *args = json_object_new_array();
			json_object_object_add(r, "action", jstr(isd_seccomp_action_str(rule->action, a, sizeof(a))));
			for (size_t n = 0; n < rule->n_conds; n++) {
				struct json_object *arg = json_object_new_object();
				json_object_object_add(arg, "index", json_object_new_int((int)rule->conds[n].index));
				json_object_object_add(arg, "op", jstr(op_name(rule->conds[n].op)));
				json_object_object_add(arg, "value", json_object_new_uint64(rule->conds[n].value));
				json_object_object_add(arg, "valueTwo", json_object_new_uint64(rule->conds[n].value_two));
				json_object_array_add(args, arg);
			}
			json_object_object_add(r, "args", args);
			json_object_array_add(rules, r);
		}
		json_object_object_add(c, "conditional", rules);
		json_object_object_add(c, "otherwise", jstr(isd_seccomp_action_str(p->default_action, a, sizeof(a))));
		json_object_object_add(sys, v->name, c);
	}
	json_object_object_add(o, "syscalls", sys);

	fam = json_object_new_object();
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		struct json_object *members = json_object_new_object();
		for (size_t i = 0; i < 14 && families[f].syscalls[i]; i++) {
			const char *act = view_action(rep, families[f].syscalls[i], a, sizeof(a));
			if (act)
				json_object_object_add(members, families[f].syscalls[i], jstr(act));
		}
		json_object_object_add(fam, families[f].name, members);
	}
	json_object_object_add(o, "families", fam);
	arr = json_object_new_array();
	for (size_t i = 0; rep->warnings && rep->warnings[i]; i++)
		json_object_array_add(arr, jstr(rep->warnings[i]));
	for (size_t i = 0; p->notes && p->notes[i]; i++)
		json_object_array_add(arr, jstr(p->notes[i]));
	json_object_object_add(o, "warnings", arr);
	return o;
}

/* For the fuzzer: exercise the report without printing it. */
int isd_seccomp_describe_json(const struct isd_seccomp_profile *p, char **out)
{
	struct report rep;
	struct json_object *o;

	report_build(&rep, p);
	o = report_json(&rep);
	*out = isd_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	report_free(&rep);
	return 0;
}

static int cmd_check(int argc, char **argv)
{
	bool pfc = false, as_json = false, verbose = false;
	const char *what = NULL;
	_cleanup_free_ char *path = NULL, *buf = NULL;
	struct isd_seccomp_profile *p = NULL;
	void *ctx = NULL;
	size_t len;
	int r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pfc"))
			pfc = true;
		else if (!strcmp(argv[i], "--json"))
			as_json = true;
		else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			verbose = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return isd_error(0, "seccomp check: unknown option %s", argv[i]);
		else if (!what)
			what = argv[i];
		else
			return isd_error(0, "seccomp check: one profile at a time");
	}
	if (!what)
		return isd_error(0, "usage: isd seccomp check PROFILE [--pfc] [--json] [-v]");
	if (pfc && as_json)
		return isd_error(0, "seccomp check: --pfc and --json exclude each other");
	if (!strcmp(what, "unconfined")) {
		if (as_json)
			printf("{ \"valid\": true, \"profile\": \"unconfined\", \"unconfined\": true }\n");
		else
			printf("profile: unconfined (built in): no seccomp filter\n");
		return 0;
	}
	if ((r = isd_seccomp_resolve(what, &path)) < 0 || (r = read_profile(path, &buf, &len)) < 0 ||
	    (r = isd_seccomp_parse_buffer(buf, len, path, NULL, &p)) < 0)
		return r;
	/* Compiling catches what only libseccomp knows (conflicting rules). */
	if ((r = isd_seccomp_build(p, &ctx)) >= 0) {
		if (pfc) {
			fflush(stdout);
			r = seccomp_export_pfc(ctx, STDOUT_FILENO);
			if (r < 0)
				isd_error(r, "exporting the PFC text");
		} else if (as_json) {
			char *s = NULL;
			isd_seccomp_describe_json(p, &s);
			printf("%s\n", s);
			free(s);
		} else {
			struct report rep;
			report_build(&rep, p);
			report_text(&rep, verbose);
			report_free(&rep);
		}
	}
	isd_seccomp_ctx_free(ctx);
	isd_seccomp_profile_free(p);
	return r;
}

static int cmd_list(void)
{
	_cleanup_strv_ char **dirs = search_dirs(), **seen = NULL;

	printf("%-24s %s\n", "unconfined", "(built in: no filter)");
	for (size_t i = 0; dirs[i]; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;
		if (!d)
			continue;
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name);
			bool shadowed = false;
			char *name;
			if (n <= 5 || strcmp(de->d_name + n - 5, ".json") || de->d_name[0] == '.')
				continue;
			name = strndup(de->d_name, n - 5);
			if (!name)
				name = isd_xstrdup("?");
			for (size_t k = 0; seen && seen[k]; k++)
				shadowed |= !strcmp(seen[k], name);
			printf("%-24s %s/%s%s\n", name, dirs[i], de->d_name, shadowed ? " (shadowed)" : "");
			isd_strv_push(&seen, name);
		}
		closedir(d);
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: isd seccomp check PROFILE [--pfc] [--json] [-v]\n"
		   "       isd seccomp list\n"
		   "PROFILE is a name (looked up in $XDG_CONFIG_HOME/isd/seccomp-profiles,\n"
		   "/etc/isd/seccomp-profiles, %s), a path containing '/', or \"unconfined\".\n"
		   "check: validates the profile and shows what it allows and denies here\n"
		   "       (--pfc: libseccomp's pseudo-filter code; --json: machine-readable).\n",
		ISD_SECCOMP_PROFILES_DIR);
}

int isd_seccomp_main(int argc, char **argv)
{
	int r;

	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? ISD_EXIT_FAILURE : 0;
	}
	if (!strcmp(argv[1], "check"))
		r = cmd_check(argc - 1, argv + 1);
	else if (!strcmp(argv[1], "list"))
		r = cmd_list();
	else
		r = isd_error(0, "unknown seccomp subcommand \"%s\" (try: check, list)", argv[1]);
	if (fflush(stdout) != 0 && r >= 0)
		r = isd_error(-EIO, "writing the output");
	if (r < 0) {
		isd_error_print("seccomp failed");
		return ISD_EXIT_FAILURE;
	}
	return 0;
}
