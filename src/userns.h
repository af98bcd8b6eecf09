/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* User namespace: the single-id uid/gid maps of a rootless sandbox. */
#ifndef ISD_USERNS_H
#define ISD_USERNS_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Called by the sandbox's first process right after clone: maps the ids the
 * payload sees onto the caller's own ids (setgroups denied, as the kernel
 * requires for an unprivileged gid map). */
int isd_userns_write_own_maps(uint32_t inside_uid, uint32_t host_uid, uint32_t inside_gid,
			      uint32_t host_gid);

/* When creating or using a user namespace failed with err: add the host's
 * known reason (sysctls, AppArmor) as a hint to the recorded error. */
void isd_userns_explain_failure(int err);

/* isd build: maps of several ranges for the child pid, written from the
 * parent (directly when privileged, else by newuidmap/newgidmap). */
struct isd_id_range;
int isd_userns_write_child_maps(pid_t pid, const struct isd_id_range *uid, size_t n_uid,
				const struct isd_id_range *gid, size_t n_gid);
/* Inside a namespace with such maps: become uid:gid, no supplementary
 * groups (keeps the capabilities of the namespace's creator). */
int isd_userns_become(uint32_t uid, uint32_t gid);
/* The same in the supplementary groups given (isd-runtime's
 * process.user.additionalGids), each of which must be mapped and
 * setgroups allowed; already those groups, or only gid asked where
 * setgroups is denied, is no change. */
int isd_userns_become_in_groups(uint32_t uid, uint32_t gid, const uint32_t *groups, size_t n_groups);

/* Whether ids [start, start+count) of the parent namespace are mapped into
 * ours (map_file: /proc/self/uid_map or gid_map).  Nested in a namespace
 * that maps a single id, newuidmap cannot help; a container's outer
 * namespace may map fewer ids than the host has. */
bool isd_userns_ids_mapped(const char *map_file, uint32_t start, uint32_t count);

#endif
