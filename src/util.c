/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "isd/util.h"
#include "isd/visible.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* One per thread: the relay, resolver and walker threads record errors
 * too, and must not overwrite the message the main thread is about to
 * print.  (The payload, cloned with CLONE_VM before its execve, shares
 * init's thread pointer and so init's message, which report_and_exit
 * sends.) */
static _Thread_local char error_message[ISD_ERROR_MAX];

int isd_error(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(error_message, sizeof(error_message), fmt, ap);
	va_end(ap);
	if (n < 0)
		error_message[0] = '\0';
	if (err < 0) {
		size_t used = strlen(error_message);
		snprintf(error_message + used, sizeof(error_message) - used, ": %s",
			 strerror(-err));
		return err;
	}
	return err == 0 ? -EINVAL : -err;
}

int isd_error_raw(int err, const char *msg)
{
	snprintf(error_message, sizeof(error_message), "%s", msg);
	return err;
}

void isd_error_hint(const char *fmt, ...)
{
	size_t used = strlen(error_message);
	va_list ap;

	if (used + 3 >= sizeof(error_message))
		return;
	memcpy(error_message + used, " (", 2);
	used += 2;
	va_start(ap, fmt);
	vsnprintf(error_message + used, sizeof(error_message) - used, fmt, ap);
	va_end(ap);
	used = strlen(error_message);
	if (used + 1 < sizeof(error_message)) {
		error_message[used] = ')';
		error_message[used + 1] = '\0';
	}
}

const char *isd_error_message(void)
{
	return error_message;
}

void isd_error_clear(void)
{
	error_message[0] = '\0';
}

/* Messages name paths and values that may come from a sandbox: printed
 * visible (isd/visible.h), never interpreted by the terminal. */
void isd_error_print(const char *fallback)
{
	_cleanup_free_ char *v = isd_visible_str(error_message[0] ? error_message : fallback);

	fprintf(stderr, "isd: %s\n", v);
}

void isd_warn(const char *fmt, ...)
{
	_cleanup_free_ char *v = NULL;
	char buf[ISD_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	v = isd_visible_str(buf);
	fprintf(stderr, "isd: warning: %s\n", v);
}

static void oom(void)
{
	static const char msg[] = "isd: out of memory\n";
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(ISD_EXIT_FAILURE);
}

void *isd_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *isd_xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		oom();
	return p;
}

void *isd_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *isd_xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *isd_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	return p;
}

size_t isd_strv_len(char *const *strv)
{
	size_t n = 0;
	while (strv && strv[n])
		n++;
	return n;
}

void isd_strv_push(char ***strv, char *owned)
{
	size_t n = isd_strv_len(*strv);
	*strv = isd_xrealloc(*strv, (n + 2) * sizeof(char *));
	(*strv)[n] = owned;
	(*strv)[n + 1] = NULL;
}

void isd_strv_free(char **strv)
{
	for (size_t i = 0; strv && strv[i]; i++)
		free(strv[i]);
	free(strv);
}

void isd_strv_freep(char ***strv)
{
	isd_strv_free(*strv);
	*strv = NULL;
}

char **isd_strv_copy(char *const *strv)
{
	size_t n = isd_strv_len(strv);
	char **copy = isd_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		copy[i] = isd_xstrdup(strv[i]);
	return copy;
}

int isd_parse_size(const char *s, uint64_t *out)
{
	uint64_t value = 0, mult = 1;
	const char *p = s;
	char suffix[8];
	size_t n = 0;

	if (!s || !isdigit((unsigned char)*p))
		return -EINVAL;
	while (isdigit((unsigned char)*p)) {
		unsigned digit = (unsigned)(*p - '0');
		if (value > (UINT64_MAX - digit) / 10)
			return -ERANGE;
		value = value * 10 + digit;
		p++;
	}
	while (*p && n + 1 < sizeof(suffix))
		suffix[n++] = (char)tolower((unsigned char)*p++);
	if (*p)
		return -EINVAL;
	suffix[n] = '\0';

	if (!strcmp(suffix, "") || !strcmp(suffix, "b"))
		mult = 1;
	else if (!strcmp(suffix, "k") || !strcmp(suffix, "kb") || !strcmp(suffix, "kib"))
		mult = 1ULL << 10;
	else if (!strcmp(suffix, "m") || !strcmp(suffix, "mb") || !strcmp(suffix, "mib"))
		mult = 1ULL << 20;
	else if (!strcmp(suffix, "g") || !strcmp(suffix, "gb") || !strcmp(suffix, "gib"))
		mult = 1ULL << 30;
	else if (!strcmp(suffix, "t") || !strcmp(suffix, "tb") || !strcmp(suffix, "tib"))
		mult = 1ULL << 40;
	else
		return -EINVAL;
	if (value > UINT64_MAX / mult)
		return -ERANGE;
	*out = value * mult;
	return 0;
}

int isd_parse_uint32(const char *s, uint32_t *out)
{
	uint64_t value = 0;

	if (!s || !*s)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		value = value * 10 + (uint64_t)(*p - '0');
		if (value > UINT32_MAX)
			return -ERANGE;
	}
	*out = (uint32_t)value;
	return 0;
}

int isd_parse_octal_mode(const char *s, uint32_t *out)
{
	uint32_t value = 0;

	if (!s || !*s || strlen(s) > 5)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '7')
			return -EINVAL;
		value = value * 8 + (uint32_t)(*p - '0');
	}
	if (value > 07777)
		return -ERANGE;
	*out = value;
	return 0;
}

/* One lexical pass: "//" and "/./" collapse; ".." is refused, or with
 * resolve_dotdot removes the component before it (never above "/"). */
