/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd build -t NAME [-f FILE] [--build-arg K=V] [--pull] [--no-cache] [CONTEXT]
 *
 * The Containerfile is parsed and evaluated first (plan.c), the base image
 * opened, and a build key computed over everything the result depends on:
 * isd's version, the base digest, the id map, every expanded step, the
 * build args and the contents of every COPY/ADD source.  When the current
 * image of NAME has the same key nothing is done.  Otherwise the steps run
 * in a fresh tree of the store, which is published only when all of them
 * succeeded (store.c), so a failed or killed build leaves NAME as it was.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/cli-args.h"
#include "isd/sandbox.h"
#include "isd/spec.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "internal.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

extern char **environ;

/* Toolbx's fix: rpm must not try to replace the mount points the build
 * sandbox puts over /proc, /sys and /dev (the filesystem package would
 * fail its upgrade). */
#define RPM_MACRO_PATH "etc/rpm/macros.isd-build"
#define RPM_MACRO "%_netsharedpath /dev:/proc:/sys\n"

struct build_opts {
	const char *tag;
	const char *file;
	const char *context;
	const char *ca_file;
	const char *keyring;
	char **build_args;
	bool pull, no_cache, quiet;
};

struct build {
	struct build_opts *o;
	char *context;  /* absolute */
	int ctxfd;
	struct isd_dockerfile df;
	struct isd_build_plan plan;
	struct isd_base_image base;
	struct isd_idmap map;
	char key[80];
};

void isd_build_vsay(bool quiet, const char *fmt, va_list ap)
{
	if (quiet)
		return;
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

static void progress(const struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const struct build *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	isd_build_vsay(b->o->quiet, fmt, ap);
	va_end(ap);
}

static void hash_line(struct isd_sha256 *h, const char *tag, const char *value)
{
	isd_sha256_update(h, tag, strlen(tag) + 1);
	isd_sha256_update(h, value ? value : "", strlen(value ? value : "") + 1);
}

static void hash_strv(struct isd_sha256 *h, const char *tag, char *const *v)
{
	hash_line(h, tag, NULL);
	for (size_t i = 0; v && v[i]; i++)
		hash_line(h, "-", v[i]);
}

static bool is_url(const char *s)
{
	return !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8);
}

/* Docker: several sources or a trailing slash make dest a directory;
 * relative destinations are relative to the WORKDIR. */
static char *copy_dest(const struct isd_build_step *st, bool *is_dir)
{
	size_t n = isd_strv_len(st->args);
	const char *dest = st->args[n - 1];
	size_t len = strlen(dest);
	char *out;

	*is_dir = n > 2 || (len && dest[len - 1] == '/') || !strcmp(dest, ".");
	if (dest[0] == '/')
		out = isd_xstrdup(dest);
	else
		out = isd_xasprintf("%s/%s", strcmp(st->workdir, "/") ? st->workdir : "", dest);
	len = strlen(out);
	while (len > 1 && out[len - 1] == '/')
		out[--len] = '\0';
	if (len >= 2 && !strcmp(out + len - 2, "/.")) {
		out[len - 2] = '\0';
		if (!out[0])
			strcpy(out, "/");
	}
	return out;
}

