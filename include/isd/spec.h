/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The whole sandbox description as one plain struct.  The command line (and
 * later profiles) fill it, isd_spec_validate() checks all of it before the
 * system is touched, and isd_spec_to_json() prints it for --print-spec.
 */
#ifndef ISD_SPEC_H
#define ISD_SPEC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "isd/proxy.h"
#include "isd/storage.h"

enum isd_mount_type {
	ISD_MOUNT_BIND,
	ISD_MOUNT_TMPFS,
	ISD_MOUNT_OVERLAY, /* the copy-on-write workspace: source is the lower layer */
};

struct isd_mount {
	enum isd_mount_type type;
	char *source;      /* bind: absolute host path (resolved) */
	char *destination; /* absolute, normalized path inside */
	bool readonly;
	/* tmpfs only */
	uint64_t size; /* bytes, 0 = kernel default (half of RAM) */
	uint32_t mode;
	bool has_mode;
	uint32_t uid, gid;
	bool has_uid, has_gid;
	bool exec; /* tmpfs is noexec unless "exec" was given */
	bool noexec; /* bind: noexec too (an OCI mount's option: podman's --read-only, rootless --device) */
	bool implicit; /* added by isd, not by the user (shown in --print-spec) */
	char *origin;  /* "isd", "command line", "profile FILE:LINE", "command resolution" */
	/* bind: a missing source is created on the host when the sandbox
	 * starts (the agent's state), ISD_CREATE_FILE with "{}" */
	enum { ISD_CREATE_NONE, ISD_CREATE_DIR, ISD_CREATE_FILE } create;
	bool optional; /* bind: left out when the source does not exist */
	/* bind: what the sandbox shows at destination (source is its host
	 * path) bound onto itself: a mount point that cannot be renamed, or a
	 * read-only cover (guard.h) */
	bool rebind;
	/* --agent-state: an overlay (directory) or a bind of a copy (file)
	 * whose changes are merged at exit (src/agent-state.c); noexec */
	bool agent_state;
	/* tmpfs: the home's top level, writable and discarded, beneath an
	 * agent's state file that lies directly in the home (src/agent-state.c);
	 * the landlock tier keeps its private home read-only instead */
	bool home_top;
	char **links; /* tmpfs: "NAME\tTARGET" symlinks made in it */
	/* isd-runtime's mounts[].options propagation (MS_SHARED, MS_SLAVE,
	 * MS_PRIVATE or MS_UNBINDABLE, with MS_REC for the r forms), set once
	 * the mount is attached; 0: isd's own, a slave of the host's mount
	 * (mount events come in, none go out).  Only MS_SHARED on a bind of
	 * a root caller keeps the bind in the host's peer group (src/rootful.c). */
	unsigned long propagation;
	/* isd-runtime's "bind" (not "rbind") of a directory: the source's
	 * mount alone, without the mounts beneath it */
	bool nonrecursive;
};

enum isd_network_mode {
	ISD_NET_NONE,
	ISD_NET_HOST,
	ISD_NET_PRIVATE, /* own namespace, outbound through pasta or slirp4netns */
	ISD_NET_NETLESS, /* loopback only, plus isd's allowlist proxy */
};

/* One bit per limit option of `isd exec` (the option table in
 * src/cli-table.c names the bit of each; isd_limit_option() its name). */
enum isd_limit {
	ISD_LIMIT_MEMORY = 1u << 0,
	ISD_LIMIT_MEMORY_SWAP = 1u << 1,
	ISD_LIMIT_MEMORY_RESERVATION = 1u << 2,
	ISD_LIMIT_CPUS = 1u << 3,
	ISD_LIMIT_CPU_SHARES = 1u << 4,
	ISD_LIMIT_CPU_WEIGHT = 1u << 5,
	ISD_LIMIT_CPUSET_CPUS = 1u << 6,
	ISD_LIMIT_PIDS_LIMIT = 1u << 7,
	ISD_LIMIT_BLKIO_WEIGHT = 1u << 8,
};
#define ISD_LIMIT_COUNT 9

enum isd_limits_mode {
	ISD_LIMITS_STRICT,
	ISD_LIMITS_BEST_EFFORT,
};

/* Resource limits (cgroup v2).  A value of 0 / -1 means "not set" as
 * documented per field. */
