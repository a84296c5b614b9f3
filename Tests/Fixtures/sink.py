#!/usr/bin/env python3
"""A recording webhook sink for StoreRelay's end-to-end tests.

Independent of StoreRelay's own code on purpose: it checks the Standard Webhooks signature
with Python's hmac, and answers per path so one sink plays every kind of downstream:

  /ok            200
  /flaky/N       503 for the first N requests of each webhook-id, then 200
  /ratelimit     429 with Retry-After: 1 on the first request of each webhook-id, then 200
  /ratelimit-date 429 with an HTTP-date Retry-After 2 s ahead, then 200
  /bad           400
  /hang          never answers (holds the connection until the client gives up)
  /slow/MS       200 after MS milliseconds (a delivery still in flight when the gateway stops)
  /slow/MS/CODE  CODE after MS milliseconds

Every request is appended as one JSON line to --log: path, headers, body, and whether the
signature verified. The chosen port is printed on stdout as soon as the socket listens.
Usage: sink.py --log FILE [--secret whsec_...] [--cert PEM --key PEM]
"""
import argparse, base64, hashlib, hmac, json, ssl, sys, threading, time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = None
lock = threading.Lock()
seen = {}


def verify(headers, body):
    if not args.secret:
        return None
    key = base64.b64decode(args.secret[len("whsec_"):])
    signed = f"{headers.get('webhook-id')}.{headers.get('webhook-timestamp')}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [s.split(",", 1)[1] for s in headers.get("webhook-signature", "").split(" ") if s.startswith("v1,")]
    return any(hmac.compare_digest(expected, o) for o in offered)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        hook_id = self.headers.get("webhook-id", "")
        with lock:
            key = (self.path, hook_id)
            seen[key] = seen.get(key, 0) + 1
            count = seen[key]
            record = {
                "path": self.path, "at": time.time(), "count": count,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode("utf-8", "replace"), "signatureValid": verify(self.headers, body),
            }
            with open(args.log, "a") as f:
                f.write(json.dumps(record) + "\n")
        status, extra = 200, {}
        if self.path.startswith("/flaky/"):
            status = 503 if count <= int(self.path.split("/")[2]) else 200
        elif self.path.startswith("/fail-every/"):
            # /fail-every/M/K[/...]: 503 for the first K attempts of events whose id ends
            # in a number divisible by M (event-0, event-3, ... for M=3); 200 otherwise.
            parts = self.path.split("/")
            every, times = int(parts[2]), int(parts[3])
            number = int(hook_id.rsplit("-", 1)[-1]) if hook_id.rsplit("-", 1)[-1].isdigit() else 1
            status = 503 if number % every == 0 and count <= times else 200
        elif self.path == "/ratelimit":
            status, extra = (429, {"Retry-After": "1"}) if count == 1 else (200, {})
        elif self.path == "/ratelimit-date":
            status, extra = (429, {"Retry-After": formatdate(time.time() + 2, usegmt=True)}) if count == 1 else (200, {})
        elif self.path == "/bad":
            status = 400
        elif self.path.startswith("/slow/"):
            parts = self.path.split("/")
            time.sleep(int(parts[2]) / 1000)
            if len(parts) > 3:
                status = int(parts[3])
        elif self.path == "/hang":
            time.sleep(30)
            return
        payload = b'{"ok":true}' if status == 200 else b'{"error":"test"}'
        self.send_response(status)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--secret")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
