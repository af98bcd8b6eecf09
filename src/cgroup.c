/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v2 limits for one sandbox; the placement rules are described in
 * include/isd/cgroup.h.  Nothing here pretends: a limit the host cannot
 * enforce is an error before anything starts (or, with --limits=best-effort,
 * a warning naming what is dropped).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isd/cgroup.h"
#include "isd/fsutil.h"
#include "isd/session.h"

#include "isd/util.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

/* ---- Files of a cgroup ---- */

static int write_at(int dfd, const char *file, const char *text)
{
	int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static long monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* SIGKILL everything listed in cgroup.procs; returns how many were seen.
 * Only whole lines count: a number cut at a read boundary is carried over. */
static int kill_listed(int dfd)
{
	char buf[4096];
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC), seen = 0;
	size_t have = 0;
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf + have, sizeof(buf) - have)) > 0) {
		char *p = buf, *end = buf + have + n, *nl;

		while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
			long pid = 0;
			for (; p < nl && *p >= '0' && *p <= '9'; p++)
				pid = pid * 10 + (*p - '0');
			if (pid > 0 && p == nl) {
				kill((pid_t)pid, SIGKILL);
				seen++;
			}
			p = nl + 1;
		}
		have = (size_t)(end - p);
		memmove(buf, p, have);
		if (have == sizeof(buf))
			have = 0; /* no real line is that long */
	}
	close(fd);
	return seen;
}

static void kill_all(int dfd)
{
	/* cgroup.kill (5.14) kills atomically, forks included. */
	if (write_at(dfd, "cgroup.kill", "1") == 0)
		return;
	/* Older kernels: freeze so that nothing forks while we kill. */
	write_at(dfd, "cgroup.freeze", "1");
	for (int round = 0; round < 100 && kill_listed(dfd) > 0; round++)
		sleep_ms(1);
	write_at(dfd, "cgroup.freeze", "0");
}

