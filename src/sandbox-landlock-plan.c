/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the landlock tier (include/isd/sandbox-landlock.h) gives a spec:
 * whether it can at all, its Landlock rules and its socket filter.
 *
 * Landlock rules only add rights beneath a directory, so "everything but
 * the home directory" is said by enumeration: every entry of / is
 * readable except those on the way to a hidden path, into which the
 * enumeration descends, leaving out the hidden path itself.  The same
 * hides the masked files of a read-only workspace.
 */
#define _GNU_SOURCE
#include "sandbox-landlock-internal.h"
#include "command.h"
#include "device.h"
#include "guard.h"
#include "sandbox-landlock.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/landlock.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define WRITE_ALL ISD_LANDLOCK_ALL
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
/* A granted device: read and ioctl (a GPU is driven by it) */
#define DEVICE_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define MAX_DEPTH 16
/* One argument comparison with every field set: libseccomp's SCMP_An
 * macros leave datum_b out, which clang -Wextra refuses. */
#define CMP(n, cmp, a, b) ((struct scmp_arg_cmp){.arg = (n), .op = (cmp), .datum_a = (a), .datum_b = (b)})

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

char *isd_tier_home_path(const struct isd_spec *spec, const struct isd_tier_dirs *dirs, const char *dst)
{
	const char *home = isd_spec_getenv(spec, "HOME");
	size_t n;

	if (!home || home[0] != '/' || !home[1] || !under(dst, home))
		return NULL;
	n = strlen(home);
	return isd_xasprintf("%s%s", dirs && dirs->home ? dirs->home : "<HOME>", dst + n);
}

char *isd_tier_workspace_path(const struct isd_spec *spec, const struct isd_tier_dirs *dirs, const char *path)
{
	const char *ws = spec->workspace.path;

	if (!path || !dirs || !dirs->copy || !ws || !under(path, ws))
		return path ? isd_xstrdup(path) : NULL;
	return isd_xasprintf("%s%s", dirs->copy, path + strlen(ws));
}

bool isd_tier_tmp_destination(const char *dst)
{
	return !strcmp(dst, "/tmp") || !strcmp(dst, "/var/tmp") || !strcmp(dst, "/run");
}

/* Paths the enumeration leaves out, literal and resolved (a home behind
 * a symlink is hidden by its real path, which is what Landlock sees). */
static void hide(char ***hidden, const char *path)
{
	char real[PATH_MAX];

	if (!path || path[0] != '/' || !path[1])
		return;
	isd_strv_push(hidden, isd_xstrdup(path));
	if (realpath(path, real) && strcmp(real, path) && strcmp(real, "/"))
		isd_strv_push(hidden, isd_xstrdup(real));
}

/* Every entry of dir readable (access), but the hidden ones; into those
 * on the way to one it descends.  Symlinks get no rule: Landlock sees
 * where they lead, which has its own. */
static void grant_except(struct isd_landlock_plan *plan, const char *dir, char **hidden, uint64_t access,
			 const char *why, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		_cleanup_free_ char *child = NULL;
		bool skip = false, descend = false;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		child = !strcmp(dir, "/") ? isd_xasprintf("/%s", de->d_name) : isd_xasprintf("%s/%s", dir, de->d_name);
		if (lstat(child, &st) < 0 || S_ISLNK(st.st_mode))
			continue;
		for (size_t i = 0; hidden && hidden[i]; i++) {
			if (under(child, hidden[i]))
				skip = true;
			else if (under(hidden[i], child))
				descend = true;
		}
		if (skip)
			continue;
		if (descend && S_ISDIR(st.st_mode) && depth < MAX_DEPTH)
			grant_except(plan, child, hidden, access, why, depth + 1);
		else if (!descend)
			isd_landlock_plan_add(plan, child, access, why);
	}
	closedir(d);
}

static const struct isd_mount *tmp_mount(const struct isd_spec *spec)
{
	ssize_t i = isd_spec_find_mount(spec, "/tmp");
	return i >= 0 && spec->mounts[i].type == ISD_MOUNT_TMPFS ? &spec->mounts[i] : NULL;
}

static const char *const dev_nodes[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					"/dev/urandom", "/dev/tty", "/dev/ptmx", NULL};

