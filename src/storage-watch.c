/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The storage watcher: a thread of isd on the host while the sandbox runs.
 *
 * Every tick (100 ms; 10 ms within 1 GiB or half of a bound; closer,
 * before a fast writer fills a quarter of the rest, 1 ms at least) it
 * takes statvfs() of each file system that holds a writable host path of
 * the sandbox: a floor reached freezes the sandbox.  What isd keeps for
 * the sandbox (the session's upper layer, the agent's state store) is
 * counted by a walk (allocated blocks, hard links once), which is too
 * dear to run every tick.
 *
 * The free space and free inodes of the file systems that hold it are the
 * cheap signal.  Once they dropped since the last count by what is left
 * below size (or inodes), the bound may be crossed already: the sandbox
 * is frozen first, silently (a counting freeze), and counted while it
 * cannot write, so a writer cannot outrun the count (a shell loop makes
 * files faster than a walk reads them, and on a tmpfs the walk chases
 * it); under the bound it thaws, over it stays frozen and says so.  A
 * freeze is announced only on such a count.  A quarter of the room gone
 * is counted frozen too where a fast writer fills the rest within four
 * counts' time, else with the sandbox running, as is the periodic count
 * (walk_period(): the time a fast writer needs for a quarter of the room
 * left, at most 2 s, at least 50 times the last count's duration, so
 * counting takes at most 2 % of a CPU).  A running count stops where it
 * goes over the bound or the file systems lose the rest of the room
 * meanwhile, and a frozen count follows.  So the slack at a bound is what
 * the payload writes in one tick and one freeze.
 *
 * Other programs writing to the same file systems make drops that are not
 * the payload's: near its bound, a sandbox beside a busy host is frozen
 * for a count each time the host wrote what is left (a pause, never a
 * slack: holding counts back would let a fast writer through).  Other
 * programs freeing space hide the sandbox's growth from statvfs, so the
 * counter also watches every directory it walks with inotify
 * (src/storage-notify.c) and estimates the growth from the events: the
 * trigger takes the larger of the two.  A write inotify cannot place (a
 * directory moved in from outside, a lost queue) makes the next count a
 * frozen one; where inotify is refused (no watches left) the slack
 * beside a host that frees space is what the payload writes in one
 * period, and isd says so once.
 *
 * A freeze is the sandbox's cgroup.freeze, or SIGSTOP to each of its
 * processes (src/storage-freeze.c).
 */
#define _GNU_SOURCE
#include "isd/storage.h"
#include "storage-freeze.h"
#include "storage-notify.h"
#include "isd/fsutil.h"
#include "isd/spec.h"
#include "isd/syscalls.h"
#include "isd/util.h"
#include "isd/visible.h"

#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS 100
#define TICK_NEAR_MS 10
#define TICK_MIN_US 1000 /* a statvfs or two: some microseconds */
#define MS 1000000ULL
/* A fast writer: dd to a tmpfs, a shell loop of `: >f$i` there. */
#define FAST_BYTES_PER_NS 8
#define FAST_NS_PER_FILE 5000
#define WALK_PERIOD_NS (2000ULL * 1000 * 1000)
#define FROZEN_TICK_MS 500

struct watched_fs {
	char *path;
	dev_t dev;
	uint64_t floor, ifloor; /* effective: lowered by isd resume */
	bool floor_on;
	bool accounted; /* holds accounted paths: its drop triggers a walk */
	uint64_t avail_at_walk, iavail_at_walk;
	uint64_t avail, iavail;
};

enum reason { NONE, SIZE, INODES, UNACCOUNTED, FLOOR, IFLOOR };

struct isd_storage_watch {
	struct isd_storage_opts opts;
	char **accounted;
	struct isd_storage_counter *counter; /* counts in the owner's view (src/storage-count.c) */
	struct watched_fs *fs;
	size_t n_fs;
	char *id, *session_dir;
	pid_t init; /* whose end ends the sandbox */
	pid_t tree; /* the sandbox: its descendants */
	struct timespec baseline; /* the copies' (isd_storage_scope) */
	uint64_t baseline_entries; /* the copies' own entries at the first count */
	bool have_baseline;
	int init_pidfd;
	int wake[2];
	pthread_t thread;
	bool running, handlers;
	struct sigaction old_resume, old_end; /* the caller's, put back at the end */
	/* the thread's */
	uint64_t size_bound, inode_bound; /* effective: raised by isd resume */
	uint64_t used, inodes;
	char *unaccounted;
	uint64_t last_walk_ns, walk_cost_ns, last_state_ns;
	uint64_t walk_cpu_ns; /* the last count's CPU time, here and in the counter */
	enum reason frozen;
	size_t frozen_fs;
	struct isd_freezer freezer;
	bool ended;
	bool said_limited;
};

