#!/usr/bin/env python3
"""Sync benchmark: time and peak memory (max RSS) of `resetctl sync --once`
for a full fetch of a 100,000-record document and for a 304 revalidation,
against nginx serving the document (its own ETag/304 logic).

Usage: bench/sync_bench.py [--records 100000]
"""
import argparse, json, os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_bench import BIN, generated, start_nginx, wait_http  # noqa: E402


def timed(cmd):
    """Wall time and max RSS of `cmd`, measured by GNU time: the rusage of a
    child forked from this (large) Python process would include the pages it
    inherited before exec."""
    proc = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{cmd} failed: {proc.stderr}")
    seconds, kib = proc.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(kib) / 1024.0, proc.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100000)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="resetctl-sync-bench-")
    os.chmod(tmp, 0o755)
    body = json.dumps(generated(args.records)).encode()
    nginx, port = start_nginx(tmp, body)
    url = f"http://127.0.0.1:{port}/openapi/v1/records"
    wait_http(url)
    data = os.path.join(tmp, "data")
    sync = [BIN, "--data-dir", data, "--log", "warn", "sync", "--upstream", url, "--once", "--max-body-bytes", str(len(body) * 2)]
    full = timed(sync)
    revalidate = timed(sync)
    nginx.terminate(); nginx.wait()
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.records} records, document {len(body)} bytes, served by nginx on loopback\n")
    print("| sync | wall time | peak memory (max RSS) | outcome |")
    print("|---|---|---|---|")
    print(f"| full fetch, validate, publish | {full[0]*1000:.0f} ms | {full[1]:.0f} MiB | {full[2]} |")
    print(f"| 304 revalidation | {revalidate[0]*1000:.0f} ms | {revalidate[1]:.0f} MiB | {revalidate[2]} |")


if __name__ == "__main__":
    main()
