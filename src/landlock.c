/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock (see src/landlock.h): the rule list from the spec, its
 * JSON for --print-spec, and the payload's ruleset.  Raw syscalls and the
 * kernel's UAPI header; rights newer than the installed header are defined
 * here, and each is handled only where the running ABI has it (the kernel
 * documentation's best-effort pattern).
 */
#define _GNU_SOURCE
#include "landlock.h"
#include "device.h"
#include "isd/spec.h"
#include "testhooks.h"
#include "isd/util.h"

#include <fcntl.h>
#include <stddef.h>
#include <json-c/json.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

static const struct {
	uint64_t bit;
	const char *name;
	int abi; /* the first ABI that has it */
} rights[] = {
	{LANDLOCK_ACCESS_FS_WRITE_FILE, "write_file", 1},
	{LANDLOCK_ACCESS_FS_TRUNCATE, "truncate", 3},
	{LANDLOCK_ACCESS_FS_IOCTL_DEV, "ioctl_dev", 5},
	{LANDLOCK_ACCESS_FS_MAKE_REG, "make_reg", 1},
	{LANDLOCK_ACCESS_FS_MAKE_DIR, "make_dir", 1},
	{LANDLOCK_ACCESS_FS_MAKE_SYM, "make_sym", 1},
	{LANDLOCK_ACCESS_FS_MAKE_SOCK, "make_sock", 1},
	{LANDLOCK_ACCESS_FS_MAKE_FIFO, "make_fifo", 1},
	{LANDLOCK_ACCESS_FS_MAKE_CHAR, "make_char", 1},
	{LANDLOCK_ACCESS_FS_MAKE_BLOCK, "make_block", 1},
	{LANDLOCK_ACCESS_FS_REMOVE_FILE, "remove_file", 1},
	{LANDLOCK_ACCESS_FS_REMOVE_DIR, "remove_dir", 1},
	{LANDLOCK_ACCESS_FS_REFER, "refer", 2},
};
#define N_RIGHTS (sizeof(rights) / sizeof(rights[0]))
#define add isd_landlock_plan_add

/* The landlock tier's read rights, named for --print-spec. */
static const struct {
	uint64_t bit;
	const char *name;
} read_rights[] = {
	{LANDLOCK_ACCESS_FS_READ_FILE, "read_file"},
	{LANDLOCK_ACCESS_FS_READ_DIR, "read_dir"},
	{LANDLOCK_ACCESS_FS_EXECUTE, "execute"},
};

#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#define ISD_RULE_NET_PORT 2 /* LANDLOCK_RULE_NET_PORT */

/* The kernel's struct landlock_ruleset_attr at ABI 6, whatever the
 * installed header has; its size tells the kernel which fields are set. */
struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

/* What a rule on a file (not a directory) may carry. */
#define FILE_RIGHTS (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* A device or a terminal: written and controlled, never created in. */
#define DEVICE_RIGHTS FILE_RIGHTS
/* The landlock tier's rights on a file also read and execute it. */
#define FILE_READ_RIGHTS (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE)

static uint64_t all_rights(void)
{
	uint64_t all = 0;

	for (size_t i = 0; i < N_RIGHTS; i++)
		all |= rights[i].bit;
	return all;
}

int isd_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi > 0 ? (int)abi : 0;
}

uint64_t isd_landlock_handled(int abi)
{
	uint64_t handled = 0;

	if (abi < ISD_LANDLOCK_MIN_ABI)
		return 0;
	for (size_t i = 0; i < N_RIGHTS; i++)
		if (rights[i].abi <= abi)
			handled |= rights[i].bit;
	return handled;
}

void isd_landlock_plan_add(struct isd_landlock_plan *p, const char *path, uint64_t access, const char *why)
{
	p->rules = isd_xrealloc(p->rules, (p->n_rules + 1) * sizeof(*p->rules));
	p->rules[p->n_rules++] = (struct isd_landlock_rule){.path = isd_xstrdup(path), .access = access, .why = why};
}

