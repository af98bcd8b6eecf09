/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd diff: what a copy-on-write session changed, as git prints it.  A
 * program of its own (LIBEXECDIR/isd/isd-diff, run by `isd diff`) so that
 * only it loads libgit2, whose diff machinery makes the hunks.
 */
#define _GNU_SOURCE
#include "isd/owner-view.h"
#include "isd/agent-state.h"
#include "isd/cli-args.h"
#include "diff-git.h"
#include "isd/session-changes.h"
#include "isd/session-git.h"
#include "isd/session.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "isd/visible.h"
#include "isd/path-util.h"

#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Bigger files are "Binary files ... differ" without being read. */
#define MAX_DIFF_BYTES (64 << 20)

#define STUCK_SECONDS 60

static void stuck(int sig)
{
	static const char msg[] = "\nisd: diff: reading the session did not finish in 60 s (a fifo the payload swapped in "
				  "while it runs?): stop the session and run isd diff again\n";

	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(ISD_EXIT_FAILURE);
}


enum format { PATCH, STAT, NAME_ONLY };

struct stat_row {
	char *name;
	size_t adds, dels;
	char *note; /* instead of counts: binary sizes, a deleted tree */
};

struct differ {
	int project_fd, upper_fd;
	enum format format;
	bool color;
	struct stat_row *rows;
	size_t nrows;
};

static void usage(FILE *out)
{
	fputs("Usage: isd diff [ID] [--stat|--name-only] [--ignored] [--color[=WHEN]] [--] [PATH...]\n"
	      "\n"
	      "What a copy-on-write session (isd exec --workspace DIR:cow) changed in its\n"
	      "project, as a unified diff in git's format (a/ and b/ are the project).  A\n"
	      "deleted directory is one line with its file count unless PATHs select inside\n"
	      "it.  Without ID: the latest session of the current directory's project.\n"
	      "\n"
	      "  --stat          a table of changed lines per file\n"
	      "  --name-only     one path per line after its status: A added, D deleted,\n"
	      "                  M modified, T type changed (file, symlink, directory)\n"
	      "  --ignored       also what the project's .gitignore ignores (build\n"
	      "                  outputs, node_modules/): counted, not shown, by default\n"
	      "  --color[=WHEN]  auto (the default: when stdout is a terminal and\n"
	      "                  NO_COLOR is unset), always or never\n",
	      out);
}

/* git's colours: headers bold, hunk lines cyan, removals red, additions
 * green; the text itself is unchanged, so a coloured patch still applies
 * once the escapes are stripped.  Every byte of the session is made
 * visible (isd/visible.h) first, the escapes in reverse video when in
 * colour: the only escape sequences that reach the terminal are isd's. */
static void print_patch(const struct differ *d, const char *buf, size_t len)
{
	const char *end = buf + len;
	bool header = true;

	if (!d->color) {
		isd_visible_fwrite(stdout, buf, len, true);
		return;
	}
	while (buf < end) {
		const char *nl = memchr(buf, '\n', (size_t)(end - buf));
		size_t n = nl ? (size_t)(nl - buf) : (size_t)(end - buf);
		const char *on = NULL;
		_cleanup_free_ char *text = NULL;

		if (!strncmp(buf, "diff --git ", 11))
			header = true;
		else if (!strncmp(buf, "@@", 2))
			header = false;
		if (header)
			on = "\033[1m";
		else if (buf[0] == '@')
			on = "\033[36m";
		else if (buf[0] == '-')
			on = "\033[31m";
		else if (buf[0] == '+')
			on = "\033[32m";
		text = isd_visible_mark(buf, n, false, "\033[7m", "\033[27m");
		if (on && n)
			printf("%s%s\033[m", on, text);
		else
			fputs(text, stdout);
		if (nl)
			putchar('\n');
		buf += n + (nl ? 1 : 0);
	}
}

