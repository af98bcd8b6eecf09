/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The landlock tier's run (include/isd/sandbox-landlock.h).
 *
 * isd (on the host)                        payload (a child, no namespace)
 * ---------------------------------------  ------------------------------------
 * seccomp filters, cgroup, private dirs,
 * the relay's listener on 127.0.0.1:0,
 * the pty, the Landlock plan
 * fork ----------------------------------> dies with isd, waits to be in the
 * move it into the cgroup, say go          cgroup; new session, pty; caps
 *                                          dropped, no_new_privs; chdir;
 *                                          Landlock; netless: the connect
 * take the listener and answer it <-------- netless: the connect guard's
 * (src/connect-guard.c; the activity       filter, the activity log's: one
 * log's, src/activity.c, which answers     filter, one listener, sent;
 * both connects and execs)                 seccomp; execve
 * read the error pipe (EOF = execve done),
 * relay (network, terminal), forward
 * signals, wait; kill what is left; clean
 */
#define _GNU_SOURCE
#include "sandbox-landlock-internal.h"
#include "caps.h"
#include "isd/cgroup.h"
#include "command.h"
#include "connect-guard.h"
#include "init.h"
#include "isd/proxy.h"
#include "pty.h"
#include "sandbox-landlock.h"
#include "isd/fsutil.h"
#include "isd/path-util.h"
#include "isd/process.h"
#include "isd/util.h"
#include "isd/session.h"
#include "workspace-copy.h"
#include "mount.h"
#include "isd/storage.h"
#include "isd/agent-state.h"
#include "isd/activity.h"
#include "workspace.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

struct tier_run {
	const struct isd_spec *spec;
	char *workdir; /* in the workspace's copy, with cow */
	struct isd_tier_dirs dirs;
	struct isd_landlock_plan plan;
	struct isd_seccomp_program seccomp, sockets;
	char **env;
	struct isd_connect_guard *guard; /* netless */
	struct isd_activity *activity; /* --activity-log, a cow session's */
	int err_fd, go_fd, guard_fd; /* the child's ends (guard_fd: the listener's) */
	int pty_slave;
};

static volatile pid_t forward_to = -1;

static void forward_signal(int sig)
{
	if (forward_to > 0)
		kill(forward_to, sig);
}

struct child_error {
	int code;
	char text[ISD_ERROR_MAX];
};

static _Noreturn void fail_child(const struct tier_run *t, int code)
{
	struct child_error e = {.code = code};

	snprintf(e.text, sizeof(e.text), "%s", isd_error_message()[0] ? isd_error_message() : "sandbox setup failed");
	(void)!write(t->err_fd, &e, sizeof(e));
	_exit(code);
}

/* Every descriptor but stdio, the error pipe and the pty is closed: the
 * caller's others stay out of reach. */
static void close_other_fds(const struct tier_run *t)
{
	int keep[3] = {t->err_fd, t->pty_slave, t->guard_fd};

	for (int fd = 3; fd < 1024; fd++)
		if (fd != keep[0] && fd != keep[1] && fd != keep[2])
			close(fd);
	syscall(SYS_close_range, 1024U, ~0U, 0U);
}

static const char *env_get(char **env, const char *name);

/* netless: the connect guard's filter (with the activity log's exec
 * rules, with a log), its listener sent to isd; then Landlock refuses
 * every TCP connect of the payload's own.  Without a listener to have (an
 * outer filter holds one: isd inside isd with --activity-log, a container
 * runtime's seccomp agent), the relay's port rule stays, and a note says
 * what that lacks. */
static int install_guard(const struct tier_run *t, struct isd_landlock_plan *plan)
{
	int r = isd_tier_install_listener(t->activity, t->guard, t->guard_fd);

	if (t->guard_fd >= 0)
		close(t->guard_fd);
	if (r < 0 && r != -EBUSY)
		return r;
	if (r == 0 && t->guard)
		plan->connect_port = 0, plan->n_forward_ports = 0;
	return 0;
}

