/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v2, the pure part: Docker's limit options to cgroup file values,
 * parsing /proc/self/cgroup and mountinfo, and deciding where a sandbox's
 * cgroup can go (isd_cgroup_plan, on a real or a test's fake tree).
 * cgroup.c does the creating, writing, cleaning up and reporting.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isd/cgroup.h"

#include "isd/util.h"
#include "isd/path-util.h"

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

#ifdef HAVE_SD_BUS
#include <systemd/sd-bus.h>
#endif

static const struct {
	unsigned bit;
	const char *name;
} controller_names[] = {
	{ISD_CG_CPU, "cpu"}, {ISD_CG_CPUSET, "cpuset"}, {ISD_CG_IO, "io"},
	{ISD_CG_MEMORY, "memory"}, {ISD_CG_PIDS, "pids"},
};
#define N_CONTROLLERS (sizeof(controller_names) / sizeof(controller_names[0]))

const char *isd_cgroup_controller_name(unsigned bit)
{
	for (size_t i = 0; i < N_CONTROLLERS; i++)
		if (controller_names[i].bit == bit)
			return controller_names[i].name;
	return "?";
}

/* ---- Pure logic ---- */

uint64_t isd_cgroup_shares_to_weight(uint64_t shares)
{
	double l, w;

	if (shares == 0)
		return 0;
	if (shares <= 2)
		return 1;
	if (shares >= 262144)
		return 10000;
	l = log2((double)shares);
	w = ceil(pow(10.0, (l * l + 125.0 * l) / 612.0 - 7.0 / 34.0));
	if (w < 1)
		return 1;
	return w > 10000 ? 10000 : (uint64_t)w;
}

uint64_t isd_cgroup_blkio_to_io_weight(uint64_t blkio)
{
	if (blkio == 0)
		return 0;
	if (blkio <= 10)
		return 1;
	if (blkio >= 1000)
		return 10000;
	return 1 + (blkio - 10) * 9999 / 990;
}

unsigned isd_cgroup_needed_controllers(const struct isd_limits *l)
{
	unsigned m = 0;

	if (l->memory || l->memory_swap > 0 || l->memory_reservation)
		m |= ISD_CG_MEMORY;
	if (l->cpu_quota_us || l->cpu_weight)
		m |= ISD_CG_CPU;
	if (l->cpuset_cpus && *l->cpuset_cpus)
		m |= ISD_CG_CPUSET;
	if (l->pids_limit > 0)
		m |= ISD_CG_PIDS;
	if (l->blkio_weight)
		m |= ISD_CG_IO;
	return m;
}

bool isd_limits_requested(const struct isd_limits *l)
{
	return isd_cgroup_needed_controllers(l) != 0;
}

__attribute__((format(printf, 8, 9))) static void add_write(struct isd_cgroup_write *out, int *n, unsigned ctrl, const char *file,
		      const char *option, unsigned limits, bool explicit_request, const char *fmt, ...)
{
	struct isd_cgroup_write *w = &out[(*n)++];
	va_list ap;

	w->controller = ctrl;
	w->file = file;
	w->option = option;
	w->limits = limits;
	w->explicit_request = explicit_request;
	va_start(ap, fmt);
	vsnprintf(w->value, sizeof(w->value), fmt, ap);
	va_end(ap);
}

int isd_cgroup_limit_writes(const struct isd_limits *l, struct isd_cgroup_write *out)
{
	int n = 0;

	/* Docker's rules (docker run --help, "Runtime constraints on resources"). */
	if (l->memory_swap > 0 && !l->memory)
		return isd_error(0, "--memory-swap needs --memory as well (Docker's rule: swap is memory plus swap)");
	if (l->memory_swap > 0 && (uint64_t)l->memory_swap < l->memory)
		return isd_error(0, "--memory-swap (%" PRId64 ") must be at least --memory (%" PRIu64 "): it is memory plus swap",
				 l->memory_swap, l->memory);
	if (l->memory && l->memory < 6 * 1024 * 1024)
		return isd_error(0, "--memory %" PRIu64 ": the minimum is 6 MiB (Docker's rule)", l->memory);
	if (l->memory && l->memory_reservation > l->memory)
		return isd_error(0, "--memory-reservation must not exceed --memory");
	if (l->cpu_quota_us && (l->cpu_period_us < 1000 || l->cpu_period_us > 1000000))
		return isd_error(0, "cpu period %" PRIu64 " us: must be 1000..1000000", l->cpu_period_us);
	if (l->cpu_quota_us && l->cpu_quota_us < 1000)
		return isd_error(0, "--cpus: a quota of %" PRIu64 " us per period is below the kernel's minimum of 1000 us",
				 l->cpu_quota_us);
	if (l->cpu_weight > 10000)
		return isd_error(0, "cpu weight %" PRIu64 ": must be 1..10000", l->cpu_weight);

	if (l->memory) {
		add_write(out, &n, ISD_CG_MEMORY, "memory.max", "--memory", ISD_LIMIT_MEMORY, true, "%" PRIu64, l->memory);
		/* --memory-swap is memory+swap: equal means no swap, -1 means
		 * unlimited (the kernel default, nothing to write), unset means
		 * Docker's default of as much swap as memory. */
		if (l->memory_swap > 0)
			add_write(out, &n, ISD_CG_MEMORY, "memory.swap.max", "--memory-swap", ISD_LIMIT_MEMORY_SWAP, true,
				  "%" PRIu64, (uint64_t)l->memory_swap - l->memory);
		else if (l->memory_swap == 0)
			add_write(out, &n, ISD_CG_MEMORY, "memory.swap.max", "--memory", ISD_LIMIT_MEMORY, false,
				  "%" PRIu64, l->memory);
	}
	if (l->memory_reservation)
		add_write(out, &n, ISD_CG_MEMORY, "memory.low", "--memory-reservation", ISD_LIMIT_MEMORY_RESERVATION, true, "%" PRIu64,
			  l->memory_reservation);
	if (l->cpu_quota_us)
		add_write(out, &n, ISD_CG_CPU, "cpu.max", "--cpus", ISD_LIMIT_CPUS, true, "%" PRIu64 " %" PRIu64,
			  l->cpu_quota_us, l->cpu_period_us);
	if (l->cpu_weight)
		add_write(out, &n, ISD_CG_CPU, "cpu.weight", "--cpu-shares/--cpu-weight",
			  ISD_LIMIT_CPU_SHARES | ISD_LIMIT_CPU_WEIGHT, true, "%" PRIu64,
			  l->cpu_weight);
	if (l->cpuset_cpus && *l->cpuset_cpus)
		add_write(out, &n, ISD_CG_CPUSET, "cpuset.cpus", "--cpuset-cpus", ISD_LIMIT_CPUSET_CPUS, true, "%s", l->cpuset_cpus);
	if (l->pids_limit > 0)
		add_write(out, &n, ISD_CG_PIDS, "pids.max", "--pids-limit", ISD_LIMIT_PIDS_LIMIT, true, "%" PRId64, l->pids_limit);
	/* The CLI keeps Docker's 10..1000 in blkio_weight. */
	if (l->blkio_weight)
		add_write(out, &n, ISD_CG_IO, "io.weight", "--blkio-weight", ISD_LIMIT_BLKIO_WEIGHT, true, "%" PRIu64,
			  isd_cgroup_blkio_to_io_weight(l->blkio_weight));
	return n;
}

unsigned isd_cgroup_parse_controllers(const char *text)
{
	unsigned m = 0;
	const char *p = text;

	while (p && *p) {
		size_t len;
		while (*p && isspace((unsigned char)*p))
			p++;
		len = strcspn(p, " \t\n,");
		for (size_t i = 0; i < N_CONTROLLERS; i++)
			if (strlen(controller_names[i].name) == len && !strncmp(p, controller_names[i].name, len))
				m |= controller_names[i].bit;
		p += len;
		if (*p == ',')
			p++;
	}
	return m;
}

void isd_cgroup_controllers_string(unsigned mask, char *buf, size_t len, const char *prefix)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_CONTROLLERS && used < len; i++)
		if (mask & controller_names[i].bit)
			used += (size_t)snprintf(buf + used, len - used, "%s%s%s", used ? " " : "", prefix,
						 controller_names[i].name);
	if (!mask)
		snprintf(buf, len, "none");
}

