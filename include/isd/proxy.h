/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Network policy of a sandbox and the host-side proxy that enforces it.
 *
 * --network netless: the sandbox has only loopback.  Its init creates the
 * listening sockets (HTTP/SOCKS5 proxy, DNS stub, capture of ports 80/443
 * on the fake address range, --forward ports and unix sockets) inside the
 * sandbox's network namespace and hands them to isd over the setup socket.
 * A thread of isd on the host accepts on them, applies the allowlist,
 * resolves names and connects out from the host's network namespace, and
 * relays.  Nothing runs inside the sandbox for networking.
 *
 * The pure parts (rule parsing and matching, request parsing, SNI, DNS
 * packets, address classes) are exported for the unit tests and the fuzzer.
 */
#ifndef ISD_PROXY_H
#define ISD_PROXY_H

#include "isd/net-record.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct isd_spec;
struct json_object;

#define ISD_PROXY_DEFAULT_PORT 3128
#define ISD_ALLOW_DEFAULT_PORT 443
#define ISD_PORT_ANY 0

/* 198.18.0.0/15 (RFC 2544 benchmarking range): never a real destination,
 * so it can be made local inside the sandbox and stand for names. */
#define ISD_FAKE_NET 0xc6120000u   /* 198.18.0.0 */
#define ISD_FAKE_PREFIX 15
#define ISD_FAKE_SELF 0xc6120001u  /* 198.18.0.1, the address on lo */
#define ISD_FAKE_STATIC 0xc6120002u /* names known up front: from here */
#define ISD_FAKE_DYNAMIC 0xc6130001u /* names the DNS stub meets (wildcards) */
#define ISD_FAKE_END 0xc613ffffu

/* An address with its family; port in host order where it matters. */
struct isd_addr {
	int family; /* AF_INET or AF_INET6, 0 = none */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	};
};

struct isd_allow_rule {
	char *host;     /* lower case, no trailing dot; "*.x.y" kept as "x.y" with wildcard */
	bool wildcard;  /* *.x.y: any name below x.y (not x.y itself) */
	bool is_addr;   /* an IP literal */
	struct isd_addr addr;
	uint16_t port;  /* ISD_PORT_ANY for "*" */
	char *text;     /* as written, for messages */
};

struct isd_add_host {
	char *name; /* lower case */
	struct isd_addr addr;
};

struct isd_forward {
	uint16_t sandbox_port; /* on the sandbox's 127.0.0.1 */
	char *host;            /* on the host side: an address or a name */
	uint16_t host_port;
};

struct isd_forward_unix {
	char *sandbox_path;
	char *host_path;
};

/* -p/--publish: a port of the host relayed to a server inside. */
struct isd_publish {
	struct isd_addr addr;  /* on the host: 127.0.0.1 unless given */
	uint16_t host_port;
	uint16_t sandbox_port; /* on the sandbox's loopback (127.0.0.1, then ::1) */
};
#define ISD_PUBLISH_MAX 256

/* A name known before the sandbox starts (exact allow rules and
 * --add-host), with the fake address the sandbox sees for it. */
struct isd_static_name {
	char *name;
	uint32_t fake; /* host order */
};

struct isd_netcfg {
	struct isd_allow_rule *allow;
	size_t n_allow;
	struct isd_add_host *hosts;
	size_t n_hosts;
	struct isd_forward *forwards;
	size_t n_forwards;
	struct isd_forward_unix *forwards_unix;
	size_t n_forwards_unix;
	struct isd_publish *publish;
	size_t n_publish;
	uint16_t proxy_port; /* 0 = not given (ISD_PROXY_DEFAULT_PORT) */
	char *log_path;      /* --network-log, NULL = denials on stderr */
	bool netless_options; /* an option that only netless honours was given */
};

/* ---- configuration (command line) ---- */
int isd_netcfg_add_allow(struct isd_netcfg *cfg, const char *arg, const char *origin);
int isd_netcfg_read_allow_file(struct isd_netcfg *cfg, const char *path);
int isd_netcfg_add_host(struct isd_netcfg *cfg, const char *arg);
int isd_netcfg_add_forward(struct isd_netcfg *cfg, const char *arg);
int isd_netcfg_add_forward_unix(struct isd_netcfg *cfg, const char *arg);
/* [IP:]HOSTPORT:SANDBOXPORT[/tcp], ports or equal-length ranges A-B
 * (src/publish.c). */
