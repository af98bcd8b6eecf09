/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * HTTP(S) for isd build, through libcurl: registry requests with the
 * distribution spec's bearer-token flow (anonymous, or with the caller's
 * credentials from auth.json, see auth.c) and Basic authentication, and
 * downloads into a file that are hashed while they stream, resume with a
 * Range request and show their progress on a terminal (progress.c).
 *
 * TLS is verified always (ISD_CA_FILE or --ca-file replace the system's
 * CA bundle).  Plain http is used only for hosts that are loopback or
 * configured `insecure`, and only after https failed to connect, as
 * Docker does for its insecure registries; redirects never go from https
 * to http, and neither a bearer token nor credentials are sent to another
 * host (libcurl drops both on a redirect elsewhere).  Credentials go only
 * to the registry that asked (Basic) and to the token realm its challenge
 * names (https, or a loopback/insecure host), and only to registries: ADD
 * and fedora-release downloads never send any.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"
#include "internal.h"

#include <curl/curl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define ERROR_BODY_MAX 4096
#define TOKEN_MAX (256 * 1024)

struct isd_http {
	CURL *curl;
	char *host;   /* host[:port] */
	const char *scheme; /* "https", or "http" after https failed for an insecure host */
	bool insecure;
	char *token;
	char *ca_file;
	char curl_error[CURL_ERROR_SIZE];
	/* Whose credentials to look up when the host asks (NULL: none). */
	char *auth_registry, *auth_repo;
	struct isd_reg_auth auth;
	bool auth_looked;
	bool basic; /* the host asked for Basic: the credentials go along */
	char *progress_label;
};

/* One transfer's sink and what its headers said. */
struct xfer {
	CURL *curl;
	/* memory body */
	char *mem;
	size_t len, max;
	/* file body: written at fd from offset, hashed (hash covers the file
	 * from byte 0: the part kept before a resume is hashed first) */
	int fd;
	uint64_t offset, written, limit;
	struct isd_sha256 *hash;
	bool restarted; /* asked for a range, got the whole body */
	bool started;
	bool too_big;
	int write_error;
	struct isd_progress *progress;
	/* headers of the last response */
	char *www_auth;
	char *content_type;
	char err_body[ERROR_BODY_MAX];
	size_t err_len;
};

static int ensure_curl(void)
{
	static bool done;

	if (!done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return isd_error(-EIO, "initializing libcurl");
		done = true;
	}
	return 0;
}

struct isd_http *isd_http_new(const char *host, const char *ca_file)
{
	struct isd_http *h;

	if (ensure_curl() < 0)
		return NULL;
	h = isd_xcalloc(1, sizeof(*h));
	h->curl = curl_easy_init();
	if (!h->curl) {
		free(h);
		isd_error(-ENOMEM, "creating a libcurl handle");
		return NULL;
	}
	h->host = isd_xstrdup(host);
	h->scheme = "https";
	h->insecure = isd_reg_host_insecure(host);
	if (ca_file && ca_file[0])
		h->ca_file = isd_xstrdup(ca_file);
	else if (getenv("ISD_CA_FILE") && getenv("ISD_CA_FILE")[0])
		h->ca_file = isd_xstrdup(getenv("ISD_CA_FILE"));
	return h;
}

void isd_http_free(struct isd_http *h)
{
	if (!h)
		return;
	curl_easy_cleanup(h->curl);
	free(h->host);
	free(h->token);
	free(h->ca_file);
	free(h->auth_registry);
	free(h->auth_repo);
	isd_reg_auth_free(&h->auth);
	free(h->progress_label);
	free(h);
}

void isd_http_set_auth_scope(struct isd_http *h, const char *registry, const char *repo)
{
	free(h->auth_registry);
	free(h->auth_repo);
	h->auth_registry = registry ? isd_xstrdup(registry) : NULL;
	h->auth_repo = repo ? isd_xstrdup(repo) : NULL;
}

void isd_http_set_progress(struct isd_http *h, const char *label)
{
	free(h->progress_label);
	h->progress_label = label ? isd_xstrdup(label) : NULL;
}

