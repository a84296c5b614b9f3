#!/usr/bin/env python3
"""A fake Google OAuth2 token endpoint and Play Developer API for StoreRelay's enrichment tests.

Independent of StoreRelay's code on purpose: it checks each assertion's RS256 signature with
the `openssl` command-line tool against the service account's public key, and answers as
Google's documentation describes:

  POST /token    grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=JWT
                 -> {"access_token": "ya29.fake-N", "expires_in": 3599, "token_type": "Bearer"}
                 or 400 {"error": "invalid_grant", "error_description": ...}
  GET  /androidpublisher/v3/applications/{pkg}/purchases/subscriptionsv2/tokens/{token}
  GET  /androidpublisher/v3/applications/{pkg}/purchases/products/{productId}/tokens/{token}
                 with "Authorization: Bearer <an access token this fake issued>", else 401
                 {"error": {"code": 401, "message": ..., "status": "UNAUTHENTICATED"}}

The control file (JSON, read again on every request) holds what Google would hold:
  "subscriptions": {purchaseToken: SubscriptionPurchaseV2 object}   (404 NOT_FOUND otherwise)
  "products":      {productId + "/" + purchaseToken: ProductPurchase object}
  "tokenLifetime": expires_in of the tokens issued (default 3599)
  "tokenDelayMs":  a pause before answering each token request
  "allowFutureSeconds": how far ahead of this fake's clock an assertion's iat may be (default 60)
  "script": answers to give instead, in order; each step names the endpoint it applies to
            ("token" or "api"), and is used by the next request to that endpoint:
            {"endpoint": "api", "status": 500}                  an error answer
            {"endpoint": "api", "status": 429, "retryAfter": 1} with Retry-After (seconds)
            {"endpoint": "api", "revokeTokens": true}           every token issued so far
                                                                is refused from now on (401)
            {"endpoint": "api", "delayMs": 3000}                answer normally, but late (its
                                                                arrival logged at once, endpoint
                                                                "delayed")
            {"endpoint": "api", "hugeBytes": 2000000}           a 200 with a body that large
            {"endpoint": "api", "raw": "not json"}              a 200 with that body
            {"endpoint": "token", "status": 400, "error": "invalid_grant"}

Every request is appended as one JSON line to --log (before its answer is sent). The port is
printed on stdout.
Usage: fake_google_play_api.py --log F --control F --cert PEM --key PEM --public-key PEM
                               --email E --key-id K
The token endpoint's URL, the assertions' `aud`, is https://127.0.0.1:PORT/token.
"""
import argparse, json, threading, time
from http.server import BaseHTTPRequestHandler
from fake_api_common import b64url_decode, decode_compact_jws, https_server, log_and_send, openssl_verifies, read_control, serve
from urllib.parse import parse_qs, unquote, urlsplit

args = None
lock = threading.Lock()
consumed = {"token": 0, "api": 0}
issued = {}         # access token -> expiry (UNIX seconds)
revoked = set()
counter = 0

SCOPE = "https://www.googleapis.com/auth/androidpublisher"
GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
PREFIX = "/androidpublisher/v3/applications/"


def control():
    return read_control(args.control)


def verify_assertion(assertion, state):
    """None when the assertion is one Google would take from this service account, else why not."""
    decoded = decode_compact_jws(assertion)
    if isinstance(decoded, str):
        return decoded
    header, claims, signature, signing_input = decoded
    if header != {"alg": "RS256", "kid": args.key_id, "typ": "JWT"}:
        return f"bad header {header}"
    expected = {"iss": args.email, "scope": SCOPE, "aud": args.token_uri}
    for key, value in expected.items():
        if claims.get(key) != value:
            return f"claim {key} is {claims.get(key)!r}, expected {value!r}"
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, int) or not isinstance(exp, int):
        return "iat and exp must be whole seconds"
    now = time.time()
    if iat > now + state.get("allowFutureSeconds", 60) or exp <= iat or exp - iat > 3600 or exp < now - 60:
        return f"bad lifetime iat={iat} exp={exp} now={int(now)}"
    return None if openssl_verifies(args.public_key, signing_input, signature) else "signature does not verify"


