/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The executable an exec really ran (activity-exe.h).  The path a payload
 * passes says little (a symlink, a script, a name swapped after isd read
 * it); what the kernel ran is /proc/PID/exe once the exec replaced the
 * image.  Seccomp tells isd of the exec's start only, so isd compares the
 * image before and after:
 *
 * - The image is the process's memory (mm), known by its auxiliary vector
 *   (/proc/PID/auxv, kept by the kernel, set by an exec only): each exec
 *   randomizes the stack, vDSO and entry addresses it holds.  An unreadable
 *   mm (isd's non-dumpable init shares its memory with the payload's first
 *   exec) that becomes readable was replaced too.
 * - The process is held by a descriptor of /proc/PID taken while the
 *   notification was valid: a pid reused since is another process, whose
 *   files that descriptor never reaches.
 * - When is the exec over?  Whenever the same thread is stopped in another
 *   notified call: its next exec, or set_tid_address, which glibc and musl
 *   make once at the start of every program (src/activity.c notifies it).
 *   Then the image either changed (the exe is read before that call goes
 *   on, so no later exec can come between) or it did not: the exec failed
 *   ("ran": false; unless the addresses are not randomized, when a
 *   successful exec of the same file looks the same).  Between such
 *   points a look every LOOK_MS finds a changed image of a program that
 *   makes neither call; an exec of another thread of the process could
 *   then have made the change, so isd does not let one go on while an
 *   exec of the same process waits unsettled.
 * - What cannot be known is said ("exe_unknown"): the process ended before
 *   isd looked, isd waited GIVE_UP_NS, too many execs waited at once.
 *
 * A process with CAP_CHECKPOINT_RESTORE in its user namespace can name
 * another exe (prctl PR_SET_MM); the exe is evidence, as the log is.
 */
#define _GNU_SOURCE
#include "activity-exe.h"
#include "activity-rec.h"
#include "isd/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <time.h>
#include <unistd.h>

#define MAX_WAITING 64u
#define MAX_WAITING_BYTES (4u << 20)
#define AUXV_MAX 1024u
#define LOOK_MS 5
#define GIVE_UP_NS (2000000000ull)
/* ,"exe": and a path of PATH_MAX bytes, each as \udcXX at most */
#define EXTRA_ROOM (6u * PATH_MAX + 256u)

struct image {
	int auxv_err; /* 0, or why auxv could not be read (ESRCH: gone) */
	size_t auxv_len;
	unsigned char auxv[AUXV_MAX];
};

struct waiting {
	int dirfd;
	pid_t tid, tgid;
	uint64_t since_ns;
	struct image before;
	char *rec;
	size_t len, cost;
	bool added, done;
};

struct isd_exe_watch {
	struct waiting ring[MAX_WAITING];
	size_t head, count, bytes;
	uint64_t last_look_ns;
	bool randomized;
	void (*write)(void *arg, const char *rec, size_t len);
	void *arg;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct waiting *at(struct isd_exe_watch *w, size_t i)
{
	return &w->ring[(w->head + i) % MAX_WAITING];
}

struct isd_exe_watch *isd_exe_watch_new(void (*write)(void *arg, const char *rec, size_t len), void *arg)
{
	struct isd_exe_watch *w = isd_xcalloc(1, sizeof(*w));
	_cleanup_close_ int fd = open("/proc/sys/kernel/randomize_va_space", O_RDONLY | O_CLOEXEC);
	char c = '0';

