/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The unit tests' one assertion: report the failed condition with isd's
 * last recorded error, count it, go on; main() returns check_result(). */
#ifndef ISD_TEST_CHECK_H
#define ISD_TEST_CHECK_H

#include <stdio.h>

#include "isd/util.h"

static int failures;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__,   \
				__LINE__, #cond, isd_error_message());                           \
			failures++;                                                              \
		}                                                                                \
	} while (0)

/* CHECK that says what was compared (printf-style), for the failures
 * whose values matter. */
#define CHECKF(cond, ...)                                                                         \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                            \
			fputc('\n', stderr);                                                     \
			failures++;                                                              \
		}                                                                                \
	} while (0)

static inline int check_result(void)
{
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}

#endif
