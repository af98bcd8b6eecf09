/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "isd/caps.h"
#include "isd/util.h"

#include <cap-ng.h>
#include <linux/securebits.h>
#include <sys/prctl.h>

int isd_caps_drop_all(void)
{
	/* Securebits need CAP_SETPCAP, so they come before the drop.  With
	 * NOROOT an execve by uid 0 does not refill the permitted set, which
	 * together with the empty bounding set makes setuid-root and file
	 * capabilities in the image worthless. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
					     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0 &&
	    errno != EPERM)
		return isd_error(-errno, "setting securebits");

	capng_clear(CAPNG_SELECT_ALL);
	if (capng_apply(CAPNG_SELECT_ALL) < 0)
		return isd_error(-EPERM, "dropping all capabilities with libcap-ng");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return isd_error(-errno, "setting no_new_privs");
	return 0;
}
