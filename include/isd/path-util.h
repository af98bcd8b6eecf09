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
#include <stddef.h>

/* What follows dir in path ("" for dir itself), or NULL when path is not
 * dir or below it. */
const char *isd_path_rest(const char *path, const char *dir);
/* path is dir itself or lies below it. */
bool isd_path_under(const char *path, const char *dir);
/* path lies below dir, not dir itself. */
bool isd_path_below(const char *path, const char *dir);

/* The one $PATH rule: for each absolute directory of path in order (empty
 * and relative entries never count, so the working directory is never
 * searched), DIR/name into buf and found(buf, ctx); true with buf holding
 * the first candidate found() takes.  Nothing is allocated: the payload
 * runs it between clone and execve. */
bool isd_path_search(const char *path, const char *name, char *buf, size_t size,
		     bool (*found)(const char *candidate, void *ctx), void *ctx);
/* An executable regular file (found()'s usual test; ctx unused). */
bool isd_path_is_executable(const char *candidate, void *ctx);
/* A host program isd runs itself (pasta, slirp4netns, newuidmap), by the
 * rule above on the caller's $PATH, then in /usr/sbin and /usr/bin, which
 * a user's PATH often lacks: isd doctor finds the program isd exec runs. */
bool isd_find_program(const char *name, char *buf, size_t size);

/* A command-line path (absolute, or relative to cwd when cwd lies in the
 * project, else to the project) as a path relative to project ("" for the
 * project itself); -EINVAL with a message when it lies outside. */
int isd_project_relative(const char *project, const char *cwd, const char *arg, char **out);

#endif
