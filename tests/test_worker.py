"""
One worker for slow work (app/worker.py) and scenario builds off the GUI thread (app/state.py,
app/build_status.py): a result arrives on the GUI thread, a stale one is dropped, an error is one
sentence with the previous scenario kept, the window keeps painting while a build runs, and sync
mode answers before `submit` returns. Slow functions are held by a threading.Event the test opens:
no sleeps, no timing.
"""

import threading

import pytest
from PySide6.QtCore import QEvent, QObject

from app import worker as wk
from app.core import scenarios
from app.state import Playback, Scenario, ScenarioModel

S = float(2**20)


class Gate:
    """A function that waits for the test to open its gate, then returns f(*args)."""

    def __init__(self, f=lambda *a: a):
        self.f, self.open, self.threads = f, threading.Event(), []

    def __call__(self, *args):
        self.threads.append(threading.current_thread())
        assert self.open.wait(60), "the test never opened the gate"
        return self.f(*args)


class Paints(QObject):
    """Counts the paint events a widget receives."""

    def __init__(self, widget):
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, obj, e):
        if e.type() == QEvent.Paint:
            self.count += 1
        return False


def outcomes(worker):
    got = []
    worker.done.connect(lambda ch, r: got.append(("done", ch, r)))
    worker.failed.connect(lambda ch, m: got.append(("failed", ch, m)))
    worker.cancelled.connect(lambda ch: got.append(("cancelled", ch)))
    return got


# -- the worker ------------------------------------------------------------------------------------
def test_sync_mode_answers_before_submit_returns_on_this_thread(qapp):
    w = wk.Worker(sync=True)
    got = outcomes(w)
    where = []
    job = w.submit(lambda x: where.append(threading.current_thread()) or x * 2, 21, channel="a")
    assert got == [("done", "a", 42)] and job.ok and job.delivered and not job.dropped
    assert where == [threading.main_thread()]
    job = w.submit(lambda: {}["missing"], channel="a")
    assert got[-1] == ("failed", "a", "'missing'") and not job.ok  # one message, not a traceback
    job = w.submit(lambda: (_ for _ in ()).throw(ValueError("n must divide 8")), channel="b")
    assert got[-1] == ("failed", "b", "n must divide 8")


def test_the_conftest_makes_sync_the_default(qapp):
    assert wk.sync_default() and wk.Worker().sync and not wk.Worker(sync=False).sync


def test_async_result_arrives_on_the_gui_thread(qtbot):
    w = wk.Worker(sync=False)
    got = outcomes(w)
    gate = Gate(lambda x: x + 1)
    job = w.submit(gate, 1, channel="a")
    assert got == [] and w.busy("a") and job.running()
    gate.open.set()
    with qtbot.waitSignal(w.done, timeout=10_000) as sig:
        pass
    assert sig.args == ["a", 2] and got == [("done", "a", 2)]
    assert gate.threads[0] is not threading.main_thread() and not w.busy("a")


def test_a_stale_result_is_dropped_and_other_channels_are_not(qtbot):
    w = wk.Worker(sync=False)
    got = outcomes(w)
    old, new, other = Gate(lambda: "old"), Gate(lambda: "new"), Gate(lambda: "other")
    j_old = w.submit(old, channel="a")
    j_other = w.submit(other, channel="b")
    j_new = w.submit(new, channel="a")
    new.open.set()
    qtbot.waitUntil(lambda: j_new.delivered, timeout=10_000)
    old.open.set()
    other.open.set()
    qtbot.waitUntil(lambda: j_old.delivered and j_other.delivered, timeout=10_000)
    assert ("done", "a", "old") not in got and j_old.dropped and j_old.ok  # it ran, and was never handed on
    assert ("done", "a", "new") in got and ("done", "b", "other") in got
    assert not j_new.dropped and not j_other.dropped


def test_progress_and_cancel(qtbot):
    w = wk.Worker(sync=False)
    got = outcomes(w)
    reports = []
    w.progress.connect(lambda ch, d, t: reports.append((d, t)))

    def measure(job):
        job.progress(1, 10)
        assert job.cancel_event.wait(60)
        raise RuntimeError("stopped")

    job = w.submit(measure, channel="m", takes_job=True)
    qtbot.waitUntil(lambda: reports == [(1, 10)], timeout=10_000)
    job.cancel()
    qtbot.waitUntil(lambda: job.delivered, timeout=10_000)
    assert got == [("cancelled", "m")]  # not "failed": the user asked for it