/* Said before the patch of a file whose bytes the patch shows escaped: the
 * reader knows the file holds more than it seems, and that this part of
 * the patch does not apply with git apply as it is. */
static void control_note(const struct differ *d, const char *path, size_t count)
{
	_cleanup_free_ char *q = isd_quote_path("", path);

	printf("%s# isd: %s holds %zu control or invisible character%s, shown escaped (^[ is ESC, ^M is CR, <U+202E> a bidi control)%s\n",
	       d->color ? "\033[1;31m" : "", q, count, count == 1 ? "" : "s", d->color ? "\033[m" : "");
}

/* Regular files, symlinks and everything else as git names them. */
static unsigned git_mode(mode_t m)
{
	if (S_ISLNK(m))
		return 0120000;
	if (S_ISDIR(m))
		return 040000 | (m & 07777);
	return 0100000 | (m & 07777);
}

/* The bytes git compares: a file's content or a symlink's target. */
static int read_side(int root, const char *path, mode_t mode, char **buf, size_t *len, bool *too_big)
{
	_cleanup_free_ char *parent = isd_xstrdup(path);
	char *slash = strrchr(parent, '/');
	const char *name = slash ? slash + 1 : parent;
	_cleanup_close_ int pfd = -1, fd = -1;
	struct stat st;

	*buf = NULL;
	*len = 0;
	*too_big = false;
	if (slash)
		*slash = '\0';
	pfd = slash ? isd_openat2(root, parent, O_PATH | O_DIRECTORY | O_CLOEXEC,
				  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
		    : openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (S_ISLNK(mode)) {
		char target[PATH_MAX + 1];
		ssize_t n = readlinkat(pfd, name, target, sizeof(target));

		if (n < 0)
			return -errno;
		*buf = isd_xmalloc((size_t)n + 1);
		memcpy(*buf, target, (size_t)n);
		*len = (size_t)n;
		return 0;
	}
	if (!S_ISREG(mode))
		return 0;
	/* O_NONBLOCK: a fifo swapped in since the walk never blocks the open. */
	fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		/* Unreadable (chmod 000): "Binary files ... differ" as for a
		 * file too big to read. */
		*too_big = true;
		*len = (size_t)st.st_size;
		return 0;
	}
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ESTALE; /* replaced since the walk: the session is running */
	if (st.st_size > MAX_DIFF_BYTES) {
		*too_big = true;
		*len = (size_t)st.st_size;
		return 0;
	}
	{
		size_t cap = (size_t)st.st_size + 1, got = 0;
		char *b = isd_xmalloc(cap);

		for (;;) {
			ssize_t n;

			if (got == cap)
				b = isd_xrealloc(b, cap *= 2);
			n = read(fd, b + got, cap - got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				int r = -errno;
				free(b);
				return r;
			}
			if (n == 0)
				break;
			got += (size_t)n;
		}
		*buf = b;
		*len = got;
	}
	return 0;
}

static void add_row(struct differ *d, const char *path, const char *suffix, size_t adds, size_t dels, char *note)
{
	d->rows = isd_xrealloc(d->rows, (d->nrows + 1) * sizeof(*d->rows));
	d->rows[d->nrows++] = (struct stat_row){
		.name = isd_quote_path(path, suffix),
		.adds = adds,
		.dels = dels,
		.note = note,
	};
}

