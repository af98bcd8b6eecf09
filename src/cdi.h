/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Container Device Interface (CDI, github.com/cncf-tags/container-
 * device-interface): spec files in /etc/cdi and /var/run/cdi that name a
 * vendor's devices (kind "nvidia.com/gpu", device "0" or "all") and what
 * a container needs for each: device nodes, mounts, environment.  isd
 * reads them as podman does for --device VENDOR/CLASS=NAME and --gpus.
 *
 * JSON specs only (isd has no YAML parser; a .yaml spec is named in the
 * error when it might have been the one).  Every path must be absolute and
 * free of "..".  Hooks are refused: they are host programs the runtime
 * would run on the payload's behalf, outside any sandbox.  So are the
 * edits isd cannot honour (additional groups, RDT, network devices) and
 * keys it does not know, rather than a device given without them.
 */
#ifndef ISD_CDI_H
#define ISD_CDI_H

#include <stdbool.h>
#include <stddef.h>

struct isd_cdi_node {
	char *path;        /* inside */
	char *host_path;   /* NULL: path */
	char *permissions; /* NULL: rwm */
	char type;         /* 'c', 'b' or 0 when not given */
	bool has_number;
	unsigned major, minor;
};

struct isd_cdi_mount {
	char *host_path, *container_path;
	bool readonly;
};

struct isd_cdi_edits {
	struct isd_cdi_node *nodes;
	size_t n_nodes;
	struct isd_cdi_mount *mounts;
	size_t n_mounts;
	char **env;  /* NAME=VALUE */
	char *hook;  /* the first hook, described ("createContainer /usr/bin/x"), or NULL */
};

struct isd_cdi_device {
	char *name;
	struct isd_cdi_edits edits;
};

struct isd_cdi_spec {
	char *file;
	char *kind; /* vendor/class */
	struct isd_cdi_edits edits; /* for every device of the spec */
	struct isd_cdi_device *devices;
	size_t n_devices;
};

/* VENDOR/CLASS=NAME: whether arg has that shape (a path does not), and
 * its parts, checked.  0 or -EINVAL, recorded. */
bool isd_cdi_is_request(const char *arg);
int isd_cdi_parse_request(const char *arg, char **kind, char **name);

/* One spec file's text; file names it in messages.  0 or -EINVAL with the
 * one line recorded (file, what, why). */
int isd_cdi_parse_spec(const char *text, const char *file, struct isd_cdi_spec *out);
void isd_cdi_spec_free(struct isd_cdi_spec *spec);

/* The edits of request from the *.json specs in dirs (later directories
 * override earlier ones, as in CDI); NAME "all" is the device of that name
 * when the spec has one, else every device of the kind.  files gets the
 * spec files used, ", "-separated. */
int isd_cdi_resolve(char *const *dirs, const char *request, struct isd_cdi_edits *out, char **files);
void isd_cdi_edits_free(struct isd_cdi_edits *e);

/* ISD_CDI_SPEC_DIRS (':'-separated) or CDI's /etc/cdi and /var/run/cdi. */
char **isd_cdi_default_dirs(const char *env_value);

#endif
