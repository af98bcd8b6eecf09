/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seccomp module: Docker's profiles load, malformed profiles are named
 * by JSON path, the cache is written, reused and distrusted when damaged,
 * the shipped profiles contain their rules, and the installed filters do
 * what the README promises (checked in forked children).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isd/seccomp.h"
#include "isd/util.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <linux/sched.h>
#include <pty.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef ISD_SOURCE_SECCOMP_PROFILES_DIR
#error "ISD_SOURCE_SECCOMP_PROFILES_DIR must name the source tree's seccomp-profiles/"
#endif
#define PROFILES ISD_SOURCE_SECCOMP_PROFILES_DIR
#define FIXTURES ISD_SOURCE_SECCOMP_PROFILES_DIR "/../tests/seccomp/docker"

static int failures;

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			failures++;                                                        \
			fprintf(stderr, "FAIL %s:%d: %s: ", __func__, __LINE__, #cond);     \
			fprintf(stderr, __VA_ARGS__);                                      \
			fputc('\n', stderr);                                               \
		}                                                                          \
	} while (0)

static void setenv_path(const char *name, const char *dir, const char *sub)
{
	_cleanup_free_ char *v = isd_xasprintf("%s/%s", dir, sub);
	setenv(name, v, 1);
}

static const struct isd_seccomp_target x86_64_61 = { SCMP_ARCH_X86_64, "6.1.0-13-amd64" };

static char *slurp(const char *path, size_t *len)
{
	char *buf = NULL;
	int r = isd_read_file_at(AT_FDCWD, path, &buf, len);
	if (r < 0) {
		fprintf(stderr, "cannot read %s: %s\n", path, strerror(-r));
		exit(2);
	}
	return buf;
}

static struct isd_seccomp_profile *load(const char *path, const struct isd_seccomp_target *t)
{
	struct isd_seccomp_profile *p = NULL;
	size_t len;
	_cleanup_free_ char *buf = slurp(path, &len);
	int r = isd_seccomp_parse_buffer(buf, len, path, t, &p);

	CHECK(r == 0, "%s: %s", path, isd_error_message());
	return r == 0 ? p : NULL;
}

static const struct isd_seccomp_rule *rule_for(const struct isd_seccomp_profile *p, const char *name,
					       bool with_args, size_t nth)
{
	for (size_t i = 0; i < p->n_rules; i++)
		for (size_t j = 0; j < p->rules[i].n_names; j++)
			if (!strcmp(p->rules[i].names[j], name) && (p->rules[i].n_conds > 0) == with_args &&
			    nth-- == 0)
				return &p->rules[i];
	return NULL;
}

static bool builds(const struct isd_seccomp_profile *p, unsigned short *len)
{
	void *ctx = NULL;
	struct sock_filter *f = NULL;
	int r = isd_seccomp_build(p, &ctx);

	CHECK(r == 0, "build %s: %s", p->origin, isd_error_message());
	if (r == 0) {
		r = isd_seccomp_export(ctx, &f, len);
		CHECK(r == 0 && *len > 0, "export %s: %s", p->origin, isd_error_message());
	}
	free(f);
	isd_seccomp_ctx_free(ctx);
	return r == 0;
}

/* ---- Docker's profiles load unchanged, with Docker's semantics ---- */

