/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The program isd installs (isd_seccomp_compile): argument-checked
 * syscalls are decided on a short path, and the program decides every
 * syscall, architecture and argument the way the whole libseccomp filter
 * alone does, with the same syscalls left to the kernel's action cache.
 * Run through the BPF interpreter (isd_seccomp_bpf_run), whose verdicts
 * are checked against the kernel's on the installed filter first.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isd/seccomp.h"
#include "isd/util.h"
#include "check.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROFILES ISD_SOURCE_SECCOMP_PROFILES_DIR
#define FIXTURES ISD_SOURCE_SECCOMP_PROFILES_DIR "/../tests/seccomp/docker"


struct progs {
	struct isd_seccomp_profile *p;
	struct sock_filter *prog, *whole; /* installed; libseccomp's alone */
	unsigned short n_prog, n_whole;
};

static bool load(const char *path, struct progs *out)
{
	_cleanup_free_ char *buf = NULL;
	void *ctx = NULL;
	size_t len;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = isd_seccomp_read_profile(path, &buf, &len)) >= 0 &&
	    (r = isd_seccomp_parse_buffer(buf, len, path, NULL, &out->p)) >= 0 &&
	    (r = isd_seccomp_build(out->p, &ctx)) >= 0 &&
	    (r = isd_seccomp_export(ctx, &out->whole, &out->n_whole)) >= 0)
		r = isd_seccomp_compile(out->p, &out->prog, &out->n_prog);
	isd_seccomp_ctx_free(ctx);
	CHECKF(r >= 0, "%s: %s", path, isd_error_message());
	return r >= 0;
}

static void progs_free(struct progs *pr)
{
	isd_seccomp_profile_free(pr->p);
	free(pr->prog);
	free(pr->whole);
}

static int64_t run(const struct sock_filter *f, unsigned short n, const struct seccomp_data *d,
		   unsigned *steps, bool *constant)
{
	unsigned s = 0;
	bool c = false;
	int64_t r = isd_seccomp_bpf_run(f, n, d, steps ? steps : &s, constant ? constant : &c);

	CHECKF(r >= 0, "program refused by the interpreter (nr %d)", d->nr);
	return r;
}

static unsigned steps_for(const struct sock_filter *f, unsigned short n, int nr, uint64_t a1)
{
	struct seccomp_data d = { .nr = nr, .arch = seccomp_arch_native(), .args = { 0, a1 } };
	unsigned s = 0;

	run(f, n, &d, &s, NULL);
	return s;
}

/* The interpreter's verdict is the kernel's: TIOCSTI refused, TCGETS on a
 * bad descriptor reaching the kernel, with the installed program. */
static void test_interpreter_is_the_kernel(const struct progs *pr)
{
	struct seccomp_data d = { .nr = SYS_ioctl, .arch = seccomp_arch_native(), .args = { 0, TIOCSTI } };
	struct sock_fprog fp = { pr->n_prog, pr->prog };
	int status = 0;
	pid_t pid;

	CHECKF(run(pr->prog, pr->n_prog, &d, NULL, NULL) == SCMP_ACT_ERRNO(EPERM), "TIOCSTI");
	d.args[1] = TCGETS;
	CHECKF(run(pr->prog, pr->n_prog, &d, NULL, NULL) == SCMP_ACT_ALLOW, "TCGETS");
	pid = fork();
	if (pid == 0) {
		char c = 'x';
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) < 0)
			_exit(10);
		if (ioctl(-1, TIOCSTI, &c) != -1 || errno != EPERM)
			_exit(11);
		if (ioctl(-1, TCGETS, NULL) != -1 || errno != EBADF)
			_exit(12);
		_exit(0);
	}
	CHECKF(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the installed program in a child: status 0x%x", status);
}

/* The ordering property: the argument-checked calls a build and an agent
 * make most take a shorter path than libseccomp's tree alone gives. */
static void test_short_paths(const struct progs *pr)
{
	static const struct { const char *name; uint64_t a1; } hot[] = {
		{ "ioctl", TCGETS }, { "ioctl", TIOCSTI }, { "openat", O_RDONLY }, { "open", O_RDONLY },
	};

	for (size_t i = 0; i < sizeof(hot) / sizeof(hot[0]); i++) {
		int nr = seccomp_syscall_resolve_name(hot[i].name);
		unsigned fast = steps_for(pr->prog, pr->n_prog, nr, hot[i].a1);
		unsigned slow = steps_for(pr->whole, pr->n_whole, nr, hot[i].a1);
		CHECKF(fast + 3 <= slow, "%s(_, 0x%llx): %u instructions, libseccomp's tree alone %u", hot[i].name,
		      (unsigned long long)hot[i].a1, fast, slow);
	}
}

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s ^ (*s >> 29);
}

