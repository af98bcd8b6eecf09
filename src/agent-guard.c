/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "agent-guard.h"
#include "isd/util.h"
#include "isd/visible.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bigger state files are not configuration: held whole unread. */
#define MAX_KEYS_FILE (16 << 20)

void isd_guard_result_free(struct isd_guard_result *g)
{
	for (size_t i = 0; i < g->n_keys; i++) {
		free(g->keys[i].key);
		free(g->keys[i].old_value);
		free(g->keys[i].new_value);
	}
	free(g->keys);
	free(g->why);
	free(g->merged);
	memset(g, 0, sizeof(*g));
}

char *isd_guard_visible(const char *s, size_t max)
{
	size_t n = strlen(s);
	_cleanup_free_ char *vis = isd_visible(s, n < max ? n : max, false);

	return n <= max ? isd_steal_ptr(vis) : isd_xasprintf("%s...", vis);
}

static int read_small(int dfd, const char *name, char **text)
{
	_cleanup_close_ int fd = dfd < 0 && dfd != AT_FDCWD ? -1 : openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	*text = NULL;
	if (dfd < 0 && dfd != AT_FDCWD)
		return -ENOENT;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_KEYS_FILE)
		return -EFBIG;
	return isd_read_fd(fd, text, NULL);
}

/* A JSON object, or NULL (empty text counts as {}: a file the agent has
 * not written yet). */
static json_object *parse_object(const char *text)
{
	json_tokener *tok;
	json_object *o;

	if (!text || !text[strspn(text, " \t\r\n")])
		return json_object_new_object();
	tok = json_tokener_new();
	o = json_tokener_parse_ex(tok, text, (int)strlen(text));
	/* Trailing bytes after the value would be read by someone else. */
	if (o && (json_tokener_get_error(tok) != json_tokener_success ||
		  text[json_tokener_get_parse_end(tok) + strspn(text + json_tokener_get_parse_end(tok), " \t\r\n")])) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

struct key_path {
	char **segs;
};

static void collect_paths(json_object *o, char **pat, size_t i, char ***prefix, struct key_path **out, size_t *n)
{
	if (!pat[i]) {
		(*out) = isd_xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++].segs = isd_strv_copy(*prefix);
		return;
	}
	if (!json_object_is_type(o, json_type_object))
		return;
	if (!strcmp(pat[i], "*")) {
		json_object_object_foreach(o, k, v) {
			isd_strv_push(prefix, isd_xstrdup(k));
			collect_paths(v, pat, i + 1, prefix, out, n);
			free((*prefix)[isd_strv_len(*prefix) - 1]);
			(*prefix)[isd_strv_len(*prefix) - 1] = NULL;
		}
		return;
	}
	{
		json_object *v;
		if (!json_object_object_get_ex(o, pat[i], &v))
			return;
		isd_strv_push(prefix, isd_xstrdup(pat[i]));
		collect_paths(v, pat, i + 1, prefix, out, n);
		free((*prefix)[isd_strv_len(*prefix) - 1]);
		(*prefix)[isd_strv_len(*prefix) - 1] = NULL;
	}
}

static char **split_key(const char *key)
{
	_cleanup_free_ char *copy = isd_xstrdup(key);
	char **v = NULL, *save = NULL;

	for (char *s = strtok_r(copy, ".", &save); s; s = strtok_r(NULL, ".", &save))
		isd_strv_push(&v, isd_xstrdup(s));
	return v;
}

static json_object *get_path(json_object *o, char **segs)
{
	for (size_t i = 0; segs[i]; i++)
		if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, segs[i], &o))
			return NULL;
	return o;
}

/* Set (creating objects on the way) or, with v NULL, delete. */
static void set_path(json_object *o, char **segs, json_object *v)
{
	size_t n = isd_strv_len(segs);

	for (size_t i = 0; i + 1 < n; i++) {
		json_object *next;
		if (!json_object_object_get_ex(o, segs[i], &next) || !json_object_is_type(next, json_type_object)) {
			if (!v)
				return;
			next = json_object_new_object();
			json_object_object_add(o, segs[i], next);
		}
		o = next;
	}
	if (v)
		json_object_object_add(o, segs[n - 1], v);
	else
		json_object_object_del(o, segs[n - 1]);
}

