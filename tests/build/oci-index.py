#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# oci-index.py LAYOUT TAG REF...: writes an OCI image index of the
# manifests LAYOUT's index.json names REF (each with the platform of its
# config), in that order, into LAYOUT's blobs and names it TAG.  umoci makes
# one image per tag; registries and isd need the index to pick a platform.
import hashlib, json, os, sys

layout, tag, refs = sys.argv[1], sys.argv[2], sys.argv[3:]
REF = "org.opencontainers.image.ref.name"


def blob(digest):
    with open(os.path.join(layout, "blobs", "sha256", digest.split(":", 1)[1]), "rb") as f:
        return f.read()


def put(data):
    digest = hashlib.sha256(data).hexdigest()
    with open(os.path.join(layout, "blobs", "sha256", digest), "wb") as f:
        f.write(data)
    return "sha256:" + digest


with open(os.path.join(layout, "index.json")) as f:
    top = json.load(f)
named = {d.get("annotations", {}).get(REF): d for d in top["manifests"]}
entries = []
for ref in refs:
    desc = dict(named[ref])
    desc.pop("annotations", None)
    config = json.loads(blob(json.loads(blob(desc["digest"]))["config"]["digest"]))
    desc["platform"] = {"architecture": config["architecture"], "os": config["os"]}
    entries.append(desc)
data = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                   "manifests": entries}).encode()
top["manifests"] = [d for d in top["manifests"] if d.get("annotations", {}).get(REF) != tag]
top["manifests"].append({"mediaType": "application/vnd.oci.image.index.v1+json", "digest": put(data),
                         "size": len(data), "annotations": {REF: tag}})
with open(os.path.join(layout, "index.json"), "w") as f:
    json.dump(top, f)
