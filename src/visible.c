/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See include/isd/visible.h. */
#include "isd/visible.h"
#include "isd/util.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Code points a terminal or a reader takes for something they are not:
 * C1 controls (CSI is U+009B) and the format characters that reorder or
 * hide text (Trojan Source). */
static bool invisible_cp(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x180e || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff;
}

/* The length of the valid UTF-8 sequence at p (0 if none) and its code point. */
static size_t utf8_seq(const unsigned char *p, size_t left, uint32_t *cp)
{
	size_t n;
	uint32_t min;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, *cp = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, *cp = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, *cp = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (left < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (p[i] & 0x3f);
	}
	if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return n;
}

/* One step over buf: how many bytes it consumes, and the escape for them
 * written to esc (empty when they pass as they are). */
static size_t step(const unsigned char *p, size_t left, bool keep_newlines, char esc[16])
{
	uint32_t cp;
	size_t n;

	esc[0] = '\0';
	if (p[0] == '\t' || (p[0] == '\n' && keep_newlines) || (p[0] >= 0x20 && p[0] < 0x7f))
		return 1;
	if (p[0] < 0x20) {
		esc[0] = '^';
		esc[1] = (char)(p[0] + 0x40);
		esc[2] = '\0';
		return 1;
	}
	if (p[0] == 0x7f) {
		memcpy(esc, "^?", 3);
		return 1;
	}
	n = utf8_seq(p, left, &cp);
	if (n == 0) {
		snprintf(esc, 16, "<%02X>", p[0]);
		return 1;
	}
	if (invisible_cp(cp))
		snprintf(esc, 16, "<U+%04X>", (unsigned)cp);
	return n;
}

size_t isd_visible_count(const char *buf, size_t len, bool keep_newlines)
{
	const unsigned char *p = (const unsigned char *)buf, *end = p + len;
	size_t count = 0;
	char esc[16];

	while (p < end) {
		p += step(p, (size_t)(end - p), keep_newlines, esc);
		count += esc[0] != '\0';
	}
	return count;
}

char *isd_visible_mark(const char *buf, size_t len, bool keep_newlines, const char *mark_on, const char *mark_off)
{
	const unsigned char *p = (const unsigned char *)buf, *end = p + len;
	size_t on = mark_on ? strlen(mark_on) : 0, off = mark_off ? strlen(mark_off) : 0;
	size_t cap = len + 1, used = 0;
	char *out = isd_xmalloc(cap);
	char esc[16];

	while (p < end) {
		size_t n = step(p, (size_t)(end - p), keep_newlines, esc);
		size_t need = esc[0] ? on + strlen(esc) + off : n;

		if (used + need + 1 > cap) {
			while (used + need + 1 > cap)
				cap *= 2;
			out = isd_xrealloc(out, cap);
		}
		if (!esc[0]) {
			memcpy(out + used, p, n);
			used += n;
		} else {
			/* memcpy from a NULL mark is undefined even for 0 bytes. */
			if (on)
				memcpy(out + used, mark_on, on);
			used += on;
			memcpy(out + used, esc, strlen(esc));
			used += strlen(esc);
			if (off)
				memcpy(out + used, mark_off, off);
			used += off;
		}
		p += n;
	}
	out[used] = '\0';
	return out;
}

char *isd_visible(const char *buf, size_t len, bool keep_newlines)
{
	return isd_visible_mark(buf, len, keep_newlines, NULL, NULL);
}

char *isd_visible_str(const char *s)
{
	return isd_visible(s ? s : "", s ? strlen(s) : 0, false);
}

void isd_visible_fwrite(FILE *f, const char *buf, size_t len, bool keep_newlines)
{
	_cleanup_free_ char *v = NULL;

	if (isd_visible_count(buf, len, keep_newlines) == 0) {
		fwrite(buf, 1, len, f);
		return;
	}
	v = isd_visible(buf, len, keep_newlines);
	fputs(v, f);
}

char *isd_quote_path(const char *prefix, const char *path)
{
	_cleanup_free_ char *plain = isd_xasprintf("%s%s", prefix, path);
	static const char esc[] = "\a\b\t\n\v\f\r";
	static const char letters[] = "abtnvfr";
	char *res, *w;
	bool needs = false;

	for (const unsigned char *p = (const unsigned char *)plain; *p; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\' || *p >= 0x7f)
			needs = true;
	if (!needs)
		return isd_steal_ptr(plain);
	res = w = isd_xmalloc(strlen(plain) * 4 + 3);
	*w++ = '"';
	for (const unsigned char *p = (const unsigned char *)plain; *p; p++) {
		const char *e = *p ? strchr(esc, *p) : NULL;

		if (e) {
			*w++ = '\\';
			*w++ = letters[e - esc];
		} else if (*p == '"' || *p == '\\') {
			*w++ = '\\';
			*w++ = (char)*p;
		} else if (*p < 0x20 || *p >= 0x7f) {
			w += sprintf(w, "\\%03o", *p);
		} else {
			*w++ = (char)*p;
		}
	}
	*w++ = '"';
	*w = '\0';
	return res;
}
