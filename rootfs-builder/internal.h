/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers shared by the files of rootfs-builder/ only. */
#ifndef ISD_BUILD_INTERNAL_H
#define ISD_BUILD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "isd/fsutil.h"

/* "sha256:HEX" of a file, or -errno. */
int isd_sha256_fd(int fd, char out[80]);
/* Incremental sha256 (OpenSSL EVP). */
struct isd_sha256;
struct isd_sha256 *isd_sha256_new(void);
void isd_sha256_update(struct isd_sha256 *h, const void *data, size_t len);
/* Writes "sha256:HEX" and frees h. */
void isd_sha256_final(struct isd_sha256 *h, char out[80]);

/* COPY/ADD sources: cleaned context-relative names, wildcards expanded;
 * refused when they leave the context. */
int isd_copy_expand_sources(int ctxfd, char *const *sources, char ***out);
/* Feeds names, modes, contents and link targets of the sources to h. */
int isd_copy_hash(int ctxfd, char *const *expanded, struct isd_sha256 *h);
/* Copies the sources to dest (absolute in the image) as root of the
 * image's user namespace, chrooted into rootfs. */
struct isd_idmap;
int isd_copy_run(const char *rootfs, const struct isd_idmap *map, int ctxfd, char *const *expanded,
		 const char *dest, bool dest_is_dir, const char *chown, const char *chmod);

/* "sha256:" and 64 lower-case hex digits. */
bool isd_digest_valid(const char *d);

/* registry-conf.c: image references, aliases, mirrors, insecure hosts. */
struct isd_reg_ref {
	char *registry; /* as named: "registry.fedoraproject.org", "127.0.0.1:5000", "docker.io" */
	char *host;     /* where its API is (docker.io: registry-1.docker.io) */
	char *repo;     /* "fedora", "library/busybox" */
	char *tag;      /* NULL with only a digest */
	char *digest;   /* "@sha256:..." pin, or NULL */
	char **mirrors; /* hosts tried first */
	bool insecure;  /* plain http allowed (loopback or configured) */
};
int isd_reg_ref_parse(const char *text, struct isd_reg_ref *ref);
void isd_reg_ref_free(struct isd_reg_ref *ref);
char *isd_reg_ref_format(const struct isd_reg_ref *ref);
bool isd_host_is_loopback(const char *hostport);
bool isd_reg_host_insecure(const char *hostport);
char *isd_registries_conf_path(void);
char *isd_cache_dir(void);

/* http.c: libcurl requests to one host (registry token flow included). */
struct isd_http;
struct isd_http *isd_http_new(const char *host, const char *ca_file);
void isd_http_free(struct isd_http *h);
/* GET path (or a full URL) into memory, at most max bytes. */
int isd_http_get_mem(struct isd_http *h, const char *path, const char *accept, size_t max, char **body,
		     size_t *len, char **content_type);
/* GET path (or a full URL) into fd, resuming after what fd holds; the
 * sha256 of the whole file and its size come back.  limit: 0 or the most
 * bytes the file may reach. */
int isd_http_get_file(struct isd_http *h, const char *path, int fd, uint64_t limit, char digest[80],
		      uint64_t *size, bool *resumed);

/* auth.c: credentials of auth.json / docker's config.json. */
struct isd_reg_auth {
	char *user, *password;
	char *file; /* where they came from, for messages */
};
/* The files searched, in order. */
char **isd_reg_auth_files(void);
/* They as one "a, b, c" for messages. */
char *isd_reg_auth_files_text(void);
/* The credentials for registry (as named: "docker.io", "127.0.0.1:5000")
 * and repo (NULL: the registry's own); 0 with auth->user NULL when no file
 * has any, -errno for a file that cannot be read or parsed. */
int isd_reg_auth_find(const char *registry, const char *repo, struct isd_reg_auth *auth);
void isd_reg_auth_free(struct isd_reg_auth *auth);
char *isd_base64_decode(const char *in, size_t *len_out);

/* http.c: whose credentials to use when the host asks (registries only). */
void isd_http_set_auth_scope(struct isd_http *h, const char *registry, const char *repo);
/* Progress on stderr while downloads stream (a terminal only). */
void isd_http_set_progress(struct isd_http *h, const char *label);

/* progress.c: a download's progress line on stderr, a terminal only
 * (_new gives NULL otherwise, and the others accept NULL). */
struct isd_progress;
bool isd_progress_wanted(void);
struct isd_progress *isd_progress_new(const char *label, uint64_t already);
void isd_progress_update(struct isd_progress *p, uint64_t done, uint64_t total);
void isd_progress_end(struct isd_progress *p);

/* registry.c: a download into the blob cache blobdir/sha256/HEX, resumed
 * from blobdir/partial/HEX, published only when its digest matches. */
int isd_cache_fetch(struct isd_http *h, const char *blobdir, const char *path, const char *digest, uint64_t limit,
		    bool quiet, const char *label);

/* fetch.c: ADD --checksum URL.  The file is blobdir/sha256/HEX afterwards. */
int isd_fetch_url(const char *url, const char *checksum, const char *ca_file, bool quiet, char **blobdir_out);
/* "host[:port]" of an http(s) URL; -EINVAL for URLs with user:password@. */
int isd_url_host(const char *url, char **host);
/* The last name of a URL's path (no query), or NULL. */
char *isd_url_basename(const char *url);

/* oci.c: the layout at path (or the oci-archive file, unpacked), the image
 * named want (NULL: the only one); ref names it in messages. */
struct isd_base_image;
int isd_oci_open_path(const char *ref, const char *path, bool archive, const char *want,
		      struct isd_base_image *img);

/* registry-conf.c: the last `fedora-release-url URL` directive (*url NULL
 * when there is none). */
int isd_fedora_release_url(char **url);


/* A line of progress on stdout (build.c), unless quiet. */
void isd_build_vsay(bool quiet, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif
