/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pure logic of src/cgroup.c, plus the placement decision, gc and destroy
 * over a fake cgroup tree in a temporary directory. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isd/cgroup.h"
#include "isd/util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static int failures;

#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                      \
		}                                                                        \
	} while (0)
#define CHECK_STR(a, b)                                                                          \
	do {                                                                                     \
		const char *_a = (a), *_b = (b);                                                 \
		if (!_a || strcmp(_a, _b)) {                                                     \
			fprintf(stderr, "%s:%d: '%s' != '%s'\n", __FILE__, __LINE__, _a ? _a : "(null)", _b); \
			failures++;                                                              \
		}                                                                                \
	} while (0)
#define CHECK_CONTAINS(hay, needle)                                                             \
	do {                                                                                    \
		if (!strstr((hay), (needle))) {                                                 \
			fprintf(stderr, "%s:%d: '%s' lacks '%s'\n", __FILE__, __LINE__, (hay), (needle)); \
			failures++;                                                             \
		}                                                                               \
	} while (0)

#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

static void test_shares(void)
{
	uint64_t prev = 0;

	CHECK(isd_cgroup_shares_to_weight(0) == 0);
	CHECK(isd_cgroup_shares_to_weight(2) == 1);
	CHECK(isd_cgroup_shares_to_weight(1024) == 100); /* defaults map onto each other */
	CHECK(isd_cgroup_shares_to_weight(262144) == 10000);
	CHECK(isd_cgroup_shares_to_weight(10) == 4);
	CHECK(isd_cgroup_shares_to_weight(100) == 17);
	CHECK(isd_cgroup_shares_to_weight(512) == 59);
	CHECK(isd_cgroup_shares_to_weight(2048) == 174);
	for (uint64_t s = 2; s <= 262144; s++) {
		uint64_t w = isd_cgroup_shares_to_weight(s);
		if (w < prev || w < 1 || w > 10000) {
			fprintf(stderr, "shares %" PRIu64 " -> %" PRIu64 " (prev %" PRIu64 ")\n", s, w, prev);
			failures++;
			break;
		}
		prev = w;
	}
	CHECK(isd_cgroup_blkio_to_io_weight(0) == 0);
	CHECK(isd_cgroup_blkio_to_io_weight(10) == 1);
	CHECK(isd_cgroup_blkio_to_io_weight(500) == 4950);
	CHECK(isd_cgroup_blkio_to_io_weight(1000) == 10000);
}

static const struct isd_cgroup_write *find_write(const struct isd_cgroup_write *w, int n, const char *file)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(w[i].file, file))
			return &w[i];
	return NULL;
}

static struct isd_limits limits0(void)
{
	struct isd_limits l;
	memset(&l, 0, sizeof(l));
	l.cpu_period_us = 100000;
	return l;
}

