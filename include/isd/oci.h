/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plan side of the OCI runtime: a bundle's config.json (runtime-spec
 * 1.x) translated into isd's spec plus what the spec does not model.
 * Pure: the file, the host's device nodes it names and the kernel's last
 * capability are read, nothing on the system is created or changed, and
 * everything is validated before the call returns, so a maker never meets
 * a value it has to second-guess.  isd_oci_refuse_unapplied() is the
 * runtime's check that its maker carries out all the rest (extra).
 *
 * Errors follow isd's idiom: 0 or -errno, the one line recorded with
 * isd_error() and naming the JSON path and the bundle:
 *   "/b/config.json: linux.namespaces[2].type: \"time\" is not supported"
 * A field or value with security meaning that isd cannot honour is such an
 * error, never skipped.  Properties this runtime-spec version does not
 * define are ignored, as the spec's "Extensibility" section demands, but
 * each gets a line in extra->notes; so do the platform sections (windows,
 * solaris, zos, vm is refused) and run.oci.isd.* annotations present but
 * not allowed.
 *
 * What lands in struct isd_spec (the rest of the spec stays as
 * isd_spec_init() leaves it):
 *   argv, env, workdir          process.args, process.env, process.cwd
 *   tty                         process.terminal
 *   uid, gid                    process.user.uid/gid
 *   rootfs, writable_root       root.path (absolute, the bundle's when relative), !root.readonly
 *   image                       "oci:BUNDLE_DIR" (for --print-spec only)
 *   hostname                    hostname
 *   devices                     linux.devices: the host's node at each path, checked against the
 *                               config's type and numbers (a user namespace cannot mknod), read-only
 *                               where linux.resources.devices take writing away
 *   uid_ranges, gid_ranges      linux.uidMappings / gidMappings
 *   limits                      linux.resources memory, cpu, pids, blockIO.weight (strict)
 *   network                     no network namespace: ISD_NET_HOST, else ISD_NET_NONE (the
 *                               engine configures the namespace it passes by path);
 *                               run.oci.isd.network=netless: ISD_NET_NETLESS, net.allow from
 *                               run.oci.isd.allow
 *   pid_host                    no pid namespace
 *   seccomp                     "unconfined", or "default" with run.oci.isd.seccomp=agent (isd's
 *                               agent rules, TIOCSTI included); the config's own filter is
 *                               extra->seccomp, installed as well (both apply, the kernel
 *                               takes the stricter answer)
 *   landlock_off                true, unless run.oci.isd.isolation=landlock (Landlock on top of
 *                               the namespaces)
 * spec->mounts stays empty: OCI mounts are ordered, relative to the rootfs
 * and of types isd's own mount list does not have; they are extra->mounts.
 */
#ifndef ISD_OCI_H
#define ISD_OCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isd/spec.h"

/* Flags of isd_oci_config_load(). */
#define ISD_OCI_LOAD_ANNOTATIONS (1u << 0)    /* apply run.oci.isd.* (the operator allowed them) */
#define ISD_OCI_LOAD_SYSTEMD_CGROUP (1u << 1) /* --systemd-cgroup: cgroupsPath is "slice:prefix:name" */

/* The documented annotation names (docs/isd-oci-config.5.scd). */
#define ISD_OCI_ANNOTATION_NETWORK "run.oci.isd.network"     /* "netless" */
#define ISD_OCI_ANNOTATION_ALLOW "run.oci.isd.allow"         /* "HOST:PORT,..." as --allow */
#define ISD_OCI_ANNOTATION_SECCOMP "run.oci.isd.seccomp"     /* "agent" */
#define ISD_OCI_ANNOTATION_ISOLATION "run.oci.isd.isolation" /* "landlock" */
#define ISD_OCI_ANNOTATION_CAPABILITIES "run.oci.isd.capabilities" /* "none" */

enum isd_oci_ns {
	ISD_OCI_NS_PID,
	ISD_OCI_NS_NET,
	ISD_OCI_NS_MNT,
	ISD_OCI_NS_IPC,
	ISD_OCI_NS_UTS,
	ISD_OCI_NS_USER,
	ISD_OCI_NS_CGROUP,
	ISD_OCI_NS_COUNT,
};

enum isd_oci_ns_mode {
	ISD_OCI_NS_SHARE, /* not listed: the runtime's own namespace */
	ISD_OCI_NS_NEW,
	ISD_OCI_NS_JOIN, /* path given: setns() to it */
};

struct isd_oci_namespace {
	enum isd_oci_ns_mode mode;
	char *path; /* JOIN: absolute, normalized */
};

enum isd_oci_mount_type {
	ISD_OCI_MOUNT_BIND, /* "bind" type, or "bind"/"rbind" among the options */
	ISD_OCI_MOUNT_TMPFS,
	ISD_OCI_MOUNT_PROC,
	ISD_OCI_MOUNT_SYSFS,
	ISD_OCI_MOUNT_DEVPTS,
	ISD_OCI_MOUNT_MQUEUE,
	ISD_OCI_MOUNT_CGROUP, /* "cgroup" or "cgroup2": isd mounts cgroup2 only */
};

struct isd_oci_mount {
	enum isd_oci_mount_type type;
	char *source;      /* bind: absolute host path (a relative one is the bundle's); else as given or NULL */
	char *destination; /* absolute and normalized, inside the container's root */
	unsigned long flags;       /* MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, atime, sync ... to set */
	/* MS_SHARED|MS_SLAVE|MS_PRIVATE|MS_UNBINDABLE, | MS_REC; 0 = unchanged;
	 * for any type (podman writes rprivate on tmpfs): set after the mount */
	unsigned long propagation;
	bool recursive;            /* bind: rbind */
	char *data;                /* file system options for mount(2) ("size=65536k,mode=755"), or NULL */
	bool copy_up;              /* tmpfs "tmpcopyup": what the image has at destination copied in */
	/* tmpfs, parsed from data for --print-spec and checks */
	uint64_t size; /* bytes, 0 = kernel default */
	uint32_t mode;
	bool has_mode;
};

struct isd_oci_rlimit {
	int resource; /* RLIMIT_* */
	uint64_t soft, hard;
};

enum isd_oci_cap_set {
	ISD_OCI_CAP_BOUNDING,
	ISD_OCI_CAP_EFFECTIVE,
	ISD_OCI_CAP_INHERITABLE,
	ISD_OCI_CAP_PERMITTED,
	ISD_OCI_CAP_AMBIENT,
	ISD_OCI_CAP_SET_COUNT,
};

/* linux.devices as the config gives them (spec->devices holds what is
 * bound; fileMode, uid and gid stay the host node's). */
struct isd_oci_device {
	char *path; /* absolute, normalized */
	char type;  /* 'c', 'b', 'u' (unbuffered char), 'p' (fifo) */
	uint32_t major, minor;
	uint32_t file_mode;
	uint32_t uid, gid;
	bool has_file_mode, has_uid, has_gid;
};

/* linux.resources.devices: the device cgroup's rules, in order. */
struct isd_oci_device_rule {
	bool allow;
	char type;          /* 'a', 'c', 'b' */
	int64_t major, minor; /* -1 = any */
	char access[4];     /* subset of "rwm", NUL-terminated */
};

enum isd_oci_hook_kind {
	ISD_OCI_HOOK_PRESTART,
	ISD_OCI_HOOK_CREATE_RUNTIME,
	ISD_OCI_HOOK_CREATE_CONTAINER,
	ISD_OCI_HOOK_START_CONTAINER,
	ISD_OCI_HOOK_POSTSTART,
	ISD_OCI_HOOK_POSTSTOP,
	ISD_OCI_HOOK_COUNT,
};

struct isd_oci_hook {
	char *path;  /* absolute */
	char **args; /* NULL-terminated, may be NULL */
	char **env;  /* NULL-terminated, may be NULL */
	int timeout; /* seconds, 0 = none */
};

struct isd_oci_hooks {
	struct isd_oci_hook *hooks;
	size_t n;
};

struct isd_oci_extra {
	char *bundle;       /* absolute bundle directory */
	char *config_path;  /* BUNDLE/config.json, as named in messages */
	char *container_id; /* as passed to the load call (may be NULL) */
	char *oci_version;

	/* process */
	bool has_console_size;
	uint32_t console_height, console_width;
	uint32_t *additional_gids;
	size_t n_additional_gids;
	bool has_umask;
	uint32_t umask;
	struct isd_oci_rlimit *rlimits;
	size_t n_rlimits;
	uint64_t caps[ISD_OCI_CAP_SET_COUNT]; /* bit N = capability N; absent sets are 0 */
	bool no_new_privileges;
	bool caps_none; /* run.oci.isd.capabilities=none: isd's rule, not the config's */
	bool has_oom_score_adj;
	int oom_score_adj; /* -1000..1000 */
	char *apparmor_profile; /* process.apparmorProfile, NULL = none asked */
	char *selinux_label;    /* process.selinuxLabel */

	char *domainname;

	/* mounts, in the order of config.json */
	struct isd_oci_mount *mounts;
	size_t n_mounts;

	/* linux */
	struct isd_oci_namespace ns[ISD_OCI_NS_COUNT];
	struct isd_oci_device *devices;
	size_t n_devices;
	struct isd_oci_device_rule *device_rules;
	size_t n_device_rules;
	/* linux.cgroupsPath: cgroup_dir is the directory below the cgroup v2
	 * root ("/a/b"; with --systemd-cgroup "/machine.slice/libpod-ID.scope"
	 * from "machine.slice:libpod:ID", with the slice's parents expanded);
	 * a relative cgroupfs path is kept relative (to the runtime's own
	 * cgroup).  NULL when absent: the runtime's choice. */
	char *cgroups_path; /* as given */
	char *cgroup_dir;
	char *cgroup_slice, *cgroup_unit; /* systemd only: "machine.slice", "libpod-ID.scope" */
	char *seccomp;        /* linux.seccomp as JSON text (compile with isd_seccomp_prepare_buffer()), or NULL */
	char *seccomp_origin; /* "BUNDLE/config.json linux.seccomp", for its messages */
	char **masked_paths, **readonly_paths; /* absolute, normalized */
	char **sysctl;        /* "key=value", keys dotted ("net.ipv4.ip_forward"), namespaced only */
	unsigned long rootfs_propagation; /* MS_* | MS_REC, 0 = not given */
	char *mount_label;    /* linux.mountLabel */

	struct isd_oci_hooks hooks[ISD_OCI_HOOK_COUNT];
	char **annotations; /* "key=value", all of them, in the file's order */
	char **notes;       /* things accepted but ignored or adjusted: print each as a warning */
	size_t notes_left_out; /* past the first 64 (the last note says how many) */
};

void isd_oci_extra_init(struct isd_oci_extra *extra);
void isd_oci_extra_free(struct isd_oci_extra *extra);

/* Read BUNDLE_DIR/config.json and translate it.  spec must come from
 * isd_spec_init(), extra from isd_oci_extra_init(); on failure both are
 * freed (and initialized again).  container_id may be NULL. */
int isd_oci_config_load(const char *bundle_dir, const char *container_id, unsigned flags,
			struct isd_spec *spec, struct isd_oci_extra *extra);
/* The same from memory (tests, the fuzzer, `isd-runtime spec --check`);
 * bundle_dir is not read, only joined with relative paths. */
int isd_oci_config_parse(const char *json, size_t len, const char *bundle_dir,
			 const char *container_id, unsigned flags, struct isd_spec *spec,
			 struct isd_oci_extra *extra);

/* isd-runtime update --resources: a LinuxResources object (runc's), by the
 * rules of linux.resources, onto *out with only what it names set (LABEL
 * names it in messages).  A -1 that lifts a limit (memory.limit and .swap,
 * cpu.quota; any negative pids.limit) is an ISD_LIMIT_* bit of *unlimited.
 * Device rules that would take a device away are refused. */
int isd_oci_update_parse(const char *json, size_t len, const char *label, struct isd_limits *out,
			 unsigned *unlimited);

/* isd-runtime exec --process FILE: the process object's capability sets
 * and noNewPrivileges, by the rules of config.json's process (absent: no
 * capability, false).  LABEL names the file in messages. */
int isd_oci_process_caps(const char *json, size_t len, const char *label, struct isd_cap_sets *out,
			 bool *no_new_privs);
/* A capability's number from its name (CAP_SYS_ADMIN or sys_admin), or -EINVAL. */
int isd_oci_cap_from_name(const char *name, unsigned *cap);

/* What a maker carries out of extra, for isd_oci_refuse_unapplied(). */
enum isd_oci_applies {
	ISD_OCI_APPLIES_MOUNTS = 1u << 0,        /* mounts (their flags, data, propagation) */
	ISD_OCI_APPLIES_CAPS = 1u << 1,          /* process.capabilities */
	ISD_OCI_APPLIES_RLIMITS = 1u << 2,       /* process.rlimits */
	ISD_OCI_APPLIES_MASKED_PATHS = 1u << 3,  /* linux.maskedPaths, linux.readonlyPaths */
	ISD_OCI_APPLIES_SYSCTL = 1u << 4,        /* linux.sysctl */
	ISD_OCI_APPLIES_LSM = 1u << 5,           /* apparmorProfile, selinuxLabel, linux.mountLabel */
	ISD_OCI_APPLIES_OOM_SCORE = 1u << 6,     /* process.oomScoreAdj */
	ISD_OCI_APPLIES_GROUPS = 1u << 7,        /* process.user.additionalGids */
	ISD_OCI_APPLIES_UMASK = 1u << 8,         /* process.user.umask */
	ISD_OCI_APPLIES_CGROUP_PATH = 1u << 9,   /* linux.cgroupsPath */
	ISD_OCI_APPLIES_PROPAGATION = 1u << 10,  /* linux.rootfsPropagation */
	ISD_OCI_APPLIES_DOMAINNAME = 1u << 11,   /* domainname */
	ISD_OCI_APPLIES_HOOKS = 1u << 12,        /* hooks */
	ISD_OCI_APPLIES_JOIN = 1u << 13,         /* linux.namespaces[].path */
	ISD_OCI_APPLIES_SECCOMP = 1u << 14,      /* linux.seccomp (extra->seccomp) */
	ISD_OCI_APPLIES_CONSOLE_SIZE = 1u << 15, /* process.consoleSize */
};
/* The one refusal a runtime owes for what the config sets and its maker
 * (APPLIES: ISD_OCI_APPLIES_* bits) does not carry out, naming the JSON
 * path: so that a field this plan reads is never dropped between plan and
 * maker.  A maker that honours a field by being stricter (no capabilities
 * at all) says so by its bit.  0 or -EOPNOTSUPP, recorded. */
int isd_oci_refuse_unapplied(const struct isd_oci_extra *extra, unsigned applies);

/* isd_spec_to_json() of spec with an "oci" object holding extra (caller
 * frees): what `isd-runtime create --print-spec` shows. */
char *isd_oci_plan_to_json(const struct isd_spec *spec, const struct isd_oci_extra *extra);

/* Names, for messages and the features JSON: "pid", "network", ...;
 * "prestart", ...; "CAP_CHOWN" for 0 (NULL past the last one isd knows). */
const char *isd_oci_ns_name(enum isd_oci_ns ns);
const char *isd_oci_hook_name(enum isd_oci_hook_kind kind);
const char *isd_oci_cap_name(unsigned cap);
#define ISD_OCI_CAP_LAST 40 /* CAP_CHECKPOINT_RESTORE */

#endif
