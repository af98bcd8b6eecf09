/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Evaluates a parsed Dockerfile against the build args and the base image's
 * environment, with Docker's scoping: ARGs before FROM are only visible to
 * FROM (and to a later "ARG NAME" that redeclares them), ENV wins over ARG
 * in expansion, and all expansions of one ENV or LABEL see the values from
 * before that instruction.  Nothing is executed, so this is what the build
 * key is computed from and what the unit tests check.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"
#include "internal.h"

#include <string.h>

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct scope {
	char **env;  /* ENV, starting from the base image's */
	char **args; /* declared ARGs that have a value */
};

static const char *scope_lookup(void *ctx, const char *name)
{
	struct scope *s = ctx;
	const char *v = isd_df_strv_lookup(s->env, name);

	return v ? v : isd_df_strv_lookup(s->args, name);
}

static const char *build_arg(char *const *build_args, const char *name, bool *used, size_t n_used)
{
	size_t len = strlen(name);
	const char *found = NULL;

	for (size_t i = 0; build_args && build_args[i]; i++) {
		if (!strncmp(build_args[i], name, len) && build_args[i][len] == '=') {
			found = build_args[i] + len + 1;
			if (i < n_used)
				used[i] = true;
		}
	}
	return found;
}

/* ARG NAME[=DEFAULT] ... into s->args; meta are the pre-FROM values. */
static int eval_arg(const struct isd_df_instruction *in, struct scope *s, char *const *meta,
		    char *const *build_args, bool *used, size_t n_used)
{
	int r;

	/* Names are literal; defaults expand, so split first, expand after. */
	_cleanup_strv_ char **words = isd_df_split(in->text);

	for (size_t i = 0; words[i]; i++) {
		_cleanup_free_ char *name = NULL, *def = NULL;
		char *eq = strchr(words[i], '=');
		const char *given, *value = NULL;

		name = eq ? strndup(words[i], (size_t)(eq - words[i])) : isd_xstrdup(words[i]);
		if (!name[0])
			return isd_error(0, "line %u: ARG without a name", in->line);
		if (eq) {
			r = isd_df_expand_word(eq + 1, scope_lookup, s, &def);
			if (r < 0)
				return isd_error_prefix(r, "line %u: ARG %s: ", in->line, name);
		}
		given = build_arg(build_args, name, used, n_used);
		if (given)
			value = given;
		else if (def)
			value = def;
		else
			value = isd_df_strv_lookup((void *)meta, name);
		if (value)
			isd_df_strv_set(&s->args, name, value);
	}
	return 0;
}

/* NAME=VALUE pairs (or the legacy "NAME VALUE") of ENV and LABEL. */
static int eval_pairs(const struct isd_df_instruction *in, struct scope *s, char ***into)
{
	_cleanup_strv_ char **words = NULL;
	size_t first = strcspn(in->text, " \t");
	int r;

	if (!memchr(in->text, '=', first)) {
		_cleanup_free_ char *name = strndup(in->text, first), *value = NULL;
		const char *rest = in->text + first;

		while (*rest == ' ' || *rest == '\t')
			rest++;
		if (!*rest)
			return isd_error(0, "line %u: %s %s needs a value (NAME=VALUE)", in->line,
					 isd_df_op_name(in->op), name);
		r = isd_df_expand_word(rest, scope_lookup, s, &value);
		if (r < 0)
			return isd_error_prefix(r, "line %u: ", in->line);
		isd_df_strv_set(into, name, value);
		return 0;
	}
	r = isd_df_expand_words(in->text, scope_lookup, s, &words);
	if (r < 0)
		return isd_error_prefix(r, "line %u: ", in->line);
	for (size_t i = 0; words[i]; i++) {
		char *eq = strchr(words[i], '=');
		if (!eq || eq == words[i])
			return isd_error(0, "line %u: %s: '%s' is not NAME=VALUE", in->line,
					 isd_df_op_name(in->op), words[i]);
		*eq = '\0';
	}
	for (size_t i = 0; words[i]; i++)
		isd_df_strv_set(into, words[i], words[i] + strlen(words[i]) + 1);
	return 0;
}

/* Lexical join and clean of a WORKDIR inside the image. */
static char *join_workdir(const char *cur, const char *path)
{
	_cleanup_free_ char *joined = path[0] == '/' ? isd_xstrdup(path) : isd_xasprintf("%s/%s", cur, path);
	char *out = isd_xmalloc(strlen(joined) + 2);
	size_t len = 0;

	for (char *save = NULL, *c = strtok_r(joined, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
			continue;
		}
		out[len++] = '/';
		memcpy(out + len, c, strlen(c));
		len += strlen(c);
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	return out;
}

static char **shell_form(const char *text)
{
	char **v = isd_xcalloc(4, sizeof(char *));

	v[0] = isd_xstrdup("/bin/sh");
	v[1] = isd_xstrdup("-c");
	v[2] = isd_xstrdup(text);
	return v;
}

static char *display_of(const struct isd_df_instruction *in)
{
	_cleanup_free_ char *flags = isd_xstrdup("");

	for (size_t i = 0; in->flags && in->flags[i]; i++) {
		char *n = isd_xasprintf("%s%s ", flags, in->flags[i]);
		free(flags);
		flags = n;
	}
	return isd_xasprintf("%s %s%s", isd_df_op_name(in->op), flags, in->text);
}

static const char *flag_value(const struct isd_df_instruction *in, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; in->flags && in->flags[i]; i++)
		if (!strncmp(in->flags[i], name, len) && in->flags[i][len] == '=')
			return in->flags[i] + len + 1;
	return NULL;
}

