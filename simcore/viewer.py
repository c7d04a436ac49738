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
import importlib.util
import os

# The app's package: `shard_lab` when installed from the wheel, `app` in the source tree
# (pyproject.toml maps one to the other). Its modules for a run to show: opened_run (load_run,
# run_from_trace) and show_window (open_window, wait_until_closed).
APP_PACKAGES = ("shard_lab", "app")
SCREENSHOT_ENV = "SHARD_LAB_SHOW_SCREENSHOT"  # set: show() saves the window there as PNG and closes it
_windows: list = []  # open windows: a window nobody references would be closed by the collector


def app_package() -> str:
    """The app's package name beside this simcore: the installed `shard_lab` or the source tree's
    `app`. The one whose folder sits beside simcore's wins (an environment may hold an installed
    Shard Lab and a source tree on sys.path at once: each simcore shows its own app)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = []
    for name in APP_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            continue
        folders = [os.path.abspath(f) for f in spec.submodule_search_locations]
        if not os.path.isfile(os.path.join(folders[0], "opened_run.py")):
            continue  # another project's `app`, not Shard Lab's
        if any(os.path.dirname(f) == here for f in folders):
            return name
        found.append(name)
    if found:
        return found[0]
    raise ValueError("simcore.show needs Shard Lab's app: install the shard-lab package, or run from its "
                     "source folder")


def _app(module: str):
    return importlib.import_module(f"{app_package()}.{module}")


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


def show(comm_or_trace, lang: str | None = None, block: bool | None = None, screenshot: str | None = None):
    """
    Open the app's window on a run: a Comm (its trace), a Trace, or the path of a saved run
    (.json / .json.gz). lang: "en" or "zh" (default: the app's saved language).
    block: wait until the window is closed (default: only outside an IPython Qt event loop).
    screenshot: a .png path: the window is painted, saved there and closed, and show returns
    (default: the environment variable SHARD_LAB_SHOW_SCREENSHOT, so an unchanged script can be
    photographed). The window fits the screen it opens on.
    Returns the window (MainWindow). ValueError (one sentence) if the run cannot be shown.
    """
    trace = getattr(comm_or_trace, "trace", comm_or_trace)
    # The engine knows no GUI (pyproject's import-linter contract): the app is looked up by name,
    # only now, as a plug-in would be; nothing in simcore depends on it.
    runs, gui = _app("opened_run"), _app("show_window")
    load_run, run_from_trace, open_window = runs.load_run, runs.run_from_trace, gui.open_window
    screenshot = screenshot or os.environ.get(SCREENSHOT_ENV) or None

    if isinstance(trace, (str, os.PathLike)):
        run = load_run(trace)
    else:
        from .trace_io import check_trace

        check_trace(trace)
        run = run_from_trace(trace, "")
    win = open_window(run, lang)
    if screenshot:
        gui.save_and_close(win, os.fspath(screenshot))  # OSError if it cannot be written
        return win
    _windows.append(win)
    if block is None:
        block = not _ipython_with_qt_loop()
    if block:
        gui.wait_until_closed(win)
    return win
