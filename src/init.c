/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pid 1 of the sandbox (the child column of src/sandbox.c's diagram): the
 * setup inside the new namespaces, the payload's start, then init's wait.
 */
#define _GNU_SOURCE
#include "init.h"
#include "caps.h"
#include "net.h"
#include "pty.h"
#include "userns.h"
#include "isd/storage.h"
#include "isd/syscalls.h"
#include "isd/path-util.h"
#include "isd/process.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/securebits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const int isd_forwarded_signals[ISD_N_FORWARDED_SIGNALS] = {SIGINT,  SIGTERM, SIGHUP,   SIGQUIT,
							    SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

int isd_exit_status_from_wait(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return ISD_EXIT_FAILURE;
}

int isd_init_block_signals(sigset_t *old_mask)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < ISD_N_FORWARDED_SIGNALS; i++)
		sigaddset(&set, isd_forwarded_signals[i]);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, old_mask) < 0)
		return isd_error(-errno, "blocking signals in the sandbox's init");
	return 0;
}

int isd_init_run_until(pid_t payload, int stop_sig)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < ISD_N_FORWARDED_SIGNALS; i++)
		sigaddset(&set, isd_forwarded_signals[i]);
	sigaddset(&set, SIGCHLD);
	if (stop_sig)
		sigaddset(&set, stop_sig);

	for (;;) {
		siginfo_t info;
		int sig = sigwaitinfo(&set, &info);

		if (sig < 0)
			continue; /* EINTR */
		if (stop_sig && sig == stop_sig)
			return -1;
		if (sig != SIGCHLD) {
			/* The payload leads its own session and process group, so
			 * the whole group gets it, as a terminal would do. */
			if (kill(-payload, sig) < 0)
				kill(payload, sig);
			continue;
		}
		for (;;) {
			int status;
			pid_t pid = waitpid(-1, &status, WNOHANG);

			if (pid <= 0)
				break;
			/* When the payload is gone, init leaves and the kernel
			 * kills whatever it left behind in the pid namespace. */
			if (pid == payload)
				return isd_exit_status_from_wait(status);
		}
	}
}

/* Children of self, from each /proc/PID/stat's ppid field (works without
 * CONFIG_PROC_CHILDREN), SIGKILLed and reaped.  A child's pid cannot be
 * reused before we reap it, so killing what is listed is safe. */
static size_t kill_children(pid_t self, const pid_t *keep, size_t n_keep)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t *pids = NULL;
	size_t n = 0, cap = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[64], buf[512], *close_paren;
		long pid = strtol(e->d_name, NULL, 10), ppid;
		ssize_t len;
		bool kept = false;
		int fd;

		for (size_t i = 0; i < n_keep; i++)
			kept |= keep[i] > 0 && pid == keep[i];
		if (pid <= 0 || kept)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		close_paren = strrchr(buf, ')');
		if (!close_paren || sscanf(close_paren + 1, " %*c %ld", &ppid) != 1 || ppid != self)
			continue;
		kill((pid_t)pid, SIGKILL);
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			pids = isd_xrealloc(pids, cap * sizeof(*pids));
		}
		pids[n++] = (pid_t)pid;
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		isd_wait_pid(pids[i], NULL);
	free(pids);
	return n;
}

void isd_init_kill_descendants(const pid_t *keep, size_t n_keep)
{
	pid_t self = getpid();

	/* As a child subreaper, every orphan of the tree comes to us: kill
	 * the children, reap them, and their children are ours next. */
	for (int round = 0; round < 100000 && kill_children(self, keep, n_keep) > 0; round++)
		;
}

/* A hard limit above the caller's needs CAP_SYS_RESOURCE in the first
 * user namespace: not there, creation fails as runc and crun fail it. */
int isd_init_apply_rlimits(const struct isd_spec *spec)
{
	for (size_t i = 0; i < spec->n_rlimits; i++) {
		struct rlimit rl = {.rlim_cur = spec->rlimits[i].soft, .rlim_max = spec->rlimits[i].hard};

		if (setrlimit(spec->rlimits[i].resource, &rl) < 0)
			return isd_error(-errno, "setting resource limit %d (process.rlimits) to soft %llu, hard %llu",
					 spec->rlimits[i].resource, (unsigned long long)rl.rlim_cur,
					 (unsigned long long)rl.rlim_max);
	}
	return 0;
}