static struct isd_storage_watch *signal_target;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
	int saved = errno;
	char c = sig == ISD_STORAGE_SIG_END ? 'e' : 'r';

	if (signal_target)
		(void)!write(signal_target->wake[1], &c, 1);
	errno = saved;
}

/* One line on the caller's terminal, which the pty relay may hold raw. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	bool tty = isatty(STDERR_FILENO);

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	dprintf(STDERR_FILENO, "%sisd: storage: %s%s", tty ? "\r" : "", line, tty ? "\r\n" : "\n");
}

static const char *h(uint64_t v, char buf[32])
{
	return isd_format_size(v, buf, 32, 0);
}

static void write_state_pid(struct isd_storage_watch *w, int pid)
{
	_cleanup_free_ char *tmp = NULL, *path = NULL, *text = NULL;

	if (!w->session_dir)
		return;
	text = isd_xasprintf("{\"pid\": %d, \"size\": %llu, \"inodes\": %llu, \"used\": %llu, \"used_inodes\": %llu, "
			     "\"frozen\": %s}\n",
			     pid, (unsigned long long)w->opts.size, (unsigned long long)w->opts.inodes,
			     (unsigned long long)w->used, (unsigned long long)w->inodes, w->frozen ? "true" : "false");
	tmp = isd_xasprintf("%s/.%s.tmp", w->session_dir, ISD_STORAGE_STATE_FILE);
	path = isd_xasprintf("%s/%s", w->session_dir, ISD_STORAGE_STATE_FILE);
	if (isd_write_file_at(AT_FDCWD, tmp, text, O_CREAT | O_TRUNC | O_NOFOLLOW, 0600) == 0)
		(void)!rename(tmp, path);
	w->last_state_ns = now_ns();
}

static void write_state(struct isd_storage_watch *w)
{
	write_state_pid(w, (int)getpid());
}

/* --- freezing ------------------------------------------------------- */

static void freeze(struct isd_storage_watch *w, enum reason why)
{
	w->frozen = why;
	(void)isd_freezer_freeze(&w->freezer, false);
}

static void thaw(struct isd_storage_watch *w)
{
	isd_freezer_thaw(&w->freezer);
	w->frozen = NONE;
}

static void end_sandbox(struct isd_storage_watch *w)
{
	w->ended = true;
	/* init's end ends its pid namespace; with --pid host the stopped ones
	 * are killed by name too. */
	isd_freezer_kill(&w->freezer);
	if (w->init_pidfd >= 0)
		(void)!syscall(SYS_pidfd_send_signal, w->init_pidfd, SIGKILL, NULL, 0);
	thaw(w);
}

/* --- accounting ----------------------------------------------------- */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void take_statvfs(struct watched_fs *f)
{
	struct statvfs sv;

	if (statvfs(f->path, &sv) < 0)
		return; /* a bind's source removed on the host: its last value stays */
	f->avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	f->iavail = sv.f_files ? (uint64_t)sv.f_favail : UINT64_MAX;
}

static void count_held(struct isd_storage_watch *w, uint64_t *bytes, uint64_t *inodes)
{
	dev_t devs[16];
	size_t n = 0;

	for (size_t i = 0; i < w->n_fs && n < sizeof(devs) / sizeof(devs[0]); i++)
		devs[n++] = w->fs[i].dev;
	isd_proc_count_held(w->tree, isd_storage_counter_pid(w->counter), devs, n, bytes, inodes);
}

