/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The network policy as the command line gives it: --allow, --allow-file,
 * --add-host, --forward, --forward-unix, --proxy-port, --network-log; its
 * checks, its JSON form, the proxy variables for the payload, and the pure
 * matching the proxy applies.
 */
#define _GNU_SOURCE
#include "isd/proxy.h"
#include "isd/spec.h"
#include "isd/util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

static int parse_port(const char *s, uint16_t *out, bool allow_any)
{
	uint32_t v;

	if (allow_any && !strcmp(s, "*")) {
		*out = ISD_PORT_ANY;
		return 0;
	}
	if (isd_parse_uint32(s, &v) < 0 || v == 0 || v > 65535)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

/* Splits "host", "host:port", "[v6]", "[v6]:port"; a bare IPv6 literal
 * (more than one ':') is the host alone. */
static int split_host_port(char *s, char **host, char **port)
{
	char *colon;

	*port = NULL;
	if (s[0] == '[') {
		char *end = strchr(s, ']');
		if (!end)
			return -EINVAL;
		*end = '\0';
		*host = s + 1;
		if (end[1] == ':')
			*port = end + 2;
		else if (end[1])
			return -EINVAL;
		return 0;
	}
	*host = s;
	colon = strrchr(s, ':');
	if (colon && colon == strchr(s, ':')) {
		*colon = '\0';
		*port = colon + 1;
	}
	return 0;
}

void isd_allow_rule_free(struct isd_allow_rule *rule)
{
	free(rule->host);
	free(rule->text);
	memset(rule, 0, sizeof(*rule));
}

int isd_allow_rule_parse(const char *arg, struct isd_allow_rule *rule)
{
	_cleanup_free_ char *copy = isd_xstrdup(arg);
	char *host, *port;

	memset(rule, 0, sizeof(*rule));
	if (split_host_port(copy, &host, &port) < 0)
		return isd_error(0, "--allow %s: expected HOST[:PORT], *.DOMAIN[:PORT] or [IPv6][:PORT]", arg);
	rule->port = ISD_ALLOW_DEFAULT_PORT;
	if (port && parse_port(port, &rule->port, true) < 0)
		return isd_error(0, "--allow %s: invalid port '%s' (expected 1..65535 or *)", arg, port);
	if (isd_addr_parse(host, &rule->addr) == 0) {
		rule->is_addr = true;
	} else {
		if (!strncmp(host, "*.", 2)) {
			rule->wildcard = true;
			host += 2;
		}
		if (strchr(host, '*') || !isd_host_normalize(host))
			return isd_error(0, "--allow %s: '%s' is not a host name, *.domain or IP address", arg, host);
	}
	rule->host = isd_xstrdup(host);
	rule->text = isd_xstrdup(arg);
	return 0;
}

int isd_netcfg_add_allow(struct isd_netcfg *cfg, const char *arg, const char *origin)
{
	struct isd_allow_rule rule;
	int r = isd_allow_rule_parse(arg, &rule);

	if (r < 0) {
		if (origin && strcmp(origin, "--allow"))
			isd_error_hint("in %s", origin);
		return r;
	}
	cfg->allow = isd_xrealloc(cfg->allow, (cfg->n_allow + 1) * sizeof(*cfg->allow));
	cfg->allow[cfg->n_allow++] = rule;
	cfg->netless_options = true;
	return 0;
}

int isd_netcfg_read_allow_file(struct isd_netcfg *cfg, const char *path)
{
	_cleanup_free_ char *text = NULL;
	char *line, *save = NULL;
	unsigned lineno = 0;
	int r = isd_read_file_at(AT_FDCWD, path, &text, NULL);

	if (r < 0)
		return isd_error(r, "reading --allow-file %s", path);
	cfg->netless_options = true;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#'), *end;
		_cleanup_free_ char *origin = NULL;

		lineno++;
		if (hash)
			*hash = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		end = line + strlen(line);
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			*--end = '\0';
		if (!*line)
			continue;
		origin = isd_xasprintf("%s line %u", path, lineno);
		r = isd_netcfg_add_allow(cfg, line, origin);
		if (r < 0)
			return r;
	}
	return 0;
}

