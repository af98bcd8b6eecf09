/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --mask: the patterns and the walk of the workspace that finds what they
 * match (src/workspace-mask.c). */
#ifndef ISD_WORKSPACE_MASK_H
#define ISD_WORKSPACE_MASK_H

#include "isd/spec.h"

/* ws->masked from ws->masks and ws->unmasks, against the host's tree. */
int isd_workspace_resolve_masks(struct isd_workspace *ws);

#endif