bool isd_tier_forward_is_loopback(const struct isd_forward *f)
{
	return f->sandbox_port == f->host_port && !strcmp(f->host, "127.0.0.1");
}

void isd_tier_plan(const struct isd_spec *spec, const struct isd_tier_dirs *dirs, uint16_t port,
		   struct isd_landlock_plan *plan)
{
	_cleanup_strv_ char **hidden = NULL, **guarded = NULL, **guarded_what = NULL;
	const char *home = isd_spec_getenv(spec, "HOME"), *caller_home = getenv("HOME");
	const struct isd_mount *tmp = tmp_mount(spec);
	const char *ws = spec->workspace.path;

	memset(plan, 0, sizeof(*plan));
	plan->enabled = true;
	plan->handle_read = true;
	plan->handle_tcp = spec->network != ISD_NET_HOST;
	/* The relay's port, which names no address: where isd's connect
	 * guard (src/connect-guard.c) is installed, the child drops it and
	 * Landlock refuses every TCP connect of the payload's own. */
	plan->connect_port = spec->network == ISD_NET_NETLESS ? port : 0;
	for (size_t i = 0; spec->network == ISD_NET_NETLESS && i < spec->net.n_forwards; i++)
		if (isd_tier_forward_is_loopback(&spec->net.forwards[i]) && plan->n_forward_ports < ISD_TIER_MAX_FORWARDS)
			plan->forward_ports[plan->n_forward_ports++] = spec->net.forwards[i].sandbox_port;
	plan->scope_signals = plan->scope_abstract = true;

	hide(&hidden, home);
	if (caller_home && (!home || strcmp(home, caller_home)))
		hide(&hidden, caller_home);
	/* The workspace has rules of its own (masks, a copy), which a rule
	 * for a directory above it would override. */
	hide(&hidden, ws);
	hide(&hidden, "/tmp");
	hide(&hidden, "/var/tmp");
	hide(&hidden, "/run");
	hide(&hidden, "/dev");
	guarded = isd_guard_dirs(&guarded_what);
	for (size_t i = 0; guarded && guarded[i]; i++)
		hide(&hidden, guarded[i]);
	grant_except(plan, "/", hidden, ISD_LANDLOCK_READ, "read-only: this system", 0);

	isd_landlock_plan_add(plan, "/dev", LANDLOCK_ACCESS_FS_READ_DIR, "listing /dev");
	for (size_t i = 0; dev_nodes[i]; i++)
		if (isd_device_readonly_node(spec, dev_nodes[i]))
			isd_landlock_plan_add(plan, dev_nodes[i], DEVICE_READ,
					      "device, read-only: the same node as a read-only --device");
		else
			isd_landlock_plan_add(plan, dev_nodes[i], WRITE_ALL, "device");
	/* --device: read and ioctl, write with w; at the host's own path,
	 * which isd_sandbox_landlock_check holds the spec to */
	for (size_t i = 0; i < spec->n_devices; i++)
		isd_landlock_plan_add(plan, spec->devices[i].host,
				      spec->devices[i].write ? DEVICE_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE
							     : DEVICE_READ,
				      spec->devices[i].write ? "--device" : "--device, read-only");
	isd_landlock_plan_add(plan, "/dev/shm", WRITE_ALL, "shared memory: the container's own /dev/shm, shared");

	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		_cleanup_free_ char *at = isd_tier_home_path(spec, dirs, m->destination);

