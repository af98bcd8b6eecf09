/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "workspace.h"
#include "workspace-git.h"
#include "workspace-mask.h"
#include "git-config.h"
#include "mount-fs.h"
#include "isd/fsutil.h"
#include "isd/session.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "isd/path-util.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const mode_names[] = {
	[ISD_WORKSPACE_RW] = "rw",
	[ISD_WORKSPACE_RO] = "ro",
	[ISD_WORKSPACE_COW] = "cow",
};

const char *isd_workspace_mode_name(enum isd_workspace_mode mode)
{
	return mode_names[mode];
}

int isd_workspace_parse(const char *arg, const char *cwd, char **path, enum isd_workspace_mode *mode)
{
	_cleanup_free_ char *dir = isd_xstrdup(arg);
	char *colon = strrchr(dir, ':');

	*mode = ISD_WORKSPACE_RW;
	if (colon) {
		size_t i;
		for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
			if (!strcmp(colon + 1, mode_names[i]))
				break;
		if (i == sizeof(mode_names) / sizeof(mode_names[0]))
			return isd_error(0, "--workspace %s: unknown mode \"%s\"; use DIR:rw, DIR:ro or DIR:cow", arg,
					 colon + 1);
		*mode = (enum isd_workspace_mode)i;
		*colon = '\0';
	}
	if (!dir[0])
		return isd_error(0, "--workspace %s: the directory is missing; use DIR[:rw|ro|cow]", arg);
	if (dir[0] == '/' || !cwd)
		*path = isd_xstrdup(dir);
	else
		*path = isd_xasprintf("%s/%s", cwd, dir);
	return 0;
}

/* The caller's home as the kernel would resolve it, also when it does not
 * exist (a fresh account, a HOME set by hand): the deepest existing parent
 * resolved, the rest appended lexically, so that a parent of a missing home
 * is still recognised as one.  NULL for a HOME that is not absolute. */
static char *resolve_home(const char *home)
{
	_cleanup_free_ char *lexical = NULL;
	char *real = realpath(home, NULL);
	size_t len;

	if (real)
		return real;
	if (isd_resolve_abs_path_lexically(home, &lexical) < 0)
		return NULL;
	for (len = strlen(lexical);;) {
		_cleanup_free_ char *prefix = NULL;
		while (len > 0 && lexical[len - 1] != '/')
			len--;
		if (len > 0)
			len--;
		prefix = strndup(lexical, len ? len : 1);
		if (!prefix)
			return NULL;
		real = realpath(prefix, NULL);
		if (real) {
			char *joined = isd_xasprintf("%s%s", strcmp(real, "/") ? real : "", lexical + len);
			free(real);
			return joined;
		}
		if (!len)
			return NULL;
	}
}

/* The workspace (--workspace, --project, --session) as a mount: the
 * project at its own path, also the working directory.  Refuses
 * directories that would hand over the whole home.  1 when there is a
 * workspace, 0 when none. */
