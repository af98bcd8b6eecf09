/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where one path lies relative to another, by their text only (no file
 * system access, no symlink followed): both already normalized, absolute
 * or both relative to one place (src/path-util.c).  A trailing "/" of dir
 * is ignored ("DIR/" is DIR), "/" holds every absolute path and ""
 * every relative one.
 */
#ifndef ISD_PATH_UTIL_H
#define ISD_PATH_UTIL_H

#include <stdbool.h>

/* What follows dir in path ("" for dir itself), or NULL when path is not
 * dir or below it. */
const char *isd_path_rest(const char *path, const char *dir);
/* path is dir itself or lies below it. */
bool isd_path_under(const char *path, const char *dir);
/* path lies below dir, not dir itself. */
bool isd_path_below(const char *path, const char *dir);

#endif
