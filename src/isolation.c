/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Isolation tiers (include/isd/isolation.h): which one a sandbox gets, and
 * the probes that decide it.  The probes run the full tier's first steps
 * for real (the namespaces clone3 asks for, the caller's id mapped, a
 * tmpfs and a procfs from the new mount API) in a throw-away child, so
 * that auto and `isd doctor` never call possible what `isd exec` then
 * fails on.
 */
#define _GNU_SOURCE
#include "isolation.h"
#include "landlock.h"
#include "mount-fs.h"
#include "sandbox-landlock.h"
#include "isd/spec.h"
#include "isd/syscalls.h"
#include "isd/util.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

const char *isd_isolation_name(enum isd_isolation tier)
{
	switch (tier) {
	case ISD_ISOLATION_AUTO:
		return "auto";
	case ISD_ISOLATION_LANDLOCK:
		return "landlock";
	default:
		return "full";
	}
}

int isd_isolation_parse(const char *arg, enum isd_isolation *out)
{
	if (!strcmp(arg, "full"))
		*out = ISD_ISOLATION_FULL;
	else if (!strcmp(arg, "auto"))
		*out = ISD_ISOLATION_AUTO;
	else if (!strcmp(arg, "landlock"))
		*out = ISD_ISOLATION_LANDLOCK;
	else
		return isd_error(0, "--isolation %s: unknown tier (known: full, auto, landlock)", arg);
	return 0;
}

/* Steps of the userns probe, by the exit code of the child. */
static const char *const userns_steps[] = {
	"", "creating the namespaces", "writing the id maps", "mounting a tmpfs in them",
};

static int write_map(const char *file, unsigned id)
{
	char map[64];

	snprintf(map, sizeof(map), "%u %u 1", id, id);
	return isd_write_file_at(AT_FDCWD, file, map, 0, 0);
}

/* In the child: 0, or step << 8 | errno. */
static int probe_child(bool proc)
{
	unsigned uid = getuid(), gid = getgid();
	int fd, r;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET | CLONE_NEWPID) < 0)
		return 1 << 8 | errno;
	r = isd_write_file_at(AT_FDCWD, "/proc/self/setgroups", "deny", 0, 0);
	if ((r < 0 && r != -ENOENT) || (r = write_map("/proc/self/uid_map", uid)) < 0 ||
	    (r = write_map("/proc/self/gid_map", gid)) < 0)
		return 2 << 8 | -r;
	fd = isd_mount_new_tmpfs(1 << 20, 0700, NULL, NULL, 0, "a probe");
	if (fd < 0)
		return 3 << 8 | -fd;
	close(fd);
	if (!proc)
		return 0;
	/* procfs shows the pid namespace of the mounting task's children's
	 * namespace: mount from its first process. */
	{
		pid_t inner = fork();
		int st;

		if (inner < 0)
			return 4 << 8 | errno;
		if (inner == 0) {
			fd = isd_mount_new_fs("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, "/proc");
			_exit(fd < 0 ? -fd : 0);
		}
		if (waitpid(inner, &st, 0) < 0)
			return 4 << 8 | errno;
		return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 4 << 8 | (WIFEXITED(st) ? WEXITSTATUS(st) : EIO);
	}
}

/* The exit status carries 8 bits only: the child writes its full answer
 * into a pipe. */
static int probe(bool proc)
{
	int p[2], answer = 0, status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return 1 << 8 | errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return 1 << 8 | errno;
	}
	if (pid == 0) {
		int a;
		close(p[0]);
		a = probe_child(proc);
		(void)!write(p[1], &a, sizeof(a));
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &answer, sizeof(answer)) != sizeof(answer))
		answer = 1 << 8 | EIO;
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return answer;
}

