/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * LD_PRELOAD shim for Debian's user-mode Linux 6.1 on hosts with a large
 * XSAVE area (AMX, AVX-512 with PKRU, ...).  UML restores a guest's FPU
 * state with PTRACE_SETREGSET NT_X86_XSTATE and a buffer of its own fixed
 * size (x87, SSE, AVX: 832 bytes), but the host kernel accepts only a
 * buffer of exactly its full XSAVE size and answers EFAULT otherwise, so
 * the guest's init dies at once ("ptrace set fp regs failed, errno = 14").
 * Here the short buffer is laid over the task's whole current state and
 * that is written back: the components UML knows get UML's values, the
 * ones it does not know keep what the task had, which is what a host of
 * UML's own size would give.  Every other request goes to glibc unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

long ptrace(enum __ptrace_request req, ...)
{
	static long (*real)(enum __ptrace_request, ...);
	/* The largest XSAVE area today (AMX) is about 11 KiB. */
	static _Thread_local unsigned char whole_state[64 * 1024] __attribute__((aligned(64)));
	va_list ap;
	pid_t pid;
	void *addr, *data;

	va_start(ap, req);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);
	if (req == PTRACE_SETREGSET && (unsigned long)addr == NT_X86_XSTATE) {
		struct iovec *given = data;
		struct iovec whole = {.iov_base = whole_state, .iov_len = sizeof(whole_state)};

		if (syscall(SYS_ptrace, PTRACE_GETREGSET, pid, addr, &whole) == 0 && whole.iov_len > given->iov_len) {
			memcpy(whole_state, given->iov_base, given->iov_len);
			return syscall(SYS_ptrace, PTRACE_SETREGSET, pid, addr, &whole);
		}
	}
	if (!real)
		real = (long (*)(enum __ptrace_request, ...))dlsym(RTLD_NEXT, "ptrace");
	return real(req, pid, addr, data);
}
