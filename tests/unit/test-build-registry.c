/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd build's registry references: parsing, short-name aliases (built in
 * and from registries.conf), mirrors, insecure hosts, Docker Hub's names;
 * credentials from auth.json files (their order, keys, base64).
 * Pure: no request is made.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/fsutil.h"
#include "isd/util.h"
#include "internal.h"
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

static void write_text(const char *path, const char *text)
{
	CHECK(isd_write_file_at(AT_FDCWD, path, text, O_CREAT | O_TRUNC, 0600) == 0);
}

/* user:password found for registry/repo, from file. */
static bool creds_are(const char *registry, const char *repo, const char *user, const char *password,
		      const char *file)
{
	struct isd_reg_auth a;
	bool ok;

	isd_error_clear();
	if (isd_reg_auth_find(registry, repo, &a) < 0) {
		fprintf(stderr, "%s: %s\n", registry, isd_error_message());
		return false;
	}
	if (!user) {
		ok = !a.user;
	} else {
		ok = a.user && !strcmp(a.user, user) && !strcmp(a.password, password) && !strcmp(a.file, file);
		if (!ok)
			fprintf(stderr, "%s/%s: got %s from %s\n", registry, repo ? repo : "", a.user ? a.user : "none",
				a.file ? a.file : "-");
	}
	isd_reg_auth_free(&a);
	return ok;
}

static void test_auth(void)
{
	char dir[] = "/tmp/isd-test-auth-XXXXXX";
	_cleanup_free_ char *run = NULL, *cfg = NULL, *docker = NULL, *runfile = NULL, *cfgfile = NULL;
	_cleanup_free_ char *dockerfile = NULL, *env = NULL, *files = NULL;
	size_t len;
	char *plain;
	struct isd_reg_auth a;

	/* base64: standard, unpadded, URL-safe; garbage refused */
	plain = isd_base64_decode("YWxpY2U6czNjcmV0", &len);
	CHECK(plain && len == 12 && !strcmp(plain, "alice:s3cret"));
	free(plain);
	plain = isd_base64_decode("YQ", &len);
	CHECK(plain && len == 1 && !strcmp(plain, "a"));
	free(plain);
	plain = isd_base64_decode("-_8=", &len);
	CHECK(plain && len == 2 && (unsigned char)plain[0] == 0xfb && (unsigned char)plain[1] == 0xff);
	free(plain);
	CHECK(isd_base64_decode("no spaces!", NULL) == NULL);

	CHECK(mkdtemp(dir) != NULL);
	run = isd_xasprintf("%s/run", dir);
	cfg = isd_xasprintf("%s/cfg", dir);
	docker = isd_xasprintf("%s/docker", dir);
	runfile = isd_xasprintf("%s/containers/auth.json", run);
	cfgfile = isd_xasprintf("%s/containers/auth.json", cfg);
	dockerfile = isd_xasprintf("%s/config.json", docker);
	env = isd_xasprintf("%s/env.json", dir);
	CHECK(isd_mkdir_p(run, 0700) == 0 && isd_mkdir_p(cfg, 0700) == 0 && isd_mkdir_p(docker, 0700) == 0);
	{
		_cleanup_free_ char *d1 = isd_xasprintf("%s/containers", run), *d2 = isd_xasprintf("%s/containers", cfg);
		CHECK(isd_mkdir_p(d1, 0700) == 0 && isd_mkdir_p(d2, 0700) == 0);
	}
	unsetenv("REGISTRY_AUTH_FILE");
	setenv("XDG_RUNTIME_DIR", run, 1);
	setenv("XDG_CONFIG_HOME", cfg, 1);
	setenv("DOCKER_CONFIG", docker, 1);

	/* Nothing anywhere: no credentials, no error. */
	CHECK(creds_are("quay.io", "a/b", NULL, NULL, NULL));
	files = isd_reg_auth_files_text();
	CHECK(strstr(files, runfile) == files && strstr(files, cfgfile) && strstr(files, dockerfile));

	/* docker's config.json: its old URL keys; Docker Hub's hosts. */
	write_text(dockerfile, "{\"auths\": {\"https://index.docker.io/v1/\": {\"auth\": \"aHViOmh1YnB3\"},"
			       " \"http://127.0.0.1:5000\": {\"auth\": \"bG9jYWw6bG9jYWxwdw==\"}},"
			       " \"credsStore\": \"none\"}");
	CHECK(creds_are("docker.io", "library/busybox", "hub", "hubpw", dockerfile));
	CHECK(creds_are("127.0.0.1:5000", "x", "local", "localpw", dockerfile));
	CHECK(creds_are("127.0.0.1:5001", "x", NULL, NULL, NULL));

	/* The XDG_CONFIG_HOME file comes before docker's, the runtime one
	 * before both; the most specific key of a file wins. */
	write_text(cfgfile, "{\"auths\": {\"127.0.0.1:5000\": {\"auth\": \"Y2ZnOmNmZ3B3\"}}}");
	CHECK(creds_are("127.0.0.1:5000", "x", "cfg", "cfgpw", cfgfile));
	write_text(runfile, "{\"auths\": {\"127.0.0.1:5000\": {\"auth\": \"cnVuOnJ1bnB3\"},"
			    " \"127.0.0.1:5000/team\": {\"auth\": \"dGVhbTp0ZWFtcHc=\"},"
			    " \"127.0.0.1:5000/team/img\": {\"auth\": \"aW1nOmltZzpwdw==\"},"
			    " \"127.0.0.1:5000/teamx\": {\"auth\": \"eDp4\"}}}");
	CHECK(creds_are("127.0.0.1:5000", "team/img", "img", "img:pw", runfile)); /* a ':' in the password */
	CHECK(creds_are("127.0.0.1:5000", "team/other", "team", "teampw", runfile));
	CHECK(creds_are("127.0.0.1:5000", "teamy/other", "run", "runpw", runfile));
	CHECK(creds_are("127.0.0.1:5000", NULL, "run", "runpw", runfile));
	CHECK(creds_are("docker.io", "library/busybox", "hub", "hubpw", dockerfile));

	/* REGISTRY_AUTH_FILE: the only file read. */
	write_text(env, "{\"auths\": {\"quay.io\": {\"auth\": \"ZW52OmVudnB3\"}}}");
	setenv("REGISTRY_AUTH_FILE", env, 1);
	CHECK(creds_are("quay.io", "a/b", "env", "envpw", env));
	CHECK(creds_are("127.0.0.1:5000", "x", NULL, NULL, NULL));
	free(files);
	files = isd_reg_auth_files_text();
	CHECK(!strcmp(files, env));

	/* Broken files are errors naming the file, never showing a secret. */
	write_text(env, "{\"auths\": {\"quay.io\": {\"auth\": \"not base64!\"}}}");
	CHECK(isd_reg_auth_find("quay.io", "a", &a) == -EBADMSG && strstr(isd_error_message(), env));
	write_text(env, "{\"auths\": {\"quay.io\": {\"auth\": \"bm9jb2xvbg==\"}}}"); /* "nocolon" */
	CHECK(isd_reg_auth_find("quay.io", "a", &a) == -EBADMSG && !strstr(isd_error_message(), "nocolon"));
	write_text(env, "auths = nope");
	CHECK(isd_reg_auth_find("quay.io", "a", &a) == -EBADMSG && strstr(isd_error_message(), "not a JSON object"));
	unsetenv("REGISTRY_AUTH_FILE");

	{
		_cleanup_close_ int dfd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
		isd_rm_rf_at(dfd, dir + 5);
	}
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
	test_auth();
	return check_result();
}
