/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Building a record of the activity log (src/activity-rec.h): every string
 * JSON-escaped to pure ASCII, bytes that are not UTF-8 as \udcXX. */
#define _GNU_SOURCE
#include "activity-rec.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void rec_putn(struct rec *r, const char *s, size_t n)
{
	if (r->len + n >= r->cap)
		n = r->cap - 1 - r->len;
	memcpy(r->buf + r->len, s, n);
	r->len += n;
	r->buf[r->len] = '\0';
}

void rec_puts(struct rec *r, const char *s)
{
	rec_putn(r, s, strlen(s));
}

void rec_printf(struct rec *r, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		rec_putn(r, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Length of the valid UTF-8 sequence at s (its code point in *cp), 0 if
 * none. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, c = s[0] & 0x1f, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, c = s[0] & 0x0f, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, c = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

void rec_json_str(struct rec *r, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	rec_putn(r, "\"", 1);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t l = utf8_seq(s + i, n - i, &cp);

		if (l == 0) {
			rec_printf(r, "\\udc%02x", s[i]);
			i++;
			continue;
		}
		i += l;
		if (cp == '"' || cp == '\\')
			rec_printf(r, "\\%c", (char)cp);
		else if (cp >= 0x20 && cp < 0x7f)
			rec_putn(r, (const char *)&s[i - 1], 1);
		else if (cp < 0x10000)
			rec_printf(r, "\\u%04" PRIx32, cp);
		else
			rec_printf(r, "\\u%04" PRIx32 "\\u%04" PRIx32, 0xd800 + ((cp - 0x10000) >> 10),
				   0xdc00 + ((cp - 0x10000) & 0x3ff));
	}
	rec_putn(r, "\"", 1);
}

void rec_time_at(struct rec *r, const struct timespec *at)
{
	rec_time_key(r, "time", at);
}

void rec_time_key(struct rec *r, const char *key, const struct timespec *at)
{
	struct timespec ts;
	struct tm tm;
	char buf[64];

	if (at)
		ts = *at;
	else
		clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	rec_printf(r, "\"%s\":\"%s.%03ldZ\"", key, buf, ts.tv_nsec / 1000000);
}