/* One side (old_mode 0: added; new_mode 0: deleted) or both of a file. */
static int file_patch(struct differ *d, const char *path, mode_t old_mode, mode_t new_mode)
{
	_cleanup_free_ char *old_buf = NULL, *new_buf = NULL;
	size_t old_len = 0, new_len = 0, adds = 0, dels = 0;
	bool old_big = false, new_big = false;
	git_diff_options opts;
	git_patch *patch = NULL;
	git_buf out = {0};
	git_diff_delta *delta;
	int r;

	if (old_mode && (r = read_side(d->project_fd, path, old_mode, &old_buf, &old_len, &old_big)) < 0)
		return isd_error(r, "reading %s in the project", path);
	r = new_mode ? read_side(d->upper_fd, path, new_mode, &new_buf, &new_len, &new_big) : 0;
	if (r == -ESTALE) {
		/* A running session's payload swapped something else in. */
		_cleanup_free_ char *q = isd_quote_path("", path);
		printf("%s# isd: %s changed while isd diff read it (the session is running): run isd diff again%s\n",
		       d->color ? "\033[1;31m" : "", q, d->color ? "\033[m" : "");
		return 0;
	}
	if (r < 0)
		return isd_error(r, "reading %s in the session's upper layer", path);
	if (old_big || new_big) {
		_cleanup_free_ char *a = isd_quote_path("a/", path), *b = isd_quote_path("b/", path);

		if (d->format == STAT) {
			add_row(d, "", path, 0, 0, isd_xasprintf("Bin %zu -> %zu bytes", old_len, new_len));
		} else {
			_cleanup_free_ char *q = isd_quote_path("", path);

			/* Not shown, yet applied whole: said so, loudly. */
			printf("%s# isd: %s (%zu bytes) is not shown: over %d MiB or unreadable; isd apply takes it as it is%s\n",
			       d->color ? "\033[1;31m" : "", q, new_big ? new_len : old_len, MAX_DIFF_BYTES >> 20,
			       d->color ? "\033[m" : "");
			printf("diff --git %s %s\nBinary files %s and %s differ\n", a, b, old_mode ? a : "/dev/null",
			       new_mode ? b : "/dev/null");
		}
		return 0;
	}
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	/* NULL is "no file" to libgit2, an empty buffer an empty file. */
	if (old_mode && !old_buf)
		old_buf = isd_xstrdup("");
	if (new_mode && !new_buf)
		new_buf = isd_xstrdup("");
	if (git_patch_from_buffers(&patch, old_buf, old_len, old_mode ? path : NULL, new_buf, new_len,
				   new_mode ? path : NULL, &opts) < 0)
		return isd_error(0, "diffing %s: %s", path, git_error_last() ? git_error_last()->message : "libgit2 failed");
	/* libgit2 takes every buffer for a 100644 blob. */
	delta = (git_diff_delta *)git_patch_get_delta(patch);
	delta->old_file.mode = (uint16_t)(old_mode ? git_mode(old_mode) : 0);
	delta->new_file.mode = (uint16_t)(new_mode ? git_mode(new_mode) : 0);
	if (d->format == STAT) {
		if (delta->flags & GIT_DIFF_FLAG_BINARY)
			add_row(d, "", path, 0, 0, isd_xasprintf("Bin %zu -> %zu bytes", old_len, new_len));
		else {
			git_patch_line_stats(NULL, &adds, &dels, patch);
			add_row(d, "", path, adds, dels, NULL);
		}
	} else if (git_patch_to_buf(&out, patch) == 0) {
		size_t controls = 0;

		if (!(delta->flags & GIT_DIFF_FLAG_BINARY))
			controls = (old_buf ? isd_visible_count(old_buf, old_len, true) : 0) +
				   (new_buf ? isd_visible_count(new_buf, new_len, true) : 0);
		if (controls)
			control_note(d, path, controls);
		print_patch(d, out.ptr, out.size);
		git_buf_dispose(&out);
	}
	git_patch_free(patch);
	return 0;
}

static void mode_header(struct differ *d, const char *path, mode_t old_mode, mode_t new_mode)
{
	_cleanup_free_ char *a = isd_quote_path("a/", path), *b = isd_quote_path("b/", path);

	if (d->format == STAT)
		add_row(d, "", path, 0, 0, NULL);
	else {
		_cleanup_free_ char *text = isd_xasprintf("diff --git %s %s\nold mode %06o\nnew mode %06o\n", a, b,
							 git_mode(old_mode), git_mode(new_mode));
		print_patch(d, text, strlen(text));
	}
}

