/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The activity log's exec records (isd/activity.h): the filter, and what
 * isd reads of each notification; the listener that answers them is
 * src/activity-listen.c.
 *
 * Everything read from the sandbox is hostile: every read is bounded (path
 * and cwd PATH_MAX, argv ISD_ACTIVITY_MAX_ARGV in all), the record buffer is
 * allocated once, and every notification is answered CONTINUE whatever
 * went wrong, so that the payload never hangs on isd.
 */
#define _GNU_SOURCE
#include "isd/activity.h"
#include "activity-exe.h"
#include "activity-internal.h"
#include "isd/seccomp.h"
#include "activity-rec.h"
#include "connect-guard.h"
#include "testhooks.h"
#include "isd/util.h"
#include "isd/process.h"
#include "isd/syscalls.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif


static void rec_time(struct rec *r)
{
	rec_time_at(r, NULL);
}

/* A whole record, its newline included. */
static void write_text(void *arg, const char *buf, size_t len)
{
	struct isd_activity *a = arg;

	struct log_share *sh = a->share;

	if (pthread_mutex_lock(&sh->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&sh->lock);
	if (sh->written + len + DROPPED_RESERVE > a->limit)
		sh->dropped++;
	else if (isd_write_all(a->log_fd, buf, len) == 0)
		sh->written += len;
	pthread_mutex_unlock(&sh->lock);
}

void activity_write(struct isd_activity *a, struct rec *r)
{
	rec_putn(r, "\n", 1);
	write_text(a, r->buf, r->len);
}

static void write_record(struct isd_activity *a)
{
	activity_write(a, &a->rec);
}

static void add_arch(struct isd_activity *a, scmp_filter_ctx ctx, uint32_t arch, unsigned ptr_size)
{
	struct exec_arch *e = &a->arches[a->n_arches];

	if (a->n_arches == MAX_ARCHES || (arch != seccomp_arch_native() && seccomp_arch_add(ctx, arch) < 0))
		return;
	e->arch = arch;
	e->execve_nr = seccomp_syscall_resolve_name_arch(arch, "execve");
	e->execveat_nr = seccomp_syscall_resolve_name_arch(arch, "execveat");
	e->checkpoint_nr = seccomp_syscall_resolve_name_arch(arch, "set_tid_address");
	e->connect_nr = seccomp_syscall_resolve_name_arch(arch, "connect");
	e->ptr_size = ptr_size;
	a->n_arches++;
}

/* The exec rules, and with a guard joined its connect rule. */
static int build_filter(struct isd_activity *a)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r;

	free(a->filter);
	a->filter = NULL;
	a->n_arches = 0;
	if (!ctx)
		return isd_error(-ENOMEM, "creating the activity log's seccomp filter");
	/* Architectures this filter does not know are the profile's to judge. */
	seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
	add_arch(a, ctx, seccomp_arch_native(), sizeof(void *));
#if defined(__x86_64__)
	add_arch(a, ctx, SCMP_ARCH_X86, 4);
	add_arch(a, ctx, SCMP_ARCH_X32, 4);
#elif defined(__aarch64__)
	add_arch(a, ctx, SCMP_ARCH_ARM, 4);
#endif
	r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(execve), 0);
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(execveat), 0);
	/* Made once at the start of a program by glibc and musl: where isd
	 * sees which executable an exec ran (src/activity-exe.c). */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(set_tid_address), 0);
	/* The guard's (src/connect-guard.c): the kernel allows one listener. */
	if (r == 0 && a->guard)
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0);
	if (r == 0)
		r = isd_seccomp_export(ctx, &a->filter, &a->len);
	else
		isd_error(r, "adding the exec rules to the activity log's seccomp filter");
	seccomp_release(ctx);
	return r;
}