static void test_docker_fixtures(void)
{
	static const char *const files[] = { "default.json", "default-old-format.json", "example.json",
					     "conditional_include.json" };
	struct isd_seccomp_profile *p;
	const struct isd_seccomp_rule *r;
	unsigned short len;

	for (size_t i = 0; i < 4; i++) {
		_cleanup_free_ char *path = isd_xasprintf("%s/%s", FIXTURES, files[i]);
		p = load(path, NULL);
		if (p)
			builds(p, &len);
		isd_seccomp_profile_free(p);
	}

	/* default.json: archMap picks x86_64's subarchitectures; caps,
	 * arches and minKernel decide which entries apply. */
	p = load(FIXTURES "/default.json", &x86_64_61);
	if (!p)
		return;
	CHECK(p->default_action == SCMP_ACT_ERRNO(EPERM), "defaultErrnoRet 1");
	CHECK(p->n_arches == 3 && p->arches[0] == SCMP_ARCH_X86_64 && p->arches[1] == SCMP_ARCH_X86 &&
		      p->arches[2] == SCMP_ARCH_X32, "archMap: %zu arches", p->n_arches);
	CHECK((r = rule_for(p, "open_by_handle_at", false, 0)) && r->skip == ISD_SECCOMP_SKIP_CAPS,
	      "includes.caps never applies");
	CHECK((r = rule_for(p, "arch_prctl", false, 0)) && r->skip == ISD_SECCOMP_APPLIES, "amd64 applies");
	CHECK((r = rule_for(p, "swapcontext", false, 0)) && r->skip == ISD_SECCOMP_SKIP_ARCH, "ppc64le skipped");
	CHECK((r = rule_for(p, "clone", true, 0)) && r->skip == ISD_SECCOMP_APPLIES,
	      "excludes.caps never excludes; s390 not excluded here");
	CHECK((r = rule_for(p, "clone", true, 1)) && r->skip == ISD_SECCOMP_SKIP_ARCH, "s390 clone skipped");
	/* [0] is in the CAP_SYS_ADMIN entry, [1] the ENOSYS one */
	CHECK((r = rule_for(p, "clone3", false, 1)) && r->skip == ISD_SECCOMP_APPLIES &&
		      r->action == SCMP_ACT_ERRNO(ENOSYS), "clone3 ENOSYS");
	CHECK((r = rule_for(p, "ptrace", false, 0)) && r->skip == ISD_SECCOMP_APPLIES, "minKernel 4.8 on 6.1");
	CHECK(p->n_unknown_names > 0, "names libseccomp 2.5 does not know are counted, not fatal");
	isd_seccomp_profile_free(p);

	{
		const struct isd_seccomp_target old = { SCMP_ARCH_X86_64, "4.4.0" };
		p = load(FIXTURES "/default.json", &old);
		CHECK(p && (r = rule_for(p, "ptrace", false, 0)) && r->skip == ISD_SECCOMP_SKIP_KERNEL,
		      "minKernel 4.8 on 4.4");
		isd_seccomp_profile_free(p);
	}
	{
		const struct isd_seccomp_target arm = { SCMP_ARCH_AARCH64, "6.1.0" };
		p = load(FIXTURES "/default.json", &arm);
		CHECK(p && p->n_arches == 2 && p->arches[1] == SCMP_ARCH_ARM, "aarch64 archMap");
		CHECK(p && (r = rule_for(p, "cacheflush", false, 0)) && r->skip == ISD_SECCOMP_APPLIES,
		      "arm64 rule applies on aarch64");
		CHECK(p && (r = rule_for(p, "arch_prctl", false, 0)) && r->skip == ISD_SECCOMP_SKIP_ARCH,
		      "amd64 rule skipped on aarch64");
		if (p)
			builds(p, &len);
		isd_seccomp_profile_free(p);
	}

	p = load(FIXTURES "/default-old-format.json", &x86_64_61);
	CHECK(p && p->n_arches == 3, "architectures list");
	CHECK(p && (r = rule_for(p, "accept4", false, 0)) && r->action == SCMP_ACT_ALLOW, "old \"name\"");
	isd_seccomp_profile_free(p);

	p = load(FIXTURES "/example.json", &x86_64_61);
	CHECK(p && (r = rule_for(p, "clone", true, 0)) && r->conds[0].op == SCMP_CMP_MASKED_EQ &&
		      r->conds[0].value == 2114060288 && r->conds[0].value_two == 0, "clone mask");
	/* 12345 is no errno; the kernel would cap it, libseccomp refuses it */
	CHECK(p && (r = rule_for(p, "syslog", false, 0)) && r->action == SCMP_ACT_ERRNO(4094) && p->notes,
	      "errnoRet 12345 clamped with a note");
	isd_seccomp_profile_free(p);

	p = load(FIXTURES "/conditional_include.json", &x86_64_61);
	CHECK(p && (r = rule_for(p, "syslog", false, 0)) && r->skip == ISD_SECCOMP_SKIP_CAPS, "includes.caps");
	CHECK(p && (r = rule_for(p, "ptrace", false, 0)) && r->skip == ISD_SECCOMP_APPLIES, "excludes.caps");
	CHECK(p && p->default_action == SCMP_ACT_ERRNO(EPERM), "ERRNO without errnoRet is EPERM");
	isd_seccomp_profile_free(p);
}

/* ---- malformed profiles: one message naming the JSON path ---- */

