#!/usr/bin/env python3
"""HTTP benchmark: wrk against `resetctl serve` and, in the same run, nginx
serving the identical response bytes from a file: as they are, precompressed
at the encoders' highest levels (`gzip_static` and `brotli_static`, nginx's
best case), and compressed on the fly (`gzip on`, level 6, what most nginx
configurations do).

Usage: bench/http_bench.py [--records 100,100000] [--duration 10] [--warmup 2]
                           [--runs 3] [--connections 32] [--server-cpu 0] [--client-cpu 1]
Needs: target/release/resetctl, wrk, nginx with Debian's
libnginx-mod-http-brotli-static, brotli, gzip, taskset (`make bench` installs them).

Every measurement is repeated (--runs, at least 3), alternating the two sides,
after a warm-up of each side; the table gives the median and the spread
(min-max) of the runs. Servers (resetctl, nginx with one worker) are pinned
to --server-cpu and wrk to --client-cpu with taskset. The quota in Redis is
measured by bench/redis_quota_bench.py.
A run with a socket error or any answer other than the expected one (200, or
304 for the conditional rows) aborts the benchmark.
Prints Markdown, headed by the commit measured; `make bench` writes it to
bench-out/http.md, and docs/benchmarks.md quotes it as printed.
"""
import argparse, json, os, re, shutil, signal, socket, statistics, subprocess, sys, tempfile, time, urllib.request

from common import BIN, ROOT, commit

PATH = "/openapi/v1/records?page=1"
# The two subscription formats, compared with nginx serving the same bytes (default variants).
FEEDS = ["/openapi/v1/records.atom", "/openapi/v1/records.ics"]

# Counts every answer that is not the expected status (wrk's own "Non-2xx or
# 3xx" line lets 3xx through) and prints the total; every wrk run loads it.
STATUS_LUA = """
not_ok = 0
local threads = {}
function setup(thread) table.insert(threads, thread) end
function response(status, headers, body)
  if status ~= EXPECTED then not_ok = not_ok + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("not_ok") end
  io.write(string.format("answers other than EXPECTED: %d\\n", total))
end
"""


