/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the relay tells: every verdict is one record (isd/net-record.h),
 * handed to the sink (the activity log) and turned into the line of
 * --network-log, of stderr, or of the summary at exit.  The summary counts
 * the records themselves, so it agrees with the log.
 */
#define _GNU_SOURCE
#include "proxy-internal.h"
#include "isd/util.h"
#include "isd/visible.h"

#include <stdarg.h>
#include <string.h>

#define N_KEPT (sizeof(((struct isd_proxy *)0)->quiet_first) / sizeof(((struct isd_proxy *)0)->quiet_first[0]))

void proxy_log(struct isd_proxy *p, bool denial, const char *fmt, ...)
{
	char msg[1024], when[32];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;

	_cleanup_free_ char *shown = NULL;

	if (!p->log && !denial)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Names and reasons come from the sandbox's requests (a malformed
	 * one's target is as the sandbox sent it): nothing reaches the
	 * terminal or the file unescaped. */
	shown = isd_visible_str(msg);
	if (p->log) {
		gmtime_r(&now, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		fprintf(p->log, "%s %s\n", when, shown);
		fflush(p->log);
	} else if (p->quiet_denials) {
		if (p->n_quiet_shown < N_KEPT)
			p->quiet_first[p->n_quiet_shown] = isd_steal_ptr(shown);
		p->n_quiet_shown++;
	} else {
		/* No terminal in raw mode here: isd makes one raw only for -t,
		 * where a line waits for the summary (quiet_denials) or goes to
		 * --network-log.  So the relay needs nothing of the terminal's
		 * state. */
		fprintf(stderr, "isd: network: %s\n", shown);
	}
}

void proxy_report(struct isd_proxy *p, const struct isd_net_record *r, bool show)
{
	static const char *const verdicts[] = {"allowed", "denied", "failed"};
	char target[300], via[64];

	if (p->sink)
		p->sink(p->sink_ctx, r);
	if (r->port)
		proxy_format_target(r->host[0] ? r->host : "?", r->port, target, sizeof(target));
	else
		snprintf(target, sizeof(target), "%s", r->host[0] ? r->host : "?");
	if (r->verdict == ISD_NET_ALLOWED) {
		snprintf(via, sizeof(via), "%s", r->via ? r->via : "unix");
		proxy_log(p, false, "allowed %s %s via %s up=%llu down=%llu", r->what, target, via,
			  (unsigned long long)r->up, (unsigned long long)r->down);
		return;
	}
	/* every denial counts, shown or not: the log has them all */
	if ((show || r->verdict == ISD_NET_DENIED) && !p->log && p->quiet_denials)
		p->n_quiet[r->verdict]++;
	proxy_log(p, show, "%s %s %s: %s", verdicts[r->verdict], r->what, target, r->reason ? r->reason : "?");
}

/* The record of a connection, once its verdict is known: allowed when it
 * ends (reason NULL), denied or failed when it is refused. */
void proxy_report_conn(struct isd_proxy *p, struct conn *c, enum isd_net_verdict verdict, const char *reason, bool show)
{
	char via[INET6_ADDRSTRLEN] = "";
	struct timespec now;
	struct isd_net_record r = {
		.verdict = verdict,
		.what = c->what[0] ? c->what : "request",
		.host = c->host,
		.port = c->port,
		.rule = c->rule,
		.reason = reason,
		.up = c->up,
		/* the relay's own answer (200, the SOCKS reply) is not the
		 * destination's */
		.down = c->down > c->own_down ? c->down - c->own_down : 0,
		.start = c->start,
		.pid = c->pid,
		.host_pid = c->host_pid,
	};

	if (c->reported)
		return;
	c->reported = true;
	if (c->connected.family && c->kind != CK_FORWARD_UNIX) {
		isd_addr_format(&c->connected, via, sizeof(via));
		r.via = via;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	r.duration_ms = (uint64_t)(now.tv_sec - c->mono.tv_sec) * 1000 + (uint64_t)(now.tv_nsec / 1000000) -
			(uint64_t)(c->mono.tv_nsec / 1000000);
	proxy_report(p, &r, show);
}

/* The denials a terminal session kept quiet, in one line once the
 * terminal is the caller's again; its counts are those of the records. */
void proxy_report_summary(struct isd_proxy *p)
{
	unsigned denied = p->n_quiet[ISD_NET_DENIED], failed = p->n_quiet[ISD_NET_FAILED];

	if (!p->n_quiet_shown)
		return;
	fprintf(stderr, "isd: network: %u request%s denied", denied, denied == 1 ? "" : "s");
	if (failed)
		fprintf(stderr, " and %u failed", failed);
	fprintf(stderr, " while the terminal was in use");
	for (size_t i = 0; i < N_KEPT && i < p->n_quiet_shown; i++)
		fprintf(stderr, "%s %s", i ? ";" : ":", p->quiet_first[i]);
	fprintf(stderr, "%s; %s--network-log FILE records every one as it happens\n",
		p->n_quiet_shown > N_KEPT ? "; ..." : "", p->sink ? "the activity log (isd log) and " : "");
	for (size_t i = 0; i < N_KEPT; i++)
		free(p->quiet_first[i]);
}