int isd_activity_open(const char *path, char *const *initial_argv, const char *initial_cwd, struct isd_activity **out)
{
	struct isd_activity *a = isd_xcalloc(1, sizeof(*a));
	struct stat st;
	int r;

	pthread_mutexattr_t attr;

	a->log_fd = a->listener = a->stop_pipe[0] = a->stop_pipe[1] = a->prestart_sock = -1;
	pthread_mutex_init(&a->handover_lock, NULL);
	a->share = mmap(NULL, sizeof(*a->share), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a->share == MAP_FAILED) {
		a->share = NULL;
		r = isd_error(-errno, "allocating the activity log's shared state");
		goto fail;
	}
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&a->share->lock, &attr);
	pthread_mutexattr_destroy(&attr);
	a->limit = isd_testhook_activity_limit(ISD_ACTIVITY_MAX_LOG);
	a->initial_argv = isd_strv_copy(initial_argv);
	a->initial_cwd = isd_xstrdup(initial_cwd ? initial_cwd : "/");
	/* O_RDWR: the read lock below needs a descriptor open for reading. */
	a->log_fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (a->log_fd < 0 || fstat(a->log_fd, &st) < 0) {
		r = isd_error(-errno, "opening the activity log %s", path);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		r = isd_error(-EINVAL, "the activity log %s is not a regular file", path);
		goto fail;
	}
	/* What `isd log --follow` knows the run still writes by: an open file
	 * description's lock, gone with the last descriptor of it, so also
	 * when isd is killed.  A read lock, so that runs appending to one
	 * --activity-log FILE never wait for each other; not taken, the log
	 * is still written, only a follower stops early. */
	if (fcntl(a->log_fd, F_OFD_SETLK, &(struct flock){.l_type = F_RDLCK, .l_whence = SEEK_SET}) < 0)
		isd_warn("locking the activity log %s: %s (isd log --follow will not wait for this run)", path,
			 strerror(errno));
	a->share->written = (uint64_t)st.st_size;

	if ((r = build_filter(a)) < 0)
		goto fail;
	a->rec.buf = isd_xmalloc(REC_CAP);
	a->rec.cap = REC_CAP;
	a->exe = isd_exe_watch_new(write_text, a);
	a->scratch = isd_xmalloc(ISD_ACTIVITY_MAX_ARGV + 1);
	*out = a;
	return 0;
fail:
	isd_activity_free(a);
	return r;
}

int isd_activity_install(const struct isd_activity *a)
{
	struct sock_fprog prog = {.len = a->len, .filter = a->filter};
	long fd = -1;

	/* The guard's connects wait on as isd_connect_guard_install's do:
	 * before Linux 5.19 a signal interrupts the wait (EINVAL here). */
	if (a->guard)
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			     SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	if (fd < 0 && (!a->guard || errno == EINVAL))
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	return fd < 0 ? -errno : (int)fd;
}

/* Whether a process of isd's that is not the payload's ancestor may read
 * the payload's memory: Yama's ptrace_scope 1 (Ubuntu's, Debian's) allows
 * that only to an ancestor or a holder of CAP_SYS_PTRACE (in the full
 * tier the listener has it in the sandbox's user namespace; here there is
 * none). */
static bool may_read_non_descendants(void)
{
	char buf[512];
	_cleanup_close_ int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	unsigned long long eff = 0;
	FILE *f;
	ssize_t n;

	if (isd_testhook_activity_thread())
		return false;
	if (fd < 0)
		return true; /* no Yama */
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0 && buf[0] == '0')
		return true;
	f = fopen("/proc/self/status", "re");
	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	return eff & (1ULL << 19); /* CAP_SYS_PTRACE */
}

int isd_activity_join_guard(struct isd_activity *a, const struct isd_connect_guard *guard)
{
	a->in_thread = !may_read_non_descendants();
	if (!guard)
		return 0;
	a->guard = guard;
	return build_filter(a);
}

/* A NUL-terminated string at addr, at most max bytes, in page-sized reads
 * (a string may end right before an unmapped page).  Returns its length,
 * or -1; *cut when it went on past max. */
