/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd-runtime, the OCI runtime front end (runc's command line): what its
 * files share.  The state of each container is a directory below --root
 * (runtime-state.c); the commands are runtime-cmd.c (create, start, run,
 * kill, delete, state, list, ps), runtime-ctl.c (pause, resume, ps),
 * runtime-update.c (update) and runtime-info.c (features, spec).
 */
#ifndef ISD_RUNTIME_H
#define ISD_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* runc's exit status for every failure of the runtime itself. */
#define RT_EXIT_FAILURE 1

/* A condition of the runtime's own, not a system call's: the message
 * recorded without an errno's text, the errno returned. */
#define RT_ERR(err, ...) (isd_error(0, __VA_ARGS__), (err))

struct rt_global {
	char *root;      /* --root: the state directory */
	bool systemd_cgroup;
	bool debug;
};
extern struct rt_global rt_global;

/* The recorded error (isd_error) as one line on stderr and, with --log,
 * in the log (runc's JSON with --log-format json: msg, level, time).
 * Returns RT_EXIT_FAILURE. */
int rt_fail(void);
/* The same for a message given here. */
__attribute__((format(printf, 1, 2))) int rt_failf(const char *fmt, ...);
/* A warning: stderr and the log, level "warning". */
__attribute__((format(printf, 1, 2))) void rt_warn(const char *fmt, ...);

/* ---- options of one command ---- */
struct rt_opt {
	const char *name;  /* "bundle": --bundle, -bundle, --bundle=B */
	char short_name;   /* 'b', or 0 */
	bool takes_value;
	int id;            /* > 0 */
};
struct rt_args {
	const char *cmd;
	const struct rt_opt *opts;
	int argc;
	char **argv;
	int i;
	bool done;  /* after "--" or, with stop_at_operand, the first operand */
	bool stop_at_operand; /* run/exec: what follows the id is the command's */
	int id;     /* option id, or 0 for an operand */
	const char *value;
	int exit;   /* -1 while parsing; 0 after --help, RT_EXIT_FAILURE after an error */
	void (*usage)(FILE *out);
};
#define RT_ARGS(name, o, u, ac, av) \
	((struct rt_args){.cmd = (name), .opts = (o), .usage = (u), .argc = (ac), .argv = (av), .i = 1, .exit = -1})
bool rt_next(struct rt_args *a);

/* ---- container state (runtime-state.c) ---- */
/* paused: running, its cgroup frozen (pause, resume) */
enum rt_status { RT_CREATING, RT_CREATED, RT_RUNNING, RT_PAUSED, RT_STOPPED };

struct rt_state {
	char *id;
	pid_t pid;
	uint64_t pid_start; /* /proc/PID/stat's starttime: the pid is ours while it matches */
	char *bundle, *rootfs, *created, *owner, *oci_version;
	char *cgroup;       /* the sandbox's cgroup, NULL when none */
	char **annotations; /* "key=value" */
	char *hooks_json;   /* the hooks start and delete run (runtime-hooks.c) */
	enum rt_status status;  /* computed when read */
};

/* Whether cgroup directory CG (NULL: none) is frozen (cgroup.freeze). */
bool rt_cgroup_frozen(const char *cg);
/* "created" and so on. */
const char *rt_status_name(enum rt_status s);
/* runc's rule for a container id: [A-Za-z0-9_+.-], not "." or "..". */
int rt_check_id(const char *id);
/* The state directory (created, 0700) and the container's in it. */
int rt_root_open(bool create, int *out);
/* Lock the container's directory (flock, exclusive): creating it first
 * with create (-EEXIST: the id is taken), else -ENOENT with the message
 * "container ID does not exist". */
int rt_container_lock(const char *id, bool create, int *dirfd);
/* The same without the lock, for what only reads the state (state.json
 * is replaced whole): a create under way does not hold up state or ps. */
int rt_container_open(const char *id, bool create, int *dirfd);
int rt_state_read(int dirfd, const char *id, struct rt_state *st);
int rt_state_write(int dirfd, const struct rt_state *st);
void rt_state_free(struct rt_state *st);
/* runc's state JSON (ociVersion, id, pid, status, bundle, rootfs,
 * created, owner, annotations); caller frees. */
char *rt_state_json(const struct rt_state *st, bool pretty);
/* A pidfd of the container's init while it is the process the state
 * names (not a reused pid), else -ESRCH. */
int rt_state_pidfd(const struct rt_state *st);
/* The container gone from the state directory (no-op when already). */
int rt_container_remove(int rootfd, const char *id);
/* /proc/PID/stat's ppid, -1 when pid is not there. */
pid_t rt_pid_parent(long pid);
/* /proc/PID/stat's starttime, 0 when pid is not there. */
uint64_t rt_pid_start_time(pid_t pid);
/* The pids of the container (its init's pid namespace, or its cgroup),
 * init first; *n of them. */
pid_t *rt_container_pids(const struct rt_state *st, size_t *n);

#define RT_FIFO "exec.fifo"
#define RT_SECCOMP "seccomp.json" /* linux.seccomp, as the container's filter */

/* ---- commands ---- */
int rt_cmd_create(int argc, char **argv);
int rt_cmd_run(int argc, char **argv);
int rt_cmd_start(int argc, char **argv);
int rt_cmd_state(int argc, char **argv);
int rt_cmd_kill(int argc, char **argv);
int rt_cmd_delete(int argc, char **argv);
int rt_cmd_list(int argc, char **argv);
int rt_cmd_ps(int argc, char **argv);
int rt_cmd_pause(int argc, char **argv);
int rt_cmd_resume(int argc, char **argv);
int rt_cmd_update(int argc, char **argv);
int rt_cmd_features(int argc, char **argv);
int rt_cmd_spec(int argc, char **argv);

/* One operand, the id (start, state, ...): -1 with *id set to go on,
 * else the exit status (--help, or the error reported). */
int rt_one_id(const char *cmd, void (*usage)(FILE *), int argc, char **argv, const char **id);
/* delete, with the container's directory locked (run's end too). */
int rt_delete_locked(int dirfd, const char *id, bool force);

/* runtime-cmd.c, for exec too */
struct isd_spec;
struct isd_oci_extra;
/* spec->seccomp: the container's RT_SECCOMP, with the annotation's profile
 * (if any) stacked in spec->seccomp_also. */
void rt_seccomp_from_state(struct isd_spec *spec, const char *id);
struct isd_spec;
struct isd_oci_extra;
/* runtime-config.c: what of extra the sandbox carries out, into spec; the
 * rest warned about or refused (one line recorded, -errno). */
int rt_apply_config(struct isd_spec *spec, const struct isd_oci_extra *x);
/* process.user.additionalGids, once the payload's ids and maps are known
 * (after isd_rootful_apply), or refused where they cannot be set. */
int rt_apply_groups(struct isd_spec *spec, const struct isd_oci_extra *x);
/* config.json mounts mqueue (or binds the host's) at /dev/mqueue, and the
 * container has an IPC namespace of its own to show there. */
bool rt_wants_mqueue(const struct isd_oci_extra *x);
int rt_load_bundle(const char *bundle, const char *id, struct isd_spec *spec, struct isd_oci_extra *extra);
void rt_default_home(struct isd_spec *spec);
void rt_not_found_hint(void);
int rt_send_console(const char *path, int master);
int rt_write_pid_file(const char *path, pid_t pid);
#define RT_MAX_PRESERVED_FDS 1000
/* --preserve-fds N: copies of 3 .. 3+N-1 above the sandbox's own numbers
 * (*out, the caller's to close and free), -errno recorded when one is not
 * open. */
int rt_copy_preserved(uint32_t n, int **out);
int rt_cmd_exec(int argc, char **argv);

/* runtime-hooks.c */
enum isd_oci_hook_kind;
char *rt_hooks_to_json(const struct isd_oci_extra *x);
/* The config's hooks of kind, in order, with the state (status given) on
 * their stdin; the first failure is returned, recorded. */
int rt_run_config_hooks(const struct isd_oci_extra *x, enum isd_oci_hook_kind kind, const struct rt_state *st,
			enum rt_status status);
/* createContainer and startContainer hooks when this runtime cannot run
 * them (rootless): refused, recorded. */
int rt_hooks_check_inside(const struct isd_oci_extra *x);
bool rt_hooks_inside_supported(void);
/* The hooks kept in the state ("startContainer", "poststart",
 * "poststop"); failures are warnings but startContainer's, whose first is
 * returned, recorded. */
int rt_run_kept_hooks(const struct rt_state *st, const char *kind, enum rt_status status);

/* runtime-ns.c: linux.namespaces entries with a path. */
struct isd_sandbox_detached;
struct rt_ns {
	int fd[7];            /* per enum isd_oci_ns (ISD_OCI_NS_COUNT, checked in runtime-ns.c), -1: not joined */
	unsigned long shared; /* their CLONE_NEW* flags */
};
void rt_ns_init(struct rt_ns *j);
void rt_ns_close(struct rt_ns *j);
/* What the sandbox makes of the joins (the network namespace is the
 * caller's, from the sandbox's side); the joins refused, recorded. */
int rt_ns_plan(struct isd_spec *spec, const struct isd_oci_extra *x);
/* Each path opened and checked to be a namespace of its entry's type,
 * before anything is made: one line recorded otherwise, -errno. */
int rt_ns_open(const struct isd_oci_extra *x, struct rt_ns *j);
/* isd_sandbox_create_detached() in the joined namespaces (as it, without
 * any). */
int rt_ns_create_detached(const struct isd_spec *spec, const struct rt_ns *j, struct isd_sandbox_detached *d);

/* Parse "TERM", "SIGTERM", "15"; -EINVAL recorded. */
int rt_parse_signal(const char *s, int *sig);

#endif
