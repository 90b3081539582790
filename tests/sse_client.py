"""A record-stream client for tests/stream.rs, built on httpx-sse (the SSE
client library Python programs use), so the stream is read the way its
users read it, not by our own parser.

Prints one JSON line per thing seen, flushed at once:
  {"status": 200, "headers": {...}}            the response head
  {"event": "...", "id": "...", "data": "..."} each event (id "" when it has none)
  {"end": "closed"}                             when the server ends the stream
  {"end": "error: ..."}                         when it ends with a protocol error
A non-200 answer prints its head and {"body": "..."} and exits 0.

Usage: sse_client.py URL [--last-event-id ID] [--header NAME:VALUE]... [--http2]

--http2 speaks HTTP/2 with prior knowledge (h2c), as a proxy in front would.
"""
import argparse, json, sys

import httpx
from httpx_sse import connect_sse


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--last-event-id")
    p.add_argument("--header", action="append", default=[])
    p.add_argument("--http2", action="store_true")
    a = p.parse_args()
    headers = {}
    for h in a.header:
        name, _, value = h.partition(":")
        headers[name.strip()] = value.strip()
    if a.last_event_id is not None:
        headers["Last-Event-ID"] = a.last_event_id
    # No read timeout: a stream is quiet between changes (the test bounds the wait).
    versions = {"http1": False, "http2": True} if a.http2 else {}
    with httpx.Client(timeout=httpx.Timeout(10.0, read=None), **versions) as client:
        with connect_sse(client, "GET", a.url, headers=headers) as source:
            r = source.response
            say({"status": r.status_code, "version": r.http_version,
                 "headers": {k.lower(): v for k, v in r.headers.items()}})
            if r.status_code != 200:
                r.read()
                say({"body": r.text})
                return
            try:
                for sse in source.iter_sse():
                    say({"event": sse.event, "id": sse.id, "data": sse.data})
            except Exception as e:  # noqa: BLE001 - how the stream ended is the output
                # h2 refuses the PING hyper sends with its closing GOAWAY: the
                # stream has ended all the same.
                say({"end": f"error: {type(e).__name__}: {e}"})
                return
    say({"end": "closed"})


if __name__ == "__main__":
    main()