/* A count: false when it stopped at lim (the last count's values stay). */
static bool walk(struct isd_storage_watch *w, const struct isd_storage_limits *lim)
{
	uint64_t t0 = now_ns(), c0 = thread_cpu_ns();
	struct isd_storage_usage u;

	isd_storage_counter_count(w->counter, w->accounted, &w->baseline, lim, &u);
	if (u.interrupted) {
		free(u.unaccounted);
		return false;
	}
	free(w->unaccounted);
	w->used = u.bytes;
	w->inodes = u.inodes;
	w->unaccounted = u.unaccounted;
	/* A copy's entry deleted becomes a whiteout, an inode of the session. */
	if (!w->have_baseline) {
		w->baseline_entries = u.baseline;
		w->have_baseline = true;
	} else if (u.baseline < w->baseline_entries) {
		w->inodes += w->baseline_entries - u.baseline;
	}
	if (w->tree)
		count_held(w, &w->used, &w->inodes);
	for (size_t i = 0; i < w->n_fs; i++) {
		w->fs[i].avail_at_walk = w->fs[i].avail;
		w->fs[i].iavail_at_walk = w->fs[i].iavail;
	}
	w->last_walk_ns = now_ns();
	w->walk_cost_ns = w->last_walk_ns - t0;
	w->walk_cpu_ns = thread_cpu_ns() - c0 + u.cpu_ns;
	return true;
}

/* The growth since the walk: the drop of free space on the accounted file
 * systems, or what inotify saw where that is more (another program freed
 * space meanwhile). */
static void drops(const struct isd_storage_watch *w, uint64_t *bytes, uint64_t *inodes)
{
	const struct isd_storage_activity *a = isd_storage_counter_activity(w->counter);

	uint64_t fs_bytes = 0, fs_inodes = 0;

	*bytes = a ? atomic_load(&a->bytes) : 0;
	*inodes = a ? atomic_load(&a->inodes) : 0;
	for (size_t i = 0; i < w->n_fs; i++) {
		const struct watched_fs *f = &w->fs[i];
		if (!f->accounted)
			continue;
		if (f->avail_at_walk > f->avail)
			fs_bytes += f->avail_at_walk - f->avail;
		if (f->iavail != UINT64_MAX && f->iavail_at_walk > f->iavail)
			fs_inodes += f->iavail_at_walk - f->iavail;
	}
	*bytes = fs_bytes > *bytes ? fs_bytes : *bytes;
	*inodes = fs_inodes > *inodes ? fs_inodes : *inodes;
}

/* How long the watcher may go without a count when the statvfs trigger
 * is blind (another program frees space as fast as the sandbox fills
 * it): the time a fast writer (4 GiB/s, 100000 files/s) takes to fill a
 * quarter of the room left, at most 2 s, but at least 50 times the last
 * count's CPU time (so counting takes at most 2 % of a CPU) and 10 ms.
 * Not its wall time: on a loaded machine that is mostly a wait for a
 * CPU, and 50 times it left the watcher blind for 5 s (issue 24). */
static uint64_t walk_floor(const struct isd_storage_watch *w)
{
	uint64_t floor_ns = w->walk_cpu_ns * 50;

	return floor_ns > 10000000ULL ? floor_ns : 10000000ULL;
}

static uint64_t walk_period(const struct isd_storage_watch *w)
{
	uint64_t period = WALK_PERIOD_NS, floor_ns = walk_floor(w);

	if (w->size_bound) {
		uint64_t left = w->used < w->size_bound ? w->size_bound - w->used : 0;
		uint64_t ns = left / 4 / 4 /* bytes per ns at 4 GiB/s, roughly */;
		if (ns < period)
			period = ns;
	}
	if (w->inode_bound) {
		uint64_t left = w->inodes < w->inode_bound ? w->inode_bound - w->inodes : 0;
		uint64_t ns = left / 4 * 10000 /* 10 us per file */;
		if (ns < period)
			period = ns;
	}
	return period > floor_ns ? period : floor_ns;
}

static uint64_t room(uint64_t used, uint64_t bound)
{
	return used < bound ? bound - used : 0;
}

enum count_kind { COUNT_NONE, COUNT_RUNNING, COUNT_FROZEN };

/* What the last statvfs asks for: a count with the sandbox frozen (the
 * drop may have crossed a bound), one with it running (a quarter of the
 * room dropped, or the period is over), or none.  *tick: the longest wait
 * for the next look. */
static enum count_kind count_due(const struct isd_storage_watch *w, uint64_t now, uint64_t *tick)
{
	const struct isd_storage_activity *a = isd_storage_counter_activity(w->counter);
	uint32_t seen = a ? atomic_load(&a->flags) : 0;
	uint64_t db, di, fill = UINT64_MAX;
	bool cross = false, quarter = false;

