/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the network relay (isd/proxy.h) reports, and all it knows of where
 * the report goes: one record per connection through the netless relay or
 * a --forward once its verdict is known (an allowed one when it closes,
 * with its bytes), and one per denied DNS name.  The relay is handed a
 * sink (isd_proxy_set_sink); the activity log is one (isd/activity.h).
 *
 * A connection the relay accepted and closed before any request came, or
 * one it refused at once (at its connection cap) has a record too: every
 * attempt the relay sees leaves one.  Repeats of a record that is not
 * allowed and moved nothing come coalesced (count > 1, src/proxy-report.c),
 * so that a flood of them cannot grow the log or the relay's memory.
 *
 * Strings may hold bytes of the sandbox's (a rejected request's target):
 * the sink escapes them.  The sink is called on the relay's thread, with
 * strings that live only for the call; it must not block for long.
 */
#ifndef ISD_NET_RECORD_H
#define ISD_NET_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

enum isd_net_verdict {
	ISD_NET_ALLOWED,
	ISD_NET_DENIED, /* by the policy: the allowlist, an address isd refuses, a name that differs */
	ISD_NET_FAILED, /* allowed, or not decided, but it did not work: malformed, unreachable, no request */
	ISD_NET_REFUSED, /* closed at once, unread: the relay holds all the connections it may */
};
#define ISD_NET_N_VERDICTS 4

struct isd_net_record {
	bool dns;                     /* a denied DNS name: host, verdict, reason */
	enum isd_net_verdict verdict;
	const char *what;             /* CONNECT, GET, SOCKS5, capture, forward, forward-unix, DNS */
	const char *host;             /* the name, address or unix path asked for ("" unknown) */
	uint16_t port;                /* 0: none */
	const char *rule;             /* what allowed it: the --allow rule, "--forward"; or NULL */
	const char *reason;           /* why it was denied or failed; NULL when allowed */
	const char *via;              /* the address connected to, or NULL */
	uint64_t up, down;            /* bytes to the destination, and from it to the sandbox */
	struct timespec start;        /* CLOCK_REALTIME: when the sandbox connected */
	uint64_t duration_ms;         /* coalesced: the longest */
	/* 0 or 1: one attempt.  More: this record stands for count attempts
	 * alike in all but time (none moved a byte), the first at start, the
	 * last at last; the first one's own record came before it. */
	uint64_t count;
	struct timespec last;
	/* The process that connected: its pid inside and on the host (read
	 * when it connected: it may be gone by the end), 0: unknown.  Known for a
	 * unix --forward-unix: SO_PEERCRED is the kernel's word for who called
	 * connect().  A TCP connection has no such word: its peer is a socket
	 * in the sandbox's network namespace, and finding its owner means
	 * reading that namespace's socket table and every descriptor of every
	 * process inside, for each connection, on the relay's thread; and the
	 * answer is not sound (a socket inherited across fork or passed with
	 * SCM_RIGHTS has many owners, the one that connected may be gone). */
	long pid;
	pid_t host_pid;
};

typedef void isd_net_sink_fn(void *ctx, const struct isd_net_record *r);

#endif
