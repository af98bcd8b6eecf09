/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The names a seccomp profile uses: architectures (libseccomp's SCMP_ARCH_*
 * in "architectures"/"archMap", Go's GOARCH in includes/excludes), actions
 * and comparison operators.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isd/seccomp.h"
#include "seccomp-internal.h"
#include "isd/util.h"

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
/* Architectures: Docker uses libseccomp's SCMP_ARCH_* names in
 * "architectures"/"archMap" and Go's GOARCH names in includes/excludes. */

#ifndef SCMP_ARCH_LOONGARCH64
#define SCMP_ARCH_LOONGARCH64 0
#endif
#ifndef SCMP_ARCH_M68K
#define SCMP_ARCH_M68K 0
#endif
#ifndef SCMP_ARCH_SH
#define SCMP_ARCH_SH 0
#endif
#ifndef SCMP_ARCH_SHEB
#define SCMP_ARCH_SHEB 0
#endif


static const struct arch_info arch_table[] = {
	{ "SCMP_ARCH_X86_64", { "x86_64", "amd64" }, SCMP_ARCH_X86_64, { SCMP_ARCH_X86, SCMP_ARCH_X32 } },
	{ "SCMP_ARCH_X86", { "x86", "386", "i386", "i686" }, SCMP_ARCH_X86, { 0 } },
	{ "SCMP_ARCH_X32", { "x32" }, SCMP_ARCH_X32, { 0 } },
	{ "SCMP_ARCH_AARCH64", { "aarch64", "arm64" }, SCMP_ARCH_AARCH64, { SCMP_ARCH_ARM } },
	{ "SCMP_ARCH_ARM", { "arm" }, SCMP_ARCH_ARM, { 0 } },
	{ "SCMP_ARCH_MIPS", { "mips" }, SCMP_ARCH_MIPS, { 0 } },
	{ "SCMP_ARCH_MIPS64", { "mips64" }, SCMP_ARCH_MIPS64, { SCMP_ARCH_MIPS, SCMP_ARCH_MIPS64N32 } },
	{ "SCMP_ARCH_MIPS64N32", { "mips64n32" }, SCMP_ARCH_MIPS64N32, { SCMP_ARCH_MIPS, SCMP_ARCH_MIPS64 } },
	{ "SCMP_ARCH_MIPSEL", { "mipsel", "mipsle" }, SCMP_ARCH_MIPSEL, { 0 } },
	{ "SCMP_ARCH_MIPSEL64", { "mipsel64", "mips64le" }, SCMP_ARCH_MIPSEL64, { SCMP_ARCH_MIPSEL, SCMP_ARCH_MIPSEL64N32 } },
	{ "SCMP_ARCH_MIPSEL64N32", { "mipsel64n32", "mips64len32" }, SCMP_ARCH_MIPSEL64N32, { SCMP_ARCH_MIPSEL, SCMP_ARCH_MIPSEL64 } },
	{ "SCMP_ARCH_PPC", { "ppc" }, SCMP_ARCH_PPC, { 0 } },
	{ "SCMP_ARCH_PPC64", { "ppc64" }, SCMP_ARCH_PPC64, { SCMP_ARCH_PPC } },
	{ "SCMP_ARCH_PPC64LE", { "ppc64le" }, SCMP_ARCH_PPC64LE, { 0 } },
	{ "SCMP_ARCH_S390", { "s390" }, SCMP_ARCH_S390, { 0 } },
	{ "SCMP_ARCH_S390X", { "s390x" }, SCMP_ARCH_S390X, { SCMP_ARCH_S390 } },
	{ "SCMP_ARCH_PARISC", { "parisc" }, SCMP_ARCH_PARISC, { 0 } },
	{ "SCMP_ARCH_PARISC64", { "parisc64" }, SCMP_ARCH_PARISC64, { SCMP_ARCH_PARISC } },
	{ "SCMP_ARCH_RISCV64", { "riscv64" }, SCMP_ARCH_RISCV64, { 0 } },
	{ "SCMP_ARCH_LOONGARCH64", { "loong64", "loongarch64" }, SCMP_ARCH_LOONGARCH64, { 0 } },
	{ "SCMP_ARCH_M68K", { "m68k" }, SCMP_ARCH_M68K, { 0 } },
	{ "SCMP_ARCH_SH", { "sh" }, SCMP_ARCH_SH, { 0 } },
	{ "SCMP_ARCH_SHEB", { "sheb" }, SCMP_ARCH_SHEB, { 0 } },
};
#define N_ARCHES (sizeof(arch_table) / sizeof(arch_table[0]))

const struct arch_info *isd_seccomp_arch_by_name(const char *name)
{
	for (size_t i = 0; i < N_ARCHES; i++) {
		if (!strcmp(arch_table[i].scmp_name, name))
			return &arch_table[i];
		for (size_t j = 0; j < 4 && arch_table[i].aliases[j]; j++)
			if (!strcmp(arch_table[i].aliases[j], name))
				return &arch_table[i];
	}
	return NULL;
}

const struct arch_info *isd_seccomp_arch_by_token(uint32_t token)
{
	for (size_t i = 0; token && i < N_ARCHES; i++)
		if (arch_table[i].token == token)
			return &arch_table[i];
	return NULL;
}

const char *isd_seccomp_arch_label(uint32_t token)
{
	const struct arch_info *a = isd_seccomp_arch_by_token(token);
	return a ? a->aliases[0] : "unknown";
}

/* ------------------------------------------------------------------ */
/* Actions and operators */

const char *isd_seccomp_action_str(uint32_t action, char *buf, size_t size)
{
	uint32_t data = action & 0xffffu;
	const char *e;

	switch (action & 0xffff0000u) {
	case SCMP_ACT_ALLOW:
		return "ALLOW";
	case SCMP_ACT_KILL_PROCESS:
		return "KILL_PROCESS";
	case SCMP_ACT_KILL_THREAD:
		return "KILL_THREAD";
	case SCMP_ACT_TRAP:
		return "TRAP";
	case SCMP_ACT_LOG:
		return "LOG";
	case SCMP_ACT_ERRNO(0):
		e = strerrorname_np((int)data);
		if (e)
			snprintf(buf, size, "ERRNO(%s)", e);
		else
			snprintf(buf, size, "ERRNO(%" PRIu32 ")", data);
		return buf;
	case SCMP_ACT_TRACE(0):
		snprintf(buf, size, "TRACE(%" PRIu32 ")", data);
		return buf;
	default:
		snprintf(buf, size, "0x%08" PRIx32, action);
		return buf;
	}
}

static const struct {
	const char *name;
	enum scmp_compare op;
} op_table[] = {
	{ "SCMP_CMP_NE", SCMP_CMP_NE },	      { "SCMP_CMP_LT", SCMP_CMP_LT },
	{ "SCMP_CMP_LE", SCMP_CMP_LE },	      { "SCMP_CMP_EQ", SCMP_CMP_EQ },
	{ "SCMP_CMP_GE", SCMP_CMP_GE },	      { "SCMP_CMP_GT", SCMP_CMP_GT },
	{ "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

const char *isd_seccomp_op_name(int op)
{
	for (size_t i = 0; i < sizeof(op_table) / sizeof(op_table[0]); i++)
		if ((int)op_table[i].op == op)
			return op_table[i].name;
	return "?";
}

int isd_seccomp_op_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(op_table) / sizeof(op_table[0]); i++)
		if (!strcmp(name, op_table[i].name))
			return (int)op_table[i].op;
	return -1;
}