def next_step(state, endpoint):
    with lock:
        steps = [step for step in state.get("script", []) if step.get("endpoint") == endpoint]
        if consumed[endpoint] < len(steps):
            consumed[endpoint] += 1
            return steps[consumed[endpoint] - 1]
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_body(self, status, body, record, headers=None):
        record["status"] = status
        log_and_send(self, args.log, lock, record, status, body, headers)

    def answer(self, status, payload, record, headers=None):
        self.send_body(status, json.dumps(payload).encode(), record, headers)

    def api_error(self, status, state_name, message, record, headers=None):
        self.answer(status, {"error": {"code": status, "message": message, "status": state_name}}, record, headers)

    def scripted(self, step, record, api):
        """Answers a scripted failure; False when the step only changes what follows."""
        if "delayMs" in step:
            # Logged on arrival, so a test can tell the request reached the fake before its answer.
            with lock:
                with open(args.log, "a") as f:
                    f.write(json.dumps({"endpoint": "delayed", "rawPath": self.path, "at": time.time()}) + "\n")
            time.sleep(step["delayMs"] / 1000)
            return False
        if step.get("revokeTokens"):
            with lock:
                revoked.update(issued.keys())
            return False
        if "hugeBytes" in step:
            self.send_body(200, b'{"kind":"' + b"x" * step["hugeBytes"] + b'"}', record)
            return True
        if "raw" in step:
            self.send_body(200, step["raw"].encode(), record)
            return True
        status = step["status"]
        headers = {"Retry-After": str(step["retryAfter"])} if "retryAfter" in step else None
        if api:
            self.api_error(status, step.get("error", "INTERNAL"), "Scripted failure.", record, headers)
        else:
            self.answer(status, {"error": step.get("error", "internal_failure"), "error_description": "Scripted failure."},
                        record, headers)
        return True

    def do_POST(self):
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length) if length else b""
        record = {"endpoint": "token" if url.path == "/token" else "unknown", "method": "POST", "rawPath": self.path,
                  "at": time.time(), "contentType": self.headers.get("Content-Type")}
        if url.path != "/token":
            return self.api_error(404, "NOT_FOUND", "Not found.", record)
        state = control()
        if state.get("tokenDelayMs"):
            time.sleep(state["tokenDelayMs"] / 1000)
        step = next_step(state, "token")
        if step is not None and self.scripted(step, record, api=False):
            return
        form = parse_qs(raw.decode(), keep_blank_values=True, strict_parsing=False)
        record["grantType"] = form.get("grant_type", [None])[0]
        if self.headers.get("Content-Type") != "application/x-www-form-urlencoded":
            record["error"] = "not form-encoded"
            return self.answer(400, {"error": "invalid_request", "error_description": "Bad content type."}, record)
        if record["grantType"] != GRANT:
            record["error"] = "bad grant type"
            return self.answer(400, {"error": "unsupported_grant_type", "error_description": "Invalid grant_type."}, record)
        why = verify_assertion(form.get("assertion", [""])[0], state)
        record["error"] = why
        if why:
            return self.answer(400, {"error": "invalid_grant", "error_description": why}, record)
        global counter
        with lock:
            counter += 1
            token = f"ya29.fake-{counter}"
            lifetime = state.get("tokenLifetime", 3599)
            issued[token] = time.time() + lifetime
        record["issued"] = token
        self.answer(200, {"access_token": token, "expires_in": lifetime, "token_type": "Bearer"}, record)

    def do_GET(self):
        url = urlsplit(self.path)
        record = {"endpoint": "api", "method": "GET", "rawPath": self.path, "at": time.time()}
        state = control()
        authorization = self.headers.get("Authorization", "")
        token = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else None
        record["token"] = token
        step = next_step(state, "api")
        if step is not None and self.scripted(step, record, api=True):
            return
        with lock:
            valid = token in issued and token not in revoked and issued[token] > time.time()
        if not valid:
            return self.api_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", record)
        if not url.path.startswith(PREFIX):
            return self.api_error(404, "NOT_FOUND", "Not found.", record)
        segments = [unquote(segment) for segment in url.path[len(PREFIX):].split("/")]
        record["segments"] = segments
        if len(segments) == 5 and segments[1:3] == ["purchases", "subscriptionsv2"] and segments[3] == "tokens":
            record["kind"] = "subscription"
            resource = state.get("subscriptions", {}).get(segments[4])
        elif len(segments) == 6 and segments[1:3] == ["purchases", "products"] and segments[4] == "tokens":
            record["kind"] = "product"
            resource = state.get("products", {}).get(segments[3] + "/" + segments[5])
        else:
            return self.api_error(404, "NOT_FOUND", "Not found.", record)
        if resource is None:
            return self.api_error(404, "NOT_FOUND", "The purchase token was not found.", record)
        self.answer(200, resource, record)


def main():
    global args
    parser = argparse.ArgumentParser()
    for name in ["--log", "--control", "--cert", "--key", "--public-key", "--email", "--key-id"]:
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    server = https_server(Handler, args.cert, args.key)
    args.token_uri = f"https://127.0.0.1:{server.server_address[1]}/token"
    serve(server)


if __name__ == "__main__":
    main()
