"""An example downstream for docker/compose.yml: prints every webhook it receives, checks its
Standard Webhooks signature, and answers 204."""
import base64, hashlib, hmac, json, os
from http.server import BaseHTTPRequestHandler, HTTPServer

SECRET = os.environ.get("EXAMPLE_SIGNING_SECRET", "")


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        key = base64.b64decode(SECRET.removeprefix("whsec_"))
        signed = f"{self.headers['webhook-id']}.{self.headers['webhook-timestamp']}.".encode() + body
        expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        valid = expected in self.headers.get("webhook-signature", "").split(" ")
        event = json.loads(body)
        print(f"{event['id']} {event['environment']} {event['type']}/{event['subtype']} signature={'ok' if valid else 'BAD'}", flush=True)
        self.send_response(204 if valid else 401)
        self.end_headers()


HTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
