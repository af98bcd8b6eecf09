/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "diff-git.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "isd/visible.h"

#include <dirent.h>
#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Enough to see what an agent did; the rest is counted. */
#define MAX_COMMITS_SHOWN 10
/* A walk that finds no end (a new branch on a long history) stops here. */
#define MAX_COMMITS_WALKED 1000

bool isd_diff_git_path(const struct isd_change *e)
{
	if (!strcmp(e->path, ".git"))
		return S_ISDIR(e->old_mode) || S_ISDIR(e->new_mode);
	return !strncmp(e->path, ".git/", 5);
}

size_t isd_diff_git_files(const struct isd_change *e)
{
	/* A deleted directory is every file it held. */
	if (S_ISDIR(e->old_mode) && (e->status == ISD_CHANGE_DELETED || e->status == ISD_CHANGE_TYPE))
		return (size_t)e->tree_files + (e->new_mode && !S_ISDIR(e->new_mode));
	return !S_ISDIR(e->old_mode) && !S_ISDIR(e->new_mode);
}

/* The first line of a small regular file beneath dfd, or NULL: absent, a
 * whiteout, a link, anything else. */
static char *first_line(int dfd, const char *path)
{
	_cleanup_close_ int fd = isd_openat2(dfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
					    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	_cleanup_free_ char *text = NULL;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || isd_read_fd(fd, &text, NULL) < 0)
		return NULL;
	text[strcspn(text, "\n")] = '\0';
	return text[0] ? isd_steal_ptr(text) : NULL;
}

struct git_view {
	int project_fd, upper_fd;
	const char *project, *upper;
	bool color;
	git_repository *repo; /* the session's objects and the project's, opened when needed */
	bool repo_failed;
};

/* libgit2 opens object files without O_NONBLOCK: a fifo the payload put
 * among the session's objects would hang isd diff.  Only directories and
 * regular files there, or the session's objects are not read. */
static bool plain_tree(int dfd, const char *name, int depth)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	bool plain = true;
	DIR *d;

	if (fd < 0)
		return errno == ENOENT;
	if (depth > 3 || !(d = fdopendir(fd)))
		return false;
	fd = -1;
	while (plain && (de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			plain = plain_tree(dirfd(d), de->d_name, depth + 1);
		else if (!S_ISREG(st.st_mode) && !(S_ISCHR(st.st_mode) && st.st_rdev == 0))
			plain = false; /* but a whiteout */
	}
	closedir(d);
	return plain;
}

static git_repository *objects(struct git_view *v)
{
	git_odb *odb = NULL;
	_cleanup_free_ char *mine = isd_xasprintf("%s/.git/objects", v->upper);
	_cleanup_free_ char *theirs = isd_xasprintf("%s/.git/objects", v->project);

	if (v->repo || v->repo_failed)
		return v->repo;
	if (!plain_tree(v->upper_fd, ".git/objects", 0)) {
		printf("  %sthe session's .git/objects holds something that is not a file (a fifo?): its commits are not read%s\n",
		       v->color ? "\033[1;31m" : "", v->color ? "\033[m" : "");
		v->repo_failed = true;
		return NULL;
	}
	/* New commits are loose objects in the upper layer; their parents
	 * are in the project.  Content addressing makes the order moot. */
	if (git_odb_new(&odb) < 0 || (access(mine, F_OK) == 0 && git_odb_add_disk_alternate(odb, mine) < 0) ||
	    git_odb_add_disk_alternate(odb, theirs) < 0 || git_repository_wrap_odb(&v->repo, odb) < 0) {
		v->repo = NULL;
		v->repo_failed = true;
	}
	git_odb_free(odb);
	return v->repo;
}

/* What a ref file holds is the session's: at most 7 bytes of it, visible. */
static const char *short_id(const char *hex, char buf[64])
{
	_cleanup_free_ char *v = isd_visible(hex, strnlen(hex, 7), false);

	snprintf(buf, 64, "%s", v);
	return buf;
}

/* The commit a ref file names, following one "ref: " indirection in the
 * project (for HEAD). */
