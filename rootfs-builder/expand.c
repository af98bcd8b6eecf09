/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Docker's variable expansion and word processing for the instructions that
 * expand (FROM ARG ENV WORKDIR USER COPY ADD LABEL), after moby/buildkit's
 * shell lexer: $V and ${V}, the modifiers :- - :+ + :? ?, single quotes
 * literal, double quotes expanding, backslash escaping.  RUN, CMD and
 * ENTRYPOINT are not expanded here: their shell does it.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"

#include <ctype.h>
#include <string.h>

struct buf {
	char *s;
	size_t len, cap;
};

static void buf_putc(struct buf *b, char c)
{
	if (b->len + 2 > b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->s = isd_xrealloc(b->s, b->cap);
	}
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

static void buf_puts(struct buf *b, const char *s)
{
	while (s && *s)
		buf_putc(b, *s++);
}

static char *buf_take(struct buf *b)
{
	char *s = b->s ? b->s : isd_xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

struct lexer {
	const char *p;
	isd_df_lookup lookup;
	void *ctx;
	const char *text; /* for messages */
};

static int process(struct lexer *lx, char stop, struct buf *out);

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static const char *lookup(struct lexer *lx, const char *name)
{
	return lx->lookup ? lx->lookup(lx->ctx, name) : NULL;
}

/* After "${": NAME[MODIFIER WORD]} */
static int process_braces(struct lexer *lx, struct buf *out)
{
	struct buf name = {0}, word = {0};
	const char *value;
	char mod[3] = {0};
	int r = 0;

	while (name_char(*lx->p))
		buf_putc(&name, *lx->p++);
	if (!name.s) {
		free(name.s);
		return isd_error(0, "'%s': bad substitution (a variable name must follow ${)", lx->text);
	}
	if (*lx->p == '}') {
		lx->p++;
		buf_puts(out, lookup(lx, name.s));
		free(name.s);
		return 0;
	}
	if (*lx->p == ':' && (lx->p[1] == '-' || lx->p[1] == '+' || lx->p[1] == '?')) {
		mod[0] = ':';
		mod[1] = lx->p[1];
		lx->p += 2;
	} else if (*lx->p == '-' || *lx->p == '+' || *lx->p == '?') {
		mod[0] = *lx->p++;
	} else {
		r = isd_error(0, "'%s': unsupported substitution ${%s%c...} (supported: :- - :+ + :? ?)", lx->text,
			      name.s, *lx->p ? *lx->p : ' ');
		free(name.s);
		return r;
	}
	r = process(lx, '}', &word);
	if (r == 0 && *lx->p != '}')
		r = isd_error(0, "'%s': missing '}'", lx->text);
	if (r < 0) {
		free(name.s);
		free(word.s);
		return r;
	}
	lx->p++;
	value = lookup(lx, name.s);
	{
		bool colon = mod[0] == ':';
		char m = colon ? mod[1] : mod[0];
		bool set = value && (!colon || value[0]);

		if (m == '-')
			buf_puts(out, set ? value : word.s);
		else if (m == '+')
			buf_puts(out, set ? word.s : "");
		else if (set)
			buf_puts(out, value);
		else
			r = isd_error(0, "'%s': %s: %s", lx->text, name.s,
				      word.s && word.s[0] ? word.s : "parameter not set");
	}
	free(name.s);
	free(word.s);
	return r;
}

static int process_dollar(struct lexer *lx, struct buf *out)
{
	struct buf name = {0};

	lx->p++; /* '$' */
	if (*lx->p == '{') {
		lx->p++;
		return process_braces(lx, out);
	}
	if (!name_char(*lx->p)) {
		buf_putc(out, '$');
		return 0;
	}
	while (name_char(*lx->p))
		buf_putc(&name, *lx->p++);
	buf_puts(out, lookup(lx, name.s));
	free(name.s);
	return 0;
}

static int process_double_quote(struct lexer *lx, struct buf *out)
{
	lx->p++;
	for (;;) {
		char c = *lx->p;

		if (!c)
			return isd_error(0, "'%s': unterminated double quote", lx->text);
		if (c == '"') {
			lx->p++;
			return 0;
		}
		if (c == '$') {
			int r = process_dollar(lx, out);
			if (r < 0)
				return r;
			continue;
		}
		/* Inside double quotes a backslash escapes only these. */
		if (c == '\\' && (lx->p[1] == '"' || lx->p[1] == '$' || lx->p[1] == '\\')) {
			buf_putc(out, lx->p[1]);
			lx->p += 2;
			continue;
		}
		buf_putc(out, c);
		lx->p++;
	}
}

static int process(struct lexer *lx, char stop, struct buf *out)
{
	int r;

	while (*lx->p && *lx->p != stop) {
		char c = *lx->p;

		if (c == '\'') {
			const char *end = strchr(lx->p + 1, '\'');
			if (!end)
				return isd_error(0, "'%s': unterminated single quote", lx->text);
			for (const char *q = lx->p + 1; q < end; q++)
				buf_putc(out, *q);
			lx->p = end + 1;
		} else if (c == '"') {
			r = process_double_quote(lx, out);
			if (r < 0)
				return r;
		} else if (c == '$') {
			r = process_dollar(lx, out);
			if (r < 0)
				return r;
		} else if (c == '\\') {
			lx->p++;
			if (*lx->p)
				buf_putc(out, *lx->p++);
		} else {
			buf_putc(out, c);
			lx->p++;
		}
	}
	return 0;
}

int isd_df_expand_word(const char *text, isd_df_lookup lookup_fn, void *ctx, char **out)
{
	struct lexer lx = {.p = text, .lookup = lookup_fn, .ctx = ctx, .text = text};
	struct buf b = {0};
	int r = process(&lx, '\0', &b);

	if (r < 0) {
		free(b.s);
		return r;
	}
	*out = buf_take(&b);
	return 0;
}

/* Splits at blanks outside quotes, keeping quotes and escapes for the
 * expansion of each word. */
char **isd_df_split(const char *text)
{
	char **words = NULL;
	struct buf w = {0};
	char quote = 0;
	bool in_word = false;

	for (const char *p = text; *p; p++) {
		char c = *p;

		if (!quote && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
			if (in_word)
				isd_strv_push(&words, buf_take(&w));
			in_word = false;
			continue;
		}
		in_word = true;
		buf_putc(&w, c);
		if (c == '\\' && quote != '\'' && p[1]) {
			buf_putc(&w, *++p);
		} else if (quote && c == quote) {
			quote = 0;
		} else if (!quote && (c == '\'' || c == '"')) {
			quote = c;
		}
	}
	if (in_word)
		isd_strv_push(&words, buf_take(&w));
	if (!words)
		words = isd_xcalloc(1, sizeof(char *));
	return words;
}

int isd_df_expand_words(const char *text, isd_df_lookup lookup_fn, void *ctx, char ***out)
{
	char **raw = isd_df_split(text);
	char **words = isd_xcalloc(isd_strv_len(raw) + 1, sizeof(char *));

	for (size_t i = 0; raw[i]; i++) {
		int r = isd_df_expand_word(raw[i], lookup_fn, ctx, &words[i]);
		if (r < 0) {
			isd_strv_free(raw);
			isd_strv_free(words);
			return r;
		}
	}
	isd_strv_free(raw);
	*out = words;
	return 0;
}

const char *isd_df_strv_lookup(void *ctx, const char *name)
{
	char **v = ctx;
	size_t len = strlen(name);
	const char *found = NULL;

	for (size_t i = 0; v && v[i]; i++)
		if (!strncmp(v[i], name, len) && v[i][len] == '=')
			found = v[i] + len + 1;
	return found;
}

void isd_df_strv_set(char ***strv, const char *name, const char *value)
{
	size_t len = strlen(name);
	char *entry = isd_xasprintf("%s=%s", name, value);

	for (size_t i = 0; *strv && (*strv)[i]; i++) {
		if (!strncmp((*strv)[i], name, len) && (*strv)[i][len] == '=') {
			free((*strv)[i]);
			(*strv)[i] = entry;
			return;
		}
	}
	isd_strv_push(strv, entry);
}
