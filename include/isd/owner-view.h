/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* The review (isd diff, apply, session list, the change count at exit)
 * reads a session's upper layer whatever modes the payload gave its own
 * files (chmod 000 d, a write-only file).  Those files belong to the
 * caller: in a new user namespace that maps the caller's uid and gid to
 * 0, CAP_DAC_READ_SEARCH lets the caller read and search them without
 * changing a mode (a sandbox may be running on the session).  Writes keep
 * their ordinary permission checks: no other capability is kept, none
 * comes back on execve, and files created on the host stay the caller's.
 * With a subordinate range (/etc/subuid, newuidmap) the range is mapped
 * too: an image that keeps ownership lets the payload chown to it. */

/* Enters the view in this process (single-threaded, before its work).
 * Root, and a failure to make the namespace (nested without user
 * namespaces), leave the process as it was: 0 either way. */
int isd_owner_view_enter(void);

/* Whether this process reads with the owner's view (root, or entered). */
int isd_owner_view_active(void);

/* fn(arg, out) in a child that entered the view, for a process that must
 * keep its own identity (the change count at the end of isd exec); in
 * this process when the view is active already.  fn's error is recorded
 * here as its own. */
int isd_owner_view_call(int (*fn)(void *arg, uint64_t *out), void *arg, uint64_t *out);
