/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent table, read from agents.conf (format in profiles/agents.conf). */
#define _GNU_SOURCE
#include "isd/agent.h"
#include "isd/profile.h"
#include "isd/util.h"
#include "isd/path-util.h"

#include <ctype.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <string.h>
#include <unistd.h>

static void agent_free(struct isd_agent *a)
{
	free(a->name);
	free(a->origin);
	isd_strv_free(a->commands);
	isd_strv_free(a->packages);
	isd_strv_free(a->state_dirs);
	isd_strv_free(a->state_files);
	isd_strv_free(a->guards);
	isd_strv_free(a->transient);
	isd_strv_free(a->exec_dirs);
	isd_strv_free(a->allow);
	isd_strv_free(a->env);
	for (size_t i = 0; i < a->n_keys; i++) {
		free(a->keys[i].file);
		isd_strv_free(a->keys[i].keys);
	}
	free(a->keys);
	memset(a, 0, sizeof(*a));
}

void isd_agent_table_free(struct isd_agent_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		agent_free(&t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

const struct isd_agent *isd_agent_find(const struct isd_agent_table *t, const char *name)
{
	for (size_t i = 0; t && name && i < t->n; i++)
		if (!strcmp(t->v[i].name, name))
			return &t->v[i];
	return NULL;
}

static bool valid_name(const char *s)
{
	if (!s[0])
		return false;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
			return false;
	return true;
}

/* A path in the home: relative, no "..", no empty or "." components, so
 * that it can never name something outside the home. */
static bool valid_home_path(const char *s)
{
	if (!s[0] || s[0] == '/')
		return false;
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && !strncmp(p, "..", 2)) || (n == 0 && p[n]))
			return false;
		p += n;
		if (*p)
			p++;
	}
	return true;
}

static char **split_words(char *rest)
{
	char **v = NULL;

	for (char *w = strtok(rest, " \t"); w; w = strtok(NULL, " \t"))
		isd_strv_push(&v, isd_xstrdup(w));
	return v;
}

static void append(char ***to, char **words)
{
	for (size_t i = 0; words && words[i]; i++)
		isd_strv_push(to, isd_xstrdup(words[i]));
}

static void store_agent(struct isd_agent_table *t, struct isd_agent *cur, bool replace)
{
	struct isd_agent *old = (struct isd_agent *)isd_agent_find(t, cur->name);

	if (old && replace) {
		agent_free(old);
		*old = *cur;
	} else if (old) {
		agent_free(cur);
	} else {
		t->v = isd_xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
		t->v[t->n++] = *cur;
	}
	memset(cur, 0, sizeof(*cur));
}

