/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd exec`'s command line: profiles spliced in, each option handed to its
 * entry of the table (src/cli-table.c), then what depends on all of them.
 */
#define _GNU_SOURCE
#include "cli-internal.h"
#include "isd/cli.h"
#include "isd/agent-state.h"
#include "isd/image.h"
#include "isd/cgroup.h"
#include "cdi.h"
#include "command.h"
#include "device.h"
#include "guard.h"
#include "options.h"
#include "isd/path-util.h"
#include "isd/profile.h"
#include "rootful.h"
#include "isd/util.h"
#include "workspace.h"

#include <fcntl.h>
#include <getopt.h>
#include <linux/openat2.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* getopt_long's val of an entry: its index, above every short option. */
#define OPTION_VAL(o) (256 + (int)((o) - isd_exec_options))

/* The file (or "command line") an origin names, without the line. */
static size_t origin_source_len(const char *origin)
{
	const char *colon = strrchr(origin, ':');
	return colon && strncmp(origin, "profile ", 8) == 0 ? (size_t)(colon - origin) : strlen(origin);
}

int isd_exec_add_user_mount(struct isd_spec *spec, const struct isd_mount *parsed, const char *origin)
{
	ssize_t i = isd_spec_find_mount(spec, parsed->destination);
	struct isd_mount *m;

	if (i >= 0 && spec->mounts[i].origin && (origin_source_len(spec->mounts[i].origin) != origin_source_len(origin) ||
						 strncmp(spec->mounts[i].origin, origin, origin_source_len(origin)))) {
		m = &spec->mounts[i];
		free(m->source);
		free(m->destination);
		free(m->origin);
	} else {
		m = isd_spec_add_mount(spec);
	}
	*m = *parsed;
	m->origin = isd_xstrdup(origin);
	return 0;
}

static bool name_matches(const char *name, const char *arg, size_t n, bool *exact)
{
	if (!name || strncmp(name, arg, n))
		return false;
	*exact = strlen(name) == n;
	return true;
}

const struct isd_exec_option *isd_exec_option_long(const char *arg)
{
	size_t n = strcspn(arg, "=");
	const struct isd_exec_option *found = NULL;

	for (const struct isd_exec_option *o = isd_exec_options; o < isd_exec_options + isd_exec_n_options; o++) {
		bool exact = false, alias_exact = false;
		bool by_name = name_matches(o->name, arg, n, &exact);
		bool by_alias = name_matches(o->alias, arg, n, &alias_exact);

		if (!by_name && !by_alias)
			continue;
		if (exact || alias_exact)
			return o;
		if (found && found != o)
			return NULL;
		found = o;
	}
	return found;
}

const struct isd_exec_option *isd_exec_option_short(char c)
{
	for (size_t i = 0; c && i < isd_exec_n_options; i++)
		if (isd_exec_options[i].short_name == c)
			return &isd_exec_options[i];
	return NULL;
}

/* An unknown --ARG, or a prefix of several options (getopt_long answers
 * both with '?'): the message says which. */
static int unknown_long_option(const char *arg)
{
	size_t n = strcspn(arg + 2, "=");
	char names[256] = "";
	size_t len = 0, found = 0;

	for (const struct isd_exec_option *o = isd_exec_options; n && o < isd_exec_options + isd_exec_n_options; o++) {
		bool exact;
		const char *name = name_matches(o->name, arg + 2, n, &exact)    ? o->name
				   : name_matches(o->alias, arg + 2, n, &exact) ? o->alias
										: NULL;
		if (!name)
			continue;
		found++;
		/* A short prefix matches many: the list stops, marked, where
		 * the buffer ends (never past it). */
		if (len + strlen(name) + 8 >= sizeof(names)) {
			if (len + 5 < sizeof(names) && !strstr(names, ", ..."))
				len += (size_t)snprintf(names + len, sizeof(names) - len, ", ...");
			continue;
		}
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s--%s", found > 1 ? ", " : "", name);
	}
	if (found > 1)
		return isd_error(0, "exec: option '%.*s' is ambiguous (%s)", (int)(n + 2), arg, names);
	return isd_error(0, "exec: unknown option '%s' (see isd exec --help)", arg);
}

int isd_exec_find_command(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return i + 1;
		if (a[0] != '-' || !a[1])
			return i;
		if (a[1] == '-') {
			const struct isd_exec_option *o = isd_exec_option_long(a + 2);
			if (o && o->takes_value && !strchr(a, '='))
				i++;
			continue;
		}
		for (const char *c = a + 1; *c; c++) {
			const struct isd_exec_option *o = isd_exec_option_short(*c);
			if (o && o->takes_value) {
				if (!c[1])
					i++;
				break;
			}
		}
	}
	return argc;
}

/* The value of the long option o (also abbreviated, --name VALUE or
 * --name=VALUE) before index end; the last one wins. */
static const char *find_long_value(int argc, char **argv, int end, const struct isd_exec_option *o)
{
	const char *found = NULL;

	for (int i = 1; i < end && i < argc; i++) {
		const char *eq;

		if (strncmp(argv[i], "--", 2) || !argv[i][2] || isd_exec_option_long(argv[i] + 2) != o)
			continue;
		eq = strchr(argv[i], '=');
		if (eq)
			found = eq + 1;
		else if (i + 1 < end)
			found = argv[++i];
	}
	return found;
}

/*
 * The command line with every --profile replaced by the profile's options,
 * each element labelled with where it came from.  A known agent as the
 * command (isd exec -- omp) brings the agent profile unless --profile says
 * otherwise.
 */
static int assemble_args(int argc, char **argv, const struct isd_caller *caller, struct isd_spec *spec,
			 struct isd_args *out)
{
	const struct isd_exec_option *profile_opt = isd_exec_option_long("profile");
	int cmd = isd_exec_find_command(argc, argv);
	const char *agent = find_long_value(argc, argv, cmd, isd_exec_option_long("agent"));
	const char *user = isd_caller_getenv(caller, "USER");
	struct isd_profile_vars vars = {.home = caller->home, .pwd = caller->cwd, .user = user ? user : "",
					.uid = caller->uid, .gid = caller->gid};
	const struct isd_agent_table *table = isd_agents();
	const struct isd_agent *entry = NULL;
	bool via_runner = false;
	int r;

	if (!table)
		return -EINVAL; /* the broken agents.conf is named */
	if (!agent && cmd < argc) {
		entry = isd_agent_for_command(table, argv + cmd, &via_runner);
		if (!entry) {
			/* A link of another name, or the installed file itself */
			_cleanup_free_ char *real = isd_command_real_file(argv[cmd], isd_caller_getenv(caller, "PATH"));
			entry = isd_agent_for_file(table, real);
		}
		if (entry)
			agent = entry->name;
	}
	if (agent && agent[0]) {
		free(spec->agent);
		spec->agent = isd_xstrdup(agent);
	}
	vars.agent = agent ? agent : "";
	isd_args_push(out, argv[0], "command line");
	/* A known agent as the command, or --agent NAME (known or not). */
	if (!find_long_value(argc, argv, cmd, profile_opt) && spec->agent) {
		isd_strv_push(&spec->profiles, isd_xstrdup("agent"));
		r = isd_profile_expand("agent", &vars, out, 0);
		if (r < 0)
			return r;
		isd_agent_push_args(isd_agent_find(table, spec->agent), via_runner, out);
	}
	for (int i = 1; i < argc; i++) {
		const char *name = NULL;

		if (i < cmd && !strncmp(argv[i], "--", 2) && argv[i][2] && isd_exec_option_long(argv[i] + 2) == profile_opt) {
			const char *eq = strchr(argv[i], '=');
			if (eq)
				name = eq + 1;
			else if (i + 1 < cmd)
				name = argv[++i];
		}
		if (name) {
			isd_strv_push(&spec->profiles, isd_xstrdup(name));
			r = isd_profile_expand(name, &vars, out, 0);
			if (r < 0)
				return r;
			if (!strcmp(name, "agent"))
				isd_agent_push_args(isd_agent_find(table, spec->agent), via_runner, out);
			continue;
		}
		isd_args_push(out, argv[i], "command line");
	}
	return 0;
}

/* What the table says every option records: where it came from, and
 * whether a limit is a profile's default (soft) or the user's request. */
static void mark_origin(struct isd_spec *spec, const struct isd_exec_option *o, const char *origin)
{
	if (o->origin_key)
		isd_spec_set_origin(spec, o->origin_key, origin);
	if (o->limit) {
		spec->limits.soft &= ~o->limit;
		if (!strncmp(origin, "profile ", 8))
			spec->limits.soft |= o->limit;
	}
}

/* getopt_long's arrays, from the table. */
static void getopt_arrays(struct option *longopts, char *shortopts)
{
	size_t n = 0, s = 0;

	shortopts[s++] = '+'; /* options end at the command */
	shortopts[s++] = ':'; /* a missing value is ':', not '?' */
	for (const struct isd_exec_option *o = isd_exec_options; o < isd_exec_options + isd_exec_n_options; o++) {
		int has_arg = o->takes_value ? required_argument : no_argument;

		longopts[n++] = (struct option){o->name, has_arg, NULL, OPTION_VAL(o)};
		if (o->alias)
			longopts[n++] = (struct option){o->alias, has_arg, NULL, OPTION_VAL(o)};
		if (o->short_name) {
			shortopts[s++] = o->short_name;
			if (o->takes_value)
				shortopts[s++] = ':';
		}
	}
	longopts[n] = (struct option){0};
	shortopts[s] = '\0';
}

static int add_workspace(struct isd_spec *spec, const struct isd_caller *caller, const char *origin)
{
	struct isd_mount m;
	int r = isd_workspace_to_mount(spec, caller->home, &m);

	if (r <= 0)
		return r;
	/* A workspace above the working directory (${PROJECT}: the
	 * repository's top level) keeps the caller where they were. */
	if (isd_path_below(caller->cwd, m.destination)) {
		free(spec->workdir);
		spec->workdir = isd_xstrdup(caller->cwd);
	}
	isd_spec_set_origin(spec, "workdir", origin);
	return isd_exec_add_user_mount(spec, &m, origin);
}

/* The profile's netless options, now that the mode is known. */
static int apply_deferred(struct isd_exec_parse *p, const char **failed_origin)
{
	const char *net_origin = isd_spec_get_origin(p->spec, "network");
	bool cmdline_mode = net_origin && !strcmp(net_origin, "command line");
	size_t n = p->n_deferred;
	int r;

	if (n && p->spec->network != ISD_NET_NETLESS && cmdline_mode) {
		fprintf(stderr, "isd: note: --network %s from the command line replaces the profile's netless mode; "
				"its %zu --allow/--proxy-port line%s (%s) %s left out\n",
			isd_network_mode_name(p->spec->network), n, n == 1 ? "" : "s", p->deferred[0].origin,
			n == 1 ? "is" : "are");
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		p->origin = p->deferred[i].origin;
		r = p->deferred[i].apply(p, p->deferred[i].arg);
		if (r < 0) {
			*failed_origin = p->deferred[i].origin;
			return r;
		}
	}
	return 0;
}

/* The CDI requests, now that every --cdi-spec-dir is known. */
static int apply_cdi(struct isd_exec_parse *p, const char **failed_origin)
{
	_cleanup_strv_ char **dirs = p->cdi_dirs ? NULL : isd_cdi_default_dirs(isd_caller_getenv(p->caller, "ISD_CDI_SPEC_DIRS"));

	for (size_t i = 0; p->cdi_requests && p->cdi_requests[i]; i++) {
		size_t before = isd_strv_len(p->cdi_env);
		int r = isd_device_add_cdi(p->spec, p->cdi_dirs ? p->cdi_dirs : dirs, p->cdi_requests[i], p->cdi_origins[i],
					   &p->cdi_env);
		if (r < 0) {
			*failed_origin = p->cdi_origins[i];
			return r;
		}
		for (size_t k = before; k < isd_strv_len(p->cdi_env); k++)
			isd_strv_push(&p->cdi_env_origins, isd_xasprintf("CDI %s, from %s", p->cdi_requests[i], p->cdi_origins[i]));
	}
	return 0;
}

/* One option, or getopt_long's complaint about one. */
static int take_option(struct isd_exec_parse *p, const struct isd_args *args, int opt, const char *arg)
{
	const struct isd_exec_option *o;
	int r;

	if (opt == ':')
		return isd_error(0, "exec: option '%s' needs a value", args->argv[optind - 1]);
	o = opt >= 256 ? &isd_exec_options[opt - 256] : isd_exec_option_short((char)opt);
	if (!o) {
		if (optopt && optopt < 256)
			return isd_error(0, "exec: unknown option '-%c' (see isd exec --help)", optopt);
		if (!strncmp(args->argv[optind - 1], "--", 2))
			return unknown_long_option(args->argv[optind - 1]);
		return isd_error(0, "exec: unknown option '%s' (see isd exec --help)", args->argv[optind - 1]);
	}
	r = o->handle(p, arg);
	if (r == 0)
		mark_origin(p->spec, o, p->origin);
	return r;
}

static void parse_free(struct isd_exec_parse *p)
{
	for (size_t i = 0; i < p->n_deferred; i++) {
		free(p->deferred[i].arg);
		free(p->deferred[i].origin);
	}
	free(p->deferred);
	free(p->user_arg);
	free(p->agent_state);
	free(p->agent_state_origin);
	free(p->workspace_origin);
	isd_strv_free(p->cdi_requests);
	isd_strv_free(p->cdi_origins);
	isd_strv_free(p->cdi_dirs);
	isd_strv_free(p->cdi_env);
	isd_strv_free(p->cdi_env_origins);
	isd_spec_free(&p->user_env);
}

int isd_cli_parse_exec(int argc, char **argv, const struct isd_caller *caller, struct isd_spec *spec)
{
	struct option longopts[2 * isd_exec_n_options + 1];
	char shortopts[3 * isd_exec_n_options + 3];
	struct isd_exec_parse p = {.spec = spec, .caller = caller, .origin = "command line", .tty_mode = -1};
	struct isd_args args = {0};
	const char *origin = "command line";
	int opt, r = 0;

	spec->uid = caller->uid;
	spec->gid = caller->gid;
	spec->host_uid = caller->uid;
	spec->host_gid = caller->gid;
	spec->image = isd_xstrdup("host");

	getopt_arrays(longopts, shortopts);
	r = assemble_args(argc, argv, caller, spec, &args);
	if (r < 0)
		goto out;
	optind = 0; /* full reset: profiles and tests parse more than once */
	opterr = 0;
	while ((opt = getopt_long(args.argc, args.argv, shortopts, longopts, NULL)) != -1) {
		origin = p.origin = args.origin[optind > 0 ? optind - 1 : 0];
		r = take_option(&p, &args, opt, optarg);
		if (r != 0) /* an error, or --help shown */
			goto out;
	}

	if (optind >= args.argc) {
		r = isd_error(0, "exec: no command given (usage: isd exec [OPTIONS] [--] COMMAND [ARG...])");
		goto out;
	}
	spec->argv = isd_strv_copy(args.argv + optind);
	spec->command_name = isd_xstrdup(spec->argv[0]);

	/* What fails from here on is blamed on where its option came from,
	 * not on the last option read. */
	origin = "command line";
	r = apply_deferred(&p, &origin);
	if (r < 0)
		goto out;
	r = apply_cdi(&p, &origin);
	if (r < 0)
		goto out;
	/* Names are looked up in the image, which is only known now. */
	if (p.user_arg) {
		origin = isd_spec_get_origin(spec, "user") ? isd_spec_get_origin(spec, "user") : "command line";
		r = isd_options_user(spec, p.user_arg);
		if (r < 0)
			goto out;
	}
	origin = p.workspace_origin ? p.workspace_origin : "command line";
	r = add_workspace(spec, caller, origin);
	if (r < 0)
		goto out;
	r = isd_workspace_resolve(spec);
	if (r < 0)
		goto out;
	/* --agent-state NAME: the agent's own state, guarded
	 * (src/agent-state.c).  What is missing is created empty on the host
	 * when the sandbox starts (the agent would create it on its first run
	 * anyway), not by --print-spec. */
	if (p.agent_state) {
		origin = p.agent_state_origin;
		r = isd_agent_state_add(spec, caller->home, p.agent_state, p.agent_state_origin);
		if (r < 0)
			goto out;
	}
	origin = "command line";
	r = isd_image_config_apply(spec, p.user_arg != NULL);
	if (r < 0)
		goto out;
	r = isd_rootful_apply(spec, caller->uid, caller->gid);
	if (r < 0)
		goto out;
	/* As users expect from `docker run -it`: an interactive terminal
	 * gets a terminal inside. */
	spec->tty = p.tty_mode == 1 || (p.tty_mode == -1 && caller->stdin_tty && caller->stdout_tty);
	if (p.tty_mode == -1 && spec->tty)
		spec->interactive = true;
	if (!spec->hostname)
		spec->hostname = isd_xstrdup("isd");
	if (!spec->seccomp)
		spec->seccomp = isd_xstrdup("default");
	/* Sizes bound what a runaway payload can pin in memory through tmpfs. */
	isd_options_implicit_tmpfs(spec, "/tmp", 1ULL << 30, true);
	isd_options_implicit_tmpfs(spec, "/var/tmp", 256ULL << 20, false);
	isd_options_implicit_tmpfs(spec, "/run", 64ULL << 20, false);
	isd_spec_drop_missing_optional(spec);
	isd_options_default_env(spec, caller, p.user_env.env);
	/* A CDI spec's variables, unless -e set the name. */
	for (size_t i = 0; p.cdi_env && p.cdi_env[i]; i++) {
		_cleanup_free_ char *name = strndup(p.cdi_env[i], strcspn(p.cdi_env[i], "="));
		_cleanup_free_ char *key = isd_xasprintf("env:%s", name);
		if (isd_spec_getenv(&p.user_env, name))
			continue;
		isd_spec_setenv(spec, name, p.cdi_env[i] + strlen(name) + 1);
		isd_spec_set_origin(spec, key, p.cdi_env_origins[i]);
	}
	isd_netcfg_apply_env(spec);
	r = isd_command_resolve(spec, caller, isd_caller_getenv(caller, "PATH"));
	if (r >= 0)
		r = isd_guard_apply(spec);
out:
	if (r < 0 && strncmp(origin, "profile ", 8) == 0)
		isd_error_hint("from %s", origin);
	parse_free(&p);
	isd_args_free(&args);
	return r;
}
