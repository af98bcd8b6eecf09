/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: seccomp profiles from memory.  Whatever the bytes, the
 * parser must either accept them or record one message, and an accepted
 * profile must compile with libseccomp (or fail cleanly) and describe
 * itself, without leaks or undefined behaviour.
 */
#include "isd/seccomp.h"
#include "isd/util.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Compiling thousands of rules is libseccomp's speed, not ours. */
#define MAX_NAMES_TO_BUILD 512

static void same_verdicts(const struct isd_seccomp_profile *p, const struct sock_filter *prog, unsigned short n_prog,
			  const struct sock_filter *whole, unsigned short n_whole)
{
	for (size_t i = 0; i < p->n_rules; i++)
		for (size_t j = 0; j < p->rules[i].n_names; j++)
			for (size_t k = 0; k <= p->rules[i].n_conds; k++) {
				uint32_t arch = p->arches[0];
				struct seccomp_data d = { .nr = p->rules[i].nrs[j], .arch = arch };
				unsigned s;
				bool c;
				if (k < p->rules[i].n_conds)
					d.args[p->rules[i].conds[k].index] = p->rules[i].conds[k].value_two;
				if (isd_seccomp_bpf_run(prog, n_prog, &d, &s, &c) !=
				    isd_seccomp_bpf_run(whole, n_whole, &d, &s, &c))
					abort();
			}
}

static void exercise(const uint8_t *data, size_t size, const struct isd_seccomp_target *t)
{
	struct isd_seccomp_profile *p = NULL;
	size_t names = 0;
	void *ctx = NULL;
	char *json = NULL;
	int r;

	isd_error_clear();
	r = isd_seccomp_parse_buffer((const char *)data, size, "fuzz.json", t, &p);
	if (r < 0) {
		/* a failure always says why */
		if (!p && isd_error_message()[0] == '\0')
			abort();
		return;
	}
	for (size_t i = 0; i < p->n_rules; i++)
		names += p->rules[i].n_names;
	if (names <= MAX_NAMES_TO_BUILD && isd_seccomp_build(p, &ctx) == 0) {
		struct sock_filter *filter = NULL;
		unsigned short len = 0;
		struct sock_filter *prog = NULL;
		unsigned short n_prog = 0;
		if (isd_seccomp_export(ctx, &filter, &len) == 0 && (len == 0 || !filter))
			abort();
		/* the fast path decides as the whole filter does */
		if (filter && isd_seccomp_compile(p, &prog, &n_prog) == 0)
			same_verdicts(p, prog, n_prog, filter, len);
		free(prog);
		free(filter);
		isd_seccomp_ctx_free(ctx);
	}
	isd_seccomp_describe_json(p, &json);
	free(json);
	isd_seccomp_profile_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct isd_seccomp_target x86_64 = { SCMP_ARCH_X86_64, "6.1.0-13-amd64" };
	static const struct isd_seccomp_target aarch64 = { SCMP_ARCH_AARCH64, "4.4.0" };

	exercise(data, size, &x86_64);
	/* includes/excludes by arch and minKernel take the other branches */
	exercise(data, size, &aarch64);
	return 0;
}
