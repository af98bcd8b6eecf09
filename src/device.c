/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --device and CDI device nodes (src/device.h): Docker's syntax, the
 * checks of the host node and of its place in isd's /dev, all made before
 * the sandbox is built.  The host path is resolved here once; the bind
 * (src/mount-dev.c) opens the resolved path without following anything
 * and binds only the same device number, so a path changed in between
 * fails instead of reaching something else.
 */
#define _GNU_SOURCE
#include "device.h"
#include "cdi.h"
#include "options.h"
#include "isd/resolve.h"
#include "isd/spec.h"
#include "isd/util.h"
#include "isolation.h"
#include "landlock.h"

#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

/* A directory of nodes (/dev/dri, /dev/snd) is walked this deep, to at
 * most this many nodes: a mistaken --device /dev would bind them all. */
#define MAX_DEPTH 8
#define MAX_NODES 1024

/* What isd puts in its /dev itself (src/mount.c). */
static const char *const isd_nodes[] = {"null", "zero", "full", "random", "urandom", "tty", NULL};
static const char *const isd_links[] = {"ptmx", "fd", "stdin", "stdout", "stderr", "core", NULL};
static const char *const isd_mounts[] = {"pts", "shm", NULL};

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

static bool in_list(const char *const *list, const char *name, size_t len)
{
	for (size_t i = 0; list[i]; i++)
		if (strlen(list[i]) == len && !strncmp(list[i], name, len))
			return true;
	return false;
}

static bool valid_perms(const char *s)
{
	if (!*s || strlen(s) > 3)
		return false;
	for (const char *p = s; *p; p++)
		if (!strchr("rwm", *p) || strchr(p + 1, *p))
			return false;
	return true;
}

int isd_device_split(const char *arg, char **host, char **container, char **perms)
{
	_cleanup_free_ char *copy = isd_xstrdup(arg);
	char *field[4] = {0};
	size_t n = 0;

	*host = *container = *perms = NULL;
	for (char *p = copy, *next; p && n < 4; p = next) {
		next = strchr(p, ':');
		if (next)
			*next++ = '\0';
		field[n++] = p;
		if (!next)
			break;
	}
	if (n == 4)
		return isd_error(0, "--device %s: expected HOST[:CONTAINER][:PERMS] (PERMS of r, w, m)", arg);
	if (!field[0][0])
		return isd_error(0, "--device %s: no host path (expected HOST[:CONTAINER][:PERMS], e.g. /dev/dri/renderD128)", arg);
	if (n == 3) {
		*perms = isd_xstrdup(field[2]);
		*container = isd_xstrdup(field[1]);
	} else if (n == 2 && valid_perms(field[1])) {
		*perms = isd_xstrdup(field[1]);
	} else if (n == 2) {
		*container = isd_xstrdup(field[1]);
	}
	if (*container && !(*container)[0]) {
		free(*container);
		*container = NULL;
	}
	*host = isd_xstrdup(field[0]);
	if (!*perms)
		*perms = isd_xstrdup("rwm");
	return 0;
}

int isd_device_parse_perms(const char *what, const char *perms, bool *write, bool *mknod)
{
	if (!valid_perms(perms))
		return isd_error(0, "%s: permissions '%s' are not a set of r, w and m (fix: r, rw or rwm)", what, perms);
	/* Landlock in the full tier rules writes only: a node closed to
	 * reading could not be kept closed. */
	if (!strchr(perms, 'r'))
		return isd_error(0, "%s: permissions '%s' leave out r, which isd cannot refuse on a device it binds "
				    "(fix: r or rw)", what, perms);
	*write = strchr(perms, 'w') != NULL;
	*mknod = strchr(perms, 'm') != NULL;
	return 0;
}

/* Where the node goes in isd's /dev: beneath it, not on or under what
 * isd makes there itself (its own nodes only as the same device). */
