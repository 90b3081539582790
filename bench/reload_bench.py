#!/usr/bin/env python3
"""Reload latency: how soon a running `resetctl serve` (file events, the
default) serves a snapshot after `resetctl publish` returns.

Usage: bench/reload_bench.py [--publishes 50] [--server-cpu 0] [--client-cpu 1]
Needs: target/release/resetctl, taskset.

The server is pinned to --server-cpu; this script (the publisher and the
poller) to --client-cpu. After each publish the poller asks `/healthz` over
one kept-alive connection until it reports the new sequence; the latency is
from the publish command's exit to that answer. Prints Markdown headed by
the commit measured (issue 15's goal: about 5 ms).
"""
import argparse, http.client, json, os, socket, statistics, subprocess, sys, tempfile, time

from common import BIN, commit


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--publishes", type=int, default=50)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.client_cpu})
    tmp = tempfile.mkdtemp(prefix="resetctl-reload-")
    data = os.path.join(tmp, "data")
    subprocess.run([BIN, "--data-dir", data, "--now", "2026-11-20T10:00:00.000Z", "seed"], check=True, capture_output=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(["taskset", "-c", str(args.server_cpu), BIN, "--data-dir", data, "--log", "warn", "serve",
                               "--listen", f"127.0.0.1:{port}", "--no-rate-limit", "--flood-guard", "off"], stdout=subprocess.DEVNULL)
    try:
        conn = None
        deadline = time.time() + 30
        while conn is None:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/healthz")
                conn.getresponse().read()
            except OSError:
                conn = None
                if time.time() > deadline:
                    sys.exit("the server did not start")
                time.sleep(0.05)

        def sequence():
            conn.request("GET", "/healthz")
            return json.loads(conn.getresponse().read())["sequence"]

        latencies = []
        for i in range(args.publishes):
            now = f"2026-11-20T10:{i // 60:02d}:{i % 60:02d}.000Z"
            out = subprocess.run([BIN, "--data-dir", data, "--now", now, "publish"], check=True,
                                 capture_output=True, text=True).stdout
            published = int(out.split("published snapshot ")[1].split(" ")[0])
            start = time.perf_counter()
            while sequence() != published:
                if time.perf_counter() - start > 5:
                    sys.exit(f"snapshot {published} not served within 5 s")
            latencies.append((time.perf_counter() - start) * 1000)
    finally:
        server.terminate()
        server.wait()
    latencies.sort()
    p90 = latencies[int(len(latencies) * 0.9) - 1]
    print(f"Reload latency, commit `{commit()}`: {args.publishes} publishes of the bundled history "
          f"(file events), server on CPU {args.server_cpu}, publisher and poller on CPU {args.client_cpu}.\n")
    print("| publish → served | median | p90 | max |")
    print("|---|---|---|---|")
    print(f"| ms | {statistics.median(latencies):.2f} | {p90:.2f} | {latencies[-1]:.2f} |")


if __name__ == "__main__":
    main()
