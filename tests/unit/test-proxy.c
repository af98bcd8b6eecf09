/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Network policy and the proxy's parsers: allow rules, matching, address
 * classes, HTTP request heads, SNI, SOCKS5, DNS. */
#define _GNU_SOURCE
#include "isd/proxy.h"
#include "isd/spec.h"
#include "isd/util.h"

#include "check.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static void test_allow_parse(void)
{
	struct isd_allow_rule r;

	CHECK(isd_allow_rule_parse("api.example.com", &r) == 0 && !strcmp(r.host, "api.example.com") &&
	      r.port == 443 && !r.wildcard && !r.is_addr);
	isd_allow_rule_free(&r);
	CHECK(isd_allow_rule_parse("API.Example.COM.:8443", &r) == 0 && !strcmp(r.host, "api.example.com") &&
	      r.port == 8443);
	isd_allow_rule_free(&r);
	CHECK(isd_allow_rule_parse("*.example.com:*", &r) == 0 && r.wildcard && !strcmp(r.host, "example.com") &&
	      r.port == ISD_PORT_ANY);
	isd_allow_rule_free(&r);
	CHECK(isd_allow_rule_parse("127.0.0.1:8080", &r) == 0 && r.is_addr && r.port == 8080);
	isd_allow_rule_free(&r);
	CHECK(isd_allow_rule_parse("[::1]:80", &r) == 0 && r.is_addr && r.addr.family == AF_INET6 && r.port == 80);
	isd_allow_rule_free(&r);
	CHECK(isd_allow_rule_parse("::1", &r) == 0 && r.is_addr && r.port == 443);
	isd_allow_rule_free(&r);
	CHECK(isd_allow_rule_parse("example.com:0", &r) < 0);
	CHECK(isd_allow_rule_parse("example.com:65536", &r) < 0);
	CHECK(isd_allow_rule_parse("example.com:http", &r) < 0);
	CHECK(isd_allow_rule_parse("exa mple.com", &r) < 0);
	CHECK(isd_allow_rule_parse("a.*.com", &r) < 0);
	CHECK(isd_allow_rule_parse("*", &r) < 0);
	CHECK(isd_allow_rule_parse("", &r) < 0);
	CHECK(isd_allow_rule_parse("[::1", &r) < 0);
	CHECK(isd_allow_rule_parse("a..b", &r) < 0);
}

