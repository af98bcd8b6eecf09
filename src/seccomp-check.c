/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seccomp, part three: `isd seccomp check|list`, what a profile does on
 * this machine, for people deciding whether to trust it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isd/cli-args.h"
#include "isd/seccomp.h"
#include "seccomp-internal.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>


/* ------------------------------------------------------------------ */
/* `isd seccomp check`: what a profile does on this machine */

/* What the filter does with one native syscall, the way libseccomp
 * resolves overlaps: an unconditional rule wins over conditional ones. */
struct view {
	int nr;
	const char *name;
	bool uncond;
	uint32_t action;
	size_t *rules; /* conditional rules (indexes into profile->rules) */
	size_t n_rules;
	bool conflict;
};

struct report {
	const struct isd_seccomp_profile *p;
	struct view *v;
	size_t n;
	size_t n_skipped[ISD_SECCOMP_SKIP_REDUNDANT + 1];
	size_t n_not_here;
	char **warnings;
};

static const struct family {
	const char *name;
	const char *syscalls[14];
} families[] = {
	{ "mount", { "mount", "umount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
		     "open_tree", "mount_setattr", "pivot_root", "chroot" } },
	{ "namespaces", { "clone", "clone3", "unshare", "setns" } },
	{ "keyring", { "add_key", "keyctl", "request_key" } },
	{ "bpf/perf", { "bpf", "perf_event_open" } },
	{ "userfaultfd", { "userfaultfd" } },
	{ "kexec", { "kexec_load", "kexec_file_load" } },
	{ "modules", { "init_module", "finit_module", "delete_module" } },
	{ "file handles", { "open_by_handle_at", "name_to_handle_at" } },
	{ "swap", { "swapon", "swapoff" } },
	{ "reboot", { "reboot" } },
	{ "tty (TIOCSTI)", { "ioctl" } },
	{ "io_uring", { "io_uring_setup", "io_uring_enter", "io_uring_register" } },
	{ "ptrace", { "ptrace", "process_vm_readv", "process_vm_writev" } },
	{ "system", { "syslog", "acct", "quotactl", "settimeofday", "clock_settime", "sethostname",
		      "setdomainname", "iopl", "ioperm", "vhangup", "lookup_dcookie" } },
};

static int view_cmp(const void *a, const void *b)
{
	return strcmp(((const struct view *)a)->name, ((const struct view *)b)->name);
}

static struct view *view_find(struct report *rep, int nr)
{
	for (size_t i = 0; i < rep->n; i++)
		if (rep->v[i].nr == nr)
			return &rep->v[i];
	return NULL;
}

static void report_build(struct report *rep, const struct isd_seccomp_profile *p)
{
	char a[32], b[32];

	memset(rep, 0, sizeof(*rep));
	rep->p = p;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct isd_seccomp_rule *rule = &p->rules[i];
		if (rule->skip) {
			rep->n_skipped[rule->skip]++;
			continue;
		}
		for (size_t j = 0; j < rule->n_names; j++) {
			struct view *v;
			if (rule->nrs[j] == NR_NOT_HERE)
				rep->n_not_here++;
			if (rule->nrs[j] < 0)
				continue; /* unknown, or only on a compat ABI */
			if (!(v = view_find(rep, rule->nrs[j]))) {
				rep->v = isd_xrealloc(rep->v, (rep->n + 1) * sizeof(*rep->v));
				v = &rep->v[rep->n++];
				*v = (struct view){ .nr = rule->nrs[j], .name = rule->names[j] };
			}
			if (rule->n_conds == 0) {
				if (v->uncond && v->action != rule->action && !v->conflict) {
					v->conflict = true;
					isd_strv_push(&rep->warnings,
						      isd_xasprintf("%s: syscalls[%zu] says %s, an earlier rule %s; "
								    "which one applies is up to libseccomp",
								    v->name, rule->json_index,
								    isd_seccomp_action_str(rule->action, a, sizeof(a)),
								    isd_seccomp_action_str(v->action, b, sizeof(b))));
				}
				if (!v->uncond) {
					v->uncond = true;
					v->action = rule->action;
				}
			} else {
				v->rules = isd_xrealloc(v->rules, (v->n_rules + 1) * sizeof(size_t));
				v->rules[v->n_rules++] = i;
			}
		}
	}
	for (size_t i = 0; i < rep->n; i++) {
		struct view *v = &rep->v[i];
		for (size_t k = 0; v->uncond && k < v->n_rules; k++)
			if (p->rules[v->rules[k]].action != v->action) {
				isd_strv_push(&rep->warnings,
					      isd_xasprintf("%s: the conditional rule syscalls[%zu] never applies: an "
							    "unconditional rule for the syscall overrides it",
							    v->name, p->rules[v->rules[k]].json_index));
				break;
			}
	}
	if (rep->n)
		qsort(rep->v, rep->n, sizeof(*rep->v), view_cmp);
	{
		int nr = seccomp_syscall_resolve_name("execve");
		struct view *v = nr >= 0 ? view_find(rep, nr) : NULL;
		if (v ? v->uncond && v->action != SCMP_ACT_ALLOW && v->action != SCMP_ACT_LOG
		      : p->default_action != SCMP_ACT_ALLOW && p->default_action != SCMP_ACT_LOG)
			isd_strv_push(&rep->warnings, isd_xstrdup("execve is not allowed: no command can start "
								  "under this profile"));
	}
}

