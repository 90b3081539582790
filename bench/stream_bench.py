#!/usr/bin/env python3
"""The live record stream under load (issue 17's goals):

1. fan-out: --fanout clients (1,000) on `GET /openapi/v1/records/stream`;
   a change is published (`resetctl record completion`) and every client's
   receipt of its `record.created` event is timed. Latency is measured from
   the publish command's exit (the pointer has moved; an event may arrive
   before the command has exited, which counts as 0) and, as an upper
   bound, from its start (the command's own run included). Goal: p99 of
   the exit figure within 100 ms.
2. memory: the server's RSS before and after --idle streams (10,000) are
   opened and have read their `ready` event. Goal: at most 16 KiB each.
3. throughput: wrk against `GET /openapi/v1/records?page=1` (pinned like
   bench/http_bench.py), with and without --fanout idle streams open,
   alternating. Goal: at least 0.95x.

The server is pinned to --server-cpu; this script and wrk to --client-cpu.
The stream clients are raw sockets in one asyncio loop (an SSE parser
would only add client-side time; tests/stream.rs reads the stream with a
real SSE client). Prints Markdown headed by the commit measured.

Usage: bench/stream_bench.py [--fanout 1000] [--idle 10000] [--changes 5]
                             [--duration 5] [--runs 3]
Needs: target/release/resetctl, wrk, taskset.
"""
import argparse, asyncio, os, resource, statistics, subprocess, sys, tempfile, time

from common import BIN, commit
from http_bench import Bench, fmt_range, free_port, pinned, stop, summary, wait_http

STREAM = "/openapi/v1/records/stream"
RECORDS = "/openapi/v1/records?page=1"


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def open_stream(port):
    """One stream, its head and `ready` event read; returns (reader, writer)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {STREAM} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"stream refused: {head[:200]!r}")
    got = b""
    while b"event:ready" not in got:
        got += await reader.read(65536)
    return reader, writer


async def open_streams(port, n):
    streams = []
    for start in range(0, n, 500):
        streams += await asyncio.gather(*(open_stream(port) for _ in range(start, min(n, start + 500))))
    return streams


def close_streams(streams):
    for _, writer in streams:
        writer.close()


async def wait_for_change(reader, marker):
    """Reads until `marker` arrives; returns the perf_counter of that read."""
    got = b""
    while marker not in got:
        chunk = await reader.read(65536)
        if not chunk:
            raise RuntimeError("stream closed")
        got = got[-len(marker):] + chunk
    return time.perf_counter()


async def fanout(args, data, port):
    """Per change: (latencies from exit, latencies from start) in ms, one per client."""
    streams = await open_streams(port, args.fanout)
    from_exit, from_start = [], []
    for i in range(args.changes):
        post = f"29{i:017d}"
        marker = f'"id":"{post}"'.encode()
        waits = [asyncio.ensure_future(wait_for_change(r, marker)) for r, _ in streams]
        await asyncio.sleep(0.2)
        cmd = [BIN, "--data-dir", data, "--now", f"2026-11-20T11:{i:02d}:00.000Z", "record", "completion",
               "--post-url", f"https://x.com/h/status/{post}", "--at", f"2026-11-20 11:{i:02d} +00:00"]
        started = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(*cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, err = await proc.communicate()
        exited = time.perf_counter()
        if proc.returncode != 0:
            sys.exit(f"record completion failed: {err.decode()}")
        received = await asyncio.wait_for(asyncio.gather(*waits), timeout=30)
        from_exit += [max(0.0, (t - exited) * 1000) for t in received]
        from_start += [(t - started) * 1000 for t in received]
    close_streams(streams)
    return from_exit, from_start


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fanout", type=int, default=1000)
    ap.add_argument("--idle", type=int, default=10000)
    ap.add_argument("--changes", type=int, default=5)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.client_cpu})
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < args.idle + 100:
        sys.exit(f"the open-file limit ({hard}) cannot hold {args.idle} streams: lower --idle or raise it")
    tmp = tempfile.mkdtemp(prefix="resetctl-stream-")
    data = os.path.join(tmp, "data")
    subprocess.run([BIN, "--data-dir", data, "--now", "2026-11-20T10:00:00.000Z", "seed"], check=True,
                   capture_output=True)
    port = free_port()
    many = str(args.idle + 1000)
    server = subprocess.Popen(pinned(args.server_cpu, [
        BIN, "--data-dir", data, "--log", "warn", "serve", "--listen", f"127.0.0.1:{port}",
        "--no-rate-limit", "--flood-guard", "off", "--stream-max", many, "--stream-max-per-client", many,
        "--max-connections", many, "--max-connections-per-ip", many]), stdout=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")
        loop = asyncio.new_event_loop()
        from_exit, from_start = loop.run_until_complete(fanout(args, data, port))

        time.sleep(1)
        before = rss_kib(server.pid)
        idle = loop.run_until_complete(open_streams(port, args.idle))
        time.sleep(1)
        after = rss_kib(server.pid)
        close_streams(idle)
        loop.run_until_complete(asyncio.sleep(1))

        bench = Bench(args, tmp)
        url = f"http://127.0.0.1:{port}{RECORDS}"
        bench.wrk(url, args.warmup)
        without, with_streams = [], []
        for _ in range(args.runs):
            without.append(bench.wrk(url, args.duration))
            streams = loop.run_until_complete(open_streams(port, args.fanout))
            with_streams.append(bench.wrk(url, args.duration))
            close_streams(streams)
            loop.run_until_complete(asyncio.sleep(1))
    finally:
        stop(server)

    print(f"Commit: {commit()}\n")
    print(f"Server on CPU {args.server_cpu}; this script (asyncio, raw sockets) and wrk on CPU {args.client_cpu}; "
          f"bundled history, standalone mode.\n")
    print(f"Fan-out: {args.fanout} streams, {args.changes} changes (`resetctl record completion`), "
          f"{len(from_exit)} receipts.\n")
    print("| latency of a change, ms | p50 | p99 | max |")
    print("|---|---|---|---|")
    print(f"| from the publish command's exit | {pct(from_exit, 0.5):.1f} | {pct(from_exit, 0.99):.1f} | {max(from_exit):.1f} |")
    print(f"| from its start (its own run included) | {pct(from_start, 0.5):.1f} | {pct(from_start, 0.99):.1f} | {max(from_start):.1f} |")
    print()
    per_stream = (after - before) / args.idle
    print(f"Memory: RSS {before} KiB before, {after} KiB with {args.idle} idle streams open: "
          f"**{per_stream:.1f} KiB per stream** (goal: at most 16).\n")
    off, off_lo, off_hi = summary(without, "rps")
    on, on_lo, on_hi = summary(with_streams, "rps")
    print(f"Throughput: wrk -t1 -c{args.connections} -d{args.duration}s `GET {RECORDS}`, {args.runs} runs per side, alternating.\n")
    print("| | req/s | ratio |")
    print("|---|---|---|")
    print(f"| no streams | {fmt_range(off, off_lo, off_hi)} | |")
    print(f"| {args.fanout} idle streams open | {fmt_range(on, on_lo, on_hi)} | **{on / off:.2f}** |")


if __name__ == "__main__":
    main()