/* The credentials for this host, looked up once, when first asked for. */
static int load_auth(struct isd_http *h)
{
	if (h->auth_looked || !h->auth_registry)
		return 0;
	h->auth_looked = true;
	return isd_reg_auth_find(h->auth_registry, h->auth_repo, &h->auth);
}

static void use_credentials(CURL *c, const struct isd_reg_auth *auth)
{
	curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	curl_easy_setopt(c, CURLOPT_USERNAME, auth->user);
	curl_easy_setopt(c, CURLOPT_PASSWORD, auth->password);
}

/* The one error of a request the host refused with 401. */
static int unauthorized(struct isd_http *h, const char *what)
{
	_cleanup_free_ char *files = NULL;

	if (!h->auth_registry)
		return isd_error(0, "%s: the server wants credentials (HTTP 401); isd sends credentials to registries only",
				 what), -EACCES;
	if (h->auth.user) {
		isd_error(0, "%s refused the credentials for it in %s (HTTP 401 for %s)", h->auth_registry, h->auth.file,
			  what);
		isd_error_hint("fix: log in again with podman login %s (or skopeo login), or correct the entry in %s",
			       h->auth_registry, h->auth.file);
		return -EACCES;
	}
	files = isd_reg_auth_files_text();
	isd_error(0, "%s wants credentials (HTTP 401 for %s) and none for it are in %s", h->auth_registry, what,
		  files[0] ? files : "any auth file");
	isd_error_hint("fix: podman login %s, skopeo login or docker login; or name an auth file in REGISTRY_AUTH_FILE",
		       h->auth_registry);
	return -EACCES;
}

static long response_code(CURL *c)
{
	long code = 0;

	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	return code;
}

/* curl's progress callback: the download's bytes on the terminal. */
static int on_xferinfo(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct xfer *x = arg;
	long code = response_code(x->curl);

	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	if (code >= 200 && code <= 299 && x->started)
		isd_progress_update(x->progress, x->offset + x->written, dltotal > 0 ? x->offset + (uint64_t)dltotal : 0);
	return 0;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	char **slot = NULL;
	size_t skip = 0;

	if (len >= 5 && !strncmp(data, "HTTP/", 5)) {
		/* A new response (after a redirect or a 100): forget the
		 * previous one's headers. */
		free(x->www_auth);
		free(x->content_type);
		x->www_auth = x->content_type = NULL;
	} else if (len > 17 && !strncasecmp(data, "www-authenticate:", 17)) {
		slot = &x->www_auth;
		skip = 17;
	} else if (len > 13 && !strncasecmp(data, "content-type:", 13)) {
		slot = &x->content_type;
		skip = 13;
	}
	if (slot) {
		char *v = strndup(data + skip, len - skip);
		char *s = v, *e;
		if (!v)
			return 0;
		while (*s == ' ' || *s == '\t')
			s++;
		e = s + strlen(s);
		while (e > s && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
			*--e = '\0';
		free(*slot);
		*slot = isd_xstrdup(s);
		free(v);
	}
	return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	long code = response_code(x->curl);

	if (code < 200 || code > 299) {
		size_t room = sizeof(x->err_body) - 1 - x->err_len;
		size_t take = len < room ? len : room;
		memcpy(x->err_body + x->err_len, data, take);
		x->err_len += take;
		return len;
	}
	if (x->fd < 0) {
		if (x->len + len > x->max) {
			x->too_big = true;
			return 0;
		}
		x->mem = isd_xrealloc(x->mem, x->len + len + 1);
		memcpy(x->mem + x->len, data, len);
		x->len += len;
		x->mem[x->len] = '\0';
		return len;
	}
	if (!x->started) {
		x->started = true;
		if (x->offset && code != 206) {
			/* The server sent the whole blob: start over. */
			x->restarted = true;
			x->offset = 0;
			isd_sha256_final(x->hash, (char[80]){0});
			x->hash = isd_sha256_new();
			if (ftruncate(x->fd, 0) < 0) {
				x->write_error = -errno;
				return 0;
			}
		}
	}
	if (x->limit && x->offset + x->written + len > x->limit) {
		x->too_big = true;
		return 0;
	}
	if (pwrite(x->fd, data, len, (off_t)(x->offset + x->written)) != (ssize_t)len) {
		x->write_error = errno ? -errno : -EIO;
		return 0;
	}
	isd_sha256_update(x->hash, data, len);
	x->written += len;
	return len;
}

static void xfer_reset_headers(struct xfer *x)
{
	free(x->www_auth);
	free(x->content_type);
	x->www_auth = x->content_type = NULL;
	x->err_len = 0;
	x->err_body[0] = '\0';
}

/* Common options of every request on c: protocols, TLS, timeouts. */
static void base_options(CURL *c, const char *ca_file, bool allow_http, char *errbuf)
{
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, allow_http ? "https,http" : "https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, allow_http ? "https,http" : "https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, ca_file);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	/* Stalled for a minute: give up (a resumed build picks it up). */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "isd/" ISD_VERSION);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, NULL);
}

