/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The orchestration, in a fixed order.
 *
 * parent (isd on the host)          child "init" (pid 1 inside,        payload
 *                                   src/init.c)
 * --------------------------------  ---------------------------------  ------------------
 * validate spec, compile seccomp,
 * create the cgroup
 * clone3(all namespaces, cgroup) -> die with parent, uid/gid maps,
 *                                   cgroupns, hostname, loopback,
 *                                   file system + pivot_root
 *                                   fork --------------------------->  new session, close fds,
 *                                   drop caps, wait as init            drop caps + no_new_privs,
 *                                                                      chdir, seccomp, execve
 * read the setup socket: an error
 * message or EOF (= execve done);
 * forward signals; wait; clean up
 *
 * Every failure on the child side is sent over the setup socket, so the user
 * sees one line from the parent, and the parent exits 125 (126/127 when the
 * command could not be executed or found).
 */
#define _GNU_SOURCE
#include "isd/activity.h"
#include "isd/agent-state.h"
#include "isd/sandbox.h"
#include "isd/cgroup.h"
#include "init.h"
#include "isolation.h"
#include "landlock.h"
#include "net.h"
#include "isd/process.h"
#include "isd/proxy.h"
#include "pty.h"
#include "rootful.h"
#include "sandbox-landlock.h"
#include "isd/seccomp.h"
#include "isd/session.h"
#include "isd/storage.h"
#include "isd/syscalls.h"
#include "userns.h"
#include "isd/util.h"
#include "workspace.h"
#include "workspace-fallback.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static volatile pid_t forward_to = -1;

static void forward_signal(int sig)
{
	if (forward_to > 0)
		kill(forward_to, sig);
}

/* The caller's dispositions back once the sandbox is gone: after one run
 * (isd build's RUN step), a Ctrl-C is the caller's again. */
static void stop_forwarding(const struct sigaction *old, bool *forwarding)
{
	if (!*forwarding)
		return;
	forward_to = -1;
	for (size_t i = 0; i < ISD_N_FORWARDED_SIGNALS; i++)
		sigaction(isd_forwarded_signals[i], &old[i], NULL);
	*forwarding = false;
}

static char *hosts_content(const struct isd_spec *spec)
{
	_cleanup_free_ char *host = NULL;

	_cleanup_free_ char *added = isd_netcfg_hosts_lines(spec); /* --add-host */

	if (spec->network == ISD_NET_HOST && isd_read_file_at(AT_FDCWD, "/etc/hosts", &host, NULL) == 0)
		return isd_xasprintf("%s\n127.0.1.1\t%s\n%s", host, spec->hostname, added);
	return isd_xasprintf("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t%s\n%s",
			     spec->hostname, added);
}

static char *resolv_content(const struct isd_spec *spec)
{
	char *host = NULL;

	if (spec->network == ISD_NET_HOST && isd_read_file_at(AT_FDCWD, "/etc/resolv.conf", &host, NULL) == 0)
		return host;
	if (spec->network == ISD_NET_PRIVATE)
		return isd_net_private_resolv_conf();
	/* isd's DNS stub: allowed names only (src/proxy-dns.c) */
	if (spec->network == ISD_NET_NETLESS)
		return isd_xstrdup("# isd: --network=netless, allowlisted names only\nnameserver 127.0.0.1\n");
	/* No nameserver line: resolvers try 127.0.0.1:53, which refuses at
	 * once, so lookups fail fast instead of timing out. */
	return isd_xasprintf("# isd: --network=%s, this sandbox has no DNS\n", isd_network_mode_name(spec->network));
}

/* Reads until EOF, which comes when the payload's execve closed the last
 * copy of the socket.  Returns 1 when an error message came; 2 with
 * at_gate, when the payload waits at the start gate (SETUP_READY). */
static int read_setup_messages(int fd, struct setup_message *msg, int *pty_master, struct isd_proxy *proxy,
			       struct isd_activity *activity, bool at_gate)
{
	bool got = false;

