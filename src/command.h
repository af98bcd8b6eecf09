/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finding the payload's command, inside the sandbox or on the caller's PATH. */
#ifndef ISD_COMMAND_H
#define ISD_COMMAND_H

#include "isd/caller.h"
#include "isd/spec.h"

/* When argv[0] is a bare name that the sandbox's PATH does not provide,
 * find it on caller_path, bind its installation directory (and a script's
 * interpreter) read-only at the same path and run it by its real path. */
/* Where links under the names a script's "#!/usr/bin/env NAME" looks up
 * live when the interpreter's file has another name; first on PATH. */
#define ISD_COMMAND_LINK_DIR "/run/isd/bin"

int isd_command_resolve(struct isd_spec *spec, const struct isd_caller *caller, const char *caller_path);

/* The file cmd runs from the caller's side (a path, or found on
 * caller_path), links followed; NULL when there is none.  Caller frees. */
char *isd_command_real_file(const char *cmd, const char *caller_path);

#endif