/* isd's /dev (src/mount.c): the nodes a payload writes to or controls. */
static const char *const dev_nodes[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					"/dev/urandom", "/dev/tty", NULL};

void isd_landlock_plan(const struct isd_spec *spec, struct isd_landlock_plan *out)
{
	uint64_t all = all_rights();

	memset(out, 0, sizeof(*out));
	if (spec->landlock_off) {
		out->off_reason = "--security-opt landlock=off";
		return;
	}
	/* A Landlock domain can never mount, unmount or pivot_root, which
	 * every sandbox inside this one needs; nested is the profile for
	 * exactly that payload. */
	if (spec->seccomp && !strcmp(spec->seccomp, "nested")) {
		out->off_reason = "seccomp=nested: a sandbox inside this one needs mount operations, "
				  "which a Landlock domain can never do";
		return;
	}
	if (isd_testhook_landlock_off()) {
		out->off_reason = "ISD_TEST_NO_LANDLOCK (isd-testhooks)";
		return;
	}
	out->enabled = true;
	/* Without a pid namespace the host's processes are in reach: a
	 * domain already keeps ptrace inside, scoping keeps signals. */
	out->scope_signals = spec->pid_host;
	/* Rights are the same beneath every writable place, so that moving
	 * a file between them never gains rights (Landlock's REFER rule). */
	if (spec->writable_root)
		add(out, "/", all, "the root is writable (isd build RUN)");
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		const char *why = m->type == ISD_MOUNT_TMPFS ? "tmpfs" : "read-write bind";

		/* A rebind (guard.h) pins or covers what a mount above
		 * shows: writable only beneath that mount's own rule. */
		if (m->readonly || m->rebind)
			continue;
		if (m->agent_state)
			why = "the agent's state";
		else if (spec->workspace.path && !strcmp(m->destination, spec->workspace.path))
			why = m->type == ISD_MOUNT_OVERLAY ? "the cow workspace" : "the workspace";
		add(out, m->destination, all, why);
	}
	add(out, "/dev/shm", all, "tmpfs");
	add(out, "/dev/pts", DEVICE_RIGHTS, "the sandbox's pseudo-terminals");
	for (size_t i = 0; dev_nodes[i]; i++)
		if (isd_device_readonly_node(spec, dev_nodes[i]))
			add(out, dev_nodes[i], LANDLOCK_ACCESS_FS_IOCTL_DEV, "device, read-only: the same node as a read-only --device");
		else
			add(out, dev_nodes[i], DEVICE_RIGHTS, "device");
	/* --device: ioctl always (a GPU is driven by it), writes with w
	 * only; a read-only bind alone would not refuse them. */
	for (size_t i = 0; i < spec->n_devices; i++)
		if (!spec->devices[i].isd_node)
			add(out, spec->devices[i].path,
			    spec->devices[i].write ? DEVICE_RIGHTS : LANDLOCK_ACCESS_FS_IOCTL_DEV,
			    spec->devices[i].write ? "--device" : "--device, read-only");
	/* --forward-unix sockets need no rule: they live on the sandbox's
	 * tmpfs, and connecting is no right Landlock handles here. */
}

void isd_landlock_plan_free(struct isd_landlock_plan *plan)
{
	for (size_t i = 0; i < plan->n_rules; i++)
		free(plan->rules[i].path);
	free(plan->rules);
	memset(plan, 0, sizeof(*plan));
}

static json_object *rights_json(uint64_t access)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < N_RIGHTS; i++)
		if (access & rights[i].bit)
			json_object_array_add(arr, json_object_new_string(rights[i].name));
	return arr;
}