	for (;;) {
		struct setup_message m;
		int passed;
		ssize_t n = isd_recv_with_fd(fd, &m, sizeof(m), 0, &passed);

		if (n == -EINTR)
			continue;
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		if (passed >= 0) {
			if ((size_t)n == sizeof(m) && m.type == SETUP_PTY && *pty_master < 0)
				*pty_master = passed;
			else if ((size_t)n == sizeof(m) && m.type == SETUP_NET && proxy)
				isd_proxy_adopt_fd(proxy, m.exit_code, passed);
			else
				close(passed);
		}
		if ((size_t)n == sizeof(m) && m.type == SETUP_ACTIVITY && activity && passed < 0)
			isd_activity_off(activity, m.exit_code);
		if (!got && (size_t)n == sizeof(m) && m.type == SETUP_ERROR) {
			*msg = m;
			msg->text[sizeof(msg->text) - 1] = '\0';
			got = true;
		}
		if (!got && at_gate && (size_t)n == sizeof(m) && m.type == SETUP_READY)
			return 2;
	}
	return got ? 1 : 0;
}

static pid_t spawn_child(const struct isd_spec *spec, unsigned long shared_ns, struct isd_cgroup *cg,
			 bool *needs_attach)
{
	struct isd_clone_args args = {.exit_signal = SIGCHLD};
	long pid;

	args.flags = (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS) & ~shared_ns;
	if (!spec->pid_host)
		args.flags |= CLONE_NEWPID;
	if (spec->network != ISD_NET_HOST)
		args.flags |= CLONE_NEWNET;
	*needs_attach = false;
	if (cg->dirfd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)cg->dirfd;
	}
	pid = isd_clone3(&args);
	if (pid < 0 && (errno == ENOSYS || errno == E2BIG || (errno == EINVAL && cg->dirfd >= 0))) {
		/* Kernels before 5.7 lack CLONE_INTO_CGROUP: the parent moves
		 * the child in before it goes on (see wait_for_cgroup). */
		args.flags &= ~CLONE_INTO_CGROUP;
		*needs_attach = cg->dirfd >= 0;
		pid = isd_clone_legacy((unsigned long)(args.flags | SIGCHLD));
	}
	return (pid_t)pid;
}

/* The storage watcher (src/storage-watch.c): what the sandbox writes to the
 * host disk, named by the session's id, or by isd's pid without one.
 * Where the store is on overlayfs the payload writes to copies
 * (src/workspace-fallback.c), not the upper layers, which stay empty until
 * the run ends: the copies are counted as the landlock tier's, what
 * changed since they were made, or the bound would hold nothing. */
static int prepare_storage(const struct isd_spec *spec, const struct isd_session *session,
			   const struct isd_mount_extras *extras, const struct isd_copy_fallback *copies,
			   struct isd_storage_watch **out)
{
	struct isd_storage_scope scope;
	char pid[16];
	int r;

	isd_storage_scope_collect(spec, session ? session->dir : NULL, extras->state_upper, extras->state_file,
				  spec->n_mounts, &scope);
	if (copies->workspace)
		isd_strv_push(&scope.accounted, isd_xstrdup(copies->workspace));
	for (size_t i = 0; i < copies->n_state; i++)
		if (copies->state[i])
			isd_strv_push(&scope.accounted, isd_xstrdup(copies->state[i]));
	if (copies->workspace || copies->n_state)
		scope.baseline = copies->since;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	scope.id = session ? session->id : pid;
	r = isd_storage_watch_prepare(spec, &scope, out);
	isd_storage_scope_free(&scope);
	return r;
}

/* The end of isd_sandbox_create_detached(): the sandbox is handed to the
 * caller (and so not killed nor its cgroup removed on the way out), or
 * its setup failed.  Returns 0 or the exit status, recorded. */
