/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "net.h"
#include "isd/process.h"
#include "isd/util.h"
#include "isd/path-util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
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

/* One request, one acknowledgement. */
static int netlink_request(struct nlmsghdr *nlh, const char *what)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	unsigned portid;
	int r = 0;
	ssize_t n;

	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl)
		return isd_error(-errno, "opening a netlink socket for %s", what);
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = isd_error(-errno, "binding the netlink socket for %s", what);
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		r = isd_error(-errno, "sending the netlink request for %s", what);
		goto out;
	}
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0) {
		r = isd_error(-errno, "reading the netlink answer for %s", what);
		goto out;
	}
	if (mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, portid, NULL, NULL) < 0)
		r = isd_error(-errno, "%s", what);
out:
	mnl_socket_close(nl);
	return r;
}

int isd_net_add_local_range(uint32_t addr, unsigned prefixlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;
	uint32_t be = htonl(addr);

	nlh->nlmsg_type = RTM_NEWADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	nlh->nlmsg_seq = (unsigned)time(NULL);
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	memset(ifa, 0, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = (unsigned char)prefixlen;
	ifa->ifa_scope = RT_SCOPE_HOST;
	ifa->ifa_index = 1; /* lo */
	mnl_attr_put_u32(nlh, IFA_LOCAL, be);
	mnl_attr_put_u32(nlh, IFA_ADDRESS, be);
	/* On lo the kernel makes the whole prefix local: every address in it
	 * can be connected to and accepted on. */
	return netlink_request(nlh, "adding the fake address range to loopback");
}

/* ---- --network private: pasta or slirp4netns attach from the host ---- */

int isd_net_private_prepare(struct isd_net_helper *h)
{
	/* Tests choose one ("pasta", "slirp4netns") or pretend none is there. */
	const char *only = getenv("ISD_PRIVATE_NET_HELPER");

	memset(h, 0, sizeof(*h));
	h->pid = -1;
	h->exit_fd = -1;
	if ((!only || !strcmp(only, "pasta")) && isd_find_program("pasta", h->path, sizeof(h->path)))
		return 0;
	if ((!only || !strcmp(only, "slirp4netns")) && isd_find_program("slirp4netns", h->path, sizeof(h->path))) {
		h->slirp = true;
		return 0;
	}
	h->path[0] = '\0';
	isd_error(-ENOENT, "--network private needs pasta or slirp4netns on the host");
	isd_error_hint("install the package passt (pasta) or slirp4netns, e.g. apt-get install passt");
	return -ENOENT;
}

char *isd_net_private_resolv_conf(void)
{
	struct isd_net_helper h;
	char *host = NULL;

	/* slirp4netns answers DNS on 10.0.2.3 from the host's resolvers;
	 * pasta leaves the namespace the host's own resolv.conf. */
	if (isd_net_private_prepare(&h) == 0 && h.slirp)
		return isd_xstrdup("nameserver 10.0.2.3\n");
	isd_error_clear();
	if (isd_read_file_at(AT_FDCWD, "/etc/resolv.conf", &host, NULL) == 0)
		return host;
	return isd_xstrdup("# isd: --network=private, no resolver known\n");
}

/* pasta in the foreground says nothing when it is ready: the default
 * route it installs in the namespace is the sign. */
static bool has_default_route(pid_t child)
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/route", (int)child);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char ifname[32], dest[16];
		if (sscanf(line, "%31s %15s", ifname, dest) == 2 && !strcmp(dest, "00000000"))
			found = true;
	}
	fclose(f);
	return found;
}

/* isd exec runs many sandboxes from one process (isd build's RUN steps):
 * a failed start leaks no descriptor. */
static void close_pipes(int ready[2], int quit[2])
{
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (quit[i] >= 0)
			close(quit[i]);
	}
}

