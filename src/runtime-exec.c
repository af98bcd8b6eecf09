/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * exec: one more process in a running container, as conmon (exec
 * --process FILE --detach --pid-file F [--console-socket S] ID) and
 * containerd's shim ask for it.  The process gets the container's own
 * confinement (isd_sandbox_enter): the spec is the container's config
 * again, with the process (args, env, cwd, user, terminal) replaced.
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "oci-config.h"
#include "isd/oci.h"
#include "isd/process.h"
#include "isd/sandbox.h"
#include "isd/util.h"
#include "pty.h"
#include "userns.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

struct exec_opts {
	const char *id, *process, *console_socket, *pid_file, *cwd, *user;
	char **env;  /* --env */
	char **caps; /* --cap */
	char **argv; /* after the id */
	int tty;     /* -1: as --process or the config says */
	bool detach;
	bool no_new_privs; /* --no-new-privs */
	uint32_t preserve_fds; /* --preserve-fds: 3 .. 3+N-1 go to the process */
	char **gids; /* --additional-gids, each a gid or a comma-separated list */
};

enum { E_PROCESS = 1, E_TTY, E_CONSOLE_SOCKET, E_DETACH, E_PID_FILE, E_CWD, E_ENV, E_USER, E_CAP, E_NO_NEW_PRIVS,
       E_PRESERVE_FDS, E_LABEL, E_APPARMOR, E_ADDITIONAL_GIDS, E_IGNORE_PAUSED, E_CGROUP };

static const struct rt_opt exec_table[] = {
	{"process", 'p', true, E_PROCESS},
	{"tty", 't', false, E_TTY},
	{"console-socket", 0, true, E_CONSOLE_SOCKET},
	{"detach", 'd', false, E_DETACH},
	{"pid-file", 0, true, E_PID_FILE},
	{"cwd", 0, true, E_CWD},
	{"env", 'e', true, E_ENV},
	{"user", 'u', true, E_USER},
	{"cap", 'c', true, E_CAP},
	{"no-new-privs", 0, false, E_NO_NEW_PRIVS},
	{"preserve-fds", 0, true, E_PRESERVE_FDS},
	{"process-label", 0, true, E_LABEL},
	{"apparmor", 0, true, E_APPARMOR},
	{"additional-gids", 'g', true, E_ADDITIONAL_GIDS},
	{"ignore-paused", 0, false, E_IGNORE_PAUSED},
	{"cgroup", 0, true, E_CGROUP},
	{0},
};

static void exec_usage(FILE *out)
{
	fputs("Usage: isd-runtime exec [OPTIONS] ID [COMMAND [ARG...]]\n"
	      "Run COMMAND, or the process of --process FILE (a config.json process\n"
	      "object), in the running container ID, confined as its payload is.\n"
	      "  -p, --process FILE     the process (args, env, cwd, user, terminal)\n"
	      "  -t, --tty              a terminal (sent to --console-socket, or relayed)\n"
	      "      --console-socket S where the terminal's master goes\n"
	      "  -d, --detach           return once it runs (else: exit with its status)\n"
	      "      --pid-file FILE    its pid\n"
	      "      --cwd DIR, -e NAME=VALUE, -u UID[:GID]\n"
	      "  -c, --cap CAP          one more capability (the container's sets, or the file's, else)\n"
	      "      --no-new-privs     set no_new_privs\n"
	      "  -g, --additional-gids G  its groups (the container's additionalGids, else)\n",
	      out);
}