static int normalize_path(const char *in, bool resolve_dotdot, char **out)
{
	size_t len = strlen(in);
	char *res, *w;
	const char *p = in;

	if (len == 0 || in[0] != '/')
		return -EINVAL;
	res = isd_xmalloc(len + 2);
	w = res;
	while (*p) {
		const char *start;
		size_t clen;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != '/')
			p++;
		clen = (size_t)(p - start);
		if (clen == 1 && start[0] == '.')
			continue;
		if (clen == 2 && start[0] == '.' && start[1] == '.') {
			if (!resolve_dotdot) {
				free(res);
				return -EINVAL;
			}
			while (w > res && *--w != '/')
				;
			continue;
		}
		*w++ = '/';
		memcpy(w, start, clen);
		w += clen;
	}
	if (w == res)
		*w++ = '/';
	*w = '\0';
	*out = res;
	return 0;
}

int isd_normalize_abs_path(const char *in, char **out)
{
	return normalize_path(in, false, out);
}

int isd_resolve_abs_path_lexically(const char *in, char **out)
{
	return normalize_path(in, true, out);
}

char *isd_xdg_path(const char *var, const char *home_default, const char *sub)
{
	const char *base = getenv(var), *home = getenv("HOME");

	if (base && base[0] == '/')
		return isd_xasprintf("%s/%s", base, sub);
	return isd_xasprintf("%s/%s/%s", home && home[0] == '/' ? home : "", home_default, sub);
}

const char *isd_runtime_dir(void)
{
	const char *run = getenv("XDG_RUNTIME_DIR");

	return run && run[0] == '/' ? run : NULL;
}

int isd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int isd_read_file_at(int dirfd, const char *path, char **out, size_t *len_out)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	return isd_read_fd(fd, out, len_out);
}

int isd_read_fd(int fd, char **out, size_t *len_out)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		ssize_t n;
		/* Every file isd reads whole is configuration; a device such as
		 * /dev/zero given as --env-file must end in an error, not in
		 * memory exhaustion. */
		if (len >= ISD_READ_FILE_MAX)
			return -EFBIG;
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = isd_xrealloc(buf, cap);
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (!buf)
		buf = isd_xcalloc(1, 1);
	buf[len] = '\0';
	if (len_out)
		*len_out = len;
	*out = isd_steal_ptr(buf);
	return 0;
}

int isd_write_file_at(int dirfd, const char *path, const char *content, int flags, unsigned mode)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, mode);

	if (fd < 0)
		return -errno;
	return isd_write_all(fd, content, strlen(content));
}

bool isd_running_uninstalled(void)
{
#ifdef ISD_BUILD_ROOT
	static int cached = -1;

	if (cached < 0) {
		char *exe = realpath("/proc/self/exe", NULL);
		size_t n = strlen(ISD_BUILD_ROOT);

		cached = exe && !strncmp(exe, ISD_BUILD_ROOT, n) && exe[n] == '/';
		free(exe);
	}
	return cached;
#else
	return false;
#endif
}

void isd_print_named_files(char *const *dirs, const char *suffix, int width)
{
	size_t slen = strlen(suffix);
	char **seen = NULL;

	for (size_t i = 0; dirs && dirs[i]; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;

		if (!d)
			continue;
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name);
			bool shadowed = false;
			char *name;

			if (n <= slen || strcmp(de->d_name + n - slen, suffix) || de->d_name[0] == '.')
				continue;
			name = isd_xstrdup(de->d_name);
			name[n - slen] = '\0';
			/* A name an earlier directory already has is never
			 * loaded by that name: it is left out. */
			for (size_t k = 0; seen && seen[k]; k++)
				shadowed |= !strcmp(seen[k], name);
			if (shadowed) {
				free(name);
				continue;
			}
			printf("%-*s %s/%s\n", width, name, dirs[i], de->d_name);
			isd_strv_push(&seen, name);
		}
		closedir(d);
	}
	isd_strv_free(seen);
}

int isd_error_prefix(int r, const char *fmt, ...)
{
	_cleanup_free_ char *msg = isd_xstrdup(isd_error_message()), *prefix = NULL, *full = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&prefix, fmt, ap) < 0)
		prefix = NULL;
	va_end(ap);
	full = isd_xasprintf("%s%s", prefix ? prefix : "", msg);
	return isd_error_raw(r, full);
}

uint64_t isd_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

const char *isd_format_size(uint64_t bytes, char *buf, size_t len, unsigned flags)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	bool compact = flags & ISD_SIZE_COMPACT;
	size_t u = 0;
	double v;

	if (bytes < 1024) {
		snprintf(buf, len, compact ? "%" PRIu64 "B" : "%" PRIu64 " B", bytes);
		return buf;
	}
	v = (double)bytes / 1024.0;
	while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	/* Round like printf would but never show "1024.0 MiB" for 1 GiB - 1. */
	if (v >= 1023.95 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	if (compact)
		snprintf(buf, len, "%.1f%c", v, units[u][0]);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

void isd_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		*cap = (*len + n + 1) * 2;
		*buf = isd_xrealloc(*buf, *cap);
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
}

int isd_send_with_fd(int sock, const void *data, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&control, 0, sizeof(control));
		mh.msg_control = control.buf;
		mh.msg_controllen = sizeof(control.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

ssize_t isd_recv_with_fd(int sock, void *data, size_t len, int flags, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = data, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			    .msg_controllen = sizeof(control.buf)};
	ssize_t n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);

	*fd = -1;
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)) &&
		    *fd < 0)
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	return n;
}