static void test_matching(void)
{
	struct isd_netcfg cfg = {0};
	struct isd_addr a;

	CHECK(isd_netcfg_add_allow(&cfg, "api.example.com", "--allow") == 0);
	CHECK(isd_netcfg_add_allow(&cfg, "*.cdn.example.net:*", "--allow") == 0);
	CHECK(isd_netcfg_add_allow(&cfg, "10.1.2.3:8080", "--allow") == 0);
	CHECK(isd_netcfg_add_host(&cfg, "llm.local:127.0.0.1") == 0);

	CHECK(isd_allow_match(&cfg, "api.example.com", 443));
	CHECK(!isd_allow_match(&cfg, "api.example.com", 80));
	CHECK(isd_allow_match(&cfg, "api.example.com", ISD_PORT_ANY));
	CHECK(!isd_allow_match(&cfg, "example.com", 443));
	CHECK(!isd_allow_match(&cfg, "xapi.example.com", 443));
	CHECK(isd_allow_match(&cfg, "a.cdn.example.net", 1234));
	CHECK(isd_allow_match(&cfg, "a.b.cdn.example.net", 443));
	CHECK(!isd_allow_match(&cfg, "cdn.example.net", 443));
	CHECK(!isd_allow_match(&cfg, "evilcdn.example.net", 443));
	CHECK(isd_allow_match(&cfg, "10.1.2.3", 8080));
	CHECK(!isd_allow_match(&cfg, "10.1.2.3", 443));
	CHECK(!isd_allow_match(&cfg, "10.1.2.4", 8080));
	/* a name rule never admits an IP literal, and the reverse */
	CHECK(isd_netcfg_add_allow(&cfg, "1.2.3.4", "--allow") == 0);
	CHECK(!isd_allow_match(&cfg, "1.2.3.4.example.com", 443));
	CHECK(isd_addr_parse("10.1.2.3", &a) == 0 && isd_allow_addr(&cfg, &a, 8080) && !isd_allow_addr(&cfg, &a, 80));
	CHECK(isd_netcfg_find_host(&cfg, "llm.local") && !isd_netcfg_find_host(&cfg, "other"));

	{
		struct isd_static_name *names = NULL;
		size_t n = isd_netcfg_static_names(&cfg, &names);
		/* api.example.com and llm.local; wildcards and addresses have no fixed name */
		CHECK(n == 2 && !strcmp(names[0].name, "api.example.com") && names[0].fake == ISD_FAKE_STATIC &&
		      !strcmp(names[1].name, "llm.local") && names[1].fake == ISD_FAKE_STATIC + 1);
		isd_static_names_free(names, n);
	}
	isd_netcfg_free(&cfg);

	CHECK(isd_netcfg_add_host(&cfg, "x:notanip") < 0);
	CHECK(isd_netcfg_add_host(&cfg, "noaddr") < 0);
	CHECK(isd_netcfg_add_host(&cfg, "v6:::1") == 0 && cfg.hosts[0].addr.family == AF_INET6);
	CHECK(isd_netcfg_add_forward(&cfg, "8080:127.0.0.1:9000") == 0 && cfg.forwards[0].sandbox_port == 8080 &&
	      cfg.forwards[0].host_port == 9000 && !strcmp(cfg.forwards[0].host, "127.0.0.1"));
	CHECK(isd_netcfg_add_forward(&cfg, "localhost:7000") == 0 && cfg.forwards[1].sandbox_port == 7000);
	CHECK(isd_netcfg_add_forward(&cfg, "7001:[::1]:7002") == 0 && !strcmp(cfg.forwards[2].host, "::1"));
	CHECK(isd_netcfg_add_forward(&cfg, "8080:127.0.0.1:1") < 0); /* twice */
	CHECK(isd_netcfg_add_forward(&cfg, "127.0.0.1") < 0);
	CHECK(isd_netcfg_add_forward(&cfg, "99999:127.0.0.1:1") < 0);
	CHECK(isd_netcfg_add_forward_unix(&cfg, "/run/ssh.sock:/tmp/agent.sock") == 0);
	CHECK(isd_netcfg_add_forward_unix(&cfg, "relative:/x") < 0);
	CHECK(isd_netcfg_add_forward_unix(&cfg, "/run/x") < 0);
	CHECK(isd_netcfg_set_proxy_port(&cfg, "0") < 0);
	isd_netcfg_free(&cfg);
}

