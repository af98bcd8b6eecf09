/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox side of netless networking and --forward: init creates the
 * listening sockets inside the sandbox's network namespace (it still holds
 * CAP_NET_BIND_SERVICE and CAP_NET_ADMIN there) and hands each to isd on
 * the host.  After that the sandbox holds none of them: connections queue
 * in the kernel until isd's relay thread accepts them.  For --publish it
 * hands over its network namespace itself.
 */
#define _GNU_SOURCE
#include "net.h"
#include "isd/proxy.h"
#include "isd/spec.h"
#include "isd/util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int listen_inet(int type, uint32_t addr, uint16_t port, int *out)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(addr)};
	char text[INET_ADDRSTRLEN];
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0), one = 1;

	inet_ntop(AF_INET, &sin.sin_addr, text, sizeof(text));
	if (fd < 0)
		return isd_error(-errno, "creating a socket for %s:%u in the sandbox", text, port);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, SOMAXCONN) < 0)) {
		int r = isd_error(-errno, "listening on %s:%u in the sandbox", text, port);
		close(fd);
		return r;
	}
	*out = fd;
	return 0;
}

static int send_and_close(int (*send_fd)(int32_t, int), int role, size_t index, int fd)
{
	int r = send_fd(ISD_NET_FD_TAG(role, index), fd);

	close(fd);
	return r;
}

static int listen_unix(const char *path, int *out)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	_cleanup_free_ char *dir = isd_xstrdup(path);
	int fd;

	/* Parent directories on the sandbox's own tmpfs (/run, /tmp). */
	for (char *s = strchr(dir + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return isd_error(-errno, "--forward-unix: creating %s in the sandbox", dir);
		*s = '/';
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return isd_error(-errno, "--forward-unix: creating a socket");
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(fd, SOMAXCONN) < 0) {
		int r = isd_error(-errno, "--forward-unix: listening on %s in the sandbox", path);
		isd_error_hint("the sandbox path must be in a writable place such as /run or /tmp");
		close(fd);
		return r;
	}
	*out = fd;
	return 0;
}

int isd_net_sandbox_listeners(const struct isd_spec *spec, int (*send_fd)(int32_t tag, int fd))
{
	const struct isd_netcfg *cfg = &spec->net;
	int fd, r;

	if (spec->network == ISD_NET_NETLESS) {
		struct isd_static_name *names = NULL;
		size_t n;

		r = isd_net_add_local_range(ISD_FAKE_SELF, ISD_FAKE_PREFIX);
		if (r < 0)
			return r;
		if ((r = listen_inet(SOCK_STREAM, INADDR_LOOPBACK, isd_netcfg_proxy_port(cfg), &fd)) < 0 ||
		    (r = send_and_close(send_fd, ISD_NET_FD_PROXY, 0, fd)) < 0)
			return r;
		if ((r = listen_inet(SOCK_DGRAM, INADDR_LOOPBACK, 53, &fd)) < 0 ||
		    (r = send_and_close(send_fd, ISD_NET_FD_DNS_UDP, 0, fd)) < 0)
			return r;
		if ((r = listen_inet(SOCK_STREAM, INADDR_LOOPBACK, 53, &fd)) < 0 ||
		    (r = send_and_close(send_fd, ISD_NET_FD_DNS_TCP, 0, fd)) < 0)
			return r;
		/* 80 and 443 on every address: any fake address, including
		 * those the DNS stub hands out later for wildcard rules. */
		if ((r = listen_inet(SOCK_STREAM, INADDR_ANY, 80, &fd)) < 0 ||
		    (r = send_and_close(send_fd, ISD_NET_FD_CAPTURE, 0, fd)) < 0)
			return r;
		if ((r = listen_inet(SOCK_STREAM, INADDR_ANY, 443, &fd)) < 0 ||
		    (r = send_and_close(send_fd, ISD_NET_FD_CAPTURE, 0, fd)) < 0)
			return r;
		/* Other allowed ports only on the name's own fake address, so
		 * that the payload keeps those ports for its own servers. */
		n = isd_netcfg_static_names(cfg, &names);
		for (size_t i = 0; i < cfg->n_allow && r >= 0; i++) {
			const struct isd_allow_rule *a = &cfg->allow[i];
			uint32_t fake = 0;

			if (a->wildcard || a->is_addr || a->port == ISD_PORT_ANY || a->port == 80 || a->port == 443)
				continue;
			for (size_t j = 0; j < n; j++)
				if (!strcmp(names[j].name, a->host))
					fake = names[j].fake;
			if (!fake)
				continue;
			r = listen_inet(SOCK_STREAM, fake, a->port, &fd);
			if (r == -EADDRINUSE) {
				r = 0; /* the same name and port listed twice */
				continue;
			}
			if (r >= 0)
				r = send_and_close(send_fd, ISD_NET_FD_CAPTURE, 0, fd);
		}
		isd_static_names_free(names, n);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < cfg->n_forwards; i++) {
		r = listen_inet(SOCK_STREAM, INADDR_LOOPBACK, cfg->forwards[i].sandbox_port, &fd);
		if (r < 0 || (r = send_and_close(send_fd, ISD_NET_FD_FORWARD, i, fd)) < 0)
			return r;
	}
	for (size_t i = 0; i < cfg->n_forwards_unix; i++) {
		r = listen_unix(cfg->forwards_unix[i].sandbox_path, &fd);
		if (r < 0 || (r = send_and_close(send_fd, ISD_NET_FD_FORWARD_UNIX, i, fd)) < 0)
			return r;
	}
	/* --publish: isd's socket factory enters this namespace to connect
	 * to the servers inside (src/proxy-publish.c). */
	if (cfg->n_publish) {
		fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return isd_error(-errno, "--publish: opening the sandbox's network namespace");
		if ((r = send_and_close(send_fd, ISD_NET_FD_NETNS, 0, fd)) < 0)
			return r;
	}
	return 0;
}
