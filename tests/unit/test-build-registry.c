/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd build's registry references: parsing, short-name aliases (built in
 * and from registries.conf), mirrors, insecure hosts, Docker Hub's names.
 * Pure: no request is made.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"
#include "../../rootfs-builder/internal.h"
#include "check.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static bool ref_is(const char *text, const char *registry, const char *host, const char *repo, const char *tag,
		   const char *digest)
{
	struct isd_reg_ref r;
	bool ok;

	isd_error_clear();
	if (isd_reg_ref_parse(text, &r) < 0) {
		fprintf(stderr, "%s: %s\n", text, isd_error_message());
		return false;
	}
	ok = !strcmp(r.registry, registry) && !strcmp(r.host, host) && !strcmp(r.repo, repo) &&
	     (tag ? r.tag && !strcmp(r.tag, tag) : !r.tag) && (digest ? r.digest && !strcmp(r.digest, digest) : !r.digest);
	if (!ok)
		fprintf(stderr, "%s: got %s %s %s %s %s\n", text, r.registry, r.host, r.repo, r.tag ? r.tag : "-",
			r.digest ? r.digest : "-");
	isd_reg_ref_free(&r);
	return ok;
}

static bool refused(const char *text, const char *msg)
{
	struct isd_reg_ref r;

	isd_error_clear();
	if (isd_reg_ref_parse(text, &r) == 0) {
		isd_reg_ref_free(&r);
		return false;
	}
	return strstr(isd_error_message(), msg) != NULL;
}

int main(void)
{
	char conf[] = "/tmp/isd-test-registries-XXXXXX";
	int fd = mkstemp(conf);
	struct isd_reg_ref r;

	CHECK(fd >= 0);
	setenv("ISD_REGISTRIES_CONF", "/nonexistent/registries.conf", 1);
	CHECK(ref_is("fedora", "registry.fedoraproject.org", "registry.fedoraproject.org", "fedora", "latest", NULL));
	CHECK(ref_is("fedora:41", "registry.fedoraproject.org", "registry.fedoraproject.org", "fedora", "41", NULL));
	CHECK(ref_is("quay.io/fedora/fedora:rawhide", "quay.io", "quay.io", "fedora/fedora", "rawhide", NULL));
	CHECK(ref_is("docker.io/busybox", "docker.io", "registry-1.docker.io", "library/busybox", "latest", NULL));
	CHECK(ref_is("index.docker.io/org/img:1", "docker.io", "registry-1.docker.io", "org/img", "1", NULL));
	CHECK(ref_is("localhost/x", "localhost", "localhost", "x", "latest", NULL));
	CHECK(ref_is("127.0.0.1:5000/a/b:v1@sha256:" D64, "127.0.0.1:5000", "127.0.0.1:5000", "a/b", "v1",
		     "sha256:" D64));
	CHECK(ref_is("127.0.0.1:5000/a@sha256:" D64, "127.0.0.1:5000", "127.0.0.1:5000", "a", NULL, "sha256:" D64));
	CHECK(refused("busybox", "short name without an alias"));
	CHECK(refused("quay.io/a@sha256:123", "digest must be"));
	CHECK(refused("quay.io/Upper", "not a valid image reference"));
	CHECK(refused("quay.io/a/../b", "not a valid image reference"));
	CHECK(refused("quay.io/a:bad/tag", "not a valid"));

	/* loopback: plain http allowed; others only when configured */
	CHECK(isd_reg_ref_parse("127.0.0.1:5000/a", &r) == 0 && r.insecure);
	isd_reg_ref_free(&r);
	CHECK(isd_reg_ref_parse("[::1]:5000/a", &r) == 0 && r.insecure);
	isd_reg_ref_free(&r);
	CHECK(isd_reg_ref_parse("quay.io/a", &r) == 0 && !r.insecure && !r.mirrors);
	isd_reg_ref_free(&r);
	CHECK(isd_host_is_loopback("localhost:1") && isd_host_is_loopback("127.1.2.3") && !isd_host_is_loopback("10.0.0.1"));

	/* registries.conf */
	dprintf(fd, "# aliases\nalias busybox  quay.io/libpod/busybox\nalias fedora quay.io/fedora/fedora # mine\n"
		    "mirror quay.io mirror.example:5000\ninsecure quay.io\n\n");
	close(fd);
	setenv("ISD_REGISTRIES_CONF", conf, 1);
	CHECK(ref_is("busybox:1", "quay.io", "quay.io", "libpod/busybox", "1", NULL));
	CHECK(ref_is("fedora", "quay.io", "quay.io", "fedora/fedora", "latest", NULL));
	CHECK(isd_reg_ref_parse("fedora", &r) == 0 && r.insecure && r.mirrors && !strcmp(r.mirrors[0], "mirror.example:5000"));
	isd_reg_ref_free(&r);
	fd = open(conf, O_WRONLY | O_TRUNC);
	dprintf(fd, "alias onlyname\n");
	close(fd);
	CHECK(refused("quay.io/x", ":1: expected"));
	fd = open(conf, O_WRONLY | O_TRUNC);
	dprintf(fd, "alias x y\n");
	close(fd);
	CHECK(refused("x", "must be REGISTRY/REPOSITORY"));
	unlink(conf);
	return check_result();
}
