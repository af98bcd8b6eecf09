/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small static program that reports what a sandboxed process sees, so the
 * integration tests can assert on exact facts instead of parsing tool
 * output.  It is linked statically so that it runs in any image.
 *
 *   probe status              Uid, Gid, Cap..., NoNewPrivs and Seccomp lines
 *   probe maps                uid_map and gid_map
 *   probe fds                 open descriptors other than 0-2: "fd N -> target"
 *   probe cwd                 the working directory
 *   probe statfs PATH         flags (ro nosuid nodev noexec) and size in bytes
 *   probe write PATH          create+write a file: "ok" or the errno name
 *   probe open PATH r|w       open: "ok" or the errno name
 *   probe fill PATH           write 1 MiB chunks until failure: "wrote N errno E"
 *   probe exec PATH           execve PATH: the errno name on failure
 *   probe chdir PATH          chdir: "ok" or the errno name
 *   probe pids                the pids visible in /proc
 *   probe orphans N           make N orphans that exit, wait, count zombies
 *   probe sleep SECONDS       sleep (for kill tests); prints "ready" first
 *   probe kill SIGNAL         kill itself with SIGNAL
 *   probe exit N              exit with N
 *   probe readfd N            read from descriptor N: "ok" or the errno name
 *   probe tiocsti             push a character into fd 0 with TIOCSTI
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EROFS: return "EROFS";
	case ENOSPC: return "ENOSPC";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case ELOOP: return "ELOOP";
	case EBADF: return "EBADF";
	case ENXIO: return "ENXIO";
	case ENOTTY: return "ENOTTY";
	case ETXTBSY: return "ETXTBSY";
	case EINVAL: return "EINVAL";
	case ENOSYS: return "ENOSYS";
	case EIO: return "EIO";
	case EXDEV: return "EXDEV";
	case EEXIST: return "EEXIST";
	default: return strerror(e);
	}
}

static int cmd_status(void)
{
	static const char *const keys[] = {"Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:",
					   "CapBnd:", "CapAmb:", "NoNewPrivs:", "Seccomp:", NULL};
	char line[512];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f) {
		printf("error %s\n", errname(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f))
		for (int i = 0; keys[i]; i++)
			if (!strncmp(line, keys[i], strlen(keys[i])))
				fputs(line, stdout);
	fclose(f);
	return 0;
}

static int cat(const char *path, const char *prefix)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("%s error %s\n", prefix, errname(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f))
		printf("%s %s", prefix, line);
	fclose(f);
	return 0;
}

static int cmd_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int self;

	if (!d) {
		printf("error %s\n", errname(errno));
		return 1;
	}
	self = dirfd(d);
	while ((de = readdir(d))) {
		char path[64], target[PATH_MAX];
		int fd;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		if (fd <= 2 || fd == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		printf("fd %d -> %s\n", fd, target);
	}
	closedir(d);
	return 0;
}

static int cmd_statfs(const char *path)
{
	struct statvfs st;

	if (statvfs(path, &st) < 0) {
		printf("error %s\n", errname(errno));
		return 1;
	}
	printf("flags%s%s%s%s\n", st.f_flag & ST_RDONLY ? " ro" : " rw", st.f_flag & ST_NOSUID ? " nosuid" : "",
	       st.f_flag & ST_NODEV ? " nodev" : "", st.f_flag & ST_NOEXEC ? " noexec" : "");
	printf("size %llu\n", (unsigned long long)st.f_blocks * st.f_frsize);
	return 0;
}

static int cmd_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, "x\n", 2) != 2) {
		printf("%s\n", errname(errno));
		return 1;
	}
	close(fd);
	printf("ok\n");
	return 0;
}

static int cmd_open(const char *path, const char *mode)
{
	int fd = open(path, mode[0] == 'w' ? O_WRONLY : O_RDONLY);

	if (fd < 0) {
		printf("%s\n", errname(errno));
		return 1;
	}
	close(fd);
	printf("ok\n");
	return 0;
}