		if (m->agent_state) {
			/* noexec, as the full tier's state overlays */
			const char *p = dirs && i < dirs->n_state && dirs->state[i] ? dirs->state[i] : at;
			if (p)
				isd_landlock_plan_add(plan, p, WRITE_ALL & ~LANDLOCK_ACCESS_FS_EXECUTE,
						      "the agent's state: a copy, merged (guarded) when the sandbox ends");
			continue;
		}
		/* The home's writable top level (src/agent-state.c) is not
		 * given here: in the private home a state file is a link to the
		 * store's copy, and a rename onto it would replace the link, not
		 * the copy.  Read-only, the save fails EACCES, on which agents
		 * (Claude Code) write the file in place, through the link. */
		if (m->home_top)
			continue;
		if (m->type == ISD_MOUNT_TMPFS && at) {
			isd_landlock_plan_add(plan, at, m->exec ? WRITE_ALL : WRITE_ALL & ~LANDLOCK_ACCESS_FS_EXECUTE,
					      "a tmpfs in the home directory: a private directory (no size bound)");
			continue;
		}
		if (m->type != ISD_MOUNT_BIND || m->rebind || (ws && !strcmp(m->destination, ws)))
			continue;
		isd_landlock_plan_add(plan, m->destination, m->readonly ? ISD_LANDLOCK_READ : WRITE_ALL,
				      m->readonly ? "read-only bind" : "read-write bind");
	}
	if (ws && spec->workspace.mode == ISD_WORKSPACE_COW) {
		isd_landlock_plan_add(plan, dirs && dirs->copy ? dirs->copy : "<the workspace's copy, in the session>", WRITE_ALL,
				      "the cow workspace: a copy, whose changes the session keeps");
	} else if (ws && spec->workspace.mode == ISD_WORKSPACE_RW) {
		isd_landlock_plan_add(plan, ws, WRITE_ALL, "the workspace");
	} else if (ws && spec->workspace.masked && spec->workspace.masked[0]) {
		_cleanup_strv_ char **masked = NULL;

		for (size_t i = 0; spec->workspace.masked[i]; i++) {
			_cleanup_free_ char *rel = isd_xstrdup(spec->workspace.masked[i]);
			size_t n = strlen(rel);
			if (n > 1 && rel[n - 1] == '/')
				rel[n - 1] = '\0';
			isd_strv_push(&masked, isd_xasprintf("%s/%s", ws, rel));
		}
		isd_landlock_plan_add(plan, ws, LANDLOCK_ACCESS_FS_READ_DIR, "the workspace (masked files unreadable)");
		grant_except(plan, ws, masked, ISD_LANDLOCK_READ, "the workspace, read-only", 0);
	} else if (ws) {
		isd_landlock_plan_add(plan, ws, ISD_LANDLOCK_READ, "the workspace, read-only");
	}

	isd_landlock_plan_add(plan, dirs ? dirs->tmp : "<TMPDIR: a private directory isd makes>",
			      tmp && !tmp->exec ? WRITE_ALL & ~LANDLOCK_ACCESS_FS_EXECUTE : WRITE_ALL,
			      "the private TMPDIR (instead of a tmpfs on /tmp)");
	isd_landlock_plan_add(plan, dirs ? dirs->home : "<HOME: a private directory isd makes>", ISD_LANDLOCK_READ,
			      "the private HOME: empty and read-only, with links to what is bound from the real one");
	isd_landlock_plan_add(plan, dirs ? dirs->bin : "<the command's links: a private directory isd makes>",
			      ISD_LANDLOCK_READ, "the names scripts look up (" ISD_COMMAND_LINK_DIR ")");
	/* A resolver configuration kept in a hidden /run (systemd-resolved)
	 * is what --network host needs of it. */
	if (spec->network == ISD_NET_HOST) {
		char real[PATH_MAX];
		if (realpath("/etc/resolv.conf", real))
			isd_landlock_plan_add(plan, real, LANDLOCK_ACCESS_FS_READ_FILE, "the resolver configuration");
	}
}

/* ---- whether the tier can give the spec ---- */

#define TIER "--isolation landlock"

/* Whether the caller may connect to the unix socket at path. */
static bool socket_reachable(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd, r;

	if (!path || strlen(path) >= sizeof(a.sun_path))
		return false;
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	r = r == 0 || errno == EAGAIN || errno == EINPROGRESS;
	close(fd);
	return r;
}

/* Landlock (to ABI 7) cannot rule connecting to a unix socket by its path,
 * and a container engine's socket is root on the engine's host: where one
 * answers the caller, the tier would hand it to the payload.  The engines'
 * usual places and DOCKER_HOST/CONTAINER_HOST. */
static const char *engine_socket(void)
{
	static char found[PATH_MAX];
	const char *runtime = isd_runtime_dir();
	static const char *const fixed[] = {"/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock",
					    "/run/containerd/containerd.sock", "/var/run/crio/crio.sock", NULL};
	const char *vars[] = {getenv("DOCKER_HOST"), getenv("CONTAINER_HOST")};

	for (size_t i = 0; fixed[i]; i++)
		if (socket_reachable(fixed[i]))
			return fixed[i];
	for (size_t i = 0; i < 2; i++)
		if (vars[i] && !strncmp(vars[i], "unix://", 7) && socket_reachable(vars[i] + 7)) {
			snprintf(found, sizeof(found), "%s", vars[i] + 7);
			return found;
		}
	if (runtime) {
		static const char *const rel[] = {"docker.sock", "podman/podman.sock", NULL};
		for (size_t i = 0; rel[i]; i++) {
			snprintf(found, sizeof(found), "%s/%s", runtime, rel[i]);
			if (socket_reachable(found))
				return found;
		}
	}
	return NULL;
}

