/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Creating and running one sandbox from a validated spec. */
#ifndef ISD_SANDBOX_H
#define ISD_SANDBOX_H

#include "isd/spec.h"

/* Runs the payload to completion; returns isd's exit status (the payload's,
 * 128+N for signal N, 125/126/127 for isd's own failures, already printed). */
int isd_sandbox_run(const struct isd_spec *spec);

#endif
