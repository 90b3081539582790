#!/usr/bin/env python3
"""What one counted request to each feed costs in bytes, as the history
grows: the Atom feed (the newest 50 records) and the calendar (the first
200 events of its list), at 100 and 100,000 records.

Usage: bench/feed_sizes.py [--records 100,100000]
Needs: target/release/resetctl (or RESETCTL_BIN). Sizes do not depend on
the build profile. Prints Markdown headed by the commit measured.
"""
import argparse, json, os, subprocess, sys, tempfile, urllib.request

from common import BIN, commit
from http_bench import free_port, generated, stop, wait_http


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", default="100,100000")
    args = ap.parse_args()
    print(f"Feed sizes, commit {commit()}, `python3 bench/feed_sizes.py --records {args.records}`\n")
    print("| records | records.atom bytes | records.ics bytes | calendar events |")
    print("|---|---|---|---|")
    for n in [int(x) for x in args.records.split(",")]:
        tmp = tempfile.mkdtemp(prefix="resetctl-sizes-")
        data = os.path.join(tmp, "data")
        doc = os.path.join(tmp, "records.json")
        with open(doc, "w") as f:
            json.dump(generated(n), f)
        subprocess.run([BIN, "--data-dir", data, "--now", "2026-11-20T10:00:00.000Z", "seed", doc],
                       check=True, capture_output=True)
        port = free_port()
        proc = subprocess.Popen([BIN, "--data-dir", data, "--log", "warn", "serve", "--listen", f"127.0.0.1:{port}",
                                 "--no-rate-limit"], stdout=subprocess.DEVNULL)
        try:
            atom = wait_http(f"http://127.0.0.1:{port}/openapi/v1/records.atom")
            ics = wait_http(f"http://127.0.0.1:{port}/openapi/v1/records.ics")
        finally:
            stop(proc)
        print(f"| {n:,} | {len(atom):,} | {len(ics):,} | {ics.count(b'BEGIN:VEVENT'):,} |")


if __name__ == "__main__":
    sys.exit(main())
