/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "check.h"
#include "isd/path-util.h"
#include "isd/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
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

static bool take_all(const char *candidate, void *ctx)
{
	(void)candidate;
	return ++*(int *)ctx == 2;
}

/* The one $PATH rule (isd/path-util.h): what isd doctor finds is what isd
 * exec runs. */
static void test_path_search(void)
{
	char buf[64];
	int n = 0;

	/* Empty and relative entries are never the working directory. */
	CHECK(isd_path_search(":.:bin:/a:/b", "x", buf, sizeof(buf), take_all, &n) && !strcmp(buf, "/b/x"));
	n = 0;
	CHECK(!isd_path_search("/a", "x", buf, sizeof(buf), take_all, &n) && n == 1);
	/* A candidate longer than the buffer is not cut short into another. */
	n = 0;
	CHECK(!isd_path_search("/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "x", buf,
			       sizeof(buf), take_all, &n) && n == 0);
	setenv("PATH", "/nonexistent", 1);
	CHECK(isd_find_program("sh", buf, sizeof(buf)) && !strcmp(buf, "/usr/bin/sh"));
	CHECK(!isd_find_program("isd-no-such-program", buf, sizeof(buf)));
}

int main(void)
{
	test_path_search();
	test_path_under();
	test_error_message_is_per_thread();
	test_error_prefix();
	return check_result();
}