	*tick = TICK_MS * MS;
	if (!w->size_bound && !w->inode_bound)
		return COUNT_NONE;
	drops(w, &db, &di);
	/* inotify lost track: the queue overflowed (a flood), or what came
	 * in is not known. */
	cross |= (seen & ISD_ACTIVITY_LOST) != 0;
	if (w->size_bound) {
		uint64_t left = room(w->used, w->size_bound), rest = left - (db < left ? db : left);
		cross |= db && db >= left;
		quarter |= db && db * 4 >= left;
		fill = rest / FAST_BYTES_PER_NS;
		/* Within a gigabyte, a fast disk would cross the rest in one
		 * slow tick. */
		if (w->used + db >= w->size_bound / 2 || rest < (1ULL << 30))
			*tick = TICK_NEAR_MS * MS;
	}
	if (w->inode_bound) {
		uint64_t left = room(w->inodes, w->inode_bound), rest = left - (di < left ? di : left);
		cross |= di && di >= left;
		quarter |= di && di * 4 >= left;
		fill = rest * FAST_NS_PER_FILE < fill ? rest * FAST_NS_PER_FILE : fill;
		/* Within 100000 files, what a fast writer makes in half a
		 * second, one slow tick would overshoot. */
		if (w->inodes + di >= w->inode_bound / 2 || rest < 100000)
			*tick = TICK_NEAR_MS * MS;
	}
	/* Closer, the next look comes before a fast writer filled a quarter
	 * of the rest. */
	*tick = fill / 4 < *tick ? fill / 4 : *tick;
	*tick = *tick > TICK_MIN_US * 1000 ? *tick : TICK_MIN_US * 1000;
	/* A count of the running sandbox would be outrun: a fast writer
	 * fills the rest in a few counts' time. */
	if (cross || (quarter && fill < 4 * w->walk_cost_ns))
		return COUNT_FROZEN;
	if ((quarter && !cross) || now - w->last_walk_ns >= walk_period(w))
		return COUNT_RUNNING;
	/* A directory moved (the watches' paths are old): as soon as a
	 * count's cost allows. */
	if ((seen & ISD_ACTIVITY_STALE) && now - w->last_walk_ns >= walk_floor(w))
		return COUNT_RUNNING;
	return COUNT_NONE;
}

/* Where a count of the running sandbox stops: over a bound, or once the
 * file systems lost the rest of the room. */
static void running_limits(const struct isd_storage_watch *w, struct isd_storage_limits *l)
{
	uint64_t db, di;

	drops(w, &db, &di);
	l->bytes = w->size_bound;
	l->inodes = w->inode_bound;
	l->drop_bytes = l->drop_inodes = UINT64_MAX;
	if (w->size_bound)
		l->drop_bytes = room(w->used, w->size_bound) > db ? room(w->used, w->size_bound) - db : 1;
	if (w->inode_bound)
		l->drop_inodes = room(w->inodes, w->inode_bound) > di ? room(w->inodes, w->inode_bound) - di : 1;
}

static enum reason over_bound(const struct isd_storage_watch *w);

/* The count with the sandbox frozen, silently: over a bound it stays
 * frozen (the caller says so), else it thaws. */
static enum reason frozen_count(struct isd_storage_watch *w)
{
	enum reason why;

	(void)isd_freezer_freeze(&w->freezer, true);
	/* What the file systems hold now that the sandbox cannot write:
	 * the next drop is what comes after this count. */
	for (size_t i = 0; i < w->n_fs; i++)
		take_statvfs(&w->fs[i]);
	walk(w, NULL);
	why = over_bound(w);
	if (why != NONE)
		w->frozen = why;
	else
		thaw(w);
	return why;
}

static enum reason over_bound(const struct isd_storage_watch *w)
{
	if (w->unaccounted)
		return UNACCOUNTED;
	if (w->size_bound && w->used > w->size_bound)
		return SIZE;
	if (w->inode_bound && w->inodes > w->inode_bound)
		return INODES;
	return NONE;
}

static enum reason below_floor(const struct isd_storage_watch *w, size_t *which, bool *near)
{
	*near = false;
	for (size_t i = 0; i < w->n_fs; i++) {
		const struct watched_fs *f = &w->fs[i];
		if (!f->floor_on)
			continue;
		if (f->avail < f->floor) {
			*which = i;
			return FLOOR;
		}
		if (f->ifloor && f->iavail < f->ifloor) {
			*which = i;
			return IFLOOR;
		}
		*near |= f->avail - f->floor < (1ULL << 30) + f->floor / 4;
	}
	return NONE;
}

