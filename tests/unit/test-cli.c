/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parsers and pure logic of the command line and the spec. */
#include "isd/cli.h"
#include "options.h"
#include "isd/spec.h"
#include "isd/util.h"

#include "check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static void test_sizes(void)
{
	uint64_t v = 0;

	CHECK(isd_parse_size("512", &v) == 0 && v == 512);
	CHECK(isd_parse_size("4k", &v) == 0 && v == 4096);
	CHECK(isd_parse_size("2g", &v) == 0 && v == 2ULL << 30);
	CHECK(isd_parse_size("100MiB", &v) == 0 && v == 100ULL << 20);
	CHECK(isd_parse_size("1T", &v) == 0 && v == 1ULL << 40);
	CHECK(isd_parse_size("10b", &v) == 0 && v == 10);
	CHECK(isd_parse_size("", &v) < 0);
	CHECK(isd_parse_size("-1", &v) < 0);
	CHECK(isd_parse_size("1.5g", &v) < 0);
	CHECK(isd_parse_size("12q", &v) < 0);
	CHECK(isd_parse_size("99999999999999999999", &v) == -ERANGE);
	CHECK(isd_parse_size("17179869184g", &v) == -ERANGE);
}

static void test_modes_ids_paths(void)
{
	uint32_t m = 0;
	char *p = NULL;

	CHECK(isd_parse_octal_mode("1777", &m) == 0 && m == 01777);
	CHECK(isd_parse_octal_mode("0755", &m) == 0 && m == 0755);
	CHECK(isd_parse_octal_mode("999", &m) < 0);
	CHECK(isd_parse_octal_mode("17777", &m) < 0);
	CHECK(isd_parse_uint32("4294967295", &m) == 0 && m == 4294967295U);
	CHECK(isd_parse_uint32("4294967296", &m) < 0);
	CHECK(isd_parse_uint32("-1", &m) < 0);

	CHECK(isd_normalize_abs_path("//a/./b//c/", &p) == 0 && !strcmp(p, "/a/b/c"));
	free(p);
	CHECK(isd_normalize_abs_path("/", &p) == 0 && !strcmp(p, "/"));
	free(p);
	CHECK(isd_normalize_abs_path("/a/../etc", &p) < 0);
	CHECK(isd_normalize_abs_path("a/b", &p) < 0);
	CHECK(isd_resolve_abs_path_lexically("/p/a/../b/./c/", &p) == 0 && !strcmp(p, "/p/b/c"));
	free(p);
	CHECK(isd_resolve_abs_path_lexically("/a/../../..", &p) == 0 && !strcmp(p, "/"));
	free(p);
	CHECK(isd_resolve_abs_path_lexically("/x/..", &p) == 0 && !strcmp(p, "/"));
	free(p);
}

static void free_mount(struct isd_mount *m)
{
	free(m->source);
	free(m->destination);
}

static void test_tmpfs(void)
{
	struct isd_mount m;

	CHECK(isd_options_parse_tmpfs("/tmp:rw,exec,nosuid,nodev,uid=1000,gid=1000,size=2g", &m) == 0);
	CHECK(!strcmp(m.destination, "/tmp") && m.exec && !m.readonly && m.size == 2ULL << 30);
	CHECK(m.has_uid && m.uid == 1000 && m.has_gid && m.gid == 1000 && m.mode == 01777);
	free_mount(&m);
	CHECK(isd_options_parse_tmpfs("/var/tmp", &m) == 0 && !m.exec && m.size == 0);
	free_mount(&m);
	CHECK(isd_options_parse_tmpfs("/x:ro,mode=0700", &m) == 0 && m.readonly && m.mode == 0700);
	free_mount(&m);
	CHECK(isd_options_parse_tmpfs("/x//y/", &m) == 0 && !strcmp(m.destination, "/x/y"));
	free_mount(&m);
	CHECK(isd_options_parse_tmpfs("/x:suid", &m) < 0);
	CHECK(strstr(isd_error_message(), "always nosuid,nodev"));
	CHECK(isd_options_parse_tmpfs("/x:dev", &m) < 0);
	CHECK(isd_options_parse_tmpfs("/x:size=0", &m) < 0);
	CHECK(isd_options_parse_tmpfs("/x:nr_inodes=5", &m) < 0);
	CHECK(strstr(isd_error_message(), "unknown option 'nr_inodes=5'"));
	CHECK(isd_options_parse_tmpfs("x", &m) < 0);
	CHECK(isd_options_parse_tmpfs("/a/../b", &m) < 0);
}

