#!/usr/bin/env python3
"""Writes the committed seed corpora under Fuzz/corpus/ (run from anywhere; idempotent).

Every seed is hand-made: small valid and near-valid inputs. Real Apple vectors are never
written here; run.sh adds them to a temporary corpus at run time.
"""
import base64, json, os, pathlib

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"

def write(target, name, data):
    d = ROOT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())

def b64(b):
    return base64.urlsafe_b64encode(b if isinstance(b, bytes) else b.encode()).rstrip(b"=").decode()

def compact(o):
    return json.dumps(o, separators=(",", ":"))

# ---- HTTP request streams ----------------------------------------------------------------
body = b'{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.e30.AAAA"}'
http = {
    "post-content-length": b"POST /appstore/notifications HTTP/1.1\r\nHost: relay.example\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body),
    "post-chunked-ext-trailers": b"POST /appstore/notifications HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value;q=\"x\\\"y\"\r\nhello\r\n0A\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n",
    "expect-continue": b"POST /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
    "pipelined": b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nPOST /x?y=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}GET /readyz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    "http10-keepalive": b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nHEAD / HTTP/1.0\r\n\r\n",
    "absolute-form": b"GET http://relay.example:8080/metrics?x HTTP/1.1\r\nHost: relay.example\r\n\r\n",
    "options-star": b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
    "leading-crlf": b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    "content-length-list": b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4, 4\r\nContent-Length: 4\r\n\r\nabcd",
    "chunked-empty-trailers-then-get": b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    # Near-valid: each must be rejected with one specific error.
    "bad-bare-lf": b"GET / HTTP/1.1\nHost: a\n\n",
    "bad-cl-and-te": b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "bad-conflicting-cl": b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
    "bad-obs-fold": b"GET / HTTP/1.1\r\nHost: a\r\nX-Folded: a\r\n b\r\n\r\n",
    "bad-missing-host": b"GET / HTTP/1.1\r\nAccept: */*\r\n\r\n",
    "bad-two-hosts": b"GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n",
    "bad-chunk-size": b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "bad-huge-chunk": b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n",
    "bad-chunk-crlf": b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n",
    "bad-huge-content-length": b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    "bad-version": b"GET / HTTP/2.0\r\nHost: a\r\n\r\n",
    "bad-method": b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n",
    "bad-target": b"GET relay.example:443 HTTP/1.1\r\nHost: a\r\n\r\n",
    "bad-header-value": b"GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n",
    "bad-te-http10": b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "bad-cr-alone": b"GET / HTTP/1.1\rHost: a\r\n\r\n",
}
for name, data in http.items():
    write("FuzzHTTPParser", name, data)

# ---- Notification bodies ---------------------------------------------------------------
header = {"alg": "ES256", "x5c": ["MIIBszCCAVmgAwIBAgIBATAKBggqhkjOPQQDAjA=", "MIIC", "MIID"]}
def payload(env, **extra):
    p = {"notificationType": "DID_RENEW", "subtype": "BILLING_RECOVERY",
         "notificationUUID": "002e14d5-51f5-4503-b5a8-c3a1af68eb20", "version": "2.0",
         "signedDate": 1698148900000,
         "data": {"appAppleId": 1234567890, "bundleId": "com.acme.journal", "bundleVersion": "42",
                  "environment": env, "status": 1}}
    p.update(extra)
    return p
txn = {"transactionId": "2000000450000000", "originalTransactionId": "2000000400000000",
       "bundleId": "com.acme.journal", "productId": "monthly", "purchaseDate": 1698148800000,
       "originalPurchaseDate": 1697679936711.0747, "expiresDate": 1700827200000, "quantity": 1,
       "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED",
       "signedDate": 1698148900000, "environment": "Xcode", "price": 4990, "currency": "USD"}
renewal = {"originalTransactionId": "2000000400000000", "autoRenewProductId": "monthly",
           "productId": "monthly", "autoRenewStatus": 1, "signedDate": 1698148900000,
           "environment": "Xcode", "recentSubscriptionStartDate": -62135769600000, "renewalDate": 1700827200000}
app_txn = {"receiptType": "Xcode", "bundleId": "com.acme.journal", "appAppleId": 1234567890,
           "receiptCreationDate": 1698148900000, "originalPurchaseDate": 1698148800000}
sig = b"\x00" * 64

def jws(h, p, s=sig):
    return b64(compact(h)) + "." + b64(compact(p)) + "." + b64(s)

