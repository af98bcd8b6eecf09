/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd doctor`: what this host allows, tried for real where that is cheap
 * (a user namespace, a fresh procfs, overlayfs are created in a throw-away
 * child), with a fix for each problem.  Exit status 0 only when
 * `isd exec --profile agent` can work fully here.
 */
#define _GNU_SOURCE
#include "isd/cli-args.h"
#include "isd/storage.h"
#include "isd/doctor.h"
#include "isd/caller.h"
#include "isd/cgroup.h"
#include "isd/cli.h"
#include "isolation.h"
#include "connect-guard.h"
#include "landlock.h"
#include "isd/seccomp.h"
#include "isd/syscalls.h"
#include "isd/session.h"
#include "isd/image.h"
#include "isd/util.h"
#include "isd/path-util.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <linux/magic.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

enum level { OK, WARN, FAIL };

struct check {
	const char *name;
	enum level level;
	char detail[512];
	char fix[512];
	bool needed_by_agent; /* a failure here means the agent profile cannot fully work */
};

struct report {
	struct check checks[24];
	size_t n;
	/* The probe `isd exec --isolation auto` decides by, run once so that
	 * no check can disagree with it. */
	struct isd_isolation_probe probe;
	int agent_tier; /* the agent profile's, resolved as isd exec does; -1: none */
	bool agent_pid_host;
};

static struct check *add(struct report *r, const char *name, bool needed)
{
	struct check *c = &r->checks[r->n++];

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->needed_by_agent = needed;
	return c;
}

__attribute__((format(printf, 3, 4))) static void set(struct check *c, enum level level, const char *fmt, ...)
{
	va_list ap;

	c->level = level;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

static long read_long(const char *path, long fallback)
{
	_cleanup_free_ char *text = NULL;
	return isd_read_file_at(AT_FDCWD, path, &text, NULL) == 0 ? strtol(text, NULL, 10) : fallback;
}

/* Runs fn in a child in new namespaces; its exit code is the answer (0 ok,
 * otherwise an errno). */
static int try_in_child(unsigned long flags, int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return errno;
	if (pid == 0) {
		uid_t uid = getuid();
		gid_t gid = getgid();
		char map[64];

		if (unshare((int)flags) < 0)
			_exit(errno);
		if (flags & CLONE_NEWUSER) {
			snprintf(map, sizeof(map), "%u %u 1", uid, uid);
			if (isd_write_file_at(AT_FDCWD, "/proc/self/setgroups", "deny", 0, 0) < 0 && errno != ENOENT)
				_exit(errno);
			if (isd_write_file_at(AT_FDCWD, "/proc/self/uid_map", map, 0, 0) < 0)
				_exit(errno);
			snprintf(map, sizeof(map), "%u %u 1", gid, gid);
			if (isd_write_file_at(AT_FDCWD, "/proc/self/gid_map", map, 0, 0) < 0)
				_exit(errno);
		}
		if (flags & CLONE_NEWPID) {
			/* procfs shows the namespace of the mounting task's
			 * children: mount from inside. */
			pid_t inner = fork();
			if (inner < 0)
				_exit(errno);
			if (inner > 0) {
				int st;
				waitpid(inner, &st, 0);
				_exit(WIFEXITED(st) ? WEXITSTATUS(st) : EIO);
			}
		}
		_exit(fn ? fn(arg) : 0);
	}
	if (waitpid(pid, &status, 0) < 0)
		return errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
}

static int mount_overlay(void *arg)
{
	char dir[] = "/tmp/isd-doctor-XXXXXX", opts[256];

	(void)arg;
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 || mount("none", "/tmp", "tmpfs", 0, NULL) < 0)
		return errno;
	if (!mkdtemp(dir))
		return errno;
	snprintf(opts, sizeof(opts), "lowerdir=%s/l,upperdir=%s/u,workdir=%s/w,userxattr", dir, dir, dir);
	for (const char *sub = "luwm"; *sub; sub++) {
		char p[300];
		snprintf(p, sizeof(p), "%s/%c", dir, *sub);
		if (mkdir(p, 0700) < 0)
			return errno;
	}
	{
		char target[300];
		snprintf(target, sizeof(target), "%s/m", dir);
		if (mount("overlay", target, "overlay", 0, opts) < 0)
			return errno;
	}
	return 0;
}

/* The fix for AppArmor's userns restriction: load the profile the package
 * installed, or install the copy `meson install` left in the prefix (with
 * this isd's path in it); AppArmor attaches profiles by path, so a build
 * tree's isd needs the sysctl. */
static void apparmor_fix(char *fix, size_t size)
{
	static const char etc[] = "/etc/apparmor.d/isd";

	if (isd_running_uninstalled())
		snprintf(fix, size, "AppArmor profiles attach by path: install isd (meson install, then its %s), or sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
			 ISD_APPARMOR_PROFILE);
	else if (access(etc, F_OK) == 0)
		snprintf(fix, size, "load the installed profile: sudo apparmor_parser -r %s", etc);
	else
		snprintf(fix, size, "sudo install -m 0644 %s %s && sudo apparmor_parser -r %s", ISD_APPARMOR_PROFILE, etc, etc);
}

static void check_userns(struct report *r)
{
	struct check *c = add(r, "user namespaces", true);
	long max = read_long("/proc/sys/user/max_user_namespaces", -1);
	long deb = read_long("/proc/sys/kernel/unprivileged_userns_clone", -1);
	long apparmor = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", -1);
	int e = r->probe.userns;

	if (e == 0) {
		set(c, OK, "the sandbox's namespaces work, with your id mapped and a tmpfs mounted (max %ld)", max);
		return;
	}
	set(c, FAIL, "%s failed: %s", r->probe.userns_step, strerror(e));
	if (max == 0)
		snprintf(c->fix, sizeof(c->fix), "sysctl -w user.max_user_namespaces=15000 (and in /etc/sysctl.d/)");
	else if (deb == 0)
		snprintf(c->fix, sizeof(c->fix), "sysctl -w kernel.unprivileged_userns_clone=1 (Debian)");
	else if (apparmor == 1)
		apparmor_fix(c->fix, sizeof(c->fix));
	else
		snprintf(c->fix, sizeof(c->fix), "isd may run inside a container whose seccomp profile forbids namespaces: "
			 "docker/podman --security-opt seccomp=unconfined, or isd exec --isolation auto (see the tiers below)");
}

static void check_apparmor(struct report *r)
{
	long restrict_ns = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", -1);
	struct check *c;
	_cleanup_free_ char *profiles = NULL;

	if (restrict_ns < 0)
		return;
	c = add(r, "AppArmor userns restriction", false);
	if (restrict_ns == 0) {
		set(c, OK, "kernel.apparmor_restrict_unprivileged_userns=0");
		return;
	}
	if (isd_read_file_at(AT_FDCWD, "/sys/kernel/security/apparmor/profiles", &profiles, NULL) == 0 &&
	    strstr(profiles, "isd "))
		set(c, OK, "restricted, and an AppArmor profile for isd is loaded");
	else {
		set(c, WARN, "restricted, and no AppArmor profile for isd is loaded");
		apparmor_fix(c->fix, sizeof(c->fix));
	}
}

static void check_kernel(struct report *r)
{
	struct check *c = add(r, "kernel", true);
	struct utsname u;
	struct mount_attr attr = {0};

	uname(&u);
	/* mount_setattr with a bad fd: EBADF means the call exists. */
	if (isd_mount_setattr(-1, "", AT_EMPTY_PATH, &attr) < 0 && errno == ENOSYS) {
		set(c, FAIL, "Linux %s lacks mount_setattr (needs 5.12 or newer)", u.release);
		snprintf(c->fix, sizeof(c->fix), "upgrade the kernel to 5.12 or newer");
	} else {
		set(c, OK, "Linux %s (new mount API, openat2, clone3)", u.release);
	}
}

static void check_proc(struct report *r)
{
	struct check *c = add(r, "fresh /proc", true);
	int e = r->probe.proc;

	if (r->probe.userns) {
		set(c, FAIL, "not tried: the namespaces are refused");
		return;
	}
	if (e == 0) {
		set(c, OK, "a new pid namespace can mount its own procfs");
	} else {
		set(c, FAIL, "mounting procfs in a new pid namespace failed: %s (masked /proc of an outer container?)", strerror(e));
		snprintf(c->fix, sizeof(c->fix), "run the outer container with an unmasked /proc (--security-opt systempaths=unconfined), or use isd exec --pid=host");
	}
}

static void check_seccomp(struct report *r)
{
	struct check *c = add(r, "seccomp", true);
	struct isd_seccomp_program prog = {0};
	const struct scmp_version *v = seccomp_version();

	if (isd_seccomp_prepare("default", &prog) < 0) {
		set(c, FAIL, "the default profile does not load: %s", isd_error_message());
		snprintf(c->fix, sizeof(c->fix), "reinstall isd (its seccomp-profiles directory is missing or damaged)");
		isd_error_clear();
		return;
	}
	set(c, OK, "default profile ready (%u instructions%s), libseccomp %u.%u.%u", prog.len,
	    prog.from_cache ? ", cached" : "", v->major, v->minor, v->micro);
	isd_seccomp_program_free(&prog);
}

static void check_landlock(struct report *r)
{
	struct check *c = add(r, "Landlock", false);
	int abi = isd_landlock_abi();

	if (abi >= ISD_LANDLOCK_MIN_ABI) {
		set(c, OK, "ABI %d: the payload's writes outside the writable mounts are refused, behind the mount layer", abi);
		return;
	}
	if (abi > 0)
		set(c, WARN, "ABI %d cannot rename across directories; isd needs ABI %d (Linux 5.19) and runs without it", abi,
		    ISD_LANDLOCK_MIN_ABI);
	else
		set(c, WARN, "not available (%s); isd runs without it: the mount layer alone keeps writes inside the writable mounts",
		    strerror(errno));
	snprintf(c->fix, sizeof(c->fix), "a kernel with CONFIG_SECURITY_LANDLOCK and landlock in its lsm= list");
}

/* The limits the agent profile sets (memory, cpu, pids), planned by the
 * runtime's own cgroup code exactly as isd exec would, nothing created. */
static void check_cgroup(struct report *r)
{
	struct check *c = add(r, "cgroup v2 limits", true);
	struct isd_cgroup_diagnosis d;
	char have[64];
	static const char *const place_name[] = {"nowhere", "below isd's own cgroup", "below isd's own cgroup (isd moves into a leaf)",
						 "beside isd's own cgroup"};

	if (isd_cgroup_diagnose(ISD_CG_MEMORY | ISD_CG_CPU | ISD_CG_PIDS, &d) == 0) {
		isd_cgroup_controllers_string(d.available, have, sizeof(have), "");
		set(c, OK, "delegated: sandboxes go %s (%s), controllers: %s", place_name[d.place], d.base, have);
		return;
	}
	/* The agent profile's limits are defaults: it runs, with one note;
	 * only an explicit --memory/--cpus/--pids-limit is refused. */
	set(c, WARN, "the agent profile's default limits are not enforced here, an explicit one is refused: %s", d.why);
	if (!d.hierarchy)
		snprintf(c->fix, sizeof(c->fix), "%s", isd_cgroup_hierarchy_fix());
}

static void check_storage(struct report *r)
{
	struct check *c = add(r, "disk limits (--storage-opt)", false);
	int level = isd_storage_diagnose(c->detail, sizeof(c->detail), c->fix, sizeof(c->fix));

	c->level = level == 0 ? OK : level == 1 ? WARN : FAIL;
}

static void check_idmap(struct report *r)
{
	struct check *c = add(r, "subordinate ids", false);
	struct passwd *pw = getpwuid(getuid());
	char path[512];
	bool newuidmap =
		isd_find_program("newuidmap", path, sizeof(path)) && isd_find_program("newgidmap", path, sizeof(path));
	_cleanup_free_ char *subuid = NULL;
	bool has_range = false;

	if (pw && isd_read_file_at(AT_FDCWD, "/etc/subuid", &subuid, NULL) == 0) {
		char prefix[300], idprefix[32];
		snprintf(prefix, sizeof(prefix), "\n%s:", pw->pw_name);
		snprintf(idprefix, sizeof(idprefix), "\n%u:", getuid());
		_cleanup_free_ char *text = isd_xasprintf("\n%s", subuid);
		has_range = strstr(text, prefix) || strstr(text, idprefix);
	}
	if (newuidmap && has_range)
		set(c, OK, "newuidmap/newgidmap installed and /etc/subuid has a range for %s", pw ? pw->pw_name : "you");
	else {
		set(c, WARN, "%s%s (needed by isd build for package installs)", newuidmap ? "" : "newuidmap/newgidmap missing; ",
		    has_range ? "" : "no /etc/subuid range for you");
		snprintf(c->fix, sizeof(c->fix), "%s%s", newuidmap ? "" : "install uidmap (Debian) / shadow-utils (Fedora); ",
			 has_range ? "" : "sudo usermod --add-subuids 100000-165535 --add-subgids 100000-165535 $USER");
	}
}

static void check_network_helpers(struct report *r)
{
	struct check *c = add(r, "--network private", false);
	char path[512];

	if (isd_find_program("pasta", path, sizeof(path)))
		set(c, OK, "pasta at %s", path);
	else if (isd_find_program("slirp4netns", path, sizeof(path)))
		set(c, OK, "slirp4netns at %s", path);
	else {
		set(c, WARN, "neither pasta nor slirp4netns installed (netless and none work without them)");
		snprintf(c->fix, sizeof(c->fix), "install passt (pasta) or slirp4netns");
	}
}

/* The cow workspace (the agent profile's default): the kernel must allow
 * an overlay in a user namespace, and the sessions' upper layers must live
 * on a file system overlayfs writes to. */
static void check_overlay(struct report *r)
{
	struct check *c = add(r, "overlayfs in a user namespace (cow workspace)", true);
	int e = try_in_child(CLONE_NEWUSER | CLONE_NEWNS, mount_overlay, NULL);
	_cleanup_free_ char *root = isd_session_root();
	struct statfs sfs;

	if (e != 0) {
		set(c, FAIL, "not available (%s)", strerror(e));
		snprintf(c->fix, sizeof(c->fix), "Linux 5.11 or newer; until then use --workspace DIR:rw");
		return;
	}
	/* The sessions directory may not exist yet: its nearest ancestor
	 * decides the file system. */
	for (char *slash; statfs(root, &sfs) < 0 && (slash = strrchr(root, '/')) && slash != root;)
		*slash = '\0';
	if (sfs.f_type == OVERLAYFS_SUPER_MAGIC) {
		set(c, FAIL, "%s is on an overlay, which cannot hold an overlay's upper layer", root);
		snprintf(c->fix, sizeof(c->fix), "set XDG_STATE_HOME to a directory on ext4, xfs, btrfs or tmpfs (or use --workspace DIR:rw)");
		return;
	}
	set(c, OK, "available; sessions under %s", root);
}

/* Which tiers this host allows, from the same probe auto decides by, and
 * the tier the agent profile gets, resolved exactly as isd exec would. */
static void check_tiers(struct report *r)
{
	struct check *full = add(r, "isolation tier full", false), *ll = add(r, "isolation tier landlock", false);
	struct check *agent = add(r, "isolation of the agent profile", true);
	const struct isd_isolation_probe *p = &r->probe;
	int abi = p->landlock_abi;
	struct isd_caller caller;
	struct isd_spec spec;
	char *argv[] = {"exec", "--profile", "agent", "--agent", "omp", "--", "true", NULL};
	bool full_refused = false;

	if (isd_isolation_full_works(p, false))
		set(full, OK, "namespaces and a fresh /proc work");
	else if (p->userns == 0)
		set(full, WARN, "namespaces work, a fresh /proc does not (%s): only with --pid host, which --isolation auto takes",
		    strerror(p->proc));
	else
		set(full, FAIL, "%s was refused: %s", p->userns_step, strerror(p->userns));
	if (abi >= ISD_LANDLOCK_NET_ABI)
		set(ll, OK, "Landlock ABI %d: files, TCP%s; netless %s", abi,
		    abi >= ISD_LANDLOCK_SCOPE_ABI ? ", signal and abstract-socket scoping"
						  : "; signals and abstract sockets are not scoped (ABI 6)",
		    isd_connect_guard_possible() == 0 ? "to the relay only (isd connects the payload's sockets)"
						      : "to the relay only (isd is refused pidfd_getfd: a socket of "
							"its own replaces the payload's, whose options are lost)");
	else if (abi >= ISD_LANDLOCK_MIN_ABI)
		set(ll, WARN, "Landlock ABI %d: files only, so --network host only (TCP rules need ABI 4)", abi);
	else
		set(ll, FAIL, "Landlock ABI %d: the tier needs ABI %d", abi, ISD_LANDLOCK_MIN_ABI);

	r->agent_tier = -1;
	isd_caller_from_process(&caller);
	isd_spec_init(&spec);
	if (isd_cli_parse_exec(7, argv, &caller, &spec) == 0 && isd_spec_validate(&spec) == 0 &&
	    isd_isolation_resolve(&spec, p) == 0) {
		r->agent_tier = spec.tier;
		r->agent_pid_host = spec.isolation_pid_host;
		full_refused = spec.tier == ISD_ISOLATION_FULL && !isd_isolation_full_works_for(&spec, p);
		if (full_refused) {
			char why[300];
			isd_isolation_refusal(&spec, p, why, sizeof(why));
			set(agent, FAIL, "--isolation %s: the full tier, which this host refuses: %s",
			    isd_isolation_name(spec.isolation), why);
		} else {
			set(agent, OK, "--isolation %s: the %s tier%s (%s)", isd_isolation_name(spec.isolation),
			    isd_isolation_name(spec.tier), spec.isolation_pid_host ? " without a pid namespace" : "",
			    spec.isolation_why);
		}
	} else {
		set(agent, FAIL, "%s", isd_error_message());
		isd_error_clear();
	}
	if (full_refused && p->userns == 0 && !p->proc)
		snprintf(agent->fix, sizeof(agent->fix), "--isolation auto in your agent profile (isd profile edit agent), "
			 "or run isd as a user in the container (docker/podman --user 1000, Kubernetes runAsUser: 1000)");
	else if (full_refused)
		snprintf(agent->fix, sizeof(agent->fix), "--isolation auto in your agent profile (isd profile edit agent), "
			 "or give the outer container namespaces: docker/podman --security-opt seccomp=unconfined "
			 "--security-opt systempaths=unconfined (Kubernetes: securityContext.seccompProfile.type: Unconfined, "
			 "procMount: Unmasked)");
	isd_spec_free(&spec);
}

static void check_images(struct report *r)
{
	struct check *c = add(r, "image store", false);
	_cleanup_free_ char *dir = isd_store_dir();
	struct stat st;

	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		set(c, OK, "%s", dir);
	else
		set(c, OK, "%s does not exist yet; the built-in image 'host' needs none", dir);
}

static const char *level_name(enum level l)
{
	return l == OK ? "ok" : l == WARN ? "warn" : "FAIL";
}

static void doctor_usage(FILE *out)
{
	fputs("Usage: isd doctor [--json]\n\n"
	      "Check what this host allows isd to do, with a fix for each problem.\n"
	      "Exit status 0 when the agent profile can work here, 1 when it cannot.\n",
	      out);
}

int isd_doctor_main(int argc, char **argv)
{
	struct report r = {.n = 0};
	static const struct isd_cli_flag flags[] = {{"--json", 0, false, 1}, {0}};
	static const struct isd_cli_command cmd = {"doctor", doctor_usage, flags, 0};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);
	bool json = false;
	bool agent_ok = true;
	int width = 5;

	while (isd_cli_next(&a))
		json = true;
	if (a.exit >= 0)
		return a.exit;
	isd_isolation_probe(&r.probe);
	check_kernel(&r);
	check_userns(&r);
	check_apparmor(&r);
	check_proc(&r);
	check_seccomp(&r);
	check_cgroup(&r);
	check_storage(&r);
	check_landlock(&r);
	check_idmap(&r);
	check_network_helpers(&r);
	check_overlay(&r);
	check_tiers(&r);
	check_images(&r);
	for (size_t i = 0; i < r.n; i++) {
		const char *n = r.checks[i].name;
		/* What the agent profile's tier does not use cannot keep it
		 * from working. */
		if (r.agent_tier == ISD_ISOLATION_LANDLOCK && (!strcmp(n, "user namespaces") || !strcmp(n, "fresh /proc") ||
							      !strncmp(n, "overlayfs", 9)))
			continue;
		if (r.agent_pid_host && !strcmp(n, "fresh /proc"))
			continue;
		if (r.checks[i].needed_by_agent && r.checks[i].level == FAIL)
			agent_ok = false;
	}

	if (json) {
		json_object *root = json_object_new_object(), *arr = json_object_new_array();
		for (size_t i = 0; i < r.n; i++) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "check", json_object_new_string(r.checks[i].name));
			json_object_object_add(o, "status", json_object_new_string(level_name(r.checks[i].level)));
			json_object_object_add(o, "detail", json_object_new_string(r.checks[i].detail));
			if (r.checks[i].fix[0])
				json_object_object_add(o, "fix", json_object_new_string(r.checks[i].fix));
			json_object_object_add(o, "needed_by_agent_profile", json_object_new_boolean(r.checks[i].needed_by_agent));
			json_object_array_add(arr, o);
		}
		json_object_object_add(root, "checks", arr);
		json_object_object_add(root, "agent_profile_ready", json_object_new_boolean(agent_ok));
		puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	} else {
		for (size_t i = 0; i < r.n; i++)
			if ((int)strlen(r.checks[i].name) > width)
				width = (int)strlen(r.checks[i].name);
		printf("%-*s %-5s %s\n", width, "CHECK", "", "DETAIL");
		for (size_t i = 0; i < r.n; i++) {
			printf("%-*s %-5s %s\n", width, r.checks[i].name, level_name(r.checks[i].level), r.checks[i].detail);
			if (r.checks[i].fix[0])
				printf("%-*s %-5s fix: %s\n", width, "", "", r.checks[i].fix);
		}
		bool warned = false;
		for (size_t i = 0; i < r.n; i++)
			warned |= r.checks[i].needed_by_agent && r.checks[i].level == WARN;
		printf("\n%s\n", !agent_ok ? "isd exec --profile agent cannot work fully here (see FAIL above)."
				   : warned ? "isd exec --profile agent works here, with the warnings above."
					    : "isd exec --profile agent can work fully here.");
	}
	return agent_ok ? 0 : 1;
}
