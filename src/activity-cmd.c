/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd log [ID] [--json | --tree] [--follow]`: a session's activity log (isd/activity.h) for a
 * person, or as it is for tools.  Everything in it came from the sandbox:
 * argv is quoted for a shell (control bytes as $'\xHH') and every line is
 * made visible (isd/visible.h) before it reaches the terminal.
 */
#define _GNU_SOURCE
#include "isd/activity.h"
#include "isd/session.h"
#include "isd/cli-args.h"
#include "isd/util.h"
#include "isd/visible.h"
#include "activity-log.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void isd_line_putn(struct isd_line *l, const char *s, size_t n)
{
	isd_append(&l->buf, &l->len, &l->cap, s, n);
}

void isd_line_puts(struct isd_line *l, const char *s)
{
	isd_line_putn(l, s, strlen(s));
}

void isd_line_print(struct isd_line *l)
{
	_cleanup_free_ char *v = isd_visible(l->buf, l->len, false);

	printf("%s\n", v);
	free(l->buf);
	*l = (struct isd_line){0};
}

static bool shell_safe(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-", *s))
			return false;
	return true;
}

/* One argument as a shell reads it back: as is, '...', or $'...' when it
 * holds control bytes (which then never reach the terminal raw). */
static void put_quoted(struct isd_line *l, const char *s, size_t n)
{
	bool control = false;

	if (strlen(s) == n && shell_safe(s)) {
		isd_line_putn(l, s, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			control = true;
	if (!control) {
		isd_line_putn(l, "'", 1);
		for (size_t i = 0; i < n; i++)
			if (s[i] == '\'')
				isd_line_puts(l, "'\\''");
			else
				isd_line_putn(l, &s[i], 1);
		isd_line_putn(l, "'", 1);
		return;
	}
	isd_line_puts(l, "$'");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char hex[8];

		if (c < 0x20 || c == 0x7f) {
			snprintf(hex, sizeof(hex), "\\x%02x", c);
			isd_line_puts(l, hex);
		} else if (c == '\'' || c == '\\') {
			isd_line_putn(l, "\\", 1);
			isd_line_putn(l, &s[i], 1);
		} else {
			isd_line_putn(l, &s[i], 1);
		}
	}
	isd_line_putn(l, "'", 1);
}

static const char *get_str(json_object *o, const char *key, size_t *len)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	if (len)
		*len = (size_t)json_object_get_string_len(v);
	return json_object_get_string(v);
}

long isd_activity_get_int(json_object *o, const char *key, long dflt)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int)
		       ? (long)json_object_get_int64(v) : dflt;
}

static bool get_bool(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* An exec record from its working directory on: the timeline's and the
 * tree's lines end alike. */
void isd_activity_format_exec_tail(struct isd_line *l, json_object *o)
{
	const char *path = get_str(o, "path", NULL), *cwd = get_str(o, "cwd", NULL), *argv0 = NULL;
	json_object *argv;

	isd_line_puts(l, cwd ? cwd : "?");
	isd_line_puts(l, "  $");
	if (json_object_object_get_ex(o, "argv", &argv) && json_object_is_type(argv, json_type_array)) {
		size_t n = json_object_array_length(argv);

		for (size_t i = 0; i < n; i++) {
			json_object *a = json_object_array_get_idx(argv, i);
			const char *s = json_object_is_type(a, json_type_string) ? json_object_get_string(a) : "";

			if (i == 0)
				argv0 = s;
			isd_line_putn(l, " ", 1);
			put_quoted(l, s, (size_t)json_object_get_string_len(a));
		}
	}
	if (get_bool(o, "argv_cut"))
		isd_line_puts(l, " [argv cut at 64 KiB]");
	if (path && (!argv0 || strcmp(path, argv0))) {
		isd_line_puts(l, "  [exec ");
		isd_line_puts(l, path);
		isd_line_puts(l, "]");
	}
	/* what the kernel ran once the exec was over (src/activity-exe.c) */
	if (get_str(o, "exe", NULL) && strcmp(get_str(o, "exe", NULL), path ? path : "")) {
		isd_line_puts(l, "  [ran ");
		isd_line_puts(l, get_str(o, "exe", NULL));
		isd_line_puts(l, "]");
	} else if (json_object_object_get_ex(o, "ran", &argv) && !json_object_get_boolean(argv)) {
		isd_line_puts(l, "  [not run: the exec failed]");
	} else if (get_str(o, "exe_unknown", NULL)) {
		isd_line_puts(l, "  [ran ?: ");
		isd_line_puts(l, get_str(o, "exe_unknown", NULL));
		isd_line_puts(l, "]");
	}
	if (get_str(o, "unreadable", NULL)) {
		isd_line_puts(l, "  [argv unreadable: ");
		isd_line_puts(l, get_str(o, "unreadable", NULL));
		isd_line_puts(l, "]");
	}
}

static void format_exec(struct isd_line *l, json_object *o)
{
	char num[64];

	snprintf(num, sizeof(num), "  pid %ld (parent %ld)  ", isd_activity_get_int(o, "pid", -1), isd_activity_get_int(o, "ppid", -1));
	isd_line_puts(l, num);
	isd_activity_format_exec_tail(l, o);
}

bool isd_activity_is_exec(json_object *o)
{
	const char *type = get_str(o, "type", NULL);

	return type && !strcmp(type, "exec");
}

bool isd_activity_is_net(json_object *o)
{
	const char *type = get_str(o, "type", NULL);

	return type && (!strcmp(type, "net") || !strcmp(type, "dns"));
}

/* A connection or a denied name from its type on:
 * "net allowed GET web.test:80  rule web.test:80  via 1.2.3.4  up 78 B  down 180 B  12 ms  pid 5" */
void isd_activity_format_net_tail(struct isd_line *l, json_object *o)
{
	const char *type = get_str(o, "type", NULL), *verdict = get_str(o, "verdict", NULL), *what = get_str(o, "what", NULL),
		   *host = get_str(o, "host", NULL), *rule = get_str(o, "rule", NULL), *reason = get_str(o, "reason", NULL),
		   *via = get_str(o, "via", NULL);
	long port = isd_activity_get_int(o, "port", 0), pid = isd_activity_get_int(o, "pid", -1);
	bool dns = type && !strcmp(type, "dns"), v6 = host && strchr(host, ':') && port;
	char num[160];

	isd_line_puts(l, dns ? "dns " : "net ");
	isd_line_puts(l, verdict ? verdict : "?");
	if (what && !dns) {
		isd_line_puts(l, " ");
		isd_line_puts(l, what);
	}
	isd_line_puts(l, v6 ? " [" : " ");
	isd_line_puts(l, host && host[0] ? host : "?");
	if (port) {
		snprintf(num, sizeof(num), "%s:%ld", v6 ? "]" : "", port);
		isd_line_puts(l, num);
	}
	if (rule) {
		isd_line_puts(l, "  rule ");
		isd_line_puts(l, rule);
	}
	if (via) {
		isd_line_puts(l, "  via ");
		isd_line_puts(l, via);
	}
	/* a refused one moved nothing */
	if (!dns && verdict && !strcmp(verdict, "allowed")) {
		snprintf(num, sizeof(num), "  up %ld B  down %ld B  %ld ms", isd_activity_get_int(o, "up", 0),
			 isd_activity_get_int(o, "down", 0), isd_activity_get_int(o, "duration_ms", 0));
		isd_line_puts(l, num);
	}
	if (pid > 0) {
		snprintf(num, sizeof(num), "  pid %ld", pid);
		isd_line_puts(l, num);
	}
	if (reason) {
		isd_line_puts(l, "  ");
		isd_line_puts(l, reason);
	}
	/* a coalesced record (src/proxy-report.c) */
	if (isd_activity_get_int(o, "count", 1) > 1) {
		const char *last = get_str(o, "last", NULL);

		snprintf(num, sizeof(num), "  (%ld times, the last at ", isd_activity_get_int(o, "count", 1));
		isd_line_puts(l, num);
		isd_line_puts(l, last ? last : "?");
		isd_line_puts(l, ")");
	}
}

void isd_activity_format_time(struct isd_line *l, json_object *o)
{
	const char *time = get_str(o, "time", NULL);

	isd_line_puts(l, time ? time : "?");
}

void isd_activity_format_record(struct isd_line *l, json_object *o)
{
	const char *type = get_str(o, "type", NULL);
	char num[128];

	isd_activity_format_time(l, o);
	if (type && !strcmp(type, "exec")) {
		format_exec(l, o);
	} else if (isd_activity_is_net(o)) {
		isd_line_puts(l, "  ");
		isd_activity_format_net_tail(l, o);
	} else if (type && !strcmp(type, "header")) {
		isd_line_puts(l, get_bool(o, "exec_records") ? "  -- sandbox started, commands recorded"
							 : "  -- sandbox started, commands NOT recorded: ");
		if (!get_bool(o, "exec_records") && get_str(o, "reason", NULL))
			isd_line_puts(l, get_str(o, "reason", NULL));
	} else if (type && !strcmp(type, "dropped")) {
		snprintf(num, sizeof(num), "  -- %ld records dropped: the log reached its bound", isd_activity_get_int(o, "records", -1));
		isd_line_puts(l, num);
	} else {
		isd_line_puts(l, "  (a record of an unknown type)");
	}
}

#define EXEC_PREFIX "{\"type\":\"exec\","
#define NET_PREFIX "{\"type\":\"net\","

/* The attempts a net record stands for: a coalesced one's count (no
 * string of the sandbox's holds its key: a quote in one is escaped). */
static size_t net_attempts(const char *line)
{
	const char *c = strstr(line, ",\"count\":");
	unsigned long long n = c ? strtoull(c + 9, NULL, 10) : 1;

	return n > 1 ? (size_t)n : 1;
}

int isd_activity_count(const char *session_dir, size_t *commands, size_t *connections)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", session_dir, ISD_ACTIVITY_FILE), *buf = NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t cap = 0, n = 0, n_net = 0;
	FILE *f;

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	/* isd writes the type first: no need to parse up to 64 MiB of JSON */
	while (getline(&buf, &cap, f) > 0)
		if (!strncmp(buf, EXEC_PREFIX, sizeof(EXEC_PREFIX) - 1))
			n++;
		else if (!strncmp(buf, NET_PREFIX, sizeof(NET_PREFIX) - 1))
			n_net += net_attempts(buf);
	fclose(f);
	*commands = n;
	*connections = n_net;
	return 0;
}

static void usage(FILE *f)
{
	fputs("Usage: isd log [ID | --file FILE] [--json | --tree] [--follow]\n"
	      "What ran inside a session's sandbox: every command (exec), with its time, pid\n"
	      "and parent pid inside, working directory and argv quoted for a shell; every\n"
	      "connection through the relay or a --forward (net), with its verdict, rule or\n"
	      "reason, bytes each way and duration; every DNS name denied (dns).  Without\n"
	      "ID: the latest session of the current directory's project.\n"
	      "  --file FILE  the log isd exec --activity-log FILE wrote\n"
	      "  --json       the records as JSON Lines, as isd wrote them\n"
	      "  --tree       the commands as a process tree: each process under its parent,\n"
	      "               its execs in order; orphans under the root; the connections\n"
	      "               after it\n"
	      "  --follow     while the sandbox runs, the records as they are written; ends\n"
	      "               when the sandbox has ended\n",
	      f);
}

enum { LOG_JSON = 1, LOG_FILE, LOG_TREE, LOG_FOLLOW };
static const struct isd_cli_flag log_flags[] = {{"--json", 0, false, LOG_JSON},
						{"--file", 0, true, LOG_FILE},
						{"--tree", 0, false, LOG_TREE},
						{"--follow", 'f', false, LOG_FOLLOW},
						{0}};
static const struct isd_cli_command log_command = {"log", usage, log_flags, 1};

struct log_view {
	bool json, tree;
	struct isd_activity_tree t;
	int fd;
	const struct isd_session *session; /* NULL for --file */
};

static void show_line(void *arg, const char *buf, size_t n)
{
	struct log_view *v = arg;
	struct isd_line l = {0};
	json_object *o;

	if (!buf) {
		if (v->json)
			return; /* JSON Lines stay JSON: the broken line is left out */
		if (v->tree)
			isd_activity_tree_flush(&v->t);
		isd_line_puts(&l, "(a line that is not a whole record)");
		isd_line_print(&l);
		return;
	}
	if (v->json) {
		/* isd wrote it in ASCII with every control byte escaped */
		isd_visible_fwrite(stdout, buf, n, true);
		return;
	}
	o = json_tokener_parse(buf);
	if (v->tree && o && isd_activity_is_exec(o)) {
		isd_activity_tree_add(&v->t, o);
		json_object_put(o);
		return;
	}
	if (v->tree && o && isd_activity_is_net(o)) {
		isd_activity_tree_add_net(&v->t, o);
		json_object_put(o);
		return;
	}
	/* a header starts another run, whose pids are another tree */
	if (v->tree)
		isd_activity_tree_flush(&v->t);
	if (!o) {
		isd_line_puts(&l, "(a line that is not JSON)");
	} else {
		isd_activity_format_record(&l, o);
		json_object_put(o);
	}
	isd_line_print(&l);
}

/* The run's lock on the log; a session's lock too, for a log an isd
 * without that lock writes. */
static bool still_written(void *arg)
{
	struct log_view *v = arg;

	return isd_activity_log_is_written(v->fd) || (v->session && isd_session_is_running(v->session));
}

int isd_activity_cmd_log(int argc, char **argv)
{
	struct isd_cli_args a = ISD_CLI_ARGS(&log_command, argc, argv);
	struct isd_session s = {.lock_fd = -1};
	const char *id = NULL, *file = NULL;
	struct log_view v = {.fd = -1};
	struct isd_activity_reader reader = {.line = show_line, .arg = &v};
	bool follow = false;
	_cleanup_free_ char *path = NULL, *cwd = NULL;
	int r;

	while (isd_cli_next(&a)) {
		if (a.id == LOG_JSON)
			v.json = true;
		else if (a.id == LOG_TREE)
			v.tree = true;
		else if (a.id == LOG_FILE)
			file = a.value;
		else if (a.id == LOG_FOLLOW)
			follow = true;
		else
			id = a.value;
	}
	if (a.exit >= 0)
		return a.exit;
	if (v.json && v.tree)
		return isd_cli_usage_error(&log_command, "either --json or --tree");
	if (follow && v.tree)
		return isd_cli_usage_error(&log_command, "either --follow or --tree (a tree is known at the end)");
	if (file && id)
		return isd_cli_usage_error(&log_command, "either a session ID or --file FILE");
	if (file) {
		path = isd_xstrdup(file);
		s.id = isd_xstrdup("(none)");
		goto open_log;
	}
	if (!id && !(cwd = getcwd(NULL, 0))) {
		r = isd_error(-errno, "isd log: finding the current directory");
	} else {
		/* the newest run, also one that has no changes (yet) */
		r = isd_session_log_find(id, cwd, &s);
	}
	if (r < 0) {
		isd_error_print("isd log failed");
		isd_session_free(&s);
		return ISD_EXIT_FAILURE;
	}
	path = isd_xasprintf("%s/%s", s.dir, ISD_ACTIVITY_FILE);
	v.session = &s;
open_log:
	v.fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (v.fd < 0) {
		isd_error(-errno, "isd log: opening the activity log %s of session %s", path, s.id);
		isd_error_print("isd log failed");
		isd_session_free(&s);
		return ISD_EXIT_FAILURE;
	}
	if (follow)
		reader.still_written = still_written;
	r = isd_activity_read(v.fd, &reader);
	if (v.tree)
		isd_activity_tree_flush(&v.t);
	close(v.fd);
	if (r < 0) {
		isd_error(r, "isd log: reading the activity log %s of session %s", path, s.id);
		isd_error_print("isd log failed");
	}
	isd_session_free(&s);
	return fflush(stdout) == 0 && r == 0 ? 0 : ISD_EXIT_FAILURE;
}