struct isd_limits {
	uint64_t memory;             /* memory.max, 0 = unset */
	int64_t memory_swap;         /* Docker's memory+swap; 0 = unset, -1 = unlimited */
	uint64_t memory_reservation; /* memory.low, 0 = unset */
	uint64_t cpu_quota_us;       /* cpu.max quota, 0 = unset */
	uint64_t cpu_period_us;      /* cpu.max period (default 100000) */
	uint64_t cpu_weight;         /* cpu.weight 1..10000, 0 = unset */
	char *cpuset_cpus;           /* cpuset.cpus, NULL = unset */
	int64_t pids_limit;          /* pids.max, 0 = unset, -1 = max */
	uint64_t blkio_weight;       /* Docker's 10..1000; cgroup.c maps it to io.weight; 0 = unset */
	enum isd_limits_mode mode;
	/* Limits that came from a profile (ISD_LIMIT_* bits): defaults, not
	 * the user's explicit request, so a host that cannot enforce them
	 * gets one note instead of a refusal. */
	unsigned soft;
};

enum isd_workspace_mode {
	ISD_WORKSPACE_RW,  /* a plain read-write bind */
	ISD_WORKSPACE_RO,
	ISD_WORKSPACE_COW, /* overlayfs over the project, changes kept in a session */
};

/* The project the payload works on (--workspace, --project), with what
 * protects it.  Masks and the git metadata are resolved against the host's
 * tree before the sandbox starts, so --print-spec shows what is covered. */
struct isd_workspace {
	char *path; /* absolute host path, the same path inside; NULL: none */
	enum isd_workspace_mode mode;
	bool keep;     /* --workspace-keep */
	char *session; /* --session ID: re-enter a stopped cow session */
	char **masks, **unmasks; /* --mask / --unmask patterns */
	bool git_writable;
	char **masked;       /* relative to path; directories end in "/" */
	char **git_readonly; /* relative paths bound read-only onto themselves */
	bool git_pin;        /* .git bound onto itself: cannot be renamed or replaced */
	/* Made on the host for the run, removed after (rw): ".git/" where
	 * there is no repository, stand-ins for names git would read as
	 * configuration (src/workspace-git-host.c). */
	char **git_placeholders;
	char **git_hooks_dirs; /* core.hooksPath inside the workspace: created to be covered */
};

/* A host device node the sandbox gets (--device, a CDI spec: src/device.c),
 * bound at path beneath isd's /dev; the landlock tier has no /dev of its
 * own, so there path is the host's. */
struct isd_device {
	char *host;       /* absolute, symlinks resolved: what is bound */
	char *host_given; /* as the user (or the CDI spec) named it */
	char *path;       /* inside, beneath /dev */
	bool write;       /* 'w': else bound read-only and Landlock refuses writes */
	bool mknod;       /* 'm' was asked: recorded, never granted (no mknod inside) */
	bool isd_node;    /* one of isd's own nodes (/dev/null, ...): already there */
	mode_t type;      /* S_IFCHR or S_IFBLK */
	dev_t rdev;       /* checked again when the sandbox binds it */
	char *origin;
};

/* One line of a uid_map/gid_map. */
struct isd_id_range {
	uint32_t inside, outside, count;
};

struct isd_spec {
	char **argv; /* the payload's command and arguments */
	char **env;  /* NAME=VALUE, the payload's complete environment */

	char *image;  /* image name, "host" for the host's own system */
	char *rootfs; /* absolute host path of the root tree; NULL for "host" */

	struct isd_mount *mounts;
	size_t n_mounts;
	/* Mounted in the order listed (an OCI config's, as runc and crun
	 * do), not parents before children (isd exec's -v in any order). */
	bool mounts_listed_order;
	struct isd_workspace workspace;
	struct isd_device *devices;
	size_t n_devices;

	char *workdir;
	char *hostname;
	uint32_t uid, gid;           /* ids the payload sees */
	uint32_t host_uid, host_gid; /* ids they map to on the host */
	/* A root caller (src/rootful.c): host_uid/host_gid are unprivileged
	 * and the files of idmap_disk_uid/gid (root) in binds and the
	 * workspace reach the payload through idmapped mounts; or, with
	 * --unsafe-host-root, the payload keeps host uid 0. */
	bool idmapped;
	uint32_t idmap_disk_uid, idmap_disk_gid;
	bool unsafe_host_root;

	enum isd_network_mode network;
	struct isd_netcfg net; /* --allow, --add-host, --forward, ... (isd/proxy.h) */
	bool pid_host; /* --pid=host: no pid namespace, outer /proc bound read-only */

