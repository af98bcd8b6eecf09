/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for everything a user can type: the input is split at
 * newlines into an `isd exec` command line (also fed as profile text), then
 * parsed, validated and printed as JSON.  Nothing may crash or leak, and
 * nothing is created on the system (parsing never writes).
 */
#include "isd/cli.h"
#include "isd/profile.h"
#include "isd/spec.h"
#include "isd/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *env[] = {"HOME=/nonexistent-fuzz-home", "PATH=/usr/bin:/bin", "USER=fuzz", "SECRET=x", NULL};
	struct isd_caller caller = {.uid = 1000, .gid = 1000, .home = "/nonexistent-fuzz-home",
				    .cwd = "/nonexistent-fuzz-cwd", .environ = env};
	struct isd_profile_vars vars = {.home = "/h", .pwd = "/p", .user = "u", .agent = "omp", .uid = 1, .gid = 2};
	struct isd_args parsed = {0};
	struct isd_spec spec;
	char *text, *p, *argv[66];
	int argc = 0;

	if (size > 4096)
		return 0;
	text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';

	isd_profile_parse_text(text, "fuzz.conf", &vars, &parsed, 7);
	isd_args_free(&parsed);

	argv[argc++] = "exec";
	for (p = text; p && argc < 64;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl++ = '\0';
		/* Options that read from paths are fine; --profile and --*-file
		 * would make the fuzzer read the file system at random. */
		if (strncmp(p, "--prof", 6) && !strstr(p, "-file"))
			argv[argc++] = p;
		p = nl;
	}
	argv[argc] = NULL;

	isd_spec_init(&spec);
	if (isd_cli_parse_exec(argc, argv, &caller, &spec) == 0 && isd_spec_validate(&spec) == 0)
		free(isd_spec_to_json(&spec));
	isd_spec_free(&spec);
	isd_error_clear();
	free(text);
	return 0;
}