/* A parameter of a WWW-Authenticate challenge (realm="...", ...). */
static char *challenge_param(const char *ch, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = ch; (p = strcasestr(p, name)); p += n) {
		const char *v = p + n, *end;
		if ((p != ch && p[-1] != ' ' && p[-1] != ',') || *v != '=')
			continue;
		v++;
		if (*v == '"') {
			v++;
			end = strchr(v, '"');
		} else {
			end = v + strcspn(v, ", ");
		}
		return end ? strndup(v, (size_t)(end - v)) : NULL;
	}
	return NULL;
}

static bool url_allowed(const char *url)
{
	_cleanup_free_ char *host = NULL;
	const char *h;

	if (!strncmp(url, "https://", 8))
		return true;
	if (strncmp(url, "http://", 7))
		return false;
	h = url + 7;
	host = strndup(h, strcspn(h, "/?#"));
	return host && isd_reg_host_insecure(host);
}

/* The token for a challenge: GET realm?service=&scope=, with the
 * credentials when there are (else anonymous). */
static int fetch_token(struct isd_http *h, const char *challenge)
{
	_cleanup_free_ char *realm = challenge_param(challenge, "realm");
	_cleanup_free_ char *service = challenge_param(challenge, "service");
	_cleanup_free_ char *scope = challenge_param(challenge, "scope");
	_cleanup_free_ char *url = NULL;
	struct xfer x = {.fd = -1, .max = TOKEN_MAX};
	CURL *c = curl_easy_init();
	json_object *o = NULL, *v;
	CURLcode cr;
	int r = 0;

	if (!c)
		return isd_error(-ENOMEM, "creating a libcurl handle");
	if (!realm || !url_allowed(realm)) {
		r = isd_error(0, "%s asks for a token from '%s', which is not an https URL", h->host,
			      realm ? realm : "(no realm)");
		goto out;
	}
	{
		char *es = service ? curl_easy_escape(c, service, 0) : NULL;
		char *esc = scope ? curl_easy_escape(c, scope, 0) : NULL;
		url = isd_xasprintf("%s%s%s%s%s%s", realm, strchr(realm, '?') ? "&" : "?", es ? "service=" : "",
				    es ? es : "", esc ? (es ? "&scope=" : "scope=") : "", esc ? esc : "");
		curl_free(es);
		curl_free(esc);
	}
	/* http only for a realm on a loopback or insecure host (url_allowed):
	 * an https realm is never redirected to http, credentials or not. */
	base_options(c, h->ca_file, !strncmp(url, "http://", 7), h->curl_error);
	x.curl = c;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);
	if (!url_allowed(url))
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	if (h->auth.user)
		use_credentials(c, &h->auth);
	cr = curl_easy_perform(c);
	if (cr != CURLE_OK) {
		isd_error(0, "getting a token from %s: %s", realm, h->curl_error[0] ? h->curl_error : curl_easy_strerror(cr));
		r = -EIO;
		goto out;
	}
	if (response_code(c) == 401) {
		_cleanup_free_ char *what = isd_xasprintf("its token server %s", realm);
		r = unauthorized(h, what);
		goto out;
	}
	if (response_code(c) != 200) {
		isd_error(0, "getting a token from %s: HTTP %ld", realm, response_code(c));
		r = -EACCES;
		goto out;
	}
	o = x.mem ? json_tokener_parse(x.mem) : NULL;
	if (!o || !((json_object_object_get_ex(o, "token", &v) && json_object_is_type(v, json_type_string)) ||
		    (json_object_object_get_ex(o, "access_token", &v) && json_object_is_type(v, json_type_string)))) {
		isd_error(0, "getting a token from %s: no token in the answer", realm);
		r = -EBADMSG;
		goto out;
	}
	free(h->token);
	h->token = isd_xstrdup(json_object_get_string(v));