int isd_cgroup_parse_proc_cgroup(const char *text, char **v2_path, unsigned *v1_controllers)
{
	const char *line = text;

	*v2_path = NULL;
	*v1_controllers = 0;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

		if (c2) {
			if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
				free(*v2_path);
				*v2_path = strndup(c2 + 1, len - (size_t)(c2 + 1 - line));
			} else {
				_cleanup_free_ char *names = strndup(c1 + 1, (size_t)(c2 - c1 - 1));
				*v1_controllers |= isd_cgroup_parse_controllers(names);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	if (*v2_path && (*v2_path)[0] != '/') {
		free(*v2_path);
		*v2_path = NULL;
		return -EINVAL;
	}
	return 0;
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static char *unescape_mountinfo(const char *s, size_t len)
{
	char *out = isd_xmalloc(len + 1), *w = out;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			*w++ = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		} else {
			*w++ = s[i];
		}
	}
	*w = '\0';
	return out;
}

int isd_cgroup_find_dir(const char *mountinfo, const char *own_path, char **mountpoint, char **dir)
{
	const char *line = mountinfo;

	*mountpoint = *dir = NULL;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		_cleanup_free_ char *copy = strndup(line, len);
		char *fields[6] = {NULL}, *save = NULL, *sep;
		size_t nf = 0;

		line = nl ? nl + 1 : NULL;
		sep = strstr(copy, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		*sep = '\0';
		for (char *tok = strtok_r(copy, " ", &save); tok && nf < 6; tok = strtok_r(NULL, " ", &save))
			fields[nf++] = tok;
		if (nf < 5)
			continue;
		{
			_cleanup_free_ char *root = unescape_mountinfo(fields[3], strlen(fields[3]));
			_cleanup_free_ char *mnt = unescape_mountinfo(fields[4], strlen(fields[4]));
			/* The mount shows the hierarchy from root; own_path must lie below. */
			const char *rest = isd_path_rest(own_path, root);

			if (!rest)
				continue;
			free(*mountpoint);
			free(*dir);
			*mountpoint = isd_xstrdup(mnt);
			if (!*rest)
				*dir = isd_xstrdup(mnt);
			else
				*dir = isd_xasprintf("%s/%s", strcmp(mnt, "/") ? mnt : "", rest);
			/* Prefer the canonical place when several are mounted. */
			if (!strcmp(mnt, "/sys/fs/cgroup"))
				break;
		}
	}
	return *dir ? 0 : -ENOENT;
}

