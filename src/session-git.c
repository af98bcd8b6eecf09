/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The review of a session's git metadata (see include/isd/session-git.h).
 * A repository is any directory named .git among the changes (the
 * project's own, a nested one, a submodule's under .git/modules); what git
 * reads there as configuration or runs is classified by its path relative
 * to that directory.  Files are read with RESOLVE_BENEATH and without
 * following symlinks, and only when they are regular files: the session's
 * upper layer is the agent's.
 */
#define _GNU_SOURCE
#include "isd/session-git.h"
#include "git-config.h"
#include "session-apply.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "isd/path-util.h"
#include "isd/visible.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define HASH_MAX 32
/* Deleted objects isd looks up; a bigger loss is reported as "at least". */
#define MAX_IDS (4u << 20)

struct reviewer {
	int project_fd, upper_fd;
	const struct isd_changes *c;
	struct isd_git_review *out;
	char **hooks_dirs;   /* core.hooksPath targets inside the project, relative */
	char **config_files; /* include.path targets inside the project, relative */
	char project[PATH_MAX]; /* "" when unknown */
};

static char *xstrndup(const char *s, size_t n)
{
	char *d = isd_xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static int open_beneath(int root, const char *path)
{
	return isd_openat2(root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
			   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* A regular file's content, or NULL (absent, whiteout, link, device). */
static char *read_regular(int root, const char *path, size_t *len)
{
	_cleanup_close_ int fd = open_beneath(root, path);
	char *text = NULL;
	struct stat st;

	*len = 0;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || isd_read_fd(fd, &text, len) < 0)
		return NULL;
	return text;
}

static void add(struct reviewer *rv, enum isd_git_kind kind, const char *path, char *text)
{
	struct isd_git_review *o = rv->out;

	o->v = isd_xrealloc(o->v, (o->n + 1) * sizeof(*o->v));
	o->v[o->n].kind = kind;
	o->v[o->n].path = isd_xstrdup(path);
	o->v[o->n++].text = text;
	o->n_exec += kind == ISD_GIT_EXEC;
	o->n_history += kind == ISD_GIT_HISTORY;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The repository directory a path lies in: the first component ".git";
 * *rel is the rest ("" for the .git entry itself). */
static bool git_split(const char *path, size_t *gitdir_len, const char **rel)
{
	for (const char *p = path;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n == 4 && !memcmp(p, ".git", 4)) {
			*gitdir_len = (size_t)(p - path) + 4;
			*rel = slash ? slash + 1 : "";
			return true;
		}
		if (!slash)
			return false;
		p = slash + 1;
	}
}

/* A submodule's repository under modules/ (whose names may hold "/"),
 * a linked worktree's under worktrees/NAME: *inner is the path inside it,
 * or rel itself for the repository's own files. */
static const char *inner_path(const char *rel)
{
	if (!strncmp(rel, "worktrees/", 10)) {
		const char *s = strchr(rel + 10, '/');
		return s ? s + 1 : rel;
	}
	if (strncmp(rel, "modules/", 8))
		return rel;
	/* The first component that is one of a repository's own names (a
	 * branch named "config" under refs/ is a ref, not a config). */
	for (const char *p = rel + 8; (p = strchr(p, '/')); p++) {
		const char *n = p + 1;
		if (!strncmp(n, "hooks/", 6) || !strcmp(n, "config") || !strcmp(n, "config.worktree") ||
		    !strcmp(n, "commondir") || !strncmp(n, "objects/", 8) || !strncmp(n, "refs/", 5) ||
		    !strncmp(n, "logs/", 5) || !strcmp(n, "shallow") || !strncmp(n, "info/", 5))
			return n;
	}
	return rel;
}

static bool in_list(char **list, const char *path, bool prefix)
{
	for (size_t i = 0; list && list[i]; i++) {
		if (!strcmp(list[i], path) || (prefix && isd_path_below(path, list[i])))
			return true;
	}
	return false;
}

static char *entry_text(char sign, const struct isd_git_entry *e)
{
	_cleanup_free_ char *k = isd_quote_path("", e->key);
	_cleanup_free_ char *v = e->value ? isd_quote_path("", e->value) : NULL;

	/* A value with spaces (or none) shows quoted, as git would write it. */
	if (v && v[0] != '"' && (!v[0] || strchr(v, ' '))) {
		char *q = isd_xasprintf("\"%s\"", v);
		free(v);
		v = q;
	}
	return v ? isd_xasprintf("%c %s = %s", sign, k, v) : isd_xasprintf("%c %s", sign, k);
}

static bool has_pair(const struct isd_git_config *c, const struct isd_git_entry *e, bool *used)
{
	for (size_t i = 0; i < c->n; i++)
		if (!used[i] && !strcmp(c->v[i].key, e->key) &&
		    ((!c->v[i].value && !e->value) || (c->v[i].value && e->value && !strcmp(c->v[i].value, e->value)))) {
			used[i] = true;
			return true;
		}
	return false;
}

/* Added and removed key/value pairs, each an entry of its own. */
static void review_config(struct reviewer *rv, const struct isd_change *e)
{
	size_t old_len = 0, new_len = 0;
	_cleanup_free_ char *old = e->old_mode ? read_regular(rv->project_fd, e->path, &old_len) : NULL;
	_cleanup_free_ char *new = e->new_mode ? read_regular(rv->upper_fd, e->path, &new_len) : NULL;
	struct isd_git_config oc = {0}, nc = {0};
	_cleanup_free_ bool *used_old = NULL, *used_new = NULL;

	if (old)
		(void)isd_git_config_parse(old, old_len, &oc);
	if (e->new_mode && !S_ISDIR(e->new_mode)) {
		if (!new || isd_git_config_parse(new, new_len, &nc) < 0)
			add(rv, ISD_GIT_EXEC, e->path,
			    isd_xstrdup(new ? "not readable as git configuration: git may read it otherwise"
					    : "not a regular file where git reads configuration"));
	}
	used_old = isd_xcalloc(oc.n + 1, sizeof(bool));
	used_new = isd_xcalloc(nc.n + 1, sizeof(bool));
	for (size_t i = 0; i < nc.n; i++) {
		bool exec = isd_git_key_executable(nc.v[i].key, nc.v[i].value), found, last = true;
		const char *before;

		if (!has_pair(&oc, &nc.v[i], used_old)) {
			add(rv, exec ? ISD_GIT_EXEC : ISD_GIT_INFO, e->path, entry_text('+', &nc.v[i]));
			continue;
		}
		for (size_t j = i + 1; j < nc.n; j++)
			last = last && strcmp(nc.v[j].key, nc.v[i].key);
		/* The same pair as before, but no longer overridden. */
		before = isd_git_config_get(&oc, nc.v[i].key, &found);
		if (exec && last && (!before != !nc.v[i].value || (before && strcmp(before, nc.v[i].value))))
			add(rv, ISD_GIT_EXEC, e->path, entry_text('~', &nc.v[i]));
	}
	for (size_t i = 0; i < oc.n; i++)
		if (!has_pair(&nc, &oc.v[i], used_new))
			add(rv, ISD_GIT_INFO, e->path, entry_text('-', &oc.v[i]));
	isd_git_config_free(&oc);
	isd_git_config_free(&nc);
}

static char *first_line_quoted(int root, const char *path)
{
	size_t len;
	_cleanup_free_ char *text = read_regular(root, path, &len);

	if (!text)
		return isd_xstrdup("(unreadable)");
	text[strcspn(text, "\n")] = '\0';
	return isd_quote_path("", text);
}

/* A .git file ("gitdir: PATH") naming a linked worktree's or a
 * submodule's repository inside the project's own .git: its config and
 * hooks are the review's like the rest of it. */
static bool gitfile_reviewed(struct reviewer *rv, const char *path)
{
	size_t len, n = strlen(rv->project);
	_cleanup_free_ char *text = read_regular(rv->upper_fd, path, &len), *abs = NULL, *norm = NULL;
	_cleanup_free_ char *wt = isd_xasprintf("%s/.git/worktrees/", rv->project);
	_cleanup_free_ char *mod = isd_xasprintf("%s/.git/modules/", rv->project);
	const char *to, *rest;

	if (!n || !text || strncmp(text, "gitdir: ", 8))
		return false;
	to = text + 8;
	text[strcspn(text, "\n")] = '\0';
	abs = to[0] == '/' ? isd_xstrdup(to)
			   : isd_xasprintf("%s/%.*s/%s", rv->project, (int)(base_name(path) - path), path, to);
	if (isd_resolve_abs_path_lexically(abs, &norm) < 0)
		return false;
	return ((rest = isd_path_rest(norm, wt)) && rest[0] && !strchr(rest, '/')) || isd_path_below(norm, mod);
}

static void review_path(struct reviewer *rv, const struct isd_change *e)
{
	const char *rel, *in;
	size_t gl;
	bool now = e->new_mode && e->status != ISD_CHANGE_DELETED;
	bool file = now && !S_ISDIR(e->new_mode);

	if (file && in_list(rv->hooks_dirs, e->path, true)) {
		if (!strstr(base_name(e->path), ".sample"))
			add(rv, ISD_GIT_EXEC, e->path,
			    isd_xstrdup("a hook where core.hooksPath points: git on the host runs it"));
		return;
	}
	if (in_list(rv->config_files, e->path, false)) {
		review_config(rv, e);
		return;
	}
	if (!git_split(e->path, &gl, &rel))
		return;
	if (!rel[0]) {
		if (file && gitfile_reviewed(rv, e->path)) {
			add(rv, ISD_GIT_INFO, e->path,
			    isd_xstrdup("a .git file of a linked worktree or submodule of this repository"));
		} else if (file) {
			_cleanup_free_ char *to = first_line_quoted(rv->upper_fd, e->path);
			add(rv, ISD_GIT_EXEC, e->path,
			    isd_xasprintf("a .git file: git reads this repository from where it points: %s", to));
		} else if (now && (e->status == ISD_CHANGE_ADDED || e->status == ISD_CHANGE_TYPE)) {
			add(rv, ISD_GIT_INFO, e->path, isd_xstrdup("a new repository, made in the session"));
		}
		return;
	}
	in = inner_path(rel);
	if (!strcmp(in, "config") || !strcmp(in, "config.worktree")) {
		review_config(rv, e);
	} else if (!strcmp(in, "commondir")) {
		size_t len;
		_cleanup_free_ char *raw = now ? read_regular(rv->upper_fd, e->path, &len) : NULL;

		/* git worktree add: the linked worktree shares this repository. */
		if (now && !strncmp(rel, "worktrees/", 10) && raw && !strcmp(raw, "../..\n")) {
			add(rv, ISD_GIT_INFO, e->path, isd_xstrdup("a linked worktree of this repository"));
		} else if (now) {
			_cleanup_free_ char *to = first_line_quoted(rv->upper_fd, e->path);
			add(rv, ISD_GIT_EXEC, e->path,
			    isd_xasprintf("commondir: git reads config, hooks and objects from %s", to));
		}
	} else if (!strcmp(in, "hooks") || !strcmp(in, "info") || !strcmp(in, "modules") || !strcmp(in, "worktrees")) {
		/* A link in place of a directory git reads config or hooks from. */
		if (now && !S_ISDIR(e->new_mode))
			add(rv, ISD_GIT_EXEC, e->path,
			    isd_xstrdup("not a directory where git reads hooks or configuration (a link?)"));
	} else if (!strncmp(in, "hooks/", 6)) {
		if (file && !strstr(base_name(e->path), ".sample"))
			add(rv, ISD_GIT_EXEC, e->path, isd_xstrdup("a hook: git on the host runs it"));
		else if (!now && !S_ISDIR(e->old_mode))
			add(rv, ISD_GIT_INFO, e->path, isd_xstrdup("a hook removed"));
	} else if (!strcmp(in, "info/attributes")) {
		add(rv, ISD_GIT_INFO, e->path, isd_xstrdup("attributes: choose filter and diff drivers"));
	} else if (!strcmp(in, "objects/info/alternates")) {
		add(rv, ISD_GIT_INFO, e->path, isd_xstrdup("alternates: git reads objects from other directories"));
	} else if (!strcmp(in, "shallow") || !strcmp(in, "info/grafts")) {
		if (now)
			add(rv, ISD_GIT_HISTORY, e->path,
			    isd_xstrdup(!strcmp(in, "shallow") ? "shallow: git stops showing history at these commits"
							      : "grafts: rewrite the parents git shows"));
	} else if (!strncmp(in, "refs/replace/", 13)) {
		if (now)
			add(rv, ISD_GIT_HISTORY, e->path,
			    isd_xstrdup("a replace ref: git shows another object in place of this one"));
	} else if (!strcmp(in, "packed-refs") && now) {
		size_t len;
		_cleanup_free_ char *text = read_regular(rv->upper_fd, e->path, &len);
		_cleanup_free_ char *old = read_regular(rv->project_fd, e->path, &len);
		/* A replace ref in packed-refs that the project did not have. */
		for (char *line = text; line && *line;) {
			char *nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			if (strstr(line, " refs/replace/") && !(old && strstr(old, line)))
				add(rv, ISD_GIT_HISTORY, e->path, isd_xasprintf("a replace ref: %s", strchr(line, ' ') + 1));
			line = nl ? nl + 1 : NULL;
		}
	}
}

static void review_objects(struct reviewer *rv, const char *gitdir)
{
	bool at_least = false, unreadable = false;
	size_t lost = isd_git_objects_lost(rv->project_fd, rv->upper_fd, rv->c, gitdir, &at_least, &unreadable);

	if (lost)
		add(rv, ISD_GIT_HISTORY, gitdir,
		    isd_xasprintf("the object store: removes %s%zu object%s that nothing else holds; history will be lost",
				  at_least ? "at least " : "", lost, lost == 1 ? "" : "s"));
	else if (unreadable)
		add(rv, ISD_GIT_HISTORY, gitdir,
		    isd_xstrdup("the object store: removes a pack isd cannot read; history may be lost"));
}

/* --- where the project's config points ---------------------------- */

/* value (a pathname of git's config) as a path relative to the project
 * ("." for the project itself), or NULL when it lies outside. */
static char *project_rel(const char *project, const char *base, const char *value)
{
	char *rel = isd_git_config_pathname(value, base, project);

	if (rel && !rel[0]) {
		free(rel);
		return isd_xstrdup(".");
	}
	return rel;
}

static void collect_pointers(struct reviewer *rv, const char *project, const char *text, size_t len,
			     const char *base)
{
	struct isd_git_config conf;

	(void)isd_git_config_parse(text, len, &conf);
	for (size_t i = 0; i < conf.n; i++) {
		const char *k = conf.v[i].key, *name = strrchr(k, '.');
		bool hooks = !strcmp(k, "core.hookspath");
		bool inc = (!strncmp(k, "include.", 8) || !strncmp(k, "includeif.", 10)) && name && !strcmp(name, ".path");
		char *rel = hooks || inc ? project_rel(project, hooks ? project : base, conf.v[i].value) : NULL;

		if (rel)
			isd_strv_push(hooks ? &rv->hooks_dirs : &rv->config_files, rel);
	}
	isd_git_config_free(&conf);
}

static void collect_all_pointers(struct reviewer *rv)
{
	char link[64], *project = rv->project;
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	_cleanup_free_ char *gitdir = NULL;
	ssize_t n;
	size_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", rv->project_fd);
	n = readlink(link, project, sizeof(rv->project) - 1);
	if (n <= 0) {
		project[0] = '\0';
		return;
	}
	project[n] = '\0';
	gitdir = isd_xasprintf("%s/.git", project);
	for (int side = 0; side < 2; side++) {
		_cleanup_free_ char *text = read_regular(side ? rv->upper_fd : rv->project_fd, ".git/config", &len);
		if (text)
			collect_pointers(rv, project, text, len, gitdir);
	}
	/* The user's own: the files git reads besides the repository's. */
	{
		_cleanup_free_ char *xdg_cfg = xdg && xdg[0] ? isd_xasprintf("%s/git/config", xdg)
							     : home ? isd_xasprintf("%s/.config/git/config", home) : NULL;
		_cleanup_free_ char *global = home ? isd_xasprintf("%s/.gitconfig", home) : NULL;
		const char *files[] = {"/etc/gitconfig", xdg_cfg, global};

		for (size_t i = 0; i < 3; i++) {
			_cleanup_free_ char *text = NULL, *dir = NULL;
			if (!files[i] || !(text = read_regular(AT_FDCWD, files[i], &len)))
				continue;
			dir = isd_xstrdup(files[i]);
			*strrchr(dir, '/') = '\0';
			collect_pointers(rv, project, text, len, dir);
		}
	}
}

/* A new commondir names the directory whose config and hooks git reads:
 * they are shown as such, wherever they are. */
static void collect_commondirs(struct reviewer *rv)
{
	for (size_t i = 0; i < rv->c->n; i++) {
		const struct isd_change *e = &rv->c->v[i];
		_cleanup_free_ char *to = NULL, *abs = NULL, *norm = NULL;
		const char *rel;
		size_t gl, len;

		if (!e->new_mode || e->status == ISD_CHANGE_DELETED || !git_split(e->path, &gl, &rel) ||
		    strcmp(inner_path(rel), "commondir") || !(to = read_regular(rv->upper_fd, e->path, &len)))
			continue;
		to[strcspn(to, "\n")] = '\0';
		/* Lexically, from a root of its own: only a target inside the
		 * project has files among the changes. */
		abs = to[0] == '/' ? NULL : isd_xasprintf("/%.*s/%s", (int)(strrchr(e->path, '/') - e->path), e->path, to);
		if (!abs || isd_resolve_abs_path_lexically(abs, &norm) < 0 || !norm[1])
			continue;
		isd_strv_push(&rv->config_files, isd_xasprintf("%s/config", norm + 1));
		isd_strv_push(&rv->config_files, isd_xasprintf("%s/config.worktree", norm + 1));
		isd_strv_push(&rv->hooks_dirs, isd_xasprintf("%s/hooks", norm + 1));
	}
}

int isd_git_review(int project_fd, int upper_fd, const struct isd_changes *c, struct isd_git_review *out)
{
	struct reviewer rv = {.project_fd = project_fd, .upper_fd = upper_fd, .c = c, .out = out};
	_cleanup_strv_ char **gitdirs = NULL;

	*out = (struct isd_git_review){0};
	collect_all_pointers(&rv);
	collect_commondirs(&rv);
	for (size_t i = 0; i < c->n; i++) {
		const char *rel;
		size_t gl;

		review_path(&rv, &c->v[i]);
		if (git_split(c->v[i].path, &gl, &rel) && c->v[i].old_mode &&
		    (c->v[i].status == ISD_CHANGE_DELETED || c->v[i].status == ISD_CHANGE_TYPE)) {
			_cleanup_free_ char *g = xstrndup(c->v[i].path, gl);
			if (!in_list(gitdirs, g, false))
				isd_strv_push(&gitdirs, isd_steal_ptr(g));
		}
	}
	for (size_t i = 0; gitdirs && gitdirs[i]; i++)
		review_objects(&rv, gitdirs[i]);
	isd_strv_free(rv.hooks_dirs);
	isd_strv_free(rv.config_files);
	return 0;
}

void isd_git_review_free(struct isd_git_review *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].path);
		free(r->v[i].text);
	}
	free(r->v);
	*r = (struct isd_git_review){0};
}

