/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The commands on agent state stores: the "state" section of isd diff,
 * isd apply --state, isd state list|diff|apply|restore|discard, and the
 * part of isd gc that merges stores a crashed isd left behind.
 */
#define _GNU_SOURCE
#include "agent-state-internal.h"
#include "isd/cli-args.h"
#include "isd/util.h"
#include "isd/path-util.h"
#include "isd/visible.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Stores that only keep backups: the newest are kept for isd state restore. */
#define KEEP_BACKUP_STORES 20

static size_t count_held(const struct state_items *it)
{
	size_t n = 0;

	for (size_t i = 0; i < it->n; i++)
		n += (it->v[i].guard.hold == ISD_HOLD_WHOLE && it->v[i].guard.why) || it->v[i].guard.hold == ISD_HOLD_KEYS ||
		     (it->v[i].guard.hold == ISD_HOLD_NONE && !S_ISDIR(it->v[i].change.new_mode));
	return n;
}

size_t store_held(struct state_store *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_layers; i++) {
		struct state_items it;
		if (layer_items(s, i, &it) == 0)
			n += count_held(&it);
		else
			isd_error_clear();
		state_items_free(&it);
	}
	return n;
}

static const char *status_word(const struct isd_change *c)
{
	return c->status == ISD_CHANGE_ADDED ? "new" : c->status == ISD_CHANGE_DELETED ? "deleted" : "changed";
}

static void print_value(const char *label, const char *v)
{
	_cleanup_free_ char *vis = v ? isd_guard_visible(v, 2000) : NULL;
	printf("      %s %s\n", label, vis ? vis : "(none)");
}