static int detach_result(int r, const struct setup_message *msg, pid_t *pid, int *pty_master, struct isd_cgroup *cg,
			 struct isd_sandbox_detached *d)
{
	if (r < 0)
		return isd_error(r, "receiving the sandbox's setup messages");
	if (r == 1) {
		isd_error_raw(-EIO, msg->text);
		return msg->exit_code;
	}
	if (r == 0 && d->start_gate_fd >= 0)
		return isd_error(-EIO, "the sandbox ended before its start gate"), ISD_EXIT_FAILURE;
	d->init_pid = *pid;
	*pid = -1;
	d->pty_master = *pty_master;
	*pty_master = -1;
	d->cgroup_dir = cg->path ? isd_xstrdup(cg->path) : NULL;
	isd_cgroup_release(cg);
	return 0;
}

/* Keeps fds[0..n) (sorted here) and closes every other descriptor. */
static void close_all_but(int *fds, size_t n)
{
	unsigned next = 0;

	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		if ((unsigned)fds[i] > next)
			isd_close_range(next, (unsigned)fds[i] - 1, 0);
		next = (unsigned)fds[i] + 1;
	}
	isd_close_range(next, ~0U, 0);
}

/* A detached sandbox in netless (isd-runtime's run.oci.isd.network): its
 * relay outlives isd-runtime create in a process of its own, in a session
 * of its own, holding the relay's descriptors only (not the container's
 * lock, not conmon's pipes), and ends with the sandbox's init: a relay
 * that fails to start ends the sandbox, which is never left without the
 * network it was promised. */
static int start_relay_keeper(struct isd_proxy *proxy, pid_t init)
{
	int fds[256], pidfd = (int)syscall(SYS_pidfd_open, init, 0);
	size_t n = isd_proxy_held_fds(proxy, fds, sizeof(fds) / sizeof(fds[0]) - 1);
	sigset_t none;
	pid_t keeper;

	if (pidfd < 0)
		return isd_error(-errno, "starting the relay of the detached sandbox: its init");
	if (n >= sizeof(fds) / sizeof(fds[0]) - 1) {
		close(pidfd);
		return isd_error(-EMFILE, "starting the relay of the detached sandbox: more than %zu descriptors", n);
	}
	fflush(NULL);
	keeper = fork();
	if (keeper < 0) {
		close(pidfd);
		return isd_error(-errno, "starting the relay of the detached sandbox");
	}
	if (keeper == 0) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		int null_fd;

		fds[n++] = pidfd;
		close_all_but(fds, n);
		null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int fd = 0; null_fd >= 0 && fd < 3; fd++)
			dup2(null_fd, fd);
		setsid();
		for (size_t i = 0; i < ISD_N_FORWARDED_SIGNALS; i++)
			signal(isd_forwarded_signals[i], SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (isd_proxy_start(proxy) < 0) {
			kill(init, SIGKILL);
			_exit(ISD_EXIT_FAILURE);
		}
		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(pidfd);
	return 2;
}

/* What needs isd on the host for as long as the sandbox runs cannot be had
 * by a sandbox that outlives isd (but the relay: start_relay_keeper). */
static int refuse_detached(const struct isd_spec *spec)
{
	const char *what = NULL;

	if (spec->tier == ISD_ISOLATION_LANDLOCK)
		what = "the landlock isolation tier";
	else if (spec->network == ISD_NET_PRIVATE)
		what = "--network private (pasta or slirp4netns)";
	else if (spec->workspace.path && spec->workspace.mode == ISD_WORKSPACE_COW)
		what = "a copy-on-write workspace";
	else if (spec->activity_log)
		what = "the activity log";
	else if (spec->agent_state)
		what = "the agent's state";
	else if (spec->storage.size || spec->storage.inodes)
		what = "a storage bound (--storage-opt size/inodes)";
	if (!what)
		return 0;
	return isd_error(-EOPNOTSUPP, "starting a sandbox that outlives isd: %s needs isd on the host for the whole run",
			 what);
}

/* d: isd_sandbox_create_detached() (the sandbox is left running at its
 * start gate), else isd_sandbox_run(). */