int isd_netcfg_add_host(struct isd_netcfg *cfg, const char *arg)
{
	_cleanup_free_ char *copy = isd_xstrdup(arg);
	char *sep = strchr(copy, ':'), *addr;
	struct isd_add_host h = {0};

	/* Docker accepts NAME:IP and NAME=IP; IPv6 addresses contain ':'. */
	if (strchr(copy, '='))
		sep = strchr(copy, '=');
	if (!sep)
		return isd_error(0, "--add-host %s: expected NAME:IP", arg);
	*sep = '\0';
	addr = sep + 1;
	if (addr[0] == '[' && addr[strlen(addr) - 1] == ']') {
		addr[strlen(addr) - 1] = '\0';
		addr++;
	}
	if (!isd_host_normalize(copy))
		return isd_error(0, "--add-host %s: '%s' is not a host name", arg, copy);
	if (!strcmp(addr, "host-gateway"))
		return isd_error(0, "--add-host %s: host-gateway has no meaning here; use --forward PORT:127.0.0.1:PORT to reach a host service", arg);
	if (isd_addr_parse(addr, &h.addr) < 0)
		return isd_error(0, "--add-host %s: '%s' is not an IP address", arg, addr);
	h.name = isd_steal_ptr(copy);
	cfg->hosts = isd_xrealloc(cfg->hosts, (cfg->n_hosts + 1) * sizeof(*cfg->hosts));
	cfg->hosts[cfg->n_hosts++] = h;
	return 0;
}

int isd_netcfg_add_forward(struct isd_netcfg *cfg, const char *arg)
{
	_cleanup_free_ char *copy = isd_xstrdup(arg);
	struct isd_forward f = {0};
	char *first = copy, *rest, *host, *port;

	struct isd_addr a;

	/* [SANDBOX_PORT:]HOST:PORT; HOST may be [IPv6]. */
	size_t digits = strspn(copy, "0123456789");

	rest = NULL;
	if (digits > 0 && copy[digits] == ':' && strchr(copy + digits + 1, ':')) {
		copy[digits] = '\0';
		rest = copy + digits + 1;
	}
	if (rest) {
		if (parse_port(first, &f.sandbox_port, false) < 0)
			return isd_error(0, "--forward %s: invalid sandbox port '%s'", arg, first);
	} else {
		rest = copy;
	}
	if (split_host_port(rest, &host, &port) < 0 || !port || !*host)
		return isd_error(0, "--forward %s: expected [SANDBOX_PORT:]HOST:PORT", arg);
	if (parse_port(port, &f.host_port, false) < 0)
		return isd_error(0, "--forward %s: invalid port '%s'", arg, port);
	if (!f.sandbox_port)
		f.sandbox_port = f.host_port;
	if (isd_addr_parse(host, &a) < 0 && !isd_host_normalize(host))
		return isd_error(0, "--forward %s: '%s' is not a host name or IP address", arg, host);
	for (size_t i = 0; i < cfg->n_forwards; i++)
		if (cfg->forwards[i].sandbox_port == f.sandbox_port)
			return isd_error(0, "--forward %s: sandbox port %u is forwarded twice", arg, f.sandbox_port);
	f.host = isd_xstrdup(host);
	cfg->forwards = isd_xrealloc(cfg->forwards, (cfg->n_forwards + 1) * sizeof(*cfg->forwards));
	cfg->forwards[cfg->n_forwards++] = f;
	return 0;
}

int isd_netcfg_add_forward_unix(struct isd_netcfg *cfg, const char *arg)
{
	const char *sep = strchr(arg, ':');
	struct isd_forward_unix f = {0};
	_cleanup_free_ char *sandbox = NULL;
	struct sockaddr_un *sun_probe = NULL;
	size_t max = sizeof(sun_probe->sun_path) - 1;

	if (!sep || sep == arg || !sep[1])
		return isd_error(0, "--forward-unix %s: expected SANDBOX_PATH:HOST_PATH", arg);
	sandbox = strndup(arg, (size_t)(sep - arg));
	if (sandbox[0] != '/' || sep[1] != '/')
		return isd_error(0, "--forward-unix %s: both paths must be absolute", arg);
	if (isd_normalize_abs_path(sandbox, &f.sandbox_path) < 0)
		return isd_error(0, "--forward-unix %s: '%s' must not contain '..'", arg, sandbox);
	if (strlen(f.sandbox_path) > max || strlen(sep + 1) > max) {
		free(f.sandbox_path);
		return isd_error(0, "--forward-unix %s: a unix socket path is at most %zu bytes", arg, max);
	}
	f.host_path = isd_xstrdup(sep + 1);
	cfg->forwards_unix = isd_xrealloc(cfg->forwards_unix, (cfg->n_forwards_unix + 1) * sizeof(*cfg->forwards_unix));
	cfg->forwards_unix[cfg->n_forwards_unix++] = f;
	return 0;
}

