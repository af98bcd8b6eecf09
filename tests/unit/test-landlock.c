/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Landlock rule list as a pure function of the spec (src/landlock.c):
 * which mounts get write rules, which never do, and when there is none;
 * and what the landlock tier's connect guard lets a payload connect to
 * (src/connect-guard.c). */
#include "check.h"
#include "connect-guard.h"
#include "landlock.h"
#include "isd/spec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

static const struct isd_landlock_rule *find(const struct isd_landlock_plan *p, const char *path)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (!strcmp(p->rules[i].path, path))
			return &p->rules[i];
	return NULL;
}

static void add_mount(struct isd_spec *spec, int type, const char *dst, bool readonly, bool rebind)
{
	struct isd_mount *m = isd_spec_add_mount(spec);

	m->type = type;
	m->source = type == ISD_MOUNT_TMPFS ? NULL : isd_xstrdup("/srv/host");
	m->destination = isd_xstrdup(dst);
	m->readonly = readonly;
	m->rebind = rebind;
}

/* The guard's answer to a connect of a domain socket to HOST:PORT. */
static int guard(int domain, const char *host, uint16_t port, size_t len, struct sockaddr_storage *dst, socklen_t *dlen)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_scope_id = 7};
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	bool six = strchr(host, ':') != NULL;

	if (six)
		inet_pton(AF_INET6, host, &a6.sin6_addr);
	else
		inet_pton(AF_INET, host, &a4.sin_addr);
	return isd_connect_guard_check(domain, six ? (void *)&a6 : (void *)&a4, len ? len : six ? sizeof(a6) : sizeof(a4),
				       3128, dst, dlen);
}

static void test_connect_guard(void)
{
	struct sockaddr_storage dst;
	struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)&dst;
	socklen_t dlen;
	sa_family_t unspec = AF_UNSPEC;

	/* the relay, from IPv4 and IPv6 sockets, in an address isd built */
	CHECK(guard(AF_INET, "127.0.0.1", 3128, 0, &dst, &dlen) == 0 && dlen == sizeof(struct sockaddr_in) &&
	      ((struct sockaddr_in *)&dst)->sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	CHECK(guard(AF_INET6, "::ffff:127.0.0.1", 3128, 0, &dst, &dlen) == 0 && dlen == sizeof(*d6) &&
	      d6->sin6_scope_id == 0 && IN6_IS_ADDR_V4MAPPED(&d6->sin6_addr));
	CHECK(guard(AF_INET6, "::ffff:127.0.0.1", 3128, 24, &dst, &dlen) == 0);
	/* anything else: another loopback address, another port, ::1, the
	 * relay's address in the other family's socket */
	CHECK(guard(AF_INET, "127.0.0.2", 3128, 0, &dst, &dlen) == -EACCES);
	CHECK(guard(AF_INET, "127.0.0.1", 3129, 0, &dst, &dlen) == -EACCES);
	CHECK(guard(AF_INET, "0.0.0.0", 3128, 0, &dst, &dlen) == -EACCES);
	CHECK(guard(AF_INET, "192.0.2.1", 3128, 0, &dst, &dlen) == -EACCES);
	CHECK(guard(AF_INET6, "::1", 3128, 0, &dst, &dlen) == -EACCES);
	CHECK(guard(AF_INET6, "::ffff:127.0.0.2", 3128, 0, &dst, &dlen) == -EACCES);
	CHECK(guard(AF_INET6, "::127.0.0.1", 3128, 0, &dst, &dlen) == -EACCES);
	CHECK(guard(AF_INET, "::ffff:127.0.0.1", 3128, 0, &dst, &dlen) == -EACCES);
	CHECK(guard(AF_INET6, "127.0.0.1", 3128, 0, &dst, &dlen) == -EACCES);
	/* lengths the kernel refuses, AF_UNSPEC's disconnect */
	CHECK(guard(AF_INET, "127.0.0.1", 3128, 15, &dst, &dlen) == -EINVAL);
	CHECK(guard(AF_INET6, "::ffff:127.0.0.1", 3128, 23, &dst, &dlen) == -EINVAL);
	CHECK(guard(AF_INET, "127.0.0.1", 3128, sizeof(dst) + 1, &dst, &dlen) == -EINVAL);
	CHECK(isd_connect_guard_check(AF_INET, &unspec, 1, 3128, &dst, &dlen) == -EINVAL);
	CHECK(isd_connect_guard_check(AF_INET, &unspec, sizeof(unspec), 3128, &dst, &dlen) == 0 &&
	      dst.ss_family == AF_UNSPEC && dlen == sizeof(unspec));
}

