/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Deliberate mistakes, for the test-only isd-testhooks binary only: it is
 * compiled from the same sources with -DISD_TEST_HOOKS, built only with
 * the tests and never installed.  In isd itself every hook is a no-op the
 * compiler removes, so no environment variable changes what isd does.
 * The tests use them to show that Landlock holds where the mount layer
 * was built wrong (tests/integration/landlock.sh).
 */
#ifndef ISD_TESTHOOKS_H
#define ISD_TESTHOOKS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef ISD_TEST_HOOKS
#include "isd/syscalls.h"
#include <stdlib.h>
#include <string.h>

/* ISD_TEST_MISMOUNT_RW=DEST: the bind at DEST comes out writable, whatever
 * the spec says. */
static inline unsigned isd_testhook_bind_attrs(const char *destination, unsigned attrs)
{
	const char *dst = getenv("ISD_TEST_MISMOUNT_RW");

	return dst && !strcmp(dst, destination) ? attrs & ~(unsigned)MOUNT_ATTR_RDONLY : attrs;
}

/* ISD_TEST_NO_LANDLOCK=1: no ruleset, so that a test can show its write
 * really reaches the host without one. */
static inline bool isd_testhook_landlock_off(void)
{
	const char *v = getenv("ISD_TEST_NO_LANDLOCK");

	return v && !strcmp(v, "1");
}

/* ISD_TEST_ACTIVITY_LIMIT=BYTES: the activity log's bound, so that a test
 * reaches it in seconds. */
static inline unsigned long long isd_testhook_activity_limit(unsigned long long limit)
{
	const char *v = getenv("ISD_TEST_ACTIVITY_LIMIT");

	return v ? strtoull(v, NULL, 10) : limit;
}

/* ISD_TEST_ACTIVITY_END_DELAY_MS=N: the activity log's process waits N ms
 * before it ends, as on a machine too busy to run it, so that a test can
 * show isd does not wait for that end. */
static inline unsigned isd_testhook_activity_end_delay_ms(void)
{
	const char *v = getenv("ISD_TEST_ACTIVITY_END_DELAY_MS");

	return v ? (unsigned)strtoul(v, NULL, 10) : 0;
}

/* ISD_TEST_ACTIVITY_WRITE_DELAY_MS=N: the activity log's listener waits N
 * ms after each answer, before it keeps what it read, as on a machine too
 * busy to run it: the payload may end meanwhile. */
static inline unsigned isd_testhook_activity_write_delay_ms(void)
{
	const char *v = getenv("ISD_TEST_ACTIVITY_WRITE_DELAY_MS");

	return v ? (unsigned)strtoul(v, NULL, 10) : 0;
}

/* ISD_TEST_ACTIVITY_THREAD=1: the landlock tier's activity log answers
 * from a thread of isd's, as where Yama keeps a process that is not the
 * payload's ancestor from reading it, so that a test runs that way on a
 * host without Yama. */
static inline bool isd_testhook_activity_thread(void)
{
	const char *v = getenv("ISD_TEST_ACTIVITY_THREAD");

	return v && !strcmp(v, "1");
}

/* ISD_TEST_RELAY_MAX_CONNS=N: the relay's connection cap, so that a test
 * reaches it with a few connections. */
static inline size_t isd_testhook_relay_max_conns(size_t max)
{
	const char *v = getenv("ISD_TEST_RELAY_MAX_CONNS");

	return v ? strtoull(v, NULL, 10) : max;
}
#else
static inline size_t isd_testhook_relay_max_conns(size_t max)
{
	return max;
}

static inline unsigned long long isd_testhook_activity_limit(unsigned long long limit)
{
	return limit;
}

static inline unsigned isd_testhook_activity_end_delay_ms(void)
{
	return 0;
}

static inline bool isd_testhook_activity_thread(void)
{
	return false;
}

static inline unsigned isd_testhook_activity_write_delay_ms(void)
{
	return 0;
}

static inline unsigned isd_testhook_bind_attrs(const char *destination, unsigned attrs)
{
	(void)destination;
	return attrs;
}

static inline bool isd_testhook_landlock_off(void)
{
	return false;
}
#endif

#endif