static void report_freeze(struct isd_storage_watch *w)
{
	char a[32], b[32], c[32];
	const struct watched_fs *f = w->n_fs ? &w->fs[w->frozen_fs] : NULL;
	_cleanup_free_ char *path = NULL;
	uint64_t grace;

	switch (w->frozen) {
	case SIZE:
		grace = w->opts.size / 10 > (16ULL << 20) ? w->opts.size / 10 : 16ULL << 20;
		path = isd_visible_str(w->session_dir ? w->session_dir : w->accounted[0]);
		say("the sandbox is frozen (a freeze, not ENOSPC: no disk quota without privileges): %s holds %s, its bound is %s (--storage-opt size=); "
		    "`isd resume %s` lets it go on up to %s more, `isd resume --end %s` ends it%s",
		    path, h(w->used, a), h(w->size_bound, b), w->id, h(grace, c), w->id,
		    w->session_dir ? " (the session stays for isd diff)" : "");
		break;
	case INODES:
		path = isd_visible_str(w->session_dir ? w->session_dir : w->accounted[0]);
		say("the sandbox is frozen (a freeze, not ENOSPC): %s holds %llu files, its bound is %llu (--storage-opt inodes=); "
		    "`isd resume %s` lets it go on, `isd resume --end %s` ends it",
		    path, (unsigned long long)w->inodes, (unsigned long long)w->inode_bound, w->id, w->id);
		break;
	case UNACCOUNTED:
		path = isd_visible_str(w->unaccounted);
		say("the sandbox is frozen: isd cannot count %s against --storage-opt size=; "
		    "`isd resume %s` lets it go on, `isd resume --end %s` ends it", path, w->id, w->id);
		break;
	case FLOOR:
	case IFLOOR:
		path = isd_visible_str(f->path);
		if (w->frozen == FLOOR)
			say("the sandbox is frozen (a freeze, not ENOSPC): the file system of %s has %s left, below the floor of %s "
			    "(--storage-opt min-free=); it goes on when space is back, or `isd resume %s` "
			    "(the floor drops to half of what is left), `isd resume --end %s` ends it",
			    path, h(f->avail, a), h(f->floor, b), w->id, w->id);
		else
			say("the sandbox is frozen: the file system of %s has %llu free inodes left, below the floor "
			    "of %llu; it goes on when inodes are back, or `isd resume %s`, `isd resume --end %s` ends it",
			    path, (unsigned long long)f->iavail, (unsigned long long)f->ifloor, w->id, w->id);
		break;
	case NONE:
		break;
	}
}

/* The user's word: the bound that froze the sandbox moves by a grace, so
 * the payload can go on (and clean up); it says where to. */
static void user_resume(struct isd_storage_watch *w)
{
	char a[32];
	struct watched_fs *f = w->n_fs ? &w->fs[w->frozen_fs] : NULL;
	uint64_t grace;

	switch (w->frozen) {
	case SIZE:
		grace = w->opts.size / 10 > (16ULL << 20) ? w->opts.size / 10 : 16ULL << 20;
		w->size_bound = w->used + grace;
		say("resumed by isd resume: the size bound is now %s", h(w->size_bound, a));
		break;
	case INODES:
		w->inode_bound = w->inodes + (w->opts.inodes / 10 > 1000 ? w->opts.inodes / 10 : 1000);
		say("resumed by isd resume: the inode bound is now %llu", (unsigned long long)w->inode_bound);
		break;
	case UNACCOUNTED:
		/* Not counted again: the user saw what it is. */
		isd_strv_free(w->accounted);
		w->accounted = NULL;
		w->size_bound = w->inode_bound = 0;
		say("resumed by isd resume: the size and inode bounds are off for this run");
		break;
	case FLOOR:
		f->floor = f->avail / 2;
		say("resumed by isd resume: the floor of %s is now %s", f->path, h(f->floor, a));
		break;
	case IFLOOR:
		f->ifloor = f->iavail / 2;
		say("resumed by isd resume: the inode floor of %s is now %llu", f->path, (unsigned long long)f->ifloor);
		break;
	case NONE:
		return;
	}
	thaw(w);
	write_state(w);
}

/* Space back on its own: the floor cleared with a margin, or the session
 * below its bound again. */
static bool space_back(struct isd_storage_watch *w)
{
	const struct watched_fs *f = w->n_fs ? &w->fs[w->frozen_fs] : NULL;

	switch (w->frozen) {
	case FLOOR:
		return f->avail >= f->floor + f->floor / 10 + (16ULL << 20);
	case IFLOOR:
		return f->iavail >= f->ifloor + f->ifloor / 10 + 100;
	case SIZE:
	case INODES:
		return over_bound(w) == NONE;
	default:
		return false;
	}
}

