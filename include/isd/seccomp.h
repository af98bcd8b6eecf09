/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seccomp profiles in the JSON format of Docker, Podman and the OCI runtime
 * spec, compiled with libseccomp in the parent (or loaded from a cache of
 * exported BPF) and installed in the sandbox child as the last step before
 * execve.  The payload runs with no capabilities, so includes.caps rules
 * never apply and excludes.caps never excludes.
 */
#ifndef ISD_SECCOMP_H
#define ISD_SECCOMP_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct isd_seccomp_program {
	struct sock_filter *filter; /* BPF ready for seccomp(SECCOMP_SET_MODE_FILTER) */
	unsigned short len;
	char *name;         /* as requested */
	char *profile_path; /* resolved file; NULL when unconfined */
	bool unconfined;
	bool from_cache;
	unsigned int flags; /* SECCOMP_FILTER_FLAG_* from the profile's "flags" */
	/* A filter installed before this one, NULL for none: the kernel
	 * runs both and the stricter answer wins. */
	struct isd_seccomp_program *also;
};

/* In the parent, before any namespace is created: resolve NAME|PATH, load
 * the cached BPF or compile it.  NULL means "default"; "unconfined" sets
 * unconfined and compiles nothing. */
int isd_seccomp_prepare(const char *name_or_path, struct isd_seccomp_program *out);
/* NAME_OR_PATH as above with ALSO (NULL: none) stacked in out->also. */
int isd_seccomp_prepare_stacked(const char *name_or_path, const char *also, struct isd_seccomp_program *out);
/* The same for a profile in memory (an OCI config's linux.seccomp), LABEL
 * naming it in messages; compiled every time, never cached. */
int isd_seccomp_prepare_buffer(const char *buf, size_t len, const char *label, struct isd_seccomp_program *out);
/* In the sandbox child, the very last step before execve (no_new_privs
 * already set, all caps dropped).  Does not allocate.  No-op when
 * unconfined.  prog->also first: isd's own agent filter allows seccomp(2),
 * an engine's profile may not. */
int isd_seccomp_install(const struct isd_seccomp_program *prog);
/* True when PROG (or its also) refuses syscall NAME of the native ABI whatever
 * its arguments (false when unconfined, allowed or argument-checked). */
bool isd_seccomp_always_refuses(const struct isd_seccomp_program *prog, const char *name);
void isd_seccomp_program_free(struct isd_seccomp_program *prog);
/* `isd seccomp SUBCOMMAND ...` (argv[0] == "seccomp"): the exit status. */
int isd_seccomp_main(int argc, char **argv);

/* ---- internals, exposed for the unit tests and the fuzzer ---- */

/* What a profile is evaluated against (includes/excludes). */
struct isd_seccomp_target {
	uint32_t arch;      /* SCMP_ARCH_* token of the native architecture */
	char release[65];   /* kernel release as uname(2) reports it */
};

struct isd_seccomp_cond {
	unsigned index; /* syscall argument 0..5 */
	int op;         /* enum scmp_compare */
	uint64_t value, value_two;
};

enum isd_seccomp_skip {
	ISD_SECCOMP_APPLIES = 0,
	ISD_SECCOMP_SKIP_CAPS,      /* includes.caps: the payload has none */
	ISD_SECCOMP_SKIP_ARCH,      /* includes.arches / excludes.arches */
	ISD_SECCOMP_SKIP_KERNEL,    /* includes.minKernel / excludes.minKernel */
	ISD_SECCOMP_SKIP_REDUNDANT, /* same action as the default */
};

#define ISD_SECCOMP_NR_UNKNOWN (-0x7fffffff - 1) /* libseccomp does not know it */
#define ISD_SECCOMP_NR_NOT_HERE (-0x7fffffff)    /* no filtered arch has it */

struct isd_seccomp_rule {
	size_t json_index; /* position in "syscalls" */
	char **names;      /* NULL-terminated */
	int *nrs;          /* per name: for seccomp_rule_add() (libseccomp's pseudo
			    * numbers <0 for compat-only syscalls) or a marker below */
	size_t n_names;
	uint32_t action;   /* SCMP_ACT_* with errno/trace data */
	struct isd_seccomp_cond *conds;
	size_t n_conds;
	enum isd_seccomp_skip skip;
};

struct isd_seccomp_profile {
	char *origin;            /* path (or label) used in messages */
	uint32_t default_action; /* SCMP_ACT_* */
	uint32_t arches[8];      /* arches in the filter; arches[0] is native */
	size_t n_arches;
	unsigned int flags;      /* SECCOMP_FILTER_FLAG_* */
	struct isd_seccomp_rule *rules;
	size_t n_rules;
	size_t n_unknown_names;  /* names this libseccomp does not know (skipped) */
	char **notes;            /* things accepted but adjusted, for `check` */
};

/* The target of this machine (native arch, uname release). */
int isd_seccomp_target_native(struct isd_seccomp_target *target);
/* Parse and validate a profile from memory.  ORIGIN names it in messages
 * ("seccomp profile ORIGIN: syscalls[3].op: ...").  TARGET NULL = this
 * machine.  Errors are recorded with isd_error(). */
int isd_seccomp_parse_buffer(const char *buf, size_t len, const char *origin,
			     const struct isd_seccomp_target *target,
			     struct isd_seccomp_profile **out);
void isd_seccomp_profile_free(struct isd_seccomp_profile *profile);
/* Build a libseccomp filter (scmp_filter_ctx, release with
 * isd_seccomp_ctx_free()) from a parsed profile. */
int isd_seccomp_build(const struct isd_seccomp_profile *profile, void **ctx_out);
void isd_seccomp_ctx_free(void *ctx);
/* Export a built filter as BPF (caller frees *filter). */
int isd_seccomp_export(void *ctx, struct sock_filter **filter, unsigned short *len);
/* The program isd installs for a parsed profile: the argument-checked
 * syscalls' fast path, then the whole filter (caller frees *filter). */
int isd_seccomp_compile(const struct isd_seccomp_profile *profile, struct sock_filter **filter,
			unsigned short *len);
/* Runs seccomp BPF on DATA (a struct seccomp_data) as the kernel would:
 * the action, with *steps the instructions executed, and *constant
 * whether only the syscall number and architecture were read (what the
 * kernel's action cache needs to skip the filter).  -EINVAL for an
 * instruction seccomp refuses or a jump out of the program. */
int64_t isd_seccomp_bpf_run(const struct sock_filter *filter, unsigned len, const void *data,
			    unsigned *steps, bool *constant);
/* Resolve NAME or PATH to an absolute profile file (caller frees). */
int isd_seccomp_resolve(const char *name_or_path, char **path_out);
/* The cache file a profile's BPF lives in (caller frees), or -ENOENT when
 * there is no usable cache directory. */
int isd_seccomp_cache_path(const char *profile_bytes, size_t len, char **path_out);
/* What `isd seccomp check --json` prints for a parsed profile (caller frees). */
int isd_seccomp_describe_json(const struct isd_seccomp_profile *profile, char **out);
/* "ERRNO(EPERM)", "ALLOW", ... (BUF holds the text for ERRNO/TRACE data). */
const char *isd_seccomp_action_str(uint32_t action, char *buf, size_t size);

/* Shared between seccomp.c (parser), seccomp-bpf.c and seccomp-check.c. */
const char *isd_seccomp_arch_label(uint32_t token);
const char *isd_seccomp_op_name(int op);
int isd_seccomp_read_profile(const char *path, char **buf_out, size_t *len_out);
char **isd_seccomp_search_dirs(void);

#endif
