/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Network namespace setup over rtnetlink (libmnl): no `ip` binary needed. */
#ifndef ISD_NET_H
#define ISD_NET_H

/* Bring the loopback interface of the current network namespace up. */
int isd_net_loopback_up(void);

#endif