static void test_malformed(void)
{
	static const struct {
		const char *json;
		const char *message; /* expected after "seccomp profile /x/p.json: " */
	} cases[] = {
		{ "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"a\"],\"action\":\"SCMP_ACT_ALLOW\"},"
		  "{\"names\":[\"b\"],\"action\":\"SCMP_ACT_ALLOW\"},{\"names\":[\"c\"],\"action\":\"SCMP_ACT_ALLOW\"},"
		  "{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":1,"
		  "\"op\":\"SCMP_CMP_FOO\"}]}]}",
		  "syscalls[3].args[0].op: unknown operator \"SCMP_CMP_FOO\"" },
		{ "{", "invalid JSON: unexpected end of input" },
		{ "{\"defaultAction\": }", "invalid JSON at line 1, column 19" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}\n x", "invalid JSON at line 2, column 2" },
		{ "[]", "top level: expected an object, got an array" },
		{ "null", "top level: expected an object, got null" },
		{ "{}", "defaultAction: missing" },
		{ "{\"defaultAction\":\"SCMP_ACT_FOO\"}", "defaultAction: unknown action \"SCMP_ACT_FOO\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_NOTIFY\"}", "defaultAction: SCMP_ACT_NOTIFY needs a seccomp agent" },
		{ "{\"defaultAction\":7}", "defaultAction: expected a string, got an integer" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"defaultErrnoRet\":1}",
		  "defaultErrnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take a return value" },
		{ "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":-1}",
		  "defaultErrnoRet: expected an unsigned integer, got -1" },
		{ "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":70000}",
		  "defaultErrnoRet: 70000 is out of range" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"defaultaction\":1}", "top level: unknown field \"defaultaction\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_FOO\"]}",
		  "architectures[0]: unknown architecture \"SCMP_ARCH_FOO\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[],\"archMap\":[]}",
		  "architectures: use either \"architectures\" or \"archMap\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"archMap\":[{\"subArchitectures\":[]}]}",
		  "archMap[0].architecture: missing" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"archMap\":[{\"architecture\":\"SCMP_ARCH_X86_64\","
		  "\"subArchitectures\":[\"SCMP_ARCH_X86\",3]}]}",
		  "archMap[0].subArchitectures[1]: expected a string, got an integer" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/run/agent.sock\"}",
		  "listenerPath: isd has no seccomp agent" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":[\"SECCOMP_FILTER_FLAG_FOO\"]}",
		  "flags[0]: unsupported flag \"SECCOMP_FILTER_FLAG_FOO\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":{}}", "syscalls: expected an array, got an object" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[3]}", "syscalls[0]: expected an object, got an integer" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"action\":\"SCMP_ACT_ERRNO\"}]}",
		  "syscalls[0]: missing \"names\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":\"read\",\"action\":\"SCMP_ACT_ERRNO\"}]}",
		  "syscalls[0].names: expected an array, got a string" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[],\"action\":\"SCMP_ACT_ERRNO\"}]}",
		  "syscalls[0].names: empty" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"name\":\"read\",\"names\":[\"write\"],"
		  "\"action\":\"SCMP_ACT_ERRNO\"}]}",
		  "syscalls[0]: use either \"name\" or \"names\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\",\"\"],\"action\":\"SCMP_ACT_ERRNO\"}]}",
		  "syscalls[0].names[1]: empty syscall name" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"re\\u0000ad\"],\"action\":\"SCMP_ACT_ERRNO\"}]}",
		  "syscalls[0].names[0]: string contains a NUL character" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"]}]}",
		  "syscalls[0].action: missing" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_KILL\","
		  "\"errnoRet\":1}]}",
		  "syscalls[0].errnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take a return value" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
		  "\"errnoret\":1}]}",
		  "syscalls[0]: unknown field \"errnoret\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
		  "\"args\":[{\"index\":6,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]}",
		  "syscalls[0].args[0].index: 6 is out of range (at most 5)" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
		  "\"args\":[{\"index\":0,\"value\":1.5,\"op\":\"SCMP_CMP_EQ\"}]}]}",
		  "syscalls[0].args[0].value: expected an unsigned integer, got a fractional number" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
		  "\"args\":[{\"index\":0,\"op\":\"SCMP_CMP_EQ\"}]}]}",
		  "syscalls[0].args[0].value: missing" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
		  "\"args\":[{\"index\":0,\"value\":1}]}]}",
		  "syscalls[0].args[0].op: missing" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
		  "\"includes\":{\"arches\":[\"amd65\"]}}]}",
		  "syscalls[0].includes.arches[0]: unknown architecture \"amd65\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
		  "\"excludes\":{\"minKernel\":\"4\"}}]}",
		  "syscalls[0].excludes.minKernel: \"4\" is not a kernel version" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
		  "\"includes\":{\"caps\":[1]}}]}",
		  "syscalls[0].includes.caps[0]: expected a string, got an integer" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
		  "\"includes\":{\"kernel\":\"5.0\"}}]}",
		  "syscalls[0].includes: unknown field \"kernel\"" },
		{ "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\"},"
		  "{\"names\":[\"write\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
		  "syscalls[1].action: SCMP_ACT_NOTIFY needs a seccomp agent" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct isd_seccomp_profile *p = NULL;
		_cleanup_free_ char *want = isd_xasprintf("seccomp profile /x/p.json: %s", cases[i].message);
		int r;

		isd_error_clear();
		r = isd_seccomp_parse_buffer(cases[i].json, strlen(cases[i].json), "/x/p.json", &x86_64_61, &p);
		CHECK(r < 0 && !p, "case %zu accepted: %s", i, cases[i].json);
		CHECK(!strncmp(isd_error_message(), want, strlen(want)), "case %zu:\n  want %s\n  got  %s", i, want,
		      isd_error_message());
		isd_seccomp_profile_free(p);
	}

	/* an embedded NUL is not the end of the document */
	{
		struct isd_seccomp_profile *p = NULL;
		static const char nul[] = "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}\0{}";
		CHECK(isd_seccomp_parse_buffer(nul, sizeof(nul) - 1, "/x/p.json", &x86_64_61, &p) < 0 &&
			      strstr(isd_error_message(), "column 35: data after the end"),
		      "NUL: %s", isd_error_message());
		isd_seccomp_profile_free(p);
	}

	/* Only libseccomp sees this one: same arguments, two actions. */
	{
		static const char conflict[] =
			"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":["
			"{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]},"
			"{\"names\":[\"read\"],\"action\":\"SCMP_ACT_LOG\",\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]}";
		struct isd_seccomp_profile *p = NULL;
		void *ctx = NULL;
		int r = isd_seccomp_parse_buffer(conflict, sizeof(conflict) - 1, "/x/p.json", &x86_64_61, &p);

		CHECK(r == 0, "conflict parses: %s", isd_error_message());
		if (p) {
			r = isd_seccomp_build(p, &ctx);
			CHECK(r < 0 && strstr(isd_error_message(), "syscalls[1]: cannot add the rule for \"read\""),
			      "conflict: %s", isd_error_message());
		}
		isd_seccomp_ctx_free(ctx);
		isd_seccomp_profile_free(p);
	}
}

