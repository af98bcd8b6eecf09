/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parsers for the values of `isd exec` options (used by cli.c and tests). */
#ifndef ISD_OPTIONS_H
#define ISD_OPTIONS_H

#include <stdint.h>

#include "isd/spec.h"

/* A host path as the user means it: relative to cwd, symlinks resolved. */
char *isd_options_absolute_source(const char *src, const char *cwd);
/* An absolute, normalized destination inside the sandbox. */
int isd_options_parse_destination(const char *what, const char *dst, char **out);
/* Look a user up (by name, or by uid when name is NULL) in the image's own
 * /etc/passwd, resolved inside the image. */
int isd_options_passwd_lookup(const struct isd_spec *spec, const char *name, uint32_t uid, uint32_t *uid_out,
			      uint32_t *gid_out, char **home_out, char **user_out);
/* --image NAME: "host" or a tree in the image store. */
int isd_options_resolve_image(struct isd_spec *spec, const char *name);

#endif