int isd_workspace_to_mount(struct isd_spec *spec, const char *caller_home, struct isd_mount *out)
{
	struct isd_workspace *ws = &spec->workspace;
	_cleanup_free_ char *home = NULL, *path = NULL;
	struct isd_mount m = {.type = ISD_MOUNT_BIND};

	if (ws->session) {
		struct isd_session s;
		int r = isd_session_open(ws->session, false, &s);
		if (r < 0)
			return r;
		path = ws->path ? realpath(ws->path, NULL) : NULL;
		if (path && strcmp(path, s.project)) {
			r = isd_error(0, "--session %s: the session belongs to %s, not to the workspace %s", ws->session,
				      s.project, path);
			isd_session_free(&s);
			return r;
		}
		free(ws->path);
		ws->path = isd_xstrdup(s.project);
		ws->mode = ISD_WORKSPACE_COW;
		isd_session_free(&s);
		free(path);
	}
	if (!ws->path) {
		if (ws->keep)
			return isd_error(0, "--workspace-keep: there is no workspace; add --workspace DIR:cow");
		return 0;
	}
	if (ws->mode != ISD_WORKSPACE_COW && ws->keep)
		return isd_error(0, "--workspace-keep: the workspace %s is %s; sessions are kept for DIR:cow", ws->path,
				 isd_workspace_mode_name(ws->mode));
	path = realpath(ws->path, NULL);
	if (!path)
		return isd_error(-errno, "--workspace %s", ws->path);
	home = resolve_home(caller_home);
	if (!strcmp(path, "/") || (home && isd_path_under(home, path)))
		return isd_error(0, "the workspace %s: that is your home directory or one of its parents; run isd from inside a project directory (or use --profile none)",
				 path);
	free(ws->path);
	ws->path = isd_xstrdup(path);
	/* Copy-up keeps a file's owner, which must exist in the sandbox: with
	 * the usual single-id map, only the caller's own files can change. */
	if (ws->mode == ISD_WORKSPACE_COW && !spec->n_uid_ranges) {
		struct stat st;
		if (stat(path, &st) == 0 && (st.st_uid != spec->host_uid || st.st_gid != spec->host_gid))
			isd_warn("--workspace %s:cow: the directory belongs to %u:%u, not to you (%u:%u); what is not "
				 "yours cannot be changed inside (EOVERFLOW); --workspace %s:rw binds it instead",
				 path, (unsigned)st.st_uid, (unsigned)st.st_gid, spec->host_uid, spec->host_gid, path);
	}
	m.type = ws->mode == ISD_WORKSPACE_COW ? ISD_MOUNT_OVERLAY : ISD_MOUNT_BIND;
	m.readonly = ws->mode == ISD_WORKSPACE_RO;
	m.source = isd_xstrdup(path);
	m.destination = isd_steal_ptr(path);
	free(spec->workdir);
	spec->workdir = isd_xstrdup(m.destination);
	*out = m;
	return 1;
}

