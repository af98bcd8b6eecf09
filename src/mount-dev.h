/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The spec's device nodes (src/device.h) in isd's /dev: cloned before the
 * root is built, like isd's own nodes, and attached in the /dev tmpfs.
 * Not part of the mount module's interface.
 */
#ifndef ISD_MOUNT_DEV_H
#define ISD_MOUNT_DEV_H

#include "isd/spec.h"

/* One clone per device (-1 for isd's own nodes), in *out (n_devices of
 * them, all -1 before the first can fail; freed by isd_mount_dev_close). */
int isd_mount_dev_clone(const struct isd_spec *spec, int **out);
/* Each clone at its path in the /dev tmpfs devfd. */
int isd_mount_dev_attach(const struct isd_spec *spec, int devfd, const int *clones);
void isd_mount_dev_close(int *clones, size_t n);

#endif
