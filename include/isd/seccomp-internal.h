/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Limits and defaults shared by the three seccomp files (parser, compiler
 * and cache, check); not part of the module's interface. */
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

#endif