write("FuzzNotification", "v2-body-sandbox", compact({"signedPayload": jws(header, payload("Sandbox"))}))
write("FuzzNotification", "v2-compact-production", jws(header, payload("Production")))
write("FuzzNotification", "v2-body-xcode-nested", compact({"signedPayload": jws(header, payload("Xcode", data={
    "bundleId": "com.acme.journal", "environment": "Xcode",
    "signedTransactionInfo": jws(header, txn), "signedRenewalInfo": jws(header, renewal)}))}))
write("FuzzNotification", "v2-alg-none", jws({"alg": "none"}, payload("Sandbox")))
write("FuzzNotification", "v2-signed-payload-not-string", '{"signedPayload":42}')

def structured(*parts):
    return b"\x00".join(compact(p).encode() if not isinstance(p, bytes) else p for p in parts)
write("FuzzNotification", "s-xcode-data", structured(header, payload("Xcode"), txn, renewal))
write("FuzzNotification", "s-localtesting-app-data", structured(header, {
    "notificationType": "RESCIND_CONSENT", "notificationUUID": "u-1", "version": "2.0",
    "signedDate": 1698148900000.5, "appData": {"appAppleId": 1, "bundleId": "com.acme.journal", "environment": "LocalTesting"}},
    b"", b"", {**app_txn, "receiptType": "LocalTesting"}))
write("FuzzNotification", "s-summary", structured(header, {
    "notificationType": "RENEWAL_EXTENSION", "subtype": "SUMMARY", "notificationUUID": "u-2",
    "summary": {"requestIdentifier": "r", "environment": "Xcode", "appAppleId": 2, "bundleId": "com.acme.journal",
                "productId": "monthly", "storefrontCountryCodes": ["USA", "FRA"], "succeededCount": 5, "failedCount": 0}}))
write("FuzzNotification", "s-external-token", structured(header, {
    "notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": "UNREPORTED", "notificationUUID": "u-3",
    "externalPurchaseToken": {"externalPurchaseId": "SANDBOX_b2a0", "tokenCreationDate": 1698148900000,
                              "appAppleId": 3, "bundleId": "com.acme.journal"}}))
write("FuzzNotification", "s-consumption", structured(header, payload("Xcode", notificationType="CONSUMPTION_REQUEST",
    data={"environment": "Xcode", "bundleId": "com.acme.journal", "consumptionRequestReason": "UNINTENDED_PURCHASE"}),
    {**txn, "revocationDate": -1.5, "expiresDate": 1e300}))
write("FuzzNotification", "s-mismatch", structured(header, payload("Xcode"), {**txn, "bundleId": "com.other", "environment": "Sandbox"}))
v1 = {"notification_type": "DID_RECOVER", "password": "secret", "environment": "PROD", "bid": "com.acme.journal",
      "bvrs": "42", "auto_renew_status": "true", "auto_renew_product_id": "monthly",
      "original_transaction_id": "1000000000000001",
      "unified_receipt": {"environment": "Production", "status": 0, "latest_receipt": "MIIT",
          "latest_receipt_info": [
              {"original_transaction_id": "1000000000000001", "transaction_id": "1000000000000009",
               "product_id": "monthly", "purchase_date_ms": "1698148800000", "purchase_date": "2023-10-24 12:00:00 Etc/GMT",
               "purchase_date_pst": "2023-10-24 05:00:00 America/Los_Angeles", "expires_date_ms": "1700827200000",
               "is_trial_period": "false", "is_in_intro_offer_period": "0", "quantity": "1",
               "cancellation_date_ms": "1698148900000", "cancellation_reason": "0", "web_order_line_item_id": "1"}],
          "pending_renewal_info": [
              {"original_transaction_id": "1000000000000001", "auto_renew_status": "1", "product_id": "monthly",
               "auto_renew_product_id": "yearly", "price_consent_status": "0", "grace_period_expires_date_ms": "1700000000000",
               "is_in_billing_retry_period": "1", "expiration_intent": "2"}]}}
write("FuzzNotification", "v1-did-recover", compact(v1))
write("FuzzNotification", "v1-interactive-renewal", compact({"notification_type": "INTERACTIVE_RENEWAL", "password": "x",
    "environment": "Sandbox", "latest_receipt_info": {"product_id": "p", "purchase_date_ms": 1}, "nested": [{"password": "y"}]}))
# Regressions (Tests/EventsTests, Tests/AppStoreTests *FuzzRegressionTests): an escaped
# `password` member name, and a nested payload deeper than a stored event can hold.
write("FuzzNotification", "v1-escaped-password", '{"notification_type":"DID_RENEW","pass\\u0077ord":"s","environment":"Sandbox"}')
write("FuzzNotification", "s-deep-transaction", structured(header, payload("Xcode"), b'{"environment":"Xcode","x":' + b"[" * 40 + b"]" * 40 + b"}"))
write("FuzzNotification", "stored-event", compact({"id": "u", "source": "appstore", "version": "2.0", "environment": "sandbox",
    "type": "TEST", "subtype": None, "legacyType": None, "signedDate": None, "receivedAt": "2026-01-01T00:00:00.000Z",
    "app": {"bundleId": "b", "appAppleId": None, "bundleVersion": None}, "raw": "x"}))
