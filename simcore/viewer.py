"""
simcore.show(comm_or_trace) — watch a run in Shard Lab's window, from a script or a notebook.

    comm = Comm(switch(4))
    out = my_ring_allreduce(comm, arrays)
    simcore.show(comm)            # or a Trace, or the path of a saved run

In IPython or Jupyter with `%gui qt` the window opens and show returns at once, the window
staying live while you keep working (napari's `napari.view_*` convention); from a plain script
it blocks until the window is closed. The engine never imports Qt at module level: the app is
imported here, inside `show`, when a window is asked for.
"""

from __future__ import annotations

import importlib
import os

APP_RUNS = "app.opened_run"  # the app's entries for a run to show: load_run, run_from_trace
APP_WINDOW = "app.show_window"  # open_window, wait_until_closed
_windows: list = []  # open windows: a window nobody references would be closed by the collector


def _ipython_with_qt_loop() -> bool:
    """True in IPython/Jupyter with a Qt event loop running (`%gui qt`), turning it on if IPython is there."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    if ip is None:
        return False
    if getattr(ip, "active_eventloop", None) not in ("qt", "qt5", "qt6"):
        try:
            ip.enable_gui("qt")
        except Exception:  # noqa: BLE001 — no Qt loop possible here: fall back to blocking
            return False
    return getattr(ip, "active_eventloop", None) in ("qt", "qt5", "qt6")


def show(comm_or_trace, lang: str | None = None, block: bool | None = None):
    """
    Open the app's window on a run: a Comm (its trace), a Trace, or the path of a saved run
    (.json / .json.gz). lang: "en" or "zh" (default: the app's saved language).
    block: wait until the window is closed (default: only outside an IPython Qt event loop).
    Returns the window (MainWindow). ValueError (one sentence) if the run cannot be shown.
    """
    trace = getattr(comm_or_trace, "trace", comm_or_trace)
    # The engine knows no GUI (pyproject's import-linter contract): the app is looked up by name,
    # only now, as a plug-in would be; nothing in simcore depends on it.
    runs, gui = importlib.import_module(APP_RUNS), importlib.import_module(APP_WINDOW)
    load_run, run_from_trace, open_window = runs.load_run, runs.run_from_trace, gui.open_window

    if isinstance(trace, (str, os.PathLike)):
        run = load_run(trace)
    else:
        from .trace_io import check_trace

        check_trace(trace)
        run = run_from_trace(trace, "")
    win = open_window(run, lang)
    _windows.append(win)
    if block is None:
        block = not _ipython_with_qt_loop()
    if block:
        gui.wait_until_closed(win)
    return win