int isd_agent_table_parse(struct isd_agent_table *t, const char *text, const char *origin, bool replace)
{
	_cleanup_free_ char *copy = isd_xstrdup(text);
	struct isd_agent cur = {0};
	bool have = false;
	unsigned lineno = 0;
	int r = 0;
	char *next;

	for (char *line = copy; line && r == 0; line = next) {
		_cleanup_strv_ char **words = NULL;
		char *p, *e, *kw;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		for (p = line; isspace((unsigned char)*p); p++)
			;
		for (e = p + strlen(p); e > p && isspace((unsigned char)e[-1]);)
			*--e = '\0';
		if (!*p || *p == '#')
			continue;
		if (*p == '[') {
			if (e[-1] != ']' || e - p < 3) {
				r = isd_error(0, "%s:%u: expected [NAME], got '%s'", origin, lineno, p);
				break;
			}
			e[-1] = '\0';
			if (have)
				store_agent(t, &cur, replace);
			if (!valid_name(p + 1)) {
				r = isd_error(0, "%s:%u: '%s' is not an agent name (letters, digits, '-', '_', '.')", origin,
					      lineno, p + 1);
				break;
			}
			cur.name = isd_xstrdup(p + 1);
			cur.origin = isd_xasprintf("%s:%u", origin, lineno);
			have = true;
			continue;
		}
		if (!have) {
			r = isd_error(0, "%s:%u: '%s' before the first [NAME]", origin, lineno, p);
			break;
		}
		kw = p;
		p += strcspn(p, " \t");
		if (*p)
			*p++ = '\0';
		words = split_words(p);
		if (!words) {
			r = isd_error(0, "%s:%u: %s needs a value", origin, lineno, kw);
			break;
		}
		if (!strcmp(kw, "state") || !strcmp(kw, "guard") || !strcmp(kw, "exec") || !strcmp(kw, "keys")) {
			for (size_t i = 0; words[i] && (i == 0 || strcmp(kw, "keys")); i++) {
				_cleanup_free_ char *w = isd_xstrdup(words[i]);
				size_t n = strlen(w);
				if (n > 1 && w[n - 1] == '/')
					w[n - 1] = '\0';
				if (!valid_home_path(w)) {
					r = isd_error(0, "%s:%u: %s %s: expected a path relative to the home, without '..'",
						      origin, lineno, kw, words[i]);
					break;
				}
			}
			if (r < 0)
				break;
		}
		if (!strcmp(kw, "command"))
			append(&cur.commands, words);
		else if (!strcmp(kw, "package"))
			append(&cur.packages, words);
		else if (!strcmp(kw, "state")) {
			for (size_t i = 0; words[i]; i++) {
				size_t n = strlen(words[i]);
				if (words[i][n - 1] == '/')
					isd_strv_push(&cur.state_dirs, strndup(words[i], n - 1));
				else
					isd_strv_push(&cur.state_files, isd_xstrdup(words[i]));
			}
		} else if (!strcmp(kw, "guard"))
			append(&cur.guards, words);
		else if (!strcmp(kw, "transient"))
			append(&cur.transient, words);
		else if (!strcmp(kw, "exec")) {
			for (size_t i = 0; words[i]; i++) {
				size_t n = strlen(words[i]);
				isd_strv_push(&cur.exec_dirs, strndup(words[i], words[i][n - 1] == '/' ? n - 1 : n));
			}
		} else if (!strcmp(kw, "allow"))
			append(&cur.allow, words);
		else if (!strcmp(kw, "env"))
			append(&cur.env, words);
		else if (!strcmp(kw, "keys")) {
			if (!words[1]) {
				r = isd_error(0, "%s:%u: keys %s: name the keys (keys FILE KEY...)", origin, lineno, words[0]);
				break;
			}
			cur.keys = isd_xrealloc(cur.keys, (cur.n_keys + 1) * sizeof(*cur.keys));
			cur.keys[cur.n_keys].file = isd_xstrdup(words[0]);
			cur.keys[cur.n_keys].keys = isd_strv_copy(words + 1);
			cur.n_keys++;
		} else {
			r = isd_error(0, "%s:%u: unknown keyword '%s' (known: command package state guard keys transient exec allow env)",
				      origin, lineno, kw);
			break;
		}
	}
	if (r == 0 && have)
		store_agent(t, &cur, replace);
	agent_free(&cur);
	return r;
}

int isd_agent_table_load(struct isd_agent_table *t)
{
	_cleanup_strv_ char **dirs = isd_profile_dirs();
	int r = 0;

	/* The user's directory comes first and wins: sections of later
	 * files are only added when new. */
	for (size_t i = 0; dirs[i] && r == 0; i++) {
		_cleanup_free_ char *path = isd_xasprintf("%s/agents.conf", dirs[i]), *text = NULL;

		if (access(path, F_OK) < 0)
			continue;
		r = isd_read_file_at(AT_FDCWD, path, &text, NULL);
		if (r < 0)
			return isd_error(r, "reading the agent table %s", path);
		r = isd_agent_table_parse(t, text, path, false);
	}
	return r;
}

const struct isd_agent_table *isd_agents(void)
{
	static struct isd_agent_table table;
	static int loaded; /* 0 not yet, 1 ok, -1 broken */

	if (!loaded)
		loaded = isd_agent_table_load(&table) < 0 ? -1 : 1;
	if (loaded < 0) {
		isd_agent_table_free(&table);
		loaded = 0; /* the caller reports it; a later call retries */
		return NULL;
	}
	return &table;
}

static const struct isd_agent *by_command(const struct isd_agent_table *t, const char *cmd)
{
	const char *base = strrchr(cmd, '/');

	base = base ? base + 1 : cmd;
	for (size_t i = 0; i < t->n; i++)
		for (size_t k = 0; t->v[i].commands && t->v[i].commands[k]; k++)
			if (!strcmp(base, t->v[i].commands[k]))
				return &t->v[i];
	return NULL;
}

/* "@scope/name@1.2" and "name@latest" without the version. */
static char *package_name(const char *spec)
{
	const char *at = strchr(spec + (spec[0] == '@'), '@');
	return at ? strndup(spec, (size_t)(at - spec)) : isd_xstrdup(spec);
}

static const struct isd_agent *by_package(const struct isd_agent_table *t, const char *spec)
{
	_cleanup_free_ char *name = package_name(spec);

	for (size_t i = 0; i < t->n; i++)
		for (size_t k = 0; t->v[i].packages && t->v[i].packages[k]; k++)
			if (!strcmp(name, t->v[i].packages[k]))
				return &t->v[i];
	return NULL;
}

