/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * state, kill, delete, list, ps, pause and resume: what an engine asks of a container
 * that create left behind.  Signals go through a pidfd checked against the
 * recorded start time, so a reused pid is never signalled; delete ends
 * what is left and removes the cgroup and the state, also after a crash
 * of create or of the container.
 */
#define _GNU_SOURCE
#include "runtime.h"
#include "isd/process.h"
#include "isd/sandbox.h"
#include "isd/util.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct {
	const char *name;
	int sig;
} signals[] = {
	{"HUP", SIGHUP},   {"INT", SIGINT},     {"QUIT", SIGQUIT}, {"ILL", SIGILL},     {"TRAP", SIGTRAP},
	{"ABRT", SIGABRT}, {"IOT", SIGIOT},     {"BUS", SIGBUS},   {"FPE", SIGFPE},     {"KILL", SIGKILL},
	{"USR1", SIGUSR1}, {"SEGV", SIGSEGV},   {"USR2", SIGUSR2}, {"PIPE", SIGPIPE},   {"ALRM", SIGALRM},
	{"TERM", SIGTERM}, {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT}, {"STOP", SIGSTOP},
	{"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},   {"TTOU", SIGTTOU}, {"URG", SIGURG},     {"XCPU", SIGXCPU},
	{"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"IO", SIGIO},
	{"POLL", SIGPOLL}, {"PWR", SIGPWR},     {"SYS", SIGSYS},
};

int rt_parse_signal(const char *s, int *sig)
{
	uint32_t n;

	if (isd_parse_uint32(s, &n) == 0 && n > 0 && n < (uint32_t)_NSIG) {
		*sig = (int)n;
		return 0;
	}
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (strcasecmp(s, signals[i].name) == 0) {
			*sig = signals[i].sig;
			return 0;
		}
	if (strncasecmp(s, "RTMIN", 5) == 0 || strncasecmp(s, "RTMAX", 5) == 0) {
		int base = toupper((unsigned char)s[2]) == 'M' && toupper((unsigned char)s[3]) == 'I' ? SIGRTMIN : SIGRTMAX;
		long off = s[5] ? strtol(s + 5, NULL, 10) : 0;
		if (base + off >= SIGRTMIN && base + off <= SIGRTMAX) {
			*sig = (int)(base + off);
			return 0;
		}
	}
	return isd_error(0, "unknown signal '%s'", s);
}

static void state_usage(FILE *out)
{
	fputs("Usage: isd-runtime state ID\nThe state of container ID as runc prints it (JSON).\n", out);
}

int rt_cmd_state(int argc, char **argv)
{
	_cleanup_close_ int dirfd = -1;
	_cleanup_free_ char *json = NULL;
	struct rt_state st;
	const char *id;
	int r = rt_one_id("state", state_usage, argc, argv, &id);

	if (r >= 0)
		return r;
	if (rt_container_open(id, false, &dirfd) < 0 || rt_state_read(dirfd, id, &st) < 0)
		return rt_fail();
	json = rt_state_json(&st, true);
	puts(json);
	rt_state_free(&st);
	return 0;
}

static int signal_container(const struct rt_state *st, int sig, bool all)
{
	_cleanup_close_ int pidfd = rt_state_pidfd(st);

	/* paused: KILL ends it, other signals wait for resume (runc's too) */
	if (st->status != RT_CREATED && st->status != RT_RUNNING && st->status != RT_PAUSED)
		return RT_ERR(-ESRCH, "container %s is not running (%s)", st->id, rt_status_name(st->status));
	if (pidfd < 0)
		return RT_ERR(-ESRCH, "container %s is not running", st->id);
	if (all) {
		size_t n;
		_cleanup_free_ pid_t *pids = rt_container_pids(st, &n);
		/* the others first: init's death would end them unsignalled */
		for (size_t i = n; i-- > 1;)
			kill(pids[i], sig);
	}
	if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 && errno != ESRCH)
		return isd_error(-errno, "sending signal %d to container %s (pid %d)", sig, st->id, (int)st->pid);
	return 0;
}

static void kill_usage(FILE *out)
{
	fputs("Usage: isd-runtime kill [--all] ID [SIGNAL]\n"
	      "Send SIGNAL (a name or number, default TERM) to the container's init, which\n"
	      "hands it to the payload; --all: to every process of the container.\n",
	      out);
}

int rt_cmd_kill(int argc, char **argv)
{
	static const struct rt_opt opts[] = {{"all", 'a', false, 1}, {"pid", 'p', true, 2}, {0}};
	struct rt_args a = RT_ARGS("kill", opts, kill_usage, argc, argv);
	const char *id = NULL, *sig_arg = NULL;
	_cleanup_close_ int dirfd = -1;
	struct rt_state st;
	bool all = false;
	int sig = SIGTERM, r;

	while (rt_next(&a)) {
		if (a.id == 1)
			all = true;
		else if (a.id == 2)
			return rt_failf("kill: --pid is not supported");
		else if (!id)
			id = a.value;
		else if (!sig_arg)
			sig_arg = a.value;
		else
			return rt_failf("kill: too many operands ('%s'): isd-runtime kill [--all] ID [SIGNAL]", a.value);
	}
	if (a.exit >= 0)
		return a.exit;
	if (!id)
		return rt_failf("kill: a container id is needed (usage: isd-runtime kill [--all] ID [SIGNAL])");
	if (sig_arg && rt_parse_signal(sig_arg, &sig) < 0)
		return rt_fail();
	if (rt_container_lock(id, false, &dirfd) < 0 || rt_state_read(dirfd, id, &st) < 0)
		return rt_fail();
	r = signal_container(&st, sig, all);
	rt_state_free(&st);
	return r < 0 ? rt_fail() : 0;
}

/* Until the pidfd says the process exited.  Bounded: a process that
 * SIGKILL does not end within this (stuck in the kernel) is reported. */
static int wait_gone(int pidfd, const struct rt_state *st)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	for (int tries = 0; tries < 100; tries++) {
		int n = poll(&p, 1, 100);
		if (n > 0 || (n < 0 && errno != EINTR))
			return 0;
		if (rt_pid_start_time(st->pid) != st->pid_start)
			return 0;
	}
	return isd_error(-ETIMEDOUT, "deleting container %s: its init (pid %d) outlives SIGKILL", st->id, (int)st->pid);
}