static int parse_exec(int argc, char **argv, struct exec_opts *o)
{
	struct rt_args a = RT_ARGS("exec", exec_table, exec_usage, argc, argv);
	uint32_t n;

	while (rt_next(&a)) {
		switch (a.id) {
		case E_PROCESS: o->process = a.value; break;
		case E_TTY: o->tty = 1; break;
		case E_CONSOLE_SOCKET: o->console_socket = a.value; break;
		case E_DETACH: o->detach = true; break;
		case E_PID_FILE: o->pid_file = a.value; break;
		case E_CWD: o->cwd = a.value; break;
		case E_ENV: isd_strv_push(&o->env, isd_xstrdup(a.value)); break;
		case E_USER: o->user = a.value; break;
		case E_CAP: isd_strv_push(&o->caps, isd_xstrdup(a.value)); break;
		case E_NO_NEW_PRIVS: o->no_new_privs = true; break;
		case E_PRESERVE_FDS:
			if (isd_parse_uint32(a.value, &n) < 0 || n > RT_MAX_PRESERVED_FDS)
				return rt_failf("exec: --preserve-fds %s: not a count of descriptors (0 to %d)", a.value,
						RT_MAX_PRESERVED_FDS);
			o->preserve_fds = n;
			break;
		case E_LABEL:
		case E_APPARMOR:
			if (a.value[0])
				return rt_failf("exec: %s: isd-runtime supports neither SELinux labels nor AppArmor profiles",
						a.value);
			break;
		case E_ADDITIONAL_GIDS: isd_strv_push(&o->gids, isd_xstrdup(a.value)); break;
		case 0:
			if (!o->id) {
				o->id = a.value;
				a.stop_at_operand = true; /* the rest is the command's */
				a.done = false;
			} else {
				isd_strv_push(&o->argv, isd_xstrdup(a.value));
			}
			break;
		default: /* --ignore-paused, --cgroup */
			break;
		}
	}
	if (a.exit >= 0)
		return a.exit;
	if (!o->id)
		return rt_failf("exec: a container id is needed (usage: isd-runtime exec [OPTIONS] ID [COMMAND...])");
	if (!o->process && !o->argv)
		return rt_failf("exec: no command: give one after the id, or --process FILE");
	return -1;
}

static char **json_strv(json_object *a)
{
	char **v = NULL;

	for (size_t i = 0; a && json_object_is_type(a, json_type_array) && i < json_object_array_length(a); i++)
		isd_strv_push(&v, isd_xstrdup(json_object_get_string(json_object_array_get_idx(a, i))));
	return v;
}

/* --process FILE: the fields of config.json's process that an exec
 * changes; the others stay the container's. */
/* --process rlimits replace the config's, as runc's exec takes them. */
static int process_rlimits(const char *path, json_object *v, struct isd_spec *spec)
{
	size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;

	free(spec->rlimits);
	spec->rlimits = isd_xcalloc(n ? n : 1, sizeof(*spec->rlimits));
	spec->n_rlimits = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *l = json_object_array_get_idx(v, i), *t, *soft, *hard;
		const char *type = json_object_object_get_ex(l, "type", &t) ? json_object_get_string(t) : NULL;
		int res = 0;

		while (res < RLIM_NLIMITS && !(type && !strcmp(type, oci_rlimit_name(res)) && strcmp(type, "?")))
			res++;
		if (res == RLIM_NLIMITS || !json_object_object_get_ex(l, "soft", &soft) ||
		    !json_object_object_get_ex(l, "hard", &hard))
			return RT_ERR(-EINVAL, "exec: --process %s: rlimits[%zu]: not a known type with soft and hard",
				      path, i);
		spec->rlimits[spec->n_rlimits++] = (struct isd_spec_rlimit){res, json_object_get_uint64(soft),
									    json_object_get_uint64(hard)};
	}
	return 0;
}