/* What one argument can be compared against: each condition's values,
 * their neighbours and the other half of the word. */
static size_t candidates(const struct isd_seccomp_profile *p, unsigned idx, uint64_t *out, size_t cap)
{
	size_t n = 0;

	out[n++] = 0;
	out[n++] = ~0ULL;
	for (size_t i = 0; i < p->n_rules; i++)
		for (size_t k = 0; k < p->rules[i].n_conds && n + 6 <= cap; k++) {
			const struct isd_seccomp_cond *c = &p->rules[i].conds[k];
			if (c->index != idx)
				continue;
			out[n++] = c->value;
			out[n++] = c->value_two;
			out[n++] = c->value_two + 1;
			out[n++] = c->value_two - 1;
			out[n++] = c->value_two | ~c->value;
			out[n++] = c->value | 0x100000000ULL;
		}
	return n;
}

/* Every syscall number on every ABI the kernel can report, with arguments
 * at the boundaries of every condition: the same action as the whole
 * filter, and the same syscalls the kernel's cache may skip. */
static void test_same_policy(const char *path)
{
	static uint64_t cand[6][512];
	size_t n_cand[6];
	uint32_t arches[] = { seccomp_arch_native(), AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64, 0x12345678 };
	uint64_t seed = 42;
	struct progs pr;
	size_t cases = 0, differ = 0, cache_differ = 0;

	if (!load(path, &pr))
		return;
	for (unsigned a = 0; a < 6; a++)
		n_cand[a] = candidates(pr.p, a, cand[a], 512);
	for (size_t ai = 0; ai < sizeof(arches) / sizeof(arches[0]); ai++)
		for (uint32_t x32 = 0; x32 <= 0x40000000u; x32 += 0x40000000u)
			for (uint32_t nr = 0; nr < 600; nr++) {
				struct seccomp_data d = { .nr = (int)(nr | x32), .arch = arches[ai] };
				bool c1, c2;
				int64_t r1 = run(pr.prog, pr.n_prog, &d, NULL, &c1);
				int64_t r2 = run(pr.whole, pr.n_whole, &d, NULL, &c2);

				cases++;
				differ += r1 != r2;
				cache_differ += (c1 && r1 == SCMP_ACT_ALLOW) != (c2 && r2 == SCMP_ACT_ALLOW);
				for (int k = 0; k < 64; k++) {
					for (unsigned i = 0; i < 6; i++)
						d.args[i] = cand[i][lcg(&seed) % n_cand[i]];
					r1 = run(pr.prog, pr.n_prog, &d, NULL, NULL);
					r2 = run(pr.whole, pr.n_whole, &d, NULL, NULL);
					cases++;
					if (r1 != r2 && differ++ < 5)
						fprintf(stderr, "nr %d arch 0x%x a0 0x%llx a1 0x%llx a2 0x%llx: 0x%llx, whole 0x%llx\n",
							d.nr, d.arch, (unsigned long long)d.args[0],
							(unsigned long long)d.args[1], (unsigned long long)d.args[2],
							(long long)r1, (long long)r2);
				}
			}
	CHECKF(differ == 0, "%s: %zu of %zu cases decided otherwise than by the whole filter", path, differ, cases);
	CHECKF(cache_differ == 0, "%s: %zu syscalls cached differently", path, cache_differ);
	progs_free(&pr);
}

int main(void)
{
	struct progs pr;

	if (load(PROFILES "/default.json", &pr)) {
		CHECKF(pr.n_prog > pr.n_whole, "a fast path in front: %u vs %u", pr.n_prog, pr.n_whole);
		test_interpreter_is_the_kernel(&pr);
		test_short_paths(&pr);
		progs_free(&pr);
	}
	test_same_policy(PROFILES "/default.json");
	test_same_policy(PROFILES "/nested.json");
	test_same_policy(PROFILES "/build.json");
	test_same_policy(FIXTURES "/default.json");
	test_same_policy(FIXTURES "/example.json");
	return check_result();
}
