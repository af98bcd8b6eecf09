/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The `isd apply` command: which session, which changes (PATHs; what the
 * project's .gitignore ignores only with --include-ignored, since a .pth
 * in .venv or a husky runner there runs on the host unseen), then the
 * all-or-nothing apply of src/session-apply.c.
 */
#define _GNU_SOURCE
#include "session-apply.h"
#include "isd/cli-args.h"
#include "isd/path-util.h"
#include "isd/session-changes.h"
#include "isd/session-git.h"
#include "isd/session.h"
#include "isd/process.h"
#include "isd/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* The ignored changes of s as isd-diff (the program that links libgit2)
 * lists them: "x" or "-" (runs code or not) and the path, NUL-terminated,
 * each; NULL-terminated array, sorted as the changes are. */
static int ignored_paths(const struct isd_session *s, char ***out)
{
	const char *prog = isd_running_uninstalled() ? ISD_BUILD_ROOT "/src/isd-diff" : ISD_LIBEXEC_DIR "/isd-diff";
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int fds[2], status, r;
	pid_t pid;

	*out = NULL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return isd_error(-errno, "running %s", prog);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return isd_error(-errno, "running %s", prog);
	}
	if (pid == 0) {
		char *argv[] = {(char *)prog, "diff", "--list-ignored-for-apply", s->id, NULL};

		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(ISD_EXIT_FAILURE);
		execv(prog, argv);
		fprintf(stderr, "isd: apply: running %s: %s\n", prog, strerror(errno));
		_exit(ISD_EXIT_FAILURE);
	}
	close(fds[1]);
	r = isd_read_fd(fds[0], &text, &len);
	close(fds[0]);
	isd_wait_pid(pid, &status);
	if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		r = isd_error(r < 0 ? r : -EIO, "finding what the project's .gitignore ignores with %s", prog);
		isd_error_hint("isd apply --include-ignored applies without asking");
		return r;
	}
	for (size_t at = 0; at < len;) {
		size_t n = strnlen(text + at, len - at);

		if (n > 1)
			isd_strv_push(out, isd_xstrdup(text + at));
		at += n + 1;
	}
	return 0;
}

static int cmp_tagged(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem + 1);
}

/* Drops the ignored changes from sel (unless include), or names those
 * that run code when they are taken. */
static int filter_ignored(const struct isd_session *s, struct isd_changes *sel, bool include)
{
	_cleanup_strv_ char **ign = NULL;
	size_t n = 0, w = 0, skipped = 0, risky = 0;
	int r;

	if ((r = ignored_paths(s, &ign)) < 0) {
		if (!include)
			return r;
		isd_warn("%s", isd_error_message()); /* taken anyway, only not named */
		return 0;
	}
	while (ign && ign[n])
		n++;
	for (size_t i = 0; i < sel->n; i++) {
		char **hit = n ? bsearch(sel->v[i].path, ign, n, sizeof(char *), cmp_tagged) : NULL;

		if (hit && (*hit)[0] == 'x')
			risky++;
		if (hit && include && (*hit)[0] == 'x')
			isd_apply_note(sel->v[i].path, "ignored by .gitignore and runs code on the host (applied: --include-ignored)");
		if (hit && !include) {
			skipped += !S_ISDIR(sel->v[i].new_mode);
			free(sel->v[i].path);
			continue;
		}
		sel->v[w++] = sel->v[i];
	}
	sel->n = w;
	if (skipped)
		fprintf(stderr, "isd: apply: %zu change%s that the project's .gitignore ignores not applied%s "
				"(isd diff --ignored shows them, isd apply --include-ignored takes them)\n",
			skipped, skipped == 1 ? "" : "s", risky ? ", among them files that run code" : "");
	return 0;
}

static void apply_usage(FILE *out)
{
	fputs("Usage: isd apply [ID] [--force] [--include-ignored] [--allow-git-exec] [--allow-history-loss]\n"
	      "                 [PATH...]\n"
	      "\n"
	      "Copy a stopped session's changes (all, or those at or under PATHs) into its\n"
	      "project, all or nothing: a file changed on the host since the session started\n"
	      "(unless --force), a special file or a path that is not a directory in the\n"
	      "project is refused, and with any refusal nothing is applied.  Applied changes\n"
	      "leave the session; a session with none left is removed.  Without ID: the latest\n"
	      "session of the current directory's project.  What the project's .gitignore\n"
	      "ignores (.venv/, node_modules/) is applied only with --include-ignored.\n"
	      "\n"
	      "  --allow-git-exec      take git configuration that runs commands on the host\n"
	      "                        (hooks, core.fsmonitor, filters, aliases, commondir,\n"
	      "                        include.path, ...: isd diff lists it); refused otherwise\n"
	      "  --allow-history-loss  take changes that remove git objects or rewrite history\n"
	      "                        (shallow, grafts, replace refs); refused otherwise\n",
	      out);
}

