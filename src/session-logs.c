/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The activity logs of sessions that ended without changes.  Such a
 * session is removed when its sandbox ends (there is nothing to review or
 * apply), but what its sandbox ran is exactly what a person asks after a
 * run that seemingly did nothing: its log and its description move to
 * $XDG_STATE_HOME/isd/logs/ID/ (activity.jsonl, session.json), where `isd
 * log` finds them as it finds a session's.  The newest KEPT_LOGS are kept,
 * each bounded as the log is (ISD_ACTIVITY_MAX_LOG).
 */
#define _GNU_SOURCE
#include "isd/activity.h"
#include "isd/fsutil.h"
#include "isd/path-util.h"
#include "isd/session.h"
#include "isd/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KEPT_LOGS 20

char *isd_session_logs_root(void)
{
	return isd_xdg_path("XDG_STATE_HOME", ".local/state", "isd/logs");
}

/* All but the newest KEPT_LOGS go (a removal half done, ID without
 * session.json, is the oldest). */
static void trim(const char *root)
{
	_cleanup_strv_ char **ids = isd_session_ids_in(root);
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* A session ends on the way out of a failed start too: its message
	 * is the caller's to print, not this clean-up's to clear. */
	_cleanup_free_ char *kept = isd_xstrdup(isd_error_message());
	size_t n = 0;

	while (ids && ids[n])
		n++;
	while (rootfd >= 0 && n > KEPT_LOGS) {
		size_t oldest = 0;
		int64_t oldest_ns = INT64_MAX;

		for (size_t i = 0; i < n; i++) {
			struct isd_session s;
			int64_t ns = isd_session_load(root, ids[i], &s) == 0 ? s.started_ns : INT64_MIN;

			isd_session_free(&s);
			if (ns < oldest_ns)
				oldest_ns = ns, oldest = i;
		}
		if (isd_rm_rf_at(rootfd, ids[oldest]) < 0)
			isd_warn("removing the old activity log %s/%s: %s", root, ids[oldest], isd_error_message());
		free(ids[oldest]);
		ids[oldest] = ids[--n];
		ids[n] = NULL;
	}
	isd_error_raw(0, kept);
}

void isd_session_keep_log(const struct isd_session *s)
{
	_cleanup_free_ char *root = isd_session_logs_root(), *dir = NULL, *from = NULL, *to = NULL;
	int r;

	from = isd_xasprintf("%s/%s", s->dir, ISD_ACTIVITY_FILE);
	if (access(from, F_OK) < 0)
		return;
	if ((r = isd_mkdir_p(root, 0700)) < 0) {
		isd_warn("keeping the activity log of session %s: creating %s: %s", s->id, root, strerror(-r));
		return;
	}
	dir = isd_xasprintf("%s/%s", root, s->id);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		isd_warn("keeping the activity log of session %s: creating %s: %s", s->id, dir, strerror(errno));
		return;
	}
	/* the log first: a description without its log would find nothing */
	to = isd_xasprintf("%s/%s", dir, ISD_ACTIVITY_FILE);
	if (rename(from, to) < 0) {
		isd_warn("keeping the activity log of session %s: moving %s to %s: %s", s->id, from, dir,
			 strerror(errno));
		rmdir(dir);
		return;
	}
	free(from);
	free(to);
	from = isd_xasprintf("%s/session.json", s->dir);
	to = isd_xasprintf("%s/session.json", dir);
	if (rename(from, to) < 0)
		isd_warn("keeping the activity log of session %s: moving %s to %s: %s", s->id, from, dir,
			 strerror(errno));
	trim(root);
}

/* The newest of root whose project is dir or contains it. */
static int newest_in(const char *root, const char *dir, struct isd_session *out)
{
	_cleanup_strv_ char **ids = isd_session_ids_in(root);
	int r = -ENOENT;

	for (size_t i = 0; ids && ids[i]; i++) {
		struct isd_session s;

		if (isd_session_load(root, ids[i], &s) < 0 || !isd_path_under(dir, s.project) ||
		    (r == 0 && s.started_ns < out->started_ns)) {
			isd_session_free(&s);
			continue;
		}
		if (r == 0)
			isd_session_free(out);
		*out = s;
		r = 0;
	}
	isd_error_clear();
	return r;
}

/* A kept log by its id or a unique prefix of it. */
static int kept_by_id(const char *id, struct isd_session *out)
{
	_cleanup_free_ char *root = isd_session_logs_root();
	_cleanup_strv_ char **ids = isd_session_ids_in(root);
	const char *found = NULL;

	for (size_t i = 0; ids && ids[i]; i++) {
		if (strncmp(ids[i], id, strlen(id)))
			continue;
		if (found)
			return isd_error(0, "session id %s is ambiguous: %s, %s", id, found, ids[i]);
		found = ids[i];
	}
	if (!found)
		return isd_error(-ENOENT, "isd log: no session %s of yours (isd session list)", id);
	return isd_session_load(root, found, out);
}

int isd_session_log_find(const char *id, const char *dir, struct isd_session *out)
{
	_cleanup_free_ char *sessions = NULL, *logs = NULL;
	struct isd_session kept;
	char when[32];
	time_t t;
	struct tm tm;
	int r, rk;

	if (id) {
		r = isd_session_open(id, false, out);
		return r == -ENOENT ? kept_by_id(id, out) : r;
	}
	sessions = isd_session_root();
	logs = isd_session_logs_root();
	r = newest_in(sessions, dir, out);
	rk = newest_in(logs, dir, &kept);
	if (rk == 0 && (r < 0 || kept.started_ns > out->started_ns)) {
		if (r == 0)
			isd_session_free(out);
		*out = kept;
		r = 0;
	} else if (rk == 0) {
		isd_session_free(&kept);
	}
	if (r < 0)
		return isd_error(-ENOENT, "no session for %s (isd session list shows them all; give an ID)", dir);
	t = (time_t)(out->started_ns / 1000000000);
	if (!localtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(when, sizeof(when), "?");
	/* on stderr, so that the log stays the log */
	fprintf(stderr, "isd: session %s of %s (started %s%s)\n", out->id, out->project, when,
		!strncmp(out->dir, logs, strlen(logs)) ? ", ended without changes" : "");
	return 0;
}