/* A rule's rights in one line: "all" for every handled right. */
static json_object *access_json(uint64_t access, uint64_t handled)
{
	char text[160] = "";
	size_t n = 0;

	if (access == handled)
		return json_object_new_string("all");
	for (size_t i = 0; i < N_RIGHTS; i++)
		if (access & rights[i].bit)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", n ? " " : "", rights[i].name);
	return json_object_new_string(text);
}

json_object *isd_landlock_access_json(const struct isd_landlock_plan *plan, uint64_t access)
{
	uint64_t handled = isd_landlock_handled(isd_landlock_abi());
	char text[200] = "";
	size_t n = 0;

	if (!handled)
		handled = all_rights();
	if (plan->handle_read)
		for (size_t i = 0; i < sizeof(read_rights) / sizeof(read_rights[0]); i++) {
			handled |= read_rights[i].bit;
			if (access & read_rights[i].bit)
				n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", n ? " " : "", read_rights[i].name);
		}
	if ((access & handled) == handled)
		return json_object_new_string("all");
	if ((access & handled & all_rights()) == (handled & all_rights()))
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%swrite (all)", n ? " " : "");
	else
		for (size_t i = 0; i < N_RIGHTS; i++)
			if (access & handled & rights[i].bit)
				n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", n ? " " : "", rights[i].name);
	return json_object_new_string(text);
}

json_object *isd_landlock_to_json(const struct isd_spec *spec)
{
	json_object *o = json_object_new_object(), *rules = json_object_new_array();
	struct isd_landlock_plan plan;
	int abi = isd_landlock_abi();
	uint64_t handled = isd_landlock_handled(abi);
	/* On a kernel without it, what a kernel with it would get. */
	uint64_t shown = handled ? handled : all_rights();
	char reason[160];

	isd_landlock_plan(spec, &plan);
	json_object_object_add(o, "enabled", json_object_new_boolean(plan.enabled && handled));
	if (!plan.enabled) {
		json_object_object_add(o, "reason", json_object_new_string(plan.off_reason));
	} else if (!handled) {
		if (abi)
			snprintf(reason, sizeof(reason), "the kernel's Landlock ABI %d cannot rename across directories; isd needs ABI %d (Linux 5.19)",
				 abi, ISD_LANDLOCK_MIN_ABI);
		else
			snprintf(reason, sizeof(reason), "the kernel has no Landlock, or it is disabled: the mount layer alone confines writes");
		json_object_object_add(o, "reason", json_object_new_string(reason));
	}
	json_object_object_add(o, "kernel_abi", json_object_new_int(abi));
	if (plan.enabled) {
		json_object_object_add(o, "handled", rights_json(shown));
		json_object_object_add(o, "not_handled", json_object_new_string("read and execute: what the mounts show"));
		for (size_t i = 0; i < plan.n_rules; i++) {
			json_object *r = json_object_new_object();
			json_object_object_add(r, "path", json_object_new_string(plan.rules[i].path));
			json_object_object_add(r, "access", access_json(plan.rules[i].access & shown, shown));
			json_object_object_add(r, "why", json_object_new_string(plan.rules[i].why));
			json_object_array_add(rules, r);
		}
		json_object_object_add(o, "rules", rules);
		json_object_object_add(o, "stdio", json_object_new_string(
			"the caller's stdin, stdout and stderr where they are files or devices open for writing "
			"(so that /dev/stdout can be opened again)"));
	} else {
		json_object_put(rules);
	}
	isd_landlock_plan_free(&plan);
	return o;
}

static int add_rule(int ruleset, int fd, uint64_t access)
{
	struct landlock_path_beneath_attr pb = {.allowed_access = access, .parent_fd = fd};

	return syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0 ? -errno : 0;
}

/* The caller's descriptors 0-2 are the payload's already; without a rule,
 * opening them again through /dev/stdout (a file on the host, a terminal)
 * would fail.  The rule gives no more than the descriptor does. */
