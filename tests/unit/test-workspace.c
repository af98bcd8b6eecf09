/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The workspace's pure logic: DIR[:MODE], the gitignore-like masks and
 * the mask walk's record as a file. */
#define _GNU_SOURCE
#include "check.h"
#include "mask-cache.h"
#include "workspace.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_parse(void)
{
	char *path = NULL;
	enum isd_workspace_mode mode;

	CHECK(isd_workspace_parse("proj", "/home/u", &path, &mode) == 0);
	CHECK(path && !strcmp(path, "/home/u/proj") && mode == ISD_WORKSPACE_RW);
	free(path);
	CHECK(isd_workspace_parse("/srv/p:cow", "/x", &path, &mode) == 0);
	CHECK(path && !strcmp(path, "/srv/p") && mode == ISD_WORKSPACE_COW);
	free(path);
	CHECK(isd_workspace_parse("/srv/a:b:ro", "/x", &path, &mode) == 0);
	CHECK(path && !strcmp(path, "/srv/a:b") && mode == ISD_WORKSPACE_RO);
	free(path);
	path = NULL;
	CHECK(isd_workspace_parse("/srv/p:bogus", "/x", &path, &mode) == -EINVAL);
	CHECK(strstr(isd_error_message(), "unknown mode \"bogus\""));
	CHECK(isd_workspace_parse(":cow", "/x", &path, &mode) == -EINVAL);
	CHECK(!path);
}

static void test_masks(void)
{
	/* a name at any depth */
	CHECK(isd_workspace_mask_matches(".env", ".env", false));
	CHECK(isd_workspace_mask_matches(".env", "a/b/.env", false));
	CHECK(!isd_workspace_mask_matches(".env", "a/.env.local", false));
	CHECK(isd_workspace_mask_matches(".env.*", "a/.env.local", false));
	CHECK(isd_workspace_mask_matches("*.pem", "certs/server.pem", false));
	CHECK(isd_workspace_mask_matches("*.pem", ".pem", false));
	CHECK(isd_workspace_mask_matches("id_rsa*", "keys/id_rsa.pub", false));
	/* directories only */
	CHECK(isd_workspace_mask_matches(".aws/", ".aws", true));
	CHECK(isd_workspace_mask_matches(".aws/", "x/.aws", true));
	CHECK(!isd_workspace_mask_matches(".aws/", ".aws", false));
	/* anchored at the workspace root */
	CHECK(isd_workspace_mask_matches("/secrets.txt", "secrets.txt", false));
	CHECK(!isd_workspace_mask_matches("/secrets.txt", "a/secrets.txt", false));
	CHECK(isd_workspace_mask_matches("config/*.env", "config/prod.env", false));
	CHECK(!isd_workspace_mask_matches("config/*.env", "config/sub/prod.env", false));
	CHECK(!isd_workspace_mask_matches("config/*.env", "x/config/prod.env", false));
	/* git's any-depth spelling */
	CHECK(isd_workspace_mask_matches("**/.npmrc", "a/b/.npmrc", false));
	CHECK(isd_workspace_mask_matches("**/.npmrc", ".npmrc", false));
	CHECK(!isd_workspace_mask_matches(".netrc", "netrc", false));
	/* the shortcuts (exact, *suffix, prefix*) agree with fnmatch */
	CHECK(isd_workspace_mask_matches("id_rsa*", "id_rsa", false));
	CHECK(!isd_workspace_mask_matches("id_rsa*", "my_id_rsa", false));
	CHECK(!isd_workspace_mask_matches("*.pem", "pem", false));
	CHECK(!isd_workspace_mask_matches("*.pem", "a.pem.bak", false));
	CHECK(isd_workspace_mask_matches("[st]ecret?.txt", "d/secret1.txt", false));
	CHECK(isd_workspace_mask_matches("a*b", "axxb", false));
	CHECK(!isd_workspace_mask_matches("a*b", "axxbc", false));
	CHECK(isd_workspace_mask_matches("\\*lit", "*lit", false));
	CHECK(!isd_workspace_mask_matches("\\*lit", "xlit", false));
}