static void tree_line(struct differ *d, const struct isd_change *e)
{
	_cleanup_free_ char *q = isd_quote_path(e->path, "/");
	uint64_t n = e->tree_files;

	if (d->format == STAT)
		add_row(d, e->path, "/", 0, 0,
			isd_xasprintf("deleted tree of %llu file%s", (unsigned long long)n, n == 1 ? "" : "s"));
	else
		printf("%s# isd: deleted tree %s (%llu files, more than %d to list one by one: this patch does not "
		       "delete them, isd apply does)%s\n",
		       d->color ? "\033[1;31m" : "", q, (unsigned long long)n, ISD_CHANGES_EXPAND_MAX, d->color ? "\033[m" : "");
}

static bool holds_entries(const struct isd_changes *c, size_t i)
{
	return i + 1 < c->n && isd_path_below(c->v[i + 1].path, c->v[i].path);
}

static void name_line(const struct isd_change *e, bool dir)
{
	_cleanup_free_ char *q = isd_quote_path(e->path, dir ? "/" : "");

	printf("%c\t%s\n", (char)e->status, q);
}

static bool special(mode_t m)
{
	return m && !S_ISREG(m) && !S_ISDIR(m) && !S_ISLNK(m);
}

/* git has no patch for a fifo, socket or device: shown for what it is,
 * never as the empty regular file libgit2 would make of it. */
static void special_line(struct differ *d, const char *path, mode_t m, bool added)
{
	const char *type = S_ISFIFO(m) ? "fifo" : S_ISSOCK(m) ? "socket" : S_ISCHR(m) ? "character device" : S_ISBLK(m) ? "block device" : "special file";
	_cleanup_free_ char *q = isd_quote_path("", path);

	if (d->format == STAT)
		add_row(d, "", path, 0, 0,
			isd_xasprintf("%s %s%s", added ? "new" : "deleted", type, added ? " (isd apply refuses it)" : ""));
	else
		printf("%s# isd: %s %s %s%s%s\n", d->color ? "\033[1;31m" : "", added ? "new" : "deleted", type, q,
		       added ? " in the session: isd apply refuses special files" : "", d->color ? "\033[m" : "");
}

static int show_sides(struct differ *d, const struct isd_changes *c, size_t i)
{
	const struct isd_change *e = &c->v[i];
	bool old_dir = S_ISDIR(e->old_mode), new_dir = S_ISDIR(e->new_mode);
	int r;

	if (special(e->old_mode))
		special_line(d, e->path, e->old_mode, false);
	if (special(e->new_mode)) {
		if (e->old_mode && !special(e->old_mode) && !old_dir && (r = file_patch(d, e->path, e->old_mode, 0)) < 0)
			return r;
		if (old_dir)
			tree_line(d, e);
		special_line(d, e->path, e->new_mode, true);
		return 0;
	}
	if (e->old_mode && !special(e->old_mode)) {
		if (old_dir)
			tree_line(d, e);
		else if ((r = file_patch(d, e->path, e->old_mode, 0)) < 0)
			return r;
	}
	if (e->new_mode) {
		if (!new_dir)
			return file_patch(d, e->path, 0, e->new_mode);
		if (!holds_entries(c, i)) {
			_cleanup_free_ char *q = isd_quote_path(e->path, "/");
			if (d->format == STAT)
				add_row(d, e->path, "/", 0, 0, isd_xstrdup("new empty directory"));
			else
				printf("new empty directory %s\n", q);
		}
	}
	return 0;
}

