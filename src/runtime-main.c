/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd-runtime: runc's command line over isd's sandbox, for the engines that
 * swap their runtime (podman --runtime, containerd's runc shim BinaryName,
 * CRI-O runtime_path).  Global options come before the command, as conmon
 * and go-runc put them: --root, --log, --log-format, --systemd-cgroup,
 * --debug.  Failures exit 1 with one line on stderr, and in the --log file,
 * where conmon and podman look for runc's JSON ({"msg","level","time"}).
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "userns.h"
#include "isd/util.h"
#include "isd/visible.h"

#include <fcntl.h>
#include <stdint.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

struct rt_global rt_global;
static char *log_path;
static bool log_json;

static void usage(FILE *out)
{
	fputs("Usage: isd-runtime [GLOBAL OPTIONS] COMMAND [OPTIONS] ID\n"
	      "\n"
	      "An OCI runtime with runc's command line over isd's sandbox (isd-runtime(8)).\n"
	      "\n"
	      "Commands:\n"
	      "  create --bundle DIR [--pid-file F] [--console-socket S] ID   create, stopped before the payload\n"
	      "  start ID                      let a created container's payload run\n"
	      "  run [--bundle DIR] [-d] ID    create and start; attached: exits with the payload's status\n"
	      "  state ID                      the container's state (JSON)\n"
	      "  kill [--all] ID [SIGNAL]      signal the container (default TERM)\n"
	      "  delete [--force] ID           remove a stopped container (--force: any)\n"
	      "  list [--format table|json] [-q]  the containers under --root\n"
	      "  ps [--format table|json] ID   the container's processes\n"
	      "  exec [OPTIONS] ID [CMD...]    run one more process in a running container\n"
	      "  pause ID, resume ID           freeze and thaw the container's cgroup\n"
	      "  update [--resources FILE|-] ID   change the limits of the container's cgroup\n"
	      "  features                      what this runtime supports (JSON)\n"
	      "  spec [--rootless] [--bundle DIR]  write a default config.json\n"
	      "\n"
	      "Global options:\n"
	      "  --root DIR            state directory (/run/isd-runtime as the host's root,\n"
	      "                        else $XDG_RUNTIME_DIR/isd-runtime)\n"
	      "  --log FILE            append errors and warnings to FILE\n"
	      "  --log-format text|json\n"
	      "  --systemd-cgroup      cgroupsPath is slice:prefix:name\n"
	      "  --debug               accepted\n"
	      "  --version             print the version\n",
	      out);
}

static void log_line(const char *level, const char *msg)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *line = NULL;
	struct timeval tv;
	struct tm tm;
	char stamp[64];

	if (!log_path)
		return;
	fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0)
		return;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec);
	if (log_json) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "msg", json_object_new_string(msg));
		json_object_object_add(o, "level", json_object_new_string(level));
		json_object_object_add(o, "time", json_object_new_string(stamp));
		line = isd_xasprintf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		line = isd_xasprintf("%s %s: %s\n", stamp, level, msg);
	}
	(void)isd_write_all(fd, line, strlen(line));
}

static void report(const char *level, const char *msg)
{
	_cleanup_free_ char *v = isd_visible_str(msg);

	if (strcmp(level, "error") == 0)
		fprintf(stderr, "isd-runtime: %s\n", v);
	else
		fprintf(stderr, "isd-runtime: %s: %s\n", level, v);
	log_line(level, msg);
}

int rt_fail(void)
{
	report("error", isd_error_message()[0] ? isd_error_message() : "failed");
	return RT_EXIT_FAILURE;
}

__attribute__((format(printf, 2, 0))) static void vreport(const char *level, const char *fmt, va_list ap)
{
	char buf[ISD_ERROR_MAX];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	report(level, buf);
}

int rt_failf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error", fmt, ap);
	va_end(ap);
	return RT_EXIT_FAILURE;
}

void rt_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning", fmt, ap);
	va_end(ap);
}

static const struct rt_opt *find_opt(const struct rt_opt *opts, const char *name, size_t len, char short_name)
{
	for (; opts && opts->name; opts++)
		if (short_name ? opts->short_name == short_name
			       : strlen(opts->name) == len && strncmp(opts->name, name, len) == 0)
			return opts;
	return NULL;
}

/* urfave/cli's forms, as runc takes them: --name, -name, --name=V,
 * --name V, -n V; "--" ends the options.  Options may also follow the
 * operands (go-runc puts the id last, people often put it first), but a
 * command's own argv (run, exec) is left alone with stop_at_operand. */
