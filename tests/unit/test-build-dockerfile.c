/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* isd build: Dockerfile parsing, Docker's variable expansion, the plan. */
#include "isd/build.h"
#include "isd/util.h"

#include <stdio.h>
#include <string.h>

#include "check.h"


static char *expand(const char *text, char **vars)
{
	char *out = NULL;

	if (isd_df_expand_word(text, isd_df_strv_lookup, vars, &out) < 0)
		return isd_xstrdup("<error>");
	return out;
}

#define CHECK_EXPAND(text, vars, want)                                                 \
	do {                                                                           \
		char *got_ = expand(text, vars);                                       \
		if (strcmp(got_, want)) {                                              \
			fprintf(stderr, "%s:%d: expand(%s) = '%s', want '%s'\n", __FILE__, \
				__LINE__, text, got_, want);                           \
			failures++;                                                    \
		}                                                                      \
		free(got_);                                                            \
	} while (0)

static void test_expansion(void)
{
	char *vars[] = {"A=alpha", "EMPTY=", "SP=a b", NULL};
	char **words = NULL;

	CHECK_EXPAND("$A", vars, "alpha");
	CHECK_EXPAND("${A}x", vars, "alphax");
	CHECK_EXPAND("$Ax", vars, "");
	CHECK_EXPAND("${UNSET:-def}", vars, "def");
	CHECK_EXPAND("${EMPTY:-def}", vars, "def");
	CHECK_EXPAND("${EMPTY-def}", vars, "");
	CHECK_EXPAND("${UNSET-def}", vars, "def");
	CHECK_EXPAND("${A:+set}", vars, "set");
	CHECK_EXPAND("${EMPTY:+set}", vars, "");
	CHECK_EXPAND("${EMPTY+set}", vars, "set");
	CHECK_EXPAND("${UNSET:+set}", vars, "");
	CHECK_EXPAND("${UNSET:-${A}-x}", vars, "alpha-x");
	CHECK_EXPAND("'$A'", vars, "$A");
	CHECK_EXPAND("\"$A b\"", vars, "alpha b");
	CHECK_EXPAND("\\$A", vars, "$A");
	CHECK_EXPAND("\"\\$A\"", vars, "$A");
	CHECK_EXPAND("a\\ b", vars, "a b");
	CHECK_EXPAND("$", vars, "$");
	CHECK_EXPAND("100$", vars, "100$");
	CHECK_EXPAND("${A:?x}", vars, "alpha");
	{
		char *out = NULL;
		CHECK(isd_df_expand_word("${UNSET:?must be set}", isd_df_strv_lookup, vars, &out) < 0);
		CHECK(strstr(isd_error_message(), "must be set") != NULL);
		CHECK(isd_df_expand_word("${A", isd_df_strv_lookup, vars, &out) < 0);
		CHECK(isd_df_expand_word("${A#x}", isd_df_strv_lookup, vars, &out) < 0);
		CHECK(isd_df_expand_word("'open", isd_df_strv_lookup, vars, &out) < 0);
		CHECK(isd_df_expand_word("\"open", isd_df_strv_lookup, vars, &out) < 0);
	}
	free(expand("${UNSET:?must be set}", vars)); /* the leak-free error path */

	CHECK(isd_df_expand_words("a \"b c\" '$A' $SP ${A}", isd_df_strv_lookup, vars, &words) == 0);
	CHECK(isd_strv_len(words) == 5);
	CHECK(words && !strcmp(words[1], "b c"));
	CHECK(words && !strcmp(words[2], "$A"));
	CHECK(words && !strcmp(words[3], "a b")); /* a value is not re-split */
	CHECK(words && !strcmp(words[4], "alpha"));
	isd_strv_free(words);
}

static int parse(const char *text, struct isd_dockerfile *df)
{
	isd_error_clear();
	return isd_dockerfile_parse(text, "Containerfile", df);
}

static void expect_refused(const char *text, const char *msg)
{
	struct isd_dockerfile df;

	if (parse(text, &df) == 0) {
		fprintf(stderr, "accepted but should be refused: %s\n", text);
		failures++;
		isd_dockerfile_free(&df);
		return;
	}
	if (!strstr(isd_error_message(), msg)) {
		fprintf(stderr, "refusal of '%s': got '%s', want it to contain '%s'\n", text, isd_error_message(), msg);
		failures++;
	}
}

