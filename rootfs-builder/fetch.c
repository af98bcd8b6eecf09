/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ADD --checksum=sha256:HEX URL DEST: the file comes from the blob cache
 * ($XDG_CACHE_HOME/isd/blobs/sha256/HEX), downloaded there when missing
 * (resumable, verified while it streams, see registry.c), so a rebuild
 * needs no network and a changed file on the server cannot change the
 * image: it fails the build instead.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"
#include "internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

/* "host[:port]" of an http(s) URL; URLs with credentials are refused
 * (they would end up in the Containerfile and in progress output). */
int isd_url_host(const char *url, char **host)
{
	const char *p = strstr(url, "://");
	size_t n;

	if (!p)
		return -EINVAL;
	p += 3;
	n = strcspn(p, "/?#");
	if (n == 0 || memchr(p, '@', n))
		return -EINVAL;
	*host = strndup(p, n);
	return *host ? 0 : -ENOMEM;
}

char *isd_url_basename(const char *url)
{
	const char *p = strstr(url, "://"), *end, *slash;

	if (!p)
		return NULL;
	p += 3;
	end = p + strcspn(p, "?#");
	slash = memrchr(p, '/', (size_t)(end - p));
	if (!slash || slash + 1 >= end)
		return NULL;
	{
		char *name = strndup(slash + 1, (size_t)(end - slash - 1));
		if (name && (!strcmp(name, ".") || !strcmp(name, ".."))) {
			free(name);
			return NULL;
		}
		return name;
	}
}

int isd_fetch_url(const char *url, const char *checksum, const char *ca_file, bool quiet, char **blobdir_out)
{
	_cleanup_free_ char *cache = isd_cache_dir(), *host = NULL, *shadir = NULL, *blob = NULL, *blobdir = NULL;
	_cleanup_free_ char *label = NULL;
	struct isd_http *h;
	int r;

	if (!isd_digest_valid(checksum))
		return isd_error(0, "ADD %s: --checksum=%s is not sha256:<64 hex digits>", url, checksum);
	if (isd_url_host(url, &host) < 0)
		return isd_error(0, "ADD %s: not a URL isd can fetch (https://HOST/PATH, no user:password@)", url);
	if (!strncmp(url, "http://", 7) && !isd_reg_host_insecure(host)) {
		r = isd_error(0, "ADD %s: plain http is only used for loopback and 'insecure' hosts", url);
		isd_error_hint("fix: use https://, or add 'insecure %s' to %s", host, isd_registries_conf_path());
		return r;
	}
	blobdir = isd_xasprintf("%s/blobs", cache);
	shadir = isd_xasprintf("%s/sha256", blobdir);
	blob = isd_xasprintf("%s/%s", shadir, checksum + 7);
	r = isd_mkdir_p(shadir, 0700);
	if (r < 0)
		return isd_error(r, "creating the blob cache %s", shadir);
	if (access(blob, F_OK) < 0) {
		h = isd_http_new(host, ca_file);
		if (!h)
			return -ENOMEM;
		label = isd_xasprintf("ADD %s", url);
		r = isd_cache_fetch(h, blobdir, url, checksum, ISD_LAYER_DEFAULT_MAX_BYTES, quiet, label);
		isd_http_free(h);
		if (r < 0)
			return r;
	}
	*blobdir_out = isd_steal_ptr(blobdir);
	return 0;
}
