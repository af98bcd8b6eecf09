/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Registry credentials, from the files podman, skopeo, buildah and docker
 * write (`podman login`, `docker login`), in their order:
 *
 *   $REGISTRY_AUTH_FILE                    (set: the only file read)
 *   $XDG_RUNTIME_DIR/containers/auth.json
 *   $XDG_CONFIG_HOME/containers/auth.json  (default ~/.config)
 *   $DOCKER_CONFIG/config.json             (default ~/.docker/config.json)
 *
 * Each is {"auths": {KEY: {"auth": base64("user:password")}}}.  KEY is a
 * registry ("quay.io", "127.0.0.1:5000") or a namespace in it
 * ("quay.io/team", "quay.io/team/image"); the most specific key that
 * matches wins, and the first file with a match is used, as in
 * containers/image.  Docker's old keys ("https://index.docker.io/v1/")
 * mean their host, and Docker Hub's hosts mean "docker.io".
 *
 * The files are read only when a registry asks for credentials (a 401),
 * so anonymous pulls never depend on them.  The secret never enters a
 * message: errors name the registry and the file.  Credential helpers
 * (credHelpers, credsStore) and identity tokens are not supported.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"
#include "internal.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

static char *home_dir(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && h[0] == '/')
		return isd_xstrdup(h);
	pw = getpwuid(getuid());
	return pw && pw->pw_dir ? isd_xstrdup(pw->pw_dir) : NULL;
}

char **isd_reg_auth_files(void)
{
	const char *env = getenv("REGISTRY_AUTH_FILE"), *run = isd_runtime_dir();
	const char *cfg = getenv("XDG_CONFIG_HOME"), *docker = getenv("DOCKER_CONFIG");
	_cleanup_free_ char *home = home_dir();
	char **files = NULL;

	if (env && env[0]) {
		isd_strv_push(&files, isd_xstrdup(env));
		return files;
	}
	if (run)
		isd_strv_push(&files, isd_xasprintf("%s/containers/auth.json", run));
	if (cfg && cfg[0] == '/')
		isd_strv_push(&files, isd_xasprintf("%s/containers/auth.json", cfg));
	else if (home)
		isd_strv_push(&files, isd_xasprintf("%s/.config/containers/auth.json", home));
	if (docker && docker[0])
		isd_strv_push(&files, isd_xasprintf("%s/config.json", docker));
	else if (home)
		isd_strv_push(&files, isd_xasprintf("%s/.docker/config.json", home));
	return files;
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* Standard (or URL-safe) base64, padding optional; NULL when malformed. */
char *isd_base64_decode(const char *in, size_t *len_out)
{
	size_t n = strlen(in), len = 0;
	char *out = isd_xmalloc(n / 4 * 3 + 4);
	uint32_t acc = 0;
	int bits = 0;

	for (size_t i = 0; i < n; i++) {
		int v;
		if (in[i] == '=')
			break;
		v = b64_value(in[i]);
		if (v < 0) {
			explicit_bzero(out, n / 4 * 3 + 4);
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[len++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[len] = '\0';
	if (len_out)
		*len_out = len;
	return out;
}

/* An auths key as containers/image normalizes it: a URL means its host,
 * Docker Hub's hosts mean docker.io. */
static char *normalize_key(const char *key)
{
	char *k;

	if (!strncmp(key, "http://", 7) || !strncmp(key, "https://", 8)) {
		const char *h = strstr(key, "://") + 3;
		k = strndup(h, strcspn(h, "/"));
	} else {
		k = isd_xstrdup(key);
	}
	if (k && (!strcmp(k, "index.docker.io") || !strcmp(k, "registry-1.docker.io"))) {
		free(k);
		k = isd_xstrdup("docker.io");
	}
	return k;
}

/* The "auth" of the entry whose key is exactly want, or NULL. */
static const char *auth_for(json_object *auths, const char *want)
{
	json_object_object_foreach(auths, key, entry)
	{
		_cleanup_free_ char *k = normalize_key(key);
		json_object *a;

		if (!k || strcmp(k, want) || !json_object_is_type(entry, json_type_object))
			continue;
		if (json_object_object_get_ex(entry, "auth", &a) && json_object_is_type(a, json_type_string) &&
		    json_object_get_string_len(a) > 0)
			return json_object_get_string(a);
	}
	return NULL;
}

void isd_reg_auth_free(struct isd_reg_auth *auth)
{
	if (auth->password) {
		explicit_bzero(auth->password, strlen(auth->password));
		free(auth->password);
	}
	free(auth->user);
	free(auth->file);
	memset(auth, 0, sizeof(*auth));
}

/* Looks registry[/repo] up in one file: 1 found, 0 not, -errno. */
static int find_in_file(const char *file, const char *registry, const char *repo, struct isd_reg_auth *auth)
{
	_cleanup_free_ char *text = NULL, *scope = NULL;
	json_object *o, *auths;
	const char *b64 = NULL;
	char *plain, *colon;
	int r = isd_read_file_at(AT_FDCWD, file, &text, NULL);

	if (r == -ENOENT || r == -ENOTDIR)
		return 0;
	if (r < 0)
		return isd_error(r, "reading registry credentials from %s", file);
	o = json_tokener_parse(text);
	explicit_bzero(text, strlen(text));
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return isd_error(0, "reading registry credentials from %s: not a JSON object", file), -EBADMSG;
	}
	if (!json_object_object_get_ex(o, "auths", &auths) || !json_object_is_type(auths, json_type_object)) {
		json_object_put(o);
		return 0;
	}
	/* Most specific first: registry/a/b, registry/a, registry. */
	scope = repo && repo[0] ? isd_xasprintf("%s/%s", registry, repo) : isd_xstrdup(registry);
	for (;;) {
		char *slash;
		if ((b64 = auth_for(auths, scope)))
			break;
		slash = strrchr(scope, '/');
		if (!slash || (size_t)(slash - scope) < strlen(registry))
			break;
		*slash = '\0';
	}
	if (!b64) {
		json_object_put(o);
		return 0;
	}
	plain = isd_base64_decode(b64, NULL);
	json_object_put(o);
	colon = plain ? strchr(plain, ':') : NULL;
	if (!colon || colon == plain) {
		if (plain) {
			explicit_bzero(plain, strlen(plain));
			free(plain);
		}
		return isd_error(0, "%s: the \"auth\" for %s is not base64 of USER:PASSWORD", file, registry), -EBADMSG;
	}
	*colon = '\0';
	auth->user = isd_xstrdup(plain);
	auth->password = isd_xstrdup(colon + 1);
	auth->file = isd_xstrdup(file);
	explicit_bzero(colon + 1, strlen(colon + 1));
	free(plain);
	return 1;
}

int isd_reg_auth_find(const char *registry, const char *repo, struct isd_reg_auth *auth)
{
	_cleanup_strv_ char **files = isd_reg_auth_files();
	_cleanup_free_ char *reg = normalize_key(registry);

	memset(auth, 0, sizeof(*auth));
	for (size_t i = 0; files && files[i]; i++) {
		int r = find_in_file(files[i], reg, repo, auth);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	return 0;
}

char *isd_reg_auth_files_text(void)
{
	_cleanup_strv_ char **files = isd_reg_auth_files();
	char *s = isd_xstrdup("");

	for (size_t i = 0; files && files[i]; i++) {
		char *t = isd_xasprintf("%s%s%s", s, i ? ", " : "", files[i]);
		free(s);
		s = t;
	}
	return s;
}