static int show(struct differ *d, const struct isd_changes *c, size_t i)
{
	const struct isd_change *e = &c->v[i];
	size_t before = d->nrows;
	int r;

	if (d->format == NAME_ONLY) {
		if (!(e->status == ISD_CHANGE_ADDED && S_ISDIR(e->new_mode) && holds_entries(c, i)))
			name_line(e, S_ISDIR(e->old_mode) || S_ISDIR(e->new_mode));
		return 0;
	}
	if (e->status == ISD_CHANGE_MODIFIED && special(e->new_mode)) {
		special_line(d, e->path, e->new_mode, true);
		return 0;
	}
	if (e->status == ISD_CHANGE_MODIFIED) {
		if (e->content)
			return file_patch(d, e->path, e->old_mode, e->new_mode);
		mode_header(d, e->path, e->old_mode, e->new_mode);
		return 0;
	}
	/* Deleted, added or both: a type change is two patches, as git
	 * prints it, but one line of --stat. */
	r = show_sides(d, c, i);
	if (r == 0 && d->nrows == before + 2) {
		struct stat_row *a = &d->rows[before], *b = &d->rows[before + 1];

		a->adds += b->adds;
		a->dels += b->dels;
		if (!a->note && b->note)
			a->note = isd_steal_ptr(b->note);
		free(b->name);
		free(b->note);
		d->nrows--;
	}
	return r;
}

static size_t digits(size_t n)
{
	size_t k = 1;

	while (n >= 10) {
		n /= 10;
		k++;
	}
	return k;
}

/* git's --stat: name | count and a +/- bar scaled to fit 80 columns. */
static void print_stat(struct differ *d)
{
	size_t name_w = 0, max_changes = 0, adds = 0, dels = 0, files = 0, num_w, bar_w;

	for (size_t i = 0; i < d->nrows; i++) {
		size_t len = strlen(d->rows[i].name);

		if (len > name_w)
			name_w = len;
		if (!d->rows[i].note && d->rows[i].adds + d->rows[i].dels > max_changes)
			max_changes = d->rows[i].adds + d->rows[i].dels;
	}
	if (name_w > 50)
		name_w = 50;
	num_w = digits(max_changes);
	bar_w = 80 > name_w + num_w + 6 ? 80 - name_w - num_w - 6 : 10;
	for (size_t i = 0; i < d->nrows; i++) {
		struct stat_row *row = &d->rows[i];
		size_t total = row->adds + row->dels, a = row->adds, x = row->dels;

		files++;
		adds += row->adds;
		dels += row->dels;
		if (row->note) {
			printf(" %-*s | %s\n", (int)name_w, row->name, row->note);
			continue;
		}
		if (max_changes > bar_w) {
			a = (row->adds * bar_w + max_changes - 1) / max_changes;
			x = (row->dels * bar_w + max_changes - 1) / max_changes;
		}
		printf(" %-*s | %*zu%s", (int)name_w, row->name, (int)num_w, total, a + x ? " " : "");
		for (size_t k = 0; k < a; k++)
			putchar('+');
		for (size_t k = 0; k < x; k++)
			putchar('-');
		putchar('\n');
	}
	if (files)
		printf(" %zu file%s changed, %zu insertion%s(+), %zu deletion%s(-)\n", files, files == 1 ? "" : "s", adds,
		       adds == 1 ? "" : "s", dels, dels == 1 ? "" : "s");
	for (size_t i = 0; i < d->nrows; i++) {
		free(d->rows[i].name);
		free(d->rows[i].note);
	}
	free(d->rows);
}

/* What the agent built or installed (node_modules/, target/, *.o) would
 * bury the diff: additions and modifications that the project's own
 * .gitignore ignores are counted, not shown, unless --ignored or PATHs ask
 * for them.  Deletions always show. */
struct ignore {
	git_repository *repo;
	char *prefix; /* the project's path in the work tree: "" or "sub/dir/" */
};