static int run_sandbox(const struct isd_spec *spec, struct isd_sandbox_detached *d)
{
	struct isd_seccomp_program seccomp = {0};
	struct isd_cgroup cg;
	struct setup_message msg = {0};
	struct isd_init_args args = {.spec = spec};
	int pty_master = -1;
	_cleanup_free_ char *hosts = NULL, *resolv = NULL;
	struct sigaction sa = {.sa_handler = forward_signal, .sa_flags = SA_RESTART};
	struct sigaction old_forward[ISD_N_FORWARDED_SIGNALS];
	int sv[2] = {-1, -1}, activity_sock = -1;
	int status = 0, exit_code, r, was_subreaper = 0;
	bool needs_attach, forwarding = false;
	pid_t pid = -1;
	struct isd_pty_child waited = {.pid = -1};
	bool parent_failed = true, relay_failed = false;
	_cleanup_free_ char *failure = NULL;
	struct isd_proxy *proxy = NULL;
	struct isd_net_helper net_helper = {.pid = -1, .exit_fd = -1};
	struct isd_session session = {.lock_fd = -1};
	bool have_session = false;
	_cleanup_free_ char *upper = NULL, *work = NULL;
	struct isd_agent_state_run *agent_state = NULL;
	struct isd_activity *activity = NULL;
	struct isd_workspace_host *ws_host = NULL;
	_cleanup_free_ char *session_log = NULL;
	struct isd_storage_watch *storage = NULL;
	struct isd_copy_fallback copies = {0};

	if (d && refuse_detached(spec) < 0)
		return ISD_EXIT_FAILURE;
	if (spec->tier == ISD_ISOLATION_LANDLOCK)
		return isd_sandbox_landlock_run(spec);
	isd_cgroup_init(&cg);
	exit_code = ISD_EXIT_FAILURE;
	args.start_gate_fd = d ? d->start_gate_fd : -1;
	args.detached = d != NULL;
	args.shared_ns = d ? d->shared_ns : 0;
	r = isd_seccomp_prepare_stacked(spec->seccomp, spec->seccomp_also, &seccomp);
	if (r < 0)
		goto out;
	if (d && d->cgroup_path)
		r = isd_cgroup_prepare_path(&spec->limits, d->cgroup_path, &cg);
	else
		r = isd_cgroup_prepare_named(&spec->limits, d ? d->cgroup_name : NULL, &cg);
	if (r < 0)
		goto out;
	r = isd_spec_create_sources(spec);
	if (r < 0)
		goto out;
	r = isd_workspace_prepare_host(spec, &ws_host);
	if (r < 0)
		goto out;
	if (spec->workspace.path && spec->workspace.mode == ISD_WORKSPACE_COW) {
		r = isd_session_for_workspace(spec->workspace.path, spec->workspace.session, spec->argv,
					      spec->workspace.keep, &session);
		if (r < 0)
			goto out;
		have_session = true;
		upper = isd_session_upper(&session);
		work = isd_session_work(&session);
		args.extras.workspace_upper = upper;
		args.extras.workspace_work = work;
		args.extras.workspace_session = session.dir;
	}
	if (!spec->activity_log && have_session)
		session_log = isd_xasprintf("%s/%s", session.dir, ISD_ACTIVITY_FILE);
	if ((spec->activity_log || session_log) &&
	    (r = isd_activity_open(spec->activity_log ? spec->activity_log : session_log, spec->argv, spec->workdir,
				   &activity)) < 0)
		goto out;
	args.activity = activity;
	r = isd_agent_state_begin(spec, have_session ? session.id : NULL, getenv("HOME"), &args.extras, &agent_state);
	if (r < 0)
		goto out;
	r = isd_copy_fallback_begin(spec, have_session ? session.dir : NULL, upper, args.extras.state_upper, &copies);
	if (r < 0)
		goto out;
	args.extras.workspace_copy = copies.workspace;
	args.extras.state_copy = copies.state;
	r = isd_rootful_prepare(spec, have_session ? session.dir : NULL, &args.extras);
	if (r < 0)
		goto out;
	r = d ? 0 : prepare_storage(spec, have_session ? &session : NULL, &args.extras, &copies, &storage);
	if (r < 0)
		goto out;
	r = isd_proxy_new(spec, &proxy);
	if (r < 0)
		goto out;
	if (activity)
		isd_proxy_set_sink(proxy, isd_activity_net_record, activity);
	if (spec->network == ISD_NET_PRIVATE && (r = isd_net_private_prepare(&net_helper)) < 0)
		goto out;
	hosts = hosts_content(spec);
	resolv = resolv_content(spec);
	isd_landlock_plan(spec, &args.landlock);
	args.seccomp = &seccomp;
	args.extras.hosts = hosts;
	args.extras.resolv_conf = resolv;
	args.extras.cgroup2 = cg.dirfd >= 0;
	args.extras.mqueue = d && d->mqueue;
	args.extras.sysctl = d ? d->sysctl : NULL;
	args.extras.preserved_fds = d ? d->preserved_fds : NULL;
	args.extras.n_preserved_fds = d ? d->n_preserved_fds : 0;
	args.extras.pid_joined = args.shared_ns & CLONE_NEWPID;
	args.extras.cgroupns_fd = d ? d->cgroupns_fd : -1;
	/* No mount(2) and no fsopen(2): no nested sandbox will ask for the
	 * unmasked /proc and /sys, so a start mounts them once, not twice. */
	args.extras.no_nested_mounts = isd_seccomp_always_refuses(&seccomp, "mount") &&
				       isd_seccomp_always_refuses(&seccomp, "fsopen");

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		isd_error(-errno, "creating the setup socket");
		goto out;
	}
	if (activity && (r = isd_activity_prestart(activity, &activity_sock)) < 0)
		goto out;
	fflush(NULL);
	args.wait_for_cgroup = false;
	/* --pid host: should init die first, the orphans come to isd. */
	if (spec->pid_host) {
		prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper);
		prctl(PR_SET_CHILD_SUBREAPER, 1);
	}
	pid = spawn_child(spec, args.shared_ns, &cg, &needs_attach);
	if (pid < 0) {
		r = isd_error(-errno, "creating the sandbox's namespaces (clone3)");
		isd_userns_explain_failure(r);
		goto out;
	}
	if (pid == 0) {
		/* Only the setup socket crosses into the sandbox, at a fixed
		 * number (and the session's lock, for init); every other
		 * descriptor the caller passed is closed. */
		int lock = have_session ? fcntl(session.lock_fd, F_DUPFD_CLOEXEC, 10) : -1;
		unsigned first_other = lock >= 0 ? SESSION_LOCK_FD + 1 : SETUP_FD + 1;

		/* The gate keeps its number, unless the fixed ones need it. */
		if (args.start_gate_fd >= 0 && args.start_gate_fd <= ACTIVITY_FD &&
		    (args.start_gate_fd = fcntl(args.start_gate_fd, F_DUPFD_CLOEXEC, ACTIVITY_FD + 1)) < 0)
			_exit(ISD_EXIT_FAILURE);
		if (dup3(sv[1], SETUP_FD, O_CLOEXEC) < 0 && sv[1] != SETUP_FD)
			_exit(ISD_EXIT_FAILURE);
		if (lock >= 0 && dup3(lock, SESSION_LOCK_FD, O_CLOEXEC) < 0)
			_exit(ISD_EXIT_FAILURE);
		/* (activity_sock is above the fixed numbers: isd_activity_prestart) */
		if (activity_sock >= 0) {
			if (lock < 0)
				close(SESSION_LOCK_FD);
			if (dup3(activity_sock, ACTIVITY_FD, O_CLOEXEC) < 0)
				_exit(ISD_EXIT_FAILURE);
			first_other = ACTIVITY_FD + 1;
		}
		isd_rootful_close_other_fds(spec, &args.extras, first_other, args.start_gate_fd);
		/* also: wait until pasta/slirp4netns configured the network */
		args.wait_for_cgroup = needs_attach || spec->network == ISD_NET_PRIVATE;
		isd_init_main(&args);
	}
	close(sv[1]);
	sv[1] = -1;
	if (activity_sock >= 0)
		close(activity_sock);
	activity_sock = -1;
	waited.pid = pid;
	forward_to = pid;
	for (size_t i = 0; i < ISD_N_FORWARDED_SIGNALS; i++)
		sigaction(isd_forwarded_signals[i], &sa, &old_forward[i]);
	forwarding = true;
	if (isd_storage_watch_run(storage, pid, pid, cg.dirfd) < 0)
		goto out;

	if ((spec->n_uid_ranges || spec->idmapped || spec->host_groups) && !(args.shared_ns & CLONE_NEWUSER)) {
		struct isd_id_range u = {spec->uid, spec->host_uid, 1};
		_cleanup_free_ struct isd_id_range *g = isd_xcalloc(spec->n_groups + 1, sizeof(*g));
		size_t n_g = 1;

		/* and the additional groups' (isd_rootful_map_groups), once each */
		g[0] = (struct isd_id_range){spec->gid, spec->host_gid, 1};
		for (size_t i = 0; spec->host_groups && i < spec->n_groups; i++) {
			size_t j;
			for (j = 0; j < n_g && g[j].inside != spec->groups[i]; j++)
				;
			if (j == n_g)
				g[n_g++] = (struct isd_id_range){spec->groups[i], spec->host_groups[i], 1};
		}
		r = spec->idmapped || !spec->n_uid_ranges ? isd_userns_write_child_maps(pid, &u, 1, g, n_g)
				   : isd_userns_write_child_maps(pid, spec->uid_ranges, spec->n_uid_ranges,
								 spec->gid_ranges, spec->n_gid_ranges);
		if (r < 0)
			goto out;
		(void)!send(sv[0], "m", 1, MSG_NOSIGNAL);
	}

	if (needs_attach) {
		r = isd_cgroup_attach(&cg, pid);
		if (r < 0)
			goto out;
		if (spec->network != ISD_NET_PRIVATE)
			(void)!send(sv[0], "g", 1, MSG_NOSIGNAL);
	}
	if (spec->network == ISD_NET_PRIVATE) {
		r = isd_net_private_start(&net_helper, pid);
		if (r < 0)
			goto out;
		(void)!send(sv[0], "g", 1, MSG_NOSIGNAL);
	}

	/* Started now, while the sandbox sets itself up: ready before the
	 * payload's first exec, and its start is off the set-up's way. */
	if (activity && (r = isd_activity_listen(activity)) < 0)
		goto out;
	parent_failed = false;
	r = read_setup_messages(sv[0], &msg, &pty_master, proxy, activity, d && d->start_gate_fd >= 0);
	if (d && proxy && (r == 2 || (r == 0 && d->start_gate_fd < 0)))
		r = start_relay_keeper(proxy, pid);
	if (d) {
		r = detach_result(r, &msg, &pid, &pty_master, &cg, d);
		exit_code = r < 0 ? ISD_EXIT_FAILURE : r;
		goto out;
	}
	/* The listeners queue connections until now: the payload may have
	 * started already, nothing it sent is lost. */
	/* A sandbox whose relay could not start would run without what it
	 * was promised (its network, its terminal): it ends instead. */
	if (r < 0)
		isd_error(r, "receiving the sandbox's setup messages");
	if (r < 0 || (r == 0 && (isd_proxy_start(proxy) < 0 ||
		       (pty_master >= 0 && isd_pty_run(&pty_master, spec->interactive, &waited) < 0)))) {
		isd_error_print("starting the sandbox's relay failed");
		kill(pid, SIGKILL);
		relay_failed = true;
	}
	if (waited.reaped)
		status = waited.status;
	else
		isd_wait_pid(pid, &status);
	pid = -1;
	stop_forwarding(old_forward, &forwarding);
	/* --pid host: what outlived init (it was killed first) came to us. */
	if (spec->pid_host)
		isd_init_kill_descendants((pid_t[]){net_helper.pid, isd_activity_listener_pid(activity)}, 2);
	exit_code = relay_failed ? ISD_EXIT_FAILURE : isd_exit_status_from_wait(status);
	if (r > 0) {
		isd_error_raw(-EIO, msg.text);
		isd_error_print("sandbox setup failed");
		exit_code = msg.exit_code;
	}
	if (cg.dirfd >= 0)
		isd_cgroup_report_status(&cg, 0, spec->argv[0], status);
	if (r == 0 && WIFEXITED(status))
		isd_agent_state_hint_at_exit(spec, getenv("HOME"), exit_code);
