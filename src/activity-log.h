/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside `isd log`: the line a record is shown as (src/activity-cmd.c) and
 * the process tree of --tree (src/activity-tree.c), which ends its lines
 * as the timeline does.  A line holds bytes of the sandbox's: it reaches
 * the terminal only through isd_line_print, made visible.
 */
#ifndef ISD_ACTIVITY_LOG_H
#define ISD_ACTIVITY_LOG_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

struct isd_line {
	char *buf;
	size_t len, cap;
};

void isd_line_putn(struct isd_line *l, const char *s, size_t n);
void isd_line_puts(struct isd_line *l, const char *s);
/* Prints it made visible, then empties it. */
void isd_line_print(struct isd_line *l);

bool isd_activity_is_exec(json_object *o);
/* A connection's record ("net") or a denied DNS name's ("dns"). */
bool isd_activity_is_net(json_object *o);
long isd_activity_get_int(json_object *o, const char *key, long dflt);
void isd_activity_format_time(struct isd_line *l, json_object *o);
/* An exec record from its cwd on: "CWD  $ ARGV...  [exec PATH]" */
void isd_activity_format_exec_tail(struct isd_line *l, json_object *o);
/* A net or dns record from its type on: "net allowed GET HOST:PORT ..." */
void isd_activity_format_net_tail(struct isd_line *l, json_object *o);
/* A whole timeline line, time first. */
void isd_activity_format_record(struct isd_line *l, json_object *o);

struct isd_activity_exec;
struct isd_activity_node;
struct isd_activity_tree {
	struct isd_activity_node *nodes; /* [0]: the root, above the payload */
	size_t n_nodes, cap_nodes;
	struct isd_activity_exec *execs;
	size_t n_execs, cap_execs;
	size_t *slots; /* pid -> its latest node, open addressing */
	size_t n_slots;
	char **net; /* the run's network records, as lines after the tree */
	size_t n_net, cap_net;
};

/* One exec record (a process's next exec, or a new process). */
void isd_activity_tree_add(struct isd_activity_tree *t, json_object *o);
/* A net or dns record: listed after the tree (a connection's process is
 * rarely known: see isd/net-record.h). */
void isd_activity_tree_add_net(struct isd_activity_tree *t, json_object *o);
/* Prints the tree so far and empties it. */
void isd_activity_tree_flush(struct isd_activity_tree *t);

/* Reading a log record by record (src/activity-read.c). */
struct isd_activity_reader {
	/* A whole line, its newline included; NULL for one that is not a
	 * whole record (past the bound, or cut short by a killed writer). */
	void (*line)(void *arg, const char *buf, size_t n);
	/* NULL: read to the end once.  Else, follow: read on while it says
	 * a run still writes the log, then read to the end once more. */
	bool (*still_written)(void *arg);
	void *arg;
};

/* Every line of the log open at fd; 0, or -errno of a read. */
int isd_activity_read(int fd, const struct isd_activity_reader *r);

#endif
