/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internals shared by src/proxy*.c (the relay thread's state). */
#ifndef ISD_PROXY_INTERNAL_H
#define ISD_PROXY_INTERNAL_H

#include "isd/proxy.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define RELAY_BUF (128 * 1024) /* per direction and connection */
#define DNS_IN_MAX 4096        /* DNS over TCP: queries not answered yet */
#define DNS_OUT_MAX 16384      /* answers the payload has not read yet */
#define DNS_ANSWER_MAX 1600    /* one answer (a question and one A record) */
#define DNS_IDLE_TIMEOUT 10    /* s without a query answered or read */
#define PROXY_MEM_MAX (32u << 20) /* every connection's buffers together, */
#define BUF_FLOOR 4096            /* beyond this much per buffer */
#define SPLICE_MAX (64 * 1024)    /* bytes in a tunnel's pipe: a default pipe */
#define HEAD_TIMEOUT 30        /* s: request, greeting, ClientHello */
#define CONNECT_TIMEOUT 30
#define LINGER_TIMEOUT 2       /* s: draining after an error answer */
#define MAX_CONNS 4096         /* more are refused at once, with a record */
#define REPEAT_SLOTS 16        /* records being coalesced (proxy-report.c) */
#define REPEAT_WINDOW_MS 1000

enum ev_kind {
	EV_LISTENER,
	EV_CLIENT,
	EV_UPSTREAM,
	EV_DNS_UDP,
	EV_WAKE,
	EV_RESOLVED,
	EV_FACTORY, /* answers of the socket factory (--publish) */
};

/* The first member of everything registered with epoll. */
struct ev {
	enum ev_kind kind;
};

struct listener {
	struct ev ev;
	int fd;
	int role;
	uint32_t index;
	struct listener *next;
};

struct relay_buf {
	char *data;
	size_t off, len, cap;
};

enum conn_state {
	ST_HEAD,        /* reading the request / greeting / hello */
	ST_SOCKS_REQ,   /* greeting answered, reading the SOCKS request */
	ST_RESOLVING,   /* waiting for the resolver */
	ST_CONNECTING,  /* non-blocking connect in flight */
	ST_SNI,         /* tunnel to 443 open, checking the ClientHello */
	ST_RELAY,
	ST_LINGER,      /* error response written, draining until EOF */
};

enum conn_kind {
	CK_PROXY,
	CK_CAPTURE,
	CK_FORWARD,
	CK_FORWARD_UNIX,
	CK_DNS_TCP,
	CK_PUBLISH,    /* from the host, to a server inside */
};

struct resolve_job;

struct conn {
	struct ev cev; /* EV_CLIENT */
	struct ev uev; /* EV_UPSTREAM */
	int cfd, ufd;
	enum conn_state state;
	enum conn_kind kind;
	bool socks, sni_check, no_policy, dead;
	bool mem_wait;           /* a buffer could not grow: retry when memory frees */
	bool c_eof, u_eof, c_shut, u_shut;
	uint16_t port;
	char host[256];
	char what[24];          /* CONNECT, GET, SOCKS5, capture, forward ... */
	struct relay_buf in;     /* head bytes before the relay starts */
	struct relay_buf c2u, u2c;
	int pipe_c2u[2], pipe_u2c[2]; /* splice, once relaying; -1: copy */
	size_t in_c2u, in_u2c;        /* bytes in each pipe */
	bool splice_tried;
	struct isd_addr addrs[16];
	size_t n_addrs, next_addr;
	struct isd_addr connected;
	size_t head_len;         /* absolute URI: its head, still in `in` */
	uint64_t up, down;
	uint64_t own_down;       /* of down: the relay's own answer (200, SOCKS reply) */
	const char *rule;        /* what allowed it (text of cfg's), for its record */
	struct timespec start, mono; /* accepted: CLOCK_REALTIME, CLOCK_MONOTONIC */
	long pid;                /* who connected, inside, where the kernel tells (0: unknown) */
	pid_t host_pid;          /* the same on the host */
	bool reported;           /* its record went out */
	const char *why_closed;  /* for its record, when it closes before a request */
	time_t deadline;         /* 0 = none */
	struct resolve_job *job;
	int fwd_index;
	uint64_t cookie;         /* --publish: the socket asked for */
	int publish_err;         /* --publish: why the first address failed */
	struct conn *prev, *next;
};

/* A record whose repeats are being counted instead of written: the key
 * and the repeats so far (r.count; 0: none since its last record). */
struct proxy_repeat {
	bool used, show;
	struct isd_net_record r;
	char what[24], host[256], via[64];
	char *rule, *reason;
	struct timespec window; /* CLOCK_MONOTONIC: its last record went out */
};

struct fake_entry {
	char *name;
	uint32_t fake;
};

struct isd_proxy {
	const struct isd_spec *spec;
	const struct isd_netcfg *cfg;
	int epfd, wake_fd;
	struct ev wake_ev, resolved_ev;
	struct listener *listeners;
	struct conn *conns;
	struct conn *dead; /* closed during this batch of events */
	size_t n_conns;
	size_t mem;         /* bytes held by every connection's buffers */
	size_t n_mem_wait;  /* connections with mem_wait */
	size_t fd_limit;    /* RLIMIT_NOFILE once the relay started */
	size_t max_conns;   /* MAX_CONNS, or fewer where descriptors are short */
	pthread_t thread;
	bool started;
	FILE *log;          /* --network-log, or NULL: denials to stderr */
	struct isd_addr *own; /* the host's own addresses */
	size_t n_own;
	/* fake address <-> name */
	struct fake_entry *fakes;
	size_t n_fakes;
	uint32_t next_dynamic;
	/* With a terminal in use (-t) and no --network-log, denials are not
	 * printed into the payload's screen (a TUI redraws over them): they are
	 * counted, the first few kept, and summed up in one line at exit. */
	bool quiet_denials;
	unsigned n_quiet[ISD_NET_N_VERDICTS];
	unsigned n_quiet_shown;
	char *quiet_first[3];
	isd_net_sink_fn *sink;   /* every verdict's record (the activity log), or NULL */
	void *sink_ctx;
	struct proxy_repeat repeats[REPEAT_SLOTS];
	char **dns_logged;  /* names whose denial was logged already */
	size_t n_dns_logged;
	struct proxy_resolver *resolver; /* proxy-resolve.c */
	int resolved_fd;                 /* its wake-up, in the relay's epoll */
	/* --publish (proxy-publish.c): the sandbox's network namespace until
	 * the factory that makes sockets in it runs, then its socket. */
	int netns_fd, factory_fd;
	pid_t factory_pid;
	struct ev factory_ev;
	uint64_t next_cookie;
};

struct resolve_job {
	struct conn *conn; /* NULL once the connection went away; under the resolver's lock */
	char name[256];
	int err;           /* EAI_* or 0 */
	struct isd_addr addrs[16];
	size_t n_addrs;
	struct resolve_job *next;
};

/* proxy-conn.c */
void proxy_epoll_add(struct isd_proxy *p, int fd, struct ev *ev, uint32_t events);
/* a (of family AF_INET or AF_INET6) and port as a socket address; its length. */
socklen_t proxy_sockaddr(const struct isd_addr *a, uint16_t port, struct sockaddr_storage *ss);
/* fd's non-blocking connect to ss begun: c waits for it (CONNECT_TIMEOUT).
 * false, errno set, when connect failed at once. */
bool proxy_connect_begin(struct isd_proxy *p, struct conn *c, int fd, const struct sockaddr_storage *ss, socklen_t sl);
struct conn *proxy_conn_new(struct isd_proxy *p, enum conn_kind kind, int cfd);
void proxy_conn_close(struct isd_proxy *p, struct conn *c);
void proxy_free_dead(struct isd_proxy *p);
void proxy_buf_append(struct isd_proxy *p, struct relay_buf *b, const void *data, size_t len);
void proxy_buf_release(struct isd_proxy *p, struct relay_buf *b);
bool proxy_buf_room(struct isd_proxy *p, struct conn *c, struct relay_buf *b, size_t want, size_t max);
int proxy_buf_fill(struct isd_proxy *p, struct conn *c, int fd, struct relay_buf *b, size_t max);
/* 1 wrote something, 0 nothing to write or EAGAIN, -2 error. */
int proxy_buf_flush(struct isd_proxy *p, int fd, struct relay_buf *b, uint64_t *count);
void proxy_in_to_upstream(struct isd_proxy *p, struct conn *c);
bool proxy_pump(struct isd_proxy *p, struct conn *c);
void proxy_conn_fail(struct isd_proxy *p, struct conn *c, int status, const char *reason);
void proxy_deny_not_allowed(struct isd_proxy *p, struct conn *c);
/* proxy-tunnel.c: an established tunnel (ST_RELAY) */
void proxy_tunnel_open(struct isd_proxy *p, struct conn *c);
void proxy_tunnel_close(struct conn *c);
/* Moves what can move both ways: 1 something moved, 0 nothing, -2 error. */
int proxy_tunnel_step(struct isd_proxy *p, struct conn *c);
/* proxy-publish.c */
/* isd_proxy_new: the host's listening sockets, before the sandbox exists. */
int proxy_publish_listen(struct isd_proxy *p);
/* isd_proxy_start: the socket factory in the sandbox's network namespace. */
int proxy_publish_start(struct isd_proxy *p);
void proxy_publish_stop(struct isd_proxy *p);
void proxy_publish_accept(struct isd_proxy *p, const struct listener *l, int fd);
void proxy_publish_factory_event(struct isd_proxy *p);
/* A connection inside failed with err: the next address, or the end. */
void proxy_publish_connect_failed(struct isd_proxy *p, struct conn *c, int err);
/* proxy.c */
/* "host:port", "[v6]:port" */
void proxy_format_target(const char *host, uint16_t port, char *buf, size_t len);
/* proxy-report.c */
/* A line for --network-log (every one) or stderr (denial: shown without
 * it; with a terminal in use, kept for the summary). */
void proxy_log(struct isd_proxy *p, bool denial, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A record to the sink, and its line (show: as proxy_log's denial). */
void proxy_report(struct isd_proxy *p, const struct isd_net_record *r, bool show);
/* c's record, once (allowed: reason NULL, when it ends). */
void proxy_report_conn(struct isd_proxy *p, struct conn *c, enum isd_net_verdict verdict, const char *reason, bool show);
/* The connection fd of listener l's, refused at once: its record, and close. */
void proxy_report_refused(struct isd_proxy *p, const struct listener *l, int fd);
/* Each second: the repeats counted for a while go out (proxy_report). */
void proxy_report_tick(struct isd_proxy *p);
/* At exit: what repeats are still counted, then the summary of what a
 * terminal session kept quiet. */
void proxy_report_summary(struct isd_proxy *p);
/* proxy-dns.c */
void proxy_dns_udp(struct isd_proxy *p, int fd);
/* A DNS-over-TCP connection is readable or writable. */
void proxy_dns_tcp_event(struct isd_proxy *p, struct conn *c);
const char *proxy_fake_lookup(const struct isd_proxy *p, uint32_t fake);
void proxy_fakes_init(struct isd_proxy *p);
void proxy_fakes_free(struct isd_proxy *p);
/* proxy-resolve.c */
int proxy_resolver_start(struct isd_proxy *p);
/* Only once no connection is left: lookups in flight finish on their own. */
void proxy_resolver_stop(struct isd_proxy *p);
void proxy_resolver_submit(struct isd_proxy *p, struct conn *c, const char *name);
/* The connection no longer wants its job (closed). */
void proxy_resolver_cancel(struct isd_proxy *p, struct conn *c);
/* Reads finished jobs; calls done() for each whose connection lives. */
void proxy_resolver_collect(struct isd_proxy *p, void (*done)(struct isd_proxy *, struct conn *, struct resolve_job *));

#endif
