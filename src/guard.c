/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Keeping isd's own directories out of every sandbox's reach.  What a
 * later sandbox loads (profiles, seccomp profiles, the filter cache,
 * images, sessions) lives in them, so a payload that could write there
 * through `-v $HOME:$HOME` would configure the next sandbox.  A read-only
 * cover alone is not enough where its parent is writable: renaming an
 * ancestor of a mount point is allowed, so `mv ~/.config ~/.c; mkdir -p
 * ~/.config/isd` would leave the cover behind and plant a fresh directory.
 * Every directory between the bind's root and the cover is therefore a
 * mount point too (rename and rmdir then fail with EBUSY), and the cover
 * is a whole directory, not files, so nothing in it can be hard-linked out
 * (link across mounts is EXDEV).
 */
#define _GNU_SOURCE
#include "guard.h"
#include "isd/util.h"
#include "isd/path-util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct {
	const char *var, *fallback, *what;
} xdg_dirs[] = {
	{"XDG_CONFIG_HOME", ".config", "configuration (profiles, seccomp profiles)"},
	{"XDG_CACHE_HOME", ".cache", "cache"},
	{"XDG_DATA_HOME", ".local/share", "data (images)"},
	{"XDG_STATE_HOME", ".local/state", "state (sessions)"},
};

/* realpath() of the longest existing prefix, the rest appended as is:
 * isd creates what is missing, so that is where it will be. */
static char *resolve_existing(const char *path)
{
	char *real = realpath(path, NULL);
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *parent = NULL, *rp = NULL;

	if (real)
		return real;
	if (!slash || slash == path)
		return isd_xstrdup(path);
	parent = strndup(path, (size_t)(slash - path));
	rp = resolve_existing(parent);
	return isd_xasprintf("%s%s", strcmp(rp, "/") ? rp : "", slash);
}

/* The lexical paths of isd's directories, with what they hold. */
static void lexical_dirs(char ***paths, char ***what)
{
	const char *run = isd_runtime_dir();
	struct stat st;

	const char *home = getenv("HOME");

	for (size_t i = 0; i < sizeof(xdg_dirs) / sizeof(xdg_dirs[0]); i++) {
		const char *v = getenv(xdg_dirs[i].var);
		/* Without either, isd uses no such directory. */
		if (!(v && v[0] == '/') && !(home && home[0] == '/' && home[1]))
			continue;
		isd_strv_push(paths, isd_xdg_path(xdg_dirs[i].var, xdg_dirs[i].fallback, "isd"));
		isd_strv_push(what, isd_xstrdup(xdg_dirs[i].what));
	}
	if (run) {
		isd_strv_push(paths, isd_xasprintf("%s/isd", run));
		isd_strv_push(what, isd_xstrdup("runtime directory (seccomp filter cache)"));
	}
	if (stat("/etc/isd", &st) == 0) {
		isd_strv_push(paths, isd_xstrdup("/etc/isd"));
		isd_strv_push(what, isd_xstrdup("system configuration"));
	}
}

char **isd_guard_dirs(char ***what_out)
{
	_cleanup_strv_ char **paths = NULL, **what = NULL;
	char **real = NULL;

	lexical_dirs(&paths, what_out ? what_out : &what);
	for (size_t i = 0; paths && paths[i]; i++)
		isd_strv_push(&real, resolve_existing(paths[i]));
	return real;
}

static bool writable(const struct isd_mount *m)
{
	return (m->type == ISD_MOUNT_BIND && !m->readonly) || m->type == ISD_MOUNT_OVERLAY;
}

/* A symlink on the way to one of isd's directories that lies inside a
 * writable mount could be pointed at a directory the payload filled. */