out:
	json_object_put(o);
	free(x.mem);
	xfer_reset_headers(&x);
	curl_easy_cleanup(c);
	return r;
}

/* One GET with the registry's token; retried once after a challenge, and
 * over http for an insecure host whose https does not answer. */
static int perform(struct isd_http *h, const char *path, const char *accept, uint64_t range_from, struct xfer *x,
		   long *code)
{
	bool tried_auth = false;

	for (;;) {
		_cleanup_free_ char *url = NULL, *auth = NULL, *acc = NULL, *range = NULL;
		struct curl_slist *hdrs = NULL;
		bool full_url = !strncmp(path, "https://", 8) || !strncmp(path, "http://", 7);
		CURLcode cr;

		url = full_url ? isd_xstrdup(path) : isd_xasprintf("%s://%s%s", h->scheme, h->host, path);
		base_options(h->curl, h->ca_file, h->insecure, h->curl_error);
		h->curl_error[0] = '\0';
		x->curl = h->curl;
		curl_easy_setopt(h->curl, CURLOPT_URL, url);
		if (accept) {
			acc = isd_xasprintf("Accept: %s", accept);
			hdrs = curl_slist_append(hdrs, acc);
		}
		if (h->token) {
			auth = isd_xasprintf("Authorization: Bearer %s", h->token);
			hdrs = curl_slist_append(hdrs, auth);
		}
		if (range_from) {
			range = isd_xasprintf("Range: bytes=%llu-", (unsigned long long)range_from);
			hdrs = curl_slist_append(hdrs, range);
		}
		curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, x);
		curl_easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(h->curl, CURLOPT_HEADERDATA, x);
		if (h->basic && !full_url)
			use_credentials(h->curl, &h->auth);
		if (x->progress) {
			curl_easy_setopt(h->curl, CURLOPT_NOPROGRESS, 0L);
			curl_easy_setopt(h->curl, CURLOPT_XFERINFOFUNCTION, on_xferinfo);
			curl_easy_setopt(h->curl, CURLOPT_XFERINFODATA, x);
		}
		xfer_reset_headers(x);
		cr = curl_easy_perform(h->curl);
		*code = response_code(h->curl);
		curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, NULL);
		curl_slist_free_all(hdrs);
		if (x->write_error)
			return isd_error(x->write_error, "writing the download of %s", url);
		if (x->too_big)
			return isd_error(0, "%s: the answer is larger than expected", url), -EFBIG;
		if (cr != CURLE_OK) {
			if (!full_url && h->insecure && !strcmp(h->scheme, "https") && !x->started &&
			    (cr == CURLE_SSL_CONNECT_ERROR || cr == CURLE_RECV_ERROR || cr == CURLE_GOT_NOTHING ||
			     cr == CURLE_WEIRD_SERVER_REPLY)) {
				h->scheme = "http";
				continue;
			}
			isd_error(0, "GET %s: %s", url, h->curl_error[0] ? h->curl_error : curl_easy_strerror(cr));
			if (cr == CURLE_PEER_FAILED_VERIFICATION || strstr(h->curl_error, "certificate"))
				isd_error_hint("fix: for a private CA, pass its certificate with --ca-file FILE (or ISD_CA_FILE)");
			return -EIO;
		}
		if (*code == 401 && !tried_auth && x->www_auth && !full_url) {
			bool bearer = !strncasecmp(x->www_auth, "Bearer ", 7);
			int r;

			tried_auth = true;
			r = load_auth(h);
			if (r < 0)
				return r;
			if (bearer) {
				r = fetch_token(h, x->www_auth);
				if (r < 0)
					return r;
				continue;
			}
			if (!strncasecmp(x->www_auth, "Basic", 5) && h->auth.user) {
				h->basic = true;
				continue;
			}
		}
		if (*code == 401) {
			_cleanup_free_ char *what = isd_xasprintf("GET %s", url);
			return unauthorized(h, what);
		}
		return 0;
	}
}