static void allow_stdio(int ruleset, uint64_t handled)
{
	for (int fd = 0; fd < 3; fd++) {
		struct stat st;
		int fl = fcntl(fd, F_GETFL);
		uint64_t access = 0;

		if (fl < 0 || fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
			continue;
		if ((fl & O_ACCMODE) != O_RDONLY)
			access |= FILE_RIGHTS;
		if ((fl & O_ACCMODE) != O_WRONLY)
			access |= LANDLOCK_ACCESS_FS_READ_FILE;
		if (access & handled)
			(void)add_rule(ruleset, fd, access & handled);
	}
}

static size_t ruleset_attr_size(int abi)
{
	return abi >= ISD_LANDLOCK_SCOPE_ABI ? sizeof(struct ruleset_attr)
	       : abi >= ISD_LANDLOCK_NET_ABI ? offsetof(struct ruleset_attr, scoped)
					     : offsetof(struct ruleset_attr, handled_access_net);
}

int isd_landlock_apply(const struct isd_landlock_plan *plan)
{
	struct ruleset_attr attr = {0};
	uint64_t file_rights = FILE_RIGHTS;
	int abi, ruleset, r = 0;

	if (!plan->enabled)
		return 0;
	abi = isd_landlock_abi();
	attr.handled_access_fs = isd_landlock_handled(abi);
	if (!attr.handled_access_fs)
		return 0; /* isd doctor says why */
	if (plan->handle_read) {
		attr.handled_access_fs |= ISD_LANDLOCK_READ;
		file_rights |= FILE_READ_RIGHTS;
	}
	if (plan->handle_tcp && abi >= ISD_LANDLOCK_NET_ABI)
		attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
	if (abi >= ISD_LANDLOCK_SCOPE_ABI)
		attr.scoped = (plan->scope_signals ? LANDLOCK_SCOPE_SIGNAL : 0) |
			      (plan->scope_abstract ? LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET : 0);
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, ruleset_attr_size(abi), 0);
	if (ruleset < 0) {
		r = isd_error(-errno, "creating the Landlock ruleset (ABI %d)", abi);
		goto fail;
	}
	for (size_t i = 0; i < plan->n_rules; i++) {
		const struct isd_landlock_rule *rule = &plan->rules[i];
		uint64_t access = rule->access & attr.handled_access_fs;
		struct stat st;
		int fd = open(rule->path, O_PATH | O_CLOEXEC);

		/* Out of the payload's reach (a directory it cannot search):
		 * it cannot write there either, and a missing rule only
		 * takes rights away. */
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
			access &= file_rights;
		r = access ? add_rule(ruleset, fd, access) : 0;
		close(fd);
		if (r < 0) {
			isd_error(r, "adding the Landlock rule for %s", rule->path);
			goto fail;
		}
	}
	if (attr.handled_access_net && plan->connect_port) {
		struct net_port_attr np = {.allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP, .port = plan->connect_port};

		if (syscall(SYS_landlock_add_rule, ruleset, ISD_RULE_NET_PORT, &np, 0) < 0) {
			r = isd_error(-errno, "adding the Landlock rule for TCP port %u", plan->connect_port);
			goto fail;
		}
	}
	for (size_t i = 0; attr.handled_access_net && i < plan->n_forward_ports; i++) {
		struct net_port_attr np = {.allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP, .port = plan->forward_ports[i]};

		if (syscall(SYS_landlock_add_rule, ruleset, ISD_RULE_NET_PORT, &np, 0) < 0) {
			r = isd_error(-errno, "adding the Landlock rule for TCP port %u", plan->forward_ports[i]);
			goto fail;
		}
	}
	allow_stdio(ruleset, attr.handled_access_fs);
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
		r = isd_error(-errno, "restricting the payload with Landlock");
fail:
	if (ruleset >= 0)
		close(ruleset);
	if (r < 0 && !plan->handle_read)
		isd_error_hint("--security-opt landlock=off runs without it (the mount layer alone then confines writes)");
	return r;
}