static int check_symlinks(const struct isd_spec *spec, const char *lexical, const char *what)
{
	_cleanup_free_ char *path = NULL;

	if (isd_normalize_abs_path(lexical, &path) < 0)
		path = isd_xstrdup(lexical);
	for (char *p = path + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;
			struct stat st;

			*p = '\0';
			if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
				char *slash = strrchr(path, '/');
				_cleanup_free_ char *parent = strndup(path, (size_t)(slash - path));
				_cleanup_free_ char *rparent = resolve_existing(*parent ? parent : "/");
				_cleanup_free_ char *loc = isd_xasprintf("%s%s", strcmp(rparent, "/") ? rparent : "", slash);

				for (size_t i = 0; i < spec->n_mounts; i++) {
					const struct isd_mount *m = &spec->mounts[i];
					if (!writable(m) || !isd_path_under(loc, m->source))
						continue;
					isd_error(0, "isd's %s %s is reached through the symlink %s, which the writable mount of %s would let the sandbox replace",
						  what, lexical, path, m->source);
					isd_error_hint("fix: mount %s read-only (:ro), or point the XDG variable at the real directory", m->source);
					return -EPERM;
				}
			}
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

/* Another mount at or above dst, below the writable mount at top, hides
 * what that mount shows there: then it is not this mount's concern. */
static bool hidden_below(const struct isd_spec *spec, size_t n, size_t self, const char *top, const char *dst)
{
	for (size_t j = 0; j < n; j++)
		if (j != self && isd_path_under(spec->mounts[j].destination, top) &&
		    strcmp(spec->mounts[j].destination, top) && isd_path_under(dst, spec->mounts[j].destination))
			return true;
	return false;
}

static void add_rebind(struct isd_spec *spec, const char *source, const char *dst, bool readonly, char *origin)
{
	struct isd_mount *m;

	if (isd_spec_find_mount(spec, dst) >= 0) {
		free(origin); /* pinned for another of isd's directories already */
		return;
	}
	m = isd_spec_add_mount(spec);
	m->type = ISD_MOUNT_BIND;
	m->rebind = true;
	m->source = isd_xstrdup(source);
	m->destination = isd_xstrdup(dst);
	m->readonly = readonly;
	m->create = ISD_CREATE_DIR;
	m->implicit = true;
	m->origin = origin;
}

static int guard_one(struct isd_spec *spec, size_t n, const char *real, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		_cleanup_free_ char *src = NULL, *top = NULL, *dst = NULL;
		size_t slen;

		if (!writable(m) || !m->source)
			continue;
		if (isd_path_under(m->source, real)) {
			isd_error(0, "the writable mount of %s: that is isd's %s %s (or inside it), which no sandbox may change",
				  m->source, what, real);
			isd_error_hint("fix: mount it read-only (-v %s:%s:ro)", m->source, m->destination);
			return -EPERM;
		}
		if (!isd_path_under(real, m->source))
			continue;
		/* Copies: adding mounts below moves spec->mounts. */
		src = isd_xstrdup(m->source);
		top = isd_xstrdup(m->destination);
		slen = strcmp(src, "/") ? strlen(src) : 0;
		dst = isd_xasprintf("%s%s", strcmp(top, "/") ? top : "", real + slen);
		if (hidden_below(spec, n, i, top, dst))
			continue;
		for (const char *p = strchr(real + slen + 1, '/'); p; p = strchr(p + 1, '/')) {
			_cleanup_free_ char *a_src = strndup(real, (size_t)(p - real));
			_cleanup_free_ char *a_dst = isd_xasprintf("%s%s", strcmp(top, "/") ? top : "", a_src + slen);
			add_rebind(spec, a_src, a_dst, false,
				   isd_xasprintf("isd guard: a mount point, so that the writable mount of %s cannot rename %s (isd's %s) away",
						 src, real, what));
		}
		add_rebind(spec, real, dst, true,
			   isd_xasprintf("isd guard: isd's %s stays read-only under the writable mount of %s", what, src));
	}
	return 0;
}

int isd_guard_apply(struct isd_spec *spec)
{
	_cleanup_strv_ char **paths = NULL, **what = NULL;
	size_t n = spec->n_mounts; /* only the mounts that were asked for */
	size_t w = 0;
	int r;

	/* Both checks below are about writable mounts: without one there is
	 * nothing to cover or refuse, and the realpath() of every directory
	 * (about 90 syscalls, each start) is skipped. */
	while (w < n && !writable(&spec->mounts[w]))
		w++;
	if (w == n)
		return 0;
	lexical_dirs(&paths, &what);
	for (size_t i = 0; paths && paths[i]; i++) {
		_cleanup_free_ char *real = resolve_existing(paths[i]);

		if ((r = check_symlinks(spec, paths[i], what[i])) < 0)
			return r;
		if ((r = guard_one(spec, n, real, what[i])) < 0)
			return r;
	}
	return 0;
}
