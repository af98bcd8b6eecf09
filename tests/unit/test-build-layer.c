/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd build: applying layers.  The tars are written here with libarchive:
 * ordinary ones (compressions, whiteouts, opaque directories, hardlinks,
 * devices) and hostile ones (path traversal, symlink and hardlink escapes,
 * whiteouts aimed outside, decompression bombs).  Each hostile case checks
 * that a directory beside the tree, holding a secret, is left untouched.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"
#include "internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "check.h"

static char base[256];
static struct isd_idmap map;


enum kind { F, D, L, H, C };

struct ent {
	enum kind kind;
	const char *path;
	const char *data; /* file: content; symlink/hardlink: target */
	size_t size;      /* file: size when data is NULL (zeros) */
	unsigned mode;
	unsigned uid; /* and gid, unless gid_of() names another */
};

/* Entries of test_ids() whose group differs from their owner. */
static unsigned gid_of(const struct ent *e)
{
	static const struct {
		const char *path;
		unsigned gid;
	} groups[] = {{"shared", 50}, {"shared/tool", 50}, {"high/sgid", 100000}};

	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (!strcmp(e->path, groups[i].path))
			return groups[i].gid;
	return e->uid;
}

/* security.capability, revision 2: cap_net_raw (13) permitted and
 * effective, as `setcap cap_net_raw+ep` writes it. */
