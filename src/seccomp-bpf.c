/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seccomp, part two: compiling a parsed profile with libseccomp, finding
 * profiles by name, the cache of exported BPF, and the API the sandbox uses
 * (prepare in the parent, install in the child).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isd/seccomp.h"
#include "seccomp-internal.h"
#include "isd/fsutil.h"
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

/* What build_ctx() puts in a filter: the whole profile (the program), or
 * the fast path's rules only (see isd_seccomp_compile). */
struct build_mode {
	uint32_t default_action, badarch_action;
	bool native_only;
	const int *only_nrs; /* NULL: every syscall */
	size_t n_only;
};

static bool nr_in(const int *nrs, size_t n, int nr)
{
	for (size_t i = 0; i < n; i++)
		if (nrs[i] == nr)
			return true;
	return false;
}

static int build_ctx(const struct isd_seccomp_profile *p, const struct build_mode *m, void **ctx_out)
{
	scmp_filter_ctx ctx = seccomp_init(m->default_action);
	int r;

	if (!ctx)
		return isd_error(-ENOMEM, "seccomp profile %s: creating the libseccomp filter", p->origin);
	if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, m->badarch_action)) < 0 ||
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
				  isd_seccomp_arch_label(p->arches[0]));
			goto fail;
		}
	}
	for (size_t i = 1; i < p->n_arches && !m->native_only; i++) {
		r = seccomp_arch_add(ctx, p->arches[i]);
		if (r < 0 && r != -EEXIST) {
			isd_error(r, "seccomp profile %s: adding architecture %s", p->origin,
				  isd_seccomp_arch_label(p->arches[i]));
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
			if (m->only_nrs && !nr_in(m->only_nrs, m->n_only, rule->nrs[j]))
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

int isd_seccomp_build(const struct isd_seccomp_profile *p, void **ctx_out)
{
	/* Foreign ABIs (int 0x80, x32) are a classic way around a filter
	 * written for the native one: refuse them, without killing. */
	struct build_mode m = { .default_action = p->default_action, .badarch_action = SCMP_ACT_ERRNO(EPERM) };

	return build_ctx(p, &m, ctx_out);
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
/* The fast path.  The kernel remembers, per syscall number, what a filter
 * allows whatever the arguments, and skips the filter for those (seccomp's
 * action cache, Linux 5.11): the BPF runs only for the syscalls with
 * argument checks and for the denied ones.  libseccomp orders its tree by
 * number, so the hot argument checks (ioctl, openat) waited behind eight
 * comparisons meant for syscalls the kernel never asks about.  The program
 * isd installs starts with a filter of the argument-checked syscalls alone
 * (native ABI); whatever that does not decide jumps to the whole profile's
 * filter, which still holds every rule, so the fast path can only answer
 * as the whole filter would.  The jumps are constant-value ones, so the
 * kernel's cache still sees the plain syscalls as always allowed. */

static void collect_checked(const struct isd_seccomp_profile *p, int **nrs, size_t *n)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct isd_seccomp_rule *rule = &p->rules[i];
		if (rule->skip || rule->n_conds == 0)
			continue;
		for (size_t j = 0; j < rule->n_names; j++) {
			/* <0: libseccomp's pseudo numbers, not the native ABI */
			if (rule->nrs[j] < 0 || nr_in(*nrs, *n, rule->nrs[j]))
				continue;
			*nrs = isd_xrealloc(*nrs, (*n + 1) * sizeof(**nrs));
			(*nrs)[(*n)++] = rule->nrs[j];
		}
	}
}

/* An action no rule of P takes, to mark "not decided here". */
static uint32_t pick_undecided(const struct isd_seccomp_profile *p)
{
	for (uint32_t data = 0xffff;; data--) {
		uint32_t a = SCMP_ACT_TRACE(data);
		bool used = a == p->default_action;
		for (size_t i = 0; i < p->n_rules && !used; i++)
			used = p->rules[i].action == a;
		if (!used)
			return a;
	}
}

/* Turns PRE's returns of UNDECIDED into jumps past its end; false when
 * PRE is not a program that stays inside itself. */
static bool link_fast_path(struct sock_filter *pre, unsigned n, uint32_t undecided)
{
	if (n == 0 || BPF_CLASS(pre[n - 1].code) != BPF_RET)
		return false;
	for (unsigned i = 0; i < n; i++) {
		struct sock_filter *in = &pre[i];
		if (in->code == (BPF_RET | BPF_K) && in->k == undecided) {
			*in = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, n - i - 1, 0, 0);
		} else if (BPF_CLASS(in->code) == BPF_JMP) {
			bool ja = BPF_OP(in->code) == BPF_JA;
			if ((ja ? in->k : (in->jt > in->jf ? in->jt : in->jf)) >= n - i - 1)
				return false;
		} else if (BPF_CLASS(in->code) == BPF_RET && BPF_RVAL(in->code) != BPF_K) {
			return false;
		}
	}
	return true;
}

