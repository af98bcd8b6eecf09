/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "check.h"
#include "isd/path-util.h"
#include "isd/util.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

static void *record_in_thread(void *arg)
{
	(void)arg;
	isd_error(-EIO, "the relay thread's own failure");
	return NULL;
}

/* The relay and resolver threads record errors while the main thread is
 * about to print its own: each thread has its message. */
static void test_error_message_is_per_thread(void)
{
	pthread_t t;

	isd_error(-ENOENT, "the main thread's failure");
	CHECK(pthread_create(&t, NULL, record_in_thread, NULL) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(strstr(isd_error_message(), "the main thread's failure") != NULL);
	CHECK(strstr(isd_error_message(), "relay") == NULL);
}

static void test_error_prefix(void)
{
	isd_error(-EACCES, "opening x");
	CHECK(isd_error_prefix(-EACCES, "step 3: ") == -EACCES);
	CHECK(!strncmp(isd_error_message(), "step 3: opening x", 17));
}

/* The one rule of "is A under B" (isd/path-util.h). */
static void test_path_under(void)
{
	CHECK(isd_path_under("/a", "/a") && isd_path_under("/a/b", "/a") && !isd_path_under("/ab", "/a"));
	CHECK(!isd_path_under("/", "/a") && !isd_path_under("/b/a", "/a"));
	CHECK(isd_path_under("/x", "/") && isd_path_under("/", "/") && !isd_path_below("/", "/"));
	CHECK(isd_path_under("a/b", "") && isd_path_under("a/b", "a/") && isd_path_under("a", "a/"));
	CHECK(isd_path_below("/a/b", "/a") && !isd_path_below("/a", "/a") && !isd_path_below("/ab/c", "/a"));
	CHECK(!strcmp(isd_path_rest("/a/b/c", "/a"), "b/c") && !strcmp(isd_path_rest("/a", "/a/"), ""));
	CHECK(!strcmp(isd_path_rest("/a/b", "/"), "a/b") && isd_path_rest("a", "/") == NULL);
	CHECK(isd_path_rest("/abc", "/ab") == NULL && !strcmp(isd_path_rest("x/y", ""), "x/y"));
}

int main(void)
{
	test_path_under();
	test_error_message_is_per_thread();
	test_error_prefix();
	return check_result();
}
