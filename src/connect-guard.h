/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connect guard of the landlock tier's netless mode: the payload's
 * connect(2) on an IP socket is done by isd, to the relay's address and
 * port only (src/connect-guard.c says how and why).
 */
#ifndef ISD_CONNECT_GUARD_H
#define ISD_CONNECT_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct isd_connect_guard;

/* 0 when isd can take the payload's sockets here, or -errno: a seccomp
 * profile refuses isd pidfd_getfd (-EPERM: Docker's default one does, but
 * with CAP_SYS_PTRACE), or the kernel predates it (Linux 5.6).  Without,
 * a socket of isd's replaces the payload's at its connect. */
int isd_connect_guard_possible(void);
/* Before the fork: the filter (connect notified), for a relay listening
 * on 127.0.0.1:relay_port. */
int isd_connect_guard_new(uint16_t relay_port, struct isd_connect_guard **out);
/* --forward SANDBOX_PORT:HOST:HOST_PORT: the payload's connect to
 * 127.0.0.1:sandbox_port (the loopback it shares with isd) is made to
 * HOST:HOST_PORT instead, as the full tier's relay would (HOST an address
 * or a name, resolved now).  At most ISD_CONNECT_GUARD_MAX_FORWARDS. */
#define ISD_CONNECT_GUARD_MAX_FORWARDS 16
int isd_connect_guard_add_forward(struct isd_connect_guard *g, uint16_t sandbox_port, const char *host,
				  uint16_t host_port);
/* In the payload's child, no_new_privs set: installs the filter and sends
 * its listener to isd through sock.  0 or -errno (-EBUSY, said by no
 * error: an outer filter has a listener already).  Does not allocate. */
int isd_connect_guard_install(const struct isd_connect_guard *g, int sock);
/* In isd: the listener from sock (none: the child ended or failed before,
 * which is not this function's to say), whose notifications a thread of
 * the guard's answers from then on until isd_connect_guard_free. */
int isd_connect_guard_start(struct isd_connect_guard *g, int sock);
void isd_connect_guard_free(struct isd_connect_guard *g);

/* Answers one connect notification req, taken from listener: how the
 * activity log's listener, which holds the one listener of a filter
 * that joins its exec rules and the guard's (isd/activity.h,
 * isd_activity_join_guard), answers the guard's.  In the process that
 * answers, never in the payload. */
struct seccomp_notif;
void isd_connect_guard_answer(const struct isd_connect_guard *g, int listener, const struct seccomp_notif *req);

/* ---- the decision, exposed for the unit tests ---- */

/* The payload's connect(2) of a socket of family domain (AF_INET or
 * AF_INET6) to addr (len bytes, as read from the payload): -errno to
 * refuse, or 0 with *dst (*dst_len bytes) what isd connects the socket
 * to, built by isd, never the payload's bytes: 127.0.0.1:relay_port (an
 * IPv6 socket: ::ffff:127.0.0.1), or AF_UNSPEC, which disconnects. */
int isd_connect_guard_check(int domain, const void *addr, size_t len, uint16_t relay_port,
			    struct sockaddr_storage *dst, socklen_t *dst_len);
/* The same with the guard's forwards: a connect to 127.0.0.1 at a
 * forward's sandbox port goes to its target (an IPv4 one mapped on an
 * IPv6 socket; an IPv6 one refused on an IPv4 socket). */
int isd_connect_guard_decide(const struct isd_connect_guard *g, int domain, const void *addr, size_t len,
			     struct sockaddr_storage *dst, socklen_t *dst_len);

#endif
