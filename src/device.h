/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host device nodes for the payload (--device HOST[:CONTAINER][:PERMS] in
 * Docker's syntax, a directory of nodes, and the device nodes of a CDI
 * spec): checked and resolved here, before anything is built, into the
 * spec's devices; src/mount-dev.c binds them, src/landlock.c and the
 * landlock tier give them their rights.
 *
 * PERMS are Docker's r, w and m.  Without w the node is bound read-only,
 * which the kernel does not enforce for a device node, so Landlock refuses
 * the writes (and isd refuses the option where Landlock cannot); as
 * Landlock rules the node, not the path, every path of that node inside is
 * read-only then (--device /dev/zero:/dev/gpu0:r makes /dev/zero so too).  m (make
 * nodes) is accepted and never granted: the sandbox cannot mknod.  ioctl
 * comes with the node (Landlock's ioctl_dev right, ABI 5), as with Docker's
 * device cgroup, which does not rule ioctl either.
 */
#ifndef ISD_DEVICE_H
#define ISD_DEVICE_H

#include <stdbool.h>

struct isd_spec;
struct json_object;

/* Docker's split of HOST[:CONTAINER][:PERMS] (a middle field made only of
 * r, w, m is PERMS); perms defaults to "rwm".  0 or -EINVAL, recorded. */
int isd_device_split(const char *arg, char **host, char **container, char **perms);
/* PERMS: a non-empty set of r, w, m with r in it. */
int isd_device_parse_perms(const char *what, const char *perms, bool *write, bool *mknod);

/* The node, or every node beneath the directory, at host (absolute),
 * bound at container (beneath /dev; NULL: host's own path).  what names
 * the request in messages ("--device ARG"). */
int isd_device_add(struct isd_spec *spec, const char *host, const char *container, const char *perms,
		   const char *what, const char *origin);
/* --device HOST[:CONTAINER][:PERMS] */
int isd_device_add_arg(struct isd_spec *spec, const char *arg, const char *origin);

/* A CDI request VENDOR/CLASS=NAME (src/cdi.h) from the specs in dirs: its
 * nodes and mounts into the spec, its NAME=VALUE environment pushed to
 * *env (the caller's -e wins over it). */
int isd_device_add_cdi(struct isd_spec *spec, char *const *dirs, const char *request, const char *origin, char ***env);

/* What needs the whole spec: a node under a mount, read-only without
 * Landlock. */
int isd_device_validate(const struct isd_spec *spec);

/* The read-only device that is the same node as the host's node (one of
 * isd's own /dev/zero, ...), which then is read-only too: Landlock rules
 * nodes, not paths.  NULL when none is. */
const struct isd_device *isd_device_readonly_node(const struct isd_spec *spec, const char *node);

void isd_device_free_all(struct isd_spec *spec);
struct json_object *isd_device_to_json(const struct isd_spec *spec);

#endif
