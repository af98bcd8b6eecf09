/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc and /sys as OCI runtimes leave them (runc's and crun's readonlyPaths
 * and maskedPaths): the kernel's knobs read-only, its secrets masked.  A
 * fresh procfs of the sandbox's own pid namespace still holds the global
 * sysctls, which the kernel guards by the writer's uid alone, and files such
 * as /proc/kcore or /proc/keys that say more about the host than a payload
 * needs.
 *
 * Masked submounts have a price for nesting: the kernel lets a user
 * namespace mount a new procfs or sysfs only while one instance of it is
 * fully visible in the mount namespace (no locked submount over anything
 * but an empty directory), so an isd or bubblewrap inside the sandbox could
 * no longer mount its own /proc.  Hence one unmasked instance of each,
 * mounted beneath the sandbox's /dev before /dev covers it: it counts for
 * the kernel's check but no path reaches it, and the payload, without
 * capabilities in this namespace and with every mount locked in any
 * namespace it makes, cannot uncover it.
 */
#define _GNU_SOURCE
#include "mount-proc.h"
#include "mount-fs.h"
#include "isd/syscalls.h"
#include "isd/util.h"

#include <string.h>
#include <sys/stat.h>

static const char *const readonly_paths[] = {
	"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL,
};

static const char *const masked_paths[] = {
	"/proc/acpi",        "/proc/asound",     "/proc/interrupts", "/proc/kcore",
	"/proc/keys",        "/proc/latency_stats", "/proc/sched_debug", "/proc/scsi",
	"/proc/timer_list",  "/proc/timer_stats", "/sys/devices/virtual/powercap",
	"/sys/firmware",     NULL,
};

const char *const *isd_mount_proc_readonly_paths(void)
{
	return readonly_paths;
}

const char *const *isd_mount_proc_masked_paths(void)
{
	return masked_paths;
}

int isd_mount_proc_hidden(struct isd_mount_builder *b, int devdir, bool proc, bool sys)
{
	static const char *const names[] = {".isd-proc", ".isd-sys"};
	unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	int r;

	(void)b;
	for (int i = 0; i < 2; i++) {
		_cleanup_close_ int mfd = -1, target = -1;

		if (!(i == 0 ? proc : sys))
			continue;
		/* Not worth failing the sandbox over: without it only a
		 * nested sandbox misses its own /proc. */
		mfd = isd_mount_new_fs(i == 0 ? "proc" : "sysfs", NULL, attrs | (i ? MOUNT_ATTR_RDONLY : 0),
				       "the unmasked instance kept for nested sandboxes");
		if (mfd < 0) {
			isd_error_clear();
			continue;
		}
		if (mkdirat(devdir, names[i], 0) < 0)
			return isd_error(-errno, "creating /dev/%s", names[i]);
		target = openat(devdir, names[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (target < 0)
			return isd_error(-errno, "opening /dev/%s", names[i]);
		r = isd_mount_attach(mfd, target, names[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Empty read-only stand-ins in the generated-files tmpfs. */
static int stand_in(struct isd_mount_builder *b, bool is_dir)
{
	const char *name = is_dir ? "proc-mask-dir" : "proc-mask-file";
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					      MOUNT_ATTR_NOEXEC};
	struct stat st;
	int fd;

	if (fstatat(b->generated, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		int r = is_dir ? (mkdirat(b->generated, name, 0555) < 0 ? -errno : 0)
			       : isd_write_file_at(b->generated, name, "", O_CREAT | O_EXCL, 0444);
		if (r < 0)
			return isd_error(r, "creating the empty stand-in for masked kernel files");
	}
	fd = isd_open_tree(b->generated, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (fd < 0)
		return isd_error(-errno, "preparing the empty stand-in for masked kernel files");
	if (isd_mount_setattr(fd, "", AT_EMPTY_PATH, &attr) < 0) {
		int r = isd_error(-errno, "restricting the stand-in for masked kernel files");
		close(fd);
		return r;
	}
	return fd;
}

static int refused(int r, const char *what, const char *path)
{
	isd_error(r, "%s %s", what, path);
	isd_error_hint("the kernel refused a mount over its own file; isd hides it in every sandbox "
		       "(as Docker's maskedPaths and readonlyPaths do) and does not start without it");
	return r;
}

static int restrict_paths(struct isd_mount_builder *b, const char *const *ro, const char *const *masked)
{
	for (int pass = 0; pass < 2; pass++) {
		const char *const *list = pass == 0 ? ro : masked;

		for (size_t i = 0; list && list[i]; i++) {
			_cleanup_close_ int target = -1, src = -1;
			struct stat st;

			target = isd_openat2(b->root, list[i] + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC,
					     RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
			if (target < 0) {
				/* Not in this kernel (no ACPI, no SCSI, no
				 * CONFIG_SCHED_DEBUG): nothing to hide. */
				if (errno == ENOENT)
					continue;
				return refused(-errno, "finding", list[i]);
			}
			if (fstat(target, &st) < 0)
				return refused(-errno, "inspecting", list[i]);
			if (pass == 0)
				src = isd_mount_clone_tree(target, "", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
								       MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, list[i]);
			else
				src = stand_in(b, S_ISDIR(st.st_mode));
			if (src < 0)
				return src;
			if (isd_move_mount(src, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
				return refused(-errno, pass == 0 ? "making read-only" : "masking", list[i]);
		}
	}
	return 0;
}

int isd_mount_proc_restrict(struct isd_mount_builder *b)
{
	return restrict_paths(b, readonly_paths, masked_paths);
}

int isd_mount_paths_restrict(struct isd_mount_builder *b, char *const *readonly, char *const *masked)
{
	return restrict_paths(b, (const char *const *)readonly, (const char *const *)masked);
}