/* SETUP_FD, but in a payload given preserved descriptors: 3 is the
 * first of those then, and its setup socket elsewhere. */
static int report_fd = SETUP_FD;

static _Noreturn void report_and_exit(int code)
{
	struct setup_message msg = {.type = SETUP_ERROR, .exit_code = code};

	snprintf(msg.text, sizeof(msg.text), "%s", isd_error_message()[0] ? isd_error_message() : "sandbox setup failed");
	(void)!send(report_fd, &msg, sizeof(msg), MSG_NOSIGNAL);
	_exit(code);
}

static bool is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

struct exec_try {
	char *const *argv;
	char *const *envp;
	bool saw_eacces;
	int err; /* what stopped the search (not "not there" or EACCES) */
};

static bool try_exec(const char *candidate, void *ctx)
{
	struct exec_try *t = ctx;

	/* Names that are not there are not tried, so that the activity log
	 * records the one exec that runs; nor names in a directory the
	 * payload may not search (EACCES, and no file to be seen there: a
	 * caller's PATH with /root/.cargo/bin, say), whose exec would only
	 * fail the same way. */
	if (access(candidate, F_OK) < 0 &&
	    (errno == ENOENT || errno == ENOTDIR || (errno == EACCES && !is_executable_file(candidate))))
		return false;
	execve(candidate, t->argv, t->envp);
	if (errno == EACCES && is_executable_file(candidate)) {
		t->saw_eacces = true;
	} else if (errno != ENOENT && errno != ENOTDIR && errno != EACCES) {
		t->err = -errno;
		return true;
	}
	return false;
}

/* execvpe() searches the *caller's* PATH; the payload's PATH is the one that
 * counts, so the search is done here, by isd's one rule (isd/path-util.h:
 * the rule by which src/command.c decided the command is there).  Returns
 * the errno that decides 126 vs 127, with the message recorded. */
int isd_init_exec_command(char *const argv[], char *const envp[], const char *path_env, bool not_on_caller_path)
{
	struct exec_try t = {.argv = argv, .envp = envp};
	const char *cmd = argv[0];
	char buf[4096];

	if (strchr(cmd, '/')) {
		execve(cmd, argv, envp);
		return isd_error(-errno, "exec %s", cmd);
	}
	if (isd_path_search(path_env ? path_env : "/usr/bin:/bin", cmd, buf, sizeof(buf), try_exec, &t))
		return isd_error(t.err, "exec %s", buf);
	if (t.saw_eacces)
		return isd_error(-EACCES, "exec %s: found on PATH but not executable", cmd);
	isd_error(0, "exec %s: command not found in the sandbox's PATH (%s)%s", cmd, path_env ? path_env : "",
		  not_on_caller_path ? ", nor on yours" : "");
	return -ENOENT;
}

static int send_fd(int32_t type, int32_t tag, int fd, const char *what);

/* The exec listener goes to isd, none of it stays in the sandbox.  Without
 * one (an outer listener: EBUSY) the run goes on and isd says so. */
static int hand_over_activity_listener(const struct isd_init_args *a)
{
	int fd = isd_activity_install(a->activity), r;

	if (fd < 0) {
		struct setup_message msg = {.type = SETUP_ACTIVITY, .exit_code = fd};

		(void)!send(SETUP_FD, &msg, sizeof(msg), MSG_NOSIGNAL);
		return 0;
	}
	if ((r = isd_activity_send_listener(ACTIVITY_FD, fd)) < 0)
		isd_error(r, "handing the activity log's listener to isd");
	close(fd);
	return r;
}

/* isd-runtime's created state (isd/sandbox.h): the payload is set up,
 * says so, and waits for start's byte; none of its own code has run.  A
 * command that is not there fails the create, as runc's does. */
