/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The calling process, as planning a sandbox sees it (src/caller.c). */
#ifndef ISD_CALLER_H
#define ISD_CALLER_H

#include <stdbool.h>
#include <stdint.h>

/* Facts about the caller that parsing needs (injectable for unit tests). */
struct isd_caller {
	uint32_t uid, gid;
	const char *home;  /* caller's $HOME */
	const char *cwd;   /* for relative bind sources */
	char **environ;    /* caller's environment, for -e NAME and defaults */
	bool stdin_tty, stdout_tty;
};

void isd_caller_from_process(struct isd_caller *caller);
/* NAME's value in the caller's environment, or NULL. */
const char *isd_caller_getenv(const struct isd_caller *caller, const char *name);

#endif