	w->write = write;
	w->arg = arg;
	w->randomized = fd >= 0 && read(fd, &c, 1) == 1 && c != '0';
	return w;
}

static void look(int dirfd, struct image *im)
{
	_cleanup_close_ int fd = openat(dirfd, "auxv", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	im->auxv_len = 0;
	im->auxv_err = fd < 0 ? errno : 0;
	if (fd >= 0) {
		n = read(fd, im->auxv, sizeof(im->auxv));
		/* nothing: the mm is gone (a zombie) */
		im->auxv_err = n < 0 ? errno : n == 0 ? ESRCH : 0;
		im->auxv_len = n > 0 ? (size_t)n : 0;
	}
	if (im->auxv_err == ENOENT)
		im->auxv_err = ESRCH;
}

static bool same_image(const struct image *a, const struct image *b)
{
	/* one mm, one exe: the exe's own identity adds nothing */
	return a->auxv_len == b->auxv_len && !memcmp(a->auxv, b->auxv, a->auxv_len);
}

static bool addresses_randomized(const struct isd_exe_watch *w, int dirfd)
{
	_cleanup_close_ int fd = openat(dirfd, "personality", O_RDONLY | O_CLOEXEC);
	char buf[32] = "";
	ssize_t n;

	if (!w->randomized || fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return false;
	buf[n] = '\0';
	return !(strtoul(buf, NULL, 16) & ADDR_NO_RANDOMIZE);
}

static void settle(struct waiting *e, const char *key, const char *value)
{
	e->len -= e->rec[e->len - 1] == '}';
	if (value && !strcmp(key, "exe")) {
		struct rec r = {.buf = e->rec, .len = e->len, .cap = e->cost - 2};

		rec_puts(&r, ",\"exe\":");
		rec_json_str(&r, value, strlen(value));
		e->len = r.len;
	} else if (value) {
		e->len += (size_t)sprintf(e->rec + e->len, ",\"%s\":\"%s\"", key, value);
	} else {
		e->len += (size_t)sprintf(e->rec + e->len, ",\"%s\":false", key);
	}
	memcpy(e->rec + e->len, "}\n", 2);
	e->len += 2;
	e->done = true;
}

static void settle_exe(struct waiting *e)
{
	char exe[PATH_MAX];
	ssize_t n = readlinkat(e->dirfd, "exe", exe, sizeof(exe) - 1);

	if (n < 0) {
		settle(e, "exe_unknown", errno == EACCES || errno == EPERM ? "its new image is not readable by isd"
									   : "it ended before isd saw its new image");
		return;
	}
	exe[n] = '\0';
	settle(e, "exe", exe);
}

/* stopped: the thread is in another notified call, so its exec is over. */
static void decide(struct isd_exe_watch *w, struct waiting *e, bool stopped)
{
	struct image now;

	look(e->dirfd, &now);
	if (now.auxv_err == ESRCH) {
		settle(e, "exe_unknown", "it ended before isd saw its new image");
	} else if (!now.auxv_err && (e->before.auxv_err || !same_image(&e->before, &now))) {
		settle_exe(e);
	} else if (now.auxv_err && !e->before.auxv_err) {
		/* a dumpable image became one isd may not read */
		settle(e, "exe_unknown", "its new image is not readable by isd");
	} else if (stopped) {
		if (now.auxv_err)
			settle(e, "exe_unknown", "its memory is not readable by isd");
		else if (addresses_randomized(w, e->dirfd))
			settle(e, "ran", NULL);
		else
			settle(e, "exe_unknown", "addresses are not randomized, so a new image may look like the old");
	} else if (now_ns() - e->since_ns > GIVE_UP_NS) {
		settle(e, "exe_unknown", "isd did not see its new image in time");
	}
}

static void write_settled(struct isd_exe_watch *w)
{
	while (w->count && at(w, 0)->added && at(w, 0)->done) {
		struct waiting *e = at(w, 0);

		w->write(w->arg, e->rec, e->len);
		w->bytes -= e->cost;
		free(e->rec);
		if (e->dirfd >= 0)
			close(e->dirfd);
		*e = (struct waiting){.dirfd = -1};
		w->head = (w->head + 1) % MAX_WAITING;
		w->count--;
	}
}

/* Room for one more of cost bytes: the oldest are settled as unknown. */
static void make_room(struct isd_exe_watch *w, size_t cost)
{
	while (w->count && at(w, 0)->added && (w->count >= MAX_WAITING || w->bytes + cost > MAX_WAITING_BYTES)) {
		if (!at(w, 0)->done)
			settle(at(w, 0), "exe_unknown", "too many execs waited at once");
		write_settled(w);
	}
}

int isd_exe_watch_before(struct isd_exe_watch *w, pid_t tid, pid_t tgid, int dirfd)
{
	struct waiting *e;

	make_room(w, 0);
	e = at(w, w->count);
	*e = (struct waiting){.tid = tid, .tgid = tgid, .since_ns = now_ns()};
	e->dirfd = dirfd;
	if (e->dirfd >= 0)
		look(e->dirfd, &e->before);
	w->count++;
	return (int)((w->head + w->count - 1) % MAX_WAITING);
}

static bool is_reserved(const struct isd_exe_watch *w, int handle)
{
	return w->count && handle == (int)((w->head + w->count - 1) % MAX_WAITING) && !w->ring[handle].added;
}

void isd_exe_watch_cancel(struct isd_exe_watch *w, int handle)
{
	struct waiting *e;

	if (!is_reserved(w, handle))
		return;
	e = &w->ring[handle];
	if (e->dirfd >= 0)
		close(e->dirfd);
	*e = (struct waiting){.dirfd = -1};
	w->count--;
}

void isd_exe_watch_add(struct isd_exe_watch *w, int handle, const char *rec, size_t len)
{
	struct waiting *e;

	if (!is_reserved(w, handle))
		return;
	e = &w->ring[handle];
	e->cost = len + EXTRA_ROOM;
	e->rec = isd_xmalloc(e->cost);
	memcpy(e->rec, rec, len);
	e->len = len;
	e->added = true;
	w->bytes += e->cost;
	if (e->dirfd < 0)
		settle(e, "exe_unknown", "isd could not watch the process");
	write_settled(w);
	make_room(w, 0);
}

void isd_exe_watch_stopped(struct isd_exe_watch *w, pid_t tid, pid_t tgid)
{
	for (size_t i = 0; i < w->count; i++) {
		struct waiting *e = at(w, i);

		if (!e->added || e->done)
			continue;
		if (e->tid == tid) {
			decide(w, e, true);
		} else if (tgid > 0 && e->tgid == tgid) {
			/* Another thread's exec is about to go on: a change seen
			 * after it could be either's. */
			decide(w, e, false);
			if (!e->done)
				settle(e, "exe_unknown", "another thread of the process exec'd at the same time");
		}
	}
}

void isd_exe_watch_flush(struct isd_exe_watch *w)
{
	write_settled(w);
}

int isd_exe_watch_timeout(const struct isd_exe_watch *w)
{
	return w->count ? LOOK_MS : -1;
}

void isd_exe_watch_tick(struct isd_exe_watch *w)
{
	uint64_t now = now_ns();

	if (!w->count || now - w->last_look_ns < (uint64_t)LOOK_MS * 1000000u)
		return;
	w->last_look_ns = now;
	for (size_t i = 0; i < w->count; i++)
		if (at(w, i)->added && !at(w, i)->done)
			decide(w, at(w, i), false);
	write_settled(w);
}

void isd_exe_watch_free(struct isd_exe_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->count; i++) {
		struct waiting *e = at(w, i);

		if (e->added && !e->done)
			decide(w, e, false);
		if (e->added && !e->done)
			settle(e, "exe_unknown", "the sandbox ended before isd saw its new image");
	}
	write_settled(w);
	for (size_t i = 0; i < w->count; i++) {
		free(at(w, i)->rec);
		if (at(w, i)->dirfd >= 0)
			close(at(w, i)->dirfd);
	}
	free(w);
}
