/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * create, start and run: the bundle's config.json becomes isd's spec
 * (isd/oci.h), the sandbox is made and left at its start gate
 * (isd_sandbox_create_detached), and this process exits, so that the
 * container's init is reparented to the engine's subreaper (conmon,
 * containerd's shim), which reaps it and reads the payload's exit status
 * from it, as with runc.
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "isd/fsutil.h"
#include "isd/oci.h"
#include "isd/process.h"
#include "isd/proxy.h"
#include "isd/sandbox.h"
#include "isd/util.h"
#include "pty.h"
#include "rootful.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct create_opts {
	const char *id, *bundle, *pid_file, *console_socket;
	bool detach; /* run -d */
	uint32_t preserve_fds; /* --preserve-fds: 3 .. 3+N-1 go to the payload */
};

enum { O_BUNDLE = 1, O_PID_FILE, O_CONSOLE_SOCKET, O_NO_PIVOT, O_NO_NEW_KEYRING, O_PRESERVE_FDS, O_DETACH,
       O_NO_SUBREAPER, O_KEEP };

static const struct rt_opt create_opts_table[] = {
	{"bundle", 'b', true, O_BUNDLE},
	{"pid-file", 0, true, O_PID_FILE},
	{"console-socket", 0, true, O_CONSOLE_SOCKET},
	{"no-pivot", 0, false, O_NO_PIVOT},
	{"no-new-keyring", 0, false, O_NO_NEW_KEYRING},
	{"preserve-fds", 0, true, O_PRESERVE_FDS},
	{"detach", 'd', false, O_DETACH},
	{"no-subreaper", 0, false, O_NO_SUBREAPER},
	{"keep", 0, false, O_KEEP},
	{0},
};

static void create_usage(FILE *out)
{
	fputs("Usage: isd-runtime create [--bundle DIR] [--pid-file FILE] [--console-socket SOCKET] ID\n"
	      "       isd-runtime run [--bundle DIR] [--pid-file FILE] [--console-socket SOCKET] [--detach] ID\n"
	      "Create the container ID from the bundle DIR (default: the working directory):\n"
	      "its payload waits until `isd-runtime start ID`.  run starts it at once and,\n"
	      "without --detach, waits for it and exits with its status.\n",
	      out);
}

/* --preserve-fds N: the engine's descriptors 3 .. 3+N-1 (conmon's
 * sockets for socket activation), each open, copied above the numbers
 * the sandbox uses itself (isd_sandbox_detached.preserved_fds). */
int rt_copy_preserved(uint32_t n, int **out)
{
	_cleanup_free_ int *fds = n ? isd_xcalloc(n, sizeof(int)) : NULL;

	for (uint32_t i = 0; i < n; i++) {
		fds[i] = fcntl((int)(3 + i), F_DUPFD_CLOEXEC, (int)(3 + n + 16));
		if (fds[i] < 0) {
			int r = isd_error(-errno, "--preserve-fds %u: descriptor %u", n, 3 + i);
			while (i-- > 0)
				close(fds[i]);
			return r;
		}
	}
	*out = isd_steal_ptr(fds);
	return 0;
}

static int parse_create(int argc, char **argv, bool run, struct create_opts *o)
{
	struct rt_args a = RT_ARGS(run ? "run" : "create", create_opts_table, create_usage, argc, argv);
	uint32_t n;

	while (rt_next(&a)) {
		switch (a.id) {
		case O_BUNDLE:
			o->bundle = a.value;
			break;
		case O_PID_FILE:
			o->pid_file = a.value;
			break;
		case O_CONSOLE_SOCKET:
			o->console_socket = a.value;
			break;
		case O_PRESERVE_FDS:
			if (isd_parse_uint32(a.value, &n) < 0 || n > RT_MAX_PRESERVED_FDS)
				return rt_failf("%s: --preserve-fds %s: not a count of descriptors (0 to %d)", a.cmd, a.value,
						RT_MAX_PRESERVED_FDS);
			o->preserve_fds = n;
			break;
		case O_DETACH:
			o->detach = true;
			break;
		case 0:
			if (o->id)
				return rt_failf("%s: one container id, not '%s' too", a.cmd, a.value);
			o->id = a.value;
			break;
		default: /* --no-pivot, --no-new-keyring, --no-subreaper, --keep: nothing to do for isd */
			break;
		}
	}
	if (a.exit >= 0)
		return a.exit;
	if (!o->id)
		return rt_failf("%s: a container id is needed (usage: isd-runtime %s [OPTIONS] ID)", a.cmd, a.cmd);
	if (rt_check_id(o->id) < 0)
		return rt_fail();
	return -1;
}

