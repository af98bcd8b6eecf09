/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FROM REGISTRY/REPO[:TAG][@sha256:...]: the OCI distribution protocol
 * (GET /v2/NAME/manifests/REF and /v2/NAME/blobs/DIGEST) into a
 * content-addressed cache:
 *
 *   $XDG_CACHE_HOME/isd/blobs/sha256/HEX    verified blobs (manifests too)
 *   $XDG_CACHE_HOME/isd/blobs/partial/HEX   downloads in progress (resumed)
 *   $XDG_CACHE_HOME/isd/refs/HEX            tag -> manifest digest
 *
 * A blob enters sha256/ only after its digest matched, by rename, so the
 * cache never holds a wrong blob under a right name.  A cached tag is used
 * without any network access unless --pull asks for it to be looked up
 * again; digests never change, so pinned references only fetch what is
 * missing.  Manifests, indexes and configs are then read by oci.c, the
 * same code that reads local layouts.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"
#include "internal.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#define MANIFEST_MAX (4u << 20)
#define ACCEPT_MANIFESTS                                                                                       \
	"application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, "             \
	"application/vnd.docker.distribution.manifest.list.v2+json, "                                       \
	"application/vnd.docker.distribution.manifest.v2+json"

struct pull {
	const struct isd_pull_opts *o;
	struct isd_reg_ref ref;
	char *cache, *blobdir;
	/* The hosts to try, mirrors first; one connection each, made when
	 * the network is first needed. */
	char **hosts;
	struct isd_http **conns;
	size_t current;
};

static void say(const struct pull *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct pull *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	isd_build_vsay(p->o->quiet, fmt, ap);
	va_end(ap);
}

/* Credentials, when a host asks, are looked up under the registry's name
 * ("docker.io", not registry-1.docker.io) and a mirror's under its own. */
static struct isd_http *conn(struct pull *p, size_t i)
{
	if (!p->conns[i]) {
		bool mirror = i + 1 < isd_strv_len(p->hosts);
		p->conns[i] = isd_http_new(p->hosts[i], p->o->ca_file);
		if (p->conns[i])
			isd_http_set_auth_scope(p->conns[i], mirror ? p->hosts[i] : p->ref.registry, p->ref.repo);
	}
	return p->conns[i];
}

/* One request tried on each host in turn, from the one that answered
 * last, until one answers; a mirror that fails falls through to the next
 * and to the registry.  With wrong_is_final, -EBADMSG from try() ends it:
 * a blob whose digest does not match is wrong, not the host's hiccup. */
static int from_each_host(struct pull *p, int (*try)(struct isd_http *h, void *ctx), void *ctx, bool wrong_is_final)
{
	size_t n = isd_strv_len(p->hosts);
	int r = -EIO;

	for (size_t k = 0; k < n; k++) {
		size_t i = (p->current + k) % n;
		struct isd_http *h = conn(p, i);

		if (!h)
			return -ENOMEM;
		r = try(h, ctx);
		if (r == 0)
			p->current = i;
		if (r == 0 || (r == -EBADMSG && wrong_is_final))
			return r;
		if (k + 1 < n)
			isd_warn("%s (trying the next host)", isd_error_message());
	}
	return r;
}

struct get_mem_req {
	const char *path, *accept;
	size_t max;
	char **body;
	size_t *len;
};

static int try_get_mem(struct isd_http *h, void *ctx)
{
	struct get_mem_req *q = ctx;

	return isd_http_get_mem(h, q->path, q->accept, q->max, q->body, q->len, NULL);
}

/* path below /v2/REPO/, from the first host that answers. */
static int get_mem(struct pull *p, const char *what, const char *ref, size_t max, char **body, size_t *len)
{
	_cleanup_free_ char *path = isd_xasprintf("/v2/%s/%s/%s", p->ref.repo, what, ref);
	struct get_mem_req q = {.path = path, .accept = !strcmp(what, "manifests") ? ACCEPT_MANIFESTS : NULL,
				.max = max, .body = body, .len = len};

	return from_each_host(p, try_get_mem, &q, false);
}

static int write_atomic(const char *dir, const char *name, const void *data, size_t len)
{
	_cleanup_free_ char *final = isd_xasprintf("%s/%s", dir, name);

	return isd_replace_file_at(AT_FDCWD, final, data, len, 0600, true);
}

static bool have_blob(const struct pull *p, const char *digest)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/sha256/%s", p->blobdir, digest + 7);
	return access(path, F_OK) == 0;
}

