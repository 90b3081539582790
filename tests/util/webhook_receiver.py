"""A webhook receiver for the black-box tests (tests/webhooks.rs).

Listens on 127.0.0.1 (PORT when given, else a free port; written to
PORT_FILE either way), appends every
request to LOG_FILE as one JSON line, and answers as CONTROL_FILE says,
read afresh at each request:

    {"secrets": {"/path": "whsec_..."},
     "scripts": {"/path": {"statuses": [500, 500], "delays": [3.0], "default": 200,
                           "location": "/elsewhere",
                           "answers": [{"headers": {"retry-after": "30"},
                                        "body": "{\"code\": 19001}"}],
                           "default_answer": {"body": "ok"}}}}

The n-th request to a path gets statuses[n] (else default, else 200) after
sleeping delays[n] seconds (else 0), with a Location header when the script
names one, and the headers and body of answers[n] (else default_answer,
else the body "ok"). A request to a path with a secret is
verified with the Standard Webhooks reference library (`standardwebhooks`
from PyPI); the log line says whether it verified and what it decoded.

usage: webhook_receiver.py PORT_FILE LOG_FILE CONTROL_FILE [PORT]
"""

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from standardwebhooks.webhooks import Webhook

PORT_FILE, LOG_FILE, CONTROL_FILE = sys.argv[1:4]
PORT = int(sys.argv[4]) if len(sys.argv) > 4 else 0
LOCK = threading.Lock()
COUNTS = {}


def control():
    try:
        with open(CONTROL_FILE, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        path = parts.path
        ctl = control()
        script = ctl.get("scripts", {}).get(path, {})
        with LOCK:
            n = COUNTS.get(path, 0)
            COUNTS[path] = n + 1
        statuses = script.get("statuses", [])
        delays = script.get("delays", [])
        status = statuses[n] if n < len(statuses) else script.get("default", 200)
        delay = delays[n] if n < len(delays) else 0
        entry = {
            "method": self.command,
            "path": path,
            "query": parts.query,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body.decode("utf-8", "replace"),
            "status": status,
            "delay": delay,
            "at": time.time(),
        }
        secret = ctl.get("secrets", {}).get(path)
        if secret is not None:
            try:
                entry["verified"] = Webhook(secret).verify(body, dict(self.headers.items()))
            except Exception as e:  # the library raises its own WebhookVerificationError
                entry["verified"] = None
                entry["verifyError"] = repr(e)
        line = json.dumps(entry) + "\n"
        with LOCK:
            with open(LOG_FILE, "a", encoding="utf-8") as f:
                f.write(line)
        if delay:
            time.sleep(delay)
        answers = script.get("answers", [])
        answer = answers[n] if n < len(answers) else script.get("default_answer", {})
        reply = answer.get("body", "ok").encode("utf-8")
        try:
            self.send_response(status)
            if script.get("location"):
                self.send_header("location", script["location"])
            for name, value in answer.get("headers", {}).items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
        except OSError:
            pass

    do_POST = handle_any
    do_GET = handle_any
    do_PUT = handle_any


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
tmp = PORT_FILE + ".tmp"
with open(tmp, "w", encoding="utf-8") as f:
    f.write(str(server.server_address[1]))
os.replace(tmp, PORT_FILE)
server.serve_forever()
