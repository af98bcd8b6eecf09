/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v2 resource limits for one sandbox, rootless.
 *
 * Placement (first that works, see isd_cgroup_plan() in src/cgroup-plan.c):
 *  1. isd's own cgroup C, when it is writable (delegated) and a child can get
 *     controllers: C is the hierarchy root, or isd is C's only process -- then
 *     isd moves itself into the leaf C/isd-<pid>-<rand>-supervisor first,
 *     because of cgroup v2's "no internal processes" rule (a cgroup with
 *     processes cannot enable controllers for its children).  This is the
 *     case of `systemd-run --user --scope -p Delegate=yes isd ...` and of
 *     the scope isd asks systemd for (3.).
 *  2. C's parent P, when P is writable (delegated) and has, or can get, the
 *     controllers in cgroup.subtree_control: the sandbox becomes C's sibling
 *     P/isd-<pid>-<rand>.  This is a desktop terminal under systemd
 *     (…/user@1000.service/app.slice/<terminal>.scope) and a delegated
 *     subtree whose shell lives in a leaf, as systemd arranges it.
 *  3. Only with libsystemd (HAVE_SD_BUS): ask the user manager for a
 *     transient scope isd-<pid>-<rand>.scope with Delegate=yes containing
 *     isd, then 1. (an ssh session in a root-owned session-N.scope).
 * The payload enters the sandbox cgroup atomically through
 * clone3(CLONE_INTO_CGROUP, dirfd), or isd_cgroup_attach() as a fallback.
 * Directory names carry isd's pid so that isd_cgroup_gc() and the
 * cheap gc in isd_cgroup_prepare() can remove those whose owner died.
 */
#ifndef ISD_CGROUP_H
#define ISD_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "isd/spec.h"

struct isd_cgroup {
	char *path; /* absolute path of the sandbox's cgroup dir, NULL when none */
	int dirfd;  /* O_DIRECTORY fd of it for clone3(CLONE_INTO_CGROUP), -1 when none */

	/* Private: what isd_cgroup_destroy() undoes.  Do not copy the struct
	 * (path points into it). */
	int parent_fd;            /* directory holding the sandbox dir (unlinkat) */
	int origin_fd;            /* supervisor-leaf case: the cgroup isd came from, else -1 */
	unsigned origin_enabled;  /* controllers isd enabled in origin's subtree_control */
	uint64_t memory_max;      /* the memory limit written, for the OOM line; 0 = none */
	char name[NAME_MAX + 1];  /* basename of path: an engine's libpod-<64 hex> too */
	char supervisor_name[NAME_MAX + 12]; /* leaf isd moved itself into, "" when none */
	char path_buf[PATH_MAX];
};

void isd_cgroup_init(struct isd_cgroup *cg);
/* Any limit that needs a cgroup ("unlimited" values such as --pids-limit -1
 * or --memory-swap -1 alone need none). */
bool isd_limits_requested(const struct isd_limits *l);
/* Parent, before clone.  No limit requested: success, nothing created (works
 * on hosts without cgroup v2).  Otherwise one cgroup per sandbox with the
 * limits written.  When the host cannot enforce a limit: one line naming it,
 * why and how to fix, -EOPNOTSUPP; with --limits=best-effort a warning and
 * that limit is dropped.  Invalid values are errors in both modes. */
int isd_cgroup_prepare(const struct isd_limits *limits, struct isd_cgroup *cg);
/* The same, the sandbox's directory called name (a plain name, shorter
 * than 64) instead of isd-<pid>-<rand>: a sandbox that outlives isd
 * (isd-runtime's containers), which isd gc must not take for the
 * leftover of a dead isd. */
int isd_cgroup_prepare_named(const struct isd_limits *limits, const char *name, struct isd_cgroup *cg);
/* cgroup-path.c: isd-runtime's linux.cgroupsPath, the sandbox's cgroup at
 * path (absolute: below the cgroup2 root; relative: below the caller's
 * cgroup), made with its missing parents, the limits' controllers enabled
 * down the way, and the limits written (strict).  Without limits, a path
 * that cannot be made is no error: *cg stays none (a rootless caller
 * without delegation).  An existing, empty leaf is taken as it is. */