static void test_lenient_parts(void)
{
	/* Unknown syscall names are skipped like Docker does; null is
	 * absent; comments anywhere; same-argument conditions are ORed. */
	static const char json[] =
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"comment\":\"x\",\"archMap\":null,\"syscalls\":["
		"{\"names\":[\"read\",\"no_such_syscall_xyz\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":null,\"comment\":\"y\"},"
		"{\"names\":[\"write\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":["
		"{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"},{\"index\":0,\"value\":2,\"op\":\"SCMP_CMP_EQ\"}]},"
		"{\"names\":[\"getpid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1},"
		"{\"names\":[\"kill\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13}],"
		"\"flags\":[\"SECCOMP_FILTER_FLAG_LOG\"]}";
	struct isd_seccomp_profile *p = NULL;
	unsigned short len;
	int r = isd_seccomp_parse_buffer(json, sizeof(json) - 1, "lenient", &x86_64_61, &p);

	CHECK(r == 0, "%s", isd_error_message());
	if (!p)
		return;
	CHECK(p->n_unknown_names == 1, "unknown names: %zu", p->n_unknown_names);
	CHECK(p->rules[0].nrs[1] == ISD_SECCOMP_NR_UNKNOWN, "unknown name marked");
	CHECK(p->rules[2].skip == ISD_SECCOMP_SKIP_REDUNDANT, "ERRNO(EPERM) rule equals the default");
	CHECK(p->rules[3].skip == ISD_SECCOMP_APPLIES && p->rules[3].action == SCMP_ACT_ERRNO(EACCES), "EACCES");
	CHECK(p->flags == SECCOMP_FILTER_FLAG_LOG, "flags");
	builds(p, &len);
	isd_seccomp_profile_free(p);
}

/* ---- the shipped profiles ---- */

static const char *const denied_eperm[] = {
	"mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
	"mount_setattr", "pivot_root", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
	"userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"open_by_handle_at", "name_to_handle_at", "swapon", "swapoff", "reboot", "setns", NULL
};

static bool allowed_anywhere(const struct isd_seccomp_profile *p, const char *name)
{
	for (size_t i = 0; i < p->n_rules; i++)
		for (size_t j = 0; j < p->rules[i].n_names; j++)
			if (!strcmp(p->rules[i].names[j], name) && p->rules[i].action == SCMP_ACT_ALLOW &&
			    p->rules[i].n_conds == 0 && !p->rules[i].skip)
				return true;
	return false;
}

static void test_default_profile(void)
{
	struct isd_seccomp_profile *p = load(PROFILES "/default.json", NULL);
	const struct isd_seccomp_rule *r;
	bool sti = false, sti_hi = false, linux_ = false;
	unsigned short len;

	if (!p)
		return;
	CHECK(p->n_arches == 1, "native arch only (got %zu)", p->n_arches);
	CHECK(p->default_action == SCMP_ACT_ERRNO(ENOSYS), "default ENOSYS");
	for (size_t i = 0; denied_eperm[i]; i++) {
		r = rule_for(p, denied_eperm[i], false, 0);
		CHECK(r && r->action == SCMP_ACT_ERRNO(EPERM) && r->skip == ISD_SECCOMP_APPLIES, "%s EPERM",
		      denied_eperm[i]);
		CHECK(!allowed_anywhere(p, denied_eperm[i]), "%s also allowed", denied_eperm[i]);
	}
	CHECK((r = rule_for(p, "clone3", false, 0)) && r->action == SCMP_ACT_ERRNO(ENOSYS), "clone3");
	CHECK(!allowed_anywhere(p, "ioctl") && !allowed_anywhere(p, "clone") && !allowed_anywhere(p, "unshare"),
	      "ioctl/clone/unshare only conditionally");
	CHECK(!allowed_anywhere(p, "io_uring_setup") && !allowed_anywhere(p, "modify_ldt"), "io_uring, modify_ldt");
	for (size_t n = 0; (r = rule_for(p, "ioctl", true, n)); n++) {
		const struct isd_seccomp_cond *c = &r->conds[0];
		if (r->action != SCMP_ACT_ERRNO(EPERM) || c->index != 1 || c->op != SCMP_CMP_MASKED_EQ)
			continue;
		sti |= c->value_two == TIOCSTI;
		sti_hi |= c->value_two == TIOCSTI && c->value == 0xffffffffu; /* CVE-2019-10063 */
		linux_ |= c->value_two == TIOCLINUX && c->value == 0xffffffffu;
	}
	CHECK(sti && sti_hi && linux_, "TIOCSTI/TIOCLINUX masked to 32 bits");
	for (uint64_t flag = 0x20000; flag <= 0x40000000; flag <<= 1) {
		bool clone_denied = false, unshare_denied = false;
		if (!(flag & 0x7E020000))
			continue;
		for (size_t n = 0; (r = rule_for(p, "clone", true, n)); n++)
			clone_denied |= r->action == SCMP_ACT_ERRNO(EPERM) && r->conds[0].value == flag &&
					r->conds[0].value_two == flag;
		for (size_t n = 0; (r = rule_for(p, "unshare", true, n)); n++)
			unshare_denied |= r->action == SCMP_ACT_ERRNO(EPERM) && r->conds[0].value == flag;
		CHECK(clone_denied && unshare_denied, "namespace flag 0x%llx", (unsigned long long)flag);
	}
	builds(p, &len);
	CHECK(len < BPF_MAXINSNS, "size");
	isd_seccomp_profile_free(p);

	p = load(PROFILES "/nested.json", NULL);
	if (!p)
		return;
	CHECK(allowed_anywhere(p, "mount") && allowed_anywhere(p, "unshare") && allowed_anywhere(p, "clone") &&
		      allowed_anywhere(p, "setns") && allowed_anywhere(p, "pivot_root") &&
		      allowed_anywhere(p, "fsopen") && allowed_anywhere(p, "move_mount"),
	      "nested allows namespaces and mounts");
	CHECK(!allowed_anywhere(p, "keyctl") && !allowed_anywhere(p, "bpf") && !allowed_anywhere(p, "ioctl"),
	      "nested keeps the rest");
	builds(p, &len);
	{
		/* nested.json is default.json plus namespaces and mounts:
		 * nothing default allows may be missing, nothing else opened */
		static const char *const opened[] = { "mount", "umount", "umount2", "fsopen", "fsconfig",
						      "fsmount", "fspick", "move_mount", "open_tree",
						      "open_tree_attr", "mount_setattr", "pivot_root", "chroot",
						      "setns", "clone", "clone3", "unshare", "sethostname",
						      "setdomainname", NULL };
		struct isd_seccomp_profile *d = load(PROFILES "/default.json", NULL);
		for (size_t i = 0; d && i < d->n_rules; i++)
			for (size_t j = 0; j < d->rules[i].n_names; j++)
				if (allowed_anywhere(d, d->rules[i].names[j]))
					CHECK(allowed_anywhere(p, d->rules[i].names[j]), "nested lacks %s",
					      d->rules[i].names[j]);
		for (size_t i = 0; d && i < p->n_rules; i++)
			for (size_t j = 0; j < p->rules[i].n_names; j++) {
				const char *name = p->rules[i].names[j];
				bool ok = allowed_anywhere(d, name) || !allowed_anywhere(p, name);
				for (size_t k = 0; !ok && opened[k]; k++)
					ok = !strcmp(opened[k], name);
				CHECK(ok, "nested allows %s beyond default", name);
			}
		isd_seccomp_profile_free(d);
	}
	isd_seccomp_profile_free(p);

	/* The setuid/setgid modes: refused with EPERM, never allowed
	 * unconditionally, in default and nested alike; build.json (isd
	 * build's RUN) is default.json without exactly these rules. */
	{
		static const char *const setid[] = { "chmod", "fchmod", "fchmodat", "fchmodat2", "creat", "mknod",
						     "mknodat", "open", "openat", NULL };
		struct isd_seccomp_profile *d = load(PROFILES "/default.json", NULL);
		struct isd_seccomp_profile *n = load(PROFILES "/nested.json", NULL);
		struct isd_seccomp_profile *b = load(PROFILES "/build.json", NULL);
		for (size_t k = 0; d && n && b && setid[k]; k++) {
			bool suid = false;
			CHECK(!allowed_anywhere(d, setid[k]) && !allowed_anywhere(n, setid[k]), "%s unconditional",
			      setid[k]);
			CHECK(allowed_anywhere(b, setid[k]), "build lacks %s", setid[k]);
			for (size_t m = 0; (r = rule_for(d, setid[k], true, m)); m++)
				for (size_t c = 0; c < r->n_conds; c++)
					suid |= r->action == SCMP_ACT_ERRNO(EPERM) && r->conds[c].value == 04000 &&
						r->conds[c].value_two == 04000;
			CHECK(suid, "%s with S_ISUID refused", setid[k]);
		}
		/* its mode is out of seccomp's sight: ENOSYS wherever the
		 * setuid modes are refused, the nested isd's own resolution
		 * included (src/resolve.c) */
		CHECK(d && !allowed_anywhere(d, "openat2") && n && !allowed_anywhere(n, "openat2") && b &&
			      allowed_anywhere(b, "openat2"), "openat2: ENOSYS in default and nested");
		for (size_t i = 0; d && b && i < b->n_rules; i++)
			for (size_t j = 0; j < b->rules[i].n_names; j++) {
				const char *name = b->rules[i].names[j];
				bool ok = allowed_anywhere(d, name) == allowed_anywhere(b, name) || !strcmp(name, "openat2");
				for (size_t k = 0; !ok && setid[k]; k++)
					ok = !strcmp(setid[k], name);
				CHECK(ok, "build and default differ on %s", name);
			}
		isd_seccomp_profile_free(d);
		isd_seccomp_profile_free(n);
		isd_seccomp_profile_free(b);
	}
}

/* ---- the installed filter, in forked children ---- */

struct probe_result {
	long rc;
	int err;
};

static struct probe_result probe(long nr, unsigned long a0, unsigned long a1, unsigned long a2)
{
	struct probe_result res;
	errno = 0;
	res.rc = syscall(nr, a0, a1, a2, 0, 0, 0);
	res.err = res.rc < 0 ? errno : 0;
	return res;
}

/* Runs the probes under PROFILE in a child; returns the number of
 * mismatches (the child reports them itself). */
static int run_under(const char *profile, bool nested)
{
	struct isd_seccomp_program prog;
	pid_t pid;
	int status, r;

	r = isd_seccomp_prepare(profile, &prog);
	CHECK(r == 0, "prepare %s: %s", profile, isd_error_message());
	if (r < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		int bad = 0, m, s;
		char c = 'x';
		struct probe_result pr;
		struct clone_args ca = { .exit_signal = SIGCHLD };

		if (openpty(&m, &s, NULL, NULL, NULL) < 0)
			_exit(100);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || isd_seccomp_install(&prog) < 0)
			_exit(101);
#define EXPECT(what, res, want_err)                                                               \
	do {                                                                                       \
		pr = (res);                                                                        \
		if (pr.err != (want_err)) {                                                        \
			fprintf(stderr, "FAIL %s: %s: errno %s, want %s\n", profile, what,         \
				strerrorname_np(pr.err) ?: "0", strerrorname_np(want_err) ?: "0"); \
			bad++;                                                                     \
		}                                                                                  \
	} while (0)
		EXPECT("getpid", probe(SYS_getpid, 0, 0, 0), 0);
		EXPECT("FIONREAD", probe(SYS_ioctl, (unsigned long)s, FIONREAD, (unsigned long)&m), 0);
		EXPECT("TIOCSTI", probe(SYS_ioctl, (unsigned long)s, TIOCSTI, (unsigned long)&c), EPERM);
		EXPECT("TIOCSTI|1<<32", probe(SYS_ioctl, (unsigned long)s, TIOCSTI | (1UL << 32), (unsigned long)&c),
		       EPERM);
		EXPECT("TIOCLINUX", probe(SYS_ioctl, (unsigned long)s, TIOCLINUX, (unsigned long)&c), EPERM);
		EXPECT("x32 getpid", probe(SYS_getpid | 0x40000000, 0, 0, 0), EPERM);
		EXPECT("keyctl", probe(SYS_keyctl, 0, 0, 0), EPERM);
		EXPECT("bpf", probe(SYS_bpf, 0, 0, 0), EPERM);
		EXPECT("io_uring_setup", probe(SYS_io_uring_setup, 1, 0, 0), ENOSYS);
		EXPECT("syscall 1000", probe(1000, 0, 0, 0), ENOSYS);
		EXPECT("socket(AF_VSOCK)", probe(SYS_socket, 40, SOCK_STREAM, 0), EAFNOSUPPORT);
		EXPECT("unshare(CLONE_FS)", probe(SYS_unshare, CLONE_FS, 0, 0), 0);
		if (!nested) {
			EXPECT("mount", probe(SYS_mount, (unsigned long)"none", (unsigned long)"/", (unsigned long)"tmpfs"),
			       EPERM);
			EXPECT("unshare(CLONE_NEWUSER)", probe(SYS_unshare, CLONE_NEWUSER, 0, 0), EPERM);
			EXPECT("unshare(CLONE_NEWTIME)", probe(SYS_unshare, 0x80, 0, 0), EPERM);
			EXPECT("clone(CLONE_NEWNET)", probe(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0), EPERM);
			EXPECT("clone3", probe(SYS_clone3, (unsigned long)&ca, sizeof(ca), 0), ENOSYS);
			EXPECT("setns", probe(SYS_setns, 0, 0, 0), EPERM);
		} else {
			EXPECT("unshare(CLONE_NEWUSER)", probe(SYS_unshare, CLONE_NEWUSER, 0, 0), 0);
		}
		_exit(bad);
	}
	isd_seccomp_program_free(&prog);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) < 100, "%s: child status 0x%x", profile, status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void test_installed(void)
{
	struct isd_seccomp_program prog;

	CHECK(run_under(PROFILES "/default.json", false) == 0, "default profile behaviour");
	CHECK(run_under(PROFILES "/nested.json", true) == 0, "nested profile behaviour");

	CHECK(isd_seccomp_prepare("unconfined", &prog) == 0 && prog.unconfined && !prog.filter &&
		      !prog.profile_path, "unconfined");
	CHECK(isd_seccomp_install(&prog) == 0, "unconfined install is a no-op");
	isd_seccomp_program_free(&prog);
}