/* Wait (bounded) until cgroup.events says "populated 0". */
static bool wait_empty(int dfd, long timeout_ms)
{
	int fd = openat(dfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	long deadline = monotonic_ms() + timeout_ms;
	bool empty = false;

	if (fd < 0)
		return false;
	for (;;) {
		char buf[256];
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		long left;
		struct pollfd pfd = {.fd = fd, .events = POLLPRI};

		if (n < 0)
			break;
		buf[n] = '\0';
		if (strstr(buf, "populated 0")) {
			empty = true;
			break;
		}
		left = deadline - monotonic_ms();
		if (left <= 0)
			break;
		/* cgroup.events signals changes with POLLPRI; cap the wait in
		 * case the notification raced with our read. */
		poll(&pfd, 1, left < 50 ? (int)left : 50);
	}
	close(fd);
	return empty;
}

static int rmdir_at(int dfd, const char *name)
{
	for (int i = 0; i < 100; i++) {
		if (unlinkat(dfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		/* Exiting tasks may keep the cgroup busy for a moment. */
		if (errno != EBUSY)
			return -errno;
		sleep_ms(10);
	}
	return -EBUSY;
}

void isd_cgroup_init(struct isd_cgroup *cg)
{
	memset(cg, 0, sizeof(*cg));
	cg->dirfd = cg->parent_fd = cg->origin_fd = -1;
}

int isd_cgroup_destroy(struct isd_cgroup *cg)
{
	int r = 0;

	if (cg->dirfd >= 0) {
		kill_all(cg->dirfd);
		wait_empty(cg->dirfd, 5000);
		close(cg->dirfd);
		cg->dirfd = -1;
	}
	if (cg->parent_fd >= 0 && cg->name[0])
		r = rmdir_at(cg->parent_fd, cg->name);
	cg->name[0] = '\0';
	if (cg->origin_fd >= 0 && cg->supervisor_name[0]) {
		/* Put isd back where it came from, as if nothing happened:
		 * first give back the controllers (a cgroup with controllers
		 * for its children cannot take processes). */
		char buf[128], pid[24];
		size_t used = 0;

		for (unsigned bit = ISD_CG_CPU; bit <= ISD_CG_PIDS; bit <<= 1) {
			const char *name = isd_cgroup_controller_name(bit);
			size_t len = strlen(name);
			if (!(cg->origin_enabled & bit) || used + len + 3 > sizeof(buf))
				continue;
			if (used)
				buf[used++] = ' ';
			buf[used++] = '-';
			memcpy(buf + used, name, len);
			used += len;
		}
		buf[used] = '\0';
		if (used)
			write_at(cg->origin_fd, "cgroup.subtree_control", buf);
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		if (write_at(cg->origin_fd, "cgroup.procs", pid) == 0)
			rmdir_at(cg->origin_fd, cg->supervisor_name);
		cg->supervisor_name[0] = '\0';
	}
	if (cg->parent_fd >= 0)
		close(cg->parent_fd);
	if (cg->origin_fd >= 0)
		close(cg->origin_fd);
	cg->parent_fd = cg->origin_fd = -1;
	cg->path = NULL;
	return r;
}

/* The controllers that the sandbox's cgroup uses cannot be given back,
 * so isd stays in its supervisor leaf, which is empty once isd exits
 * (isd gc removes it: its name carries isd's pid). */
void isd_cgroup_release(struct isd_cgroup *cg)
{
	if (cg->dirfd >= 0)
		close(cg->dirfd);
	if (cg->parent_fd >= 0)
		close(cg->parent_fd);
	if (cg->origin_fd >= 0)
		close(cg->origin_fd);
	cg->dirfd = cg->parent_fd = cg->origin_fd = -1;
	cg->name[0] = cg->supervisor_name[0] = '\0';
	cg->path = NULL;
}

int isd_cgroup_open(const char *parent, const char *name, struct isd_cgroup *cg)
{
	_cleanup_free_ char *max = NULL;
	uint64_t v;

	isd_cgroup_init(cg);
	if ((size_t)snprintf(cg->name, sizeof(cg->name), "%s", name) >= sizeof(cg->name) ||
	    (size_t)snprintf(cg->path_buf, sizeof(cg->path_buf), "%s/%s", parent, name) >= sizeof(cg->path_buf))
		return -ENAMETOOLONG;
	cg->parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->parent_fd >= 0)
		cg->dirfd = openat(cg->parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cg->dirfd < 0) {
		int r = -errno;
		isd_cgroup_destroy(cg);
		return r;
	}
	cg->path = cg->path_buf;
	/* "max" (none) reads as no number */
	if (isd_read_file_at(cg->dirfd, "memory.max", &max, NULL) == 0 && sscanf(max, "%" SCNu64, &v) == 1)
		cg->memory_max = v;
	return 0;
}

int isd_cgroup_attach(const struct isd_cgroup *cg, pid_t pid)
{
	char buf[24];
	int r;

	if (cg->dirfd < 0)
		return 0;
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	r = isd_write_file_at(cg->dirfd, "cgroup.procs", buf, 0, 0);
	if (r < 0)
		return isd_error(r, "moving the sandbox (pid %d) into cgroup %s", (int)pid, cg->path);
	return 0;
}

/* ---- OOM report ---- */

static uint64_t read_key(int dfd, const char *file, const char *key, bool *found)
{
	_cleanup_free_ char *text = NULL;
	size_t klen = strlen(key);

	*found = false;
	if (isd_read_file_at(dfd, file, &text, NULL) < 0)
		return 0;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			*found = true;
			return strtoull(line + klen + 1, NULL, 10);
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

void isd_cgroup_report_status(const struct isd_cgroup *cg, pid_t payload_pid, const char *payload_comm,
			      int wait_status)
{
	char head[64], who[160];
	uint64_t kills, limit = cg->memory_max;
	const char *s, *was;
	bool found;

	if (cg->dirfd < 0)
		return;
	kills = read_key(cg->dirfd, "memory.events", "oom_kill", &found);
	if (!found || kills == 0)
		return;
	if (!limit) {
		_cleanup_free_ char *text = NULL;
		if (isd_read_file_at(cg->dirfd, "memory.max", &text, NULL) == 0)
			limit = strtoull(text, NULL, 10); /* "max" gives 0 */
	}
	if (limit) {
		char size[32];
		isd_format_size(limit, size, sizeof(size), 0);
		snprintf(head, sizeof(head), "sandbox hit its memory limit (%s)", size);
	} else {
		snprintf(head, sizeof(head), "the system ran out of memory");
	}
	if (payload_comm && strrchr(payload_comm, '/'))
		payload_comm = strrchr(payload_comm, '/') + 1; /* what comm would show */
	if (payload_pid > 0)
		snprintf(who, sizeof(who), "%s (pid %d)", payload_comm ? payload_comm : "the payload", (int)payload_pid);
	else
		snprintf(who, sizeof(who), "%s", payload_comm ? payload_comm : "the payload");
	s = kills == 1 ? "" : "es";
	was = kills == 1 ? "was" : "were";

	/* memory.events does not name victims; only the payload's own wait
	 * status tells whether it was one of them (isd's init reports a
	 * payload killed by a signal as exit status 128 + signal). */
	if (wait_status != -1 && ((WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL) ||
				  (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 128 + SIGKILL))) {
		if (kills == 1)
			fprintf(stderr, "isd: %s; %s was killed\n", head, who);
		else
			fprintf(stderr, "isd: %s; %s was killed (%" PRIu64 " processes in all)\n", head, who, kills);
	} else if (wait_status != -1) {
		fprintf(stderr, "isd: %s; %" PRIu64 " process%s inside %s killed, not %s itself\n", head, kills, s,
			was, who);
	} else {
		fprintf(stderr, "isd: %s; %" PRIu64 " process%s in it (payload: %s) %s killed\n", head, kills, s, who,
			was);
	}
}

void isd_cgroup_report(const struct isd_cgroup *cg, pid_t payload_pid, const char *payload_comm)
{
	isd_cgroup_report_status(cg, payload_pid, payload_comm, -1);
}

/* ---- Garbage collection ---- */

/* "isd-<pid>-<hex>" or "isd-<pid>-<hex>-supervisor": the owner's pid. */
static pid_t owner_of(const char *name)
{
	const char *p = name + 4;
	long pid = 0;
	size_t hex;

	if (strncmp(name, "isd-", 4) || !isdigit((unsigned char)*p))
		return 0;
	while (isdigit((unsigned char)*p) && pid < 1L << 30)
		pid = pid * 10 + (*p++ - '0');
	if (*p++ != '-')
		return 0;
	hex = strspn(p, "0123456789abcdef");
	if (hex == 0 || (p[hex] && strcmp(p + hex, "-supervisor")))
		return 0;
	return (pid_t)pid;
}

static bool owner_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

static bool populated(int dfd)
{
	bool found;
	/* No cgroup.events (v2 has it since 4.5): not a live cgroup, so empty. */
	return read_key(dfd, "cgroup.events", "populated", &found) != 0 && found;
}

int isd_cgroup_gc_dir(const char *dir, bool dry_run, bool verbose, bool kill_orphans)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	int failures = 0;

	if (dfd < 0)
		return 0;
	d = fdopendir(dup(dfd));
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t owner = owner_of(de->d_name);
		struct isd_cgroup c;
		int cfd, r;

		if (de->d_type != DT_DIR || owner <= 0 || owner_alive(owner))
			continue;
		cfd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cfd < 0)
			continue;
		/* A dead owner's sandbox normally died with it.  If something
		 * still runs there, its owner may live in another pid namespace:
		 * only `isd gc` (kill_orphans) takes that to be an orphan. */
		if (populated(cfd) && !kill_orphans) {
			close(cfd);
			continue;
		}
		if (dry_run) {
			printf("would remove %s/%s\n", dir, de->d_name);
			close(cfd);
			continue;
		}
		close(cfd);
		r = isd_cgroup_open(dir, de->d_name, &c);
		if (r == 0)
			r = isd_cgroup_destroy(&c);
		if (r < 0) {
			if (verbose)
				fprintf(stderr, "isd gc: cannot remove %s/%s: %s\n", dir, de->d_name, strerror(-r));
			failures++;
		} else if (verbose) {
			printf("removed %s/%s\n", dir, de->d_name);
		}
	}
	closedir(d);
	return failures;
}