static _Noreturn void child_main(const struct tier_run *t, pid_t parent, const sigset_t *old_mask)
{
	const struct isd_spec *spec = t->spec;
	struct isd_landlock_plan plan = t->plan;
	char go;
	int r;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(ISD_EXIT_FAILURE);
	/* In the cgroup before anything of the payload runs. */
	if (read(t->go_fd, &go, 1) != 1)
		_exit(ISD_EXIT_FAILURE);
	close(t->go_fd);
	for (size_t i = 0; i < ISD_N_FORWARDED_SIGNALS; i++)
		signal(isd_forwarded_signals[i], SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, old_mask, NULL);
	close_other_fds(t);
	/* Its own session: the caller's terminal is not its controlling
	 * terminal, so TIOCSTI cannot reach it. */
	if (setsid() < 0) {
		isd_error(-errno, "starting a new session for the payload");
		fail_child(t, ISD_EXIT_FAILURE);
	}
	if (t->pty_slave >= 0 && isd_pty_attach(t->pty_slave) < 0)
		fail_child(t, ISD_EXIT_FAILURE);
	/* A root caller keeps uid 0 but no capability; everybody gets
	 * no_new_privs. */
	if (geteuid() == 0 ? isd_caps_drop_all() < 0 : prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		if (geteuid() != 0)
			isd_error(-errno, "setting no_new_privs");
		fail_child(t, ISD_EXIT_FAILURE);
	}
	if (chdir(t->workdir ? t->workdir : "/") < 0) {
		isd_error(-errno, "changing to the working directory %s", t->workdir ? t->workdir : "/");
		fail_child(t, ISD_EXIT_FAILURE);
	}
	if (isd_storage_payload_limits(&spec->storage) < 0)
		fail_child(t, ISD_EXIT_FAILURE);
	r = install_guard(t, &plan);
	if (r == 0)
		r = isd_landlock_apply(&plan);
	if (r == 0)
		r = isd_seccomp_install(&t->sockets);
	if (r == 0)
		r = isd_seccomp_install(&t->seccomp);
	if (r < 0)
		fail_child(t, ISD_EXIT_FAILURE);
	r = isd_init_exec_command(spec->argv, t->env, env_get(t->env, "PATH"), spec->command_not_on_caller_path);
	fail_child(t, r == -ENOENT ? ISD_EXIT_NOT_FOUND : ISD_EXIT_CANNOT_EXEC);
}

/* NAME=VALUE of env, or NULL. */
static const char *env_get(char **env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, n) && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

static void env_set(char ***env, const char *name, const char *value)
{
	size_t n = strlen(name);

	for (size_t i = 0; *env && (*env)[i]; i++)
		if (!strncmp((*env)[i], name, n) && (*env)[i][n] == '=') {
			free((*env)[i]);
			(*env)[i] = isd_xasprintf("%s=%s", name, value);
			return;
		}
	isd_strv_push(env, isd_xasprintf("%s=%s", name, value));
}

/* Every occurrence of from in s replaced by to (a new string). */
static char *replace_all(const char *s, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to), len = 0;
	char *out = isd_xmalloc(strlen(s) * (nt > nf ? nt : 1) + 1 + nt);

	for (const char *p = s; *p;) {
		if (!strncmp(p, from, nf)) {
			memcpy(out + len, to, nt);
			len += nt;
			p += nf;
		} else {
			out[len++] = *p++;
		}
	}
	out[len] = '\0';
	return out;
}

/* The payload's environment: TMPDIR the private one, the relay's real
 * port where the proxy variables name the configured one, and the
 * command's links where PATH names /run/isd/bin. */
