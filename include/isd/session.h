/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Copy-on-write workspace sessions.  `isd exec --workspace DIR:cow` mounts
 * an overlay whose lower layer is the host's project and whose upper layer
 * is owned by isd, so the project itself is untouched until `isd apply`.
 *
 * A session lives in $XDG_STATE_HOME/isd/sessions/ID/ (ID: 12 hex digits):
 *   session.json  {"id", "project", "started_ns", "keep", "command": [...]}
 *   upper/        the overlay's upper directory (mirrors the project root;
 *                 whiteouts are 0/0 character devices, opaque directories
 *                 carry the xattr user.overlay.opaque="y": the mount uses
 *                 overlayfs' userxattr option); its root has the project's
 *                 mode, which the overlay's root shows
 *   work/         the overlay's work directory (the kernel leaves a mode
 *                 000 "work" directory in it)
 *   lock          flock(LOCK_EX) by the isd process whose sandbox uses the
 *                 session: held means running, free means stopped (a crash
 *                 of isd or of the machine releases it; nothing else needs
 *                 cleaning up, the upper layer stays as the kernel left it)
 *
 * started_ns is CLOCK_REALTIME_COARSE taken before the overlay exists: a
 * host file whose ctime is at or after it changed on the host during the
 * session, and `isd apply` refuses to overwrite it without --force.
 */
#ifndef ISD_SESSION_H
#define ISD_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct isd_session {
	char *id;
	char *dir;     /* .../isd/sessions/ID */
	char *project; /* absolute, resolved host path */
	char **command;
	int64_t started_ns;
	bool keep; /* --workspace-keep: kept even without changes */
	int lock_fd; /* >= 0 while this process holds the session */
};

/* $XDG_STATE_HOME/isd/sessions (default ~/.local/state/isd/sessions). */
char *isd_session_root(void);

/* A new session for project (absolute), locked by this process. */
int isd_session_create(const char *project, char *const *command, bool keep, struct isd_session *out);

/* An existing session by id or unique id prefix.  With lock, the session
 * must be stopped and is locked by this process (-EBUSY with a message
 * naming the session otherwise). */
int isd_session_open(const char *id, bool lock, struct isd_session *out);
/* A cow run's session: the stopped one id names (locked), or a new one
 * when id is NULL.  Its directory must not lie inside the workspace, which
 * overlayfs refuses (and which would let the payload see its own upper
 * layer, or the landlock tier copy the copy). */
int isd_session_for_workspace(const char *workspace, const char *id, char *const *command, bool keep,
			      struct isd_session *out);

/* The most recent session whose project is dir or contains it (for `isd
 * diff` without an ID, run from inside the project). */
int isd_session_find_latest(const char *dir, bool lock, struct isd_session *out);

/* For `isd diff` and `isd apply`, whose ID is optional: arg (the first
 * operand, may be NULL) is the session when it is hex digits that prefix a
 * session id (*consumed set); otherwise the latest session for the current
 * directory. */
int isd_session_from_arg(const char *arg, bool lock, struct isd_session *out, bool *consumed);

bool isd_session_is_running(const struct isd_session *s);

/* The changes the session's upper layer holds (see session-changes.h). */
int isd_session_count_changes(const struct isd_session *s, size_t *count);

/* upper/ and work/ of a session (caller frees). */
char *isd_session_upper(const struct isd_session *s);
char *isd_session_work(const struct isd_session *s);

/* After the sandbox ended: a session without changes (and without keep)
 * is removed; otherwise one line on stderr says how many paths changed and
 * names isd diff / apply / discard.  Releases the lock. */
void isd_session_finish(struct isd_session *s);

/* Remove the whole session directory (upper and work included). */
int isd_session_remove(struct isd_session *s);

void isd_session_free(struct isd_session *s);

/* The description in root/id/session.json (no lock, no check of id). */
int isd_session_load(const char *root, const char *id, struct isd_session *out);
/* The session ids (twelve hex digits) among the names in dir: the
 * sessions directory or the kept logs' (NULL-terminated, may be NULL). */
char **isd_session_ids_in(const char *dir);

/* The activity logs of sessions removed for having no changes
 * (src/session-logs.c): $XDG_STATE_HOME/isd/logs/ID/ holds the log and
 * session.json, the newest 20 are kept. */
char *isd_session_logs_root(void);
/* Before an empty session is removed: its log moves there. */
void isd_session_keep_log(const struct isd_session *s);
/* For `isd log`: the session id names (a prefix), or a kept log of that
 * id; without id, the newest session or kept log whose project is dir or
 * contains it, named on stderr.  out->dir holds the log. */
int isd_session_log_find(const char *id, const char *dir, struct isd_session *out);

/* Remove the half-removed sessions (.removing-ID) an interrupted removal
 * left (src/session-gc.c; `isd gc`). */
int isd_session_gc(bool dry_run, size_t *removed);

/* That, and every stopped session without changes (`isd session prune`). */
int isd_session_prune(bool dry_run);

/* The commands (main.c dispatches to them; argv[0] is the command name). */
int isd_session_cmd_session(int argc, char **argv); /* isd session list [--json] | prune [--dry-run] */
int isd_session_cmd_apply(int argc, char **argv);   /* isd apply [ID] [--force] [PATH...] */
int isd_session_cmd_discard(int argc, char **argv); /* isd discard [ID | --all] */

#endif