void isd_git_review_print(const struct isd_git_review *r, bool color)
{
	static const char *const heads[] = {
		[ISD_GIT_EXEC] = ("executable git configuration: git on the host would run it "
				  "(isd apply refuses it without --allow-git-exec)"),
		[ISD_GIT_HISTORY] = "git history loss (isd apply refuses it without --allow-history-loss)",
		[ISD_GIT_INFO] = "git configuration",
	};

	for (int k = ISD_GIT_EXEC; k <= ISD_GIT_INFO; k++) {
		bool loud = k != ISD_GIT_INFO, any = false;

		for (size_t i = 0; i < r->n; i++) {
			if (r->v[i].kind != (enum isd_git_kind)k)
				continue;
			if (!any)
				printf("%s%s%s:%s\n", color ? (loud ? "\033[1;31m" : "\033[1m") : "", loud ? "!! " : "",
				       heads[k], color ? "\033[m" : "");
			any = true;
			{
				_cleanup_free_ char *q = isd_quote_path("", r->v[i].path);
				printf("%s%s%s: %s%s\n", color && loud ? "\033[31m" : "", loud ? "!!   " : "  ", q,
				       r->v[i].text, color && loud ? "\033[m" : "");
			}
		}
	}
}

static bool is_ref_unit(const char *path)
{
	return !strcmp(path, ".git/HEAD") || !strcmp(path, ".git/packed-refs") || !strncmp(path, ".git/refs/", 10);
}