static void ignore_open(const char *project, struct ignore *ig)
{
	const char *workdir, *rest;

	*ig = (struct ignore){0};
	if (git_repository_open_ext(&ig->repo, project, 0, NULL) < 0) {
		ig->repo = NULL;
		return;
	}
	workdir = git_repository_workdir(ig->repo);
	rest = workdir ? isd_path_rest(project, workdir) : NULL;
	if (rest)
		ig->prefix = rest[0] ? isd_xasprintf("%s/", rest) : isd_xstrdup("");
	if (!ig->prefix) {
		git_repository_free(ig->repo);
		ig->repo = NULL;
	}
}

/* A file that is in git's index (force-added although .gitignore matches
 * it) is project content, not build output; for a directory, anything
 * under it. */
static bool tracked(const struct ignore *ig, const char *path, bool dir)
{
	git_index *index = NULL;
	size_t at;
	bool yes;

	if (git_repository_index(&index, ig->repo) < 0)
		return false;
	if (dir) {
		_cleanup_free_ char *prefix = isd_xasprintf("%s/", path);
		yes = git_index_find_prefix(&at, index, prefix) == 0;
	} else {
		yes = git_index_get_bypath(index, path, 0) != NULL;
	}
	git_index_free(index);
	return yes;
}

static bool ignored(const struct ignore *ig, const struct isd_change *e)
{
	_cleanup_free_ char *path = NULL, *bare = NULL;
	int yes = 0;

	/* git ignores its own directory; isd diff sums it up instead. */
	if (!ig->repo || (e->status != ISD_CHANGE_ADDED && e->status != ISD_CHANGE_MODIFIED) || isd_diff_git_path(e))
		return false;
	/* A trailing slash makes directory-only patterns ("build/") match. */
	path = isd_xasprintf("%s%s%s", ig->prefix, e->path, S_ISDIR(e->new_mode) ? "/" : "");
	if (git_ignore_path_is_ignored(&yes, ig->repo, path) < 0 || !yes)
		return false;
	bare = isd_xasprintf("%s%s", ig->prefix, e->path);
	return !tracked(ig, bare, S_ISDIR(e->new_mode));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* Among ignored files, those that run on the host without anyone running
 * them by name: python's startup files (a .pth line starting with
 * "import" runs in every python of that environment), direnv's .envrc,
 * git hook runners (husky), npm's .bin links, and anything executable. */
static bool runs_code(const struct isd_change *e)
{
	const char *base = strrchr(e->path, '/');

	base = base ? base + 1 : e->path;
	if (S_ISDIR(e->new_mode))
		return false;
	return ends_with(base, ".pth") || !strcmp(base, "sitecustomize.py") || !strcmp(base, "usercustomize.py") ||
	       !strcmp(base, ".envrc") ||
	       !strncmp(e->path, ".husky/", 7) || strstr(e->path, "/.husky/") || strstr(e->path, "node_modules/.bin/") ||
	       strstr(e->path, "/hooks/") || (S_ISREG(e->new_mode) && (e->new_mode & 0111));
}

/* For isd apply (which does not link libgit2): every change that .gitignore
 * ignores, NUL-terminated, each prefixed with 'x' when it runs code, '-'
 * otherwise. */
