/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Copy-on-write sessions without an overlay: upper layers made by hand in
 * a temporary directory (whiteouts are 0/0 character devices, which an
 * unprivileged mknod may create; opaque directories an xattr), compared
 * with a project, applied to it, and the session store around them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "isd/fsutil.h"
#include "isd/path-util.h"
#include "isd/session-changes.h"
#include "isd/session.h"
#include "isd/util.h"
#include "isd/visible.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>

static char *tmp_root;
static bool have_opaque = true;

static void put(const char *dir, const char *rel, const char *content, mode_t mode)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", dir, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(isd_write_all(fd, content, strlen(content)) == 0);
	CHECK(fchmod(fd, mode) == 0);
	close(fd);
}

static void mk(const char *dir, const char *rel, mode_t mode)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", dir, rel);

	CHECK(mkdir(path, mode) == 0);
	CHECK(chmod(path, mode) == 0);
}

static void chmod_in(const char *dir, const char *rel, mode_t mode)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", dir, rel);

	CHECK(chmod(path, mode) == 0);
}

static void lnk(const char *dir, const char *rel, const char *target)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", dir, rel);

	CHECK(symlink(target, path) == 0);
}

static void whiteout(const char *dir, const char *rel)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", dir, rel);

	CHECK(mknod(path, S_IFCHR, makedev(0, 0)) == 0);
}

static void opaque(const char *dir, const char *rel)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", dir, rel);

	if (setxattr(path, "user.overlay.opaque", "y", 1, 0) < 0) {
		CHECK(errno == ENOTSUP || errno == EOPNOTSUPP);
		have_opaque = false;
	}
}

static char *fresh(const char *name)
{
	char *dir = isd_xasprintf("%s/%s", tmp_root, name);

	CHECK(mkdir(dir, 0755) == 0);
	return dir;
}

static int dirfd_of(const char *path)
{
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A coarse clock tick or two, so that ctimes before and after differ. */
static void tick(void)
{
	struct timespec ts = {0, 30 * 1000 * 1000};

	nanosleep(&ts, NULL);
}

static const struct isd_change *find(const struct isd_changes *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].path, path))
			return &c->v[i];
	return NULL;
}

/* "path type mode content" lines of a whole tree, sorted: two trees are
 * equal when their listings are. */
static void listing_into(int dfd, const char *prefix, char **out)
{
	_cleanup_close_ int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	if (d)
		fd = -1;
	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			isd_strv_push(&names, isd_xstrdup(de->d_name));
			n++;
		}
	}
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
			char *t = names[k];
			names[k] = names[k - 1];
			names[k - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path = prefix[0] ? isd_xasprintf("%s/%s", prefix, names[i]) : isd_xstrdup(names[i]);
		_cleanup_free_ char *content = NULL, *line = NULL;
		struct stat st;
		char target[256] = "";
		char *joined;

		if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode))
			isd_read_file_at(dirfd(d), names[i], &content, NULL);
		else if (S_ISLNK(st.st_mode))
			(void)!readlinkat(dirfd(d), names[i], target, sizeof(target) - 1);
		line = isd_xasprintf("%s %o %s%s\n", path, (unsigned)st.st_mode & ~(mode_t)(S_ISLNK(st.st_mode) ? 0777 : 0),
				     content ? content : "", target);
		joined = isd_xasprintf("%s%s", *out, line);
		free(*out);
		*out = joined;
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub = openat(dirfd(d), names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
			if (sub >= 0)
				listing_into(sub, path, out);
		}
	}
	if (d)
		closedir(d);
	isd_strv_free(names);
}

static char *listing(const char *dir)
{
	_cleanup_close_ int fd = dirfd_of(dir);
	char *out = isd_xstrdup("");

	if (fd >= 0)
		listing_into(fd, "", &out);
	return out;
}

