#!/usr/bin/env python3
"""A fake App Store Server API for StoreRelay's reconciliation and probe tests.

Independent of StoreRelay's code on purpose: it checks each request's JWT with the `openssl`
command-line tool, and answers as Apple's documentation describes (NotificationHistoryRequest
and Response, SendAttemptItem, CheckTestNotificationResponse, the error codes):

  POST /inApps/v1/notifications/history[?paginationToken=T]   pages of --control's "history"
  POST /inApps/v1/notifications/test                          {"testNotificationToken": ...}
  GET  /inApps/v1/notifications/test/{token}                  404 4040008, then the attempts

The control file (JSON, read again on every request) holds what Apple would hold:
  "history":  [{"signedPayload": JWS, "signedDate": ms, "failed": bool}] (oldest first)
  "pageSize": notifications per page (Apple's is 20)
  "pageDelayMs": a pause before answering each history page
  "script":   answers to give instead, in order, one per history request:
              {"status": 429, "retryAfterMs": 1500} (Retry-After = now + that, in UNIX ms),
              {"status": 500, "errorCode": 5000001}, {"status": 401}, {"expireToken": true}
              (a 4000017 PaginationTokenExpiredError for the next request with a token)
  "unauthorized": true   every request answers 401
  "test":     {"signedPayload": JWS, "deliverTo": URL, "delayMs": 200, "deliver": bool}

Every request is appended as one JSON line to --log. The port is printed on stdout.
Usage: fake_appstore_api.py --log F --control F --cert PEM --key PEM --public-key PEM
                            --key-id K --issuer I --bundle B
"""
import argparse, base64, json, threading, time, urllib.request, uuid
from http.server import BaseHTTPRequestHandler
from fake_api_common import b64url_decode, decode_compact_jws, https_server, log_and_send, openssl_verifies, read_control, serve
from urllib.parse import parse_qs, urlsplit

args = None
lock = threading.Lock()
consumed = 0          # script entries used so far
tests = {}            # testNotificationToken -> {"attempts": [...], "signedPayload": ...}


def now_ms():
    return int(time.time() * 1000)


def der_integer(value):
    value = value.lstrip(b"\x00") or b"\x00"
    if value[0] & 0x80:
        value = b"\x00" + value
    return b"\x02" + bytes([len(value)]) + value


def verify_jwt(authorization):
    """None when the bearer token is Apple-valid for this key, else why not."""
    if not authorization.startswith("Bearer "):
        return "no bearer token"
    decoded = decode_compact_jws(authorization[len("Bearer "):])
    if isinstance(decoded, str):
        return decoded
    header, claims, signature, signing_input = decoded
    if header != {"alg": "ES256", "kid": args.key_id, "typ": "JWT"}:
        return f"bad header {header}"
    now = time.time()
    expected = {"iss": args.issuer, "aud": "appstoreconnect-v1", "bid": args.bundle}
    for key, value in expected.items():
        if claims.get(key) != value:
            return f"claim {key} is {claims.get(key)!r}, expected {value!r}"
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, int) or not isinstance(exp, int):
        return "iat and exp must be whole seconds"
    if iat > now + 60 or exp <= now or exp - iat > 3600:
        return f"bad lifetime iat={iat} exp={exp} now={int(now)}"
    if len(signature) != 64:
        return "the signature is not raw R||S"
    der = der_integer(signature[:32]) + der_integer(signature[32:])
    der = b"\x30" + bytes([len(der)]) + der
    return None if openssl_verifies(args.public_key, signing_input, der) else "signature does not verify"


def control():
    return read_control(args.control)


def signed_date(item):
    if "signedDate" in item:
        return item["signedDate"]
    return json.loads(b64url_decode(item["signedPayload"].split(".")[1])).get("signedDate", 0)