static char *project_head(struct git_view *v)
{
	_cleanup_free_ char *head = first_line(v->project_fd, ".git/HEAD");
	_cleanup_free_ char *path = NULL;

	if (!head || strncmp(head, "ref: ", 5))
		return isd_steal_ptr(head);
	path = isd_xasprintf(".git/%s", head + 5);
	return first_line(v->project_fd, path);
}

static void list_commits(struct git_view *v, const char *new_hex, const char *old_hex)
{
	git_repository *repo = objects(v);
	git_revwalk *walk = NULL;
	git_oid oid, hide;
	size_t shown = 0, walked = 0;
	_cleanup_free_ char *base = old_hex ? NULL : project_head(v);

	if (!repo || git_oid_fromstr(&oid, new_hex) < 0 || git_revwalk_new(&walk, repo) < 0)
		return;
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
	if (git_revwalk_push(walk, &oid) < 0)
		goto out;
	/* A new branch: what is not on the project's HEAD. */
	if ((old_hex || base) && git_oid_fromstr(&hide, old_hex ? old_hex : base) == 0)
		(void)git_revwalk_hide(walk, &hide);
	while (walked < MAX_COMMITS_WALKED && git_revwalk_next(&oid, walk) == 0) {
		git_commit *commit = NULL;
		char hex[GIT_OID_HEXSZ + 1], *subject;

		walked++;
		if (shown == MAX_COMMITS_SHOWN || git_commit_lookup(&commit, repo, &oid) < 0)
			continue;
		git_oid_tostr(hex, sizeof(hex), &oid);
		subject = isd_visible_str(git_commit_summary(commit));
		printf("    %s%.7s%s %s\n", v->color ? "\033[33m" : "", hex, v->color ? "\033[m" : "", subject);
		free(subject);
		git_commit_free(commit);
		shown++;
	}
	if (walked > shown)
		printf("    ... and %s%zu more\n", walked == MAX_COMMITS_WALKED ? "at least " : "", walked - shown);
out:
	git_revwalk_free(walk);
}

/* What one side's packed-refs says about ref ("refs/heads/x"): the
 * session's file when it has one (a whiteout: none), else the project's. */
static char *packed_ref(struct git_view *v, bool session, const char *ref)
{
	int fds[2] = {v->upper_fd, v->project_fd};
	struct stat st;

	for (int i = session ? 0 : 1; i < 2; i++) {
		_cleanup_close_ int fd = isd_openat2(fds[i], ".git/packed-refs", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
						    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		_cleanup_free_ char *text = NULL;

		if (fd < 0 && i == 0 && fstatat(fds[i], ".git/packed-refs", &st, AT_SYMLINK_NOFOLLOW) == 0)
			return NULL; /* a whiteout: the session removed it */
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || isd_read_fd(fd, &text, NULL) < 0)
			return NULL;
		for (char *line = text; line && *line;) {
			char *nl = strchr(line, '\n'), *sp = strchr(line, ' ');
			if (nl)
				*nl = '\0';
			if (line[0] != '#' && line[0] != '^' && sp && !strcmp(sp + 1, ref) && sp > line) {
				*sp = '\0';
				return isd_xstrdup(line);
			}
			line = nl ? nl + 1 : NULL;
		}
		return NULL;
	}
	return NULL;
}

static void ref_line(struct git_view *v, const struct isd_change *e, const char *kind, const char *name)
{
	_cleanup_free_ char *old = first_line(v->project_fd, e->path);
	_cleanup_free_ char *new = e->status == ISD_CHANGE_DELETED ? NULL : first_line(v->upper_fd, e->path);
	_cleanup_free_ char *shown = isd_quote_path("", name);
	char a[64], b[64];

	/* git pack-refs (git gc) moves a loose ref into packed-refs: no move. */
	if (!old)
		old = packed_ref(v, false, e->path + 5);
	if (!new && e->status == ISD_CHANGE_DELETED)
		new = packed_ref(v, true, e->path + 5);
	if ((!old && !new) || (old && new && !strcmp(old, new)))
		return;
	if (!new)
		printf("  %s %s: deleted (was %s)\n", kind, shown, short_id(old, a));
	else if (!old)
		printf("  %s %s: new at %s\n", kind, shown, short_id(new, b));
	else
		printf("  %s %s: %s -> %s\n", kind, shown, short_id(old, a), short_id(new, b));
	if (new)
		list_commits(v, new, old);
}