def clients(n_clients, path=PATH):
    """A wrk script requesting `path` as one of `n_clients` clients in turn
    (10.x.y.z in X-Forwarded-For, which a server trusting wrk's address reads)."""
    return f"""
local n = 0
request = function()
  n = n + 1
  local c = n % {n_clients}
  return wrk.format("GET", "{path}", {{["X-Forwarded-For"] = "10." .. math.floor(c / 65536) .. "." .. (math.floor(c / 256) % 256) .. "." .. (c % 256)}})
end
"""


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
    """The body of the first 200 from `url`, retried until `timeout`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url) as r:
                if r.status == 200:
                    return r.read()
        except Exception:
            pass
        time.sleep(0.05)
    sys.exit(f"no 200 from {url} within {timeout} s")


def if_none_match(url):
    """A wrk script line sending the ETag `url` answers with back in If-None-Match."""
    with urllib.request.urlopen(url) as r:
        tag = r.headers["ETag"]
    if not tag:
        sys.exit(f"{url} sends no ETag")
    return f'wrk.headers["If-None-Match"] = [[{tag}]]\n'


def _tag(url):
    with urllib.request.urlopen(url) as r:
        return r.headers["ETag"]


def wait_port(port, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on port {port} within {timeout} s")


def pinned(cpu, cmd):
    return ["taskset", "-c", str(cpu)] + cmd


class Bench:
    def __init__(self, args, tmp):
        self.args = args
        self.tmp = tmp

    def wrk(self, url, duration, script_body="", expected=200):
        """One wrk run pinned to the client CPU; aborts on socket errors or another status than `expected`."""
        script = os.path.join(self.tmp, f"wrk-{time.monotonic_ns()}.lua")
        with open(script, "w") as f:
            f.write(script_body + STATUS_LUA.replace("EXPECTED", str(expected)))
        cmd = pinned(self.args.client_cpu, ["wrk", "-t", "1", "-c", str(self.args.connections), "-d", f"{duration}s",
                                            "--latency", "-s", script, url])
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        return parse_wrk(out, url)

    def measure(self, sides, expected=200):
        """Warms up every side, then runs each `runs` times, alternating; returns per-side lists."""
        for url, script in sides.values():
            self.wrk(url, self.args.warmup, script, expected)
        results = {name: [] for name in sides}
        for _ in range(self.args.runs):
            for name, (url, script) in sides.items():
                results[name].append(self.wrk(url, self.args.duration, script, expected))
        return results


def parse_wrk(out, url):
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if sockets and any(int(x) for x in sockets.groups()):
        sys.exit(f"wrk against {url} had socket errors ({sockets.group(0)}):\n{out}")
    not_ok = re.search(r"answers other than \d+: (\d+)", out)
    if not not_ok:
        sys.exit(f"wrk against {url} printed no status count:\n{out}")
    if int(not_ok.group(1)):  # also catches the 4xx/5xx wrk counts as non-2xx
        sys.exit(f"wrk against {url}: {not_ok.group(0)}:\n{out}")
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    if requests == 0:
        sys.exit(f"wrk against {url} completed no request:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def pct(p):
        m = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)\b", out)
        value, unit = float(m.group(1)), m.group(2)
        return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    return {"rps": rps, "p50": pct(50), "p99": pct(99), "requests": requests}


def summary(runs, key):
    values = [r[key] for r in runs]
    return statistics.median(values), min(values), max(values)


def start_server(args, data, flags):
    port = free_port()
    proc = subprocess.Popen(pinned(args.server_cpu, [BIN, "--data-dir", data, "--log", "warn", "serve",
                                                     "--listen", f"127.0.0.1:{port}"] + flags), stdout=subprocess.DEVNULL)
    wait_http(f"http://127.0.0.1:{port}/healthz")
    return proc, port


def stop(proc, sig=signal.SIGTERM):
    proc.send_signal(sig)
    proc.wait()


# What nginx serves beside resetctl: our path -> (file name, content type).
NGINX_FILES = {
    "/openapi/v1/records": ("records.json", "application/json"),
    "/openapi/v1/records.atom": ("records.atom", "application/atom+xml; charset=utf-8"),
    "/openapi/v1/records.ics": ("records.ics", "text/calendar; charset=utf-8"),
}


# The headers the API's contract puts on every data answer, sent by nginx too,
# so both sides answer what a client of the API is promised and the bytes
# per response compare like for like.
CONTRACT_HEADERS = """
      add_header Access-Control-Allow-Origin *;
      add_header Access-Control-Expose-Headers "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Window, X-RateLimit-Reset, Retry-After, ETag, Last-Modified";
      add_header Cache-Control no-cache;"""

# One nginx, three servers over the same files: as they are, precompressed
# (.gz by `gzip -9`, .br by `brotli -q 11`, both highest levels), on the fly.
NGINX_SERVERS = {
    "plain": "",
    "static": "gzip_static on; brotli_static on; gzip_vary on;",
    "fly": "gzip on; gzip_comp_level 6; gzip_vary on; gzip_min_length 512; "
           "gzip_types application/json application/atom+xml text/calendar;",
}


def start_nginx(root, bodies, cpu=None):
    """nginx (one worker) serving `bodies` (our path -> bytes) as static files, with its
    own ETags, on one port per server of NGINX_SERVERS; returns (process, {name: port})."""
    os.makedirs(os.path.join(root, "www"), exist_ok=True)
    locations = ""
    for path, body in bodies.items():
        name, content_type = NGINX_FILES[path]
        file = os.path.join(root, "www", name)
        with open(file, "wb") as f:
            f.write(body)
        subprocess.run(["gzip", "-9", "-n", "-k", "-f", file], check=True)
        subprocess.run(["brotli", "-q", "11", "-k", "-f", file], check=True)
        locations += f"""
    location = {path} {{
      default_type "{content_type}";{CONTRACT_HEADERS}
      alias {root}/www/{name};
    }}"""
    ports = {name: free_port() for name in NGINX_SERVERS}
    servers = "".join(f"""
  server {{
    listen 127.0.0.1:{ports[name]};
    {extra}{locations}
  }}""" for name, extra in NGINX_SERVERS.items())
    conf = os.path.join(root, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
load_module {BROTLI_STATIC_MODULE};
worker_processes 1;
daemon off;
pid {root}/nginx.pid;
error_log {root}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {root}/tmp; proxy_temp_path {root}/tmp; fastcgi_temp_path {root}/tmp;
  uwsgi_temp_path {root}/tmp; scgi_temp_path {root}/tmp;{servers}
}}
""")
    os.makedirs(os.path.join(root, "tmp"), exist_ok=True)
    cmd = ["nginx", "-c", conf, "-p", root]
    proc = subprocess.Popen(pinned(cpu, cmd) if cpu is not None else cmd, stderr=subprocess.DEVNULL)
    for port in ports.values():
        wait_port(port)
    return proc, ports