static void test_volume_and_mount(void)
{
	struct isd_mount m;

	CHECK(isd_options_parse_volume("/etc:/e:ro", "/", &m) == 0);
	CHECK(m.type == ISD_MOUNT_BIND && !strcmp(m.source, "/etc") && !strcmp(m.destination, "/e") && m.readonly);
	free_mount(&m);
	CHECK(isd_options_parse_volume("./:/w:rw,z", "/usr", &m) == 0 && !strcmp(m.source, "/usr") && !m.readonly);
	free_mount(&m);
	CHECK(isd_options_parse_volume("named:/data", "/", &m) < 0);
	CHECK(strstr(isd_error_message(), "no named volumes"));
	CHECK(isd_options_parse_volume("/etc", "/", &m) < 0);
	CHECK(isd_options_parse_volume("/etc:/e:bogus", "/", &m) < 0);
	CHECK(isd_options_parse_volume("/etc:/e:ro,optional", "/", &m) == 0 && m.optional && m.readonly);
	free_mount(&m);
	CHECK(isd_options_parse_mount("type=bind,src=/etc,dst=/e,optional", "/", &m) == 0 && m.optional);
	free_mount(&m);
	CHECK(isd_options_parse_mount("type=tmpfs,dst=/e,optional", "/", &m) < 0);

	CHECK(isd_options_parse_mount("type=bind,src=/etc,dst=/e,readonly", "/", &m) == 0);
	CHECK(m.type == ISD_MOUNT_BIND && m.readonly && !strcmp(m.destination, "/e"));
	free_mount(&m);
	CHECK(isd_options_parse_mount("type=bind,source=/etc,target=/e,readonly=false", "/", &m) == 0 && !m.readonly);
	free_mount(&m);
	CHECK(isd_options_parse_mount("type=tmpfs,destination=/t,tmpfs-size=64m,tmpfs-mode=0700", "/", &m) == 0);
	CHECK(m.type == ISD_MOUNT_TMPFS && m.size == 64ULL << 20 && m.mode == 0700);
	free_mount(&m);
	CHECK(isd_options_parse_mount("type=volume,src=x,dst=/x", "/", &m) < 0);
	CHECK(isd_options_parse_mount("src=/etc,dst=/x", "/", &m) < 0);
	CHECK(isd_options_parse_mount("type=bind,dst=/x", "/", &m) < 0);
	CHECK(isd_options_parse_mount("type=tmpfs,src=/a,dst=/x", "/", &m) < 0);
	CHECK(isd_options_parse_mount("type=bind,src=/etc,dst=/x,tmpfs-size=1m", "/", &m) < 0);
}

static void test_cpus(void)
{
	uint64_t q = 0;

	CHECK(isd_options_parse_cpus("0.5", 100000, &q) == 0 && q == 50000);
	CHECK(isd_options_parse_cpus("4", 100000, &q) == 0 && q == 400000);
	CHECK(isd_options_parse_cpus("1.25", 100000, &q) == 0 && q == 125000);
	CHECK(isd_options_parse_cpus("0.001", 100000, &q) < 0);
	CHECK(isd_options_parse_cpus("abc", 100000, &q) < 0);
	CHECK(isd_options_parse_cpus("", 100000, &q) < 0);
	CHECK(isd_options_parse_cpus("1.", 100000, &q) == 0 && q == 100000);
}

