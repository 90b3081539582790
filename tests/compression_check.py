#!/usr/bin/env python3
"""Reads every path of a running resetctl the way real clients do, with
httpx (its default `Accept-Encoding: gzip, deflate, br, zstd`, decoded by
brotli and zstandard as installed) and with the exact headers other
clients send, and prints what each got: the coding on the wire, the bytes
on the wire, and the SHA-256 of the body its decoder read back.

Usage: compression_check.py ORIGIN < paths.json   (a JSON list of paths)
tests/compression.rs compares the digests with the identity bodies."""
import hashlib, json, sys

import httpx

# The Accept-Encoding each client sends by default (its own source or docs).
CLIENTS = {
    "httpx": None,  # httpx's own default, with brotli and zstandard installed
    "go net/http": "gzip",  # Go's Transport adds exactly this
    "python requests": "gzip, deflate",  # urllib3 without brotli
    "node fetch": "gzip, deflate, br",  # undici
}

origin = sys.argv[1]
paths = json.load(sys.stdin)
out = {"httpxDefault": httpx.Client().headers["accept-encoding"], "results": []}
with httpx.Client(base_url=origin, timeout=30) as client:
    for path in paths:
        for name, accept in CLIENTS.items():
            headers = {} if accept is None else {"Accept-Encoding": accept}
            r = client.get(path, headers=headers)
            body = r.content  # decoded by httpx's decoder for the coding named
            out["results"].append({
                "path": path,
                "client": name,
                "status": r.status_code,
                "contentEncoding": r.headers.get("content-encoding"),
                "contentLength": r.headers.get("content-length"),
                "wireBytes": r.num_bytes_downloaded,
                "vary": r.headers.get("vary"),
                "etag": r.headers.get("etag"),
                "sha256": hashlib.sha256(body).hexdigest(),
            })
json.dump(out, sys.stdout)