# -- scenario builds ----------------------------------------------------------------------------------
def test_a_build_in_async_mode_completes_on_the_gui_thread(qtbot):
    model = ScenarioModel(Scenario(kind="all-reduce", n=8, nbytes=S), sync=False)
    building = []
    model.building.connect(building.append)
    with qtbot.waitSignal(model.changed, timeout=60_000) as sig:
        assert model.update(n=16)
        assert model.busy and model.scenario.n == 8  # the old scenario stays until the new one is built
    assert sig.args[0] is model.run and model.run.n == 16 and model.scenario.n == 16
    assert [b.n if b else None for b in building] == [16, None] and not model.busy


def test_a_newer_choice_drops_the_older_build(qtbot, monkeypatch):
    model = ScenarioModel(Scenario(kind="all-gather", n=8, nbytes=S), sync=False)
    real = scenarios.build_run
    first, second = Gate(real), Gate(real)
    gates = iter((first, second))
    monkeypatch.setattr(scenarios, "build_run", lambda sc: next(gates)(sc))
    runs = []
    model.changed.connect(runs.append)
    model.update(n=4)
    j4 = model.worker.job(model.BUILD)
    model.update(n=16)  # while n = 4 still builds
    j16 = model.worker.job(model.BUILD)
    assert model.pending.n == 16
    second.open.set()
    qtbot.waitUntil(lambda: j16.delivered, timeout=60_000)
    first.open.set()  # the older build finishes last
    qtbot.waitUntil(lambda: j4.delivered, timeout=60_000)
    assert j4.ok and j4.dropped  # built, never applied
    assert [r.n for r in runs] == [16] and model.scenario.n == 16 and model.run.n == 16


def test_changes_during_a_build_apply_to_the_scenario_being_built(qtbot, monkeypatch):
    model = ScenarioModel(Scenario(kind="all-gather", n=8, nbytes=S), sync=False)
    gate = Gate(scenarios.build_run)
    monkeypatch.setattr(scenarios, "build_run", gate)
    model.update(kind="all-reduce")
    model.update(n=16)
    assert (model.pending.kind, model.pending.n) == ("all-reduce", 16)
    gate.open.set()
    qtbot.waitUntil(lambda: not model.busy, timeout=60_000)
    assert (model.scenario.kind, model.scenario.n) == ("all-reduce", 16)


def test_choosing_the_scenario_on_screen_again_drops_the_build(qtbot, monkeypatch):
    model = ScenarioModel(Scenario(kind="all-gather", n=8, nbytes=S), sync=False)
    gate = Gate(scenarios.build_run)
    monkeypatch.setattr(scenarios, "build_run", gate)
    runs = []
    model.changed.connect(runs.append)
    model.update(n=16)
    job = model.worker.job(model.BUILD)
    assert model.update(n=8) and not model.busy  # back to what is shown
    gate.open.set()
    qtbot.waitUntil(lambda: job.delivered, timeout=60_000)
    assert job.dropped and runs == [] and model.scenario.n == 8


def test_a_failed_build_says_one_sentence_and_keeps_the_scenario(qtbot, monkeypatch):
    def broken(sc):
        raise ValueError("the engine cannot build this")

    model = ScenarioModel(Scenario(kind="all-gather", n=8, nbytes=S), sync=False)
    monkeypatch.setattr(scenarios, "build_run", Gate(broken))
    run = model.run
    with qtbot.waitSignal(model.error, timeout=60_000) as sig:
        model.update(n=16)
        scenarios.build_run.open.set()
    assert sig.args == ["the engine cannot build this"]
    assert model.run is run and model.scenario.n == 8 and not model.busy


def test_sync_mode_is_deterministic(qapp):
    model = ScenarioModel(Scenario(kind="all-gather", n=8, nbytes=S))  # the conftest's default: sync
    said = []
    model.error.connect(said.append)
    assert model.update(n=16) and model.run.n == 16 and not model.busy
    assert model.worker.job(model.BUILD)._thread is None  # built on this thread
    assert not model.update(n=3) and "cannot be split" in said[-1] and model.run.n == 16