/* ---- Host discovery and preparation ---- */

struct host {
	char *mountpoint; /* NULL: no cgroup2 */
	char *own;
	unsigned v1;        /* controllers bound to cgroup v1 hierarchies */
	unsigned root_ctrl; /* controllers of the cgroup2 root we can see */
};

static void host_free(struct host *h)
{
	free(h->mountpoint);
	free(h->own);
	memset(h, 0, sizeof(*h));
}

static void host_discover(struct host *h)
{
	_cleanup_free_ char *cg = NULL, *mi = NULL, *v2 = NULL;

	memset(h, 0, sizeof(*h));
	if (isd_read_file_at(AT_FDCWD, "/proc/self/cgroup", &cg, NULL) < 0 ||
	    isd_cgroup_parse_proc_cgroup(cg, &v2, &h->v1) < 0 || !v2)
		return;
	if (isd_read_file_at(AT_FDCWD, "/proc/self/mountinfo", &mi, NULL) < 0 ||
	    isd_cgroup_find_dir(mi, v2, &h->mountpoint, &h->own) < 0)
		return;
	h->root_ctrl = isd_cgroup_read_controllers(h->mountpoint, "cgroup.controllers");
}

/* Switching to the unified hierarchy is systemd's boot option; a host
 * whose pid 1 is something else (a container's init, OpenRC) needs
 * another answer. */
