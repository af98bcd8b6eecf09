/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "caps.h"
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

/* isd build's RUN steps run as root of their user namespace with Docker's
 * default capability set, which package managers need (chown, setuid
 * helpers, ...).  Only ids of the build's own map are reachable. */
int isd_caps_keep_build_set(void)
{
	static const unsigned keep[] = {CAP_CHOWN,  CAP_DAC_OVERRIDE, CAP_FSETID,     CAP_FOWNER,
					CAP_MKNOD,  CAP_NET_RAW,      CAP_SETGID,     CAP_SETUID,
					CAP_SETFCAP, CAP_SETPCAP,     CAP_NET_BIND_SERVICE, CAP_SYS_CHROOT,
					CAP_KILL,   CAP_AUDIT_WRITE};

	capng_clear(CAPNG_SELECT_ALL);
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET, keep[i]);
	if (capng_apply(CAPNG_SELECT_ALL) < 0)
		return isd_error(-EPERM, "restricting capabilities to the build set with libcap-ng");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return isd_error(-errno, "setting no_new_privs");
	return 0;
}