static void report_free(struct report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		free(rep->v[i].rules);
	free(rep->v);
	isd_strv_free(rep->warnings);
}

static void cond_str(const struct isd_seccomp_cond *c, char *buf, size_t size)
{
	if (c->op == SCMP_CMP_MASKED_EQ)
		snprintf(buf, size, "arg%u & 0x%" PRIx64 " == 0x%" PRIx64, c->index, c->value, c->value_two);
	else
		snprintf(buf, size, "arg%u %s 0x%" PRIx64, c->index,
			 (const char *[]){ "?", "!=", "<", "<=", "==", ">=", ">", "&" }[c->op & 7], c->value);
}

/* "ALLOW", "ERRNO(EPERM)" or "conditional" */
static const char *view_action(const struct report *rep, const char *name, char *buf, size_t size)
{
	int nr = seccomp_syscall_resolve_name(name);
	const struct view *v = NULL;

	for (size_t i = 0; nr >= 0 && i < rep->n; i++)
		if (rep->v[i].nr == nr)
			v = &rep->v[i];
	if (nr < 0)
		return NULL; /* not a syscall here */
	if (v && v->uncond)
		return isd_seccomp_action_str(v->action, buf, size);
	if (v)
		return "conditional";
	return isd_seccomp_action_str(rep->p->default_action, buf, size);
}

static void report_counts(const struct report *rep, size_t *allowed, size_t *conditional, size_t *other)
{
	*allowed = *conditional = *other = 0;
	for (size_t i = 0; i < rep->n; i++) {
		if (!rep->v[i].uncond)
			(*conditional)++;
		else if (rep->v[i].action == SCMP_ACT_ALLOW)
			(*allowed)++;
		else
			(*other)++;
	}
}

