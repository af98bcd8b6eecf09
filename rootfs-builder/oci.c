/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Base images from the local disk, so that builds work offline:
 *   FROM oci:DIR[:REF]           an OCI image layout (skopeo, umoci, buildah)
 *   FROM oci-archive:FILE[:REF]  the same as a tar
 * The index may point at an image index (multi-platform): the manifest for
 * the running machine is chosen.  Every blob read here (index entries,
 * manifest, config) is checked against its digest; layers are checked
 * while they are extracted (layer.c).
 */
#define _GNU_SOURCE
#include "isd/build.h"
#include "isd/util.h"
#include "internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define REF_ANNOTATION "org.opencontainers.image.ref.name"

bool isd_oci_is_local_ref(const char *ref)
{
	return !strncmp(ref, "oci:", 4) || !strncmp(ref, "oci-archive:", 12);
}

void isd_base_image_free(struct isd_base_image *img)
{
	free(img->digest);
	free(img->blobdir);
	isd_strv_free(img->layers);
	isd_strv_free(img->media);
	isd_strv_free(img->diff_ids);
	isd_strv_free(img->env);
	free(img->workdir);
	free(img->user);
	isd_strv_free(img->cmd);
	isd_strv_free(img->entrypoint);
	free(img->layer_sizes);
	if (img->tmpdir) {
		_cleanup_close_ int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		isd_rm_rf_at(dfd, img->tmpdir + 1);
		free(img->tmpdir);
	}
	memset(img, 0, sizeof(*img));
}

#define valid_digest isd_digest_valid

/* A blob's content, checked against its digest.  A registry pull fetches
 * what is not cached yet (manifest: a manifest or index, else a blob). */
static int read_blob(struct isd_base_image *img, const char *digest, bool manifest, char **out)
{
	const char *blobdir = img->blobdir;
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	char got[80];
	size_t len;
	int r;

	if (!valid_digest(digest))
		return isd_error(0, "unsupported or malformed digest '%s' (sha256 only)", digest ? digest : "");
	path = isd_xasprintf("%s/sha256/%s", blobdir, digest + 7);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT && img->fetch) {
		r = img->fetch(img->fetch_ctx, digest, manifest);
		if (r < 0)
			return r;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	}
	if (fd < 0)
		return isd_error(-errno, "opening blob %s", path);
	r = isd_read_fd(fd, out, &len);
	if (r < 0)
		return isd_error(r, "reading blob %s", path);
	{
		struct isd_sha256 *h = isd_sha256_new();
		isd_sha256_update(h, *out, len);
		isd_sha256_final(h, got);
	}
	if (strcmp(got, digest)) {
		free(*out);
		*out = NULL;
		return isd_error(-EBADMSG, "blob %s does not match its digest (got %s)", path, got);
	}
	return 0;
}

static const char *str_field(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static char **strv_field(json_object *o, const char *key)
{
	json_object *v;
	char **out;
	size_t n;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	n = json_object_array_length(v);
	out = isd_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0, k = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		if (json_object_is_type(e, json_type_string))
			out[k++] = isd_xstrdup(json_object_get_string(e));
	}
	return out;
}

/* GOARCH names, as in image indexes. */
static const char *machine_arch(void)
{
	static struct utsname u;

	if (uname(&u) < 0)
		return "amd64";
	if (!strcmp(u.machine, "x86_64"))
		return "amd64";
	if (!strcmp(u.machine, "aarch64"))
		return "arm64";
	if (!strncmp(u.machine, "armv7", 5))
		return "arm";
	if (!strcmp(u.machine, "i686") || !strcmp(u.machine, "i386"))
		return "386";
	return u.machine; /* ppc64le, s390x, riscv64 */
}

static bool is_index(const char *media)
{
	return media && (!strcmp(media, MT_OCI_INDEX) || !strcmp(media, MT_DOCKER_LIST));
}

/* The manifest descriptor of an index for this machine. */
static json_object *pick_platform(json_object *manifests)
{
	size_t n = json_object_array_length(manifests);

	for (size_t i = 0; i < n; i++) {
		json_object *d = json_object_array_get_idx(manifests, i), *p;
		if (!json_object_object_get_ex(d, "platform", &p))
			continue;
		if (!strcmp(str_field(p, "os") ? str_field(p, "os") : "", "linux") &&
		    !strcmp(str_field(p, "architecture") ? str_field(p, "architecture") : "", machine_arch()))
			return d;
	}
	return NULL;
}