static char **tier_env(const struct isd_spec *spec, const struct isd_tier_dirs *dirs, uint16_t port)
{
	char **env = isd_strv_copy(spec->env);
	const char *path;

	env_set(&env, "TMPDIR", dirs->tmp);
	if (dirs->copy && env_get(env, "PWD")) {
		_cleanup_free_ char *pwd = isd_tier_workspace_path(spec, dirs, env_get(env, "PWD"));
		env_set(&env, "PWD", pwd);
	}
	if (dirs->home) {
		/* A path the profile made from the real home (GOPATH=${HOME}/go)
		 * means the private one, where its tmpfs now is. */
		const char *home = isd_spec_getenv(spec, "HOME");
		size_t n = strlen(home);

		for (size_t i = 0; env[i]; i++) {
			char *eq = strchr(env[i], '='), *v;
			if (!eq || !strncmp(env[i], "PATH=", 5) || !strncmp(env[i], "PWD=", 4) ||
			    strncmp(eq + 1, home, n) || (eq[1 + n] != '/' && eq[1 + n]))
				continue;
			v = isd_xasprintf("%.*s%s%s", (int)(eq + 1 - env[i]), env[i], dirs->home, eq + 1 + n);
			free(env[i]);
			env[i] = v;
		}
		env_set(&env, "HOME", dirs->home);
	}
	if (port) {
		char from[64], to[64], jfrom[64], jto[64];
		snprintf(from, sizeof(from), "127.0.0.1:%u", isd_netcfg_proxy_port(&spec->net));
		snprintf(to, sizeof(to), "127.0.0.1:%u", port);
		snprintf(jfrom, sizeof(jfrom), "proxyPort=%u", isd_netcfg_proxy_port(&spec->net));
		snprintf(jto, sizeof(jto), "proxyPort=%u", port);
		for (size_t i = 0; env[i]; i++) {
			char *a = replace_all(env[i], from, to), *b = replace_all(a, jfrom, jto);
			free(a);
			free(env[i]);
			env[i] = b;
		}
	}
	path = env_get(env, "PATH");
	if (path && strstr(path, ISD_COMMAND_LINK_DIR)) {
		_cleanup_free_ char *p = replace_all(path, ISD_COMMAND_LINK_DIR, dirs->bin);
		env_set(&env, "PATH", p);
	}
	return env;
}

/* What is bound from beneath the real home appears in the private one as
 * a link to its real path (the workspace too), as the full tier shows it
 * in an empty home. */
static int link_from_home(const char *priv, const char *home, const char *dst, const char *target)
{
	size_t n = strlen(home);
	_cleanup_free_ char *at = NULL, *dir = NULL;
	char *slash;
	int r;

	if (strncmp(dst, home, n) || dst[n] != '/' || !dst[n + 1])
		return 0;
	at = isd_xasprintf("%s%s", priv, dst + n);
	dir = isd_xstrdup(at);
	slash = strrchr(dir, '/');
	*slash = '\0';
	if ((r = isd_mkdir_p(dir, 0755)) < 0)
		return isd_error(r, "creating %s in the sandbox's private home", dir);
	if (symlink(target, at) < 0 && errno != EEXIST)
		return isd_error(-errno, "linking %s to %s in the sandbox's private home", at, target);
	return 0;
}

#define DIR_PREFIX "isd-landlock-"

/* The private directories of runs whose isd was killed (SIGKILL leaves
 * them): each run holds an flock on its own, so one that takes the lock
 * has no isd left.  Only directories of this user, of isd's name, mode
 * 0700, never through a symlink. */
static void gc_dirs(const char *base)
{
	_cleanup_close_ int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = bfd >= 0 ? fdopendir(dup(bfd)) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d))) {
		_cleanup_close_ int fd = -1;
		struct stat st, now;

		if (strncmp(e->d_name, DIR_PREFIX, strlen(DIR_PREFIX)) || strlen(e->d_name) != strlen(DIR_PREFIX) + 6 ||
		    fstatat(bfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != geteuid() || (st.st_mode & 07777) != 0700)
			continue;
		fd = openat(bfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &now) < 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev ||
		    flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue;
		if (isd_rm_rf_at(bfd, e->d_name) < 0)
			isd_error_clear(); /* another run's to try again */
	}
	if (d)
		closedir(d);
}

/* root (0700) with tmp, home and bin; the links of the command resolution
 * (a tmpfs at /run/isd/bin in the full tier) go into bin.  root is made
 * under a name gc_dirs() passes over, locked, then renamed to its own:
 * no other run's clean-up can take it between its making and its lock. */