int isd_sandbox_landlock_check(const struct isd_spec *spec, int abi)
{
	const struct isd_workspace *ws = &spec->workspace;
	const char *sock;

	if (abi < ISD_LANDLOCK_MIN_ABI)
		return isd_error(0, TIER ": the kernel's Landlock ABI is %d, the tier needs %d (Linux 5.19) "
					      "with landlock in the lsm= list", abi, ISD_LANDLOCK_MIN_ABI);
	if (spec->network != ISD_NET_HOST && abi < ISD_LANDLOCK_NET_ABI)
		return isd_error(0, TIER ": --network %s needs Landlock's TCP rules (ABI %d, Linux 6.7), the kernel has ABI %d",
				 isd_network_mode_name(spec->network), ISD_LANDLOCK_NET_ABI, abi);
	if (spec->landlock_off)
		return isd_error(0, TIER ": --security-opt landlock=off leaves nothing of this tier");
	if (spec->rootfs || spec->writable_root || spec->n_uid_ranges || spec->build_caps)
		return isd_error(0, TIER ": --image and --rootfs need a mount namespace; this tier runs on this system's own files");
	if (spec->uid != geteuid() || spec->gid != getegid())
		return isd_error(0, TIER ": -u %u:%u needs a user namespace; this tier runs as you (%u:%u)", spec->uid,
				 spec->gid, geteuid(), getegid());
	if (spec->network == ISD_NET_PRIVATE)
		return isd_error(0, TIER ": --network private needs a network namespace (use netless, none or host)");
	/* --forward in netless: isd's connect guard makes the payload's
	 * connects to 127.0.0.1:P, to the forward's target (or, where an
	 * outer filter has the one listener, Landlock lets the payload reach
	 * P itself when the target is 127.0.0.1:P). */
	if (spec->net.n_forwards_unix || spec->net.n_hosts || spec->net.n_publish ||
	    (spec->net.n_forwards && spec->network != ISD_NET_NETLESS))
		return isd_error(0, TIER ": --forward-unix, --add-host, --publish, and --forward but with --network netless, "
				    "need the sandbox's own loopback and /etc/hosts");
	if (spec->net.n_forwards > ISD_TIER_MAX_FORWARDS)
		return isd_error(0, TIER ": --forward: %d at most", ISD_TIER_MAX_FORWARDS);
	if ((sock = engine_socket()))
		return isd_error(0, TIER ": the container engine's socket %s answers you, and Landlock cannot keep the payload "
				    "from a unix socket by its path (that socket is root on the engine's host); use the full tier "
				    "(docker/podman --security-opt seccomp=unconfined), or run without that socket", sock);
	if (ws->path && ws->mode == ISD_WORKSPACE_COW && ws->session)
		return isd_error(0, TIER ": --session %s: re-entering a stopped session is not supported in this tier yet",
				 ws->session);
	if (ws->path && ws->mode == ISD_WORKSPACE_RW && ((ws->masked && ws->masked[0]) || (ws->git_readonly && ws->git_readonly[0])))
		return isd_error(0, TIER ": the read-only parts of the writable workspace %s (%s) cannot be kept: Landlock's "
					 "rules only add rights beneath a directory; use --workspace %s:ro, or %s with --git-writable "
					 "and --unmask",
				 ws->path, ws->masked && ws->masked[0] ? ws->masked[0] : ws->git_readonly[0], ws->path,
				 "rw");
	for (size_t i = 0; i < spec->n_devices; i++) {
		const struct isd_device *d = &spec->devices[i];
		if (strcmp(d->path, d->host) && strcmp(d->path, d->host_given))
			return isd_error(0, TIER ": --device %s:%s needs a mount namespace; this tier has no /dev of its own, "
						 "so a device is only at the host's path (fix: --device %s, and the payload "
						 "opens %s)", d->host_given, d->path, d->host_given, d->host_given);
	}
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];

		_cleanup_free_ char *in_home = isd_tier_home_path(spec, NULL, m->destination);

		if (m->agent_state) {
			if (!in_home)
				return isd_error(0, TIER ": the agent's state %s lies outside the home directory", m->destination);
			continue;
		}
		if (m->type == ISD_MOUNT_OVERLAY)
			continue; /* the cow workspace: a copy in this tier */
		if (m->type == ISD_MOUNT_TMPFS) {
			if (isd_tier_tmp_destination(m->destination) || !strcmp(m->destination, ISD_COMMAND_LINK_DIR) || in_home)
				continue;
			return isd_error(0, TIER ": --tmpfs %s (%s) needs a mount namespace; only /tmp, /var/tmp and /run "
						 "become the private TMPDIR, and one in the home directory a private directory",
					 m->destination, m->origin ? m->origin : "isd");
		}
		if (m->rebind) {
			for (size_t j = 0; j < spec->n_mounts; j++)
				if (!spec->mounts[j].readonly && spec->mounts[j].type == ISD_MOUNT_BIND && j != i &&
				    under(m->destination, spec->mounts[j].destination))
					return isd_error(0, TIER ": %s cannot stay read-only inside the writable bind %s "
								 "(Landlock's rules only add rights beneath a directory)",
							 m->destination, spec->mounts[j].destination);
			continue;
		}
		if (strcmp(m->source, m->destination))
			return isd_error(0, TIER ": -v %s:%s needs a mount namespace; this tier only allows a path at its own place (-v %s:%s)",
					 m->source, m->destination, m->source, m->source);
	}
	return 0;
}

