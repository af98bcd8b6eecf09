/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent table (agents.conf) and the guard's JSON key handling. */
#define _GNU_SOURCE
#include "agent-guard.h"
#include "isd/agent.h"
#include "isd/fsutil.h"
#include "isd/session-changes.h"
#include "isd/util.h"

#include "check.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_table(void)
{
	struct isd_agent_table t = {0};
	const struct isd_agent *a;
	bool runner;
	char *npx[] = {"npx", "-y", "@google/gemini-cli@0.61", "--help", NULL};
	char *dlx[] = {"/usr/bin/pnpm", "dlx", "@anthropic-ai/claude-code", NULL};
	char *npxp[] = {"npx", "--package=@openai/codex", "codex", NULL};
	char *exe[] = {"/home/u/.local/bin/claude.exe", NULL};
	char *other[] = {"npx", "cowsay", NULL};
	/* a last -p with no package: stepped past argv's NULL (the fuzzer) */
	char *last_p[] = {"npx", "-p", NULL};

	CHECK(isd_agent_table_parse(&t, "# c\n[claude]\ncommand claude claude.exe\npackage @anthropic-ai/claude-code\n"
					"state .claude/ .claude.json\nguard .claude/hooks/ .claude/*.sh\n"
					"keys .claude/settings.json hooks projects.*.mcpServers\n"
					"[gemini]\npackage @google/gemini-cli\n[codex]\npackage @openai/codex\n",
				    "t.conf", false) == 0);
	a = isd_agent_find(&t, "claude");
	CHECK(a && a->state_dirs && !strcmp(a->state_dirs[0], ".claude") && !strcmp(a->state_files[0], ".claude.json"));
	CHECK(isd_agent_guarded(a, ".claude/hooks") && isd_agent_guarded(a, ".claude/hooks/x/y"));
	CHECK(!isd_agent_guarded(a, ".claude/hooksx") && isd_agent_guarded(a, ".claude/a.sh") && !isd_agent_guarded(a, ".claude/d/a.sh"));
	CHECK(isd_agent_keys_for(a, ".claude/settings.json") && !isd_agent_keys_for(a, ".claude/other.json"));
	CHECK(isd_agent_transient(a, ".codex/app-server/daemon.pid") && !isd_agent_transient(a, ".codex/pid"));
	CHECK(isd_agent_for_command(&t, exe, &runner) == a && !runner);
	a = isd_agent_for_command(&t, npx, &runner);
	CHECK(a && !strcmp(a->name, "gemini") && runner);
	a = isd_agent_for_command(&t, dlx, &runner);
	CHECK(a && !strcmp(a->name, "claude") && runner);
	a = isd_agent_for_command(&t, npxp, &runner);
	CHECK(a && !strcmp(a->name, "codex") && runner);
	CHECK(!isd_agent_for_command(&t, other, &runner));
	CHECK(!isd_agent_for_command(&t, last_p, &runner));
	/* an installed file: by its name, or the npm package it lies in */
	a = isd_agent_for_file(&t, "/h/.nvm/v/lib/node_modules/@openai/codex/bin/codex.js");
	CHECK(a && !strcmp(a->name, "codex"));
	a = isd_agent_for_file(&t, "/h/n/.pnpm/x@1/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/codex/codex");
	CHECK(a && !strcmp(a->name, "codex"));
	a = isd_agent_for_file(&t, "/h/.local/share/claude/versions/claude.exe");
	CHECK(a && !strcmp(a->name, "claude"));
	CHECK(!isd_agent_for_file(&t, "/h/node_modules/@openai/codex/node_modules/dep/bin/x.js"));
	CHECK(!isd_agent_for_file(&t, "/h/node_modules/@openai"));
	CHECK(!isd_agent_for_file(&t, "/h/node_modules/@openai/codex"));
	CHECK(!isd_agent_for_file(&t, NULL));
	/* a later file only adds; replace swaps the whole section */
	CHECK(isd_agent_table_parse(&t, "[claude]\nstate .x/\n[new]\nstate .new/\n", "u.conf", false) == 0);
	CHECK(!strcmp(isd_agent_find(&t, "claude")->state_dirs[0], ".claude") && isd_agent_find(&t, "new"));
	CHECK(isd_agent_table_parse(&t, "[claude]\nstate .x/\n", "u.conf", true) == 0);
	CHECK(!strcmp(isd_agent_find(&t, "claude")->state_dirs[0], ".x") && !isd_agent_find(&t, "claude")->guards);
	/* errors name the line */
	CHECK(isd_agent_table_parse(&t, "[a]\nstate ../etc/\n", "e.conf", false) < 0 &&
	      strstr(isd_error_message(), "e.conf:2") && strstr(isd_error_message(), "without '..'"));
	CHECK(isd_agent_table_parse(&t, "state .x/\n", "e.conf", false) < 0 && strstr(isd_error_message(), "before the first"));
	CHECK(isd_agent_table_parse(&t, "[a b]\n", "e.conf", false) < 0);
	CHECK(isd_agent_table_parse(&t, "[a]\nkeys f.json\n", "e.conf", false) < 0);
	isd_agent_table_free(&t);
}

static char **made;