static bool sandbox_gone(const struct isd_storage_watch *w)
{
	struct pollfd p = {.fd = w->init_pidfd, .events = POLLIN};
	return w->init_pidfd >= 0 && poll(&p, 1, 0) == 1;
}

/* Until the tick is over, a word of the user's (isd resume), or inotify
 * saw what the watcher armed it for; false for the end. */
static bool wait_tick(struct isd_storage_watch *w, uint64_t timeout)
{
	uint64_t until = now_ns() + timeout;

	for (;;) {
		struct pollfd p[2] = {{.fd = w->wake[0], .events = POLLIN},
				      {.fd = w->frozen ? -1 : isd_storage_counter_poll_fd(w->counter), .events = POLLIN}};
		uint64_t now = now_ns(), left = until > now ? until - now : 0;
		struct timespec ts = {.tv_sec = (time_t)(left / 1000000000ULL), .tv_nsec = (long)(left % 1000000000ULL)};

		if (ppoll(p, 2, &ts, NULL) <= 0)
			return true;
		if (p[0].revents) {
			char c[16];
			ssize_t n = read(w->wake[0], c, sizeof(c));
			for (ssize_t i = 0; i < n; i++) {
				if (c[i] == 'q')
					return false;
				if (c[i] == 'e' && !w->ended) {
					say("the sandbox is ended by isd resume --end");
					end_sandbox(w);
				}
				if (c[i] == 'r' && w->frozen)
					user_resume(w);
			}
			return true;
		}
		/* Events below what it was armed for (where the count runs in
		 * isd, each wakes it) wait on. */
		if (p[1].revents && isd_storage_counter_woken(w->counter))
			return true;
	}
}

/* What inotify is to wake the watcher for: a quarter of the room left. */
static void arm(struct isd_storage_watch *w)
{
	uint64_t b = UINT64_MAX, i = UINT64_MAX;

	if (w->size_bound)
		b = room(w->used, w->size_bound) / 4 ? room(w->used, w->size_bound) / 4 : 1;
	if (w->inode_bound)
		i = room(w->inodes, w->inode_bound) / 4 ? room(w->inodes, w->inode_bound) / 4 : 1;
	isd_storage_counter_arm(w->counter, b, i);
}

/* inotify out of watches weakens the bound: said once. */
static void note_limited(struct isd_storage_watch *w)
{
	const struct isd_storage_activity *a = isd_storage_counter_activity(w->counter);

	if (w->said_limited || !a || !(atomic_load(&a->flags) & ISD_ACTIVITY_LIMITED) || (!w->size_bound && !w->inode_bound))
		return;
	w->said_limited = true;
	say("note: inotify cannot watch all of the session's directories (fs.inotify.max_user_watches, max_user_instances): "
	    "its bounds are checked by free space and periodic counts, which other programs freeing space on the same file system delay");
}

