"""
GUI monkey test: a seeded random walk of valid user actions on the main window, offscreen —
keys, clicks on devices and on the timeline, scrub-slider drags, scenario / operation / n /
algorithm / size / link changes, language and theme switches, text size, tabs, predict mode,
scenario files and exports to a temporary folder.

After every action:
  - no exception escaped a Qt slot or virtual (pytest-qt fails the test on one);
  - Qt printed no warning;
  - the state is consistent: the model's run is its scenario's, the clock lies in
    [0, t_end] with the run's step boundaries, the controls show the scenario, the frame at
    the clock's t holds what the trace says each device holds, and the ring view's pixels
    show it (the first and last device).
A refused change (e.g. TP with n = 3) is a valid action too: the scenario must stay as it was.
"""

import os
import random

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, Qt, QtMsgType  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402

from app import i18n, theme  # noqa: E402
from app.core.frame import frame_at  # noqa: E402
from ring_pixels import bar_mismatches, blocks_over, frame_bar, grab, held_dict, painted_as  # noqa: E402
from timeline_reading import assert_bars_are_the_messages  # noqa: E402

# a longer walk by hand: SHARD_LAB_MONKEY_STEPS=2000 SHARD_LAB_MONKEY_SEEDS=0,1,2,3 pytest tests/test_gui_monkey.py
STEPS = int(os.environ.get("SHARD_LAB_MONKEY_STEPS", "300"))
SEEDS = [int(s) for s in os.environ.get("SHARD_LAB_MONKEY_SEEDS", "0").split(",")]
NS = [1, 2, 3, 4, 5, 6, 8, 8, 8, 12, 16, 32, 64]  # 8 is the lecture's n; 64 the most the view draws
KEYS = [Qt.Key_Space, Qt.Key_Left, Qt.Key_Right, Qt.Key_Home, Qt.Key_End, Qt.Key_BracketLeft,
        Qt.Key_BracketRight, Qt.Key_O, Qt.Key_J, Qt.Key_K, Qt.Key_L]
# the offscreen platform plugin says this about every top-level window; it is not the app's
IGNORED_QT_MESSAGES = ("does not support propagateSizeHints",)


@pytest.fixture
def monkey_env(app_env, monkeypatch):
    """conftest's app_env, and message boxes that answer OK at once: no dialog ever blocks."""
    for name in ("information", "warning", "critical", "question", "about"):
        monkeypatch.setattr(QMessageBox, name, staticmethod(lambda *a, **k: QMessageBox.Ok))
    return app_env


@pytest.fixture
def window(qtbot, monkey_env):
    """The main window on ring all-gather, n = 8; really deleted afterwards."""
    from PySide6.QtCore import QCoreApplication, QEvent

    from app.main_window import MainWindow
    from app.state import Scenario, ScenarioModel

    w = MainWindow(ScenarioModel(Scenario(kind="all-gather", n=8)))
    w.resize(1600, 900)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    yield w
    # closing alone leaves a MainWindow alive, still connected to the global theme and
    # language notifiers: later tests would rebuild it on every switch
    w.playback.pause()
    w.close()
    w.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)


# ---------------------------------------------------------------------------------------
# Actions: each takes (window, rng, folder) and returns a short description for the log
# ---------------------------------------------------------------------------------------
def act_key(w, rng, folder):
    key = rng.choice(KEYS)
    QTest.keyClick(w.ring_view, key)
    return f"key {Qt.Key(key).name}"


def act_tick(w, rng, folder):
    # what the playback timer does between frames, without waiting for wall time
    dt = rng.choice([1 / 60, 0.1, 0.5, 2.0])
    w.playback.advance(dt)
    return f"advance {dt:.3f} s"


def act_click_device(w, rng, folder):
    rv = w.ring_view
    d = rng.randrange(len(rv.devices))
    pos = rv.mapFromScene(rv.devices[d].sceneBoundingRect().center())
    QTest.mouseClick(rv.viewport(), Qt.LeftButton, Qt.NoModifier, pos)
    return f"click device {d}"


