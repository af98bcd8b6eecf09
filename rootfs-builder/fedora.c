/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FROM fedora-release:NN: Fedora's own OCI archive of a release,
 *   URL/NN/Container/ARCH/images/Fedora-Container-Base-Generic-NN-V.ARCH.oci.tar.xz
 * (URL: `fedora-release-url` in registries.conf, else dl.fedoraproject.org).
 *
 * The directory's index page is read only to learn the name of the
 * release's CHECKSUM file (Fedora-Container-NN-V-ARCH-CHECKSUM: the
 * compose version V is not known in advance, and the page is the one thing
 * every mirror serves).  Nothing taken from the page is trusted: the
 * CHECKSUM is clearsigned, gpgv checks it against a keyring the user
 * chose (--keyring FILE, else the host's RPM-GPG-KEY-fedora-NN-primary),
 * and only the text gpgv wrote out as verified is read: the archive's name
 * and sha256 come from there.  The archive then goes through the blob cache
 * (verified while it streams, resumable) and is read by oci.c like any
 * oci-archive.  The digest found is kept in refs/ like a registry tag: a
 * rebuild needs no network unless --pull.
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/process.h"
#include "isd/util.h"
#include "internal.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_URL "https://dl.fedoraproject.org/pub/fedora/linux/releases"
#define DEFAULT_KEYDIR "/etc/pki/rpm-gpg"
#define LISTING_MAX (4u << 20)
#define CHECKSUM_MAX (1u << 20)
#define KEYRING_MAX (16u << 20)

struct fed {
	const struct isd_pull_opts *o;
	unsigned version;
	const char *arch;
	char *dir_url; /* ".../NN/Container/ARCH/images/" */
	char *tmpdir;  /* gpgv's home, the keyring and the CHECKSUM */
	char *label;
	char *key_src; /* the keyring as the user named it, for messages */
};

static void say(const struct fed *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct fed *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	isd_build_vsay(f->o->quiet, fmt, ap);
	va_end(ap);
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

/* Fedora's names order like versions ("1.10" after "1.9"). */
static void keep_newest(char **best, const char *s, size_t n)
{
	_cleanup_free_ char *name = strndup(s, n);

	if (name && (!*best || strverscmp(name, *best) > 0)) {
		free(*best);
		*best = isd_steal_ptr(name);
	}
}

/* Names of the form PREFIX...SUFFIX (file-name characters only) in text;
 * the newest one. */
static char *find_name(const char *text, size_t len, const char *prefix, const char *suffix)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);
	char *best = NULL;

	for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), prefix, pl)); p += pl) {
		size_t n = pl;

		if (p > text && name_char(p[-1]))
			continue;
		while (p + n < text + len && name_char(p[n]))
			n++;
		if (n >= pl + sl && !memcmp(p + n - sl, suffix, sl))
			keep_newest(&best, p, n);
	}
	return best;
}

static int b64_value(char c)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(tab, c) : NULL;

	return p ? (int)(p - tab) : -1;
}

/* ASCII armor (RFC 4880 §6.2) to the binary packets gpgv reads as a
 * keyring: every PUBLIC KEY BLOCK of the file, concatenated. */
static int dearmor(char *text, char **out, size_t *out_len)
{
	enum { OUTSIDE, HEADERS, BODY } state = OUTSIDE;
	char *save = NULL, *buf = isd_xmalloc(strlen(text) + 1);
	size_t n = 0, blocks = 0;
	unsigned acc = 0;
	int bits = 0;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, "\r")] = '\0';
		if (state == OUTSIDE) {
			if (!strcmp(line, "-----BEGIN PGP PUBLIC KEY BLOCK-----"))
				state = HEADERS, acc = 0, bits = 0;
			continue;
		}
		if (state == HEADERS) {
			if (strchr(line, ':'))
				continue;
			state = BODY;
		}
		if (!strncmp(line, "-----END PGP PUBLIC KEY BLOCK-----", 34)) {
			state = OUTSIDE;
			blocks++;
			continue;
		}
		if (line[0] == '=') /* the CRC-24 line; gpgv checks the packets' own signatures */
			continue;
		for (char *c = line; *c && *c != '='; c++) {
			int v = b64_value(*c);
			if (v < 0) {
				if (isspace((unsigned char)*c))
					continue;
				free(buf);
				return -EINVAL;
			}
			acc = (acc << 6) | (unsigned)v;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				buf[n++] = (char)((acc >> bits) & 0xff);
			}
		}
	}
	if (!blocks || state != OUTSIDE) {
		free(buf);
		return -EINVAL;
	}
	*out = buf;
	*out_len = n;
	return 0;
}

