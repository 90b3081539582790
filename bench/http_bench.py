#!/usr/bin/env python3
"""HTTP benchmark: wrk against `resetctl serve` and, in the same run, nginx
serving the identical response bytes from a file.

Usage: bench/http_bench.py [--records 100,100000] [--duration 10] [--connections 32]
Needs: target/release/resetctl, wrk, nginx (`make bench` installs them).
Prints a Markdown table; `make bench` appends it to bench-out/http.md.
"""
import argparse, json, os, re, shutil, signal, socket, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BIN = os.environ.get("RESETCTL_BIN", os.path.join(TARGET, "release", "resetctl"))
PATH = "/openapi/v1/records?page=1"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def generated(n):
    records = []
    for i in range(n):
        rid = str(3_000_000_000_000_000_000 + i)
        t = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(1_780_000_000 + i * 60))
        records.append({
            "id": rid, "kind": "reset_completed", "resetType": "global", "announcedAt": t, "effectiveAt": t,
            "text": f"Generated completion {i}: usage limits were reset.", "confidence": 0.9,
            "scope": {"plans": ["all"], "windows": ["weekly"]},
            "source": {"origin": "x", "postId": rid, "handle": "gen", "url": f"https://x.com/gen/status/{rid}"},
            "schedulePrecision": None, "scheduleBasis": None, "scheduleWindow": None, "scheduleState": None,
            "completedAt": t, "completionRecordId": None, "fulfillmentOrigin": None, "relatedRecordIds": [],
        })
    return {"generatedAt": "2026-11-20T10:00:00.000Z", "lastSuccessfulCheckAt": None, "records": records}


def wait_http(url, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url) as r:
                return r.read()
        except Exception:
            time.sleep(0.05)
    sys.exit(f"no answer from {url}")


def wrk(url, duration, connections, headers=()):
    cmd = ["wrk", "-t", "1", "-c", str(connections), "-d", f"{duration}s", "--latency"]
    for h in headers:
        cmd += ["-H", h]
    return parse_wrk(subprocess.run(cmd + [url], capture_output=True, text=True, check=True).stdout)


def wrk_script(url, script, duration, connections):
    cmd = ["wrk", "-t", "1", "-c", str(connections), "-d", f"{duration}s", "--latency", "-s", script, url]
    return parse_wrk(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def parse_wrk(out):
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    def pct(p):
        m = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)\b", out)
        value, unit = float(m.group(1)), m.group(2)
        return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": pct(50), "p99": pct(99), "non2xx": int(errors.group(1)) if errors else 0}


def redis_run(data, script, args):
    """The Redis backend under the same load, and redis-benchmark on the same Lua script."""
    rport = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(rport), "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    time.sleep(0.3)
    port = free_port()
    server = subprocess.Popen([BIN, "--data-dir", data, "--log", "warn", "serve", "--listen", f"127.0.0.1:{port}",
                               "--rate-limit", "1000000000/3600", "--trust-proxy", "127.0.0.1/32",
                               "--rate-limit-store", f"redis://127.0.0.1:{rport}/0"], stdout=subprocess.DEVNULL)
    wait_http(f"http://127.0.0.1:{port}/healthz")
    result = wrk_script(f"http://127.0.0.1:{port}", script, args.duration, args.connections)
    server.send_signal(signal.SIGTERM); server.wait()
    lua = open(os.path.join(ROOT, "src", "limit", "redis.rs")).read().split('r#"')[1].split('"#')[0]
    out = subprocess.run(["redis-benchmark", "-p", str(rport), "-n", "200000", "-c", str(args.connections), "-r", str(args.limiter_clients), "-q",
                          "EVAL", lua, "2", "{c:__rand_int__}:log", "{c:__rand_int__}:n", "1000000000", "3600000"],
                         capture_output=True, text=True).stdout
    m = re.search(r"([\d.]+) requests per second", out)
    print(f"redis-benchmark, the same Lua script, {args.limiter_clients} keys: {m.group(1) if m else out.strip()} requests/s", file=sys.stderr)
    global REDIS_BENCHMARK
    REDIS_BENCHMARK = m.group(1) if m else "?"
    redis.terminate(); redis.wait()
    return result


REDIS_BENCHMARK = None


