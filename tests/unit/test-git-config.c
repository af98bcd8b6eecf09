/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* git's config syntax as git reads it (src/git-config.c), and which keys
 * the review calls executable: a spelling git accepts must never hide a
 * command from isd diff and isd apply. */
#include "check.h"
#include "git-config.h"
#include "isd/util.h"

#include <errno.h>
#include <string.h>

static const char *value_of(const char *text, const char *key)
{
	static char buf[256];
	struct isd_git_config c;
	bool found;
	const char *v;
	int r = isd_git_config_parse(text, strlen(text), &c);

	v = isd_git_config_get(&c, key, &found);
	snprintf(buf, sizeof(buf), "%s", r < 0 ? "<error>" : !found ? "<none>" : v ? v : "<bare>");
	isd_git_config_free(&c);
	return buf;
}

int main(void)
{
	/* Sections, subsections (case kept), old-style dotted sections. */
	CHECK(!strcmp(value_of("[Core]\n\tFSMonitor = x\n", "core.fsmonitor"), "x"));
	CHECK(!strcmp(value_of("[remote \"Origin\"]\nurl = u\n", "remote.Origin.url"), "u"));
	CHECK(!strcmp(value_of("[Remote.Origin]\nurl = u\n", "remote.origin.url"), "u"));
	CHECK(!strcmp(value_of("[sub \"a\\\"b\"]\nk = v\n", "sub.a\"b.k"), "v"));
	/* A key on the header's line, a bare key, CRLF, a BOM, no final LF. */
	CHECK(!strcmp(value_of("[core] fsmonitor = y", "core.fsmonitor"), "y"));
	CHECK(!strcmp(value_of("[core]\nbare\n", "core.bare"), "<bare>"));
	CHECK(!strcmp(value_of("[core]\r\nfsmonitor = z\r\n", "core.fsmonitor"), "z"));
	CHECK(!strcmp(value_of("\xef\xbb\xbf[core]\nfsmonitor = b\n", "core.fsmonitor"), "b"));
	/* Values: comments, quotes, escapes, continuation lines, trailing
	 * space trimmed, inner space kept. */
	CHECK(!strcmp(value_of("[a]\nk = one ; two\n", "a.k"), "one"));
	CHECK(!strcmp(value_of("[a]\nk = \"one ; two\" # c\n", "a.k"), "one ; two"));
	CHECK(!strcmp(value_of("[a]\nk = x\\\n y  \n", "a.k"), "x y"));
	CHECK(!strcmp(value_of("[a]\nk = a\\tb\\\\\n", "a.k"), "a\tb\\"));
	CHECK(!strcmp(value_of("[a]\nk = sh  -c  x\n", "a.k"), "sh  -c  x"));
	CHECK(!strcmp(value_of("# [core]\n[core]\n; fsmonitor = no\nfsmonitor = yes\n", "core.fsmonitor"), "yes"));
	/* The last value wins. */
	CHECK(!strcmp(value_of("[a]\nk = 1\n[a]\nk = 2\n", "a.k"), "2"));
	/* What git refuses: isd refuses too (the review treats it as
	 * executable). */
	CHECK(!strcmp(value_of("[core\nfsmonitor = x\n", "core.fsmonitor"), "<error>"));
	CHECK(!strcmp(value_of("[a]\nk = \"open\n", "a.k"), "<error>"));
	CHECK(!strcmp(value_of("[a]\nk = bad\\q\n", "a.k"), "<error>"));
	CHECK(!strcmp(value_of("[a]\n1k = v\n", "a.1k"), "<error>"));
	{
		static const char nul[] = "[core]\nfsmonitor = a\0b\n";
		struct isd_git_config c;
		CHECK(isd_git_config_parse(nul, sizeof(nul) - 1, &c) == -EINVAL);
		isd_git_config_free(&c);
	}

	/* Keys that run commands or redirect git. */
	static const char *const exec[] = {"core.fsmonitor", "core.hookspath", "core.sshcommand", "core.editor",
					   "core.pager", "core.askpass", "core.gitproxy", "core.worktree",
					   "core.attributesfile", "include.path", "includeif.gitdir:/x/.path",
					   "alias.st", "pager.log", "credential.helper", "credential.https://h.helper",
					   "filter.lfs.clean", "filter.x.smudge", "filter.x.process", "diff.x.textconv",
					   "diff.x.command", "diff.external", "merge.x.driver", "gpg.program",
					   "gpg.ssh.program", "gpg.ssh.defaultkeycommand", "sequence.editor",
					   "difftool.x.cmd", "mergetool.x.path", "remote.o.uploadpack",
					   "remote.o.receivepack", "remote.o.vcs", "sendemail.smtpserver",
					   "sendemail.sendmailcmd", "uploadpack.packobjectshook", "init.templatedir",
					   "interactive.difffilter", "trailer.x.command", "protocol.ext.allow",
					   "protocol.allow", "lfs.customtransfer.x.path", "web.browser",
					   "browser.x.cmd", "man.x.cmd", "guitool.x.cmd", NULL};
	for (size_t i = 0; exec[i]; i++)
		if (!isd_git_key_executable(exec[i], "sh -c x")) {
			fprintf(stderr, "not executable: %s\n", exec[i]);
			failures++;
		}
	static const char *const plain[] = {"core.bare", "core.filemode", "user.name", "remote.o.url",
					    "remote.o.fetch", "branch.main.remote", "extensions.worktreeconfig",
					    "core.excludesfile", "gc.auto", "diff.x.binary", "filter.x.required",
					    "merge.x.name", "submodule.s.url", NULL};
	for (size_t i = 0; plain[i]; i++)
		if (isd_git_key_executable(plain[i], "value")) {
			fprintf(stderr, "executable: %s\n", plain[i]);
			failures++;
		}
	CHECK(!isd_git_key_executable("core.fsmonitor", "true"));
	CHECK(!isd_git_key_executable("core.fsmonitor", NULL));
	CHECK(isd_git_key_executable("submodule.s.update", "!sh -c x"));
	CHECK(!isd_git_key_executable("submodule.s.update", "rebase"));
	CHECK(isd_git_key_executable("remote.o.url", "ext::sh -c x"));
	return check_result();
}
