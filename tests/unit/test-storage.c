/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --storage-opt's values (src/storage.c): sizes with their suffixes,
 * percentage floors, what overflows, junk and keys given twice; a count
 * stopping at its limits. */
#include "check.h"
#include "isd/storage.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse(const char *arg, struct isd_storage_opts *o)
{
	memset(o, 0, sizeof(*o));
	isd_error_clear();
	return isd_storage_parse_opt(o, arg);
}

/* Refused, with one message that names the option. */
static void refused(const char *arg)
{
	struct isd_storage_opts o;

	CHECKF(parse(arg, &o) < 0, "%s was taken", arg);
	CHECKF(strstr(isd_error_message(), "--storage-opt") != NULL, "%s: message %s", arg, isd_error_message());
	/* nothing of a refused argument is kept */
	CHECKF(!o.size && !o.inodes && !o.min_free_set, "%s left values behind", arg);
}

/* A count of a running sandbox stops once it is over a limit (the
 * watcher then counts again frozen); without one it counts everything. */
static void limited_count(void)
{
	char dir[] = "/tmp/isd-test-storage.XXXXXX", path[64];
	struct isd_storage_limits over = {.inodes = 100, .drop_bytes = UINT64_MAX, .drop_inodes = UINT64_MAX};
	struct isd_storage_limits far = {.inodes = 10000, .drop_bytes = UINT64_MAX, .drop_inodes = UINT64_MAX};
	struct isd_storage_usage u;
	char *paths[] = {dir, NULL};

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	for (int i = 0; i < 500; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	}
	CHECK(isd_storage_account_limited(paths, NULL, &over, &u) == 0 && u.interrupted && u.inodes <= 200);
	free(u.unaccounted);
	CHECK(isd_storage_account_limited(paths, NULL, &far, &u) == 0 && !u.interrupted && u.inodes == 501);
	free(u.unaccounted);
	CHECK(isd_storage_account_all(paths, NULL, &u) == 0 && !u.interrupted && u.inodes == 501);
	free(u.unaccounted);
	for (int i = 0; i < 500; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	struct isd_storage_opts o;

	CHECK(parse("size=10G", &o) == 0 && o.size == 10ULL << 30);
	CHECK(parse("size=10g", &o) == 0 && o.size == 10ULL << 30);
	CHECK(parse("size=200M", &o) == 0 && o.size == 200ULL << 20);
	CHECK(parse("size=1t", &o) == 0 && o.size == 1ULL << 40);
	CHECK(parse("size=2048k", &o) == 0 && o.size == 2ULL << 20);
	CHECK(parse("size=1048576", &o) == 0 && o.size == 1ULL << 20);
	CHECK(parse("size=0", &o) == 0 && o.size == 0);
	CHECK(parse("inodes=1000000", &o) == 0 && o.inodes == 1000000);
	CHECK(parse("inodes=0", &o) == 0 && o.inodes == 0);
	CHECK(parse("min-free=2G", &o) == 0 && o.min_free_set && o.min_free == 2ULL << 30 && !o.min_free_pct);
	CHECK(parse("min-free=5%", &o) == 0 && o.min_free_set && o.min_free_pct == 5 && !o.min_free);
	CHECK(parse("min-free=0", &o) == 0 && o.min_free_set && !o.min_free && !o.min_free_pct);
	CHECK(parse("size=1g,inodes=5000,min-free=10%", &o) == 0 && o.size == 1ULL << 30 && o.inodes == 5000 &&
	      o.min_free_pct == 10);

	/* the command line over a profile: a second option replaces a key */
	CHECK(parse("size=10G", &o) == 0 && isd_storage_parse_opt(&o, "size=1G") == 0 && o.size == 1ULL << 30);
	CHECK(parse("min-free=5%", &o) == 0 && isd_storage_parse_opt(&o, "min-free=1G") == 0 && !o.min_free_pct &&
	      o.min_free == 1ULL << 30);

	/* the floor and the file limit */
	CHECK(parse("min-free=10%", &o) == 0 && isd_storage_floor(&o, 1000ULL << 20) == 100ULL << 20);
	CHECK(parse("size=0", &o) == 0 && isd_storage_floor(&o, 100ULL << 30) == 2ULL << 30); /* 5 % is 5 GiB */
	CHECK(isd_storage_floor(&o, 10ULL << 30) == (10ULL << 30) / 100 * 5);                  /* 5 % is 512 MiB */
	CHECK(parse("size=16M", &o) == 0 && isd_storage_file_limit(&o) == 15ULL << 20);

	/* junk, overflow, bounds */
	refused("");
	refused("size");
	refused("size=");
	refused("=1g");
	refused("size=x");
	refused("size=1x");
	refused("size=-1");
	refused("size=1.5g");
	refused("size=1k"); /* below a megabyte: a typo */
	refused("size=99999999999999999999");
	refused("size=18446744073709551615t");
	refused("size=17179869184g"); /* 2^64 bytes */
	refused("inodes=3");
	refused("inodes=1k");
	refused("inodes=99999999999999999999");
	refused("min-free=60%");
	refused("min-free=%");
	refused("min-free=5%%");
	refused("min-free=-5%");
	refused("min-free=4294967301%");
	refused("min-free=1x");
	refused("foo=1");
	refused("Size=1g");
	refused("size=1g,");
	refused(",size=1g");
	refused("size=1g,,inodes=100");
	refused("size=1g,bogus");
	refused("size=1g size=2g");
	/* a key twice in one option is a mistake, not a choice */
	refused("size=1g,size=2g");
	refused("min-free=1g,min-free=5%");
	refused("inodes=100,inodes=200");
	/* a value longer than any size */
	{
		char arg[200];
		memset(arg, '1', sizeof(arg) - 1);
		memcpy(arg, "size=", 5);
		arg[sizeof(arg) - 1] = '\0';
		refused(arg);
	}
	limited_count();
	return check_result();
}
