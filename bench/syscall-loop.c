/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Times N calls of a cheap syscall and prints nanoseconds per call, for
 * bench/seccomp.sh.  Static, so that it runs in any sandbox. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	/* getppid: allowed by every profile, never cached by libc, and its
	 * own work is tiny, so the filter's share shows. */
	long nr = argc > 2 && argv[2][0] == 'i' ? SYS_ioctl : SYS_getppid;
	/* The fastest of short batches: on a loaded machine a batch that
	 * another process or an interrupt cut into is slower, never faster,
	 * so the minimum is the syscall's own cost. */
	const long batch = 2000;
	double best = 1e30;

	for (long done = 0; done < n; done += batch) {
		struct timespec a, b;
		double ns;

		clock_gettime(CLOCK_MONOTONIC, &a);
		for (long i = 0; i < batch; i++) {
			if (nr == SYS_ioctl)
				syscall(SYS_ioctl, -1, 0x5401 /* TCGETS */, 0); /* an argument-checked rule */
			else
				syscall(SYS_getppid);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)batch;
		if (ns < best)
			best = ns;
	}
	printf("%.1f\n", best);
	return 0;
}
