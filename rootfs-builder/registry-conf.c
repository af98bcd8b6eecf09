/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Image references and the registries configuration.
 *
 *   [REGISTRY/]REPOSITORY[:TAG][@sha256:HEX]
 *
 * A first component with a '.' or a ':' or "localhost" names the registry.
 * Names without one are short names: they must be aliases (built in, or
 * from the configuration), never guessed, so that `FROM fedora` cannot be
 * answered by whichever registry happens to hold a "fedora".
 *
 * $XDG_CONFIG_HOME/isd/registries.conf (else ~/.config/isd/registries.conf),
 * one directive a line, '#' comments:
 *   alias NAME REGISTRY/REPOSITORY   a short name (overrides a built-in one)
 *   mirror REGISTRY HOST[:PORT]      tried first for REGISTRY (in order)
 *   insecure HOST[:PORT]             plain http allowed (after https fails)
 *   fedora-release-url URL           where FROM fedora-release:NN looks
 *                                    (URL/NN/Container/ARCH/images/)
 * ISD_REGISTRIES_CONF names another file (tests).
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"
#include "internal.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

static const char *const builtin_aliases[][2] = {
	{"fedora", "registry.fedoraproject.org/fedora"},
	{"fedora-minimal", "registry.fedoraproject.org/fedora-minimal"},
	{"fedora-toolbox", "registry.fedoraproject.org/fedora-toolbox"},
};

char *isd_registries_conf_path(void)
{
	const char *env = getenv("ISD_REGISTRIES_CONF");

	if (env && env[0])
		return isd_xstrdup(env);
	return isd_xdg_path("XDG_CONFIG_HOME", ".config", "isd/registries.conf");
}

/* Calls fn for each directive line, split into words; fn returns <0 to
 * stop.  A missing file is an empty one. */
static int each_directive(int (*fn)(void *ctx, char **words, const char *where), void *ctx)
{
	_cleanup_free_ char *path = isd_registries_conf_path(), *text = NULL;
	char *line, *save = NULL;
	unsigned no = 0;
	int r = isd_read_file_at(AT_FDCWD, path, &text, NULL);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return isd_error(r, "reading %s", path);
	for (char *p = text; p; p = save) {
		_cleanup_strv_ char **words = NULL;
		_cleanup_free_ char *where = NULL;
		char *w, *wsave = NULL;

		line = p;
		save = strchr(p, '\n');
		if (save)
			*save++ = '\0';
		no++;
		if (strchr(line, '#'))
			*strchr(line, '#') = '\0';
		for (w = strtok_r(line, " \t\r", &wsave); w; w = strtok_r(NULL, " \t\r", &wsave))
			isd_strv_push(&words, isd_xstrdup(w));
		if (!words)
			continue;
		where = isd_xasprintf("%s:%u", path, no);
		bool one_arg = !strcmp(words[0], "insecure") || !strcmp(words[0], "fedora-release-url");
		if (isd_strv_len(words) != (one_arg ? 2u : 3u) ||
		    (strcmp(words[0], "alias") && strcmp(words[0], "mirror") && !one_arg)) {
			r = isd_error(0, "%s: expected 'alias NAME REGISTRY/REPO', 'mirror REGISTRY HOST', "
					 "'insecure HOST' or 'fedora-release-url URL'",
				      where);
			return r;
		}
		r = fn(ctx, words, where);
		if (r < 0)
			return r;
	}
	return 0;
}

struct lookup {
	struct isd_reg_ref *ref;
	const char *name;  /* alias: the short name */
	char *alias;
};

static int find_alias(void *ctx, char **w, const char *where)
{
	struct lookup *l = ctx;

	if (!strcmp(w[0], "alias") && !strcmp(w[1], l->name)) {
		free(l->alias);
		l->alias = isd_xstrdup(w[2]);
	}
	return 0;
}

static int find_host_settings(void *ctx, char **w, const char *where)
{
	struct lookup *l = ctx;

	if (!strcmp(w[0], "mirror") && !strcmp(w[1], l->ref->registry))
		isd_strv_push(&l->ref->mirrors, isd_xstrdup(w[2]));
	else if (!strcmp(w[0], "insecure") && !strcmp(w[1], l->ref->registry))
		l->ref->insecure = true;
	return 0;
}

static int find_fedora_url(void *ctx, char **w, const char *where)
{
	char **url = ctx;

	(void)where;
	if (!strcmp(w[0], "fedora-release-url")) {
		free(*url);
		*url = isd_xstrdup(w[1]);
	}
	return 0;
}

int isd_fedora_release_url(char **url)
{
	int r;

	*url = NULL;
	r = each_directive(find_fedora_url, url);
	if (r < 0) {
		free(*url);
		*url = NULL;
	}
	return r;
}

bool isd_host_is_loopback(const char *hostport)
{
	_cleanup_free_ char *host = isd_xstrdup(hostport);
	struct in6_addr a6;
	struct in_addr a4;
	char *end;

	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end)
			return false;
		*end = '\0';
		return inet_pton(AF_INET6, host + 1, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
	}
	if ((end = strchr(host, ':')))
		*end = '\0';
	if (!strcmp(host, "localhost"))
		return true;
	return inet_pton(AF_INET, host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

static bool valid_repo(const char *s)
{
	/* Lower-case path components of [a-z0-9._-], as the distribution
	 * spec says; nothing that could leave the URL path. */
	if (!s[0] || s[0] == '/' || s[strlen(s) - 1] == '/' || strstr(s, "//") || strstr(s, ".."))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr("._-/", *p)))
			return false;
	return true;
}

static bool valid_tag(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 128 || s[0] == '.' || s[0] == '-')
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("._-", *p)))
			return false;
	return true;
}