int isd_cgroup_prepare_path(const struct isd_limits *limits, const char *path, struct isd_cgroup *cg);
/* Fallback when clone3(CLONE_INTO_CGROUP) is unavailable. */
int isd_cgroup_attach(const struct isd_cgroup *cg, pid_t pid);
/* After the payload exited: when memory.events counts an oom_kill, print
 * "isd: sandbox hit its memory limit (4.0 GiB); ...".  payload_pid may be 0
 * and payload_comm NULL when unknown. */
void isd_cgroup_report(const struct isd_cgroup *cg, pid_t payload_pid, const char *payload_comm);
/* Same, with the payload's wait status (-1 = unknown): names the payload as
 * the victim only when it died of SIGKILL (signalled, or exit status 137 as
 * isd's init reports it).  A path in payload_comm is reduced to its name. */
void isd_cgroup_report_status(const struct isd_cgroup *cg, pid_t payload_pid,
			      const char *payload_comm, int wait_status);
/* Kill what remains (cgroup.kill, else SIGKILL each pid of cgroup.procs),
 * wait until empty (bounded), rmdir, undo the supervisor leaf.  A second
 * call does nothing.  0, or why the directory could not be removed. */
int isd_cgroup_destroy(struct isd_cgroup *cg);
/* The sandbox outlives isd (isd_sandbox_create_detached): its cgroup
 * stays as it is, isd closes what it held. */
void isd_cgroup_release(struct isd_cgroup *cg);
/* The sandbox cgroup parent/name that an isd made (isd gc's leftovers), to
 * report on and destroy as its isd would have; its memory limit is read
 * back from memory.max. */
int isd_cgroup_open(const char *parent, const char *name, struct isd_cgroup *cg);
/* `isd gc [--dry-run]`: remove isd-<pid>-* cgroups whose owner is dead,
 * killing what still runs in them (isd_cgroup_prepare() does the same,
 * cheaply, for empty ones only), and the sessions half removed or left
 * empty.  Returns 0 or ISD_EXIT_FAILURE. */
int isd_cgroup_gc(bool dry_run);
/* Remove the isd-<pid>-* leftovers of dead owners directly under dir;
 * populated ones only with kill_orphans (their processes are killed).
 * Returns the number that could not be removed. */
int isd_cgroup_gc_dir(const char *dir, bool dry_run, bool verbose, bool kill_orphans);

/* ---- pure logic, exposed for the CLI and unit tests ---- */

enum {
	ISD_CG_CPU = 1u << 0,
	ISD_CG_CPUSET = 1u << 1,
	ISD_CG_IO = 1u << 2,
	ISD_CG_MEMORY = 1u << 3,
	ISD_CG_PIDS = 1u << 4,
};

/* Docker/OCI --cpu-shares [2..262144] to cpu.weight [1..10000] with the
 * log-quadratic formula crun (PR #1767) and opencontainers/cgroups (runc)
 * adopted in 2025: 10^((L^2 + 125 L)/612 - 7/34), L = log2(shares), so that
 * the defaults map onto each other (1024 -> 100; the old linear
 * 1 + (s-2)*9999/262142 gave 39).  0 -> 0. */
uint64_t isd_cgroup_shares_to_weight(uint64_t shares);
/* Docker --blkio-weight [10..1000] to io.weight [1..10000] (crun's
 * 1 + (w - 10) * 9999 / 990).  0 -> 0. */
uint64_t isd_cgroup_blkio_to_io_weight(uint64_t blkio);

/* One file to write in the sandbox cgroup. */
struct isd_cgroup_write {
	unsigned controller;  /* ISD_CG_* */
	const char *file;     /* "memory.max" */
	const char *option;   /* "--memory", for messages */
	unsigned limits;      /* the ISD_LIMIT_* options it comes from (soft when one is) */
	char value[64];
	bool explicit_request; /* false: a derived default (Docker's swap = memory) */
};
#define ISD_CGROUP_MAX_WRITES 10
/* Docker semantics to file values.  Returns the number of writes, or -EINVAL
 * with the message recorded for inconsistent limits. */
