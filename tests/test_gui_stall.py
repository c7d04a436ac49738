"""
A new scenario's per-message derivations run on the worker, not on the GUI thread (issue 34, item 10).

Swapping in DGX H100 at n = 256 (130,560 messages, 8,192 in its first step) froze the window for
most of a second: the explanation derived its words from every message of the step, the ring laid
32 nodes out and routed every message's legs, the timeline sorted every message into rows and the
first frame replayed the step's arrivals, all on the GUI thread when the run arrived. Now the build
prepares them on the worker (app/core/prepared.py) and the views read them.

These tests count where those derivations run during a swap made on a real worker thread (no
timing: benchmarks/gui_stall.py measures the stall), and check that what is painted is the same
as what the views make when they derive everything themselves.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from app.core.scenarios import Scenario

SWAPS = {
    "dgx": dict(topology="dgx-h100", n=256, kind="all-reduce"),
    "tpu": dict(topology="tpu-v4-4x4x4", n=64, kind="all-reduce"),
}


@pytest.fixture
def window(qtbot, app_env):
    """The main window on a model whose builds run on a worker thread (as in the app)."""
    from app.main_window import MainWindow
    from app.state import Playback, ScenarioModel

    model = ScenarioModel(Scenario(), sync=False)
    win = MainWindow(model, Playback(model))
    qtbot.addWidget(win)
    win.resize(1600, 900)
    win.show()
    qtbot.waitExposed(win)
    win.timeline  # noqa: B018  (made now: the swap rebuilds it as the app's does)
    return win


def swap(qtbot, win, changes):
    model = win.model
    assert model.update(**changes)
    assert model.pending is not None  # a thread builds it
    qtbot.waitUntil(lambda: model.pending is None, timeout=120_000)
    assert model.run.scenario.topology == changes["topology"]
    settled(qtbot, win)
    win.grab()  # painted, with whatever the paint asks for


def settled(qtbot, win):
    """The ring's picture of the new run, made across the event loop's turns (ring_swap), in place."""
    from app.views.ring import ring_swap

    qtbot.waitUntil(lambda: not ring_swap.pending(win.ring_view), timeout=10_000)


# the derivations that read every message (or every message of a step), by the module name the
# views call them through; each is recorded with the thread it ran on
DERIVATIONS = [
    ("app.views.text.explain", "describe_group"),  # the explanation's words for a step's messages
    ("app.views.text.explain", "step_where"),
    ("app.views.ring.ring_view", "ring_layout"),  # the machine's layout (32 nodes of 8)
    ("app.views.ring.ring_view", "message_path"),  # each (src, dst)'s legs off the lanes
    ("app.views.ring.ring_view", "step_note"),  # the step line's note from the step's messages
    ("app.views.ring.ring_view", "message_color_indices"),
    ("app.views.timeline.timeline", "busy_bands"),  # the timeline's grouped rows
    ("app.views.timeline.timeline", "step_cuts"),
    ("app.views.timeline.timeline", "phase_spans"),
]


def record_threads(monkeypatch, calls):
    import importlib

    from app.core.trace_index import TraceIndex

    def wrap(label, fn):
        def recorded(*a, **k):
            calls.append((label, threading.current_thread() is threading.main_thread()))
            return fn(*a, **k)
        return recorded

    for mod, name in DERIVATIONS:
        m = importlib.import_module(mod)
        monkeypatch.setattr(m, name, wrap(name, getattr(m, name)))
    # the first frame's holdings: messages arriving, replayed from the trace
    monkeypatch.setattr(TraceIndex, "_arrive", wrap("TraceIndex._arrive", TraceIndex._arrive))


@pytest.mark.parametrize("target", ["dgx", "tpu"])
def test_a_swap_derives_nothing_from_the_messages_on_the_gui_thread(window, qtbot, monkeypatch, target):
    from app.core import prepared

    calls = []
    record_threads(monkeypatch, calls)
    before = prepared.made.copy()
    swap(qtbot, window, SWAPS[target])
    made = prepared.made - before  # values of the run's prepared record, by where they were made
    assert not [k for k in made if k[1] == "main"]
    assert {("explain step words", "worker"), ("ring layout", "worker"), ("ring colours", "worker")} <= set(made)
    on_gui = sorted({name for name, main in calls if main})
    on_worker = {name for name, main in calls if not main}
    assert on_gui == []
    # and they did run, with the build: the views read what the worker made
    expected = {"describe_group", "ring_layout", "message_color_indices", "TraceIndex._arrive"}
    expected |= {"message_path", "step_note", "phase_spans"} if target == "dgx" else set()
    expected |= {"busy_bands", "step_cuts"} if target == "dgx" else set()  # n = 256: rows of 32 GPUs
    assert expected <= on_worker


def test_the_gui_thread_derives_nothing_from_the_messages_on_the_way_back_either(window, qtbot, monkeypatch):
    swap(qtbot, window, SWAPS["dgx"])
    calls = []
    record_threads(monkeypatch, calls)
    swap(qtbot, window, SWAPS["tpu"])
    swap(qtbot, window, SWAPS["dgx"])
    assert sorted({name for name, main in calls if main}) == []


def _grabs(win):
    from PySide6.QtGui import QImage

    def img(w):
        return w.grab().toImage().convertToFormat(QImage.Format_ARGB32)
    return img(win.ring_view), img(win.timeline), win.explain.body.toHtml(), img(win.explain)


@pytest.mark.parametrize("target", ["dgx", "tpu", "switch"])
def test_what_is_painted_is_what_the_views_derive_themselves(window, qtbot, target):
    """The views drawn from the prepared record, pixel for pixel and word for word, against the same
    views after the record is emptied and every view built again (each derives all of it itself)."""
    if target == "switch":  # the lecture's one switch at n = 256 (the explanation's words, the rows)
        swap(qtbot, window, SWAPS["dgx"])
        model = window.model
        assert model.update(topology="", n=256, kind="all-gather", algo="ring")
        qtbot.waitUntil(lambda: model.pending is None, timeout=120_000)
        settled(qtbot, window)
        window.grab()
    else:
        swap(qtbot, window, SWAPS[target])
    run = window.model.run
    assert run.prepared  # the worker prepared it
    prepared = _grabs(window)
    run.prepared.clear()
    run.index._cursors = []  # the first frames' holdings too
    window.ring_view._build(run)
    window.timeline._build(run)
    window.explain._forget()
    window.explain.refresh()
    derived = _grabs(window)
    assert any(k[0] in ("ring layout", "ring colours") for k in run.prepared)  # made again, here
    for a, b in zip(prepared, derived):
        assert a == b


def test_a_step_later_in_the_run_is_still_explained(window, qtbot):
    """Only the step a run opens at is prepared: the next one is derived where it is asked, the same way."""
    from app.views.text import explain

    swap(qtbot, window, SWAPS["dgx"])
    pb = window.playback
    pb.step_forward()
    f = pb.frames.current()
    run = window.model.run
    words = explain.step_words(run, f.coll, f.step)
    assert words.count == len(run.index.step_msgs[f.coll][f.step])
    assert html_has(window.explain.body.toHtml(), words.lines[0])


def html_has(doc: str, line: str) -> bool:
    import html

    return html.escape(line).replace("'", "&#x27;") in doc or line in doc or html.escape(line, quote=False) in doc


def test_step_cuts_equal_the_pairwise_unique_they_replace():
    """step_cuts sorts (row, instant) as one integer; the pairs np.unique(axis=0) gave, in the same order."""
    from app.views.timeline.timeline import step_cuts

    rng = np.random.default_rng(7)
    for _ in range(20):
        m = int(rng.integers(1, 400))
        row = rng.integers(0, 9, m)
        t0 = rng.integers(0, 30, m) * 1e-6
        t1 = t0 + rng.integers(1, 5, m) * 1e-6
        eps = 1e-9
        q0, q1 = np.round(t0 / eps).astype(np.int64), np.round(t1 / eps).astype(np.int64)
        starts = np.unique(np.stack([row, q0], 1), axis=0)
        ends = {tuple(e) for e in np.unique(np.stack([row, q1], 1), axis=0).tolist()}
        keep = np.array([tuple(s) in ends for s in starts.tolist()], bool)
        r, t = step_cuts(row, t0, t1, eps)
        assert r.tolist() == starts[keep, 0].tolist()
        assert t.tolist() == (starts[keep, 1] * eps).tolist()


def test_each_thread_measures_text_with_its_own_font_metrics(qapp):
    """Qt's font engines belong to a thread: the layout's cached metrics are per thread, so the worker
    laying a run out never shares a QFontMetricsF with the GUI thread, and both measure alike."""
    from app.views.ring.layout_text import make_font, metrics

    font = make_font("body", False, 15)
    here = metrics(font)
    there = []
    t = threading.Thread(target=lambda: there.append((metrics(font), metrics(font).advance("GPU 255 · Node 31"))))
    t.start()
    t.join()
    assert there[0][0] is not here
    assert metrics(font) is here
    assert there[0][1] == here.advance("GPU 255 · Node 31")


def test_a_failing_preparer_leaves_the_build_whole(monkeypatch):
    """prepare() never fails a build: what a preparer could not make, the view makes when it asks."""
    from app.core import prepared
    from app.core.scenarios import build_run

    def broken(run):
        raise RuntimeError("no")

    monkeypatch.setattr(prepared, "_PREPARERS", [(False, broken)] + list(prepared._PREPARERS))
    run = build_run(Scenario(kind="all-gather", n=4))
    assert run.trace.messages and isinstance(run.prepared, dict)
    assert prepared.memo(run, ("x", 1), lambda: 42) == 42 and run.prepared[("x", 1)] == 42


def test_the_record_keeps_a_few_layouts_of_a_kind_not_one_per_window_size():
    from app.core.prepared import memo

    class R:
        prepared = {}
    run = R()
    for w in range(10):
        assert memo(run, ("ring layout", w), lambda: w * 2, keep=4) == w * 2
    memo(run, ("explain step words", 0), lambda: "words")
    assert [k for k in run.prepared if k[0] == "ring layout"] == [("ring layout", w) for w in (6, 7, 8, 9)]
    assert run.prepared[("explain step words", 0)] == "words"