/* -p/--publish: Docker's syntax, 127.0.0.1 unless an address is given. */
static void test_publish_parse(void)
{
	struct isd_netcfg cfg = {0};
	struct isd_addr lo, any, lo6;

	isd_addr_parse("127.0.0.1", &lo);
	isd_addr_parse("0.0.0.0", &any);
	isd_addr_parse("::1", &lo6);
	CHECK(isd_netcfg_add_publish(&cfg, "8080:3000") == 0 && cfg.n_publish == 1 &&
	      isd_addr_equal(&cfg.publish[0].addr, &lo) && cfg.publish[0].host_port == 8080 &&
	      cfg.publish[0].sandbox_port == 3000);
	CHECK(isd_netcfg_add_publish(&cfg, "0.0.0.0:8081:3000/tcp") == 0 && isd_addr_equal(&cfg.publish[1].addr, &any));
	CHECK(isd_netcfg_add_publish(&cfg, "[::1]:8080:3001") == 0 && isd_addr_equal(&cfg.publish[2].addr, &lo6));
	CHECK(isd_netcfg_add_publish(&cfg, "9000-9002:4000-4002") == 0 && cfg.n_publish == 6 &&
	      cfg.publish[5].host_port == 9002 && cfg.publish[5].sandbox_port == 4002);
	CHECK(isd_netcfg_add_publish(&cfg, "8080:1") < 0);            /* the same host port twice */
	CHECK(isd_netcfg_add_publish(&cfg, "127.0.0.1:8081:1") < 0);  /* inside 0.0.0.0:8081 */
	CHECK(isd_netcfg_add_publish(&cfg, "[::]:8080:1") < 0);       /* over [::1]:8080 */
	CHECK(isd_netcfg_add_publish(&cfg, "127.0.0.2:8080:1") == 0); /* another address */
	CHECK(isd_netcfg_add_publish(&cfg, "3000") < 0);              /* no host port: isd picks none */
	CHECK(isd_netcfg_add_publish(&cfg, "127.0.0.1::3000") < 0);
	CHECK(isd_netcfg_add_publish(&cfg, "0:3000") < 0);
	CHECK(isd_netcfg_add_publish(&cfg, "1:65536") < 0);
	CHECK(isd_netcfg_add_publish(&cfg, "1:2/udp") < 0);
	CHECK(isd_netcfg_add_publish(&cfg, "localhost:1:2") < 0);     /* an address, not a name */
	CHECK(isd_netcfg_add_publish(&cfg, "::1:1:2") < 0);           /* IPv6 in brackets */
	CHECK(isd_netcfg_add_publish(&cfg, "10-12:20-21") < 0);       /* ranges of different lengths */
	CHECK(isd_netcfg_add_publish(&cfg, "12-10:20-22") < 0);
	CHECK(isd_netcfg_add_publish(&cfg, "1-300:1-300") < 0);       /* more than ISD_PUBLISH_MAX */
	isd_netcfg_free(&cfg);
}

static void addr_class(const char *text, enum isd_addr_class expected, int line)
{
	struct isd_addr a;

	if (isd_addr_parse(text, &a) < 0 || isd_addr_classify(&a) != expected) {
		fprintf(stderr, "%s:%d: %s: expected class %s\n", __FILE__, line, text, isd_addr_class_name(expected));
		failures++;
	}
}

static void test_addr_classes(void)
{
	addr_class("127.0.0.1", ISD_ADDR_LOOPBACK, __LINE__);
	addr_class("127.255.1.1", ISD_ADDR_LOOPBACK, __LINE__);
	addr_class("::1", ISD_ADDR_LOOPBACK, __LINE__);
	addr_class("::ffff:127.0.0.1", ISD_ADDR_LOOPBACK, __LINE__);
	addr_class("64:ff9b::7f00:1", ISD_ADDR_LOOPBACK, __LINE__);
	addr_class("169.254.169.254", ISD_ADDR_LINK_LOCAL, __LINE__);
	addr_class("fe80::1", ISD_ADDR_LINK_LOCAL, __LINE__);
	addr_class("10.0.0.1", ISD_ADDR_PRIVATE, __LINE__);
	addr_class("172.16.0.1", ISD_ADDR_PRIVATE, __LINE__);
	addr_class("172.31.255.255", ISD_ADDR_PRIVATE, __LINE__);
	addr_class("172.32.0.1", ISD_ADDR_PUBLIC, __LINE__);
	addr_class("192.168.1.1", ISD_ADDR_PRIVATE, __LINE__);
	addr_class("100.64.0.1", ISD_ADDR_PRIVATE, __LINE__);
	addr_class("100.128.0.1", ISD_ADDR_PUBLIC, __LINE__);
	addr_class("fd00::1", ISD_ADDR_PRIVATE, __LINE__);
	addr_class("0.0.0.0", ISD_ADDR_SPECIAL, __LINE__);
	addr_class("::", ISD_ADDR_SPECIAL, __LINE__);
	addr_class("224.0.0.1", ISD_ADDR_SPECIAL, __LINE__);
	addr_class("255.255.255.255", ISD_ADDR_SPECIAL, __LINE__);
	addr_class("198.18.0.5", ISD_ADDR_SPECIAL, __LINE__);
	addr_class("198.19.255.1", ISD_ADDR_SPECIAL, __LINE__);
	addr_class("198.20.0.1", ISD_ADDR_PUBLIC, __LINE__);
	addr_class("ff02::1", ISD_ADDR_SPECIAL, __LINE__);
	addr_class("93.184.216.34", ISD_ADDR_PUBLIC, __LINE__);
	addr_class("2606:2800:220:1::1", ISD_ADDR_PUBLIC, __LINE__);
}