def start_nginx(root, body):
    port = free_port()
    os.makedirs(os.path.join(root, "www"), exist_ok=True)
    with open(os.path.join(root, "www", "records.json"), "wb") as f:
        f.write(body)
    conf = os.path.join(root, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
worker_processes auto;
daemon off;
pid {root}/nginx.pid;
error_log {root}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {root}/tmp; proxy_temp_path {root}/tmp; fastcgi_temp_path {root}/tmp;
  uwsgi_temp_path {root}/tmp; scgi_temp_path {root}/tmp;
  server {{
    listen 127.0.0.1:{port};
    location = /openapi/v1/records {{
      default_type application/json;
      add_header Access-Control-Allow-Origin *;
      alias {root}/www/records.json;
    }}
  }}
}}
""")
    os.makedirs(os.path.join(root, "tmp"), exist_ok=True)
    proc = subprocess.Popen(["nginx", "-c", conf, "-p", root], stderr=subprocess.DEVNULL)
    return proc, port


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", default="100,100000")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--limiter-clients", type=int, default=10000,
                    help="distinct trusted X-Forwarded-For clients for the limiter-on run (0 to skip)")
    args = ap.parse_args()
    rows = []
    for n in [int(x) for x in args.records.split(",")]:
        tmp = tempfile.mkdtemp(prefix="resetctl-bench-")
        os.chmod(tmp, 0o755)  # nginx workers run as an unprivileged user
        data = os.path.join(tmp, "data")
        seed = os.path.join(tmp, "seed.json")
        with open(seed, "w") as f:
            json.dump(generated(n), f)
        subprocess.run([BIN, "--data-dir", data, "--now", "2026-11-20T10:00:00.000Z", "seed", seed], check=True, capture_output=True)
        port = free_port()
        server = subprocess.Popen([BIN, "--data-dir", data, "--log", "warn", "serve", "--listen", f"127.0.0.1:{port}", "--no-rate-limit"],
                                  stdout=subprocess.DEVNULL)
        body = wait_http(f"http://127.0.0.1:{port}{PATH}")
        nginx, nport = start_nginx(tmp, body)
        nbody = wait_http(f"http://127.0.0.1:{nport}{PATH}")
        assert nbody == body, "nginx must serve the identical bytes"
        wrk(f"http://127.0.0.1:{port}{PATH}", 2, args.connections)  # warm-up
        ours = wrk(f"http://127.0.0.1:{port}{PATH}", args.duration, args.connections)
        theirs = wrk(f"http://127.0.0.1:{nport}{PATH}", args.duration, args.connections)
        rows.append((n, "resetctl (limiter off)", ours, theirs))
        server.send_signal(signal.SIGTERM); server.wait()
        if args.limiter_clients:
            # The same client script (one of N X-Forwarded-For addresses per request) against
            # the limiter off and on (trusted proxy, a limit generous enough to admit all).
            script = os.path.join(tmp, "clients.lua")
            with open(script, "w") as f:
                f.write(f"""
local n = 0
request = function()
  n = n + 1
  local c = n % {args.limiter_clients}
  return wrk.format("GET", "{PATH}", {{["X-Forwarded-For"] = "198.51." .. math.floor(c / 256) .. "." .. (c % 256)}})
end
""")
            results = {}
            for label, flags in [("off", ["--no-rate-limit"]), ("on", ["--rate-limit", "1000000000/3600", "--trust-proxy", "127.0.0.1/32"])]:
                port = free_port()
                server = subprocess.Popen([BIN, "--data-dir", data, "--log", "warn", "serve", "--listen", f"127.0.0.1:{port}"] + flags,
                                          stdout=subprocess.DEVNULL)
                wait_http(f"http://127.0.0.1:{port}/healthz")
                results[label] = wrk_script(f"http://127.0.0.1:{port}", script, args.duration, args.connections)
                server.send_signal(signal.SIGTERM); server.wait()
            rows.append((n, f"resetctl, {args.limiter_clients} clients via X-Forwarded-For, limiter ON", results["on"], results["off"]))
            if n == min(int(x) for x in args.records.split(",")) and shutil.which("redis-server"):
                rows.append((n, f"resetctl, {args.limiter_clients} clients, limiter in Redis", redis_run(data, script, args), results["off"]))
        nginx.send_signal(signal.SIGQUIT); nginx.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"wrk -t1 -c{args.connections} -d{args.duration}s, GET {PATH}, body identical for both servers\n")
    print("Reference: nginx serving the same bytes, or (limiter rows) the same run with the limiter off.\n")
    print("| records | server | req/s | p50 ms | p99 ms | non-2xx | reference req/s | ratio | reference p99 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, name, ours, ref in rows:
        print(f"| {n} | {name} | {ours['rps']:.0f} | {ours['p50']:.2f} | {ours['p99']:.2f} | {ours['non2xx']} | {ref['rps']:.0f} | {ours['rps']/ref['rps']:.2f} | {ref['p99']:.2f} |")
    if REDIS_BENCHMARK:
        print(f"\nredis-benchmark running the same sliding-log Lua script directly: {REDIS_BENCHMARK} requests/s")


if __name__ == "__main__":
    main()