static int write_new(const char *path, const void *data, size_t len)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0 || isd_write_all(fd, data, len) < 0)
		return isd_error(-errno, "writing %s", path);
	return 0;
}

/* The keyring as gpgv reads it, copied into f->tmpdir (armored keys
 * dearmored there, so RPM-GPG-KEY files and .asc exports both work). */
static int prepare_keyring(struct fed *f, char **path_out)
{
	const char *dir = getenv("ISD_RPM_GPG_DIR"); /* tests */
	_cleanup_free_ char *host_key = isd_xasprintf("%s/RPM-GPG-KEY-fedora-%u-primary",
						      dir && dir[0] ? dir : DEFAULT_KEYDIR, f->version);
	_cleanup_free_ char *text = NULL, *bin = NULL, *path = NULL;
	const char *src = f->o->keyring ? f->o->keyring : host_key;
	size_t len = 0, bin_len = 0;
	int r = isd_read_file_at(AT_FDCWD, src, &text, &len);

	if (r < 0) {
		if (f->o->keyring)
			isd_error(r, "reading the keyring %s", src);
		else
			isd_error(r, "no OpenPGP key to check Fedora %u's signed CHECKSUM with (%s)", f->version, src);
		isd_error_hint("fix: install Fedora's keys (dnf install fedora-gpg-keys: %s), "
			       "or pass a keyring you trust with isd build --keyring FILE",
			       host_key);
		return r;
	}
	if (len > KEYRING_MAX)
		return isd_error(0, "the keyring %s is too large", src), -EFBIG;
	path = isd_xasprintf("%s/keyring.gpg", f->tmpdir);
	if (memmem(text, len, "-----BEGIN PGP", 14)) {
		if (strlen(text) != len || dearmor(text, &bin, &bin_len) < 0)
			return isd_error(0, "%s is not an OpenPGP public key block", src), -EINVAL;
		r = write_new(path, bin, bin_len);
	} else {
		r = write_new(path, text, len);
	}
	if (r < 0)
		return r;
	*path_out = isd_steal_ptr(path);
	f->key_src = isd_xstrdup(src);
	return 0;
}

static int memfd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* gpgv --output - FILE: the signed content of FILE, only when a key of
 * the keyring made a good signature over it (gpgv's exit status). */
static int gpgv_verify(struct fed *f, const char *keyring, const char *file, char **verified)
{
	_cleanup_close_ int out = memfd("gpgv-out"), err = memfd("gpgv-err");
	_cleanup_free_ char *errtext = NULL;
	int status = 0, r;
	size_t len;
	pid_t pid;

	if (out < 0 || err < 0)
		return isd_error(out < 0 ? out : err, "creating gpgv's output file");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return isd_error(-errno, "starting gpgv");
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(126);
		/* An empty home: the user's own keyrings and trust never count. */
		execlp("gpgv", "gpgv", "--homedir", f->tmpdir, "--keyring", keyring, "--output", "-", file,
		       (char *)NULL);
		_exit(127);
	}
	r = isd_wait_pid(pid, &status);
	if (r < 0)
		return isd_error(r, "waiting for gpgv");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		isd_error(0, "gpgv, which checks the CHECKSUM's signature, is not installed");
		isd_error_hint("fix: apt-get install gpgv (Debian), dnf install gnupg2 (Fedora)");
		return -ENOENT;
	}
	if (lseek(err, 0, SEEK_SET) < 0 || isd_read_fd(err, &errtext, &len) < 0)
		errtext = isd_xstrdup("");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* gpgv's lines as one: "gpgv: " prefixes and runs of blanks dropped. */
		char *w = errtext;
		for (const char *c = errtext; *c; c++) {
			if (!strncmp(c, "gpgv: ", 6)) {
				c += 5;
				continue;
			}
			if (isspace((unsigned char)*c) && (w == errtext || w[-1] == ' '))
				continue;
			*w++ = isspace((unsigned char)*c) ? ' ' : *c;
		}
		if (w > errtext && w[-1] == ' ')
			w--;
		*w = '\0';
		if (strlen(errtext) > 300)
			errtext[300] = '\0';
		isd_error(0, "the CHECKSUM file's signature is not good for the keyring %s (gpgv: %s)", f->key_src,
			  errtext);
		return -EBADMSG;
	}
	if (lseek(out, 0, SEEK_SET) < 0 || isd_read_fd(out, verified, &len) < 0)
		return isd_error(-EIO, "reading gpgv's output");
	if (strlen(*verified) != len) {
		free(*verified);
		*verified = NULL;
		return isd_error(0, "the signed CHECKSUM holds binary data"), -EBADMSG;
	}
	return 0;
}

