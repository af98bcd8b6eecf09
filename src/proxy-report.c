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

#include "isd/process.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

static const char *const verdicts[ISD_NET_N_VERDICTS] = {"allowed", "denied", "failed", "refused"};

/* The record to the sink, and its line. */
static void emit(struct isd_proxy *p, const struct isd_net_record *r, bool show)
{
	char target[300], via[64], times[64] = "";
	unsigned n = r->count > 1 ? (unsigned)(r->count > UINT32_MAX ? UINT32_MAX : r->count) : 1;

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
		p->n_quiet[r->verdict] += n;
	if (n > 1)
		snprintf(times, sizeof(times), " (%u times)", n);
	proxy_log(p, show, "%s %s %s: %s%s", verdicts[r->verdict], r->what, target, r->reason ? r->reason : "?", times);
}

/*
 * Coalescing.  A payload can open and close connections, or knock at the
 * relay's cap, as fast as the kernel lets it: a record each would fill the
 * log's bound in seconds (and every record after it, an exec's too, would
 * be dropped) and the terminal with lines.  So a record that is not
 * allowed and moved no byte is written whole the first time; its repeats
 * (the same verdict, what, destination, rule, reason and process) within
 * REPEAT_WINDOW_MS after it are only counted, and go out as one record
 * (count, first and last time) once the window is over, when the next
 * window starts.  A flood of one kind thus writes about one record a
 * second; REPEAT_SLOTS kinds are counted at once (a new one takes the
 * slot counted longest, whose repeats go out first), so the memory is
 * bounded too.  Every attempt is in the log: a count sums them.
 */
