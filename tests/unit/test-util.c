/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "check.h"
#include "isd/fsutil.h"
#include "isd/path-util.h"
#include "isd/util.h"
#include "guard.h"

#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <fcntl.h>
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

/* One rule for an image's users (isd exec --user, isd build's USER and
 * --chown): a short line never counts, a FIFO never hangs isd. */
static void test_image_users(void)
{
	char dir[] = "/tmp/isd-test-users-XXXXXX";
	struct isd_image_user u = {0};
	uint32_t uid = 0, gid = 0;
	int root;

	CHECK(mkdtemp(dir) != NULL);
	root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(root >= 0 && mkdirat(root, "etc", 0755) == 0);
	CHECK(isd_write_file_at(root, "etc/passwd",
				"short:x:5:6\nalice:x:1000:1001:A:/home/alice:/bin/sh\nbob:x:1002:1003::/b:/bin/sh\n",
				O_CREAT | O_EXCL, 0644) == 0);
	CHECK(mkfifoat(root, "etc/group", 0644) == 0);

	CHECK(isd_image_passwd(root, "short", 0, &u) == -ENOENT);
	CHECK(isd_image_lookup_user(root, "short", &uid, &gid) == -ENOENT);
	CHECK(isd_image_passwd(root, NULL, 1000, &u) == 0 && !strcmp(u.name, "alice") && !strcmp(u.home, "/home/alice") &&
	      u.gid == 1001);
	free(u.name);
	free(u.home);
	CHECK(isd_image_lookup_user(root, "bob", &uid, &gid) == 0 && uid == 1002 && gid == 1003);
	CHECK(isd_image_lookup_user(root, "1000", &uid, &gid) == 0 && uid == 1000 && gid == 1001);
	CHECK(isd_image_lookup_user(root, "77", &uid, &gid) == 0 && uid == 77 && gid == 77);
	CHECK(isd_image_lookup_group(root, "staff", &gid) < 0);
	CHECK(isd_rm_rf_at(AT_FDCWD, dir) == 0);
	close(root);
}

/* guard.h says what_out may be NULL: the callers that only need the
 * paths (the storage watcher, the landlock tier) pass NULL. */
static void test_guard_dirs_without_descriptions(void)
{
	char **with_what = NULL, **what = NULL, **plain;

	setenv("HOME", "/home/guard-test", 1);
	setenv("XDG_CONFIG_HOME", "/tmp/guard-test-config", 1);
	with_what = isd_guard_dirs(&what);
	plain = isd_guard_dirs(NULL);
	CHECK(plain && with_what && what);
	for (size_t i = 0; plain && with_what && plain[i]; i++) {
		CHECK(with_what[i] && !strcmp(plain[i], with_what[i]));
		CHECK(what[i] != NULL);
	}
	CHECK(plain && !strcmp(plain[0], "/tmp/guard-test-config/isd"));
	isd_strv_free(plain);
	isd_strv_free(with_what);
	isd_strv_free(what);
}

/* One rule for $XDG_RUNTIME_DIR: absolute or none.  A relative one would
 * put the seccomp cache, the guarded runtime directory and the socket
 * probes below whatever directory isd runs in. */
static void test_runtime_dir(void)
{
	char **dirs;
	bool absolute_seen = false, relative_seen = false;

	setenv("XDG_RUNTIME_DIR", "/run/user/4242", 1);
	CHECK(isd_runtime_dir() && !strcmp(isd_runtime_dir(), "/run/user/4242"));
	dirs = isd_guard_dirs(NULL);
	for (size_t i = 0; dirs && dirs[i]; i++)
		absolute_seen |= !strcmp(dirs[i], "/run/user/4242/isd");
	CHECK(absolute_seen);
	isd_strv_free(dirs);

	setenv("XDG_RUNTIME_DIR", "run/user/4242", 1);
	CHECK(isd_runtime_dir() == NULL);
	dirs = isd_guard_dirs(NULL);
	for (size_t i = 0; dirs && dirs[i]; i++)
		relative_seen |= strstr(dirs[i], "run/user/4242") != NULL;
	CHECK(!relative_seen);
	isd_strv_free(dirs);

	unsetenv("XDG_RUNTIME_DIR");
	CHECK(isd_runtime_dir() == NULL);
}

int main(void)
{
	test_runtime_dir();
	test_guard_dirs_without_descriptions();
	test_image_users();
	test_path_search();
	test_path_under();
	test_error_message_is_per_thread();
	test_error_prefix();
	return check_result();
}