static int make_dirs(const struct isd_spec *spec, struct isd_tier_dirs *d)
{
	const char *base = getenv("TMPDIR"), *home = isd_spec_getenv(spec, "HOME");
	ssize_t links = isd_spec_find_mount(spec, ISD_COMMAND_LINK_DIR);
	_cleanup_free_ char *fresh = NULL;

	if (!base || base[0] != '/')
		base = "/tmp";
	gc_dirs(base);
	for (int tries = 0; !d->root; tries++) {
		fresh = isd_xasprintf("%s/." DIR_PREFIX "XXXXXX", base);
		if (!mkdtemp(fresh))
			return isd_error(-errno, "creating the sandbox's private directory %s", fresh);
		d->lock_fd = open(fresh, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (d->lock_fd < 0 || flock(d->lock_fd, LOCK_EX) < 0) {
			int r = isd_error(-errno, "locking the sandbox's private directory %s", fresh);
			rmdir(fresh);
			return r;
		}
		d->root = isd_xasprintf("%s/" DIR_PREFIX "%s", base, strrchr(fresh, '-') + 1);
		if (renameat2(AT_FDCWD, fresh, AT_FDCWD, d->root, RENAME_NOREPLACE) == 0)
			break;
		{
			int r = -errno;
			free(d->root);
			d->root = NULL;
			close(d->lock_fd);
			d->lock_fd = -1;
			rmdir(fresh);
			free(fresh);
			fresh = NULL;
			if (r != -EEXIST || tries > 16)
				return isd_error(r, "naming the sandbox's private directory in %s", base);
		}
	}
	d->tmp = isd_xasprintf("%s/tmp", d->root);
	d->bin = isd_xasprintf("%s/bin", d->root);
	if (mkdir(d->tmp, 0700) < 0 || mkdir(d->bin, 0755) < 0)
		return isd_error(-errno, "creating the sandbox's private directories in %s", d->root);
	if (home && home[0] == '/' && home[1]) {
		d->home = isd_xasprintf("%s/home", d->root);
		if (mkdir(d->home, 0755) < 0)
			return isd_error(-errno, "creating the sandbox's private home %s", d->home);
		/* A tmpfs first: the binds beneath one are links inside it. */
		for (size_t i = 0; i < spec->n_mounts; i++) {
			_cleanup_free_ char *at = isd_tier_home_path(spec, d, spec->mounts[i].destination);
			int r;

			if (spec->mounts[i].type == ISD_MOUNT_TMPFS && at && (r = isd_mkdir_p(at, 0700)) < 0)
				return isd_error(r, "creating %s in the sandbox's private home", at);
		}
		for (size_t i = 0; i < spec->n_mounts; i++) {
			const struct isd_mount *m = &spec->mounts[i];
			const char *target = m->destination;
			bool in_state = false;
			int r;

			if (m->agent_state)
				target = i < d->n_state ? d->state[i] : NULL;
			else if (m->type != ISD_MOUNT_BIND || m->rebind)
				continue;
			/* The copy of a state directory holds what is bound
			 * beneath it (the agent's own code) already. */
			for (size_t j = 0; !m->agent_state && j < spec->n_mounts; j++)
				in_state |= spec->mounts[j].agent_state && j != i &&
					    isd_path_below(m->destination, spec->mounts[j].destination);
			if (!target || in_state)
				continue;
			if ((r = link_from_home(d->home, home, m->destination, target)) < 0)
				return r;
		}
	}
	for (size_t i = 0; links >= 0 && spec->mounts[links].links && spec->mounts[links].links[i]; i++) {
		const char *l = spec->mounts[links].links[i];
		const char *tab = strchr(l, '\t');
		_cleanup_free_ char *name = tab ? strndup(l, (size_t)(tab - l)) : NULL;
		_cleanup_free_ char *at = name ? isd_xasprintf("%s/%s", d->bin, name) : NULL;

		if (at && symlink(tab + 1, at) < 0)
			return isd_error(-errno, "creating the link %s", at);
	}
	return 0;
}

static void remove_dirs(struct isd_tier_dirs *d)
{
	if (d->root) {
		char *slash = strrchr(d->root, '/');
		_cleanup_close_ int parent = -1;

		*slash = '\0';
		parent = open(d->root[0] ? d->root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		*slash = '/';
		if (parent >= 0)
			(void)isd_rm_rf_at(parent, slash + 1);
	}
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	free(d->root);
	free(d->tmp);
	free(d->home);
	free(d->bin);
	free(d->copy);
	for (size_t i = 0; i < d->n_state; i++)
		free(d->state[i]);
	free(d->state);
	memset(d, 0, sizeof(*d));
	d->lock_fd = -1;
}

/* netless: the relay's listener on the container's loopback, at a port
 * the kernel picks (the namespace is shared: 3128 may be taken). */
static int relay_listener(struct isd_proxy *proxy, uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		int r = isd_error(-errno, "listening for the relay on 127.0.0.1");
		if (fd >= 0)
			close(fd);
		return r;
	}
	*port = ntohs(a.sin_port);
	isd_proxy_adopt_fd(proxy, ISD_NET_FD_TAG(ISD_NET_FD_PROXY, 0), fd);
	return 0;
}

/* --agent-state: each state directory copied beside its store's upper
 * layer (into which its changes go at the end, for the store's guarded
 * merge), each state file the store's own copy. */
static int copy_state(const struct isd_spec *spec, const struct isd_mount_extras *x, struct isd_tier_dirs *d)
{
	d->n_state = spec->n_mounts;
	d->state = isd_xcalloc(d->n_state, sizeof(char *));
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		_cleanup_free_ char *layer = NULL;
		int r;

		if (!m->agent_state)
			continue;
		if (m->type != ISD_MOUNT_OVERLAY) {
			d->state[i] = x->state_file && x->state_file[i] ? isd_xstrdup(x->state_file[i]) : NULL;
			continue;
		}
		if (!x->state_upper || !x->state_upper[i])
			continue;
		layer = isd_xstrdup(x->state_upper[i]);
		*strrchr(layer, '/') = '\0';
		d->state[i] = isd_xasprintf("%s/landlock-copy", layer);
		{
			_cleanup_close_ int dir = open(layer, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (dir >= 0)
				(void)isd_rm_rf_at(dir, "landlock-copy");
		}
		if ((r = isd_workspace_copy(m->source, d->state[i], NULL)) < 0)
			return r;
	}
	return 0;
}

/* After the run: the changes of each state directory's copy into its
 * store's upper layer, the copy gone. */
static void close_state(const struct isd_spec *spec, const struct isd_mount_extras *x, struct isd_tier_dirs *d,
			const struct timespec *since)
{
	for (size_t i = 0; i < d->n_state; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		_cleanup_free_ char *layer = NULL;
		_cleanup_close_ int dir = -1;

		if (!d->state[i] || m->type != ISD_MOUNT_OVERLAY)
			continue;
		if (since->tv_sec && isd_workspace_copy_to_upper(m->source, d->state[i], x->state_upper[i], NULL, since) < 0) {
			isd_error_print("keeping the agent's state failed");
			fprintf(stderr, "isd: the agent's copy of %s stays in %s\n", m->source, d->state[i]);
			continue;
		}
		layer = isd_xstrdup(x->state_upper[i]);
		*strrchr(layer, '/') = '\0';
		dir = open(layer, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir >= 0)
			(void)isd_rm_rf_at(dir, "landlock-copy");
	}
}

/* The storage watcher (src/storage-watch.c): besides what the full tier
 * counts, the copies (the workspace's, the agent's state: what changed
 * since they were made) and the private directories, which stand for the
 * full tier's size-bounded tmpfs but lie on a host file system. */
static int prepare_storage(const struct isd_spec *spec, const struct isd_session *session,
			   const struct isd_mount_extras *x, const struct isd_tier_dirs *d, const struct timespec *since,
			   struct isd_storage_watch **out)
{
	struct isd_storage_scope scope;
	char pid[16];
	int r;

	isd_storage_scope_collect(spec, session ? session->dir : NULL, x->state_upper, x->state_file, spec->n_mounts,
				  &scope);
	if (d->copy)
		isd_strv_push(&scope.accounted, isd_xstrdup(d->copy));
	for (size_t i = 0; i < d->n_state; i++)
		if (d->state[i] && spec->mounts[i].type == ISD_MOUNT_OVERLAY)
			isd_strv_push(&scope.accounted, isd_xstrdup(d->state[i]));
	isd_strv_push(&scope.accounted, isd_xstrdup(d->root));
	isd_strv_push(&scope.writable, isd_xstrdup(d->root));
	scope.baseline = *since;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	scope.id = session ? session->id : pid;
	r = isd_storage_watch_prepare(spec, &scope, out);
	isd_storage_scope_free(&scope);
	return r;
}

/* --activity-log FILE, or a cow session's own (isd log, isd session
 * list), as the full tier keeps them. */
static int open_activity(const struct isd_spec *spec, const struct isd_session *session, const char *workdir,
			 struct isd_proxy *proxy, struct tier_run *t)
{
	_cleanup_free_ char *own = session->dir ? isd_xasprintf("%s/%s", session->dir, ISD_ACTIVITY_FILE) : NULL;
	int r;

	if (!spec->activity_log && !own)
		return 0;
	if ((r = isd_activity_open(spec->activity_log ? spec->activity_log : own, spec->argv, workdir, &t->activity)) < 0 ||
	    (r = isd_activity_join_guard(t->activity, t->guard)) < 0)
		return r;
	isd_proxy_set_sink(proxy, isd_activity_net_record, t->activity);
	return 0;
}

/* The cow workspace: a new session, and the project copied into it. */
static int open_copy(const struct isd_spec *spec, struct isd_session *session, struct isd_tier_dirs *d,
		     struct timespec *since)
{
	const char *ws = spec->workspace.path, *base = strrchr(ws, '/');
	int r = isd_session_for_workspace(ws, NULL, spec->argv, spec->workspace.keep, session);

	if (r < 0)
		return r;
	d->copy = isd_xasprintf("%s/landlock-copy", session->dir);
	if (mkdir(d->copy, 0700) < 0)
		return isd_error(-errno, "creating %s", d->copy);
	/* At the project's own name, which tools print and build paths from. */
	free(d->copy);
	d->copy = isd_xasprintf("%s/landlock-copy/%s", session->dir, base && base[1] ? base + 1 : "workspace");
	r = isd_workspace_copy(ws, d->copy, spec->workspace.masked);
	clock_gettime(CLOCK_REALTIME_COARSE, since);
	return r;
}

/* After the run: the copy's changes into the session's upper layer, the
 * copy gone, the session kept (with changes, or --workspace-keep) or
 * removed. */
static void close_copy(const struct isd_spec *spec, struct isd_session *session, struct isd_tier_dirs *d,
		       const struct timespec *since)
{
	_cleanup_free_ char *upper = isd_session_upper(session);
	_cleanup_close_ int dir = open(session->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (d->copy && since->tv_sec && isd_workspace_copy_to_upper(spec->workspace.path, d->copy, upper,
								    spec->workspace.masked, since) < 0) {
		/* Nothing the agent did is dropped: the copy stays. */
		isd_error_print("keeping the workspace's changes failed");
		fprintf(stderr, "isd: the agent's copy of the workspace stays in %s\n", d->copy);
		session->keep = true;
	} else if (dir >= 0) {
		(void)isd_rm_rf_at(dir, "landlock-copy");
	}
	isd_session_finish(session);
	isd_session_free(session);
}

int isd_sandbox_landlock_run(const struct isd_spec *spec)
{
	struct tier_run t = {.spec = spec, .err_fd = -1, .go_fd = -1, .guard_fd = -1, .pty_slave = -1, .dirs.lock_fd = -1};
	struct isd_cgroup cg;
	struct isd_proxy *proxy = NULL;
	struct isd_workspace_host *ws_host = NULL;
	struct isd_session session = {.lock_fd = -1};
	struct timespec since = {0};
	bool have_session = false;
	struct isd_mount_extras extras = {.image_fd = -1};
	struct isd_agent_state_run *astate = NULL;
	struct isd_storage_watch *storage = NULL;
	struct sigaction sa = {.sa_handler = forward_signal, .sa_flags = SA_RESTART};
	struct sigaction old_forward[ISD_N_FORWARDED_SIGNALS];
	bool forwarding = false;
	struct isd_pty_child waited = {.pid = -1};
	struct child_error e = {0};
	int errp[2] = {-1, -1}, gop[2] = {-1, -1}, guardp[2] = {-1, -1}, pty_master = -1;
	int exit_code = ISD_EXIT_FAILURE, status = 0, r;
	bool started = false, relay_failed = false;
	uint16_t port = 0;
	sigset_t old_mask;
	ssize_t n = 0;
	pid_t pid, self = getpid();

	isd_cgroup_init(&cg);
	if ((r = isd_seccomp_prepare_stacked(spec->seccomp, spec->seccomp_also, &t.seccomp)) < 0 || (r = isd_tier_socket_filter(spec, &t.sockets)) < 0 ||
	    (r = isd_cgroup_prepare(&spec->limits, &cg)) < 0 || (r = isd_spec_create_sources(spec)) < 0 ||
	    (r = isd_workspace_prepare_host(spec, &ws_host)) < 0 || (r = isd_proxy_new(spec, &proxy)) < 0)
		goto out;
	if (spec->network == ISD_NET_NETLESS &&
	    ((r = relay_listener(proxy, &port)) < 0 || (r = isd_connect_guard_new(port, &t.guard)) < 0))
		goto out;
	for (size_t i = 0; t.guard && i < spec->net.n_forwards; i++) {
		const struct isd_forward *f = &spec->net.forwards[i];
		if ((r = isd_connect_guard_add_forward(t.guard, f->sandbox_port, f->host, f->host_port)) < 0)
			goto out;
	}
	if (spec->workspace.path && spec->workspace.mode == ISD_WORKSPACE_COW) {
		r = open_copy(spec, &session, &t.dirs, &since);
		have_session = session.dir != NULL;
		if (r < 0)
			goto out;
	}
	if ((r = isd_agent_state_begin(spec, have_session ? session.id : NULL, getenv("HOME"), &extras, &astate)) < 0 ||
	    (r = copy_state(spec, &extras, &t.dirs)) < 0 || (r = make_dirs(spec, &t.dirs)) < 0)
		goto out;
	/* Without a copy nothing is compared by it: no wait for the clock. */
	if (t.dirs.copy || extras.state_upper)
		isd_workspace_copy_baseline(&since);
	else
		clock_gettime(CLOCK_REALTIME_COARSE, &since);
	if ((r = prepare_storage(spec, have_session ? &session : NULL, &extras, &t.dirs, &since, &storage)) < 0)
		goto out;
	t.workdir = isd_tier_workspace_path(spec, &t.dirs, spec->workdir);
	isd_tier_plan(spec, &t.dirs, port, &t.plan);
	t.env = tier_env(spec, &t.dirs, port);
	if ((r = open_activity(spec, &session, t.workdir ? t.workdir : "/", proxy, &t)) < 0)
		goto out;
	if (spec->tty && (r = isd_pty_open(&pty_master, &t.pty_slave)) < 0)
		goto out;
	if (pipe2(errp, O_CLOEXEC) < 0 || pipe2(gop, O_CLOEXEC) < 0 ||
	    ((t.guard || t.activity) && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, guardp) < 0)) {
		r = isd_error(-errno, "creating the setup pipes");
		goto out;
	}
	t.err_fd = errp[1];
	t.go_fd = gop[0];
	t.guard_fd = guardp[1];
	/* What the payload leaves behind comes to isd, which kills it; and
	 * isd itself (same uid) is not dumpable, so the payload cannot read
	 * its memory even where Landlock would not stop it. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_DUMPABLE, 0);
	if (isd_init_block_signals(&old_mask) < 0) {
		r = -errno;
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		r = isd_error(-errno, "starting the payload");
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		goto out;
	}
	if (pid == 0) {
		close(errp[0]);
		close(gop[1]);
		if (pty_master >= 0)
			close(pty_master);
		child_main(&t, self, &old_mask);
	}
	started = true;
	close(errp[1]);
	close(gop[0]);
	if (guardp[1] >= 0)
		close(guardp[1]);
	errp[1] = gop[0] = guardp[1] = -1;
	if (t.pty_slave >= 0) {
		close(t.pty_slave);
		t.pty_slave = -1;
	}
	forward_to = pid;
	waited.pid = pid;
	for (size_t i = 0; i < ISD_N_FORWARDED_SIGNALS; i++)
		sigaction(isd_forwarded_signals[i], &sa, &old_forward[i]);
	forwarding = true;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if ((cg.dirfd >= 0 && (r = isd_cgroup_attach(&cg, pid)) < 0) ||
	    (r = isd_storage_watch_run(storage, pid, self, cg.dirfd)) < 0) {
		kill(pid, SIGKILL);
		goto wait;
	}
	(void)!write(gop[1], "g", 1);
	close(gop[1]);
	gop[1] = -1;
	if (guardp[0] >= 0 && (r = isd_tier_start_listener(t.activity, t.guard, guardp[0])) < 0) {
		kill(pid, SIGKILL);
		goto wait;
	}
	do
		n = read(errp[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(e)) {
		e.text[sizeof(e.text) - 1] = '\0';
		goto wait;
	}
	n = 0;
	if (isd_proxy_start(proxy) < 0 || (pty_master >= 0 && isd_pty_run(&pty_master, spec->interactive, &waited) < 0)) {
		isd_error_print("starting the sandbox's relay failed");
		kill(pid, SIGKILL);
		relay_failed = true;
	}
wait:
	if (waited.reaped)
		status = waited.status;
	else
		isd_wait_pid(pid, &status);
	forward_to = -1;
	/* The caller's dispositions back, as isd_sandbox_run does. */
	for (size_t i = 0; forwarding && i < ISD_N_FORWARDED_SIGNALS; i++)
		sigaction(isd_forwarded_signals[i], &old_forward[i], NULL);
	/* The watcher looks on until the last of them is gone. */
	isd_init_kill_descendants((pid_t[]){isd_storage_watch_helper_pid(storage), isd_activity_listener_pid(t.activity)}, 2);
	isd_storage_watch_stop(storage);
	storage = NULL;
	if (r < 0) {
		isd_error_print("preparing the sandbox failed");
		exit_code = ISD_EXIT_FAILURE;
	} else if (n == (ssize_t)sizeof(e)) {
		isd_error_raw(-EIO, e.text);
		isd_error_print("sandbox setup failed");
		exit_code = e.code;
	} else {
		exit_code = relay_failed ? ISD_EXIT_FAILURE : isd_exit_status_from_wait(status);
	}
	if (cg.dirfd >= 0)
		isd_cgroup_report_status(&cg, 0, spec->argv[0], status);
out:
	isd_storage_watch_stop(storage);
	isd_cgroup_destroy(&cg);
	/* The relay writes to the activity log, which is the session's:
	 * both end before it does. */
	isd_proxy_free(proxy);
	proxy = NULL;
	isd_activity_free(t.activity);
	close_state(spec, &extras, &t.dirs, &since);
	/* Held state is shown by isd diff of the session: it stays. */
	if (isd_agent_state_end(astate) && have_session)
		session.keep = true;
	if (have_session)
		close_copy(spec, &session, &t.dirs, &since);
	isd_workspace_cleanup_host(spec, ws_host);
	isd_connect_guard_free(t.guard);
	isd_proxy_free(proxy);
	if (!started && r < 0)
		isd_error_print("preparing the sandbox failed");
	for (int *fd = (int[]){errp[0], errp[1], gop[0], gop[1], guardp[0], pty_master, t.pty_slave, -2}; *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	remove_dirs(&t.dirs);
	free(t.workdir);
	isd_strv_free(t.env);
	isd_landlock_plan_free(&t.plan);
	isd_seccomp_program_free(&t.seccomp);
	isd_seccomp_program_free(&t.sockets);
	return exit_code;
}