static bool in_changes(const struct isd_changes *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].path, path))
			return true;
	return false;
}

/* The branches and tags whose packed value moved, where no loose ref of
 * either side decides instead. */
static void packed_lines(struct git_view *v, const struct isd_changes *c)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_strv_ char **refs = NULL;
	int sides[2] = {v->upper_fd, v->project_fd};

	for (int s = 0; s < 2; s++) {
		_cleanup_close_ int fd = isd_openat2(sides[s], ".git/packed-refs", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
						    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		struct stat st;

		free(text);
		text = NULL;
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || isd_read_fd(fd, &text, NULL) < 0)
			continue;
		for (char *line = text; line && *line;) {
			char *nl = strchr(line, '\n'), *sp = strchr(line, ' ');
			if (nl)
				*nl = '\0';
			if (line[0] != '#' && line[0] != '^' && sp &&
			    (!strncmp(sp + 1, "refs/heads/", 11) || !strncmp(sp + 1, "refs/tags/", 10))) {
				bool dup = false;
				for (size_t i = 0; refs && refs[i] && !dup; i++)
					dup = !strcmp(refs[i], sp + 1);
				if (!dup)
					isd_strv_push(&refs, isd_xstrdup(sp + 1));
			}
			line = nl ? nl + 1 : NULL;
		}
	}
	for (size_t i = 0; refs && refs[i]; i++) {
		_cleanup_free_ char *loose = isd_xasprintf(".git/%s", refs[i]);
		_cleanup_free_ char *p_loose = first_line(v->project_fd, loose), *u_loose = first_line(v->upper_fd, loose);
		struct isd_change e = {.path = loose, .status = ISD_CHANGE_MODIFIED};
		bool tag = !strncmp(refs[i], "refs/tags/", 10);

		if (in_changes(c, loose) || p_loose || u_loose)
			continue;
		/* ref_line reads the packed values of both sides. */
		e.status = ISD_CHANGE_DELETED;
		ref_line(v, &e, tag ? "tag" : "branch", refs[i] + (tag ? 10 : 11));
	}
}

void isd_diff_git_summary(const char *project, const char *upper, int project_fd, int upper_fd,
			  const struct isd_changes *c, bool color)
{
	struct git_view v = {.project_fd = project_fd, .upper_fd = upper_fd, .project = project, .upper = upper,
			     .color = color};
	size_t files = 0;

	for (size_t i = 0; i < c->n; i++)
		if (isd_diff_git_path(&c->v[i]))
			files += isd_diff_git_files(&c->v[i]);
	printf("%sgit metadata .git/: %zu changed file%s (isd diff -- .git shows them)%s\n", color ? "\033[1m" : "",
	       files, files == 1 ? "" : "s", color ? "\033[m" : "");
	for (size_t i = 0; i < c->n; i++) {
		const struct isd_change *e = &c->v[i];

		if (!strcmp(e->path, ".git/HEAD")) {
			_cleanup_free_ char *old = first_line(project_fd, e->path);
			_cleanup_free_ char *new = first_line(upper_fd, e->path);
			if (old && new && strcmp(old, new)) {
				_cleanup_free_ char *o = isd_visible_str(strncmp(old, "ref: ", 5) ? old : old + 5);
				_cleanup_free_ char *n = isd_visible_str(strncmp(new, "ref: ", 5) ? new : new + 5);
				printf("  HEAD: %s -> %s\n", o, n);
			}
		} else if (!strncmp(e->path, ".git/refs/heads/", 16)) {
			ref_line(&v, e, "branch", e->path + 16);
		} else if (!strncmp(e->path, ".git/refs/tags/", 15)) {
			ref_line(&v, e, "tag", e->path + 15);
		} else if (!strcmp(e->path, ".git/packed-refs")) {
			packed_lines(&v, c);
		}
	}
	git_repository_free(v.repo);
}
