/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The byte-level parsers of the proxy: HTTP/1.x request heads, the TLS
 * ClientHello's server_name, SOCKS5 and DNS queries.  Everything here reads
 * untrusted bytes from the sandbox: every length is checked against the
 * buffer, nothing allocates except the rewritten request, and all of it is
 * fuzzed (tests/fuzz/fuzz-proxy-request.c).
 */
#define _GNU_SOURCE
#include "isd/proxy.h"
#include "isd/util.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- names and addresses ---- */

bool isd_host_valid(const char *name)
{
	size_t len = strlen(name), label = 0;

	if (len == 0 || len > 253)
		return false;
	for (const char *p = name; *p; p++) {
		if (*p == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0;
}

bool isd_host_normalize(char *name)
{
	size_t len = strlen(name);

	if (len > 1 && name[len - 1] == '.')
		name[len - 1] = '\0';
	for (char *p = name; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return isd_host_valid(name);
}

int isd_addr_parse(const char *text, struct isd_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, text, &a->v4) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, text, &a->v6) == 1) {
		a->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

void isd_addr_format(const struct isd_addr *a, char *buf, size_t len)
{
	if (!a->family || !inet_ntop(a->family, &a->v4, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

bool isd_addr_equal(const struct isd_addr *a, const struct isd_addr *b)
{
	if (a->family != b->family)
		return false;
	if (a->family == AF_INET)
		return a->v4.s_addr == b->v4.s_addr;
	return !memcmp(&a->v6, &b->v6, sizeof(a->v6));
}

static enum isd_addr_class classify_v4(uint32_t x)
{
	if ((x >> 24) == 127)
		return ISD_ADDR_LOOPBACK;
	if ((x >> 16) == 0xa9fe) /* 169.254/16 */
		return ISD_ADDR_LINK_LOCAL;
	if ((x >> 24) == 10 || (x >> 20) == 0xac1 || (x >> 16) == 0xc0a8 || (x >> 22) == (100u << 2 | 1))
		return ISD_ADDR_PRIVATE; /* 10/8, 172.16/12, 192.168/16, 100.64/10 */
	if ((x >> 24) == 0 || (x >> 28) >= 0xe || (x >> 17) == (0xc612u >> 1) || (x >> 8) == 0xc00000)
		return ISD_ADDR_SPECIAL; /* 0/8, multicast+reserved, 198.18/15, 192.0.0/24 */
	return ISD_ADDR_PUBLIC;
}

enum isd_addr_class isd_addr_classify(const struct isd_addr *a)
{
	const uint8_t *b = a->v6.s6_addr;

	if (a->family == AF_INET)
		return classify_v4(ntohl(a->v4.s_addr));
	if (IN6_IS_ADDR_UNSPECIFIED(&a->v6))
		return ISD_ADDR_SPECIAL;
	if (IN6_IS_ADDR_LOOPBACK(&a->v6))
		return ISD_ADDR_LOOPBACK;
	if (IN6_IS_ADDR_V4MAPPED(&a->v6) || IN6_IS_ADDR_V4COMPAT(&a->v6)) {
		uint32_t x;
		memcpy(&x, b + 12, 4);
		return classify_v4(ntohl(x));
	}
	if (IN6_IS_ADDR_LINKLOCAL(&a->v6))
		return ISD_ADDR_LINK_LOCAL;
	if ((b[0] & 0xfe) == 0xfc || IN6_IS_ADDR_SITELOCAL(&a->v6))
		return ISD_ADDR_PRIVATE;
	if (IN6_IS_ADDR_MULTICAST(&a->v6))
		return ISD_ADDR_SPECIAL;
	/* NAT64 (64:ff9b::/96) hides an IPv4 address the checks must see. */
	if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) {
		uint32_t x;
		memcpy(&x, b + 12, 4);
		return classify_v4(ntohl(x));
	}
	return ISD_ADDR_PUBLIC;
}

const char *isd_addr_class_name(enum isd_addr_class c)
{
	switch (c) {
	case ISD_ADDR_PUBLIC:
		return "public";
	case ISD_ADDR_LOOPBACK:
		return "loopback";
	case ISD_ADDR_LINK_LOCAL:
		return "link-local";
	case ISD_ADDR_PRIVATE:
		return "private";
	case ISD_ADDR_SPECIAL:
		return "special-purpose";
	}
	return "?";
}

/* ---- HTTP ---- */

/* RFC 9110 tchar. */
static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Visible ASCII without space: what a request target may contain. */
static bool is_target_char(char c)
{
	return c > 0x20 && c < 0x7f;
}

static int parse_port_n(const char *s, size_t n, uint16_t *out)
{
	uint32_t v = 0;

	if (n == 0 || n > 5)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

/* "host", "host:port", "[v6]:port" of length n into req->host/port. */
static int parse_authority(const char *s, size_t n, uint16_t default_port, struct isd_http_request *req)
{
	const char *host = s, *colon = NULL;
	size_t hlen;
	struct isd_addr a;

	if (n == 0)
		return -EINVAL;
	if (s[0] == '[') {
		const char *end = memchr(s, ']', n);
		if (!end)
			return -EINVAL;
		host = s + 1;
		hlen = (size_t)(end - host);
		if (end + 1 < s + n) {
			if (end[1] != ':')
				return -EINVAL;
			colon = end + 1;
		}
	} else {
		colon = memchr(s, ':', n);
		hlen = colon ? (size_t)(colon - s) : n;
	}
	if (hlen == 0 || hlen >= sizeof(req->host))
		return -EINVAL;
	if (memchr(host, '@', hlen))
		return -EINVAL; /* userinfo: refuse rather than guess */
	memcpy(req->host, host, hlen);
	req->host[hlen] = '\0';
	if (colon) {
		if (parse_port_n(colon + 1, (size_t)(s + n - colon - 1), &req->port) < 0)
			return -EINVAL;
	} else {
		req->port = default_port;
	}
	if (s[0] == '[')
		return isd_addr_parse(req->host, &a) == 0 && a.family == AF_INET6 ? 0 : -EINVAL;
	if (isd_addr_parse(req->host, &a) == 0)
		return a.family == AF_INET ? 0 : -EINVAL;
	return isd_host_normalize(req->host) ? 0 : -EINVAL;
}

/* Finds the end of the head: returns the offset after the empty line, 0
 * when not there yet. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* One line [p, end of line): returns its length without CR LF, sets *next. */
static size_t line_at(const char *buf, size_t len, size_t p, size_t *next)
{
	const char *nl = memchr(buf + p, '\n', len - p);
	size_t l = (size_t)(nl - (buf + p));

	*next = p + l + 1;
	if (l > 0 && buf[p + l - 1] == '\r')
		l--;
	return l;
}

int isd_http_parse_request(const char *buf, size_t len, uint16_t default_port, struct isd_http_request *req)
{
	size_t end, p, l, next, fields = 0;
	const char *sp1, *sp2, *target;
	size_t tlen;
	bool have_host = false;

	memset(req, 0, sizeof(*req));
	end = head_end(buf, len);
	if (!end) {
		const char *nl = memchr(buf, '\n', len);
		if ((!nl && len > ISD_HTTP_MAX_LINE) || len > ISD_HTTP_MAX_HEADER)
			return -E2BIG;
		/* A request line that is already impossible need not wait. */
		for (size_t i = 0; i < len && buf[i] != ' '; i++)
			if (!is_tchar(buf[i]))
				return -EINVAL;
		return 0;
	}
	if (end > ISD_HTTP_MAX_HEADER)
		return -E2BIG;
	req->header_len = end;

	/* request-line = method SP request-target SP HTTP-version */
	l = line_at(buf, end, 0, &next);
	if (l > ISD_HTTP_MAX_LINE)
		return -E2BIG;
	sp1 = memchr(buf, ' ', l);
	if (!sp1 || sp1 == buf || (size_t)(sp1 - buf) >= sizeof(req->method))
		return -EINVAL;
	for (const char *c = buf; c < sp1; c++)
		if (!is_tchar(*c))
			return -EINVAL;
	memcpy(req->method, buf, (size_t)(sp1 - buf));
	target = sp1 + 1;
	sp2 = memchr(target, ' ', l - (size_t)(target - buf));
	if (!sp2 || sp2 == target)
		return -EINVAL;
	tlen = (size_t)(sp2 - target);
	for (size_t i = 0; i < tlen; i++)
		if (!is_target_char(target[i]))
			return -EINVAL;
	if (l - (size_t)(sp2 + 1 - buf) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return -EINVAL;
	req->version_minor = sp2[8] - '0';

	if (!strcmp(req->method, "CONNECT")) {
		req->connect = true;
		/* authority-form needs the port */
		if (!memchr(target, ':', tlen) || parse_authority(target, tlen, 0, req) < 0)
			return -EINVAL;
	} else if (tlen > 7 && !strncasecmp(target, "http://", 7)) {
		const char *auth = target + 7, *slash;
		size_t alen;

		req->absolute = true;
		slash = memchr(auth, '/', tlen - 7);
		if (!slash)
			slash = memchr(auth, '?', tlen - 7);
		alen = slash ? (size_t)(slash - auth) : tlen - 7;
		if (parse_authority(auth, alen, 80, req) < 0)
			return -EINVAL;
		req->path = slash ? slash : "/";
		req->path_len = slash ? (size_t)(target + tlen - slash) : 1;
	} else if (tlen > 8 && !strncasecmp(target, "https://", 8)) {
		return -ENOTSUP;
	} else if (target[0] == '/' || (tlen == 1 && target[0] == '*')) {
		req->path = target;
		req->path_len = tlen;
	} else {
		return -EINVAL;
	}

	/* header fields: name ":" OWS value OWS; no obs-fold, no controls */
	req->fields_start = next;
	for (p = next; p < end;) {
		const char *f = buf + p, *colon;
		size_t fl = line_at(buf, end, p, &next);

		if (fl == 0)
			break;
		if (++fields > ISD_HTTP_MAX_FIELDS)
			return -E2BIG;
		if (fl > ISD_HTTP_MAX_LINE)
			return -E2BIG;
		colon = memchr(f, ':', fl);
		if (!colon || colon == f)
			return -EINVAL;
		for (const char *c = f; c < colon; c++)
			if (!is_tchar(*c))
				return -EINVAL;
		for (const char *c = colon + 1; c < f + fl; c++)
			if ((unsigned char)*c < 0x20 && *c != '\t')
				return -EINVAL;
		if (colon - f == 4 && !strncasecmp(f, "host", 4)) {
			const char *v = colon + 1, *ve = f + fl;
			struct isd_http_request hreq;

			if (have_host)
				return -EINVAL; /* two Host fields: ambiguous (RFC 9112 3.2) */
			have_host = true;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if (!req->connect && !req->absolute) {
				memset(&hreq, 0, sizeof(hreq));
				if (parse_authority(v, (size_t)(ve - v), default_port, &hreq) < 0)
					return -EINVAL;
				memcpy(req->host, hreq.host, sizeof(req->host));
				req->port = hreq.port;
			}
		}
		p = next;
	}
	if (!req->connect && !req->absolute && !have_host)
		return -EINVAL; /* origin-form without Host: nowhere to go */
	return (int)end;
}

static bool field_is(const char *f, size_t namelen, const char *name)
{
	return strlen(name) == namelen && !strncasecmp(f, name, namelen);
}

char *isd_http_rewrite_request(const char *buf, const struct isd_http_request *req, size_t *out_len)
{
	size_t cap = req->header_len + sizeof(req->host) + 64, n = 0, p, next;
	char *out = isd_xmalloc(cap), port[8] = "";
	bool v6 = strchr(req->host, ':');

	/* Host names the target isd checked and connects to, whatever the
	 * client wrote there (RFC 9112 3.2.2): a virtual host the allowlist
	 * never saw is not reachable through an allowed server. */
	if (req->port != 80)
		snprintf(port, sizeof(port), ":%u", req->port);
	n = (size_t)snprintf(out, cap, "%s %.*s HTTP/1.%d\r\nHost: %s%s%s%s\r\n", req->method, (int)req->path_len,
			     req->path, req->version_minor, v6 ? "[" : "", req->host, v6 ? "]" : "", port);
	for (p = req->fields_start; p < req->header_len; p = next) {
		const char *f = buf + p, *colon;
		size_t fl = line_at(buf, req->header_len, p, &next), nl;

		if (fl == 0)
			break;
		colon = memchr(f, ':', fl);
		nl = (size_t)(colon - f);
		/* hop-by-hop: isd closes after one exchange, so the upstream
		 * never keeps a connection the next request could misuse */
		if (field_is(f, nl, "host") || field_is(f, nl, "connection") || field_is(f, nl, "keep-alive") ||
		    field_is(f, nl, "proxy-connection") || field_is(f, nl, "proxy-authorization") ||
		    field_is(f, nl, "proxy-authenticate") || field_is(f, nl, "upgrade") || field_is(f, nl, "te"))
			continue;
		if (n + fl + 2 >= cap) {
			cap = (n + fl + 2) * 2;
			out = isd_xrealloc(out, cap);
		}
		memcpy(out + n, f, fl);
		n += fl;
		out[n++] = '\r';
		out[n++] = '\n';
	}
	if (n + 24 >= cap)
		out = isd_xrealloc(out, n + 24);
	memcpy(out + n, "Connection: close\r\n\r\n", 21);
	n += 21;
	out[n] = '\0'; /* for callers that print it */
	*out_len = n;
	return out;
}

/* ---- TLS ClientHello ---- */

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

int isd_tls_parse_sni(const uint8_t *buf, size_t len, char *sni, size_t sni_len)
{
	size_t rec_len, hs_len, p, end;

	sni[0] = '\0';
	if (len < 1)
		return 0;
	if (buf[0] != 0x16) /* handshake record */
		return -EINVAL;
	if (len < 5)
		return 0;
	if (buf[1] != 3)
		return -EINVAL;
	rec_len = be16(buf + 3);
	if (rec_len < 4 || rec_len > 16384)
		return -EINVAL;
	if (len < 5 + 4)
		return 0;
	if (buf[5] != 1) /* client_hello */
		return -EINVAL;
	hs_len = (size_t)buf[6] << 16 | (size_t)buf[7] << 8 | buf[8];
	/* A hello spread over several records is legal but rare (huge
	 * post-quantum key shares still fit one 16 KiB record). */
	if (hs_len + 4 > rec_len)
		return -EINVAL;
	if (len < 5 + rec_len)
		return 0;
	p = 9;
	end = 9 + hs_len;
	/* version(2) random(32) */
	if (p + 34 > end)
		return -EINVAL;
	p += 34;
	/* session_id */
	if (p + 1 > end || p + 1 + buf[p] > end)
		return -EINVAL;
	p += 1 + buf[p];
	/* cipher_suites */
	if (p + 2 > end || p + 2 + be16(buf + p) > end)
		return -EINVAL;
	p += 2 + be16(buf + p);
	/* compression_methods */
	if (p + 1 > end || p + 1 + buf[p] > end)
		return -EINVAL;
	p += 1 + buf[p];
	if (p == end)
		return 1; /* no extensions */
	if (p + 2 > end || p + 2 + be16(buf + p) > end)
		return -EINVAL;
	end = p + 2 + be16(buf + p);
	p += 2;
	while (p + 4 <= end) {
		uint16_t type = be16(buf + p), elen = be16(buf + p + 2);
		size_t q, qend;

		p += 4;
		if (p + elen > end)
			return -EINVAL;
		if (type != 0) {
			p += elen;
			continue;
		}
		/* server_name_list */
		if (elen < 2 || be16(buf + p) + 2u > elen)
			return -EINVAL;
		qend = p + 2 + be16(buf + p);
		for (q = p + 2; q + 3 <= qend;) {
			uint8_t ntype = buf[q];
			uint16_t nlen = be16(buf + q + 1);

			q += 3;
			if (q + nlen > qend)
				return -EINVAL;
			if (ntype == 0) {
				if (nlen == 0 || nlen >= sni_len || memchr(buf + q, 0, nlen))
					return -EINVAL;
				memcpy(sni, buf + q, nlen);
				sni[nlen] = '\0';
				if (!isd_host_normalize(sni))
					return -EINVAL;
				return 1;
			}
			q += nlen;
		}
		return -EINVAL;
	}
	return p == end ? 1 : -EINVAL;
}

/* ---- SOCKS5 (RFC 1928) ---- */

int isd_socks5_parse_greeting(const uint8_t *buf, size_t len, bool *no_auth_offered)
{
	*no_auth_offered = false;
	if (len < 2)
		return 0;
	if (buf[0] != 5 || buf[1] == 0)
		return -EINVAL;
	if (len < 2 + (size_t)buf[1])
		return 0;
	for (size_t i = 0; i < buf[1]; i++)
		if (buf[2 + i] == 0)
			*no_auth_offered = true;
	return 2 + buf[1];
}

int isd_socks5_parse_request(const uint8_t *buf, size_t len, char *host, size_t host_len, uint16_t *port,
			     uint8_t *cmd)
{
	size_t need;

	if (len < 5)
		return 0;
	if (buf[0] != 5 || buf[2] != 0)
		return -EINVAL;
	*cmd = buf[1];
	switch (buf[3]) {
	case 1:
		need = 4 + 4 + 2;
		if (len < need)
			return 0;
		inet_ntop(AF_INET, buf + 4, host, (socklen_t)host_len);
		break;
	case 4:
		need = 4 + 16 + 2;
		if (len < need)
			return 0;
		inet_ntop(AF_INET6, buf + 4, host, (socklen_t)host_len);
		break;
	case 3:
		need = 4 + 1 + (size_t)buf[4] + 2;
		if (buf[4] == 0)
			return -EINVAL;
		if (len < need)
			return 0;
		if ((size_t)buf[4] >= host_len || memchr(buf + 5, 0, buf[4]))
			return -EINVAL;
		memcpy(host, buf + 5, buf[4]);
		host[buf[4]] = '\0';
		if (!isd_host_normalize(host))
			return -EINVAL;
		break;
	default:
		return -ENOTSUP;
	}
	*port = be16(buf + need - 2);
	if (*port == 0)
		return -EINVAL;
	return (int)need;
}

/* ---- DNS (RFC 1035) ---- */

int isd_dns_parse_query(const uint8_t *buf, size_t len, struct isd_dns_query *q)
{
	size_t p = 12, n = 0;

	memset(q, 0, sizeof(*q));
	if (len < 12 || len > 4096)
		return -EINVAL;
	q->id = be16(buf);
	q->flags = be16(buf + 2);
	if (q->flags & 0x8000) /* a response, not a query */
		return -EINVAL;
	if (be16(buf + 4) != 1)
		return -EINVAL;
	for (;;) {
		uint8_t l;

		if (p >= len)
			return -EINVAL;
		l = buf[p++];
		if (l == 0)
			break;
		if (l > 63 || p + l > len || n + l + 1 >= sizeof(q->name))
			return -EINVAL; /* compression pointers never appear in a question we accept */
		if (n)
			q->name[n++] = '.';
		memcpy(q->name + n, buf + p, l);
		n += l;
		p += l;
	}
	q->name[n] = '\0';
	if (p + 4 > len)
		return -EINVAL;
	q->qtype = be16(buf + p);
	q->qclass = be16(buf + p + 2);
	q->question_end = p + 4;
	if (memchr(q->name, 0, n))
		return -EINVAL;
	if (n == 0 || !isd_host_normalize(q->name))
		q->name[0] = '\0'; /* root or junk: the caller refuses it */
	return 0;
}

int isd_dns_build_answer(const uint8_t *query, const struct isd_dns_query *q, int rcode, uint32_t addr,
			 uint8_t *out, size_t out_size)
{
	size_t n = q->question_end;
	bool answer = rcode == 0 && addr && q->qtype == 1 && q->qclass == 1;

	if (n > out_size || n < 12)
		return -ENOSPC;
	memcpy(out, query, n);
	/* QR, opcode copied, AA, RD copied, RA */
	out[2] = (uint8_t)(0x80 | (query[2] & 0x79) | 0x04);
	out[3] = (uint8_t)(0x80 | (rcode & 0x0f));
	out[4] = 0;
	out[5] = 1;
	out[6] = 0;
	out[7] = answer ? 1 : 0;
	memset(out + 8, 0, 4);
	if (answer) {
		/* name pointer to the question, A, IN, TTL 60, 4 bytes */
		static const uint8_t rr[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4};
		uint32_t be = htonl(addr);

		if (n + sizeof(rr) + 4 > out_size)
			return -ENOSPC;
		memcpy(out + n, rr, sizeof(rr));
		memcpy(out + n + sizeof(rr), &be, 4);
		n += sizeof(rr) + 4;
	}
	return (int)n;
}