static int load_config(struct isd_base_image *img, const char *config_digest)
{
	_cleanup_free_ char *text = NULL;
	json_object *cfg, *c = NULL, *rootfs = NULL;
	int r = read_blob(img, config_digest, false, &text);

	if (r < 0)
		return r;
	cfg = json_tokener_parse(text);
	if (!cfg)
		return isd_error(0, "image config %s is not JSON", config_digest);
	json_object_object_get_ex(cfg, "config", &c);
	json_object_object_get_ex(cfg, "rootfs", &rootfs);
	img->diff_ids = strv_field(rootfs, "diff_ids");
	img->env = strv_field(c, "Env");
	img->cmd = strv_field(c, "Cmd");
	img->entrypoint = strv_field(c, "Entrypoint");
	if (str_field(c, "WorkingDir") && str_field(c, "WorkingDir")[0])
		img->workdir = isd_xstrdup(str_field(c, "WorkingDir"));
	if (str_field(c, "User") && str_field(c, "User")[0])
		img->user = isd_xstrdup(str_field(c, "User"));
	json_object_put(cfg);
	if (isd_strv_len(img->diff_ids) != isd_strv_len(img->layers))
		return isd_error(0, "image config %s lists %zu diff_ids for %zu layers", config_digest,
				 isd_strv_len(img->diff_ids), isd_strv_len(img->layers));
	return 0;
}

/* Follows descriptor (from index.json or an index) down to a manifest. */
static int load_descriptor(struct isd_base_image *img, json_object *desc, int depth)
{
	const char *digest = str_field(desc, "digest"), *media = str_field(desc, "mediaType");
	_cleanup_free_ char *text = NULL;
	json_object *m, *layers, *config;
	int r;

	if (depth > 4)
		return isd_error(0, "image indexes nested too deeply");
	r = read_blob(img, digest, true, &text);
	if (r < 0)
		return r;
	m = json_tokener_parse(text);
	if (!m)
		return isd_error(0, "manifest %s is not JSON", digest);
	if (!media)
		media = str_field(m, "mediaType");
	if (is_index(media) || json_object_object_get_ex(m, "manifests", NULL)) {
		json_object *list, *d;
		if (!json_object_object_get_ex(m, "manifests", &list) || !(d = pick_platform(list))) {
			json_object_put(m);
			return isd_error(0, "image index %s has no manifest for linux/%s", digest, machine_arch());
		}
		r = load_descriptor(img, d, depth + 1);
		json_object_put(m);
		return r;
	}
	free(img->digest);
	img->digest = isd_xstrdup(digest);
	if (!json_object_object_get_ex(m, "layers", &layers) || !json_object_object_get_ex(m, "config", &config)) {
		json_object_put(m);
		return isd_error(0, "manifest %s has no config or layers", digest);
	}
	for (size_t i = 0; i < json_object_array_length(layers); i++) {
		json_object *l = json_object_array_get_idx(layers, i);
		const char *ld = str_field(l, "digest"), *lm = str_field(l, "mediaType");
		if (!valid_digest(ld)) {
			json_object_put(m);
			return isd_error(0, "manifest %s: layer %zu has an unsupported digest", digest, i);
		}
		isd_strv_push(&img->layers, isd_xstrdup(ld));
		isd_strv_push(&img->media, isd_xstrdup(lm ? lm : ""));
		img->layer_sizes = isd_xrealloc(img->layer_sizes, (i + 1) * sizeof(uint64_t));
		{
			json_object *sz;
			int64_t v = json_object_object_get_ex(l, "size", &sz) ? json_object_get_int64(sz) : 0;
			img->layer_sizes[i] = v > 0 ? (uint64_t)v : 0;
		}
	}
	if (!img->layers)
		img->layers = isd_xcalloc(1, sizeof(char *));
	{
		_cleanup_free_ char *cd = isd_xstrdup(str_field(config, "digest") ? str_field(config, "digest") : "");
		json_object_put(m);
		return load_config(img, cd);
	}
}

int isd_oci_load_manifest(struct isd_base_image *img, const char *digest)
{
	json_object *desc = json_object_new_object();
	int r;

	json_object_object_add(desc, "digest", json_object_new_string(digest));
	r = load_descriptor(img, desc, 0);
	json_object_put(desc);
	return r;
}

/* An oci-archive is a tar of a layout: unpacked (safely: no "..", no
 * absolute names, nothing through symlinks) into a private directory. */