static void test_writes(void)
{
	struct isd_cgroup_write w[ISD_CGROUP_MAX_WRITES];
	struct isd_limits l = limits0();
	const struct isd_cgroup_write *x;
	int n;

	CHECK(!isd_limits_requested(&l));
	l.pids_limit = -1; /* unlimited is the default: no cgroup needed */
	l.memory_swap = -1;
	CHECK(!isd_limits_requested(&l));

	/* docker run --memory=4g --memory-swap=4g --cpus=4 --pids-limit=512 */
	l = limits0();
	l.memory = 4 * GiB;
	l.memory_swap = (int64_t)(4 * GiB);
	l.cpu_quota_us = 400000;
	l.pids_limit = 512;
	CHECK(isd_limits_requested(&l));
	CHECK(isd_cgroup_needed_controllers(&l) == (ISD_CG_MEMORY | ISD_CG_CPU | ISD_CG_PIDS));
	n = isd_cgroup_limit_writes(&l, w);
	CHECK(n == 4);
	CHECK((x = find_write(w, n, "memory.max")) && !strcmp(x->value, "4294967296"));
	CHECK((x = find_write(w, n, "memory.swap.max")) && !strcmp(x->value, "0") && x->explicit_request);
	CHECK((x = find_write(w, n, "cpu.max")) && !strcmp(x->value, "400000 100000"));
	CHECK((x = find_write(w, n, "pids.max")) && !strcmp(x->value, "512"));

	/* memory-swap bigger: the difference is swap */
	l.memory_swap = (int64_t)(6 * GiB);
	n = isd_cgroup_limit_writes(&l, w);
	CHECK((x = find_write(w, n, "memory.swap.max")) && !strcmp(x->value, "2147483648"));
	/* -1: unlimited swap, the kernel default, nothing written */
	l.memory_swap = -1;
	n = isd_cgroup_limit_writes(&l, w);
	CHECK(n == 3 && !find_write(w, n, "memory.swap.max"));
	/* unset: Docker gives as much swap as memory, a derived default */
	l.memory_swap = 0;
	n = isd_cgroup_limit_writes(&l, w);
	CHECK((x = find_write(w, n, "memory.swap.max")) && !strcmp(x->value, "4294967296") && !x->explicit_request);

	/* errors Docker makes too */
	l = limits0();
	l.memory_swap = (int64_t)GiB;
	CHECK(isd_cgroup_limit_writes(&l, w) == -EINVAL);
	CHECK_CONTAINS(isd_error_message(), "--memory-swap needs --memory");
	l.memory = 2 * GiB;
	CHECK(isd_cgroup_limit_writes(&l, w) == -EINVAL);
	CHECK_CONTAINS(isd_error_message(), "at least --memory");
	l = limits0();
	l.memory = MiB;
	CHECK(isd_cgroup_limit_writes(&l, w) == -EINVAL);
	l = limits0();
	l.memory = GiB;
	l.memory_reservation = 2 * GiB;
	CHECK(isd_cgroup_limit_writes(&l, w) == -EINVAL);
	l = limits0();
	l.cpu_quota_us = 500;
	CHECK(isd_cgroup_limit_writes(&l, w) == -EINVAL);

	/* the rest */
	l = limits0();
	l.cpu_quota_us = 50000; /* --cpus 0.5 */
	l.cpu_period_us = 100000;
	l.cpu_weight = isd_cgroup_shares_to_weight(512);
	l.cpuset_cpus = (char *)"0-1,3";
	l.blkio_weight = 500;
	l.memory_reservation = 256 * MiB;
	n = isd_cgroup_limit_writes(&l, w);
	CHECK(n == 5);
	CHECK((x = find_write(w, n, "cpu.max")) && !strcmp(x->value, "50000 100000"));
	CHECK((x = find_write(w, n, "cpu.weight")) && !strcmp(x->value, "59"));
	CHECK((x = find_write(w, n, "cpuset.cpus")) && !strcmp(x->value, "0-1,3") && x->controller == ISD_CG_CPUSET);
	CHECK((x = find_write(w, n, "io.weight")) && !strcmp(x->value, "4950") && x->controller == ISD_CG_IO);
	CHECK((x = find_write(w, n, "memory.low")) && !strcmp(x->value, "268435456"));
	CHECK(!find_write(w, n, "memory.max"));
}

static void test_format(void)
{
	char b[32];

	isd_format_size(4 * GiB, b, sizeof(b), 0);
	CHECK_STR(b, "4.0 GiB");
	isd_format_size(512 * MiB, b, sizeof(b), 0);
	CHECK_STR(b, "512.0 MiB");
	isd_format_size(1536 * MiB, b, sizeof(b), 0);
	CHECK_STR(b, "1.5 GiB");
	isd_format_size(GiB - 1, b, sizeof(b), 0);
	CHECK_STR(b, "1.0 GiB");
	isd_format_size(100, b, sizeof(b), 0);
	CHECK_STR(b, "100 B");
	isd_format_size(6 * MiB, b, sizeof(b), 0);
	CHECK_STR(b, "6.0 MiB");
	isd_format_size(3ULL << 40, b, sizeof(b), 0);
	CHECK_STR(b, "3.0 TiB");
	/* The session list's columns (isd session list: SIZE, LIMIT). */
	CHECK_STR(isd_format_size(200 * MiB, b, sizeof(b), ISD_SIZE_COMPACT), "200.0M");
	CHECK_STR(isd_format_size(GiB - 1, b, sizeof(b), ISD_SIZE_COMPACT), "1.0G");
	CHECK_STR(isd_format_size(100, b, sizeof(b), ISD_SIZE_COMPACT), "100B");

	CHECK(isd_cgroup_parse_controllers("cpuset cpu io memory hugetlb pids rdma misc\n") ==
	      (ISD_CG_CPU | ISD_CG_CPUSET | ISD_CG_IO | ISD_CG_MEMORY | ISD_CG_PIDS));
	CHECK(isd_cgroup_parse_controllers("hugetlb\n") == 0);
	CHECK(isd_cgroup_parse_controllers("cpuacct,cpu") == ISD_CG_CPU); /* v1 "cpu,cpuacct" style */
	isd_cgroup_controllers_string(ISD_CG_MEMORY | ISD_CG_PIDS, b, sizeof(b), "+");
	CHECK_STR(b, "+memory +pids");
	isd_cgroup_controllers_string(0, b, sizeof(b), "");
	CHECK_STR(b, "none");
}