/* ---- the cache ---- */

static int count_files(const char *dir)
{
	_cleanup_free_ char *cmd = isd_xasprintf("ls -A '%s' 2>/dev/null | wc -l", dir);
	FILE *f = popen(cmd, "r");
	int n = -1;
	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		pclose(f);
	}
	return n;
}

static bool same_filter(const struct isd_seccomp_program *a, const struct isd_seccomp_program *b)
{
	return a->len == b->len && a->len && !memcmp(a->filter, b->filter, a->len * sizeof(*a->filter));
}

static void test_cache(const char *tmp)
{
	_cleanup_free_ char *profile = isd_xasprintf("%s/p.json", tmp), *profile2 = NULL;
	_cleanup_free_ char *cdir = isd_xasprintf("%s/run2/isd/seccomp", tmp), *cfile = NULL, *cfile2 = NULL;
	_cleanup_free_ char *run = isd_xasprintf("%s/run2", tmp), *home_cache = isd_xasprintf("%s/cache2", tmp);
	_cleanup_free_ char *buf = NULL;
	struct isd_seccomp_program first, prog;
	struct stat st;
	size_t len;
	int fd;

	CHECK(mkdir(run, 0700) == 0, "runtime dir");
	setenv("XDG_RUNTIME_DIR", run, 1);
	setenv("XDG_CACHE_HOME", home_cache, 1);
	CHECK(count_files(cdir) == 0, "fresh cache dir");
	buf = slurp(FIXTURES "/default.json", &len);
	CHECK(isd_write_file_at(AT_FDCWD, profile, buf, O_CREAT | O_TRUNC, 0644) == 0, "write profile");
	CHECK(isd_seccomp_cache_path(buf, len, &cfile) == 0 && !strncmp(cfile, cdir, strlen(cdir)), "cache path");

	CHECK(isd_seccomp_prepare(profile, &first) == 0 && !first.from_cache, "compiled: %s", isd_error_message());
	CHECK(first.profile_path && !strcmp(first.profile_path, profile), "profile_path");
	CHECK(stat(cfile, &st) == 0 && (st.st_mode & 0777) == 0600, "cache file 0600");
	CHECK(stat(cdir, &st) == 0 && (st.st_mode & 0777) == 0700, "cache dir 0700");
	CHECK(count_files(cdir) == 1, "one file, no temporaries left");
	/* not in $XDG_CACHE_HOME, where every -v $HOME:$HOME reaches it */
	CHECK(access(home_cache, F_OK) < 0, "nothing under XDG_CACHE_HOME");

	CHECK(isd_seccomp_prepare(profile, &prog) == 0 && prog.from_cache, "second time from cache");
	CHECK(same_filter(&first, &prog), "cached filter identical");
	isd_seccomp_program_free(&prog);

	/* one flipped bit in the BPF (the file's last byte) */
	CHECK(stat(cfile, &st) == 0, "stat");
	fd = open(cfile, O_RDWR);
	if (fd >= 0) {
		unsigned char b;
		CHECK(pread(fd, &b, 1, st.st_size - 1) == 1, "read");
		b ^= 0x10;
		CHECK(pwrite(fd, &b, 1, st.st_size - 1) == 1, "write");
		close(fd);
	}
	CHECK(isd_seccomp_prepare(profile, &prog) == 0 && !prog.from_cache, "corrupt BPF recompiled");
	CHECK(same_filter(&first, &prog), "recompiled filter identical");
	isd_seccomp_program_free(&prog);
	CHECK(isd_seccomp_prepare(profile, &prog) == 0 && prog.from_cache, "rewritten after corruption");
	isd_seccomp_program_free(&prog);

	/* truncated, then garbage */
	CHECK(truncate(cfile, 100) == 0, "truncate");
	CHECK(isd_seccomp_prepare(profile, &prog) == 0 && !prog.from_cache && same_filter(&first, &prog),
	      "truncated cache recompiled");
	isd_seccomp_program_free(&prog);
	CHECK(isd_write_file_at(AT_FDCWD, cfile, "garbage", O_TRUNC, 0600) == 0, "garbage");
	CHECK(isd_seccomp_prepare(profile, &prog) == 0 && !prog.from_cache && same_filter(&first, &prog),
	      "garbage cache recompiled");
	isd_seccomp_program_free(&prog);

	/* A valid cache file of another profile under this profile's name
	 * (a hash collision, or a planted file): the key comparison rejects it. */
	profile2 = isd_xasprintf("%s/p2.json", tmp);
	{
		_cleanup_free_ char *buf2 = isd_xasprintf("%s\n", buf);
		CHECK(isd_write_file_at(AT_FDCWD, profile2, buf2, O_CREAT | O_TRUNC, 0644) == 0, "write p2");
		CHECK(isd_seccomp_cache_path(buf2, len + 1, &cfile2) == 0 && strcmp(cfile, cfile2), "distinct key");
	}
	CHECK(isd_seccomp_prepare(profile2, &prog) == 0 && !prog.from_cache, "p2 compiled");
	isd_seccomp_program_free(&prog);
	CHECK(isd_seccomp_prepare(profile, &prog) == 0 && prog.from_cache, "p cached");
	isd_seccomp_program_free(&prog);
	CHECK(rename(cfile2, cfile) == 0, "plant");
	CHECK(isd_seccomp_prepare(profile, &prog) == 0 && !prog.from_cache, "foreign key rejected");
	isd_seccomp_program_free(&prog);

	/* a file someone else owns is not trusted */
	if (geteuid() == 0) {
		CHECK(isd_seccomp_prepare(profile, &prog) == 0 && prog.from_cache, "p cached again");
		isd_seccomp_program_free(&prog);
		CHECK(chown(cfile, 65534, 65534) == 0, "chown");
		CHECK(isd_seccomp_prepare(profile, &prog) == 0 && !prog.from_cache, "foreign owner ignored");
		isd_seccomp_program_free(&prog);
	}

	/* a runtime directory others can write to is not used */
	CHECK(isd_seccomp_prepare(profile, &prog) == 0, "recompiled");
	isd_seccomp_program_free(&prog);
	CHECK(isd_seccomp_prepare(profile, &prog) == 0 && prog.from_cache, "cached");
	isd_seccomp_program_free(&prog);
	CHECK(chmod(run, 0777) == 0, "chmod");
	CHECK(isd_seccomp_prepare(profile, &prog) == 0 && !prog.from_cache, "shared runtime dir ignored");
	isd_seccomp_program_free(&prog);
	CHECK(chmod(run, 0700) == 0, "chmod back");

	/* an unusable or missing runtime directory: the cache home's
	 * isd/bpf (the shared-runtime-dir start above compiled into it) */
	setenv("XDG_RUNTIME_DIR", "/dev/null/run", 1);
	CHECK(isd_seccomp_prepare(profile, &prog) == 0 && prog.from_cache && same_filter(&first, &prog),
	      "cache home: %s", isd_error_message());
	isd_seccomp_program_free(&prog);
	free(cfile2);
	cfile2 = NULL;
	CHECK(isd_seccomp_cache_path(buf, len, &cfile2) == 0 && strstr(cfile2, "/isd/bpf/") &&
		      !strncmp(cfile2, home_cache, strlen(home_cache)), "cache home path");
	unsetenv("XDG_RUNTIME_DIR");
	CHECK(isd_seccomp_prepare(profile, &prog) == 0 && prog.from_cache, "no runtime dir: cache home");
	isd_seccomp_program_free(&prog);
	/* ... but not through a directory others can write */
	{
		_cleanup_free_ char *bpf = isd_xasprintf("%s/isd/bpf", home_cache);
		CHECK(chmod(bpf, 0770) == 0, "chmod");
		CHECK(isd_seccomp_prepare(profile, &prog) == 0 && !prog.from_cache && same_filter(&first, &prog),
		      "group-writable cache home ignored");
		isd_seccomp_program_free(&prog);
		CHECK(chmod(bpf, 0700) == 0, "chmod back");
	}
	/* nor with no cache home at all: compiled, no error */
	{
		_cleanup_free_ char *home = getenv("HOME") ? isd_xstrdup(getenv("HOME")) : NULL;
		unsetenv("XDG_CACHE_HOME");
		setenv("HOME", "/dev/null/home", 1);
		CHECK(isd_seccomp_prepare(profile, &prog) == 0 && !prog.from_cache && same_filter(&first, &prog),
		      "no cache: %s", isd_error_message());
		isd_seccomp_program_free(&prog);
		if (home)
			setenv("HOME", home, 1);
		else
			unsetenv("HOME");
	}

	isd_seccomp_program_free(&first);
	setenv_path("XDG_CACHE_HOME", tmp, "cache");
}

