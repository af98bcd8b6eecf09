/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The landlock tier's one seccomp listener (a filter chain holds one):
 * the activity log's, whose filter also holds the connect guard's rule in
 * netless (isd_activity_join_guard), or the guard's alone.  The child
 * installs it and sends it to isd over a socket; isd answers from then
 * on (src/activity.c, src/connect-guard.c).
 */
#define _GNU_SOURCE
#include "sandbox-landlock-internal.h"
#include "connect-guard.h"
#include "isd/activity.h"
#include "isd/util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

int isd_tier_install_listener(const struct isd_activity *a, const struct isd_connect_guard *g, int sock)
{
	int32_t code;
	int fd, r;

	if (!a)
		r = g ? isd_connect_guard_install(g, sock) : 0;
	else {
		fd = isd_activity_install(a);
		code = fd < 0 ? fd : 0;
		/* With none, isd says why (isd_activity_off), as the full
		 * tier does. */
		r = fd < 0 ? (send(sock, &code, sizeof(code), MSG_NOSIGNAL) < 0 ? -errno : 0)
			   : isd_send_with_fd(sock, &code, sizeof(code), fd);
		if (fd >= 0)
			close(fd);
		if (r < 0)
			return isd_error(r, "passing the activity log's listener to isd");
		/* The log without exec records goes on; the guard's rules
		 * only without a listener of another's (EBUSY). */
		r = fd >= 0 || !g ? 0 : fd == -EBUSY ? -EBUSY : isd_error(fd, "installing the connect guard's seccomp filter");
	}
	if (r == -EBUSY)
		fprintf(stderr, "isd: note: --network netless: an outer seccomp filter has the one listener a process "
				"may have, so isd cannot do the payload's connects: Landlock holds them to the relay's "
				"port only, on any address\n");
	return r;
}

int isd_tier_start_listener(struct isd_activity *a, struct isd_connect_guard *g, int sock)
{
	if (!a)
		return g ? isd_connect_guard_start(g, sock) : 0;
	/* The log's thread reads the listener (or why there is none) itself:
	 * started now, it is ready when the payload's first exec waits. */
	return isd_activity_listen_on(a, sock);
}
