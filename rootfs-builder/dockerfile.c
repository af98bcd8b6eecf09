/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Dockerfile subset isd build understands, parsed the way Docker does:
 * parser directives, comments, line continuations, instruction keywords in
 * any case, flags, exec (JSON) and shell forms.  Everything outside the
 * subset is refused with its line number, because silently ignoring an
 * instruction would build an image that is not what the file says.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"

#include <ctype.h>
#include <json-c/json.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	enum isd_df_op op;
} supported[] = {
	{"FROM", ISD_DF_FROM},       {"ARG", ISD_DF_ARG},     {"ENV", ISD_DF_ENV},
	{"RUN", ISD_DF_RUN},         {"WORKDIR", ISD_DF_WORKDIR}, {"USER", ISD_DF_USER},
	{"COPY", ISD_DF_COPY},       {"ADD", ISD_DF_ADD},     {"LABEL", ISD_DF_LABEL},
	{"CMD", ISD_DF_CMD},         {"ENTRYPOINT", ISD_DF_ENTRYPOINT},
};

/* Known to Docker, deliberately not supported: each with the reason. */
static const struct {
	const char *name;
	const char *why;
} refused[] = {
	{"ONBUILD", "triggers for later builds are not supported"},
	{"HEALTHCHECK", "isd runs no health checks"},
	{"SHELL", "RUN's shell form always uses /bin/sh -c"},
	{"VOLUME", "isd images have no volumes; use isd exec -v"},
	{"EXPOSE", "isd sandboxes publish no ports"},
	{"STOPSIGNAL", "not supported"},
	{"MAINTAINER", "deprecated by Docker; use LABEL maintainer=..."},
};

const char *isd_df_op_name(enum isd_df_op op)
{
	for (size_t i = 0; i < sizeof(supported) / sizeof(supported[0]); i++)
		if (supported[i].op == op)
			return supported[i].name;
	return "?";
}

