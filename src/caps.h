/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Capabilities: the payload keeps none, in any set (isd-runtime's
 * container: the config's). */
#ifndef ISD_CAPS_H
#define ISD_CAPS_H

#include <stdbool.h>

/* Drop every capability from the bounding, ambient, inheritable, permitted
 * and effective sets and lock the securebits so that uid 0 inside regains
 * nothing on execve.  Then set no_new_privs. */
int isd_caps_drop_all(void);

/* isd build's RUN: keep Docker's default set (for uid 0 inside a user
 * namespace of the build's own ids), no_new_privs set. */
int isd_caps_keep_build_set(void);

/* isd-runtime's container: the bounding set narrowed to s->bounding, the
 * securebits cleared (as runc leaves them), the effective, permitted and
 * inheritable sets set, the ambient ones raised last, then no_new_privs if
 * asked.  Called with every capability of the user namespace, after the
 * change to the payload's ids. */
struct isd_cap_sets;
int isd_caps_apply_sets(const struct isd_cap_sets *s, bool no_new_privs);

#endif