static void report_text(const struct report *rep, bool verbose)
{
	const struct isd_seccomp_profile *p = rep->p;
	const struct scmp_version *ver = seccomp_version();
	size_t allowed, conditional, other, names = 0;
	char a[32];

	report_counts(rep, &allowed, &conditional, &other);
	for (size_t i = 0; i < p->n_rules; i++)
		names += p->rules[i].n_names;
	printf("profile: %s\n", p->origin);
	printf("architecture: %s (filter:", isd_seccomp_arch_label(p->arches[0]));
	for (size_t i = 0; i < p->n_arches; i++)
		printf(" %s", isd_seccomp_arch_label(p->arches[i]));
	printf("; any other ABI: %s)\n", isd_seccomp_action_str(SCMP_ACT_ERRNO(EPERM), a, sizeof(a)));
	printf("default action: %s\n", isd_seccomp_action_str(p->default_action, a, sizeof(a)));
	printf("entries: %zu with %zu names; skipped: %zu by capabilities, %zu by architecture, "
	       "%zu by kernel version, %zu repeating the default action\n",
	       p->n_rules, names, rep->n_skipped[ISD_SECCOMP_SKIP_CAPS], rep->n_skipped[ISD_SECCOMP_SKIP_ARCH],
	       rep->n_skipped[ISD_SECCOMP_SKIP_KERNEL], rep->n_skipped[ISD_SECCOMP_SKIP_REDUNDANT]);
	printf("names ignored: %zu unknown to libseccomp %u.%u.%u, %zu not on this architecture\n",
	       p->n_unknown_names, ver->major, ver->minor, ver->micro, rep->n_not_here);
	printf("syscalls: %zu allowed, %zu conditional, %zu with another action, the rest %s\n", allowed,
	       conditional, other, isd_seccomp_action_str(p->default_action, a, sizeof(a)));

	printf("\nfamilies:\n");
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		printf("  %-14s", families[f].name);
		for (size_t i = 0; i < 14 && families[f].syscalls[i]; i++) {
			const char *act = view_action(rep, families[f].syscalls[i], a, sizeof(a));
			if (act)
				printf(" %s=%s", families[f].syscalls[i], act);
		}
		printf("\n");
	}

	printf("\nsyscalls not simply allowed:\n");
	for (size_t i = 0; i < rep->n; i++) {
		const struct view *v = &rep->v[i];
		if (v->uncond && v->action != SCMP_ACT_ALLOW)
			printf("  %-20s %s\n", v->name, isd_seccomp_action_str(v->action, a, sizeof(a)));
		else if (!v->uncond) {
			printf("  %-20s conditional:\n", v->name);
			for (size_t k = 0; k < v->n_rules; k++) {
				const struct isd_seccomp_rule *rule = &p->rules[v->rules[k]];
				printf("    %s if", isd_seccomp_action_str(rule->action, a, sizeof(a)));
				for (size_t c = 0; c < rule->n_conds; c++) {
					char cs[96];
					cond_str(&rule->conds[c], cs, sizeof(cs));
					printf("%s %s", c ? " and" : "", cs);
				}
				printf("\n");
			}
			printf("    otherwise %s\n", isd_seccomp_action_str(p->default_action, a, sizeof(a)));
		}
	}
	if (verbose) {
		printf("\nnames ignored (unknown to this libseccomp, or not on this architecture):\n ");
		for (size_t i = 0; i < p->n_rules; i++)
			for (size_t j = 0; !p->rules[i].skip && j < p->rules[i].n_names; j++)
				if (p->rules[i].nrs[j] == NR_UNKNOWN || p->rules[i].nrs[j] == NR_NOT_HERE)
					printf(" %s", p->rules[i].names[j]);
		printf("\n\nentries skipped:\n");
		for (size_t i = 0; i < p->n_rules; i++) {
			static const char *const why[] = { "", "includes.caps (no capabilities)", "arches",
							   "minKernel", "same action as the default" };
			if (p->rules[i].skip)
				printf("  syscalls[%zu] (%s%s): %s\n", p->rules[i].json_index, p->rules[i].names[0],
				       p->rules[i].n_names > 1 ? ", ..." : "", why[p->rules[i].skip]);
		}
	}
	for (size_t i = 0; p->notes && p->notes[i]; i++)
		printf("%snote: %s\n", i ? "" : "\n", p->notes[i]);
	for (size_t i = 0; rep->warnings && rep->warnings[i]; i++)
		printf("%swarning: %s\n", i || p->notes ? "" : "\n", rep->warnings[i]);
}

static struct json_object *jstr(const char *s)
{
	return json_object_new_string(s);
}

static struct json_object *report_json(const struct report *rep)
{
	const struct isd_seccomp_profile *p = rep->p;
	struct json_object *o = json_object_new_object(), *arr, *sys, *fam, *counts;
	size_t allowed, conditional, other;
	char a[32];