static int check_place(const char *what, const char *dst, const struct stat *st, bool write, bool *isd_node)
{
	const char *rel = dst + 5, *slash;
	size_t len;
	struct stat own;

	*isd_node = false;
	if (strncmp(dst, "/dev/", 5) || !rel[0])
		return isd_error(0, "%s: the container path %s is not beneath /dev (fix: a path such as /dev/dri/card0)",
				 what, dst);
	slash = strchr(rel, '/');
	len = slash ? (size_t)(slash - rel) : strlen(rel);
	if (in_list(isd_mounts, rel, len) || in_list(isd_links, rel, len))
		return isd_error(0, "%s: the container path %s is %s, which isd makes itself (fix: another path beneath /dev)",
				 what, dst, in_list(isd_mounts, rel, len) ? "on isd's own mount" : "on isd's own link");
	if (!in_list(isd_nodes, rel, len))
		return 0;
	if (slash || stat(dst, &own) < 0 || !S_ISCHR(st->st_mode) || own.st_rdev != st->st_rdev)
		return isd_error(0, "%s: the container path %s is isd's own node, a bind of the host's /dev/%.*s "
				    "(fix: another path beneath /dev)", what, dst, (int)len, rel);
	(void)write; /* read-only: isd_device_validate */
	*isd_node = true;
	return 0;
}