void isd_isolation_probe(struct isd_isolation_probe *p)
{
	int a = probe(true);
	int step = a >> 8;

	memset(p, 0, sizeof(*p));
	p->landlock_abi = isd_landlock_abi();
	/* Cloning needs CAP_SYS_ADMIN over this mount namespace, which a
	 * container's root lacks (Docker's and podman's default
	 * capabilities): the clone is detached and goes with its fd. */
	if (geteuid() == 0) {
		int fd = isd_open_tree(AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (fd < 0)
			p->root_clone = errno;
		else
			close(fd);
	}
	if (step >= 1 && step <= 3) {
		p->userns = a & 0xff;
		p->userns_step = userns_steps[step];
		p->proc = p->userns;
	} else {
		p->userns_step = "";
		p->proc = a & 0xff;
	}
}

bool isd_isolation_full_works(const struct isd_isolation_probe *p, bool pid_host)
{
	return p->userns == 0 && (pid_host || p->proc == 0);
}

static bool needs_root_clones(const struct isd_spec *spec)
{
	if (!spec->idmapped)
		return false;
	if (spec->rootfs)
		return true;
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		if (m->type == ISD_MOUNT_OVERLAY || m->agent_state || (m->type == ISD_MOUNT_BIND && !m->rebind))
			return true;
	}
	return false;
}

static bool root_clones_refused(const struct isd_spec *spec, const struct isd_isolation_probe *p)
{
	return p->root_clone && needs_root_clones(spec);
}

bool isd_isolation_full_works_for(const struct isd_spec *spec, const struct isd_isolation_probe *p)
{
	return isd_isolation_full_works(p, spec->pid_host) && !root_clones_refused(spec, p);
}

const char *isd_isolation_landlock_lacks(const struct isd_spec *spec)
{
	(void)spec;
	return "every namespace: this system's own files (read-only, $HOME hidden) instead of an image, "
	       "a private TMPDIR but no private /tmp, the container's processes and SysV IPC visible "
	       "(Landlock scopes ptrace, signals and abstract sockets), the cow workspace a copy at another path, "
	       "and --network netless's DNS stub (its TCP goes to the relay only, isd making the connects)";
}

void isd_isolation_refusal(const struct isd_spec *spec, const struct isd_isolation_probe *p, char *buf, size_t len)
{
	int n = 0;

	if (p->userns) {
		snprintf(buf, len, "%s was refused (%s)", p->userns_step, strerror(p->userns));
		return;
	}
	buf[0] = '\0';
	if (p->proc && !spec->pid_host)
		n = snprintf(buf, len, "a fresh /proc was refused (%s: a masked /proc)", strerror(p->proc));
	if (root_clones_refused(spec, p) && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%sas root, cloning the binds for idmapped mounts was refused "
			 "(%s: no CAP_SYS_ADMIN, as for a container's root)", n ? "; " : "", strerror(p->root_clone));
}

static int validate_origin(const struct isd_spec *spec)
{
	const char *o = isd_spec_get_origin(spec, "isolation");
	const char *ws = spec->workspace.path;
	size_t n;

	if (spec->isolation == ISD_ISOLATION_FULL || !o || strncmp(o, "profile ", 8) || !ws)
		return 0;
	/* "profile FILE:LINE": a file inside the project is the project's
	 * to write, and a project must not choose a weaker sandbox for
	 * itself. */
	o += 8;
	n = strlen(ws);
	if (!strncmp(o, ws, n) && o[n] == '/')
		return isd_error(0, "--isolation %s from %s: a file inside the project may not weaken its sandbox; "
				    "give it on the command line or in a profile of yours (~/.config/isd/profiles)",
				 isd_isolation_name(spec->isolation), isd_spec_get_origin(spec, "isolation"));
	return 0;
}

/* auto: the strongest tier the probe allows.  A masked /proc (plain
 * podman) keeps every namespace but the pid one, with the outer /proc
 * read-only (--pid host), which Landlock makes safe enough: the payload
 * can neither trace nor (ABI 6) signal a process outside its domain. */