def act_click_timeline(w, rng, folder):
    vp = w.timeline.plot.viewport()
    pos = QPoint(rng.randrange(max(vp.width(), 1)), rng.randrange(max(vp.height(), 1)))
    QTest.mouseClick(vp, Qt.LeftButton, Qt.NoModifier, pos)
    return f"click timeline at {pos.x()},{pos.y()}"


def act_drag_scrub(w, rng, folder):
    s = w.scrub
    s.setSliderDown(True)
    for _ in range(rng.randint(1, 5)):
        s.setValue(rng.randint(s.minimum(), s.maximum()))
    s.setSliderDown(False)
    return f"drag scrub to {s.value()}"


def _activate(combo, i):
    combo.setCurrentIndex(i)
    combo.activated.emit(i)


def act_scenario(w, rng, folder):
    combo = w.controls.group
    i = rng.randrange(combo.count())
    _activate(combo, i)
    return f"scenario {combo.itemData(i)}"


def act_operation(w, rng, folder):
    combo = w.controls.op
    if not combo.isEnabled() or combo.count() < 2:
        return "operation (fixed)"
    i = rng.randrange(combo.count())
    _activate(combo, i)
    return f"operation {combo.itemData(i)}"


def act_algo(w, rng, folder):
    combo = w.controls.algo
    if not combo.isEnabled():
        return "algorithm (fixed)"
    i = rng.randrange(combo.count())
    _activate(combo, i)
    return f"algorithm {combo.itemData(i)}"


def act_n(w, rng, folder):
    n = rng.choice(NS)
    w.controls.n.setValue(n)
    return f"n {n}"


def act_size(w, rng, folder):
    combo = w.controls.size_combo
    if rng.random() < 0.5:
        i = rng.randrange(combo.count())
        _activate(combo, i)
        return f"size {combo.itemText(i)}"
    text = rng.choice(["3 MiB", "1000", "64KiB", "1.5GB", "12 KB"])
    combo.setEditText(text)
    combo.lineEdit().editingFinished.emit()
    return f"size typed {text!r}"


def act_link(w, rng, folder):
    combo = w.controls.link
    i = rng.randrange(combo.count())
    _activate(combo, i)
    return f"link {combo.itemData(i)}"


def act_language(w, rng, folder):
    w.classroom.act_toggle_language.trigger()
    return f"language {i18n.current_language()}"


def act_theme(w, rng, folder):
    w.classroom.presentation.act_next_theme.trigger()
    return f"theme {theme.palette().key}"


def act_zoom(w, rng, folder):
    p = w.classroom.presentation
    a = rng.choice([p.act_zoom_in, p.act_zoom_out, p.act_zoom_reset])
    a.trigger()
    return f"{a.objectName()} -> scale {theme.scale():.2f}"


def act_tab(w, rng, folder):
    i = rng.randrange(w.tabs.count())
    QTest.keyClick(w, Qt.Key(Qt.Key_1 + i), Qt.ControlModifier)
    return f"tab {i + 1}"


def act_predict(w, rng, folder):
    w.classroom.act_predict.trigger()
    return f"predict {w.classroom.act_predict.isChecked()}"


def act_export(w, rng, folder):
    ext = rng.choice(["png", "svg", "json", "csv"])
    path = os.path.join(folder, f"export-{rng.randrange(10**6)}.{ext}")
    ok = w.classroom.export(path)
    assert ok, f"export to {path} failed: {w.classroom.last_error}"
    assert os.path.getsize(path) > 0
    return f"export {ext}"


def act_save_open(w, rng, folder):
    path = os.path.join(folder, "scenario.json")
    if os.path.exists(path) and rng.random() < 0.5:
        assert w.classroom.open_scenario(path), w.classroom.last_error
        return "open scenario"
    assert w.classroom.save_scenario(path), w.classroom.last_error
    return "save scenario"


ACTIONS = [  # (weight, action)
    (30, act_key), (12, act_tick), (8, act_click_device), (4, act_click_timeline), (6, act_drag_scrub),
    (4, act_scenario), (5, act_operation), (5, act_algo), (7, act_n), (3, act_size), (2, act_link),
    (2, act_language), (2, act_theme), (2, act_zoom), (2, act_tab), (2, act_predict), (2, act_export),
    (2, act_save_open),
]