static bool is_url(const char *s)
{
	return !strncmp(s, "https://", 8) || !strncmp(s, "http://", 7);
}

/* ADD of a URL: only with --checksum=sha256:..., which pins the content
 * (and makes the build key and the cache independent of the network), and
 * one URL per ADD, as the checksum names one file. */
static int check_urls(const struct isd_df_instruction *in, const struct isd_build_step *st)
{
	size_t n = isd_strv_len(st->args), urls = 0;
	const char *url = NULL;

	for (size_t i = 0; i + 1 < n; i++)
		if (is_url(st->args[i])) {
			urls++;
			url = st->args[i];
		}
	if (is_url(st->args[n - 1]))
		return isd_error(0, "line %u: %s: the destination cannot be a URL", in->line, isd_df_op_name(in->op));
	if (!urls) {
		if (st->checksum)
			return isd_error(0, "line %u: --checksum only applies to ADD of a URL", in->line);
		return 0;
	}
	if (in->op == ISD_DF_COPY)
		return isd_error(0, "line %u: COPY %s: COPY takes files of the build context; use ADD --checksum=sha256:... for a URL",
				 in->line, url);
	if (!st->checksum) {
		int r = isd_error(0, "line %u: ADD %s: a download needs --checksum=sha256:<hex digest>", in->line, url);
		isd_error_hint("fix: download it once, run sha256sum on it, and write ADD --checksum=sha256:<digest> %s DEST",
			       url);
		return r;
	}
	if (!isd_digest_valid(st->checksum))
		return isd_error(0, "line %u: --checksum=%s: expected sha256:<64 lower-case hex digits>", in->line,
				 st->checksum);
	if (urls > 1 || n > 2)
		return isd_error(0, "line %u: ADD --checksum takes exactly one URL and a destination", in->line);
	return 0;
}

static int eval_copy(const struct isd_df_instruction *in, struct scope *s, struct isd_build_step *st)
{
	static const char *const names[] = {"--chown", "--chmod", "--checksum"};
	char **targets[] = {&st->chown, &st->chmod, &st->checksum};
	int r;

	if (in->json) {
		st->args = isd_xcalloc(isd_strv_len(in->json) + 1, sizeof(char *));
		for (size_t i = 0; in->json[i]; i++) {
			r = isd_df_expand_word(in->json[i], scope_lookup, s, &st->args[i]);
			if (r < 0)
				return isd_error_prefix(r, "line %u: ", in->line);
		}
	} else {
		r = isd_df_expand_words(in->text, scope_lookup, s, &st->args);
		if (r < 0)
			return isd_error_prefix(r, "line %u: ", in->line);
	}
	if (isd_strv_len(st->args) < 2)
		return isd_error(0, "line %u: %s needs at least one source and a destination", in->line,
				 isd_df_op_name(in->op));
	for (size_t i = 0; i < 3; i++) {
		const char *v = flag_value(in, names[i]);
		if (v) {
			r = isd_df_expand_word(v, scope_lookup, s, targets[i]);
			if (r < 0)
				return isd_error_prefix(r, "line %u: ", in->line);
		}
	}
	if (st->chmod) {
		uint32_t mode;
		if (isd_parse_octal_mode(st->chmod, &mode) < 0)
			return isd_error(0, "line %u: --chmod=%s: expected an octal mode", in->line, st->chmod);
	}
	return check_urls(in, st);
}

static char **run_env(const struct scope *s)
{
	char **env = isd_strv_copy(s->args);

	for (size_t i = 0; s->env && s->env[i]; i++) {
		_cleanup_free_ char *name = strndup(s->env[i], strcspn(s->env[i], "="));
		isd_df_strv_set(&env, name, s->env[i] + strlen(name) + 1);
	}
	if (!env)
		env = isd_xcalloc(1, sizeof(char *));
	return env;
}