static void test_proc_parsing(void)
{
	/* this project's CI machines: hybrid */
	static const char hybrid[] = "9:name=systemd:/\n8:pids:/\n7:blkio:/\n4:memory:/process_api/81\n"
				     "3:cpuset:/\n1:cpu,cpuacct:/\n0::/\n";
	static const char v2[] = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/vte.scope\n";
	static const char v1[] = "4:memory:/\n3:cpuset:/\n";
	static const char mi_hybrid[] =
		"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
	static const char mi_v2[] =
		"22 1 0:21 / / rw - ext4 /dev/sda1 rw\n"
		"30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
		"rw,nsdelegate,memory_recursiveprot\n";
	/* a bind of part of the hierarchy, as in a container without cgroupns */
	static const char mi_sub[] =
		"40 22 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n"
		"41 22 0:26 / /mnt/cg\\040two rw - cgroup2 cgroup2 rw\n";
	char *path = NULL, *mnt = NULL, *dir = NULL;
	unsigned v1c;

	CHECK(isd_cgroup_parse_proc_cgroup(hybrid, &path, &v1c) == 0);
	CHECK_STR(path, "/");
	CHECK(v1c == (ISD_CG_PIDS | ISD_CG_MEMORY | ISD_CG_CPUSET | ISD_CG_CPU));
	free(path);
	CHECK(isd_cgroup_parse_proc_cgroup(v2, &path, &v1c) == 0);
	CHECK_STR(path, "/user.slice/user-1000.slice/user@1000.service/app.slice/vte.scope");
	CHECK(v1c == 0);
	free(path);
	CHECK(isd_cgroup_parse_proc_cgroup(v1, &path, &v1c) == 0);
	CHECK(path == NULL && v1c == (ISD_CG_MEMORY | ISD_CG_CPUSET));

	CHECK(isd_cgroup_find_dir(mi_hybrid, "/", &mnt, &dir) == 0);
	CHECK_STR(mnt, "/sys/fs/cgroup/unified");
	CHECK_STR(dir, "/sys/fs/cgroup/unified");
	free(mnt);
	free(dir);
	CHECK(isd_cgroup_find_dir(mi_v2, "/user.slice/a b.scope", &mnt, &dir) == 0);
	CHECK_STR(mnt, "/sys/fs/cgroup");
	CHECK_STR(dir, "/sys/fs/cgroup/user.slice/a b.scope");
	free(mnt);
	free(dir);
	CHECK(isd_cgroup_find_dir(mi_sub, "/docker/abc/sub", &mnt, &dir) == 0);
	CHECK_STR(dir, "/sys/fs/cgroup/sub");
	free(mnt);
	free(dir);
	CHECK(isd_cgroup_find_dir(mi_sub, "/elsewhere", &mnt, &dir) == 0);
	CHECK_STR(dir, "/mnt/cg two/elsewhere");
	free(mnt);
	free(dir);
	CHECK(isd_cgroup_find_dir(mi_hybrid + 0, "/x", &mnt, &dir) == 0); /* root "/" holds all */
	free(mnt);
	free(dir);
	CHECK(isd_cgroup_find_dir("35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", "/",
				  &mnt, &dir) == -ENOENT);
}

/* ---- fake cgroup trees ---- */

static char tmpl[] = "/tmp/test-cgroup.XXXXXX";
static int test_uid;
/* Real root gives "ours" to uid 1000 by chown; elsewhere (unprivileged, or
 * root of a user namespace without uid 1000) the owner-write bit decides. */
static bool use_chown;
static char *readonly_dirs[32];
static size_t n_readonly_dirs;