out:
	/* The cleanup below may clear it (a session's end looks at old logs). */
	if (parent_failed && !d)
		failure = isd_xstrdup(isd_error_message());
	/* A start that failed: the sandbox does not outlive it. */
	isd_kill_and_reap(&pid);
	isd_storage_watch_stop(storage);
	stop_forwarding(old_forward, &forwarding);
	if (spec->pid_host)
		prctl(PR_SET_CHILD_SUBREAPER, was_subreaper);
	/* Before the session ends: nothing of the sandbox may write to it
	 * once it counts as stopped. */
	isd_cgroup_destroy(&cg);
	isd_rootful_release(spec, &args.extras);
	/* The relay writes to the activity log: it stops first. */
	isd_proxy_free(proxy);
	proxy = NULL;
	isd_activity_free(activity);
	isd_workspace_cleanup_host(spec, ws_host);
	/* The copies' changes into their layers, before those are read. */
	isd_copy_fallback_end(spec, upper, args.extras.state_upper, &copies, &session.keep);
	/* Held state is shown by isd diff of the session: it stays. */
	if (isd_agent_state_end(agent_state) && have_session)
		session.keep = true;
	if (have_session) {
		isd_session_finish(&session);
		isd_session_free(&session);
	}
	isd_net_private_stop(&net_helper);
	if (pty_master >= 0)
		close(pty_master);
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	if (activity_sock >= 0)
		close(activity_sock);
	isd_seccomp_program_free(&seccomp);
	isd_landlock_plan_free(&args.landlock);
	if (failure && failure[0])
		isd_error_raw(-EIO, failure);
	if (parent_failed && !d)
		isd_error_print("preparing the sandbox failed");
	return exit_code;
}