/* The archive's line in the verified CHECKSUM, in either of the formats
 * sha256sum writes: "SHA256 (NAME) = HEX" (Fedora's) or "HEX  NAME". */
static int find_archive(struct fed *f, char *verified, char **name_out, char digest[80])
{
	_cleanup_free_ char *prefix = isd_xasprintf("Fedora-Container-Base-Generic-%u-", f->version);
	_cleanup_free_ char *suffix = isd_xasprintf(".%s.oci.tar.xz", f->arch);
	_cleanup_free_ char *best = NULL, *best_hex = NULL;
	char *save = NULL;

	for (char *line = strtok_r(verified, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char buf[256], hex[65], *name = buf;
		size_t n;

		line[strcspn(line, "\r")] = '\0';
		if (sscanf(line, "SHA256 (%255[^)]) = %64[0-9a-f]", buf, hex) != 2 &&
		    sscanf(line, "%64[0-9a-f] %255s", hex, buf) != 2)
			continue;
		if (name[0] == '*') /* sha256sum's binary-mode mark */
			name++;
		n = strlen(name);
		if (strlen(hex) != 64 || strncmp(name, prefix, strlen(prefix)) || n < strlen(suffix) ||
		    strcmp(name + n - strlen(suffix), suffix))
			continue;
		for (size_t i = 0; i < n; i++)
			if (!name_char(name[i]))
				goto next;
		if (!best || strverscmp(name, best) > 0) {
			free(best);
			free(best_hex);
			best = isd_xstrdup(name);
			best_hex = isd_xstrdup(hex);
		}
	next:;
	}
	if (!best)
		return isd_error(0, "the signed CHECKSUM names no %s*%s", prefix, suffix), -ENOENT;
	snprintf(digest, 80, "sha256:%s", best_hex);
	*name_out = isd_steal_ptr(best);
	return 0;
}

/* Index page -> CHECKSUM -> gpgv -> the archive into the blob cache. */
static int download(struct fed *f, const char *blobdir, char digest[80], char **name_out)
{
	_cleanup_free_ char *base = NULL, *host = NULL, *listing = NULL, *sum_name = NULL, *sum = NULL;
	_cleanup_free_ char *keyring = NULL, *sum_path = NULL, *verified = NULL, *name = NULL, *url = NULL;
	_cleanup_free_ char *prefix = NULL, *suffix = NULL;
	struct isd_http *h = NULL;
	size_t len;
	int r;

	r = isd_fedora_release_url(&base);
	if (r < 0)
		return r;
	if (!base)
		base = isd_xstrdup(DEFAULT_URL);
	base[strcspn(base, "?#")] = '\0';
	while (base[0] && base[strlen(base) - 1] == '/')
		base[strlen(base) - 1] = '\0';
	if ((strncmp(base, "https://", 8) && strncmp(base, "http://", 7)) || isd_url_host(base, &host) < 0)
		return isd_error(0, "fedora-release-url %s is not an http(s) URL without user:password@", base), -EINVAL;
	if (!strncmp(base, "http://", 7) && !isd_reg_host_insecure(host)) {
		r = isd_error(0, "plain http is only used for loopback and 'insecure' hosts (%s)", base);
		isd_error_hint("fix: use https://, or add 'insecure %s' to %s", host, isd_registries_conf_path());
		return r;
	}
	/* Before any request: without a key nothing downloaded could be used. */
	r = prepare_keyring(f, &keyring);
	if (r < 0)
		return r;
	f->dir_url = isd_xasprintf("%s/%u/Container/%s/images/", base, f->version, f->arch);
	h = isd_http_new(host, f->o->ca_file);
	if (!h)
		return -ENOMEM;
	say(f, "  %s: looking in %s", f->label, f->dir_url);
	r = isd_http_get_mem(h, f->dir_url, NULL, LISTING_MAX, &listing, &len, NULL);
	if (r < 0)
		goto out;
	prefix = isd_xasprintf("Fedora-Container-%u-", f->version);
	suffix = isd_xasprintf("-%s-CHECKSUM", f->arch);
	sum_name = find_name(listing, len, prefix, suffix);
	if (!sum_name) {
		r = isd_error(0, "%s lists no %s*%s file", f->dir_url, prefix, suffix);
		r = -ENOENT;
		goto out;
	}
	url = isd_xasprintf("%s%s", f->dir_url, sum_name);
	r = isd_http_get_mem(h, url, NULL, CHECKSUM_MAX, &sum, &len, NULL);
	if (r < 0)
		goto out;
	sum_path = isd_xasprintf("%s/CHECKSUM", f->tmpdir);
	r = write_new(sum_path, sum, len);
	if (r < 0)
		goto out;
	r = gpgv_verify(f, keyring, sum_path, &verified);
	if (r < 0)
		goto out;
	r = find_archive(f, verified, &name, digest);
	if (r < 0)
		goto out;
	say(f, "  %s: %s (signature good: %s)", f->label, name, sum_name);
	free(url);
	url = isd_xasprintf("%s%s", f->dir_url, name);
	r = isd_cache_fetch(h, blobdir, url, digest, ISD_LAYER_DEFAULT_MAX_BYTES, f->o->quiet, name);
	if (r < 0)
		goto out;
	*name_out = isd_steal_ptr(name);
out:
	isd_http_free(h);
	return r;
}

static int parse_ref(const char *ref, unsigned *version)
{
	const char *v = ref + strlen("fedora-release:");
	char *end = NULL;
	unsigned long n;

	if (!isdigit((unsigned char)v[0]))
		return -EINVAL;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n == 0 || n > 9999)
		return -EINVAL;
	*version = (unsigned)n;
	return 0;
}