static void *watch_loop(void *arg)
{
	struct isd_storage_watch *w = arg;
	uint64_t tick;

	/* Until the first look says otherwise: a payload can fill a small
	 * bound (or the room above a floor) within the first slow tick. */
	(void)count_due(w, now_ns(), &tick);
	tick = tick < TICK_NEAR_MS * MS ? tick : TICK_NEAR_MS * MS;
	for (;;) {
		uint64_t size_tick = TICK_MS * MS;
		bool near_floor = false;
		size_t which = 0;
		enum reason why;
		uint64_t now;

		note_limited(w);
		if (!w->frozen)
			arm(w);
		if (!wait_tick(w, w->frozen ? FROZEN_TICK_MS * MS : tick))
			return NULL;
		if (w->ended)
			continue;
		for (size_t i = 0; i < w->n_fs; i++)
			take_statvfs(&w->fs[i]);
		now = now_ns();
		if (w->frozen) {
			if ((w->frozen == SIZE || w->frozen == INODES) && now - w->last_walk_ns >= WALK_PERIOD_NS)
				walk(w, NULL);
			if (space_back(w)) {
				say("space is back; the sandbox goes on");
				thaw(w);
				write_state(w);
			}
			continue;
		}
		why = below_floor(w, &which, &near_floor);
		if (why == NONE) {
			enum count_kind kind = count_due(w, now, &size_tick);
			if (kind == COUNT_RUNNING) {
				struct isd_storage_limits lim;
				running_limits(w, &lim);
				/* Stopped at a limit, or over: a running count
				 * is not exact (a file renamed during it is
				 * seen twice), a frozen one says. */
				if (!walk(w, &lim) || over_bound(w) != NONE)
					kind = COUNT_FROZEN;
				/* What the sandbox wrote while it was counted. */
				for (size_t i = 0; i < w->n_fs && kind == COUNT_RUNNING; i++)
					take_statvfs(&w->fs[i]);
				if (kind == COUNT_RUNNING && count_due(w, now_ns(), &size_tick) == COUNT_FROZEN)
					kind = COUNT_FROZEN;
			}
			if (kind == COUNT_FROZEN)
				why = frozen_count(w);
			count_due(w, now_ns(), &size_tick);
		}
		tick = near_floor && size_tick > TICK_NEAR_MS * MS ? TICK_NEAR_MS * MS : size_tick;
		if (why != NONE && sandbox_gone(w)) {
			/* the breach outlived the sandbox: nothing to stop */
			if (w->frozen)
				thaw(w);
			continue;
		}
		if (why != NONE) {
			w->frozen_fs = which;
			freeze(w, why);
			report_freeze(w);
			write_state(w);
		} else if (w->session_dir && now - w->last_state_ns >= 1000000000ULL) {
			write_state(w);
		}
	}
}

/* --- set-up --------------------------------------------------------- */

static void add_fs(struct isd_storage_watch *w, const char *path, bool accounted)
{
	struct stat st;
	size_t i;

	if (stat(path, &st) < 0)
		return;
	for (i = 0; i < w->n_fs && w->fs[i].dev != st.st_dev; i++)
		;
	if (i == w->n_fs) {
		w->fs = isd_xrealloc(w->fs, (w->n_fs + 1) * sizeof(*w->fs));
		memset(&w->fs[i], 0, sizeof(w->fs[i]));
		w->fs[i].path = isd_xstrdup(path);
		w->fs[i].dev = st.st_dev;
		w->n_fs++;
	}
	w->fs[i].accounted |= accounted;
}

static void watch_free(struct isd_storage_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n_fs; i++)
		free(w->fs[i].path);
	free(w->fs);
	isd_storage_counter_stop(w->counter);
	isd_strv_free(w->accounted);
	free(w->id);
	free(w->session_dir);
	free(w->unaccounted);
	free(w->freezer.stopped);
	if (w->wake[0] >= 0)
		close(w->wake[0]);
	if (w->wake[1] >= 0)
		close(w->wake[1]);
	if (w->init_pidfd >= 0)
		close(w->init_pidfd);
	free(w);
}

int isd_storage_watch_prepare(const struct isd_spec *spec, const struct isd_storage_scope *scope,
			      struct isd_storage_watch **out)
{
	struct isd_storage_watch *w = isd_xcalloc(1, sizeof(*w));
	char a[32], b[32];
	int r = 0;