/* podman reads a missing command from runc's words in the error (and
 * makes the exit status 127 of them). */
void rt_not_found_hint(void)
{
	isd_error_hint("executable file not found in $PATH");
}

/* runc's and crun's rule: without HOME in process.env, the user's home
 * from the root's /etc/passwd, else "/". */
void rt_default_home(struct isd_spec *spec)
{
	struct isd_image_user u = {0};
	_cleanup_close_ int rootfd = -1;
	bool found;

	if (isd_spec_getenv(spec, "HOME"))
		return;
	rootfd = open(spec->rootfs ? spec->rootfs : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	found = rootfd >= 0 && isd_image_passwd(rootfd, NULL, spec->uid, &u) == 0 && u.home && u.home[0];
	isd_spec_setenv(spec, "HOME", found ? u.home : "/");
	free(u.name);
	free(u.home);
}

int rt_load_bundle(const char *bundle, const char *id, struct isd_spec *spec, struct isd_oci_extra *extra)
{
	/* isd's annotations only tighten the config, and the engines choose
	 * which annotations reach a runtime (CRI-O's allowed_annotations) */
	unsigned flags = ISD_OCI_LOAD_ANNOTATIONS | (rt_global.systemd_cgroup ? ISD_OCI_LOAD_SYSTEMD_CGROUP : 0);
	char host[256];
	int r;

	r = isd_oci_config_load(bundle, id, flags, spec, extra);
	if (r < 0)
		return r;
	for (size_t i = 0; extra->notes && extra->notes[i]; i++)
		rt_warn("%s", extra->notes[i]);
	r = rt_ns_plan(spec, extra);
	if (r == 0)
		r = rt_apply_config(spec, extra);
	if (r < 0)
		return r;
	/* The payload's ids map onto the caller's (isd's rootless rule); as
	 * root, onto an unprivileged id of root's subordinate range.  In a
	 * joined user namespace they are that namespace's, mapped already. */
	spec->host_uid = getuid();
	spec->host_gid = getgid();
	if (extra->ns[ISD_OCI_NS_USER].mode != ISD_OCI_NS_JOIN)
		r = isd_rootful_apply(spec, getuid(), getgid());
	if (r == 0)
		r = rt_apply_groups(spec, extra);
	if (r < 0)
		return r;
	rt_default_home(spec);
	/* run.oci.isd.network=netless: the relay's address in every client's
	 * proxy variables, for the payload and exec'd processes alike */
	isd_netcfg_apply_env(spec);
	/* No hostname in the config: the name the container inherits. */
	if (!spec->hostname && gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		spec->hostname = isd_xstrdup(host);
	}
	return isd_spec_validate(spec);
}

/* conmon's console socket: it listens, we connect and send the pty's
 * master with SCM_RIGHTS (runc sends the terminal's name beside it). */
int rt_send_console(const char *path, int master)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_close_ int fd = -1;
	char name[64] = "/dev/console";
	int r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return isd_error(-ENAMETOOLONG, "connecting to the console socket %s", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return isd_error(-errno, "connecting to the console socket %s", path);
	r = isd_send_with_fd(fd, name, strlen(name), master);
	return r < 0 ? isd_error(r, "sending the terminal to the console socket %s", path) : 0;
}

static char *now_rfc3339(void)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	return isd_xasprintf("%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			     tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec);
}

int rt_write_pid_file(const char *path, pid_t pid)
{
	char buf[24];
	int r;

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	r = isd_replace_file_at(AT_FDCWD, path, buf, strlen(buf), 0644, false);
	return r < 0 ? isd_error_prefix(r, "writing the pid file: ") : 0;
}

void rt_seccomp_from_state(struct isd_spec *spec, const char *id)
{
	/* run.oci.isd.seccomp=agent made it "default": stacked, both apply
	 * (every engine's run has a linux.seccomp: podman's, Docker's) */
	if (strcmp(spec->seccomp, "unconfined") != 0) {
		free(spec->seccomp_also);
		spec->seccomp_also = spec->seccomp;
	} else {
		free(spec->seccomp);
	}
	spec->seccomp = isd_xasprintf("%s/%s/%s", rt_global.root, id, RT_SECCOMP);
}

/* linux.seccomp is the payload's filter (the sandbox installs one):
 * compiled from the container's own copy, where exec finds it too. */
static int use_config_seccomp(struct isd_spec *spec, const struct isd_oci_extra *x, int dirfd, const char *id)
{
	int r;

	if (!x->seccomp)
		return 0;
	r = isd_replace_file_at(dirfd, RT_SECCOMP, x->seccomp, strlen(x->seccomp), 0600, false);
	if (r < 0)
		return isd_error_prefix(r, "keeping the seccomp profile of container %s: ", id);
	rt_seccomp_from_state(spec, id);
	return 0;
}

/* The container made, its state saved, stopped at the gate.  *pty_master
 * is set for run's own terminal relay (spec->tty without a console
 * socket), else -1. */
static int create_container(const struct create_opts *o, bool own_terminal, int *dirfd_out, pid_t *pid_out,
			    int *pty_master)
{
	struct isd_spec spec;
	struct isd_oci_extra extra;
	struct isd_sandbox_detached d = {.start_gate_fd = -1, .cgroupns_fd = -1};
	struct rt_state st = {0};
	struct rt_ns joined;
	char cgroup_name[64];
	_cleanup_free_ int *preserved = NULL;
	_cleanup_free_ char *bundle = NULL;
	_cleanup_close_ int dirfd = -1, rootfd = -1, gate = -1;
	bool made = false;
	int r, code;

	*pty_master = -1;
	bundle = realpath(o->bundle ? o->bundle : ".", NULL);
	if (!bundle)
		return isd_error(-errno, "opening the bundle %s", o->bundle ? o->bundle : ".");
	isd_spec_init(&spec);
	isd_oci_extra_init(&extra);
	rt_ns_init(&joined);
	r = rt_load_bundle(bundle, o->id, &spec, &extra);
	if (r == 0)
		r = rt_hooks_check_inside(&extra);
	if (r == 0)
		r = rt_ns_open(&extra, &joined);
	if (r < 0)
		goto out;
	if (spec.tty && !o->console_socket && !own_terminal) {
		r = RT_ERR(-EINVAL, "%s: process.terminal is true but no --console-socket was given to receive it",
			      extra.config_path);
		goto out;
	}
	r = rt_container_lock(o->id, true, &dirfd);
	if (r < 0)
		goto out;
	made = true;
	r = use_config_seccomp(&spec, &extra, dirfd, o->id);
	if (r < 0)
		goto out;
	if (mkfifoat(dirfd, RT_FIFO, 0600) < 0 || (gate = openat(dirfd, RT_FIFO, O_RDWR | O_CLOEXEC)) < 0) {
		r = isd_error(-errno, "creating the start gate %s/%s/%s", rt_global.root, o->id, RT_FIFO);
		goto out;
	}
	d.start_gate_fd = gate;
	/* The engine's cgroup, or one that isd gc leaves alone: the name of
	 * a dead isd's leftovers (isd-<pid>-...) would have it killed. */
	snprintf(cgroup_name, sizeof(cgroup_name), "isd-runtime-%.48s", o->id);
	d.cgroup_path = extra.cgroup_dir;
	d.cgroup_name = cgroup_name;
	d.mqueue = rt_wants_mqueue(&extra);
	d.sysctl = extra.sysctl;
	r = rt_copy_preserved(o->preserve_fds, &preserved);
	if (r < 0)
		goto out;
	d.preserved_fds = preserved;
	d.n_preserved_fds = o->preserve_fds;
	fflush(NULL);
	code = rt_ns_create_detached(&spec, &joined, &d);
	if (code == ISD_EXIT_NOT_FOUND)
		rt_not_found_hint();
	if (code != 0) {
		r = -EIO;
		goto out;
	}
	st.id = isd_xstrdup(o->id);
	st.pid = d.init_pid;
	st.pid_start = rt_pid_start_time(d.init_pid);
	st.bundle = isd_xstrdup(bundle);
	st.rootfs = isd_xstrdup(spec.rootfs ? spec.rootfs : "/");
	st.created = now_rfc3339();
	st.owner = isd_xstrdup("");
	st.oci_version = isd_xstrdup(extra.oci_version ? extra.oci_version : "1.0.2");
	st.cgroup = d.cgroup_dir;
	d.cgroup_dir = NULL;
	st.annotations = isd_strv_copy(extra.annotations);
	st.hooks_json = rt_hooks_to_json(&extra);
	r = rt_state_write(dirfd, &st);
	/* the container's namespaces exist, its payload has not run;
	 * prestart reads "created" as crun gives it and runtime-tools'
	 * hooks_stdin asks (runc says "creating", as for the two after) */
	if (r == 0)
		r = rt_run_config_hooks(&extra, ISD_OCI_HOOK_PRESTART, &st, RT_CREATED);
	if (r == 0)
		r = rt_run_config_hooks(&extra, ISD_OCI_HOOK_CREATE_RUNTIME, &st, RT_CREATING);
	if (r == 0)
		r = rt_run_config_hooks(&extra, ISD_OCI_HOOK_CREATE_CONTAINER, &st, RT_CREATING);
	if (r == 0 && d.pty_master >= 0 && extra.has_console_size) {
		struct winsize ws = {.ws_row = (unsigned short)extra.console_height,
				     .ws_col = (unsigned short)extra.console_width};
		(void)ioctl(d.pty_master, TIOCSWINSZ, &ws);
	}
	if (r == 0 && d.pty_master >= 0 && o->console_socket)
		r = rt_send_console(o->console_socket, d.pty_master);
	if (r == 0 && o->pid_file)
		r = rt_write_pid_file(o->pid_file, d.init_pid);
	if (r == 0) {
		*pid_out = d.init_pid;
		*dirfd_out = isd_steal_fd(dirfd);
		if (own_terminal && !o->console_socket) {
			*pty_master = d.pty_master;
			d.pty_master = -1;
		}
		made = false;
	}
out:
	if (d.pty_master >= 0)
		close(d.pty_master);
	if (made) {
		/* nothing of a failed create stays */
		if (d.init_pid > 0)
			kill(d.init_pid, SIGKILL);
		isd_kill_and_reap(&d.init_pid);
		if (st.cgroup || d.cgroup_dir)
			(void)isd_sandbox_remove_cgroup(st.cgroup ? st.cgroup : d.cgroup_dir);
		if (rt_root_open(false, &rootfd) == 0)
			rt_container_remove(rootfd, o->id);
	}
	free(d.cgroup_dir);
	for (size_t i = 0; preserved && i < o->preserve_fds; i++)
		close(preserved[i]);
	rt_ns_close(&joined);
	rt_state_free(&st);
	isd_spec_free(&spec);
	isd_oci_extra_free(&extra);
	return r;
}

int rt_cmd_create(int argc, char **argv)
{
	struct create_opts o = {0};
	_cleanup_close_ int dirfd = -1;
	pid_t pid;
	int pty, r = parse_create(argc, argv, false, &o);

	if (r >= 0)
		return r;
	if (create_container(&o, false, &dirfd, &pid, &pty) < 0)
		return rt_fail();
	return 0;
}

/* Opens the gate: the payload goes on to its seccomp filter and execve.
 * ENXIO: nobody reads the fifo any more, the payload is gone. */
static int open_gate(int dirfd, const char *id)
{
	_cleanup_close_ int fd = openat(dirfd, RT_FIFO, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 && errno == ENXIO)
		return RT_ERR(-ESRCH, "starting container %s: its payload is gone (stopped before start)", id);
	if (fd < 0)
		return isd_error(-errno, "starting container %s: opening its start gate", id);
	if (write(fd, "0", 1) != 1)
		return isd_error(-errno, "starting container %s: writing to its start gate", id);
	unlinkat(dirfd, RT_FIFO, 0);
	return 0;
}

static int start_locked(int dirfd, const char *id)
{
	struct rt_state st;
	int r = rt_state_read(dirfd, id, &st);

	if (r == 0 && st.status != RT_CREATED)
		r = RT_ERR(-EINVAL, "cannot start container %s: it is %s, not created", id, rt_status_name(st.status));
	/* a failure stops the container, as the runtime-spec asks */
	if (r == 0 && (r = rt_run_kept_hooks(&st, isd_oci_hook_name(ISD_OCI_HOOK_START_CONTAINER), RT_CREATED)) < 0)
		kill(st.pid, SIGKILL);
	if (r == 0)
		r = open_gate(dirfd, id);
	if (r == 0)
		(void)rt_run_kept_hooks(&st, "poststart", RT_RUNNING);
	rt_state_free(&st);
	return r;
}

static void start_usage(FILE *out)
{
	fputs("Usage: isd-runtime start ID\nLet the payload of the created container ID run.\n", out);
}

int rt_one_id(const char *cmd, void (*usage)(FILE *), int argc, char **argv, const char **id)
{
	struct rt_args a = RT_ARGS(cmd, NULL, usage, argc, argv);

	*id = NULL;
	while (rt_next(&a)) {
		if (*id)
			return rt_failf("%s: one container id, not '%s' too", cmd, a.value);
		*id = a.value;
	}
	if (a.exit >= 0)
		return a.exit;
	if (!*id)
		return rt_failf("%s: a container id is needed (usage: isd-runtime %s ID)", cmd, cmd);
	return -1;
}

int rt_cmd_start(int argc, char **argv)
{
	_cleanup_close_ int dirfd = -1;
	const char *id;
	int r = rt_one_id("start", start_usage, argc, argv, &id);

	if (r >= 0)
		return r;
	if (rt_container_lock(id, false, &dirfd) < 0 || start_locked(dirfd, id) < 0)
		return rt_fail();
	return 0;
}

static volatile pid_t forward_pid = -1;

static void forward(int sig)
{
	if (forward_pid > 0)
		kill(forward_pid, sig);
}

int rt_cmd_run(int argc, char **argv)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	struct create_opts o = {0};
	struct sigaction sa = {.sa_handler = forward, .sa_flags = SA_RESTART};
	_cleanup_close_ int dirfd = -1;
	struct isd_pty_child child = {.pid = -1};
	int pty = -1, status = 0, r = parse_create(argc, argv, true, &o);
	pid_t pid;

	if (r >= 0)
		return r;
	if (create_container(&o, !o.detach, &dirfd, &pid, &pty) < 0)
		return rt_fail();
	if (o.detach) {
		/* the gate opens, and this process leaves as create's would */
		return start_locked(dirfd, o.id) < 0 ? rt_fail() : 0;
	}
	forward_pid = pid;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	r = start_locked(dirfd, o.id);
	/* others may state, kill or delete --force it while it runs */
	flock(dirfd, LOCK_UN);
	if (r < 0) {
		rt_fail();
		status = -1;
	}
	child.pid = pid;
	if (r == 0 && pty >= 0)
		(void)isd_pty_run(&pty, isatty(STDIN_FILENO), &child);
	if (child.reaped)
		status = child.status;
	else
		isd_wait_pid(pid, &status);
	forward_pid = -1;
	if (pty >= 0)
		close(pty);
	while (flock(dirfd, LOCK_EX) < 0 && errno == EINTR)
		;
	if (rt_delete_locked(dirfd, o.id, true) < 0)
		rt_fail();
	if (r < 0)
		return RT_EXIT_FAILURE;
	return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : RT_EXIT_FAILURE;
}