static int decide_auto(struct isd_spec *spec, const struct isd_isolation_probe *p, char *why, size_t len)
{
	char refused[300];
	int r;

	if (isd_isolation_full_works_for(spec, p)) {
		spec->tier = ISD_ISOLATION_FULL;
		snprintf(why, len, "--isolation auto: this host allows the namespaces and a fresh /proc");
		return 0;
	}
	isd_isolation_refusal(spec, p, refused, sizeof(refused));
	if (p->userns == 0 && !root_clones_refused(spec, p) && !spec->landlock_off && p->landlock_abi >= ISD_LANDLOCK_MIN_ABI) {
		spec->tier = ISD_ISOLATION_FULL;
		spec->pid_host = true;
		spec->isolation_pid_host = true;
		snprintf(why, len, "--isolation auto: %s", refused);
		return 0;
	}
	r = isd_sandbox_landlock_check(spec, p->landlock_abi);
	if (r < 0) {
		_cleanup_free_ char *cause = isd_xstrdup(isd_error_message());
		return isd_error(-EPERM, "--isolation auto: the full tier cannot work here (%s), and the landlock tier cannot give this sandbox: %s",
				 refused, cause);
	}
	spec->tier = ISD_ISOLATION_LANDLOCK;
	snprintf(why, len, "--isolation auto: %s", refused);
	return 0;
}

int isd_isolation_resolve(struct isd_spec *spec, const struct isd_isolation_probe *given)
{
	struct isd_isolation_probe local;
	char why[400];
	int r = validate_origin(spec);

	if (r < 0)
		return r;
	free(spec->isolation_why);
	spec->isolation_why = NULL;
	switch (spec->isolation) {
	case ISD_ISOLATION_FULL:
		spec->tier = ISD_ISOLATION_FULL;
		snprintf(why, sizeof(why), "%s", isd_spec_get_origin(spec, "isolation") ? "--isolation full" : "the default");
		break;
	case ISD_ISOLATION_LANDLOCK:
		r = isd_sandbox_landlock_check(spec, isd_landlock_abi());
		if (r < 0)
			return r;
		spec->tier = ISD_ISOLATION_LANDLOCK;
		snprintf(why, sizeof(why), "--isolation landlock");
		break;
	default:
		if (!given) {
			isd_isolation_probe(&local);
			given = &local;
		}
		r = decide_auto(spec, given, why, sizeof(why));
		if (r < 0)
			return r;
	}
	spec->isolation_why = isd_xstrdup(why);
	return 0;
}

const char *isd_isolation_lacks(const struct isd_spec *spec)
{
	if (spec->tier == ISD_ISOLATION_LANDLOCK)
		return isd_isolation_landlock_lacks(spec);
	if (spec->isolation_pid_host)
		return "a pid namespace: the container's /proc is bound read-only and its processes are visible "
		       "(Landlock keeps ptrace and, from ABI 6, signals inside the sandbox)";
	return NULL;
}

void isd_isolation_note(const struct isd_spec *spec)
{
	const char *lacks = isd_isolation_lacks(spec);

	if (spec->isolation != ISD_ISOLATION_AUTO || !lacks)
		return;
	fprintf(stderr, "isd: note: %s; isd takes the %s tier%s, which lacks %s\n", spec->isolation_why,
		spec->tier == ISD_ISOLATION_LANDLOCK ? "landlock" : "full",
		spec->isolation_pid_host ? " without a pid namespace (--pid host)" : "", lacks);
}

json_object *isd_isolation_to_json(const struct isd_spec *spec)
{
	json_object *o = json_object_new_object();
	const char *lacks = isd_isolation_lacks(spec);

	json_object_object_add(o, "requested", json_object_new_string(isd_isolation_name(spec->isolation)));
	json_object_object_add(o, "tier", json_object_new_string(isd_isolation_name(spec->tier)));
	if (spec->isolation_pid_host)
		json_object_object_add(o, "pid_namespace", json_object_new_boolean(false));
	json_object_object_add(o, "why", spec->isolation_why ? json_object_new_string(spec->isolation_why) : NULL);
	if (lacks)
		json_object_object_add(o, "lacks", json_object_new_string(lacks));
	if (spec->tier == ISD_ISOLATION_LANDLOCK)
		json_object_object_add(o, "landlock_tier", isd_sandbox_landlock_json(spec));
	return o;
}

void isd_isolation_hint_auto(void)
{
	int abi = isd_landlock_abi();

	if (abi >= ISD_LANDLOCK_MIN_ABI)
		isd_error_hint("or isd exec --isolation auto, which here takes the landlock tier: no namespaces, "
			       "this system's files read-only with $HOME hidden, the cow workspace a copy");
}