# ---------------------------------------------------------------------------------------
# What must hold after every action
# ---------------------------------------------------------------------------------------
def check_consistent(w):
    model, pb = w.model, w.playback
    sc, run = model.scenario, model.run
    assert run.scenario == sc
    sc.validate()
    # the clock
    idx = run.index
    assert pb.t_end == pytest.approx(run.trace.t_end, rel=1e-12, abs=0)
    assert 0.0 <= pb.t <= pb.t_end
    assert pb.stops == list(idx.stops)
    assert 0 <= pb.step_index <= pb.n_steps
    # the controls show the scenario
    ctl = w.controls
    assert ctl.n.value() == sc.n
    # a mesh scenario's Operation box lists the engine's mesh programs: it shows the program
    assert ctl.op.currentData() == (sc.program if sc.kind == "mesh" else sc.kind)
    if sc.kind == "mesh":
        assert ctl.mesh_edit.text().replace(" ", "") == sc.mesh.replace(" ", "")
    assert ctl.algo.currentData() == sc.algo
    assert ctl.link.currentData() == sc.link
    # the ring view paints what the trace says each device holds at t
    rv = w.ring_view
    assert rv.run is run and len(rv.devices) == sc.n
    c = idx.display_collective(pb.t)
    if c is not None:
        f = frame_at(run, pb.t)
        want = run.trace.holdings(c, t=pb.t)
        assert f.coll == c
        assert held_dict(f, sc.n) == {d: {ch: who for ch, who in want.get(d, {}).items() if who}
                                      for d in range(sc.n)}, pb.t
        check_ring_pixels(rv, f, idx, pb.t)
    # the timeline paints a send and a receive bar for every message (read again only when its bars
    # item is a new one: the view builds it once per run, a frame moves only the playhead)
    if getattr(w.timeline, "group", 1) > 1:  # rows of several GPUs (too little height for one each): bands, not bars per message
        pass
    elif w.timeline.bars is not _timeline_checked[0] and run.trace.messages:
        assert_bars_are_the_messages(w.timeline, run.trace, sc.n)
        _timeline_checked[0] = w.timeline.bars  # held: its id is not reused by a later item
    elif not run.trace.messages:  # nothing sent: no send or receive bar in the plot
        assert getattr(w.timeline, "bars", None) not in w.timeline.plot.getPlotItem().items
    assert w.windowTitle()


_timeline_checked = [None]


def check_ring_pixels(rv, f, idx, t):
    """The first and last device's buffers on screen are what frame f says they hold (on the switch's
    ring; a machine's blocks fly on their own legs and may cross the boxes)."""
    lay = rv.layout_now
    if lay.kind != "switch":
        return
    n = rv.n
    devices = [d for d in sorted({0, n - 1}) if idx.computing(d, t) is None]  # a computing GPU's box shows its op
    covered = blocks_over(rv, f)
    pic = grab(rv)
    if lay.mode == "radial":
        for d in devices:
            compared, bad = bar_mismatches(rv, pic, d, frame_bar(rv, f, d), covered)
            assert bad == 0, (d, t, compared, bad)
    else:
        assert painted_as(rv, f, devices, pic, covered) == {}, t


def qt_warnings(qtlog):
    bad = (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg)
    return [r.message for r in qtlog.records
            if r.type in bad and not any(s in r.message for s in IGNORED_QT_MESSAGES)]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_walk_of_valid_actions(window, qtlog, monkey_env, seed):
    rng = random.Random(seed)
    w = window
    weights, actions = zip(*ACTIONS)
    log = []
    check_consistent(w)
    for step in range(STEPS):
        action = rng.choices(actions, weights)[0]
        before = w.model.scenario
        refused = []
        w.model.error.connect(refused.append)
        try:
            log.append(action(w, rng, str(monkey_env)))
            QApplication.processEvents()
        finally:
            w.model.error.disconnect(refused.append)
        where = f"seed {seed}, step {step}: " + " | ".join(log[-5:])
        if refused:
            assert w.model.scenario == before, where
        try:
            check_consistent(w)
        except AssertionError as e:
            raise AssertionError(f"{where}\n{e}") from None
        warnings = qt_warnings(qtlog)
        assert not warnings, f"{where}\nQt: {warnings}"
    assert w.isVisible()
