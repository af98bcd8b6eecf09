/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `isd doctor`: what this host allows, with a fix for each problem. */
#ifndef ISD_DOCTOR_H
#define ISD_DOCTOR_H

/* argv[0] == "doctor"; returns 0 only when the agent profile can fully work. */
int isd_doctor_main(int argc, char **argv);

#endif