static size_t entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	while (d && (de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

/* A project and an upper layer with one of every kind of change, and the
 * tree the merged overlay shows (what apply must turn the project into). */
static void build_case(const char *p, const char *u, const char *want)
{
	put(p, "a.txt", "one\n", 0644);
	put(p, "same.txt", "same\n", 0644);
	put(p, "run.sh", "echo\n", 0644);
	mk(p, "d", 0755);
	put(p, "d/f", "f\n", 0644);
	mk(p, "tree", 0755);
	mk(p, "tree/x", 0755);
	put(p, "tree/x/y", "y\n", 0644);
	put(p, "tree/z", "z\n", 0644);
	lnk(p, "link", "a.txt");
	put(p, "typ", "was a file\n", 0644);
	mk(p, "opq", 0755);
	put(p, "opq/o1", "o1\n", 0644);
	put(p, "opq/o2", "o2\n", 0644);
	mk(p, "ro", 0755);

	put(u, "a.txt", "ONE\n", 0644);
	put(u, "same.txt", "same\n", 0644); /* a copy-up that changed nothing */
	put(u, "run.sh", "echo\n", 0755);
	whiteout(u, "d");
	whiteout(u, "tree");
	whiteout(u, "ghost"); /* deleted from the project meanwhile */
	lnk(u, "link", "b.txt");
	mk(u, "typ", 0755);
	put(u, "typ/inner", "inner\n", 0600);
	mk(u, "opq", 0755);
	opaque(u, "opq");
	put(u, "opq/o2", "o2\n", 0644);
	put(u, "opq/o3", "o3\n", 0644);
	mk(u, "new dir", 0750);
	put(u, "new dir/file\nname", "nl\n", 0644);
	put(u, "new dir/caf\xe9", "latin1\n", 0644);
	put(u, "new dir/sp ace", "space\n", 0644);
	mk(u, "ro", 0755);
	mk(u, "ro/fresh", 0755); /* entries land before ro's mode turns read-only */
	chmod_in(u, "ro", 0555);

	put(want, "a.txt", "ONE\n", 0644);
	put(want, "same.txt", "same\n", 0644);
	put(want, "run.sh", "echo\n", 0755);
	lnk(want, "link", "b.txt");
	mk(want, "typ", 0755);
	put(want, "typ/inner", "inner\n", 0600);
	mk(want, "opq", 0755);
	put(want, "opq/o2", "o2\n", 0644);
	put(want, "opq/o3", "o3\n", 0644);
	mk(want, "new dir", 0750);
	put(want, "new dir/file\nname", "nl\n", 0644);
	put(want, "new dir/caf\xe9", "latin1\n", 0644);
	put(want, "new dir/sp ace", "space\n", 0644);
	mk(want, "ro", 0755);
	mk(want, "ro/fresh", 0755);
	chmod_in(want, "ro", 0555);
}

static void test_collect_and_apply(void)
{
	_cleanup_free_ char *p = fresh("p"), *u = fresh("u"), *want = fresh("want");
	_cleanup_free_ char *got = NULL, *expected = NULL;
	_cleanup_close_ int pfd = -1, ufd = -1;
	struct isd_changes c = {0}, sel = {0};
	const struct isd_change *e;
	size_t applied = 0, refused = 0;
	static const char *const order[] = {"a.txt", "d", "link", "new dir", "new dir/caf\xe9", "new dir/file\nname",
					    "new dir/sp ace", "opq/o1", "opq/o3", "ro", "ro/fresh", "run.sh", "tree",
					    "typ", "typ/inner"};

	build_case(p, u, want);
	pfd = dirfd_of(p);
	ufd = dirfd_of(u);
	CHECK(isd_changes_collect(pfd, ufd, &c) == 0);
	if (!have_opaque) {
		fprintf(stderr, "note: no user xattrs in %s: opaque directories not checked\n", tmp_root);
		isd_changes_free(&c);
		return;
	}
	CHECK(c.n == sizeof(order) / sizeof(order[0]));
	for (size_t i = 0; i < c.n && i < sizeof(order) / sizeof(order[0]); i++)
		if (strcmp(c.v[i].path, order[i])) {
			fprintf(stderr, "change %zu: '%s', expected '%s'\n", i, c.v[i].path, order[i]);
			failures++;
		}
	/* The walk says what changed and how. */
	CHECK((e = find(&c, "a.txt")) && e->status == ISD_CHANGE_MODIFIED && e->content);
	CHECK((e = find(&c, "run.sh")) && e->status == ISD_CHANGE_MODIFIED && !e->content &&
	      (e->new_mode & 0777) == 0755 && (e->old_mode & 0777) == 0644);
	CHECK((e = find(&c, "d")) && e->status == ISD_CHANGE_DELETED && S_ISDIR(e->old_mode) && e->tree_files == 1);
	CHECK((e = find(&c, "tree")) && e->status == ISD_CHANGE_DELETED && e->tree_files == 2);
	CHECK((e = find(&c, "link")) && e->status == ISD_CHANGE_MODIFIED && e->content && S_ISLNK(e->new_mode));
	CHECK((e = find(&c, "typ")) && e->status == ISD_CHANGE_TYPE && S_ISREG(e->old_mode) && S_ISDIR(e->new_mode));
	CHECK((e = find(&c, "typ/inner")) && e->status == ISD_CHANGE_ADDED);
	CHECK((e = find(&c, "opq/o1")) && e->status == ISD_CHANGE_DELETED && S_ISREG(e->old_mode));
	CHECK((e = find(&c, "opq/o3")) && e->status == ISD_CHANGE_ADDED);
	CHECK((e = find(&c, "new dir")) && e->status == ISD_CHANGE_ADDED && S_ISDIR(e->new_mode));
	CHECK((e = find(&c, "ro")) && e->status == ISD_CHANGE_MODIFIED && S_ISDIR(e->new_mode));
	CHECK(!find(&c, "same.txt") && !find(&c, "ghost") && !find(&c, "opq/o2") && !find(&c, "opq"));
	/* "new dir" only holds added entries: no change of its own. */
	CHECK(isd_changes_count(&c) == c.n - 1);

	/* PATHs inside a deleted tree: per file for diffs, one subtree to apply. */
	{
		char *paths[] = {"tree/x", NULL};
		CHECK(isd_changes_select(pfd, &c, paths, true, &sel) == 0);
		CHECK(sel.n == 1 && !strcmp(sel.v[0].path, "tree/x/y") && sel.v[0].status == ISD_CHANGE_DELETED);
		isd_changes_free(&sel);
		CHECK(isd_changes_select(pfd, &c, paths, false, &sel) == 0);
		CHECK(sel.n == 1 && !strcmp(sel.v[0].path, "tree/x") && sel.v[0].tree_files == 1);
		isd_changes_free(&sel);
	}
	/* A file brings its new directory along. */
	{
		char *paths[] = {"new dir/caf\xe9", NULL};
		CHECK(isd_changes_select(pfd, &c, paths, false, &sel) == 0);
		CHECK(sel.n == 2 && !strcmp(sel.v[0].path, "new dir") && !strcmp(sel.v[1].path, "new dir/caf\xe9"));
		CHECK(isd_changes_apply(pfd, ufd, &sel, now_ns(), false, &applied, &refused) == 0);
		CHECK(applied == 1 && refused == 0); /* counted as isd session list counts */
		isd_changes_free(&sel);
		isd_changes_free(&c);
		/* Applied: gone from the upper layer, the rest still there
		 * ("new dir" exists in the project now). */
		CHECK(isd_changes_collect(pfd, ufd, &c) == 0);
		CHECK(c.n == sizeof(order) / sizeof(order[0]) - 2 && !find(&c, "new dir/caf\xe9") && !find(&c, "new dir"));
	}
	CHECK(isd_changes_apply(pfd, ufd, &c, now_ns(), false, &applied, &refused) == 0);
	CHECK(refused == 0);
	isd_changes_free(&c);
	got = listing(p);
	expected = listing(want);
	if (strcmp(got, expected)) {
		fprintf(stderr, "project after apply:\n%s\nexpected:\n%s\n", got, expected);
		failures++;
	}
	CHECK(isd_changes_collect(pfd, ufd, &c) == 0 && c.n == 0);
	isd_changes_free(&c);
	/* Everything applied (and the copy-up) left the upper layer. */
	CHECK(entries(u) == 0);
	chmod_in(p, "ro", 0755);
	chmod_in(want, "ro", 0755);
}

static void test_refusals(void)
{
	_cleanup_free_ char *p = fresh("rp"), *u = fresh("ru"), *outside = fresh("outside");
	_cleanup_free_ char *content = NULL, *sub = NULL, *moved = NULL;
	_cleanup_close_ int pfd = -1, ufd = -1;
	struct isd_changes c = {0};
	size_t applied = 0, refused = 0;
	int64_t started;

	put(p, "host.txt", "host\n", 0644);
	put(p, "quiet.txt", "quiet\n", 0644);
	mk(p, "sub", 0755);
	put(p, "sub/old", "old\n", 0644);
	tick();
	started = now_ns();
	tick();
	/* Changed on the host while the session ran. */
	put(p, "host.txt", "host edit\n", 0644);
	put(u, "host.txt", "sandbox edit\n", 0644);
	put(u, "quiet.txt", "sandbox\n", 0644);
	mk(u, "sub", 0755);
	put(u, "sub/new", "new\n", 0644);
	pfd = dirfd_of(p);
	ufd = dirfd_of(u);
	CHECK(isd_changes_collect(pfd, ufd, &c) == 0);
	CHECK(c.n == 3);
	/* Between the walk and the writes, sub becomes a symlink out of
	 * the project: nothing may be written through it. */
	sub = isd_xasprintf("%s/sub", p);
	moved = isd_xasprintf("%s/sub.moved", p);
	CHECK(rename(sub, moved) == 0);
	CHECK(symlink(outside, sub) == 0);
	CHECK(isd_changes_apply(pfd, ufd, &c, started, false, &applied, &refused) == 0);
	CHECK(applied == 0 && refused == 2);
	CHECK(entries(outside) == 0);
	/* All or nothing: the change nobody refused is not applied either. */
	CHECK(isd_read_file_at(pfd, "host.txt", &content, NULL) == 0 && !strcmp(content, "host edit\n"));
	free(content);
	content = NULL;
	CHECK(isd_read_file_at(pfd, "quiet.txt", &content, NULL) == 0 && !strcmp(content, "quiet\n"));
	free(content);
	content = NULL;
	CHECK(entries(p) == 4); /* host.txt quiet.txt sub sub.moved: no staged leftovers */
	isd_changes_free(&c);
	/* The refused ones stay in the session (sub compares as a symlink
	 * replaced by a directory now). */
	CHECK(isd_changes_collect(pfd, ufd, &c) == 0);
	CHECK(c.n == 4 && find(&c, "host.txt") && find(&c, "sub/new") && find(&c, "sub")->status == ISD_CHANGE_TYPE);
	isd_changes_free(&c);
	/* --force overwrites the host's edit, never follows the symlink. */
	CHECK(unlink(sub) == 0 && rename(moved, sub) == 0);
	CHECK(isd_changes_collect(pfd, ufd, &c) == 0);
	CHECK(isd_changes_apply(pfd, ufd, &c, started, true, &applied, &refused) == 0);
	CHECK(applied == 3 && refused == 0);
	CHECK(isd_read_file_at(pfd, "host.txt", &content, NULL) == 0 && !strcmp(content, "sandbox edit\n"));
	isd_changes_free(&c);
	/* A deleted tree with a file the host changed is refused whole. */
	{
		_cleanup_free_ char *u2 = fresh("ru2");
		_cleanup_close_ int u2fd = -1;

		whiteout(u2, "sub");
		u2fd = dirfd_of(u2);
		CHECK(isd_changes_collect(pfd, u2fd, &c) == 0);
		CHECK(isd_changes_apply(pfd, u2fd, &c, started, false, &applied, &refused) == 0);
		CHECK(applied == 0 && refused == 1);
		CHECK(access(sub, F_OK) == 0);
		isd_changes_free(&c);
	}
}

static void test_quote_and_paths(void)
{
	char *s;

	CHECK(!strcmp(s = isd_quote_path("a/", "sp ace"), "a/sp ace"));
	free(s);
	CHECK(!strcmp(s = isd_quote_path("a/", "new\nline"), "\"a/new\\nline\""));
	free(s);
	CHECK(!strcmp(s = isd_quote_path("b/", "caf\xe9"), "\"b/caf\\351\""));
	free(s);
	CHECK(!strcmp(s = isd_quote_path("", "q\"b\\t\x01"), "\"q\\\"b\\\\t\\001\""));
	free(s);
	/* What reaches a terminal: C0 as ^X, C1, bidi and broken UTF-8 marked,
	 * valid UTF-8 and tabs as they are. */
	CHECK(!strcmp(s = isd_visible("\tid\r\t@echo\033[K\n", 14, true), "\tid^M\t@echo^[[K\n"));
	free(s);
	CHECK(!strcmp(s = isd_visible("a\nb\x7f\0c", 6, false), "a^Jb^?^@c"));
	free(s);
	CHECK(!strcmp(s = isd_visible_str("caf\xc3\xa9 \xe2\x80\xae \xc2\x9b \xff \xc3"), "caf\xc3\xa9 <U+202E> <U+009B> <FF> <C3>"));
	free(s);
	CHECK(isd_visible_count("plain\ttext\n", 11, true) == 0);
	/* Whatever the bytes, what comes out holds no control byte but TAB
	 * and LF, no DEL and no C1 control (C2 80..9F). */
	{
		unsigned seed = 1;

		for (int round = 0; round < 20000; round++) {
			unsigned char in[32];
			size_t n = (size_t)(round % 32);
			char *v;

			for (size_t k = 0; k < n; k++) {
				seed = seed * 1103515245u + 12345u;
				in[k] = (unsigned char)(seed >> 16);
			}
			v = isd_visible((const char *)in, n, true);
			for (const unsigned char *q = (const unsigned char *)v; *q; q++) {
				if ((*q < 0x20 && *q != '\t' && *q != '\n') || *q == 0x7f ||
				    (q[0] == 0xc2 && q[1] >= 0x80 && q[1] <= 0x9f)) {
					fprintf(stderr, "visible: raw byte %02x left in round %d\n", *q, round);
					failures++;
					break;
				}
			}
			free(v);
		}
	}
	CHECK(isd_visible_count("\033\r\n", 3, false) == 3);
	CHECK(!strcmp(s = isd_visible_mark("a\rb", 3, false, "[", "]"), "a[^M]b"));
	free(s);
	CHECK(isd_project_relative("/home/u/p", "/home/u/p/src", "a.c", &s) == 0 && !strcmp(s, "src/a.c"));
	free(s);
	CHECK(isd_project_relative("/home/u/p", "/home/u/p/src", "../b/./c", &s) == 0 && !strcmp(s, "b/c"));
	free(s);
	CHECK(isd_project_relative("/home/u/p", "/tmp", "docs", &s) == 0 && !strcmp(s, "docs"));
	free(s);
	CHECK(isd_project_relative("/home/u/p", "/home/u/p", "/home/u/p", &s) == 0 && !strcmp(s, ""));
	free(s);
	CHECK(isd_project_relative("/home/u/p", "/home/u/p", "..", &s) == -EINVAL);
	CHECK(isd_project_relative("/home/u/p", "/home/u/p", "/home/u/pp/x", &s) == -EINVAL);
}

static void fake_session(const char *root, const char *id, const char *project, int64_t started)
{
	_cleanup_free_ char *dir = isd_xasprintf("%s/%s", root, id);
	_cleanup_free_ char *json = isd_xasprintf("{\"id\":\"%s\",\"project\":\"%s\",\"started_ns\":%lld}", id, project,
						 (long long)started);

	CHECK(isd_mkdir_p(dir, 0700) == 0);
	mk(dir, "upper", 0700);
	mk(dir, "work", 0700);
	put(dir, "session.json", json, 0600);
}

static void test_store(void)
{
	_cleanup_free_ char *state = fresh("state"), *project = fresh("proj"), *root = NULL, *upper = NULL;
	_cleanup_free_ char *inner = NULL, *work = NULL;
	char *argv[] = {"sh", "-c", "true", NULL};
	struct isd_session s, t;
	struct stat st;

	setenv("XDG_STATE_HOME", state, 1);
	root = isd_session_root();
	mk(project, "src", 0755);
	CHECK(isd_session_create(project, argv, false, &s) == 0);
	CHECK(strlen(s.id) == 12 && strspn(s.id, "0123456789abcdef") == 12);
	CHECK(s.lock_fd >= 0 && s.started_ns > 0 && s.command && !strcmp(s.command[2], "true"));
	CHECK(stat(s.dir, &st) == 0 && (st.st_mode & 0777) == 0700);
	upper = isd_session_upper(&s);
	CHECK(stat(upper, &st) == 0 && (st.st_mode & 0777) == 0755); /* the project's */
	/* Held: running for everyone else, and not to be taken. */
	CHECK(isd_session_open(s.id, false, &t) == 0);
	CHECK(isd_session_is_running(&t) && !strcmp(t.project, project) && t.started_ns == s.started_ns);
	isd_session_free(&t);
	CHECK(isd_session_open(s.id, true, &t) == -EBUSY);
	CHECK(strstr(isd_error_message(), s.id) != NULL);
	/* The kernel's leftovers in work/ do not stop a removal. */
	work = isd_session_work(&s);
	mk(work, "work", 0700);
	put(work, "work/x", "x", 0600);
	chmod_in(work, "work", 0);
	/* Nothing changed: finish removes it. */
	isd_session_finish(&s);
	CHECK(access(s.dir, F_OK) < 0 && entries(root) == 0);
	isd_session_free(&s);

	/* A change: kept, stopped, found from inside the project. */
	CHECK(isd_session_create(project, argv, false, &s) == 0);
	free(upper);
	upper = isd_session_upper(&s);
	put(upper, "added", "a\n", 0644);
	isd_session_finish(&s);
	CHECK(access(s.dir, F_OK) == 0 && s.lock_fd < 0);
	inner = isd_xasprintf("%s/src", project);
	CHECK(isd_session_find_latest(inner, true, &t) == 0 && !strcmp(t.id, s.id) && t.lock_fd >= 0);
	isd_session_free(&t);
	CHECK(isd_session_find_latest(state, false, &t) == -ENOENT);
	/* A crash leaves the lock free: stopped. */
	CHECK(isd_session_open(s.id, false, &t) == 0 && !isd_session_is_running(&t));
	isd_session_free(&t);

	/* Prefixes: unique, ambiguous, unknown, not hex; the newest wins. */
	fake_session(root, "aaaaaaaaaaa1", project, s.started_ns + 10);
	fake_session(root, "aaaaaaaaaaa2", project, s.started_ns + 20);
	CHECK(isd_session_open("aaaaaaaaaaa1", false, &t) == 0 && !strcmp(t.id, "aaaaaaaaaaa1"));
	isd_session_free(&t);
	CHECK(isd_session_open("aaaa", false, &t) < 0 && strstr(isd_error_message(), "ambiguous"));
	CHECK(isd_session_open("fff", false, &t) == -ENOENT);
	CHECK(isd_session_open("../x", false, &t) == -EINVAL);
	/* The newest with changes: empty newer ones (a crash) do not win. */
	CHECK(isd_session_find_latest(project, false, &t) == 0 && !strcmp(t.id, s.id));
	isd_session_free(&t);
	{
		_cleanup_free_ char *upper2 = isd_xasprintf("%s/aaaaaaaaaaa2/upper", root);
		put(upper2, "agent.txt", "x\n", 0644);
	}
	CHECK(isd_session_find_latest(project, false, &t) == 0 && !strcmp(t.id, "aaaaaaaaaaa2"));
	isd_session_free(&t);
	CHECK(isd_session_open(s.id, true, &t) == 0);
	CHECK(isd_session_remove(&t) == 0 && access(s.dir, F_OK) < 0);
	isd_session_free(&t);
	isd_session_free(&s);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	umask(022);
	tmp_root = isd_xasprintf("%s/isd-test-session.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!mkdtemp(tmp_root)) {
		perror("mkdtemp");
		return 1;
	}
	test_quote_and_paths();
	test_collect_and_apply();
	test_refusals();
	test_store();
	{
		char *slash = strrchr(tmp_root, '/');
		_cleanup_close_ int parent = -1;

		*slash = '\0';
		parent = open(tmp_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (parent >= 0)
			isd_rm_rf_at(parent, slash + 1);
	}
	free(tmp_root);
	return check_result();
}
