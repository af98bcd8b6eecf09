/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: everything the netless proxy parses from the sandbox.
 * The first byte picks the parser (HTTP request head, TLS ClientHello,
 * SOCKS5, DNS query), the rest is the input.  Results must be consistent
 * (lengths within the buffer, names valid) and nothing may read out of
 * bounds, leak or invoke undefined behaviour.
 */
#include "isd/proxy.h"
#include "isd/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_http(const uint8_t *data, size_t size)
{
	/* the parser gets exactly the bytes, no terminator: as from read() */
	char *buf = malloc(size ? size : 1);
	struct isd_http_request req;
	int r;

	memcpy(buf, data, size);
	r = isd_http_parse_request(buf, size, 80, &req);
	if (r > 0) {
		size_t len = 0;
		char *out;

		if ((size_t)r > size || req.header_len != (size_t)r || req.fields_start > req.header_len)
			abort();
		/* the path points into the buffer, or is "/" for http://host */
		if (!req.connect && (!req.path || ((req.path < buf || req.path + req.path_len > buf + size) &&
						   (req.path_len != 1 || req.path[0] != '/'))))
			abort();
		if (!req.host[0] || !req.port)
			abort();
		if (!req.connect) {
			size_t hosts = 0;

			out = isd_http_rewrite_request(buf, &req, &len);
			if (len < 4 || memcmp(out + len - 4, "\r\n\r\n", 4))
				abort();
			/* one Host field, and it names the checked target */
			for (const char *l = strchr(out, '\n'); l && l[1]; l = strchr(l + 1, '\n'))
				if (!strncasecmp(l + 1, "host:", 5))
					hosts++;
			if (req.absolute && (hosts != 1 || strncmp(strchr(out, '\n') + 1, "Host: ", 6) ||
					     !strstr(out, req.host)))
				abort();
			free(out);
		}
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[256];
	uint8_t out[2048];

	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		fuzz_http(data + 1, size - 1);
		break;
	case 1:
		if (isd_tls_parse_sni(data + 1, size - 1, name, sizeof(name)) == 1 && name[0] && !isd_host_valid(name))
			abort();
		break;
	case 2: {
		uint16_t port;
		uint8_t cmd;
		bool no_auth;
		int r = isd_socks5_parse_greeting(data + 1, size - 1, &no_auth);
		if (r > (int)(size - 1))
			abort();
		r = isd_socks5_parse_request(data + 1, size - 1, name, sizeof(name), &port, &cmd);
		if (r > (int)(size - 1) || (r > 0 && !port))
			abort();
		break;
	}
	case 3: {
		struct isd_dns_query q;
		if (isd_dns_parse_query(data + 1, size - 1, &q) == 0) {
			int n;
			if (q.question_end > size - 1)
				abort();
			n = isd_dns_build_answer(data + 1, &q, 0, ISD_FAKE_STATIC, out, sizeof(out));
			if (n > (int)sizeof(out))
				abort();
		}
		break;
	}
	}
	return 0;
}