/* ---- the socket filter ---- */

static int rule(scmp_filter_ctx ctx, int err, unsigned n, const struct scmp_arg_cmp *cmp)
{
	return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((uint32_t)err), SCMP_SYS(socket), n, cmp);
}

int isd_tier_socket_filter(const struct isd_spec *spec, struct isd_seccomp_program *out)
{
	scmp_filter_ctx ctx;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (spec->network == ISD_NET_HOST) {
		out->unconfined = true;
		return 0;
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return isd_error(-ENOMEM, "creating the landlock tier's socket filter");
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	/* Families: AF_UNIX, AF_INET and AF_INET6 only (raw, netlink,
	 * packet, vsock, ... Landlock cannot rule).  A value with bits above
	 * the int the kernel reads is caught by the last rule. */
	for (uint64_t f = 0; r == 0 && f < 64; f++) {
		struct scmp_arg_cmp c = CMP(0, SCMP_CMP_EQ, f, 0);
		if (f != AF_UNIX && f != AF_INET && f != AF_INET6)
			r = rule(ctx, EAFNOSUPPORT, 1, &c);
	}
	if (r == 0) {
		struct scmp_arg_cmp c = CMP(0, SCMP_CMP_GE, 64, 0);
		r = rule(ctx, EAFNOSUPPORT, 1, &c);
	}
	/* IP: TCP only, which Landlock rules by port; UDP (DNS too), ICMP,
	 * raw, SCTP and MPTCP it cannot. */
	for (int fam = 0; r == 0 && fam < 2 && spec->network != ISD_NET_NONE; fam++) {
		uint64_t f = fam ? AF_INET6 : AF_INET;

		for (uint64_t t = 0; r == 0 && t < 16; t++) {
			struct scmp_arg_cmp c[2] = {CMP(0, SCMP_CMP_EQ, f, 0), CMP(1, SCMP_CMP_MASKED_EQ, 0xf, t)};
			if (t != SOCK_STREAM)
				r = rule(ctx, EACCES, 2, c);
		}
		for (uint64_t p = 1; r == 0 && p < 6; p++) {
			struct scmp_arg_cmp c[3] = {CMP(0, SCMP_CMP_EQ, f, 0), CMP(1, SCMP_CMP_MASKED_EQ, 0xf, SOCK_STREAM),
						    CMP(2, SCMP_CMP_EQ, p, 0)};
			r = rule(ctx, EPROTONOSUPPORT, 3, c);
		}
		if (r == 0) {
			struct scmp_arg_cmp c[3] = {CMP(0, SCMP_CMP_EQ, f, 0), CMP(1, SCMP_CMP_MASKED_EQ, 0xf, SOCK_STREAM),
						    CMP(2, SCMP_CMP_GE, 7, 0)};
			r = rule(ctx, EPROTONOSUPPORT, 3, c);
		}
	}
	/* TCP Fast Open connects inside sendto/sendmsg, where Landlock's
	 * connect rule does not look (Linux 6.18): refused, as is io_uring,
	 * whose operations no filter sees, whatever the profile says. */
	if (r == 0) {
		struct scmp_arg_cmp c = CMP(3, SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(sendto), 1, &c);
	}
	if (r == 0) {
		struct scmp_arg_cmp c = CMP(2, SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(sendmsg), 1, &c);
	}
	if (r == 0) {
		struct scmp_arg_cmp c = CMP(3, SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(sendmmsg), 1, &c);
	}
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(io_uring_setup), 0);
	/* listen(2) on a socket never bound binds one itself, on every
	 * address, where Landlock's bind rule does not look either: --network
	 * none has no IP socket at all (Landlock refuses every use of one
	 * anyway), netless no listening socket (its TCP is for the relay). */
	if (r == 0 && spec->network == ISD_NET_NONE) {
		struct scmp_arg_cmp c4 = CMP(0, SCMP_CMP_EQ, AF_INET, 0), c6 = CMP(0, SCMP_CMP_EQ, AF_INET6, 0);
		r = rule(ctx, EACCES, 1, &c4);
		if (r == 0)
			r = rule(ctx, EACCES, 1, &c6);
	}
	if (r == 0 && spec->network == ISD_NET_NETLESS)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(listen), 0);
	if (r < 0) {
		seccomp_release(ctx);
		return isd_error(r, "building the landlock tier's socket filter");
	}
	r = isd_seccomp_export(ctx, &out->filter, &out->len);
	seccomp_release(ctx);
	if (r == 0)
		out->name = isd_xstrdup("the landlock tier's socket families");
	return r;
}

