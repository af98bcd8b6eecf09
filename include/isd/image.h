/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What `isd exec --image NAME` needs of a built image, and the id maps that
 * both the runtime (an image's owners inside the sandbox) and isd build
 * (its RUN steps) use.  Part of the runtime: isd build uses it, never the
 * reverse (the builder depends on the runtime).
 */
#ifndef ISD_IMAGE_H
#define ISD_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isd/spec.h"

/* ------------------------------------------------------------------ */
/* Id maps and the helper user namespace                               */

#define ISD_IDMAP_MAX 4

struct isd_idmap {
	struct isd_id_range uid[ISD_IDMAP_MAX], gid[ISD_IDMAP_MAX];
	size_t n_uid, n_gid;
	bool full;        /* many ids (subuid range or privileged): ownership kept */
	uint32_t caller_uid, caller_gid;
};

/* The caller's map: inside 0-999 and 1001-COUNT from the subordinate
 * range of /etc/subuid and /etc/subgid (COUNT ids: 65536 gives 0-65536),
 * 1000 = the caller (podman's keep-id); root maps the ids it has 1:1.
 * Without a range (or nested in a namespace without ids) the map is the
 * single id 0 = the caller and full is false.  Environment
 * ISD_SUBID_FILE_UID / _GID override the file paths (tests). */
int isd_idmap_for_caller(struct isd_idmap *map);
/* Whether the inside id is one of the ranges'; the highest inside id. */
bool isd_idmap_maps(const struct isd_id_range *r, size_t n, uint32_t id);
uint32_t isd_idmap_top(const struct isd_id_range *r, size_t n);
/* "0:100000:1000,1000:1001:1,..." for meta.json and the build key. */
char *isd_idmap_format(const struct isd_idmap *map);

/* Runs fn(arg) in a child that is uid 0 in a new user namespace with map
 * (maps written by the parent through newuidmap/newgidmap), and a new mount
 * namespace.  The child's recorded error becomes the caller's.  Returns
 * fn's result (0 or -errno). */
int isd_idmap_run(const struct isd_idmap *map, int (*fn)(void *arg), void *arg);

/* rm -rf of path (absolute, on the host) as root of the map's namespace,
 * so that trees owned by subordinate ids can be removed. */
int isd_idmap_remove_tree(const struct isd_idmap *map, const char *path);

/* ------------------------------------------------------------------ */
/* isd exec --image NAME                                                */

struct isd_image_config {
	char **env;      /* the image's ENV, NAME=VALUE */
	char *workdir;   /* WORKDIR, NULL when none */
	char *user;      /* USER as written ("" = root) */
	uint32_t uid, gid; /* USER resolved at build time */
	bool has_user;
	/* The build's id map, when the image kept its owners and the caller's
	 * subordinate ranges still give exactly that map (else the sandbox
	 * keeps its single id and other owners show up as nobody). */
	struct isd_idmap map;
	bool map_usable;
};

/* Reads meta.json beside rootfs (".../NAME/<id>/rootfs"); -ENOENT (nothing
 * recorded) for trees without one. */
int isd_image_config_load(const char *rootfs, struct isd_image_config *cfg);
void isd_image_config_free(struct isd_image_config *cfg);
/* For `isd exec`, once the options are parsed: a built image's (spec->image
 * not "host", spec->rootfs set) ENV under what the options set (origin
 * "image"), its USER unless user_given, its WORKDIR unless spec->workdir is
 * set, and its id map when usable for spec->uid/gid.  No meta.json: 0. */
int isd_image_config_apply(struct isd_spec *spec, bool user_given);

/* The image store, shared by isd exec --image and isd build:
 * $XDG_DATA_HOME/isd/images (or ~/.local/share/isd/images). */
char *isd_store_dir(void);
/* The one rule for an image's name: letters, digits, '-', '_', '.', at
 * most 128, not starting with '.' or '-', not "host" (the host's own
 * directories). */
bool isd_store_valid_name(const char *name);

#endif