static bool coalescible(const struct isd_net_record *r)
{
	return !r->dns && r->verdict != ISD_NET_ALLOWED && !r->up && !r->down && r->count <= 1;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_kind(const struct proxy_repeat *s, const struct isd_net_record *r)
{
	return s->used && s->r.verdict == r->verdict && s->r.port == r->port && s->r.pid == r->pid &&
	       s->r.host_pid == r->host_pid && same_str(s->r.what, r->what) && same_str(s->r.host, r->host) &&
	       same_str(s->r.rule, r->rule) && same_str(s->r.reason, r->reason) && same_str(s->r.via, r->via);
}

static int64_t ms_since(const struct timespec *then, const struct timespec *now)
{
	return (int64_t)(now->tv_sec - then->tv_sec) * 1000 + now->tv_nsec / 1000000 - then->tv_nsec / 1000000;
}

static void repeat_flush(struct isd_proxy *p, struct proxy_repeat *s, const struct timespec *now)
{
	if (s->r.count)
		emit(p, &s->r, s->show);
	s->r.count = 0;
	s->r.duration_ms = 0;
	s->window = *now;
}

static void repeat_free(struct isd_proxy *p, struct proxy_repeat *s, const struct timespec *now)
{
	repeat_flush(p, s, now);
	free(s->rule);
	free(s->reason);
	*s = (struct proxy_repeat){0};
}

static void repeat_take(struct isd_proxy *p, const struct isd_net_record *r, bool show, const struct timespec *now)
{
	struct proxy_repeat *s = NULL;

	for (size_t i = 0; i < REPEAT_SLOTS && !s; i++)
		if (!p->repeats[i].used)
			s = &p->repeats[i];
	if (!s) {
		s = &p->repeats[0];
		for (size_t i = 1; i < REPEAT_SLOTS; i++)
			if (ms_since(&p->repeats[i].window, &s->window) > 0)
				s = &p->repeats[i];
	}
	if (s->used)
		repeat_free(p, s, now);
	s->used = true;
	s->show = show;
	s->r = *r;
	s->r.count = 0;
	s->r.duration_ms = 0;
	snprintf(s->what, sizeof(s->what), "%s", r->what ? r->what : "");
	snprintf(s->host, sizeof(s->host), "%s", r->host ? r->host : "");
	s->r.what = r->what ? s->what : NULL;
	s->r.host = r->host ? s->host : NULL;
	if (r->via) {
		snprintf(s->via, sizeof(s->via), "%s", r->via);
		s->r.via = s->via;
	}
	s->r.rule = s->rule = r->rule ? isd_xstrdup(r->rule) : NULL;
	s->r.reason = s->reason = r->reason ? isd_xstrdup(r->reason) : NULL;
	s->window = *now;
}

void proxy_report(struct isd_proxy *p, const struct isd_net_record *r, bool show)
{
	struct timespec now;

	if (!coalescible(r)) {
		emit(p, r, show);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (size_t i = 0; i < REPEAT_SLOTS; i++) {
		struct proxy_repeat *s = &p->repeats[i];

		if (!same_kind(s, r))
			continue;
		if (!s->r.count++)
			s->r.start = r->start;
		s->r.last = r->start;
		if (r->duration_ms > s->r.duration_ms)
			s->r.duration_ms = r->duration_ms;
		if (ms_since(&s->window, &now) >= REPEAT_WINDOW_MS)
			repeat_flush(p, s, &now);
		return;
	}
	/* (a name or reason too long for the slot is no key: written whole) */
	if (strlen(r->host) >= sizeof(((struct proxy_repeat *)0)->host) ||
	    (r->what && strlen(r->what) >= sizeof(((struct proxy_repeat *)0)->what)) ||
	    (r->via && strlen(r->via) >= sizeof(((struct proxy_repeat *)0)->via))) {
		emit(p, r, show);
		return;
	}
	repeat_take(p, r, show, &now);
	emit(p, r, show);
}

void proxy_report_tick(struct isd_proxy *p)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (size_t i = 0; i < REPEAT_SLOTS; i++) {
		struct proxy_repeat *s = &p->repeats[i];

		if (!s->used || ms_since(&s->window, &now) < REPEAT_WINDOW_MS)
			continue;
		/* a quiet kind lets go of its slot */
		if (s->r.count)
			repeat_flush(p, s, &now);
		else
			repeat_free(p, s, &now);
	}
}

void proxy_report_refused(struct isd_proxy *p, const struct listener *l, int fd)
{
	char reason[128];
	struct isd_net_record r = {.verdict = ISD_NET_REFUSED, .what = "request", .host = "", .reason = reason};

	clock_gettime(CLOCK_REALTIME, &r.start);
	snprintf(reason, sizeof(reason), "the relay holds %zu connections, as many as it may", p->max_conns);
	switch (l->role) {
	case ISD_NET_FD_DNS_TCP:
		r.what = "DNS";
		break;
	case ISD_NET_FD_CAPTURE: {
		struct sockaddr_in local = {0};
		socklen_t sl = sizeof(local);

		r.what = "capture";
		if (getsockname(fd, (struct sockaddr *)&local, &sl) == 0 && local.sin_family == AF_INET) {
			const char *name = proxy_fake_lookup(p, ntohl(local.sin_addr.s_addr));
			r.host = name ? name : "";
			r.port = ntohs(local.sin_port);
		}
		break;
	}
	case ISD_NET_FD_FORWARD:
		r.what = "forward";
		r.rule = "--forward";
		r.host = p->cfg->forwards[l->index].host;
		r.port = p->cfg->forwards[l->index].host_port;
		break;
	case ISD_NET_FD_FORWARD_UNIX: {
		struct ucred cred = {0};
		socklen_t cl = sizeof(cred);

		r.what = "forward-unix";
		r.rule = "--forward-unix";
		r.host = p->cfg->forwards_unix[l->index].host_path;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cred.pid > 0) {
			long ppid;

			r.host_pid = cred.pid;
			isd_process_status(cred.pid, &r.pid, &ppid, NULL);
		}
		break;
	}
	case ISD_NET_FD_PUBLISH:
		r.what = "publish";
		r.host = "127.0.0.1";
		r.port = p->cfg->publish[l->index].sandbox_port;
		break;
	}
	close(fd);
	proxy_report(p, &r, true);
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
	unsigned denied, failed;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (size_t i = 0; i < REPEAT_SLOTS; i++)
		if (p->repeats[i].used)
			repeat_free(p, &p->repeats[i], &now);
	denied = p->n_quiet[ISD_NET_DENIED];
	failed = p->n_quiet[ISD_NET_FAILED] + p->n_quiet[ISD_NET_REFUSED];
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
