#!/usr/bin/env python3
"""The shared quota in Redis, measured: what one resetctl instance serves when
it counts in Redis against the same load with the limiter off, and what Redis
serves of resetctl's checks against `redis-benchmark` running the same script
on the same pinned core; then memory per client in Redis.

Usage: bench/redis_quota_bench.py [--duration 10] [--warmup 2] [--runs 3]
                                  [--connections 32] [--clients 1000000]
                                  [--server-cpu 0] [--client-cpu 1]
Needs: target/release/resetctl, wrk, redis-server, redis-benchmark, redis-cli,
taskset (`make bench` installs them).

Two cores, three programs: resetctl runs alone on --server-cpu; wrk and
redis-server share --client-cpu (Redis on its own machine is the deployment
this stands for). So besides requests per second, each side's CPU time is
read from /proc for the run, and the figures compared are per CPU second:
- an instance's capacity: requests it answers per second of its own CPU,
  quota in Redis vs limiter off (goal >= 0.6);
- Redis's capacity: scripts it runs per second of its own CPU, driven by
  resetctl vs by redis-benchmark (32 connections, no pipelining, Redis alone
  on --client-cpu, redis-benchmark on --server-cpu) running the same script
  with the same arguments (goal >= 0.9).
The policy is the default shape (20 per 3600 s) over --clients distinct
clients (X-Forwarded-For from a trusted proxy), so nearly every check is
admitted and writes, as most real checks do.
Prints Markdown headed by the commit; docs/benchmarks.md quotes it.
"""
import argparse, os, re, statistics, subprocess, sys, tempfile, time

