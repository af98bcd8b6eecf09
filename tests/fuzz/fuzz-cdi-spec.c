/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: a CDI spec file from memory (src/cdi.c).  Whatever the
 * bytes, the parser accepts them or records one message; an accepted spec
 * has only absolute paths without "..", and nothing crashes or leaks.
 */
#include "cdi.h"
#include "isd/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void paths_ok(const struct isd_cdi_edits *e)
{
	for (size_t i = 0; i < e->n_nodes; i++)
		if (e->nodes[i].path[0] != '/' || strstr(e->nodes[i].path, "/../") ||
		    (e->nodes[i].host_path && e->nodes[i].host_path[0] != '/'))
			abort();
	for (size_t i = 0; i < e->n_mounts; i++)
		if (e->mounts[i].host_path[0] != '/' || e->mounts[i].container_path[0] != '/' ||
		    strstr(e->mounts[i].container_path, "/../"))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	struct isd_cdi_spec spec;

	if (size > 1 << 20)
		return 0;
	text = isd_xmalloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	if (isd_cdi_parse_spec(text, "fuzz.json", &spec) == 0) {
		paths_ok(&spec.edits);
		for (size_t i = 0; i < spec.n_devices; i++)
			paths_ok(&spec.devices[i].edits);
	} else if (!isd_error_message()[0]) {
		abort();
	}
	isd_cdi_spec_free(&spec);
	isd_error_clear();
	free(text);
	return 0;
}