static const unsigned char cap_v2[20] = {0x01, 0x00, 0x00, 0x02, 1 << 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static uint32_t outside_id(const struct isd_id_range *r, size_t n, uint32_t inside, uint32_t caller)
{
	if (!map.full)
		return caller;
	for (size_t i = 0; i < n; i++)
		if (inside >= r[i].inside && inside - r[i].inside < r[i].count)
			return r[i].outside + (inside - r[i].inside);
	return (uint32_t)-1;
}

static uint32_t outside_uid(uint32_t inside)
{
	return outside_id(map.uid, map.n_uid, inside, map.caller_uid);
}

static uint32_t outside_gid(uint32_t inside)
{
	return outside_id(map.gid, map.n_gid, inside, map.caller_gid);
}

static char *path_of(const char *rel)
{
	return isd_xasprintf("%s/%s", base, rel);
}

/* Writes entries as a tar with the given filter ("none", "gzip", "zstd"). */
static char *write_tar(const char *name, const char *filter, const struct ent *ents, size_t n)
{
	char *file = path_of(name);
	struct archive *a = archive_write_new();
	static char zeros[65536];

	archive_write_set_format_pax_restricted(a);
	if (!strcmp(filter, "gzip"))
		archive_write_add_filter_gzip(a);
	else if (!strcmp(filter, "zstd"))
		archive_write_add_filter_zstd(a);
	if (archive_write_open_filename(a, file) != ARCHIVE_OK) {
		fprintf(stderr, "cannot write %s: %s\n", file, archive_error_string(a));
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		size_t size = ents[i].kind == F ? (ents[i].data ? strlen(ents[i].data) : ents[i].size) : 0;

		archive_entry_set_pathname(e, ents[i].path);
		archive_entry_set_mtime(e, 1700000000, 0);
		archive_entry_set_uid(e, ents[i].uid);
		archive_entry_set_gid(e, gid_of(&ents[i]));
		archive_entry_set_perm(e, ents[i].mode ? ents[i].mode : (ents[i].kind == D ? 0755 : 0644));
		switch (ents[i].kind) {
		case F:
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_size(e, (la_int64_t)size);
			break;
		case D:
			archive_entry_set_filetype(e, AE_IFDIR);
			break;
		case L:
			archive_entry_set_filetype(e, AE_IFLNK);
			archive_entry_set_symlink(e, ents[i].data);
			break;
		case H:
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_hardlink(e, ents[i].data);
			break;
		case C:
			archive_entry_set_filetype(e, AE_IFCHR);
			archive_entry_set_rdevmajor(e, 1);
			archive_entry_set_rdevminor(e, 3);
			break;
		}
		if (!strcmp(ents[i].path, "x/with-xattr"))
			archive_entry_xattr_add_entry(e, "user.isd", "yes", 3);
		if (!strcmp(ents[i].path, "x/with-cap"))
			archive_entry_xattr_add_entry(e, "security.capability", cap_v2, sizeof(cap_v2));
		archive_write_header(a, e);
		if (ents[i].kind == F) {
			if (ents[i].data) {
				archive_write_data(a, ents[i].data, size);
			} else {
				for (size_t done = 0; done < size;) {
					size_t k = size - done < sizeof(zeros) ? size - done : sizeof(zeros);
					archive_write_data(a, zeros, k);
					done += k;
				}
			}
		}
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
	return file;
}

static int apply_with(const struct isd_idmap *m, const char *tar, const struct isd_layer_opts *opts_in,
		      struct isd_layer_result *res)
{
	struct isd_layer_opts opts = {.whiteouts = true};
	struct isd_layer_result dummy;
	_cleanup_free_ char *root = path_of("root");
	_cleanup_close_ int fd = open(tar, O_RDONLY | O_CLOEXEC);

	if (opts_in)
		opts = *opts_in;
	isd_error_clear();
	return isd_layer_apply(root, fd, m, &opts, res ? res : &dummy);
}

static int apply(const char *tar, const struct isd_layer_opts *opts_in, struct isd_layer_result *res)
{
	struct isd_layer_opts opts = {.whiteouts = true};
	struct isd_layer_result dummy;
	_cleanup_free_ char *root = path_of("root");
	_cleanup_close_ int fd = open(tar, O_RDONLY | O_CLOEXEC);
	int r;

	if (opts_in)
		opts = *opts_in;
	isd_error_clear();
	r = isd_layer_apply(root, fd, &map, &opts, res ? res : &dummy);
	return r;
}

static bool exists(const char *rel)
{
	_cleanup_free_ char *p = path_of(rel);
	struct stat st;
	return lstat(p, &st) == 0;
}

static char *content(const char *rel)
{
	_cleanup_free_ char *p = path_of(rel);
	char *text = NULL;

	if (isd_read_file_at(AT_FDCWD, p, &text, NULL) < 0)
		return isd_xstrdup("<missing>");
	return text;
}

#define CHECK_CONTENT(rel, want)                                                             \
	do {                                                                                 \
		char *c_ = content(rel);                                                     \
		if (strcmp(c_, want)) {                                                      \
			fprintf(stderr, "%s:%d: %s holds '%s', want '%s'\n", __FILE__, __LINE__, \
				rel, c_, want);                                              \
			failures++;                                                          \
		}                                                                            \
		free(c_);                                                                    \
	} while (0)

static void reset_tree(void)
{
	_cleanup_free_ char *root = path_of("root"), *outside = path_of("outside");
	_cleanup_free_ char *secret = path_of("outside/secret");
	_cleanup_close_ int dfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);

	CHECK(isd_idmap_remove_tree(&map, root) == 0);
	isd_rm_rf_at(dfd, "outside");
	CHECK(mkdir(root, 0755) == 0);
	CHECK(mkdir(outside, 0755) == 0);
	CHECK(isd_write_file_at(AT_FDCWD, secret, "secret", O_CREAT | O_TRUNC, 0644) == 0);
}

/* The directory beside the tree still holds exactly the secret, unlinked. */
static void check_outside_untouched(const char *what)
{
	_cleanup_free_ char *secret = path_of("outside/secret"), *outside = path_of("outside");
	struct stat st;
	int n = 0;
	DIR *d = opendir(outside);
	struct dirent *de;

	while (d && (de = readdir(d)))
		n++;
	if (d)
		closedir(d);
	if (n != 3 || stat(secret, &st) < 0 || st.st_nlink != 1 || st.st_size != 6) {
		fprintf(stderr, "%s: the directory outside the tree was modified\n", what);
		failures++;
	}
	CHECK_CONTENT("outside/secret", "secret");
}

static void test_compressions(void)
{
	static const struct ent ents[] = {
		{D, "x", NULL, 0, 0755, 0},
		{F, "x/file", "hello", 0, 0604, 0},
		{F, "./x/owned", "mine", 0, 0644, 1000},
		{F, "x/with-xattr", "x", 0, 0644, 0},
		{L, "x/link", "file", 0, 0777, 0},
		{H, "x/hard", "x/file", 0, 0604, 0},
		{C, "x/null", NULL, 0, 0666, 0},
		{D, "x/ro", NULL, 0, 0555, 0},
		{F, "x/ro/inside", "ro", 0, 0444, 0},
	};
	_cleanup_free_ char *plain = write_tar("l.tar", "none", ents, 9);
	_cleanup_free_ char *gz = write_tar("l.tar.gz", "gzip", ents, 9);
	_cleanup_free_ char *zst = write_tar("l.tar.zst", "zstd", ents, 9);
	char diff_id[80], digest[80];
	const char *files[] = {plain, gz, zst};

	{
		_cleanup_close_ int fd = open(plain, O_RDONLY | O_CLOEXEC);
		CHECK(isd_sha256_fd(fd, diff_id) == 0);
	}
	for (size_t i = 0; i < 3; i++) {
		struct isd_layer_result res;
		struct isd_layer_opts opts = {.whiteouts = true, .expect_diff_id = diff_id};
		_cleanup_close_ int fd = open(files[i], O_RDONLY | O_CLOEXEC);
		_cleanup_free_ char *hard = path_of("root/x/hard"), *file = path_of("root/x/file");
		_cleanup_free_ char *xa = path_of("root/x/with-xattr"), *owned = path_of("root/x/owned");
		_cleanup_free_ char *null = path_of("root/x/null");
		struct stat a, b;
		char value[8] = {0};

		CHECK(isd_sha256_fd(fd, digest) == 0);
		opts.expect_digest = digest;
		reset_tree();
		CHECK(apply(files[i], &opts, &res) == 0);
		CHECK(!strcmp(res.diff_id, diff_id));
		CHECK(res.entries == 9);
		CHECK_CONTENT("root/x/file", "hello");
		CHECK_CONTENT("root/x/link", "hello");
		CHECK_CONTENT("root/x/ro/inside", "ro");
		CHECK(stat(hard, &a) == 0 && stat(file, &b) == 0 && a.st_ino == b.st_ino);
		CHECK((b.st_mode & 07777) == 0604);
		CHECK(lstat(null, &a) == 0 && S_ISREG(a.st_mode) && a.st_size == 0);
		/* user.* xattrs are kept where the file system has them. */
		if (getxattr(xa, "user.isd", value, sizeof(value) - 1) >= 0)
			CHECK(!strcmp(value, "yes"));
		/* Inside 1000 is what the map says (the caller, or 1000 for
		 * root); flattened, every owner is the caller. */
		CHECK(stat(owned, &a) == 0 && a.st_uid == outside_uid(1000));
	}
	/* A wrong digest or diff_id is refused. */
	{
		struct isd_layer_opts opts = {.whiteouts = true,
					      .expect_diff_id = "sha256:0000000000000000000000000000000000000000000000000000000000000000"};
		reset_tree();
		CHECK(apply(gz, &opts, NULL) == -EBADMSG);
		CHECK(strstr(isd_error_message(), "diff_id mismatch") != NULL);
		opts.expect_diff_id = NULL;
		opts.expect_digest = diff_id; /* of the plain tar, not of the gzip blob */
		CHECK(apply(gz, &opts, NULL) == -EBADMSG);
	}
}

static void test_whiteouts(void)
{
	static const struct ent lower[] = {
		{F, "a/x", "x", 0, 0, 0}, {F, "a/y", "y", 0, 0, 0},   {F, "b/z", "z", 0, 0, 0},
		{D, "b/sub", NULL, 0, 0, 0}, {F, "b/sub/old", "o", 0, 0, 0}, {F, "c/d/e", "e", 0, 0, 0},
		{D, "dir-becomes-file", NULL, 0, 0, 0}, {F, "dir-becomes-file/f", "f", 0, 0, 0},
		{F, "file-becomes-dir", "f", 0, 0, 0},
	};
	static const struct ent upper[] = {
		{F, "a/.wh.x", "", 0, 0, 0},
		{F, "b/new", "n", 0, 0, 0}, /* before the opaque marker: kept */
		{D, "b/sub", NULL, 0, 0, 0},
		{F, "b/sub/fresh", "f", 0, 0, 0},
		{F, "b/.wh..wh..opq", "", 0, 0, 0},
		{F, "b/after", "a", 0, 0, 0},
		{F, ".wh.c", "", 0, 0, 0},
		{F, "n/x", "1", 0, 0, 0},
		{F, "n/.wh.x", "", 0, 0, 0}, /* same layer: spared */
		{F, "dir-becomes-file", "now a file", 0, 0, 0},
		{D, "file-becomes-dir", NULL, 0, 0, 0},
		{F, "file-becomes-dir/inner", "i", 0, 0, 0},
	};
	_cleanup_free_ char *l1 = write_tar("lower.tar", "none", lower, 9);
	_cleanup_free_ char *l2 = write_tar("upper.tar", "gzip", upper, 12);

	reset_tree();
	CHECK(apply(l1, NULL, NULL) == 0);
	CHECK(apply(l2, NULL, NULL) == 0);
	CHECK(!exists("root/a/x"));
	CHECK(exists("root/a/y"));
	CHECK(!exists("root/a/.wh.x"));
	CHECK(!exists("root/b/z"));
	CHECK(!exists("root/b/sub/old"));
	CHECK(exists("root/b/sub/fresh"));
	CHECK(exists("root/b/new"));
	CHECK(exists("root/b/after"));
	CHECK(!exists("root/b/.wh..wh..opq"));
	CHECK(!exists("root/c"));
	CHECK(exists("root/n/x"));
	CHECK_CONTENT("root/dir-becomes-file", "now a file");
	CHECK_CONTENT("root/file-becomes-dir/inner", "i");

	/* ADD of a local archive: .wh. names are ordinary files there. */
	{
		struct isd_layer_opts opts = {.whiteouts = false, .subdir = "/opt/unpacked"};
		CHECK(apply(l2, &opts, NULL) == 0);
		CHECK(exists("root/opt/unpacked/a/.wh.x"));
		CHECK(exists("root/a/y"));
	}
}

static void test_hostile(void)
{
	_cleanup_free_ char *outside = path_of("outside");
	_cleanup_free_ char *outside_secret = path_of("outside/secret");
	_cleanup_free_ char *rel_up = isd_xstrdup("../../../../../../../../../..");
	char *tar;

	/* Path traversal. */
	{
		struct ent e[] = {{F, "ok", "1", 0, 0, 0}, {F, "../outside/pwned", "x", 0, 0, 0}};
		reset_tree();
		tar = write_tar("h1.tar", "none", e, 2);
		CHECK(apply(tar, NULL, NULL) == -EPERM);
		CHECK(strstr(isd_error_message(), "climbs out") != NULL);
		check_outside_untouched("path traversal");
		free(tar);
	}
	{
		struct ent e[] = {{F, "a/b/../../../outside/pwned", "x", 0, 0, 0}};
		reset_tree();
		tar = write_tar("h1b.tar", "none", e, 1);
		CHECK(apply(tar, NULL, NULL) < 0);
		check_outside_untouched("nested traversal");
		free(tar);
	}
	/* Absolute names land inside the tree. */
	{
		_cleanup_free_ char *abs = isd_xasprintf("%s/pwned", outside);
		_cleanup_free_ char *inside = isd_xasprintf("root%s/pwned", outside);
		struct ent e[] = {{F, abs, "x", 0, 0, 0}};
		reset_tree();
		tar = write_tar("h2.tar", "none", e, 1);
		CHECK(apply(tar, NULL, NULL) == 0);
		CHECK(exists(inside));
		check_outside_untouched("absolute path");
		free(tar);
	}
	/* Symlink escapes: absolute and relative links, then writes through
	 * them in the same and in a later layer. */
	{
		_cleanup_free_ char *up = isd_xasprintf("%s%s", rel_up, outside);
		struct ent e1[] = {{L, "abs", outside, 0, 0, 0},
				   {L, "rel", up, 0, 0, 0},
				   {F, "abs/same-layer", "x", 0, 0, 0}};
		struct ent e2[] = {{F, "abs/pwned", "x", 0, 0, 0},
				   {F, "rel/pwned", "x", 0, 0, 0},
				   {F, "abs/secret", "overwritten", 0, 0, 0},
				   {F, "rel/.wh.secret", "", 0, 0, 0},
				   {F, "abs/.wh..wh..opq", "", 0, 0, 0}};
		char *t1, *t2;

		reset_tree();
		t1 = write_tar("h3a.tar", "none", e1, 3);
		t2 = write_tar("h3b.tar", "none", e2, 5);
		apply(t1, NULL, NULL);
		apply(t2, NULL, NULL);
		check_outside_untouched("symlink escape");
		free(t1);
		free(t2);
	}
	/* Hardlinks to files outside. */
	{
		_cleanup_free_ char *up = isd_xasprintf("..%s", outside_secret);
		struct ent e1[] = {{H, "hl", "../outside/secret", 0, 0, 0}};
		struct ent e2[] = {{H, "hl", outside_secret, 0, 0, 0}};
		struct ent e3[] = {{L, "esc", outside, 0, 0, 0}, {H, "hl", "esc/secret", 0, 0, 0}};
		struct ent e4[] = {{H, "hl", up, 0, 0, 0}};

		reset_tree();
		tar = write_tar("h4a.tar", "none", e1, 1);
		CHECK(apply(tar, NULL, NULL) == -EPERM);
		free(tar);
		tar = write_tar("h4b.tar", "none", e2, 1);
		apply(tar, NULL, NULL);
		free(tar);
		tar = write_tar("h4c.tar", "none", e3, 2);
		apply(tar, NULL, NULL);
		free(tar);
		tar = write_tar("h4d.tar", "none", e4, 1);
		CHECK(apply(tar, NULL, NULL) == -EPERM);
		free(tar);
		check_outside_untouched("hardlink escape");
	}
	/* Decompression bomb: 64 MiB of zeros in a small gzip blob. */
	{
		struct ent e[] = {{F, "bomb", NULL, 64 << 20, 0, 0}};
		struct isd_layer_opts opts = {.whiteouts = true, .max_bytes = 8 << 20};
		struct stat st;

		reset_tree();
		tar = write_tar("bomb.tar.gz", "gzip", e, 1);
		CHECK(stat(tar, &st) == 0 && st.st_size < (1 << 20));
		CHECK(apply(tar, &opts, NULL) == -EFBIG);
		CHECK(strstr(isd_error_message(), "expands beyond") != NULL);
		free(tar);
	}
	/* Too many entries. */
	{
		struct ent e[64];
		char names[64][16];
		struct isd_layer_opts opts = {.whiteouts = true, .max_entries = 50};

		for (int i = 0; i < 64; i++) {
			snprintf(names[i], sizeof(names[i]), "f%d", i);
			e[i] = (struct ent){F, names[i], "", 0, 0, 0};
		}
		reset_tree();
		tar = write_tar("many.tar", "none", e, 64);
		CHECK(apply(tar, &opts, NULL) == -EFBIG);
		CHECK(strstr(isd_error_message(), "more than 50 entries") != NULL);
		free(tar);
	}
	/* Garbage is an error, not a crash. */
	{
		_cleanup_free_ char *junk = path_of("junk.tar");
		reset_tree();
		CHECK(isd_write_file_at(AT_FDCWD, junk, "this is not a tar archive at all", O_CREAT | O_TRUNC, 0644) == 0);
		CHECK(apply(junk, NULL, NULL) < 0);
	}
}

static void check_owner(const char *rel, uint32_t uid, uint32_t gid, unsigned mode)
{
	_cleanup_free_ char *p = path_of(rel);
	struct stat st;

	if (lstat(p, &st) < 0 || st.st_uid != uid || st.st_gid != gid || (st.st_mode & 07777) != mode) {
		fprintf(stderr, "%s: got %u:%u %o, want %u:%u %o\n", rel, (unsigned)st.st_uid, (unsigned)st.st_gid,
			(unsigned)(st.st_mode & 07777), uid, gid, mode);
		failures++;
	}
}

/* Set-id bits and owners above 65535: kept where the map has the ids,
 * given to root (set-id bits of those files dropped) and counted where it
 * has not. */
static void test_ids(void)
{
	static const struct ent ents[] = {
		{D, "shared", NULL, 0, 02775, 0},
		{F, "shared/tool", "t", 0, 02755, 0},
		{F, "suid", "s", 0, 04755, 0},
		{D, "high", NULL, 0, 02775, 100000},
		{F, "high/suid", "h", 0, 04755, 100000},
		{F, "high/sgid", "g", 0, 06755, 0},
	};
	_cleanup_free_ char *tar = write_tar("ids.tar", "gzip", ents, 6);
	struct isd_idmap small = map;
	struct isd_layer_result res;
	bool high = map.full && isd_idmap_maps(map.uid, map.n_uid, 100000) && isd_idmap_maps(map.gid, map.n_gid, 100000);

	reset_tree();
	CHECK(apply(tar, NULL, &res) == 0);
	check_owner("root/shared", outside_uid(0), outside_gid(map.full ? 50 : 0), 02775);
	check_owner("root/shared/tool", outside_uid(0), outside_gid(map.full ? 50 : 0), 02755);
	check_owner("root/suid", outside_uid(0), outside_gid(0), 04755);
	if (high) {
		fprintf(stderr, "ids above 65535: mapped (inside up to %u)\n", isd_idmap_top(map.uid, map.n_uid));
		CHECK(res.ids_unmapped == 0);
		check_owner("root/high", outside_uid(100000), outside_gid(100000), 02775);
		check_owner("root/high/suid", outside_uid(100000), outside_gid(100000), 04755);
		check_owner("root/high/sgid", outside_uid(0), outside_gid(100000), 06755);
	} else if (!map.full) {
		CHECK(res.ids_unmapped == 0 && res.ownership_flattened == 5);
	}
	if (!map.full)
		return;
	/* The same layer with a map that ends at 65535. */
	for (size_t i = 0; i < small.n_uid; i++)
		if (small.uid[i].inside + (uint64_t)small.uid[i].count > 65536)
			small.uid[i].count = small.uid[i].inside < 65536 ? 65536 - small.uid[i].inside : 0;
	for (size_t i = 0; i < small.n_gid; i++)
		if (small.gid[i].inside + (uint64_t)small.gid[i].count > 65536)
			small.gid[i].count = small.gid[i].inside < 65536 ? 65536 - small.gid[i].inside : 0;
	CHECK(isd_idmap_top(small.uid, small.n_uid) == 65535);
	reset_tree();
	CHECK(apply_with(&small, tar, NULL, &res) == 0);
	CHECK(res.ids_unmapped == 3);
	CHECK(res.unmapped_uid == 100000 && res.unmapped_gid == 100000);
	check_owner("root/shared", outside_uid(0), outside_gid(50), 02775);
	check_owner("root/high", outside_uid(0), outside_gid(0), 02775);      /* a directory keeps its bits */
	check_owner("root/high/suid", outside_uid(0), outside_gid(0), 0755);  /* set-uid root it was not */
	check_owner("root/high/sgid", outside_uid(0), outside_gid(0), 04755); /* its owner was root already */
	check_owner("root/suid", outside_uid(0), outside_gid(0), 04755);
}

/* security.capability of a layer: written by the namespace's root, so the
 * kernel stores it for that root (revision 3, rootid the host id of the
 * image's root), which is what the image's root sees as its own; the
 * host's root keeps revision 2. */
static void test_file_caps(void)
{
	static const struct ent ents[] = {{D, "x", NULL, 0, 0755, 0}, {F, "x/with-cap", "c", 0, 0755, 0}};
	_cleanup_free_ char *tar = write_tar("caps.tar", "none", ents, 2);
	_cleanup_free_ char *file = path_of("root/x/with-cap");
	unsigned char value[32];
	ssize_t n;

	reset_tree();
	CHECK(apply(tar, NULL, NULL) == 0);
	n = getxattr(file, "security.capability", value, sizeof(value));
	if (n < 0) {
		fprintf(stderr, "security.capability not kept here (%s)\n", strerror(errno));
		return;
	}
	if (outside_uid(0) == 0) {
		/* The host's root writes revision 2 as it is. */
		CHECK(n == sizeof(cap_v2) && !memcmp(value, cap_v2, sizeof(cap_v2)));
		return;
	}
	CHECK(n == 24 && value[3] == 0x03);
	CHECK(value[4] == (1 << 5));
	if (n == 24) {
		uint32_t rootid = (uint32_t)value[20] | (uint32_t)value[21] << 8 | (uint32_t)value[22] << 16 |
				  (uint32_t)value[23] << 24;
		CHECK(rootid == outside_uid(0));
	}
}

int main(void)
{
	char tmpl[] = "/tmp/isd-test-layer.XXXXXX";

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(base, sizeof(base), "%s", tmpl);
	isd_idmap_for_caller(&map);
	{
		_cleanup_free_ char *root = path_of("root");
		mkdir(root, 0755);
		if (isd_idmap_remove_tree(&map, root) < 0) {
			fprintf(stderr, "SKIP: no user namespace here: %s\n", isd_error_message());
			rmdir(tmpl);
			return 77;
		}
	}
	{
		_cleanup_free_ char *text = isd_idmap_format(&map);
		fprintf(stderr, "id map: %s\n", text);
	}
	test_compressions();
	test_whiteouts();
	test_hostile();
	test_ids();
	test_file_caps();
	{
		_cleanup_free_ char *root = path_of("root");
		_cleanup_close_ int dfd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
		isd_idmap_remove_tree(&map, root);
		isd_rm_rf_at(dfd, tmpl + 5);
	}
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
