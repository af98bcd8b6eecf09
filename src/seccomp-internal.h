/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Limits, defaults and name tables shared by the seccomp files (parser,
 * names, compiler and cache, check); not part of the module's interface. */
#ifndef ISD_SECCOMP_INTERNAL_H
#define ISD_SECCOMP_INTERNAL_H

#include "isd/seccomp.h"

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

/* seccomp-names.c: the architectures a profile can name. */
struct arch_info {
	const char *scmp_name;
	const char *aliases[4]; /* [0] is the label `check` shows */
	uint32_t token;     /* 0: this libseccomp cannot filter it */
	uint32_t compat[2]; /* other ABIs the kernel of this arch runs */
};
const struct arch_info *isd_seccomp_arch_by_name(const char *name);
const struct arch_info *isd_seccomp_arch_by_token(uint32_t token);
/* seccomp-bpf.c: the filter of the argument-checked native syscalls that
 * isd_seccomp_compile() puts first (*ctx_out NULL when there are none);
 * *UNDECIDED is the action that stands for "ask the whole filter". */
int isd_seccomp_build_fast_path(const struct isd_seccomp_profile *p, void **ctx_out, uint32_t *undecided);
/* SCMP_CMP_* by its name, or -1. */
int isd_seccomp_op_by_name(const char *name);

#endif