def test_a_256_device_machine_is_allowed():
    assert scenarios.MACHINE_MAX_N == 256
    for key, n in (("dgx-h100", 256), ("gb200-nvl72", 72), ("tpu-v5e-16x16", 256)):
        Scenario(kind="all-gather", n=n, nbytes=float(n << 12), topology=key).with_changes().validate()
    run = scenarios.build_run(Scenario(kind="all-gather", n=256, nbytes=S, topology="dgx-h100").with_changes())
    assert run.n == 256 and len(run.trace.collectives) == 1


# -- the window while a build runs ------------------------------------------------------------------
def test_the_window_keeps_painting_and_says_it_is_building(qtbot, monkeypatch, app_env):
    from app.main_window import MainWindow

    model = ScenarioModel(Scenario(kind="all-gather", n=8, nbytes=S), sync=False)
    gate = Gate(scenarios.build_run)
    monkeypatch.setattr(scenarios, "build_run", gate)
    win = MainWindow(model, Playback(model))
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    qtbot.waitExposed(win)
    box = win.build_status
    paints = Paints(box)
    assert not box.isVisible()
    model.update(kind="all-reduce", topology="dgx-h100", n=256)
    job = model.worker.job(model.BUILD)
    assert box.isVisible() and "256 devices of DGX H100" in box.text()
    assert win.statusBar().currentMessage() == box.headline()
    # the engine is still working (the gate is shut), and the box repaints as its seconds tick
    qtbot.waitUntil(lambda: paints.count >= 3, timeout=30_000)
    assert job.running() and model.scenario.n == 8
    img = win.grab().toImage()  # the whole window paints too
    assert img.width() == win.width()
    gate.open.set()
    qtbot.waitUntil(lambda: not model.busy, timeout=120_000)
    assert not box.isVisible() and model.scenario.n == 256
    qtbot.waitUntil(lambda: win.ring_view.n == 256)  # its picture is made across turns (ring_swap)
    assert win.statusBar().currentMessage() == ""


def test_a_failed_build_in_the_window_is_one_sentence(qtbot, monkeypatch, app_env):
    from app.main_window import MainWindow

    def broken(sc):
        raise ValueError("the engine cannot build this")

    model = ScenarioModel(Scenario(kind="all-gather", n=8, nbytes=S), sync=False)
    gate = Gate(broken)
    monkeypatch.setattr(scenarios, "build_run", gate)
    win = MainWindow(model, Playback(model))
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    model.update(n=16)
    assert win.build_status.isVisible()
    gate.open.set()
    qtbot.waitUntil(lambda: not model.busy, timeout=60_000)
    assert not win.build_status.isVisible() and win.ring_view.n == 8
    assert win.statusBar().currentMessage() == "Not changed: the engine cannot build this"


def test_after_build_waits_for_the_run_it_was_asked_for(qtbot, monkeypatch):
    model = ScenarioModel(Scenario(kind="all-gather", n=8, nbytes=S), sync=False)
    calls = []
    model.after_build(lambda: calls.append(("now", model.run.n)))
    assert calls == [("now", 8)]  # nothing building: at once
    gate = Gate(scenarios.build_run)
    monkeypatch.setattr(scenarios, "build_run", gate)
    model.update(n=16)
    model.after_build(lambda: calls.append(("built", model.run.n)))
    assert calls == [("now", 8)]
    gate.open.set()
    qtbot.waitUntil(lambda: not model.busy, timeout=60_000)
    assert calls == [("now", 8), ("built", 16)]  # on the new run, not the old one


def test_the_latency_sweep_runs_on_the_worker_and_a_newer_change_wins(qtbot):
    from app.views.latency.latency_view import LatencyView

    view = LatencyView()
    qtbot.addWidget(view)
    view.worker.sync = False
    g, batch = view.generation, view.params()["batch"]
    assert view.set_params(batch=batch + 1)
    first = view.worker.job(view.SWEEP)
    assert view.set_params(batch=batch + 2)  # before the first sweep's result reached the GUI thread
    second = view.worker.job(view.SWEEP)
    assert view.generation == g and view.params()["batch"] == batch  # the curves on screen stay meanwhile
    qtbot.waitUntil(lambda: first.delivered and second.delivered, timeout=60_000)
    assert first.dropped and not second.dropped
    assert view.generation == g + 1 and view.params()["batch"] == batch + 2
