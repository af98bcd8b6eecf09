/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The activity log's state, shared by its two halves: the filter and the
 * records (src/activity.c), and the listener that answers the
 * notifications, a thread of isd's, then a process (src/activity-listen.c).
 */
#ifndef ISD_ACTIVITY_INTERNAL_H
#define ISD_ACTIVITY_INTERNAL_H

#include "activity-rec.h"

#include <linux/filter.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define MAX_ARCHES 3
#define X32_BIT 0x40000000u
/* Room for a record: every byte may take six (\udcXX). */
#define REC_CAP (6u * (ISD_ACTIVITY_MAX_ARGV + 3u * PATH_MAX) + 4096u)
#define DROPPED_RESERVE 128u

struct exec_arch {
	uint32_t arch;
	int execve_nr, execveat_nr, checkpoint_nr, connect_nr;
	unsigned ptr_size;
};

/* What the listener's process and isd's relay thread both write the log
 * under: shared memory, a robust mutex (a killed holder does not stop the
 * other). */
struct log_share {
	pthread_mutex_t lock; /* written, dropped, log_fd's writes */
	uint64_t written, dropped;
	/* Set by the listener's process from a notification on until it holds
	 * no record unwritten: clear once every task under the filter is
	 * gone, the log is complete, and isd need not wait for that process
	 * to end (see isd_activity_free). */
	int busy;
};

struct isd_activity {
	struct sock_filter *filter;
	unsigned short len;
	struct exec_arch arches[MAX_ARCHES];
	size_t n_arches;
	char **initial_argv;
	char *initial_cwd;
	bool initial_done;
	int log_fd;
	uint64_t limit;
	struct log_share *share;
	int listener;
	int stop_pipe[2];
	pid_t listener_pid; /* the process that answers the notifications */
	struct rec rec;
	char *scratch; /* one string read from the payload */
	struct isd_exe_watch *exe; /* the exec records waiting for their exe */
	/* the landlock tier's (isd_activity_join_guard) */
	const struct isd_connect_guard *guard; /* its connects answered too */
	bool in_thread; /* the listener a thread of isd's, not a process */
	bool thread_started;
	pthread_t thread;
	/* isd_activity_prestart's thread: its socket from the payload, and
	 * when it hands over to a process (0: never); handover_lock guards
	 * listener_pid and handover_off against the thread's fork */
	int prestart_sock;
	uint64_t handover_ns;
	pthread_mutex_t handover_lock;
	bool handover_off;
};

struct isd_connect_guard;
struct isd_exe_watch;

/* The next notification: read, answered, its record written or left to
 * wait for its executable (src/activity.c). */
void activity_handle_one(struct isd_activity *a);
/* The log's first record: exec records on, or off for err (-errno). */
void activity_write_header(struct isd_activity *a, int err);

#endif
