#!/usr/bin/env python3
# Test helper for rtbuild: verifies a bundle's signed provenance with in-toto's own library (PyPI
# in-toto, on securesystemslib): the DSSE envelope's signature with the public key the verifier
# trusts, then every subject of the signed in-toto statement against the shipped files (the
# archive itself, and the files inside it, read with `tar --zstd`).
#
# usage: verify_envelope.py ENVELOPE.json PUBLIC_KEY.pem ARCHIVE.tar.zst
# prints one line per subject checked; exit 0 when everything verifies, 1 otherwise.
import hashlib
import json
import os
import subprocess
import sys

from cryptography.hazmat.primitives.serialization import load_pem_public_key
from in_toto.models.metadata import Envelope, SignatureVerificationError
from securesystemslib.signer import SSlibKey

envelope_path, key_path, archive = sys.argv[1:4]
with open(envelope_path, encoding="utf-8") as f:
    document = json.load(f)
keyid = document["signatures"][0]["keyid"]
envelope = Envelope.from_dict(document)  # takes the dict apart
with open(key_path, "rb") as f:
    key = SSlibKey.from_crypto(load_pem_public_key(f.read()), keyid=keyid)
try:
    envelope.verify_signature(key.to_dict() | {"keyid": keyid})
except SignatureVerificationError as e:
    print(f"signature: {e.__cause__ or e}")
    sys.exit(1)
print("signature: verified")

statement = json.loads(envelope.payload)
assert statement["_type"] == "https://in-toto.io/Statement/v1", statement["_type"]
failed = False
for subject in statement["subject"]:
    name, want = subject["name"], subject["digest"]["sha256"]
    if name == os.path.basename(archive):
        with open(archive, "rb") as f:
            data = f.read()
    else:
        listing = subprocess.run(["tar", "--zstd", "-tf", archive], capture_output=True, text=True)
        member = listing.stdout.split("/", 1)[0] + "/" + name
        read = subprocess.run(["tar", "--zstd", "-xOf", archive, member], capture_output=True)
        if read.returncode != 0:
            failed = True
            print(f"subject {name}: cannot be read from the archive")
            continue
        data = read.stdout
    got = hashlib.sha256(data).hexdigest()
    status = "ok" if got == want else f"sha256 {got}, signed {want}"
    failed |= got != want
    print(f"subject {name}: {status}")
sys.exit(1 if failed else 0)