/* ---- --print-spec ---- */

json_object *isd_sandbox_landlock_json(const struct isd_spec *spec)
{
	json_object *o = json_object_new_object(), *rules = json_object_new_array();
	struct isd_landlock_plan plan;
	const char *net;

	isd_tier_plan(spec, NULL, 0, &plan);
	for (size_t i = 0; i < plan.n_rules; i++) {
		json_object *r = json_object_new_object();
		json_object_object_add(r, "path", json_object_new_string(plan.rules[i].path));
		json_object_object_add(r, "access", isd_landlock_access_json(&plan, plan.rules[i].access));
		json_object_object_add(r, "why", json_object_new_string(plan.rules[i].why));
		json_object_array_add(rules, r);
	}
	json_object_object_add(o, "filesystem", rules);
	json_object_object_add(o, "not_readable", json_object_new_string(
		"everything else: the home directory but for the binds, /tmp, /var/tmp, /run, /dev but for its nodes above "
		"(isd's and --device's), "
		"isd's own directories"));
	switch (spec->network) {
	case ISD_NET_HOST:
		net = "not ruled (--network host)";
		break;
	case ISD_NET_NETLESS:
		net = "TCP: bind and connect refused by Landlock; connect(2) to 127.0.0.1 at the relay's port only, "
		      "done by isd (a seccomp notification), everything else EACCES (where an outer seccomp "
		      "filter holds the one listener: Landlock's rule for the relay's port, on any address, and a "
		      "note); "
		      "sockets: AF_UNIX, and AF_INET/AF_INET6 as TCP only (no UDP, hence no DNS); no listen(2), "
		      "whose automatic bind Landlock does not rule";
		break;
	default:
		net = "no IP socket (Landlock would refuse its every use, but not listen's automatic bind); sockets: AF_UNIX";
	}
	json_object_object_add(o, "network", json_object_new_string(net));
	json_object_object_add(o, "scoped", json_object_new_string(
		"ptrace (every ABI), signals and abstract unix sockets (ABI 6): only inside the sandbox"));
	json_object_object_add(o, "tmp", json_object_new_string(
		"TMPDIR is a private directory; /tmp itself is neither readable nor writable (it cannot be replaced "
		"without a mount namespace); /dev/shm is the container's, shared"));
	isd_landlock_plan_free(&plan);
	return o;
}