static int parse(const char *text, struct isd_http_request *req)
{
	return isd_http_parse_request(text, strlen(text), 80, req);
}

static void test_http(void)
{
	struct isd_http_request req;
	char *out;
	size_t len;
	char big[ISD_HTTP_MAX_HEADER + 100];

	CHECK(parse("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n", &req) > 0 &&
	      req.connect && !strcmp(req.host, "api.example.com") && req.port == 443);
	CHECK(parse("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", &req) > 0 && !strcmp(req.host, "::1") && req.port == 8443);
	CHECK(parse("CONNECT api.example.com HTTP/1.1\r\n\r\n", &req) == -EINVAL); /* no port */
	CHECK(parse("CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n", &req) == 0); /* incomplete */
	CHECK(parse("CONNECT user@h:443 HTTP/1.1\r\n\r\n", &req) == -EINVAL);
	CHECK(parse("GET http://Example.COM/a?b HTTP/1.1\r\nHost: example.com\r\nProxy-Connection: keep-alive\r\n"
		    "Accept: */*\r\n\r\nBODY", &req) > 0 && req.absolute && !strcmp(req.host, "example.com") &&
	      req.port == 80 && req.path_len == 4 && !strncmp(req.path, "/a?b", 4));
	CHECK(parse("GET http://example.com:8080/x HTTP/1.1\r\nHost: example.com:8080\r\n"
		    "Proxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n", &req) > 0);
	out = isd_http_rewrite_request("GET http://example.com:8080/x HTTP/1.1\r\nHost: example.com:8080\r\n"
				       "Proxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n",
				       &req, &len);
	CHECK(len == strlen(out) && !strcmp(out, "GET /x HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n"
					     "Connection: close\r\n\r\n"));
	free(out);
	/* the target's Host, whatever the client wrote (or if it wrote none) */
	{
		const char *cases[][2] = {
			{"GET http://allowed.test:8080/ HTTP/1.1\r\nHost: other.internal:9999\r\nA: b\r\n\r\n",
			 "GET / HTTP/1.1\r\nHost: allowed.test:8080\r\nA: b\r\nConnection: close\r\n\r\n"},
			{"GET http://allowed.test/x HTTP/1.1\r\nA: b\r\nhOsT:other.internal\r\n\r\n",
			 "GET /x HTTP/1.1\r\nHost: allowed.test\r\nA: b\r\nConnection: close\r\n\r\n"},
			{"GET http://[::1]:81/ HTTP/1.0\r\n\r\n", "GET / HTTP/1.0\r\nHost: [::1]:81\r\nConnection: close\r\n\r\n"},
		};
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			CHECK(parse(cases[i][0], &req) > 0 && req.absolute);
			out = isd_http_rewrite_request(cases[i][0], &req, &len);
			CHECK(len == strlen(out) && !strcmp(out, cases[i][1]));
			free(out);
		}
	}
	CHECK(parse("GET http://example.com HTTP/1.0\n\n", &req) > 0 && req.path_len == 1 && req.version_minor == 0);
	/* origin-form takes the Host field (the capture of port 80) */
	CHECK(parse("GET / HTTP/1.1\r\nHost: Example.com:81\r\n\r\n", &req) > 0 && !req.absolute &&
	      !strcmp(req.host, "example.com") && req.port == 81);
	CHECK(parse("GET / HTTP/1.1\r\n\r\n", &req) == -EINVAL);
	CHECK(parse("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", &req) == -EINVAL);
	CHECK(parse("GET https://example.com/ HTTP/1.1\r\n\r\n", &req) == -ENOTSUP);
	CHECK(parse("GET http://example.com/ HTTP/2.0\r\n\r\n", &req) == -EINVAL);
	CHECK(parse("GET http://example.com/ HTTP/1.1\r\n folded\r\n\r\n", &req) == -EINVAL);
	CHECK(parse("GET http://example.com/ HTTP/1.1\r\nBad Name: x\r\n\r\n", &req) == -EINVAL);
	CHECK(parse("GET http://example.com/ HTTP/1.1\r\nX: a\001b\r\n\r\n", &req) == -EINVAL);
	CHECK(parse("GET http://exa_mple..com/ HTTP/1.1\r\n\r\n", &req) == -EINVAL);
	CHECK(parse("G{T http://example.com/ HTTP/1.1\r\n\r\n", &req) == -EINVAL);
	CHECK(parse("\x16\x03\x01", &req) == -EINVAL); /* TLS to the proxy port: fail fast */
	CHECK(parse("garbage without spaces\r\n\r\n", &req) == -EINVAL);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(parse(big, &req) == -E2BIG);
	memcpy(big, "GET http://example.com/", 23);
	CHECK(parse(big, &req) == -E2BIG);
}

