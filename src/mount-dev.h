/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The spec's device nodes (src/device.h) in isd's /dev: cloned before the
 * root is built, like isd's own nodes, and attached in the /dev tmpfs.
 * Not part of the mount module's interface.
 */
#ifndef ISD_MOUNT_DEV_H
#define ISD_MOUNT_DEV_H

#include "isd/spec.h"

#include <stdint.h>

/* One clone per device (-1 for isd's own nodes), in *out (n_devices of
 * them, all -1 before the first can fail; freed by isd_mount_dev_close):
 * prepared's where it has one (>= 0), else a bind of the host node. */
int isd_mount_dev_clone(const struct isd_spec *spec, const int *prepared, int **out);
/* For a root caller, whose payload runs as an unprivileged id
 * (src/rootful.c): a detached mount of a node of d's device number owned
 * by uid:gid, mode 0600 (0400 without w), in a tmpfs of its own.  root
 * may open any node; its payload opens this one as its owner, as a
 * container's root opens the node docker or podman make for --device. */
int isd_mount_dev_own_node(const struct isd_device *d, uint32_t uid, uint32_t gid);
/* Each clone at its path in the /dev tmpfs devfd. */
int isd_mount_dev_attach(const struct isd_spec *spec, int devfd, const int *clones);
void isd_mount_dev_close(int *clones, size_t n);

#endif