const struct isd_agent *isd_agent_for_file(const struct isd_agent_table *t, const char *real)
{
	const struct isd_agent *a;
	const char *nm = NULL, *end;
	_cleanup_free_ char *pkg = NULL;

	if (!t || !real)
		return NULL;
	if ((a = by_command(t, real)))
		return a;
	for (const char *s = strstr(real, "/node_modules/"); s; s = strstr(s + 1, "/node_modules/"))
		nm = s + strlen("/node_modules/");
	if (!nm)
		return NULL;
	end = strchr(nm[0] == '@' && strchr(nm, '/') ? strchr(nm, '/') + 1 : nm, '/');
	if (!end)
		return NULL;
	pkg = strndup(nm, (size_t)(end - nm));
	return by_package(t, pkg);
}

const struct isd_agent *isd_agent_for_command(const struct isd_agent_table *t, char *const *argv, bool *via_runner)
{
	const char *base;
	size_t i = 1;

	*via_runner = false;
	if (!t || !argv || !argv[0])
		return NULL;
	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (strcmp(base, "npx") && strcmp(base, "bunx") && strcmp(base, "pnpx")) {
		bool dlx = (!strcmp(base, "pnpm") || !strcmp(base, "yarn")) && argv[1] && !strcmp(argv[1], "dlx");
		bool bunx = !strcmp(base, "bun") && argv[1] && !strcmp(argv[1], "x");
		if (!dlx && !bunx)
			return by_command(t, argv[0]);
		i = 2;
	}
	/* The package is the first operand, or what -p/--package names. */
	for (; argv[i]; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			continue;
		if (!strcmp(a, "-p") || !strcmp(a, "--package")) {
			if (argv[i + 1] && by_package(t, argv[i + 1])) {
				*via_runner = true;
				return by_package(t, argv[i + 1]);
			}
			if (!argv[i + 1])
				break; /* a last -p: the loop's i++ would step past the NULL */
			i++;
			continue;
		}
		if (!strncmp(a, "--package=", 10)) {
			if (by_package(t, a + 10)) {
				*via_runner = true;
				return by_package(t, a + 10);
			}
			continue;
		}
		if (a[0] == '-')
			continue;
		*via_runner = by_package(t, a) != NULL;
		return by_package(t, a);
	}
	return NULL;
}

bool isd_agent_guarded(const struct isd_agent *a, const char *rel)
{
	for (size_t i = 0; a && a->guards && a->guards[i]; i++) {
		const char *g = a->guards[i];
		size_t n = strlen(g);

		if (n && g[n - 1] == '/') {
			if (isd_path_under(rel, g))
				return true;
		} else if (fnmatch(g, rel, FNM_PATHNAME) == 0) {
			return true;
		}
	}
	return false;
}

const struct isd_agent_keys *isd_agent_keys_for(const struct isd_agent *a, const char *rel)
{
	for (size_t i = 0; a && i < a->n_keys; i++)
		if (fnmatch(a->keys[i].file, rel, FNM_PATHNAME) == 0)
			return &a->keys[i];
	return NULL;
}

bool isd_agent_transient(const struct isd_agent *a, const char *rel)
{
	const char *base = strrchr(rel, '/');

	base = base ? base + 1 : rel;
	/* A pid file names a process of the sandbox's pid namespace, gone
	 * when the sandbox is: on the host the number is someone else's. */
	if (fnmatch("*.pid", base, 0) == 0)
		return true;
	for (size_t i = 0; a && a->transient && a->transient[i]; i++)
		if (fnmatch(a->transient[i], base, 0) == 0)
			return true;
	return false;
}

void isd_agent_push_args(const struct isd_agent *a, bool via_runner, struct isd_args *out)
{
	static const char *const runner_env[] = {"npm_config_cache=/tmp/npm-cache", "BUN_INSTALL_CACHE_DIR=/tmp/bun-cache",
						 "npm_config_store_dir=/tmp/pnpm-store", "YARN_CACHE_FOLDER=/tmp/yarn-cache", NULL};
	_cleanup_free_ char *origin = a ? isd_xasprintf("agent table %s", a->origin) : NULL;

	for (size_t i = 0; a && a->allow && a->allow[i]; i++) {
		isd_args_push(out, "--allow", origin);
		isd_args_push(out, a->allow[i], origin);
	}
	for (size_t i = 0; a && a->env && a->env[i]; i++) {
		isd_args_push(out, "-e", origin);
		isd_args_push(out, a->env[i], origin);
	}
	if (!via_runner)
		return;
	/* The package runner downloads the agent first: from the registry
	 * (the @npm allow-set), into caches the read-only home cannot hold. */
	isd_args_push(out, "--allow", "agent table (package runner)");
	isd_args_push(out, "@npm", "agent table (package runner)");
	for (size_t i = 0; runner_env[i]; i++) {
		isd_args_push(out, "-e", "agent table (package runner)");
		isd_args_push(out, runner_env[i], "agent table (package runner)");
	}
}
