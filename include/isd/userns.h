/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* User namespace: the single-id uid/gid maps of a rootless sandbox. */
#ifndef ISD_USERNS_H
#define ISD_USERNS_H

#include <stdint.h>

/* Called by the sandbox's first process right after clone: maps the ids the
 * payload sees onto the caller's own ids (setgroups denied, as the kernel
 * requires for an unprivileged gid map). */
int isd_userns_write_own_maps(uint32_t inside_uid, uint32_t host_uid, uint32_t inside_gid,
			      uint32_t host_gid);

/* When creating or using a user namespace failed with err: add the host's
 * known reason (sysctls, AppArmor) as a hint to the recorded error. */
void isd_userns_explain_failure(int err);

#endif
