/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `isd exec --image NAME`: the configuration a built image carries in its
 * meta.json (ENV, USER, WORKDIR and the id map it was built with), read
 * from the tree the exec pinned (NAME/<id>/meta.json beside the rootfs),
 * so that a concurrent rebuild cannot hand it another image's settings.
 */
#define _GNU_SOURCE
#include "isd/image.h"
#include "isd/util.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <string.h>

static int read_ranges(json_object *o, const char *key, struct isd_id_range *r, size_t *n)
{
	json_object *a;

	*n = 0;
	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
		return -EINVAL;
	if (json_object_array_length(a) == 0 || json_object_array_length(a) > ISD_IDMAP_MAX)
		return -EINVAL;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		int64_t v[3];

		if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 3)
			return -EINVAL;
		for (size_t k = 0; k < 3; k++) {
			v[k] = json_object_get_int64(json_object_array_get_idx(e, k));
			if (v[k] < 0 || v[k] > UINT32_MAX)
				return -EINVAL;
		}
		r[i] = (struct isd_id_range){(uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2]};
	}
	*n = json_object_array_length(a);
	return 0;
}

static bool same_ranges(const struct isd_id_range *a, size_t na, const struct isd_id_range *b, size_t nb)
{
	return na == nb && !memcmp(a, b, na * sizeof(*a));
}

/* The image's ids stay what they were at build time only with the very
 * map the build used: the caller's subordinate range as it is now. */
static void choose_map(json_object *o, struct isd_image_config *cfg)
{
	struct isd_id_range uid[ISD_IDMAP_MAX], gid[ISD_IDMAP_MAX];
	size_t n_uid, n_gid;
	struct isd_idmap now;
	json_object *v;

	if (!json_object_object_get_ex(o, "ownership_kept", &v) || !json_object_get_boolean(v))
		return;
	if (read_ranges(o, "uid_map", uid, &n_uid) < 0 || read_ranges(o, "gid_map", gid, &n_gid) < 0)
		return;
	if (isd_idmap_for_caller(&now) < 0 || !now.full)
		return;
	if (!same_ranges(uid, n_uid, now.uid, now.n_uid) || !same_ranges(gid, n_gid, now.gid, now.n_gid))
		return;
	cfg->map = now;
	cfg->map_usable = true;
}

int isd_image_config_load(const char *rootfs, struct isd_image_config *cfg)
{
	_cleanup_free_ char *dir = isd_xstrdup(rootfs), *text = NULL, *path = NULL;
	char *slash = strrchr(dir, '/');
	json_object *o, *v;
	int r;

	memset(cfg, 0, sizeof(*cfg));
	if (!slash || strcmp(slash, "/rootfs"))
		return -ENOENT; /* a plain tree in the store, without meta.json */
	*slash = '\0';
	path = isd_xasprintf("%s/meta.json", dir);
	r = isd_read_file_at(AT_FDCWD, path, &text, NULL);
	if (r < 0)
		return r;
	o = json_tokener_parse(text);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return isd_error(-EINVAL, "reading %s: not a JSON object", path);
	}
	if (json_object_object_get_ex(o, "env", &v) && json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			const char *e = json_object_get_string(json_object_array_get_idx(v, i));
			/* NAME=VALUE only: a hand-edited meta.json must not make
			 * the payload's environment invalid. */
			if (e && strchr(e, '=') && e[0] != '=')
				isd_strv_push(&cfg->env, isd_xstrdup(e));
		}
	}
	if (json_object_object_get_ex(o, "workdir", &v) && json_object_is_type(v, json_type_string) &&
	    json_object_get_string(v)[0] == '/')
		cfg->workdir = isd_xstrdup(json_object_get_string(v));
	if (json_object_object_get_ex(o, "uid", &v) && json_object_is_type(v, json_type_int)) {
		int64_t uid = json_object_get_int64(v), gid = -1;
		json_object *g;

		if (json_object_object_get_ex(o, "gid", &g) && json_object_is_type(g, json_type_int))
			gid = json_object_get_int64(g);
		if (uid >= 0 && uid <= UINT32_MAX && gid >= 0 && gid <= UINT32_MAX) {
			cfg->uid = (uint32_t)uid;
			cfg->gid = (uint32_t)gid;
			cfg->has_user = true;
		}
	}
	if (json_object_object_get_ex(o, "user", &v) && json_object_is_type(v, json_type_string))
		cfg->user = isd_xstrdup(json_object_get_string(v));
	choose_map(o, cfg);
	json_object_put(o);
	return 0;
}

void isd_image_config_free(struct isd_image_config *cfg)
{
	isd_strv_free(cfg->env);
	free(cfg->workdir);
	free(cfg->user);
	memset(cfg, 0, sizeof(*cfg));
}

static bool id_in_ranges(uint32_t id, const struct isd_id_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (id >= r[i].inside && id - r[i].inside < r[i].count)
			return true;
	return false;
}

/* What the options left unset comes from the image; the map only when
 * the payload's ids are in it (else setresuid inside would fail). */
int isd_image_config_apply(struct isd_spec *spec, bool user_given)
{
	struct isd_image_config cfg;
	int r;

	if (!spec->image || !strcmp(spec->image, "host") || !spec->rootfs)
		return 0;
	r = isd_image_config_load(spec->rootfs, &cfg);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return isd_error(r, "--image %s: reading the image's meta.json", spec->image);
	for (char **e = cfg.env; e && *e; e++) {
		_cleanup_free_ char *name = strndup(*e, strcspn(*e, "="));
		_cleanup_free_ char *key = isd_xasprintf("env:%s", name);
		isd_spec_setenv(spec, name, *e + strlen(name) + 1);
		if (!isd_spec_get_origin(spec, key))
			isd_spec_set_origin(spec, key, "image");
	}
	if (!user_given && cfg.has_user) {
		spec->uid = cfg.uid;
		spec->gid = cfg.gid;
		isd_spec_set_origin(spec, "user", "image");
	}
	if (!spec->workdir && cfg.workdir) {
		spec->workdir = isd_steal_ptr(cfg.workdir);
		isd_spec_set_origin(spec, "workdir", "image");
	}
	if (cfg.map_usable && id_in_ranges(spec->uid, cfg.map.uid, cfg.map.n_uid) &&
	    id_in_ranges(spec->gid, cfg.map.gid, cfg.map.n_gid)) {
		spec->uid_ranges = isd_xcalloc(cfg.map.n_uid, sizeof(struct isd_id_range));
		spec->gid_ranges = isd_xcalloc(cfg.map.n_gid, sizeof(struct isd_id_range));
		memcpy(spec->uid_ranges, cfg.map.uid, cfg.map.n_uid * sizeof(struct isd_id_range));
		memcpy(spec->gid_ranges, cfg.map.gid, cfg.map.n_gid * sizeof(struct isd_id_range));
		spec->n_uid_ranges = cfg.map.n_uid;
		spec->n_gid_ranges = cfg.map.n_gid;
	}
	isd_image_config_free(&cfg);
	return 0;
}

char *isd_store_dir(void)
{
	return isd_xdg_path("XDG_DATA_HOME", ".local/share", "isd/images");
}

bool isd_store_valid_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > 128 || name[0] == '.' || name[0] == '-' || !strcmp(name, "host"))
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			return false;
	return true;
}