from common import BIN, ROOT, commit
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_bench import PATH, Bench, clients, free_port, pinned, start_server, stop, wait_port  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` (all its threads)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def redis_cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True, check=True).stdout


def script_calls(port):
    """EVALSHA + EVAL calls Redis has run."""
    stats = redis_cli(port, "INFO", "commandstats")
    return sum(int(m.group(1)) for m in re.finditer(r"cmdstat_eval(?:sha)?:calls=(\d+)", stats))


def sliding_log_lua():
    """The check script exactly as resetctl loads it: CLOCK, then SLIDING_LOG."""
    source = open(os.path.join(ROOT, "src", "limit", "redis", "mod.rs")).read()
    const = lambda name: source.split(f"const {name}: &str = r#\"")[1].split('"#')[0]
    return const("CLOCK") + const("SLIDING_LOG")


def measured(bench, url, script, pids, redis_port=None):
    """One wrk run with the CPU seconds of `pids` over it and Redis's script calls."""
    before = [cpu_seconds(p) for p in pids]
    calls = script_calls(redis_port) if redis_port else 0
    run = bench.wrk(url, bench.args.duration, script)
    run["cpu"] = [cpu_seconds(p) - b for p, b in zip(pids, before)]
    run["calls"] = script_calls(redis_port) - calls if redis_port else 0
    return run


def redis_benchmark(args, port, redis_pid):
    """redis-benchmark running the sliding log with resetctl's arguments:
    (scripts per second, scripts per Redis CPU second) per run."""
    sha = redis_cli(port, "SCRIPT", "LOAD", sliding_log_lua()).strip()
    results = []
    for _ in range(args.runs):
        before, calls = cpu_seconds(redis_pid), script_calls(port)
        proc = subprocess.run(pinned(args.server_cpu, [
            "redis-benchmark", "-p", str(port), "-n", "300000", "-c", str(args.connections),
            "-r", str(args.clients), "-q",
            # One key per client; ARGV: limit, window, a deadline far away,
            # a check id (random, as unique as resetctl's within a client's log).
            "EVALSHA", sha, "1", "{resetctl:20/3600:__rand_int__}:log", "20", "3600000",
            "99999999999999", "__rand_int__"]), capture_output=True, text=True)
        m = re.search(r"([\d.]+) requests per second", proc.stdout)
        if proc.returncode != 0 or not m or "ERR" in proc.stdout:
            sys.exit(f"redis-benchmark failed:\n{proc.stdout}{proc.stderr}")
        cpu = cpu_seconds(redis_pid) - before
        results.append((float(m.group(1)), (script_calls(port) - calls) / cpu))
    return results


def memory_per_client(port, clients=100_000):
    """Bytes per client in Redis with 1 and with 20 requests in the window:
    MEMORY USAGE summed over the keys, and used_memory's growth, each over `clients`."""
    sha = redis_cli(port, "SCRIPT", "LOAD", sliding_log_lua()).strip()
    out = {}
    for per_client in (1, 20):
        redis_cli(port, "FLUSHALL")
        used_before = int(re.search(r"used_memory:(\d+)", redis_cli(port, "INFO", "memory")).group(1))
        lines = []
        check = 0
        for c in range(clients):
            key = f"{{resetctl:20/3600:10.{c // 65536}.{(c // 256) % 256}.{c % 256}}}:log"
            for _ in range(per_client):
                check += 1
                member = check.to_bytes(8, "big")
                parts = [b"EVALSHA", sha.encode(), b"1", key.encode(), b"20", b"3600000", b"99999999999999", member]
                lines.append(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
        subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=b"".join(lines), capture_output=True, check=True)
        used_after = int(re.search(r"used_memory:(\d+)", redis_cli(port, "INFO", "memory")).group(1))
        total = int(redis_cli(port, "EVAL", f"""
local total = 0
for c = 0, {clients - 1} do
  local key = '{{resetctl:20/3600:10.' .. math.floor(c / 65536) .. '.' .. (math.floor(c / 256) % 256) .. '.' .. (c % 256) .. '}}:log'
  total = total + redis.call('MEMORY', 'USAGE', key, 'SAMPLES', 0)
end
return total""", "0").strip())
        out[per_client] = (total / clients, (used_after - used_before) / clients)
    return out


def med(values):
    return statistics.median(values), min(values), max(values)


def fmt(triple, digits=0):
    m, lo, hi = triple
    return f"{m:,.{digits}f} ({lo:,.{digits}f}–{hi:,.{digits}f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--clients", type=int, default=1_000_000)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    args = ap.parse_args()
    args.runs = max(args.runs, 3)
    tmp = tempfile.mkdtemp()
    bench = Bench(args, tmp)
    data = os.path.join(tmp, "data")
    subprocess.run([BIN, "--data-dir", data, "seed"], check=True, stdout=subprocess.DEVNULL)
    rport = free_port()
    redis = subprocess.Popen(pinned(args.client_cpu, ["redis-server", "--port", str(rport), "--save", "",
                                                      "--appendonly", "no"]), stdout=subprocess.DEVNULL)
    wait_port(rport)
    redis_pid = redis.pid
    script = clients(args.clients)
    off, off_port = start_server(args, data, ["--no-rate-limit", "--trust-proxy", "127.0.0.1/32"])
    red, red_port = start_server(args, data, ["--trust-proxy", "127.0.0.1/32",
                                              "--rate-limit-store", f"redis://127.0.0.1:{rport}/0"])
    sides = {"off": (f"http://127.0.0.1:{off_port}", [off.pid], None),
             "redis": (f"http://127.0.0.1:{red_port}", [red.pid, redis_pid], rport)}
    for url, _, _ in sides.values():
        bench.wrk(url, args.warmup, script)
    runs = {name: [] for name in sides}
    for _ in range(args.runs):
        for name, (url, pids, port) in sides.items():
            runs[name].append(measured(bench, url, script, pids, port))
    stop(red)
    stop(off)
    direct = redis_benchmark(args, rport, redis_pid)
    memory = memory_per_client(rport)
    stop(redis)

    per_cpu = lambda r: r["requests"] / r["cpu"][0]
    off_rps = med([r["rps"] for r in runs["off"]])
    red_rps = med([r["rps"] for r in runs["redis"]])
    off_cap = med([per_cpu(r) for r in runs["off"]])
    red_cap = med([per_cpu(r) for r in runs["redis"]])
    redis_cap = med([r["calls"] / r["cpu"][1] for r in runs["redis"]])
    direct_rate = med([d[0] for d in direct])
    direct_cap = med([d[1] for d in direct])
    print(f"Commit: {commit()}\n")
    print(f"wrk -t1 -c{args.connections} -d{args.duration}s, GET {PATH}, default policy 20/3600, "
          f"{args.clients:,} clients by X-Forwarded-For; resetctl on CPU {args.server_cpu}, wrk and redis-server "
          f"on CPU {args.client_cpu}; {args.runs} runs per side after a {args.warmup} s warm-up, alternating; "
          f"median (min–max).\n")
    print("| | limiter off | quota in Redis | ratio | goal |")
    print("|---|---|---|---|---|")
    print(f"| requests/s | {fmt(off_rps)} | {fmt(red_rps)} | {red_rps[0] / off_rps[0]:.2f} | |")
    print(f"| resetctl CPU used (of 1 core) | {statistics.median(r['cpu'][0] / args.duration for r in runs['off']):.2f} "
          f"| {statistics.median(r['cpu'][0] / args.duration for r in runs['redis']):.2f} | | |")
    print(f"| requests per resetctl CPU second | {fmt(off_cap)} | {fmt(red_cap)} | **{red_cap[0] / off_cap[0]:.2f}** | ≥ 0.6 |")
    print(f"| p99 latency, ms | {statistics.median(r['p99'] for r in runs['off']):.2f} "
          f"| {statistics.median(r['p99'] for r in runs['redis']):.2f} | | |")
    print()
    print("| Redis running the sliding log | scripts/s | scripts per Redis CPU second | ratio | goal |")
    print("|---|---|---|---|---|")
    print(f"| redis-benchmark ({args.connections} connections, same script and arguments) | {fmt(direct_rate)} | {fmt(direct_cap)} | 1.00 | |")
    print(f"| resetctl's checks (one multiplexed connection) | {fmt(med([r['calls'] / args.duration for r in runs['redis']]))} "
          f"| {fmt(redis_cap)} | **{redis_cap[0] / direct_cap[0]:.2f}** | ≥ 0.9 |")
    print()
    print("| Memory per client in Redis (100,000 clients) | MEMORY USAGE | used_memory growth |")
    print("|---|---|---|")
    for per_client, (usage, growth) in memory.items():
        print(f"| {per_client} request{'s' if per_client > 1 else ''} in the window | {usage:,.0f} B | {growth:,.0f} B |")


if __name__ == "__main__":
    main()