static int compute_key(struct build *b)
{
	struct isd_sha256 *h = isd_sha256_new();
	_cleanup_free_ char *map = isd_idmap_format(&b->map);
	int r = 0;

	hash_line(h, "isd-build-key", "1");
	hash_line(h, "isd", ISD_VERSION);
	hash_line(h, "base", b->plan.base);
	hash_line(h, "digest", b->base.digest ? b->base.digest : "scratch");
	hash_line(h, "map", map);
	hash_strv(h, "build-args", b->o->build_args);
	for (size_t i = 0; i < b->plan.n_steps && r == 0; i++) {
		const struct isd_build_step *st = &b->plan.steps[i];

		hash_line(h, "step", st->display);
		hash_strv(h, "args", st->args);
		hash_strv(h, "env", st->env);
		hash_line(h, "workdir", st->workdir);
		hash_line(h, "user", st->user);
		hash_line(h, "chown", st->chown);
		hash_line(h, "chmod", st->chmod);
		hash_line(h, "checksum", st->checksum);
		if (st->op == ISD_DF_COPY || st->op == ISD_DF_ADD) {
			_cleanup_strv_ char **srcs = NULL, **local = NULL;
			for (size_t k = 0; st->args[k + 1]; k++)
				if (!is_url(st->args[k]))
					isd_strv_push(&local, isd_xstrdup(st->args[k]));
			if (!local)
				continue;
			r = isd_copy_expand_sources(b->ctxfd, local, &srcs);
			if (r == 0)
				r = isd_copy_hash(b->ctxfd, srcs, h);
			if (r < 0)
				isd_error_prefix(r, "line %u: ", st->line);
		}
	}
	hash_strv(h, "env", b->plan.env);
	hash_strv(h, "labels", b->plan.labels);
	hash_strv(h, "cmd", b->plan.cmd);
	hash_strv(h, "entrypoint", b->plan.entrypoint);
	hash_line(h, "workdir", b->plan.workdir);
	hash_line(h, "user", b->plan.user);
	isd_sha256_final(h, b->key);
	return r;
}

static bool up_to_date(const struct build *b, char **id_out)
{
	_cleanup_free_ char *meta = NULL;
	json_object *o, *v;
	bool same;

	if (isd_store_read_meta(b->o->tag, &meta) < 0)
		return false;
	o = json_tokener_parse(meta);
	same = o && json_object_object_get_ex(o, "build_key", &v) && !strcmp(json_object_get_string(v), b->key);
	json_object_put(o);
	if (same) {
		_cleanup_free_ char *dir = isd_store_dir();
		_cleanup_free_ char *link = isd_xasprintf("%s/%s/current", dir, b->o->tag);
		char id[256];
		ssize_t n = readlink(link, id, sizeof(id) - 1);
		if (n > 0) {
			id[n] = '\0';
			*id_out = isd_xstrdup(id);
		}
	}
	return same;
}

static int apply_base(struct build *b, const char *rootfs)
{
	size_t n = isd_strv_len(b->base.layers);

	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path = isd_xasprintf("%s/sha256/%s", b->base.blobdir, b->base.layers[i] + 7);
		_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		struct isd_layer_opts opts = {.expect_digest = b->base.layers[i],
					      .expect_diff_id = b->base.diff_ids[i], .whiteouts = true};
		struct isd_layer_result res;
		int r;

		if (fd < 0)
			return isd_error(-errno, "opening layer %s", path);
		progress(b, "  layer %zu/%zu %.19s", i + 1, n, b->base.layers[i]);
		r = isd_layer_apply(rootfs, fd, &b->map, &opts, &res);
		if (r < 0)
			return isd_error_prefix(r, "FROM %s: layer %s: ", b->plan.base, b->base.layers[i]);
		{
			_cleanup_free_ char *what = isd_xasprintf("layer %.19s", b->base.layers[i]);
			isd_layer_warn(what, &res, &b->map);
		}
	}
	return 0;
}