static void test_parse(void)
{
	struct isd_dockerfile df;
	const char *text = "# syntax=docker/dockerfile:1\n"
			   "# a comment\n"
			   "ARG BASE=scratch\n"
			   "from $BASE\n"
			   "\n"
			   "RUN echo a \\\n"
			   "# comment inside a continuation\n"
			   "    b\n"
			   "RUN [\"/bin/echo\", \"x y\"]\n"
			   "copy --chown=1:2 --chmod=0644 a b /dst/\n"
			   "ADD --checksum=sha256:00 https://example.invalid/f /f\n"
			   "CMD [\"sh\"]\n"
			   "ENTRYPOINT echo hi\n"
			   "RUN echo trailing \\";

	CHECK(parse(text, &df) == 0);
	CHECK(df.n == 9);
	if (df.n == 9) {
		CHECK(df.ins[0].op == ISD_DF_ARG && df.ins[0].line == 3);
		CHECK(df.ins[1].op == ISD_DF_FROM && !strcmp(df.ins[1].text, "$BASE"));
		CHECK(df.ins[2].op == ISD_DF_RUN && df.ins[2].line == 6 && !strcmp(df.ins[2].text, "echo a     b"));
		CHECK(df.ins[2].json == NULL);
		CHECK(df.ins[3].json && !strcmp(df.ins[3].json[1], "x y"));
		CHECK(df.ins[4].op == ISD_DF_COPY && isd_strv_len(df.ins[4].flags) == 2);
		CHECK(!strcmp(df.ins[4].text, "a b /dst/"));
		CHECK(df.ins[5].op == ISD_DF_ADD && !strcmp(df.ins[5].flags[0], "--checksum=sha256:00"));
		CHECK(df.ins[6].op == ISD_DF_CMD && df.ins[6].json);
		CHECK(df.ins[7].op == ISD_DF_ENTRYPOINT && !df.ins[7].json);
		CHECK(df.ins[8].line == 14);
	}
	isd_dockerfile_free(&df);

	/* A backtick escape directive. */
	CHECK(parse("# escape=`\nFROM scratch\nRUN echo \\ `\n  x\n", &df) == 0);
	CHECK(df.n == 2 && !strcmp(df.ins[1].text, "echo \\   x"));
	isd_dockerfile_free(&df);
	/* A non-JSON bracket is shell form. */
	CHECK(parse("FROM scratch\nRUN [ -f /x ] || true\n", &df) == 0);
	CHECK(df.n == 2 && df.ins[1].json == NULL);
	isd_dockerfile_free(&df);

	expect_refused("FROM scratch\nONBUILD RUN x\n", "Containerfile:2: ONBUILD is not supported");
	expect_refused("FROM scratch\nHEALTHCHECK CMD x\n", "Containerfile:2: HEALTHCHECK");
	expect_refused("FROM scratch\nEXPOSE 80\n", "Containerfile:2: EXPOSE");
	expect_refused("FROM scratch\nFROBNICATE x\n", "Containerfile:2: unknown instruction 'FROBNICATE'");
	expect_refused("FROM scratch\n\n\nCOPY --from=build /a /b\n", "Containerfile:4: COPY --from");
	expect_refused("FROM scratch\nRUN --mount=type=cache,target=/x true\n", "Containerfile:2: RUN --mount");
	expect_refused("FROM scratch\nRUN --network=none true\n", "Containerfile:2: RUN does not support the flag --network");
	expect_refused("FROM scratch\nRUN <<EOF\necho\nEOF\n", "Containerfile:2: heredocs");
	expect_refused("FROM scratch\nCOPY <<-\"EOF\" /x\n", "heredocs");
	expect_refused("FROM scratch\nCOPY --link a /b\n", "--link");
	expect_refused("FROM scratch\nCOPY --checksum=sha256:0 a /b\n", "--checksum");
	expect_refused("FROM scratch AS a\nFROM scratch\n", "Containerfile:2: a second FROM");
	expect_refused("FROM --platform=linux/arm64 scratch\n", "Containerfile:1: FROM --platform");
	expect_refused("RUN true\nFROM scratch\n", "Containerfile:1: RUN before FROM");
	expect_refused("ARG X\n", "no FROM");
	expect_refused("FROM scratch\nRUN\n", "Containerfile:2: RUN needs arguments");
	expect_refused("FROM scratch\nRUN []\n", "empty list");
	/* bash's here-string is no heredoc. */
	CHECK(parse("FROM scratch\nRUN cat <<<hello\n", &df) == 0);
	isd_dockerfile_free(&df);
}