int rt_delete_locked(int dirfd, const char *id, bool force)
{
	_cleanup_close_ int rootfd = -1, pidfd = -1;
	struct rt_state st;
	int r = rt_state_read(dirfd, id, &st);

	if (r < 0 && !force)
		return r;
	if (r == 0 && (st.status == RT_RUNNING || st.status == RT_PAUSED) && !force)
		r = RT_ERR(-EBUSY, "cannot delete container %s that is not stopped: %s (fix: kill it first, or delete --force)",
			   id, rt_status_name(st.status));
	/* created, or running with --force: killed (runc deletes a created
	 * one without --force too); init's death ends its pid namespace */
	if (r == 0 && (st.status == RT_CREATED || st.status == RT_RUNNING || st.status == RT_PAUSED) &&
	    (pidfd = rt_state_pidfd(&st)) >= 0) {
		size_t n;
		_cleanup_free_ pid_t *pids = rt_container_pids(&st, &n);
		for (size_t i = n; i-- > 1;)
			kill(pids[i], SIGKILL);
		(void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
		r = wait_gone(pidfd, &st);
	}
	if (r == 0 && st.status != RT_CREATING)
		rt_run_kept_hooks(&st, "poststop", RT_STOPPED);
	if (r == 0 && st.cgroup)
		r = isd_sandbox_remove_cgroup(st.cgroup);
	if (r == 0 || force)
		r = rt_root_open(false, &rootfd);
	if (r == 0)
		r = rt_container_remove(rootfd, id);
	rt_state_free(&st);
	return r;
}

static void delete_usage(FILE *out)
{
	fputs("Usage: isd-runtime delete [--force] ID\n"
	      "Remove a stopped (or created) container's state and cgroup; --force kills a\n"
	      "running one first.\n",
	      out);
}

int rt_cmd_delete(int argc, char **argv)
{
	static const struct rt_opt opts[] = {{"force", 'f', false, 1}, {0}};
	struct rt_args a = RT_ARGS("delete", opts, delete_usage, argc, argv);
	_cleanup_close_ int dirfd = -1;
	const char *id = NULL;
	bool force = false;
	int r;

	while (rt_next(&a)) {
		if (a.id == 1)
			force = true;
		else if (!id)
			id = a.value;
		else
			return rt_failf("delete: one container id, not '%s' too", a.value);
	}
	if (a.exit >= 0)
		return a.exit;
	if (!id)
		return rt_failf("delete: a container id is needed (usage: isd-runtime delete [--force] ID)");
	r = rt_container_lock(id, false, &dirfd);
	/* runc: --force of a container that is not there is no error */
	if (r == -ENOENT && force && rt_check_id(id) == 0)
		return 0;
	if (r < 0 || rt_delete_locked(dirfd, id, force) < 0)
		return rt_fail();
	return 0;
}

static void list_usage(FILE *out)
{
	fputs("Usage: isd-runtime list [--format table|json] [--quiet]\nThe containers in the state directory.\n", out);
}

int rt_cmd_list(int argc, char **argv)
{
	static const struct rt_opt opts[] = {{"format", 'f', true, 1}, {"quiet", 'q', false, 2}, {0}};
	struct rt_args a = RT_ARGS("list", opts, list_usage, argc, argv);
	bool json = false, quiet = false;
	_cleanup_close_ int rootfd = -1;
	json_object *arr = json_object_new_array();
	DIR *d = NULL;
	struct dirent *e;

	while (rt_next(&a)) {
		if (a.id == 1 && strcmp(a.value, "json") && strcmp(a.value, "table"))
			return json_object_put(arr), rt_failf("list: --format %s: not table or json", a.value);
		if (a.id == 1)
			json = strcmp(a.value, "json") == 0;
		else if (a.id == 2)
			quiet = true;
		else
			return json_object_put(arr), rt_failf("list: takes no operand ('%s')", a.value);
	}
	if (a.exit >= 0)
		return json_object_put(arr), a.exit;
	if (rt_root_open(false, &rootfd) == 0)
		d = fdopendir(dup(rootfd));
	if (!json && !quiet)
		printf("%-24s %-8s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
	while (d && (e = readdir(d))) {
		_cleanup_close_ int dirfd = -1;
		struct rt_state st;

		if (e->d_name[0] == '.' || rt_check_id(e->d_name) < 0)
			continue;
		dirfd = openat(rootfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (dirfd < 0 || rt_state_read(dirfd, e->d_name, &st) < 0)
			continue;
		if (json) {
			_cleanup_free_ char *s = rt_state_json(&st, false);
			json_object_array_add(arr, json_tokener_parse(s));
		} else if (quiet) {
			puts(st.id);
		} else {
			bool alive = st.status == RT_CREATED || st.status == RT_RUNNING || st.status == RT_PAUSED;
			printf("%-24s %-8d %-10s %-40s %-30s %s\n", st.id, alive ? (int)st.pid : 0, rt_status_name(st.status),
			       st.bundle ? st.bundle : "", st.created ? st.created : "", st.owner ? st.owner : "");
		}
		rt_state_free(&st);
	}
	if (d)
		closedir(d);
	if (json)
		puts(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(arr);
	return 0;
}

static void ps_usage(FILE *out)
{
	fputs("Usage: isd-runtime ps [--format table|json] ID [PS OPTIONS]\n"
	      "The container's processes: their host pids (json), or the lines of\n"
	      "ps (default options -ef) for them.\n",
	      out);
}

static bool has_pid(const pid_t *pids, size_t n, long pid)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* runc's table: ps's header, then its lines whose PID column is the
 * container's. */
static int ps_table(char **ps_args, const pid_t *pids, size_t n)
{
	char **argv = NULL;
	FILE *in;
	char line[4096];
	int fds[2], status, col = -1;
	pid_t child;

	isd_strv_push(&argv, isd_xstrdup("ps"));
	if (!ps_args || !ps_args[0])
		isd_strv_push(&argv, isd_xstrdup("-ef"));
	for (size_t i = 0; ps_args && ps_args[i]; i++)
		isd_strv_push(&argv, isd_xstrdup(ps_args[i]));
	if (pipe2(fds, O_CLOEXEC) < 0)
		return isd_strv_free(argv), isd_error(-errno, "ps: creating a pipe");
	child = fork();
	if (child == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execvp("ps", argv);
		_exit(127);
	}
	close(fds[1]);
	isd_strv_free(argv);
	in = fdopen(fds[0], "r");
	for (bool header = true; in && fgets(line, sizeof(line), in); header = false) {
		char copy[sizeof(line)], *tok, *save = NULL;
		int i = 0;

		memcpy(copy, line, sizeof(copy));
		for (tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), i++) {
			if (header && strcmp(tok, "PID") == 0)
				col = i;
			else if (!header && i == col)
				break;
		}
		if (header || (tok && has_pid(pids, n, strtol(tok, NULL, 10))))
			fputs(line, stdout);
	}
	if (in)
		fclose(in);
	if (child < 0 || isd_wait_pid(child, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return RT_ERR(-EIO, "ps: running ps failed");
	if (col < 0)
		return RT_ERR(-EINVAL, "ps: its output has no PID column");
	return 0;
}

int rt_cmd_ps(int argc, char **argv)
{
	static const struct rt_opt opts[] = {{"format", 'f', true, 1}, {0}};
	struct rt_args a = RT_ARGS("ps", opts, ps_usage, argc, argv);
	_cleanup_close_ int dirfd = -1;
	_cleanup_free_ pid_t *pids = NULL;
	_cleanup_strv_ char **ps_args = NULL;
	const char *id = NULL;
	struct rt_state st;
	bool json = false;
	size_t n;
	int r = 0;

	while (rt_next(&a)) {
		if (a.id == 1 && strcmp(a.value, "json") && strcmp(a.value, "table"))
			return rt_failf("ps: --format %s: not table or json", a.value);
		if (a.id == 1)
			json = strcmp(a.value, "json") == 0;
		else if (!id) {
			id = a.value;
			a.done = true; /* what follows is ps's */
		} else
			isd_strv_push(&ps_args, isd_xstrdup(a.value));
	}
	if (a.exit >= 0)
		return a.exit;
	if (!id)
		return rt_failf("ps: a container id is needed (usage: isd-runtime ps [--format json] ID)");
	if (rt_container_open(id, false, &dirfd) < 0 || rt_state_read(dirfd, id, &st) < 0)
		return rt_fail();
	pids = rt_container_pids(&st, &n);
	rt_state_free(&st);
	if (json) {
		printf("[");
		for (size_t i = 0; i < n; i++)
			printf("%s%d", i ? "," : "", (int)pids[i]);
		printf("]\n");
	} else {
		r = ps_table(ps_args, pids, n);
	}
	return r < 0 ? rt_fail() : 0;
}

/* ---- pause, resume: cgroup v2's freezer ---- */

static void pause_usage(FILE *out)
{
	fputs("Usage: isd-runtime pause ID | resume ID\n"
	      "Freeze every process of the running container ID (its cgroup), or thaw them.\n",
	      out);
}

/* Freezing is asynchronous: done once cgroup.events says so. */
static int freeze(const struct rt_state *st, const char *cmd, bool on)
{
	_cleanup_free_ char *file = NULL, *events = NULL;
	int r;

	if (!st->cgroup)
		return RT_ERR(-EOPNOTSUPP, "%s: container %s has no cgroup of its own (no cgroup v2 hierarchy, or none "
					   "delegated to the caller), and the freezer is a cgroup's", cmd, st->id);
	file = isd_xasprintf("%s/cgroup.freeze", st->cgroup);
	if ((r = isd_write_file_at(AT_FDCWD, file, on ? "1" : "0", O_WRONLY, 0)) < 0)
		return isd_error(r, "%s: writing %s", cmd, file);
	free(file);
	file = isd_xasprintf("%s/cgroup.events", st->cgroup);
	for (int tries = 0; tries < 500; tries++) {
		free(events);
		events = NULL;
		if (isd_read_file_at(AT_FDCWD, file, &events, NULL) < 0)
			return isd_error(-errno, "%s: reading %s", cmd, file);
		if (strstr(events, on ? "frozen 1" : "frozen 0"))
			return 0;
		usleep(10000);
	}
	return RT_ERR(-ETIMEDOUT, "%s: container %s: its cgroup %s did not %s within 5 s", cmd, st->id, st->cgroup,
		      on ? "freeze" : "thaw");
}

static int pause_resume(const char *cmd, bool on, int argc, char **argv)
{
	_cleanup_close_ int dirfd = -1;
	struct rt_state st;
	const char *id;
	int r = rt_one_id(cmd, pause_usage, argc, argv, &id);

	if (r >= 0)
		return r;
	if (rt_container_lock(id, false, &dirfd) < 0 || rt_state_read(dirfd, id, &st) < 0)
		return rt_fail();
	if (st.status != (on ? RT_RUNNING : RT_PAUSED))
		r = RT_ERR(-EINVAL, "%s: container %s is %s, not %s", cmd, id, rt_status_name(st.status),
			   on ? "running" : "paused");
	else
		r = freeze(&st, cmd, on);
	rt_state_free(&st);
	return r < 0 ? rt_fail() : 0;
}

int rt_cmd_pause(int argc, char **argv)
{
	return pause_resume("pause", true, argc, argv);
}

int rt_cmd_resume(int argc, char **argv)
{
	return pause_resume("resume", false, argc, argv);
}