static int list_ignored(struct isd_session *s)
{
	_cleanup_free_ char *upper = isd_session_upper(s);
	_cleanup_close_ int pfd = open(s->project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int ufd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct isd_changes all;
	struct ignore ig;
	int r;

	if (pfd < 0 || ufd < 0)
		return isd_error(-errno, "opening session %s", s->id);
	if ((r = isd_changes_collect(pfd, ufd, &all)) < 0)
		return r;
	ignore_open(s->project, &ig);
	for (size_t i = 0; i < all.n; i++) {
		size_t j = i;

		if (!ignored(&ig, &all.v[i]))
			continue;
		/* An ignored directory takes what it holds. */
		do {
			printf("%c%s%c", runs_code(&all.v[j]) ? 'x' : '-', all.v[j].path, '\0');
		} while (++j < all.n && isd_path_below(all.v[j].path, all.v[i].path));
		i = j - 1;
	}
	git_repository_free(ig.repo);
	free(ig.prefix);
	isd_changes_free(&all);
	return 0;
}

static int run(struct isd_session *s, char **paths, enum format format, bool color, bool show_ignored)
{
	_cleanup_free_ char *upper = isd_session_upper(s), *cwd = getcwd(NULL, 0);
	_cleanup_strv_ char **rel = NULL;
	struct differ d = {.format = format, .color = color, .project_fd = -1, .upper_fd = -1};
	struct isd_changes all, sel;
	struct ignore ig = {0};
	size_t hidden = 0, git_files = 0;
	bool git_done = false;
	int r;

	d.project_fd = open(s->project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.project_fd < 0)
		return isd_error(-errno, "opening the project %s of session %s", s->project, s->id);
	d.upper_fd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d.upper_fd < 0) {
		r = isd_error(-errno, "opening %s", upper);
		goto out;
	}
	for (size_t i = 0; paths && paths[i]; i++) {
		char *p;

		if ((r = isd_project_relative(s->project, cwd, paths[i], &p)) < 0)
			goto out;
		isd_strv_push(&rel, p);
	}
	if ((r = isd_changes_collect(d.project_fd, d.upper_fd, &all)) < 0)
		goto out;
	r = isd_changes_select(d.project_fd, &all, rel, true, &sel);
	isd_changes_free(&all);
	if (r < 0)
		goto out;
	if (!show_ignored && !rel)
		ignore_open(s->project, &ig);
	/* What git on the host would run or lose comes first, whatever
	 * .gitignore hides (isd apply refuses it on the same review). */
	if (format != NAME_ONLY) {
		struct isd_git_review review;
		if (isd_git_review(d.project_fd, d.upper_fd, &sel, &review) == 0) {
			isd_git_review_print(&review, d.color);
			isd_git_review_free(&review);
		}
	}
	/* Without PATHs, the git metadata is one block (isd-diff-git.c). */
	for (size_t i = 0; !rel && format != NAME_ONLY && i < sel.n; i++)
		if (isd_diff_git_path(&sel.v[i]))
			git_files += isd_diff_git_files(&sel.v[i]);
	for (size_t i = 0; i < sel.n && r == 0; i++) {
		if (!rel && format != NAME_ONLY && isd_diff_git_path(&sel.v[i])) {
			if (!git_done && format == STAT)
				add_row(&d, ".git", "/", 0, 0,
					isd_xasprintf("%zu changed file%s of git metadata", git_files, git_files == 1 ? "" : "s"));
			else if (!git_done) {
				/* libgit2 reads the session's objects with blocking
				 * opens: a fifo swapped in while the session runs, after
				 * the check for one, ends isd diff clearly instead of
				 * hanging it. */
				alarm(STUCK_SECONDS);
				isd_diff_git_summary(s->project, upper, d.project_fd, d.upper_fd, &sel, d.color);
				alarm(0);
			}
			git_done = true;
			continue;
		}
		if (ignored(&ig, &sel.v[i])) {
			size_t j = i;

			/* An ignored directory hides what it holds. */
			do {
				hidden += !S_ISDIR(sel.v[j].new_mode);
				/* Hidden, but never what would run code on the host. */
				if (runs_code(&sel.v[j])) {
					_cleanup_free_ char *q = isd_quote_path("", sel.v[j].path);
					printf("%s# isd: ignored by .gitignore but runs code: %s (isd apply takes it only with "
					       "--include-ignored)%s\n",
					       d.color ? "\033[1;31m" : "", q, d.color ? "\033[m" : "");
				}
			} while (++j < sel.n && isd_path_below(sel.v[j].path, sel.v[i].path));
			i = j - 1;
			continue;
		}
		r = show(&d, &sel, i);
	}
	isd_changes_free(&sel);
	if (format == STAT)
		print_stat(&d);
	if (hidden)
		fprintf(stderr, "isd: diff: %zu changed file%s that the project's .gitignore ignores not shown "
				"(isd diff --ignored shows them; isd apply takes them only with --include-ignored)\n",
			hidden, hidden == 1 ? "" : "s");
	git_repository_free(ig.repo);
	free(ig.prefix);
out:
	close(d.project_fd);
	if (d.upper_fd >= 0)
		close(d.upper_fd);
	return r;
}

