/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What `isd gc` and `isd session prune` clear from the session store: the
 * dot directories that an interrupted removal leaves (a session is renamed
 * to .removing-ID before its upper layer goes, so that it leaves every
 * listing at once), the empty sessions of an isd exec killed before it
 * could remove them, and, for prune, every stopped session without changes.
 */
#define _GNU_SOURCE
#include "isd/fsutil.h"
#include "isd/session.h"
#include "isd/session-changes.h"
#include "isd/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Killed before session.json existed: nobody holds its lock, and it is
 * older than any creation still under way could be. */
static int gc_half_created(const char *root, const char *id, bool dry_run, size_t *removed)
{
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int dir = -1, lock = -1;
	struct stat st;

	if (rootfd < 0)
		return 0;
	dir = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || fstat(dir, &st) < 0 || time(NULL) - st.st_mtime < 10 ||
	    faccessat(dir, "session.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return 0;
	lock = openat(dir, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) < 0)
		return 0;
	printf("%s %s/%s (a half-created session)\n", dry_run ? "would remove" : "removing", root, id);
	if (dry_run)
		return 0;
	if (isd_rm_rf_at(rootfd, id) < 0) {
		fprintf(stderr, "isd: gc: %s\n", isd_error_message());
		return -EIO;
	}
	(*removed)++;
	return 0;
}

/* The agent's state of a crashed run is merged by isd gc (src/agent-state-cmd.c)
 * and may be held for review in the session: such a session stays. */
static bool has_agent_state(const char *id)
{
	_cleanup_free_ char *root = isd_xdg_path("XDG_STATE_HOME", ".local/state", "isd/agent-state");
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", root, id);
	struct stat st;

	return lstat(path, &st) == 0;
}

char **isd_session_ids_in(const char *dir)
{
	char **ids = NULL;
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d)))
		if (strlen(de->d_name) == 12 && strspn(de->d_name, "0123456789abcdef") == 12)
			isd_strv_push(&ids, isd_xstrdup(de->d_name));
	if (d)
		closedir(d);
	return ids;
}

/* A stopped session without changes that was not to be kept: isd exec
 * removes those when it ends, so this one's isd was killed (during setup,
 * typically) before it could. */
static int gc_abandoned(const char *root, bool dry_run, size_t *removed)
{
	_cleanup_strv_ char **ids = isd_session_ids_in(root);
	int r = 0;

	for (size_t i = 0; ids && ids[i]; i++) {
		struct isd_session s;
		size_t count = 0;

		/* Locked: a running session is never touched. */
		if (isd_session_open(ids[i], true, &s) < 0) {
			r = gc_half_created(root, ids[i], dry_run, removed) < 0 ? -EIO : r;
			continue;
		}
		if (!s.keep && !has_agent_state(s.id) && isd_session_count_changes(&s, &count) == 0 && count == 0) {
			printf("%s session %s (%s): empty, left by an interrupted isd exec\n",
			       dry_run ? "would remove" : "removing", s.id, s.project);
			if (!dry_run && isd_session_remove(&s) < 0) {
				fprintf(stderr, "isd: gc: %s\n", isd_error_message());
				r = -EIO;
			} else if (!dry_run) {
				(*removed)++;
			}
		}
		isd_session_free(&s);
	}
	isd_error_clear();
	return r;
}

int isd_session_gc(bool dry_run, size_t *removed)
{
	_cleanup_free_ char *root = isd_session_root();
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_strv_ char **names = NULL;
	struct dirent *de;
	DIR *d;
	int r = 0;

	*removed = 0;
	if (rootfd < 0)
		return errno == ENOENT ? 0 : isd_error(-errno, "opening %s", root);
	d = opendir(root);
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, ".removing-", 10))
			isd_strv_push(&names, isd_xstrdup(de->d_name));
	if (d)
		closedir(d);
	for (size_t i = 0; names && names[i]; i++) {
		printf("%s %s/%s (a half-removed session)\n", dry_run ? "would remove" : "removing", root, names[i]);
		if (dry_run)
			continue;
		if (isd_rm_rf_at(rootfd, names[i]) < 0) {
			fprintf(stderr, "isd: gc: %s\n", isd_error_message());
			r = -EIO;
			continue;
		}
		(*removed)++;
	}
	return r < 0 ? r : gc_abandoned(root, dry_run, removed);
}

int isd_session_prune(bool dry_run)
{
	_cleanup_free_ char *root = isd_session_root();
	size_t removed = 0;
	int r = isd_session_gc(dry_run, &removed);
	_cleanup_strv_ char **ids = isd_session_ids_in(root);

	for (size_t i = 0; ids && ids[i]; i++) {
		struct isd_session s;
		size_t count = 0;

		/* Locked: a running session is never touched. */
		if (isd_session_open(ids[i], true, &s) < 0)
			continue;
		if (isd_session_count_changes(&s, &count) == 0 && count == 0) {
			printf("%s session %s (%s): no changes\n", dry_run ? "would remove" : "removing", s.id, s.project);
			if (!dry_run && isd_session_remove(&s) < 0) {
				fprintf(stderr, "isd: session prune: %s\n", isd_error_message());
				r = -EIO;
			}
		}
		isd_session_free(&s);
	}
	isd_error_clear();
	return r;
}