/* ---- names and paths ---- */

static void test_resolve(const char *tmp)
{
	_cleanup_free_ char *dir = isd_xasprintf("%s/config/isd/seccomp-profiles", tmp);
	_cleanup_free_ char *mine = isd_xasprintf("%s/mine.json", dir), *cmd = NULL;
	char *path = NULL;
	struct isd_seccomp_program prog;

	setenv_path("XDG_CONFIG_HOME", tmp, "config");
	cmd = isd_xasprintf("mkdir -p '%s' && cp '%s/example.json' '%s'", dir, FIXTURES, mine);
	CHECK(system(cmd) == 0, "%s", cmd);

	CHECK(isd_seccomp_resolve("mine", &path) == 0 && !strcmp(path, mine), "user profile: %s", path);
	free(path);
	path = NULL;
	CHECK(isd_seccomp_resolve("nested", &path) == 0 && strstr(path, "/nested.json"), "shipped profile");
	free(path);
	path = NULL;

	isd_error_clear();
	CHECK(isd_seccomp_resolve("nope", &path) == -ENOENT, "missing");
	CHECK(strstr(isd_error_message(), "seccomp profile \"nope\" not found") &&
		      strstr(isd_error_message(), dir) && strstr(isd_error_message(), "/etc/isd/seccomp-profiles") &&
		      strstr(isd_error_message(), ISD_SECCOMP_PROFILES_DIR),
	      "lists where it looked: %s", isd_error_message());
	CHECK(isd_seccomp_resolve("p.json", &path) < 0 && strstr(isd_error_message(), "./p.json"), "hint");
	CHECK(isd_seccomp_resolve("a b", &path) < 0 && strstr(isd_error_message(), "not valid"), "bad name");
	CHECK(isd_seccomp_resolve("./no/such.json", &path) == -ENOENT, "path");

	CHECK(isd_seccomp_prepare("mine", &prog) == 0 && !strcmp(prog.name, "mine") &&
		      !strcmp(prog.profile_path, mine) && prog.filter && !prog.unconfined, "prepare by name");
	isd_seccomp_program_free(&prog);
	CHECK(isd_seccomp_prepare(NULL, &prog) == 0 && !strcmp(prog.name, "default") && prog.filter,
	      "NULL is default");
	isd_seccomp_program_free(&prog);
	CHECK(isd_seccomp_prepare("nope", &prog) < 0 && !prog.name && !prog.filter, "failure leaves it empty");
}