write("FuzzNotification", "json-escapes", '[" \\u0000\\b\\f\\n\\r\\t\\"\\\\\\/ \\ud83d\\ude00 \\u2028\\u2029 \u00e9 \u212a",-0.0e+10,1E-3,123456789012345678901234567890,true,false,null,{}]')
write("FuzzNotification", "json-deep", "[" * 64 + "]" * 64)
write("FuzzNotification", "json-duplicate-keys", '{"a":1,"a":{"b":[2,3]},"\\u0061":4}')

# ---- routes.conf ------------------------------------------------------------------------
repo = pathlib.Path(__file__).resolve().parent.parent
write("FuzzRoutesConf", "repository-routes.conf", (repo / "routes.conf").read_bytes())
spec = """listen 0.0.0.0:8080
path   /appstore/notifications
path   /appstore/sandbox sandbox
tls    cert.pem key.pem
admin  127.0.0.1:9090
admin-token ${SECRET}
data   ./data
max-body 1MiB
read-timeout 1m30s
idle-timeout 500ms
trust-root ./dev-ca/root.pem
environments production sandbox xcode

app com.acme.journal {
    apple-id 1234567890
    shared-secret ${A}
}
shared-secret "primary secret with spaces"

destination billing webhook https://billing.internal/appstore?x=1 {
    signing-secret ${SECRET}
    format normalized
    include-raw no
    header X-Team billing
    header Authorization "Bearer ${A}"
    ca-file ./internal-ca.pem
    timeout 10s
    concurrency 8
    max-attempts 12
    backoff 1s 1h
    max-age 72h
}
destination ledger file ./data/queues/ledger {
    rotate 64MiB 1h
    compress gzip
}

# route  environment  app               type[/subtype]       ->  destinations
route    production   com.acme.journal  *                    ->  billing, ledger
route    production   *                 REFUND,REVOKE        ->  billing
route    sandbox      *                 DID_RENEW/*,SUBSCRIBED/RESUBSCRIBE  ->  ledger
route    *            *                 TEST                 ->  ledger
"""
write("FuzzRoutesConf", "spec-example.conf", spec)
write("FuzzRoutesConf", "ipv6-crlf-bom.conf", "\ufeff# comment\r\nlisten [::1]:0\r\nadmin localhost:9091\r\ndata \"./my data\"\r\nmax-body 512\r\n")
write("FuzzRoutesConf", "errors.conf", """listen 0.0.0.0:99999
path relative
max-body 12XB
read-timeout 10
environments production nowhere
admin-token ${UNDEFINED}
shared-secret ${EMPTY}
data $HOME
app com.a {
    apple-id -1
    bogus option
destination d webhook ftp://x {
    timeout 1h30
}
}
route production * * billing
route production * * -> nowhere
"quoted"x "unterminated
bad\x01control
""")
write("FuzzRoutesConf", "unclosed.conf", "destination q file ./q {\n    rotate 1GiB 1d\n    compress none\n")
write("FuzzRoutesConf", "invalid-utf8.conf", b"listen 0.0.0.0:8080 \xff\xfe\ndata ./d\xc3\n")

# ---- ES256 verdicts: key, way, 64 bytes of material, message -------------------------------
for way in range(7):
    for key in range(3):
        write("FuzzES256Verdict", "way%d-key%d" % (way, key), bytes([key, way]) + bytes(64) + b"signed input")
write("FuzzES256Verdict", "way1-flip-one-bit", bytes([0, 1]) + bytes(63) + b"\x01" + b"header.payload")
write("FuzzES256Verdict", "way3-edge-n", bytes([1, 3, 3]) + bytes(63) + b"x")
write("FuzzES256Verdict", "way5-wrap-p-minus-n", bytes([2, 5, 1]) + bytes(63) + b"")

# FuzzRedisTopology: what cluster nodes and sentinels answer (captured from redis-server 7.0
# and valkey-server 8.1), and redirects.
def resp(v):
    if v is None: return b"$-1\r\n"
    if isinstance(v, int): return b":%d\r\n" % v
    if isinstance(v, str): return b"$%d\r\n%s\r\n" % (len(v.encode()), v.encode())
    return b"*%d\r\n" % len(v) + b"".join(resp(e) for e in v)