	report_counts(rep, &allowed, &conditional, &other);
	json_object_object_add(o, "valid", json_object_new_boolean(1));
	json_object_object_add(o, "profile", jstr(p->origin));
	json_object_object_add(o, "architecture", jstr(isd_seccomp_arch_label(p->arches[0])));
	arr = json_object_new_array();
	for (size_t i = 0; i < p->n_arches; i++)
		json_object_array_add(arr, jstr(isd_seccomp_arch_label(p->arches[i])));
	json_object_object_add(o, "filterArchitectures", arr);
	json_object_object_add(o, "badArchAction", jstr(isd_seccomp_action_str(SCMP_ACT_ERRNO(EPERM), a, sizeof(a))));
	json_object_object_add(o, "defaultAction", jstr(isd_seccomp_action_str(p->default_action, a, sizeof(a))));

	counts = json_object_new_object();
	json_object_object_add(counts, "entries", json_object_new_uint64(p->n_rules));
	json_object_object_add(counts, "skippedByCaps", json_object_new_uint64(rep->n_skipped[ISD_SECCOMP_SKIP_CAPS]));
	json_object_object_add(counts, "skippedByArch", json_object_new_uint64(rep->n_skipped[ISD_SECCOMP_SKIP_ARCH]));
	json_object_object_add(counts, "skippedByKernel", json_object_new_uint64(rep->n_skipped[ISD_SECCOMP_SKIP_KERNEL]));
	json_object_object_add(counts, "redundant", json_object_new_uint64(rep->n_skipped[ISD_SECCOMP_SKIP_REDUNDANT]));
	json_object_object_add(counts, "unknownNames", json_object_new_uint64(p->n_unknown_names));
	json_object_object_add(counts, "otherArchNames", json_object_new_uint64(rep->n_not_here));
	json_object_object_add(counts, "allowed", json_object_new_uint64(allowed));
	json_object_object_add(counts, "conditional", json_object_new_uint64(conditional));
	json_object_object_add(counts, "otherAction", json_object_new_uint64(other));
	json_object_object_add(o, "counts", counts);

	sys = json_object_new_object();
	for (size_t i = 0; i < rep->n; i++) {
		const struct view *v = &rep->v[i];
		struct json_object *c, *rules;
		if (v->uncond) {
			json_object_object_add(sys, v->name, jstr(isd_seccomp_action_str(v->action, a, sizeof(a))));
			continue;
		}
		c = json_object_new_object();
		rules = json_object_new_array();
		for (size_t k = 0; k < v->n_rules; k++) {
			const struct isd_seccomp_rule *rule = &p->rules[v->rules[k]];
			struct json_object *r = json_object_new_object(), *args = json_object_new_array();
			json_object_object_add(r, "action", jstr(isd_seccomp_action_str(rule->action, a, sizeof(a))));
			for (size_t n = 0; n < rule->n_conds; n++) {
				struct json_object *arg = json_object_new_object();
				json_object_object_add(arg, "index", json_object_new_int((int)rule->conds[n].index));
				json_object_object_add(arg, "op", jstr(isd_seccomp_op_name(rule->conds[n].op)));
				json_object_object_add(arg, "value", json_object_new_uint64(rule->conds[n].value));
				json_object_object_add(arg, "valueTwo", json_object_new_uint64(rule->conds[n].value_two));
				json_object_array_add(args, arg);
			}
			json_object_object_add(r, "args", args);
			json_object_array_add(rules, r);
		}
		json_object_object_add(c, "conditional", rules);
		json_object_object_add(c, "otherwise", jstr(isd_seccomp_action_str(p->default_action, a, sizeof(a))));
		json_object_object_add(sys, v->name, c);
	}
	json_object_object_add(o, "syscalls", sys);