static ssize_t read_str(int mem, uint64_t addr, char *buf, size_t max, bool *cut)
{
	size_t len = 0;

	*cut = false;
	while (len < max) {
		size_t chunk = 4096 - (size_t)((addr + len) & 4095);
		ssize_t n;
		char *nul;

		if (chunk > max - len)
			chunk = max - len;
		n = pread(mem, buf + len, chunk, (off_t)(addr + len));
		if (n <= 0)
			return -1;
		nul = memchr(buf + len, '\0', (size_t)n);
		if (nul)
			return (ssize_t)(nul - buf);
		len += (size_t)n;
	}
	*cut = true;
	return (ssize_t)len;
}

/* One page-bounded read of the payload's memory, kept: an argv's strings
 * mostly lie side by side, so one read then holds several (a compiler's
 * 30 arguments took 61 reads, one per pointer and one per string). */
struct mem_window {
	uint64_t addr;
	size_t len;
	char buf[4096];
};

/* read_str through the window: the same string, cut the same way. */
static ssize_t window_str(int mem, struct mem_window *w, uint64_t addr, char *buf, size_t max, bool *cut)
{
	size_t off, look;
	char *nul;

	if (addr < w->addr || addr - w->addr >= w->len) {
		ssize_t n = pread(mem, w->buf, 4096 - (size_t)(addr & 4095), (off_t)addr);

		if (n <= 0) {
			w->len = 0;
			return -1;
		}
		w->addr = addr;
		w->len = (size_t)n;
	}
	off = (size_t)(addr - w->addr);
	look = w->len - off < max ? w->len - off : max;
	*cut = false;
	nul = memchr(w->buf + off, '\0', look);
	if (nul) {
		memcpy(buf, w->buf + off, (size_t)(nul - (w->buf + off)));
		return nul - (w->buf + off);
	}
	if (look == max) {
		memcpy(buf, w->buf + off, max);
		*cut = true;
		return (ssize_t)max;
	}
	/* on past the window's page */
	return read_str(mem, addr, buf, max, cut);
}

/* argv's pointers, read a page-bounded batch at a time. */
struct ptr_batch {
	uint64_t first; /* index of raw's first pointer */
	size_t have;
	unsigned char raw[512];
};

static bool argv_ptr(int mem, struct ptr_batch *b, uint64_t argv_addr, unsigned ptr_size, uint64_t i, uint64_t *p)
{
	if (i < b->first || i - b->first >= b->have) {
		uint64_t addr = argv_addr + i * ptr_size;
		size_t bytes = 4096 - (size_t)(addr & 4095);
		ssize_t n;

		if (bytes > sizeof(b->raw))
			bytes = sizeof(b->raw);
		bytes -= bytes % ptr_size;
		if (bytes < ptr_size)
			bytes = ptr_size; /* one that straddles a page */
		n = pread(mem, b->raw, bytes, (off_t)addr);
		if (n < (ssize_t)ptr_size)
			return false;
		b->first = i;
		b->have = (size_t)n / ptr_size;
	}
	*p = 0;
	memcpy(p, b->raw + (i - b->first) * ptr_size, ptr_size);
	return true;
}

static const struct exec_arch *find_arch(const struct isd_activity *a, uint32_t arch)
{
	for (size_t i = 0; i < a->n_arches; i++)
		if (a->arches[i].arch == arch)
			return &a->arches[i];
	return NULL;
}

static void rec_initial_argv(struct isd_activity *a)
{
	rec_puts(&a->rec, ",\"argv\":[");
	for (size_t i = 0; a->initial_argv && a->initial_argv[i]; i++) {
		if (i)
			rec_putn(&a->rec, ",", 1);
		rec_json_str(&a->rec, a->initial_argv[i], strlen(a->initial_argv[i]));
	}
	rec_puts(&a->rec, "],\"argv_from\":\"isd\"");
}

