/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "isd/cli-args.h"
#include "isd/fsutil.h"
#include "isd/profile.h"
#include "isd/util.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define MAX_PROFILE_DEPTH 8

void isd_args_free(struct isd_args *a)
{
	isd_strv_free(a->argv);
	isd_strv_free(a->origin);
	a->argv = a->origin = NULL;
	a->argc = 0;
}

void isd_args_push(struct isd_args *a, const char *arg, const char *origin)
{
	isd_strv_push(&a->argv, isd_xstrdup(arg));
	isd_strv_push(&a->origin, isd_xstrdup(origin));
	a->argc++;
}

char **isd_profile_dirs(void)
{
	char **dirs = NULL;

	isd_strv_push(&dirs, isd_xdg_path("XDG_CONFIG_HOME", ".config", "isd/profiles"));
	isd_strv_push(&dirs, isd_xstrdup("/etc/isd/profiles"));
	isd_strv_push(&dirs, isd_xstrdup(ISD_PROFILES_DIR));
	/* The source tree only counts for a binary that runs from its build
	 * tree: an installed isd must never read a path left from its build. */
	if (isd_running_uninstalled())
		isd_strv_push(&dirs, isd_xstrdup(ISD_SOURCE_PROFILES_DIR));
	return dirs;
}

static bool valid_profile_name(const char *name)
{
	if (!name[0] || name[0] == '.')
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.')
			return false;
	return true;
}

/* The file NAME resolves to; with after set (a profile file that includes
 * its own name), the next one down the search path, as cpp's
 * #include_next: a user's agent.conf that says --profile agent extends the
 * installed agent profile instead of including itself. */
static int profile_find_after(const char *name, const char *after, char **path_out)
{
	_cleanup_strv_ char **dirs = NULL;
	_cleanup_free_ char *looked = NULL;
	bool skipping = after != NULL;

	if (strchr(name, '/')) {
		if (access(name, R_OK) < 0)
			return isd_error(-errno, "reading profile %s", name);
		*path_out = isd_xstrdup(name);
		return 0;
	}
	if (!valid_profile_name(name))
		return isd_error(0, "--profile '%s': not a profile name (letters, digits, '-', '_', '.'; or a path)", name);
	dirs = isd_profile_dirs();
	for (size_t i = 0; dirs[i]; i++) {
		char *path = isd_xasprintf("%s/%s.conf", dirs[i], name);
		char *joined;

		if (skipping) {
			skipping = strcmp(path, after) != 0;
			free(path);
			continue;
		}
		if (access(path, R_OK) == 0) {
			*path_out = path;
			return 0;
		}
		free(path);
		joined = isd_xasprintf("%s%s%s", looked ? looked : "", looked ? ", " : "", dirs[i]);
		free(looked);
		looked = joined;
	}
	if (after)
		return isd_error(-ENOENT, "--profile %s in %s: no %s.conf further down the search path (%s)", name, after,
				 name, looked ? looked : "it ends there");
	return isd_error(-ENOENT, "--profile %s: no %s.conf in %s", name, name, looked ? looked : "");
}

int isd_profile_find(const char *name, char **path_out)
{
	return profile_find_after(name, NULL, path_out);
}

/* Whether path is a file NAME.conf in some directory. */
static bool names_file(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(name);

	base = base ? base + 1 : path;
	return !strncmp(base, name, n) && !strcmp(base + n, ".conf");
}

static int profile_expand_from(const char *name, const char *from, const struct isd_profile_vars *vars,
			       struct isd_args *out, int depth);

/* The working directory with '/' turned into '-', as the Docker setup
 * named its project mount points. */
static char *mangle_path(const char *p)
{
	char *m = isd_xstrdup(p);

	for (char *c = m; *c; c++)
		if (*c == '/')
			*c = '-';
	return m;
}

/* ${PROJECT}: the top level of the git repository the working directory
 * is in, so that an agent started in a subdirectory works on the whole
 * repository (git inside needs its .git); the working directory itself
 * when there is none.  The search stops below the home directory: a
 * dotfiles repository in ~ must never make the home the workspace. */
