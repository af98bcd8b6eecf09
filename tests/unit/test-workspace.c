/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The workspace's pure logic: DIR[:MODE] and the gitignore-like masks. */
#define _GNU_SOURCE
#include "check.h"
#include "workspace.h"

#include <string.h>

static void test_parse(void)
{
	char *path = NULL;
	enum isd_workspace_mode mode;

	CHECK(isd_workspace_parse("proj", "/home/u", &path, &mode) == 0);
	CHECK(path && !strcmp(path, "/home/u/proj") && mode == ISD_WORKSPACE_RW);
	free(path);
	CHECK(isd_workspace_parse("/srv/p:cow", "/x", &path, &mode) == 0);
	CHECK(path && !strcmp(path, "/srv/p") && mode == ISD_WORKSPACE_COW);
	free(path);
	CHECK(isd_workspace_parse("/srv/a:b:ro", "/x", &path, &mode) == 0);
	CHECK(path && !strcmp(path, "/srv/a:b") && mode == ISD_WORKSPACE_RO);
	free(path);
	path = NULL;
	CHECK(isd_workspace_parse("/srv/p:bogus", "/x", &path, &mode) == -EINVAL);
	CHECK(strstr(isd_error_message(), "unknown mode \"bogus\""));
	CHECK(isd_workspace_parse(":cow", "/x", &path, &mode) == -EINVAL);
	CHECK(!path);
}

static void test_masks(void)
{
	/* a name at any depth */
	CHECK(isd_workspace_mask_matches(".env", ".env", false));
	CHECK(isd_workspace_mask_matches(".env", "a/b/.env", false));
	CHECK(!isd_workspace_mask_matches(".env", "a/.env.local", false));
	CHECK(isd_workspace_mask_matches(".env.*", "a/.env.local", false));
	CHECK(isd_workspace_mask_matches("*.pem", "certs/server.pem", false));
	CHECK(isd_workspace_mask_matches("*.pem", ".pem", false));
	CHECK(isd_workspace_mask_matches("id_rsa*", "keys/id_rsa.pub", false));
	/* directories only */
	CHECK(isd_workspace_mask_matches(".aws/", ".aws", true));
	CHECK(isd_workspace_mask_matches(".aws/", "x/.aws", true));
	CHECK(!isd_workspace_mask_matches(".aws/", ".aws", false));
	/* anchored at the workspace root */
	CHECK(isd_workspace_mask_matches("/secrets.txt", "secrets.txt", false));
	CHECK(!isd_workspace_mask_matches("/secrets.txt", "a/secrets.txt", false));
	CHECK(isd_workspace_mask_matches("config/*.env", "config/prod.env", false));
	CHECK(!isd_workspace_mask_matches("config/*.env", "config/sub/prod.env", false));
	CHECK(!isd_workspace_mask_matches("config/*.env", "x/config/prod.env", false));
	/* git's any-depth spelling */
	CHECK(isd_workspace_mask_matches("**/.npmrc", "a/b/.npmrc", false));
	CHECK(isd_workspace_mask_matches("**/.npmrc", ".npmrc", false));
	CHECK(!isd_workspace_mask_matches(".netrc", "netrc", false));
	/* the shortcuts (exact, *suffix, prefix*) agree with fnmatch */
	CHECK(isd_workspace_mask_matches("id_rsa*", "id_rsa", false));
	CHECK(!isd_workspace_mask_matches("id_rsa*", "my_id_rsa", false));
	CHECK(!isd_workspace_mask_matches("*.pem", "pem", false));
	CHECK(!isd_workspace_mask_matches("*.pem", "a.pem.bak", false));
	CHECK(isd_workspace_mask_matches("[st]ecret?.txt", "d/secret1.txt", false));
	CHECK(isd_workspace_mask_matches("a*b", "axxb", false));
	CHECK(!isd_workspace_mask_matches("a*b", "axxbc", false));
	CHECK(isd_workspace_mask_matches("\\*lit", "*lit", false));
	CHECK(!isd_workspace_mask_matches("\\*lit", "xlit", false));
}

int main(void)
{
	test_parse();
	test_masks();
	return check_result();
}