int isd_sandbox_run(const struct isd_spec *spec)
{
	return run_sandbox(spec, NULL);
}

int isd_sandbox_create_detached(const struct isd_spec *spec, struct isd_sandbox_detached *d)
{
	d->init_pid = -1;
	d->pty_master = -1;
	d->cgroup_dir = NULL;
	return run_sandbox(spec, d);
}

int isd_sandbox_remove_cgroup(const char *cgroup_dir)
{
	_cleanup_free_ char *parent = isd_xstrdup(cgroup_dir);
	char *slash = strrchr(parent, '/');
	struct isd_cgroup cg;
	int r;

	if (!slash || slash == parent || !slash[1])
		return isd_error(-EINVAL, "removing the cgroup %s: not a cgroup directory", cgroup_dir);
	*slash = '\0';
	isd_cgroup_init(&cg);
	r = isd_cgroup_open(parent, slash + 1, &cg);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = isd_cgroup_destroy(&cg);
	if (r == 0 || r == -ENOENT) {
		/* the leaf the creator moved itself into (cgroup.c's
		 * supervisor case), empty since it exited: isd gc finds it by
		 * an isd's pid, not under a name isd-runtime chose */
		_cleanup_free_ char *leaf = isd_xasprintf("%s-supervisor", cgroup_dir);
		(void)rmdir(leaf);
	}
	return r == -ENOENT ? 0 : r;
}
