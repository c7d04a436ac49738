"""
Benchmarks of a student's own run, registered in benchmarks/run.py:

    open_saved_run_s_1M    a saved trace of 1,044,480 messages (eight ring all-reduces at n = 256,
                           saved as Trace.save writes it: 7 MB since version 3's compact columns,
                           92 MB of number text in version 2) opened as the app opens it:
                           Trace.load (decoded and checked), the Run and its index, the main window
                           shown and laid out — in a fresh process (goal ≤ 2 s)
    record_overhead_ratio  `python -m simcore record shard_lab.py` (the lecture's file) against the
                           same script run with the lecture's module names served but nothing
                           recorded, whole processes, medians interleaved (goal ≤ 1.2)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LECTURE = os.path.join(ROOT, "tests", "lecture", "shard_lab.py.txt")

_OPEN = r"""
import json, sys, time
t0 = time.perf_counter()
from simcore.trace import Trace
from app.opened_run import run_from_trace
from PySide6.QtWidgets import QApplication
app = QApplication(["bench"])
t1 = time.perf_counter()
trace = Trace.load(sys.argv[1])  # as app.opened_run.load_run: read, decode, check
t_read = time.perf_counter()
run = run_from_trace(trace, sys.argv[1])  # the Run and its TraceIndex
t2 = time.perf_counter()
from app.main_window import MainWindow
from app.state import Playback, ScenarioModel
model = ScenarioModel(run.scenario)
model.run = run
win = MainWindow(model, Playback(model))
win.resize(1600, 900)
win.show()
for _ in range(3):
    app.processEvents()
t3 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "load": t2 - t1, "read": t_read - t1, "index": t2 - t_read,
                  "window": t3 - t2, "messages": run.trace.n_messages}))
"""

_PLAIN = r"""
import importlib, runpy, sys
for name in ("comm_sim", "transformer_lab", "hw_specs", "llm_math", "shard_lab"):
    sys.modules[name] = importlib.import_module("simcore." + name)
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _env():
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
                QT_QPA_PLATFORM="offscreen")


def saved_million(folder: str) -> str:
    """Write the 1 M-message trace (not timed)."""
    from simcore.scenarios import run_collective
    from simcore.trace import Trace

    path = os.path.join(folder, "million.json")
    Trace.merge(run_collective("all-reduce", 256, "1MiB").trace for _ in range(8)).save(path)
    return path


def bench_open_saved_run(repeats: int = 3):
    """(seconds to open, note): the median of fresh processes, load + window (imports apart)."""
    from simcore.trace import SCHEMA_VERSION

    with tempfile.TemporaryDirectory(prefix="shard-lab-bench-") as folder:
        path = saved_million(folder)
        size = os.path.getsize(path)
        runs = []
        for _ in range(repeats):
            out = subprocess.run([sys.executable, "-c", _OPEN, path], capture_output=True, text=True, env=_env(),
                                 cwd=folder, timeout=300)
            if out.returncode != 0:
                raise RuntimeError(out.stderr)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    runs.sort(key=lambda r: r["load"] + r["window"])
    r = runs[len(runs) // 2]
    note = (f"{r['messages']:,} messages, {size / 1e6:.1f} MB (version {SCHEMA_VERSION}): read + check "
            f"{r['read']:.2f} s, Run + index {r['index']:.2f} s, window {r['window']:.2f} s "
            f"(imports {r['imports']:.2f} s apart)")
    return r["load"] + r["window"], note


def bench_record_overhead(repeats: int = 5):
    """(record / plain run time, note): whole processes on the lecture's shard_lab.py, interleaved."""
    with tempfile.TemporaryDirectory(prefix="shard-lab-bench-") as folder:
        script = os.path.join(folder, "shard_lab.py")
        with open(LECTURE, encoding="utf-8") as f, open(script, "w", encoding="utf-8") as g:
            g.write(f.read())
        cmds = {"plain": [sys.executable, "-c", _PLAIN, script],
                "record": [sys.executable, "-m", "simcore", "record", script]}
        times = {k: [] for k in cmds}
        for _ in range(repeats + 1):  # the first round warms the file cache: dropped
            for k, cmd in cmds.items():
                t0 = time.perf_counter()
                subprocess.run(cmd, capture_output=True, env=_env(), cwd=folder, check=True, timeout=300)
                times[k].append(time.perf_counter() - t0)
        med = {k: sorted(v[1:])[len(v[1:]) // 2] for k, v in times.items()}
    return med["record"] / med["plain"], f"record {med['record']:.2f} s, plain run {med['plain']:.2f} s"