bool isd_git_follows_head(const char *path)
{
	return !strcmp(path, ".git/index");
}

static bool host_changed(int project_fd, const char *path, int64_t started_ns)
{
	struct stat st;

	return fstatat(project_fd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) &&
	       (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec >= started_ns;
}

int isd_git_check_apply(struct isd_apply *a)
{
	const struct isd_changes *c = a->changes;
	struct isd_git_review rv;
	const char *moved = NULL;
	bool index = false, index_host = false;
	int r;

	if ((r = isd_git_review(a->project_fd, a->upper_fd, c, &rv)) < 0)
		return r;
	for (size_t i = 0; i < rv.n; i++) {
		const struct isd_git_finding *f = &rv.v[i];

		if ((f->kind == ISD_GIT_EXEC && !(a->git_allow & ISD_GIT_ALLOW_EXEC)) ||
		    (f->kind == ISD_GIT_HISTORY && !(a->git_allow & ISD_GIT_ALLOW_HISTORY_LOSS)))
			isd_apply_refuse(a, f->path, "%s (%s takes it)", f->text,
					 f->kind == ISD_GIT_EXEC ? "--allow-git-exec" : "--allow-history-loss");
	}
	isd_git_review_free(&rv);
	for (size_t i = 0; i < c->n; i++) {
		if (is_ref_unit(c->v[i].path) && !moved && host_changed(a->project_fd, c->v[i].path, a->started_ns))
			moved = c->v[i].path;
		if (isd_git_follows_head(c->v[i].path)) {
			index = true;
			index_host = host_changed(a->project_fd, c->v[i].path, a->started_ns);
		}
	}
	if (moved && index && !a->force)
		isd_apply_refuse(a, ".git/index", "goes with the session's HEAD and refs, and %s changed on the host "
				 "since the session started (--force takes the session's)", moved);
	else if (index && index_host && !a->refused)
		isd_apply_note(".git/index", "changed on the host since the session started (git status refreshes it); "
			       "the session's index replaces it, matching the session's HEAD (what you staged "
			       "meanwhile is unstaged, your files stay)");
	return 0;
}
