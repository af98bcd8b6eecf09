/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the config.json readers (oci-json.c: entry, JSON helpers;
 * oci-config.c: process, root, mounts, hooks, annotations;
 * oci-config-linux.c: the linux object).  Every helper names the element
 * by its JSON path in the one error line.
 */
#ifndef ISD_OCI_CONFIG_H
#define ISD_OCI_CONFIG_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isd/oci.h"

/* Bounds against hostile or broken input; far above what engines write. */
#define OCI_MAX_ITEMS 65536   /* entries of any one array (env, mounts, rules) */
#define OCI_MAX_STRING 65536  /* bytes of one string */
#define OCI_MAX_PATH 4096     /* PATH_MAX */
#define OCI_MAX_ID_LINES 340  /* the kernel's uid_map limit */
#define OCI_MAX_NOTES 64

struct oci_ctx {
	const char *cfg; /* names the file in messages */
	unsigned flags;
	struct isd_spec *spec;
	struct isd_oci_extra *extra;
};

/* "CFG: PATH: MESSAGE" recorded; returns -EINVAL. */
int oci_err(const struct oci_ctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The recorded message (of another module, which quoted the config) made
 * visible; returns r. */
int oci_visible_error(int r);
void oci_note(const struct oci_ctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The JSON path of a member or element: truncation only shortens a label. */
void oci_path(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The member key of obj; null counts as absent (as Go's encoding/json reads it). */
struct json_object *oci_field(struct json_object *obj, const char *key);
/* Members of obj not in known[] get a note each (the spec's extensibility
 * rule); PATH names obj. */
void oci_unknown_keys(const struct oci_ctx *c, const char *path, struct json_object *obj,
		      const char *const *known);

int oci_want(const struct oci_ctx *c, const char *path, struct json_object *o, enum json_type type);
int oci_string(const struct oci_ctx *c, const char *path, struct json_object *o, const char **out);
int oci_bool(const struct oci_ctx *c, const char *path, struct json_object *o, bool *out);
int oci_u64(const struct oci_ctx *c, const char *path, struct json_object *o, uint64_t max, uint64_t *out);
int oci_i64(const struct oci_ctx *c, const char *path, struct json_object *o, int64_t min, int64_t max,
	    int64_t *out);
int oci_u32(const struct oci_ctx *c, const char *path, struct json_object *o, uint32_t *out);
/* An array (of at most OCI_MAX_ITEMS) and its length. */
int oci_array(const struct oci_ctx *c, const char *path, struct json_object *o, size_t *n);
/* An array of strings, each non-empty unless allow_empty. */
int oci_strv(const struct oci_ctx *c, const char *path, struct json_object *o, bool allow_empty, char ***out);
/* An absolute path, normalized (no ".." component); relative ones are
 * made absolute under base when base is given, else refused. */
int oci_abs_path(const struct oci_ctx *c, const char *path, const char *s, const char *base, char **out);

/* oci-config.c */
const char *oci_rlimit_name(int resource); /* "RLIMIT_NOFILE" */
int oci_parse_process(struct oci_ctx *c, struct json_object *o);
int oci_parse_root(struct oci_ctx *c, struct json_object *o);
int oci_parse_hostname(struct oci_ctx *c, struct json_object *root);
int oci_parse_mounts(struct oci_ctx *c, struct json_object *o);
int oci_parse_hooks(struct oci_ctx *c, struct json_object *o);
int oci_parse_annotations(struct oci_ctx *c, struct json_object *o);

/* oci-resources.c */
/* The JSON text of buf (UTF-8, strict), or the one error line naming c->cfg. */
int oci_parse_json(const struct oci_ctx *c, const char *buf, size_t len, struct json_object **out);
int oci_parse_resources(struct oci_ctx *c, struct json_object *o);
int oci_parse_cgroups_path(struct oci_ctx *c, struct json_object *o);

/* oci-devices.c */
int oci_parse_devices(struct oci_ctx *c, struct json_object *o);
/* After the device rules are read: each device bound from the host. */
int oci_bind_devices(struct oci_ctx *c);

/* oci-config-linux.c */
int oci_parse_linux(struct oci_ctx *c, struct json_object *o);
/* After everything is read: what holds across sections (sysctl needs its
 * namespace, the network mode from the namespaces, ...). */
int oci_finish(struct oci_ctx *c);

#endif
