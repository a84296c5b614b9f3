#!/usr/bin/env python3
"""Drives headless Chromium through the StoreRelay admin page with the WebDriver HTTP API
(chromedriver), using only the standard library:

    browser_replay.py BASE_URL TOKEN DEAD_LETTER_ID [EVENT_ID | --pause DESTINATION]

Opens the page (and is sent to the login form), logs in with the token, finds the dead
letter's row, clicks its Replay button, and checks that the page then says it was replayed
and no longer lists it. With EVENT_ID it instead types the event id into the search box,
checks that only that event's letter is listed, opens the event's view from its id, and
replays the letter from there, landing back on the event's view. With --pause it clicks the
destination's Pause button, checks the page says it is paused (its destinations table fitting
a 1280-pixel-wide window), then Resume. Also checks the session cookie is HttpOnly and SameSite=Strict and the
token never appears in a URL. Exit 0 on success; 1 with the reason on stderr; 77 when
Chromium or chromedriver is missing.
"""
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def fail(message):
    sys.stderr.write("browser test: " + message + "\n")
    sys.exit(1)


def find_binary(*names):
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriver:
    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port
        self.session = None

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read() or b"{}").get("value")
        except urllib.error.HTTPError as error:
            fail("webdriver %s %s: %s" % (method, path, error.read().decode(errors="replace")[:500]))

    def s(self, method, path, body=None):
        return self.call(method, "/session/%s%s" % (self.session, path), body)

    def wait_ready(self, deadline):
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.base + "/status", timeout=2) as response:
                    if json.loads(response.read())["value"].get("ready"):
                        return
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        fail("chromedriver did not become ready")

    def find(self, xpath):
        return self.s("POST", "/element", {"using": "xpath", "value": xpath})[ELEMENT]

    def wait_for(self, predicate, what, seconds=20):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.1)
        fail("timed out waiting for " + what + "; at " + str(self.s("GET", "/url")))


@contextlib.contextmanager
def chrome_session(extra_args=()):
    """chromedriver and a headless Chromium session on it, torn down on the way out (the
    session, chromedriver, its profile). Exits 77 when either program is missing: the Swift
    test that runs the script skips in that case."""
    chromium = find_binary("chromium", "chromium-browser", "google-chrome")
    driver_binary = find_binary("chromedriver")
    if not chromium or not driver_binary:
        sys.stderr.write("browser test: Chromium or chromedriver is not installed\n")
        sys.exit(77)
    port = free_port()
    profile = tempfile.mkdtemp(prefix="storerelay-chromium-")
    log = open(os.path.join(profile, "chromedriver.log"), "w")
    process = subprocess.Popen([driver_binary, "--port=%d" % port], stdout=log, stderr=log)
    driver = WebDriver(port)
    try:
        driver.wait_ready(time.monotonic() + 30)
        created = driver.call("POST", "/session", {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": [
                "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"] + list(extra_args) + [
                "--user-data-dir=" + os.path.join(profile, "user-data")]},
        }}})
        driver.session = created["sessionId"]
        driver.s("POST", "/timeouts", {"implicit": 5000, "pageLoad": 30000})
        yield driver
    finally:
        if driver.session:
            try:
                driver.call("DELETE", "/session/" + driver.session)
            except SystemExit:
                pass
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        shutil.rmtree(profile, ignore_errors=True)


def search(driver, base, token, letter_id, event_id):
    """Search by event id, open the event's view, replay from there."""
    box = driver.find("//input[@name='q']")
    driver.s("POST", "/element/%s/value" % box, {"text": event_id})
    driver.s("POST", "/element/%s/click" % driver.find("//form[contains(@class,'filters')]//button"), {})
    driver.wait_for(lambda: "q=" + event_id in driver.s("GET", "/url"), "the search results")
    source = driver.s("GET", "/source")
    if letter_id not in source:
        fail("the searched event's dead letter is not listed")
    # The events the search found are listed above the dead letters; one letter matches.
    if source.count('action="/ui/replay"') != 1:
        fail("the search listed more than the one dead letter")
    driver.s("POST", "/element/%s/click" % driver.find("//a[@href='/events/%s']" % event_id), {})
    driver.wait_for(lambda: driver.s("GET", "/url").endswith("/events/" + event_id), "the event's view")
    source = driver.s("GET", "/source")
    if "Normalized event" not in source or "dead-lettered" not in source:
        fail("the event's view lacks the event or its delivery state")
    button = driver.find("//form[@action='/ui/replay'][input[@name='id' and @value='%s']]/button" % letter_id)
    driver.s("POST", "/element/%s/click" % button, {})
    driver.wait_for(lambda: "/events/%s?done=replayed-1" % event_id in driver.s("GET", "/url"), "the event's view after replay")
    if "Replayed 1 dead letter." not in driver.s("GET", "/source"):
        fail("no replay notice on the event's view")
    if token in driver.s("GET", "/url"):
        fail("the token appeared in a URL")
    print("ok: searched %s, opened its view, replayed %s" % (event_id, letter_id))


