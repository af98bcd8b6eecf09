/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by sandbox-landlock.c (the run) and sandbox-landlock-plan.c (what
 * the tier allows, computed from the spec). */
#ifndef ISD_SANDBOX_LANDLOCK_INTERNAL_H
#define ISD_SANDBOX_LANDLOCK_INTERNAL_H

#include "landlock.h"
#include "isd/seccomp.h"
#include "isd/spec.h"

#include <stdint.h>

/* The private directories of one run: root (isd's, 0700) holds tmp (the
 * payload's TMPDIR), home (its HOME: read-only, a link for each bind from
 * the real home, whose own entries are hidden) and bin (the command
 * resolution's links, read-only). */
struct isd_tier_dirs {
	char *root, *tmp, *home, *bin;
	int lock_fd; /* root, flock()ed while the run lasts (-1: none) */
	char *copy; /* the cow workspace's copy (src/workspace-copy.h), or NULL */
	/* per spec mount, for --agent-state ones: the copy of a state
	 * directory (beside its store's upper layer), or the store's copy of
	 * a state file */
	char **state;
	size_t n_state;
};

/* Where a destination beneath the spec's home directory is in the private
 * home (NULL when it is not beneath it). */
char *isd_tier_home_path(const struct isd_spec *spec, const struct isd_tier_dirs *dirs, const char *dst);

/* The payload's path for a path of the workspace (its copy's, with cow). */
char *isd_tier_workspace_path(const struct isd_spec *spec, const struct isd_tier_dirs *dirs, const char *path);

/* The Landlock plan: dirs NULL shows placeholders (--print-spec); port is
 * the relay's (netless), 0 otherwise. */
/* --forward in this tier (src/connect-guard.h's and landlock.h's bounds). */
#define ISD_TIER_MAX_FORWARDS 16
struct isd_forward;
/* --forward P:127.0.0.1:P: the target is where the payload connects. */
bool isd_tier_forward_is_loopback(const struct isd_forward *f);
void isd_tier_plan(const struct isd_spec *spec, const struct isd_tier_dirs *dirs, uint16_t port,
		   struct isd_landlock_plan *plan);

/* The filter on socket(2) that --network none and netless add: only
 * AF_UNIX, and AF_INET/AF_INET6 as TCP (Landlock rules TCP ports; UDP and
 * the rest it cannot rule).  Nothing for --network host. */
int isd_tier_socket_filter(const struct isd_spec *spec, struct isd_seccomp_program *out);

/* Whether a tmpfs destination is one the private TMPDIR stands for. */
bool isd_tier_tmp_destination(const char *dst);

/* The tier's seccomp listener (src/sandbox-landlock-listen.c), a the
 * activity log (or NULL), g the netless connect guard (or NULL).  In the
 * child, no_new_privs set: installs the filter and sends its listener
 * through sock; 0, -EBUSY when the guard's rules are not in place (an
 * outer filter has the one listener; a note said so), or -errno. */
struct isd_activity;
struct isd_connect_guard;
int isd_tier_install_listener(const struct isd_activity *a, const struct isd_connect_guard *g, int sock);
/* In isd: the listener from sock, answered from then on. */
int isd_tier_start_listener(struct isd_activity *a, struct isd_connect_guard *g, int sock);

#endif