/* The one record file below dir (dir/isd/masks/X.masks). */
static char *record_path(const char *dir)
{
	char *masks = isd_xasprintf("%s/isd/masks", dir), *path = NULL;
	struct dirent *e;
	DIR *d = opendir(masks);

	while (d && (e = readdir(d)))
		if (strstr(e->d_name, ".masks"))
			path = isd_xasprintf("%s/%s", masks, e->d_name);
	if (d)
		closedir(d);
	free(masks);
	return path;
}

static void put_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	CHECK(fd >= 0 && write(fd, data, len) == (ssize_t)len);
	if (fd >= 0) {
		(void)fchmod(fd, mode);
		close(fd);
	}
}

/* What the walk stores it loads back; every shorter file, every byte
 * changed, another key, a file others could write: a miss, never a
 * crash or a record that says something else. */
static void test_mask_record(void)
{
	char tmpl[] = "/tmp/isd-unit-masks.XXXXXX";
	char *dir = mkdtemp(tmpl), *path, *data = NULL;
	char *sub[] = {"a", "b", NULL}, *found[] = {".env", ".aws/", NULL}, *none[] = {NULL};
	struct isd_mask_dir d[2] = {
		{.path = "", .dev = 1, .ino = 2, .mtime_sec = 3, .ctime_sec = 4, .mtime_nsec = 5, .ctime_nsec = 6,
		 .trusted = true, .subdirs = sub, .found = found},
		{.path = "a", .dev = 7, .ino = 8, .subdirs = none, .found = none},
	};
	struct isd_mask_dir *dirs[] = {&d[0], &d[1]};
	struct isd_mask_cache c;
	const struct isd_mask_dir *r;
	size_t key_len, len = 0;
	char *key;
	int fd;

	CHECK(dir);
	if (!dir)
		return;
	unsetenv("XDG_RUNTIME_DIR");
	setenv("XDG_CACHE_HOME", dir, 1);
	key = isd_mask_cache_key("/p", found, NULL, &key_len);
	CHECK(isd_mask_cache_store(key, key_len, dirs, 2) == 0);
	CHECK(isd_mask_cache_load(key, key_len, &c) == 0 && c.n == 2);
	r = isd_mask_cache_find(&c, "");
	CHECK(r && r->trusted && r->dev == 1 && r->ino == 2 && r->mtime_sec == 3 && r->ctime_sec == 4 &&
	      r->mtime_nsec == 5 && r->ctime_nsec == 6 && !strcmp(r->subdirs[1], "b") && !strcmp(r->found[1], ".aws/"));
	r = isd_mask_cache_find(&c, "a");
	CHECK(r && !r->trusted && r->ino == 8 && !r->subdirs[0] && !r->found[0]);
	CHECK(!isd_mask_cache_find(&c, "b"));
	isd_mask_cache_free(&c);
	{
		size_t other_len;
		char *other = isd_mask_cache_key("/q", found, NULL, &other_len);
		CHECK(isd_mask_cache_load(other, other_len, &c) < 0); /* another project, another name */
		free(other);
	}

	path = record_path(dir);
	CHECK(path);
	fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	CHECK(fd >= 0 && isd_read_fd(fd, &data, &len) == 0 && len > 0);
	if (fd >= 0)
		close(fd);
	for (size_t n = 0; data && n < len; n++) {
		put_file(path, data, n, 0600);
		CHECKF(isd_mask_cache_load(key, key_len, &c) < 0, "truncated to %zu of %zu bytes", n, len);
	}
	for (size_t i = 0; data && i < len; i++) {
		data[i] ^= 0x20;
		put_file(path, data, len, 0600);
		CHECKF(isd_mask_cache_load(key, key_len, &c) < 0, "byte %zu of %zu changed", i, len);
		data[i] ^= 0x20;
	}
	if (data) {
		put_file(path, data, len, 0600);
		CHECK(isd_mask_cache_load(key, key_len, &c) == 0);
		isd_mask_cache_free(&c);
		put_file(path, data, len, 0622);
		CHECK(isd_mask_cache_load(key, key_len, &c) < 0);
	}
	free(data);
	free(path);
	free(key);
	{
		char *rm = isd_xasprintf("rm -rf '%s'", dir);
		CHECK(system(rm) == 0);
		free(rm);
	}
}

int main(void)
{
	test_parse();
	test_masks();
	test_mask_record();
	return check_result();
}