static void put(const char *rel, const char *content, bool ours)
{
	char *path = isd_xasprintf("%s/%s", tmpl, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || isd_write_all(fd, content, strlen(content)) < 0) {
		perror(path);
		exit(2);
	}
	close(fd);
	if (use_chown)
		(void)!chown(path, ours ? (uid_t)test_uid : 0, 0);
	else
		chmod(path, ours ? 0644 : 0444);
	free(path);
}

/* A cgroup directory with its interface files; ours = delegated to us. */
static void cg(const char *rel, const char *controllers, const char *subtree, const char *procs, bool ours,
	       bool root)
{
	char *path = isd_xasprintf("%s/%s", tmpl, rel), *f;

	mkdir(path, 0755);
	f = isd_xasprintf("%s/cgroup.controllers", rel);
	put(f, controllers, false);
	free(f);
	f = isd_xasprintf("%s/cgroup.subtree_control", rel);
	put(f, subtree, ours);
	free(f);
	f = isd_xasprintf("%s/cgroup.procs", rel);
	put(f, procs, ours);
	free(f);
	if (!root) {
		f = isd_xasprintf("%s/cgroup.type", rel);
		put(f, "domain\n", false);
		free(f);
	}
	/* Not root: modes stand for ownership; applied once the tree is built. */
	if (use_chown) {
		(void)!chown(path, ours ? (uid_t)test_uid : 0, 0);
		free(path);
	} else if (!ours) {
		readonly_dirs[n_readonly_dirs++] = path;
	} else {
		free(path);
	}
}

static void seal_tree(bool seal)
{
	for (size_t i = 0; i < n_readonly_dirs; i++)
		chmod(readonly_dirs[i], seal ? 0555 : 0755);
}

static int plan_for(const char *own_rel, unsigned needed, struct isd_cgroup_plan *p)
{
	char *own = isd_xasprintf("%s/%s", tmpl, own_rel);
	struct isd_cgroup_env env = {.mountpoint = tmpl, .own = own, .self = 999, .fake_uid = test_uid};
	int r = isd_cgroup_plan(&env, needed, p);
	free(own);
	return r;
}

