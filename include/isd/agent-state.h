/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's own state (--agent-state NAME), guarded.  Each state
 * directory is a copy-on-write layer (overlayfs, userxattr, noexec) whose
 * upper layer belongs to a store; each state file is a copy bound over it.
 * When the sandbox ends (or, after a crash, the next isd exec or isd gc),
 * the store is merged into the host's state at once, except what is
 * code-bearing (agents.conf: guarded paths and keys, files with an exec
 * bit, an ELF or "#!" header, symlinks), which stays held in the store
 * until `isd apply --state`.  What the merge deletes or overwrites on the
 * host is copied into the store first (bounded), for `isd state restore`.
 *
 * A store lives in $XDG_STATE_HOME/isd/agent-state/ID/ (ID: the cow
 * workspace session's when there is one, so that `isd diff` of the session
 * shows it):
 *   state.json  {"id", "agent", "project", "started_ns", "merged",
 *                "layers": [{"path", "dir": bool}], "backup_bytes",
 *                "backup_files", "records"}
 *   lock        flock(LOCK_EX) while a sandbox uses the store
 *   N/upper N/work   layer N when it is a directory
 *   N/file           layer N when it is a file: the copy bound inside
 *   records          what the merges changed on the host: "A" (added) or
 *                    "B" (kept in backup/N/PATH) per path, for isd state
 *                    restore (src/agent-state-records.c)
 *   backup/N/...     the host's entries the merges replaced or deleted
 */
#ifndef ISD_AGENT_STATE_H
#define ISD_AGENT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isd/agent.h"
#include "isd/spec.h"

/* What the merge keeps of backups per store; a deletion or overwrite that
 * would exceed it is held instead of merged. */
#define ISD_STATE_BACKUP_MAX_BYTES (512ULL << 20)
#define ISD_STATE_BACKUP_MAX_FILES 100000

struct isd_mount_extras;
struct isd_agent_state_run;

/* --agent-state NAME: the mounts (and the agent's own code bound where it
 * lives in the state).  Parse time, nothing touched. */
int isd_agent_state_add(struct isd_spec *spec, const char *home, const char *agent, const char *origin);

/* Host side, right before the sandbox: a new store (id: the session's, or
 * NULL for a new one; home: the caller's, which the state paths are in) with the layers' uppers and the files' copies, named
 * in extras.  Merges stores left by a crashed isd first.  *out stays NULL
 * when the spec has no agent state. */
int isd_agent_state_begin(const struct isd_spec *spec, const char *id, const char *home,
			  struct isd_mount_extras *extras, struct isd_agent_state_run **out);

/* After the sandbox: merge into the host, print one line about what is
 * held, release the store.  Returns how many items are held (>= 0). */
size_t isd_agent_state_end(struct isd_agent_state_run *run);

/* Child side: the noexec overlay of one state directory. */
int isd_agent_state_new_overlay(const char *lower, const char *upper, const char *work);
/* Child side: the detached mount for spec mount i (agent_state). */
int isd_agent_state_clone(const struct isd_mount *m, size_t i, const struct isd_mount_extras *extras);

/* One line when a program installed like an agent failed in the bare
 * runtime, whose home is read-only: it names --agent NAME. */
void isd_agent_state_hint_at_exit(const struct isd_spec *spec, const char *home, int exit_code);

/* isd gc (full): merge the stores of crashed sandboxes, drop old backups
 * and stores that hold nothing.  Not full: only the merge. */
void isd_agent_state_gc(bool dry_run, bool full);

/* `isd diff`: the "state" section of store id, if it holds anything
 * (nothing printed otherwise).  Returns how many items it printed. */
size_t isd_agent_state_print_held(const char *id, bool color);

/* `isd apply --state [ID]`, `isd state list|diff|apply|restore|discard`. */
int isd_agent_state_cmd_apply(int argc, char **argv);
bool isd_agent_state_apply_requested(int argc, char **argv); /* --state before "--" */
int isd_agent_state_cmd(int argc, char **argv);

#endif