/* A ClientHello as OpenSSL sends it, cut to what the parser looks at. */
static size_t make_hello(uint8_t *b, const char *sni)
{
	size_t n = 0, ext_start, hs_start, sni_len = sni ? strlen(sni) : 0;

	b[n++] = 0x16; b[n++] = 3; b[n++] = 1; n += 2;  /* record, length later */
	hs_start = n;
	b[n++] = 1; n += 3;                             /* client_hello, length later */
	b[n++] = 3; b[n++] = 3;
	memset(b + n, 0xaa, 32); n += 32;               /* random */
	b[n++] = 0;                                     /* session id */
	b[n++] = 0; b[n++] = 2; b[n++] = 0x13; b[n++] = 1; /* one suite */
	b[n++] = 1; b[n++] = 0;                         /* null compression */
	ext_start = n;
	n += 2;
	/* an unrelated extension first */
	b[n++] = 0; b[n++] = 10; b[n++] = 0; b[n++] = 2; b[n++] = 0; b[n++] = 0;
	if (sni) {
		b[n++] = 0; b[n++] = 0;
		b[n++] = (uint8_t)((sni_len + 5) >> 8); b[n++] = (uint8_t)(sni_len + 5);
		b[n++] = (uint8_t)((sni_len + 3) >> 8); b[n++] = (uint8_t)(sni_len + 3);
		b[n++] = 0;
		b[n++] = (uint8_t)(sni_len >> 8); b[n++] = (uint8_t)sni_len;
		memcpy(b + n, sni, sni_len); n += sni_len;
	}
	b[ext_start] = (uint8_t)((n - ext_start - 2) >> 8);
	b[ext_start + 1] = (uint8_t)(n - ext_start - 2);
	b[hs_start + 1] = 0;
	b[hs_start + 2] = (uint8_t)((n - hs_start - 4) >> 8);
	b[hs_start + 3] = (uint8_t)(n - hs_start - 4);
	b[3] = (uint8_t)((n - 5) >> 8);
	b[4] = (uint8_t)(n - 5);
	return n;
}

