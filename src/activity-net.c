/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The activity log's network records: the sink the relay is handed
 * (isd/net-record.h), on the relay's thread.  Every string is bounded
 * before it is escaped, so a record always fits its buffer whole (a cut
 * record would not be JSON); the log's bound counts these records as it
 * counts the exec ones.
 */
#define _GNU_SOURCE
#include "isd/activity.h"
#include "isd/net-record.h"
#include "activity-rec.h"
#include "isd/util.h"

#include <inttypes.h>
#include <string.h>

#define MAX_FIELD 2048u
/* every byte may take six (\udcXX), the keys and numbers take the rest */
#define NET_REC_CAP (6u * 5u * MAX_FIELD + 1024u)

static void put_field(struct rec *r, const char *key, const char *s)
{
	if (!s)
		return;
	rec_printf(r, ",\"%s\":", key);
	rec_json_str(r, s, strnlen(s, MAX_FIELD));
}

void isd_activity_net_record(void *ctx, const struct isd_net_record *n)
{
	static const char *const verdicts[ISD_NET_N_VERDICTS] = {"allowed", "denied", "failed", "refused"};
	struct isd_activity *a = ctx;
	_cleanup_free_ char *buf = isd_xmalloc(NET_REC_CAP);
	struct rec r = {.buf = buf, .cap = NET_REC_CAP};

	rec_puts(&r, n->dns ? "{\"type\":\"dns\"," : "{\"type\":\"net\",");
	rec_time_at(&r, n->start.tv_sec ? &n->start : NULL);
	rec_printf(&r, ",\"verdict\":\"%s\"", verdicts[n->verdict]);
	if (n->count > 1) {
		rec_printf(&r, ",\"count\":%" PRIu64 ",", n->count);
		rec_time_key(&r, "last", &n->last);
	}
	put_field(&r, "what", n->what);
	put_field(&r, "host", n->host);
	if (n->port)
		rec_printf(&r, ",\"port\":%u", n->port);
	put_field(&r, "rule", n->rule);
	put_field(&r, "reason", n->reason);
	if (!n->dns) {
		put_field(&r, "via", n->via);
		rec_printf(&r, ",\"up\":%" PRIu64 ",\"down\":%" PRIu64 ",\"duration_ms\":%" PRIu64, n->up, n->down,
			   n->duration_ms);
	}
	if (n->pid > 0)
		rec_printf(&r, ",\"pid\":%ld", n->pid);
	if (n->host_pid > 0)
		rec_printf(&r, ",\"host_pid\":%d", (int)n->host_pid);
	rec_puts(&r, "}");
	activity_write(a, &r);
}