def shard_node(endpoint, port, role, health="online", tls=None):
    n = ["id", "52026d7956d3b8d3bc6936daad65ca9975bf087d", "port", port]
    if tls: n += ["tls-port", tls]
    return n + ["ip", "127.0.0.1", "endpoint", endpoint, "role", role, "replication-offset", 0, "health", health]

write("FuzzRedisTopology", "shards", resp([
    ["slots", [10923, 16383], "nodes", [shard_node("127.0.0.1", 17003, "master")]],
    ["slots", [0, 5460, 5461, 10922], "nodes", [shard_node("primary.internal", 17001, "master", tls=18001),
                                                shard_node(None, 17002, "replica", "loading")]],
]))
write("FuzzRedisTopology", "slots", resp([
    [0, 5460, ["127.0.0.1", 17001, "52026d7956d3b8d3bc6936daad65ca9975bf087d", []]],
    [5461, 16383, ["?", 17002, "3abeaf05e8b53387e4218e1d9a08b90bc139feff", []], ["::1", 17004, "x", []]],
]))
write("FuzzRedisTopology", "sentinel", resp(["127.0.0.1", "17101"]) + b"*-1\r\n")
write("FuzzRedisTopology", "role", resp(["master", 0, []]) + resp(["slave", "127.0.0.1", 17101, "connected", 827]))
write("FuzzRedisTopology", "moved", b"MOVED 12454 127.0.0.1:17003\r\n-ASK 0 cache-2.internal:6380\r\n-MOVED 1 :7000\r\n")

# FuzzPlayPush: mode byte, then header JSON \0 claims JSON \0 push body (see the target).
def play_claims(**change):
    c = {"aud": "https://relay.example.test/play", "azp": "1", "email": "pubsub-push@storerelay-test.iam.gserviceaccount.com",
         "email_verified": True, "exp": 1800003600, "iat": 1800000000, "iss": "https://accounts.google.com", "sub": "1"}
    c.update(change)
    return compact({k: v for k, v in c.items() if v is not None})

def play_body(data, message_id="136969346945"):
    encoded = base64.b64encode(data.encode()).decode()
    return compact({"message": {"attributes": {}, "data": encoded, "messageId": message_id, "message_id": message_id,
                                "publishTime": "2026-11-20T10:15:30.123Z"}, "subscription": "projects/acme/subscriptions/play"})

def play_notification(kind, inner):
    return compact({"version": "1.0", "packageName": "com.acme.journal", "eventTimeMillis": "1800000000123", kind: inner})

rs256 = compact({"alg": "RS256", "kid": "key-1", "typ": "JWT"})
play_notifications = {
    "subscription": play_notification("subscriptionNotification", {"version": "1.0", "notificationType": 2, "purchaseToken": "t", "subscriptionId": "s"}),
    "one-time": play_notification("oneTimeProductNotification", {"version": "1.0", "notificationType": 1, "purchaseToken": "t", "sku": "coins"}),
    "voided": play_notification("voidedPurchaseNotification", {"purchaseToken": "t", "orderId": "GPA.1", "productType": 1, "refundType": 1}),
    "test": play_notification("testNotification", {"version": "1.0"}),
}
for name, data in play_notifications.items():
    write("FuzzPlayPush", "valid-" + name, b"\x00" + "\0".join([rs256, play_claims(), play_body(data)]).encode())
for name, header, claims in [
    ("alg-none", compact({"alg": "none", "kid": "key-1"}), play_claims()),
    ("alg-hs256", compact({"alg": "HS256", "kid": "key-1"}), play_claims()),
    ("unknown-kid", compact({"alg": "RS256", "kid": "key-9"}), play_claims()),
    ("expired", rs256, play_claims(exp=1799990000)),
    ("future-iat", rs256, play_claims(iat=1800009999)),
    ("wrong-aud", rs256, play_claims(aud="https://elsewhere/play")),
    ("email-unverified", rs256, play_claims(email_verified=False)),
    ("iss-bare", rs256, play_claims(iss="accounts.google.com")),
    ("duplicate-alg", '{"alg":"none","alg":"RS256","kid":"key-1"}', play_claims()),
]:
    write("FuzzPlayPush", "token-" + name, b"\x00" + "\0".join([header, claims, ""]).encode())
write("FuzzPlayPush", "rogue-key", b"\x01" + "\0".join([rs256, play_claims(), ""]).encode())
write("FuzzPlayPush", "unsigned-text", b"\x02" + "\0".join([b64(rs256), b64(play_claims()), "AAAA"]).encode())
write("FuzzPlayPush", "bearer-line", ("Bearer %s.%s.AAAA" % (b64(rs256), b64(play_claims()))).encode())
write("FuzzPlayPush", "body-only", play_body(play_notifications["subscription"]).encode())