int isd_net_private_start(struct isd_net_helper *h, pid_t child)
{
	char netns[64], userns[64], pidarg[16], readyarg[32], exitarg[32], runas[32];
	int ready[2] = {-1, -1}, quit[2] = {-1, -1};
	pid_t pid;

	int ns_fd[2] = {-1, -1};

	snprintf(netns, sizeof(netns), "/proc/%d/ns/net", (int)child);
	snprintf(userns, sizeof(userns), "/proc/%d/ns/user", (int)child);
	/* A root caller's sandbox runs as another id, so pasta (which drops
	 * its capabilities first) could not open the namespaces by pid: isd
	 * opens them and pasta gets the descriptors. */
	if (!h->slirp && geteuid() == 0) {
		ns_fd[0] = open(netns, O_RDONLY | O_CLOEXEC);
		ns_fd[1] = open(userns, O_RDONLY | O_CLOEXEC);
		if (ns_fd[0] < 0 || ns_fd[1] < 0) {
			int r = isd_error(-errno, "opening the sandbox's namespaces for pasta");
			if (ns_fd[0] >= 0)
				close(ns_fd[0]);
			if (ns_fd[1] >= 0)
				close(ns_fd[1]);
			return r;
		}
		snprintf(netns, sizeof(netns), "/proc/self/fd/%d", ns_fd[0]);
		snprintf(userns, sizeof(userns), "/proc/self/fd/%d", ns_fd[1]);
	}
	snprintf(pidarg, sizeof(pidarg), "%d", (int)child);
	/* pasta started by root would switch to "nobody" first and then may
	 * not open the sandbox's namespaces, which belong to the caller. */
	snprintf(runas, sizeof(runas), "%u:%u", (unsigned)getuid(), (unsigned)getgid());
	if (h->slirp && (pipe2(ready, O_CLOEXEC) < 0 || pipe2(quit, O_CLOEXEC) < 0)) {
		int r = isd_error(-errno, "creating pipes for slirp4netns");
		close_pipes(ready, quit);
		return r;
	}
	snprintf(readyarg, sizeof(readyarg), "--ready-fd=%d", ready[1]);
	snprintf(exitarg, sizeof(exitarg), "--exit-fd=%d", quit[0]);
	pid = fork();
	if (pid < 0) {
		int r = isd_error(-errno, "starting %s", h->path);
		close_pipes(ready, quit);
		return r;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (h->slirp) {
			fcntl(ready[1], F_SETFD, 0);
			fcntl(quit[0], F_SETFD, 0);
			/* --disable-host-loopback: the host's 127.0.0.1 stays out of reach */
			execl(h->path, "slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
			      "--userns-path", userns, readyarg, exitarg, pidarg, "tap0", (char *)NULL);
		} else {
			for (int i = 0; i < 2; i++)
				if (ns_fd[i] >= 0)
					fcntl(ns_fd[i], F_SETFD, 0);
			/* No port forwarding either way and no gateway mapped to
			 * the host: the host's loopback services stay out of reach. */
			execl(h->path, "pasta", "--config-net", "--quiet", "--foreground", "-t", "none", "-u", "none",
			      "-T", "none", "-U", "none", "--no-map-gw", "--runas", runas, "--userns", userns, "--netns", netns,
			      (char *)NULL);
		}
		_exit(127);
	}
	h->pid = pid;
	for (int i = 0; i < 2; i++)
		if (ns_fd[i] >= 0)
			close(ns_fd[i]);
	if (h->slirp) {
		struct pollfd pfd = {.fd = ready[0], .events = POLLIN};
		char c;
		bool ok;

		close(ready[1]);
		close(quit[0]);
		h->exit_fd = quit[1];
		ok = poll(&pfd, 1, 10000) == 1 && read(ready[0], &c, 1) == 1;
		close(ready[0]);
		if (!ok)
			return isd_error(0, "slirp4netns did not configure the sandbox's network (is /dev/net/tun usable? it must be mode 0666)");
		return 0;
	}
	for (int i = 0; i < 1000; i++) {
		int status;

		if (has_default_route(child))
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			h->pid = -1;
			return isd_error(0, "pasta failed to set up the sandbox's network (exit status %d; is /dev/net/tun usable? it must be mode 0666)",
					 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		}
		usleep(10000);
	}
	return isd_error(-ETIMEDOUT, "waiting for pasta to configure the sandbox's network");
}

void isd_net_private_stop(struct isd_net_helper *h)
{
	if (h->exit_fd >= 0) {
		close(h->exit_fd);
		h->exit_fd = -1;
	}
	if (h->pid > 0) {
		kill(h->pid, SIGTERM);
		isd_wait_pid(h->pid, NULL);
		h->pid = -1;
	}
}