int isd_cgroup_limit_writes(const struct isd_limits *l, struct isd_cgroup_write *out);
unsigned isd_cgroup_needed_controllers(const struct isd_limits *l);
/* "cpu cpuset" -> mask; unknown names are ignored. */
unsigned isd_cgroup_parse_controllers(const char *text);
/* mask -> "cpu memory" (each name after prefix, e.g. "+"); "none" for 0. */
void isd_cgroup_controllers_string(unsigned mask, char *buf, size_t len, const char *prefix);
/* /proc/self/cgroup text: the "0::" path (NULL when none, i.e. no cgroup2)
 * and the controllers held by cgroup v1 hierarchies. */
int isd_cgroup_parse_proc_cgroup(const char *text, char **v2_path, unsigned *v1_controllers);
/* /proc/self/mountinfo text: the cgroup2 mount that holds own_path; the
 * absolute directory of own_path under it in *dir (NULL when none). */
int isd_cgroup_find_dir(const char *mountinfo, const char *own_path, char **mountpoint, char **dir);

/* The placement decision, read-only over a cgroup tree (real, or a fake
 * one in a temp dir for tests). */
enum isd_cgroup_place {
	ISD_CG_PLACE_NONE,       /* nowhere: see reason */
	ISD_CG_PLACE_CHILD,      /* child of own (own is the root, or enabled already) */
	ISD_CG_PLACE_SUPERVISOR, /* move isd into own/<leaf>, then child of own */
	ISD_CG_PLACE_SIBLING,    /* child of own's parent */
};
struct isd_cgroup_env {
	const char *mountpoint; /* cgroup2 mount point */
	const char *own;        /* isd's cgroup dir (absolute, under mountpoint) */
	pid_t self;
	/* Tests: when >= 0, a file is writable when this uid owns it and its
	 * owner-write bit is set (instead of faccessat(AT_EACCESS)). */
	int fake_uid;
};
struct isd_cgroup_plan {
	enum isd_cgroup_place place;
	char base[PATH_MAX];   /* the directory the sandbox dir is created in */
	unsigned available;    /* controllers base offers its children (or can) */
	unsigned to_enable;    /* of those, to write into base's subtree_control */
	char reason[512];      /* why nothing / why controllers are missing */
};
int isd_cgroup_plan(const struct isd_cgroup_env *env, unsigned needed, struct isd_cgroup_plan *plan);

/* cgroup-systemd.c (HAVE_SD_BUS): a transient scope with Delegate=yes
 * holding isd, from the user manager; libsystemd is dlopen()ed. */
int isd_cgroup_systemd_scope(const char *unit, char *err, size_t errlen);
/* "memory" for ISD_CG_MEMORY, ... (cgroup-plan.c, used by cgroup.c). */
const char *isd_cgroup_controller_name(unsigned bit);
/* The controllers listed in dir/file (cgroup.controllers, ...). */
unsigned isd_cgroup_read_controllers(const char *dir, const char *file);

/* The fix for a host without a usable cgroup v2 hierarchy, worded for
 * its init system (shared by isd exec's refusals and isd doctor). */
const char *isd_cgroup_hierarchy_fix(void);

/* What isd exec would do for limits needing the controllers needed, found
 * the way isd_cgroup_prepare finds it, without creating anything (isd
 * doctor).  Returns 0 when all of them would be enforced, else -EOPNOTSUPP
 * with why set to the line isd exec refuses with. */
struct isd_cgroup_diagnosis {
	bool hierarchy;          /* a cgroup v2 hierarchy holds these controllers */
	enum isd_cgroup_place place;
	unsigned available;      /* of needed, what the place offers */
	char base[PATH_MAX];
	char why[1024];
};
int isd_cgroup_diagnose(unsigned needed, struct isd_cgroup_diagnosis *d);

#endif
