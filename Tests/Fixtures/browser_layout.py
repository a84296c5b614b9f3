#!/usr/bin/env python3
"""Opens views of the StoreRelay admin page in headless Chromium at 1,280 pixels wide and
checks that none scrolls sideways, saving a screenshot of each:

    browser_layout.py BASE_URL TOKEN OUT_DIR NAME=PATH...

Logs in with the token, then for each NAME=PATH loads PATH, measures
document.documentElement.scrollWidth (it must be at most 1280, the window's width) and saves
OUT_DIR/NAME.png. Prints "ok: NAME WIDTH" per view. Exit 0 on success; 1 with the reason on
stderr; 77 when Chromium or chromedriver is missing. Shares its WebDriver client and
Chromium session with browser_replay.py.
"""
import base64
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_replay import chrome_session, fail  # noqa: E402

WIDTH = 1280


def main():
    if len(sys.argv) < 5:
        sys.stderr.write(__doc__)
        sys.exit(2)
    base, token, out_dir = sys.argv[1:4]
    views = [argument.split("=", 1) for argument in sys.argv[4:]]
    with chrome_session(["--hide-scrollbars", "--window-size=%d,900" % WIDTH]) as driver:
        os.makedirs(out_dir, exist_ok=True)
        driver.s("POST", "/window/rect", {"width": WIDTH, "height": 900})
        driver.s("POST", "/url", {"url": base + "/login"})
        field = driver.find("//input[@name='token']")
        driver.s("POST", "/element/%s/value" % field, {"text": token})
        driver.s("POST", "/element/%s/click" % driver.find("//form[@action='/login']//button"), {})
        driver.wait_for(lambda: not driver.s("GET", "/url").endswith("/login"), "the page after logging in")
        inner = driver.s("POST", "/execute/sync", {"script": "return window.innerWidth;", "args": []})
        if inner != WIDTH:
            fail("the window is %d pixels wide inside, not %d" % (inner, WIDTH))
        for name, path in views:
            driver.s("POST", "/url", {"url": base + path})
            source = driver.s("GET", "/source")
            if "StoreRelay admin" not in source:
                fail("%s (%s) did not load: %s" % (name, path, source[:300]))
            width = driver.s("POST", "/execute/sync", {
                "script": "return document.documentElement.scrollWidth;", "args": []})
            # The whole page in one picture: as tall as the document, as wide as before.
            height = driver.s("POST", "/execute/sync", {
                "script": "return document.documentElement.scrollHeight;", "args": []})
            # (The window's height includes what is not page, hence the margin.)
            driver.s("POST", "/window/rect", {"width": WIDTH, "height": min(max(height + 200, 900), 4000)})
            png = driver.s("GET", "/screenshot")
            driver.s("POST", "/window/rect", {"width": WIDTH, "height": 900})
            with open(os.path.join(out_dir, name + ".png"), "wb") as f:
                f.write(base64.b64decode(png))
            if width > WIDTH:
                fail("%s (%s) is %d pixels wide in a %d-pixel window" % (name, path, width, WIDTH))
            print("ok: %s %d" % (name, width))


if __name__ == "__main__":
    main()
