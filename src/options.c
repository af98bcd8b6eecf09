/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd exec` option values: each parser turns one option argument into spec
 * fields and says exactly what is wrong with a bad value.
 */
#define _GNU_SOURCE
#include "options.h"
#include "isd/fsutil.h"
#include "isd/image.h"
#include "isd/util.h"

#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

char *isd_options_absolute_source(const char *src, const char *cwd)
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

int isd_options_parse_destination(const char *what, const char *dst, char **out)
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
	r = isd_options_parse_destination("--tmpfs", copy, &m->destination);
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
int isd_options_parse_tmpfs(const char *arg, struct isd_mount *m)
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
	r = isd_options_parse_destination("--volume", dst, &m->destination);
	if (r < 0)
		return r;
	m->source = isd_options_absolute_source(copy, cwd);
	for (char *o = opts ? strtok_r(opts, ",", &save) : NULL; o; o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "ro") || !strcmp(o, "readonly"))
			m->readonly = true;
		else if (!strcmp(o, "rw"))
			m->readonly = false;
		else if (!strcmp(o, "optional")) /* isd's own: skip a missing source */
			m->optional = true;
		else if (!strcmp(o, "z") || !strcmp(o, "Z") || !strcmp(o, "rprivate") ||
			 !strcmp(o, "private") || !strcmp(o, "rslave") || !strcmp(o, "slave") ||
			 !strcmp(o, "delegated") || !strcmp(o, "cached") || !strcmp(o, "consistent"))
			; /* labels and propagation: isd binds are always private to the sandbox */
		else
			return isd_error(0, "--volume %s: unknown option '%s' (known: ro rw optional)", arg, o);
	}
	return 0;
}

/* On failure nothing stays allocated in m. */
int isd_options_parse_volume(const char *arg, const char *cwd, struct isd_mount *m)
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
	bool readonly = false, has_size = false, optional = false;
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
		} else if (!strcmp(o, "optional")) {
			if (parse_bool_value(val, &optional) < 0)
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
	r = isd_options_parse_destination("--mount", dst, &m->destination);
	if (r < 0)
		return r;
	m->readonly = readonly;
	if (!strcmp(type, "bind")) {
		if (!src)
			return isd_error(0, "--mount %s: type=bind needs source=", arg);
		if (has_size)
			return isd_error(0, "--mount %s: tmpfs-size only applies to type=tmpfs", arg);
		m->type = ISD_MOUNT_BIND;
		m->source = isd_options_absolute_source(src, cwd);
		m->optional = optional;
	} else if (!strcmp(type, "tmpfs")) {
		if (optional)
			return isd_error(0, "--mount %s: optional only applies to type=bind", arg);
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
int isd_options_parse_mount(const char *arg, const char *cwd, struct isd_mount *m)
{
	int r = parse_mount(arg, cwd, m);

	if (r < 0) {
		free(m->source);
		free(m->destination);
		memset(m, 0, sizeof(*m));
	}
	return r;
}

int isd_options_parse_cpus(const char *arg, uint64_t period_us, uint64_t *quota_us)
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

/* The image's passwd entry (isd/fsutil.h: the one rule isd build's USER
 * and --chown follow too). */
int isd_options_passwd_lookup(const struct isd_spec *spec, const char *name, uint32_t uid,
			       uint32_t *uid_out, uint32_t *gid_out, char **home_out, char **user_out)
{
	_cleanup_close_ int rootfd = open(spec->rootfs ? spec->rootfs : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct isd_image_user u = {0};
	int r;

	if (rootfd < 0)
		return -errno;
	r = isd_image_passwd(rootfd, name, uid, &u);
	if (r < 0)
		return r;
	if (uid_out)
		*uid_out = u.uid;
	if (gid_out)
		*gid_out = u.gid;
	if (home_out)
		*home_out = isd_steal_ptr(u.home);
	if (user_out)
		*user_out = isd_steal_ptr(u.name);
	free(u.home);
	free(u.name);
	return 0;
}

int isd_options_resolve_image(struct isd_spec *spec, const char *name)
{
	_cleanup_free_ char *base = NULL, *current = NULL, *plain = NULL;
	struct stat st;

	free(spec->image);
	spec->image = isd_xstrdup(name);
	free(spec->rootfs);
	spec->rootfs = NULL;
	if (!strcmp(name, "host"))
		return 0;
	if (!isd_store_valid_name(name))
		return isd_error(0, "--image '%s': not an image name (letters, digits, '-', '_', '.'; use --rootfs for a "
				    "directory)", name);
	base = isd_store_dir();
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

int isd_options_add_env(struct isd_spec *spec, const struct isd_caller *caller, const char *arg,
		       const char *origin)
{
	const char *eq = strchr(arg, '=');

	if (eq == arg || !*arg)
		return isd_error(0, "%s '%s': expected NAME=VALUE or NAME", origin, arg);
	if (eq) {
		_cleanup_free_ char *name = strndup(arg, (size_t)(eq - arg));
		isd_spec_setenv(spec, name, eq + 1);
	} else {
		const char *v = isd_caller_getenv(caller, arg);
		if (v)
			isd_spec_setenv(spec, arg, v);
	}
	return 0;
}

int isd_options_read_env_file(struct isd_spec *spec, const struct isd_caller *caller, const char *path)
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
		r = isd_options_add_env(spec, caller, line, path);
		if (r < 0)
			return r;
	}
	return 0;
}

int isd_options_security_opt(struct isd_spec *spec, const char *arg)
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
	if (!strcmp(arg, "landlock=off") || !strcmp(arg, "landlock:off")) {
		spec->landlock_off = true;
		return 0;
	}
	return isd_error(0, "--security-opt %s: unknown (known: seccomp=NAME|PATH|unconfined, landlock=off, no-new-privileges)", arg);
}

int isd_options_user(struct isd_spec *spec, const char *arg)
{
	_cleanup_free_ char *copy = isd_xstrdup(arg);
	char *g = strchr(copy, ':');
	uint32_t gid_from_passwd = 0;
	bool have_passwd_gid = false;

	if (g)
		*g++ = '\0';
	if (isd_parse_uint32(copy, &spec->uid) < 0) {
		if (isd_options_passwd_lookup(spec, copy, 0, &spec->uid, &gid_from_passwd, NULL, NULL) < 0)
			return isd_error(0, "--user %s: '%s' is neither a number nor a user in the image's /etc/passwd",
					 arg, copy);
		have_passwd_gid = true;
	}
	if (g) {
		if (isd_parse_uint32(g, &spec->gid) < 0)
			return isd_error(0, "--user %s: group '%s' must be numeric", arg, g);
	} else if (have_passwd_gid) {
		spec->gid = gid_from_passwd;
	} else {
		/* Docker's rule for a bare number: the user's primary group from
		 * the image's passwd, else group 0 (-u 0 is root:root, not
		 * root:your-group). */
		uint32_t gid = 0;
		(void)isd_options_passwd_lookup(spec, NULL, spec->uid, NULL, &gid, NULL, NULL);
		spec->gid = gid;
	}
	return 0;
}

void isd_options_implicit_tmpfs(struct isd_spec *spec, const char *dst, uint64_t size, bool exec)
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

void isd_options_default_env(struct isd_spec *spec, const struct isd_caller *caller,
			      char **user_env)
{
	_cleanup_free_ char *home = NULL, *user = NULL;
	const char *v;

	/* On the host image the caller's own HOME and USER win over passwd,
	 * as they would in the caller's shell. */
	if (spec->uid == caller->uid && !spec->rootfs) {
		home = isd_xstrdup(caller->home);
		v = isd_caller_getenv(caller, "USER");
		if (v)
			user = isd_xstrdup(v);
	}
	if ((!home || !user) && isd_options_passwd_lookup(spec, NULL, spec->uid, NULL, NULL,
						    home ? NULL : &home, user ? NULL : &user) < 0) {
		if (!home) /* an image's ENV HOME, else / */
			home = isd_xstrdup(isd_spec_getenv(spec, "HOME") ? isd_spec_getenv(spec, "HOME") : "/");
		if (!user)
			user = isd_xstrdup("");
	}
	isd_spec_setenv(spec, "HOME", home);
	if (user[0]) {
		isd_spec_setenv(spec, "USER", user);
		isd_spec_setenv(spec, "LOGNAME", user);
	}
	v = isd_caller_getenv(caller, "PATH");
	if (!isd_spec_getenv(spec, "PATH")) /* an image's ENV PATH stays */
		isd_spec_setenv(spec, "PATH", !spec->rootfs && v ? v : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	v = isd_caller_getenv(caller, "TERM");
	if (v)
		isd_spec_setenv(spec, "TERM", v);
	for (char **e = caller->environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		/* environ may hold an entry without "=" (execve takes any string) */
		if (eq && (!strncmp(*e, "LANG=", 5) || !strncmp(*e, "LANGUAGE=", 9) || !strncmp(*e, "LC_", 3))) {
			_cleanup_free_ char *name = strndup(*e, (size_t)(eq - *e));
			isd_spec_setenv(spec, name, eq + 1);
		}
	}
	/* -e and --env-file override the defaults, in the order given. */
	for (char **e = user_env; e && *e; e++) {
		_cleanup_free_ char *name = strndup(*e, (size_t)(strchr(*e, '=') - *e));
		isd_spec_setenv(spec, name, strchr(*e, '=') + 1);
	}
}