static int wait_at_start_gate(const struct isd_init_args *a)
{
	const struct isd_spec *spec = a->spec;
	struct setup_message msg = {.type = SETUP_READY};
	struct pollfd p = {.fd = a->start_gate_fd, .events = POLLIN};
	const char *path = isd_spec_getenv(spec, "PATH");
	char buf[4096], c;

	if (strchr(spec->argv[0], '/') ? !isd_path_is_executable(spec->argv[0], NULL)
				      : !isd_path_search(path ? path : "/usr/bin:/bin", spec->argv[0], buf, sizeof(buf),
							 isd_path_is_executable, NULL)) {
		isd_error(0, "exec %s: no such executable in the container (PATH %s)", spec->argv[0], path ? path : "");
		return -ENOENT;
	}
	if (send(SETUP_FD, &msg, sizeof(msg), MSG_NOSIGNAL) < 0)
		return isd_error(-errno, "telling isd that the sandbox is created");
	for (;;) {
		ssize_t n;

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return isd_error(-errno, "waiting for the start");
		n = read(a->start_gate_fd, &c, 1);
		if (n == 1)
			break;
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return isd_error(-errno, "waiting for the start");
	}
	close(a->start_gate_fd);
	return 0;
}

/* The caller's preserved descriptors at 3, 4, ... (not close-on-exec),
 * the setup socket moved above them for the last reports. */
static int hand_over_preserved(const struct isd_mount_extras *x)
{
	size_t n = x->n_preserved_fds;
	int fd;

	if (!n)
		return 0;
	fd = fcntl(SETUP_FD, F_DUPFD_CLOEXEC, (int)(3 + n));
	if (fd < 0)
		return isd_error(-errno, "moving the setup socket above the preserved descriptors");
	report_fd = fd;
	for (size_t i = 0; i < n; i++)
		if (dup2(x->preserved_fds[i], (int)(3 + i)) < 0)
			return isd_error(-errno, "handing descriptor %zu to the payload", 3 + i);
	for (size_t i = 0; i < n; i++)
		close(x->preserved_fds[i]);
	return 0;
}

/* (init.h) */
int isd_init_apply_privileges(const struct isd_spec *spec, const struct isd_seccomp_program *seccomp)
{
	bool seccomp_first = spec->config_caps && !spec->no_new_privs;
	int r;

	if (seccomp_first && (r = isd_seccomp_install(seccomp)) < 0)
		return r;
	if (spec->config_caps && (r = isd_caps_apply_sets(&spec->caps, spec->no_new_privs)) < 0)
		return r;
	return seccomp_first ? 0 : isd_seccomp_install(seccomp);
}

static _Noreturn void payload_main(const struct isd_init_args *a, const sigset_t *old_mask, int pty_slave)
{
	const struct isd_spec *spec = a->spec;
	int fd, r;

	sigprocmask(SIG_SETMASK, old_mask, NULL);
	/* A session of its own: the caller's terminal is not its controlling
	 * terminal, so TIOCSTI cannot push input into it. */
	if (setsid() < 0) {
		isd_error(-errno, "starting a new session for the payload");
		report_and_exit(ISD_EXIT_FAILURE);
	}
	if (pty_slave >= 0 && isd_pty_attach(pty_slave) < 0)
		report_and_exit(ISD_EXIT_FAILURE);
	/* Capabilities, securebits and no_new_privs come from init, which set
	 * them before starting us (isd-runtime's config sets: isd_init_apply_privileges
	 * below).  A non-zero uid loses every capability here, as in Docker. */
	if (spec->n_uid_ranges && isd_userns_become_in_groups(spec->uid, spec->gid, spec->groups, spec->n_groups) < 0)
		report_and_exit(ISD_EXIT_FAILURE);

	/* Magic links (/proc/self/fd/N, /proc/1/cwd) could lead back to a
	 * directory outside the root; the working directory never takes one. */
	fd = isd_openat2(AT_FDCWD, spec->workdir ? spec->workdir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC,
			 RESOLVE_NO_MAGICLINKS);
	if (fd < 0 || fchdir(fd) < 0) {
		isd_error(-errno, "changing to the working directory %s", spec->workdir ? spec->workdir : "/");
		report_and_exit(ISD_EXIT_FAILURE);
	}
	close(fd);

	/* The config's limits first: the storage bound then only lowers. */
	r = isd_init_apply_rlimits(spec);
	if (r == 0)
		r = isd_storage_payload_limits(&spec->storage);
	if (r == 0)
		r = isd_landlock_apply(&a->landlock);
	if (r == 0 && a->activity)
		r = hand_over_activity_listener(a);
	if (r == 0 && a->start_gate_fd >= 0 && (r = wait_at_start_gate(a)) == -ENOENT)
		report_and_exit(ISD_EXIT_NOT_FOUND);
	if (r == 0)
		r = hand_over_preserved(&a->extras);
	if (r == 0)
		r = isd_init_apply_privileges(spec, a->seccomp);
	if (r < 0)
		report_and_exit(ISD_EXIT_FAILURE);

	r = isd_init_exec_command(spec->argv, spec->env, isd_spec_getenv(spec, "PATH"), spec->command_not_on_caller_path);
	report_and_exit(r == -ENOENT ? ISD_EXIT_NOT_FOUND : ISD_EXIT_CANNOT_EXEC);
}