static int cmd_fill(const char *path)
{
	static char chunk[1 << 20];
	unsigned long long total = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int err = 0;

	if (fd < 0) {
		printf("open %s\n", errname(errno));
		return 1;
	}
	memset(chunk, 'x', sizeof(chunk));
	for (;;) {
		ssize_t n = write(fd, chunk, sizeof(chunk));
		if (n < 0) {
			err = errno;
			break;
		}
		total += (unsigned long long)n;
		if (total > (64ULL << 30))
			break;
	}
	close(fd);
	printf("wrote %llu errno %s\n", total, err ? errname(err) : "none");
	return 0;
}

static int cmd_pids(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return 1;
	while ((de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
			printf("pid %s\n", de->d_name);
	closedir(d);
	return 0;
}

static int count_zombies(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int zombies = 0;

	while (d && (de = readdir(d))) {
		char path[300], buf[512], *p;
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ' && p[2] == 'Z')
			zombies++;
		fclose(f);
	}
	if (d)
		closedir(d);
	return zombies;
}

static int cmd_orphans(int n)
{
	struct timespec ts = {0, 300 * 1000 * 1000};

	for (int i = 0; i < n; i++) {
		pid_t child = fork();
		if (child == 0) {
			/* The grandchild outlives its parent, so it is reparented
			 * to pid 1, which alone can reap it. */
			if (fork() == 0) {
				struct timespec t = {0, 50 * 1000 * 1000};
				nanosleep(&t, NULL);
				_exit(0);
			}
			_exit(0);
		}
		waitpid(child, NULL, 0);
	}
	nanosleep(&ts, NULL);
	printf("zombies %d\n", count_zombies());
	return 0;
}

static int cmd_tiocsti(void)
{
	char c = 'X';

	if (ioctl(0, TIOCSTI, &c) < 0) {
		printf("%s\n", errname(errno));
		return 1;
	}
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "status"))
		return cmd_status();
	if (!strcmp(cmd, "maps"))
		return cat("/proc/self/uid_map", "uid_map") | cat("/proc/self/gid_map", "gid_map");
	if (!strcmp(cmd, "fds"))
		return cmd_fds();
	if (!strcmp(cmd, "cwd")) {
		char buf[PATH_MAX];
		printf("%s\n", getcwd(buf, sizeof(buf)) ? buf : errname(errno));
		return 0;
	}
	if (!strcmp(cmd, "statfs"))
		return cmd_statfs(arg);
	if (!strcmp(cmd, "write"))
		return cmd_write(arg);
	if (!strcmp(cmd, "open"))
		return cmd_open(arg, argc > 3 ? argv[3] : "r");
	if (!strcmp(cmd, "fill"))
		return cmd_fill(arg);
	if (!strcmp(cmd, "exec")) {
		char *const args[] = {(char *)arg, NULL};
		execv(arg, args);
		printf("%s\n", errname(errno));
		return 1;
	}
	if (!strcmp(cmd, "chdir")) {
		if (chdir(arg) < 0) {
			printf("%s\n", errname(errno));
			return 1;
		}
		printf("ok\n");
		return 0;
	}
	if (!strcmp(cmd, "pids"))
		return cmd_pids();
	if (!strcmp(cmd, "orphans"))
		return cmd_orphans(atoi(arg));
	if (!strcmp(cmd, "sleep")) {
		printf("ready\n");
		fflush(stdout);
		sleep((unsigned)atoi(arg));
		return 0;
	}
	if (!strcmp(cmd, "kill")) {
		kill(getpid(), atoi(arg));
		return 99;
	}
	if (!strcmp(cmd, "exit"))
		return atoi(arg);
	if (!strcmp(cmd, "readfd")) {
		char c;
		if (read(atoi(arg), &c, 1) < 0) {
			printf("%s\n", errname(errno));
			return 1;
		}
		printf("ok\n");
		return 0;
	}
	if (!strcmp(cmd, "tiocsti"))
		return cmd_tiocsti();
	fprintf(stderr, "probe: unknown command '%s'\n", cmd);
	return 2;
}
