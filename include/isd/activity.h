/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The activity log: one JSON Lines record per execve/execveat the payload
 * (or anything it starts) makes, written by isd on the host.  The payload
 * gets one more seccomp filter, stacked under the profile's: it answers
 * SECCOMP_RET_USER_NOTIF for the exec calls and allows everything else, so
 * the profile's own decisions stand (an ERRNO or KILL of the profile wins
 * over a notification).  The listener descriptor goes to isd over the
 * setup socket; isd (a process of its own, in a session of its own, so
 * that the scheduler gives it a turn of its own) reads path, argv and cwd
 * through /proc/PID and answers
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE.  set_tid_address is notified too (the
 * point where isd sees which executable an exec ran) and let go on.  This is evidence, not enforcement:
 * another thread of the payload can change argv between the read and the
 * exec.
 *
 * Records (every string pure ASCII: other bytes as \uXXXX, bytes that are
 * not UTF-8 as \udcXX, Python's surrogateescape):
 *   {"type":"header","time":T,"version":1,"exec_records":true|false[,"reason":S]}
 *   {"type":"exec","time":T,"pid":N,"ppid":N,"host_pid":N,"cwd":S,
 *    "path":S,"argv":[S...][,"argv_cut":true][,"dirfd":N],
 *    one of "exe":S | "ran":false | "exe_unknown":S}  (src/activity-exe.c)
 *   {"type":"net","time":T,"verdict":"allowed"|"denied"|"failed"|"refused"
 *    [,"count":N,"last":T],"what":S,"host":S
 *    [,"port":N][,"rule":S][,"reason":S][,"via":S],"up":N,"down":N,"duration_ms":N
 *    [,"pid":N,"host_pid":N]}  (a connection through the relay: its start
 *    time, written when its verdict is known or, allowed, when it ends;
 *    every one the relay accepted or refused at its cap; "count": the
 *    coalesced repeats of one, isd/net-record.h)
 *   {"type":"dns","time":T,"verdict":"denied","what":"DNS","host":S,"reason":S}
 *   {"type":"dropped","time":T,"records":N}  (the log reached its bound)
 */
#ifndef ISD_ACTIVITY_H
#define ISD_ACTIVITY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define ISD_ACTIVITY_FILE "activity.jsonl"
#define ISD_ACTIVITY_MAX_LOG (64u << 20)  /* per session; then one "dropped" record */
#define ISD_ACTIVITY_MAX_ARGV (64u << 10) /* argv bytes read per exec */

struct isd_activity;

/* In the parent, before the sandbox: open (append to) the log at path and
 * compile the filter.  The log is created 0600 and never through a
 * symbolic link.  initial_argv and initial_cwd are the payload's command
 * and working directory, what isd asked for (see build_record). */
int isd_activity_open(const char *path, char *const *initial_argv, const char *initial_cwd,
		      struct isd_activity **out);

/* The landlock tier's, before the fork: the payload is no child of
 * isd's listener process and in no user namespace of isd's, so where
 * Yama allows only an ancestor to read it (ptrace_scope 1, without
 * CAP_SYS_PTRACE) the listener is a thread of isd's instead.  guard
 * (netless, else NULL): its connect rule joins the filter (one filter
 * chain holds one listener), and the listener answers those
 * notifications by isd_connect_guard_answer; guard outlives a. */
struct isd_connect_guard;
int isd_activity_join_guard(struct isd_activity *a, const struct isd_connect_guard *guard);

/* In the payload, after no_new_privs: the filter with a listener.  Returns
 * the listener descriptor, or -errno (-EBUSY: an outer filter already has
 * one).  Does not allocate. */
int isd_activity_install(const struct isd_activity *a);

/* In the parent, before the sandbox is made: *payload_end is the socket
 * the payload sends its listener through (isd_activity_send_listener),
 * to the thread isd_activity_listen starts once the sandbox is made (a
 * process of its own session takes over from it once the run lives past
 * its start); isd closes *payload_end once the sandbox has it. */
int isd_activity_prestart(struct isd_activity *a, int *payload_end);
int isd_activity_listen(struct isd_activity *a);
/* The same thread, reading the payload's listener (or its -errno, int32)
 * from sock, a socket of the caller's (the landlock tier's): started now,
 * it does not hold the caller up until the payload sends. */
int isd_activity_listen_on(struct isd_activity *a, int sock);
/* In the payload: its listener to that thread. */
int isd_activity_send_listener(int payload_end, int listener_fd);

/* In the parent: the payload could not install its listener (err: its
 * -errno; one `isd: note:` line and the header say so). */
void isd_activity_off(struct isd_activity *a, int err);

/* The relay's sink (isd/net-record.h, isd_proxy_set_sink): ctx is the
 * struct isd_activity.  Until isd_activity_free, which must come after
 * the relay stopped. */
struct isd_net_record;
void isd_activity_net_record(void *ctx, const struct isd_net_record *r);

/* The process that answers the notifications (0: none, or a thread's):
 * one of isd's own, not the sandbox's to kill with its descendants.
 * Asked once the sandbox is over: the thread forks no process after. */
pid_t isd_activity_listener_pid(struct isd_activity *a);

/* Stops answering, writes the "dropped" record if any, closes the log. */
void isd_activity_free(struct isd_activity *a);

/* Whether a run still writes the log open at fd (any mode): it holds a
 * lock on the log from isd_activity_open to isd_activity_free. */
bool isd_activity_log_is_written(int fd);

/* The exec records and the connections ("net" records) in the log of
 * the session in session_dir (isd session list); -ENOENT: it has no log. */
int isd_activity_count(const char *session_dir, size_t *commands, size_t *connections);

/* `isd log [ID] [--json | --tree] [--follow]` (argv[0] == "log"). */
int isd_activity_cmd_log(int argc, char **argv);

#endif
