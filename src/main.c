/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "isd/activity.h"
#include "isd/agent-state.h"
#include "isd/cgroup.h"
#include "isd/cli-args.h"
#include "isd/owner-view.h"
#include "isd/cli.h"
#include "isd/doctor.h"
#include "isolation.h"
#include "isd/profile.h"
#include "isd/sandbox.h"
#include "isd/seccomp.h"
#include "isd/session.h"
#include "isd/spec.h"
#include "isd/storage.h"
#include "isd/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fputs("Usage: isd COMMAND [ARG...]\n"
	      "\n"
	      "isd (\"It Is So Dangerous\") runs programs, such as AI coding agents, in a\n"
	      "rootless sandbox: read-only root, no capabilities, own namespaces.\n"
	      "\n"
	      "Commands:\n"
	      "  exec [OPTIONS] [--] CMD...   run CMD in a new sandbox (isd exec --help)\n"
	      "  build -t NAME [CONTEXT]      build an image from a Containerfile (isd build --help)\n"
	      "  image ls|inspect|rm|prune    the built images\n"
	      "  profile list|show|edit NAME  the option profiles (agent, your own)\n"
	      "  doctor [--json]              check what this host allows, with fixes\n"
	      "  seccomp check PROFILE        validate and explain a seccomp profile\n"
	      "  session list|prune           the sessions of --workspace DIR:cow runs\n"
	      "  diff [ID] [PATH...]          what a session changed, git-style (isd diff --help)\n"
	      "  apply [ID] [PATH...]         copy a stopped session's changes into its project\n"
	      "  log [ID] [--json]            every command a session's sandbox ran (isd log --help)\n"
	      "  discard [ID|--all]           remove a stopped session and its changes\n"
	      "  apply --state [ID]           take what the agent wrote into its own state and isd holds\n"
	      "  state list|diff|apply|restore|discard  the agent state stores (isd state --help)\n"
	      "  resume [--end] ID            let a sandbox frozen at a storage bound go on, or end it\n"
	      "  gc                           remove what crashed isd runs left (cgroups, sessions)\n"
	      "  version                      print the version\n",
	      out);
}

/* A caller that closed 0, 1 or 2 would otherwise have our own descriptors
 * land there and be handed to the payload as its stdio. */
static void ensure_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
			if (n >= 0 && n != fd)
				close(n);
		}
	}
}

static int cmd_exec(int argc, char **argv)
{
	struct isd_caller caller;
	struct isd_spec spec;
	int r, code;

	isd_caller_from_process(&caller);
	isd_spec_init(&spec);
	r = isd_cli_parse_exec(argc, argv, &caller, &spec);
	if (r == ISD_CLI_HELP_SHOWN) {
		isd_spec_free(&spec);
		return 0;
	}
	if (r == 0)
		r = isd_spec_validate(&spec);
	if (r == 0)
		r = isd_isolation_resolve(&spec, NULL);
	if (r < 0) {
		isd_error_print("invalid arguments");
		isd_spec_free(&spec);
		return ISD_EXIT_FAILURE;
	}
	if (spec.print_spec) {
		char *json = isd_spec_to_json(&spec);
		puts(json);
		free(json);
		isd_spec_free(&spec);
		return 0;
	}
	isd_isolation_note(&spec);
	if (spec.pid_host && !spec.isolation_pid_host && spec.tier == ISD_ISOLATION_FULL)
		isd_warn("--pid=host: the sandbox shares your process IDs; its processes can signal and trace your other processes");
	code = isd_sandbox_run(&spec);
	isd_spec_free(&spec);
	return code;
}

static void gc_usage(FILE *out)
{
	fputs("Usage: isd gc [--dry-run]\n"
	      "Remove the cgroups of isd runs that ended without cleaning up (isd-<pid>-*\n"
	      "next to and below isd's own cgroup, whose owner pid is gone), sessions\n"
	      "whose removal was interrupted (.removing-ID in the session store), and\n"
	      "empty sessions of an isd exec that was killed (not --workspace-keep).\n",
	      out);
}

