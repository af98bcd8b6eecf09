/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * isd build: a Dockerfile subset turned into an image tree in isd's store,
 * rootless.  The pieces, one file each under rootfs-builder/:
 *   dockerfile.c  parsing and Docker's variable expansion (pure)
 *   plan.c        instructions + build args -> expanded steps (pure)
 *   idmap.c       subordinate id ranges; running a function as root of a
 *                 user namespace with those ids (extraction, copies, rm)
 *   layer.c       applying a tar layer safely (chrooted, whiteouts, caps)
 *   oci.c         base images from a local OCI layout or oci-archive
 *   registry.c    FROM a registry (http.c: libcurl, tokens and Basic auth;
 *                 auth.c: credentials of auth.json; progress.c: the
 *                 download's progress line on a terminal)
 *   fedora.c      FROM fedora-release:NN (signed CHECKSUM, gpgv)
 *   store.c       image trees, meta.json, atomic publish, `isd image`
 *   build.c       `isd build`: the steps, the build key, RUN in a sandbox
 *   imagecfg.c    an image's meta.json applied by `isd exec --image`
 */
#ifndef ISD_BUILD_H
#define ISD_BUILD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "isd/image.h"
#include "isd/spec.h"

/* ------------------------------------------------------------------ */
/* Dockerfile                                                          */

enum isd_df_op {
	ISD_DF_FROM,
	ISD_DF_ARG,
	ISD_DF_ENV,
	ISD_DF_RUN,
	ISD_DF_WORKDIR,
	ISD_DF_USER,
	ISD_DF_COPY,
	ISD_DF_ADD,
	ISD_DF_LABEL,
	ISD_DF_CMD,
	ISD_DF_ENTRYPOINT,
};

struct isd_df_instruction {
	enum isd_df_op op;
	unsigned line;  /* where the instruction starts (1-based) */
	char **flags;   /* "--name=value" as written, NULL when none */
	char *text;     /* arguments as written, continuation lines joined */
	char **json;    /* exec form (JSON array); NULL for shell form */
};

struct isd_dockerfile {
	struct isd_df_instruction *ins;
	size_t n;
};

/* Parses the whole file; anything outside the supported subset (heredocs,
 * COPY --from, RUN --mount, ONBUILD, a second FROM, unknown instructions)
 * is refused with "NAME:LINE: ..." recorded. */
int isd_dockerfile_parse(const char *text, const char *name, struct isd_dockerfile *df);
void isd_dockerfile_free(struct isd_dockerfile *df);
const char *isd_df_op_name(enum isd_df_op op);

/* Variable lookup for expansion: NULL when unset. */
typedef const char *(*isd_df_lookup)(void *ctx, const char *name);

/* Docker's word processing: $V, ${V}, ${V:-x}, ${V-x}, ${V:+x}, ${V+x},
 * single quotes (literal), double quotes (expanding), backslash escapes.
 * _word keeps the whole text as one word (WORKDIR, USER, values);
 * _words splits at unquoted blanks (COPY/ADD sources, ENV/LABEL pairs). */
int isd_df_expand_word(const char *text, isd_df_lookup lookup, void *ctx, char **out);
int isd_df_expand_words(const char *text, isd_df_lookup lookup, void *ctx, char ***out);
/* The split alone: words at unquoted blanks, quotes and escapes kept. */
char **isd_df_split(const char *text);

/* Lookup over a NAME=VALUE vector (ctx is the char ** vector). */
const char *isd_df_strv_lookup(void *ctx, const char *name);
/* Set NAME=VALUE in a vector, replacing an earlier NAME. */
void isd_df_strv_set(char ***strv, const char *name, const char *value);

/* ------------------------------------------------------------------ */
/* Plan: the Dockerfile evaluated against build args, nothing executed  */

struct isd_build_step {
	enum isd_df_op op;
	unsigned line;
	char *display; /* "RUN dnf install ..." for progress and the build key */
	char **args;   /* RUN: argv; COPY/ADD: sources then destination;
			* WORKDIR/USER: one element */
	char **env;    /* RUN: the environment (ENV plus ARG values) */
	char *workdir; /* RUN, COPY, ADD: the working directory in effect */
	char *user;    /* RUN: the USER in effect ("" = root) */
	char *chown, *chmod, *checksum; /* COPY/ADD flags, expanded */
};

struct isd_build_plan {
	char *base;            /* FROM, expanded ("scratch", "oci:DIR[:REF]", ...) */
	unsigned from_line;
	struct isd_build_step *steps;
	size_t n_steps;
	/* The image's configuration at the end. */
	char **env;
	char *workdir;
	char *user;
	char **labels;     /* NAME=VALUE */
	char **cmd;        /* NULL when unset */
	char **entrypoint; /* NULL when unset */
	char **unused_args; /* --build-arg names no ARG declared */
};

int isd_build_plan_make(const struct isd_dockerfile *df, char *const *build_args,
			struct isd_build_plan *plan);
void isd_build_plan_free(struct isd_build_plan *plan);

/* ------------------------------------------------------------------ */
/* Layers                                                               */

struct isd_layer_opts {
	const char *expect_digest;  /* "sha256:HEX" of the blob as stored, or NULL */
	const char *expect_diff_id; /* "sha256:HEX" of the uncompressed tar, or NULL */
	bool whiteouts;             /* OCI .wh. files (layers: yes; ADD archives: no) */
	const char *subdir;         /* extract below this directory inside the root */
	uint64_t max_bytes;         /* uncompressed size cap, 0 = default */
	uint64_t max_entries;       /* entry count cap, 0 = default */
};

struct isd_layer_result {
	char diff_id[80];
	uint64_t bytes, entries;
	uint64_t ownership_flattened; /* entries whose owner could not be kept */
	/* Entries whose uid or gid lies beyond the map (ids above the
	 * subordinate range): given to root, set-id bits of files dropped.
	 * The first such entry's ids, for the warning. */
	uint64_t ids_unmapped;
	uint32_t unmapped_uid, unmapped_gid;
};

#define ISD_LAYER_DEFAULT_MAX_BYTES (64ULL << 30)
#define ISD_LAYER_DEFAULT_MAX_ENTRIES 4000000ULL

/* Applies the layer read from layer_fd to the tree at root (absolute host
 * path), inside a user namespace chrooted into root: nothing outside root
 * can be written, whatever the archive holds. */
int isd_layer_apply(const char *root, int layer_fd, const struct isd_idmap *map,
		    const struct isd_layer_opts *opts, struct isd_layer_result *res);
/* Warnings about owners that could not be kept ("what: ..."). */
void isd_layer_warn(const char *what, const struct isd_layer_result *res, const struct isd_idmap *map);

/* ------------------------------------------------------------------ */
/* Base images                                                          */

struct isd_base_image {
	char *digest;   /* manifest digest, "sha256:..." */
	char *blobdir;  /* directory holding sha256/<hex> blobs */
	char **layers;  /* layer digests, bottom first */
	char **media;   /* their media types */
	char **diff_ids;
	char **env;     /* config Env */
	char *workdir, *user;
	char **cmd, **entrypoint;
	uint64_t *layer_sizes; /* from the manifest, 0 = unknown */
	char *tmpdir;   /* unpacked oci-archive, removed by _free */
	/* Registry pulls: called for a blob missing from blobdir (manifest:
	 * a manifest or index rather than a config). */
	int (*fetch)(void *ctx, const char *digest, bool manifest);
	void *fetch_ctx;
};

/* "oci:DIR[:REF]" or "oci-archive:FILE[:REF]" (relative to context_dir). */
int isd_oci_open(const char *ref, const char *context_dir, struct isd_base_image *img);
/* img->blobdir set: the manifest (or index: this machine's platform) with
 * that digest, its config and its layer list. */
int isd_oci_load_manifest(struct isd_base_image *img, const char *digest);

struct isd_pull_opts {
	bool pull;  /* look a tag up again even when it is cached */
	bool quiet;
	const char *ca_file; /* CA bundle instead of the system's (else $ISD_CA_FILE) */
	const char *keyring; /* fedora-release: OpenPGP keys for the CHECKSUM (else the host's) */
};

/* FROM [REGISTRY/]REPO[:TAG][@sha256:...] (short names through aliases):
 * manifest, config and layers fetched into the blob cache
 * ($XDG_CACHE_HOME/isd/blobs), each verified against its digest; a cached
 * tag is used without network unless opts->pull. */
int isd_registry_open(const char *ref, const struct isd_pull_opts *opts, struct isd_base_image *img);
/* FROM fedora-release:NN: Fedora's Container-Base-Generic oci-archive for
 * this machine from a Fedora download site, found through the release's
 * CHECKSUM file, whose OpenPGP signature gpgv checks against opts->keyring
 * or the host's /etc/pki/rpm-gpg key before the archive's sha256 is taken
 * from it.  Cached like a registry tag. */
int isd_fedora_open(const char *ref, const struct isd_pull_opts *opts, struct isd_base_image *img);
void isd_base_image_free(struct isd_base_image *img);
bool isd_oci_is_local_ref(const char *ref);

/* ------------------------------------------------------------------ */
/* Store                                                                */

/* isd_store_dir() and isd_store_valid_name(): isd/image.h, the runtime's. */

struct isd_store_txn {
	char *name;
	char *image_dir; /* .../images/NAME */
	char *work;      /* .../images/NAME/.build-XXXXXX (renamed on commit) */
	char *rootfs;    /* work/rootfs */
	char *id;        /* set by commit */
	int lock_fd;
};

/* Takes NAME's build lock and creates a fresh work tree. */
int isd_store_begin(const char *name, struct isd_store_txn *txn);
/* Writes meta.json (text), moves the tree to NAME/<id> and switches
 * NAME/current to it atomically. */
int isd_store_commit(struct isd_store_txn *txn, const char *meta_json);
/* Removes the work tree (if any) and releases the lock. */
void isd_store_end(struct isd_store_txn *txn, const struct isd_idmap *map);

/* meta.json of NAME/current, or -ENOENT. */
int isd_store_read_meta(const char *name, char **out);

int isd_image_main(int argc, char **argv);
int isd_build_main(int argc, char **argv);

#endif