struct payload_start {
	const struct isd_init_args *a;
	const sigset_t *old_mask;
	int pty_slave;
};

static int payload_trampoline(void *arg)
{
	const struct payload_start *ps = arg;

	if (ps->a->spec->pid_host)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	payload_main(ps->a, ps->old_mask, ps->pty_slave);
}

/* Like fork, without copying init's page tables: the payload shares init's
 * memory until its execve (CLONE_VM) while init waits (CLONE_VFORK), on a
 * stack of its own.  payload_main only writes its own stack, per-task
 * state and, on failure, the error buffer right before _exit. */
static pid_t spawn_payload(const struct isd_init_args *a, const sigset_t *old_mask, int pty_slave)
{
	static char stack[256 * 1024] __attribute__((aligned(64)));
	struct payload_start ps = {.a = a, .old_mask = old_mask, .pty_slave = pty_slave};

	return clone(payload_trampoline, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &ps);
}

static int wait_for_parent_byte(void)
{
	char c;
	ssize_t n;

	do
		n = recv(SETUP_FD, &c, 1, 0);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -EPIPE;
}

/* A descriptor made inside the sandbox for isd on the host: the pty master
 * (relayed to the caller's terminal, nothing of which enters the sandbox)
 * or a listening socket of the sandbox's network namespace (relayed by
 * src/proxy-listen.c). */
static int send_fd(int32_t type, int32_t tag, int fd, const char *what)
{
	struct setup_message msg = {.type = type, .exit_code = tag};
	int r = isd_send_with_fd(SETUP_FD, &msg, sizeof(msg), fd);

	return r < 0 ? isd_error(r, "handing %s to isd", what) : 0;
}

static int send_net_fd(int32_t tag, int fd)
{
	return send_fd(SETUP_NET, tag, fd, "a listening socket");
}