	char *seccomp; /* profile name or path; "unconfined" disables it */
	/* A second profile stacked with seccomp, NULL for none: isd-runtime's
	 * run.oci.isd.seccomp=agent beside the config's linux.seccomp. */
	char *seccomp_also;
	bool landlock_off; /* --security-opt landlock=off (landlock.h) */
	/* --isolation (src/isolation.h): as asked, and the tier that
	 * isd_isolation_resolve() chose (full or landlock), with why */
	int isolation, tier;
	char *isolation_why;
	bool isolation_pid_host; /* auto took --pid host for a masked /proc */
	char *activity_log; /* --activity-log FILE (isd/activity.h); a cow session has one anyway */

	struct isd_limits limits;
	struct isd_storage_opts storage; /* --storage-opt (isd/storage.h) */
	/* process.rlimits of isd-runtime's config.json: set right before the
	 * payload's exec, every one or the sandbox does not start */
	struct isd_spec_rlimit {
		int resource;
		uint64_t soft, hard;
	} *rlimits;
	size_t n_rlimits;
	/* linux.readonlyPaths and linux.maskedPaths beyond isd's own lists
	 * (src/mount-proc.c), made read-only or masked once the tree is built */
	char **readonly_paths, **masked_paths;

	bool tty;         /* a pseudo-terminal of the sandbox's own for stdio */
	bool interactive; /* with tty: forward the caller's stdin */

	bool command_not_on_caller_path; /* for the 127 message */
	char **profiles; /* profiles applied, in order */
	char *agent;     /* the agent this sandbox is for, or NULL */
	char *agent_state; /* --agent-state NAME: whose table entry guards the state */
	char *command_name; /* argv[0] as given, before command resolution */
	/* Where each setting came from, for --print-spec: "key\torigin". */
	char **origins;

	bool print_spec;

	/* isd build's RUN sandbox (never set by `isd exec`): maps of several
	 * ranges written by the parent through newuidmap/newgidmap (uid/gid
	 * are then switched to inside the namespace), the root filesystem
	 * bound read-write, and Docker's default capabilities kept for uid 0
	 * inside instead of none. */
	struct isd_id_range *uid_ranges, *gid_ranges;
	size_t n_uid_ranges, n_gid_ranges;
	bool writable_root;
	bool build_caps;

	/* isd-runtime's container (never isd exec, never isd build): the
	 * config's process.capabilities (bit N = capability N) and
	 * noNewPrivileges, honoured as runc and crun do, instead of dropping
	 * every capability and setting no_new_privs.  The engine and the
	 * operator decide a container's privileges; run.oci.isd.capabilities=
	 * none keeps isd's own rule. */
	bool config_caps;
	struct isd_cap_sets {
		uint64_t bounding, effective, permitted, inheritable, ambient;
	} caps;
	bool no_new_privs;
	/* isd-runtime's linux.rootfsPropagation (MS_* | MS_REC), set on the
	 * root once pivot_root is done, as runc and crun set it; 0: private. */
	unsigned long rootfs_propagation;
	/* isd-runtime's process.user.additionalGids besides gid: set with
	 * setgroups in the sandbox's user namespace, where each must be
	 * mapped (as root: host_groups[i] is what groups[i] maps to, an id of
	 * root's range in /etc/subgid, src/rootful.c). */
	uint32_t *groups, *host_groups;
	size_t n_groups;
};

void isd_spec_init(struct isd_spec *spec);
void isd_spec_free(struct isd_spec *spec);

struct isd_mount *isd_spec_add_mount(struct isd_spec *spec);
/* Index of the mount at destination dst, or -1. */
ssize_t isd_spec_find_mount(const struct isd_spec *spec, const char *dst);

/* Set (or replace) NAME in the payload's environment. */
void isd_spec_setenv(struct isd_spec *spec, const char *name, const char *value);
const char *isd_spec_getenv(const struct isd_spec *spec, const char *name);

/* Record (or replace) where setting key came from. */
void isd_spec_set_origin(struct isd_spec *spec, const char *key, const char *origin);
const char *isd_spec_get_origin(const struct isd_spec *spec, const char *key);

/* Check everything that can be checked without touching the system state
 * (paths are looked at, nothing is created).  Returns 0 or -errno with the
 * message recorded. */
int isd_spec_validate(const struct isd_spec *spec);

/* Leave out optional binds whose source does not exist. */
void isd_spec_drop_missing_optional(struct isd_spec *spec);

/* Create the missing bind sources marked for creation (host side, right
 * before the sandbox is built). */
int isd_spec_create_sources(const struct isd_spec *spec);

/* JSON text (caller frees). */
char *isd_spec_to_json(const struct isd_spec *spec);

const char *isd_network_mode_name(enum isd_network_mode mode);
/* "memory" for ISD_LIMIT_MEMORY: the option's name without "--"; NULL
 * for anything but one bit. */
const char *isd_limit_name(unsigned bit);

#endif