int isd_netcfg_set_proxy_port(struct isd_netcfg *cfg, const char *arg)
{
	if (parse_port(arg, &cfg->proxy_port, false) < 0)
		return isd_error(0, "--proxy-port %s: expected a port number 1..65535", arg);
	cfg->netless_options = true;
	return 0;
}

int isd_netcfg_set_log(struct isd_netcfg *cfg, const char *arg, const char *cwd)
{
	if (!*arg)
		return isd_error(0, "--network-log: empty file name");
	free(cfg->log_path);
	cfg->log_path = arg[0] == '/' ? isd_xstrdup(arg) : isd_xasprintf("%s/%s", cwd, arg);
	return 0;
}

uint16_t isd_netcfg_proxy_port(const struct isd_netcfg *cfg)
{
	return cfg->proxy_port ? cfg->proxy_port : ISD_PROXY_DEFAULT_PORT;
}

void isd_netcfg_free(struct isd_netcfg *cfg)
{
	for (size_t i = 0; i < cfg->n_allow; i++)
		isd_allow_rule_free(&cfg->allow[i]);
	free(cfg->allow);
	for (size_t i = 0; i < cfg->n_hosts; i++)
		free(cfg->hosts[i].name);
	free(cfg->hosts);
	for (size_t i = 0; i < cfg->n_forwards; i++)
		free(cfg->forwards[i].host);
	free(cfg->forwards);
	for (size_t i = 0; i < cfg->n_forwards_unix; i++) {
		free(cfg->forwards_unix[i].sandbox_path);
		free(cfg->forwards_unix[i].host_path);
	}
	free(cfg->forwards_unix);
	free(cfg->publish);
	free(cfg->log_path);
	memset(cfg, 0, sizeof(*cfg));
}

/* ---- matching ---- */

static bool port_ok(uint16_t rule, uint16_t port)
{
	return rule == ISD_PORT_ANY || port == ISD_PORT_ANY || rule == port;
}

const struct isd_allow_rule *isd_allow_match(const struct isd_netcfg *cfg, const char *name, uint16_t port)
{
	struct isd_addr a;
	bool literal = isd_addr_parse(name, &a) == 0;
	size_t nlen = strlen(name);

	for (size_t i = 0; i < cfg->n_allow; i++) {
		const struct isd_allow_rule *r = &cfg->allow[i];
		size_t hlen = strlen(r->host);

		if (!port_ok(r->port, port))
			continue;
		if (literal) {
			/* IP literals only when listed as such. */
			if (r->is_addr && isd_addr_equal(&r->addr, &a))
				return r;
			continue;
		}
		if (r->is_addr)
			continue;
		if (!r->wildcard && !strcmp(r->host, name))
			return r;
		if (r->wildcard && nlen > hlen + 1 && name[nlen - hlen - 1] == '.' &&
		    !strcmp(name + nlen - hlen, r->host))
			return r;
	}
	return NULL;
}

bool isd_allow_addr(const struct isd_netcfg *cfg, const struct isd_addr *a, uint16_t port)
{
	for (size_t i = 0; i < cfg->n_allow; i++)
		if (cfg->allow[i].is_addr && port_ok(cfg->allow[i].port, port) && isd_addr_equal(&cfg->allow[i].addr, a))
			return true;
	return false;
}

const struct isd_add_host *isd_netcfg_find_host(const struct isd_netcfg *cfg, const char *name)
{
	/* Docker: the last --add-host for a name wins. */
	for (size_t i = cfg->n_hosts; i-- > 0;)
		if (!strcmp(cfg->hosts[i].name, name))
			return &cfg->hosts[i];
	return NULL;
}

size_t isd_netcfg_static_names(const struct isd_netcfg *cfg, struct isd_static_name **out)
{
	struct isd_static_name *names = NULL;
	size_t n = 0;

	for (size_t i = 0; i < cfg->n_allow + cfg->n_hosts; i++) {
		const char *name;
		bool dup = false;

		if (i < cfg->n_allow) {
			if (cfg->allow[i].wildcard || cfg->allow[i].is_addr)
				continue;
			name = cfg->allow[i].host;
		} else {
			name = cfg->hosts[i - cfg->n_allow].name;
		}
		for (size_t j = 0; j < n && !dup; j++)
			dup = !strcmp(names[j].name, name);
		if (dup || ISD_FAKE_STATIC + n >= ISD_FAKE_DYNAMIC)
			continue;
		names = isd_xrealloc(names, (n + 1) * sizeof(*names));
		names[n].name = isd_xstrdup(name);
		names[n].fake = ISD_FAKE_STATIC + (uint32_t)n;
		n++;
	}
	*out = names;
	return n;
}