bool rt_next(struct rt_args *a)
{
	while (a->i < a->argc) {
		char *arg = a->argv[a->i++];
		const struct rt_opt *o;
		const char *name, *eq;

		if (a->done || arg[0] != '-' || !arg[1]) {
			if (a->stop_at_operand)
				a->done = true;
			a->id = 0;
			a->value = arg;
			return true;
		}
		if (strcmp(arg, "--") == 0) {
			a->done = true;
			continue;
		}
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			a->usage(stdout);
			a->exit = 0;
			return false;
		}
		name = arg + (arg[1] == '-' ? 2 : 1);
		eq = strchr(name, '=');
		o = find_opt(a->opts, name, eq ? (size_t)(eq - name) : strlen(name), 0);
		if (!o && arg[1] != '-' && !arg[2])
			o = find_opt(a->opts, NULL, 0, arg[1]);
		if (!o) {
			a->exit = rt_failf("%s: unknown option '%s' (see isd-runtime %s --help)", a->cmd, arg, a->cmd);
			return false;
		}
		a->id = o->id;
		a->value = NULL;
		if (o->takes_value) {
			if (eq)
				a->value = eq + 1;
			else if (a->i < a->argc)
				a->value = a->argv[a->i++];
			else {
				a->exit = rt_failf("%s: option '%s' needs a value", a->cmd, arg);
				return false;
			}
		} else if (eq) {
			/* --all=true, as urfave/cli's boolean flags take it */
			if (strcmp(eq + 1, "false") == 0)
				continue;
		}
		return true;
	}
	return false;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{"create", rt_cmd_create}, {"start", rt_cmd_start}, {"run", rt_cmd_run},       {"state", rt_cmd_state},
	{"kill", rt_cmd_kill},     {"delete", rt_cmd_delete}, {"list", rt_cmd_list},   {"ps", rt_cmd_ps},
	{"features", rt_cmd_features}, {"spec", rt_cmd_spec}, {"exec", rt_cmd_exec},
	{"pause", rt_cmd_pause}, {"resume", rt_cmd_resume}, {"update", rt_cmd_update},
};

enum { G_ROOT = 1, G_LOG, G_LOG_FORMAT, G_SYSTEMD_CGROUP, G_DEBUG, G_VERSION, G_ROOTLESS, G_CRIU };

static const struct rt_opt global_opts[] = {
	{"root", 0, true, G_ROOT},
	{"log", 0, true, G_LOG},
	{"log-format", 0, true, G_LOG_FORMAT},
	{"systemd-cgroup", 0, false, G_SYSTEMD_CGROUP},
	{"debug", 0, false, G_DEBUG},
	{"version", 'v', false, G_VERSION},
	{"rootless", 0, true, G_ROOTLESS}, /* runc's auto|true|false: isd is the same either way */
	{"criu", 0, true, G_CRIU},
	{0},
};

static char *default_root(void)
{
	const char *run = isd_runtime_dir(), *user = getenv("USER");

	/* runc's rule: the root of another user namespace than the first
	 * (rootless podman runs its runtime there) is a user, and its /run
	 * is the host's, not writable */
	if (geteuid() == 0 && (!run || isd_userns_ids_mapped("/proc/self/uid_map", 0, UINT32_MAX) ||
			       (user && !strcmp(user, "root"))))
		return isd_xstrdup("/run/isd-runtime");
	if (!run)
		return NULL;
	return isd_xasprintf("%s/isd-runtime", run);
}

int main(int argc, char **argv)
{
	struct rt_args a = RT_ARGS("isd-runtime", global_opts, usage, argc, argv);

	a.stop_at_operand = true;
	while (rt_next(&a)) {
		switch (a.id) {
		case G_ROOT: {
			char cwd[4096];
			free(rt_global.root);
			/* absolute: the sandbox is handed paths below it */
			rt_global.root = a.value[0] == '/' || !getcwd(cwd, sizeof(cwd))
						 ? isd_xstrdup(a.value)
						 : isd_xasprintf("%s/%s", cwd, a.value);
			break;
		}
		case G_LOG:
			free(log_path);
			log_path = a.value[0] ? isd_xstrdup(a.value) : NULL;
			break;
		case G_LOG_FORMAT:
			if (strcmp(a.value, "json") && strcmp(a.value, "text"))
				return rt_failf("--log-format %s: not text or json", a.value);
			log_json = strcmp(a.value, "json") == 0;
			break;
		case G_SYSTEMD_CGROUP:
			rt_global.systemd_cgroup = true;
			break;
		case G_DEBUG:
			rt_global.debug = true;
			break;
		case G_VERSION:
			printf("isd-runtime version %s\nspec: 1.1.0\n", ISD_VERSION);
			return 0;
		case G_ROOTLESS:
		case G_CRIU:
			break;
		case 0:
			/* spec and features need none: a missing one is said by rt_root_open */
			if (!rt_global.root)
				rt_global.root = default_root();
			for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
				if (strcmp(a.value, commands[i].name) == 0)
					return commands[i].run(argc - a.i + 1, argv + a.i - 1);
			return rt_failf("unknown command '%s' (see isd-runtime --help)", a.value);
		}
	}
	if (a.exit >= 0)
		return a.exit;
	usage(stderr);
	return RT_EXIT_FAILURE;
}
