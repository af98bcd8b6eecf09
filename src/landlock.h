/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock, a second wall behind the mount layer: the payload may create,
 * write, truncate, remove, rename and link files only beneath the
 * sandbox's writable mounts (the spec's rw binds and tmpfs, the rw or cow
 * workspace, /dev/shm) and write to the few devices it needs, so that a
 * mistake in building the mounts cannot become a write to the host.  Reads
 * and execution are left to the mount layer (Landlock does not handle
 * them here).
 *
 * The rule list is computed from the spec by a pure function (shown by
 * --print-spec); the payload only applies it, right before seccomp.
 * Where the kernel has no usable Landlock (ABI < 2: no rename across
 * directories), nothing is applied and nothing else changes.
 */
#ifndef ISD_LANDLOCK_H
#define ISD_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct isd_spec;
struct json_object;

/* The first ABI isd uses: ABI 1 refuses every rename or link across
 * directories (REFER), which breaks git, package managers and editors. */
#define ISD_LANDLOCK_MIN_ABI 2

struct isd_landlock_rule {
	char *path;      /* inside the sandbox */
	uint64_t access; /* LANDLOCK_ACCESS_FS_* wanted; narrowed to the ABI
			  * and, for a file, to file rights when applied */
	const char *why; /* static */
};

struct isd_landlock_plan {
	bool enabled;
	const char *off_reason; /* static, when !enabled */
	struct isd_landlock_rule *rules;
	size_t n_rules;
	/* The landlock isolation tier (src/sandbox-landlock.c), which has no
	 * mount layer: reads and execution are handled too (rules then carry
	 * ISD_LANDLOCK_READ), and TCP (ABI 4: bind and connect refused but
	 * connect to connect_port, when not 0). */
	bool handle_read;
	bool handle_tcp;
	uint16_t connect_port;
	/* --forward P:127.0.0.1:P in netless without isd's connect guard:
	 * the payload reaches the target on the loopback it shares itself. */
	uint16_t forward_ports[16];
	size_t n_forward_ports;
	/* ABI 6: signals (and abstract unix sockets) stay inside the domain */
	bool scope_signals, scope_abstract;
};

/* What reading a sandbox needs: files, directories, execution. */
#define ISD_LANDLOCK_READ ((1ULL << 0) | (1ULL << 2) | (1ULL << 3))
/* Every right the running ABI handles (narrowed when applied). */
#define ISD_LANDLOCK_ALL (~0ULL)
/* The first ABIs with TCP rules and with scoping. */
#define ISD_LANDLOCK_NET_ABI 4
#define ISD_LANDLOCK_SCOPE_ABI 6

/* A rule for the plan (path copied; why static). */
void isd_landlock_plan_add(struct isd_landlock_plan *p, const char *path, uint64_t access, const char *why);
/* A rule's rights in words ("all", or the names), for --print-spec. */
struct json_object *isd_landlock_access_json(const struct isd_landlock_plan *plan, uint64_t access);

/* The running kernel's Landlock ABI version, 0 when it has none (or it is
 * disabled, or an outer seccomp filter hides it). */
int isd_landlock_abi(void);
/* The write-like rights isd handles at this ABI (0 below the minimum). */
uint64_t isd_landlock_handled(int abi);

/* Pure: what the spec asks for. */
void isd_landlock_plan(const struct isd_spec *spec, struct isd_landlock_plan *out);
void isd_landlock_plan_free(struct isd_landlock_plan *plan);
/* For --print-spec. */
struct json_object *isd_landlock_to_json(const struct isd_spec *spec);

/* In the payload, after its ids and working directory are final and
 * before seccomp (no_new_privs is already set).  Allocates nothing: the
 * payload shares init's memory until execve. */
int isd_landlock_apply(const struct isd_landlock_plan *plan);

#endif
