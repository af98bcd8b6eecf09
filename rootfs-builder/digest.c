/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sha256 digests of blobs, layers and context files (OpenSSL's EVP). */
#define _GNU_SOURCE
#include "isd/util.h"
#include "internal.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

struct isd_sha256 {
	EVP_MD_CTX *ctx;
};

struct isd_sha256 *isd_sha256_new(void)
{
	struct isd_sha256 *h = isd_xcalloc(1, sizeof(*h));

	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
		fputs("isd: OpenSSL cannot compute sha256\n", stderr);
		abort();
	}
	return h;
}

void isd_sha256_update(struct isd_sha256 *h, const void *data, size_t len)
{
	EVP_DigestUpdate(h->ctx, data, len);
}

void isd_sha256_final(struct isd_sha256 *h, char out[80])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	size_t len;

	EVP_DigestFinal_ex(h->ctx, md, &n);
	EVP_MD_CTX_free(h->ctx);
	free(h);
	len = (size_t)snprintf(out, 80, "sha256:");
	for (unsigned i = 0; i < n && len + 3 < 80; i++)
		len += (size_t)snprintf(out + len, 80 - len, "%02x", md[i]);
}

int isd_sha256_fd(int fd, char out[80])
{
	struct isd_sha256 *h = isd_sha256_new();
	char buf[65536];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int r = -errno;
			isd_sha256_final(h, out);
			return r;
		}
		if (n == 0)
			break;
		isd_sha256_update(h, buf, (size_t)n);
	}
	isd_sha256_final(h, out);
	return 0;
}