/* --forward in this tier: a connect to 127.0.0.1 at a forward's port
 * goes to its target, in an address isd built; nothing else changes. */
static void test_connect_guard_forwards(void)
{
	struct isd_connect_guard *g = NULL;
	struct sockaddr_storage dst;
	struct sockaddr_in *d4 = (struct sockaddr_in *)&dst;
	struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)&dst;
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(8080)};
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(8080)};
	struct in6_addr one;
	socklen_t dlen;

	CHECK(isd_connect_guard_new(3128, &g) == 0);
	if (!g)
		return; /* no pidfd_getfd here: the guard is not made */
	CHECK(isd_connect_guard_add_forward(g, 8080, "127.0.0.1", 9090) == 0);
	CHECK(isd_connect_guard_add_forward(g, 8081, "::1", 443) == 0);
	inet_pton(AF_INET, "127.0.0.1", &a4.sin_addr);
	CHECK(isd_connect_guard_decide(g, AF_INET, &a4, sizeof(a4), &dst, &dlen) == 0 && dlen == sizeof(*d4) &&
	      d4->sin_port == htons(9090) && d4->sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &a6.sin6_addr);
	CHECK(isd_connect_guard_decide(g, AF_INET6, &a6, sizeof(a6), &dst, &dlen) == 0 && dlen == sizeof(*d6) &&
	      d6->sin6_port == htons(9090) && IN6_IS_ADDR_V4MAPPED(&d6->sin6_addr));
	/* an IPv6 target: from IPv6 sockets only */
	a6.sin6_port = htons(8081);
	inet_pton(AF_INET6, "::1", &one);
	CHECK(isd_connect_guard_decide(g, AF_INET6, &a6, sizeof(a6), &dst, &dlen) == 0 && d6->sin6_port == htons(443) &&
	      !memcmp(&d6->sin6_addr, &one, sizeof(one)));
	a4.sin_port = htons(8081);
	CHECK(isd_connect_guard_decide(g, AF_INET, &a4, sizeof(a4), &dst, &dlen) == -ENETUNREACH);
	/* the relay as before; another port, another loopback address, the
	 * target itself, the wrong family: refused */
	a4.sin_port = htons(3128);
	CHECK(isd_connect_guard_decide(g, AF_INET, &a4, sizeof(a4), &dst, &dlen) == 0 && d4->sin_port == htons(3128));
	a4.sin_port = htons(8082);
	CHECK(isd_connect_guard_decide(g, AF_INET, &a4, sizeof(a4), &dst, &dlen) == -EACCES);
	a4.sin_port = htons(9090);
	CHECK(isd_connect_guard_decide(g, AF_INET, &a4, sizeof(a4), &dst, &dlen) == -EACCES);
	a4.sin_port = htons(8080);
	inet_pton(AF_INET, "127.0.0.2", &a4.sin_addr);
	CHECK(isd_connect_guard_decide(g, AF_INET, &a4, sizeof(a4), &dst, &dlen) == -EACCES);
	inet_pton(AF_INET, "127.0.0.1", &a4.sin_addr);
	CHECK(isd_connect_guard_decide(g, AF_INET6, &a4, sizeof(a4), &dst, &dlen) == -EACCES);
	CHECK(isd_connect_guard_decide(g, AF_INET, &a4, sizeof(a4) - 1, &dst, &dlen) == -EINVAL);
	a6.sin6_port = htons(8080);
	inet_pton(AF_INET6, "::1", &a6.sin6_addr);
	CHECK(isd_connect_guard_decide(g, AF_INET6, &a6, sizeof(a6), &dst, &dlen) == -EACCES);
	for (int i = 2; i < ISD_CONNECT_GUARD_MAX_FORWARDS; i++)
		CHECK(isd_connect_guard_add_forward(g, (uint16_t)(9000 + i), "127.0.0.1", 80) == 0);
	CHECK(isd_connect_guard_add_forward(g, 9999, "127.0.0.1", 80) == -E2BIG);
	isd_connect_guard_free(g);
}

