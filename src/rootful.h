/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A root caller's payload: an unprivileged host id, root's files reached
 * through idmapped mounts (src/rootful.c). */
#ifndef ISD_ROOTFUL_H
#define ISD_ROOTFUL_H

#include <stdbool.h>
#include <stdint.h>

#include "isd/spec.h"

struct isd_mount_extras;

/* After the options: when the caller is the host's root, picks the
 * payload's host ids (root's subordinate range, else 65534) and sets
 * spec->idmapped, unless --unsafe-host-root (then a warning). */
int isd_rootful_apply(struct isd_spec *spec, uint32_t caller_uid, uint32_t caller_gid);
/* After isd_rootful_apply: the host ids spec->groups map to (spec->
 * host_groups) when the payload's ids are root's unprivileged ones; each
 * group beyond the primary one takes the next id of root's /etc/subgid
 * range, or it fails, naming the group's trouble. */
int isd_rootful_map_groups(struct isd_spec *spec);

/* Host side, before the sandbox: every bind source, the image and the cow
 * workspace's layers cloned and idmapped into extras (session_dir: the cow
 * session's directory, or NULL). */
int isd_rootful_prepare(const struct isd_spec *spec, const char *session_dir, struct isd_mount_extras *extras);
void isd_rootful_release(const struct isd_spec *spec, struct isd_mount_extras *extras);

/* In the sandbox's first process: closes every descriptor from first on
 * but the prepared ones, the preserved ones and also_keep (-1: none). */
void isd_rootful_close_other_fds(const struct isd_spec *spec, const struct isd_mount_extras *extras,
				 unsigned first, int also_keep);

#endif