def pause_and_resume(driver, destination):
    """Click the destination's Pause button, then its Resume button."""
    driver.s("POST", "/window/rect", {"width": 1280, "height": 900})
    button = "//tr[td[1][text()='%s']]//form[@action='/ui/%s']/button"
    driver.s("POST", "/element/%s/click" % driver.find(button % (destination, "pause")), {})
    driver.wait_for(lambda: "done=paused" in driver.s("GET", "/url"), "the redirect after pause")
    source = driver.s("GET", "/source")
    if "Paused: the destination starts no attempt" not in source or ">paused<" not in source:
        fail("the page does not say the destination is paused")
    # The destinations table, which the State column and its buttons widen, still fits.
    width = driver.s("POST", "/execute/sync", {"script": "return document.getElementById('destinations').scrollWidth;", "args": []})
    viewport = driver.s("POST", "/execute/sync", {"script": "return document.documentElement.clientWidth;", "args": []})
    if width > viewport:
        fail("the destinations table is %d pixels wide in a %d-pixel window" % (width, viewport))
    driver.s("POST", "/element/%s/click" % driver.find(button % (destination, "resume")), {})
    driver.wait_for(lambda: "done=resumed" in driver.s("GET", "/url"), "the redirect after resume")
    if "Resumed: the destination delivers its backlog." not in driver.s("GET", "/source"):
        fail("no resume notice on the page")
    print("ok: paused and resumed %s" % destination)


def main():
    if len(sys.argv) not in (4, 5, 6) or (len(sys.argv) == 6 and sys.argv[4] != "--pause"):
        sys.stderr.write(__doc__)
        sys.exit(2)
    base, token, letter_id = sys.argv[1:4]
    event_id = sys.argv[4] if len(sys.argv) == 5 else None
    paused = sys.argv[5] if len(sys.argv) == 6 else None
    with chrome_session() as driver:
        # Anonymous: the page sends the browser to the login form.
        driver.s("POST", "/url", {"url": base + "/"})
        if not driver.s("GET", "/url").endswith("/login"):
            fail("expected the login form, got " + driver.s("GET", "/url"))
        field = driver.find("//input[@name='token']")
        driver.s("POST", "/element/%s/value" % field, {"text": token})
        driver.s("POST", "/element/%s/click" % driver.find("//form[@action='/login']//button"), {})
        driver.wait_for(lambda: letter_id in driver.s("GET", "/source"), "the dead letter on the page")

        cookies = {c["name"]: c for c in driver.s("GET", "/cookie")}
        session = cookies.get("storerelay_session")
        if not session or not session.get("httpOnly") or session.get("sameSite") != "Strict":
            fail("session cookie not HttpOnly/SameSite=Strict: %r" % (session,))
        if token in session.get("value", ""):
            fail("the cookie holds the token")

        if event_id:
            search(driver, base, token, letter_id, event_id)
            return
        if paused:
            pause_and_resume(driver, paused)
            return
        button = driver.find("//form[@action='/ui/replay'][input[@name='id' and @value='%s']]/button" % letter_id)
        driver.s("POST", "/element/%s/click" % button, {})
        driver.wait_for(lambda: "done=replayed-1" in driver.s("GET", "/url"), "the redirect after replay")
        source = driver.s("GET", "/source")
        if "Replayed 1 dead letter." not in source:
            fail("no replay notice on the page")
        if letter_id in source:
            fail("the replayed dead letter is still listed")
        if token in driver.s("GET", "/url"):
            fail("the token appeared in a URL")
        print("ok: logged in, replayed %s, gone from the page" % letter_id)


if __name__ == "__main__":
    main()