_Noreturn void isd_init_main(const struct isd_init_args *a)
{
	int pty_master = -1, pty_slave = -1;
	const struct isd_spec *spec = a->spec;
	struct pollfd pfd = {.fd = SETUP_FD, .events = POLLIN};
	sigset_t old_mask;
	pid_t payload, parent = getppid();
	int r;

	/* The sandbox must not outlive isd: when isd dies, init (and with it
	 * the whole pid namespace) gets SIGKILL.  isd may already be gone. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(ISD_EXIT_FAILURE);
	/* pid 1 ignores signals it has no handler for, so a Ctrl-C that isd
	 * forwards during setup would be lost: blocked now, it waits for init
	 * to hand it to the payload. */
	if (isd_init_block_signals(&old_mask) < 0)
		_exit(ISD_EXIT_FAILURE);
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR)))
		_exit(ISD_EXIT_FAILURE);

	if (a->shared_ns & CLONE_NEWUSER) {
		/* isd-runtime joined a user namespace: its maps are made, and
		 * init has every capability in it (setns gave them) until it
		 * takes the payload's ids below.  Its root for the setup (the
		 * caller's id may have no name there: files could not be
		 * made), the capabilities kept through the change. */
		if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP) < 0)
			r = isd_error(-errno, "setting securebits");
		else
			r = isd_userns_become(0, 0);
		if (r == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
			r = isd_error(-errno, "setting the parent-death signal");
	} else if (spec->n_uid_ranges || spec->idmapped || spec->host_groups) {
		/* isd build: the parent writes maps of several ranges
		 * (newuidmap), then sends a byte.  Setup runs as root of the
		 * namespace; the payload takes spec->uid before execve.  A
		 * root caller's (src/rootful.c): the parent maps the payload's
		 * ids to an unprivileged host id, which init takes at once
		 * (keeping its capabilities in the namespace for the setup);
		 * likewise isd-runtime's additional groups, which only the
		 * parent can map (host_groups, isd-runtime's rt_apply_groups). */
		bool one_id = !spec->n_uid_ranges;

		if (wait_for_parent_byte() < 0)
			_exit(ISD_EXIT_FAILURE);
		if (one_id && prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP) < 0)
			r = isd_error(-errno, "setting securebits");
		else
			r = one_id ? isd_userns_become_in_groups(spec->uid, spec->gid, spec->groups, spec->n_groups)
				   : isd_userns_become(0, 0);
		/* Changing ids cleared the parent-death signal. */
		if (r == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
			r = isd_error(-errno, "setting the parent-death signal");
		if (r == 0 && poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR)))
			_exit(ISD_EXIT_FAILURE);
	} else {
		r = isd_userns_write_own_maps(spec->uid, spec->host_uid, spec->gid, spec->host_gid);
	}
	if (r < 0)
		report_and_exit(ISD_EXIT_FAILURE);
	if (a->wait_for_cgroup && wait_for_parent_byte() < 0)
		_exit(ISD_EXIT_FAILURE);
	/* After joining the sandbox's cgroup, so that it is the root inside. */
	if (a->extras.cgroupns_fd >= 0) {
		if (setns(a->extras.cgroupns_fd, CLONE_NEWCGROUP) < 0) {
			isd_error(-errno, "joining the cgroup namespace of linux.namespaces");
			report_and_exit(ISD_EXIT_FAILURE);
		}
		close(a->extras.cgroupns_fd);
	} else if (!(a->shared_ns & CLONE_NEWCGROUP) && unshare(CLONE_NEWCGROUP) < 0 && errno != EINVAL) {
		isd_error(-errno, "creating the cgroup namespace");
		report_and_exit(ISD_EXIT_FAILURE);
	}
	/* The name is cosmetic: where an outer container's seccomp profile
	 * forbids sethostname (EPERM, or ENOSYS from a profile that does not
	 * know it; podman allows it only with CAP_SYS_ADMIN),
	 * the sandbox keeps its own UTS namespace with the inherited name, and
	 * /etc/hostname says that name (mount.c). */
	if (sethostname(spec->hostname, strlen(spec->hostname)) < 0 && errno != EPERM && errno != EACCES &&
	    errno != ENOSYS) {
		isd_error(-errno, "setting the host name %s", spec->hostname);
		report_and_exit(ISD_EXIT_FAILURE);
	}
	if (spec->network != ISD_NET_HOST && isd_net_loopback_up() < 0)
		report_and_exit(ISD_EXIT_FAILURE);
	if (isd_mount_setup(spec, &a->extras) < 0)
		report_and_exit(ISD_EXIT_FAILURE);
	/* After the mounts: --forward-unix sockets live in the sandbox's /run. */
	if (isd_net_sandbox_listeners(spec, send_net_fd) < 0)
		report_and_exit(ISD_EXIT_FAILURE);

	if (setsid() < 0 && errno != EPERM) {
		isd_error(-errno, "starting a new session for the sandbox");
		report_and_exit(ISD_EXIT_FAILURE);
	}
	if (spec->tty) {
		int null_fd;

		if (isd_pty_open(&pty_master, &pty_slave) < 0 || send_fd(SETUP_PTY, 0, pty_master, "the pty") < 0)
			report_and_exit(ISD_EXIT_FAILURE);
		close(pty_master);
		/* init itself keeps no descriptor of the caller's terminal. */
		null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int fd = 0; null_fd >= 0 && fd < 3; fd++)
			dup2(null_fd, fd);
		if (null_fd > 2)
			close(null_fd);
	}
	if (spec->pid_host) {
		/* No pid namespace kills what the payload leaves behind: init
		 * adopts every orphan of the tree and kills it before leaving,
		 * also when isd dies, which is now a signal init can act on. */
		sigset_t death;
		sigemptyset(&death);
		sigaddset(&death, ISD_INIT_DEATH_SIGNAL);
		if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 || sigprocmask(SIG_BLOCK, &death, NULL) < 0 ||
		    prctl(PR_SET_PDEATHSIG, ISD_INIT_DEATH_SIGNAL) < 0) {
			isd_error(-errno, "making init the reaper of the sandbox's processes");
			report_and_exit(ISD_EXIT_FAILURE);
		}
		if (getppid() != parent)
			_exit(ISD_EXIT_FAILURE);
	}
	/* The payload inherits its capability state from init: every
	 * capability dropped, securebits locked and no_new_privs set (isd
	 * build's RUN keeps Docker's default set instead).  init itself keeps
	 * nothing that could help the payload either: no capabilities, no
	 * setup socket, and not dumpable, so /proc/1 (and the isd binary behind
	 * /proc/1/exe) stays out of the payload's reach. */
	if ((spec->n_uid_ranges || (a->shared_ns & CLONE_NEWUSER)) && !spec->build_caps) {
		/* isd exec --image with the image's id map: init takes the
		 * payload's ids while still root of the namespace (as with a
		 * single id, both are then that user); NO_SETUID_FIXUP keeps the
		 * capabilities the drop below needs. */
		if (pty_slave >= 0 && fchown(pty_slave, spec->uid, spec->gid) < 0) {
			isd_error(-errno, "giving the pseudo-terminal to uid %u", spec->uid);
			report_and_exit(ISD_EXIT_FAILURE);
		}
		if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP) < 0) {
			isd_error(-errno, "setting securebits");
			report_and_exit(ISD_EXIT_FAILURE);
		}
		if (isd_userns_become_in_groups(spec->uid, spec->gid, spec->groups, spec->n_groups) < 0)
			report_and_exit(ISD_EXIT_FAILURE);
	}
	/* isd-runtime's config sets are the payload's to take (from every
	 * capability, in payload_main); init drops all once it has started. */
	if (!spec->config_caps && (spec->build_caps ? isd_caps_keep_build_set() : isd_caps_drop_all()) < 0)
		report_and_exit(ISD_EXIT_FAILURE);
	prctl(PR_SET_DUMPABLE, 0);
	/* Set up: from now on the sandbox is its own, reparented to the
	 * caller's subreaper when isd exits (a failure before ended it). */
	if (a->detached && prctl(PR_SET_PDEATHSIG, 0) < 0) {
		isd_error(-errno, "clearing the parent-death signal");
		report_and_exit(ISD_EXIT_FAILURE);
	}

	payload = spawn_payload(a, &old_mask, pty_slave);
	if (payload < 0) {
		isd_error(-errno, "starting the payload");
		report_and_exit(ISD_EXIT_FAILURE);
	}
	if (pty_slave >= 0)
		close(pty_slave);
	close(SETUP_FD);
	if (a->activity)
		close(ACTIVITY_FD);
	if (a->start_gate_fd >= 0)
		close(a->start_gate_fd);
	/* the payload's now: init holds none (a pipe's end would stay open) */
	for (size_t i = 0; i < a->extras.n_preserved_fds; i++)
		close(a->extras.preserved_fds[i]);
	if ((spec->build_caps || spec->config_caps) && isd_caps_drop_all() < 0)
		kill(payload, SIGKILL);
	r = isd_init_run_until(payload, spec->pid_host ? ISD_INIT_DEATH_SIGNAL : 0);
	if (spec->pid_host)
		isd_init_kill_descendants(NULL, 0);
	_exit(r < 0 ? 128 + SIGKILL : r);
}