static void rec_argv(struct isd_activity *a, int mem, struct mem_window *w, uint64_t argv_addr, unsigned ptr_size)
{
	size_t budget = ISD_ACTIVITY_MAX_ARGV;
	struct ptr_batch batch = {.have = 0};
	bool cut = false;

	rec_puts(&a->rec, ",\"argv\":[");
	for (uint64_t i = 0; argv_addr; i++) {
		uint64_t p = 0;
		ssize_t n;

		if (budget == 0) {
			cut = true;
			break;
		}
		if (!argv_ptr(mem, &batch, argv_addr, ptr_size, i, &p) || !p)
			break;
		n = window_str(mem, w, p, a->scratch, budget, &cut);
		if (n < 0)
			break;
		if (i)
			rec_putn(&a->rec, ",", 1);
		rec_json_str(&a->rec, a->scratch, (size_t)n);
		/* the NUL and the pointer count too, so an argv of empty
		 * strings ends as well */
		budget -= (size_t)n + 1 < budget ? (size_t)n + 1 : budget;
		if (cut)
			break;
	}
	rec_puts(&a->rec, "]");
	if (cut)
		rec_puts(&a->rec, ",\"argv_cut\":true");
}

/* Returns the host pid of the caller's thread group.  Everything is read
 * through dirfd, the caller's /proc directory (-1: it is gone): one
 * lookup of it, and every read is of the same process. */
static long build_record(struct isd_activity *a, const struct seccomp_notif *req, int dirfd)
{
	const struct exec_arch *arch = find_arch(a, req->data.arch);
	pid_t pid = (pid_t)req->pid;
	char cwd[PATH_MAX];
	long ns_pid, ppid, tgid, ns_ppid = -1, dummy;
	uint64_t path_addr, argv_addr;
	int nr = req->data.nr;
	bool cut, at;
	ssize_t n;
	_cleanup_close_ int mem = -1;
	struct mem_window window, *w = &window;

	window.addr = 0;
	window.len = 0; /* (the buffer is never read past len) */
	a->rec.len = 0;
	rec_puts(&a->rec, "{\"type\":\"exec\",");
	rec_time(&a->rec);
	isd_process_status_at(dirfd, "status", &ns_pid, &ppid, &tgid);
	if (ppid > 0)
		isd_process_status((pid_t)ppid, &ns_ppid, &dummy, NULL);
	rec_printf(&a->rec, ",\"pid\":%ld,\"ppid\":%ld,\"host_pid\":%d", ns_pid, ns_ppid, pid);

	n = dirfd < 0 ? -1 : readlinkat(dirfd, "cwd", cwd, sizeof(cwd));
	if (n >= 0 && (size_t)n < sizeof(cwd)) {
		rec_puts(&a->rec, ",\"cwd\":");
		rec_json_str(&a->rec, cwd, (size_t)n);
	} else if (!a->initial_done) {
		rec_puts(&a->rec, ",\"cwd\":");
		rec_json_str(&a->rec, a->initial_cwd, strlen(a->initial_cwd));
	}

	at = arch && (nr == arch->execveat_nr || (int)((unsigned)nr & ~X32_BIT) == arch->execveat_nr);
	path_addr = at ? req->data.args[1] : req->data.args[0];
	argv_addr = at ? req->data.args[2] : req->data.args[1];
	if (at && (int)req->data.args[0] != AT_FDCWD)
		rec_printf(&a->rec, ",\"dirfd\":%d", (int)req->data.args[0]);

	mem = dirfd < 0 ? -1 : openat(dirfd, "mem", O_RDONLY | O_CLOEXEC);
	if (mem < 0 && dirfd < 0)
		errno = ESRCH;
	if (mem < 0 && !a->initial_done) {
		/* The payload's own execve runs on the memory it shares with
		 * isd's init, which is not dumpable, so a rootless isd cannot
		 * read it; that exec is the command isd itself was given. */
		rec_initial_argv(a);
	} else if (mem < 0 || !arch) {
		rec_printf(&a->rec, ",\"unreadable\":\"%s\"", mem < 0 ? strerror(errno) : "unknown architecture");
	} else {
		n = window_str(mem, w, path_addr, a->scratch, PATH_MAX, &cut);
		if (n >= 0) {
			rec_puts(&a->rec, ",\"path\":");
			rec_json_str(&a->rec, a->scratch, (size_t)n);
		}
		rec_argv(a, mem, w, argv_addr, arch->ptr_size);
	}
	a->initial_done = true;
	rec_puts(&a->rec, "}");
	return tgid;
}