int isd_seccomp_build_fast_path(const struct isd_seccomp_profile *p, void **ctx_out, uint32_t *undecided)
{
	_cleanup_free_ int *nrs = NULL;
	struct build_mode m = { .native_only = true };
	size_t n_nrs = 0;

	*ctx_out = NULL;
	collect_checked(p, &nrs, &n_nrs);
	if (n_nrs == 0)
		return 0;
	m.default_action = m.badarch_action = *undecided = pick_undecided(p);
	m.only_nrs = nrs;
	m.n_only = n_nrs;
	return build_ctx(p, &m, ctx_out);
}

int isd_seccomp_compile(const struct isd_seccomp_profile *p, struct sock_filter **filter, unsigned short *len)
{
	_cleanup_free_ struct sock_filter *whole = NULL, *pre = NULL;
	unsigned short n_whole, n_pre = 0;
	uint32_t undecided = 0;
	void *ctx = NULL;
	int r;

	if ((r = isd_seccomp_build(p, &ctx)) < 0)
		return r;
	r = isd_seccomp_export(ctx, &whole, &n_whole);
	isd_seccomp_ctx_free(ctx);
	if (r < 0 || (r = isd_seccomp_build_fast_path(p, &ctx, &undecided)) < 0)
		return r;
	if (ctx)
		r = isd_seccomp_export(ctx, &pre, &n_pre);
	isd_seccomp_ctx_free(ctx);
	if (r < 0)
		return r;
	/* Without a fast path (none needed, or too long for the kernel's
	 * 4096 instructions) the whole filter alone is the same policy. */
	if (!pre || (size_t)n_pre + n_whole > BPF_MAXINSNS || !link_fast_path(pre, n_pre, undecided)) {
		*len = n_whole;
		*filter = isd_steal_ptr(whole);
		return 0;
	}
	pre = isd_xrealloc(pre, ((size_t)n_pre + n_whole) * sizeof(*pre));
	memcpy(pre + n_pre, whole, n_whole * sizeof(*whole));
	*len = (unsigned short)(n_pre + n_whole);
	*filter = isd_steal_ptr(pre);
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
char **isd_seccomp_search_dirs(void)
{
	_cleanup_free_ char *config = xdg_dir("XDG_CONFIG_HOME", ".config");
	char **dirs = NULL;

	if (config)
		isd_strv_push(&dirs, isd_xasprintf("%s/isd/seccomp-profiles", config));
	isd_strv_push(&dirs, isd_xstrdup("/etc/isd/seccomp-profiles"));
	isd_strv_push(&dirs, isd_xstrdup(ISD_SECCOMP_PROFILES_DIR));
	/* An installed isd must not read profiles from where it was built. */
	if (isd_running_uninstalled() && strcmp(ISD_SECCOMP_PROFILES_DIR, ISD_SOURCE_SECCOMP_PROFILES_DIR))
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
	dirs = isd_seccomp_search_dirs();
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

int isd_seccomp_read_profile(const char *path, char **buf_out, size_t *len_out)
{
	/* O_NONBLOCK: a FIFO must not hang us before fstat() refuses it */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
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

static uint64_t cache_checksum(const struct cache_header *hdr, const char *key,
			       const struct sock_filter *insns)
{
	struct cache_header h = *hdr;
	uint64_t sum;

	h.checksum = 0;
	sum = isd_fnv1a(ISD_FNV1A_INIT, &h, sizeof(h));
	sum = isd_fnv1a(sum, key, hdr->key_len);
	return isd_fnv1a(sum, insns, hdr->n_insns * sizeof(*insns));
}

/* Everything the BPF depends on besides the profile. */
static char *cache_key(const char *profile, size_t len, const struct isd_seccomp_target *t,
		       size_t *key_len)
{
	const struct scmp_version *v = seccomp_version();
	_cleanup_free_ char *head = isd_xasprintf(
		"isd-seccomp-cache 2\nisd %s\nlibseccomp %u.%u.%u api %u\narch 0x%" PRIx32 "\nrelease %s\n\n",
		ISD_VERSION, v->major, v->minor, v->micro, seccomp_api_get(), t->arch, t->release);
	size_t hlen = strlen(head);
	char *key = isd_xmalloc(hlen + len);

	memcpy(key, head, hlen);
	memcpy(key + hlen, profile, len);
	*key_len = hlen + len;
	return key;
}

/* $XDG_RUNTIME_DIR/isd/seccomp: a tmpfs of the caller's own (0700, per
 * the XDG spec) that no sandbox sees, since each gets a fresh /run, and
 * that isd covers read-only where a bind would show it (guard.h).
 * Without a usable runtime directory (no logind session: ssh without
 * pam_systemd, a container, cron) the cache is $XDG_CACHE_HOME/isd/bpf,
 * as the mask record falls back to $XDG_CACHE_HOME/isd/masks: guard.c
 * covers that read-only in every sandbox of either tier, so what could
 * forge a filter there could as well plant
 * ~/.config/isd/seccomp-profiles/default.json, which isd reads first.
 * Not ~/.cache/isd/seccomp, where versions before the guard kept it and
 * a sandbox with -v $HOME:$HOME could have left a forged filter behind
 * (a checksum cannot tell a forged filter from ours). */
static char *cache_dir(void)
{
	const char *run = isd_runtime_dir(), *base = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	struct stat st;

	if (run && stat(run, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	    !(st.st_mode & 077))
		return isd_xasprintf("%s/isd/seccomp", run);
	if (base && base[0] == '/')
		return isd_xasprintf("%s/isd/bpf", base);
	if (home && home[0] == '/' && home[1])
		return isd_xasprintf("%s/.cache/isd/bpf", home);
	return NULL;
}

static char *cache_file(const char *key, size_t key_len)
{
	_cleanup_free_ char *dir = cache_dir();
	return dir ? isd_xasprintf("%s/%016" PRIx64 ".bpf", dir, isd_fnv1a(ISD_FNV1A_INIT, key, key_len)) : NULL;
}

/* BASE/isd/X/: isd/ and X/ must be directories, not links, ours and not
 * writable by others, opened one component at a time so that neither
 * can be swapped for a link between the check and the use.  BASE itself
 * may be a link (a cache on another disk); the runtime directory was
 * checked by cache_dir and the cache home is covered by the guard. */
static int open_cache_dir(const char *file)
{
	_cleanup_free_ char *dir = isd_xstrdup(file);
	_cleanup_close_ int base = -1, isd = -1;
	char *slash, *sub, *name;
	struct stat st;
	int fd;

	for (int i = 0; i < 3; i++) {
		if (!(slash = strrchr(dir, '/')) || slash == dir)
			return -EINVAL;
		*slash = '\0';
	}
	name = slash + 1;           /* "isd" */
	sub = name + strlen(name) + 1; /* "seccomp" or "bpf" */
	base = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (base < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		fd = openat(i ? isd : base, i ? sub : name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
			close(fd);
			return -EPERM;
		}
		if (i)
			return fd;
		isd = fd;
	}
	return -EINVAL;
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
	_cleanup_close_ int dfd = open_cache_dir(path), fd = -1;
	_cleanup_free_ char *data = NULL;
	struct cache_header hdr;
	struct stat st;
	size_t size;
	ssize_t n;

	if (dfd < 0)
		return dfd;
	fd = openat(dfd, strrchr(path, '/') + 1, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
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
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -EPERM;
	return 0;
}

/* Best effort (read-only home, full disk): failures are not errors. */
static int cache_store(const char *path, const char *key, size_t key_len,
		       const struct isd_seccomp_program *prog)
{
	_cleanup_free_ char *dir = isd_xstrdup(path), *data = NULL;
	struct cache_header hdr = { .key_len = (uint32_t)key_len, .n_insns = prog->len, .flags = prog->flags };
	char *slash;
	size_t len;
	int r;

	/* BASE/isd/seccomp/X.bpf: BASE is ours (cache_dir checked), isd/
	 * and isd/seccomp/ must be too. */
	for (int up = 3; up > 0; up--) {
		strcpy(dir, path);
		for (int i = 0; i < up; i++)
			if ((slash = strrchr(dir, '/')))
				*slash = '\0';
		if (!*dir)
			return -EINVAL;
		if (up == 3)
			(void)isd_mkdir_p(dir, 0700);
		else if ((r = mkdir_private(dir)) < 0)
			return r;
	}
	memcpy(hdr.magic, CACHE_MAGIC, 8);
	hdr.checksum = cache_checksum(&hdr, key, prog->filter);
	len = sizeof(hdr) + key_len + prog->len * sizeof(struct sock_filter);
	data = isd_xmalloc(len);
	memcpy(data, &hdr, sizeof(hdr));
	memcpy(data + sizeof(hdr), key, key_len);
	memcpy(data + sizeof(hdr) + key_len, prog->filter, prog->len * sizeof(struct sock_filter));
	{
		_cleanup_close_ int dfd = open_cache_dir(path);
		if (dfd < 0)
			return dfd;
		return isd_replace_file_at(dfd, strrchr(path, '/') + 1, data, len, 0600, false);
	}
}

/* ------------------------------------------------------------------ */
/* The API the sandbox uses */

static int compile_profile(const char *buf, size_t len, const char *origin,
			   const struct isd_seccomp_target *t, struct isd_seccomp_program *prog)
{
	struct isd_seccomp_profile *p = NULL;
	int r;

	if ((r = isd_seccomp_parse_buffer(buf, len, origin, t, &p)) < 0)
		return r;
	r = isd_seccomp_compile(p, &prog->filter, &prog->len);
	if (r >= 0)
		prog->flags = p->flags;
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
	    (r = isd_seccomp_read_profile(out->profile_path, &buf, &len)) < 0 ||
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
	if (cpath && cache_store(cpath, key, key_len, out) < 0)
		isd_error_clear(); /* a cache that could not be written is no failure */
	return 0;
fail:
	isd_seccomp_program_free(out);
	return r;
}

int isd_seccomp_prepare_buffer(const char *buf, size_t len, const char *label, struct isd_seccomp_program *out)
{
	struct isd_seccomp_target t;
	int r;

	memset(out, 0, sizeof(*out));
	out->name = isd_xstrdup(label);
	if ((r = isd_seccomp_target_native(&t)) < 0 || (r = compile_profile(buf, len, label, &t, out)) < 0) {
		isd_seccomp_program_free(out);
		return r;
	}
	return 0;
}

int isd_seccomp_prepare_stacked(const char *name_or_path, const char *also, struct isd_seccomp_program *out)
{
	struct isd_seccomp_program *p;
	int r;

	if ((r = isd_seccomp_prepare(name_or_path, out)) < 0 || !also)
		return r;
	p = isd_xcalloc(1, sizeof(*p));
	if ((r = isd_seccomp_prepare(also, p)) < 0) {
		free(p);
		isd_seccomp_program_free(out);
		return r;
	}
	out->also = p;
	return 0;
}

int isd_seccomp_install(const struct isd_seccomp_program *prog)
{
	struct sock_fprog fprog;
	int r;

	if (prog && prog->also && (r = isd_seccomp_install(prog->also)) < 0)
		return r;
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

bool isd_seccomp_always_refuses(const struct isd_seccomp_program *prog, const char *name)
{
	struct seccomp_data d = { .nr = seccomp_syscall_resolve_name(name), .arch = seccomp_arch_native() };
	unsigned steps;
	bool constant;
	int64_t action;

	if (prog && prog->also && isd_seccomp_always_refuses(prog->also, name))
		return true;
	if (!prog || prog->unconfined || !prog->filter || d.nr < 0)
		return false;
	action = isd_seccomp_bpf_run(prog->filter, prog->len, &d, &steps, &constant);
	/* constant: the arguments were never read, so no value of them
	 * gets another answer */
	return action >= 0 && constant && (action & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ALLOW &&
	       (action & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_LOG;
}

void isd_seccomp_program_free(struct isd_seccomp_program *prog)
{
	if (!prog)
		return;
	if (prog->also) {
		isd_seccomp_program_free(prog->also);
		free(prog->also);
	}
	free(prog->filter);
	free(prog->name);
	free(prog->profile_path);
	memset(prog, 0, sizeof(*prog));
}