/* ---- Reading a cgroup tree (real or fake) ---- */

unsigned isd_cgroup_read_controllers(const char *dir, const char *file)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", dir, file);
	_cleanup_free_ char *text = NULL;

	if (isd_read_file_at(AT_FDCWD, path, &text, NULL) < 0)
		return 0;
	return isd_cgroup_parse_controllers(text);
}

/* -1: unreadable, 0: empty, 1: only self, 2: others too. */
static int procs_state(const char *dir, pid_t self)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/cgroup.procs", dir);
	_cleanup_free_ char *text = NULL;
	int state = 0;

	if (isd_read_file_at(AT_FDCWD, path, &text, NULL) < 0)
		return -1;
	for (char *p = text; *p;) {
		char *end;
		long pid = strtol(p, &end, 10);
		if (end == p) {
			p++;
			continue;
		}
		if (pid == self)
			state = state ? state : 1;
		else
			state = 2;
		p = end;
	}
	return state;
}

static bool can_write(const struct isd_cgroup_env *env, const char *dir, const char *file)
{
	_cleanup_free_ char *path = file ? isd_xasprintf("%s/%s", dir, file) : isd_xstrdup(dir);
	struct stat st;

	if (env->fake_uid < 0)
		return faccessat(AT_FDCWD, path, file ? W_OK : W_OK | X_OK, AT_EACCESS) == 0;
	return stat(path, &st) == 0 && st.st_uid == (uid_t)env->fake_uid && (st.st_mode & S_IWUSR);
}