void isd_static_names_free(struct isd_static_name *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i].name);
	free(names);
}

/* ---- spec integration ---- */

int isd_netcfg_validate(const struct isd_spec *spec)
{
	const struct isd_netcfg *c = &spec->net;
	const char *mode = isd_network_mode_name(spec->network);
	uint16_t pp = isd_netcfg_proxy_port(c);

	if (c->netless_options && spec->network != ISD_NET_NETLESS)
		return isd_error(0, "--allow, --allow-file and --proxy-port need --network netless (the network mode is %s)", mode);
	if ((c->n_forwards || c->n_forwards_unix) && spec->network == ISD_NET_HOST)
		return isd_error(0, "--forward and --forward-unix do not apply to --network host (the sandbox shares the host's network already)");
	if (c->log_path && spec->network != ISD_NET_NETLESS && !c->n_forwards && !c->n_forwards_unix && !c->n_publish)
		return isd_error(0, "--network-log needs --network netless, a --forward or a --publish");
	for (size_t i = 0; i < c->n_forwards; i++) {
		uint16_t p = c->forwards[i].sandbox_port;
		if (spec->network == ISD_NET_NETLESS && (p == pp || p == 53 || p == 80 || p == 443))
			return isd_error(0, "--forward: sandbox port %u is taken by isd's %s in netless mode", p,
					 p == pp ? "proxy (see --proxy-port)" : p == 53 ? "DNS stub" : "capture of ports 80 and 443");
	}
	if (spec->network == ISD_NET_NETLESS && (pp == 53 || pp == 80 || pp == 443))
		return isd_error(0, "--proxy-port %u: taken by isd's DNS stub or capture in netless mode", pp);
	return isd_netcfg_validate_publish(spec);
}

static void setenv_default(struct isd_spec *spec, const char *name, const char *value)
{
	if (!isd_spec_getenv(spec, name))
		isd_spec_setenv(spec, name, value);
}

void isd_netcfg_apply_env(struct isd_spec *spec)
{
	uint16_t port = isd_netcfg_proxy_port(&spec->net);
	_cleanup_free_ char *http = isd_xasprintf("http://127.0.0.1:%u", port);
	_cleanup_free_ char *socks = isd_xasprintf("socks5h://127.0.0.1:%u", port);
	_cleanup_free_ char *java = NULL;
	static const char no_proxy[] = "localhost,127.0.0.1,::1";

	if (spec->network != ISD_NET_NETLESS)
		return;
	/* Every client's spelling of "the proxy": HTTP(S), SOCKS and the
	 * exceptions; forwarded ports live on the sandbox's loopback and are
	 * never proxied. */
	static const struct {
		const char *name;
		enum { HTTP, SOCKS, NO_PROXY, ONE } value;
	} vars[] = {
		{"HTTP_PROXY", HTTP},       {"http_proxy", HTTP},         {"HTTPS_PROXY", HTTP},
		{"https_proxy", HTTP},      {"ALL_PROXY", SOCKS},         {"all_proxy", SOCKS},
		{"NO_PROXY", NO_PROXY},     {"no_proxy", NO_PROXY},       {"NODE_USE_ENV_PROXY", ONE},
		{"npm_config_proxy", HTTP}, {"npm_config_https_proxy", HTTP}, {"npm_config_noproxy", NO_PROXY},
		{"YARN_HTTP_PROXY", HTTP},  {"YARN_HTTPS_PROXY", HTTP},   {"PIP_PROXY", HTTP},
		{"CARGO_HTTP_PROXY", HTTP},
	};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		setenv_default(spec, vars[i].name,
			       vars[i].value == HTTP ? http : vars[i].value == SOCKS ? socks
							 : vars[i].value == NO_PROXY ? no_proxy : "1");
	if (!isd_spec_getenv(spec, "GIT_CONFIG_COUNT")) {
		isd_spec_setenv(spec, "GIT_CONFIG_COUNT", "1");
		isd_spec_setenv(spec, "GIT_CONFIG_KEY_0", "http.proxy");
		isd_spec_setenv(spec, "GIT_CONFIG_VALUE_0", http);
	}
	java = isd_xasprintf("-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=%u -Dhttps.proxyHost=127.0.0.1 "
			     "-Dhttps.proxyPort=%u -Dhttp.nonProxyHosts=localhost|127.0.0.1", port, port);
	setenv_default(spec, "JAVA_TOOL_OPTIONS", java);
}

