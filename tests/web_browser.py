"""Headless Chromium for the web page's tests (tests/test_web_export_browser.py) and its benchmark
(benchmarks/web_page.py): Debian's chromium and chromium-driver, driven by Selenium with the driver's
path given and SE_OFFLINE=true, so that Selenium Manager never looks for a browser on the network."""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def missing() -> str:
    """Why the browser tests cannot run here, in one sentence ("" when they can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "Selenium is not installed (pip install -e '.[web-test]', or python3 dev.py test installs it)."
    for path, package in ((CHROMIUM, "chromium"), (DRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return (f"{path} is not here: the web page's browser tests need Debian's {package} "
                    f"(apt-get install chromium chromium-driver; .ci/run installs them).")
    return ""


def driver(width: int = 1280, height: int = 720):
    """A headless Chromium whose viewport is width × height CSS pixels, keeping the console's messages."""
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager: never download a browser or a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
              "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-extensions", f"--window-size={width},{height}"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})  # console; DevTools events
    d = webdriver.Chrome(service=Service(DRIVER), options=opts)
    viewport(d, width, height)
    return d


def viewport(d, width: int, height: int, mobile: bool = False):
    """Exactly width × height CSS pixels of page (a window's size includes what the browser draws around it)."""
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def export(deck: str, folder: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """`shard-lab --deck DECK --export-web FOLDER` in a process of its own, offscreen."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.setdefault("SHARD_LAB_SETTINGS", os.path.join(folder + "-settings.ini"))
    return subprocess.run([sys.executable, "-m", "app", "--deck", deck, "--export-web", folder], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env=env)


def read_data(folder: str) -> dict:
    """The deck's data as the page reads it (data.js: one assignment of a JSON object)."""
    text = open(os.path.join(folder, "data.js"), encoding="utf-8").read()
    head = "window.SHARD_LAB_DECK = "
    return json.loads(text[len(head):].rstrip().rstrip(";"))


def file_url(folder: str, hash_: str = "") -> str:
    from pathlib import Path

    return Path(folder, "index.html").resolve().as_uri() + hash_


def requests(d) -> list:
    """The URLs the page asked for since the last call, as DevTools saw them (Network.requestWillBeSent:
    every request, file:// ones too, which the page's own Resource Timing leaves out)."""
    urls = []
    for entry in d.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls
