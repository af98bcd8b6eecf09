/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Network namespace setup over rtnetlink (libmnl): no `ip` binary needed. */
#ifndef ISD_NET_H
#define ISD_NET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Bring the loopback interface of the current network namespace up. */
int isd_net_loopback_up(void);

/* Add ADDR/PREFIXLEN (host order) to lo, which makes the whole prefix
 * local: netless mode's fake range. */
int isd_net_add_local_range(uint32_t addr, unsigned prefixlen);

/* --network private: a user-mode network stack attached from the host. */
struct isd_net_helper {
	pid_t pid;        /* the helper process, -1 when none */
	int exit_fd;      /* slirp4netns: closing it ends slirp4netns */
	bool slirp;       /* slirp4netns rather than pasta */
	char path[PATH_MAX];
};
/* Parent, before clone: find pasta (preferred) or slirp4netns; a clear
 * error naming the package when neither is installed. */
int isd_net_private_prepare(struct isd_net_helper *h);
/* Parent, after clone and before the child goes on: attach the helper to
 * the child's namespaces and wait until the interface is configured. */
int isd_net_private_start(struct isd_net_helper *h, pid_t child);
void isd_net_private_stop(struct isd_net_helper *h);
/* /etc/resolv.conf content for --network private. */
char *isd_net_private_resolv_conf(void);
#endif
