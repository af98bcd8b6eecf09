/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The disk as a limit (--storage-opt, Docker's spelling).  An unprivileged
 * user has no disk quota, so the bounds are enforced in two ways:
 *
 *  - exactly, per file: the payload runs with RLIMIT_FSIZE = 15/16 of size (soft and
 *    hard; raising a hard limit takes CAP_SYS_RESOURCE of the initial user
 *    namespace, which nothing in a sandbox has) and SIGXFSZ ignored, so a
 *    write, truncate or fallocate past it fails with EFBIG;
 *  - by a watcher in isd on the host (src/storage-watch.c): the sum of what
 *    isd keeps for the sandbox on the host disk (the cow session, the
 *    agent's state store) against size and inodes, and the free space of
 *    every file system that holds a writable host path against min-free.
 *    At a bound the sandbox is frozen (its cgroup's cgroup.freeze, or
 *    SIGSTOP to each of its processes), one line says so, and `isd resume`
 *    lets it go on or ends it.
 */
#ifndef ISD_STORAGE_H
#define ISD_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

struct json_object;
struct isd_spec;

struct isd_storage_opts {
	uint64_t size;      /* bytes, 0 = no bound */
	uint64_t inodes;    /* 0 = no bound */
	uint64_t min_free;  /* bytes (min_free_pct == 0) */
	uint32_t min_free_pct; /* min-free=N%: of each file system's size */
	bool min_free_set;  /* false: the default floor (isd_storage_floor) */
};

/* The floor of a file system of total bytes, when min-free was not given:
 * the smaller of 2 GiB and 5 % of it. */
#define ISD_STORAGE_DEFAULT_FLOOR (2ULL << 30)
#define ISD_STORAGE_DEFAULT_FLOOR_PCT 5

/* One "size=10G", "inodes=1000000", "min-free=2G" / "min-free=5%" (also
 * several, comma-separated).  Records the message on failure. */
int isd_storage_parse_opt(struct isd_storage_opts *o, const char *arg);

/* The payload's RLIMIT_FSIZE: 15/16 of size, so that one file stops with
 * EFBIG while the sum of the session's files (directories, the activity
 * log, other files) is still below the bound, and the sandbox runs on. */
uint64_t isd_storage_file_limit(const struct isd_storage_opts *o);

/* The floor in bytes for a file system of total bytes. */
uint64_t isd_storage_floor(const struct isd_storage_opts *o, uint64_t total);

/* For --print-spec. */
struct json_object *isd_storage_to_json(const struct isd_storage_opts *o);

/* In the payload, before execve: RLIMIT_FSIZE and SIGXFSZ ignored. */
int isd_storage_payload_limits(const struct isd_storage_opts *o);


/* What the watcher keeps for `isd session list` and `isd resume`, in the
 * session directory. */
#define ISD_STORAGE_STATE_FILE "storage.json"

/* The signals `isd resume` sends to the isd process of a frozen sandbox:
 * go on, or end the sandbox. */
#define ISD_STORAGE_SIG_RESUME (SIGRTMIN + 4)
#define ISD_STORAGE_SIG_END (SIGRTMIN + 5)

struct isd_storage_watch;

/* What the watcher looks after. */
struct isd_storage_scope {
	const char *session_dir; /* the cow session, or NULL */
	const char *id;          /* how `isd resume` names this sandbox */
	char **accounted;        /* directories or files counted against size/inodes */
	char **writable;         /* host paths the payload writes to (their file systems) */
	/* The landlock tier's copies (the cow workspace, the agent's state)
	 * hold the project from the start: what changed since (ctime, which
	 * no unprivileged process sets back) is what counts, an entry of the
	 * copy gone counts as the inode its whiteout will be.  0: all counts. */
	struct timespec baseline;
};

/* The paths of the scope: the session's, the agent state stores', every
 * read-write bind's (caller frees with isd_storage_scope_free). */
void isd_storage_scope_collect(const struct isd_spec *spec, const char *session_dir,
			       const char *const *state_upper, const char *const *state_file, size_t n,
			       struct isd_storage_scope *scope);
void isd_storage_scope_free(struct isd_storage_scope *scope);

/* Before the sandbox starts: the file systems to watch and their floors,
 * the first count.  A file system already below an explicit floor, or a
 * session already over its bound, is refused (-ENOSPC, with the fix);
 * below the default floor, a note and its floor is off for the run. */
int isd_storage_watch_prepare(const struct isd_spec *spec, const struct isd_storage_scope *scope,
			      struct isd_storage_watch **out);
/* Once the sandbox exists: the watcher thread (nothing for NULL).  init
 * is the process whose end ends the sandbox; a freeze without a cgroup
 * stops every descendant of tree (not tree itself, nor the counting
 * process): init for the full tier (its init only waits), isd itself for
 * the landlock tier (a subreaper: orphans come to it). */
int isd_storage_watch_run(struct isd_storage_watch *w, pid_t init, pid_t tree, int cgroup_fd);
/* The watcher's own child (0 for none), which the sandbox's end must not
 * take for one of the sandbox's processes. */
pid_t isd_storage_watch_helper_pid(const struct isd_storage_watch *w);
/* Stops it, thawing the sandbox first (its end must not wait on a freeze). */
void isd_storage_watch_stop(struct isd_storage_watch *w);
/* Whether the watcher ended the sandbox (isd resume --end). */
bool isd_storage_watch_ended(const struct isd_storage_watch *w);

/* What a count found. */
struct isd_storage_usage {
	uint64_t bytes, inodes; /* allocated, hard links once */
	uint64_t baseline;      /* entries older than the baseline: not counted */
	char *unaccounted;      /* what could not be counted, or NULL (caller frees) */
	bool interrupted;       /* stopped at a limit (isd_storage_limits): the rest is not counted */
	uint64_t cpu_ns;        /* CPU time of the counting process (0: counted in the caller) */
};

/* When a count of a running sandbox stops early: the watcher then counts
 * again with the sandbox frozen (src/storage-watch.c). */
struct isd_storage_limits {
	uint64_t bytes, inodes; /* the count went over (0: no limit) */
	/* The file systems that hold the counted paths lost this much free
	 * space or free inodes since the count began (UINT64_MAX: no limit):
	 * the payload may have crossed its bound meanwhile. */
	uint64_t drop_bytes, drop_inodes;
};

/* What isd would count for a directory: allocated bytes and inodes. */
int isd_storage_account(const char *path, uint64_t *bytes, uint64_t *inodes);
/* The sum over paths, entries changed before since (NULL or 0: none) left
 * out but counted in u->baseline. */
int isd_storage_account_all(char *const *paths, const struct timespec *since, struct isd_storage_usage *u);
/* The same, stopping early at lim (NULL: none). */
int isd_storage_account_limited(char *const *paths, const struct timespec *since, const struct isd_storage_limits *lim,
				struct isd_storage_usage *u);

/* The watcher's counts of a running session: in a child made once per
 * sandbox that entered the owner's view (isd/owner-view.h), so no mode
 * the payload set is changed to read it.  *out stays NULL (the count runs
 * in this process) for root and where no user namespace can be made. */
struct isd_storage_counter;
int isd_storage_counter_start(char *const *paths, const struct timespec *since, struct isd_storage_counter **out);
/* isd_storage_account_limited of paths and since (those given at the start);
 * the counting process gone, u->unaccounted says so. */
int isd_storage_counter_count(struct isd_storage_counter *c, char *const *paths, const struct timespec *since,
			      const struct isd_storage_limits *lim, struct isd_storage_usage *u);
/* Its pid (0 for none): not part of the sandbox it watches. */
pid_t isd_storage_counter_pid(const struct isd_storage_counter *c);
void isd_storage_counter_stop(struct isd_storage_counter *c);

/* storage.json of a session: its bound, the pid of the isd watching it (0
 * when none), whether it is frozen. */
int isd_storage_read_state(const char *session_dir, uint64_t *size, pid_t *pid, bool *frozen);

/* For isd doctor: what this host can enforce (0 ok, 1 warn, 2 fail). */
int isd_storage_diagnose(char *detail, size_t dlen, char *fix, size_t flen);

/* `isd resume [--end] ID`. */
int isd_storage_resume_main(int argc, char **argv);

#endif
