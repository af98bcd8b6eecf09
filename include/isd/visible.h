/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bytes that come from a sandbox (file contents, names, commit subjects,
 * ref names) shown on a terminal are made visible, never interpreted: a
 * terminal acts on ESC sequences, CR, BS and C1 controls, and bidi
 * overrides reorder what a reviewer reads, so that a line can show
 * "@echo build" while the bytes are "id".  Everything else passes as is.
 *
 *   C0 controls but TAB (and LF where lines are kept)  ^@ .. ^_ (ESC: ^[, CR: ^M)
 *   DEL                                                ^?
 *   C1 controls, bidi and zero-width format characters <U+202E>
 *   bytes that are not UTF-8                           <9B>
 */
#ifndef ISD_VISIBLE_H
#define ISD_VISIBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* How many bytes of buf[0..len) would be escaped (0: shown as is). */
size_t isd_visible_count(const char *buf, size_t len, bool keep_newlines);

/* buf[0..len) with every such byte escaped, NUL-terminated (caller frees).
 * With mark_on/mark_off (colour), each escape is wrapped in them. */
char *isd_visible_mark(const char *buf, size_t len, bool keep_newlines, const char *mark_on, const char *mark_off);
char *isd_visible(const char *buf, size_t len, bool keep_newlines);

/* A NUL-terminated string, escaped (newlines too). */
char *isd_visible_str(const char *s);

/* fwrite() of buf made visible. */
void isd_visible_fwrite(FILE *f, const char *buf, size_t len, bool keep_newlines);

/* git's C-style quoting ("a\nb", octal for bytes >= 0x80) of prefix+path,
 * or a plain copy when no byte needs it: a path of the sandbox's, shown. */
char *isd_quote_path(const char *prefix, const char *path);

#endif