static char *project_dir(const struct isd_profile_vars *vars)
{
	_cleanup_free_ char *home = vars->home ? realpath(vars->home, NULL) : NULL;
	char *dir = realpath(vars->pwd, NULL);

	if (!dir)
		return isd_xstrdup(vars->pwd);
	for (char *end = dir + strlen(dir);;) {
		struct stat st;
		_cleanup_free_ char *git = NULL;

		*end = '\0';
		if (!dir[0] || (home && !strcmp(dir, home)))
			break;
		git = isd_xasprintf("%s/.git", dir);
		if (lstat(git, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			return dir;
		end = strrchr(dir, '/');
		if (!end || end == dir)
			break;
	}
	free(dir);
	return isd_xstrdup(vars->pwd);
}

static int expand_vars(const char *in, const struct isd_profile_vars *vars, const char *where, char **out)
{
	size_t cap = 0, len = 0;
	char *res = NULL;

	for (const char *p = in; *p;) {
		const char *value = NULL;
		_cleanup_free_ char *owned = NULL;

		if (p[0] == '$' && p[1] == '{') {
			const char *end = strchr(p, '}');
			_cleanup_free_ char *name = NULL;

			if (!end) {
				free(res);
				return isd_error(0, "%s: unterminated ${ in '%s'", where, in);
			}
			name = strndup(p + 2, (size_t)(end - p - 2));
			if (!strcmp(name, "HOME"))
				value = vars->home;
			else if (!strcmp(name, "PWD"))
				value = vars->pwd;
			else if (!strcmp(name, "USER"))
				value = vars->user;
			else if (!strcmp(name, "AGENT"))
				value = vars->agent;
			else if (!strcmp(name, "UID"))
				value = owned = isd_xasprintf("%u", vars->uid);
			else if (!strcmp(name, "GID"))
				value = owned = isd_xasprintf("%u", vars->gid);
			else if (!strcmp(name, "PROJECT"))
				value = owned = project_dir(vars);
			else if (!strcmp(name, "PWD_MANGLED"))
				value = owned = mangle_path(vars->pwd ? vars->pwd : "/");
			else {
				free(res);
				return isd_error(0, "%s: unknown variable ${%s} (known: HOME PWD PROJECT PWD_MANGLED UID GID USER AGENT)",
						 where, name);
			}
			if (!value)
				value = "";
			p = end + 1;
		} else {
			static char one[2];
			one[0] = *p++;
			value = one;
		}
		isd_append(&res, &len, &cap, value, strlen(value));
	}
	if (!res)
		res = isd_xstrdup("");
	*out = res;
	return 0;
}

int isd_profile_parse_text(const char *text, const char *origin_name, const struct isd_profile_vars *vars,
			   struct isd_args *out, int depth)
{
	_cleanup_free_ char *copy = isd_xstrdup(text);
	char *line = copy, *next;
	unsigned lineno = 0;
	int r;

	for (; line; line = next) {
		_cleanup_free_ char *where = NULL, *opt = NULL, *value = NULL;
		char *p, *sep;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		where = isd_xasprintf("%s:%u", origin_name, lineno);
		p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		for (char *e = p + strlen(p); e > p && isspace((unsigned char)e[-1]);)
			*--e = '\0';
		if (*p != '-')
			return isd_error(0, "profile %s: expected an option such as --tmpfs, got '%s'", where, p);
		/* "--opt value" or "--opt=value": the value is the rest of the
		 * line, so values may contain spaces. */
		sep = p + strcspn(p, " \t");
		if (*sep) {
			char *v = sep;
			*v++ = '\0';
			while (isspace((unsigned char)*v))
				v++;
			if (v[0] == '"' && strlen(v) >= 2 && v[strlen(v) - 1] == '"') {
				v[strlen(v) - 1] = '\0';
				v++;
			}
			r = expand_vars(v, vars, where, &value);
			if (r < 0)
				return r;
		}
		r = expand_vars(p, vars, where, &opt);
		if (r < 0)
			return r;
		if (!strcmp(opt, "--profile") || !strncmp(opt, "--profile=", 10)) {
			const char *inc = value ? value : opt[9] == '=' ? opt + 10 : "";
			if (!inc[0])
				return isd_error(0, "profile %s: --profile needs a name", where);
			r = profile_expand_from(inc, origin_name, vars, out, depth + 1);
			if (r < 0)
				return r;
			continue;
		}
		{
			_cleanup_free_ char *origin = isd_xasprintf("profile %s", where);
			isd_args_push(out, opt, origin);
			if (value)
				isd_args_push(out, value, origin);
		}
	}
	return 0;
}

static int profile_expand_from(const char *name, const char *from, const struct isd_profile_vars *vars,
			       struct isd_args *out, int depth)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	int r;

	if (depth > MAX_PROFILE_DEPTH)
		return isd_error(0, "--profile %s: profiles include each other more than %d levels deep", name,
				 MAX_PROFILE_DEPTH);
	if (!strcmp(name, "none"))
		return 0;
	r = profile_find_after(name, from && !strchr(name, '/') && names_file(from, name) ? from : NULL, &path);
	if (r < 0)
		return r;
	r = isd_read_file_at(AT_FDCWD, path, &text, NULL);
	if (r < 0)
		return isd_error(r, "reading profile %s", path);
	return isd_profile_parse_text(text, path, vars, out, depth);
}

int isd_profile_expand(const char *name, const struct isd_profile_vars *vars, struct isd_args *out, int depth)
{
	return profile_expand_from(name, NULL, vars, out, depth);
}

static int profile_list(void)
{
	_cleanup_strv_ char **dirs = isd_profile_dirs();

	isd_print_named_files(dirs, ".conf", 16);
	printf("%-16s (built in: the bare runtime, no profile)\n", "none");
	return 0;
}

static int profile_show(const char *name)
{
	_cleanup_free_ char *path = NULL, *text = NULL;

	if (isd_profile_find(name, &path) < 0 || isd_read_file_at(AT_FDCWD, path, &text, NULL) < 0) {
		isd_error_print("profile not found");
		return ISD_EXIT_FAILURE;
	}
	printf("# %s\n%s", path, text);
	return 0;
}

/* Edits always happen on the user's own file.  For an installed profile
 * that file starts as an override that includes the installed one (the
 * same name includes the next file down the search path), so that later
 * updates of the installed profile still reach the user. */
static int profile_edit(const char *name)
{
	_cleanup_strv_ char **dirs = isd_profile_dirs();
	_cleanup_free_ char *user_path = NULL, *src = NULL, *text = NULL;
	const char *editor = getenv("VISUAL");
	pid_t pid;
	int status;

	if (!valid_profile_name(name)) {
		isd_error(0, "profile edit '%s': not a profile name", name);
		isd_error_print("");
		return ISD_EXIT_FAILURE;
	}
	user_path = isd_xasprintf("%s/%s.conf", dirs[0], name);
	if (access(user_path, F_OK) < 0) {
		if (isd_profile_find(name, &src) == 0) {
			text = isd_xasprintf("# isd profile %s: your additions to %s, one `isd exec` option per line.\n"
					     "# The line below includes it (the same name means the next %s.conf\n"
					     "# down the search path), so its updates still reach you; options\n"
					     "# after it override or add to it.  `isd profile show %s` prints it.\n"
					     "--profile %s\n",
					     name, src, name, src, name);
		} else {
			isd_error_clear();
			text = isd_xasprintf("# isd profile %s: one `isd exec` option per line\n", name);
		}
		if (isd_mkdir_p(dirs[0], 0755) < 0 || isd_write_file_at(AT_FDCWD, user_path, text, O_CREAT | O_EXCL, 0644) < 0) {
			isd_error(-errno, "creating %s", user_path);
			isd_error_print("");
			return ISD_EXIT_FAILURE;
		}
	}
	if (!editor || !*editor)
		editor = getenv("EDITOR");
	if (!editor || !*editor)
		editor = "vi";
	pid = fork();
	if (pid == 0) {
		execlp("sh", "sh", "-c", "exec $0 \"$1\"", editor, user_path, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return ISD_EXIT_FAILURE;
	return WIFEXITED(status) ? WEXITSTATUS(status) : ISD_EXIT_FAILURE;
}

static void profile_usage(FILE *out)
{
	fputs("Usage: isd profile list\n"
	      "       isd profile show NAME   the profile's text, and the file it comes from\n"
	      "       isd profile edit NAME   edit your own copy (~/.config/isd/profiles/NAME.conf),\n"
	      "                               which includes the installed one\n"
	      "\n"
	      "Profiles are isd exec options kept in NAME.conf (isd.profile(5)).\n",
	      out);
}

/* isd profile SUB NAME: the name, or the exit status (>= 0). */
static int profile_name(const char *cmdname, int argc, char **argv, const char **name)
{
	const struct isd_cli_command cmd = {cmdname, profile_usage, NULL, 1};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);

	*name = NULL;
	while (isd_cli_next(&a))
		*name = a.value;
	if (a.exit < 0 && !*name)
		return isd_cli_usage_error(&cmd, "expected a profile NAME");
	return a.exit;
}

static int profile_list_cmd(int argc, char **argv)
{
	const struct isd_cli_command cmd = {"profile list", profile_usage, NULL, 0};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);

	while (isd_cli_next(&a))
		;
	return a.exit >= 0 ? a.exit : profile_list();
}

static int profile_show_cmd(int argc, char **argv)
{
	const char *name;
	int r = profile_name("profile show", argc, argv, &name);
	return r >= 0 ? r : profile_show(name);
}

static int profile_edit_cmd(int argc, char **argv)
{
	const char *name;
	int r = profile_name("profile edit", argc, argv, &name);
	return r >= 0 ? r : profile_edit(name);
}

int isd_profile_main(int argc, char **argv)
{
	static const struct isd_cli_subcommand subs[] = {
		{"list", profile_list_cmd}, {"show", profile_show_cmd}, {"edit", profile_edit_cmd}, {0}};

	return isd_cli_dispatch("profile", profile_usage, subs, argc, argv);
}

/* --allow @NAME: a named set of hosts (the npm registry, PyPI, ...) kept as
 * data beside the profiles, so a user need not know the host names, and
 * adds or changes a set in ~/.config/isd/profiles/allow-sets/NAME.allow. */
int isd_profile_find_allow_set(const char *name, char **path_out)
{
	_cleanup_strv_ char **dirs = NULL;
	_cleanup_free_ char *known = NULL;

	if (!valid_profile_name(name))
		return isd_error(0, "--allow @%s: not a set name (letters, digits, '-', '_', '.')", name);
	dirs = isd_profile_dirs();
	for (size_t i = 0; dirs[i]; i++) {
		char *path = isd_xasprintf("%s/allow-sets/%s.allow", dirs[i], name);

		if (access(path, R_OK) == 0) {
			*path_out = path;
			return 0;
		}
		free(path);
	}
	for (size_t i = 0; dirs[i]; i++) {
		_cleanup_free_ char *dir = isd_xasprintf("%s/allow-sets", dirs[i]);
		DIR *d = opendir(dir);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			size_t n = strlen(de->d_name);
			if (n > 6 && !strcmp(de->d_name + n - 6, ".allow") && de->d_name[0] != '.') {
				char *joined = isd_xasprintf("%s%s@%.*s", known ? known : "", known ? " " : "", (int)(n - 6),
							     de->d_name);
				free(known);
				known = joined;
			}
		}
		if (d)
			closedir(d);
	}
	isd_error(0, "--allow @%s: no such set (known: %s)", name, known ? known : "none");
	return -ENOENT;
}
