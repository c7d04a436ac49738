"""
The lecture deck as a web page (app/deck/web_export.py), measured, never asserted:

    web_export_s            `shard-lab --deck lecture --export-web DIR` in a fresh process, wall
                            seconds (the note adds its CPU seconds: on a shared machine the wall
                            time is mostly waiting for a core)                         goal ≤ 60 s
    web_export_mb           the folder's size on disk, MB (10^6 bytes)                 goal ≤ 30 MB
    web_open_ms             index.html opened from file:// in headless Chromium: navigation start to
                            the first picture loaded (the page's "shard-lab-first-frame" mark),
                            median of fresh loads                                     goal ≤ 1000 ms
    web_step_ms_p50/_p95    one → key: the keydown dispatched, the new picture decoded and the next
                            frame painted (requestAnimationFrame), 60 steps from scene 2 on, 0.3 s
                            apart as a reader presses (the note adds steps back to back)  goal ≤ 50 ms

    python benchmarks/web_page.py [--folder DIR] [--json out.json] [--screenshots DIR]

--folder reuses (or keeps) an export; --screenshots saves a scene at 1280×720 and at a phone's
390×844 in English and Chinese, and a deep link's page. Needs Debian's chromium and
chromium-driver and Selenium (the `web-test` extra); without them the browser figures are null
and the table says why.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the tests' browser helper: one way to start Chromium

import web_browser  # noqa: E402

GOALS = {"web_export_s": ("<=", 60.0), "web_export_mb": ("<=", 30.0), "web_open_ms": ("<=", 1000.0),
         "web_step_ms_p50": ("<=", 50.0), "web_step_ms_p95": ("<=", 50.0)}
OPENS = 7
STEPS = 60
READ_S = 0.3  # between steps: a reader presses → a few times a second at most
DEEP_LINK = "#scene=5&step=3&lang=zh"

_STEP = """
var done = arguments[arguments.length - 1], f = document.getElementById('frame'), t0 = performance.now();
document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
f.decode().then(function () { requestAnimationFrame(function () { done(performance.now() - t0); }); },
                function () { done(-1); });
"""


def folder_bytes(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(folder) for f in files)


def export(folder: str) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = web_browser.export("lecture", folder)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"web_page.py: the export failed: {out.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    frames = len(os.listdir(os.path.join(folder, "frames")))
    return {"web_export_s": wall, "web_export_mb": folder_bytes(folder) / 1e6,
            "note_export": f"{cpu:.1f} s of CPU; {frames} pictures; {out.stdout.strip()}"}


def browser_figures(folder: str, shots: str | None) -> dict:
    d = web_browser.driver(1280, 720)
    try:
        opens = []
        for _ in range(OPENS):
            d.get("about:blank")
            d.get(web_browser.file_url(folder))
            d.execute_async_script("""var done = arguments[arguments.length - 1];
                (function wait() { if (performance.getEntriesByName('shard-lab-first-frame').length) done(1);
                                   else setTimeout(wait, 5); })();""")
            opens.append(d.execute_script("return performance.getEntriesByName('shard-lab-first-frame')[0].startTime"))
        d.get(web_browser.file_url(folder, "#scene=2&step=0"))
        d.execute_async_script("var done = arguments[arguments.length - 1];"
                               "document.getElementById('frame').decode().then(done, done);")
        steps, rushed = [], []
        for _ in range(STEPS):  # at a reader's pace: the page has decoded the next picture meanwhile
            time.sleep(READ_S)
            steps.append(d.execute_async_script(_STEP))
        for _ in range(STEPS // 2):  # a key held down: each step before the last one's preload is done
            rushed.append(d.execute_async_script(_STEP))
        steps = [s for s in steps if s >= 0]
        rushed = sorted(s for s in rushed if s >= 0)
        if shots:
            screenshots(d, folder, shots)
    finally:
        d.quit()
    steps.sort()
    return {"web_open_ms": statistics.median(opens), "web_step_ms_p50": statistics.median(steps),
            "web_step_ms_p95": steps[min(len(steps) - 1, int(0.95 * len(steps)))],
            "note_browser": f"open: {min(opens):.0f}–{max(opens):.0f} ms over {len(opens)} loads; "
                            f"steps: {len(steps)} (max {max(steps):.1f} ms); back to back (a key held): "
                            f"p50 {statistics.median(rushed):.1f} ms, max {rushed[-1]:.1f} ms"}


def screenshots(d, folder: str, out: str):
    """A scene at 1280×720 and 390×844 in English and Chinese, and a deep link's page."""
    os.makedirs(out, exist_ok=True)
    for (w, h, mobile) in ((1280, 720, False), (390, 844, True)):
        for lang in ("en", "zh"):
            web_browser.viewport(d, w, h, mobile)
            d.get("about:blank")
            d.get(web_browser.file_url(folder, f"#scene=4&step=5&lang={lang}"))
            d.execute_async_script("var done = arguments[arguments.length - 1];"
                                   "document.getElementById('frame').decode().then(done, done);")
            d.save_screenshot(os.path.join(out, f"scene4-{w}x{h}-{lang}.png"))
    web_browser.viewport(d, 1920, 1080)
    d.get("about:blank")
    d.get(web_browser.file_url(folder, DEEP_LINK))
    d.execute_async_script("var done = arguments[arguments.length - 1];"
                           "document.getElementById('frame').decode().then(done, done);")
    d.save_screenshot(os.path.join(out, "deep-link-1920x1080.png"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--folder", help="export into (or reuse) this folder")
    p.add_argument("--json", help="write the figures here")
    p.add_argument("--screenshots", help="save the page's screenshots into this folder")
    args = p.parse_args(argv)
    figures, notes = {}, []
    folder = args.folder or os.path.join(tempfile.mkdtemp(prefix="shard-lab-web-"), "lecture")
    if os.path.isfile(os.path.join(folder, "data.js")):
        figures["web_export_mb"] = folder_bytes(folder) / 1e6
        figures["web_export_s"] = None
        notes.append(f"web_export_s: not measured, {folder} was exported before")
    else:
        got = export(folder)
        notes.append("web_export_s: " + got.pop("note_export"))
        figures.update(got)
    why = web_browser.missing()
    if why:
        figures.update({k: None for k in ("web_open_ms", "web_step_ms_p50", "web_step_ms_p95")})
        notes.append("browser figures: " + why)
    else:
        got = browser_figures(folder, args.screenshots)
        notes.append("browser: " + got.pop("note_browser"))
        figures.update(got)
    print(f"{'figure':<18} {'value':>10}  goal")
    for name, value in figures.items():
        op, goal = GOALS[name]
        ok = value is not None and (value <= goal if op == "<=" else value >= goal)
        shown = "—" if value is None else f"{value:10.1f}"
        print(f"{name:<18} {shown:>10}  {op} {goal:g}  {'pass' if ok else ('FAIL' if value is not None else '')}")
    for n in notes:
        print(n)
    print(f"(the page: {folder})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