static bool valid_host(const char *s)
{
	if (!s[0] || strlen(s) > 255)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr(".-:[]", *p)))
			return false;
	return true;
}

bool isd_digest_valid(const char *d)
{
	if (!d || strncmp(d, "sha256:", 7) || strlen(d) != 71)
		return false;
	for (const char *p = d + 7; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

static int split_ref(const char *text, struct isd_reg_ref *ref)
{
	_cleanup_free_ char *copy = isd_xstrdup(text);
	char *at = strchr(copy, '@'), *slash, *colon, *name;

	if (at) {
		*at++ = '\0';
		if (!isd_digest_valid(at))
			return isd_error(0, "'%s': the digest must be sha256:<64 hex digits>", text);
		ref->digest = isd_xstrdup(at);
	}
	slash = strchr(copy, '/');
	if (slash && (memchr(copy, '.', (size_t)(slash - copy)) || memchr(copy, ':', (size_t)(slash - copy)) ||
		      !strncmp(copy, "localhost/", 10))) {
		*slash = '\0';
		ref->registry = isd_xstrdup(copy);
		name = slash + 1;
	} else {
		name = copy;
	}
	colon = strrchr(name, ':');
	if (colon) {
		*colon++ = '\0';
		if (!valid_tag(colon))
			return isd_error(0, "'%s': '%s' is not a valid tag", text, colon);
		ref->tag = isd_xstrdup(colon);
	}
	ref->repo = isd_xstrdup(name);
	return 0;
}

int isd_reg_ref_parse(const char *text, struct isd_reg_ref *ref)
{
	struct lookup l = {.ref = ref};
	int r;

	memset(ref, 0, sizeof(*ref));
	r = split_ref(text, ref);
	if (r == 0 && !ref->registry) {
		/* A short name: the configuration's alias, else a built-in one. */
		l.name = ref->repo;
		r = each_directive(find_alias, &l);
		for (size_t i = 0; r == 0 && !l.alias && i < sizeof(builtin_aliases) / sizeof(builtin_aliases[0]); i++)
			if (!strcmp(builtin_aliases[i][0], ref->repo))
				l.alias = isd_xstrdup(builtin_aliases[i][1]);
		if (r == 0 && !l.alias) {
			_cleanup_free_ char *conf = isd_registries_conf_path();
			r = isd_error(0, "'%s' is a short name without an alias; name the registry", text);
			isd_error_hint("fix: FROM registry.fedoraproject.org/%s (or quay.io/..., docker.io/library/...), "
				       "or add 'alias %s REGISTRY/REPOSITORY' to %s", ref->repo, ref->repo, conf);
		}
		if (r == 0) {
			struct isd_reg_ref target = {0};
			r = split_ref(l.alias, &target);
			if (r == 0 && (!target.registry || target.tag || target.digest))
				r = isd_error(0, "alias %s: '%s' must be REGISTRY/REPOSITORY", ref->repo, l.alias);
			if (r == 0) {
				free(ref->repo);
				ref->registry = isd_steal_ptr(target.registry);
				ref->repo = isd_steal_ptr(target.repo);
			}
			isd_reg_ref_free(&target);
		}
		free(l.alias);
	}
	if (r < 0) {
		isd_reg_ref_free(ref);
		return r;
	}
	if (!valid_host(ref->registry) || !valid_repo(ref->repo)) {
		r = isd_error(0, "'%s' is not a valid image reference ([REGISTRY/]REPOSITORY[:TAG][@sha256:DIGEST])", text);
		isd_reg_ref_free(ref);
		return r;
	}
	/* Docker Hub: its API lives elsewhere, and its official images are
	 * under library/. */
	if (!strcmp(ref->registry, "docker.io") || !strcmp(ref->registry, "index.docker.io")) {
		free(ref->registry);
		ref->registry = isd_xstrdup("docker.io");
		ref->host = isd_xstrdup("registry-1.docker.io");
		if (!strchr(ref->repo, '/')) {
			char *lib = isd_xasprintf("library/%s", ref->repo);
			free(ref->repo);
			ref->repo = lib;
		}
	} else {
		ref->host = isd_xstrdup(ref->registry);
	}
	if (!ref->tag && !ref->digest)
		ref->tag = isd_xstrdup("latest");
	r = each_directive(find_host_settings, &l);
	if (r < 0) {
		isd_reg_ref_free(ref);
		return r;
	}
	ref->insecure |= isd_host_is_loopback(ref->host);
	return 0;
}

bool isd_reg_host_insecure(const char *host)
{
	struct isd_reg_ref ref = {.registry = (char *)host};
	struct lookup l = {.ref = &ref};

	if (isd_host_is_loopback(host))
		return true;
	each_directive(find_host_settings, &l);
	isd_strv_free(ref.mirrors);
	return ref.insecure;
}

char *isd_reg_ref_format(const struct isd_reg_ref *ref)
{
	return isd_xasprintf("%s/%s%s%s%s%s", ref->registry, ref->repo, ref->tag ? ":" : "", ref->tag ? ref->tag : "",
			     ref->digest ? "@" : "", ref->digest ? ref->digest : "");
}

void isd_reg_ref_free(struct isd_reg_ref *ref)
{
	free(ref->registry);
	free(ref->host);
	free(ref->repo);
	free(ref->tag);
	free(ref->digest);
	isd_strv_free(ref->mirrors);
	memset(ref, 0, sizeof(*ref));
}

/* $XDG_CACHE_HOME/isd (else ~/.cache/isd). */
char *isd_cache_dir(void)
{
	return isd_xdg_path("XDG_CACHE_HOME", ".cache", "isd");
}
