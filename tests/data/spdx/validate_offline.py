#!/usr/bin/env python3
# Test helper for rtbuild: runs spdx3-validate (PyPI) on SPDX 3 documents without the network.
# spdx3-validate reads the JSON schema, the SHACL model and the JSON-LD context from spdx.org
# through urllib (its own reader and rdflib's both end in urllib.request.urlopen); this installs
# an opener that answers those three URLs from the official files in RDF_DIR (spdx/spdx-spec
# gh-pages v3.0.1/rdf/, unpacked from ../shared/upstream/spdx-3.0.1-rdf.tar.gz) and refuses
# every other URL, so a validation that needed the network fails instead of reaching it.
#
# usage: validate_offline.py RDF_DIR DOCUMENT.spdx.json...
# exit: spdx3-validate's (0 valid, 1 invalid), 3 when something asked for another URL.
import io
import os
import sys
import urllib.error
import urllib.request
from email.message import Message
from urllib.response import addinfourl

rdf_dir = sys.argv[1]
LOCAL = {
    "https://spdx.org/schema/3.0.1/spdx-json-schema.json": ("schema.json", "application/json"),
    "https://spdx.org/rdf/3.0.1/spdx-model.ttl": ("spdx-model.ttl", "text/turtle"),
    "https://spdx.org/rdf/3.0.1/spdx-context.jsonld": (
        "spdx-context.jsonld",
        "application/ld+json",
    ),
}


class LocalCopies(urllib.request.BaseHandler):
    """Answers the SPDX 3.0.1 URLs from RDF_DIR; any other http(s) URL is refused."""

    handler_order = 100  # before urllib's own HTTP(S) handlers

    def _answer(self, request):
        url = request.full_url
        if url not in LOCAL:
            print(f"validate_offline: refused a network request for {url}", file=sys.stderr)
            sys.exit(3)
        name, kind = LOCAL[url]
        with open(os.path.join(rdf_dir, name), "rb") as f:
            body = f.read()
        headers = Message()
        headers["Content-Type"] = kind
        headers["Content-Length"] = str(len(body))
        response = addinfourl(io.BytesIO(body), headers, url, 200)
        response.msg = "OK"
        return response

    https_open = _answer
    http_open = _answer


urllib.request.install_opener(urllib.request.build_opener(LocalCopies()))

from spdx3_validate.main import main  # noqa: E402  (after the opener is in place)

args = ["--quiet", "--no-merge"]  # each document on its own (the merged check doubles the time)
for document in sys.argv[2:]:
    args += ["--json", document]
sys.exit(main(args))
