/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * -p/--publish [IP:]HOSTPORT:SANDBOXPORT[/tcp]: Docker's syntax for a port
 * of the host that reaches a server inside the sandbox, in every network
 * mode that gives the sandbox a network namespace of its own.  This file
 * reads and checks the option; src/proxy-publish.c relays.
 *
 * Unlike Docker, the host address defaults to 127.0.0.1: Docker's 0.0.0.0
 * would hand an agent's dev server (and whatever the agent makes it serve)
 * to everyone on the LAN.  0.0.0.0 or another address must be written out.
 */
#define _GNU_SOURCE
#include "isd/proxy.h"
#include "isd/spec.h"
#include "isd/util.h"

#include <arpa/inet.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

/* "N" or "A-B" (A <= B), every port 1..65535. */
static int parse_port_range(const char *s, uint16_t *first, uint16_t *count)
{
	_cleanup_free_ char *copy = isd_xstrdup(s);
	char *dash = strchr(copy, '-');
	uint32_t a, b;

	if (dash)
		*dash = '\0';
	if (isd_parse_uint32(copy, &a) < 0 || a == 0 || a > 65535)
		return -EINVAL;
	b = a;
	if (dash && (isd_parse_uint32(dash + 1, &b) < 0 || b < a || b > 65535))
		return -EINVAL;
	*first = (uint16_t)a;
	*count = (uint16_t)(b - a + 1);
	return 0;
}

static bool is_any(const struct isd_addr *a)
{
	static const struct in6_addr any6 = IN6ADDR_ANY_INIT;

	return a->family == AF_INET ? a->v4.s_addr == htonl(INADDR_ANY) : !memcmp(&a->v6, &any6, sizeof(any6));
}

/* Would both want the same socket address of the host?  0.0.0.0 takes the
 * port on every IPv4 address (:: on every IPv6 one: isd binds it
 * IPv6-only). */
static bool overlaps(const struct isd_publish *a, const struct isd_publish *b)
{
	return a->host_port == b->host_port && a->addr.family == b->addr.family &&
	       (isd_addr_equal(&a->addr, &b->addr) || is_any(&a->addr) || is_any(&b->addr));
}

int isd_netcfg_add_publish(struct isd_netcfg *cfg, const char *arg)
{
	_cleanup_free_ char *copy = isd_xstrdup(arg);
	char *ports = copy, *proto = strchr(copy, '/'), *colon;
	const char *addr_text = "127.0.0.1";
	uint16_t hfirst, hcount, sfirst, scount;
	struct isd_addr addr;

	if (proto) {
		*proto++ = '\0';
		if (strcmp(proto, "tcp"))
			return isd_error(0, "--publish %s: only tcp is relayed (not '%s')", arg, proto);
	}
	if (copy[0] == '[') {
		/* [IPv6]:HOSTPORT:SANDBOXPORT */
		char *end = strchr(copy, ']');
		if (!end || end[1] != ':')
			return isd_error(0, "--publish %s: expected [IP:]HOSTPORT:SANDBOXPORT", arg);
		*end = '\0';
		addr_text = copy + 1;
		ports = end + 2;
	} else if ((colon = strchr(copy, ':')) && strchr(colon + 1, ':')) {
		*colon = '\0';
		addr_text = copy;
		ports = colon + 1;
		if (strchr(ports, ':') != strrchr(ports, ':'))
			return isd_error(0, "--publish %s: an IPv6 address goes in brackets: [ADDR]:HOSTPORT:SANDBOXPORT", arg);
	}
	colon = strchr(ports, ':');
	if (!colon)
		return isd_error(0, "--publish %s: expected [IP:]HOSTPORT:SANDBOXPORT (isd does not pick a host port)", arg);
	*colon = '\0';
	if (isd_addr_parse(addr_text, &addr) < 0)
		return isd_error(0, "--publish %s: '%s' is not an IP address of the host", arg, addr_text);
	if (!*ports)
		return isd_error(0, "--publish %s: the host port is missing (isd does not pick one)", arg);
	if (parse_port_range(ports, &hfirst, &hcount) < 0)
		return isd_error(0, "--publish %s: invalid host port '%s' (1..65535, or a range A-B)", arg, ports);
	if (parse_port_range(colon + 1, &sfirst, &scount) < 0)
		return isd_error(0, "--publish %s: invalid sandbox port '%s' (1..65535, or a range A-B)", arg, colon + 1);
	if (hcount != scount)
		return isd_error(0, "--publish %s: the host and sandbox ranges differ in length (%u, %u ports)", arg, hcount,
				 scount);
	if (cfg->n_publish + hcount > ISD_PUBLISH_MAX)
		return isd_error(0, "--publish %s: more than %d published ports", arg, ISD_PUBLISH_MAX);
	for (uint32_t i = 0; i < hcount; i++) {
		struct isd_publish p = {.addr = addr, .host_port = (uint16_t)(hfirst + i),
					.sandbox_port = (uint16_t)(sfirst + i)};
		char shown[INET6_ADDRSTRLEN];

		for (size_t j = 0; j < cfg->n_publish; j++)
			if (overlaps(&cfg->publish[j], &p)) {
				isd_addr_format(&cfg->publish[j].addr, shown, sizeof(shown));
				return isd_error(0, "--publish %s: host port %u is published twice (also as %s%s%s:%u)", arg,
						 p.host_port, addr.family == AF_INET6 ? "[" : "", shown,
						 addr.family == AF_INET6 ? "]" : "", cfg->publish[j].host_port);
			}
		cfg->publish = isd_xrealloc(cfg->publish, (cfg->n_publish + 1) * sizeof(*cfg->publish));
		cfg->publish[cfg->n_publish++] = p;
	}
	return 0;
}

int isd_netcfg_validate_publish(const struct isd_spec *spec)
{
	const struct isd_netcfg *c = &spec->net;
	uint16_t pp = isd_netcfg_proxy_port(c);

	for (size_t i = 0; i < c->n_publish; i++) {
		uint16_t port = c->publish[i].sandbox_port;

		/* Relaying would take the host port the server itself wants
		 * when both are the same: a clear no is better. */
		if (spec->network == ISD_NET_HOST)
			return isd_error(0, "--publish does not apply to --network host: the sandbox shares the host's network, "
					    "a server inside listens on the host already (on 127.0.0.1:%u)", port);
		if (spec->network == ISD_NET_NETLESS && (port == pp || port == 53 || port == 80 || port == 443))
			return isd_error(0, "--publish: sandbox port %u is taken by isd's %s in netless mode", port,
					 port == pp ? "proxy (see --proxy-port)" : port == 53 ? "DNS stub" : "capture of ports 80 and 443");
		for (size_t j = 0; j < c->n_forwards; j++)
			if (c->forwards[j].sandbox_port == port)
				return isd_error(0, "--publish: sandbox port %u is a --forward to the host, not a server inside", port);
	}
	return 0;
}

struct json_object *isd_netcfg_publish_json(const struct isd_netcfg *cfg)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < cfg->n_publish; i++) {
		json_object *o = json_object_new_object();
		char addr[INET6_ADDRSTRLEN];

		isd_addr_format(&cfg->publish[i].addr, addr, sizeof(addr));
		json_object_object_add(o, "host", json_object_new_string(addr));
		json_object_object_add(o, "host_port", json_object_new_int(cfg->publish[i].host_port));
		json_object_object_add(o, "sandbox_port", json_object_new_int(cfg->publish[i].sandbox_port));
		json_object_array_add(a, o);
	}
	return a;
}
