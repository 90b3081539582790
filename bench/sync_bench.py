#!/usr/bin/env python3
"""Sync benchmark: time and peak memory (max RSS) of `resetctl sync --once`
for a full fetch of a 100,000-record document and for a 304 revalidation,
against nginx serving the document (its own ETag/304 logic).

Usage: bench/sync_bench.py [--records 100000] [--runs 3] [--server-cpu 0] [--client-cpu 1]

Each kind of sync runs --runs times (at least 3; every full fetch into a
fresh data dir); the table gives the median and the spread (min-max).
nginx is pinned to --server-cpu and resetctl to --client-cpu (taskset). A
sync that fails or reports anything but the expected outcome aborts.
Prints Markdown headed by the commit measured.
"""
import argparse, json, os, shutil, signal, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_bench import BIN, commit, fmt_range, generated, pinned, start_nginx, wait_http  # noqa: E402


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
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    args = ap.parse_args()
    if args.runs < 3:
        sys.exit("--runs must be at least 3 (a median and a spread need them)")
    tmp = tempfile.mkdtemp(prefix="resetctl-sync-bench-")
    os.chmod(tmp, 0o755)
    body = json.dumps(generated(args.records)).encode()
    nginx, port = start_nginx(tmp, body, args.server_cpu)
    url = f"http://127.0.0.1:{port}/openapi/v1/records"
    wait_http(url)

    def sync(data):
        return pinned(args.client_cpu, [BIN, "--data-dir", data, "--log", "warn", "sync", "--upstream", url, "--once",
                                        "--max-body-bytes", str(len(body) * 2)])

    full, revalidate = [], []
    for run in range(args.runs):
        data = os.path.join(tmp, f"data-{run}")
        seconds, mib, out = timed(sync(data))
        if not out.startswith(f"published snapshot 1 ({args.records} records)"):
            sys.exit(f"full sync: unexpected outcome {out!r}")
        full.append((seconds, mib))
    for _ in range(args.runs):
        seconds, mib, out = timed(sync(os.path.join(tmp, "data-0")))
        if out != f"{url} not modified (304); sync time updated":
            sys.exit(f"revalidation: unexpected outcome {out!r}")
        revalidate.append((seconds, mib))
    nginx.send_signal(signal.SIGQUIT)
    nginx.wait()
    shutil.rmtree(tmp, ignore_errors=True)

    def cells(runs):
        ms = [s * 1000 for s, _ in runs]
        mib = [m for _, m in runs]
        return (fmt_range(statistics.median(ms), min(ms), max(ms)) + " ms",
                fmt_range(statistics.median(mib), min(mib), max(mib)) + " MiB")

    print(f"Commit: {commit()}\n")
    print(f"{args.records:,} records, document {len(body):,} bytes, served by nginx on loopback (CPU {args.server_cpu}); "
          f"resetctl on CPU {args.client_cpu} (taskset); {args.runs} runs each, median (min–max).\n")
    print("| sync | wall time | peak memory (max RSS) | outcome |")
    print("|---|---|---|---|")
    print(f"| full fetch, validate, publish | {' | '.join(cells(full))} | published snapshot 1 |")
    print(f"| 304 revalidation | {' | '.join(cells(revalidate))} | not modified (304) |")


if __name__ == "__main__":
    main()
