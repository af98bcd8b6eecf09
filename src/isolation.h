/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Isolation tiers (--isolation full|auto|landlock).  full is the sandbox
 * of namespaces isd always built; landlock (src/sandbox-landlock.c) uses
 * no namespace at all, for hosts that refuse them (Docker's default
 * seccomp profile, Ubuntu's restricted user namespaces); auto takes the
 * strongest tier the host allows, found by trying the full tier's first
 * steps in a throw-away child (the probes `isd doctor` runs too), and says
 * in one note which tier it took and what that one lacks.
 */
#ifndef ISD_ISOLATION_H
#define ISD_ISOLATION_H

#include <stdbool.h>
#include <stddef.h>

struct isd_spec;
struct json_object;

enum isd_isolation {
	ISD_ISOLATION_FULL,
	ISD_ISOLATION_AUTO,
	ISD_ISOLATION_LANDLOCK,
};

const char *isd_isolation_name(enum isd_isolation tier);
int isd_isolation_parse(const char *arg, enum isd_isolation *out);

/* What this host allows, tried for real in a throw-away child: 0 or an
 * errno, with the step that failed. */
struct isd_isolation_probe {
	int userns;            /* the full tier's namespaces, the caller's id mapped, a tmpfs mounted */
	const char *userns_step;
	int proc;              /* a fresh procfs in a new pid namespace */
	int root_clone;        /* as root: cloning a mount here, which root's idmapped binds need */
	int landlock_abi;
};
void isd_isolation_probe(struct isd_isolation_probe *p);
/* Whether the full tier works with this probe (with --pid host a fresh
 * procfs is not needed). */
bool isd_isolation_full_works(const struct isd_isolation_probe *p, bool pid_host);
/* The same for this sandbox: a root caller's binds are cloned for
 * idmapped mounts (src/rootful.c), which a container's root without
 * CAP_SYS_ADMIN cannot do. */
bool isd_isolation_full_works_for(const struct isd_spec *spec, const struct isd_isolation_probe *p);
/* Why the full tier cannot give this sandbox here: one clause. */
void isd_isolation_refusal(const struct isd_spec *spec, const struct isd_isolation_probe *p, char *buf, size_t len);

/* Sets spec->tier (full or landlock) and spec->isolation_why; auto
 * probes (unless probe is given) and may take the full tier without a pid
 * namespace for a masked /proc (spec->isolation_pid_host).  A weaker tier
 * from a profile inside the project is refused; with no tier possible the
 * error is recorded. */
int isd_isolation_resolve(struct isd_spec *spec, const struct isd_isolation_probe *probe);

/* What the resolved tier lacks against the full one, or NULL. */
const char *isd_isolation_lacks(const struct isd_spec *spec);
const char *isd_isolation_landlock_lacks(const struct isd_spec *spec);
/* auto's one line: the tier taken, why, and what it lacks. */
void isd_isolation_note(const struct isd_spec *spec);

/* The "isolation" object of --print-spec. */
struct json_object *isd_isolation_to_json(const struct isd_spec *spec);

/* Appended to the full tier's refusals (namespaces, a fresh /proc): the
 * other way, --isolation auto, when the landlock tier works here. */
void isd_isolation_hint_auto(void);

#endif