	*out = NULL;
	w->wake[0] = w->wake[1] = w->init_pidfd = w->freezer.cgroup_fd = -1;
	w->opts = spec->storage;
	w->size_bound = w->opts.size;
	w->inode_bound = w->opts.inodes;
	w->id = isd_xstrdup(scope->id);
	w->session_dir = scope->session_dir ? isd_xstrdup(scope->session_dir) : NULL;
	w->baseline = scope->baseline;
	if (w->size_bound || w->inode_bound)
		w->accounted = isd_strv_copy(scope->accounted);
	for (size_t i = 0; w->accounted && w->accounted[i]; i++) {
		_cleanup_free_ char *dir = isd_xstrdup(w->accounted[i]);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir)
			*slash = '\0';
		add_fs(w, dir, true);
	}
	for (size_t i = 0; scope->writable && scope->writable[i]; i++)
		add_fs(w, scope->writable[i], false);
	for (size_t i = 0; i < w->n_fs; i++) {
		struct watched_fs *f = &w->fs[i];
		struct statvfs sv;
		uint64_t total;

		if (statvfs(f->path, &sv) < 0)
			continue;
		total = (uint64_t)sv.f_blocks * sv.f_frsize;
		f->floor = isd_storage_floor(&w->opts, total);
		/* Free inodes: the same share of the file system's inodes
		 * (none where it has no fixed number, e.g. btrfs). */
		if (sv.f_files && f->floor)
			f->ifloor = (uint64_t)sv.f_files / 100 * (w->opts.min_free_pct ? w->opts.min_free_pct : ISD_STORAGE_DEFAULT_FLOOR_PCT);
		f->floor_on = f->floor > 0;
		take_statvfs(f);
		if (!f->floor_on || (f->avail >= f->floor && (!f->ifloor || f->iavail >= f->ifloor)))
			continue;
		if (w->opts.min_free_set) {
			r = isd_error(-ENOSPC, "the file system of %s has %s free, below the floor of %s (--storage-opt min-free=)",
				      f->path, h(f->avail, a), h(f->floor, b));
			isd_error_hint("free space there, or lower the floor: --storage-opt min-free=SIZE (0 turns it off)");
			goto fail;
		}
		fprintf(stderr, "isd: note: the file system of %s has %s free, below the default floor of %s; "
				"isd does not watch its floor for this run (--storage-opt min-free=SIZE sets one)\n",
			f->path, h(f->avail, a), h(f->floor, b));
		f->floor_on = false;
	}
	{
		bool any_floor = false;
		for (size_t i = 0; i < w->n_fs; i++)
			any_floor |= w->fs[i].floor_on;
		/* Nothing to watch (size=0 and min-free=0): no thread at all. */
		if (!any_floor && !w->size_bound && !w->inode_bound) {
			watch_free(w);
			return 0;
		}
	}
	/* Before the sandbox exists: the process that counts is not its. */
	r = isd_storage_counter_start(w->accounted, &w->baseline, &w->counter);
	if (r < 0)
		goto fail;
	walk(w, NULL);
	if (over_bound(w) == SIZE || over_bound(w) == INODES) {
		r = isd_error(-ENOSPC, "%s holds %s in %llu files already, at or over --storage-opt size=%s inodes=%llu",
			      w->session_dir ? w->session_dir : w->accounted[0], h(w->used, a),
			      (unsigned long long)w->inodes, h(w->opts.size, b), (unsigned long long)w->opts.inodes);
		isd_error_hint("raise the bound (--storage-opt size=SIZE) or remove what the session holds");
		goto fail;
	}
	*out = w;
	return 0;
fail:
	watch_free(w);
	return r;
}

int isd_storage_watch_run(struct isd_storage_watch *w, pid_t init, pid_t tree, int cgroup_fd)
{
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	sigset_t all, old;
	int r;

	if (!w)
		return 0;
	w->init = init;
	w->tree = tree;
	w->init_pidfd = (int)syscall(SYS_pidfd_open, init, 0);
	w->freezer.cgroup_fd = cgroup_fd >= 0 ? fcntl(cgroup_fd, F_DUPFD_CLOEXEC, 3) : -1;
	w->freezer.tree = tree;
	w->freezer.skip = isd_storage_counter_pid(w->counter);
	if (pipe2(w->wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return isd_error(-errno, "creating the storage watcher's pipe");
	signal_target = w;
	sigaction(ISD_STORAGE_SIG_RESUME, &sa, &w->old_resume);
	sigaction(ISD_STORAGE_SIG_END, &sa, &w->old_end);
	w->handlers = true;
	write_state(w);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&w->thread, NULL, watch_loop, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return isd_error(r, "starting the storage watcher");
	w->running = true;
	return 0;
}

void isd_storage_watch_stop(struct isd_storage_watch *w)
{
	if (!w)
		return;
	if (w->running) {
		(void)!write(w->wake[1], "q", 1);
		pthread_join(w->thread, NULL);
	}
	if (w->handlers) {
		sigaction(ISD_STORAGE_SIG_RESUME, &w->old_resume, NULL);
		sigaction(ISD_STORAGE_SIG_END, &w->old_end, NULL);
	}
	signal_target = NULL;
	if (w->frozen)
		thaw(w);
	if (w->session_dir) {
		/* The bound stays for isd session list, no longer a pid. */
		w->frozen = NONE;
		write_state_pid(w, 0);
	}
	if (w->freezer.cgroup_fd >= 0)
		close(w->freezer.cgroup_fd);
	watch_free(w);
}

pid_t isd_storage_watch_helper_pid(const struct isd_storage_watch *w)
{
	return w ? isd_storage_counter_pid(w->counter) : 0;
}

bool isd_storage_watch_ended(const struct isd_storage_watch *w)
{
	return w && w->ended;
}