int isd_netcfg_add_publish(struct isd_netcfg *cfg, const char *arg);
int isd_netcfg_set_proxy_port(struct isd_netcfg *cfg, const char *arg);
int isd_netcfg_set_log(struct isd_netcfg *cfg, const char *arg, const char *cwd);
void isd_netcfg_free(struct isd_netcfg *cfg);
uint16_t isd_netcfg_proxy_port(const struct isd_netcfg *cfg);

/* Mode-dependent checks, from isd_spec_validate(). */
int isd_netcfg_validate(const struct isd_spec *spec);
int isd_netcfg_validate_publish(const struct isd_spec *spec);
/* The "publish" array of --print-spec. */
struct json_object *isd_netcfg_publish_json(const struct isd_netcfg *cfg);
/* The proxy variables common tools read (netless only); a variable the
 * user set with -e/--env-file wins. */
void isd_netcfg_apply_env(struct isd_spec *spec);
/* The "network_config" object of --print-spec (NULL when there is nothing
 * to show). */
struct json_object *isd_netcfg_to_json(const struct isd_spec *spec);
/* Lines for the sandbox's /etc/hosts ("" when none); caller frees. */
char *isd_netcfg_hosts_lines(const struct isd_spec *spec);

/* Exact names and their fake addresses, in a fixed order derived from the
 * configuration only, so that isd and the sandbox agree without talking. */
size_t isd_netcfg_static_names(const struct isd_netcfg *cfg, struct isd_static_name **out);
void isd_static_names_free(struct isd_static_name *names, size_t n);

/* ---- pure policy ---- */
/* "host[:port]", "*.host[:port]", "1.2.3.4[:port]", "[::1][:port]", port
 * "*" = any.  Errors recorded. */
int isd_allow_rule_parse(const char *arg, struct isd_allow_rule *rule);
void isd_allow_rule_free(struct isd_allow_rule *rule);
/* Normalise a host name in place (lower case, trailing dot removed);
 * false when it is not a syntactically valid name. */
bool isd_host_normalize(char *name);
bool isd_host_valid(const char *name);
/* Does a rule allow NAME (a normalised name or an IP literal) on PORT
 * (ISD_PORT_ANY: on some port)?  Returns the rule or NULL. */
const struct isd_allow_rule *isd_allow_match(const struct isd_netcfg *cfg, const char *name, uint16_t port);
/* Is this address itself allowed on PORT by an IP rule? */
bool isd_allow_addr(const struct isd_netcfg *cfg, const struct isd_addr *a, uint16_t port);
/* --add-host entry for NAME, or NULL. */
const struct isd_add_host *isd_netcfg_find_host(const struct isd_netcfg *cfg, const char *name);

enum isd_addr_class {
	ISD_ADDR_PUBLIC,
	ISD_ADDR_LOOPBACK,
	ISD_ADDR_LINK_LOCAL,
	ISD_ADDR_PRIVATE,     /* RFC 1918, ULA, CGNAT */
	ISD_ADDR_SPECIAL,     /* unspecified, multicast, broadcast, reserved, benchmark */
};
enum isd_addr_class isd_addr_classify(const struct isd_addr *a);
const char *isd_addr_class_name(enum isd_addr_class c);
int isd_addr_parse(const char *text, struct isd_addr *a);
void isd_addr_format(const struct isd_addr *a, char *buf, size_t len);
bool isd_addr_equal(const struct isd_addr *a, const struct isd_addr *b);

/* ---- protocol parsers ---- */
#define ISD_HTTP_MAX_HEADER 32768
#define ISD_HTTP_MAX_LINE 8192
#define ISD_HTTP_MAX_FIELDS 100

struct isd_http_request {
	char method[24];
	bool connect;         /* CONNECT host:port */
	bool absolute;        /* http://host[:port]/path */
	char host[256];       /* normalised, IPv6 without brackets */
	uint16_t port;
	const char *path;     /* origin-form target (points into the buffer) */
	size_t path_len;
	int version_minor;    /* HTTP/1.x */
	size_t header_len;    /* bytes up to and including the empty line */
	size_t fields_start;  /* offset of the first header field line */
};