static int add_node(struct isd_spec *spec, const char *real, const char *given, const char *dst,
		    const struct stat *st, bool write, bool mknod, const char *what, const char *origin)
{
	struct isd_device *d;
	bool isd_node;
	int r = check_place(what, dst, st, write, &isd_node);

	if (r < 0)
		return r;
	for (size_t i = 0; i < spec->n_devices; i++) {
		d = &spec->devices[i];
		if (!strcmp(d->path, dst)) {
			if (d->rdev != st->st_rdev || d->type != (st->st_mode & S_IFMT))
				return isd_error(0, "%s: the container path %s is given twice, for %s and %s (fix: another "
						    "container path for one of them)", what, dst, d->host_given, given);
			/* the same node again: the later request says how */
			d->write = write;
			d->mknod = mknod;
			free(d->origin);
			d->origin = isd_xstrdup(origin);
			return 0;
		}
		if (under(d->path, dst) || under(dst, d->path))
			return isd_error(0, "%s: the container path %s and %s (%s) lie one beneath the other (fix: "
					    "separate paths)", what, dst, d->path, d->host_given);
	}
	if (spec->n_devices >= MAX_NODES)
		return isd_error(0, "%s: more than %d device nodes (fix: name the nodes the payload needs)", what, MAX_NODES);
	spec->devices = isd_xrealloc(spec->devices, (spec->n_devices + 1) * sizeof(*spec->devices));
	d = &spec->devices[spec->n_devices++];
	*d = (struct isd_device){.host = isd_xstrdup(real), .host_given = isd_xstrdup(given), .path = isd_xstrdup(dst),
				 .write = write, .mknod = mknod, .isd_node = isd_node, .type = st->st_mode & S_IFMT,
				 .rdev = st->st_rdev, .origin = isd_xstrdup(origin)};
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every char and block node beneath the directory dfd (host path real),
 * at the same place beneath dst; symlinks are not followed (by-path/
 * names the same nodes again). */
static int add_dir(struct isd_spec *spec, int dfd, const char *real, const char *given, const char *dst,
		   bool write, bool mknod, const char *what, const char *origin, int depth)
{
	_cleanup_strv_ char **names = NULL;
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	size_t n = 0;
	int r = 0;

	if (!dir) {
		r = isd_error(-errno, "%s: reading the directory %s", what, real);
		if (fd >= 0)
			close(fd);
		return r;
	}
	while ((de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			isd_strv_push(&names, isd_xstrdup(de->d_name)), n++;
	if (n)
		qsort(names, n, sizeof(*names), compare_names);
	for (size_t i = 0; r == 0 && i < n; i++) {
		_cleanup_free_ char *h = isd_xasprintf("%s/%s", real, names[i]);
		_cleanup_free_ char *g = isd_xasprintf("%s/%s", given, names[i]);
		_cleanup_free_ char *c = isd_xasprintf("%s/%s", dst, names[i]);
		struct stat st;

		if (fstatat(dirfd(dir), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone since readdir */
		if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
			r = add_node(spec, h, g, c, &st, write, mknod, what, origin);
		} else if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH) {
			_cleanup_close_ int sub = openat(dirfd(dir), names[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				r = add_dir(spec, sub, h, g, c, write, mknod, what, origin, depth + 1);
		}
	}
	closedir(dir);
	return r;
}

static const char *kind_name(mode_t mode)
{
	return S_ISREG(mode) ? "a regular file" : S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISSOCK(mode) ? "a socket" : S_ISLNK(mode) ? "a symbolic link" : "not a device";
}

int isd_device_add(struct isd_spec *spec, const char *host, const char *container, const char *perms,
		   const char *what, const char *origin)
{
	_cleanup_free_ char *given = NULL, *dst = NULL;
	_cleanup_close_ int fd = -1, again = -1;
	char real[PATH_MAX];
	struct stat st, st2;
	struct statfs fs;
	bool write, mknod;
	size_t before = spec->n_devices;
	int r = isd_device_parse_perms(what, perms, &write, &mknod);

	if (r < 0)
		return r;
	if (host[0] != '/' || isd_normalize_abs_path(host, &given) < 0)
		return isd_error(0, "%s: the host path %s must be absolute and without '..' (fix: e.g. /dev/dri/renderD128)",
				 what, host);
	if (container && (container[0] != '/' || isd_normalize_abs_path(container, &dst) < 0))
		return isd_error(0, "%s: the container path %s must be absolute and without '..' (fix: e.g. /dev/gpu0)",
				 what, container);
	if (!dst)
		dst = isd_xstrdup(given);
	/* Symlinks are followed (/dev/disk/by-id/ are links), magic links of
	 * /proc never; what counts is the node at the end. */
	fd = isd_openat2(AT_FDCWD, given, O_PATH | O_CLOEXEC, RESOLVE_NO_MAGICLINKS);
	if (fd < 0) {
		r = isd_error(-errno, "%s: opening the host node %s", what, given);
		if (r == -ENOENT)
			isd_error_hint("fix: name an existing device node; ls -l /dev lists them");
		return r;
	}
	if (fstat(fd, &st) < 0)
		return isd_error(-errno, "%s: inspecting %s", what, given);
	if (!realpath(given, real))
		return isd_error(-errno, "%s: resolving %s", what, given);
	/* realpath resolved it again: it must have found the same file. */
	again = isd_openat2(AT_FDCWD, real, O_PATH | O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (again < 0 || fstat(again, &st2) < 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino)
		return isd_error(0, "%s: %s changed while isd resolved it (fix: run again, and do not change the path meanwhile)",
				 what, given);
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode) && !S_ISDIR(st.st_mode))
		return isd_error(0, "%s: %s%s%s is %s, not a char or block device (fix: name a device node such as "
				    "/dev/dri/renderD128, or a directory of them)",
				 what, given, strcmp(given, real) ? " -> " : "", strcmp(given, real) ? real : "",
				 kind_name(st.st_mode));
	if (fstatfs(fd, &fs) == 0 && (fs.f_flags & ST_NODEV))
		return isd_error(0, "%s: %s lies on a file system mounted nodev, where no device node can be opened "
				    "(fix: the node under /dev)", what, real);
	if (S_ISDIR(st.st_mode)) {
		r = add_dir(spec, fd, real, given, dst, write, mknod, what, origin, 0);
		if (r == 0 && spec->n_devices == before)
			r = isd_error(0, "%s: the directory %s holds no char or block device (fix: name a node, or a "
					 "directory such as /dev/dri)", what, real);
		return r;
	}
	/* The payload opens it as the caller, with the caller's groups; a
	 * root caller's, an unprivileged id, gets a node of its own with the
	 * access asked (src/mount-dev.c), as root may open any node. */
	if (geteuid() != 0 && faccessat(AT_FDCWD, real, R_OK | (write ? W_OK : 0), AT_EACCESS) < 0)
		return isd_error(0, "%s: you cannot open %s for %s (mode %o, owner %u:%u; fix: join the node's group, "
				    "or ask only r)", what, real, write ? "reading and writing" : "reading",
				 (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)st.st_gid);
	return add_node(spec, real, given, dst, &st, write, mknod, what, origin);
}

int isd_device_add_arg(struct isd_spec *spec, const char *arg, const char *origin)
{
	_cleanup_free_ char *host = NULL, *container = NULL, *perms = NULL, *what = NULL;
	int r = isd_device_split(arg, &host, &container, &perms);

	if (r < 0)
		return r;
	what = isd_xasprintf("--device %s", arg);
	return isd_device_add(spec, host, container, perms, what, origin);
}

static const struct isd_device *find_device(const struct isd_spec *spec, const char *path)
{
	for (size_t i = 0; i < spec->n_devices; i++)
		if (!strcmp(spec->devices[i].path, path))
			return &spec->devices[i];
	return NULL;
}

/* A node the spec describes (type, number) must be the node the host has:
 * a spec written for another machine binds nothing in its place. */
static int check_cdi_node(const struct isd_spec *spec, const struct isd_cdi_node *n, const char *what)
{
	const struct isd_device *d = find_device(spec, n->path);
	char want = n->type ? n->type : d && d->type == S_IFBLK ? 'b' : 'c';

	if (!d || (want == 'b') != (d->type == S_IFBLK) ||
	    (n->has_number && (major(d->rdev) != n->major || minor(d->rdev) != n->minor)))
		return isd_error(0, "%s: the spec describes %s as %c %u:%u, the host's %s is %c %u:%u (fix: regenerate the spec "
				    "on this machine)", what, n->path, want, n->major, n->minor, d ? d->host : "node",
				 d && d->type == S_IFBLK ? 'b' : 'c', d ? major(d->rdev) : 0, d ? minor(d->rdev) : 0);
	return 0;
}

int isd_device_add_cdi(struct isd_spec *spec, char *const *dirs, const char *request, const char *origin, char ***env)
{
	_cleanup_free_ char *files = NULL, *what = NULL, *o = NULL;
	struct isd_cdi_edits e;
	int r = isd_cdi_resolve(dirs, request, &e, &files);

	if (r < 0)
		return r;
	what = isd_xasprintf("--device %s (CDI spec %s)", request, files);
	o = isd_xasprintf("CDI %s (%s), from %s", request, files, origin);
	for (size_t i = 0; r == 0 && i < e.n_nodes; i++) {
		const struct isd_cdi_node *n = &e.nodes[i];
		r = isd_device_add(spec, n->host_path ? n->host_path : n->path, n->path,
				   n->permissions ? n->permissions : "rwm", what, o);
		if (r == 0)
			r = check_cdi_node(spec, n, what);
	}
	for (size_t i = 0; r == 0 && i < e.n_mounts; i++) {
		struct isd_mount *m = isd_spec_add_mount(spec);
		m->type = ISD_MOUNT_BIND;
		m->source = isd_options_absolute_source(e.mounts[i].host_path, "/");
		m->destination = isd_xstrdup(e.mounts[i].container_path);
		m->readonly = e.mounts[i].readonly;
		m->origin = isd_xstrdup(o);
	}
	for (size_t i = 0; r == 0 && e.env && e.env[i]; i++)
		isd_strv_push(env, isd_xstrdup(e.env[i]));
	isd_cdi_edits_free(&e);
	return r;
}

int isd_device_validate(const struct isd_spec *spec)
{
	for (size_t i = 0; i < spec->n_devices; i++) {
		const struct isd_device *d = &spec->devices[i];

		for (size_t j = 0; j < spec->n_mounts; j++) {
			const char *m = spec->mounts[j].destination;
			if (under(d->path, m) || under(m, d->path))
				return isd_error(0, "--device %s: the container path %s and the mount at %s (%s) lie one "
						    "beneath the other (fix: separate paths)", d->host_given, d->path, m,
						 spec->mounts[j].origin ? spec->mounts[j].origin : "isd");
		}
	}
	/* Landlock rules a node, not a path: one read-only is read-only
	 * wherever the sandbox shows it, isd's own /dev/zero too, which the
	 * shell's /dev/null and /dev/tty cannot be. */
	for (size_t i = 0; i < spec->n_devices; i++) {
		const struct isd_device *d = &spec->devices[i];
		struct stat st;

		if (d->write)
			continue;
		for (size_t j = 0; j < spec->n_devices; j++)
			if (spec->devices[j].write && spec->devices[j].rdev == d->rdev && spec->devices[j].type == d->type)
				return isd_error(0, "--device %s: %s read-only and %s read-write are the same node, which "
						    "Landlock can only rule as one (fix: the same permissions for both)",
						 d->host_given, d->path, spec->devices[j].path);
		for (const char *const *n = (const char *const[]){"/dev/null", "/dev/tty", NULL}; *n; n++)
			if (stat(*n, &st) == 0 && d->type == S_IFCHR && st.st_rdev == d->rdev)
				return isd_error(0, "--device %s: %s is the same node as %s, which must stay writable, and "
						    "Landlock rules the node, not the path (fix: give it rw)",
						 d->host_given, d->path, *n);
	}
	/* A read-only bind does not stop a write to a device node: only
	 * Landlock does (the landlock tier always has it). */
	for (size_t i = 0; i < spec->n_devices; i++) {
		const struct isd_device *d = &spec->devices[i];
		struct isd_landlock_plan plan;
		const char *why = NULL;
		int abi;

		if (d->write || spec->isolation == ISD_ISOLATION_LANDLOCK)
			continue;
		isd_landlock_plan(spec, &plan);
		abi = isd_landlock_abi();
		if (!plan.enabled)
			why = plan.off_reason;
		else if (!isd_landlock_handled(abi))
			why = abi ? "the kernel's Landlock ABI is older than isd uses" : "the kernel has no Landlock";
		isd_landlock_plan_free(&plan);
		if (why)
			return isd_error(0, "--device %s: read-only (%s, no w) needs Landlock, since a read-only bind does not "
					    "stop writes to a device node, and here %s (fix: give it rw, or run with Landlock)",
					 d->host_given, d->path, why);
		break;
	}
	return 0;
}

const struct isd_device *isd_device_readonly_node(const struct isd_spec *spec, const char *node)
{
	struct stat st;

	if (stat(node, &st) < 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
		return NULL;
	for (size_t i = 0; i < spec->n_devices; i++)
		if (!spec->devices[i].write && spec->devices[i].rdev == st.st_rdev &&
		    spec->devices[i].type == (st.st_mode & S_IFMT))
			return &spec->devices[i];
	return NULL;
}

void isd_device_free_all(struct isd_spec *spec)
{
	for (size_t i = 0; i < spec->n_devices; i++) {
		free(spec->devices[i].host);
		free(spec->devices[i].host_given);
		free(spec->devices[i].path);
		free(spec->devices[i].origin);
	}
	free(spec->devices);
	spec->devices = NULL;
	spec->n_devices = 0;
}

json_object *isd_device_to_json(const struct isd_spec *spec)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < spec->n_devices; i++) {
		const struct isd_device *d = &spec->devices[i];
		json_object *o = json_object_new_object();
		char num[32];

		json_object_object_add(o, "path", json_object_new_string(d->path));
		json_object_object_add(o, "host", json_object_new_string(d->host));
		if (strcmp(d->host, d->host_given))
			json_object_object_add(o, "host_given", json_object_new_string(d->host_given));
		json_object_object_add(o, "type", json_object_new_string(d->type == S_IFBLK ? "b" : "c"));
		snprintf(num, sizeof(num), "%u:%u", major(d->rdev), minor(d->rdev));
		json_object_object_add(o, "device", json_object_new_string(num));
		json_object_object_add(o, "access", json_object_new_string(d->write ? "rw" : "r"));
		if (d->mknod)
			json_object_object_add(o, "mknod", json_object_new_string("asked, never granted: the sandbox cannot make nodes"));
		if (d->isd_node)
			json_object_object_add(o, "bound", json_object_new_string("isd's own node already"));
		json_object_object_add(o, "origin", json_object_new_string(d->origin ? d->origin : "command line"));
		json_object_array_add(arr, o);
	}
	return arr;
}