static int unpack_archive(const char *file, char **dir_out)
{
	const char *tmp = getenv("TMPDIR");
	_cleanup_free_ char *dir = isd_xasprintf("%s/isd-oci-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	struct archive *in, *out;
	struct archive_entry *e;
	int cwd = -1, r = 0;

	if (!mkdtemp(dir))
		return isd_error(-errno, "creating a directory for %s", file);
	in = archive_read_new();
	archive_read_support_filter_all(in);
	archive_read_support_format_tar(in);
	out = archive_write_disk_new();
	archive_write_disk_set_options(out, ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS |
						    ARCHIVE_EXTRACT_SECURE_SYMLINKS);
	if (archive_read_open_filename(in, file, 65536) != ARCHIVE_OK) {
		r = isd_error(-EIO, "opening %s: %s", file, archive_error_string(in));
		goto out;
	}
	/* libarchive writes relative to the working directory, and refuses
	 * absolute names: work from inside the new directory. */
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0 || chdir(dir) < 0) {
		r = isd_error(-errno, "entering %s", dir);
		goto out;
	}
	while (r == 0) {
		int ar = archive_read_next_header(in, &e);

		if (ar == ARCHIVE_EOF)
			break;
		if (ar < ARCHIVE_WARN) {
			r = isd_error(-EIO, "reading %s: %s", file, archive_error_string(in));
			break;
		}
		if (archive_entry_filetype(e) != AE_IFREG && archive_entry_filetype(e) != AE_IFDIR)
			continue;
		archive_entry_set_perm(e, archive_entry_filetype(e) == AE_IFDIR ? 0700 : 0600);
		if (archive_read_extract2(in, e, out) < ARCHIVE_WARN)
			r = isd_error(-EIO, "unpacking %s: %s", file, archive_error_string(out));
	}
out:
	archive_read_free(in);
	archive_write_free(out);
	if (cwd >= 0) {
		if (fchdir(cwd) < 0 && r == 0)
			r = isd_error(-errno, "returning to the working directory");
		close(cwd);
	}
	if (r < 0) {
		_cleanup_close_ int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		isd_rm_rf_at(dfd, dir + 1);
		return r;
	}
	*dir_out = isd_steal_ptr(dir);
	return 0;
}

int isd_oci_open(const char *ref, const char *context_dir, struct isd_base_image *img)
{
	bool archive = !strncmp(ref, "oci-archive:", 12);
	_cleanup_free_ char *spec = isd_xstrdup(ref + (archive ? 12 : 4)), *path = NULL;
	const char *want = NULL;
	char *colon = strrchr(spec, ':');

	memset(img, 0, sizeof(*img));
	if (colon && !strchr(colon, '/')) {
		*colon = '\0';
		want = colon + 1;
	}
	if (!spec[0])
		return isd_error(0, "FROM %s: missing path", ref);
	path = spec[0] == '/' ? isd_xstrdup(spec) : isd_xasprintf("%s/%s", context_dir, spec);
	return isd_oci_open_path(ref, path, archive, want, img);
}

int isd_oci_open_path(const char *ref, const char *layout, bool archive, const char *want,
		      struct isd_base_image *img)
{
	_cleanup_free_ char *path = isd_xstrdup(layout), *index_text = NULL, *index_path = NULL;
	json_object *index = NULL, *manifests, *chosen = NULL;
	size_t n;
	int r;

	memset(img, 0, sizeof(*img));
	if (archive) {
		r = unpack_archive(path, &img->tmpdir);
		if (r < 0)
			return r;
		free(path);
		path = isd_xstrdup(img->tmpdir);
	}
	img->blobdir = isd_xasprintf("%s/blobs", path);
	index_path = isd_xasprintf("%s/index.json", path);
	r = isd_read_file_at(AT_FDCWD, index_path, &index_text, NULL);
	if (r < 0)
		return isd_error(r, "FROM %s: reading %s", ref, index_path);
	index = json_tokener_parse(index_text);
	if (!index || !json_object_object_get_ex(index, "manifests", &manifests) ||
	    !json_object_is_type(manifests, json_type_array)) {
		json_object_put(index);
		return isd_error(0, "FROM %s: %s is not an OCI image index", ref, index_path);
	}
	n = json_object_array_length(manifests);
	for (size_t i = 0; i < n; i++) {
		json_object *d = json_object_array_get_idx(manifests, i), *ann;
		const char *name = json_object_object_get_ex(d, "annotations", &ann) ? str_field(ann, REF_ANNOTATION) : NULL;

		if (want ? (name && !strcmp(name, want)) : n == 1)
			chosen = d;
	}
	if (!chosen) {
		r = isd_error(0, want ? "FROM %s: no image named '%s' in %s" : "FROM %s: %s%s holds several images; name one with :REF",
			      ref, want ? want : "", path);
		json_object_put(index);
		return r;
	}
	r = load_descriptor(img, chosen, 0);
	json_object_put(index);
	if (r < 0)
		return isd_error_prefix(r, "FROM %s: ", ref);
	return 0;
}
