/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The landlock isolation tier (--isolation landlock, or auto where the host
 * refuses namespaces): the payload runs in no namespace at all, on this
 * system's own file system, confined by Landlock (reads, writes and
 * execution, TCP from ABI 4, signal and abstract-socket scoping from ABI
 * 6), no_new_privs, every capability dropped, isd's seccomp filter plus
 * one on socket families, and the cgroup where one is delegated.
 *
 * File system: read-only everywhere but for what the home directory's
 * chain, /tmp, /var/tmp, /run, /dev and isd's own directories hold, which
 * is not readable at all; the binds of the spec (at their own paths only)
 * and the workspace (rw or ro) come on top; a private directory isd makes
 * is TMPDIR.  What the full tier does with a mount and Landlock cannot
 * express (an image, binds at another path, tmpfs elsewhere, read-only
 * parts inside a writable tree, the cow workspace, the agent's guarded
 * state) is refused with one line, never given weaker.
 */
#ifndef ISD_SANDBOX_LANDLOCK_H
#define ISD_SANDBOX_LANDLOCK_H

struct isd_spec;
struct json_object;

/* Can this spec run in the tier on a kernel of Landlock ABI abi?  0, or
 * -errno with the one line recorded. */
int isd_sandbox_landlock_check(const struct isd_spec *spec, int abi);

/* The tier's rules and filters for --print-spec. */
struct json_object *isd_sandbox_landlock_json(const struct isd_spec *spec);

/* Runs the payload to completion (see isd_sandbox_run). */
int isd_sandbox_landlock_run(const struct isd_spec *spec);

#endif