/* 0: need more bytes; > 0: complete, the header length; -EINVAL: malformed
 * (400); -E2BIG: too long (431); -ENOTSUP: unsupported target (e.g. https://
 * without CONNECT).  origin-form requests take host and port from Host:
 * (the capture of port 80); default_port applies when none is given. */
int isd_http_parse_request(const char *buf, size_t len, uint16_t default_port, struct isd_http_request *req);
/* The request to send upstream: origin-form target, the client's fields
 * without hop-by-hop and Proxy-* ones, and "Connection: close".  Caller
 * frees; *out_len its length. */
char *isd_http_rewrite_request(const char *buf, const struct isd_http_request *req, size_t *out_len);

/* TLS ClientHello: 0 need more, 1 found (sni filled, "" when the hello
 * has no server_name), -EINVAL not TLS / malformed. */
int isd_tls_parse_sni(const uint8_t *buf, size_t len, char *sni, size_t sni_len);

/* SOCKS5 greeting + request: 0 need more; > 0 bytes consumed by the
 * greeting or request; errors -EINVAL/-ENOTSUP. */
int isd_socks5_parse_greeting(const uint8_t *buf, size_t len, bool *no_auth_offered);
int isd_socks5_parse_request(const uint8_t *buf, size_t len, char *host, size_t host_len, uint16_t *port,
			     uint8_t *cmd);

/* DNS: parse a query (one question); 0 or -EINVAL. */
struct isd_dns_query {
	uint16_t id;
	uint16_t flags;
	char name[256]; /* normalised */
	uint16_t qtype, qclass;
	size_t question_end; /* offset after the question */
};
int isd_dns_parse_query(const uint8_t *buf, size_t len, struct isd_dns_query *q);
/* Build an answer into out: rcode (0, 2 SERVFAIL, 3 NXDOMAIN, 4 NOTIMP,
 * 5 REFUSED); an A record with addr when addr != 0 and qtype is A.
 * Returns the length or -ENOSPC. */
int isd_dns_build_answer(const uint8_t *query, const struct isd_dns_query *q, int rcode, uint32_t addr,
			 uint8_t *out, size_t out_size);

/* ---- the runtime ---- */
enum isd_net_fd_role {
	ISD_NET_FD_PROXY = 1,
	ISD_NET_FD_DNS_UDP,
	ISD_NET_FD_DNS_TCP,
	ISD_NET_FD_CAPTURE,     /* 0.0.0.0:80/443 and fake:PORT, target from getsockname */
	ISD_NET_FD_FORWARD,     /* index: forwards[index] */
	ISD_NET_FD_FORWARD_UNIX, /* index: forwards_unix[index] */
	ISD_NET_FD_NETNS,       /* the sandbox's network namespace (--publish) */
	ISD_NET_FD_PUBLISH,     /* on the host, isd's own: publish[index] */
};
#define ISD_NET_FD_TAG(role, index) ((int32_t)(((uint32_t)(role) << 24) | ((uint32_t)(index) & 0xffffffu)))

struct isd_proxy;

/* Parent, before clone: NULL (nothing to do) or a proxy for this spec.
 * Opens the --network-log file; errors recorded. */
int isd_proxy_new(const struct isd_spec *spec, struct isd_proxy **out);
/* Before isd_proxy_start: every verdict's record goes to fn(ctx, ...)
 * too, on the relay's thread (isd/net-record.h), until isd_proxy_free. */
void isd_proxy_set_sink(struct isd_proxy *p, isd_net_sink_fn *fn, void *ctx);
/* Takes ownership of a listening socket the sandbox handed over. */
void isd_proxy_adopt_fd(struct isd_proxy *p, int32_t tag, int fd);
/* Start the relay thread. */
int isd_proxy_start(struct isd_proxy *p);
/* Before isd_proxy_start: the descriptors the relay holds (at most max
 * into fds; their count), for a process that keeps them and no others. */
size_t isd_proxy_held_fds(const struct isd_proxy *p, int *fds, size_t max);
/* Stop the thread, close every connection; NULL is fine. */
void isd_proxy_free(struct isd_proxy *p);

/* Sandbox side, in the child before capabilities are dropped: add the fake
 * range to lo, create the listening sockets and send each through send_fd
 * (tag from ISD_NET_FD_TAG). */
int isd_net_sandbox_listeners(const struct isd_spec *spec, int (*send_fd)(int32_t tag, int fd));

#endif
