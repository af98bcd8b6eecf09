/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox's DNS stub (127.0.0.1:53, UDP and TCP).  It knows no real
 * addresses: an allowed name gets an address from the fake range
 * 198.18.0.0/15, which is local inside the sandbox, so that a tool that
 * ignores the proxy variables connects to isd's capture listeners, which
 * map the address back to the name and apply the same allowlist.  Every
 * other name gets NXDOMAIN at once (logged with the reason) instead of a
 * timeout.
 */
#define _GNU_SOURCE
#include "proxy-internal.h"
#include "isd/util.h"

#include <string.h>
#include <sys/socket.h>

void proxy_fakes_init(struct isd_proxy *p)
{
	struct isd_static_name *names = NULL;
	size_t n = isd_netcfg_static_names(p->cfg, &names);

	p->fakes = isd_xcalloc(n ? n : 1, sizeof(*p->fakes));
	for (size_t i = 0; i < n; i++) {
		p->fakes[i].name = isd_steal_ptr(names[i].name);
		p->fakes[i].fake = names[i].fake;
	}
	p->n_fakes = n;
	p->next_dynamic = ISD_FAKE_DYNAMIC;
	isd_static_names_free(names, n);
}

void proxy_fakes_free(struct isd_proxy *p)
{
	for (size_t i = 0; i < p->n_fakes; i++)
		free(p->fakes[i].name);
	free(p->fakes);
	p->fakes = NULL;
	p->n_fakes = 0;
	for (size_t i = 0; i < p->n_dns_logged; i++)
		free(p->dns_logged[i]);
	free(p->dns_logged);
	p->dns_logged = NULL;
	p->n_dns_logged = 0;
}

const char *proxy_fake_lookup(const struct isd_proxy *p, uint32_t fake)
{
	for (size_t i = 0; i < p->n_fakes; i++)
		if (p->fakes[i].fake == fake)
			return p->fakes[i].name;
	return NULL;
}

/* The fake address of an allowed name (0 when the range is used up). */
static uint32_t fake_for(struct isd_proxy *p, const char *name)
{
	for (size_t i = 0; i < p->n_fakes; i++)
		if (!strcmp(p->fakes[i].name, name))
			return p->fakes[i].fake;
	if (p->next_dynamic > ISD_FAKE_END)
		return 0;
	p->fakes = isd_xrealloc(p->fakes, (p->n_fakes + 1) * sizeof(*p->fakes));
	p->fakes[p->n_fakes].name = isd_xstrdup(name);
	p->fakes[p->n_fakes].fake = p->next_dynamic++;
	return p->fakes[p->n_fakes++].fake;
}

/* Tools retry a failed lookup several times (A and AAAA, each resolver
 * attempt): one line and one record per name is enough.  1: a name not
 * seen yet, 0: seen, -1: past the names kept (a record still, bounded by
 * the log's bound, but no line: that would flood the terminal). */
static int first_denial(struct isd_proxy *p, const char *name)
{
	for (size_t i = 0; i < p->n_dns_logged; i++)
		if (!strcmp(p->dns_logged[i], name))
			return 0;
	if (p->n_dns_logged >= 1024)
		return -1;
	p->dns_logged = isd_xrealloc(p->dns_logged, (p->n_dns_logged + 1) * sizeof(*p->dns_logged));
	p->dns_logged[p->n_dns_logged++] = isd_xstrdup(name);
	return 1;
}

/* The lookup says nothing of the port that will follow: the hint names
 * HTTPS's default and how to allow another port, and for the hosts people
 * reach with git over ssh, the ssh recipe (with the agent's socket when
 * the caller has one). */
static void log_dns_denial(struct isd_proxy *p, const char *name, bool show)
{
	static const char *const ssh_hosts[] = {"github.com", "gitlab.com", "bitbucket.org", "codeberg.org",
						"ssh.dev.azure.com", "git.sr.ht"};
	bool ssh_host = false;
	char reason[1024];
	struct timespec now;

	for (size_t i = 0; i < sizeof(ssh_hosts) / sizeof(ssh_hosts[0]); i++)
		ssh_host |= !strcmp(name, ssh_hosts[i]);
	if (!ssh_host)
		snprintf(reason, sizeof(reason), "%s is not in the allowlist (add --allow %s for HTTPS, --allow %s:PORT for another port)",
			 name, name, name);
	else if (getenv("SSH_AUTH_SOCK"))
		snprintf(reason, sizeof(reason), "%s is not in the allowlist (add --allow %s for HTTPS; for git over ssh "
			 "--allow %s:22 --forward-unix /run/ssh-agent.sock:$SSH_AUTH_SOCK -e SSH_AUTH_SOCK=/run/ssh-agent.sock)",
			 name, name, name);
	else
		snprintf(reason, sizeof(reason), "%s is not in the allowlist (add --allow %s for HTTPS, --allow %s:22 for git over ssh)",
			 name, name, name);
	clock_gettime(CLOCK_REALTIME, &now);
	proxy_report(p, &(struct isd_net_record){.dns = true, .verdict = ISD_NET_DENIED, .what = "DNS", .host = name,
						  .reason = reason, .start = now},
		     show);
}

