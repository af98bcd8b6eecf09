/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stand-ins a rw workspace gets for names git would read as
 * configuration (a rw workspace has no review): workspace.c lists them,
 * src/workspace-git-host.c makes them on the host before the run and
 * removes them after it, shared between runs of the same project.  Each
 * is what git reads as nothing: a commondir that names its own directory,
 * a config or attributes file holding one comment.
 */
#ifndef ISD_WORKSPACE_GIT_H
#define ISD_WORKSPACE_GIT_H

#include <stdbool.h>

#define ISD_GIT_SELF_COMMONDIR ".\n"
#define ISD_GIT_STANDIN "# isd: a stand-in for a sandbox's run (isd exec --workspace DIR:rw), removed when it ends\n"

/* The content a stand-in at path has (by its name). */
const char *isd_workspace_standin_text(const char *path);

/* Whether the regular file at path (below dir) holds exactly that. */
bool isd_workspace_is_standin(int dir, const char *path);

#endif