/* The first lines of a held file, made visible: what would run. */
static void print_preview(struct state_store *s, size_t i, const struct isd_change *c)
{
	_cleanup_free_ char *up = isd_xasprintf("%zu/upper", i);
	_cleanup_close_ int root = -1, p = -1, fd = -1;
	const char *name;
	char buf[1024];
	ssize_t n;
	size_t lines = 0;

	if (!S_ISREG(c->new_mode))
		return;
	root = s->layers[i].dir ? openat(s->dir_fd, up, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
				: openat(s->dir_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return;
	if (s->layers[i].dir) {
		p = open_parent_beneath(root, c->path, &name);
	} else {
		_cleanup_free_ char *l = isd_xasprintf("%zu", i);
		p = openat(root, l, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		name = "file";
	}
	if (p < 0 || (fd = openat(p, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (memchr(buf, '\0', (size_t)n) || (n >= 4 && !memcmp(buf, "\177ELF", 4))) {
		printf("      (binary, %s)\n", n >= 4 && !memcmp(buf, "\177ELF", 4) ? "ELF" : "not text");
		return;
	}
	for (char *line = buf, *nl; line && *line && lines < 8; line = nl, lines++) {
		_cleanup_free_ char *vis = NULL;
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		vis = isd_guard_visible(line, 200);
		printf("      | %s\n", vis);
	}
	if (lines == 8 || (size_t)n == sizeof(buf) - 1)
		printf("      | ...\n");
}

static size_t print_layer(struct state_store *s, size_t i, bool color)
{
	struct state_items it;
	size_t n = 0;

	if (layer_items(s, i, &it) < 0) {
		isd_error_print("reading the agent's state");
		return 0;
	}
	for (size_t k = 0; k < it.n; k++) {
		const struct state_item *e = &it.v[k];
		_cleanup_free_ char *rel = layer_home_rel(s, i, e->change.path);
		_cleanup_free_ char *shown = isd_quote_path("~/", rel);
		_cleanup_free_ char *why = NULL;

		if (e->guard.hold == ISD_HOLD_TRANSIENT)
			continue;
		if (e->guard.hold == ISD_HOLD_WHOLE && !e->guard.why) {
			/* In a held directory: listed under it. */
			if (!S_ISDIR(e->change.new_mode)) {
				printf("    %s\n", shown);
				print_preview(s, i, &e->change);
			}
			continue;
		}
		if (e->guard.hold == ISD_HOLD_NONE && S_ISDIR(e->change.new_mode))
			continue;
		n++;
		if (e->guard.hold == ISD_HOLD_KEYS) {
			for (size_t j = 0; j < e->guard.n_keys; j++) {
				_cleanup_free_ char *key = isd_guard_visible(e->guard.keys[j].key, 400);
				printf("  %s%s%s: executable configuration, key %s\n", color ? "\033[1m" : "", shown,
				       color ? "\033[m" : "", key);
				print_value("old:", e->guard.keys[j].old_value);
				print_value("new:", e->guard.keys[j].new_value);
			}
			continue;
		}
		why = e->guard.hold == ISD_HOLD_WHOLE ? isd_guard_visible(e->guard.why, 400)
						      : isd_xstrdup("not code-bearing, but not merged (over the backup bound, or refused)");
		printf("  %s%s%s: %s %s: %s\n", color ? "\033[1m" : "", shown, color ? "\033[m" : "",
		       e->guard.hold == ISD_HOLD_WHOLE ? "executable configuration," : "pending,", status_word(&e->change), why);
		print_preview(s, i, &e->change);
	}
	state_items_free(&it);
	return n;
}

size_t isd_agent_state_print_held(const char *id, bool color)
{
	_cleanup_free_ char *root = state_root();
	struct state_store s;
	size_t n = 0;

	if (store_load(root, id, &s) < 0) {
		isd_error_clear();
		store_free(&s);
		return 0;
	}
	if (store_held(&s)) {
		/* A name from the table, but the table is the user's: visible. */
		_cleanup_free_ char *agent = isd_guard_visible(s.agent, 64);
		printf("\nstate: the agent's own state (%s) holds what would run on the host; "
		       "isd apply --state %s takes it\n",
		       agent, s.id);
		for (size_t i = 0; i < s.n_layers; i++)
			n += print_layer(&s, i, color);
	}
	store_free(&s);
	return n;
}

/* ---- finding a store ---- */


static bool wanted(struct state_store *s, int w)
{
	return w == WANT_ANY || (w == WANT_HELD ? store_held(s) > 0 : store_has_way_back(s));
}

int find_store(const char *arg, int w, struct state_store *out)
{
	_cleanup_free_ char *root = state_root(), *cwd = getcwd(NULL, 0);
	_cleanup_strv_ char **ids = store_ids(root);
	char *best = NULL;
	int64_t best_ns = 0;
	bool best_here = false;

	memset(out, 0, sizeof(*out));
	out->lock_fd = out->dir_fd = -1;
	for (size_t i = 0; ids && ids[i]; i++) {
		struct state_store s;
		bool here;

		if (arg && strncmp(ids[i], arg, strlen(arg)))
			continue;
		if (store_load(root, ids[i], &s) < 0) {
			isd_error_clear();
			store_free(&s);
			continue;
		}
		here = cwd && isd_path_under(cwd, s.project);
		if (arg || wanted(&s, w)) {
			if (arg && best) {
				store_free(&s);
				return isd_error(-EINVAL, "agent state %s: more than one store starts so (%s, %s)", arg, best, ids[i]);
			}
			/* From inside a project its sessions first, then the newest. */
			if (arg || !best || (here && !best_here) || (here == best_here && s.started_ns > best_ns)) {
				best = ids[i];
				best_ns = s.started_ns;
				best_here = here;
			}
		}
		store_free(&s);
	}
	if (!best)
		return isd_error(-ENOENT, arg ? "agent state %s: no such store (isd state list shows them)"
					      : w == WANT_BACKUP ? "agent state: no store keeps a backup of the host's state%s"
								 : "agent state: nothing is held%s (isd state list shows the stores)",
				 arg ? arg : "");
	return store_load(root, best, out);
}

/* ---- taking what is held ---- */

static int take_file_layer(struct state_store *s, size_t i, struct state_item *e, const struct isd_agent *a)
{
	_cleanup_free_ char *hname = NULL, *ldir = isd_xasprintf("%zu", i), *rel = layer_home_rel(s, i, NULL);
	_cleanup_close_ int hp = host_file_parent(s->layers[i].path, &hname);
	_cleanup_close_ int lfd = openat(s->dir_fd, ldir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r;

	if (hp < 0 || lfd < 0)
		return isd_error(hp < 0 ? hp : -errno, "opening %s", s->layers[i].path);
	r = record_before(s, i, -1, "");
	if (r < 0 && r != -ENOSPC)
		return r;
	if (e->guard.hold == ISD_HOLD_KEYS) {
		const struct isd_agent_keys *k = isd_agent_keys_for(a, rel);
		_cleanup_free_ char *host = NULL, *new_text = NULL, *merged = NULL;
		struct stat st;

		if ((r = isd_read_file_at(lfd, "file", &new_text, NULL)) < 0 ||
		    ((r = isd_read_file_at(hp, hname, &host, NULL)) < 0 && r != -ENOENT))
			return isd_error(r, "reading %s", s->layers[i].path);
		r = isd_guard_take_keys(host, new_text, k ? k->keys : NULL, &merged);
		if (r < 0)
			return r;
		r = replace_file_text(hp, hname, merged, fstatat(hp, hname, &st, 0) == 0 ? st.st_mode : 0600);
	} else {
		_cleanup_free_ char *tmp = isd_xasprintf(".%s.isd-apply", hname);
		unlinkat(hp, tmp, 0);
		r = copy_file_into(lfd, "file", hp, tmp, e->change.new_mode);
		if (r == 0 && renameat(hp, tmp, hp, hname) < 0)
			r = -errno;
	}
	if (r < 0)
		return isd_error(r, "writing %s", s->layers[i].path);
	unlinkat(lfd, "file", 0);
	return 0;
}

static int take_layer(struct state_store *s, size_t i, size_t *taken)
{
	const struct isd_agent *a = store_agent(s);
	struct state_items it;
	struct isd_changes apply = {0};
	_cleanup_close_ int host_fd = -1, upper_fd = -1;
	_cleanup_free_ char *up = isd_xasprintf("%zu/upper", i);
	size_t applied = 0, refused = 0;
	int r = layer_items(s, i, &it);

	if (r < 0)
		return r;
	if (!s->layers[i].dir) {
		for (size_t k = 0; k < it.n && r == 0; k++)
			if (it.v[k].guard.hold != ISD_HOLD_TRANSIENT && (r = take_file_layer(s, i, &it.v[k], a)) == 0)
				(*taken)++;
		state_items_free(&it);
		return r;
	}
	host_fd = open(s->layers[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	upper_fd = openat(s->dir_fd, up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (host_fd < 0 || upper_fd < 0) {
		state_items_free(&it);
		return isd_error(-errno, "opening %s", host_fd < 0 ? s->layers[i].path : up);
	}
	for (size_t k = 0; k < it.n && r == 0; k++) {
		struct state_item *e = &it.v[k];

		if (e->guard.hold == ISD_HOLD_TRANSIENT)
			continue;
		if ((r = record_before(s, i, host_fd, e->change.path)) == -ENOSPC)
			r = 0; /* asked for explicitly: taken without a way back */
		if (r < 0)
			break;
		if (e->guard.hold == ISD_HOLD_KEYS)
			continue; /* below, once its directory exists */
		if (e->guard.hold == ISD_HOLD_NONE && S_ISDIR(e->change.new_mode) && !e->change.old_mode)
			; /* a directory for the entries below */
		else if (e->guard.why || e->guard.hold == ISD_HOLD_NONE)
			(*taken)++;
		apply.v = isd_xrealloc(apply.v, (apply.n + 1) * sizeof(*apply.v));
		apply.v[apply.n] = e->change;
		apply.v[apply.n++].path = isd_xstrdup(e->change.path);
	}
	if (r == 0 && apply.n)
		r = isd_changes_apply(host_fd, upper_fd, &apply, 0, true, &applied, &refused);
	if (r == 0 && refused)
		r = isd_error(-EPERM, "apply --state: %zu item%s of %s refused (listed above)", refused, refused == 1 ? "" : "s",
			      s->layers[i].path);
	for (size_t k = 0; k < it.n && r == 0; k++) {
		struct state_item *e = &it.v[k];
		_cleanup_free_ char *rel = layer_home_rel(s, i, e->change.path);

		if (e->guard.hold == ISD_HOLD_KEYS) {
			const struct isd_agent_keys *keys = isd_agent_keys_for(a, rel);
			_cleanup_free_ char *host = NULL, *new_text = NULL, *merged = NULL;
			_cleanup_close_ int hp = -1, np = -1;
			const char *hname, *nname;
			struct stat st;

			hp = open_parent_beneath(host_fd, e->change.path, &hname);
			np = open_parent_beneath(upper_fd, e->change.path, &nname);
			if (hp < 0 || np < 0 || (r = isd_read_file_at(np, nname, &new_text, NULL)) < 0 ||
			    ((r = isd_read_file_at(hp, hname, &host, NULL)) < 0 && r != -ENOENT)) {
				r = isd_error(r < 0 ? r : hp < 0 ? hp : np, "reading %s/%s", s->layers[i].path, e->change.path);
				break;
			}
			r = isd_guard_take_keys(host, new_text, keys ? keys->keys : NULL, &merged);
			if (r == 0)
				r = replace_file_text(hp, hname, merged, fstatat(hp, hname, &st, 0) == 0 ? st.st_mode : 0600);
			if (r == 0 && unlinkat(np, nname, 0) == 0)
				(*taken)++;
		}
	}
	isd_changes_free(&apply);
	state_items_free(&it);
	return r;
}

static int take_all(const char *arg)
{
	struct state_store s;
	size_t taken = 0;
	int r = find_store(arg, WANT_HELD, &s);

	if (r == 0)
		r = store_lock(&s, false);
	for (size_t i = 0; r == 0 && i < s.n_layers; i++)
		r = take_layer(&s, i, &taken);
	if (s.id) {
		(void)store_save(&s);
		if (r == 0)
			printf("isd: apply --state: took %zu held item%s of %s's state (session %s) into your home\n", taken,
			       taken == 1 ? "" : "s", s.agent, s.id);
		if (r == 0 && !store_has_way_back(&s) && !store_held(&s))
			store_remove(&s);
	}
	store_free(&s);
	if (r < 0) {
		isd_error_print("apply --state failed");
		return ISD_EXIT_FAILURE;
	}
	return 0;
}

bool isd_agent_state_apply_requested(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--state"))
			return true;
	return false;
}

static void usage(FILE *f);

int isd_agent_state_cmd_apply(int argc, char **argv)
{
	enum { APPLY_STATE = 1 };
	static const struct isd_cli_flag flags[] = {{"--state", 0, false, APPLY_STATE}, {0}};
	static const struct isd_cli_command cmd = {"apply --state", usage, flags, 1};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);
	const char *id = NULL;

	while (isd_cli_next(&a))
		if (a.id == ISD_CLI_OPERAND)
			id = a.value;
	return a.exit >= 0 ? a.exit : take_all(id);
}

/* ---- list, discard, gc ---- */

static int list(void)
{
	_cleanup_free_ char *root = state_root();
	_cleanup_strv_ char **ids = store_ids(root);

	printf("%-12s  %-10s  %-16s  %5s  %9s  %s\n", "ID", "AGENT", "STARTED", "HELD", "BACKUP", "STATE");
	for (size_t i = 0; ids && ids[i]; i++) {
		struct state_store s;
		char when[32] = "?", size[32];
		time_t t;
		struct tm tm;

		if (store_load(root, ids[i], &s) < 0) {
			isd_error_clear();
			store_free(&s);
			continue;
		}
		t = (time_t)(s.started_ns / 1000000000);
		if (localtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
		snprintf(size, sizeof(size), "%lluK", (unsigned long long)((s.backup_bytes + 1023) / 1024));
		printf("%-12s  %-10.10s  %-16s  %5zu  %9s  %s\n", s.id, s.agent, when, store_held(&s), size,
		       store_lock(&s, false) < 0 ? (isd_error_clear(), "running") : s.merged ? "merged" : "not merged");
		store_free(&s);
	}
	return 0;
}

static int discard(const char *arg)
{
	struct state_store s;
	int r = find_store(arg, WANT_ANY, &s);

	if (r == 0 && !arg)
		r = isd_error(-EINVAL, "state discard: name the store (isd state list); it drops the held items and the backups");
	if (r == 0)
		r = store_lock(&s, false);
	if (r == 0)
		r = store_remove(&s);
	if (r == 0)
		printf("isd: state discard: removed %s\n", s.id);
	store_free(&s);
	if (r < 0) {
		isd_error_print("state discard failed");
		return ISD_EXIT_FAILURE;
	}
	return 0;
}

void isd_agent_state_gc(bool dry_run, bool full)
{
	_cleanup_free_ char *root = state_root();
	_cleanup_strv_ char **ids = store_ids(root);
	struct {
		char *id;
		int64_t ns;
	} *backups = NULL;
	size_t n_backups = 0;
	_cleanup_close_ int root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

	for (size_t i = 0; ids && ids[i]; i++) {
		struct state_store s;

		/* Before each sandbox only what a crash left is merged: one
		 * stat per store. */
		if (!full && root_fd >= 0 && store_marked_merged(root_fd, ids[i]))
			continue;
		if (store_load(root, ids[i], &s) < 0 || (!full && s.merged) || store_lock(&s, false) < 0) {
			isd_error_clear();
			store_free(&s);
			continue;
		}
		if (!s.merged && !dry_run) {
			size_t held = store_merge(&s, false);
			fprintf(stderr, "isd: merged the agent state of session %s, whose isd ended before it could (%zu held)\n",
				s.id, held);
		}
		if (s.merged && !dry_run)
			store_mark_merged(&s, true);
		if (!dry_run && s.merged && !store_has_way_back(&s) && !store_held(&s)) {
			store_remove(&s);
		} else if (store_has_way_back(&s) && !store_held(&s)) {
			backups = isd_xrealloc(backups, (n_backups + 1) * sizeof(*backups));
			backups[n_backups].id = isd_xstrdup(s.id);
			backups[n_backups++].ns = s.started_ns;
		}
		store_free(&s);
	}
	/* The oldest backups beyond the newest KEEP_BACKUP_STORES go. */
	for (size_t i = 0; i < n_backups; i++) {
		size_t newer = 0;
		for (size_t k = 0; k < n_backups; k++)
			newer += backups[k].ns > backups[i].ns;
		if (newer >= KEEP_BACKUP_STORES) {
			struct state_store s;
			if (dry_run)
				printf("isd gc: would remove the agent state backup %s\n", backups[i].id);
			else if (store_load(root, backups[i].id, &s) == 0 && store_lock(&s, false) == 0)
				store_remove(&s);
			isd_error_clear();
			store_free(&s);
		}
		free(backups[i].id);
	}
	free(backups);
}

void store_trim(void)
{
	_cleanup_free_ char *root = state_root();
	_cleanup_strv_ char **ids = store_ids(root);

	if (isd_strv_len(ids) > 2 * KEEP_BACKUP_STORES)
		isd_agent_state_gc(false, true);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: isd state list\n"
		   "       isd state diff [ID]      what the agent's state holds (code-bearing, not merged)\n"
		   "       isd state apply [ID]     take it (the same as isd apply --state [ID])\n"
		   "       isd state restore [ID]   the state as it was before session ID (added files removed,\n"
		   "                                changed and deleted ones put back)\n"
		   "       isd state discard ID     drop a store: its held items and its backups\n");
}

/* isd state SUB [ID]: the one operand, or the exit status (>= 0). */
static int state_id(const char *name, int max_ids, int argc, char **argv, const char **id)
{
	const struct isd_cli_command cmd = {name, usage, NULL, max_ids};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);

	*id = NULL;
	while (isd_cli_next(&a))
		*id = a.value;
	return a.exit;
}

static int state_list(int argc, char **argv)
{
	const char *id;
	int r = state_id("state list", 0, argc, argv, &id);
	return r >= 0 ? r : list();
}

static int state_apply(int argc, char **argv)
{
	const char *id;
	int r = state_id("state apply", 1, argc, argv, &id);
	return r >= 0 ? r : take_all(id);
}

static int state_restore_cmd(int argc, char **argv)
{
	const char *id;
	int r = state_id("state restore", 1, argc, argv, &id);
	return r >= 0 ? r : state_restore(id);
}

static int state_discard(int argc, char **argv)
{
	const char *id;
	int r = state_id("state discard", 1, argc, argv, &id);
	return r >= 0 ? r : discard(id);
}

static int state_diff(int argc, char **argv)
{
	struct state_store s;
	const char *id;
	int r = state_id("state diff", 1, argc, argv, &id);

	if (r >= 0)
		return r;
	r = find_store(id, id ? WANT_ANY : WANT_HELD, &s);
	if (r < 0) {
		isd_error_print("state diff failed");
		return ISD_EXIT_FAILURE;
	}
	isd_agent_state_print_held(s.id, isatty(STDOUT_FILENO));
	store_free(&s);
	return 0;
}

int isd_agent_state_cmd(int argc, char **argv)
{
	static const struct isd_cli_subcommand subs[] = {
		{"list", state_list},       {"diff", state_diff},       {"apply", state_apply},
		{"restore", state_restore_cmd}, {"discard", state_discard}, {0},
	};
	return isd_cli_dispatch("state", usage, subs, argc, argv);
}