static char *display_key(char **segs)
{
	char *s = isd_xstrdup("");

	for (size_t i = 0; segs[i]; i++) {
		bool plain = segs[i][0] && strspn(segs[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(segs[i]);
		json_object *js = json_object_new_string(segs[i]);
		char *next = plain ? isd_xasprintf("%s%s%s", s, i ? "." : "", segs[i])
				   : isd_xasprintf("%s[%s]", s, json_object_to_json_string_ext(js, JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(js);
		free(s);
		s = next;
	}
	return s;
}

static char *compact(json_object *v)
{
	return v ? isd_xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)) : NULL;
}

static void free_paths(struct key_path *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		isd_strv_free(p[i].segs);
	free(p);
}

/* The guarded keys that new adds or changes against old (a deletion takes
 * code away: it merges). */
static void changed_keys(json_object *oldo, json_object *newo, char *const *patterns, struct key_path **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	for (size_t k = 0; patterns && patterns[k]; k++) {
		_cleanup_strv_ char **pat = split_key(patterns[k]);
		char **prefix = NULL;
		struct key_path *found = NULL;
		size_t nf = 0;

		if (!pat)
			continue;
		collect_paths(newo, pat, 0, &prefix, &found, &nf);
		isd_strv_free(prefix);
		for (size_t i = 0; i < nf; i++) {
			json_object *ov = get_path(oldo, found[i].segs), *nv = get_path(newo, found[i].segs);
			if (ov && json_object_equal(ov, nv)) {
				isd_strv_free(found[i].segs);
				continue;
			}
			*out = isd_xrealloc(*out, (*n + 1) * sizeof(**out));
			(*out)[(*n)++] = found[i];
		}
		free(found);
	}
}

static char *serialize(json_object *o)
{
	return isd_xasprintf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

static int classify_keys(const struct isd_agent_keys *keys, const char *home_rel, int host_dfd, const char *host_name,
			 int new_dfd, const char *new_name, struct isd_guard_result *out)
{
	_cleanup_free_ char *old_text = NULL, *new_text = NULL;
	json_object *oldo = NULL, *newo = NULL;
	struct key_path *paths = NULL;
	size_t n = 0;
	int r;

	if (has_suffix(home_rel, ".toml") || has_suffix(home_rel, ".yml") || has_suffix(home_rel, ".yaml")) {
		out->hold = ISD_HOLD_WHOLE;
		out->why = isd_xstrdup("configuration with code-bearing keys, and isd reads only JSON files key by key");
		return 0;
	}
	r = read_small(new_dfd, new_name, &new_text);
	if (r == 0) {
		r = read_small(host_dfd, host_name, &old_text);
		if (r == -ENOENT)
			r = 0;
	}
	if (r < 0) {
		out->hold = ISD_HOLD_WHOLE;
		out->why = isd_xasprintf("configuration with code-bearing keys that isd cannot read (%s)", strerror(-r));
		return 0;
	}
	newo = parse_object(new_text);
	oldo = parse_object(old_text);
	if (!newo || !oldo) {
		out->hold = ISD_HOLD_WHOLE;
		out->why = isd_xasprintf("configuration with code-bearing keys, and the %s file is not a JSON object "
					 "isd can read, so isd cannot tell which keys changed",
					 newo ? "host's" : "new");
		goto done;
	}
	changed_keys(oldo, newo, keys->keys, &paths, &n);
	if (!n)
		goto done;
	out->hold = ISD_HOLD_KEYS;
	out->keys = isd_xcalloc(n, sizeof(*out->keys));
	out->n_keys = n;
	for (size_t i = 0; i < n; i++) {
		json_object *ov = get_path(oldo, paths[i].segs);
		out->keys[i].key = display_key(paths[i].segs);
		out->keys[i].old_value = compact(ov);
		out->keys[i].new_value = compact(get_path(newo, paths[i].segs));
	}
	/* The host gets the new file with these keys as they were there. */
	for (size_t i = 0; i < n; i++) {
		json_object *ov = get_path(oldo, paths[i].segs), *copy = NULL;
		if (ov)
			json_object_deep_copy(ov, &copy, NULL);
		set_path(newo, paths[i].segs, copy);
	}
	out->merged = serialize(newo);
done:
	free_paths(paths, n);
	json_object_put(oldo);
	json_object_put(newo);
	return 0;
}

int isd_guard_take_keys(const char *host_text, const char *new_text, char *const *patterns, char **out)
{
	json_object *hosto = parse_object(host_text), *newo = parse_object(new_text);
	struct key_path *paths = NULL;
	size_t n = 0;
	int r = 0;

	*out = NULL;
	if (!hosto || !newo) {
		r = isd_error(-EINVAL, "%s is not a JSON object isd can read", hosto ? "the held file" : "the host's file");
		goto done;
	}
	changed_keys(hosto, newo, patterns, &paths, &n);
	for (size_t i = 0; i < n; i++) {
		json_object *copy = NULL;
		json_object_deep_copy(get_path(newo, paths[i].segs), &copy, NULL);
		set_path(hosto, paths[i].segs, copy);
	}
	*out = serialize(hosto);
done:
	free_paths(paths, n);
	json_object_put(hosto);
	json_object_put(newo);
	return r;
}

/* What runs as a program: an exec bit, an ELF or "#!" header. */
static const char *generic_code(int dfd, const char *name, mode_t mode, mode_t old_mode)
{
	_cleanup_close_ int fd = -1;
	char head[4] = {0};

	(void)old_mode;
	if (mode & 0111)
		return "a file with an exec bit";
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || read(fd, head, sizeof(head)) < 2)
		return NULL;
	if (!memcmp(head, "\177ELF", 4))
		return "an ELF binary";
	if (!memcmp(head, "#!", 2))
		return "a script with a \"#!\" line";
	return NULL;
}

int isd_guard_classify(const struct isd_agent *a, const char *home_rel, int host_dfd, const char *host_name,
		       int new_dfd, const char *new_name, mode_t old_mode, mode_t new_mode,
		       struct isd_guard_result *out)
{
	const struct isd_agent_keys *keys;
	const char *why;

	memset(out, 0, sizeof(*out));
	if (!new_mode)
		return 0; /* a deletion takes code away */
	if (isd_agent_transient(a, home_rel) && !S_ISDIR(new_mode))
		return out->hold = ISD_HOLD_TRANSIENT, 0;
	if (isd_agent_guarded(a, home_rel)) {
		out->hold = ISD_HOLD_WHOLE;
		out->why = isd_xstrdup(S_ISDIR(new_mode) ? "a directory of code the agent runs (agents.conf guard)"
							 : "code the agent runs (agents.conf guard)");
		return 0;
	}
	if (S_ISDIR(new_mode))
		return 0;
	if (S_ISLNK(new_mode)) {
		out->hold = ISD_HOLD_WHOLE;
		out->why = isd_xstrdup("a symlink: it could make the agent read code from anywhere");
		return 0;
	}
	if (!S_ISREG(new_mode)) {
		out->hold = ISD_HOLD_WHOLE;
		out->why = isd_xstrdup("neither a file, a directory nor a symlink");
		return 0;
	}
	why = generic_code(new_dfd, new_name, new_mode, old_mode);
	if (why) {
		out->hold = ISD_HOLD_WHOLE;
		out->why = isd_xstrdup(why);
		return 0;
	}
	keys = isd_agent_keys_for(a, home_rel);
	if (keys)
		return classify_keys(keys, home_rel, host_dfd, host_name, new_dfd, new_name, out);
	return 0;
}
