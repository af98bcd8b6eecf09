/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Safe path resolution below a directory (src/resolve.c): openat2(2) with
 * RESOLVE_BENEATH, RESOLVE_IN_ROOT, RESOLVE_NO_SYMLINKS and
 * RESOLVE_NO_MAGICLINKS, and the same walk in user space where openat2
 * answers ENOSYS.  isd's own seccomp profiles refuse openat2 to the payload
 * (its mode is in memory, out of seccomp's sight, so a payload could
 * create setuid files with it), and an isd nested in isd is such a
 * payload: its every resolution then takes the user-space walk.
 */
#ifndef ISD_RESOLVE_H
#define ISD_RESOLVE_H

#include <linux/openat2.h> /* RESOLVE_* */
#include <stdint.h>

/* openat2(dfd, path, {flags, mode 0, resolve}): a descriptor, or -1 with
 * errno.  Once openat2 answered ENOSYS, the process resolves in user
 * space from then on. */
int isd_openat2(int dfd, const char *path, uint64_t flags, uint64_t resolve);

/* The user-space walk itself (the unit tests compare it with the kernel's):
 * every component opened with O_PATH|O_NOFOLLOW from its parent, symlinks
 * read and followed only as the RESOLVE_* flags allow ("/" and ".." of
 * RESOLVE_IN_ROOT stop at dfd, RESOLVE_BENEATH refuses them with EXDEV),
 * every symlink on a procfs refused (magic links: ELOOP with
 * RESOLVE_NO_MAGICLINKS, EXDEV when scoped, as the kernel answers), at
 * most 40 symlinks, the last component opened with the caller's flags and
 * O_NOFOLLOW.  RESOLVE_NO_XDEV is refused (EINVAL), RESOLVE_CACHED answers
 * EAGAIN (the kernel's "not cached, retry without"). */
int isd_openat2_emulated(int dfd, const char *path, uint64_t flags, uint64_t resolve);

#endif