void isd_dockerfile_free(struct isd_dockerfile *df)
{
	for (size_t i = 0; i < df->n; i++) {
		isd_strv_free(df->ins[i].flags);
		free(df->ins[i].text);
		isd_strv_free(df->ins[i].json);
	}
	free(df->ins);
	df->ins = NULL;
	df->n = 0;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static char *trim(char *s)
{
	size_t n;

	while (blank(*s) || *s == '\n')
		s++;
	n = strlen(s);
	while (n > 0 && (blank(s[n - 1]) || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

/* "[ "a", "b" ]" -> vector, or NULL when the text is not a JSON array of
 * strings (Docker then takes it as shell form). */
static char **parse_json_array(const char *text)
{
	json_object *arr;
	char **v = NULL;
	size_t n;

	if (text[0] != '[')
		return NULL;
	arr = json_tokener_parse(text);
	if (!arr || !json_object_is_type(arr, json_type_array)) {
		json_object_put(arr);
		return NULL;
	}
	n = json_object_array_length(arr);
	v = isd_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(e, json_type_string)) {
			isd_strv_free(v);
			json_object_put(arr);
			return NULL;
		}
		v[i] = isd_xstrdup(json_object_get_string(e));
	}
	json_object_put(arr);
	return v;
}

/* BuildKit reads "<<WORD", "<<-WORD" and quoted forms as heredocs; bash's
 * "<<<" here-string is not one. */
static bool has_heredoc(const char *text)
{
	for (const char *p = strstr(text, "<<"); p; p = strstr(p + 2, "<<")) {
		const char *q = p + 2;
		if (p > text && p[-1] == '<')
			continue;
		if (*q == '<')
			continue;
		if (*q == '-')
			q++;
		if (*q == '"' || *q == '\'' || isalpha((unsigned char)*q) || *q == '_')
			return true;
	}
	return false;
}

static bool flag_allowed(enum isd_df_op op, const char *flag)
{
	size_t len = strcspn(flag, "=");

	if (op == ISD_DF_COPY || op == ISD_DF_ADD) {
		if ((len == 7 && !strncmp(flag, "--chown", 7)) || (len == 7 && !strncmp(flag, "--chmod", 7)))
			return flag[len] == '=';
		if (op == ISD_DF_ADD && len == 10 && !strncmp(flag, "--checksum", 10))
			return flag[len] == '=';
	}
	return false;
}

/* Splits leading "--flag[=value]" words off text. */
static int take_flags(struct isd_df_instruction *in, const char *name, unsigned line, char **text)
{
	char *p = *text;

	while (p[0] == '-' && p[1] == '-') {
		size_t len = strcspn(p, " \t");
		char *flag = strndup(p, len);

		if (!flag)
			return -ENOMEM;
		if (!flag_allowed(in->op, flag)) {
			int r;
			if (!strncmp(flag, "--from", 6))
				r = isd_error(0, "%s:%u: COPY --from (multi-stage builds) is not supported by isd build", name, line);
			else if (in->op == ISD_DF_FROM)
				r = isd_error(0, "%s:%u: FROM %.*s is not supported by isd build (the platform is the running machine's)",
					      name, line, (int)strcspn(flag, "="), flag);
			else if (!strncmp(flag, "--mount", 7))
				r = isd_error(0, "%s:%u: RUN --mount is not supported by isd build", name, line);
			else
				r = isd_error(0, "%s:%u: %s does not support the flag %.*s in isd build", name, line,
					      isd_df_op_name(in->op), (int)strcspn(flag, "="), flag);
			free(flag);
			return r;
		}
		isd_strv_push(&in->flags, flag);
		p += len;
		while (blank(*p))
			p++;
	}
	*text = p;
	return 0;
}

static int add_instruction(struct isd_dockerfile *df, const char *name, unsigned line, char *logical)
{
	char *s = trim(logical), *rest;
	size_t kwlen = strcspn(s, " \t");
	struct isd_df_instruction in = {.line = line};
	bool found = false;
	int r;

	if (!*s)
		return 0;
	rest = s + kwlen;
	if (*rest)
		*rest++ = '\0';
	rest = trim(rest);
	for (size_t i = 0; i < sizeof(supported) / sizeof(supported[0]); i++) {
		if (!strcasecmp(s, supported[i].name)) {
			in.op = supported[i].op;
			found = true;
		}
	}
	if (!found) {
		for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
			if (!strcasecmp(s, refused[i].name))
				return isd_error(0, "%s:%u: %s is not supported by isd build (%s)", name, line,
						 refused[i].name, refused[i].why);
		return isd_error(0, "%s:%u: unknown instruction '%s'", name, line, s);
	}
	if (in.op == ISD_DF_RUN || in.op == ISD_DF_COPY || in.op == ISD_DF_ADD || in.op == ISD_DF_FROM) {
		r = take_flags(&in, name, line, &rest);
		if (r < 0) {
			isd_strv_free(in.flags);
			return r;
		}
	}
	if ((in.op == ISD_DF_RUN || in.op == ISD_DF_COPY || in.op == ISD_DF_ADD) && has_heredoc(rest)) {
		isd_strv_free(in.flags);
		return isd_error(0, "%s:%u: heredocs (<<WORD) are not supported by isd build; use a script from the build context",
				 name, line);
	}
	if (!*rest) {
		isd_strv_free(in.flags);
		return isd_error(0, "%s:%u: %s needs arguments", name, line, isd_df_op_name(in.op));
	}
	if (in.op == ISD_DF_RUN || in.op == ISD_DF_CMD || in.op == ISD_DF_ENTRYPOINT || in.op == ISD_DF_COPY ||
	    in.op == ISD_DF_ADD)
		in.json = parse_json_array(rest);
	if (in.json && !in.json[0] && in.op != ISD_DF_CMD && in.op != ISD_DF_ENTRYPOINT) {
		isd_strv_free(in.flags);
		isd_strv_free(in.json);
		return isd_error(0, "%s:%u: %s with an empty list", name, line, isd_df_op_name(in.op));
	}
	in.text = isd_xstrdup(rest);
	df->ins = isd_xrealloc(df->ins, (df->n + 1) * sizeof(*df->ins));
	df->ins[df->n++] = in;
	return 0;
}

/* "# escape=`" and "# syntax=..." before anything else; returns the escape
 * character. */
static char read_directives(const char *text)
{
	char esc = '\\';

	for (const char *p = text; *p;) {
		const char *end = strchrnul(p, '\n');
		const char *q = p;
		char key[16];
		size_t k = 0;

		while (q < end && blank(*q))
			q++;
		if (q == end || *q != '#')
			break;
		q++;
		while (q < end && blank(*q))
			q++;
		while (q < end && k + 1 < sizeof(key) && (isalpha((unsigned char)*q)))
			key[k++] = (char)tolower((unsigned char)*q++);
		key[k] = '\0';
		while (q < end && blank(*q))
			q++;
		if (q == end || *q != '=')
			break;
		q++;
		while (q < end && blank(*q))
			q++;
		if (!strcmp(key, "escape") && (*q == '`' || *q == '\\'))
			esc = *q;
		p = *end ? end + 1 : end;
	}
	return esc;
}

int isd_dockerfile_parse(const char *text, const char *name, struct isd_dockerfile *df)
{
	char esc = read_directives(text);
	_cleanup_free_ char *logical = NULL;
	size_t len = 0, cap = 0;
	unsigned lineno = 0, start = 0;
	bool from_seen = false;
	int r = 0;

	df->ins = NULL;
	df->n = 0;
	for (const char *p = text; *p && r == 0;) {
		const char *end = strchrnul(p, '\n');
		const char *next = *end ? end + 1 : end;
		const char *q = p;
		size_t n = (size_t)(end - p);
		bool cont = false;

		lineno++;
		while (q < end && blank(*q))
			q++;
		/* Comment and empty lines go away, also inside a continuation. */
		if (q == end || *q == '#') {
			p = next;
			continue;
		}
		while (n > 0 && blank(p[n - 1]))
			n--;
		if (n > 0 && p[n - 1] == esc) {
			cont = true;
			n--;
		}
		if (len == 0)
			start = lineno;
		isd_append(&logical, &len, &cap, p, n);
		p = next;
		if (cont)
			continue;
		r = add_instruction(df, name, start, logical);
		len = 0;
	}
	if (r == 0 && len)
		r = add_instruction(df, name, start, logical);
	if (r < 0) {
		isd_dockerfile_free(df);
		return r;
	}
	for (size_t i = 0; i < df->n; i++) {
		const struct isd_df_instruction *in = &df->ins[i];

		if (in->op == ISD_DF_FROM) {
			if (from_seen) {
				r = isd_error(0, "%s:%u: a second FROM: multi-stage builds are not supported by isd build",
					      name, in->line);
				break;
			}
			from_seen = true;
		} else if (!from_seen && in->op != ISD_DF_ARG) {
			r = isd_error(0, "%s:%u: %s before FROM (only ARG may come first)", name, in->line,
				      isd_df_op_name(in->op));
			break;
		}
	}
	if (r == 0 && !from_seen)
		r = isd_error(0, "%s: no FROM instruction", name);
	if (r < 0)
		isd_dockerfile_free(df);
	return r;
}