static int prepare_tree_fn(void *arg)
{
	int rootfd = *(int *)arg;
	struct stat st;
	int r;

	if (fchdir(rootfd) < 0 || chroot(".") < 0 || chdir("/") < 0)
		return isd_error(-errno, "entering the image tree");
	/* The tree's top was made by the store as the caller; in the image
	 * it belongs to root, as the layers' other directories do. */
	if (lstat("/", &st) == 0 && (st.st_uid != 0 || st.st_gid != 0) && chown("/", 0, 0) < 0 && errno != EINVAL)
		return isd_error(-errno, "giving the image's / to root");
	if (stat("/usr/lib/rpm", &st) < 0 || !S_ISDIR(st.st_mode))
		return 0; /* not an rpm-based image */
	r = isd_mkdir_p_at(AT_FDCWD, "etc/rpm", 0755);
	if (r == 0)
		r = isd_write_file_at(AT_FDCWD, RPM_MACRO_PATH, RPM_MACRO, O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
	if (r < 0)
		return isd_error(r, "writing /%s", RPM_MACRO_PATH);
	return 0;
}

static int mkdir_fn(void *arg)
{
	void **a = arg;
	int rootfd = *(int *)a[0];
	const char *dir = a[1];
	int r;

	if (fchdir(rootfd) < 0 || chroot(".") < 0 || chdir("/") < 0)
		return isd_error(-errno, "entering the image tree");
	umask(022);
	r = isd_mkdir_p_at(AT_FDCWD, dir + 1, 0755);
	if (r < 0)
		return isd_error(r, "creating %s", dir);
	return 0;
}

static int in_tree(struct build *b, const char *rootfs, int (*fn)(void *), void *arg_after_fd)
{
	_cleanup_close_ int rootfd = open(rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	void *args[2] = {&rootfd, arg_after_fd};

	if (rootfd < 0)
		return isd_error(-errno, "opening %s", rootfs);
	return isd_idmap_run(&b->map, fn, arg_after_fd ? (void *)args : (void *)&rootfd);
}

/* "user[:group]" of the image, as numbers. */
static int resolve_user(const char *rootfs, const char *spec, uint32_t *uid, uint32_t *gid)
{
	_cleanup_free_ char *user = isd_xstrdup(spec && spec[0] ? spec : "0");
	_cleanup_close_ int rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *group = strchr(user, ':');

	if (group)
		*group++ = '\0';
	if (isd_image_lookup_user(rootfd, user, uid, gid) < 0)
		return isd_error(0, "USER %s: no user '%s' in the image's /etc/passwd", spec, user);
	if (group && isd_image_lookup_group(rootfd, group, gid) < 0)
		return isd_error(0, "USER %s: no group '%s' in the image's /etc/group", spec, group);
	return 0;
}

static int run_step(struct build *b, const struct isd_build_step *st, const char *rootfs)
{
	struct isd_spec spec;
	struct isd_mount *m;
	int code, r;

	isd_spec_init(&spec);
	r = resolve_user(rootfs, st->user, &spec.uid, &spec.gid);
	if (r < 0)
		return isd_error_prefix(r, "line %u: ", st->line);
	spec.argv = isd_strv_copy(st->args);
	spec.env = isd_strv_copy(st->env);
	if (!isd_spec_getenv(&spec, "HOME"))
		isd_spec_setenv(&spec, "HOME", spec.uid == 0 ? "/root" : "/");
	spec.image = isd_xstrdup("isd-build");
	spec.rootfs = isd_xstrdup(rootfs);
	spec.workdir = isd_xstrdup(st->workdir);
	spec.hostname = isd_xstrdup("isd-build");
	spec.seccomp = isd_xstrdup("build");
	spec.network = ISD_NET_HOST;
	spec.host_uid = b->map.caller_uid;
	spec.host_gid = b->map.caller_gid;
	spec.writable_root = true;
	spec.build_caps = true;
	spec.uid_ranges = isd_xcalloc(b->map.n_uid, sizeof(struct isd_id_range));
	spec.gid_ranges = isd_xcalloc(b->map.n_gid, sizeof(struct isd_id_range));
	memcpy(spec.uid_ranges, b->map.uid, b->map.n_uid * sizeof(struct isd_id_range));
	memcpy(spec.gid_ranges, b->map.gid, b->map.n_gid * sizeof(struct isd_id_range));
	spec.n_uid_ranges = b->map.n_uid;
	spec.n_gid_ranges = b->map.n_gid;
	m = isd_spec_add_mount(&spec);
	*m = (struct isd_mount){.type = ISD_MOUNT_TMPFS, .destination = isd_xstrdup("/tmp"), .size = 1ULL << 30,
				.mode = 01777, .has_mode = true, .exec = true, .implicit = true};
	m = isd_spec_add_mount(&spec);
	*m = (struct isd_mount){.type = ISD_MOUNT_TMPFS, .destination = isd_xstrdup("/run"), .size = 64ULL << 20,
				.mode = 0755, .has_mode = true, .implicit = true};
	r = isd_spec_validate(&spec);
	if (r < 0) {
		isd_spec_free(&spec);
		return isd_error_prefix(r, "line %u: ", st->line);
	}
	fflush(NULL);
	code = isd_sandbox_run(&spec);
	isd_spec_free(&spec);
	if (code != 0)
		return isd_error(0, "line %u: RUN failed with exit status %d", st->line, code);
	return 0;
}

/* Docker's ADD unpacks local tar archives (compressed or not) into the
 * destination directory; recognized here by name. */
static bool is_archive_name(const char *name)
{
	static const char *const suffixes[] = {".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2",
					       ".tbz2", ".tar.zst", ".tzst", NULL};
	size_t len = strlen(name);

	for (size_t i = 0; suffixes[i]; i++) {
		size_t n = strlen(suffixes[i]);
		if (len > n && !strcmp(name + len - n, suffixes[i]))
			return true;
	}
	return false;
}

static int unpack_step(struct build *b, const struct isd_build_step *st, const char *rootfs, const char *src,
		       const char *dest)
{
	_cleanup_close_ int fd = isd_openat2(b->ctxfd, src, O_RDONLY | O_CLOEXEC, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	struct isd_layer_opts opts = {.whiteouts = false, .subdir = dest};
	struct isd_layer_result res;
	int r;

	if (fd < 0)
		return isd_error(-errno, "line %u: opening '%s' in the build context", st->line, src);
	r = isd_layer_apply(rootfs, fd, &b->map, &opts, &res);
	if (r < 0)
		return isd_error_prefix(r, "line %u: ADD %s: ", st->line, src);
	{
		_cleanup_free_ char *what = isd_xasprintf("line %u: ADD %s", st->line, src);
		isd_layer_warn(what, &res, &b->map);
	}
	return 0;
}

/* ADD --checksum=sha256:... URL DEST (plan.c allows nothing else with a
 * URL): the cached download, root's by default and mode 0600 as Docker
 * makes it, copied under the URL's file name through a hard link in a
 * private directory of the cache, so that the copy sees the right name. */
static int add_url(struct build *b, const struct isd_build_step *st, const char *rootfs, const char *dest,
		   bool dest_is_dir)
{
	_cleanup_free_ char *blobdir = NULL, *tmp = NULL, *name = isd_url_basename(st->args[0]);
	_cleanup_free_ char *blob = NULL, *link_path = NULL;
	_cleanup_close_ int dfd = -1;
	char *names[2] = {NULL, NULL};
	int r;

	if (!name && dest_is_dir)
		return isd_error(0, "line %u: ADD %s: the URL names no file; give the destination's file name",
				 st->line, st->args[0]);
	r = isd_fetch_url(st->args[0], st->checksum, b->o->ca_file, b->o->quiet, &blobdir);
	if (r < 0)
		return isd_error_prefix(r, "line %u: ", st->line);
	tmp = isd_xasprintf("%s/add-XXXXXX", blobdir);
	if (!mkdtemp(tmp))
		return isd_error(-errno, "line %u: creating a directory in %s", st->line, blobdir);
	blob = isd_xasprintf("%s/sha256/%s", blobdir, st->checksum + 7);
	link_path = isd_xasprintf("%s/%s", tmp, name ? name : "download");
	if (link(blob, link_path) < 0)
		r = isd_error(-errno, "line %u: linking %s", st->line, blob);
	if (r == 0 && (dfd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		r = isd_error(-errno, "line %u: opening %s", st->line, tmp);
	names[0] = name ? name : (char *)"download";
	if (r == 0)
		r = isd_copy_run(rootfs, &b->map, dfd, names, dest, dest_is_dir, st->chown,
				 st->chmod ? st->chmod : "600");
	unlink(link_path);
	rmdir(tmp);
	if (r < 0)
		return isd_error_prefix(r, "line %u: ", st->line);
	return 0;
}

static int copy_step(struct build *b, const struct isd_build_step *st, const char *rootfs)
{
	_cleanup_strv_ char **local = NULL, **srcs = NULL, **plain = NULL;
	_cleanup_free_ char *dest = NULL;
	bool dest_is_dir;
	int r;

	dest = copy_dest(st, &dest_is_dir);
	if (is_url(st->args[0]))
		return add_url(b, st, rootfs, dest, dest_is_dir);
	for (size_t k = 0; st->args[k + 1]; k++)
		isd_strv_push(&local, isd_xstrdup(st->args[k]));
	r = isd_copy_expand_sources(b->ctxfd, local, &srcs);
	if (r < 0)
		return isd_error_prefix(r, "line %u: ", st->line);
	if (isd_strv_len(srcs) > 1)
		dest_is_dir = true;
	for (size_t k = 0; srcs[k]; k++) {
		if (st->op == ISD_DF_ADD && is_archive_name(srcs[k])) {
			r = unpack_step(b, st, rootfs, srcs[k], dest);
			if (r < 0)
				return r;
		} else {
			isd_strv_push(&plain, isd_xstrdup(srcs[k]));
		}
	}
	if (!plain)
		return 0;
	r = isd_copy_run(rootfs, &b->map, b->ctxfd, plain, dest, dest_is_dir, st->chown, st->chmod);
	if (r < 0)
		return isd_error_prefix(r, "line %u: ", st->line);
	return 0;
}

static json_object *strv_json(char *const *v)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; v && v[i]; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

static json_object *ranges_json(const struct isd_id_range *r, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_new_array();
		json_object_array_add(e, json_object_new_int64(r[i].inside));
		json_object_array_add(e, json_object_new_int64(r[i].outside));
		json_object_array_add(e, json_object_new_int64(r[i].count));
		json_object_array_add(a, e);
	}
	return a;
}

static char *meta_json(struct build *b, const char *rootfs)
{
	json_object *o = json_object_new_object(), *labels = json_object_new_object();
	char created[32];
	time_t now = time(NULL);
	struct tm tm;
	uint32_t uid = 0, gid = 0;
	char *text;

	gmtime_r(&now, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	resolve_user(rootfs, b->plan.user, &uid, &gid);
	json_object_object_add(o, "isd_version", json_object_new_string(ISD_VERSION));
	json_object_object_add(o, "created", json_object_new_string(created));
	json_object_object_add(o, "base", json_object_new_string(b->plan.base));
	json_object_object_add(o, "base_digest", json_object_new_string(b->base.digest ? b->base.digest : "scratch"));
	json_object_object_add(o, "build_key", json_object_new_string(b->key));
	json_object_object_add(o, "env", strv_json(b->plan.env));
	json_object_object_add(o, "user", json_object_new_string(b->plan.user ? b->plan.user : ""));
	json_object_object_add(o, "uid", json_object_new_int64(uid));
	json_object_object_add(o, "gid", json_object_new_int64(gid));
	json_object_object_add(o, "workdir", json_object_new_string(b->plan.workdir));
	for (size_t i = 0; b->plan.labels && b->plan.labels[i]; i++) {
		_cleanup_free_ char *name = strndup(b->plan.labels[i], strcspn(b->plan.labels[i], "="));
		json_object_object_add(labels, name, json_object_new_string(b->plan.labels[i] + strlen(name) + 1));
	}
	json_object_object_add(o, "labels", labels);
	json_object_object_add(o, "cmd", b->plan.cmd ? strv_json(b->plan.cmd) : NULL);
	json_object_object_add(o, "entrypoint", b->plan.entrypoint ? strv_json(b->plan.entrypoint) : NULL);
	json_object_object_add(o, "uid_map", ranges_json(b->map.uid, b->map.n_uid));
	json_object_object_add(o, "gid_map", ranges_json(b->map.gid, b->map.n_gid));
	json_object_object_add(o, "ownership_kept", json_object_new_boolean(b->map.full));
	json_object_object_add(o, "layers", strv_json(b->base.diff_ids));
	text = isd_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return text;
}

/* The base image's config is the starting point of the plan. */
static int open_base(struct build *b)
{
	if (!strcmp(b->plan.base, "scratch"))
		return 0;
	struct isd_pull_opts po = {.pull = b->o->pull, .quiet = b->o->quiet, .ca_file = b->o->ca_file,
				   .keyring = b->o->keyring};
	int r;

	if (isd_oci_is_local_ref(b->plan.base))
		return isd_oci_open(b->plan.base, b->context, &b->base);
	if (!strncmp(b->plan.base, "fedora-release:", 15))
		r = isd_fedora_open(b->plan.base, &po, &b->base);
	else
		r = isd_registry_open(b->plan.base, &po, &b->base);
	if (r < 0)
		return isd_error_prefix(r, "line %u: FROM %s: ", b->plan.from_line, b->plan.base);
	return 0;
}

static int run_steps(struct build *b, struct isd_store_txn *txn)
{
	size_t n = b->plan.n_steps + 1;
	int r;

	progress(b, "STEP 1/%zu: FROM %s%s%s", n, b->plan.base, b->base.digest ? " @ " : "",
		 b->base.digest ? b->base.digest : "");
	r = apply_base(b, txn->rootfs);
	if (r < 0)
		return r;
	r = in_tree(b, txn->rootfs, prepare_tree_fn, NULL);
	if (r < 0)
		return r;
	for (size_t i = 0; i < b->plan.n_steps; i++) {
		const struct isd_build_step *st = &b->plan.steps[i];

		progress(b, "STEP %zu/%zu: %s", i + 2, n, st->display);
		switch (st->op) {
		case ISD_DF_RUN:
			r = run_step(b, st, txn->rootfs);
			break;
		case ISD_DF_COPY:
		case ISD_DF_ADD:
			r = copy_step(b, st, txn->rootfs);
			break;
		case ISD_DF_WORKDIR:
			r = in_tree(b, txn->rootfs, mkdir_fn, st->args[0]);
			break;
		default: /* ENV ARG LABEL USER CMD ENTRYPOINT: configuration only */
			r = 0;
			break;
		}
		if (r < 0)
			return r;
	}
	if (b->plan.user) {
		uint32_t uid, gid;
		r = resolve_user(txn->rootfs, b->plan.user, &uid, &gid);
	}
	return r;
}

static int build(struct build_opts *o)
{
	struct build b = {.o = o, .ctxfd = -1};
	struct isd_store_txn txn = {.lock_fd = -1};
	_cleanup_free_ char *file = NULL, *text = NULL, *meta = NULL, *id = NULL;
	bool has_run = false;
	int r;

	b.context = realpath(o->context, NULL);
	if (!b.context) {
		r = isd_error(-errno, "build context %s", o->context);
		goto out;
	}
	b.ctxfd = open(b.context, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (b.ctxfd < 0) {
		r = isd_error(-errno, "build context %s", b.context);
		goto out;
	}
	if (o->file) {
		file = isd_xstrdup(o->file);
	} else {
		file = isd_xasprintf("%s/Containerfile", b.context);
		if (access(file, F_OK) < 0) {
			free(file);
			file = isd_xasprintf("%s/Dockerfile", b.context);
		}
	}
	r = isd_read_file_at(AT_FDCWD, file, &text, NULL);
	if (r < 0) {
		isd_error(r, "reading %s", file);
		goto out;
	}
	r = isd_dockerfile_parse(text, file, &b.df);
	if (r < 0)
		goto out;
	/* First pass for FROM only; the second sees the base's environment. */
	r = isd_build_plan_make(&b.df, o->build_args, &b.plan);
	if (r < 0)
		goto plan_error;
	{
		_cleanup_free_ char *base = isd_xstrdup(b.plan.base);
		unsigned from_line = b.plan.from_line; /* for open_base's messages */
		isd_build_plan_free(&b.plan);
		b.plan.base = isd_steal_ptr(base);
		b.plan.from_line = from_line;
	}
	r = open_base(&b);
	if (r < 0)
		goto out;
	free(b.plan.base);
	b.plan.base = NULL;
	b.plan.env = isd_strv_copy(b.base.env);
	b.plan.workdir = b.base.workdir ? isd_xstrdup(b.base.workdir) : NULL;
	b.plan.user = b.base.user ? isd_xstrdup(b.base.user) : NULL;
	r = isd_build_plan_make(&b.df, o->build_args, &b.plan);
	if (r < 0)
		goto plan_error;
	if (!b.plan.cmd && b.base.cmd)
		b.plan.cmd = isd_strv_copy(b.base.cmd);
	if (!b.plan.entrypoint && b.base.entrypoint)
		b.plan.entrypoint = isd_strv_copy(b.base.entrypoint);
	for (size_t i = 0; b.plan.unused_args && b.plan.unused_args[i]; i++)
		isd_warn("--build-arg %s: no ARG %s in %s", b.plan.unused_args[i], b.plan.unused_args[i], file);

	isd_idmap_for_caller(&b.map);
	for (size_t i = 0; i < b.plan.n_steps; i++)
		has_run |= b.plan.steps[i].op == ISD_DF_RUN;
	if (has_run && !b.map.full) {
		r = isd_error(0, "%s has RUN steps, which need many user ids, but you have no subordinate id range "
				 "(/etc/subuid, /etc/subgid) usable here",
			      file);
		isd_error_hint("fix: sudo usermod --add-subuids 100000-165535 --add-subgids 100000-165535 %s; "
			       "and install newuidmap/newgidmap (package uidmap)",
			       getenv("USER") ? getenv("USER") : "$USER");
		goto out;
	}
	r = compute_key(&b);
	if (r < 0)
		goto out;
	if (!o->no_cache && up_to_date(&b, &id)) {
		progress(&b, "isd build: %s is up to date (%s)", o->tag, id ? id : b.key);
		goto out;
	}
	r = isd_store_begin(o->tag, &txn);
	if (r < 0)
		goto out;
	r = run_steps(&b, &txn);
	if (r < 0)
		goto out;
	meta = meta_json(&b, txn.rootfs);
	r = isd_store_commit(&txn, meta);
	if (r < 0)
		goto out;
	progress(&b, "isd build: %s is %s", o->tag, txn.id);
	goto out;
plan_error:
	isd_error_prefix(r, "%s: ", file);
out:
	isd_store_end(&txn, &b.map);
	isd_base_image_free(&b.base);
	isd_build_plan_free(&b.plan);
	isd_dockerfile_free(&b.df);
	if (b.ctxfd >= 0)
		close(b.ctxfd);
	free(b.context);
	return r;
}

static void build_usage(FILE *out)
{
	fputs("Usage: isd build -t NAME [OPTIONS] [CONTEXT]\n"
	      "\n"
	      "Build an image for `isd exec --image NAME` from a Containerfile, rootless.\n"
	      "\n"
	      "  -t, --tag NAME          the image's name (required)\n"
	      "  -f, --file FILE         the Containerfile (default CONTEXT/Containerfile,\n"
	      "                          then CONTEXT/Dockerfile)\n"
	      "      --build-arg K[=V]   a value for ARG K (without =V: from your environment)\n"
	      "      --pull              look the base image's tag up again (registries)\n"
	      "      --ca-file FILE      CA bundle for https instead of the system's\n"
	      "                          (default $ISD_CA_FILE)\n"
	      "      --keyring FILE      OpenPGP keys for FROM fedora-release:NN's signed\n"
	      "                          CHECKSUM (default the host's Fedora key)\n"
	      "      --no-cache          build even when nothing changed\n"
	      "  -q, --quiet             no progress output\n"
	      "\n"
	      "FROM: scratch, oci:DIR[:REF] (an OCI image layout), oci-archive:FILE[:REF],\n"
	      "[REGISTRY/]REPO[:TAG][@sha256:DIGEST] (short names: aliases such as fedora,\n"
	      "more in ~/.config/isd/registries.conf), fedora-release:NN (Fedora's signed\n"
	      "OCI archive of release NN).  Registry credentials: podman/skopeo's auth.json\n"
	      "or ~/.docker/config.json (REGISTRY_AUTH_FILE names another).\n"
	      "Instructions: ARG ENV RUN WORKDIR USER COPY ADD LABEL CMD ENTRYPOINT.\n"
	      "RUN steps need a subordinate id range (/etc/subuid, /etc/subgid).\n",
	      out);
}

enum { BUILD_TAG = 1, BUILD_FILE, BUILD_ARG, BUILD_PULL, BUILD_NO_CACHE, BUILD_QUIET, BUILD_CA_FILE, BUILD_KEYRING };

static void build_option(struct build_opts *o, int id, const char *value)
{
	switch (id) {
	case BUILD_TAG:
		o->tag = value;
		break;
	case BUILD_FILE:
		o->file = value;
		break;
	case BUILD_ARG:
		if (strchr(value, '='))
			isd_strv_push(&o->build_args, isd_xstrdup(value));
		else if (getenv(value))
			isd_strv_push(&o->build_args, isd_xasprintf("%s=%s", value, getenv(value)));
		break;
	case BUILD_PULL:
		o->pull = true;
		break;
	case BUILD_NO_CACHE:
		o->no_cache = true;
		break;
	case BUILD_QUIET:
		o->quiet = true;
		break;
	case BUILD_CA_FILE:
		o->ca_file = value;
		break;
	case BUILD_KEYRING:
		o->keyring = value;
		break;
	case ISD_CLI_OPERAND:
		o->context = value;
		break;
	}
}

int isd_build_main(int argc, char **argv)
{
	static const struct isd_cli_flag flags[] = {
		{"--tag", 't', ISD_CLI_VALUE, BUILD_TAG},
		{"--file", 'f', ISD_CLI_VALUE, BUILD_FILE},
		{"--build-arg", 0, ISD_CLI_VALUE, BUILD_ARG},
		{"--pull", 0, ISD_CLI_NO_VALUE, BUILD_PULL},
		{"--no-cache", 0, ISD_CLI_NO_VALUE, BUILD_NO_CACHE},
		{"--quiet", 'q', ISD_CLI_NO_VALUE, BUILD_QUIET},
		{"--ca-file", 0, ISD_CLI_VALUE, BUILD_CA_FILE},
		{"--keyring", 0, ISD_CLI_VALUE, BUILD_KEYRING},
		{0},
	};
	static const struct isd_cli_command cmd = {"build", build_usage, flags, 1};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);
	struct build_opts o = {.context = "."};
	int r = 0;

	while (isd_cli_next(&a))
		build_option(&o, a.id, a.value);
	if (a.exit >= 0) {
		isd_strv_free(o.build_args);
		return a.exit;
	}
	if (!o.tag) {
		isd_strv_free(o.build_args);
		return isd_cli_usage_error(&cmd, "no image name given: -t NAME");
	}
	if (!isd_store_valid_name(o.tag))
		r = isd_error(0, "build: '%s' is not a valid image name (letters, digits, '-', '_', '.'; not 'host')",
			      o.tag);
	if (r == 0)
		r = build(&o);
	isd_strv_free(o.build_args);
	if (r < 0) {
		isd_error_print("build failed");
		return ISD_EXIT_FAILURE;
	}
	return 0;
}
