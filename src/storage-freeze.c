/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A freeze is the sandbox's cgroup.freeze when it has a cgroup, else
 * SIGSTOP to each of its processes: every descendant of its init (orphans
 * of a pid namespace go to its init, and with --pid host init is their
 * subreaper), each held by a pidfd that is checked to be the process that
 * was classified (its start time) before the signal, repeated until a pass
 * finds none running.  A stopped process cannot fork nor continue another.
 * The same process tree gives the files its processes hold open after
 * deleting them.
 */
#define _GNU_SOURCE
#include "storage-freeze.h"
#include "isd/fsutil.h"
#include "isd/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

static int read_stat(pid_t pid, struct isd_proc_info *p)
{
	char path[64], buf[1024], *close_paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: the last ')' ends it. */
	close_paren = strrchr(buf, ')');
	if (!close_paren)
		return -EIO;
	p->pid = pid;
	if (sscanf(close_paren + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		   &p->state, &p->ppid, &p->start) != 3)
		return -EIO;
	return 0;
}

size_t isd_proc_list(struct isd_proc_info **out)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	struct isd_proc_info *v = NULL;
	size_t n = 0, cap = 0;

	while (d && (e = readdir(d))) {
		struct isd_proc_info p;
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || read_stat((pid_t)pid, &p) < 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = isd_xrealloc(v, cap * sizeof(*v));
		}
		v[n++] = p;
	}
	if (d)
		closedir(d);
	*out = v;
	return n;
}

bool isd_proc_descendant(const struct isd_proc_info *v, size_t n, size_t i, pid_t init)
{
	pid_t p = v[i].ppid;

	for (size_t hops = 0; hops < n && p > 1; hops++) {
		if (p == init)
			return true;
		size_t k;
		for (k = 0; k < n && v[k].pid != p; k++)
			;
		if (k == n)
			return false;
		p = v[k].ppid;
	}
	return p == init;
}

/* Files the sandbox's processes hold open after deleting them (or made
 * with O_TMPFILE) are in no directory a count walks, yet hold their
 * blocks: those on a watched file system, or on an overlay (the full
 * tier's session and state), count too.  A tmpfs of the sandbox's own is
 * its memory's.  What no descriptor of a process holds (a mapping alone,
 * a descriptor in flight in a unix socket), and in the landlock tier a
 * process that made itself non-dumpable, only the floor bounds. */
void isd_proc_count_held(pid_t tree, pid_t skip, const dev_t *devs, size_t n_devs, uint64_t *bytes, uint64_t *inodes)
{
	_cleanup_free_ struct isd_proc_info *v = NULL;
	struct isd_inode_map seen = {0};
	size_t n = isd_proc_list(&v);

	for (size_t i = 0; i < n; i++) {
		char dir[64];
		DIR *d;
		struct dirent *e;

		if (v[i].pid == tree || v[i].pid == skip || !isd_proc_descendant(v, n, i, tree))
			continue;
		snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)v[i].pid);
		if (!(d = opendir(dir)))
			continue;
		while ((e = readdir(d))) {
			char path[64 + sizeof(e->d_name)];
			struct stat st;
			struct statfs sf;
			bool watched = false;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink)
				continue;
			for (size_t k = 0; k < n_devs && !watched; k++)
				watched = devs[k] == st.st_dev;
			if (!watched && (statfs(path, &sf) < 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC))
				continue;
			if (isd_inode_map_find_or_add(&seen, st.st_dev, st.st_ino, 0, NULL))
				continue;
			*bytes += (uint64_t)st.st_blocks * 512;
			(*inodes)++;
		}
		closedir(d);
	}
	isd_inode_map_free(&seen);
}

static bool write_freeze(int cgfd, const char *value)
{
	int fd = openat(cgfd, "cgroup.freeze", O_WRONLY | O_CLOEXEC);
	bool ok = fd >= 0 && write(fd, value, 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* cgroup.freeze takes effect asynchronously: cgroup.events says when every
 * task of the cgroup is frozen (a task in an uninterruptible wait, e.g. on
 * a slow disk, can take a while). */
static bool cgroup_frozen(int cgfd)
{
	for (int i = 0; i < 200; i++) {
		char buf[256];
		int fd = openat(cgfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

		if (fd >= 0)
			close(fd);
		if (n <= 0)
			return false;
		buf[n] = '\0';
		if (strstr(buf, "frozen 1"))
			return true;
		usleep(500);
	}
	return false;
}

/* SIGSTOP to every running descendant of tree (isd's init, which only
 * waits, or isd itself).  false when it could not stop them all. */
static bool stop_all(struct isd_freezer *f)
{
	for (int pass = 1; pass <= 64; pass++) {
		_cleanup_free_ struct isd_proc_info *v = NULL;
		size_t n = isd_proc_list(&v), signalled = 0;

		for (size_t i = 0; i < n; i++) {
			struct isd_proc_info again;
			int pidfd;

			if (v[i].pid == f->tree || v[i].pid == f->skip || v[i].state == 'T' || v[i].state == 't' ||
			    v[i].state == 'Z' || v[i].state == 'X' || !isd_proc_descendant(v, n, i, f->tree))
				continue;
			pidfd = (int)syscall(SYS_pidfd_open, v[i].pid, 0);
			if (pidfd < 0)
				continue;
			/* The pidfd names the process classified above, not a
			 * later one that took its number. */
			if (read_stat(v[i].pid, &again) < 0 || again.start != v[i].start ||
			    syscall(SYS_pidfd_send_signal, pidfd, SIGSTOP, NULL, 0) < 0) {
				close(pidfd);
				continue;
			}
			f->stopped = isd_xrealloc(f->stopped, (f->n_stopped + 1) * sizeof(*f->stopped));
			f->stopped[f->n_stopped++] = pidfd;
			signalled++;
		}
		if (!signalled)
			return true;
		/* Let the signals land before the next look. */
		usleep(1000);
	}
	return false;
}

bool isd_freezer_freeze(struct isd_freezer *f, bool settled)
{
	if (f->cgroup_fd >= 0 && write_freeze(f->cgroup_fd, "1"))
		return !settled || cgroup_frozen(f->cgroup_fd);
	return stop_all(f);
}

void isd_freezer_thaw(struct isd_freezer *f)
{
	if (f->cgroup_fd >= 0)
		write_freeze(f->cgroup_fd, "0");
	for (size_t i = 0; i < f->n_stopped; i++) {
		(void)!syscall(SYS_pidfd_send_signal, f->stopped[i], SIGCONT, NULL, 0);
		close(f->stopped[i]);
	}
	free(f->stopped);
	f->stopped = NULL;
	f->n_stopped = 0;
}

void isd_freezer_kill(struct isd_freezer *f)
{
	for (size_t i = 0; i < f->n_stopped; i++)
		(void)!syscall(SYS_pidfd_send_signal, f->stopped[i], SIGKILL, NULL, 0);
}