enum { APPLY_FORCE = 1, APPLY_INCLUDE_IGNORED, APPLY_GIT_EXEC, APPLY_HISTORY_LOSS };
static const struct isd_cli_flag apply_flags[] = {
	{"--force", 0, false, APPLY_FORCE},
	{"--include-ignored", 0, false, APPLY_INCLUDE_IGNORED},
	{"--allow-git-exec", 0, false, APPLY_GIT_EXEC},
	{"--allow-history-loss", 0, false, APPLY_HISTORY_LOSS},
	{0},
};
static const struct isd_cli_command apply_command = {"apply", apply_usage, apply_flags, -1};

static int cmd_apply(struct isd_session *s, char **paths, bool force, bool include_ignored, unsigned git_allow,
		     int *code)
{
	_cleanup_free_ char *upper = isd_session_upper(s), *cwd = getcwd(NULL, 0);
	_cleanup_close_ int pfd = open(s->project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int ufd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_strv_ char **rel = NULL;
	struct isd_changes all, sel;
	size_t applied = 0, refused = 0, left = 0;
	int r;

	if (pfd < 0)
		return isd_error(-errno, "opening the project %s of session %s", s->project, s->id);
	if (ufd < 0)
		return isd_error(-errno, "opening %s", upper);
	for (size_t i = 0; paths && paths[i]; i++) {
		char *p;

		if ((r = isd_project_relative(s->project, cwd, paths[i], &p)) < 0)
			return r;
		isd_strv_push(&rel, p);
	}
	if ((r = isd_changes_collect(pfd, ufd, &all)) < 0)
		return r;
	r = isd_changes_select(pfd, &all, rel, false, &sel);
	isd_changes_free(&all);
	if (r < 0)
		return r;
	if ((r = filter_ignored(s, &sel, include_ignored)) < 0) {
		isd_changes_free(&sel);
		return r;
	}
	{
		struct isd_apply a = {.project_fd = pfd, .upper_fd = ufd, .changes = &sel, .started_ns = s->started_ns,
				      .force = force, .git_allow = git_allow};
		r = isd_apply_run(&a);
		applied = a.applied;
		refused = a.refused;
	}
	isd_changes_free(&sel);
	if (r < 0)
		return r;
	if (refused) {
		fprintf(stderr, "isd: apply: refused %zu change%s (listed above); nothing was applied: "
				"isd apply %s PATH... takes the others\n",
			refused, refused == 1 ? "" : "s", s->id);
		*code = 1;
		return 0;
	}
	if ((r = isd_session_count_changes(s, &left)) < 0)
		return r;
	printf("applied %zu change%s of session %s to %s\n", applied, applied == 1 ? "" : "s", s->id, s->project);
	if (left == 0) {
		if ((r = isd_session_remove(s)) < 0)
			return r;
		printf("session %s has no changes left and is removed\n", s->id);
	} else {
		printf("session %s keeps %zu change%s: isd diff %s\n", s->id, left, left == 1 ? "" : "s", s->id);
	}
	return 0;
}

int isd_session_cmd_apply(int argc, char **argv)
{
	_cleanup_strv_ char **operands = NULL;
	struct isd_session s;
	struct isd_cli_args a = ISD_CLI_ARGS(&apply_command, argc, argv);
	bool force = false, consumed = false, id_allowed = true, include_ignored = false;
	unsigned git_allow = 0;
	int r, code = 0;

	while (isd_cli_next(&a)) {
		switch (a.id) {
		case APPLY_FORCE:
			force = true;
			break;
		case APPLY_INCLUDE_IGNORED:
			include_ignored = true;
			break;
		case APPLY_GIT_EXEC:
			git_allow |= ISD_GIT_ALLOW_EXEC;
			break;
		case APPLY_HISTORY_LOSS:
			git_allow |= ISD_GIT_ALLOW_HISTORY_LOSS;
			break;
		default:
			/* After "--" there are only PATHs. */
			if (!operands && a.options_done)
				id_allowed = false;
			isd_strv_push(&operands, isd_xstrdup(a.value));
		}
	}
	if (a.exit >= 0)
		return a.exit;
	r = isd_session_from_arg(operands && id_allowed ? operands[0] : NULL, true, &s, &consumed);
	if (r == 0) {
		r = cmd_apply(&s, operands ? operands + consumed : NULL, force, include_ignored, git_allow, &code);
		isd_session_free(&s);
	}
	if (r < 0) {
		isd_error_print("apply failed");
		return ISD_EXIT_FAILURE;
	}
	return code;
}
