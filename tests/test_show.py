"""simcore.show: the app's window on a Comm, a Trace or a saved run; the engine imports no Qt for it."""

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pytestqt")

import simcore  # noqa: E402
from simcore.comm_sim import Comm, switch  # noqa: E402
from test_checker import broken_ring_allreduce  # noqa: E402


def test_importing_simcore_and_its_viewer_loads_no_qt():
    code = ("import sys, simcore, simcore.viewer, simcore.checker, simcore.record; simcore.check; "
            "print(sorted(k for k in sys.modules if k.startswith(('PySide6', 'pyqtgraph', 'app'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.usefixtures("english")
def test_show_a_comm_without_blocking_opens_the_window_on_the_run(qtbot):
    comm = Comm(switch(4))
    broken_ring_allreduce(comm, [np.arange(16.0)] * 4)
    win = simcore.show(comm, block=False)
    qtbot.addWidget(win)
    assert win.isVisible() and win.model.run.trace is comm.trace
    assert "your run" in win.windowTitle()
    assert win.playback.n_steps == 6


def test_show_blocks_until_the_window_closes(qtbot, tmp_path):
    from PySide6.QtCore import QTimer

    comm = Comm(switch(2))
    broken_ring_allreduce(comm, [np.arange(4.0)] * 2)
    comm.trace.save(tmp_path / "run.json")
    shown = []

    def close_it():
        from PySide6.QtWidgets import QApplication

        for w in QApplication.topLevelWidgets():
            if w.windowTitle().endswith("run.json") and w.isVisible():
                shown.append(w)
                w.close()

    QTimer.singleShot(0, close_it)
    win = simcore.show(str(tmp_path / "run.json"), block=True)  # returns once closed
    qtbot.addWidget(win)
    assert shown == [win] and not win.isVisible()


def test_show_refuses_a_bad_trace_in_one_sentence():
    from simcore.trace import Trace

    with pytest.raises(ValueError, match="no collective and no op"):
        simcore.show(Trace(), block=False)


@pytest.mark.usefixtures("english")
def test_in_ipython_with_a_qt_loop_show_returns_at_once(qtbot, monkeypatch):
    """napari's convention: with `%gui qt` the kernel's loop drives the window; show must not block."""
    import types

    from simcore import viewer

    class Shell:
        active_eventloop = None

        def enable_gui(self, name):
            self.active_eventloop = name

    shell = Shell()
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    assert viewer._ipython_with_qt_loop() and shell.active_eventloop == "qt"
    comm = Comm(switch(2))
    broken_ring_allreduce(comm, [np.arange(4.0)] * 2)
    win = simcore.show(comm)  # block=None: would hang here if it ran its own loop
    qtbot.addWidget(win)
    assert win.isVisible()


def test_outside_ipython_show_would_block(monkeypatch):
    from simcore import viewer

    monkeypatch.setitem(sys.modules, "IPython", None)  # not installed
    assert viewer._ipython_with_qt_loop() is False
