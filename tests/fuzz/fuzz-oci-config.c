/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for isd-runtime's plan: the input is a config.json,
 * read with and without isd's annotations allowed and both cgroupsPath
 * syntaxes, then printed as the plan's JSON.  Nothing may crash or leak;
 * the parse reads nothing but the input (and /proc for capabilities).
 */
#include "isd/oci.h"
#include "isd/spec.h"
#include "isd/util.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned flag_sets[] = { 0, ISD_OCI_LOAD_ANNOTATIONS | ISD_OCI_LOAD_SYSTEMD_CGROUP };

	if (size > 1 << 20)
		return 0;
	for (size_t i = 0; i < sizeof(flag_sets) / sizeof(flag_sets[0]); i++) {
		struct isd_spec spec;
		struct isd_oci_extra extra;

		isd_spec_init(&spec);
		isd_oci_extra_init(&extra);
		if (isd_oci_config_parse((const char *)data, size, "/fuzz-bundle", "fuzz", flag_sets[i], &spec,
					 &extra) == 0)
			free(isd_oci_plan_to_json(&spec, &extra));
		isd_spec_free(&spec);
		isd_oci_extra_free(&extra);
		isd_error_clear();
	}
	return 0;
}