const char *isd_cgroup_hierarchy_fix(void)
{
	static char fix[160];
	_cleanup_free_ char *comm = NULL;

	if (isd_read_file_at(AT_FDCWD, "/proc/1/comm", &comm, NULL) == 0 && !strncmp(comm, "systemd\n", 8))
		snprintf(fix, sizeof(fix), "boot with systemd.unified_cgroup_hierarchy=1, or run with --limits best-effort");
	else
		snprintf(fix, sizeof(fix), "run isd where cgroup v2 is mounted at /sys/fs/cgroup, or with --limits best-effort");
	return fix;
}

/* The profile's defaults that this host cannot enforce are the same on
 * every run until the next boot: saying so once per boot (per user) keeps
 * the note from becoming noise that hides real messages. */
static bool first_time_this_boot(const char *what)
{
	_cleanup_free_ char *boot_id = NULL, *dir = NULL, *marker = NULL;
	int fd;

	if (isd_read_file_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id", &boot_id, NULL) < 0)
		return true;
	boot_id[strcspn(boot_id, "\n")] = '\0';
	dir = isd_xdg_path("XDG_CACHE_HOME", ".cache", "isd/notes");
	if (!dir || isd_mkdir_p(dir, 0700) < 0)
		return true;
	marker = isd_xasprintf("%s/%s-%s", dir, what, boot_id);
	fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return errno != EEXIST;
}

static const char delegate_fix[] =
	"systemd drop-in /etc/systemd/system/user@.service.d/delegate.conf with "
	"Delegate=cpu cpuset io memory pids, then systemctl daemon-reload";

/* One line: which limit, why the host cannot enforce it, how to fix. */
static char *explain(const struct host *h, const struct isd_cgroup_plan *p, const char *option, unsigned ctrl,
		     const char *sd_error)
{
	const char *name = isd_cgroup_controller_name(ctrl);
	char have[64];

	if (!h->mountpoint)
		return isd_xasprintf("%s needs the cgroup v2 \"%s\" controller, but this host has no cgroup v2 "
				     "hierarchy; fix: %s", option, name, isd_cgroup_hierarchy_fix());
	if (!(h->root_ctrl & ctrl)) {
		isd_cgroup_controllers_string(h->root_ctrl, have, sizeof(have), "");
		if (h->v1 & ctrl)
			return isd_xasprintf("%s needs the cgroup v2 \"%s\" controller, but this host runs it on "
					     "cgroup v1 (hybrid layout; cgroup2 at %s offers: %s); fix: %s", option, name,
					     h->mountpoint, have, isd_cgroup_hierarchy_fix());
		return isd_xasprintf("%s needs the cgroup v2 \"%s\" controller, which this kernel does not offer "
				     "(cgroup2 at %s offers: %s); fix: use a kernel with it or drop %s",
				     option, name, h->mountpoint, have, option);
	}
	if (p->place == ISD_CG_PLACE_NONE)
		return isd_xasprintf("%s needs a cgroup v2 subtree delegated to user %u, but %s%s%s; fix: run isd "
				     "in a delegated scope (systemd-run --user --scope -p Delegate=yes isd ...) or "
				     "a %s", option, (unsigned)geteuid(), p->reason, sd_error ? "; systemd: " : "",
				     sd_error ? sd_error : "", delegate_fix);
	isd_cgroup_controllers_string(p->available, have, sizeof(have), "");
	return isd_xasprintf("%s needs the cgroup v2 \"%s\" controller, which is not delegated to user %u "
			     "(enabled: %s); fix: %s", option, name, (unsigned)geteuid(), have, delegate_fix);
}


int isd_cgroup_diagnose(unsigned needed, struct isd_cgroup_diagnosis *d)
{
	/* In the order isd exec writes them, so that the first refusal is the
	 * same one. */
	static const struct {
		unsigned controller;
		const char *option;
	} order[] = {{ISD_CG_MEMORY, "--memory"}, {ISD_CG_CPU, "--cpus"}, {ISD_CG_PIDS, "--pids-limit"}};
	struct isd_cgroup_plan plan;
	struct isd_cgroup_env env;
	struct host h;

	memset(d, 0, sizeof(*d));
	memset(&plan, 0, sizeof(plan));
	host_discover(&h);
	d->hierarchy = h.mountpoint != NULL && !(h.v1 & needed & ~h.root_ctrl);
	if (h.mountpoint) {
		env = (struct isd_cgroup_env){.mountpoint = h.mountpoint, .own = h.own, .self = getpid(), .fake_uid = -1};
		isd_cgroup_plan(&env, needed, &plan);
		d->place = plan.place;
		d->available = plan.place == ISD_CG_PLACE_NONE ? 0 : plan.available & needed;
		snprintf(d->base, sizeof(d->base), "%s", plan.base);
	}
	/* The same sentence isd exec would refuse with, for the first
	 * controller it could not have. */
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		unsigned c = order[i].controller;
		if (!(needed & c) || (d->available & c))
			continue;
		_cleanup_free_ char *why = explain(&h, &plan, order[i].option, c, NULL);
		snprintf(d->why, sizeof(d->why), "%s", why);
		break;
	}
	host_free(&h);
	return d->why[0] ? -EOPNOTSUPP : 0;
}