static void test_plan(void)
{
	const unsigned cpu_mem = ISD_CG_CPU | ISD_CG_MEMORY;
	struct isd_cgroup_plan p;
	char *want;

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		exit(2);
	}
	chmod(tmpl, 0755);
	use_chown = getuid() == 0 && chown(tmpl, 1000, 0) == 0;
	if (use_chown) {
		test_uid = 1000;
		(void)!chown(tmpl, 0, 0);
	} else {
		struct stat st;
		stat(tmpl, &st);
		test_uid = (int)st.st_uid;
	}
	/* A systemd host: user@1000.service is delegated (cpu memory pids). */
	cg("", "cpuset cpu io memory pids\n", "cpuset cpu io memory pids\n", "1\n", false, true);
	cg("user.slice", "cpuset cpu io memory pids\n", "cpu memory pids\n", "", false, false);
	cg("user.slice/user-1000.slice", "cpu memory pids\n", "cpu memory pids\n", "", false, false);
	cg("user.slice/user-1000.slice/session-3.scope", "", "", "500\n999\n", false, false);
	cg("user.slice/user-1000.slice/user@1000.service", "cpu memory pids\n", "memory pids\n", "", true, false);
	cg("user.slice/user-1000.slice/user@1000.service/app.slice", "memory pids\n", "memory pids\n", "", true, false);
	cg("user.slice/user-1000.slice/user@1000.service/app.slice/vte.scope", "memory pids\n", "", "700\n999\n",
	   true, false);
	cg("user.slice/user-1000.slice/user@1000.service/app.slice/isd.scope", "memory pids\n", "", "999\n", true,
	   false);

	cg("box", "cpu memory pids\n", "", "700\n999\n", true, false);
	cg("deleg", "cpu memory pids\n", "memory\n", "", true, false);
	cg("deleg/leaf", "memory\n", "", "999\n", true, false);
	cg("busy", "cpu memory pids\n", "", "123\n", true, false);
	cg("busy/leaf", "", "", "999\n5\n", true, false);
	cg("rootcase", "memory pids\n", "", "1\n999\n", true, true);
	{
		char *gc = isd_xasprintf("%s/gc", tmpl);
		mkdir(gc, 0755);
		free(gc);
	}
	seal_tree(true);

	/* ssh session: root's scope, root's parent: nowhere, and it says why. */
	CHECK(plan_for("user.slice/user-1000.slice/session-3.scope", cpu_mem, &p) == -EACCES);
	CHECK(p.place == ISD_CG_PLACE_NONE);
	CHECK_CONTAINS(p.reason, "session-3.scope is not writable by user");
	CHECK_CONTAINS(p.reason, "nor is its parent");

	/* desktop terminal: a sibling in app.slice; app.slice has no processes
	 * and may enable what user@1000.service passes down (cpu too). */
	CHECK(plan_for("user.slice/user-1000.slice/user@1000.service/app.slice/vte.scope", cpu_mem, &p) == 0);
	CHECK(p.place == ISD_CG_PLACE_SIBLING);
	want = isd_xasprintf("%s/user.slice/user-1000.slice/user@1000.service/app.slice", tmpl);
	CHECK_STR(p.base, want);
	free(want);
	CHECK(p.available == (ISD_CG_MEMORY | ISD_CG_PIDS));
	CHECK(p.to_enable == 0); /* memory is on already; cpu is not delegated */

	/* isd alone in its delegated scope: supervisor leaf, child of own */
	CHECK(plan_for("user.slice/user-1000.slice/user@1000.service/app.slice/isd.scope", ISD_CG_MEMORY, &p) == 0);
	CHECK(p.place == ISD_CG_PLACE_SUPERVISOR);
	CHECK(p.available == (ISD_CG_MEMORY | ISD_CG_PIDS) && p.to_enable == ISD_CG_MEMORY);

	/* delegated, but shared with a shell, and a parent we cannot write */
	CHECK(plan_for("box", ISD_CG_MEMORY, &p) == -EACCES);
	CHECK_CONTAINS(p.reason, "other processes live in it");
	CHECK_CONTAINS(p.reason, "its parent is not writable");

	/* own lacks cpu, the parent can enable it: the parent wins */
	CHECK(plan_for("deleg/leaf", cpu_mem, &p) == 0);
	CHECK(p.place == ISD_CG_PLACE_SIBLING && p.available == (ISD_CG_CPU | ISD_CG_MEMORY | ISD_CG_PIDS));
	CHECK(p.to_enable == ISD_CG_CPU);
	/* ... only memory needed: own is enough and preferred */
	CHECK(plan_for("deleg/leaf", ISD_CG_MEMORY, &p) == 0);
	CHECK(p.place == ISD_CG_PLACE_SUPERVISOR);

	/* the parent has processes: it cannot enable more than it has */
	CHECK(plan_for("busy/leaf", ISD_CG_MEMORY, &p) == 0);
	CHECK(p.place == ISD_CG_PLACE_SIBLING && p.available == 0);
}

/* The real root (no cgroup.type), writable (root in UML): a child of it
 * although processes live there. */
static void test_root_child(void)
{
	struct isd_cgroup_plan p;
	char *root = isd_xasprintf("%s/rootcase", tmpl), *t = isd_xasprintf("%s/cgroup.type", root);
	struct isd_cgroup_env env = {.mountpoint = root, .own = root, .self = 999, .fake_uid = test_uid};

	CHECK(access(t, F_OK) < 0); /* root: no cgroup.type */
	CHECK(isd_cgroup_plan(&env, ISD_CG_MEMORY, &p) == 0);
	CHECK(p.place == ISD_CG_PLACE_CHILD);
	CHECK(p.available == (ISD_CG_MEMORY | ISD_CG_PIDS) && p.to_enable == ISD_CG_MEMORY);
	CHECK_STR(p.base, root);
	free(root);
	free(t);
}