static int dir_with(const char *name, const char *text, mode_t mode)
{
	char tmpl[] = "/tmp/isd-test-agent.XXXXXX";
	char *d = mkdtemp(tmpl);
	int fd = open(d, O_PATH | O_DIRECTORY | O_CLOEXEC);

	isd_strv_push(&made, isd_xstrdup(strrchr(d, '/') + 1));

	if (text)
		isd_write_file_at(fd, name, text, O_CREAT | O_TRUNC, mode);
	return fd;
}

static void test_keys(void)
{
	struct isd_agent_table t = {0};
	struct isd_guard_result g;
	const struct isd_agent *a;
	int host, new;
	char *merged = NULL;

	CHECK(isd_agent_table_parse(&t, "[c]\nkeys s.json hooks projects.*.mcpServers\n", "t", false) == 0);
	a = isd_agent_find(&t, "c");
	host = dir_with("s.json", "{\"model\": \"a\", \"projects\": {\"/p.x\": {\"mcpServers\": {}}}}", 0600);
	new = dir_with("s.json", "{\"model\": \"b\", \"hooks\": {\"x\": 1}, \"projects\": {\"/p.x\": {\"mcpServers\": {\"e\": {\"command\": \"sh\"}}}, \"/q\": {}}}", 0600);
	CHECK(isd_guard_classify(a, "s.json", host, "s.json", new, "s.json", S_IFREG | 0600, S_IFREG | 0600, &g) == 0);
	CHECK(g.hold == ISD_HOLD_KEYS && g.n_keys == 2);
	CHECK(g.n_keys == 2 && !strcmp(g.keys[0].key, "hooks") && !g.keys[0].old_value && !strcmp(g.keys[0].new_value, "{\"x\":1}"));
	CHECK(g.n_keys == 2 && !strcmp(g.keys[1].key, "projects[\"/p.x\"].mcpServers") && !strcmp(g.keys[1].old_value, "{}"));
	/* the host gets the harmless change, the guarded keys as they were */
	CHECK(g.merged && strstr(g.merged, "\"model\": \"b\"") && !strstr(g.merged, "hooks") && !strstr(g.merged, "command"));
	CHECK(isd_guard_take_keys("{\"model\": \"c\"}", "{\"hooks\": {\"x\": 1}, \"model\": \"b\"}", a->keys[0].keys, &merged) == 0);
	CHECK(merged && strstr(merged, "\"model\": \"c\"") && strstr(merged, "\"hooks\""));
	free(merged);
	isd_guard_result_free(&g);
	/* removing a guarded key takes code away: it merges */
	isd_write_file_at(host, "s.json", "{\"hooks\": {\"x\": 1}}", O_TRUNC, 0600);
	isd_write_file_at(new, "s.json", "{}", O_TRUNC, 0600);
	CHECK(isd_guard_classify(a, "s.json", host, "s.json", new, "s.json", S_IFREG | 0600, S_IFREG | 0600, &g) == 0 && g.hold == ISD_HOLD_NONE);
	isd_guard_result_free(&g);
	/* what isd cannot parse is held whole; so is trailing junk, an exec bit, ELF, #! */
	isd_write_file_at(new, "s.json", "{\"hooks\": 1} {\"x\": 2}", O_TRUNC, 0600);
	CHECK(isd_guard_classify(a, "s.json", host, "s.json", new, "s.json", S_IFREG | 0600, S_IFREG | 0600, &g) == 0 &&
	      g.hold == ISD_HOLD_WHOLE && strstr(g.why, "not a JSON object"));
	isd_guard_result_free(&g);
	isd_write_file_at(new, "bin", "\177ELF....", O_CREAT | O_TRUNC, 0600);
	CHECK(isd_guard_classify(a, "bin", host, "bin", new, "bin", 0, S_IFREG | 0600, &g) == 0 && g.hold == ISD_HOLD_WHOLE && strstr(g.why, "ELF"));
	isd_guard_result_free(&g);
	isd_write_file_at(new, "run", "#!/bin/sh\n", O_CREAT | O_TRUNC, 0600);
	CHECK(isd_guard_classify(a, "run", host, "run", new, "run", 0, S_IFREG | 0600, &g) == 0 && g.hold == ISD_HOLD_WHOLE);
	isd_guard_result_free(&g);
	CHECK(isd_guard_classify(a, "log", host, "log", new, "run", 0, S_IFREG | 0700, &g) == 0 && strstr(g.why, "exec bit"));
	isd_guard_result_free(&g);
	CHECK(isd_guard_classify(a, "l", host, "l", new, "l", 0, S_IFLNK | 0777, &g) == 0 && g.hold == ISD_HOLD_WHOLE);
	isd_guard_result_free(&g);
	CHECK(isd_guard_classify(a, "x.toml", host, "x.toml", new, "run", 0, S_IFREG | 0600, &g) == 0 && g.hold == ISD_HOLD_WHOLE);
	isd_guard_result_free(&g);
	close(host);
	close(new);
	isd_agent_table_free(&t);
}

static void test_visible(void)
{
	char *v = isd_guard_visible("a\033[31mb", 100);
	CHECK(!strchr(v, '\033'));
	free(v);
}

int main(void)
{
	test_table();
	test_keys();
	test_visible();
	{
		_cleanup_close_ int tmp = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
		for (size_t i = 0; made && made[i]; i++)
			isd_rm_rf_at(tmp, made[i]);
		isd_strv_free(made);
	}
	return check_result();
}
