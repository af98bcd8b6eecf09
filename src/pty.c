/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "pty.h"
#include "isd/util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

int isd_pty_open(int *master, int *slave)
{
	int m, s, unlock = 0;

	m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return isd_error(-errno, "opening /dev/ptmx of the sandbox's devpts");
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0) {
		int r = isd_error(-errno, "unlocking the sandbox's pty");
		close(m);
		return r;
	}
	/* TIOCGPTPEER opens the peer through the master, never by a path
	 * that something could have replaced. */
	s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0) {
		int r = isd_error(-errno, "opening the sandbox's pty peer");
		close(m);
		return r;
	}
	*master = m;
	*slave = s;
	return 0;
}

int isd_pty_attach(int slave)
{
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return isd_error(-errno, "making the pty the payload's controlling terminal");
	for (int fd = 0; fd < 3; fd++)
		if (dup2(slave, fd) < 0)
			return isd_error(-errno, "connecting the payload to its pty");
	if (slave > 2)
		close(slave);
	return 0;
}

static struct termios saved_termios;
static volatile sig_atomic_t terminal_is_raw;

void isd_pty_restore_terminal(void)
{
	if (terminal_is_raw) {
		tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_termios);
		terminal_is_raw = 0;
	}
}

bool isd_pty_terminal_is_raw(void)
{
	return terminal_is_raw;
}

static void restore_and_die(int sig)
{
	isd_pty_restore_terminal();
	raise(sig); /* SA_RESETHAND: the default action now */
}

void isd_pty_raw_terminal(void)
{
	struct termios raw;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_termios) < 0)
		return;
	raw = saved_termios;
	cfmakeraw(&raw);
	/* Keep output post-processing off as cfmakeraw does; the sandbox's
	 * own line discipline already turns \n into \r\n. */
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0) {
		static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
		struct sigaction sa = {.sa_handler = restore_and_die, .sa_flags = SA_RESETHAND | SA_NODEFER};

		terminal_is_raw = 1;
		atexit(isd_pty_restore_terminal);
		/* Even a crash of isd must not leave the caller's terminal raw. */
		for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			sigaction(fatal[i], &sa, NULL);
	}
}

void isd_pty_sync_winsize(int master)
{
	struct winsize ws;

	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(master, TIOCSWINSZ, &ws);
}

int isd_pty_relay(int master, int wake_fd, bool forward_stdin, bool (*child_exited)(void *ctx), void *ctx)
{
	char out[16384], in[4096];
	size_t in_len = 0, in_off = 0;
	bool stdin_open = forward_stdin, send_eof = false;
	int flags = fcntl(master, F_GETFL);

	/* Non-blocking, so that a payload that does not read its input can
	 * never stop its output from reaching the caller. */
	if (flags >= 0)
		fcntl(master, F_SETFL, flags | O_NONBLOCK);
	for (;;) {
		struct pollfd p[3] = {
			{.fd = master, .events = POLLIN | (in_len > in_off || send_eof ? POLLOUT : 0)},
			{.fd = wake_fd, .events = POLLIN},
			{.fd = stdin_open && in_len == in_off && !send_eof ? STDIN_FILENO : -1, .events = POLLIN},
		};
		int n = poll(p, 3, child_exited(ctx) ? 50 : -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return isd_error(-errno, "waiting on the sandbox's terminal");
		}
		if (n == 0 && child_exited(ctx))
			return 0; /* nothing more will come */
		if (p[1].revents & POLLIN) {
			char drain[64];
			while (read(wake_fd, drain, sizeof(drain)) > 0)
				;
			isd_pty_sync_winsize(master);
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t r = read(master, out, sizeof(out));
			if (r > 0) {
				int w = isd_write_all(STDOUT_FILENO, out, (size_t)r);
				if (w == -EPIPE) {
					/* Whoever read our output is gone (isd exec -t ... |
					 * head): closing the master gives the payload the
					 * hang-up a closed terminal would. */
					return 1;
				} else if (w < 0) {
					return isd_error(w, "writing the sandbox's output");
				}
			} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
				return 0; /* EIO: every holder of the peer is gone */
			}
		}
		if ((p[0].revents & POLLOUT) && in_len > in_off) {
			ssize_t w = write(master, in + in_off, in_len - in_off);
			if (w > 0)
				in_off += (size_t)w;
			if (in_off == in_len)
				in_off = in_len = 0;
		} else if ((p[0].revents & POLLOUT) && send_eof) {
			/* A piped stdin ended: tell the line discipline, as a
			 * user typing Ctrl-D would. */
			struct termios t;
			char eof = tcgetattr(master, &t) == 0 ? (char)t.c_cc[VEOF] : 4;
			if (write(master, &eof, 1) == 1)
				send_eof = false;
		}
		if (p[2].revents & (POLLIN | POLLHUP)) {
			ssize_t r = read(STDIN_FILENO, in, sizeof(in));
			if (r > 0) {
				in_len = (size_t)r;
				in_off = 0;
			} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
				stdin_open = false;
				send_eof = !isatty(STDIN_FILENO);
			}
		}
	}
}

/* The write end of the running terminal relay's self-pipe, the one thing
 * its signal handler needs; -1 outside a relay.  Everything else of a run
 * is the run's own, so that isd build can run one sandbox per RUN step in
 * one process (src/sandbox.c, src/sandbox-landlock.c). */
static volatile sig_atomic_t wake_fd = -1;

static void wake_relay(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (wake_fd >= 0)
		(void)!write(wake_fd, &c, 1);
	errno = saved;
}

static bool reap_child_nonblocking(void *ctx)
{
	struct isd_pty_child *w = ctx;

	if (!w->reaped && waitpid(w->pid, &w->status, WNOHANG) == w->pid)
		w->reaped = true;
	return w->reaped;
}

int isd_pty_run(int *master, bool forward_stdin, struct isd_pty_child *w)
{
	struct sigaction wake = {.sa_handler = wake_relay, .sa_flags = SA_RESTART};
	struct sigaction old_winch, old_chld;
	int pipefd[2], r;

	if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0)
		return isd_error(-errno, "creating the terminal relay's pipe");
	wake_fd = pipefd[1];
	sigaction(SIGWINCH, &wake, &old_winch);
	sigaction(SIGCHLD, &wake, &old_chld);
	signal(SIGPIPE, SIG_IGN);
	isd_pty_sync_winsize(*master);
	isd_pty_raw_terminal();
	r = isd_pty_relay(*master, pipefd[0], forward_stdin, reap_child_nonblocking, w);
	if (r == 1) {
		close(*master);
		*master = -1;
		r = 0;
	}
	isd_pty_restore_terminal();
	sigaction(SIGWINCH, &old_winch, NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	wake_fd = -1;
	close(pipefd[0]);
	close(pipefd[1]);
	return r;
}