static int apply_process_file(const char *path, struct isd_spec *spec)
{
	_cleanup_free_ char *text = NULL;
	json_object *o, *v, *u;
	int r = isd_read_file_at(AT_FDCWD, path, &text, NULL);

	if (r < 0)
		return isd_error(r, "exec: reading --process %s", path);
	o = json_tokener_parse(text);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return RT_ERR(-EINVAL, "exec: --process %s is not a JSON object", path);
	}
	if (json_object_object_get_ex(o, "args", &v)) {
		isd_strv_free(spec->argv);
		spec->argv = json_strv(v);
	}
	if (json_object_object_get_ex(o, "env", &v)) {
		isd_strv_free(spec->env);
		spec->env = json_strv(v);
	}
	if (json_object_object_get_ex(o, "cwd", &v) && json_object_is_type(v, json_type_string)) {
		free(spec->workdir);
		spec->workdir = isd_xstrdup(json_object_get_string(v));
	}
	if (json_object_object_get_ex(o, "rlimits", &v) && (r = process_rlimits(path, v, spec)) < 0) {
		json_object_put(o);
		return r;
	}
	/* The file is the whole process: Go's encoders (podman, conmon's
	 * callers) leave a false terminal out, so absent is false, not the
	 * container's (a container with -t, exec without) */
	spec->tty = json_object_object_get_ex(o, "terminal", &v) && json_object_get_boolean(v);
	/* its capabilities too, as runc takes them (none when absent); a
	 * container under run.oci.isd.capabilities=none keeps isd's rule */
	if (spec->config_caps &&
	    (r = isd_oci_process_caps(text, strlen(text), path, &spec->caps, &spec->no_new_privs)) < 0) {
		json_object_put(o);
		return r;
	}
	if (json_object_object_get_ex(o, "user", &u)) {
		if (json_object_object_get_ex(u, "uid", &v))
			spec->uid = (uint32_t)json_object_get_int64(v);
		if (json_object_object_get_ex(u, "gid", &v))
			spec->gid = (uint32_t)json_object_get_int64(v);
		/* the file's user is the whole user: its groups or none */
		free(spec->groups);
		spec->groups = NULL;
		spec->n_groups = 0;
		if (json_object_object_get_ex(u, "additionalGids", &v) && json_object_is_type(v, json_type_array)) {
			size_t n = json_object_array_length(v);
			spec->groups = isd_xcalloc(n ? n : 1, sizeof(*spec->groups));
			for (size_t i = 0; i < n; i++) {
				int64_t g = json_object_get_int64(json_object_array_get_idx(v, i));
				if (g < 0 || g > UINT32_MAX) {
					json_object_put(o);
					return RT_ERR(-EINVAL, "exec: --process %s: user.additionalGids[%zu]: not a gid", path, i);
				}
				spec->groups[spec->n_groups++] = (uint32_t)g;
			}
		}
	}
	json_object_put(o);
	if (!spec->argv || !spec->argv[0])
		return RT_ERR(-EINVAL, "exec: --process %s: no args", path);
	return 0;
}

/* Without the config's uidMappings isd maps the payload's own uid and gid
 * only (podman's rootful and rootless configs have none): another user's
 * exec fails here by name, not at setresuid(2)'s EINVAL in the sandbox. */
static int ids_mapped(pid_t pid, const struct isd_spec *spec)
{
	char uid_map[40], gid_map[40];

	snprintf(uid_map, sizeof(uid_map), "/proc/%d/uid_map", (int)pid);
	snprintf(gid_map, sizeof(gid_map), "/proc/%d/gid_map", (int)pid);
	if (access(uid_map, R_OK) < 0 || access(gid_map, R_OK) < 0)
		return 0;
	for (size_t i = 0; i < spec->n_groups; i++)
		if (spec->groups[i] != spec->gid && !isd_userns_ids_mapped(gid_map, spec->groups[i], 1))
			return RT_ERR(-EINVAL, "exec: additional group %u: not an id of the container's user namespace "
					       "(its map holds the config's groups only)", spec->groups[i]);
	if (isd_userns_ids_mapped(uid_map, spec->uid, 1) && isd_userns_ids_mapped(gid_map, spec->gid, 1))
		return 0;
	return RT_ERR(-EINVAL, "exec: user %u:%u: not an id of the container's user namespace (isd maps the "
			       "container's own user only, without linux.uidMappings: exec as that user)",
		      spec->uid, spec->gid);
}