enum { DIFF_STAT = 1, DIFF_NAME_ONLY, DIFF_COLOR, DIFF_IGNORED, DIFF_LIST_FOR_APPLY };
static const struct isd_cli_flag diff_flags[] = {
	{"--stat", 0, ISD_CLI_NO_VALUE, DIFF_STAT},
	{"--name-only", 0, ISD_CLI_NO_VALUE, DIFF_NAME_ONLY},
	{"--name-status", 0, ISD_CLI_NO_VALUE, DIFF_NAME_ONLY},
	{"--color", 0, ISD_CLI_OPTIONAL_VALUE, DIFF_COLOR},
	{"--ignored", 0, ISD_CLI_NO_VALUE, DIFF_IGNORED},
	{"--list-ignored-for-apply", 0, ISD_CLI_NO_VALUE, DIFF_LIST_FOR_APPLY},
	{0},
};
static const struct isd_cli_command diff_command = {"diff", usage, diff_flags, -1};

int main(int argc, char **argv)
{
	_cleanup_strv_ char **operands = NULL;
	enum format format = PATCH;
	struct isd_session s;
	struct isd_cli_args a = ISD_CLI_ARGS(&diff_command, argc - 1, argv + 1);
	bool consumed = false, id_allowed = true, show_ignored = false, list_for_apply = false;
	const char *term = getenv("TERM"), *no_color = getenv("NO_COLOR");
	bool color = isatty(STDOUT_FILENO) && term && strcmp(term, "dumb") && !(no_color && no_color[0]);
	int r;

	/* Run as `isd diff ...`: argv[1] is "diff". */
	while (isd_cli_next(&a)) {
		switch (a.id) {
		case DIFF_STAT:
			format = STAT;
			break;
		case DIFF_NAME_ONLY:
			format = NAME_ONLY;
			break;
		case DIFF_COLOR:
			if (!a.value || !strcmp(a.value, "always"))
				color = true;
			else if (!strcmp(a.value, "never"))
				color = false;
			else if (strcmp(a.value, "auto")) /* auto: decided above */
				return isd_cli_usage_error(&diff_command, "--color=%s: expected always, never or auto", a.value);
			break;
		case DIFF_IGNORED:
			show_ignored = true;
			break;
		case DIFF_LIST_FOR_APPLY:
			list_for_apply = true;
			break;
		default:
			/* After "--" there are only PATHs. */
			if (!operands && a.options_done)
				id_allowed = false;
			isd_strv_push(&operands, isd_xstrdup(a.value));
		}
	}
	if (a.exit >= 0)
		return a.exit;
	/* The review reads what the payload made unreadable to its owner. */
	if (isd_owner_view_enter() < 0) {
		isd_error_print("diff failed");
		return ISD_EXIT_FAILURE;
	}
	git_libgit2_init();
	signal(SIGALRM, stuck);
	r = isd_session_from_arg(operands && id_allowed ? operands[0] : NULL, false, &s, &consumed);
	if (r == 0) {
		r = list_for_apply ? list_ignored(&s) : run(&s, operands ? operands + consumed : NULL, format, color, show_ignored);
		/* What the agent wrote into its own state and isd holds. */
		if (r == 0 && !list_for_apply && !(operands && operands[consumed]))
			isd_agent_state_print_held(s.id, color);
		isd_session_free(&s);
	}
	git_libgit2_shutdown();
	fflush(stdout);
	if (r < 0) {
		isd_error_print("diff failed");
		return ISD_EXIT_FAILURE;
	}
	return 0;
}
