/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime-spec's hooks that run in the runtime's namespaces: prestart
 * and createRuntime at create (a failure fails the create), poststart
 * after start and poststop at delete (a failure is a warning).  Each gets
 * the container's state on its standard input.  The hooks start and
 * delete need are kept in the state at create (hooks_json), since the
 * bundle may be gone by then.
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "isd/oci.h"
#include "isd/process.h"
#include "isd/util.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static json_object *strv_json(char *const *v)
{
	json_object *a = json_object_new_array();

	for (; v && *v; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

char *rt_hooks_to_json(const struct isd_oci_extra *x)
{
	static const enum isd_oci_hook_kind kept[] = {ISD_OCI_HOOK_POSTSTART, ISD_OCI_HOOK_POSTSTOP};
	json_object *o = json_object_new_object();
	char *s;

	for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++) {
		const struct isd_oci_hooks *hs = &x->hooks[kept[k]];
		json_object *a = json_object_new_array();

		for (size_t i = 0; i < hs->n; i++) {
			json_object *h = json_object_new_object();
			json_object_object_add(h, "path", json_object_new_string(hs->hooks[i].path));
			json_object_object_add(h, "args", strv_json(hs->hooks[i].args));
			json_object_object_add(h, "env", strv_json(hs->hooks[i].env));
			json_object_object_add(h, "timeout", json_object_new_int(hs->hooks[i].timeout));
			json_object_array_add(a, h);
		}
		json_object_object_add(o, isd_oci_hook_name(kept[k]), a);
	}
	s = isd_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

/* Until the hook exits, at most timeout seconds (0: no bound). */
static int wait_hook(pid_t pid, int timeout, int *status)
{
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	if (pidfd >= 0 && timeout > 0) {
		int n;
		do
			n = poll(&p, 1, timeout * 1000);
		while (n < 0 && errno == EINTR);
		if (n == 0) {
			kill(pid, SIGKILL);
			isd_wait_pid(pid, status);
			return -ETIMEDOUT;
		}
	}
	return isd_wait_pid(pid, status);
}

static int run_one(const char *kind, const char *path, char **args, char **env, int timeout, const char *state)
{
	char *const def_args[] = {(char *)path, NULL};
	char *const no_env[] = {NULL};
	int in[2], status, r;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0)
		return isd_error(-errno, "running the %s hook %s", kind, path);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(in[0]);
		close(in[1]);
		return isd_error(r, "running the %s hook %s", kind, path);
	}
	if (pid == 0) {
		dup2(in[0], STDIN_FILENO);
		/* the hook's output is the runtime's log, not the container's */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execve(path, args && args[0] ? args : def_args, env ? env : no_env);
		_exit(127);
	}
	close(in[0]);
	signal(SIGPIPE, SIG_IGN);
	(void)isd_write_all(in[1], state, strlen(state));
	close(in[1]);
	r = wait_hook(pid, timeout, &status);
	if (r == -ETIMEDOUT)
		return RT_ERR(-ETIMEDOUT, "the %s hook %s did not end within its timeout of %d s", kind, path, timeout);
	if (r < 0)
		return isd_error(r, "waiting for the %s hook %s", kind, path);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		return RT_ERR(-EIO, "the %s hook %s failed with exit status %d", kind, path, WEXITSTATUS(status));
	return RT_ERR(-EIO, "the %s hook %s was killed by signal %d", kind, path, WTERMSIG(status));
}

/* The state JSON a hook reads, with the status given. */
static char *hook_state(const struct rt_state *st, enum rt_status status)
{
	struct rt_state copy = *st;

	copy.status = status;
	return rt_state_json(&copy, false);
}

int rt_run_config_hooks(const struct isd_oci_extra *x, enum isd_oci_hook_kind kind, const struct rt_state *st,
			enum rt_status status)
{
	const struct isd_oci_hooks *hs = &x->hooks[kind];
	_cleanup_free_ char *state = hs->n ? hook_state(st, status) : NULL;

	for (size_t i = 0; i < hs->n; i++) {
		int r = run_one(isd_oci_hook_name(kind), hs->hooks[i].path, hs->hooks[i].args, hs->hooks[i].env,
				hs->hooks[i].timeout, state);
		if (r < 0)
			return r;
	}
	return 0;
}

static char **get_strv(json_object *h, const char *key)
{
	json_object *a;
	char **v = NULL;

	if (!json_object_object_get_ex(h, key, &a))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(a); i++)
		isd_strv_push(&v, isd_xstrdup(json_object_get_string(json_object_array_get_idx(a, i))));
	return v;
}

void rt_run_kept_hooks(const struct rt_state *st, const char *kind, enum rt_status status)
{
	json_object *o, *list, *v;
	_cleanup_free_ char *state = NULL;

	if (!st->hooks_json || !(o = json_tokener_parse(st->hooks_json)))
		return;
	if (json_object_object_get_ex(o, kind, &list) && json_object_array_length(list) > 0) {
		state = hook_state(st, status);
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			json_object *h = json_object_array_get_idx(list, i);
			_cleanup_strv_ char **args = get_strv(h, "args"), **env = get_strv(h, "env");
			const char *path = json_object_object_get_ex(h, "path", &v) ? json_object_get_string(v) : "";
			int timeout = json_object_object_get_ex(h, "timeout", &v) ? json_object_get_int(v) : 0;

			/* the runtime-spec: these failures are warnings */
			if (run_one(kind, path, args, env, timeout, state) < 0)
				rt_warn("%s", isd_error_message());
		}
	}
	json_object_put(o);
}