static int fail_prepare(struct isd_cgroup *cg, int r)
{
	isd_cgroup_destroy(cg);
	return r;
}

/* A write is a profile's default when an option it comes from is (the
 * derived swap limit comes from --memory, cpu.weight from either
 * --cpu-shares or --cpu-weight). */
static bool is_soft(const struct isd_limits *l, const struct isd_cgroup_write *w)
{
	return (l->soft & w->limits) != 0;
}

int isd_cgroup_prepare(const struct isd_limits *limits, struct isd_cgroup *cg)
{
	return isd_cgroup_prepare_named(limits, NULL, cg);
}

int isd_cgroup_prepare_named(const struct isd_limits *limits, const char *name, struct isd_cgroup *cg)
{
	struct isd_cgroup_write writes[ISD_CGROUP_MAX_WRITES];
	struct isd_cgroup_plan plan;
	struct isd_cgroup_env env;
	struct host h;
	unsigned needed, dropped = 0;
	char ctl[64], *sd_err = NULL;
	bool best_effort = limits->mode == ISD_LIMITS_BEST_EFFORT;
	char soft_dropped[160] = "", soft_why[512] = "";
	uint32_t rnd = 0;
	int n, r;

	isd_cgroup_init(cg);
	needed = isd_cgroup_needed_controllers(limits);
	if (!needed)
		return 0;
	n = isd_cgroup_limit_writes(limits, writes);
	if (n < 0)
		return n;
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) < 0)
		rnd = (uint32_t)monotonic_ms() ^ (uint32_t)getpid() << 16;

	host_discover(&h);
	memset(&plan, 0, sizeof(plan));
	if (h.mountpoint) {
		env = (struct isd_cgroup_env){.mountpoint = h.mountpoint, .own = h.own, .self = getpid(), .fake_uid = -1};
		isd_cgroup_plan(&env, needed, &plan);
#ifdef HAVE_SD_BUS
		/* Only when it could help: the host's v2 root offers what is
		 * missing here. */
		if ((needed & h.root_ctrl) & ~(plan.place ? plan.available : 0)) {
			char unit[64];
			static char sd_error[256];
			snprintf(unit, sizeof(unit), "isd-%d-%08x.scope", (int)getpid(), rnd);
			if (isd_cgroup_systemd_scope(unit, sd_error, sizeof(sd_error)) == 0) {
				struct isd_cgroup_plan p2;
				host_free(&h);
				host_discover(&h);
				if (h.mountpoint) {
					env.mountpoint = h.mountpoint;
					env.own = h.own;
					if (isd_cgroup_plan(&env, needed, &p2) == 0 &&
					    (!plan.place || __builtin_popcount(needed & p2.available) >
								    __builtin_popcount(needed & plan.available)))
						plan = p2;
				}
			} else {
				sd_err = sd_error;
			}
		}
#endif
	}

	/* Every needed controller the chosen place lacks is one clear line. */
	for (int i = 0; i < n; i++) {
		unsigned c = writes[i].controller;
		if (!h.mountpoint || plan.place == ISD_CG_PLACE_NONE || !(plan.available & c)) {
			if (dropped & c)
				continue;
			_cleanup_free_ char *why = explain(&h, &plan, writes[i].option, c, sd_err);
			if (is_soft(limits, &writes[i])) {
				/* A profile's default: noted once, below. */
				size_t used = strlen(soft_dropped);
				snprintf(soft_dropped + used, sizeof(soft_dropped) - used, " %s", writes[i].option);
				if (!soft_why[0])
					snprintf(soft_why, sizeof(soft_why), "%s", why + strlen(writes[i].option) + 1);
				dropped |= c;
				continue;
			}
			if (!best_effort) {
				isd_error(0, "%s", why);
				host_free(&h);
				return -EOPNOTSUPP;
			}
			/* "--cpus needs ..." -> "ignoring --cpus (...): needs ..." */
			if (writes[i].explicit_request)
				isd_warn("ignoring %s (--limits=best-effort): %s", writes[i].option,
					 why + strlen(writes[i].option) + 1);
			dropped |= c;
		}
	}
	if (soft_dropped[0] && !best_effort && first_time_this_boot("limits-note"))
		fprintf(stderr, "isd: note: the profile's default limits%s are not enforced (said once per boot): %s\n",
			soft_dropped, soft_why);
	needed &= ~dropped;
	if (!needed) {
		host_free(&h);
		return 0;
	}

	isd_cgroup_gc_dir(plan.base, false, false, false);
	if (name)
		snprintf(cg->name, sizeof(cg->name), "%s", name);
	else
		snprintf(cg->name, sizeof(cg->name), "isd-%d-%08x", (int)getpid(), rnd);
	cg->parent_fd = open(plan.base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->parent_fd < 0) {
		r = isd_error(-errno, "opening cgroup %s", plan.base);
		host_free(&h);
		return fail_prepare(cg, r);
	}
	if (plan.place == ISD_CG_PLACE_SUPERVISOR) {
		char pid[24];
		snprintf(cg->supervisor_name, sizeof(cg->supervisor_name), "%s-supervisor", cg->name);
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		if (mkdirat(cg->parent_fd, cg->supervisor_name, 0755) < 0) {
			r = isd_error(-errno, "creating cgroup %s/%s", plan.base, cg->supervisor_name);
			cg->supervisor_name[0] = '\0';
			goto fail;
		}
		cg->origin_fd = dup(cg->parent_fd);
		{
			_cleanup_free_ char *procs = isd_xasprintf("%s/cgroup.procs", cg->supervisor_name);
			r = write_at(cg->parent_fd, procs, pid);
		}
		if (r < 0) {
			r = isd_error(r, "moving isd into its leaf cgroup %s/%s", plan.base, cg->supervisor_name);
			goto fail;
		}
	}
	if (plan.to_enable & needed) {
		isd_cgroup_controllers_string(plan.to_enable & needed, ctl, sizeof(ctl), "+");
		r = write_at(cg->parent_fd, "cgroup.subtree_control", ctl);
		if (r < 0) {
			r = isd_error(r, "enabling %s in %s/cgroup.subtree_control", ctl, plan.base);
			goto fail;
		}
		if (plan.place == ISD_CG_PLACE_SUPERVISOR)
			cg->origin_enabled = plan.to_enable & needed;
	}
	if (mkdirat(cg->parent_fd, cg->name, 0755) < 0) {
		r = isd_error(-errno, "creating cgroup %s/%s", plan.base, cg->name);
		cg->name[0] = '\0';
		goto fail;
	}
	if ((size_t)snprintf(cg->path_buf, sizeof(cg->path_buf), "%s/%s", plan.base, cg->name) >= sizeof(cg->path_buf)) {
		r = isd_error(-ENAMETOOLONG, "cgroup path below %s", plan.base);
		goto fail;
	}
	cg->path = cg->path_buf;
	cg->dirfd = openat(cg->parent_fd, cg->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->dirfd < 0) {
		r = isd_error(-errno, "opening cgroup %s", cg->path);
		goto fail;
	}

	for (int i = 0; i < n; i++) {
		struct isd_cgroup_write *w = &writes[i];

		if (!(needed & w->controller))
			continue;
		if (faccessat(cg->dirfd, w->file, F_OK, 0) < 0) {
			/* Controller there, file not: a kernel feature is off
			 * (swap accounting, the iocost io.weight). */
			if (!w->explicit_request)
				continue;
			const char *why = !strcmp(w->file, "memory.swap.max") ? " (swap accounting is off)"
					  : !strcmp(w->file, "io.weight")     ? " (no CONFIG_BLK_CGROUP_IOCOST)"
									      : "";
			if (is_soft(limits, w)) {
				/* A profile's default: a note, as for a missing controller. */
				fprintf(stderr, "isd: note: the profile's default %s is not enforced: it needs %s in the cgroup, "
					"which this kernel does not provide%s\n", w->option, w->file, why);
				continue;
			}
			if (!best_effort) {
				isd_error(0, "%s needs %s in the cgroup, which this kernel does not provide%s; fix: "
					  "drop %s or use --limits=best-effort", w->option, w->file, why, w->option);
				r = -EOPNOTSUPP;
				goto fail;
			}
			isd_warn("ignoring %s (--limits=best-effort): needs %s in the cgroup, which this kernel "
				 "does not provide%s", w->option, w->file, why);
			continue;
		}
		r = write_at(cg->dirfd, w->file, w->value);
		if (r < 0) {
			if (w->controller == ISD_CG_CPUSET && r == -EINVAL) {
				_cleanup_free_ char *eff = NULL;
				if (isd_read_file_at(cg->dirfd, "cpuset.cpus.effective", &eff, NULL) == 0)
					eff[strcspn(eff, "\n")] = '\0';
				r = isd_error(0, "--cpuset-cpus %s: the kernel refused it (CPUs available: %s)", w->value,
					      eff ? eff : "?");
			} else {
				r = isd_error(r, "setting %s (%s=%s in %s)", w->option, w->file, w->value, cg->path);
			}
			goto fail;
		}
		if (!strcmp(w->file, "memory.max"))
			cg->memory_max = limits->memory;
	}
	host_free(&h);
	return 0;
fail:
	host_free(&h);
	return fail_prepare(cg, r);
}

int isd_cgroup_gc(bool dry_run)
{
	struct host h;
	int failures = 0;
	char *slash;

	{
		size_t removed;
		/* Sessions whose removal was interrupted (src/session-gc.c). */
		if (isd_session_gc(dry_run, &removed) < 0)
			failures++;
	}
	host_discover(&h);
	if (!h.mountpoint) {
		host_free(&h);
		return failures ? ISD_EXIT_FAILURE : 0; /* no cgroup v2: isd never creates anything */
	}
	failures += isd_cgroup_gc_dir(h.own, dry_run, true, true);
	slash = strrchr(h.own, '/');
	if (strcmp(h.own, h.mountpoint) && slash && slash != h.own) {
		*slash = '\0';
		if (strlen(h.own) >= strlen(h.mountpoint))
			failures += isd_cgroup_gc_dir(h.own, dry_run, true, true);
	}
	host_free(&h);
	return failures ? ISD_EXIT_FAILURE : 0;
}

