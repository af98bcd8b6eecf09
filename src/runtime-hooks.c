/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime-spec's hooks: prestart, createRuntime and createContainer at
 * create (a failure fails the create), startContainer at start, before
 * the gate opens (a failure fails the start), poststart after start and
 * poststop at delete (a failure is a warning).  createContainer and
 * startContainer run in the container's namespaces, as root of its user
 * namespace (the engine's own programs, as with runc); the rest in the
 * runtime's.  Each gets the container's state on its standard input.
 * The hooks start and delete need are kept in the state at create
 * (hooks_json), since the bundle may be gone by then.
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "caps.h"
#include "isd/oci.h"
#include "isd/process.h"
#include "isd/sandbox.h"
#include "isd/util.h"
#include "userns.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
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
	static const enum isd_oci_hook_kind kept[] = {ISD_OCI_HOOK_START_CONTAINER, ISD_OCI_HOOK_POSTSTART,
						      ISD_OCI_HOOK_POSTSTOP};
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

/* Where a hook runs: createContainer and startContainer in the
 * container's namespaces (those of its init), the first with the
 * runtime's mount namespace, where its path resolves (the runtime-spec)
 * and the host's program finds its libraries (isd builds the
 * container's tree before, in a namespace of its own: the container's
 * root is root.path there); the second wholly inside. */
enum where { IN_RUNTIME, IN_CONTAINER_HOST_PATH, IN_CONTAINER };

/* In the hook's child.  startContainer runs the image's program: as root
 * of the container's user namespace (the payload's ids) with no
 * capabilities and no_new_privs, never as the host's root.
 * createContainer runs the engine's program as prestart does: a root
 * runtime stays root, a rootless one becomes root of the container's user
 * namespace (whose capabilities the other joins need).  A pid namespace
 * takes one more fork, whose status becomes ours. */
static int enter_container(pid_t init, enum where where)
{
	int pidfd = (int)syscall(SYS_pidfd_open, init, 0), flags = isd_sandbox_foreign_namespaces(init), status;
	pid_t pid;

	if (pidfd < 0 || flags < 0)
		return -1;
	if (where == IN_CONTAINER_HOST_PATH) {
		flags &= ~CLONE_NEWNS;
		if (geteuid() == 0)
			flags &= ~CLONE_NEWUSER;
	}
	if (setns(pidfd, flags) < 0)
		return -1;
	close(pidfd);
	if ((flags & CLONE_NEWUSER) && (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP) < 0 ||
					isd_userns_become(0, 0) < 0))
		return -1;
	if (where == IN_CONTAINER &&
	    (isd_caps_drop_all() < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || chdir("/") < 0))
		return -1;
	if (!(flags & CLONE_NEWPID))
		return 0;
	pid = fork();
	if (pid <= 0)
		return pid;
	if (isd_wait_pid(pid, &status) < 0)
		_exit(126);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* Entering the namespaces of a process by its pidfd needs ptrace's read
 * access to it, and until the payload's execve neither init nor the
 * payload is dumpable (nothing of the sandbox may reach them): only a
 * caller with CAP_SYS_PTRACE over them (root) enters them then. */
bool rt_hooks_inside_supported(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}};

	return syscall(SYS_capget, &h, d) == 0 && (d[CAP_SYS_PTRACE / 32].effective & (1u << (CAP_SYS_PTRACE % 32)));
}

int rt_hooks_check_inside(const struct isd_oci_extra *x)
{
	static const enum isd_oci_hook_kind inside[] = {ISD_OCI_HOOK_CREATE_CONTAINER, ISD_OCI_HOOK_START_CONTAINER};
	bool can = rt_hooks_inside_supported();

	for (size_t k = 0; !can && k < sizeof(inside) / sizeof(inside[0]); k++)
		if (x->hooks[inside[k]].n)
			return RT_ERR(-EOPNOTSUPP, "%s: hooks.%s: hooks in the container's namespaces need a root "
						   "isd-runtime (one without CAP_SYS_PTRACE cannot enter the container "
						   "before its payload runs)", x->config_path, isd_oci_hook_name(inside[k]));
	return 0;
}

static int run_one(const char *kind, const char *path, char **args, char **env, int timeout, const char *state,
		   enum where where, pid_t init)
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
		/* no copy of the writing end may stay (a pid namespace's extra
		 * fork keeps this process): the hook would never see EOF */
		close(in[1]);
		dup2(in[0], STDIN_FILENO);
		/* the hook's output is the runtime's log, not the container's */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		if (where != IN_RUNTIME && enter_container(init, where) < 0) {
			dprintf(STDERR_FILENO, "isd-runtime: the %s hook %s: entering the container: %s\n", kind, path,
				strerror(errno));
			_exit(126);
		}
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
	enum where where = kind == ISD_OCI_HOOK_CREATE_CONTAINER ? IN_CONTAINER_HOST_PATH : IN_RUNTIME;

	for (size_t i = 0; i < hs->n; i++) {
		int r = run_one(isd_oci_hook_name(kind), hs->hooks[i].path, hs->hooks[i].args, hs->hooks[i].env,
				hs->hooks[i].timeout, state, where, st->pid);
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

int rt_run_kept_hooks(const struct rt_state *st, const char *kind, enum rt_status status)
{
	/* startContainer: in the container, and a failure fails the start */
	bool inside = !strcmp(kind, isd_oci_hook_name(ISD_OCI_HOOK_START_CONTAINER));
	json_object *o, *list, *v;
	_cleanup_free_ char *state = NULL;
	int r = 0;

	if (!st->hooks_json || !(o = json_tokener_parse(st->hooks_json)))
		return 0;
	if (json_object_object_get_ex(o, kind, &list) && json_object_array_length(list) > 0) {
		state = hook_state(st, status);
		for (size_t i = 0; r == 0 && i < json_object_array_length(list); i++) {
			json_object *h = json_object_array_get_idx(list, i);
			_cleanup_strv_ char **args = get_strv(h, "args"), **env = get_strv(h, "env");
			const char *path = json_object_object_get_ex(h, "path", &v) ? json_object_get_string(v) : "";
			int timeout = json_object_object_get_ex(h, "timeout", &v) ? json_object_get_int(v) : 0;

			/* the runtime-spec: poststart and poststop failures are warnings */
			r = run_one(kind, path, args, env, timeout, state, inside ? IN_CONTAINER : IN_RUNTIME, st->pid);
			if (r < 0 && !inside) {
				rt_warn("%s", isd_error_message());
				r = 0;
			}
		}
	}
	json_object_put(o);
	return r;
}