/* ---- `isd seccomp check` ---- */

static int run_main(char *const *argv, char **output)
{
	char tmpl[] = "/tmp/isd-seccomp-out.XXXXXX";
	int fd = mkstemp(tmpl), saved = dup(STDOUT_FILENO), rc, argc = 0;
	size_t len;

	while (argv[argc])
		argc++;
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	rc = isd_seccomp_main(argc, (char **)argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(fd);
	*output = slurp(tmpl, &len);
	unlink(tmpl);
	return rc;
}

static void test_check_command(const char *tmp)
{
	_cleanup_free_ char *bad = isd_xasprintf("%s/bad.json", tmp), *out = NULL;
	int rc;

	rc = run_main((char *[]){ "seccomp", "check", "default", NULL }, &out);
	CHECK(rc == 0 && strstr(out, "default action: ERRNO(ENOSYS)") && strstr(out, "mount=ERRNO(EPERM)") &&
		      strstr(out, "clone3=ERRNO(ENOSYS)") && !strstr(out, "warning"),
	      "check default: rc %d\n%s", rc, out);
	free(out);
	rc = run_main((char *[]){ "seccomp", "check", "--json", FIXTURES "/default.json", NULL }, &out);
	{
		struct json_object *o = json_tokener_parse(out), *v, *sys;
		CHECK(rc == 0 && o, "check --json: rc %d\n%.400s", rc, out);
		CHECK(o && json_object_object_get_ex(o, "valid", &v) && json_object_get_boolean(v), "valid");
		CHECK(o && json_object_object_get_ex(o, "filterArchitectures", &v) &&
			      json_object_array_length(v) == 3, "3 arches");
		CHECK(o && json_object_object_get_ex(o, "syscalls", &sys) &&
			      json_object_object_get_ex(sys, "clone3", &v) &&
			      !strcmp(json_object_get_string(v), "ERRNO(ENOSYS)"), "clone3 in json");
		CHECK(o && json_object_object_get_ex(sys, "clone", &v) &&
			      json_object_object_get_ex(v, "conditional", &v) && json_object_array_length(v) == 1,
		      "clone conditional in json");
		json_object_put(o);
	}
	free(out);
	rc = run_main((char *[]){ "seccomp", "check", "--pfc", PROFILES "/default.json", NULL }, &out);
	CHECK(rc == 0 && strstr(out, "filter for syscall \"mount\"") && strstr(out, "action ERRNO(1);"),
	      "check --pfc: rc %d", rc);
	free(out);
	CHECK(isd_write_file_at(AT_FDCWD, bad, "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{}]}",
				O_CREAT | O_TRUNC, 0644) == 0, "write bad");
	rc = run_main((char *[]){ "seccomp", "check", bad, NULL }, &out);
	CHECK(rc == ISD_EXIT_FAILURE && strstr(isd_error_message(), "syscalls[0]: missing \"names\""),
	      "check bad: rc %d, %s", rc, isd_error_message());
	free(out);
	rc = run_main((char *[]){ "seccomp", "frobnicate", NULL }, &out);
	CHECK(rc == ISD_EXIT_FAILURE, "unknown subcommand");
	free(out);
	out = NULL;
}

int main(void)
{
	char tmpl[] = "/tmp/isd-test-seccomp.XXXXXX";
	char *tmp = mkdtemp(tmpl);
	_cleanup_free_ char *cmd = NULL;

	if (!tmp) {
		perror("mkdtemp");
		return 2;
	}
	/* keep the user's real cache and config out of it */
	setenv_path("XDG_CACHE_HOME", tmp, "cache");
	setenv_path("XDG_CONFIG_HOME", tmp, "config");
	unsetenv("XDG_RUNTIME_DIR");

	test_docker_fixtures();
	test_malformed();
	test_lenient_parts();
	test_default_profile();
	test_installed();
	test_cache(tmp);
	test_resolve(tmp);
	test_check_command(tmp);

	cmd = isd_xasprintf("rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", tmp);
	if (failures) {
		fprintf(stderr, "test-seccomp: %d failure(s)\n", failures);
		return 1;
	}
	printf("test-seccomp: all passed\n");
	return 0;
}