static void fake_name(uint32_t fake, char *buf, size_t len)
{
	struct in_addr a = {.s_addr = htonl(fake)};
	inet_ntop(AF_INET, &a, buf, (socklen_t)len);
}

char *isd_netcfg_hosts_lines(const struct isd_spec *spec)
{
	const struct isd_netcfg *c = &spec->net;
	struct isd_static_name *names = NULL;
	size_t n = 0, len = 0;
	char *out = isd_xstrdup("");

	if (spec->network == ISD_NET_NETLESS)
		n = isd_netcfg_static_names(c, &names);
	for (size_t i = 0; i < c->n_hosts; i++) {
		char addr[INET6_ADDRSTRLEN];
		char *line;

		/* netless: the name stands for its fake address, which isd's
		 * capture turns into a checked connection to the real one. */
		isd_addr_format(&c->hosts[i].addr, addr, sizeof(addr));
		for (size_t j = 0; j < n; j++)
			if (!strcmp(names[j].name, c->hosts[i].name))
				fake_name(names[j].fake, addr, sizeof(addr));
		line = isd_xasprintf("%s\t%s\n", addr, c->hosts[i].name);
		out = isd_xrealloc(out, len + strlen(line) + 1);
		memcpy(out + len, line, strlen(line) + 1);
		len += strlen(line);
		free(line);
	}
	isd_static_names_free(names, n);
	return out;
}

struct json_object *isd_netcfg_to_json(const struct isd_spec *spec)
{
	const struct isd_netcfg *c = &spec->net;
	json_object *o = json_object_new_object();
	json_object *allow = json_object_new_array(), *hosts = json_object_new_array();
	json_object *fwd = json_object_new_array();

	json_object_object_add(o, "mode", json_object_new_string(isd_network_mode_name(spec->network)));
	if (spec->network == ISD_NET_NETLESS) {
		json_object_object_add(o, "proxy", json_object_new_string(
			isd_spec_getenv(spec, "HTTPS_PROXY") ? isd_spec_getenv(spec, "HTTPS_PROXY") : ""));
		json_object_object_add(o, "proxy_port", json_object_new_int(isd_netcfg_proxy_port(c)));
		json_object_object_add(o, "dns_stub", json_object_new_string("127.0.0.1:53"));
		json_object_object_add(o, "fake_range", json_object_new_string("198.18.0.0/15"));
		for (size_t i = 0; i < c->n_allow; i++) {
			json_object *r = json_object_new_object();
			/* a name may be 253 bytes: the audit shows all of it */
			_cleanup_free_ char *host = isd_xasprintf("%s%s", c->allow[i].wildcard ? "*." : "", c->allow[i].host);
			json_object_object_add(r, "host", json_object_new_string(host));
			if (c->allow[i].port == ISD_PORT_ANY)
				json_object_object_add(r, "port", json_object_new_string("*"));
			else
				json_object_object_add(r, "port", json_object_new_int(c->allow[i].port));
			json_object_array_add(allow, r);
		}
	}
	json_object_object_add(o, "allow", allow);
	for (size_t i = 0; i < c->n_hosts; i++) {
		char addr[INET6_ADDRSTRLEN], *s;
		isd_addr_format(&c->hosts[i].addr, addr, sizeof(addr));
		s = isd_xasprintf("%s:%s", c->hosts[i].name, addr);
		json_object_array_add(hosts, json_object_new_string(s));
		free(s);
	}
	json_object_object_add(o, "add_hosts", hosts);
	for (size_t i = 0; i < c->n_forwards; i++) {
		json_object *f = json_object_new_object();
		json_object_object_add(f, "sandbox", json_object_new_int(c->forwards[i].sandbox_port));
		json_object_object_add(f, "host", json_object_new_string(c->forwards[i].host));
		json_object_object_add(f, "port", json_object_new_int(c->forwards[i].host_port));
		json_object_array_add(fwd, f);
	}
	for (size_t i = 0; i < c->n_forwards_unix; i++) {
		json_object *f = json_object_new_object();
		json_object_object_add(f, "sandbox", json_object_new_string(c->forwards_unix[i].sandbox_path));
		json_object_object_add(f, "host", json_object_new_string(c->forwards_unix[i].host_path));
		json_object_array_add(fwd, f);
	}
	json_object_object_add(o, "forwards", fwd);
	json_object_object_add(o, "publish", isd_netcfg_publish_json(c));
	if (c->log_path)
		json_object_object_add(o, "log", json_object_new_string(c->log_path));
	return o;
}