static void test_sni(void)
{
	uint8_t b[512];
	char sni[256];
	size_t n = make_hello(b, "API.example.com");

	CHECK(isd_tls_parse_sni(b, n, sni, sizeof(sni)) == 1 && !strcmp(sni, "api.example.com"));
	for (size_t cut = 0; cut < n; cut++)
		CHECK(isd_tls_parse_sni(b, cut, sni, sizeof(sni)) == 0);
	n = make_hello(b, NULL);
	CHECK(isd_tls_parse_sni(b, n, sni, sizeof(sni)) == 1 && sni[0] == '\0');
	n = make_hello(b, "bad name!");
	CHECK(isd_tls_parse_sni(b, n, sni, sizeof(sni)) == -EINVAL);
	CHECK(isd_tls_parse_sni((const uint8_t *)"GET / HTTP/1.1\r\n", 16, sni, sizeof(sni)) == -EINVAL);
	n = make_hello(b, "x.example");
	b[n - 12] = 0xff; /* extension length past the end */
	CHECK(isd_tls_parse_sni(b, n, sni, sizeof(sni)) == -EINVAL);
}

static void test_socks(void)
{
	static const uint8_t greet[] = {5, 2, 2, 0};
	static const uint8_t greet_auth[] = {5, 1, 2};
	static const uint8_t req_name[] = {5, 1, 0, 3, 11, 'E', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'c', 'o', 'm', 1, 187};
	static const uint8_t req_v4[] = {5, 1, 0, 1, 127, 0, 0, 1, 0, 80};
	static const uint8_t req_bad_atyp[] = {5, 1, 0, 9, 0, 0};
	char host[256];
	uint16_t port;
	uint8_t cmd;
	bool no_auth;

	CHECK(isd_socks5_parse_greeting(greet, 1, &no_auth) == 0);
	CHECK(isd_socks5_parse_greeting(greet, 3, &no_auth) == 0);
	CHECK(isd_socks5_parse_greeting(greet, sizeof(greet), &no_auth) == 4 && no_auth);
	CHECK(isd_socks5_parse_greeting(greet_auth, sizeof(greet_auth), &no_auth) == 3 && !no_auth);
	CHECK(isd_socks5_parse_greeting((const uint8_t *)"\x04\x01", 2, &no_auth) == -EINVAL);
	CHECK(isd_socks5_parse_request(req_name, sizeof(req_name), host, sizeof(host), &port, &cmd) ==
	      (int)sizeof(req_name) && !strcmp(host, "example.com") && port == 443 && cmd == 1);
	CHECK(isd_socks5_parse_request(req_name, sizeof(req_name) - 1, host, sizeof(host), &port, &cmd) == 0);
	CHECK(isd_socks5_parse_request(req_v4, sizeof(req_v4), host, sizeof(host), &port, &cmd) == 10 &&
	      !strcmp(host, "127.0.0.1") && port == 80);
	CHECK(isd_socks5_parse_request(req_bad_atyp, sizeof(req_bad_atyp), host, sizeof(host), &port, &cmd) == -ENOTSUP);
}

static size_t make_query(uint8_t *b, const char *name, uint16_t qtype)
{
	size_t n = 12;

	memset(b, 0, 12);
	b[0] = 0x12; b[1] = 0x34; b[2] = 0x01; b[5] = 1;
	for (const char *p = name; *p;) {
		const char *dot = strchrnul(p, '.');
		b[n++] = (uint8_t)(dot - p);
		memcpy(b + n, p, (size_t)(dot - p));
		n += (size_t)(dot - p);
		p = *dot ? dot + 1 : dot;
	}
	b[n++] = 0;
	b[n++] = (uint8_t)(qtype >> 8); b[n++] = (uint8_t)qtype;
	b[n++] = 0; b[n++] = 1;
	return n;
}