/* refs/fedora-release-NN-ARCH: "sha256:HEX NAME" of the last verified
 * archive. */
static int read_ref(const char *path, const char *blobdir, char digest[80])
{
	_cleanup_free_ char *text = NULL, *blob = NULL;
	int r = isd_read_file_at(AT_FDCWD, path, &text, NULL);

	if (r < 0)
		return r;
	text[strcspn(text, " \n")] = '\0';
	if (!isd_digest_valid(text))
		return -EINVAL;
	blob = isd_xasprintf("%s/sha256/%s", blobdir, text + 7);
	if (access(blob, F_OK) < 0)
		return -errno;
	snprintf(digest, 80, "%s", text);
	return 0;
}

static int write_ref(const char *refdir, const char *path, const char *digest, const char *name)
{
	_cleanup_free_ char *line = isd_xasprintf("%s %s\n", digest, name);
	int r = isd_mkdir_p(refdir, 0700);

	if (r < 0)
		return isd_error(r, "creating %s", refdir);
	return isd_replace_file_at(AT_FDCWD, path, line, strlen(line), 0600, false);
}

static const char *fedora_arch(void)
{
	static struct utsname u;

	if (uname(&u) < 0)
		return "x86_64";
	if (!strcmp(u.machine, "i686") || !strcmp(u.machine, "i386"))
		return "i386";
	return u.machine; /* Fedora's names: x86_64 aarch64 ppc64le s390x */
}

int isd_fedora_open(const char *ref, const struct isd_pull_opts *o, struct isd_base_image *img)
{
	struct fed f = {.o = o, .label = isd_xstrdup(ref), .arch = fedora_arch()};
	_cleanup_free_ char *cache = isd_cache_dir(), *blobdir = NULL, *shadir = NULL, *refdir = NULL;
	_cleanup_free_ char *refpath = NULL, *blob = NULL, *name = NULL;
	const char *tmp = getenv("TMPDIR");
	char digest[80];
	int r;

	memset(img, 0, sizeof(*img));
	if (parse_ref(ref, &f.version) < 0) {
		r = isd_error(0, "%s: expected fedora-release:NN (a Fedora release number, e.g. fedora-release:41)", ref);
		goto out;
	}
	blobdir = isd_xasprintf("%s/blobs", cache);
	shadir = isd_xasprintf("%s/sha256", blobdir);
	refdir = isd_xasprintf("%s/refs", cache);
	refpath = isd_xasprintf("%s/fedora-release-%u-%s", refdir, f.version, f.arch);
	r = isd_mkdir_p(shadir, 0700);
	if (r < 0) {
		isd_error(r, "creating the blob cache %s", shadir);
		goto out;
	}
	if (o->pull || read_ref(refpath, blobdir, digest) < 0) {
		f.tmpdir = isd_xasprintf("%s/isd-fedora-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
		if (!mkdtemp(f.tmpdir)) {
			r = isd_error(-errno, "creating %s", f.tmpdir);
			free(f.tmpdir);
			f.tmpdir = NULL;
			goto out;
		}
		r = download(&f, blobdir, digest, &name);
		if (r < 0)
			goto out;
		r = write_ref(refdir, refpath, digest, name);
		if (r < 0)
			goto out;
	}
	blob = isd_xasprintf("%s/sha256/%s", blobdir, digest + 7);
	r = isd_oci_open_path(ref, blob, true, NULL, img);
out:
	if (f.tmpdir) {
		_cleanup_close_ int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		isd_rm_rf_at(dfd, f.tmpdir + 1);
		free(f.tmpdir);
	}
	free(f.dir_url);
	free(f.label);
	free(f.key_src);
	if (r < 0)
		isd_base_image_free(img);
	return r;
}
