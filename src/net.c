/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "isd/net.h"
#include "isd/util.h"

#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <time.h>

int isd_net_loopback_up(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifm;
	unsigned seq = (unsigned)time(NULL), portid;
	int r = 0;
	ssize_t n;

	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl)
		return isd_error(-errno, "opening a netlink socket to bring up loopback");
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = isd_error(-errno, "binding the netlink socket");
		goto out;
	}
	portid = mnl_socket_get_portid(nl);

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	memset(ifm, 0, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = 1; /* "lo" is always ifindex 1 in a new namespace */
	ifm->ifi_flags = IFF_UP;
	ifm->ifi_change = IFF_UP;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		r = isd_error(-errno, "sending RTM_NEWLINK for loopback");
		goto out;
	}
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0) {
		r = isd_error(-errno, "reading the netlink answer for loopback");
		goto out;
	}
	if (mnl_cb_run(buf, (size_t)n, seq, portid, NULL, NULL) < 0)
		r = isd_error(-errno, "bringing up loopback");
out:
	mnl_socket_close(nl);
	return r;
}
