#!/usr/bin/env python3
"""What gzip 9, brotli 11 and zstd 19 make of the server's small and typical
bodies (docs/benchmarks.md, "Compressed bodies"): starts `resetctl serve` on
the bundled history, reads each body as identity, compresses it with
Python's gzip, brotli and zstandard, and prints a Markdown table.

Usage: .venv/bin/python bench/coded_sizes.py   (make test-deps installs brotli
and zstandard into .venv)"""
import gzip, os, socket, subprocess, sys, tempfile, time, urllib.error, urllib.request

import brotli, zstandard

from common import BIN, commit

PATHS = [("422 error body", "/openapi/v1/records?page=0"), ("badge", "/openapi/v1/badge.json"),
         ("latest, kind=reset_scheduled", "/openapi/v1/records/latest?kind=reset_scheduled"),
         ("latest", "/openapi/v1/records/latest"), ("records, pageSize=1", "/openapi/v1/records?pageSize=1"),
         ("records, pageSize=2", "/openapi/v1/records?pageSize=2"), ("records (10)", "/openapi/v1/records")]
# What a coded answer adds: "content-encoding: br\r\n" and the tag's "-br".
ADDED = 25


def body(base, path):
    try:
        with urllib.request.urlopen(base + path) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        return e.read()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        subprocess.run([BIN, "--data-dir", data, "--now", "2026-11-20T10:00:00.000Z", "seed"], check=True, capture_output=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen([BIN, "--data-dir", data, "--log", "warn", "serve", "--no-rate-limit",
                                   "--listen", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(100):
                try:
                    urllib.request.urlopen(base + "/healthz")
                    break
                except OSError:
                    time.sleep(0.05)
            print(f"Commit: {commit()}\n")
            print(f"| body | identity | gzip -9 | br 11 | zstd 19 | best saving after `content-encoding: br` and the tag suffix ({ADDED} B) |")
            print("|---|---|---|---|---|---|")
            for name, path in PATHS:
                b = body(base, path)
                g = len(gzip.compress(b, 9, mtime=0))
                br = len(brotli.compress(b, quality=11))
                z = len(zstandard.ZstdCompressor(level=19).compress(b))
                print(f"| {name} | {len(b):,} | {g:,} | {br:,} | {z:,} | {len(b) - min(g, br, z) - ADDED:,} |")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    sys.exit(main())