/* A manifest by tag or digest; stored under its digest.  With want set
 * (a pin or an index entry) the body must have that digest. */
static int fetch_manifest(struct pull *p, const char *ref, const char *want, char digest[80])
{
	_cleanup_free_ char *body = NULL, *dir = isd_xasprintf("%s/sha256", p->blobdir);
	struct isd_sha256 *h;
	size_t len;
	int r = get_mem(p, "manifests", ref, MANIFEST_MAX, &body, &len);

	if (r < 0)
		return r;
	h = isd_sha256_new();
	isd_sha256_update(h, body, len);
	isd_sha256_final(h, digest);
	if (want && strcmp(digest, want))
		return isd_error(0, "%s/%s: manifest %s does not match its digest (got %s)", p->ref.registry,
				 p->ref.repo, want, digest), -EBADMSG;
	return write_atomic(dir, digest + 7, body, len);
}

/* Downloads a blob into the cache: resumed from partial/HEX, verified
 * while it streams, published by rename.  A resumed file that does not
 * verify is fetched once more from the start (the kept part may be
 * stale), a fresh one that does not is refused. */
int isd_cache_fetch(struct isd_http *h, const char *blobdir, const char *path, const char *digest, uint64_t limit,
		    bool quiet, const char *label)
{
	_cleanup_free_ char *partial_dir = isd_xasprintf("%s/partial", blobdir);
	_cleanup_free_ char *partial = isd_xasprintf("%s/%s", partial_dir, digest + 7);
	_cleanup_free_ char *final = isd_xasprintf("%s/sha256/%s", blobdir, digest + 7);
	_cleanup_close_ int fd = -1;
	char got[80];
	uint64_t size = 0;
	bool resumed = false;
	int r;

	r = isd_mkdir_p(partial_dir, 0700);
	if (r < 0)
		return isd_error(r, "creating %s", partial_dir);
	fd = open(partial, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return isd_error(-errno, "opening %s", partial);
	/* Another build pulling the same blob: wait for it, then use its
	 * result. */
	if (flock(fd, LOCK_EX) < 0)
		return isd_error(-errno, "locking %s", partial);
	if (access(final, F_OK) == 0)
		return 0;
	for (int attempt = 0; attempt < 2; attempt++) {
		struct stat st;

		if (fstat(fd, &st) == 0 && st.st_size > 0 && !quiet)
			printf("  %s: resuming at byte %lld\n", label, (long long)st.st_size);
		fflush(stdout);
		isd_http_set_progress(h, quiet ? NULL : label);
		r = isd_http_get_file(h, path, fd, limit, got, &size, &resumed);
		isd_http_set_progress(h, NULL);
		if (r < 0)
			return r; /* partial kept: the next build resumes */
		if (!strcmp(got, digest))
			break;
		if (ftruncate(fd, 0) < 0)
			return isd_error(-errno, "truncating %s", partial);
		if (!resumed)
			return isd_error(0, "%s: the download does not match its digest %s (got %s)", label, digest,
					 got), -EBADMSG;
	}
	if (strcmp(got, digest))
		return isd_error(0, "%s: the download does not match its digest %s (got %s)", label, digest, got),
		       -EBADMSG;
	if (fchmod(fd, 0444) < 0 || rename(partial, final) < 0)
		return isd_error(-errno, "storing %s", final);
	if (!quiet)
		printf("  %s: %llu bytes\n", label, (unsigned long long)size);
	return 0;
}

struct blob_req {
	const struct pull *p;
	const char *path, *digest, *label;
	uint64_t limit;
};

static int try_fetch_blob(struct isd_http *h, void *ctx)
{
	const struct blob_req *q = ctx;

	return isd_cache_fetch(h, q->p->blobdir, q->path, q->digest, q->limit, q->p->o->quiet, q->label);
}

static int fetch_blob(struct pull *p, const char *digest, uint64_t limit, const char *label)
{
	_cleanup_free_ char *path = isd_xasprintf("/v2/%s/blobs/%s", p->ref.repo, digest);
	struct blob_req q = {.p = p, .path = path, .digest = digest, .label = label, .limit = limit};

	return from_each_host(p, try_fetch_blob, &q, true);
}

/* oci.c's hook for what is not cached yet. */
static int fetch_missing(void *ctx, const char *digest, bool manifest)
{
	struct pull *p = ctx;
	char got[80];

	if (manifest)
		return fetch_manifest(p, digest, digest, got);
	return fetch_blob(p, digest, MANIFEST_MAX, "config");
}

static char *ref_cache_path(const struct pull *p)
{
	_cleanup_free_ char *name = isd_reg_ref_format(&p->ref);
	struct isd_sha256 *h = isd_sha256_new();
	char hex[80];

	isd_sha256_update(h, name, strlen(name));
	isd_sha256_final(h, hex);
	return isd_xasprintf("%s/refs/%s", p->cache, hex + 7);
}

/* The manifest digest a reference names now. */
static int resolve(struct pull *p, char digest[80])
{
	_cleanup_free_ char *refpath = NULL, *cached = NULL, *refdir = NULL;
	int r;

	if (p->ref.digest) {
		snprintf(digest, 80, "%s", p->ref.digest);
		if (have_blob(p, digest))
			return 0;
		return fetch_manifest(p, p->ref.digest, p->ref.digest, digest);
	}
	refpath = ref_cache_path(p);
	if (!p->o->pull && isd_read_file_at(AT_FDCWD, refpath, &cached, NULL) == 0) {
		cached[strcspn(cached, "\n")] = '\0';
		if (isd_digest_valid(cached) && have_blob(p, cached)) {
			snprintf(digest, 80, "%s", cached);
			return 0;
		}
	}
	r = fetch_manifest(p, p->ref.tag, NULL, digest);
	if (r < 0)
		return r;
	refdir = isd_xasprintf("%s/refs", p->cache);
	r = isd_mkdir_p(refdir, 0700);
	if (r == 0) {
		_cleanup_free_ char *line = isd_xasprintf("%s\n", digest);
		r = write_atomic(refdir, strrchr(refpath, '/') + 1, line, strlen(line));
	}
	return r;
}

static void pull_free(struct pull *p)
{
	for (size_t i = 0; p->hosts && p->hosts[i]; i++)
		isd_http_free(p->conns[i]);
	free(p->conns);
	isd_strv_free(p->hosts);
	free(p->cache);
	free(p->blobdir);
	isd_reg_ref_free(&p->ref);
}

int isd_registry_open(const char *text, const struct isd_pull_opts *o, struct isd_base_image *img)
{
	struct pull p = {.o = o};
	_cleanup_free_ char *name = NULL, *shadir = NULL;
	char digest[80];
	size_t n;
	int r;

	memset(img, 0, sizeof(*img));
	r = isd_reg_ref_parse(text, &p.ref);
	if (r < 0)
		return r;
	p.cache = isd_cache_dir();
	p.blobdir = isd_xasprintf("%s/blobs", p.cache);
	shadir = isd_xasprintf("%s/sha256", p.blobdir);
	r = isd_mkdir_p(shadir, 0700);
	if (r < 0) {
		isd_error(r, "creating the blob cache %s", shadir);
		goto out;
	}
	for (size_t i = 0; p.ref.mirrors && p.ref.mirrors[i]; i++)
		isd_strv_push(&p.hosts, isd_xstrdup(p.ref.mirrors[i]));
	isd_strv_push(&p.hosts, isd_xstrdup(p.ref.host));
	p.conns = isd_xcalloc(isd_strv_len(p.hosts), sizeof(*p.conns));
	name = isd_reg_ref_format(&p.ref);

	r = resolve(&p, digest);
	if (r < 0)
		goto out;
	img->blobdir = isd_xstrdup(p.blobdir);
	img->fetch = fetch_missing;
	img->fetch_ctx = &p;
	r = isd_oci_load_manifest(img, digest);
	if (r < 0)
		goto out;
	n = isd_strv_len(img->layers);
	say(&p, "  %s @ %s", name, img->digest);
	for (size_t i = 0; i < n && r == 0; i++) {
		_cleanup_free_ char *label = isd_xasprintf("layer %zu/%zu %.19s", i + 1, n, img->layers[i]);
		if (have_blob(&p, img->layers[i]))
			continue;
		r = fetch_blob(&p, img->layers[i],
			       img->layer_sizes && img->layer_sizes[i] ? img->layer_sizes[i] : ISD_LAYER_DEFAULT_MAX_BYTES, label);
	}
out:
	img->fetch = NULL;
	img->fetch_ctx = NULL;
	pull_free(&p);
	if (r < 0)
		isd_base_image_free(img);
	return r;
}