	fam = json_object_new_object();
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		struct json_object *members = json_object_new_object();
		for (size_t i = 0; i < 14 && families[f].syscalls[i]; i++) {
			const char *act = view_action(rep, families[f].syscalls[i], a, sizeof(a));
			if (act)
				json_object_object_add(members, families[f].syscalls[i], jstr(act));
		}
		json_object_object_add(fam, families[f].name, members);
	}
	json_object_object_add(o, "families", fam);
	arr = json_object_new_array();
	for (size_t i = 0; rep->warnings && rep->warnings[i]; i++)
		json_object_array_add(arr, jstr(rep->warnings[i]));
	for (size_t i = 0; p->notes && p->notes[i]; i++)
		json_object_array_add(arr, jstr(p->notes[i]));
	json_object_object_add(o, "warnings", arr);
	return o;
}

/* For the fuzzer: exercise the report without printing it. */
int isd_seccomp_describe_json(const struct isd_seccomp_profile *p, char **out)
{
	struct report rep;
	struct json_object *o;

	report_build(&rep, p);
	o = report_json(&rep);
	*out = isd_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	report_free(&rep);
	return 0;
}

/* The fast path first, as isd_seccomp_compile() lays the program out. */
static int print_pfc(const struct isd_seccomp_profile *p, void *whole)
{
	uint32_t undecided = 0;
	void *fast = NULL;
	int r = isd_seccomp_build_fast_path(p, &fast, &undecided);

	fflush(stdout);
	if (r >= 0 && fast) {
		char act[64];
		printf("#\n# fast path: the argument-checked syscalls of the native ABI, looked up\n"
		       "# before the whole filter; %s stands for \"not decided here:\n"
		       "# the whole filter below decides\"\n",
		       isd_seccomp_action_str(undecided, act, sizeof(act)));
		fflush(stdout);
		r = seccomp_export_pfc(fast, STDOUT_FILENO);
		if (r >= 0) {
			printf("#\n# the whole filter\n");
			fflush(stdout);
		}
	}
	if (r >= 0)
		r = seccomp_export_pfc(whole, STDOUT_FILENO);
	isd_seccomp_ctx_free(fast);
	return r < 0 ? isd_error(r, "exporting the PFC text") : 0;
}

/* How many instructions the kernel runs for each syscall it cannot skip
 * (argument checks: the kernel's cache skips the filter for the others),
 * with zero arguments, against the whole filter without the fast path. */
static void print_paths(const struct report *rep, const struct sock_filter *prog, unsigned short n,
			const struct sock_filter *whole, unsigned short n_whole)
{
	unsigned lo = UINT_MAX, hi = 0, lo_w = UINT_MAX, hi_w = 0, count = 0;
	struct seccomp_data d = { .arch = rep->p->arches[0] };

	for (size_t i = 0; i < rep->n; i++) {
		unsigned s, s_w;
		bool c, c_w;

		if (rep->v[i].n_rules == 0 || rep->v[i].uncond)
			continue;
		d.nr = rep->v[i].nr;
		if (isd_seccomp_bpf_run(prog, n, &d, &s, &c) < 0 ||
		    isd_seccomp_bpf_run(whole, n_whole, &d, &s_w, &c_w) < 0)
			return;
		count++;
		lo = s < lo ? s : lo;
		hi = s > hi ? s : hi;
		lo_w = s_w < lo_w ? s_w : lo_w;
		hi_w = s_w > hi_w ? s_w : hi_w;
	}
	if (count)
		printf("argument-checked syscalls (%u): %u-%u instructions each (%u-%u without the fast path)\n",
		       count, lo, hi, lo_w, hi_w);
}