static int apply_options(const struct exec_opts *o, struct isd_spec *spec)
{
	if (o->argv) {
		isd_strv_free(spec->argv);
		spec->argv = isd_strv_copy(o->argv);
	}
	for (size_t i = 0; o->env && o->env[i]; i++) {
		_cleanup_free_ char *name = isd_xstrdup(o->env[i]);
		char *eq = strchr(name, '=');
		if (!eq)
			return RT_ERR(-EINVAL, "exec: --env %s: not NAME=VALUE", o->env[i]);
		*eq = '\0';
		isd_spec_setenv(spec, name, eq + 1);
	}
	if (o->cwd) {
		if (o->cwd[0] != '/')
			return RT_ERR(-EINVAL, "exec: --cwd %s: not an absolute path", o->cwd);
		free(spec->workdir);
		spec->workdir = isd_xstrdup(o->cwd);
	}
	if (o->user) {
		_cleanup_free_ char *u = isd_xstrdup(o->user);
		char *colon = strchr(u, ':');
		if (colon)
			*colon++ = '\0';
		if (isd_parse_uint32(u, &spec->uid) < 0 || (colon && isd_parse_uint32(colon, &spec->gid) < 0))
			return RT_ERR(-EINVAL, "exec: --user %s: not UID[:GID]", o->user);
	}
	/* runc's --additional-gids: the process's groups instead of the
	 * config's */
	if (o->gids) {
		free(spec->groups);
		spec->groups = NULL;
		spec->n_groups = 0;
		for (size_t i = 0; o->gids[i]; i++) {
			_cleanup_free_ char *list = isd_xstrdup(o->gids[i]);
			char *save = NULL;
			for (char *g = strtok_r(list, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
				uint32_t id;
				if (isd_parse_uint32(g, &id) < 0)
					return RT_ERR(-EINVAL, "exec: --additional-gids %s: not a gid", o->gids[i]);
				spec->groups = isd_xrealloc(spec->groups, (spec->n_groups + 1) * sizeof(*spec->groups));
				spec->groups[spec->n_groups++] = id;
			}
		}
	}
	if (o->tty >= 0)
		spec->tty = o->tty;
	/* runc's --cap: bounding, effective and permitted, ambient where the
	 * process has inheritable ones to raise it with */
	for (size_t i = 0; o->caps && o->caps[i]; i++) {
		unsigned cap;
		uint64_t bit;

		if (isd_oci_cap_from_name(o->caps[i], &cap) < 0)
			return RT_ERR(-EINVAL, "exec: --cap %s: not a capability isd knows", o->caps[i]);
		if (!spec->config_caps)
			return RT_ERR(-EPERM, "exec: --cap %s: the container runs under run.oci.isd.capabilities=none, "
					      "which grants no capability to any of its processes", o->caps[i]);
		bit = UINT64_C(1) << cap;
		spec->caps.bounding |= bit;
		spec->caps.effective |= bit;
		spec->caps.permitted |= bit;
		if (spec->caps.inheritable)
			spec->caps.ambient |= bit & spec->caps.inheritable;
	}
	if (o->no_new_privs)
		spec->no_new_privs = true;
	return 0;
}

/* The process whose namespaces exec joins: the payload, init's first
 * child.  Not init itself: it is not dumpable (nothing of the sandbox may
 * reach it), and entering a process's namespaces by its pidfd needs
 * ptrace's read access to it. */
static pid_t payload_of(const struct rt_state *st)
{
	size_t n;
	_cleanup_free_ pid_t *pids = rt_container_pids(st, &n);
	pid_t best = -1;
	uint64_t best_start = 0;

	for (size_t i = 1; i < n; i++) {
		uint64_t start = rt_pid_start_time(pids[i]);
		if (rt_pid_parent(pids[i]) == st->pid && start && (best < 0 || start < best_start)) {
			best = pids[i];
			best_start = start;
		}
	}
	return best;
}

int rt_cmd_exec(int argc, char **argv)
{
	struct exec_opts o = {.tty = -1};
	struct isd_spec spec;
	struct isd_oci_extra extra;
	struct isd_sandbox_entered e = {.pid = -1, .pty_master = -1};
	struct isd_pty_child child = {.pid = -1};
	struct rt_state st = {0};
	_cleanup_close_ int dirfd = -1;
	_cleanup_free_ int *preserved = NULL;
	int r = parse_exec(argc, argv, &o), status = 0, code;
	bool have_state = false;
	pid_t target;

	if (r >= 0)
		goto done;
	isd_spec_init(&spec);
	isd_oci_extra_init(&extra);
	r = rt_container_lock(o.id, false, &dirfd);
	if (r == 0 && (r = rt_state_read(dirfd, o.id, &st)) == 0)
		have_state = true;
	if (r == 0 && st.status != RT_RUNNING && st.status != RT_CREATED)
		r = RT_ERR(-ESRCH, "exec: container %s is not running (%s)", o.id, rt_status_name(st.status));
	/* the container's config again, its process replaced */
	if (r == 0)
		r = rt_load_bundle(st.bundle, o.id, &spec, &extra);
	/* An exec'd process takes the container's capabilities and
	 * noNewPrivileges (its process file's, with --process), as with runc:
	 * it joins the namespaces of a payload that holds them already. */
	if (r == 0 && o.process)
		r = apply_process_file(o.process, &spec);
	if (r == 0)
		r = apply_options(&o, &spec);
	if (r == 0 && faccessat(dirfd, RT_SECCOMP, F_OK, 0) == 0)
		rt_seccomp_from_state(&spec, o.id);
	if (r == 0 && spec.tty && !o.console_socket && o.detach)
		r = RT_ERR(-EINVAL, "exec: a terminal with --detach needs --console-socket to receive it");
	/* the container may be stopped, deleted or exec'd into meanwhile */
	if (dirfd >= 0)
		flock(dirfd, LOCK_UN);
	if (r < 0) {
		r = rt_fail();
		goto out;
	}
	rt_default_home(&spec);
	target = st.status == RT_RUNNING ? payload_of(&st) : -1;
	if ((r = ids_mapped(target > 0 ? target : st.pid, &spec)) < 0) {
		r = rt_fail();
		goto out;
	}
	if ((r = rt_copy_preserved(o.preserve_fds, &preserved)) < 0) {
		r = rt_fail();
		goto out;
	}
	e.preserved_fds = preserved;
	e.n_preserved_fds = o.preserve_fds;
	code = isd_sandbox_enter(&spec, target > 0 ? target : st.pid, st.cgroup, &e);
	/* the process has its own now (or none came to be) */
	for (size_t i = 0; preserved && i < o.preserve_fds; i++)
		close(preserved[i]);
	free(preserved);
	preserved = NULL;
	if (code == ISD_EXIT_NOT_FOUND)
		rt_not_found_hint();
	if (code != 0) {
		r = rt_fail();
		goto out;
	}
	if (e.pty_master >= 0 && o.console_socket && rt_send_console(o.console_socket, e.pty_master) < 0)
		r = -1;
	if (r < 0 || (o.pid_file && rt_write_pid_file(o.pid_file, e.pid) < 0)) {
		kill(e.pid, SIGKILL);
		isd_kill_and_reap(&e.pid);
		r = rt_fail();
		goto out;
	}
	if (o.detach) {
		r = 0;
		goto out;
	}
	child.pid = e.pid;
	if (e.pty_master >= 0 && !o.console_socket)
		(void)isd_pty_run(&e.pty_master, isatty(STDIN_FILENO), &child);
	if (child.reaped)
		status = child.status;
	else
		isd_wait_pid(e.pid, &status);
	r = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : RT_EXIT_FAILURE;
out:
	if (e.pty_master >= 0)
		close(e.pty_master);
	if (have_state)
		rt_state_free(&st);
	isd_spec_free(&spec);
	isd_oci_extra_free(&extra);
done:
	isd_strv_free(o.env);
	isd_strv_free(o.caps);
	isd_strv_free(o.gids);
	isd_strv_free(o.argv);
	return r;
}
