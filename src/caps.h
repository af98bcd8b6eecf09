/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Capabilities: the payload keeps none, in any set. */
#ifndef ISD_CAPS_H
#define ISD_CAPS_H

/* Drop every capability from the bounding, ambient, inheritable, permitted
 * and effective sets and lock the securebits so that uid 0 inside regains
 * nothing on execve.  Then set no_new_privs. */
int isd_caps_drop_all(void);

/* isd build's RUN: keep Docker's default set (for uid 0 inside a user
 * namespace of the build's own ids), no_new_privs set. */
int isd_caps_keep_build_set(void);

#endif
