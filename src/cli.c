/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd exec` options.  Names and meanings follow `docker run` wherever Docker
 * has the option, so that existing flag sets move over unchanged.
 */
#define _GNU_SOURCE
#include "isd/cli.h"
#include "isd/agent-state.h"
#include "isd/image.h"
#include "isd/cgroup.h"
#include "command.h"
#include "guard.h"
#include "isolation.h"
#include "options.h"
#include "isd/profile.h"
#include "rootful.h"
#include "isd/storage.h"
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

extern char **environ;

enum {
	OPT_ENV_FILE = 1000,
	OPT_MOUNT,
	OPT_TMPFS,
	OPT_HOSTNAME,
	OPT_NETWORK,
	OPT_ROOTFS,
	OPT_IMAGE,
	OPT_PRINT_SPEC,
	OPT_SECURITY_OPT,
	OPT_PID,
	OPT_IPC,
	OPT_RM,
	OPT_READ_ONLY,
	OPT_CAP_DROP,
	OPT_CAP_ADD,
	OPT_PRIVILEGED,
	OPT_INIT,
	OPT_MEMORY,
	OPT_MEMORY_SWAP,
	OPT_MEMORY_RESERVATION,
	OPT_CPUS,
	OPT_CPU_SHARES,
	OPT_CPU_WEIGHT,
	OPT_CPUSET_CPUS,
	OPT_PIDS_LIMIT,
	OPT_BLKIO_WEIGHT,
	OPT_LIMITS,
	OPT_STORAGE_OPT,
	OPT_NO_TTY,
	OPT_PROFILE,
	OPT_AGENT,
	OPT_AGENT_STATE,
	OPT_PROJECT,
	OPT_WORKSPACE,
	OPT_WORKSPACE_KEEP,
	OPT_SESSION,
	OPT_ACTIVITY_LOG,
	OPT_MASK,
	OPT_UNMASK,
	OPT_GIT_WRITABLE,
	OPT_ALLOW,
	OPT_ALLOW_FILE,
	OPT_ADD_HOST,
	OPT_FORWARD,
	OPT_FORWARD_UNIX,
	OPT_PROXY_PORT,
	OPT_NETWORK_LOG,
	OPT_UNSAFE_HOST_ROOT,
	OPT_ISOLATION,
	OPT_HELP,
};

static const struct option exec_options[] = {
	{"env", required_argument, NULL, 'e'},
	{"env-file", required_argument, NULL, OPT_ENV_FILE},
	{"volume", required_argument, NULL, 'v'},
	{"mount", required_argument, NULL, OPT_MOUNT},
	{"tmpfs", required_argument, NULL, OPT_TMPFS},
	{"workdir", required_argument, NULL, 'w'},
	{"user", required_argument, NULL, 'u'},
	{"hostname", required_argument, NULL, OPT_HOSTNAME},
	{"network", required_argument, NULL, OPT_NETWORK},
	{"net", required_argument, NULL, OPT_NETWORK},
	{"rootfs", required_argument, NULL, OPT_ROOTFS},
	{"image", required_argument, NULL, OPT_IMAGE},
	{"print-spec", no_argument, NULL, OPT_PRINT_SPEC},
	{"security-opt", required_argument, NULL, OPT_SECURITY_OPT},
	{"pid", required_argument, NULL, OPT_PID},
	{"ipc", required_argument, NULL, OPT_IPC},
	{"rm", no_argument, NULL, OPT_RM},
	{"interactive", no_argument, NULL, 'i'},
	{"tty", no_argument, NULL, 't'},
	{"no-tty", no_argument, NULL, OPT_NO_TTY},
	{"profile", required_argument, NULL, OPT_PROFILE},
	{"agent", required_argument, NULL, OPT_AGENT},
	{"agent-state", required_argument, NULL, OPT_AGENT_STATE},
	{"project", required_argument, NULL, OPT_PROJECT},
	{"workspace", required_argument, NULL, OPT_WORKSPACE},
	{"workspace-keep", no_argument, NULL, OPT_WORKSPACE_KEEP},
	{"session", required_argument, NULL, OPT_SESSION},
	{"activity-log", required_argument, NULL, OPT_ACTIVITY_LOG},
	{"mask", required_argument, NULL, OPT_MASK},
	{"unmask", required_argument, NULL, OPT_UNMASK},
	{"git-writable", no_argument, NULL, OPT_GIT_WRITABLE},
	{"allow", required_argument, NULL, OPT_ALLOW},
	{"allow-file", required_argument, NULL, OPT_ALLOW_FILE},
	{"add-host", required_argument, NULL, OPT_ADD_HOST},
	{"forward", required_argument, NULL, OPT_FORWARD},
	{"forward-unix", required_argument, NULL, OPT_FORWARD_UNIX},
	{"publish", required_argument, NULL, 'p'},
	{"proxy-port", required_argument, NULL, OPT_PROXY_PORT},
	{"network-log", required_argument, NULL, OPT_NETWORK_LOG},
	{"read-only", no_argument, NULL, OPT_READ_ONLY},
	{"cap-drop", required_argument, NULL, OPT_CAP_DROP},
	{"cap-add", required_argument, NULL, OPT_CAP_ADD},
	{"privileged", no_argument, NULL, OPT_PRIVILEGED},
	{"init", no_argument, NULL, OPT_INIT},
	{"memory", required_argument, NULL, OPT_MEMORY},
	{"memory-swap", required_argument, NULL, OPT_MEMORY_SWAP},
	{"memory-reservation", required_argument, NULL, OPT_MEMORY_RESERVATION},
	{"cpus", required_argument, NULL, OPT_CPUS},
	{"cpu-shares", required_argument, NULL, OPT_CPU_SHARES},
	{"cpu-weight", required_argument, NULL, OPT_CPU_WEIGHT},
	{"cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS},
	{"pids-limit", required_argument, NULL, OPT_PIDS_LIMIT},
	{"blkio-weight", required_argument, NULL, OPT_BLKIO_WEIGHT},
	{"limits", required_argument, NULL, OPT_LIMITS},
	{"storage-opt", required_argument, NULL, OPT_STORAGE_OPT},
	{"unsafe-host-root", no_argument, NULL, OPT_UNSAFE_HOST_ROOT},
	{"isolation", required_argument, NULL, OPT_ISOLATION},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0},
};

/* The file (or "command line") an origin names, without the line. */
static size_t origin_source_len(const char *origin)
{
	const char *colon = strrchr(origin, ':');
	return colon && strncmp(origin, "profile ", 8) == 0 ? (size_t)(colon - origin) : strlen(origin);
}

/* A later source overrides an earlier one at the same destination (the
 * command line overrides a profile); the same source naming a destination
 * twice is left for validation to reject. */
static int add_user_mount(struct isd_spec *spec, const struct isd_mount *parsed, const char *origin)
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

/* The option --ARG names as getopt_long would take it: an exact name, or
 * an unambiguous prefix (--prof for --profile).  NULL when none or
 * ambiguous (getopt reports those). */
static const struct option *match_long_option(const char *arg)
{
	size_t n = strcspn(arg, "=");
	const struct option *found = NULL;

	for (const struct option *o = exec_options; o->name; o++) {
		if (strncmp(o->name, arg, n))
			continue;
		if (strlen(o->name) == n)
			return o;
		if (found && found->val != o->val)
			return NULL;
		found = o;
	}
	return found;
}

/* An unknown --ARG, or a prefix of several options (getopt_long answers
 * both with '?'): the message says which. */
static int unknown_long_option(const char *arg)
{
	size_t n = strcspn(arg + 2, "=");
	char names[256] = "";
	size_t len = 0, found = 0;
	int last_val = -1;

	for (const struct option *o = exec_options; n && o->name; o++) {
		if (strncmp(o->name, arg + 2, n) || o->val == last_val)
			continue;
		last_val = o->val;
		found++;
		/* A short prefix matches many: the list stops, marked, where
		 * the buffer ends (never past it). */
		if (len + strlen(o->name) + 8 >= sizeof(names)) {
			if (len + 5 < sizeof(names) && !strstr(names, ", ..."))
				len += (size_t)snprintf(names + len, sizeof(names) - len, ", ...");
			continue;
		}
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s--%s", found > 1 ? ", " : "", o->name);
	}
	if (found > 1)
		return isd_error(0, "exec: option '%.*s' is ambiguous (%s)", (int)(n + 2), arg, names);
	return isd_error(0, "exec: unknown option '%s' (see isd exec --help)", arg);
}

/* Which element of argv is the command: options end at the first
 * non-option or after "--".  Options that take a separate value skip it. */
static int find_command_index(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return i + 1;
		if (a[0] != '-' || !a[1])
			return i;
		if (a[1] == '-') {
			const struct option *o = match_long_option(a + 2);
			if (o && o->has_arg == required_argument && !strchr(a, '='))
				i++;
			continue;
		}
		for (const char *c = a + 1; *c; c++) {
			if (strchr("evwuhp", *c)) {
				if (!c[1])
					i++;
				break;
			}
		}
	}
	return argc;
}

/* The value of the long option name (also abbreviated, --name VALUE or
 * --name=VALUE) before index end; the last one wins. */
static const char *find_long_value(int argc, char **argv, int end, const char *name)
{
	const char *found = NULL;

	for (int i = 1; i < end && i < argc; i++) {
		const struct option *o;
		const char *eq;

		if (strncmp(argv[i], "--", 2) || !argv[i][2] || !(o = match_long_option(argv[i] + 2)) ||
		    strcmp(o->name, name))
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
	int cmd = find_command_index(argc, argv);
	const char *agent = find_long_value(argc, argv, cmd, "agent");
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
	if (!find_long_value(argc, argv, cmd, "profile") && spec->agent) {
		isd_strv_push(&spec->profiles, isd_xstrdup("agent"));
		r = isd_profile_expand("agent", &vars, out, 0);
		if (r < 0)
			return r;
		isd_agent_push_args(isd_agent_find(table, spec->agent), via_runner, out);
	}
	for (int i = 1; i < argc; i++) {
		const char *name = NULL;

		const struct option *o = i < cmd && !strncmp(argv[i], "--", 2) && argv[i][2] ? match_long_option(argv[i] + 2) : NULL;

		if (o && o->val == OPT_PROFILE) {
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

/* Limits from a profile are defaults (soft), from the command line the
 * user's explicit request. */
static void mark_limit_origin(struct isd_spec *spec, int opt, const char *origin)
{
	static const struct {
		int opt;
		const char *name;
	} limit_opts[] = {
		{OPT_MEMORY, "--memory"},         {OPT_MEMORY_SWAP, "--memory-swap"},
		{OPT_MEMORY_RESERVATION, "--memory-reservation"}, {OPT_CPUS, "--cpus"},
		{OPT_CPU_SHARES, "--cpu-shares"}, {OPT_CPU_WEIGHT, "--cpu-weight"},
		{OPT_CPUSET_CPUS, "--cpuset-cpus"}, {OPT_PIDS_LIMIT, "--pids-limit"},
		{OPT_BLKIO_WEIGHT, "--blkio-weight"},
	};
	char *soft = spec->limits.soft_options, key[40], *at;

	for (size_t i = 0; i < sizeof(limit_opts) / sizeof(limit_opts[0]); i++) {
		if (limit_opts[i].opt != opt)
			continue;
		snprintf(key, sizeof(key), " %s ", limit_opts[i].name);
		at = strstr(soft, key);
		if (at)
			memmove(at, at + strlen(key) - 1, strlen(at + strlen(key) - 1) + 1);
		if (!strncmp(origin, "profile ", 8) && strlen(soft) + strlen(key) < sizeof(spec->limits.soft_options)) {
			if (!soft[0])
				strcat(soft, " ");
			strcat(soft, key + 1);
		}
		isd_spec_set_origin(spec, limit_opts[i].name + 2, origin);
	}
}

static int add_workspace(struct isd_spec *spec, const struct isd_caller *caller, const char *origin)
{
	struct isd_mount m;
	int r = isd_workspace_to_mount(spec, caller->home, &m);

	if (r <= 0)
		return r;
	/* A workspace above the working directory (${PROJECT}: the
	 * repository's top level) keeps the caller where they were. */
	{
		size_t n = strlen(m.destination);
		if (!strncmp(caller->cwd, m.destination, n) && caller->cwd[n] == '/') {
			free(spec->workdir);
			spec->workdir = isd_xstrdup(caller->cwd);
		}
	}
	isd_spec_set_origin(spec, "workdir", origin);
	return add_user_mount(spec, &m, origin);
}

/* --agent-state NAME: the agent's own state, guarded (src/agent-state.c).
 * What is missing is created empty on the host when the sandbox starts
 * (the agent would create it on its first run anyway), not by
 * --print-spec. */
static int add_agent_state(struct isd_spec *spec, const struct isd_caller *caller, const char *agent, const char *origin)
{
	return isd_agent_state_add(spec, caller->home, agent, origin);
}

/* A profile's --allow, --allow-file and --proxy-port belong to the
 * profile's netless mode: they wait until the network mode is known, so
 * that a --network on the command line can replace the profile's mode
 * without tripping over its allowlist. */
struct netless_option {
	int opt;
	char *arg, *origin;
};

static int apply_netless_option(struct isd_spec *spec, const struct isd_caller *caller, int opt, const char *arg)
{
	switch (opt) {
	case OPT_ALLOW:
		if (arg[0] == '@') {
			_cleanup_free_ char *path = NULL;
			int r = isd_profile_find_allow_set(arg + 1, &path);
			return r < 0 ? r : isd_netcfg_read_allow_file(&spec->net, path);
		}
		return isd_netcfg_add_allow(&spec->net, arg, "--allow");
	case OPT_ALLOW_FILE:
		return isd_netcfg_read_allow_file(&spec->net, arg);
	default:
		return isd_netcfg_set_proxy_port(&spec->net, arg);
	}
	(void)caller;
}

static int apply_profile_netless_options(struct isd_spec *spec, const struct isd_caller *caller,
					 struct netless_option *list, size_t n, const char **failed_origin)
{
	const char *net_origin = isd_spec_get_origin(spec, "network");
	bool cmdline_mode = net_origin && !strcmp(net_origin, "command line");
	int r;

	if (n && spec->network != ISD_NET_NETLESS && cmdline_mode) {
		fprintf(stderr, "isd: note: --network %s from the command line replaces the profile's netless mode; "
				"its %zu --allow/--proxy-port line%s (%s) %s left out\n",
			isd_network_mode_name(spec->network), n, n == 1 ? "" : "s", list[0].origin, n == 1 ? "is" : "are");
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		r = apply_netless_option(spec, caller, list[i].opt, list[i].arg);
		if (r < 0) {
			*failed_origin = list[i].origin;
			return r;
		}
	}
	return 0;
}

int isd_cli_parse_exec(int argc, char **argv, const struct isd_caller *caller, struct isd_spec *spec)
{
	struct netless_option *profile_netless = NULL;
	size_t n_profile_netless = 0;
	struct isd_spec user_env = {0}; /* collects -e/--env-file before defaults are known */
	struct isd_args args = {0};
	_cleanup_free_ char *user_arg = NULL, *agent_state = NULL;
	_cleanup_free_ char *workspace_origin = NULL, *agent_state_origin = NULL;
	const char *origin = "command line";
	int tty_mode = -1;              /* -1: a terminal when stdin and stdout are both terminals */
	int opt, r = 0;

	spec->uid = caller->uid;
	spec->gid = caller->gid;
	spec->host_uid = caller->uid;
	spec->host_gid = caller->gid;
	spec->image = isd_xstrdup("host");

	r = assemble_args(argc, argv, caller, spec, &args);
	if (r < 0)
		goto out;
	optind = 0; /* full reset: profiles and tests parse more than once */
	opterr = 0;
	while ((opt = getopt_long(args.argc, args.argv, "+:e:v:w:u:h:p:it", exec_options, NULL)) != -1) {
		struct isd_mount m;
		const char *arg = optarg;

		origin = args.origin[optind > 0 ? optind - 1 : 0];
		switch (opt) {
		case 'e':
			r = isd_options_add_env(&user_env, caller, arg, "--env");
			if (r == 0) {
				_cleanup_free_ char *key = isd_xasprintf("env:%.*s", (int)strcspn(arg, "="), arg);
				isd_spec_set_origin(spec, key, origin);
			}
			break;
		case OPT_ENV_FILE:
			r = isd_options_read_env_file(&user_env, caller, arg);
			break;
		case 'v':
			r = isd_cli_parse_volume(arg, caller->cwd, &m);
			if (r == 0)
				r = add_user_mount(spec, &m, origin);
			break;
		case OPT_MOUNT:
			r = isd_cli_parse_mount(arg, caller->cwd, &m);
			if (r == 0)
				r = add_user_mount(spec, &m, origin);
			break;
		case OPT_TMPFS:
			r = isd_cli_parse_tmpfs(arg, &m);
			if (r == 0)
				r = add_user_mount(spec, &m, origin);
			break;
		case 'w':
			free(spec->workdir);
			spec->workdir = NULL;
			r = isd_options_parse_destination("--workdir", arg, &spec->workdir);
			isd_spec_set_origin(spec, "workdir", origin);
			break;
		case 'u':
			free(user_arg);
			user_arg = isd_xstrdup(arg);
			isd_spec_set_origin(spec, "user", origin);
			break;
		case OPT_PROFILE: /* spliced in by assemble_args */
			break;
		case OPT_AGENT:
			free(spec->agent);
			spec->agent = arg[0] ? isd_xstrdup(arg) : NULL;
			break;
		case OPT_AGENT_STATE:
			free(agent_state);
			agent_state = isd_xstrdup(arg);
			free(agent_state_origin);
			agent_state_origin = isd_xstrdup(origin);
			break;
		case OPT_PROJECT:
		case OPT_WORKSPACE:
			free(spec->workspace.path);
			spec->workspace.path = NULL;
			r = isd_workspace_parse(arg, caller->cwd, &spec->workspace.path, &spec->workspace.mode);
			if (r == 0 && opt == OPT_PROJECT && spec->workspace.mode != ISD_WORKSPACE_RW)
				r = isd_error(0, "--project %s: takes a directory only; use --workspace DIR:MODE", arg);
			free(workspace_origin);
			workspace_origin = isd_xstrdup(origin);
			isd_spec_set_origin(spec, "workspace", origin);
			break;
		case OPT_WORKSPACE_KEEP:
			spec->workspace.keep = true;
			break;
		case OPT_SESSION:
			free(spec->workspace.session);
			spec->workspace.session = isd_xstrdup(arg);
			free(workspace_origin);
			workspace_origin = isd_xstrdup(origin);
			break;
		case OPT_ACTIVITY_LOG:
			free(spec->activity_log);
			spec->activity_log = arg[0] == '/' ? isd_xstrdup(arg) : isd_xasprintf("%s/%s", caller->cwd, arg);
			break;
		case OPT_MASK:
			isd_strv_push(&spec->workspace.masks, isd_xstrdup(arg));
			break;
		case OPT_UNMASK:
			isd_strv_push(&spec->workspace.unmasks, isd_xstrdup(arg));
			break;
		case OPT_GIT_WRITABLE:
			spec->workspace.git_writable = true;
			break;
		case OPT_UNSAFE_HOST_ROOT:
			spec->unsafe_host_root = true;
			break;
		case OPT_ISOLATION: {
			enum isd_isolation tier;
			r = isd_isolation_parse(arg, &tier);
			spec->isolation = (int)tier;
			isd_spec_set_origin(spec, "isolation", origin);
			break;
		}
		case 'h':
		case OPT_HOSTNAME:
			free(spec->hostname);
			spec->hostname = isd_xstrdup(arg);
			isd_spec_set_origin(spec, "hostname", origin);
			break;
		case OPT_NETWORK:
			if (!strcmp(arg, "none"))
				spec->network = ISD_NET_NONE;
			else if (!strcmp(arg, "host"))
				spec->network = ISD_NET_HOST;
			else if (!strcmp(arg, "private"))
				spec->network = ISD_NET_PRIVATE;
			else if (!strcmp(arg, "netless"))
				spec->network = ISD_NET_NETLESS;
			else
				r = isd_error(0, "--network %s: unknown mode (known: none, host, private, netless)", arg);
			isd_spec_set_origin(spec, "network", origin);
			break;
		case OPT_ALLOW:
		case OPT_ALLOW_FILE:
		case OPT_PROXY_PORT:
			if (!strncmp(origin, "profile ", 8)) {
				profile_netless = isd_xrealloc(profile_netless, (n_profile_netless + 1) * sizeof(*profile_netless));
				profile_netless[n_profile_netless++] = (struct netless_option){
					.opt = opt, .arg = isd_xstrdup(arg), .origin = isd_xstrdup(origin)};
				break;
			}
			r = apply_netless_option(spec, caller, opt, arg);
			break;
		case OPT_ADD_HOST:
			r = isd_netcfg_add_host(&spec->net, arg);
			break;
		case OPT_FORWARD:
			r = isd_netcfg_add_forward(&spec->net, arg);
			break;
		case OPT_FORWARD_UNIX:
			r = isd_netcfg_add_forward_unix(&spec->net, arg);
			break;
		case 'p':
			r = isd_netcfg_add_publish(&spec->net, arg);
			break;
		case OPT_NETWORK_LOG:
			r = isd_netcfg_set_log(&spec->net, arg, caller->cwd);
			break;
		case OPT_ROOTFS:
			free(spec->image);
			spec->image = NULL;
			free(spec->rootfs);
			spec->rootfs = isd_options_absolute_source(arg, caller->cwd);
			break;
		case OPT_IMAGE:
			r = isd_options_resolve_image(spec, arg);
			isd_spec_set_origin(spec, "image", origin);
			break;
		case OPT_PRINT_SPEC:
			spec->print_spec = true;
			break;
		case OPT_SECURITY_OPT:
			r = isd_options_security_opt(spec, arg);
			if (!strncmp(arg, "seccomp", 7))
				isd_spec_set_origin(spec, "seccomp", origin);
			break;
		case OPT_PID:
			if (!strcmp(arg, "host"))
				spec->pid_host = true;
			else if (!strcmp(arg, "private"))
				spec->pid_host = false;
			else
				r = isd_error(0, "--pid %s: unknown mode (known: private, host)", arg);
			break;
		case OPT_IPC:
			if (strcmp(arg, "private") && strcmp(arg, "none"))
				r = isd_error(0, "--ipc %s: isd always gives the sandbox its own IPC namespace (known: private)", arg);
			break;
		case 'i':
			spec->interactive = true;
			break;
		case 't':
			tty_mode = 1;
			break;
		case OPT_NO_TTY:
			tty_mode = 0;
			break;
		case OPT_RM:
		case OPT_READ_ONLY:
		case OPT_INIT:
		case OPT_CAP_DROP: /* every capability is dropped anyway */
			break;
		case OPT_CAP_ADD:
			r = isd_error(0, "--cap-add %s: isd never grants capabilities", arg);
			break;
		case OPT_PRIVILEGED:
			r = isd_error(0, "--privileged: isd has no privileged mode");
			break;
		case OPT_MEMORY:
			if (isd_parse_size(arg, &spec->limits.memory) < 0 || spec->limits.memory == 0)
				r = isd_error(0, "--memory %s: invalid size (expected N[b|k|m|g])", arg);
			break;
		case OPT_MEMORY_SWAP:
			if (!strcmp(arg, "-1")) {
				spec->limits.memory_swap = -1;
			} else {
				uint64_t v;
				if (isd_parse_size(arg, &v) < 0 || v == 0 || v > INT64_MAX)
					r = isd_error(0, "--memory-swap %s: invalid size (expected N[b|k|m|g] or -1)", arg);
				else
					spec->limits.memory_swap = (int64_t)v;
			}
			break;
		case OPT_MEMORY_RESERVATION:
			if (isd_parse_size(arg, &spec->limits.memory_reservation) < 0)
				r = isd_error(0, "--memory-reservation %s: invalid size", arg);
			break;
		case OPT_CPUS:
			if (isd_cli_parse_cpus(arg, spec->limits.cpu_period_us, &spec->limits.cpu_quota_us) < 0)
				r = isd_error(0, "--cpus %s: invalid number of CPUs (expected e.g. 0.5 or 4, at least 0.01)", arg);
			break;
		case OPT_CPU_SHARES: {
			uint32_t shares;
			if (isd_parse_uint32(arg, &shares) < 0 || shares < 2 || shares > 262144)
				r = isd_error(0, "--cpu-shares %s: expected 2..262144", arg);
			else
				spec->limits.cpu_weight = isd_cgroup_shares_to_weight(shares);
			break;
		}
		case OPT_CPU_WEIGHT: {
			uint32_t w;
			if (isd_parse_uint32(arg, &w) < 0 || w < 1 || w > 10000)
				r = isd_error(0, "--cpu-weight %s: expected 1..10000", arg);
			else
				spec->limits.cpu_weight = w;
			break;
		}
		case OPT_CPUSET_CPUS:
			if (!*arg || strspn(arg, "0123456789,-") != strlen(arg))
				r = isd_error(0, "--cpuset-cpus %s: expected a CPU list like 0-3,6", arg);
			else {
				free(spec->limits.cpuset_cpus);
				spec->limits.cpuset_cpus = isd_xstrdup(arg);
			}
			break;
		case OPT_PIDS_LIMIT:
			if (!strcmp(arg, "-1") || !strcmp(arg, "0")) {
				spec->limits.pids_limit = -1;
			} else {
				uint32_t n;
				if (isd_parse_uint32(arg, &n) < 0)
					r = isd_error(0, "--pids-limit %s: expected a positive number or -1", arg);
				else
					spec->limits.pids_limit = n;
			}
			break;
		case OPT_BLKIO_WEIGHT: {
			uint32_t w;
			if (isd_parse_uint32(arg, &w) < 0 || w < 10 || w > 1000)
				r = isd_error(0, "--blkio-weight %s: expected 10..1000", arg);
			else
				spec->limits.blkio_weight = w;
			break;
		}
		case OPT_LIMITS:
			if (!strcmp(arg, "strict"))
				spec->limits.mode = ISD_LIMITS_STRICT;
			else if (!strcmp(arg, "best-effort"))
				spec->limits.mode = ISD_LIMITS_BEST_EFFORT;
			else
				r = isd_error(0, "--limits %s: expected strict or best-effort", arg);
			break;
		case OPT_STORAGE_OPT:
			r = isd_storage_parse_opt(&spec->storage, arg);
			if (r == 0) {
				_cleanup_free_ char *key = isd_xasprintf("storage:%.*s", (int)strcspn(arg, "="), arg);
				isd_spec_set_origin(spec, key, origin);
			}
			break;
		case OPT_HELP:
			isd_cli_exec_usage(stdout);
			r = ISD_CLI_HELP_SHOWN;
			goto out;
		case ':':
			r = isd_error(0, "exec: option '%s' needs a value", args.argv[optind - 1]);
			break;
		default:
			if (optopt && optopt < 256)
				r = isd_error(0, "exec: unknown option '-%c' (see isd exec --help)", optopt);
			else if (!strncmp(args.argv[optind - 1], "--", 2))
				r = unknown_long_option(args.argv[optind - 1]);
			else
				r = isd_error(0, "exec: unknown option '%s' (see isd exec --help)", args.argv[optind - 1]);
			break;
		}
		if (r < 0)
			goto out;
		mark_limit_origin(spec, opt, origin);
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
	r = apply_profile_netless_options(spec, caller, profile_netless, n_profile_netless, &origin);
	if (r < 0)
		goto out;
	/* Names are looked up in the image, which is only known now. */
	if (user_arg) {
		origin = isd_spec_get_origin(spec, "user") ? isd_spec_get_origin(spec, "user") : "command line";
		r = isd_options_user(spec, user_arg);
		if (r < 0)
			goto out;
	}
	origin = workspace_origin ? workspace_origin : "command line";
	r = add_workspace(spec, caller, origin);
	if (r < 0)
		goto out;
	r = isd_workspace_resolve(spec);
	if (r < 0)
		goto out;
	if (agent_state) {
		origin = agent_state_origin;
		r = add_agent_state(spec, caller, agent_state, agent_state_origin);
		if (r < 0)
			goto out;
	}
	origin = "command line";
	r = isd_image_config_apply(spec, user_arg != NULL);
	if (r < 0)
		goto out;
	r = isd_rootful_apply(spec, caller->uid, caller->gid);
	if (r < 0)
		goto out;
	/* As users expect from `docker run -it`: an interactive terminal
	 * gets a terminal inside. */
	spec->tty = tty_mode == 1 || (tty_mode == -1 && caller->stdin_tty && caller->stdout_tty);
	if (tty_mode == -1 && spec->tty)
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
	isd_options_default_env(spec, caller, user_env.env);
	isd_netcfg_apply_env(spec);
	r = isd_command_resolve(spec, caller, isd_caller_getenv(caller, "PATH"));
	if (r >= 0)
		r = isd_guard_apply(spec);
out:
	if (r < 0 && strncmp(origin, "profile ", 8) == 0)
		isd_error_hint("from %s", origin);
	for (size_t i = 0; i < n_profile_netless; i++) {
		free(profile_netless[i].arg);
		free(profile_netless[i].origin);
	}
	free(profile_netless);
	isd_spec_free(&user_env);
	isd_args_free(&args);
	return r;
}
