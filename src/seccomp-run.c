/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seccomp, part four: a classic-BPF interpreter for the instructions the
 * kernel accepts in a seccomp filter, so that `isd seccomp check` and the
 * tests can say how long a syscall's path through the installed program
 * is and that the fast path decides exactly as the whole filter does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isd/seccomp.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>

int64_t isd_seccomp_bpf_run(const struct sock_filter *f, unsigned len, const void *data,
			    unsigned *steps, bool *constant)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	unsigned pc = 0, n = 0;

	*constant = true;
	while (pc < len) {
		const struct sock_filter *in = &f[pc++];
		uint32_t k = in->k, src = BPF_SRC(in->code) == BPF_X ? x : k;

		n++;
		switch (BPF_CLASS(in->code)) {
		case BPF_LD:
		case BPF_LDX: {
			uint32_t *dst = BPF_CLASS(in->code) == BPF_LD ? &a : &x;
			/* the kernel's cache follows absolute loads of nr and
			 * arch only */
			if (in->code != (BPF_LD | BPF_W | BPF_ABS))
				*constant = false;
			if (BPF_MODE(in->code) == BPF_ABS && BPF_SIZE(in->code) == BPF_W) {
				if (k % 4 || k > sizeof(struct seccomp_data) - 4)
					return -EINVAL;
				memcpy(dst, (const char *)data + k, 4);
				*constant &= k == offsetof(struct seccomp_data, nr) ||
					     k == offsetof(struct seccomp_data, arch);
			} else if (BPF_MODE(in->code) == BPF_IMM) {
				*dst = k;
			} else if (BPF_MODE(in->code) == BPF_MEM && k < BPF_MEMWORDS) {
				*dst = mem[k];
			} else if (BPF_MODE(in->code) == BPF_LEN) {
				*dst = sizeof(struct seccomp_data);
			} else {
				return -EINVAL;
			}
			break;
		}
		case BPF_ST:
		case BPF_STX:
			*constant = false;
			if (k >= BPF_MEMWORDS)
				return -EINVAL;
			mem[k] = BPF_CLASS(in->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			*constant &= BPF_OP(in->code) == BPF_AND && BPF_SRC(in->code) == BPF_K;
			switch (BPF_OP(in->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV: if (!src) return 0; a /= src; break;
			case BPF_MOD: if (!src) return 0; a %= src; break;
			case BPF_AND: a &= src; break;
			case BPF_OR: a |= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: return -EINVAL;
			}
			break;
		case BPF_JMP: {
			bool t;
			*constant &= BPF_SRC(in->code) == BPF_K;
			switch (BPF_OP(in->code)) {
			case BPF_JA:
				if (k >= len - pc)
					return -EINVAL;
				pc += k;
				continue;
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = (a & src) != 0; break;
			default: return -EINVAL;
			}
			if ((unsigned)(t ? in->jt : in->jf) >= len - pc)
				return -EINVAL;
			pc += t ? in->jt : in->jf;
			break;
		}
		case BPF_RET:
			*steps = n;
			if (BPF_RVAL(in->code) == BPF_A)
				*constant = false;
			return BPF_RVAL(in->code) == BPF_A ? a : k;
		case BPF_MISC:
			*constant = false;
			if (BPF_MISCOP(in->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return -EINVAL;
		}
	}
	return -EINVAL;
}