static bool is_hierarchy_root(const char *dir)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/cgroup.type", dir);
	/* Only the real root cgroup lacks cgroup.type (a cgroupns root has it). */
	return access(path, F_OK) < 0 && errno == ENOENT;
}

int isd_cgroup_plan(const struct isd_cgroup_env *env, unsigned needed, struct isd_cgroup_plan *plan)
{
	struct isd_cgroup_plan own = {.place = ISD_CG_PLACE_NONE}, sib = {.place = ISD_CG_PLACE_NONE};
	_cleanup_free_ char *parent = NULL;
	bool own_writable, at_top;
	char *slash;

	memset(plan, 0, sizeof(*plan));
	at_top = !strcmp(env->own, env->mountpoint);

	/* 1. Own cgroup: writable dir plus the files a delegation hands over. */
	own_writable = can_write(env, env->own, NULL) && can_write(env, env->own, "cgroup.procs") &&
		       can_write(env, env->own, "cgroup.subtree_control");
	if (own_writable) {
		int procs = procs_state(env->own, env->self);
		unsigned sub = isd_cgroup_read_controllers(env->own, "cgroup.subtree_control");

		snprintf(own.base, sizeof(own.base), "%s", env->own);
		own.available = isd_cgroup_read_controllers(env->own, "cgroup.controllers");
		own.to_enable = needed & own.available & ~sub;
		if (is_hierarchy_root(env->own) || procs == 0)
			own.place = ISD_CG_PLACE_CHILD;
		else if (procs == 1)
			own.place = ISD_CG_PLACE_SUPERVISOR;
		else
			snprintf(own.reason, sizeof(own.reason),
				 "isd's cgroup %s is delegated but other processes live in it, and cgroup v2 gives "
				 "controllers only to the children of a cgroup without processes",
				 env->own);
	} else {
		snprintf(own.reason, sizeof(own.reason), "isd's cgroup %s is not writable by user %d (not delegated)",
			 env->own, env->fake_uid >= 0 ? env->fake_uid : (int)geteuid());
	}

	/* 2. Parent: the sandbox becomes a sibling of isd's cgroup. */
	parent = isd_xstrdup(env->own);
	slash = strrchr(parent, '/');
	if (!at_top && slash && slash != parent) {
		*slash = '\0';
		if (strlen(parent) >= strlen(env->mountpoint) && can_write(env, parent, NULL) &&
		    can_write(env, parent, "cgroup.procs")) {
			unsigned sub = isd_cgroup_read_controllers(parent, "cgroup.subtree_control");
			unsigned ctrl = isd_cgroup_read_controllers(parent, "cgroup.controllers");
			int procs = procs_state(parent, env->self);

			snprintf(sib.base, sizeof(sib.base), "%s", parent);
			sib.place = ISD_CG_PLACE_SIBLING;
			/* Controllers can be added only where no process lives. */
			if ((procs == 0 || is_hierarchy_root(parent)) && can_write(env, parent, "cgroup.subtree_control"))
				sib.available = ctrl;
			else
				sib.available = sub;
			sib.to_enable = needed & sib.available & ~sub;
		}
	}

	/* Prefer whichever gives more of what is needed; own on a tie. */
	if (own.place != ISD_CG_PLACE_NONE &&
	    (sib.place == ISD_CG_PLACE_NONE ||
	     __builtin_popcount(needed & own.available) >= __builtin_popcount(needed & sib.available)))
		*plan = own;
	else if (sib.place != ISD_CG_PLACE_NONE)
		*plan = sib;
	else {
		*plan = own;
		if (own_writable)
			snprintf(plan->reason + strlen(plan->reason), sizeof(plan->reason) - strlen(plan->reason),
				 "; its parent is not writable");
		else if (!at_top)
			snprintf(plan->reason + strlen(plan->reason), sizeof(plan->reason) - strlen(plan->reason),
				 ", nor is its parent");
	}
	return plan->place == ISD_CG_PLACE_NONE ? -EACCES : 0;
}