static void test_gc_destroy_report(void)
{
	char *d = isd_xasprintf("%s/gc", tmpl), *x;
	pid_t dead = fork();
	struct isd_cgroup c;
	int pipefd[2], saved;
	char buf[512] = "";
	ssize_t n;

	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	x = isd_xasprintf("%s/isd-%d-0badc0de", d, (int)dead);
	mkdir(x, 0755);
	free(x);
	x = isd_xasprintf("%s/isd-%d-0badc0de-supervisor", d, (int)dead);
	mkdir(x, 0755);
	free(x);
	x = isd_xasprintf("%s/isd-%d-0badc0de", d, (int)getpid()); /* alive: kept */
	mkdir(x, 0755);
	free(x);
	x = isd_xasprintf("%s/isd-%d-zz", d, (int)dead); /* not ours: kept */
	mkdir(x, 0755);
	free(x);
	CHECK(isd_cgroup_gc_dir(d, false, false, false) == 0);
	x = isd_xasprintf("%s/isd-%d-0badc0de", d, (int)dead);
	CHECK(access(x, F_OK) < 0);
	free(x);
	x = isd_xasprintf("%s/isd-%d-0badc0de-supervisor", d, (int)dead);
	CHECK(access(x, F_OK) < 0);
	free(x);
	x = isd_xasprintf("%s/isd-%d-0badc0de", d, (int)getpid());
	CHECK(access(x, F_OK) == 0);
	free(x);
	x = isd_xasprintf("%s/isd-%d-zz", d, (int)dead);
	CHECK(access(x, F_OK) == 0);
	free(x);

	/* populated leftovers: kept by the cheap gc, only `isd gc` takes them */
	x = isd_xasprintf("%s/isd-%d-feed", d, (int)dead);
	mkdir(x, 0755);
	{
		char *ev = isd_xasprintf("%s/cgroup.events", x);
		int fd = open(ev, O_WRONLY | O_CREAT, 0644);
		CHECK(fd >= 0 && write(fd, "populated 1\nfrozen 0\n", 22) == 22);
		close(fd);
		CHECK(isd_cgroup_gc_dir(d, false, false, false) == 0);
		CHECK(access(x, F_OK) == 0);
		CHECK(isd_cgroup_gc_dir(d, true, false, true) == 0); /* dry run */
		CHECK(access(x, F_OK) == 0);
		unlink(ev);
		free(ev);
	}
	rmdir(x);
	free(x);

	/* destroy: removes the dir, twice is harmless; the limit comes back
	 * from memory.max */
	isd_cgroup_init(&c);
	CHECK(c.dirfd == -1 && c.path == NULL);
	x = isd_xasprintf("isd-%d-0badc0de", (int)getpid());
	{
		char *max = isd_xasprintf("%s/%s/memory.max", d, x);
		int fd = open(max, O_WRONLY | O_CREAT, 0644);
		CHECK(fd >= 0 && write(fd, "4294967296\n", 11) == 11);
		close(fd);
		free(max);
	}
	CHECK(isd_cgroup_open(d, x, &c) == 0 && c.dirfd >= 0 && c.path && !strcmp(strrchr(c.path, '/') + 1, x));
	free(x);

	/* report: nothing without oom_kill, one line with it */
	CHECK(pipe(pipefd) == 0);
	saved = dup(2);
	dup2(pipefd[1], 2);
	isd_cgroup_report(&c, 42, "hog"); /* no memory.events: silent */
	{
		int fd = openat(c.dirfd, "memory.events", O_WRONLY | O_CREAT, 0644);
		CHECK(fd >= 0 && write(fd, "low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\n", 36) == 36);
		close(fd);
	}
	isd_cgroup_report(&c, 42, "hog"); /* oom_kill 0: silent */
	{
		int fd = openat(c.dirfd, "memory.events", O_WRONLY | O_TRUNC);
		CHECK(fd >= 0 && write(fd, "oom 1\noom_kill 1\noom_group_kill 0\n", 34) == 34);
		close(fd);
	}
	isd_cgroup_report_status(&c, 42, "hog", 9 /* killed by SIGKILL */);
	isd_cgroup_report_status(&c, 0, "/usr/bin/hog", 137 << 8 /* exit 137, from isd's init */);
	isd_cgroup_report_status(&c, 42, "hog", 0 /* exited 0 */);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(pipefd[1]);
	n = read(pipefd[0], buf, sizeof(buf) - 1);
	close(pipefd[0]);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "isd: sandbox hit its memory limit (4.0 GiB); hog (pid 42) was killed\n"
		       "isd: sandbox hit its memory limit (4.0 GiB); hog was killed\n"
		       "isd: sandbox hit its memory limit (4.0 GiB); 1 process inside was killed, not hog (pid 42) "
		       "itself\n");

	unlinkat(c.dirfd, "memory.events", 0);
	unlinkat(c.dirfd, "memory.max", 0);
	CHECK(isd_cgroup_destroy(&c) == 0);
	CHECK(c.dirfd == -1 && c.path == NULL);
	x = isd_xasprintf("%s/isd-%d-0badc0de", d, (int)getpid());
	CHECK(access(x, F_OK) < 0);
	free(x);
	CHECK(isd_cgroup_destroy(&c) == 0);
	free(d);
}