static int cmd_check(const char *what, bool pfc, bool as_json, bool verbose)
{
	_cleanup_free_ char *path = NULL, *buf = NULL;
	struct isd_seccomp_profile *p = NULL;
	void *ctx = NULL;
	size_t len;
	int r;

	if (pfc && as_json)
		return isd_error(0, "seccomp check: --pfc and --json exclude each other");
	if (!strcmp(what, "unconfined")) {
		if (as_json)
			printf("{ \"valid\": true, \"profile\": \"unconfined\", \"unconfined\": true }\n");
		else
			printf("profile: unconfined (built in): no seccomp filter\n");
		return 0;
	}
	if ((r = isd_seccomp_resolve(what, &path)) < 0 || (r = isd_seccomp_read_profile(path, &buf, &len)) < 0 ||
	    (r = isd_seccomp_parse_buffer(buf, len, path, NULL, &p)) < 0)
		return r;
	/* Compiling catches what only libseccomp knows (conflicting rules). */
	if ((r = isd_seccomp_build(p, &ctx)) >= 0) {
		if (pfc) {
			r = print_pfc(p, ctx);
		} else if (as_json) {
			char *s = NULL;
			isd_seccomp_describe_json(p, &s);
			printf("%s\n", s);
			free(s);
		} else {
			struct sock_filter *filter = NULL, *whole = NULL;
			unsigned short n = 0, n_whole = 0;
			struct report rep;

			if ((r = isd_seccomp_export(ctx, &whole, &n_whole)) >= 0 &&
			    (r = isd_seccomp_compile(p, &filter, &n)) >= 0) {
				report_build(&rep, p);
				report_text(&rep, verbose);
				printf("\nBPF: %u instructions\n", n);
				print_paths(&rep, filter, n, whole, n_whole);
				report_free(&rep);
			}
			free(filter);
			free(whole);
		}
	}
	isd_seccomp_ctx_free(ctx);
	isd_seccomp_profile_free(p);
	return r;
}

static int cmd_list(void)
{
	_cleanup_strv_ char **dirs = isd_seccomp_search_dirs();

	printf("%-24s %s\n", "unconfined", "(built in: no filter)");
	isd_print_named_files(dirs, ".json", 24);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: isd seccomp check PROFILE [--pfc] [--json] [-v]\n"
		   "       isd seccomp list\n"
		   "PROFILE is a name (looked up in $XDG_CONFIG_HOME/isd/seccomp-profiles,\n"
		   "/etc/isd/seccomp-profiles, %s), a path containing '/', or \"unconfined\".\n"
		   "check: validates the profile and shows what it allows and denies here\n"
		   "       (--pfc: libseccomp's pseudo-filter code; --json: machine-readable).\n",
		ISD_SECCOMP_PROFILES_DIR);
}

/* The end of every subcommand: what was written reached stdout, or the
 * failure is one line. */
static int finish(int r)
{
	if (fflush(stdout) != 0 && r >= 0)
		r = isd_error(-EIO, "writing the output");
	if (r < 0) {
		isd_error_print("seccomp failed");
		return ISD_EXIT_FAILURE;
	}
	return 0;
}

static int check_main(int argc, char **argv)
{
	enum { CHECK_PFC = 1, CHECK_JSON, CHECK_VERBOSE };
	static const struct isd_cli_flag flags[] = {
		{"--pfc", 0, false, CHECK_PFC}, {"--json", 0, false, CHECK_JSON}, {"--verbose", 'v', false, CHECK_VERBOSE}, {0}};
	static const struct isd_cli_command cmd = {"seccomp check", usage, flags, 1};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);
	bool pfc = false, as_json = false, verbose = false;
	const char *what = NULL;

	while (isd_cli_next(&a)) {
		switch (a.id) {
		case CHECK_PFC:
			pfc = true;
			break;
		case CHECK_JSON:
			as_json = true;
			break;
		case CHECK_VERBOSE:
			verbose = true;
			break;
		default:
			what = a.value;
		}
	}
	if (a.exit >= 0)
		return a.exit;
	if (!what)
		return isd_cli_usage_error(&cmd, "expected a PROFILE");
	return finish(cmd_check(what, pfc, as_json, verbose));
}

static int list_main(int argc, char **argv)
{
	static const struct isd_cli_command cmd = {"seccomp list", usage, NULL, 0};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);

	while (isd_cli_next(&a))
		;
	return a.exit >= 0 ? a.exit : finish(cmd_list());
}

int isd_seccomp_main(int argc, char **argv)
{
	static const struct isd_cli_subcommand subs[] = {{"check", check_main}, {"list", list_main}, {0}};

	return isd_cli_dispatch("seccomp", usage, subs, argc, argv);
}

