/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the option handlers of src/cli-table.c share with the parse in src/cli.c. */
#ifndef ISD_CLI_INTERNAL_H
#define ISD_CLI_INTERNAL_H

#include "isd/caller.h"
#include "cli-table.h"
#include "isd/spec.h"

/* A profile's --allow, --allow-file and --proxy-port belong to the
 * profile's netless mode: they wait until the network mode is known, so
 * that a --network on the command line can replace the profile's mode
 * without tripping over its allowlist. */
struct isd_exec_deferred {
	int (*apply)(struct isd_exec_parse *p, const char *arg);
	char *arg, *origin;
};

struct isd_exec_parse {
	struct isd_spec *spec;
	const struct isd_caller *caller;
	const char *origin; /* where the option being taken came from */
	struct isd_spec user_env; /* collects -e/--env-file before defaults are known */
	char *user_arg;           /* -u, resolved once the image is known */
	char *agent_state, *agent_state_origin;
	char *workspace_origin;
	int tty_mode; /* -1: a terminal when stdin and stdout are both terminals */
	struct isd_exec_deferred *deferred;
	size_t n_deferred;
	/* CDI requests (--device VENDOR/CLASS=NAME, --gpus) wait for every
	 * --cdi-spec-dir; their environment for the defaults */
	char **cdi_requests, **cdi_origins, **cdi_dirs, **cdi_env, **cdi_env_origins;
};

/* A later source overrides an earlier one at the same destination (the
 * command line overrides a profile); the same source naming a destination
 * twice is left for validation to reject. */
int isd_exec_add_user_mount(struct isd_spec *spec, const struct isd_mount *parsed, const char *origin);

#endif