/* Without cgroup.kill, destroy SIGKILLs what cgroup.procs lists; a pid cut
 * by a read boundary must be read whole, not as two wrong pids.  Runs as
 * pid 1 of a new pid namespace, so that even a broken reader can only hit
 * pids of that namespace. */
static int killcase_in_pidns(void)
{
	char d[] = "/tmp/test-cgroup-kill.XXXXXX", *f, pidbuf[16];
	pid_t kids[3];
	struct isd_cgroup c;
	int fd, status, bad = 0;

	/* Five-digit pids, so that the 4096-byte boundary can cut one. */
	fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	if (fd < 0 || write(fd, "12344", 5) != 5)
		return 77;
	close(fd);
	if (!mkdtemp(d))
		return 2;
	f = isd_xasprintf("%s/cgroup.procs", d);
	fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 2;
	for (int i = 0; i < 3; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			pause();
			_exit(0);
		}
	}
	/* "0" lines (never killed) up to 4 bytes before the boundary */
	for (size_t used = 0; used + 2 <= 4096 - 4; used += 2)
		bad |= write(fd, "0\n", 2) != 2;
	for (int i = 0; i < 3; i++) {
		snprintf(pidbuf, sizeof(pidbuf), "%d\n", (int)kids[i]);
		bad |= write(fd, pidbuf, strlen(pidbuf)) != (ssize_t)strlen(pidbuf);
	}
	close(fd);
	*strrchr(d, '/') = '\0';
	if (isd_cgroup_open(d, d + strlen(d) + 1, &c) < 0)
		return 2;
	d[strlen(d)] = '/';
	isd_cgroup_destroy(&c); /* a plain directory holding cgroup.procs: not removed */
	for (int i = 0; i < 3; i++) {
		/* never hang: whatever destroy missed dies here, and counts */
		status = 0;
		if (waitpid(kids[i], &status, WNOHANG) != kids[i]) {
			kill(kids[i], SIGTERM);
			waitpid(kids[i], &status, 0);
		}
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
			fprintf(stderr, "pid %d (line %d of cgroup.procs) not killed\n", (int)kids[i], 2047 + i);
			bad = 1;
		}
	}
	unlink(f);
	rmdir(d);
	free(f);
	return bad;
}

static void test_destroy_kills_listed(void)
{
	pid_t helper = fork();
	int status = 0;

	if (helper == 0) {
		pid_t init;
		if (unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0)
			_exit(77);
		init = fork();
		if (init == 0)
			_exit(killcase_in_pidns());
		waitpid(init, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 3);
	}
	waitpid(helper, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("test-cgroup: skipped the cut-pid test (no user/pid namespace here)\n");
		return;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_prepare_noop(void)
{
	struct isd_limits l = limits0();
	struct isd_cgroup c;

	l.pids_limit = -1;
	CHECK(isd_cgroup_prepare(&l, &c) == 0);
	CHECK(c.path == NULL && c.dirfd == -1);
	CHECK(isd_cgroup_attach(&c, 1) == 0);
	isd_cgroup_destroy(&c);
	/* invalid limits fail before the system is looked at */
	l = limits0();
	l.memory_swap = (int64_t)GiB;
	CHECK(isd_cgroup_prepare(&l, &c) == -EINVAL && c.dirfd == -1);
}

int main(void)
{
	test_shares();
	test_writes();
	test_format();
	test_proc_parsing();
	test_plan();
	test_root_child();
	test_gc_destroy_report();
	test_destroy_kills_listed();
	test_prepare_noop();
	seal_tree(false);
	for (size_t i = 0; i < n_readonly_dirs; i++)
		free(readonly_dirs[i]);
	{
		char *cmd = isd_xasprintf("rm -rf '%s'", tmpl);
		(void)!system(cmd);
		free(cmd);
	}
	if (failures) {
		fprintf(stderr, "test-cgroup: %d failure(s)\n", failures);
		return 1;
	}
	printf("test-cgroup: all passed\n");
	return 0;
}