static int parse_as(struct isd_spec *spec, char **env, const char *const *args, const char *home, const char *cwd)
{
	struct isd_caller caller = {.uid = 1000, .gid = 1000, .home = home, .cwd = cwd, .environ = env};
	int argc = 0;

	while (args[argc])
		argc++;
	isd_spec_init(spec);
	return isd_cli_parse_exec(argc, (char **)args, &caller, spec);
}

static int parse(struct isd_spec *spec, char **env, const char *const *args)
{
	return parse_as(spec, env, args, "/home/me", "/");
}

static void test_exec_parse(void)
{
	char *env[] = {"HOME=/home/me", "PATH=/usr/bin:/bin", "SECRET=xyz", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", NULL};
	struct isd_spec spec;

	{
		const char *args[] = {"exec", "--rm", "-it", "sh", NULL};
		CHECK(parse(&spec, env, args) == 0);
		CHECK(spec.tty && spec.interactive);
		isd_spec_free(&spec);
	}
	{
		const char *args[] = {"exec", "sh", NULL};
		CHECK(parse(&spec, env, args) == 0);
		CHECK(!spec.tty && !spec.interactive); /* the test's caller has no terminal */
		isd_spec_free(&spec);
	}
	{
		const char *args[] = {"exec", "-e", "A=1", "-e", "SECRET", "--tmpfs", "/tmp:size=2g,exec", "-w", "/w",
				      "--hostname", "box", "--", "cmd", "--not-an-option", NULL};
		CHECK(parse(&spec, env, args) == 0);
		CHECK(isd_strv_len(spec.argv) == 2 && !strcmp(spec.argv[1], "--not-an-option"));
		CHECK(!strcmp(isd_spec_getenv(&spec, "A"), "1"));
		CHECK(!strcmp(isd_spec_getenv(&spec, "SECRET"), "xyz"));
		CHECK(!strcmp(isd_spec_getenv(&spec, "HOME"), "/home/me"));
		CHECK(!strcmp(isd_spec_getenv(&spec, "LC_ALL"), "C"));
		CHECK(!strcmp(spec.workdir, "/w") && !strcmp(spec.hostname, "box"));
		/* the user's /tmp replaces the implicit one */
		CHECK(spec.n_mounts == 3);
		CHECK(spec.mounts[isd_spec_find_mount(&spec, "/tmp")].size == 2ULL << 30);
		CHECK(!spec.mounts[isd_spec_find_mount(&spec, "/tmp")].implicit);
		CHECK(spec.mounts[isd_spec_find_mount(&spec, "/run")].implicit);
		CHECK(spec.uid == 1000 && spec.host_uid == 1000);
		isd_spec_free(&spec);
	}
	{
		const char *args[] = {"exec", "sh", NULL};
		CHECK(parse(&spec, env, args) == 0);
		CHECK(isd_spec_getenv(&spec, "SECRET") == NULL);
		CHECK(!strcmp(spec.seccomp, "default") && spec.network == ISD_NET_NONE);
		isd_spec_free(&spec);
	}
	{
		const char *args[] = {"exec", "--memory", "4g", "--memory-swap", "4g", "--cpus", "4", "--pids-limit", "512", "sh", NULL};
		CHECK(parse(&spec, env, args) == 0);
		CHECK(spec.limits.memory == 4ULL << 30 && spec.limits.memory_swap == 4LL << 30);
		CHECK(spec.limits.cpu_quota_us == 400000 && spec.limits.pids_limit == 512);
		isd_spec_free(&spec);
	}
	{
		const char *args[] = {"exec", "--memory", "0", "sh", NULL};
		CHECK(parse(&spec, env, args) < 0);
		isd_spec_free(&spec);
	}
	{
		const char *args[] = {"exec", "--frobnicate", "sh", NULL};
		CHECK(parse(&spec, env, args) < 0);
		CHECK(strstr(isd_error_message(), "unknown option '--frobnicate'"));
		isd_spec_free(&spec);
	}
	{
		const char *args[] = {"exec", "--tmpfs", NULL};
		CHECK(parse(&spec, env, args) < 0);
		CHECK(strstr(isd_error_message(), "needs a value"));
		isd_spec_free(&spec);
	}
}

static void test_optional_bind(void)
{
	char *env[] = {"PATH=/bin", NULL};
	struct isd_spec spec;
	const char *args[] = {"exec", "-v", "/no/such/path:/x:optional", "-v", "/etc:/e:optional", "sh", NULL};

	CHECK(parse(&spec, env, args) == 0);
	CHECK(isd_spec_find_mount(&spec, "/x") < 0 && isd_spec_find_mount(&spec, "/e") >= 0);
	CHECK(isd_spec_validate(&spec) == 0);
	isd_spec_free(&spec);
}

static void test_profile_detection(void)
{
	char *env[] = {"PATH=/bin", NULL};
	struct isd_spec spec;

	{
		/* an abbreviated option with a value before the command */
		const char *args[] = {"exec", "--hostn", "box", "--print-spec", "--prof=none", "--", "claude", NULL};
		CHECK(parse(&spec, env, args) == 0);
		CHECK(!strcmp(spec.hostname, "box"));
		CHECK(spec.profiles && !strcmp(spec.profiles[0], "none") && !spec.profiles[1]);
		CHECK(spec.agent && !strcmp(spec.agent, "claude"));
		isd_spec_free(&spec);
	}
	{
		/* a shell in omp's sandbox; cwd "/" is refused as the project */
		const char *args[] = {"exec", "--agent", "omp", "sh", NULL};
		CHECK(parse(&spec, env, args) < 0 && strstr(isd_error_message(), "the workspace /: that is your home directory"));
		CHECK(spec.agent && !strcmp(spec.agent, "omp") && spec.profiles && !strcmp(spec.profiles[0], "agent"));
		isd_spec_free(&spec);
	}
}

/* The workspace guard: a home, or a parent of it, is never the workspace,
 * whether the home exists or not (a fresh account, HOME set by hand). */
static bool refused_as_home(const char *home, const char *cwd, const char *workspace)
{
	char *env[] = {"PATH=/bin", NULL};
	_cleanup_free_ char *ws = workspace ? isd_xasprintf("%s:ro", workspace) : NULL;
	const char *with_ws[] = {"exec", "--workspace", ws, "sh", NULL};
	const char *agent[] = {"exec", "--agent", "omp", "sh", NULL};
	struct isd_spec spec;
	int r = parse_as(&spec, env, ws ? with_ws : agent, home, cwd);
	bool refused = r < 0 && strstr(isd_error_message(), "that is your home directory");

	CHECK(r == 0 || refused);
	isd_spec_free(&spec);
	return refused;
}

static void test_home_guard(void)
{
	char tmp[] = "/tmp/isd-test-cli.XXXXXX";
	_cleanup_free_ char *home = NULL, *project = NULL, *gone = NULL, *missing = NULL, *real = NULL,
			    *link = NULL, *via_link = NULL;

	CHECK(mkdtemp(tmp) != NULL);
	home = isd_xasprintf("%s/home", tmp);
	project = isd_xasprintf("%s/home/project", tmp);
	gone = isd_xasprintf("%s/gone", tmp);
	missing = isd_xasprintf("%s/gone/me", tmp);
	real = isd_xasprintf("%s/real", tmp);
	link = isd_xasprintf("%s/link", tmp);
	via_link = isd_xasprintf("%s/link/me", tmp);
	CHECK(mkdir(home, 0700) == 0 && mkdir(project, 0700) == 0 && mkdir(real, 0700) == 0);
	CHECK(symlink("real", link) == 0);

	CHECK(refused_as_home(home, "/", NULL));
	CHECK(refused_as_home(home, home, NULL));
	CHECK(!refused_as_home(home, "/", project));
	CHECK(refused_as_home(home, "/", tmp));
	/* the home does not exist: its parents are still refused, also through
	 * a symbolic link, and "/" always */
	CHECK(refused_as_home(missing, "/", tmp));
	CHECK(refused_as_home(missing, "/", "/"));
	CHECK(refused_as_home("relative/home", "/", "/"));
	CHECK(refused_as_home(via_link, "/", real));
	CHECK(!refused_as_home(missing, "/", home));
	CHECK(mkdir(gone, 0700) == 0);
	CHECK(refused_as_home(missing, "/", gone));
	CHECK(!refused_as_home(missing, "/", project));

	rmdir(gone);
	unlink(link);
	rmdir(real);
	rmdir(project);
	rmdir(home);
	rmdir(tmp);
}

/* execve takes any string as an environment entry: one without "=" named
 * like a locale variable is skipped, not dereferenced. */
static void test_env_without_equals(void)
{
	char *env[] = {"PATH=/bin", "LC_BROKEN", "LANG", "LC_ALL=C", NULL};
	const char *args[] = {"exec", "sh", NULL};
	struct isd_spec spec;

	CHECK(parse(&spec, env, args) == 0);
	CHECK(!isd_spec_getenv(&spec, "LC_BROKEN") && !isd_spec_getenv(&spec, "LANG"));
	CHECK(isd_spec_getenv(&spec, "LC_ALL") && !strcmp(isd_spec_getenv(&spec, "LC_ALL"), "C"));
	isd_spec_free(&spec);
}

static void test_validate(void)
{
	char *env[] = {"PATH=/bin", NULL};
	struct isd_spec spec;

	{
		const char *args[] = {"exec", "--tmpfs", "/a", "-v", "/etc:/a", "sh", NULL};
		CHECK(parse(&spec, env, args) == 0);
		CHECK(isd_spec_validate(&spec) < 0 && strstr(isd_error_message(), "given twice"));
		isd_spec_free(&spec);
	}
	{
		const char *args[] = {"exec", "--tmpfs", "/dev", "sh", NULL};
		CHECK(parse(&spec, env, args) == 0);
		CHECK(isd_spec_validate(&spec) < 0 && strstr(isd_error_message(), "reserved"));
		isd_spec_free(&spec);
	}
	{
		const char *args[] = {"exec", "-v", "/definitely/not/here:/x", "sh", NULL};
		CHECK(parse(&spec, env, args) == 0);
		CHECK(isd_spec_validate(&spec) < 0 && strstr(isd_error_message(), "/definitely/not/here"));
		isd_spec_free(&spec);
	}
	{
		const char *args[] = {"exec", "--memory-swap", "1g", "sh", NULL};
		CHECK(parse(&spec, env, args) == 0);
		CHECK(isd_spec_validate(&spec) < 0 && strstr(isd_error_message(), "needs --memory"));
		isd_spec_free(&spec);
	}
	{
		const char *args[] = {"exec", "-v", "/etc:/etc2:ro", "sh", NULL};
		char *json;
		CHECK(parse(&spec, env, args) == 0);
		CHECK(isd_spec_validate(&spec) == 0);
		json = isd_spec_to_json(&spec);
		CHECK(strstr(json, "\"destination\": \"/etc2\"") && strstr(json, "\"readonly\": true"));
		CHECK(strstr(json, "\"no_new_privileges\": true"));
		free(json);
		isd_spec_free(&spec);
	}
}

int main(void)
{
	test_sizes();
	test_modes_ids_paths();
	test_tmpfs();
	test_volume_and_mount();
	test_cpus();
	test_exec_parse();
	test_validate();
	test_profile_detection();
	test_home_guard();
	test_env_without_equals();
	test_optional_bind();
	return check_result();
}
