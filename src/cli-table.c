/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd exec`'s options: one entry each, with the handler that takes it.
 * Names and meanings follow `docker run` wherever Docker has the option,
 * so that existing flag sets move over unchanged.  The order is the order
 * an ambiguous prefix lists its candidates in; --help groups them.
 */
#define _GNU_SOURCE
#include "cli-internal.h"
#include "cdi.h"
#include "device.h"
#include "isd/cgroup.h"
#include "isd/cli.h"
#include "isd/storage.h"
#include "isolation.h"
#include "options.h"
#include "isd/profile.h"
#include "isd/util.h"
#include "workspace.h"

#include <stdio.h>
#include <string.h>

static int on_env(struct isd_exec_parse *p, const char *arg)
{
	int r = isd_options_add_env(&p->user_env, p->caller, arg, "--env");

	if (r == 0) {
		_cleanup_free_ char *key = isd_xasprintf("env:%.*s", (int)strcspn(arg, "="), arg);
		isd_spec_set_origin(p->spec, key, p->origin);
	}
	return r;
}

static int on_env_file(struct isd_exec_parse *p, const char *arg)
{
	return isd_options_read_env_file(&p->user_env, p->caller, arg);
}

static int on_volume(struct isd_exec_parse *p, const char *arg)
{
	struct isd_mount m;
	int r = isd_options_parse_volume(arg, p->caller->cwd, &m);

	return r < 0 ? r : isd_exec_add_user_mount(p->spec, &m, p->origin);
}

static int on_mount(struct isd_exec_parse *p, const char *arg)
{
	struct isd_mount m;
	int r = isd_options_parse_mount(arg, p->caller->cwd, &m);

	return r < 0 ? r : isd_exec_add_user_mount(p->spec, &m, p->origin);
}

static int on_tmpfs(struct isd_exec_parse *p, const char *arg)
{
	struct isd_mount m;
	int r = isd_options_parse_tmpfs(arg, &m);

	return r < 0 ? r : isd_exec_add_user_mount(p->spec, &m, p->origin);
}

static int cdi_request(struct isd_exec_parse *p, const char *request)
{
	_cleanup_free_ char *kind = NULL, *name = NULL;
	int r = isd_cdi_parse_request(request, &kind, &name);

	if (r < 0)
		return r;
	isd_strv_push(&p->cdi_requests, isd_xstrdup(request));
	isd_strv_push(&p->cdi_origins, isd_xstrdup(p->origin));
	return 0;
}

static int on_device(struct isd_exec_parse *p, const char *arg)
{
	if (isd_cdi_is_request(arg))
		return cdi_request(p, arg);
	return isd_device_add_arg(p->spec, arg, p->origin);
}

/* As podman maps it: the NVIDIA CDI kind's device of that name. */
static int on_gpus(struct isd_exec_parse *p, const char *arg)
{
	_cleanup_free_ char *request = NULL;

	if (strchr(arg, '=') || strchr(arg, ',') || !arg[0])
		return isd_error(0, "--gpus %s: isd takes 'all' or one device name of the nvidia.com/gpu CDI spec "
				    "(Docker's count=, device= and capabilities= are not supported; fix: --gpus all, or "
				    "--device nvidia.com/gpu=NAME for each)", arg);
	request = isd_xasprintf("nvidia.com/gpu=%s", arg);
	return cdi_request(p, request);
}

static int on_cdi_spec_dir(struct isd_exec_parse *p, const char *arg)
{
	isd_strv_push(&p->cdi_dirs, isd_options_absolute_source(arg, p->caller->cwd));
	return 0;
}

static int on_workdir(struct isd_exec_parse *p, const char *arg)
{
	free(p->spec->workdir);
	p->spec->workdir = NULL;
	return isd_options_parse_destination("--workdir", arg, &p->spec->workdir);
}

static int on_user(struct isd_exec_parse *p, const char *arg)
{
	free(p->user_arg);
	p->user_arg = isd_xstrdup(arg);
	return 0;
}

static int on_hostname(struct isd_exec_parse *p, const char *arg)
{
	free(p->spec->hostname);
	p->spec->hostname = isd_xstrdup(arg);
	return 0;
}

static int on_network(struct isd_exec_parse *p, const char *arg)
{
	if (!strcmp(arg, "none"))
		p->spec->network = ISD_NET_NONE;
	else if (!strcmp(arg, "host"))
		p->spec->network = ISD_NET_HOST;
	else if (!strcmp(arg, "private"))
		p->spec->network = ISD_NET_PRIVATE;
	else if (!strcmp(arg, "netless"))
		p->spec->network = ISD_NET_NETLESS;
	else
		return isd_error(0, "--network %s: unknown mode (known: none, host, private, netless)", arg);
	return 0;
}

static int on_rootfs(struct isd_exec_parse *p, const char *arg)
{
	free(p->spec->image);
	p->spec->image = NULL;
	free(p->spec->rootfs);
	p->spec->rootfs = isd_options_absolute_source(arg, p->caller->cwd);
	return 0;
}

static int on_image(struct isd_exec_parse *p, const char *arg)
{
	return isd_options_resolve_image(p->spec, arg);
}

static int on_print_spec(struct isd_exec_parse *p, const char *arg)
{
	(void)arg;
	p->spec->print_spec = true;
	return 0;
}

static int on_security_opt(struct isd_exec_parse *p, const char *arg)
{
	int r = isd_options_security_opt(p->spec, arg);

	if (r == 0 && !strncmp(arg, "seccomp", 7))
		isd_spec_set_origin(p->spec, "seccomp", p->origin);
	return r;
}

static int on_pid(struct isd_exec_parse *p, const char *arg)
{
	if (!strcmp(arg, "host"))
		p->spec->pid_host = true;
	else if (!strcmp(arg, "private"))
		p->spec->pid_host = false;
	else
		return isd_error(0, "--pid %s: unknown mode (known: private, host)", arg);
	return 0;
}

static int on_ipc(struct isd_exec_parse *p, const char *arg)
{
	(void)p;
	if (strcmp(arg, "private") && strcmp(arg, "none"))
		return isd_error(0, "--ipc %s: isd always gives the sandbox its own IPC namespace (known: private)", arg);
	return 0;
}

/* What isd always does: accepted, nothing to change. */
static int on_ignored(struct isd_exec_parse *p, const char *arg)
{
	(void)p, (void)arg;
	return 0;
}

static int on_interactive(struct isd_exec_parse *p, const char *arg)
{
	(void)arg;
	p->spec->interactive = true;
	return 0;
}

static int on_tty(struct isd_exec_parse *p, const char *arg)
{
	(void)arg;
	p->tty_mode = 1;
	return 0;
}

static int on_no_tty(struct isd_exec_parse *p, const char *arg)
{
	(void)arg;
	p->tty_mode = 0;
	return 0;
}

/* Spliced in by the assembly of the command line (src/cli.c). */
static int on_profile(struct isd_exec_parse *p, const char *arg)
{
	(void)p, (void)arg;
	return 0;
}

static int on_agent(struct isd_exec_parse *p, const char *arg)
{
	free(p->spec->agent);
	p->spec->agent = arg[0] ? isd_xstrdup(arg) : NULL;
	return 0;
}

static int on_agent_state(struct isd_exec_parse *p, const char *arg)
{
	free(p->agent_state);
	p->agent_state = isd_xstrdup(arg);
	free(p->agent_state_origin);
	p->agent_state_origin = isd_xstrdup(p->origin);
	return 0;
}

static int set_workspace(struct isd_exec_parse *p, const char *arg, bool project)
{
	struct isd_workspace *ws = &p->spec->workspace;
	int r;

	free(ws->path);
	ws->path = NULL;
	r = isd_workspace_parse(arg, p->caller->cwd, &ws->path, &ws->mode);
	if (r == 0 && project && ws->mode != ISD_WORKSPACE_RW)
		r = isd_error(0, "--project %s: takes a directory only; use --workspace DIR:MODE", arg);
	free(p->workspace_origin);
	p->workspace_origin = isd_xstrdup(p->origin);
	return r;
}

static int on_project(struct isd_exec_parse *p, const char *arg)
{
	return set_workspace(p, arg, true);
}

static int on_workspace(struct isd_exec_parse *p, const char *arg)
{
	return set_workspace(p, arg, false);
}

static int on_workspace_keep(struct isd_exec_parse *p, const char *arg)
{
	(void)arg;
	p->spec->workspace.keep = true;
	return 0;
}

static int on_session(struct isd_exec_parse *p, const char *arg)
{
	free(p->spec->workspace.session);
	p->spec->workspace.session = isd_xstrdup(arg);
	free(p->workspace_origin);
	p->workspace_origin = isd_xstrdup(p->origin);
	return 0;
}

static int on_activity_log(struct isd_exec_parse *p, const char *arg)
{
	free(p->spec->activity_log);
	p->spec->activity_log = arg[0] == '/' ? isd_xstrdup(arg) : isd_xasprintf("%s/%s", p->caller->cwd, arg);
	return 0;
}

static int on_mask(struct isd_exec_parse *p, const char *arg)
{
	isd_strv_push(&p->spec->workspace.masks, isd_xstrdup(arg));
	return 0;
}

static int on_unmask(struct isd_exec_parse *p, const char *arg)
{
	isd_strv_push(&p->spec->workspace.unmasks, isd_xstrdup(arg));
	return 0;
}

static int on_git_writable(struct isd_exec_parse *p, const char *arg)
{
	(void)arg;
	p->spec->workspace.git_writable = true;
	return 0;
}

/* A profile's netless options wait for the network mode (cli-internal.h). */
static int netless(struct isd_exec_parse *p, const char *arg, int (*apply)(struct isd_exec_parse *, const char *))
{
	if (strncmp(p->origin, "profile ", 8))
		return apply(p, arg);
	p->deferred = isd_xrealloc(p->deferred, (p->n_deferred + 1) * sizeof(*p->deferred));
	p->deferred[p->n_deferred++] = (struct isd_exec_deferred){
		.apply = apply, .arg = isd_xstrdup(arg), .origin = isd_xstrdup(p->origin)};
	return 0;
}

static int apply_allow(struct isd_exec_parse *p, const char *arg)
{
	if (arg[0] == '@') {
		_cleanup_free_ char *path = NULL;
		int r = isd_profile_find_allow_set(arg + 1, &path);
		return r < 0 ? r : isd_netcfg_read_allow_file(&p->spec->net, path);
	}
	return isd_netcfg_add_allow(&p->spec->net, arg, "--allow");
}

static int apply_allow_file(struct isd_exec_parse *p, const char *arg)
{
	return isd_netcfg_read_allow_file(&p->spec->net, arg);
}

static int apply_proxy_port(struct isd_exec_parse *p, const char *arg)
{
	return isd_netcfg_set_proxy_port(&p->spec->net, arg);
}

static int on_allow(struct isd_exec_parse *p, const char *arg)
{
	return netless(p, arg, apply_allow);
}

static int on_allow_file(struct isd_exec_parse *p, const char *arg)
{
	return netless(p, arg, apply_allow_file);
}

static int on_proxy_port(struct isd_exec_parse *p, const char *arg)
{
	return netless(p, arg, apply_proxy_port);
}

static int on_add_host(struct isd_exec_parse *p, const char *arg)
{
	return isd_netcfg_add_host(&p->spec->net, arg);
}

static int on_forward(struct isd_exec_parse *p, const char *arg)
{
	return isd_netcfg_add_forward(&p->spec->net, arg);
}

static int on_forward_unix(struct isd_exec_parse *p, const char *arg)
{
	return isd_netcfg_add_forward_unix(&p->spec->net, arg);
}

static int on_publish(struct isd_exec_parse *p, const char *arg)
{
	return isd_netcfg_add_publish(&p->spec->net, arg);
}

static int on_network_log(struct isd_exec_parse *p, const char *arg)
{
	return isd_netcfg_set_log(&p->spec->net, arg, p->caller->cwd);
}

static int on_unsafe_host_root(struct isd_exec_parse *p, const char *arg)
{
	(void)arg;
	p->spec->unsafe_host_root = true;
	return 0;
}

static int on_isolation(struct isd_exec_parse *p, const char *arg)
{
	enum isd_isolation tier;
	int r = isd_isolation_parse(arg, &tier);

	p->spec->isolation = (int)tier;
	return r;
}

static int on_storage_opt(struct isd_exec_parse *p, const char *arg)
{
	int r = isd_storage_parse_opt(&p->spec->storage, arg);

	if (r == 0) {
		_cleanup_free_ char *key = isd_xasprintf("storage:%.*s", (int)strcspn(arg, "="), arg);
		isd_spec_set_origin(p->spec, key, p->origin);
	}
	return r;
}

static int on_cap_add(struct isd_exec_parse *p, const char *arg)
{
	(void)p;
	return isd_error(0, "--cap-add %s: isd never grants capabilities", arg);
}

static int on_privileged(struct isd_exec_parse *p, const char *arg)
{
	(void)p, (void)arg;
	return isd_error(0, "--privileged: isd has no privileged mode");
}

static int on_memory(struct isd_exec_parse *p, const char *arg)
{
	struct isd_limits *l = &p->spec->limits;

	if (isd_parse_size(arg, &l->memory) < 0 || l->memory == 0)
		return isd_error(0, "--memory %s: invalid size (expected N[b|k|m|g])", arg);
	return 0;
}

static int on_memory_swap(struct isd_exec_parse *p, const char *arg)
{
	uint64_t v;

	if (!strcmp(arg, "-1")) {
		p->spec->limits.memory_swap = -1;
		return 0;
	}
	if (isd_parse_size(arg, &v) < 0 || v == 0 || v > INT64_MAX)
		return isd_error(0, "--memory-swap %s: invalid size (expected N[b|k|m|g] or -1)", arg);
	p->spec->limits.memory_swap = (int64_t)v;
	return 0;
}

static int on_memory_reservation(struct isd_exec_parse *p, const char *arg)
{
	if (isd_parse_size(arg, &p->spec->limits.memory_reservation) < 0)
		return isd_error(0, "--memory-reservation %s: invalid size", arg);
	return 0;
}

static int on_cpus(struct isd_exec_parse *p, const char *arg)
{
	struct isd_limits *l = &p->spec->limits;

	if (isd_options_parse_cpus(arg, l->cpu_period_us, &l->cpu_quota_us) < 0)
		return isd_error(0, "--cpus %s: invalid number of CPUs (expected e.g. 0.5 or 4, at least 0.01)", arg);
	return 0;
}

static int on_cpu_shares(struct isd_exec_parse *p, const char *arg)
{
	uint32_t shares;

	if (isd_parse_uint32(arg, &shares) < 0 || shares < 2 || shares > 262144)
		return isd_error(0, "--cpu-shares %s: expected 2..262144", arg);
	p->spec->limits.cpu_weight = isd_cgroup_shares_to_weight(shares);
	return 0;
}

static int on_cpu_weight(struct isd_exec_parse *p, const char *arg)
{
	uint32_t w;

	if (isd_parse_uint32(arg, &w) < 0 || w < 1 || w > 10000)
		return isd_error(0, "--cpu-weight %s: expected 1..10000", arg);
	p->spec->limits.cpu_weight = w;
	return 0;
}

static int on_cpuset_cpus(struct isd_exec_parse *p, const char *arg)
{
	if (!*arg || strspn(arg, "0123456789,-") != strlen(arg))
		return isd_error(0, "--cpuset-cpus %s: expected a CPU list like 0-3,6", arg);
	free(p->spec->limits.cpuset_cpus);
	p->spec->limits.cpuset_cpus = isd_xstrdup(arg);
	return 0;
}

static int on_pids_limit(struct isd_exec_parse *p, const char *arg)
{
	uint32_t n;

	if (!strcmp(arg, "-1") || !strcmp(arg, "0")) {
		p->spec->limits.pids_limit = -1;
		return 0;
	}
	if (isd_parse_uint32(arg, &n) < 0)
		return isd_error(0, "--pids-limit %s: expected a positive number or -1", arg);
	p->spec->limits.pids_limit = n;
	return 0;
}

static int on_blkio_weight(struct isd_exec_parse *p, const char *arg)
{
	uint32_t w;

	if (isd_parse_uint32(arg, &w) < 0 || w < 10 || w > 1000)
		return isd_error(0, "--blkio-weight %s: expected 10..1000", arg);
	p->spec->limits.blkio_weight = w;
	return 0;
}

static int on_limits(struct isd_exec_parse *p, const char *arg)
{
	if (!strcmp(arg, "strict"))
		p->spec->limits.mode = ISD_LIMITS_STRICT;
	else if (!strcmp(arg, "best-effort"))
		p->spec->limits.mode = ISD_LIMITS_BEST_EFFORT;
	else
		return isd_error(0, "--limits %s: expected strict or best-effort", arg);
	return 0;
}

static int on_help(struct isd_exec_parse *p, const char *arg)
{
	(void)p, (void)arg;
	isd_cli_exec_usage(stdout);
	return ISD_CLI_HELP_SHOWN;
}

/* Shorthands for the table: a value-taking option, a flag. */
#define VALUE(n, g, v, h, f) {.name = n, .takes_value = true, .group = g, .value_name = v, .help = h, .handle = f}
#define FLAG(n, g, h, f) {.name = n, .group = g, .help = h, .handle = f}
#define LIMIT(n, bit, v, h, f) \
	{.name = n, .takes_value = true, .group = ISD_EXEC_LIMITS, .value_name = v, .help = h, \
	 .origin_key = n, .limit = bit, .handle = f}

const struct isd_exec_option isd_exec_options[] = {
	{.name = "env", .short_name = 'e', .takes_value = true, .group = ISD_EXEC_PROCESS, .value_name = "NAME[=VALUE]",
	 .help = "set (or copy from your environment) a variable", .handle = on_env},
	VALUE("env-file", ISD_EXEC_PROCESS, "FILE", "NAME=VALUE lines", on_env_file),
	{.name = "volume", .short_name = 'v', .takes_value = true, .group = ISD_EXEC_MOUNTS,
	 .value_name = "SRC:DST[:ro|rw][,optional]",
	 .help = "bind a host path (recursive);\noptional: skip it when SRC does not exist", .handle = on_volume},
	VALUE("mount", ISD_EXEC_MOUNTS,
	      "type=bind,src=PATH,dst=PATH[,readonly]\ntype=tmpfs,dst=PATH[,tmpfs-size=N][,tmpfs-mode=OCTAL]",
	      "a bind or a tmpfs, as with docker run", on_mount),
	VALUE("tmpfs", ISD_EXEC_MOUNTS, "DST[:OPTS]",
	      "rw|ro, exec|noexec, size=N[k|m|g], mode=OCTAL,\nuid=N, gid=N (always nosuid,nodev; noexec\nunless exec)",
	      on_tmpfs),
	VALUE("device", ISD_EXEC_MOUNTS, "HOST[:CONTAINER][:PERMS]\nVENDOR/CLASS=NAME",
	      "bind a host device node (or each node in a\ndirectory) beneath /dev; PERMS r, w, m (default\nrwm; m is never granted); VENDOR/CLASS=NAME: a\nCDI device (nvidia.com/gpu=all)",
	      on_device),
	{.name = "workdir", .short_name = 'w', .takes_value = true, .group = ISD_EXEC_PROCESS, .value_name = "DIR",
	 .help = "working directory inside (default /)", .origin_key = "workdir", .handle = on_workdir},
	{.name = "user", .short_name = 'u', .takes_value = true, .group = ISD_EXEC_PROCESS, .value_name = "UID[:GID]",
	 .help = "ids the payload sees (default: yours)", .origin_key = "user", .handle = on_user},
	{.name = "hostname", .short_name = 'h', .takes_value = true, .group = ISD_EXEC_PROCESS, .value_name = "NAME",
	 .help = "host name inside (default isd)", .origin_key = "hostname", .handle = on_hostname},
	{.name = "network", .alias = "net", .takes_value = true, .group = ISD_EXEC_ISOLATION, .value_name = "MODE",
	 .help = "none (default): only loopback; netless: loopback\nplus isd's allowlist proxy (for agents); private:\n"
		 "own outbound network (pasta/slirp4netns); host",
	 .origin_key = "network", .handle = on_network},
	VALUE("rootfs", ISD_EXEC_ROOTFS, "DIR", "an unpacked root filesystem", on_rootfs),
	{.name = "image", .takes_value = true, .group = ISD_EXEC_ROOTFS, .value_name = "NAME",
	 .help = "image from the store; 'host' (default) is the\nhost's /usr, /etc, /opt read-only",
	 .origin_key = "image", .handle = on_image},
	FLAG("print-spec", ISD_EXEC_OTHER, "print the resolved sandbox as JSON and exit", on_print_spec),
	VALUE("security-opt", ISD_EXEC_ISOLATION, "seccomp=NAME|PATH|unconfined\nlandlock=off\nno-new-privileges[:true]",
	      "landlock=off: no Landlock ruleset behind the\nmounts; no-new-privileges: accepted, always so",
	      on_security_opt),
	VALUE("pid", ISD_EXEC_ISOLATION, "private|host", "host: no pid namespace, outer /proc read-only", on_pid),
	VALUE("ipc", ISD_EXEC_COMPAT, "private", "the sandbox's own IPC namespace", on_ipc),
	FLAG("rm", ISD_EXEC_COMPAT, "the sandbox never outlives its payload", on_ignored),
	{.name = "interactive", .short_name = 'i', .group = ISD_EXEC_PROCESS, .help = "with -t: forward stdin",
	 .handle = on_interactive},
	{.name = "tty", .short_name = 't', .group = ISD_EXEC_PROCESS,
	 .help = "a pseudo-terminal inside (default when stdin and\nstdout are terminals)", .handle = on_tty},
	FLAG("no-tty", ISD_EXEC_PROCESS, "no pseudo-terminal: stdio passed through as it is", on_no_tty),
	VALUE("profile", ISD_EXEC_AGENTS, "NAME|none",
	      "options from NAME.conf (~/.config/isd/profiles,\n/etc/isd/profiles, built in); a known agent as\n"
	      "COMMAND (omp, claude, codex, pi, ...) brings 'agent'",
	      on_profile),
	VALUE("agent", ISD_EXEC_AGENTS, "NAME", "the agent this sandbox is for (${AGENT})", on_agent),
	VALUE("agent-state", ISD_EXEC_AGENTS, "NAME", "bind the agent's state (~/.NAME, ...) read-write", on_agent_state),
	{.name = "project", .takes_value = true, .group = ISD_EXEC_WORKSPACE, .value_name = "DIR",
	 .help = "same as --workspace DIR:rw", .origin_key = "workspace", .handle = on_project},
	{.name = "workspace", .takes_value = true, .group = ISD_EXEC_WORKSPACE, .value_name = "DIR[:MODE]",
	 .help = "rw (default): bound read-write; ro; cow: changes\nland in a session (isd diff, apply, discard)",
	 .origin_key = "workspace", .handle = on_workspace},
	FLAG("workspace-keep", ISD_EXEC_WORKSPACE, "keep the cow session even without changes", on_workspace_keep),
	VALUE("session", ISD_EXEC_WORKSPACE, "ID", "re-enter a stopped cow session", on_session),
	VALUE("activity-log", ISD_EXEC_WORKSPACE, "FILE",
	      "record every command run inside in FILE (JSON\nLines; a cow session has one anyway: isd log)",
	      on_activity_log),
	VALUE("mask", ISD_EXEC_WORKSPACE, "GLOB",
	      "matching files appear empty and read-only\n(.env, *.pem, .aws/; gitignore-like)", on_mask),
	VALUE("unmask", ISD_EXEC_WORKSPACE, "GLOB", "exempt matching files from the masks", on_unmask),
	FLAG("git-writable", ISD_EXEC_WORKSPACE, "leave .git/hooks and .git/config writable", on_git_writable),
	VALUE("allow", ISD_EXEC_ISOLATION, "HOST[:PORT]",
	      "netless: allow HOST (*.domain, IP; port 443 by\ndefault, * = any; @npm, @pypi, ...: a set)", on_allow),
	VALUE("allow-file", ISD_EXEC_ISOLATION, "FILE", "netless: --allow lines, one a line", on_allow_file),
	VALUE("add-host", ISD_EXEC_ISOLATION, "NAME:IP", "NAME resolves to IP (netless: IP is allowed for NAME)",
	      on_add_host),
	VALUE("forward", ISD_EXEC_ISOLATION, "[PORT:]HOST:HPORT", "sandbox 127.0.0.1:PORT reaches HOST:HPORT on the host",
	      on_forward),
	VALUE("forward-unix", ISD_EXEC_ISOLATION, "SANDBOX_PATH:HOST_PATH", "same for a host unix socket",
	      on_forward_unix),
	{.name = "publish", .short_name = 'p', .takes_value = true, .group = ISD_EXEC_ISOLATION,
	 .value_name = "[IP:]HPORT:PORT",
	 .help = "the host's IP:HPORT (IP 127.0.0.1 by default)\nreaches a server on the sandbox's port PORT",
	 .handle = on_publish},
	VALUE("proxy-port", ISD_EXEC_ISOLATION, "N", "netless proxy port on 127.0.0.1 (default 3128)", on_proxy_port),
	VALUE("network-log", ISD_EXEC_ISOLATION, "FILE", "every connection: time, destination, verdict, bytes",
	      on_network_log),
	FLAG("read-only", ISD_EXEC_COMPAT, "the root is always read-only", on_ignored),
	VALUE("cap-drop", ISD_EXEC_COMPAT, "CAP", "every capability is dropped anyway", on_ignored),
	VALUE("cap-add", ISD_EXEC_REFUSED, "CAP", "isd never grants capabilities", on_cap_add),
	FLAG("privileged", ISD_EXEC_REFUSED, "isd has no privileged mode", on_privileged),
	FLAG("init", ISD_EXEC_COMPAT, "isd's init is always pid 1", on_ignored),
	VALUE("gpus", ISD_EXEC_MOUNTS, "all|NAME", "the CDI devices nvidia.com/gpu=all (or =NAME),\nas podman maps it",
	      on_gpus),
	VALUE("cdi-spec-dir", ISD_EXEC_MOUNTS, "DIR",
	      "read CDI specs from DIR instead of /etc/cdi and\n/var/run/cdi (also $ISD_CDI_SPEC_DIRS, a:b)", on_cdi_spec_dir),
	LIMIT("memory", ISD_LIMIT_MEMORY, "N", "memory.max (N[b|k|m|g]), at least 6 MiB", on_memory),
	LIMIT("memory-swap", ISD_LIMIT_MEMORY_SWAP, "N", "memory plus swap, as in Docker; -1: unlimited swap",
	      on_memory_swap),
	LIMIT("memory-reservation", ISD_LIMIT_MEMORY_RESERVATION, "N", "memory.low, at most --memory",
	      on_memory_reservation),
	LIMIT("cpus", ISD_LIMIT_CPUS, "N.N", "CPU quota in CPUs (cpu.max), at least 0.01", on_cpus),
	LIMIT("cpu-shares", ISD_LIMIT_CPU_SHARES, "N", "Docker's CPU weight 2..262144 (1024: the default)",
	      on_cpu_shares),
	LIMIT("cpu-weight", ISD_LIMIT_CPU_WEIGHT, "N", "cpu.weight 1..10000", on_cpu_weight),
	LIMIT("cpuset-cpus", ISD_LIMIT_CPUSET_CPUS, "LIST", "CPUs to run on, such as 0-3,6", on_cpuset_cpus),
	LIMIT("pids-limit", ISD_LIMIT_PIDS_LIMIT, "N", "processes and threads (pids.max); 0, -1: unlimited",
	      on_pids_limit),
	LIMIT("blkio-weight", ISD_LIMIT_BLKIO_WEIGHT, "N", "Docker's block I/O weight 10..1000 (io.weight)",
	      on_blkio_weight),
	VALUE("limits", ISD_EXEC_LIMITS, "strict|best-effort",
	      "a limit the host cannot enforce: fail (strict,\nthe default) or warn and drop it", on_limits),
	VALUE("storage-opt", ISD_EXEC_STORAGE, "size=N|inodes=N|min-free=N|N%", "the disk (see isd-exec(1))",
	      on_storage_opt),
	FLAG("unsafe-host-root", ISD_EXEC_OTHER,
	     "as root: run the payload as the host's uid 0\n(default: an unprivileged id, root's files idmapped)",
	     on_unsafe_host_root),
	{.name = "isolation", .takes_value = true, .group = ISD_EXEC_ISOLATION, .value_name = "full|auto|landlock",
	 .help = "full (default): namespaces; landlock: none,\nLandlock and seccomp only; auto: the strongest here",
	 .origin_key = "isolation", .handle = on_isolation},
	FLAG("help", ISD_EXEC_OTHER, "print this help and exit", on_help),
};

const size_t isd_exec_n_options = sizeof(isd_exec_options) / sizeof(isd_exec_options[0]);