int main(void)
{
	struct isd_spec spec;
	struct isd_landlock_plan plan;
	const struct isd_landlock_rule *r, *dev;

	/* what isd exec gets: rw binds, tmpfs and the workspace, never a
	 * read-only mount or a guard's rebind */
	isd_spec_init(&spec);
	add_mount(&spec, ISD_MOUNT_BIND, "/rw", false, false);
	add_mount(&spec, ISD_MOUNT_BIND, "/ro", true, false);
	add_mount(&spec, ISD_MOUNT_TMPFS, "/tmp", false, false);
	add_mount(&spec, ISD_MOUNT_TMPFS, "/rotmp", true, false);
	add_mount(&spec, ISD_MOUNT_OVERLAY, "/proj", false, false);
	add_mount(&spec, ISD_MOUNT_BIND, "/rw/pinned", false, true);
	spec.workspace.path = isd_xstrdup("/proj");
	isd_landlock_plan(&spec, &plan);
	CHECK(plan.enabled);
	CHECK(find(&plan, "/rw") && find(&plan, "/tmp") && find(&plan, "/dev/shm"));
	CHECK((r = find(&plan, "/proj")) && !strcmp(r->why, "the cow workspace"));
	CHECK(!find(&plan, "/ro") && !find(&plan, "/rotmp") && !find(&plan, "/rw/pinned"));
	CHECK(!find(&plan, "/") && !find(&plan, "/proc") && !find(&plan, "/dev"));
	/* every writable place has the same rights (moves gain nothing);
	 * devices only write, truncate and ioctl */
	r = find(&plan, "/rw");
	dev = find(&plan, "/dev/null");
	CHECK(r && find(&plan, "/tmp")->access == r->access && find(&plan, "/proj")->access == r->access);
	CHECK(dev && find(&plan, "/dev/pts") && (dev->access & r->access) == dev->access && dev->access != r->access);
	CHECK(isd_landlock_handled(1) == 0 && (isd_landlock_handled(2) & r->access) == isd_landlock_handled(2));
	CHECK((isd_landlock_handled(7) & ~isd_landlock_handled(2)) != 0); /* truncate, ioctl_dev */
	isd_landlock_plan_free(&plan);

	/* isd build's RUN: its writable root */
	spec.writable_root = true;
	isd_landlock_plan(&spec, &plan);
	CHECK(plan.enabled && (r = find(&plan, "/")) && r->access == find(&plan, "/rw")->access);
	isd_landlock_plan_free(&plan);
	spec.writable_root = false;

	/* none where a sandbox must nest, or when asked */
	spec.seccomp = isd_xstrdup("nested");
	isd_landlock_plan(&spec, &plan);
	CHECK(!plan.enabled && plan.n_rules == 0 && strstr(plan.off_reason, "seccomp=nested"));
	isd_landlock_plan_free(&plan);
	free(spec.seccomp);
	spec.seccomp = isd_xstrdup("unconfined");
	isd_landlock_plan(&spec, &plan);
	CHECK(plan.enabled); /* seccomp only */
	isd_landlock_plan_free(&plan);
	spec.landlock_off = true;
	isd_landlock_plan(&spec, &plan);
	CHECK(!plan.enabled && strstr(plan.off_reason, "landlock=off"));
	isd_landlock_plan_free(&plan);
	isd_spec_free(&spec);
	test_connect_guard();
	test_connect_guard_forwards();
	return check_result();
}
