/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The image store: $XDG_DATA_HOME/isd/images/NAME/
 *   <id>/rootfs      an immutable tree (never changed once published)
 *   <id>/meta.json   base digest, build key, env, user, workdir, id map
 *   current -> <id>  switched atomically (rename of a new symlink)
 *   .build-XXXXXX/   a build in progress (gone on success or failure; a
 *                    build killed with -9 leaves it for `isd image prune`)
 *   .lock            one build per name at a time (flock)
 * A running sandbox resolved current/rootfs to <id>/rootfs when it
 * started, so publishing a new id never changes what it sees.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/cli-args.h"
#include "isd/util.h"
#include "internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

static char *new_id(void)
{
	unsigned char rnd[4] = {0};
	time_t now = time(NULL);
	struct tm tm;
	char stamp[32];

	(void)!getrandom(rnd, sizeof(rnd), 0);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	return isd_xasprintf("%s-%02x%02x%02x%02x", stamp, rnd[0], rnd[1], rnd[2], rnd[3]);
}

int isd_store_begin(const char *name, struct isd_store_txn *txn)
{
	_cleanup_free_ char *dir = isd_store_dir(), *lock = NULL, *tmpl = NULL;
	int r;

	memset(txn, 0, sizeof(*txn));
	txn->lock_fd = -1;
	if (!isd_store_valid_name(name))
		return isd_error(0, "'%s' is not a valid image name (letters, digits, '-', '_', '.'; not 'host')", name);
	txn->name = isd_xstrdup(name);
	txn->image_dir = isd_xasprintf("%s/%s", dir, name);
	r = isd_mkdir_p_at(AT_FDCWD, txn->image_dir, 0700);
	if (r < 0)
		return isd_error(r, "creating %s", txn->image_dir);
	lock = isd_xasprintf("%s/.lock", txn->image_dir);
	txn->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (txn->lock_fd < 0)
		return isd_error(-errno, "opening %s", lock);
	if (flock(txn->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return isd_error(-errno, "locking %s", lock);
		fprintf(stderr, "isd: waiting for another build of %s to finish\n", name);
		if (flock(txn->lock_fd, LOCK_EX) < 0)
			return isd_error(-errno, "locking %s", lock);
	}
	tmpl = isd_xasprintf("%s/.build-XXXXXX", txn->image_dir);
	if (!mkdtemp(tmpl))
		return isd_error(-errno, "creating a build directory in %s", txn->image_dir);
	txn->work = isd_steal_ptr(tmpl);
	txn->rootfs = isd_xasprintf("%s/rootfs", txn->work);
	if (mkdir(txn->rootfs, 0755) < 0)
		return isd_error(-errno, "creating %s", txn->rootfs);
	return 0;
}

int isd_store_commit(struct isd_store_txn *txn, const char *meta_json)
{
	_cleanup_free_ char *meta = isd_xasprintf("%s/meta.json", txn->work);
	_cleanup_free_ char *final = NULL, *link_tmp = NULL, *current = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	/* Written and synced before it becomes reachable. */
	fd = open(meta, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return isd_error(-errno, "writing %s", meta);
	r = isd_write_all(fd, meta_json, strlen(meta_json));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r < 0)
		return isd_error(r, "writing %s", meta);
	syncfs(fd);
	txn->id = new_id();
	final = isd_xasprintf("%s/%s", txn->image_dir, txn->id);
	if (rename(txn->work, final) < 0)
		return isd_error(-errno, "moving the new image to %s", final);
	free(txn->work);
	txn->work = NULL;
	link_tmp = isd_xasprintf("%s/.current-%s", txn->image_dir, txn->id);
	current = isd_xasprintf("%s/current", txn->image_dir);
	unlink(link_tmp);
	if (symlink(txn->id, link_tmp) < 0)
		return isd_error(-errno, "creating %s", link_tmp);
	if (rename(link_tmp, current) < 0) {
		r = isd_error(-errno, "publishing %s", current);
		unlink(link_tmp);
		return r;
	}
	return 0;
}

void isd_store_end(struct isd_store_txn *txn, const struct isd_idmap *map)
{
	if (txn->work && isd_idmap_remove_tree(map, txn->work) < 0)
		isd_warn("could not remove %s: %s", txn->work, isd_error_message());
	if (txn->lock_fd >= 0)
		close(txn->lock_fd);
	free(txn->name);
	free(txn->image_dir);
	free(txn->work);
	free(txn->rootfs);
	free(txn->id);
	memset(txn, 0, sizeof(*txn));
	txn->lock_fd = -1;
}

int isd_store_read_meta(const char *name, char **out)
{
	_cleanup_free_ char *dir = isd_store_dir();
	_cleanup_free_ char *path = isd_xasprintf("%s/%s/current/meta.json", dir, name);

	return isd_read_file_at(AT_FDCWD, path, out, NULL);
}

/* ------------------------------------------------------------------ */
/* isd image ls|rm|inspect|prune                                       */

static int current_id(const char *image_dir, char *buf, size_t size)
{
	_cleanup_free_ char *link = isd_xasprintf("%s/current", image_dir);
	ssize_t n = readlink(link, buf, size - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static char **list_dir(const char *path, bool hidden)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char **names = NULL;

	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((de->d_name[0] == '.') != hidden)
			continue;
		isd_strv_push(&names, isd_xstrdup(de->d_name));
	}
	if (d)
		closedir(d);
	return names;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_strv(char **v)
{
	qsort(v, isd_strv_len(v), sizeof(char *), cmp_str);
}

static int image_ls(void)
{
	_cleanup_free_ char *dir = isd_store_dir();
	_cleanup_strv_ char **names = list_dir(dir, false);

	sort_strv(names);
	printf("%-24s %-28s %-20s %s\n", "NAME", "ID", "CREATED", "BASE");
	for (size_t i = 0; names && names[i]; i++) {
		_cleanup_free_ char *image_dir = isd_xasprintf("%s/%s", dir, names[i]), *meta = NULL;
		char id[256];
		json_object *o = NULL, *v;
		const char *created = "-", *base = "-";

		if (current_id(image_dir, id, sizeof(id)) < 0)
			continue;
		if (isd_store_read_meta(names[i], &meta) == 0)
			o = json_tokener_parse(meta);
		if (o && json_object_object_get_ex(o, "created", &v))
			created = json_object_get_string(v);
		if (o && json_object_object_get_ex(o, "base", &v))
			base = json_object_get_string(v);
		printf("%-24s %-28s %-20s %s\n", names[i], id, created, base);
		json_object_put(o);
	}
	return 0;
}

static int image_inspect(const char *name)
{
	_cleanup_free_ char *meta = NULL, *dir = isd_store_dir();
	char id[256];
	_cleanup_free_ char *image_dir = isd_xasprintf("%s/%s", dir, name);
	json_object *o;

	if (!isd_store_valid_name(name) || isd_store_read_meta(name, &meta) < 0 ||
	    current_id(image_dir, id, sizeof(id)) < 0)
		return isd_error(0, "image inspect: no image %s in %s", name, dir);
	o = json_tokener_parse(meta);
	if (!o)
		return isd_error(0, "image inspect: %s/current/meta.json is not JSON", image_dir);
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "id", json_object_new_string(id));
	{
		_cleanup_free_ char *rootfs = isd_xasprintf("%s/%s/rootfs", image_dir, id);
		json_object_object_add(o, "rootfs", json_object_new_string(rootfs));
	}
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return 0;
}

/* Removes every entry of image_dir, or (prune) all but the current tree,
 * its link and the lock: older trees, killed builds, dead publishes. */
static int remove_entries(const struct isd_idmap *map, const char *image_dir, bool everything, int *removed)
{
	_cleanup_strv_ char **visible = list_dir(image_dir, false), **hidden = list_dir(image_dir, true);
	char id[256] = "";
	int r = 0;

	current_id(image_dir, id, sizeof(id));
	for (int pass = 0; pass < 2; pass++) {
		char **v = pass ? hidden : visible;
		for (size_t i = 0; v && v[i]; i++) {
			_cleanup_free_ char *path = isd_xasprintf("%s/%s", image_dir, v[i]);
			bool is_current = !strcmp(v[i], "current") || !strcmp(v[i], id);

			if (!everything && (is_current || !strcmp(v[i], ".lock")))
				continue;
			r = isd_idmap_remove_tree(map, path);
			if (r < 0)
				return r;
			(*removed)++;
		}
	}
	return 0;
}

/* Takes the name's build lock so that no build is half-way in it. */
static int lock_image(const char *image_dir, bool wait)
{
	_cleanup_free_ char *lock = isd_xasprintf("%s/.lock", image_dir);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return isd_error(-errno, "opening %s", lock);
	if (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
		int r = -errno;
		close(fd);
		return r == -EWOULDBLOCK ? -EBUSY : isd_error(r, "locking %s", lock);
	}
	return fd;
}

static int image_rm(const struct isd_idmap *map, const char *name)
{
	_cleanup_free_ char *dir = isd_store_dir();
	_cleanup_free_ char *image_dir = isd_xasprintf("%s/%s", dir, name);
	_cleanup_close_ int lock = -1;
	struct stat st;
	int removed = 0, r;

	if (!isd_store_valid_name(name) || stat(image_dir, &st) < 0)
		return isd_error(0, "image rm: no image %s in %s", name, dir);
	lock = lock_image(image_dir, false);
	if (lock == -EBUSY)
		return isd_error(0, "image rm: %s is being built right now", name);
	if (lock < 0)
		return lock;
	r = remove_entries(map, image_dir, true, &removed);
	if (r < 0)
		return r;
	if (rmdir(image_dir) < 0)
		return isd_error(-errno, "removing %s", image_dir);
	printf("removed %s\n", name);
	return 0;
}

static int image_prune(const struct isd_idmap *map)
{
	_cleanup_free_ char *dir = isd_store_dir();
	_cleanup_strv_ char **names = list_dir(dir, false);
	int removed = 0;

	for (size_t i = 0; names && names[i]; i++) {
		_cleanup_free_ char *image_dir = isd_xasprintf("%s/%s", dir, names[i]);
		_cleanup_close_ int lock = lock_image(image_dir, false);
		int r;

		if (lock == -EBUSY) {
			printf("skipping %s: a build is running\n", names[i]);
			continue;
		}
		if (lock < 0)
			return lock;
		r = remove_entries(map, image_dir, false, &removed);
		if (r < 0)
			return r;
	}
	printf("removed %d old tree%s\n", removed, removed == 1 ? "" : "s");
	return 0;
}

static void image_usage(FILE *out)
{
	fputs("Usage: isd image COMMAND\n"
	      "\n"
	      "Images built by `isd build`, in $XDG_DATA_HOME/isd/images.\n"
	      "\n"
	      "  ls              list images (name, current id, creation time, base)\n"
	      "  inspect NAME    print the current image's meta.json\n"
	      "  rm NAME...      remove images with all their trees\n"
	      "  prune           remove the trees no image points at any more\n"
	      "                  (older builds, builds that were killed)\n",
	      out);
}

static int image_done(int r)
{
	if (r < 0) {
		isd_error_print("image command failed");
		return ISD_EXIT_FAILURE;
	}
	return 0;
}

static int image_ls_cmd(int argc, char **argv)
{
	static const struct isd_cli_command cmd = {"image ls", image_usage, NULL, 0};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);

	while (isd_cli_next(&a))
		;
	return a.exit >= 0 ? a.exit : image_done(image_ls());
}