BROTLI_STATIC_MODULE = "/usr/lib/nginx/modules/ngx_http_brotli_static_module.so"

# What the compressed rows send: what Node's fetch sends, and what the issue names.
ACCEPT = "gzip, deflate, br"


def accept_header(value=ACCEPT):
    return f'wrk.headers["Accept-Encoding"] = "{value}"\n'


def wire(port, path, headers=()):
    """(header bytes, body bytes, Content-Encoding) of one keep-alive answer to GET `path`,
    exactly as they come off the socket."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
        sock.sendall(request.encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, body = data.split(b"\r\n\r\n", 1)
        fields = {}
        for line in head.decode().split("\r\n")[1:]:
            k, v = line.split(":", 1)
            fields[k.strip().lower()] = v.strip()
        if fields.get("transfer-encoding") == "chunked":
            # On-the-fly gzip streams: the body is its chunks, framing included.
            while not body.endswith(b"0\r\n\r\n"):
                body += sock.recv(65536)
            return len(head) + 4, len(body), fields.get("content-encoding")
        length = int(fields.get("content-length", "0"))
        while len(body) < length:
            body += sock.recv(65536)
        return len(head) + 4, length, fields.get("content-encoding")


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        kib = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    return kib / 1024


# The hot set a view makes when it is published (src/api/handlers.rs, DataBody::hot_set).
HOT_SET = [f"{p}?kind={k}" if k else p
           for k in ("", "reset_scheduled", "reset_completed")
           for p in ("/openapi/v1/records/latest", "/openapi/v1/records", "/openapi/v1/records.ics",
                     "/openapi/v1/records.atom")]


def hot_set_bytes(port):
    """Bytes of the hot set's bodies per coding: identity, br, zstd, gzip."""
    sizes = {}
    for coding in ("identity", "br", "zstd", "gzip"):
        sizes[coding] = sum(wire(port, p, [("Accept-Encoding", coding)])[1] for p in HOT_SET)
    return sizes


