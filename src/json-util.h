/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers of the JSON readers (seccomp profiles, OCI config.json). */
#ifndef ISD_JSON_UTIL_H
#define ISD_JSON_UTIL_H

struct json_object;

/* "a string", "an integer", "a fractional number", ... for "expected X, got Y". */
const char *isd_json_type_name(struct json_object *o);

#endif