static bool is_reg_at(int dir, const char *path)
{
	struct stat st;

	return fstatat(dir, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir_at(int dir, const char *path)
{
	struct stat st;

	return fstatat(dir, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

static bool is_empty_dir_at(int dir, const char *path)
{
	_cleanup_close_ int fd = openat(dir, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	bool empty = true;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd)))
		return false;
	fd = -1;
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

static void push_unique(char ***list, char *owned)
{
	for (size_t i = 0; *list && (*list)[i]; i++)
		if (!strcmp((*list)[i], owned)) {
			free(owned);
			return;
		}
	isd_strv_push(list, owned);
}

/* Names git reads as configuration that no bind can cover while they do
 * not exist: in a rw workspace (no review) isd puts a harmless stand-in
 * there for the run (src/workspace-git-host.c), read-only like the rest.
 * One left by another run (or a crash) is taken as one. */
static void placeholder(struct isd_workspace *ws, int dir, char *owned)
{
	struct stat st;

	if (ws->mode != ISD_WORKSPACE_RW ||
	    (fstatat(dir, owned, &st, AT_SYMLINK_NOFOLLOW) == 0 && !isd_workspace_is_standin(dir, owned))) {
		free(owned);
		return;
	}
	push_unique(&ws->git_readonly, isd_xstrdup(owned));
	push_unique(&ws->git_placeholders, owned);
}

/* extensions.worktreeConfig: git reads config.worktree only then. */
static bool worktree_config_on(int dir, const char *config)
{
	_cleanup_close_ int fd = isd_openat2(dir, config, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
					     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	_cleanup_free_ char *text = NULL;
	struct isd_git_config c;
	struct stat st;
	size_t len;
	bool found = false;
	const char *v;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || isd_read_fd(fd, &text, &len) < 0)
		return false;
	/* What isd cannot read counts as on: an empty stand-in costs nothing. */
	if (isd_git_config_parse(text, len, &c) < 0)
		found = true;
	v = isd_git_config_get(&c, "extensions.worktreeconfig", &found);
	found = found && !(v && (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off") ||
				 !strcmp(v, "0") || !v[0]));
	isd_git_config_free(&c);
	return found;
}

/* The names of a git directory (gitdir relative to the workspace) that
 * redirect git's configuration when they appear. */
static void hold_absent(struct isd_workspace *ws, int dir, const char *gitdir, bool worktree_config)
{
	placeholder(ws, dir, isd_xasprintf("%s/commondir", gitdir));
	if (worktree_config)
		placeholder(ws, dir, isd_xasprintf("%s/config.worktree", gitdir));
}

static char *inside(const struct isd_workspace *ws, const char *base, const char *value);

/* The .git file of a submodule's or linked worktree's work tree in the
 * workspace: rewritten, it sends git (and git status in the project,
 * which runs git in each submodule) to a repository of the agent's. */
static void protect_gitfile(struct isd_workspace *ws, int dir, const char *base, const char *value, bool is_worktree)
{
	_cleanup_free_ char *rel = inside(ws, base, value), *p = NULL;

	if (!rel)
		return;
	p = is_worktree ? isd_xasprintf("%s/.git", rel) : isd_steal_ptr(rel);
	if (is_reg_at(dir, p))
		push_unique(&ws->git_readonly, isd_steal_ptr(p));
}

/* core.worktree of a submodule's config: where its work tree is. */
static void protect_module_worktree(struct isd_workspace *ws, int dir, const char *sub, const char *cfg)
{
	_cleanup_free_ char *text = NULL, *base = isd_xasprintf("%s/%s", ws->path, sub);
	_cleanup_close_ int fd = isd_openat2(dir, cfg, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
					     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	struct isd_git_config c;
	size_t len;
	bool found;
	const char *v;

	if (fd < 0 || isd_read_fd(fd, &text, &len) < 0)
		return;
	(void)isd_git_config_parse(text, len, &c);
	v = isd_git_config_get(&c, "core.worktree", &found);
	if (v)
		protect_gitfile(ws, dir, base, v, true);
	isd_git_config_free(&c);
}

/* A submodule's repository (and the ones nested in it, modules/a/modules/b;
 * names may hold "/"): its config and hooks. */
static void protect_modules(struct isd_workspace *ws, int dir, const char *rel, unsigned depth)
{
	_cleanup_close_ int fd = isd_openat2(dir, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC,
					     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	struct dirent *e;
	DIR *d;

	if (fd < 0 || depth > 8 || !(d = fdopendir(fd)))
		return;
	fd = -1;
	while ((e = readdir(d))) {
		_cleanup_free_ char *sub = NULL, *cfg = NULL, *hooks = NULL;

		if (e->d_name[0] == '.' || e->d_type != DT_DIR)
			continue;
		sub = isd_xasprintf("%s/%s", rel, e->d_name);
		cfg = isd_xasprintf("%s/config", sub);
		hooks = isd_xasprintf("%s/hooks", sub);
		if (is_reg_at(dir, cfg)) {
			hold_absent(ws, dir, sub, worktree_config_on(dir, cfg));
			protect_module_worktree(ws, dir, sub, cfg);
			push_unique(&ws->git_readonly, isd_steal_ptr(cfg));
			if (is_dir_at(dir, hooks))
				push_unique(&ws->git_readonly, isd_xasprintf("%s/", hooks));
			free(sub);
			sub = isd_xasprintf("%s/%s/modules", rel, e->d_name);
		}
		protect_modules(ws, dir, sub, depth + 1);
	}
	closedir(d);
}

/* The path value (of git's config, relative to base) names inside the
 * workspace, relative to it; NULL when outside or the workspace itself. */
static char *inside(const struct isd_workspace *ws, const char *base, const char *value)
{
	char *rel = isd_git_config_pathname(value, base, ws->path);

	if (rel && !rel[0]) {
		free(rel);
		return NULL;
	}
	return rel;
}

/* What the repository's config names in the work tree: core.hooksPath
 * (husky's .husky/_) and include.path files; read-only like .git/config. */
static void protect_config_targets(struct isd_workspace *ws, int dir, const char *config, unsigned depth)
{
	_cleanup_close_ int fd = isd_openat2(dir, config, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
					     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	_cleanup_free_ char *text = NULL, *base = NULL;
	struct isd_git_config c;
	struct stat st;
	size_t len;

	if (fd < 0 || depth > 8 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || isd_read_fd(fd, &text, &len) < 0)
		return;
	base = isd_xasprintf("%s/%s", ws->path, config);
	*strrchr(base, '/') = '\0';
	(void)isd_git_config_parse(text, len, &c);
	for (size_t i = 0; i < c.n; i++) {
		const char *k = c.v[i].key, *name = strrchr(k, '.');
		bool hooks = !strcmp(k, "core.hookspath");
		bool inc = (!strncmp(k, "include.", 8) || !strncmp(k, "includeif.", 10)) && name && !strcmp(name, ".path");
		/* A relative core.hooksPath is relative to the work tree. */
		char *rel = hooks || inc ? inside(ws, hooks ? ws->path : base, c.v[i].value) : NULL;

		if (!rel)
			continue;
		if (hooks) {
			push_unique(&ws->git_hooks_dirs, isd_xstrdup(rel));
			push_unique(&ws->git_readonly, isd_xasprintf("%s/", rel));
		} else if (is_reg_at(dir, rel) && !isd_workspace_is_standin(dir, rel)) {
			push_unique(&ws->git_readonly, isd_xstrdup(rel));
			protect_config_targets(ws, dir, rel, depth + 1);
		} else {
			/* An include that names nothing yet. */
			placeholder(ws, dir, isd_xstrdup(rel));
		}
		free(rel);
	}
	isd_git_config_free(&c);
}

/* What the agent could use to run code later on the host: everything git
 * reads as configuration or runs (hooks, config, config.worktree,
 * commondir, info/attributes, linked worktrees' and submodules' own, the
 * files include.path names, the core.hooksPath directory).  .git itself
 * is pinned so that it cannot be renamed away and replaced by a writable
 * copy.  Names git would read that do not exist cannot be covered without
 * something in their place: in a cow session all of it is the review's
 * (isd diff, isd apply); a rw workspace gets harmless stand-ins for the
 * run (an empty read-only .git where there is no repository: no
 * repository to git, no place to make one; a commondir naming its own
 * directory; comment-only config.worktree, info/attributes and include
 * files), and what it cannot cover, a repository made in the work tree,
 * is held at the end (src/git-hold.c). */
static void resolve_git(struct isd_workspace *ws)
{
	static const char *const protected[] = {".git/config", ".git/config.worktree", ".git/commondir",
						".git/info/attributes", NULL};
	_cleanup_close_ int dir = -1;
	struct stat st;
	bool wt_config, absent;
	DIR *d;

	if (ws->git_writable || ws->mode == ISD_WORKSPACE_RO)
		return;
	dir = open(ws->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	absent = fstatat(dir, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0;
	if (absent && errno != ENOENT)
		return;
	/* An empty one is another run's stand-in (or a crash's). */
	if (absent || (S_ISDIR(st.st_mode) && is_empty_dir_at(dir, ".git"))) {
		if (ws->mode == ISD_WORKSPACE_RW) {
			isd_strv_push(&ws->git_placeholders, isd_xstrdup(".git/"));
			isd_strv_push(&ws->git_readonly, isd_xstrdup(".git/"));
		}
		return;
	}
	if (S_ISREG(st.st_mode)) {
		/* A worktree's or submodule's pointer to its git directory. */
		isd_strv_push(&ws->git_readonly, isd_xstrdup(".git"));
		return;
	}
	if (!S_ISDIR(st.st_mode))
		return;
	ws->git_pin = true;
	isd_strv_push(&ws->git_readonly, isd_xstrdup(".git/hooks/"));
	for (size_t i = 0; protected[i]; i++)
		if (is_reg_at(dir, protected[i]))
			push_unique(&ws->git_readonly, isd_xstrdup(protected[i]));
	wt_config = worktree_config_on(dir, ".git/config");
	hold_absent(ws, dir, ".git", wt_config);
	placeholder(ws, dir, isd_xstrdup(".git/info/attributes"));
	/* Linked worktrees: where each one's git looks. */
	{
		int wfd = isd_openat2(dir, ".git/worktrees", O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		struct dirent *e;

		if (wfd >= 0 && !(d = fdopendir(wfd)))
			close(wfd);
		else if (wfd >= 0) {
			while ((e = readdir(d))) {
				static const char *const names[] = {"commondir", "gitdir", "config.worktree", NULL};
				if (e->d_name[0] == '.')
					continue;
				for (size_t i = 0; names[i]; i++) {
					_cleanup_free_ char *p = isd_xasprintf(".git/worktrees/%s/%s", e->d_name, names[i]);
					if (is_reg_at(dir, p))
						push_unique(&ws->git_readonly, isd_steal_ptr(p));
				}
				if (wt_config)
					placeholder(ws, dir, isd_xasprintf(".git/worktrees/%s/config.worktree", e->d_name));
				{
					_cleanup_free_ char *g = isd_xasprintf(".git/worktrees/%s/gitdir", e->d_name);
					_cleanup_free_ char *to = NULL;
					size_t len;

					/* The linked worktree's .git file, by its absolute path. */
					if (is_reg_at(dir, g) && isd_read_file_at(dir, g, &to, &len) == 0) {
						to[strcspn(to, "\n")] = '\0';
						protect_gitfile(ws, dir, ws->path, to, false);
					}
				}
			}
			closedir(d);
		}
	}
	protect_modules(ws, dir, ".git/modules", 0);
	protect_config_targets(ws, dir, ".git/config", 0);
}

int isd_workspace_resolve(struct isd_spec *spec)
{
	struct isd_workspace *ws = &spec->workspace;
	int r;

	if (!ws->path) {
		if (ws->masks)
			return isd_error(0, "--mask %s: masks apply to a workspace; add --workspace DIR[:rw|ro|cow]",
					 ws->masks[0]);
		return 0;
	}
	r = isd_workspace_resolve_masks(ws);
	if (r < 0)
		return r;
	resolve_git(ws);
	return 0;
}

/* Empty read-only stand-ins, made once in the generated-files tmpfs. */
static int mask_source(struct isd_mount_builder *b, bool is_dir)
{
	const char *name = is_dir ? "mask-dir" : "mask-file";
	struct stat st;
	int fd;

	if (fstatat(b->generated, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		int r = is_dir ? mkdirat(b->generated, name, 0555) : isd_write_file_at(b->generated, name, "", O_CREAT | O_EXCL, 0444);
		if (r < 0)
			return isd_error(is_dir ? -errno : r, "creating the empty stand-in for masked files");
	}
	fd = isd_open_tree(b->generated, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (fd < 0)
		return isd_error(-errno, "preparing the empty stand-in for masked files");
	{
		struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
						      MOUNT_ATTR_NOEXEC};
		if (isd_mount_setattr(fd, "", AT_EMPTY_PATH, &attr) < 0) {
			int r = isd_error(-errno, "restricting the stand-in for masked files");
			close(fd);
			return r;
		}
	}
	return fd;
}

static int cover(struct isd_mount_builder *b, const char *ws, const char *rel, bool masked)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", ws, rel);
	size_t n = strlen(path);
	bool is_dir = path[n - 1] == '/';
	_cleanup_close_ int target = -1, src = -1;
	struct stat st;

	if (is_dir)
		path[n - 1] = '\0';
	target = isd_mount_resolve_create(b, path, is_dir ? ISD_NODE_DIR : ISD_NODE_FILE, false);
	if (target == -EISDIR && !is_dir) {
		/* The walk saw a link (.env.d -> envs) and links match as what
		 * they name: here it names a directory, which is covered. */
		isd_error_clear();
		target = isd_mount_resolve_create(b, path, ISD_NODE_DIR, false);
	}
	if (target < 0) {
		/* Gone since the walk, or a link to nowhere: nothing to hide. */
		if (target == -ENOENT) {
			isd_error_clear();
			return 0;
		}
		return target;
	}
	if (fstat(target, &st) < 0)
		return isd_error(-errno, "inspecting %s", path);
	if (masked) {
		src = mask_source(b, S_ISDIR(st.st_mode));
	} else {
		src = isd_mount_clone_tree(target, "", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, path);
	}
	if (src < 0)
		return src;
	return isd_mount_attach(src, target, path);
}

/* path bound onto itself (still writable): a mount point cannot be
 * renamed, removed or replaced.  -ENOENT when it is not there. */
static int pin_dir(struct isd_mount_builder *b, const char *path)
{
	_cleanup_close_ int target = isd_mount_resolve_create(b, path, ISD_NODE_DIR, false);
	_cleanup_close_ int src = -1;

	if (target < 0)
		return target;
	src = isd_mount_clone_tree(target, "", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, path);
	if (src < 0)
		return src;
	return isd_mount_attach(src, target, path);
}

/* A bind goes along when a directory above it is renamed: mv
 * .git/modules/sub aside, and a new .git/modules/sub holds a config of the
 * agent's where the submodule's .git file points.  So every directory
 * between the workspace and a covered path is bound onto itself (still
 * writable): a mount point cannot be renamed. */
static int pin_ancestors(struct isd_mount_builder *b, const struct isd_workspace *ws)
{
	_cleanup_strv_ char **done = NULL;

	for (size_t i = 0; ws->git_readonly && ws->git_readonly[i]; i++) {
		const char *rel = ws->git_readonly[i];

		for (const char *slash = strchr(rel, '/'); slash && slash[1]; slash = strchr(slash + 1, '/')) {
			_cleanup_free_ char *dir = strndup(rel, (size_t)(slash - rel));
			_cleanup_free_ char *path = NULL;
			bool seen = ws->git_pin && !strcmp(dir, ".git");
			int r;

			for (size_t j = 0; !seen && done && done[j]; j++)
				seen = !strcmp(done[j], dir);
			if (seen)
				continue;
			path = isd_xasprintf("%s/%s", ws->path, dir);
			isd_strv_push(&done, isd_steal_ptr(dir));
			r = pin_dir(b, path);
			if (r == -ENOENT) {
				isd_error_clear();
				continue;
			}
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int isd_workspace_protect(struct isd_mount_builder *b, const struct isd_spec *spec)
{
	const struct isd_workspace *ws = &spec->workspace;
	int r;

	if (!ws->path)
		return 0;
	if (ws->git_pin) {
		_cleanup_free_ char *git = isd_xasprintf("%s/.git", ws->path);

		r = pin_dir(b, git);
		if (r < 0)
			return r;
	}
	r = pin_ancestors(b, ws);
	if (r < 0)
		return r;
	for (size_t i = 0; ws->git_readonly && ws->git_readonly[i]; i++) {
		r = cover(b, ws->path, ws->git_readonly[i], false);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; ws->masked && ws->masked[i]; i++) {
		r = cover(b, ws->path, ws->masked[i], true);
		if (r < 0)
			return r;
	}
	return 0;
}

void isd_workspace_free(struct isd_workspace *ws)
{
	free(ws->path);
	free(ws->session);
	isd_strv_free(ws->masks);
	isd_strv_free(ws->unmasks);
	isd_strv_free(ws->masked);
	isd_strv_free(ws->git_readonly);
	isd_strv_free(ws->git_placeholders);
	isd_strv_free(ws->git_hooks_dirs);
	memset(ws, 0, sizeof(*ws));
}