static int image_inspect_cmd(int argc, char **argv)
{
	static const struct isd_cli_command cmd = {"image inspect", image_usage, NULL, 1};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);
	const char *name = NULL;

	while (isd_cli_next(&a))
		name = a.value;
	if (a.exit >= 0)
		return a.exit;
	if (!name)
		return isd_cli_usage_error(&cmd, "expected an image NAME");
	return image_done(image_inspect(name));
}

static int image_rm_cmd(int argc, char **argv)
{
	static const struct isd_cli_command cmd = {"image rm", image_usage, NULL, -1};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);
	_cleanup_strv_ char **names = NULL;
	struct isd_idmap map;
	int r = 0;

	while (isd_cli_next(&a))
		isd_strv_push(&names, isd_xstrdup(a.value));
	if (a.exit >= 0)
		return a.exit;
	if (!names)
		return isd_cli_usage_error(&cmd, "expected one image NAME or more");
	isd_idmap_for_caller(&map);
	for (size_t i = 0; names[i] && r == 0; i++)
		r = image_rm(&map, names[i]);
	return image_done(r);
}

static int image_prune_cmd(int argc, char **argv)
{
	static const struct isd_cli_command cmd = {"image prune", image_usage, NULL, 0};
	struct isd_cli_args a = ISD_CLI_ARGS(&cmd, argc, argv);
	struct isd_idmap map;

	while (isd_cli_next(&a))
		;
	if (a.exit >= 0)
		return a.exit;
	isd_idmap_for_caller(&map);
	return image_done(image_prune(&map));
}

int isd_image_main(int argc, char **argv)
{
	static const struct isd_cli_subcommand subs[] = {{"ls", image_ls_cmd},	     {"list", image_ls_cmd},
							 {"inspect", image_inspect_cmd}, {"rm", image_rm_cmd},
							 {"prune", image_prune_cmd},	     {0}};

	return isd_cli_dispatch("image", image_usage, subs, argc, argv);
}
