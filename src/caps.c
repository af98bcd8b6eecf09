/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "caps.h"
#include "isd/spec.h"
#include "isd/util.h"

#include <cap-ng.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* CAP_AUDIT_READ (37) is in every kernel isd runs on (5.12+); a dropping
 * loop that stops before it stopped on something other than the end. */
#define CAP_LAST_CAP_AT_LEAST 37

int isd_caps_drop_all(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};

	/* Securebits need CAP_SETPCAP, so they come before the drop.  With
	 * NOROOT an execve by uid 0 does not refill the permitted set, which
	 * together with the empty bounding set makes setuid-root and file
	 * capabilities in the image worthless. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
					     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0 &&
	    errno != EPERM)
		return isd_error(-errno, "setting securebits");

	/* By hand rather than with libcap-ng, whose apply reads
	 * /proc/self/status three times per start: the bounding set until the
	 * kernel's last capability (EINVAL past it), then the three sets, then
	 * the ambient one. */
	for (int cap = 0;; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
			continue;
		/* Without CAP_SETPCAP (uid 0 in a sandbox that dropped it, the
		 * landlock tier nested): what is out already is fine. */
		if (errno == EPERM && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL && cap > CAP_LAST_CAP_AT_LEAST)
			break;
		return isd_error(-errno, "dropping capability %d from the bounding set", cap);
	}
	if (syscall(SYS_capset, &hdr, data) < 0)
		return isd_error(-errno, "clearing the capability sets");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return isd_error(-errno, "clearing the ambient capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return isd_error(-errno, "setting no_new_privs");
	return 0;
}

int isd_caps_apply_sets(const struct isd_cap_sets *s, bool no_new_privs)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {
		{(uint32_t)s->effective, (uint32_t)s->permitted, (uint32_t)s->inheritable},
		{(uint32_t)(s->effective >> 32), (uint32_t)(s->permitted >> 32), (uint32_t)(s->inheritable >> 32)},
	};

	/* NO_SETUID_FIXUP kept the capabilities through the change of ids
	 * (runc's PR_SET_KEEPCAPS); the payload's later setuid() should drop
	 * them as it does under runc, so no bit stays.  Needs CAP_SETPCAP,
	 * as the bounding drop does: both before the sets are taken. */
	if (prctl(PR_SET_SECUREBITS, 0) < 0)
		return isd_error(-errno, "clearing the securebits");
	for (int cap = 0; cap < 64; cap++) {
		if (s->bounding & (UINT64_C(1) << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL && cap > CAP_LAST_CAP_AT_LEAST)
			break;
		return isd_error(-errno, "dropping capability %d from the bounding set", cap);
	}
	if (syscall(SYS_capset, &hdr, data) < 0)
		return isd_error(-errno, "setting the config's capability sets");
	/* ambient last: raising needs the bit permitted and inheritable */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return isd_error(-errno, "clearing the ambient capabilities");
	for (int cap = 0; cap < 64; cap++)
		if ((s->ambient & (UINT64_C(1) << cap)) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
			return isd_error(-errno, "raising ambient capability %d", cap);
	if (no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
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