static int cmd_gc(int argc, char **argv)
{
	enum { GC_DRY_RUN = 1 };
	static const struct isd_cli_flag flags[] = {{"--dry-run", 'n', false, GC_DRY_RUN}, {0}};
	static const struct isd_cli_command gc = {"gc", gc_usage, flags, 0};
	struct isd_cli_args a = ISD_CLI_ARGS(&gc, argc, argv);
	bool dry = false;
	int r;

	while (isd_cli_next(&a))
		dry = true; /* --dry-run, the only one */
	if (a.exit >= 0)
		return a.exit;
	r = isd_cgroup_gc(dry);
	if (r == 0)
		isd_agent_state_gc(dry, true);
	return r;
}

/* isd diff lives in isd-diff (src/isd-diff.c), the one program linking libgit2. */
static int exec_isd_diff(char **argv)
{
	const char *path = isd_running_uninstalled() ? ISD_BUILD_ROOT "/src/isd-diff" : ISD_LIBEXEC_DIR "/isd-diff";

	argv[0] = (char *)path;
	execv(path, argv);
	isd_error(-errno, "isd diff: running %s", path);
	isd_error_hint("reinstall isd: isd diff is in that program");
	isd_error_print("");
	return ISD_EXIT_FAILURE;
}

/* isd build / isd image live in isd-build (rootfs-builder/isd-build.c). */
static int exec_isd_build(char **argv)
{
	const char *path = isd_running_uninstalled() ? ISD_BUILD_ROOT "/rootfs-builder/isd-build" : ISD_LIBEXEC_DIR "/isd-build";

	argv[0] = (char *)path;
	execv(path, argv);
	isd_error(-errno, "isd %s: running %s", argv[1], path);
#ifdef ISD_NO_ROOTFS_BUILDER
	isd_error_hint("this isd was built without isd build and isd image (meson -Drootfs_builder=disabled)");
#else
	isd_error_hint("reinstall isd: isd build and isd image are in that program");
#endif
	isd_error_print("");
	return ISD_EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	const char *cmd;

	ensure_std_fds();
	if (argc < 2) {
		usage(stderr);
		return ISD_EXIT_FAILURE;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "exec") || !strcmp(cmd, "run"))
		return cmd_exec(argc - 1, argv + 1);
	if (!strcmp(cmd, "seccomp"))
		return isd_seccomp_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "build") || !strcmp(cmd, "image") || !strcmp(cmd, "images"))
		return exec_isd_build(argv);
	if (!strcmp(cmd, "doctor"))
		return isd_doctor_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "profile"))
		return isd_profile_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "diff"))
		return exec_isd_diff(argv);
	/* The review reads what the payload made unreadable to its owner. */
	if ((!strcmp(cmd, "apply") || !strcmp(cmd, "discard") || !strcmp(cmd, "session") || !strcmp(cmd, "sessions")) &&
	    isd_owner_view_enter() < 0) {
		isd_error_print("");
		return ISD_EXIT_FAILURE;
	}
	if (!strcmp(cmd, "apply"))
		return isd_agent_state_apply_requested(argc - 1, argv + 1) ? isd_agent_state_cmd_apply(argc - 1, argv + 1)
									     : isd_session_cmd_apply(argc - 1, argv + 1);
	if (!strcmp(cmd, "log"))
		return isd_activity_cmd_log(argc - 1, argv + 1);
	if (!strcmp(cmd, "discard"))
		return isd_session_cmd_discard(argc - 1, argv + 1);
	if (!strcmp(cmd, "session") || !strcmp(cmd, "sessions"))
		return isd_session_cmd_session(argc - 1, argv + 1);
	if (!strcmp(cmd, "gc"))
		return cmd_gc(argc - 1, argv + 1);
	if (!strcmp(cmd, "state"))
		return isd_agent_state_cmd(argc - 1, argv + 1);
	if (!strcmp(cmd, "resume"))
		return isd_storage_resume_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("isd %s\n", ISD_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "isd: unknown command '%s' (known: exec, build, image, doctor, profile, seccomp, diff, apply, log, discard, session, state, resume, gc, version, help)\n", cmd);
	return ISD_EXIT_FAILURE;
}
