/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * git's config syntax, read the way git's config.c reads it (see
 * src/git-config.h): an agent gains nothing from a spelling that
 * isd reads one way and git another, since isd refuses what it cannot read.
 */
#define _GNU_SOURCE
#include "git-config.h"
#include "isd/path-util.h"
#include "isd/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct source {
	const unsigned char *p, *end;
	bool eof, nul;
};

struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, int c)
{
	if (b->len + 2 > b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->s = isd_xrealloc(b->s, b->cap);
	}
	b->s[b->len++] = (char)c;
	b->s[b->len] = '\0';
}

static void sb_setlen(struct sbuf *b, size_t n)
{
	b->len = n;
	if (b->s)
		b->s[n] = '\0';
}

/* git's isspace (sane_ctype): no \v, no \f. */
static bool g_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool g_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool keychar(int c)
{
	return g_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static int next_char(struct source *s)
{
	int c;

	if (s->p >= s->end) {
		s->eof = true;
		return '\n';
	}
	c = *s->p++;
	if (c == 0)
		s->nul = true;
	if (c == '\r' && s->p < s->end && *s->p == '\n') {
		s->p++;
		c = '\n';
	}
	return c;
}

static int parse_value(struct source *s, struct sbuf *v)
{
	bool quote = false, comment = false;
	size_t trim = 0;

	sb_setlen(v, 0);
	for (;;) {
		int c = next_char(s);

		if (c == '\n') {
			if (quote)
				return -EINVAL;
			if (trim)
				sb_setlen(v, trim);
			return 0;
		}
		if (comment)
			continue;
		if (g_space(c) && !quote) {
			if (!trim)
				trim = v->len;
			if (v->len)
				sb_add(v, c);
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		trim = 0;
		if (c == '\\') {
			c = next_char(s);
			switch (c) {
			case '\n':
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return -EINVAL;
			}
			sb_add(v, c);
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		sb_add(v, c);
	}
}

static int extended_section(struct source *s, struct sbuf *name, int c)
{
	do {
		if (c == '\n')
			return -EINVAL;
		c = next_char(s);
	} while (g_space(c));
	if (c != '"')
		return -EINVAL;
	sb_add(name, '.');
	for (;;) {
		c = next_char(s);
		if (c == '\n')
			return -EINVAL;
		if (c == '"')
			break;
		if (c == '\\' && (c = next_char(s)) == '\n')
			return -EINVAL;
		sb_add(name, c);
	}
	return next_char(s) == ']' ? 0 : -EINVAL;
}

static int section(struct source *s, struct sbuf *name)
{
	for (;;) {
		int c = next_char(s);

		if (s->eof)
			return -EINVAL;
		if (c == ']')
			return 0;
		if (g_space(c))
			return extended_section(s, name, c);
		if (!keychar(c) && c != '.')
			return -EINVAL;
		sb_add(name, tolower(c));
	}
}

static void push_entry(struct isd_git_config *out, const char *key, const char *value)
{
	out->v = isd_xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
	out->v[out->n].key = isd_xstrdup(key);
	out->v[out->n++].value = value ? isd_xstrdup(value) : NULL;
}

int isd_git_config_parse(const char *text, size_t len, struct isd_git_config *out)
{
	static const unsigned char bom[] = {0xef, 0xbb, 0xbf};
	struct source s = {(const unsigned char *)text, (const unsigned char *)text + len, false, false};
	struct sbuf var = {0}, value = {0};
	size_t base = 0;
	bool comment = false;
	int r = -EINVAL;

	*out = (struct isd_git_config){0};
	if (len >= 3 && !memcmp(text, bom, 3))
		s.p += 3;
	sb_setlen(&var, 0);
	for (;;) {
		int c = next_char(&s);

		if (c == '\n') {
			if (s.eof) {
				r = 0;
				break;
			}
			comment = false;
			continue;
		}
		if (comment || g_space(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[') {
			sb_setlen(&var, 0);
			if (section(&s, &var) < 0 || var.len < 1)
				break;
			sb_add(&var, '.');
			base = var.len;
			continue;
		}
		if (!g_alpha(c))
			break;
		sb_setlen(&var, base);
		sb_add(&var, tolower(c));
		for (;;) {
			c = next_char(&s);
			if (s.eof || !keychar(c))
				break;
			sb_add(&var, tolower(c));
		}
		while (c == ' ' || c == '\t')
			c = next_char(&s);
		if (c != '\n') {
			if (c != '=' || parse_value(&s, &value) < 0)
				break;
			push_entry(out, var.s, value.s ? value.s : "");
		} else {
			push_entry(out, var.s, NULL);
			if (s.eof) {
				r = 0;
				break;
			}
		}
	}
	free(var.s);
	free(value.s);
	/* git stops at a NUL where isd would read on. */
	return s.nul ? -EINVAL : r;
}

void isd_git_config_free(struct isd_git_config *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].key);
		free(c->v[i].value);
	}
	free(c->v);
	*c = (struct isd_git_config){0};
}

const char *isd_git_config_get(const struct isd_git_config *c, const char *key, bool *found)
{
	*found = false;
	for (size_t i = c->n; i-- > 0;)
		if (!strcmp(c->v[i].key, key)) {
			*found = true;
			return c->v[i].value;
		}
	return NULL;
}

static bool is_bool(const char *v)
{
	static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "1", "0", "", NULL};

	if (!v)
		return true;
	for (size_t i = 0; words[i]; i++)
		if (!strcasecmp(v, words[i]))
			return true;
	return false;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

bool isd_git_key_executable(const char *key, const char *value)
{
	/* Every key of these sections names or defines a command, or where
	 * git reads more configuration. */
	static const char *const sections[] = {"alias", "pager", "include", "includeif", "difftool", "mergetool",
					       "browser", "man", "guitool", "credential", NULL};
	/* Names that run what they name, in any section: filter.X.clean,
	 * diff.X.textconv, merge.X.driver, gpg.program, core.editor, ... */
	static const char *const names[] = {"textconv", "driver", "clean", "smudge", "process", "helper", "editor",
					    "pager", "askpass", "hookspath", "fsmonitor", "uploadpack", "receivepack",
					    "vcs", "smtpserver", "external", "packobjectshook", "gitproxy", "difffilter",
					    "templatedir", "worktree", "attributesfile", "browser", "path", NULL};
	_cleanup_free_ char *sec = isd_xstrdup(key);
	char *dot = strchr(sec, '.');
	const char *name = strrchr(key, '.');

	name = name ? name + 1 : key;
	if (dot)
		*dot = '\0';
	for (size_t i = 0; sections[i]; i++)
		if (!strcmp(sec, sections[i]))
			return true;
	if (!strcmp(sec, "lfs") && (!strncmp(key, "lfs.customtransfer.", 19) || !strncmp(key, "lfs.extension.", 14)))
		return true;
	/* The ext:: transport runs a command; "allow" is what enables it. */
	if (!strcmp(sec, "protocol") && !strcmp(name, "allow"))
		return true;
	if ((!strcmp(sec, "remote") || !strcmp(sec, "url")) && value && strstr(value, "ext::"))
		return true;
	if (!strcmp(sec, "submodule") && !strcmp(name, "update"))
		return value && value[0] == '!';
	/* core.fsmonitor=true is git's own daemon; any other value a hook. */
	if (!strcmp(key, "core.fsmonitor"))
		return !is_bool(value);
	if (ends_with(name, "cmd") || ends_with(name, "command") || ends_with(name, "program"))
		return true;
	for (size_t i = 0; names[i]; i++)
		if (!strcmp(name, names[i])) {
			/* "path" runs something only where a tool is defined. */
			if (!strcmp(name, "path"))
				return !strcmp(sec, "difftool") || !strcmp(sec, "mergetool") || !strcmp(sec, "lfs");
			/* core.worktree and core.attributesFile redirect; elsewhere
			 * those names are harmless (extensions.worktreeConfig is
			 * another key). */
			if (!strcmp(name, "worktree") || !strcmp(name, "attributesfile"))
				return !strcmp(sec, "core");
			return true;
		}
	return false;
}

char *isd_git_config_pathname(const char *value, const char *base, const char *dir)
{
	_cleanup_free_ char *abs = NULL, *norm = NULL;
	const char *home = getenv("HOME"), *rest;

	if (!value || !value[0])
		return NULL;
	if (!strncmp(value, "~/", 2))
		abs = home ? isd_xasprintf("%s/%s", home, value + 2) : NULL;
	else
		abs = value[0] == '/' ? isd_xstrdup(value) : isd_xasprintf("%s/%s", base, value);
	if (!abs || isd_resolve_abs_path_lexically(abs, &norm) < 0)
		return NULL;
	rest = isd_path_rest(norm, dir);
	return rest ? isd_xstrdup(rest) : NULL;
}