static int plan(const char *text, char **build_args, char **base_env, struct isd_build_plan *p)
{
	struct isd_dockerfile df;
	int r;

	memset(p, 0, sizeof(*p));
	r = parse(text, &df);
	if (r < 0)
		return r;
	p->env = isd_strv_copy(base_env);
	r = isd_build_plan_make(&df, build_args, p);
	isd_dockerfile_free(&df);
	return r;
}

static void test_plan(void)
{
	struct isd_build_plan p;
	char *args[] = {"VERSION=41", "TAG=custom", "NOBODY=x", NULL};
	char *base_env[] = {"PATH=/base/bin", "LANG=C", NULL};
	const char *text = "ARG VERSION=40\n"
			   "ARG REG=registry.example\n"
			   "FROM oci:$REG/fedora:${VERSION}\n"
			   "ARG VERSION\n"
			   "ARG TAG=latest\n"
			   "ARG REG2=${REG:-none}\n"
			   "ENV A=1 B=\"two words\" PATH=$PATH:/extra\n"
			   "ENV C=$A D=${B}!\n"
			   "ENV LEGACY value with spaces\n"
			   "LABEL org.example.v=$VERSION other=\"x y\"\n"
			   "WORKDIR /home\n"
			   "WORKDIR agent/../agent/ws\n"
			   "USER ${TAG}\n"
			   "COPY --chown=$TAG:1 a \"$B\" /dst/\n"
			   "RUN echo $A\n"
			   "ENV A=2\n"
			   "RUN [\"printenv\"]\n"
			   "ENTRYPOINT [\"/bin/ep\"]\n";

	CHECK(plan(text, args, base_env, &p) == 0);
	CHECK(p.base && !strcmp(p.base, "oci:registry.example/fedora:41"));
	CHECK(p.from_line == 3);
	CHECK(!strcmp(isd_df_strv_lookup(p.env, "PATH"), "/base/bin:/extra"));
	CHECK(!strcmp(isd_df_strv_lookup(p.env, "LANG"), "C"));
	CHECK(!strcmp(isd_df_strv_lookup(p.env, "B"), "two words"));
	CHECK(!strcmp(isd_df_strv_lookup(p.env, "C"), "1"));
	CHECK(!strcmp(isd_df_strv_lookup(p.env, "D"), "two words!"));
	CHECK(!strcmp(isd_df_strv_lookup(p.env, "LEGACY"), "value with spaces"));
	CHECK(!strcmp(isd_df_strv_lookup(p.env, "A"), "2"));
	CHECK(isd_df_strv_lookup(p.env, "VERSION") == NULL); /* ARG is not ENV */
	CHECK(!strcmp(isd_df_strv_lookup(p.labels, "org.example.v"), "41"));
	CHECK(!strcmp(isd_df_strv_lookup(p.labels, "other"), "x y"));
	CHECK(!strcmp(p.workdir, "/home/agent/ws"));
	CHECK(!strcmp(p.user, "custom"));
	CHECK(p.entrypoint && !strcmp(p.entrypoint[0], "/bin/ep"));
	CHECK(p.cmd && p.cmd[0] == NULL); /* ENTRYPOINT resets the base's CMD */
	CHECK(isd_strv_len(p.unused_args) == 1 && !strcmp(p.unused_args[0], "NOBODY"));
	for (size_t i = 0; i < p.n_steps; i++) {
		struct isd_build_step *st = &p.steps[i];
		if (st->op == ISD_DF_COPY) {
			CHECK(isd_strv_len(st->args) == 3);
			CHECK(!strcmp(st->args[1], "two words"));
			CHECK(!strcmp(st->chown, "custom:1"));
			CHECK(!strcmp(st->workdir, "/home/agent/ws"));
		}
		if (st->op == ISD_DF_RUN && st->line == 15) {
			CHECK(!strcmp(st->args[0], "/bin/sh") && !strcmp(st->args[2], "echo $A"));
			CHECK(!strcmp(isd_df_strv_lookup(st->env, "A"), "1"));
			CHECK(!strcmp(isd_df_strv_lookup(st->env, "VERSION"), "41")); /* redeclared meta ARG */
			CHECK(!strcmp(isd_df_strv_lookup(st->env, "TAG"), "custom"));
			CHECK(!strcmp(isd_df_strv_lookup(st->env, "REG2"), "none")); /* REG not redeclared */
			CHECK(!strcmp(st->user, "custom"));
		}
		if (st->op == ISD_DF_RUN && st->line == 17) {
			CHECK(st->args[1] == NULL && !strcmp(st->args[0], "printenv"));
			CHECK(!strcmp(isd_df_strv_lookup(st->env, "A"), "2"));
		}
	}
	isd_build_plan_free(&p);

	/* Scratch gets Docker's default PATH. */
	CHECK(plan("FROM scratch\nCMD sh\n", NULL, NULL, &p) == 0);
	CHECK(p.env && !strcmp(isd_df_strv_lookup(p.env, "PATH"),
			       "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
	CHECK(p.cmd && !strcmp(p.cmd[2], "sh"));
	CHECK(!strcmp(p.workdir, "/"));
	isd_build_plan_free(&p);

	CHECK(plan("FROM scratch\nCOPY onlyone\n", NULL, NULL, &p) < 0);
	CHECK(strstr(isd_error_message(), "line 2") != NULL);
	CHECK(plan("FROM scratch\nCOPY --chmod=999 a /b\n", NULL, NULL, &p) < 0);
	CHECK(plan("FROM scratch\nENV =x\n", NULL, NULL, &p) < 0);
	CHECK(plan("FROM scratch\nENV X\n", NULL, NULL, &p) < 0);
	CHECK(plan("FROM scratch\nWORKDIR ${X:?needs X}\n", NULL, NULL, &p) < 0);
	CHECK(strstr(isd_error_message(), "needs X") != NULL);

	/* ADD of a URL: only with one URL and a sha256 --checksum. */
	CHECK(plan("FROM scratch\n\nADD https://h.example/f /f\n", NULL, NULL, &p) < 0);
	CHECK(strstr(isd_error_message(), "line 3: ADD https://h.example/f: a download needs --checksum") != NULL);
	CHECK(plan("FROM scratch\nADD --checksum=md5:00 https://h.example/f /f\n", NULL, NULL, &p) < 0);
	CHECK(strstr(isd_error_message(), "expected sha256:") != NULL);
	CHECK(plan("FROM scratch\nADD --checksum=sha256:0000000000000000000000000000000000000000000000000000000000000000 "
		   "https://h.example/f https://h.example/g /d/\n", NULL, NULL, &p) < 0);
	CHECK(plan("FROM scratch\nADD --checksum=sha256:0000000000000000000000000000000000000000000000000000000000000000 "
		   "local /d/\n", NULL, NULL, &p) < 0);
	CHECK(strstr(isd_error_message(), "only applies to ADD of a URL") != NULL);
	CHECK(plan("FROM scratch\nCOPY https://h.example/f /f\n", NULL, NULL, &p) < 0);
	CHECK(plan("FROM scratch\nADD --chmod=755 --checksum=sha256:00000000000000000000000000000000000000000000000000000000000000aa "
		   "https://h.example/f /f\n", NULL, NULL, &p) == 0);
	CHECK(p.n_steps == 1 && !strcmp(p.steps[0].checksum,
				   "sha256:00000000000000000000000000000000000000000000000000000000000000aa"));
	isd_build_plan_free(&p);
}

int main(void)
{
	test_expansion();
	test_parse();
	test_plan();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
