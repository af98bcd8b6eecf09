/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd exec` options.  Names and meanings follow `docker run` wherever Docker
 * has the option, so that existing flag sets move over unchanged.
 */
#define _GNU_SOURCE
#include "isd/cli.h"
#include "isd/cgroup.h"
#include "isd/util.h"

#include <fcntl.h>
#include <getopt.h>
#include <linux/openat2.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

extern char **environ;

enum {
	OPT_ENV_FILE = 1000,
	OPT_MOUNT,
	OPT_TMPFS,
	OPT_HOSTNAME,
	OPT_NETWORK,
	OPT_ROOTFS,
	OPT_IMAGE,
	OPT_PRINT_SPEC,
	OPT_SECURITY_OPT,
	OPT_PID,
	OPT_IPC,
	OPT_RM,
	OPT_READ_ONLY,
	OPT_CAP_DROP,
	OPT_CAP_ADD,
	OPT_PRIVILEGED,
	OPT_INIT,
	OPT_MEMORY,
	OPT_MEMORY_SWAP,
	OPT_MEMORY_RESERVATION,
	OPT_CPUS,
	OPT_CPU_SHARES,
	OPT_CPU_WEIGHT,
	OPT_CPUSET_CPUS,
	OPT_PIDS_LIMIT,
	OPT_BLKIO_WEIGHT,
	OPT_LIMITS,
	OPT_NO_TTY,
	OPT_HELP,
};

static const struct option exec_options[] = {
	{"env", required_argument, NULL, 'e'},
	{"env-file", required_argument, NULL, OPT_ENV_FILE},
	{"volume", required_argument, NULL, 'v'},
	{"mount", required_argument, NULL, OPT_MOUNT},
	{"tmpfs", required_argument, NULL, OPT_TMPFS},
	{"workdir", required_argument, NULL, 'w'},
	{"user", required_argument, NULL, 'u'},
	{"hostname", required_argument, NULL, OPT_HOSTNAME},
	{"network", required_argument, NULL, OPT_NETWORK},
	{"net", required_argument, NULL, OPT_NETWORK},
	{"rootfs", required_argument, NULL, OPT_ROOTFS},
	{"image", required_argument, NULL, OPT_IMAGE},
	{"print-spec", no_argument, NULL, OPT_PRINT_SPEC},
	{"security-opt", required_argument, NULL, OPT_SECURITY_OPT},
	{"pid", required_argument, NULL, OPT_PID},
	{"ipc", required_argument, NULL, OPT_IPC},
	{"rm", no_argument, NULL, OPT_RM},
	{"interactive", no_argument, NULL, 'i'},
	{"tty", no_argument, NULL, 't'},
	{"no-tty", no_argument, NULL, OPT_NO_TTY},
	{"read-only", no_argument, NULL, OPT_READ_ONLY},
	{"cap-drop", required_argument, NULL, OPT_CAP_DROP},
	{"cap-add", required_argument, NULL, OPT_CAP_ADD},
	{"privileged", no_argument, NULL, OPT_PRIVILEGED},
	{"init", no_argument, NULL, OPT_INIT},
	{"memory", required_argument, NULL, OPT_MEMORY},
	{"memory-swap", required_argument, NULL, OPT_MEMORY_SWAP},
	{"memory-reservation", required_argument, NULL, OPT_MEMORY_RESERVATION},
	{"cpus", required_argument, NULL, OPT_CPUS},
	{"cpu-shares", required_argument, NULL, OPT_CPU_SHARES},
	{"cpu-weight", required_argument, NULL, OPT_CPU_WEIGHT},
	{"cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS},
	{"pids-limit", required_argument, NULL, OPT_PIDS_LIMIT},
	{"blkio-weight", required_argument, NULL, OPT_BLKIO_WEIGHT},
	{"limits", required_argument, NULL, OPT_LIMITS},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0},
};

void isd_cli_exec_usage(FILE *out)
{
	fputs("Usage: isd exec [OPTIONS] [--] COMMAND [ARG...]\n"
	      "\n"
	      "Run COMMAND in a new rootless sandbox: read-only root, own user, mount,\n"
	      "pid, network, ipc, uts and cgroup namespaces, no capabilities,\n"
	      "no_new_privs and a seccomp filter.  Options follow `docker run`.\n"
	      "\n"
	      "Root filesystem:\n"
	      "      --image NAME            image from the store; 'host' (default) is the\n"
	      "                              host's /usr, /etc, /opt read-only\n"
	      "      --rootfs DIR            an unpacked root filesystem\n"
	      "Mounts:\n"
	      "  -v, --volume SRC:DST[:ro|rw] bind a host path (recursive)\n"
	      "      --mount type=bind,src=PATH,dst=PATH[,readonly]\n"
	      "      --mount type=tmpfs,dst=PATH[,tmpfs-size=N][,tmpfs-mode=OCTAL]\n"
	      "      --tmpfs DST[:OPTS]      rw|ro, exec|noexec, size=N[k|m|g], mode=OCTAL,\n"
	      "                              uid=N, gid=N (always nosuid,nodev; noexec\n"
	      "                              unless exec)\n"
	      "Process:\n"
	      "  -w, --workdir DIR           working directory inside (default /)\n"
	      "  -u, --user UID[:GID]        ids the payload sees (default: yours)\n"
	      "  -e, --env NAME[=VALUE]      set (or copy from your environment) a variable\n"
	      "      --env-file FILE         NAME=VALUE lines\n"
	      "  -h, --hostname NAME         host name inside (default isd)\n"
	      "  -t, --tty                   a pseudo-terminal inside (default when stdin and\n"
	      "                              stdout are terminals); --no-tty to turn it off\n"
	      "  -i, --interactive           with -t: forward stdin\n"
	      "Isolation:\n"
	      "      --network none|host     none (default): only loopback\n"
	      "      --pid private|host      host: no pid namespace, outer /proc read-only\n"
	      "      --security-opt seccomp=NAME|PATH|unconfined\n"
	      "Limits (cgroup v2):\n"
	      "      --memory N  --memory-swap N  --memory-reservation N  --cpus N.N\n"
	      "      --cpu-shares N  --cpu-weight N  --cpuset-cpus LIST  --pids-limit N\n"
	      "      --blkio-weight N  --limits strict|best-effort\n"
	      "Other:\n"
	      "      --print-spec            print the resolved sandbox as JSON and exit\n"
	      "Accepted for Docker compatibility and ignored (isd always does this):\n"
	      "      --rm, --read-only, --ipc=private, --cap-drop=..., --init,\n"
	      "      --security-opt=no-new-privileges[:true]\n",
	      out);
}

void isd_caller_from_process(struct isd_caller *caller)
{
	static char cwd[PATH_MAX];
	const char *home = getenv("HOME");

	caller->uid = getuid();
	caller->gid = getgid();
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(caller->uid);
		home = pw ? pw->pw_dir : "/";
	}
	caller->home = home;
	caller->cwd = getcwd(cwd, sizeof(cwd)) ? cwd : "/";
	caller->environ = environ;
	caller->stdin_tty = isatty(STDIN_FILENO);
	caller->stdout_tty = isatty(STDOUT_FILENO);
}

static const char *caller_getenv(const struct isd_caller *caller, const char *name)
{
	size_t len = strlen(name);

	for (char **e = caller->environ; e && *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

static char *absolute_source(const char *src, const char *cwd)
{
	char *joined, *norm = NULL;

	if (src[0] == '/')
		joined = isd_xstrdup(src);
	else
		joined = isd_xasprintf("%s/%s", cwd, src);
	/* Bind sources are host paths chosen by the user: resolve symlinks on
	 * the host as the shell would, so the spec names the real directory. */
	norm = realpath(joined, NULL);
	if (norm) {
		free(joined);
		return norm;
	}
	return joined; /* validation reports the missing source */
}

static int parse_destination(const char *what, const char *dst, char **out)
{
	if (!dst || !*dst)
		return isd_error(0, "%s: missing destination", what);
	if (dst[0] != '/')
		return isd_error(0, "%s: destination '%s' must be an absolute path", what, dst);
	if (isd_normalize_abs_path(dst, out) < 0)
		return isd_error(0, "%s: destination '%s' must not contain '..'", what, dst);
	return 0;
}

static int parse_tmpfs(const char *arg, struct isd_mount *m)
{
	_cleanup_free_ char *copy = isd_xstrdup(arg);
	char *opts = strchr(copy, ':');
	char *save = NULL;
	int r;

	memset(m, 0, sizeof(*m));
	m->type = ISD_MOUNT_TMPFS;
	m->mode = 01777;
	m->has_mode = true;
	if (opts)
		*opts++ = '\0';
	r = parse_destination("--tmpfs", copy, &m->destination);
	if (r < 0)
		return r;
	for (char *o = opts ? strtok_r(opts, ",", &save) : NULL; o; o = strtok_r(NULL, ",", &save)) {
		char *val = strchr(o, '=');
		if (val)
			*val++ = '\0';
		if (!strcmp(o, "rw") && !val)
			m->readonly = false;
		else if (!strcmp(o, "ro") && !val)
			m->readonly = true;
		else if (!strcmp(o, "exec") && !val)
			m->exec = true;
		else if (!strcmp(o, "noexec") && !val)
			m->exec = false;
		else if ((!strcmp(o, "nosuid") || !strcmp(o, "nodev")) && !val)
			; /* always on */
		else if ((!strcmp(o, "suid") || !strcmp(o, "dev")) && !val)
			return isd_error(0, "--tmpfs %s: option '%s' is not allowed; isd tmpfs mounts are always nosuid,nodev",
					 arg, o);
		else if (!strcmp(o, "size") && val) {
			if (isd_parse_size(val, &m->size) < 0 || m->size == 0)
				return isd_error(0, "--tmpfs %s: invalid size '%s' (expected N[k|m|g], N > 0)", arg, val);
		} else if (!strcmp(o, "mode") && val) {
			if (isd_parse_octal_mode(val, &m->mode) < 0)
				return isd_error(0, "--tmpfs %s: invalid mode '%s' (expected octal, e.g. 1777)", arg, val);
		} else if (!strcmp(o, "uid") && val) {
			if (isd_parse_uint32(val, &m->uid) < 0)
				return isd_error(0, "--tmpfs %s: invalid uid '%s'", arg, val);
			m->has_uid = true;
		} else if (!strcmp(o, "gid") && val) {
			if (isd_parse_uint32(val, &m->gid) < 0)
				return isd_error(0, "--tmpfs %s: invalid gid '%s'", arg, val);
			m->has_gid = true;
		} else
			return isd_error(0, "--tmpfs %s: unknown option '%s%s%s' (known: rw ro exec noexec nosuid nodev size= mode= uid= gid=)",
					 arg, o, val ? "=" : "", val ? val : "");
	}
	return 0;
}

/* On failure nothing stays allocated in m. */
int isd_cli_parse_tmpfs(const char *arg, struct isd_mount *m)
{
	int r = parse_tmpfs(arg, m);

	if (r < 0) {
		free(m->source);
		free(m->destination);
		memset(m, 0, sizeof(*m));
	}
	return r;
}

static int parse_volume(const char *arg, const char *cwd, struct isd_mount *m)
{
	_cleanup_free_ char *copy = isd_xstrdup(arg);
	char *dst, *opts, *save = NULL;
	int r;

	memset(m, 0, sizeof(*m));
	m->type = ISD_MOUNT_BIND;
	dst = strchr(copy, ':');
	if (!dst)
		return isd_error(0, "--volume %s: expected SRC:DST[:ro|rw] (anonymous volumes are not supported)", arg);
	*dst++ = '\0';
	opts = strchr(dst, ':');
	if (opts)
		*opts++ = '\0';
	if (copy[0] != '/' && copy[0] != '.')
		return isd_error(0, "--volume %s: '%s' is not a host path; isd has no named volumes (use an absolute path or ./relative)",
				 arg, copy);
	r = parse_destination("--volume", dst, &m->destination);
	if (r < 0)
		return r;
	m->source = absolute_source(copy, cwd);
	for (char *o = opts ? strtok_r(opts, ",", &save) : NULL; o; o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "ro") || !strcmp(o, "readonly"))
			m->readonly = true;
		else if (!strcmp(o, "rw"))
			m->readonly = false;
		else if (!strcmp(o, "z") || !strcmp(o, "Z") || !strcmp(o, "rprivate") ||
			 !strcmp(o, "private") || !strcmp(o, "rslave") || !strcmp(o, "slave") ||
			 !strcmp(o, "delegated") || !strcmp(o, "cached") || !strcmp(o, "consistent"))
			; /* labels and propagation: isd binds are always private to the sandbox */
		else
			return isd_error(0, "--volume %s: unknown option '%s' (known: ro rw)", arg, o);
	}
	return 0;
}

/* On failure nothing stays allocated in m. */
int isd_cli_parse_volume(const char *arg, const char *cwd, struct isd_mount *m)
{
	int r = parse_volume(arg, cwd, m);

	if (r < 0) {
		free(m->source);
		free(m->destination);
		memset(m, 0, sizeof(*m));
	}
	return r;
}

static int parse_bool_value(const char *v, bool *out)
{
	if (!v || !strcmp(v, "true") || !strcmp(v, "1")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "false") || !strcmp(v, "0")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

static int parse_mount(const char *arg, const char *cwd, struct isd_mount *m)
{
	_cleanup_free_ char *copy = isd_xstrdup(arg);
	_cleanup_free_ char *src = NULL, *dst = NULL;
	char *save = NULL;
	const char *type = NULL;
	uint64_t size = 0;
	uint32_t mode = 01777;
	bool readonly = false, has_size = false;
	int r;

	memset(m, 0, sizeof(*m));
	for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		char *val = strchr(o, '=');
		if (val)
			*val++ = '\0';
		if (!strcmp(o, "type") && val)
			type = val;
		else if ((!strcmp(o, "source") || !strcmp(o, "src")) && val)
			src = isd_xstrdup(val);
		else if ((!strcmp(o, "destination") || !strcmp(o, "dst") || !strcmp(o, "target")) && val)
			dst = isd_xstrdup(val);
		else if (!strcmp(o, "readonly") || !strcmp(o, "ro")) {
			if (parse_bool_value(val, &readonly) < 0)
				return isd_error(0, "--mount %s: invalid value '%s' for %s", arg, val, o);
		} else if (!strcmp(o, "tmpfs-size") && val) {
			if (isd_parse_size(val, &size) < 0 || size == 0)
				return isd_error(0, "--mount %s: invalid tmpfs-size '%s'", arg, val);
			has_size = true;
		} else if (!strcmp(o, "tmpfs-mode") && val) {
			if (isd_parse_octal_mode(val, &mode) < 0)
				return isd_error(0, "--mount %s: invalid tmpfs-mode '%s'", arg, val);
		} else if ((!strcmp(o, "bind-propagation") && val) || !strcmp(o, "consistency"))
			; /* isd binds are always private to the sandbox */
		else
			return isd_error(0, "--mount %s: unknown field '%s'", arg, o);
	}
	if (!type)
		return isd_error(0, "--mount %s: missing type= (bind or tmpfs)", arg);
	r = parse_destination("--mount", dst, &m->destination);
	if (r < 0)
		return r;
	m->readonly = readonly;
	if (!strcmp(type, "bind")) {
		if (!src)
			return isd_error(0, "--mount %s: type=bind needs source=", arg);
		if (has_size)
			return isd_error(0, "--mount %s: tmpfs-size only applies to type=tmpfs", arg);
		m->type = ISD_MOUNT_BIND;
		m->source = absolute_source(src, cwd);
	} else if (!strcmp(type, "tmpfs")) {
		if (src)
			return isd_error(0, "--mount %s: type=tmpfs takes no source", arg);
		m->type = ISD_MOUNT_TMPFS;
		m->size = size;
		m->mode = mode;
		m->has_mode = true;
	} else {
		return isd_error(0, "--mount %s: type '%s' is not supported (bind or tmpfs)", arg, type);
	}
	return 0;
}

/* On failure nothing stays allocated in m. */
int isd_cli_parse_mount(const char *arg, const char *cwd, struct isd_mount *m)
{
	int r = parse_mount(arg, cwd, m);

	if (r < 0) {
		free(m->source);
		free(m->destination);
		memset(m, 0, sizeof(*m));
	}
	return r;
}

int isd_cli_parse_cpus(const char *arg, uint64_t period_us, uint64_t *quota_us)
{
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *p = arg;

	if (!*p)
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > 1000000)
			return -ERANGE;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (scale < 1000000) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
		}
	}
	if (*p || p == arg)
		return -EINVAL;
	*quota_us = whole * period_us + (frac * period_us + scale / 2) / scale;
	if (*quota_us < 1000) /* the kernel's minimum quota */
		return -ERANGE;
	return 0;
}

static int add_env_arg(struct isd_spec *spec, const struct isd_caller *caller, const char *arg,
		       const char *origin)
{
	const char *eq = strchr(arg, '=');

	if (eq == arg || !*arg)
		return isd_error(0, "%s '%s': expected NAME=VALUE or NAME", origin, arg);
	if (eq) {
		_cleanup_free_ char *name = strndup(arg, (size_t)(eq - arg));
		isd_spec_setenv(spec, name, eq + 1);
	} else {
		const char *v = caller_getenv(caller, arg);
		if (v)
			isd_spec_setenv(spec, arg, v);
	}
	return 0;
}

static int read_env_file(struct isd_spec *spec, const struct isd_caller *caller, const char *path)
{
	_cleanup_free_ char *text = NULL;
	char *line, *save = NULL;
	int r = isd_read_file_at(AT_FDCWD, path, &text, NULL);

	if (r < 0)
		return isd_error(r, "reading --env-file %s", path);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t len = strlen(line);
		if (len && line[len - 1] == '\r')
			line[len - 1] = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		r = add_env_arg(spec, caller, line, path);
		if (r < 0)
			return r;
	}
	return 0;
}

static int add_user_mount(struct isd_spec *spec, const struct isd_mount *parsed)
{
	struct isd_mount *m = isd_spec_add_mount(spec);
	*m = *parsed;
	return 0;
}

static int parse_security_opt(struct isd_spec *spec, const char *arg)
{
	if (!strcmp(arg, "no-new-privileges") || !strcmp(arg, "no-new-privileges:true") ||
	    !strcmp(arg, "no-new-privileges=true"))
		return 0;
	if (!strncmp(arg, "no-new-privileges", 17))
		return isd_error(0, "--security-opt %s: isd always sets no_new_privs; it cannot be turned off", arg);
	if (!strncmp(arg, "seccomp=", 8) || !strncmp(arg, "seccomp:", 8)) {
		if (!arg[8])
			return isd_error(0, "--security-opt %s: missing profile name or path", arg);
		free(spec->seccomp);
		spec->seccomp = isd_xstrdup(arg + 8);
		return 0;
	}
	return isd_error(0, "--security-opt %s: unknown (known: seccomp=NAME|PATH|unconfined, no-new-privileges)", arg);
}

/* Reads a passwd-format file of the image, resolved inside the image root so
 * that a hostile image cannot point us at host files it should not name. */
static int image_passwd_lookup(const struct isd_spec *spec, const char *name, uint32_t uid,
			       uint32_t *uid_out, uint32_t *gid_out, char **home_out, char **user_out)
{
	_cleanup_close_ int rootfd = -1, fd = -1;
	_cleanup_free_ char *text = NULL;
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	char *line, *save = NULL;

	rootfd = open(spec->rootfs ? spec->rootfs : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, rootfd, "etc/passwd", &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (isd_read_fd(fd, &text, NULL) < 0)
		return -EIO;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[7] = {0};
		char *p = line;
		int n = 0;
		uint32_t id, gid;

		for (n = 0; n < 7 && p; n++) {
			f[n] = p;
			p = strchr(p, ':');
			if (p)
				*p++ = '\0';
		}
		if (n < 7 || isd_parse_uint32(f[2], &id) < 0 || isd_parse_uint32(f[3], &gid) < 0)
			continue;
		if (name ? strcmp(f[0], name) != 0 : id != uid)
			continue;
		if (uid_out)
			*uid_out = id;
		if (gid_out)
			*gid_out = gid;
		if (home_out)
			*home_out = isd_xstrdup(f[5]);
		if (user_out)
			*user_out = isd_xstrdup(f[0]);
		return 0;
	}
	return -ENOENT;
}

static int parse_user(struct isd_spec *spec, const char *arg)
{
	_cleanup_free_ char *copy = isd_xstrdup(arg);
	char *g = strchr(copy, ':');
	uint32_t gid_from_passwd = 0;
	bool have_passwd_gid = false;

	if (g)
		*g++ = '\0';
	if (isd_parse_uint32(copy, &spec->uid) < 0) {
		if (image_passwd_lookup(spec, copy, 0, &spec->uid, &gid_from_passwd, NULL, NULL) < 0)
			return isd_error(0, "--user %s: '%s' is neither a number nor a user in the image's /etc/passwd",
					 arg, copy);
		have_passwd_gid = true;
	}
	if (g) {
		if (isd_parse_uint32(g, &spec->gid) < 0)
			return isd_error(0, "--user %s: group '%s' must be numeric", arg, g);
	} else if (have_passwd_gid) {
		spec->gid = gid_from_passwd;
	}
	return 0;
}

static int resolve_image(struct isd_spec *spec, const char *name)
{
	const char *data = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	_cleanup_free_ char *base = NULL, *current = NULL, *plain = NULL;
	struct stat st;

	free(spec->image);
	spec->image = isd_xstrdup(name);
	free(spec->rootfs);
	spec->rootfs = NULL;
	if (!strcmp(name, "host"))
		return 0;
	if (!name[0] || strchr(name, '/') || name[0] == '.')
		return isd_error(0, "--image '%s': not an image name (use --rootfs for a directory)", name);
	if (data && data[0] == '/')
		base = isd_xasprintf("%s/isd/images", data);
	else
		base = isd_xasprintf("%s/.local/share/isd/images", home ? home : "/");
	/* A built image publishes NAME/current -> <id>; resolving it now pins
	 * this sandbox to that tree even if a rebuild switches the link. */
	current = isd_xasprintf("%s/%s/current/rootfs", base, name);
	plain = isd_xasprintf("%s/%s", base, name);
	if (stat(current, &st) == 0 && S_ISDIR(st.st_mode)) {
		spec->rootfs = realpath(current, NULL);
	} else if (stat(plain, &st) == 0 && S_ISDIR(st.st_mode)) {
		spec->rootfs = realpath(plain, NULL);
	} else {
		int r = isd_error(0, "--image %s: no such image in %s", name, base);
		isd_error_hint("build one with `isd build -t %s`, or use --rootfs DIR", name);
		return r;
	}
	if (!spec->rootfs)
		return isd_error(-errno, "--image %s: resolving %s", name, plain);
	return 0;
}

static void add_implicit_tmpfs(struct isd_spec *spec, const char *dst, uint64_t size, bool exec)
{
	struct isd_mount *m;

	if (isd_spec_find_mount(spec, dst) >= 0)
		return;
	m = isd_spec_add_mount(spec);
	m->type = ISD_MOUNT_TMPFS;
	m->destination = isd_xstrdup(dst);
	m->size = size;
	m->mode = 01777;
	m->has_mode = true;
	m->exec = exec;
	m->implicit = true;
}

static void apply_default_env(struct isd_spec *spec, const struct isd_caller *caller,
			      char **user_env)
{
	_cleanup_free_ char *home = NULL, *user = NULL;
	const char *v;

	/* On the host image the caller's own HOME and USER win over passwd,
	 * as they would in the caller's shell. */
	if (spec->uid == caller->uid && !spec->rootfs) {
		home = isd_xstrdup(caller->home);
		v = caller_getenv(caller, "USER");
		if (v)
			user = isd_xstrdup(v);
	}
	if ((!home || !user) && image_passwd_lookup(spec, NULL, spec->uid, NULL, NULL,
						    home ? NULL : &home, user ? NULL : &user) < 0) {
		if (!home)
			home = isd_xstrdup("/");
		if (!user)
			user = isd_xstrdup("");
	}
	isd_spec_setenv(spec, "HOME", home);
	if (user[0]) {
		isd_spec_setenv(spec, "USER", user);
		isd_spec_setenv(spec, "LOGNAME", user);
	}
	v = caller_getenv(caller, "PATH");
	isd_spec_setenv(spec, "PATH", !spec->rootfs && v ? v : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	v = caller_getenv(caller, "TERM");
	if (v)
		isd_spec_setenv(spec, "TERM", v);
	for (char **e = caller->environ; e && *e; e++) {
		if (!strncmp(*e, "LANG=", 5) || !strncmp(*e, "LANGUAGE=", 9) || !strncmp(*e, "LC_", 3)) {
			_cleanup_free_ char *name = strndup(*e, (size_t)(strchr(*e, '=') - *e));
			isd_spec_setenv(spec, name, strchr(*e, '=') + 1);
		}
	}
	/* -e and --env-file override the defaults, in the order given. */
	for (char **e = user_env; e && *e; e++) {
		_cleanup_free_ char *name = strndup(*e, (size_t)(strchr(*e, '=') - *e));
		isd_spec_setenv(spec, name, strchr(*e, '=') + 1);
	}
}

int isd_cli_parse_exec(int argc, char **argv, const struct isd_caller *caller, struct isd_spec *spec)
{
	struct isd_spec user_env = {0}; /* collects -e/--env-file before defaults are known */
	int tty_mode = -1;              /* -1: a terminal when stdin and stdout are both terminals */
	int opt, r = 0;

	spec->uid = caller->uid;
	spec->gid = caller->gid;
	spec->host_uid = caller->uid;
	spec->host_gid = caller->gid;
	spec->image = isd_xstrdup("host");

	optind = 0; /* full reset: profiles and tests parse more than once */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:e:v:w:u:h:it", exec_options, NULL)) != -1) {
		struct isd_mount m;
		const char *arg = optarg;

		switch (opt) {
		case 'e':
			r = add_env_arg(&user_env, caller, arg, "--env");
			break;
		case OPT_ENV_FILE:
			r = read_env_file(&user_env, caller, arg);
			break;
		case 'v':
			r = isd_cli_parse_volume(arg, caller->cwd, &m);
			if (r == 0)
				r = add_user_mount(spec, &m);
			break;
		case OPT_MOUNT:
			r = isd_cli_parse_mount(arg, caller->cwd, &m);
			if (r == 0)
				r = add_user_mount(spec, &m);
			break;
		case OPT_TMPFS:
			r = isd_cli_parse_tmpfs(arg, &m);
			if (r == 0)
				r = add_user_mount(spec, &m);
			break;
		case 'w':
			free(spec->workdir);
			spec->workdir = NULL;
			r = parse_destination("--workdir", arg, &spec->workdir);
			break;
		case 'u':
			r = parse_user(spec, arg);
			break;
		case 'h':
		case OPT_HOSTNAME:
			free(spec->hostname);
			spec->hostname = isd_xstrdup(arg);
			break;
		case OPT_NETWORK:
			if (!strcmp(arg, "none"))
				spec->network = ISD_NET_NONE;
			else if (!strcmp(arg, "host"))
				spec->network = ISD_NET_HOST;
			else
				r = isd_error(0, "--network %s: unknown mode (known: none, host)", arg);
			break;
		case OPT_ROOTFS:
			free(spec->image);
			spec->image = NULL;
			free(spec->rootfs);
			spec->rootfs = absolute_source(arg, caller->cwd);
			break;
		case OPT_IMAGE:
			r = resolve_image(spec, arg);
			break;
		case OPT_PRINT_SPEC:
			spec->print_spec = true;
			break;
		case OPT_SECURITY_OPT:
			r = parse_security_opt(spec, arg);
			break;
		case OPT_PID:
			if (!strcmp(arg, "host"))
				spec->pid_host = true;
			else if (!strcmp(arg, "private"))
				spec->pid_host = false;
			else
				r = isd_error(0, "--pid %s: unknown mode (known: private, host)", arg);
			break;
		case OPT_IPC:
			if (strcmp(arg, "private") && strcmp(arg, "none"))
				r = isd_error(0, "--ipc %s: isd always gives the sandbox its own IPC namespace (known: private)", arg);
			break;
		case 'i':
			spec->interactive = true;
			break;
		case 't':
			tty_mode = 1;
			break;
		case OPT_NO_TTY:
			tty_mode = 0;
			break;
		case OPT_RM:
		case OPT_READ_ONLY:
		case OPT_INIT:
		case OPT_CAP_DROP: /* every capability is dropped anyway */
			break;
		case OPT_CAP_ADD:
			r = isd_error(0, "--cap-add %s: isd never grants capabilities", arg);
			break;
		case OPT_PRIVILEGED:
			r = isd_error(0, "--privileged: isd has no privileged mode");
			break;
		case OPT_MEMORY:
			if (isd_parse_size(arg, &spec->limits.memory) < 0 || spec->limits.memory == 0)
				r = isd_error(0, "--memory %s: invalid size (expected N[b|k|m|g])", arg);
			break;
		case OPT_MEMORY_SWAP:
			if (!strcmp(arg, "-1")) {
				spec->limits.memory_swap = -1;
			} else {
				uint64_t v;
				if (isd_parse_size(arg, &v) < 0 || v == 0 || v > INT64_MAX)
					r = isd_error(0, "--memory-swap %s: invalid size (expected N[b|k|m|g] or -1)", arg);
				else
					spec->limits.memory_swap = (int64_t)v;
			}
			break;
		case OPT_MEMORY_RESERVATION:
			if (isd_parse_size(arg, &spec->limits.memory_reservation) < 0)
				r = isd_error(0, "--memory-reservation %s: invalid size", arg);
			break;
		case OPT_CPUS:
			if (isd_cli_parse_cpus(arg, spec->limits.cpu_period_us, &spec->limits.cpu_quota_us) < 0)
				r = isd_error(0, "--cpus %s: invalid number of CPUs (expected e.g. 0.5 or 4, at least 0.01)", arg);
			break;
		case OPT_CPU_SHARES: {
			uint32_t shares;
			if (isd_parse_uint32(arg, &shares) < 0 || shares < 2 || shares > 262144)
				r = isd_error(0, "--cpu-shares %s: expected 2..262144", arg);
			else
				spec->limits.cpu_weight = isd_cgroup_shares_to_weight(shares);
			break;
		}
		case OPT_CPU_WEIGHT: {
			uint32_t w;
			if (isd_parse_uint32(arg, &w) < 0 || w < 1 || w > 10000)
				r = isd_error(0, "--cpu-weight %s: expected 1..10000", arg);
			else
				spec->limits.cpu_weight = w;
			break;
		}
		case OPT_CPUSET_CPUS:
			if (!*arg || strspn(arg, "0123456789,-") != strlen(arg))
				r = isd_error(0, "--cpuset-cpus %s: expected a CPU list like 0-3,6", arg);
			else {
				free(spec->limits.cpuset_cpus);
				spec->limits.cpuset_cpus = isd_xstrdup(arg);
			}
			break;
		case OPT_PIDS_LIMIT:
			if (!strcmp(arg, "-1") || !strcmp(arg, "0")) {
				spec->limits.pids_limit = -1;
			} else {
				uint32_t n;
				if (isd_parse_uint32(arg, &n) < 0)
					r = isd_error(0, "--pids-limit %s: expected a positive number or -1", arg);
				else
					spec->limits.pids_limit = n;
			}
			break;
		case OPT_BLKIO_WEIGHT: {
			uint32_t w;
			if (isd_parse_uint32(arg, &w) < 0 || w < 10 || w > 1000)
				r = isd_error(0, "--blkio-weight %s: expected 10..1000", arg);
			else
				spec->limits.blkio_weight = w;
			break;
		}
		case OPT_LIMITS:
			if (!strcmp(arg, "strict"))
				spec->limits.mode = ISD_LIMITS_STRICT;
			else if (!strcmp(arg, "best-effort"))
				spec->limits.mode = ISD_LIMITS_BEST_EFFORT;
			else
				r = isd_error(0, "--limits %s: expected strict or best-effort", arg);
			break;
		case OPT_HELP:
			isd_cli_exec_usage(stdout);
			exit(0);
		case ':':
			r = isd_error(0, "exec: option '%s' needs a value", argv[optind - 1]);
			break;
		default:
			if (optopt && optopt < 256)
				r = isd_error(0, "exec: unknown option '-%c' (see isd exec --help)", optopt);
			else
				r = isd_error(0, "exec: unknown option '%s' (see isd exec --help)", argv[optind - 1]);
			break;
		}
		if (r < 0)
			goto out;
	}

	if (optind >= argc) {
		r = isd_error(0, "exec: no command given (usage: isd exec [OPTIONS] [--] COMMAND [ARG...])");
		goto out;
	}
	spec->argv = isd_strv_copy(argv + optind);

	/* As users expect from `docker run -it`: an interactive terminal
	 * gets a terminal inside. */
	spec->tty = tty_mode == 1 || (tty_mode == -1 && caller->stdin_tty && caller->stdout_tty);
	if (tty_mode == -1 && spec->tty)
		spec->interactive = true;
	if (!spec->hostname)
		spec->hostname = isd_xstrdup("isd");
	if (!spec->seccomp)
		spec->seccomp = isd_xstrdup("default");
	/* Sizes bound what a runaway payload can pin in memory through tmpfs. */
	add_implicit_tmpfs(spec, "/tmp", 1ULL << 30, true);
	add_implicit_tmpfs(spec, "/var/tmp", 256ULL << 20, false);
	add_implicit_tmpfs(spec, "/run", 64ULL << 20, false);
	apply_default_env(spec, caller, user_env.env);
out:
	isd_spec_free(&user_env);
	return r;
}