int isd_build_plan_make(const struct isd_dockerfile *df, char *const *build_args, struct isd_build_plan *plan)
{
	size_t n_used = isd_strv_len(build_args);
	_cleanup_free_ bool *used = isd_xcalloc(n_used + 1, sizeof(bool));
	_cleanup_strv_ char **meta = NULL;
	struct scope s = {0};
	bool entrypoint_set = false, cmd_set = false;
	int r = 0;

	/* plan->env may hold the base image's environment on entry. */
	s.env = plan->env;
	plan->env = NULL;
	if (!plan->workdir || plan->workdir[0] != '/') {
		free(plan->workdir);
		plan->workdir = isd_xstrdup("/");
	}
	if (!isd_df_strv_lookup(s.env, "PATH"))
		isd_df_strv_set(&s.env, "PATH", DEFAULT_PATH);

	for (size_t i = 0; i < df->n && r == 0; i++) {
		const struct isd_df_instruction *in = &df->ins[i];
		struct isd_build_step *st;
		_cleanup_free_ char *word = NULL;

		if (in->op == ISD_DF_FROM) {
			struct scope meta_scope = {.args = meta};
			r = isd_df_expand_word(in->text, scope_lookup, &meta_scope, &word);
			if (r < 0) {
				isd_error_prefix(r, "line %u: ", in->line);
				break;
			}
			plan->base = isd_steal_ptr(word);
			plan->from_line = in->line;
			continue;
		}
		if (!plan->base) { /* ARG before FROM */
			struct scope meta_scope = {.args = meta};
			r = eval_arg(in, &meta_scope, NULL, build_args, used, n_used);
			meta = meta_scope.args;
			continue;
		}
		plan->steps = isd_xrealloc(plan->steps, (plan->n_steps + 1) * sizeof(*plan->steps));
		st = &plan->steps[plan->n_steps++];
		memset(st, 0, sizeof(*st));
		st->op = in->op;
		st->line = in->line;
		st->display = display_of(in);
		switch (in->op) {
		case ISD_DF_ARG:
			r = eval_arg(in, &s, meta, build_args, used, n_used);
			break;
		case ISD_DF_ENV:
			r = eval_pairs(in, &s, &s.env);
			break;
		case ISD_DF_LABEL:
			r = eval_pairs(in, &s, &plan->labels);
			break;
		case ISD_DF_WORKDIR:
			r = isd_df_expand_word(in->text, scope_lookup, &s, &word);
			if (r < 0)
				break;
			{
				char *w = join_workdir(plan->workdir, word);
				free(plan->workdir);
				plan->workdir = w;
				st->args = isd_xcalloc(2, sizeof(char *));
				st->args[0] = isd_xstrdup(w);
			}
			break;
		case ISD_DF_USER:
			r = isd_df_expand_word(in->text, scope_lookup, &s, &word);
			if (r < 0)
				break;
			if (!word[0]) {
				r = isd_error(0, "line %u: USER with an empty name", in->line);
				break;
			}
			free(plan->user);
			plan->user = isd_xstrdup(word);
			st->args = isd_xcalloc(2, sizeof(char *));
			st->args[0] = isd_steal_ptr(word);
			break;
		case ISD_DF_COPY:
		case ISD_DF_ADD:
			r = eval_copy(in, &s, st);
			break;
		case ISD_DF_RUN:
			st->args = in->json ? isd_strv_copy(in->json) : shell_form(in->text);
			st->env = run_env(&s);
			break;
		case ISD_DF_CMD:
			isd_strv_free(plan->cmd);
			plan->cmd = in->json ? isd_strv_copy(in->json) : shell_form(in->text);
			if (!plan->cmd)
				plan->cmd = isd_xcalloc(1, sizeof(char *));
			cmd_set = true;
			break;
		case ISD_DF_ENTRYPOINT:
			isd_strv_free(plan->entrypoint);
			plan->entrypoint = in->json ? isd_strv_copy(in->json) : shell_form(in->text);
			if (!plan->entrypoint)
				plan->entrypoint = isd_xcalloc(1, sizeof(char *));
			entrypoint_set = true;
			break;
		case ISD_DF_FROM:
			break;
		}
		if (r < 0) {
			if (strncmp(isd_error_message(), "line ", 5))
				isd_error_prefix(r, "line %u: ", in->line);
			break;
		}
		st->workdir = isd_xstrdup(plan->workdir);
		st->user = isd_xstrdup(plan->user ? plan->user : "");
	}
	/* Docker: an ENTRYPOINT resets a CMD that this file did not set. */
	if (r == 0 && entrypoint_set && !cmd_set)
		plan->cmd = isd_xcalloc(1, sizeof(char *));
	plan->env = s.env;
	s.env = NULL;
	isd_strv_free(s.args);
	for (size_t i = 0; r == 0 && i < n_used; i++) {
		if (!used[i]) {
			_cleanup_free_ char *name = strndup(build_args[i], strcspn(build_args[i], "="));
			isd_strv_push(&plan->unused_args, isd_steal_ptr(name));
		}
	}
	if (r < 0) {
		isd_build_plan_free(plan);
		return r;
	}
	return 0;
}

void isd_build_plan_free(struct isd_build_plan *plan)
{
	free(plan->base);
	for (size_t i = 0; i < plan->n_steps; i++) {
		struct isd_build_step *st = &plan->steps[i];
		free(st->display);
		isd_strv_free(st->args);
		isd_strv_free(st->env);
		free(st->workdir);
		free(st->user);
		free(st->chown);
		free(st->chmod);
		free(st->checksum);
	}
	free(plan->steps);
	isd_strv_free(plan->env);
	free(plan->workdir);
	free(plan->user);
	isd_strv_free(plan->labels);
	isd_strv_free(plan->cmd);
	isd_strv_free(plan->entrypoint);
	isd_strv_free(plan->unused_args);
	memset(plan, 0, sizeof(*plan));
}
