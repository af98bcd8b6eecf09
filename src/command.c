/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Finding the payload's command.  Agents are usually installed under the
 * caller's home (~/.local/bin/omp, an npm prefix, ~/.claude/local), which
 * the sandbox hides.  When the command is not in the sandbox's PATH, it is
 * looked up on the caller's PATH as the shell would, and its installation
 * (and, for scripts, the interpreter's) is bound read-only at the same path.
 */
#define _GNU_SOURCE
#include "command.h"
#include "mount.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "isd/path-util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>


/* Is path an executable file as the sandbox will show it? */
static bool visible_executable(const struct isd_spec *spec, const char *path)
{
	const struct isd_mount *best = NULL;
	struct stat st;

	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct isd_mount *m = &spec->mounts[i];
		if (isd_path_under(path, m->destination) &&
		    (!best || strlen(m->destination) > strlen(best->destination)))
			best = m;
	}
	if (best) {
		_cleanup_free_ char *host = NULL;
		if (best->type != ISD_MOUNT_BIND)
			return false; /* a fresh tmpfs holds nothing yet */
		host = isd_xasprintf("%s%s", best->source, path + strlen(best->destination));
		return stat(host, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
	}
	if (spec->rootfs) {
		_cleanup_close_ int root = open(spec->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
		_cleanup_close_ int fd = -1;
		if (root < 0)
			return false;
		fd = isd_openat2(root, path, O_PATH | O_CLOEXEC, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
		return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
	}
	for (size_t i = 0; path[0] == '/' && isd_host_image_entries[i]; i++)
		if (isd_path_under(path + 1, isd_host_image_entries[i]))
			return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
	return false;
}

static bool visible_candidate(const char *candidate, void *spec)
{
	return visible_executable(spec, candidate);
}

static bool in_sandbox_path(const struct isd_spec *spec, const char *cmd)
{
	char buf[PATH_MAX];

	return isd_path_search(isd_spec_getenv(spec, "PATH"), cmd, buf, sizeof(buf), visible_candidate, (void *)spec);
}

static char *search_caller_path(const char *caller_path, const char *cmd)
{
	char buf[PATH_MAX];

	if (!isd_path_search(caller_path, cmd, buf, sizeof(buf), isd_path_is_executable, NULL))
		return NULL;
	return isd_xstrdup(buf);
}

/* Version managers and environments whose PREFIX/bin/PROGRAM belongs to
 * one self-contained installation (libraries beside bin/). */
static const char *const runtime_prefixes[] = {
	"/.nvm/versions/", "/.fnm/node-versions/", "/fnm/node-versions/", "/.volta/tools/image/",
	"/.asdf/installs/", "/mise/installs/", "/.nodenv/versions/", "/.pyenv/versions/",
	"/.rbenv/versions/", "/.rustup/toolchains/", NULL};

static bool is_runtime_install(const char *prefix)
{
	_cleanup_free_ char *venv = isd_xasprintf("%s/pyvenv.cfg", prefix);
	_cleanup_free_ char *node = isd_xasprintf("%s/include/node/node.h", prefix);
	_cleanup_free_ char *slash = isd_xasprintf("%s/", prefix);

	for (size_t i = 0; runtime_prefixes[i]; i++)
		if (strstr(slash, runtime_prefixes[i]))
			return true;
	return access(venv, F_OK) == 0 || access(node, F_OK) == 0;
}

/* A directory under home that is (or holds) a place where many
 * applications keep their data: ~/.local, the XDG base directories. */
static bool holds_others_data(const char *dir, const char *home)
{
	static const struct {
		const char *var, *fallback;
	} bases[] = {{NULL, ".local"}, {"XDG_DATA_HOME", ".local/share"}, {"XDG_STATE_HOME", ".local/state"},
		     {"XDG_CONFIG_HOME", ".config"}, {"XDG_CACHE_HOME", ".cache"}};

	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		const char *v = bases[i].var ? getenv(bases[i].var) : NULL;
		_cleanup_free_ char *base = isd_xasprintf("%s/%s", home, bases[i].fallback);
		_cleanup_free_ char *real = v && v[0] == '/' ? realpath(v, NULL) : NULL;

		if (isd_path_under(base, dir) || (real && isd_path_under(real, dir)))
			return true;
	}
	return false;
}

/* Version managers whose shims find the tool through the manager's own
 * home (volta's volta-shim, asdf's shell shims): a file in one brings
 * that whole home, which holds only the manager and its tools. */
static const char *const manager_homes[] = {".volta", ".asdf", ".nodenv", ".pyenv", ".rbenv", NULL};

static char *manager_home(const char *real, const char *home)
{
	for (size_t i = 0; home && manager_homes[i]; i++) {
		char *dir = isd_xasprintf("%s/%s", home, manager_homes[i]);
		if (isd_path_under(real, dir) && strcmp(real, dir))
			return dir;
		free(dir);
	}
	return NULL;
}

/* What to bind for a program's installation: the outermost node_modules
 * tree for a package (npm, pnpm, bun and yarn put its dependencies beside
 * it), the prefix of a runtime's PREFIX/bin/PROGRAM, otherwise the
 * directory of the file.  Under the caller's home, never a directory that
 * holds other applications' data (~/.local/bin/agent must not expose
 * ~/.local/share/keyrings) nor a shared bin/: then only the file itself. */
static char *installation_dir(const char *real, const char *home)
{
	const char *nm = strstr(real, "/node_modules/");
	bool in_home = home && isd_path_under(real, home);
	char *dir, *base;

	if ((dir = manager_home(real, home)))
		return dir;
	if (nm)
		return strndup(real, (size_t)(nm - real) + strlen("/node_modules"));
	dir = isd_xstrdup(real);
	*strrchr(dir, '/') = '\0';
	base = strrchr(dir, '/');
	if (base && base != dir && !strcmp(base, "/bin")) {
		char *prefix = strndup(dir, (size_t)(base - dir));
		if (!in_home && strlen(prefix) > 1) {
			free(dir);
			return prefix;
		}
		if (in_home && is_runtime_install(prefix) && !holds_others_data(prefix, home)) {
			free(dir);
			return prefix;
		}
		free(prefix);
		if (in_home) {
			free(dir);
			return isd_xstrdup(real);
		}
	}
	if (in_home && holds_others_data(dir, home)) {
		free(dir);
		return isd_xstrdup(real);
	}
	return dir;
}

static int bind_installation(struct isd_spec *spec, const struct isd_caller *caller, const char *found,
			     const char *real, const char *dir)
{
	_cleanup_free_ char *home = realpath(caller->home, NULL);
	struct isd_mount *m;

	/* Binding the home directory (or a parent of it) would hand the whole
	 * home to the sandbox, which is what isd is there to prevent. */
	if (!strcmp(dir, "/") || (home && isd_path_under(home, dir))) {
		int r = isd_error(0, "exec %s: found %s, but its installation directory %s is too broad to bind into the sandbox",
				  spec->argv[0], found, dir);
		isd_error_hint("fix: add -v %s:%s:ro, or install the program outside your home directory", real, real);
		return r;
	}
	for (size_t i = 0; i < spec->n_mounts; i++)
		if (spec->mounts[i].type == ISD_MOUNT_BIND && isd_path_under(dir, spec->mounts[i].destination))
			return 0; /* already inside */
	m = isd_spec_add_mount(spec);
	m->type = ISD_MOUNT_BIND;
	m->source = isd_xstrdup(dir);
	m->destination = isd_xstrdup(dir);
	m->readonly = true;
	m->origin = isd_xstrdup("command resolution");
	return 0;
}

/* NAME -> target in isd's read-only directory of links (a tmpfs). */
static void add_link(struct isd_spec *spec, const char *name, const char *target)
{
	ssize_t i = isd_spec_find_mount(spec, ISD_COMMAND_LINK_DIR);
	struct isd_mount *m;

	if (i >= 0) {
		m = &spec->mounts[i];
	} else {
		m = isd_spec_add_mount(spec);
		m->type = ISD_MOUNT_TMPFS;
		m->destination = isd_xstrdup(ISD_COMMAND_LINK_DIR);
		m->readonly = true;
		m->size = 64 << 10;
		m->mode = 0755;
		m->has_mode = true;
		m->implicit = true;
		m->origin = isd_xstrdup("command resolution: the names scripts look up");
	}
	isd_strv_push(&m->links, isd_xasprintf("%s\t%s", name, target));
}

/* "#!/usr/bin/env node" → "node"; "#!/opt/x/bin/python3" → that path. */
static char *script_interpreter(const char *path, bool *via_env)
{
	char line[256] = "";
	FILE *f = fopen(path, "re");
	char *p, *end;

	*via_env = false;
	if (!f)
		return NULL;
	if (!fgets(line, sizeof(line), f) || strncmp(line, "#!", 2)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	p = line + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	end = p + strcspn(p, " \t\n");
	if (end - p >= 8 && !strncmp(end - 4, "/env", 4)) {
		*via_env = true;
		p = end + strspn(end, " \t");
		if (!strncmp(p, "-S", 2))
			p += 2 + strspn(p + 2, " \t");
		end = p + strcspn(p, " \t\n");
	}
	return end > p ? strndup(p, (size_t)(end - p)) : NULL;
}

static int resolve_interpreter(struct isd_spec *spec, const struct isd_caller *caller, const char *script,
			       const char *caller_path)
{
	bool via_env;
	_cleanup_free_ char *interp = script_interpreter(script, &via_env);
	_cleanup_free_ char *found = NULL, *real = NULL, *dir = NULL, *home = NULL;
	int r;

	if (!interp)
		return 0;
	if (via_env ? in_sandbox_path(spec, interp) : visible_executable(spec, interp))
		return 0;
	found = via_env ? search_caller_path(caller_path, interp) : isd_xstrdup(interp);
	if (!found || !(real = realpath(found, NULL)))
		return 0; /* exec will report the missing interpreter */
	home = realpath(caller->home, NULL);
	dir = installation_dir(real, home);
	r = bind_installation(spec, caller, found, real, dir);
	if (r < 0 || !via_env)
		return r;
	/* env finds it through PATH: its directory goes first there, or,
	 * when the file has another name (npm's bun is bin/bun.exe), a link
	 * under the name that was looked up. */
	{
		const char *name = strrchr(real, '/') + 1;
		_cleanup_free_ char *bin = strcmp(name, interp) ? isd_xstrdup(ISD_COMMAND_LINK_DIR) : strndup(real, (size_t)(name - 1 - real));
		const char *old = isd_spec_getenv(spec, "PATH");
		_cleanup_free_ char *path = NULL;

		if (strcmp(name, interp))
			add_link(spec, interp, real);
		path = isd_xasprintf("%s%s%s", bin, old && *old ? ":" : "", old ? old : "");
		isd_spec_setenv(spec, "PATH", path);
	}
	return 0;
}

char *isd_command_real_file(const char *cmd, const char *caller_path)
{
	_cleanup_free_ char *found = strchr(cmd, '/') ? isd_xstrdup(cmd) : search_caller_path(caller_path, cmd);

	return found ? realpath(found, NULL) : NULL;
}

int isd_command_resolve(struct isd_spec *spec, const struct isd_caller *caller, const char *caller_path)
{
	const char *cmd = spec->argv[0];
	_cleanup_free_ char *found = NULL, *real = NULL, *dir = NULL, *home = NULL;
	int r;

	if (strchr(cmd, '/') || in_sandbox_path(spec, cmd))
		return 0;
	found = search_caller_path(caller_path, cmd);
	if (!found) {
		/* The payload reports 127 with the sandbox's PATH. */
		spec->command_not_on_caller_path = true;
		return 0;
	}
	real = realpath(found, NULL);
	if (!real)
		return isd_error(-errno, "exec %s: resolving %s", cmd, found);
	home = realpath(caller->home, NULL);
	dir = installation_dir(real, home);
	r = bind_installation(spec, caller, found, real, dir);
	if (r < 0)
		return r;
	r = resolve_interpreter(spec, caller, real, caller_path);
	if (r < 0)
		return r;
	/* By its real path, so that a script finds its modules beside it;
	 * by the path it was found at when that is bound too, so that a
	 * version manager's shim (volta-shim) sees the name it serves. */
	free(spec->argv[0]);
	spec->argv[0] = isd_xstrdup(isd_path_under(found, dir) ? found : real);
	isd_spec_set_origin(spec, "command", "command resolution");
	return 0;
}
