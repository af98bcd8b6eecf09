/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd log --tree`: the exec records of one run as a process tree.  A
 * record carries the sandbox pid and parent pid at the time of the exec;
 * records of one pid with the same parent are one process execing again
 * (a parent of 1 too: the process was orphaned and reparented to init
 * since).  A pid seen again under another parent is a new process with a
 * reused pid.  A process whose parent never exec'd (init, or a fork that
 * only forked) hangs under the root.  The log is hostile input (--file
 * takes any file): a parent is always an earlier node, so no cycle can
 * form; the walk needs no stack, and the indentation stops growing at a
 * depth a person can still read, so a chain of 100000 forks costs
 * neither the stack nor a quadratic output.
 */
#define _GNU_SOURCE
#include "activity-log.h"
#include "isd/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX
#define MAX_INDENT 32

struct isd_activity_exec {
	char *time, *text;
	size_t next;
};

struct isd_activity_node {
	long pid, ppid;
	size_t parent, first_child, last_child, next_sibling;
	size_t first_exec, last_exec;
};

static size_t slot_of(const struct isd_activity_tree *t, long pid)
{
	size_t i = (size_t)(((uint64_t)pid * UINT64_C(0x9E3779B97F4A7C15)) >> 20) & (t->n_slots - 1);

	while (t->slots[i] != NONE && t->nodes[t->slots[i]].pid != pid)
		i = (i + 1) & (t->n_slots - 1);
	return i;
}

static size_t lookup(const struct isd_activity_tree *t, long pid)
{
	return t->n_slots ? t->slots[slot_of(t, pid)] : NONE;
}

static void grow_slots(struct isd_activity_tree *t)
{
	size_t n = t->n_slots ? t->n_slots * 2 : 1024;

	free(t->slots);
	t->slots = isd_xmalloc(n * sizeof(*t->slots));
	t->n_slots = n;
	for (size_t i = 0; i < n; i++)
		t->slots[i] = NONE;
	/* later nodes of a reused pid overwrite earlier ones: the latest wins */
	for (size_t k = 1; k < t->n_nodes; k++)
		t->slots[slot_of(t, t->nodes[k].pid)] = k;
}

static size_t new_node(struct isd_activity_tree *t, long pid, long ppid, size_t parent)
{
	struct isd_activity_node *n;
	size_t k = t->n_nodes;

	if (t->n_nodes == t->cap_nodes) {
		t->cap_nodes = t->cap_nodes ? t->cap_nodes * 2 : 64;
		t->nodes = isd_xrealloc(t->nodes, t->cap_nodes * sizeof(*t->nodes));
	}
	n = &t->nodes[t->n_nodes++];
	*n = (struct isd_activity_node){pid, ppid, parent, NONE, NONE, NONE, NONE, NONE};
	if (parent != NONE) {
		if (t->nodes[parent].last_child == NONE)
			t->nodes[parent].first_child = k;
		else
			t->nodes[t->nodes[parent].last_child].next_sibling = k;
		t->nodes[parent].last_child = k;
	}
	return k;
}

void isd_activity_tree_add(struct isd_activity_tree *t, json_object *o)
{
	long pid = isd_activity_get_int(o, "pid", -1), ppid = isd_activity_get_int(o, "ppid", -1);
	struct isd_line time = {0}, text = {0};
	struct isd_activity_exec *e;
	size_t k;

	if (t->n_nodes == 0)
		new_node(t, 0, 0, NONE);
	k = lookup(t, pid);
	if (k == NONE || (t->nodes[k].ppid != ppid && ppid != 1)) {
		size_t parent = lookup(t, ppid);

		k = new_node(t, pid, ppid, parent == NONE ? 0 : parent);
		if ((t->n_nodes - 1) * 2 >= t->n_slots)
			grow_slots(t);
		else
			t->slots[slot_of(t, pid)] = k;
	}
	isd_activity_format_time(&time, o);
	isd_activity_format_exec_tail(&text, o);
	if (t->n_execs == t->cap_execs) {
		t->cap_execs = t->cap_execs ? t->cap_execs * 2 : 64;
		t->execs = isd_xrealloc(t->execs, t->cap_execs * sizeof(*t->execs));
	}
	e = &t->execs[t->n_execs];
	*e = (struct isd_activity_exec){time.buf ? time.buf : isd_xstrdup(""), text.buf ? text.buf : isd_xstrdup(""), NONE};
	if (t->nodes[k].last_exec == NONE)
		t->nodes[k].first_exec = t->n_execs;
	else
		t->execs[t->nodes[k].last_exec].next = t->n_execs;
	t->nodes[k].last_exec = t->n_execs++;
}

void isd_activity_tree_add_net(struct isd_activity_tree *t, json_object *o)
{
	struct isd_line l = {0};

	isd_activity_format_time(&l, o);
	isd_line_puts(&l, "  ");
	isd_activity_format_net_tail(&l, o);
	if (t->n_net == t->cap_net) {
		t->cap_net = t->cap_net ? t->cap_net * 2 : 64;
		t->net = isd_xrealloc(t->net, t->cap_net * sizeof(*t->net));
	}
	t->net[t->n_net++] = l.buf;
}

static void print_node(const struct isd_activity_tree *t, size_t k, size_t depth)
{
	const struct isd_activity_node *n = &t->nodes[k];
	char num[96];
	size_t count = 0;

	for (size_t e = n->first_exec; e != NONE; e = t->execs[e].next) {
		struct isd_line l = {0};

		isd_line_puts(&l, t->execs[e].time);
		isd_line_puts(&l, "  ");
		for (size_t i = 1; i < depth && i < MAX_INDENT; i++)
			isd_line_puts(&l, "  ");
		if (depth >= MAX_INDENT) {
			snprintf(num, sizeof(num), "[depth %zu] ", depth);
			isd_line_puts(&l, num);
		}
		if (++count > 1)
			snprintf(num, sizeof(num), "pid %ld, exec %zu  ", n->pid, count);
		else if (depth == 1)
			snprintf(num, sizeof(num), "pid %ld (parent %ld)  ", n->pid, n->ppid);
		else
			snprintf(num, sizeof(num), "pid %ld  ", n->pid);
		isd_line_puts(&l, num);
		isd_line_puts(&l, t->execs[e].text);
		isd_line_print(&l);
	}
}

void isd_activity_tree_flush(struct isd_activity_tree *t)
{
	size_t k = t->n_nodes ? t->nodes[0].first_child : NONE, depth = 1;

	/* depth first, preorder, through the parent links: no stack */
	while (k != NONE) {
		print_node(t, k, depth);
		if (t->nodes[k].first_child != NONE) {
			k = t->nodes[k].first_child;
			depth++;
			continue;
		}
		while (k != 0 && t->nodes[k].next_sibling == NONE) {
			k = t->nodes[k].parent;
			depth--;
		}
		k = k == 0 ? NONE : t->nodes[k].next_sibling;
	}
	for (size_t i = 0; i < t->n_net; i++) {
		struct isd_line l = {t->net[i], strlen(t->net[i]), strlen(t->net[i]) + 1};

		isd_line_print(&l);
	}
	free(t->net);
	for (size_t e = 0; e < t->n_execs; e++) {
		free(t->execs[e].time);
		free(t->execs[e].text);
	}
	free(t->execs);
	free(t->nodes);
	free(t->slots);
	*t = (struct isd_activity_tree){0};
}
