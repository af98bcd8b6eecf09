/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd-build: `isd build` and `isd image`, run by isd (src/main.c) as a
 * program of its own, so that every `isd exec` start does not pay for
 * loading libcurl, libarchive and libcrypto, which only these need.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "build"))
		return isd_build_main(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "image") || !strcmp(argv[1], "images")))
		return isd_image_main(argc - 1, argv + 1);
	fprintf(stderr, "isd-build: expected build or image (run it as isd build / isd image)\n");
	return ISD_EXIT_FAILURE;
}
