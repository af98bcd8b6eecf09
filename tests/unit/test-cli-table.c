/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The option table of `isd exec` is the one place an option is written:
 * every entry is complete, parsed by getopt, found by the command finder,
 * listed by --help, and a limit carries its bit all the way to the spec.
 */
#define _GNU_SOURCE
#include "cli-table.h"
#include "isd/cli.h"
#include "isd/fsutil.h"
#include "isd/spec.h"
#include "isd/util.h"

#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A failure the condition alone would not explain: which option. */
__attribute__((format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("test-cli-table: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	failures++;
}

static char *env[] = {"PATH=/bin:/usr/bin", NULL};

static int parse(struct isd_spec *spec, const char *const *args)
{
	struct isd_caller caller = {.uid = 1000, .gid = 1000, .home = "/nonexistent-home", .cwd = "/", .environ = env};
	int argc = 0;

	while (args[argc])
		argc++;
	isd_spec_init(spec);
	return isd_cli_parse_exec(argc, (char **)args, &caller, spec);
}

static void test_entries_complete(void)
{
	for (size_t i = 0; i < isd_exec_n_options; i++) {
		const struct isd_exec_option *o = &isd_exec_options[i];

		CHECK(o->name && o->name[0] && o->name[0] != '-');
		CHECK(o->handle != NULL);
		CHECK(o->group < ISD_EXEC_N_GROUPS);
		CHECK(o->help && o->help[0]);
		/* A value shows in --help by its name; a flag has none. */
		CHECK(o->takes_value == (o->value_name && o->value_name[0]));
		if (o->short_name)
			CHECK(o->short_name != ':' && o->short_name != '?' && o->short_name != '+');
	}
}

static void test_no_duplicates(void)
{
	for (size_t i = 0; i < isd_exec_n_options; i++) {
		const struct isd_exec_option *a = &isd_exec_options[i];

		CHECK(!a->alias || strcmp(a->alias, a->name));
		for (size_t j = i + 1; j < isd_exec_n_options; j++) {
			const struct isd_exec_option *b = &isd_exec_options[j];

			if (!strcmp(a->name, b->name) || (b->alias && !strcmp(a->name, b->alias)) ||
			    (a->alias && !strcmp(a->alias, b->name)) || (a->alias && b->alias && !strcmp(a->alias, b->alias)))
				fail("--%s given twice\n", a->name);
			if (a->short_name && a->short_name == b->short_name)
				fail("-%c given twice\n", a->short_name);
			if (a->limit && (a->limit & b->limit))
				fail("--%s and --%s share a limit bit\n", a->name, b->name);
		}
	}
}

static void test_lookup_and_command_finder(void)
{
	for (size_t i = 0; i < isd_exec_n_options; i++) {
		const struct isd_exec_option *o = &isd_exec_options[i];
		char name[64], eq[72], shrt[3] = {'-', o->short_name, 0};
		char *sep[] = {"exec", name, "VALUE", "cmd", NULL};
		char *joined[] = {"exec", eq, "cmd", NULL};
		char *by_short[] = {"exec", shrt, "VALUE", "cmd", NULL};

		CHECK(isd_exec_option_long(o->name) == o);
		if (o->alias)
			CHECK(isd_exec_option_long(o->alias) == o);
		snprintf(name, sizeof(name), "--%s", o->name);
		snprintf(eq, sizeof(eq), "--%s=VALUE", o->name);
		/* A value-taking option skips its value; a flag is followed
		 * by the command. */
		if (isd_exec_find_command(4, sep) != (o->takes_value ? 3 : 2))
			fail("%s: the command finder disagrees with the table\n", name);
		if (o->takes_value)
			CHECK(isd_exec_find_command(3, joined) == 2);
		if (o->short_name) {
			CHECK(isd_exec_option_short(o->short_name) == o);
			if (isd_exec_find_command(4, by_short) != (o->takes_value ? 3 : 2))
				fail("%s: the command finder disagrees with the table\n", shrt);
		}
	}
	CHECK(isd_exec_option_long("nonexistent-option") == NULL);
	CHECK(isd_exec_option_short('Z') == NULL);
}

/* What getopt_long is given comes from the table: every name, alias and
 * letter is taken (whatever its handler then says of the value "x"). */
static void test_getopt_takes_every_option(void)
{
	for (size_t i = 0; i < isd_exec_n_options; i++) {
		const struct isd_exec_option *o = &isd_exec_options[i];
		const char *names[3] = {o->name, o->alias, NULL};
		struct isd_spec spec;

		if (!strcmp(o->name, "help"))
			continue;
		for (int k = 0; k < 3; k++) {
			char opt[64];
			const char *args[] = {"exec", opt, "x", "sh", NULL};
			const char *flag_args[] = {"exec", opt, "sh", NULL};
			int r;

			if (k < 2 && !names[k])
				continue;
			if (k < 2)
				snprintf(opt, sizeof(opt), "--%s", names[k]);
			else if (o->short_name)
				snprintf(opt, sizeof(opt), "-%c", o->short_name);
			else
				continue;
			r = parse(&spec, o->takes_value ? args : flag_args);
			if (r < 0 && (strstr(isd_error_message(), "unknown option") || strstr(isd_error_message(), "needs a value") ||
				      strstr(isd_error_message(), "no command given")))
				fail("%s: not taken as the table says\n", opt);
			isd_spec_free(&spec);
			isd_error_clear();
		}
	}
}

static void test_usage_lists_every_option(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	isd_cli_exec_usage(f);
	fclose(f);
	for (size_t i = 0; i < isd_exec_n_options; i++) {
		const struct isd_exec_option *o = &isd_exec_options[i];
		char line[96];

		if (o->short_name)
			snprintf(line, sizeof(line), "\n  -%c, --%s%s", o->short_name, o->name, o->takes_value ? " " : "");
		else
			snprintf(line, sizeof(line), "\n      --%s%s", o->name, o->takes_value ? " " : "");
		if (!strstr(text, line))
			fail("--help has no line for --%s\n", o->name);
	}
	free(text);
}

static void test_limits_have_bits(void)
{
	unsigned seen = 0;

	for (size_t i = 0; i < isd_exec_n_options; i++) {
		const struct isd_exec_option *o = &isd_exec_options[i];

		if (!o->limit) {
			/* --limits chooses the enforcement; every other option
			 * under the heading is a limit. */
			CHECK(o->group != ISD_EXEC_LIMITS || !strcmp(o->name, "limits"));
			continue;
		}
		CHECK((o->limit & (o->limit - 1)) == 0);
		CHECK(o->takes_value && o->group == ISD_EXEC_LIMITS);
		CHECK(isd_limit_name(o->limit) && !strcmp(isd_limit_name(o->limit), o->name));
		CHECK(o->origin_key && !strcmp(o->origin_key, o->name));
		seen |= o->limit;
	}
	/* Every bit of spec.h belongs to an option. */
	CHECK(seen == (1u << ISD_LIMIT_COUNT) - 1);
	CHECK(isd_limit_name(0) == NULL && isd_limit_name(3) == NULL && isd_limit_name(1u << ISD_LIMIT_COUNT) == NULL);
}

/* A profile's limits are soft, the command line's are not, and
 * --print-spec names the soft ones. */
static void test_soft_limits_from_profile(void)
{
	char dir[] = "/tmp/isd-test-cli-table-XXXXXX";
	_cleanup_free_ char *profiles = NULL, *conf = NULL;
	const char *args[] = {"exec", "--profile", "limits", "--cpus", "1", "sh", NULL};
	struct isd_spec spec;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	profiles = isd_xasprintf("%s/isd/profiles", dir);
	CHECK(isd_mkdir_p(profiles, 0700) == 0);
	conf = isd_xasprintf("%s/limits.conf", profiles);
	f = fopen(conf, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("--memory 1g\n--cpus 2\n--pids-limit 100\n", f);
	fclose(f);
	setenv("XDG_CONFIG_HOME", dir, 1);

	CHECK(parse(&spec, args) == 0);
	CHECK(spec.limits.soft == (ISD_LIMIT_MEMORY | ISD_LIMIT_PIDS_LIMIT));
	CHECK(spec.limits.cpu_quota_us == 100000);
	{
		_cleanup_free_ char *json = isd_spec_to_json(&spec);
		const char *soft = strstr(json, "\"soft\": [");
		_cleanup_free_ char *list = soft ? strndup(soft, strcspn(soft, "]")) : NULL;
		CHECK(list && strstr(list, "\"memory\"") && strstr(list, "\"pids-limit\"") && !strstr(list, "cpus"));
		CHECK(strstr(json, "\"cpus\": \"command line\"") != NULL);
		CHECK(strstr(json, "\"memory\": \"profile ") != NULL);
	}
	isd_spec_free(&spec);

	{
		const char *plain[] = {"exec", "--memory", "1g", "sh", NULL};
		CHECK(parse(&spec, plain) == 0);
		CHECK(spec.limits.soft == 0);
		_cleanup_free_ char *json = isd_spec_to_json(&spec);
		CHECK(strstr(json, "\"soft\"") == NULL);
		isd_spec_free(&spec);
	}
	unsetenv("XDG_CONFIG_HOME");
	unlink(conf);
	rmdir(profiles);
	{
		_cleanup_free_ char *isd_dir = isd_xasprintf("%s/isd", dir);
		rmdir(isd_dir);
	}
	rmdir(dir);
}

/* The shell completions and isd-exec(1) are written by hand: each must
 * know every option of the table, and know it right (takes a value or
 * not), so that an option added to the table alone fails here. */
#define SOURCE_ROOT ISD_SOURCE_PROFILES_DIR "/.."

static char *read_source(const char *rel)
{
	_cleanup_free_ char *path = isd_xasprintf("%s/%s", SOURCE_ROOT, rel);
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "re");
	int c;

	if (!f) {
		fail("cannot read %s\n", path);
		return isd_xstrdup("");
	}
	FILE *m = open_memstream(&text, &len);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(m);
	fclose(f);
	return text;
}

/* The words of the shell string VAR='...' (or fish's `set -l VAR ...`
 * up to its end of line, continuations included), each as " WORD ". */
static char *shell_words(const char *text, const char *start, char end)
{
	const char *p = strstr(text, start);
	char *out = NULL;
	size_t len = 0;
	FILE *m;

	if (!p) {
		fail("no %s\n", start);
		return isd_xstrdup("");
	}
	p += strlen(start);
	m = open_memstream(&out, &len);
	fputc(' ', m);
	for (; *p && *p != end; p++) {
		if (end == '\n' && *p == '\\' && p[1] == '\n') {
			p++;
			fputc(' ', m);
			continue;
		}
		fputc(*p == '\n' || *p == '\t' ? ' ' : *p, m);
	}
	fputc(' ', m);
	fclose(m);
	return out;
}

static bool has_word(const char *words, const char *word)
{
	_cleanup_free_ char *w = isd_xasprintf(" %s ", word);
	return strstr(words, w) != NULL;
}

static size_t count_words(const char *words)
{
	size_t n = 0;
	for (const char *p = words; *p;) {
		p += strspn(p, " ");
		if (!*p)
			break;
		n++;
		p += strcspn(p, " ");
	}
	return n;
}

static void test_completions_and_docs_know_every_option(void)
{
	_cleanup_free_ char *bash = read_source("completions/isd.bash");
	_cleanup_free_ char *fish = read_source("completions/isd.fish");
	_cleanup_free_ char *zsh = read_source("completions/_isd");
	_cleanup_free_ char *man = read_source("docs/isd-exec.1.scd");
	_cleanup_free_ char *b_arg = shell_words(bash, "_isd_exec_opts_arg='", '\'');
	_cleanup_free_ char *b_noarg = shell_words(bash, "_isd_exec_opts_noarg='", '\'');
	_cleanup_free_ char *b_offer = shell_words(bash, "_isd_exec_offer='", '\'');
	_cleanup_free_ char *f_value = shell_words(fish, "set -l takes_value ", '\n');
	char b_short[32] = "", *at = strstr(bash, "if [[ $c == [");
	size_t n_arg = 0, n_noarg = 0, n_value = 0;

	if (at)
		snprintf(b_short, sizeof(b_short), "%.*s", (int)strcspn(at + 13, "]"), at + 13);
	for (size_t i = 0; i < isd_exec_n_options; i++) {
		const struct isd_exec_option *o = &isd_exec_options[i];
		const char *names[] = {o->name, o->alias};
		bool refused = o->group == ISD_EXEC_REFUSED;

		for (int k = 0; k < 2 && names[k]; k++) {
			_cleanup_free_ char *opt = isd_xasprintf("--%s", names[k]);
			/* '--name=[...]', '--name[...]' or {-t,--name}'[...]' */
			_cleanup_free_ char *z = isd_xasprintf(o->takes_value ? "%s=" : "%s[", opt);
			_cleanup_free_ char *z_pair = isd_xasprintf("%s}", opt);
			_cleanup_free_ char *f = isd_xasprintf("-l %s ", names[k]);

			if (!has_word(o->takes_value ? b_arg : b_noarg, opt))
				fail("isd.bash: %s is not in _isd_exec_opts_%s\n", opt, o->takes_value ? "arg" : "noarg");
			if (has_word(b_offer, opt) == refused)
				fail("isd.bash: %s is %s _isd_exec_offer\n", opt, refused ? "in" : "not in");
			if (o->takes_value && !has_word(f_value, opt))
				fail("isd.fish: %s is not in takes_value\n", opt);
			if (!refused && !strstr(fish, f))
				fail("isd.fish: no completion for %s\n", opt);
			if (!refused && !strstr(zsh, z) && (o->takes_value || !strstr(zsh, z_pair)))
				fail("_isd: no %s\n", z);
			n_arg += o->takes_value;
			n_noarg += !o->takes_value;
			n_value += o->takes_value;
		}
		{
			_cleanup_free_ char *doc = isd_xasprintf("*--%s*", o->name);
			_cleanup_free_ char *doc_value = isd_xasprintf("*--%s ", o->name);
			if (!strstr(man, doc) && !strstr(man, doc_value))
				fail("isd-exec(1) does not describe --%s\n", o->name);
		}
		if (o->short_name) {
			char sh[3] = {'-', o->short_name, 0};
			if (o->takes_value != (strchr(b_short, o->short_name) != NULL))
				fail("isd.bash: -%c and the short options that take a value [%s]\n", o->short_name, b_short);
			if (o->takes_value && !has_word(f_value, sh))
				fail("isd.fish: %s is not in takes_value\n", sh);
			n_value += o->takes_value;
			if (!has_word(b_offer, sh))
				fail("isd.bash: %s is not in _isd_exec_offer\n", sh);
		}
	}
	/* Nothing the table does not have. */
	if (count_words(b_arg) != n_arg || count_words(b_noarg) != n_noarg)
		fail("isd.bash: _isd_exec_opts_arg/noarg do not have as many options as the table\n");
	if (count_words(f_value) != n_value)
		fail("isd.fish: takes_value does not have as many options as the table\n");
}

int main(void)
{
	test_entries_complete();
	test_no_duplicates();
	test_lookup_and_command_finder();
	test_getopt_takes_every_option();
	test_usage_lists_every_option();
	test_limits_have_bits();
	test_soft_limits_from_profile();
	test_completions_and_docs_know_every_option();
	return check_result();
}
