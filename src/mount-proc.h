/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's files in /proc and /sys that every sandbox sees read-only or
 * masked (OCI readonlyPaths/maskedPaths), in mount-proc.c. */
#ifndef ISD_MOUNT_PROC_H
#define ISD_MOUNT_PROC_H

#include <stdbool.h>

struct isd_mount_builder;

/* NULL-terminated, for --print-spec and the tests. */
const char *const *isd_mount_proc_readonly_paths(void);
const char *const *isd_mount_proc_masked_paths(void);

/* Before /dev is mounted: unmasked procfs/sysfs instances beneath devdir
 * (the root's "dev" directory), covered by /dev, so that nested sandboxes
 * may still mount their own. */
int isd_mount_proc_hidden(struct isd_mount_builder *b, int devdir, bool proc, bool sys);

/* Once /proc and /sys are mounted in the root: the read-only binds and
 * empty stand-ins.  Paths this kernel lacks are skipped. */
int isd_mount_proc_restrict(struct isd_mount_builder *b);
/* The same for a config's own lists (isd_spec's), once every mount is in
 * place: a path the root lacks is skipped, as runc skips it. */
int isd_mount_paths_restrict(struct isd_mount_builder *b, char *const *readonly, char *const *masked);

#endif