def fmt_range(median, low, high, digits=0):
    return f"{median:,.{digits}f} ({low:,.{digits}f}–{high:,.{digits}f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", default="100,100000")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--limiter-clients", type=int, default=10000,
                    help="distinct trusted X-Forwarded-For clients for the 40/1 quota run (0 to skip the quota runs)")
    ap.add_argument("--real-clients", type=int, default=1000000,
                    help="distinct clients for the quota in its real shape (default 20/3600 policy)")
    ap.add_argument("--only", choices=["metrics"],
                    help="run only this comparison (metrics: the same server with and without "
                         "--admin-listen), so more --runs narrow its spread in the same time")
    args = ap.parse_args()
    if args.runs < 3:
        sys.exit("--runs must be at least 3 (a median and a spread need them)")
    cpus = os.sched_getaffinity(0)
    if args.server_cpu == args.client_cpu or not {args.server_cpu, args.client_cpu} <= cpus:
        sys.exit(f"--server-cpu and --client-cpu must be two different CPUs of {sorted(cpus)}")
    rows, sizes, wires, memory = [], {}, {}, {}
    for n in [int(x) for x in args.records.split(",")]:
        tmp = tempfile.mkdtemp(prefix="resetctl-bench-")
        os.chmod(tmp, 0o755)  # nginx workers run as an unprivileged user
        bench = Bench(args, tmp)
        data = os.path.join(tmp, "data")
        seed = os.path.join(tmp, "seed.json")
        with open(seed, "w") as f:
            json.dump(generated(n), f)
        subprocess.run([BIN, "--data-dir", data, "--now", "2026-11-20T10:00:00.000Z", "seed", seed], check=True, capture_output=True)
        # No quota, and no flood guard (which 304s pass, being uncounted): the server itself is
        # measured. A fixed public base URL keeps the Atom feed's links independent of the port.
        server, port = start_server(args, data, ["--no-rate-limit", "--flood-guard", "off",
                                                 "--public-base-url", "https://bench.invalid"])
        ours = f"http://127.0.0.1:{port}"
        bodies = {PATH.split("?")[0]: wait_http(ours + PATH)}
        for feed in FEEDS:
            bodies[feed] = wait_http(ours + feed)
        nginx, nports = start_nginx(tmp, bodies, args.server_cpu) if args.only is None else (None, {})
        theirs = {name: f"http://127.0.0.1:{p}" for name, p in nports.items()}
        for path, body in bodies.items() if nginx else []:
            for name in nports:
                served = wait_http(theirs[name] + path)
                assert served == body, f"nginx ({name}) must serve the identical bytes of {path}"
        if nginx:
            # Let the server make its hot set (at publish) before it is measured.
            time.sleep(2)
            rss_before_load = rss_mib(server.pid)
            sizes[n] = hot_set_bytes(port)
            wires[n] = {
                "resetctl, identity": wire(port, PATH),
                f"resetctl, {ACCEPT}": wire(port, PATH, [("Accept-Encoding", ACCEPT)]),
                "nginx, identity": wire(nports["plain"], PATH),
                f"nginx gzip_static + brotli_static, {ACCEPT}": wire(nports["static"], PATH, [("Accept-Encoding", ACCEPT)]),
                f"nginx gzip on (level 6), {ACCEPT}": wire(nports["fly"], PATH, [("Accept-Encoding", ACCEPT)]),
            }
            got = bench.measure({"ours": (ours + PATH, ""), "nginx": (theirs["plain"] + PATH, "")})
            rows.append((n, "resetctl, identity", got["ours"], "nginx", got["nginx"]))
            got = bench.measure({"ours": (ours + PATH, accept_header()),
                                 "static": (theirs["static"] + PATH, accept_header()),
                                 "fly": (theirs["fly"] + PATH, accept_header())})
            rows.append((n, f"resetctl, {ACCEPT} (br)", got["ours"], "nginx gzip_static + brotli_static (br)", got["static"]))
            rows.append((n, f"resetctl, {ACCEPT} (br)", got["ours"], "nginx gzip on, level 6 (gzip)", got["fly"]))
            # 304s: each side gets its own tag back in If-None-Match (nginx's is its mtime-size ETag).
            got = bench.measure({"ours": (ours + PATH, if_none_match(ours + PATH)),
                                 "nginx": (theirs["plain"] + PATH, if_none_match(theirs["plain"] + PATH))},
                                expected=304)
            rows.append((n, "resetctl, 304 to If-None-Match", got["ours"], "nginx, 304", got["nginx"]))
            wires[n]["resetctl, 304"] = wire(port, PATH, [("If-None-Match", _tag(ours + PATH))])
            wires[n]["nginx, 304"] = wire(nports["plain"], PATH, [("If-None-Match", _tag(theirs["plain"] + PATH))])
            for feed in FEEDS:
                got = bench.measure({"ours": (ours + feed, accept_header()), "nginx": (theirs["static"] + feed, accept_header())})
                rows.append((n, f"resetctl, {feed.rsplit('/', 1)[1]} 200 (br)", got["ours"], "nginx brotli_static, same bytes", got["nginx"]))
            memory[n] = (rss_before_load, rss_mib(server.pid))
        # Metrics are recorded only with an admin listener: the same server with one, against
        # the same server without (issue 19's goal: at least 0.97x).
        metered, mport = start_server(args, data, ["--no-rate-limit", "--flood-guard", "off",
                                                   "--public-base-url", "https://bench.invalid",
                                                   "--admin-listen", "127.0.0.1:0"])
        got = bench.measure({"on": (f"http://127.0.0.1:{mport}" + PATH, ""), "off": (ours + PATH, "")})
        rows.append((n, "resetctl, metrics on (--admin-listen)", got["on"], "metrics off", got["off"]))
        stop(metered)
        if args.only == "metrics":
            # The A/A control: a second server exactly like the reference, started the way the
            # metered one was. Its ratio is what this machine calls a difference when there is none.
            twin, tport = start_server(args, data, ["--no-rate-limit", "--flood-guard", "off",
                                                    "--public-base-url", "https://bench.invalid"])
            got = bench.measure({"twin": (f"http://127.0.0.1:{tport}" + PATH, ""), "off": (ours + PATH, "")})
            rows.append((n, "resetctl, metrics off (A/A control: a second, identical server)", got["twin"], "metrics off", got["off"]))
            stop(twin)
        stop(server)
        if args.limiter_clients and args.only is None:
            # The same client script (one of N X-Forwarded-For addresses per request) against
            # the quota off and on, and against nginx with no quota at all. Every server trusts
            # wrk's address, so reads the forwarding header: the only difference is the quota.
            off, off_port = start_server(args, data, ["--no-rate-limit", "--trust-proxy", "127.0.0.1/32"])
            # The quota in its real shape: the default policy (20 per 3600 s), 1,000,000 distinct
            # clients, each within its quota (no client comes back 20 times in the run).
            real, real_port = start_server(args, data, ["--trust-proxy", "127.0.0.1/32"])
            script = clients(args.real_clients)
            sides = {"on": (f"http://127.0.0.1:{real_port}", script),
                     "off": (f"http://127.0.0.1:{off_port}", script)}
            if nginx:
                sides["nginx"] = (theirs["plain"], script)
            got = bench.measure(sides)
            stop(real)
            rows.append((n, f"resetctl, quota on (default 20/3600), {args.real_clients:,} clients", got["on"], "quota off", got["off"]))
            if nginx:
                rows.append((n, f"resetctl, quota on (default 20/3600), {args.real_clients:,} clients", got["on"], "nginx, no quota", got["nginx"]))
            # The policy earlier sections used: 40 per 1 s with 10,000 clients admits every
            # request (each client comes back about 10 times a second) on the same ring arena path.
            script = clients(args.limiter_clients)
            on, on_port = start_server(args, data, ["--rate-limit", "40/1", "--trust-proxy", "127.0.0.1/32"])
            got = bench.measure({"on": (f"http://127.0.0.1:{on_port}", script),
                                 "off": (f"http://127.0.0.1:{off_port}", script)})
            stop(on)
            rows.append((n, f"resetctl, quota on (40/1), {args.limiter_clients:,} clients", got["on"], "quota off", got["off"]))
            stop(off)
        if nginx:
            stop(nginx, signal.SIGQUIT)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"Commit: {commit()}\n")
    print(f"wrk -t1 -c{args.connections} -d{args.duration}s, GET {PATH}, body identical for both servers "
          f"(nginx: the same file, precompressed with `gzip -9` and `brotli -q 11` for gzip_static/brotli_static, "
          f"and sending the API's CORS and Cache-Control headers too); "
          f"{args.runs} runs per side after a {args.warmup} s warm-up of each, alternating; "
          f"servers on CPU {args.server_cpu}, wrk on CPU {args.client_cpu} (taskset)"
          f"{'' if args.only else '; nginx with one worker'}. "
          f"Every run: no socket error, every answer a 200 (a 304 in the conditional rows).\n")
    print("Figures: median (min–max) over the runs. Ratio: median req/s over the reference's median req/s.\n")
    print("| records | server | req/s | p50 ms | p99 ms | reference | reference req/s | ratio | reference p99 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, name, ours, ref_name, ref in rows:
        rps, ref_rps = summary(ours, "rps"), summary(ref, "rps")
        print(f"| {n:,} | {name} | {fmt_range(*rps)} | {summary(ours, 'p50')[0]:.2f} | {fmt_range(*summary(ours, 'p99'), 2)} "
              f"| {ref_name} | {fmt_range(*ref_rps)} | **{rps[0] / ref_rps[0]:.2f}** | {summary(ref, 'p99')[0]:.2f} |")
    if wires:
        print("\nBytes per response, as they come off the socket (one keep-alive answer to "
              f"GET {PATH}; headers + body):\n")
        print("| records | answer | coding | header bytes | body bytes | total |")
        print("|---|---|---|---|---|---|")
        for n, answers in wires.items():
            for name, (head, body, coding) in answers.items():
                print(f"| {n:,} | {name} | {coding or 'identity'} | {head:,} | {body:,} | {head + body:,} |")
    if sizes:
        print("\nMemory: the hot set's bodies per view (12 bodies: latest, first page, calendar and Atom "
              "feed of each filter), per coding, and the server's resident memory (VmRSS) after its "
              "hot set was made and after every run above:\n")
        print("| records | identity | br | zstd | gzip | coded, all three | RSS before load | RSS after load |")
        print("|---|---|---|---|---|---|---|---|")
        for n, s_ in sizes.items():
            coded = s_["br"] + s_["zstd"] + s_["gzip"]
            before, after = memory[n]
            print(f"| {n:,} | {s_['identity']:,} | {s_['br']:,} | {s_['zstd']:,} | {s_['gzip']:,} | {coded:,} "
                  f"| {before:.1f} MiB | {after:.1f} MiB |")


if __name__ == "__main__":
    main()