void activity_handle_one(struct isd_activity *a)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	bool valid;

	const struct exec_arch *arch;
	long tgid;
	int exe = -1;

	memset(&req, 0, sizeof(req));
	if (ioctl(a->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return; /* ENOENT: the caller died before we got to it */
	arch = find_arch(a, req.data.arch);
	if (a->guard && arch && (req.data.nr == arch->connect_nr || (int)((unsigned)req.data.nr & ~X32_BIT) == arch->connect_nr)) {
		/* The guard's.  Another architecture's the tier's socket
		 * filter refuses before (EPERM): refused all the same. */
		if (req.data.arch == seccomp_arch_native()) {
			isd_connect_guard_answer(a->guard, a->listener, &req);
			return;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.error = -EACCES;
		(void)!ioctl(a->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		return;
	}
	/* The caller waits for the answer: only what must be read while it
	 * is stopped comes before it; writing the log comes after. */
	if (arch && (req.data.nr == arch->checkpoint_nr || (int)((unsigned)req.data.nr & ~X32_BIT) == arch->checkpoint_nr)) {
		/* An exec of the caller that waits is over.  (Nothing read here
		 * goes by the pid: the watch holds the process's /proc
		 * directory, so no check of the notification is needed.) */
		isd_exe_watch_stopped(a->exe, (pid_t)req.pid, 0);
		valid = false;
	} else {
		char path[64];
		int dirfd;

		snprintf(path, sizeof(path), "/proc/%d", (int)req.pid);
		dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		tgid = build_record(a, &req, dirfd);
		isd_exe_watch_stopped(a->exe, (pid_t)req.pid, (pid_t)tgid);
		/* (the watch takes dirfd) */
		exe = isd_exe_watch_before(a->exe, (pid_t)req.pid, (pid_t)tgid, dirfd);
		valid = ioctl(a->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) == 0;
	}
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	(void)!ioctl(a->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	if (isd_testhook_activity_write_delay_ms())
		nanosleep(&(struct timespec){.tv_nsec = (long)(isd_testhook_activity_write_delay_ms() % 1000) * 1000000},
			  NULL);
	isd_exe_watch_flush(a->exe);
	if (exe < 0)
		return;
	/* A caller that died during the reads may have had its pid reused:
	 * what was read is not known to be its. */
	if (valid)
		isd_exe_watch_add(a->exe, exe, a->rec.buf, a->rec.len);
	else
		isd_exe_watch_cancel(a->exe, exe);
}

void activity_write_header(struct isd_activity *a, int err)
{
	a->rec.len = 0;
	rec_puts(&a->rec, "{\"type\":\"header\",");
	rec_time(&a->rec);
	rec_printf(&a->rec, ",\"version\":1,\"exec_records\":%s", err ? "false" : "true");
	if (err) {
		const char *why = err == -EBUSY ? "an outer seccomp filter already has a listener (isd inside isd, "
						  "or a container runtime using seccomp notify)"
						: strerror(-err);
		rec_puts(&a->rec, ",\"reason\":");
		rec_json_str(&a->rec, why, strlen(why));
	}
	rec_puts(&a->rec, "}");
	write_record(a);
}

bool isd_activity_log_is_written(int fd)
{
	struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET};

	/* Asks without taking: a follower never holds up a run. */
	return fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK;
}