/* One query in, one answer out; returns the answer's length or -1. */
static int answer(struct isd_proxy *p, const uint8_t *q, size_t qlen, uint8_t *out, size_t out_size)
{
	struct isd_dns_query query;
	struct isd_addr lit;
	int rcode = 0;
	uint32_t fake = 0;

	if (isd_dns_parse_query(q, qlen, &query) < 0) {
		/* FORMERR when there is at least a header to answer */
		if (qlen < 12)
			return -1;
		memcpy(out, q, 12);
		out[2] = (uint8_t)(0x80 | (q[2] & 0x78));
		out[3] = 0x81;
		memset(out + 4, 0, 8);
		return 12;
	}
	if ((query.flags & 0x7800) != 0)
		rcode = 4; /* only standard queries */
	else if (!query.name[0] || isd_addr_parse(query.name, &lit) == 0)
		rcode = 3;
	else if (isd_allow_match(p->cfg, query.name, ISD_PORT_ANY) || isd_netcfg_find_host(p->cfg, query.name)) {
		fake = fake_for(p, query.name);
		if (!fake)
			rcode = 2;
	} else {
		int first = first_denial(p, query.name);

		rcode = 3;
		if (first)
			log_dns_denial(p, query.name, first > 0);
	}
	return isd_dns_build_answer(q, &query, rcode, fake, out, out_size);
}

void proxy_dns_udp(struct isd_proxy *p, int fd)
{
	for (int i = 0; i < 64; i++) {
		uint8_t q[1500], out[DNS_ANSWER_MAX];
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		ssize_t n = recvfrom(fd, q, sizeof(q), MSG_DONTWAIT, (struct sockaddr *)&from, &fromlen);
		int len;

		if (n < 0)
			return;
		len = answer(p, q, (size_t)n, out, sizeof(out));
		if (len > 0)
			(void)!sendto(fd, out, (size_t)len, MSG_DONTWAIT, (struct sockaddr *)&from, fromlen);
	}
}

/* Answers the complete queries in c->in while the answers fit in u2c;
 * 1 answered some, 0 none, -1 close (malformed framing). */
static int answer_tcp(struct isd_proxy *p, struct conn *c)
{
	int answered = 0;

	while (c->in.len >= 2) {
		uint8_t *b = (uint8_t *)c->in.data + c->in.off;
		size_t qlen = (size_t)b[0] << 8 | b[1];
		uint8_t *out;
		int len;

		if (qlen < 12 || qlen > 1500)
			return -1;
		if (c->in.len < 2 + qlen)
			break;
		/* Backpressure: no answer the payload could not take yet. */
		if (!proxy_buf_room(p, c, &c->u2c, DNS_ANSWER_MAX + 2, DNS_OUT_MAX))
			break;
		out = (uint8_t *)c->u2c.data + c->u2c.off + c->u2c.len;
		len = answer(p, b + 2, qlen, out + 2, DNS_ANSWER_MAX);
		if (len <= 0)
			return -1;
		out[0] = (uint8_t)(len >> 8);
		out[1] = (uint8_t)len;
		c->u2c.len += (size_t)len + 2;
		c->in.off += 2 + qlen;
		c->in.len -= 2 + qlen;
		answered = 1;
	}
	return answered;
}

/* DNS over TCP (RFC 7766): many queries per connection, answered in
 * order.  The payload's unread answers are capped at DNS_OUT_MAX; while
 * they are, isd reads no further queries.  A connection where nothing
 * moves for DNS_IDLE_TIMEOUT ends (expire()). */
void proxy_dns_tcp_event(struct isd_proxy *p, struct conn *c)
{
	bool moved = false, progress = true;

	while (progress) {
		int r;

		progress = false;
		r = answer_tcp(p, c);
		if (r < 0)
			goto close;
		progress |= r > 0;
		r = proxy_buf_flush(p, c->cfd, &c->u2c, NULL);
		if (r == -2)
			goto close;
		progress |= r > 0;
		if (!c->c_eof && c->u2c.len + DNS_ANSWER_MAX + 2 <= DNS_OUT_MAX) {
			r = proxy_buf_fill(p, c, c->cfd, &c->in, DNS_IN_MAX);
			if (r == -2)
				goto close;
			if (r == -1)
				c->c_eof = true;
			progress |= r != 0;
		}
		moved |= progress;
	}
	if (moved)
		c->deadline = time(NULL) + DNS_IDLE_TIMEOUT;
	/* The payload sent all it will: close once it has every answer. */
	if (c->c_eof && !c->u2c.len)
		goto close;
	return;
close:
	proxy_conn_close(p, c);
}
