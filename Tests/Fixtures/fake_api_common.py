"""What the fakes of Apple's and Google's APIs share (fake_appstore_api.py,
fake_google_play_api.py): reading a compact JWS, checking a signature with the `openssl`
command line (independent of the gateway's own crypto), the control file, and serving
HTTPS on a loopback port that is printed first, for the test to read.
"""
import base64, json, os, ssl, subprocess, tempfile
from http.server import ThreadingHTTPServer


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def decode_compact_jws(token):
    """(header, claims, signature, signing input) of a compact JWS, or a string saying why not."""
    parts = token.split(".")
    if len(parts) != 3:
        return "not a compact JWS"
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except Exception as error:
        return f"undecodable: {error}"
    return header, claims, signature, (parts[0] + "." + parts[1]).encode()


def openssl_verifies(public_key, data, signature):
    """Whether `openssl dgst -sha256 -verify` takes `signature` (DER for ECDSA) over `data`."""
    with tempfile.TemporaryDirectory() as directory:
        data_file, sig_file = os.path.join(directory, "data"), os.path.join(directory, "sig")
        with open(data_file, "wb") as f:
            f.write(data)
        with open(sig_file, "wb") as f:
            f.write(signature)
        result = subprocess.run(["openssl", "dgst", "-sha256", "-verify", public_key, "-signature", sig_file, data_file],
                                capture_output=True)
    return result.returncode == 0


def log_and_send(handler, log_path, lock, record, status, body, headers=None):
    """Appends `record` to the request log, then answers `status` with the JSON `body` (bytes).

    Logged before it is sent: a client that has its answer finds the request logged. `lock`
    keeps the threaded server's lines whole."""
    with lock:
        with open(log_path, "a") as f:
            f.write(json.dumps(record) + "\n")
    handler.send_response(status)
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def read_control(path):
    with open(path) as f:
        return json.load(f)


def https_server(handler, cert, key):
    """A threading HTTPS server on 127.0.0.1 at a free port, not yet serving."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    return server


def serve(server):
    """Prints the port (the test waits for it), then serves until killed."""
    print(server.server_address[1], flush=True)
    server.serve_forever()
