/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one error idiom of isd: a function returns 0 (or a non-negative
 * result) on success and -errno on failure.  The place that fails records
 * one human sentence with isd_error() ("what was attempted: why"), so that
 * callers only propagate the number.  main() (or, inside the sandbox, the
 * child's report to the parent) prints the recorded message once.
 */
#ifndef ISD_UTIL_H
#define ISD_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define ISD_ERROR_MAX 1024

/* Exit codes shared with Docker's conventions. */
#define ISD_EXIT_FAILURE 125 /* isd itself failed */
#define ISD_EXIT_CANNOT_EXEC 126
#define ISD_EXIT_NOT_FOUND 127

/* Record "<what>: <strerror(-err)>" and return err (a negative errno).
 * If err is 0 only the formatted text is recorded (for input errors that
 * have no errno), and -EINVAL is returned. */
int isd_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record a message verbatim (already complete); returns err. */
int isd_error_raw(int err, const char *msg);
/* Append " (HINT)" to the recorded message: how to fix it ("fix: ...") or
 * what else the reader needs to know. */
void isd_error_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The recorded message, or "" when none. */
const char *isd_error_message(void);
void isd_error_clear(void);
/* Print "isd: <message>" to stderr (the fallback text when none recorded). */
void isd_error_print(const char *fallback);

void isd_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- cleanup helpers (systemd/crun style) --- */
static inline void isd_freep(void *p)
{
	free(*(void **)p);
}
static inline void isd_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}
void isd_strv_freep(char ***strv);

#define _cleanup_free_ __attribute__((cleanup(isd_freep)))
#define _cleanup_close_ __attribute__((cleanup(isd_closep)))
#define _cleanup_strv_ __attribute__((cleanup(isd_strv_freep)))

/* Hand ownership out of a cleanup variable. */
#define isd_steal_ptr(p)                                                       \
	({                                                                     \
		__typeof__(p) _tmp = (p);                                      \
		(p) = NULL;                                                    \
		_tmp;                                                          \
	})
#define isd_steal_fd(fd)                                                       \
	({                                                                     \
		int _tmp = (fd);                                               \
		(fd) = -1;                                                     \
		_tmp;                                                          \
	})

/* Allocation failure is not recoverable in a short-lived launcher. */
void *isd_xmalloc(size_t n);
void *isd_xcalloc(size_t n, size_t m);
void *isd_xrealloc(void *p, size_t n);
char *isd_xstrdup(const char *s);
char *isd_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* NULL-terminated string vectors. */
/* n bytes of s at *buf + *len, the buffer grown (doubling) as needed and
 * kept NUL-terminated; *buf NULL and *len, *cap 0 to start. */
void isd_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n);

size_t isd_strv_len(char *const *strv);
void isd_strv_push(char ***strv, char *owned);
void isd_strv_free(char **strv);
char **isd_strv_copy(char *const *strv);

/* Parsers shared by the command line, profiles and tests (pure logic). */
/* Docker's size syntax: N[b|k|m|g|t] with optional "b"/"ib" ("512m", "2g",
 * "100MiB"); binary multiples.  Rejects 0-less, negative and overflowing
 * values. */
int isd_parse_size(const char *s, uint64_t *out);
/* The other way, for people: "4.0 GiB", "512.0 MiB", "100 B"; with
 * ISD_SIZE_COMPACT for table columns: "4.0G", "512.0M", "100B".  Returns
 * buf. */
#define ISD_SIZE_COMPACT 1u
const char *isd_format_size(uint64_t bytes, char *buf, size_t len, unsigned flags);
/* FNV-1a 64, chained from ISD_FNV1A_INIT: the checksum and file-name key
 * of isd's own caches (damage and key mix-ups, not an adversary: a cache
 * is trusted for its owner and mode, never for its sum). */
#define ISD_FNV1A_INIT 0xcbf29ce484222325ULL
uint64_t isd_fnv1a(uint64_t h, const void *data, size_t len);
int isd_parse_uint32(const char *s, uint32_t *out);
int isd_parse_octal_mode(const char *s, uint32_t *out);
/* Collapse "//", "/./" and trailing "/" in an absolute path; refuses ".."
 * components (a destination must say where it is without tricks). */
int isd_normalize_abs_path(const char *in, char **out);
/* The same, but ".." removes the component before it (never above "/"):
 * for paths that name what the user means, not a mount destination. */
int isd_resolve_abs_path_lexically(const char *in, char **out);

/* For `isd profile list` and `isd seccomp list`: every NAME+suffix in dirs,
 * searched in order, one line each; later ones that an earlier directory
 * hides are marked "(shadowed)". */
void isd_print_named_files(char *const *dirs, const char *suffix, int width);

/* An XDG base directory joined with sub: $VAR/sub when VAR holds an
 * absolute path, else $HOME/home_default/sub ("/" standing in for a HOME
 * that is not absolute: a place that fails visibly, never a relative one).
 * isd_xdg_path("XDG_STATE_HOME", ".local/state", "isd/sessions"). */
char *isd_xdg_path(const char *var, const char *home_default, const char *sub);
/* $XDG_RUNTIME_DIR when it is an absolute path, else NULL: the runtime
 * directory has no fallback (the XDG spec leaves it to the caller), and a
 * relative one would name a place below the working directory.  Nothing is
 * allocated (the landlock tier asks in the child). */
const char *isd_runtime_dir(void);

/* True when this binary runs from its meson build tree (not installed):
 * only then may data files be looked up in the source tree. */
bool isd_running_uninstalled(void);

/* Write all of buf (retrying on EINTR / short writes). */
int isd_write_all(int fd, const void *buf, size_t len);

/* One message of len bytes on a unix socket, with descriptor fd beside it
 * (SCM_RIGHTS) when fd >= 0; MSG_NOSIGNAL.  Only async-signal-safe calls:
 * a forked child may use it.  Returns 0 or -errno. */
int isd_send_with_fd(int sock, const void *data, size_t len, int fd);
/* recvmsg of one such message (flags | MSG_CMSG_CLOEXEC); *fd gets the
 * descriptor that came with it, or -1.  Returns the bytes read, 0 at
 * EOF, or -errno (-EINTR and -EAGAIN too: the caller decides). */
ssize_t isd_recv_with_fd(int sock, void *data, size_t len, int flags, int *fd);
/* Read a small file entirely (NUL-terminated); more than
 * ISD_READ_FILE_MAX bytes is -EFBIG. */
#define ISD_READ_FILE_MAX (16 << 20)
int isd_read_file_at(int dirfd, const char *path, char **out, size_t *len_out);
int isd_read_fd(int fd, char **out, size_t *len_out);
int isd_write_file_at(int dirfd, const char *path, const char *content, int flags, unsigned mode);

/* Puts "prefix" (formatted) before the recorded error message; returns r. */
int isd_error_prefix(int r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