static void test_dns(void)
{
	uint8_t q[300], out[600];
	struct isd_dns_query query;
	size_t n = make_query(q, "Api.Example.com", 1);
	int len;

	CHECK(isd_dns_parse_query(q, n, &query) == 0 && !strcmp(query.name, "api.example.com") && query.qtype == 1 &&
	      query.id == 0x1234 && query.question_end == n);
	len = isd_dns_build_answer(q, &query, 0, ISD_FAKE_STATIC, out, sizeof(out));
	CHECK(len == (int)n + 16);
	CHECK(out[0] == 0x12 && out[1] == 0x34 && (out[2] & 0x80) && (out[3] & 0x0f) == 0 && out[7] == 1);
	CHECK(len > 4 && out[len - 4] == 198 && out[len - 3] == 18 && out[len - 2] == 0 && out[len - 1] == 2);
	len = isd_dns_build_answer(q, &query, 3, 0, out, sizeof(out));
	CHECK(len == (int)n && (out[3] & 0x0f) == 3 && out[7] == 0);
	/* AAAA: no data, so that clients fall back to the IPv4 answer */
	n = make_query(q, "api.example.com", 28);
	CHECK(isd_dns_parse_query(q, n, &query) == 0 && query.qtype == 28);
	len = isd_dns_build_answer(q, &query, 0, ISD_FAKE_STATIC, out, sizeof(out));
	CHECK(len == (int)n && out[7] == 0 && (out[3] & 0x0f) == 0);
	CHECK(isd_dns_build_answer(q, &query, 0, 0, out, 10) == -ENOSPC);
	/* malformed */
	CHECK(isd_dns_parse_query(q, 11, &query) < 0);
	CHECK(isd_dns_parse_query(q, n - 1, &query) < 0);
	q[12] = 0xc0; /* compression pointer in the question */
	CHECK(isd_dns_parse_query(q, n, &query) < 0);
	n = make_query(q, "x.example", 1);
	q[2] |= 0x80; /* a response */
	CHECK(isd_dns_parse_query(q, n, &query) < 0);
}

static void test_spec(void)
{
	struct isd_spec spec;

	isd_spec_init(&spec);
	spec.network = ISD_NET_NONE;
	spec.argv = isd_strv_copy((char *[]){"true", NULL});
	CHECK(isd_netcfg_add_allow(&spec.net, "api.example.com", "--allow") == 0);
	CHECK(isd_netcfg_validate(&spec) < 0); /* --allow without netless */
	spec.network = ISD_NET_NETLESS;
	CHECK(isd_netcfg_validate(&spec) == 0);
	CHECK(isd_netcfg_add_forward(&spec.net, "3128:127.0.0.1:1") == 0);
	CHECK(isd_netcfg_validate(&spec) < 0); /* the proxy's port */
	isd_netcfg_free(&spec.net);
	CHECK(isd_netcfg_add_forward(&spec.net, "8080:127.0.0.1:1") == 0);
	spec.network = ISD_NET_HOST;
	CHECK(isd_netcfg_validate(&spec) < 0);
	spec.network = ISD_NET_NONE;
	CHECK(isd_netcfg_validate(&spec) == 0);

	spec.network = ISD_NET_NETLESS;
	CHECK(isd_netcfg_add_host(&spec.net, "llm.test:127.0.0.1") == 0);
	isd_netcfg_apply_env(&spec);
	CHECK(isd_spec_getenv(&spec, "HTTPS_PROXY") && !strcmp(isd_spec_getenv(&spec, "HTTPS_PROXY"), "http://127.0.0.1:3128"));
	CHECK(isd_spec_getenv(&spec, "all_proxy") && !strcmp(isd_spec_getenv(&spec, "all_proxy"), "socks5h://127.0.0.1:3128"));
	CHECK(isd_spec_getenv(&spec, "NO_PROXY") && strstr(isd_spec_getenv(&spec, "NO_PROXY"), "127.0.0.1"));
	CHECK(isd_spec_getenv(&spec, "GIT_CONFIG_KEY_0") && !strcmp(isd_spec_getenv(&spec, "GIT_CONFIG_KEY_0"), "http.proxy"));
	{
		char *hosts = isd_netcfg_hosts_lines(&spec);
		/* netless: the name stands for its fake address */
		CHECK(!strcmp(hosts, "198.18.0.2\tllm.test\n"));
		free(hosts);
	}
	isd_spec_free(&spec);
}

int main(void)
{
	test_allow_parse();
	test_matching();
	test_publish_parse();
	test_addr_classes();
	test_http();
	test_sni();
	test_socks();
	test_dns();
	test_spec();
	return check_result();
}