static const char *error_text(struct xfer *x)
{
	/* Registries answer errors with {"errors":[{"message":...}]}. */
	for (size_t i = 0; i < x->err_len; i++)
		if (x->err_body[i] == '\n' || x->err_body[i] == '\r')
			x->err_body[i] = ' ';
	x->err_body[x->err_len < 200 ? x->err_len : 200] = '\0';
	return x->err_body;
}

int isd_http_get_mem(struct isd_http *h, const char *path, const char *accept, size_t max, char **body,
		     size_t *len, char **content_type)
{
	struct xfer x = {.fd = -1, .max = max};
	long code = 0;
	int r = perform(h, path, accept, 0, &x, &code);

	if (r == 0 && (code < 200 || code > 299)) {
		isd_error(0, "GET %s%s: HTTP %ld %s", strncmp(path, "http", 4) ? h->host : "", path, code, error_text(&x));
		r = code == 404 ? -ENOENT : -EIO;
	}
	if (r < 0) {
		free(x.mem);
		xfer_reset_headers(&x);
		return r;
	}
	*body = x.mem ? x.mem : isd_xstrdup("");
	*len = x.len;
	if (content_type)
		*content_type = x.content_type ? isd_xstrdup(x.content_type) : NULL;
	xfer_reset_headers(&x);
	return 0;
}

int isd_http_get_file(struct isd_http *h, const char *path, int fd, uint64_t limit, char digest[80],
		      uint64_t *size, bool *resumed)
{
	struct xfer x = {.fd = fd, .limit = limit};
	struct stat st;
	long code = 0;
	int r;

	if (fstat(fd, &st) < 0)
		return isd_error(-errno, "checking a partial download");
	x.hash = isd_sha256_new();
	x.offset = (uint64_t)st.st_size;
	if (limit && x.offset >= limit)
		x.offset = 0; /* nothing to resume: a complete (or overlong) but unverified file */
	if (x.offset) {
		/* The kept part counts for the digest. */
		char buf[65536];
		uint64_t done = 0;
		while (done < x.offset) {
			ssize_t n = pread(fd, buf, sizeof(buf), (off_t)done);
			if (n <= 0) {
				isd_sha256_final(x.hash, digest);
				return isd_error(n < 0 ? -errno : -EIO, "reading a partial download");
			}
			isd_sha256_update(x.hash, buf, (size_t)n);
			done += (uint64_t)n;
		}
	} else if (ftruncate(fd, 0) < 0) {
		isd_sha256_final(x.hash, digest);
		return isd_error(-errno, "truncating a partial download");
	}
	x.progress = isd_progress_new(h->progress_label, x.offset);
	r = perform(h, path, NULL, x.offset, &x, &code);
	if (r == 0 && code == 416 && x.offset) {
		/* Range not satisfiable: the kept part is no prefix of what
		 * the server has; start over. */
		isd_sha256_final(x.hash, digest);
		x.hash = isd_sha256_new();
		x.offset = 0;
		if (ftruncate(fd, 0) < 0)
			r = isd_error(-errno, "truncating a partial download");
		else
			r = perform(h, path, NULL, 0, &x, &code);
	}
	if (r == 0 && (code < 200 || code > 299)) {
		isd_error(0, "GET %s%s: HTTP %ld %s", strncmp(path, "http", 4) ? h->host : "", path, code, error_text(&x));
		r = code == 404 ? -ENOENT : -EIO;
	}
	isd_sha256_final(x.hash, digest);
	xfer_reset_headers(&x);
	isd_progress_end(x.progress);
	if (r < 0)
		return r;
	*size = x.offset + x.written;
	*resumed = x.offset > 0 && !x.restarted;
	return 0;
}