def deliver_test(token, test):
    time.sleep(test.get("delayMs", 200) / 1000)
    result = "NO_RESPONSE"
    if test.get("deliver", True):
        body = json.dumps({"signedPayload": test["signedPayload"]}).encode()
        request = urllib.request.Request(test["deliverTo"], data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                result = "SUCCESS" if response.status == 200 else "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        except urllib.error.HTTPError:
            result = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        except Exception:
            result = "NO_RESPONSE"
    with lock:
        tests[token]["attempts"].append({"attemptDate": now_ms(), "sendAttemptResult": result})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, payload, headers=None, record=None):
        record["status"] = status
        record["answer"] = payload
        log_and_send(self, args.log, lock, record, status, json.dumps(payload).encode(), headers)

    def error(self, status, code, message, record, headers=None):
        self.answer(status, {"errorCode": code, "errorMessage": message}, headers, record)

    def handle_request(self, method):
        global consumed
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length) if length else b""
        record = {"method": method, "path": url.path, "query": parse_qs(url.query), "at": now_ms(),
                  "body": json.loads(raw) if raw else None}
        jwt_error = verify_jwt(self.headers.get("Authorization", ""))
        record["jwtError"] = jwt_error
        state = control()
        if jwt_error or state.get("unauthorized"):
            # Apple answers 401 with no error body.
            return self.answer(401, {}, record=record)
        if method == "POST" and url.path == "/inApps/v1/notifications/history":
            return self.history(state, record)
        if method == "POST" and url.path == "/inApps/v1/notifications/test":
            token = str(uuid.uuid4())
            with lock:
                tests[token] = {"attempts": [], "signedPayload": state["test"]["signedPayload"]}
            threading.Thread(target=deliver_test, args=(token, state["test"]), daemon=True).start()
            return self.answer(200, {"testNotificationToken": token}, record=record)
        prefix = "/inApps/v1/notifications/test/"
        if method == "GET" and url.path.startswith(prefix):
            with lock:
                entry = tests.get(url.path[len(prefix):])
                entry = json.loads(json.dumps(entry)) if entry else None
            if entry is None:
                return self.error(400, 4000020, "Invalid test notification token.", record)
            if not entry["attempts"]:
                return self.error(404, 4040008, "Test notification not found.", record)
            return self.answer(200, {"signedPayload": entry["signedPayload"], "sendAttempts": entry["attempts"]}, record=record)
        return self.error(404, 4040000, "Not found.", record)

    def history(self, state, record):
        global consumed
        body = record["body"] or {}
        token = record["query"].get("paginationToken", [None])[0]
        script = state.get("script", [])
        with lock:
            step = script[consumed] if consumed < len(script) else None
            if step is not None and (not step.get("expireToken") or token):
                consumed += 1
            else:
                step = None
        if step is not None:
            if step.get("expireToken"):
                return self.error(400, 4000017, "Pagination token expired.", record)
            status = step["status"]
            if status == 401:
                return self.answer(401, {}, record=record)
            headers = {"Retry-After": str(now_ms() + step["retryAfterMs"])} if "retryAfterMs" in step else None
            return self.error(status, step.get("errorCode", 5000000), "Scripted failure.", record, headers)
        start, end = body.get("startDate"), body.get("endDate")
        if not isinstance(start, int) or not isinstance(end, int):
            return self.error(400, 4000015, "Invalid start date.", record)
        if start >= end:
            return self.error(400, 4000013, "Start date after end date.", record)
        if start < now_ms() - 180 * 86_400_000:
            return self.error(400, 4000012, "Start date too far in past.", record)
        matching = [item for item in state.get("history", [])
                    if start <= signed_date(item) <= end and (item.get("failed") or not body.get("onlyFailures"))]
        offset = 0
        if token:
            try:
                offset = json.loads(b64url_decode(token))["offset"]
            except Exception:
                return self.error(400, 4000014, "Invalid pagination token.", record)
        size = state.get("pageSize", 20)
        page = matching[offset:offset + size]
        time.sleep(state.get("pageDelayMs", 0) / 1000)
        payload = {"notificationHistory": [{"signedPayload": item["signedPayload"],
                                            "sendAttempts": item.get("attempts", [])} for item in page],
                   "hasMore": offset + size < len(matching)}
        if payload["hasMore"]:
            payload["paginationToken"] = base64.urlsafe_b64encode(json.dumps({"offset": offset + size}).encode()).decode().rstrip("=")
        record["items"] = len(page)
        return self.answer(200, payload, record=record)

    def do_POST(self):
        self.handle_request("POST")

    def do_GET(self):
        self.handle_request("GET")


def main():
    global args
    parser = argparse.ArgumentParser()
    for name in ["--log", "--control", "--cert", "--key", "--public-key", "--key-id", "--issuer", "--bundle"]:
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    serve(https_server(Handler, args.cert, args.key))


if __name__ == "__main__":
    main()
