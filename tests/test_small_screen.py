"""
Small screens (the lecture-hall issue's test path 5): at 1280×720 every dock's and dialog's text
fits — read from the drawn rectangles, not the strings. For every visible QLabel and button of
the window's docks, the predict panel, the `?` overlay and the app's dialogs, in English and
Chinese, at text scale 1 and 1.5:

  * the room its text needs (a wrapped label's height for its width, a one-line label's or a
    button's text advance, an elided dock title's painted text) fits its own rectangle, and
  * that rectangle lies inside every shown parent up to the window (a scroll area's viewport
    only sideways where it cannot scroll sideways).

Then predict-then-reveal as the issue found it (every answer button whole, the score on its own
line, a clean start), and the window's frame on a 1280×720 screen at first launch and after a
geometry remembered from a larger one.
"""

from __future__ import annotations

import itertools
import json
import textwrap

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QRect  # noqa: E402
from PySide6.QtWidgets import (QAbstractButton, QAbstractScrollArea, QApplication, QCheckBox,  # noqa: E402
                               QDockWidget, QLabel, QPushButton, QRadioButton, QStyle, QToolButton)

from app import theme  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402
from screen_process import ROOT  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")
SMALL = (1280, 720)


def settle(qtbot):
    for _ in range(4):
        QApplication.processEvents()
    qtbot.wait(1)


# -- what a text needs, against where it is drawn -------------------------------------------------
def _needed(wid) -> tuple[int, int] | None:
    """(width, height) the widget's text needs to be drawn whole, or None when it draws no text."""
    if isinstance(wid, QLabel):
        if not wid.text() or wid.pixmap() is not None and not wid.pixmap().isNull():
            return None
        if hasattr(wid, "drawn_text"):  # a dock title that elides (app/dock_title.py): what it paints
            fm = wid.fontMetrics()
            return fm.horizontalAdvance(wid.drawn_text()), fm.height()
        if wid.wordWrap():  # Qt's own layout of its text at its width
            return wid.minimumSizeHint().width(), wid.heightForWidth(wid.width()) if wid.hasHeightForWidth() else 0
        hint = wid.sizeHint()
        return hint.width(), hint.height()
    if isinstance(wid, (QCheckBox, QRadioButton)):
        if not wid.text():
            return None
        hint = wid.sizeHint()
        return hint.width(), hint.height()
    if isinstance(wid, (QPushButton, QToolButton)):
        if not wid.text() or isinstance(wid, QToolButton) and wid.toolButtonStyle() == 0:  # icon only
            return None
        fm = wid.fontMetrics()
        text = wid.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
        icon = wid.iconSize().width() + 4 if not wid.icon().isNull() else 0
        margin = wid.style().pixelMetric(QStyle.PixelMetric.PM_ButtonMargin, None, wid)
        return fm.horizontalAdvance(text) + icon + margin, fm.height()
    return None


def _clipped_by(wid, top) -> str | None:
    """The first shown parent (up to `top`) that does not hold the widget's whole rectangle."""
    r = QRect(wid.mapTo(top, wid.rect().topLeft()), wid.size())
    p = wid.parentWidget()
    while p is not None and p is not top.parentWidget():
        room = QRect(p.mapTo(top, p.rect().topLeft()), p.size())
        area = p.parentWidget()
        if isinstance(area, QAbstractScrollArea) and p is area.viewport():
            # a scroll area shows the rest when scrolled: only a side it cannot scroll to clips
            sideways = area.horizontalScrollBarPolicy() == 1  # Qt.ScrollBarAlwaysOff
            if sideways and (r.left() < room.left() or r.right() > room.right()):
                return f"{type(area).__name__} {area.objectName()!r} (sideways, no scroll bar)"
            r = r.intersected(room)  # what the parents above must hold is the part shown now
            if r.isEmpty():
                return None  # scrolled out of sight: shown when scrolled to
            p = area
        elif not room.contains(r):
            return f"{type(p).__name__} {p.objectName()!r} {room.getRect()}"
        if p is top:
            break
        p = p.parentWidget()
    return None


def text_problems(top, label: str, skip: tuple[str, ...] = ()) -> list[str]:
    """Every shown label and button inside `top` whose text does not fit where it is drawn (but
    those whose class is named in `skip`)."""
    out = []
    for wid in [top, *top.findChildren(QLabel), *top.findChildren(QAbstractButton)]:
        if not isinstance(wid, (QLabel, QAbstractButton)) or not wid.isVisibleTo(top) or not wid.isVisible():
            continue
        if type(wid).__name__ in skip:
            continue
        need = _needed(wid)
        if need is None:
            continue
        name = f"{label}: {type(wid).__name__} {wid.objectName()!r} {wid.text()[:40]!r}"
        w, h = need
        if w > wid.width() + 1 or h > wid.height() + 1:
            out.append(f"{name} needs {w}×{h}, has {wid.width()}×{wid.height()}")
        where = _clipped_by(wid, top)
        if where:
            out.append(f"{name} at {wid.mapTo(top, wid.rect().topLeft()).toTuple()} {wid.size().toTuple()} "
                       f"is cut by {where}")
    return out


# -- the walk -------------------------------------------------------------------------------------
def _dialogs(w):
    """The app's dialogs, opened as their actions open them (the calibration dialog) or as the
    classroom makes them (its error box, the export's progress and its question on closing)."""
    from PySide6.QtWidgets import QDialog

    w.act_calibrate.trigger()
    c = w.classroom
    c._error(c.tr("Cannot open scenario"), "lecture.json: " + "the file is not a scenario, a run or a deck. " * 3)
    progress = c._progress_dialog()
    progress.show()
    c._exporting = progress  # as during an animation's export: closing the window asks first
    c._ask_cancel_export()
    c._exporting = None
    return [d for d in QApplication.topLevelWidgets() if isinstance(d, QDialog) and d.isVisible()]


def _close_dialogs(dialogs):
    for d in dialogs:
        d.close()


@pytest.mark.parametrize("lang, scale", list(itertools.product(("en", "zh"), (1.0, 1.5))))
def test_every_dock_and_dialog_text_fits_at_1280x720(qtbot, lang, scale):
    w = make_window(qtbot, "reduce-scatter", 4, size=SMALL)
    w.classroom.set_language(lang)
    theme.set_scale(scale)
    settle(qtbot)
    problems = []
    for d in w.findChildren(QDockWidget):  # every dock's title (their contents: the views' owners, below)
        if d.isVisible():
            problems += text_problems(d.titleBarWidget(), f"{lang} {scale}× {d.objectName()} title")
    # predict, then reveal: a question, then a verdict and the score after an answer
    c = w.classroom
    c.predict.animate = False
    c.act_predict.trigger()
    settle(qtbot)
    c.predict.answer(min(c.predict.q.answers))
    settle(qtbot)
    problems += text_problems(c.predict_dock, f"{lang} {scale}× predicting")
    c.act_predict.trigger()
    # the shortcut list, after two Ctrl+= as well (the issue found it cut at 1.5× + Ctrl+= ×2)
    p = c.presentation
    for zoom in (0, 2):
        for _ in range(zoom):
            p.zoom_in()
        p.toggle_overlay()
        settle(qtbot)
        problems += text_problems(p.overlay, f"{lang} {theme.scale()}× overlay")
        p.toggle_overlay()
    theme.set_scale(scale)
    settle(qtbot)
    dialogs = _dialogs(w)
    settle(qtbot)
    assert len(dialogs) >= 4, [type(d).__name__ for d in dialogs]
    for d in dialogs:
        problems += text_problems(d, f"{lang} {scale}× dialog {type(d).__name__} {d.objectName()}")
    _close_dialogs(dialogs)
    assert not problems, f"{len(problems)} cut texts, e.g.\n" + "\n".join(problems[:15])


# The Scenario dock's hint (app/controls.py LeftoverLabel) takes the height its dock has left and
# its end is cut when long, by design; it is being rewritten as a validation sentence that stays
# beside its field, so it is left out here and every other label is held to fit.
CUT_BY_DESIGN = ("LeftoverLabel",)


@pytest.mark.parametrize("lang, scale", list(itertools.product(("en", "zh"), (1.0, 1.5))))
def test_the_docks_contents_and_the_decode_tab_text_fit_at_1280x720(qtbot, lang, scale):
    """The docks' contents on the ring tab, and the decode tab, which hides them and shows its own
    words (the issue's "decode info line": one unwrapped line 1087 px long in a 946 px page at 1×,
    cut at "weight-g"). Every line the readout draws is as wide as its label at most, and none of
    its parts is lost in the flow."""
    w = make_window(qtbot, "reduce-scatter", 4, size=SMALL)
    w.classroom.set_language(lang)
    theme.set_scale(scale)
    problems = []
    for tab in ("ring", "latency"):
        w.select_tab(tab)
        settle(qtbot)
        problems += text_problems(w.tabs.currentWidget(), f"{lang} {scale}× {tab} page", CUT_BY_DESIGN)
        for d in w.findChildren(QDockWidget):
            if d.isVisible():
                problems += text_problems(d, f"{lang} {scale}× {tab} {d.objectName()}", CUT_BY_DESIGN)
    assert not problems, f"{len(problems)} cut texts, e.g.\n" + "\n".join(problems[:15])
    label = w.view("latency").readout_label
    fm, room = label.fontMetrics(), label.contentsRect().width()
    drawn = label.text().split("\n")
    if lang == "en" or scale > 1:
        assert len(drawn) > 2  # it needs more than its two written lines at 1280×720
    assert max(fm.horizontalAdvance(line) for line in drawn) <= room, (drawn, room)
    assert label.height() >= fm.lineSpacing() * len(drawn)
    flat = lambda text: text.replace(" ·\n", " · ").replace("\n", " ")  # noqa: E731
    assert flat(label.text()) == flat(w.view("latency").readout())  # every part, in order


def test_a_dock_title_too_long_for_its_dock_ends_in_an_ellipsis(qtbot):
    """At 1280×720 "What happens in this step" was cut mid-glyph ("What happens in this ste"): the
    title now paints whole characters and "…", as wide as its label."""
    w = make_window(qtbot, "all-gather", 4, size=SMALL)
    theme.set_scale(1.5)
    settle(qtbot)
    label = w.explain_dock.titleBarWidget().label
    fm = label.fontMetrics()
    assert fm.horizontalAdvance(label.text()) > label.width()  # too long for its dock, as in the issue
    drawn = label.drawn_text()
    assert drawn.endswith("…") and label.text().startswith(drawn[:-1])
    assert fm.horizontalAdvance(drawn) <= label.contentsRect().width()
    assert label.toolTip() == label.text()


# -- predict, then reveal at 1280×720 ------------------------------------------------------------
def _predicting(qtbot, kind, n, lang, scale):
    w = make_window(qtbot, kind, n, size=SMALL)
    w.classroom.set_language(lang)
    theme.set_scale(scale)
    settle(qtbot)
    c = w.classroom
    c.predict.animate = False
    c.act_predict.trigger()
    settle(qtbot)
    return w, c


def _answer_until_chunk_question(qtbot, c):
    from app.core.predict import CHUNK

    while c.predict.q is not None and c.predict.q.kind != CHUNK:
        c.predict.answer(min(c.predict.q.answers))
        settle(qtbot)
    assert c.predict.q is not None


@pytest.mark.parametrize("kind, n", [("reduce-scatter", 4), ("all-gather", 8)])
@pytest.mark.parametrize("lang, scale", list(itertools.product(("en", "zh"), (1.0, 1.5))))
def test_every_answer_button_is_whole_and_the_score_has_its_own_line(qtbot, kind, n, lang, scale):
    """The issue's 1280×720 window: "Which chunk arrives at GF…", the last answer button half
    hidden, the score under the Skip button. Now: the question wraps inside the panel, every chunk
    button lies whole inside the scroll area's width with its number, and nothing shares the
    score's line."""
    w, c = _predicting(qtbot, kind, n, lang, scale)
    _answer_until_chunk_question(qtbot, c)
    settle(qtbot)
    panel = c.predict_panel
    vp = panel.scroll.viewport()
    view = QRect(0, 0, vp.width(), 1 << 20)  # (down: the panel scrolls)
    shown = [b for b in panel.chunk_buttons if b.isVisible()]
    assert len(shown) == c.predict.q.n_choices
    for b in shown + [panel.skip]:
        r = QRect(b.mapTo(vp, b.rect().topLeft()), b.size())
        assert view.contains(r), (b.text(), r.getRect(), vp.width())
        assert b.fontMetrics().horizontalAdvance(b.text()) < b.width()
    q = panel.question
    qr = QRect(q.mapTo(vp, q.rect().topLeft()), q.size())
    assert view.contains(qr) and q.heightForWidth(q.width()) <= q.height()
    score = panel.score
    sr = QRect(score.mapTo(vp, score.rect().topLeft()), score.size())
    assert view.contains(sr) and score.heightForWidth(score.width()) <= score.height()
    for other in shown + [panel.skip, q, panel.verdict]:
        o = QRect(other.mapTo(vp, other.rect().topLeft()), other.size())
        assert o.bottom() < sr.top() or o.top() > sr.bottom(), (other.objectName(), o.getRect(), sr.getRect())
    problems = text_problems(c.predict_dock, f"{kind} {lang} {scale}×")
    assert not problems, problems


def test_turning_predict_on_again_starts_clean(qtbot):
    """Off and on again: no verdict from the last round, no score carried over, the first question."""
    w, c = _predicting(qtbot, "all-gather", 4, "en", 1.0)
    c.predict.answer(min(c.predict.q.answers) + 1)  # a wrong answer
    settle(qtbot)
    assert "✗" in c.predict_panel.verdict.text()
    assert "0 of 1" in c.predict_panel.score.text()
    c.act_predict.trigger()  # off
    w.playback.to_start()
    c.act_predict.trigger()  # on again
    settle(qtbot)
    panel = c.predict_panel
    assert panel.verdict.text() == "" and c.predict.last is None
    assert panel.score.text() == c.predict.tr("Score: no answers yet") and c.predict.scores == {}
    assert (c.predict.q.coll, c.predict.q.step) == (0, 0)


# -- the window on a 1280×720 screen ---------------------------------------------------------------
FRAME_SCRIPT = textwrap.dedent("""
    import json, sys
    from PySide6.QtCore import QByteArray, QRect
    from PySide6.QtWidgets import QApplication
    from app.classroom.presentation import STYLE, apply_look
    app = QApplication([sys.argv[0], "-style", STYLE])
    app.setProperty("shardLabStyle", STYLE)
    apply_look(app)
    from app.main_window import MainWindow
    from app.state import Playback, Scenario, ScenarioModel

    def shown(geometry=None):
        w = MainWindow(ScenarioModel(Scenario()))
        if geometry is not None:
            w.restoreGeometry(geometry)
        w.show()
        for _ in range(5):
            app.processEvents()
        return w

    room = app.primaryScreen().availableGeometry()
    first = shown()
    out = {"room": room.getRect(), "first": first.frameGeometry().getRect(),
           "first_inner": first.geometry().getRect()}
    # a geometry remembered on a 1920×1080 monitor
    big = MainWindow(ScenarioModel(Scenario()))
    big.setGeometry(100, 120, 1900, 1000)
    saved = big.saveGeometry()
    restored = shown(saved)
    out["restored"] = restored.frameGeometry().getRect()
    # simcore.show on a student's own run (it opened 1600×900 whatever the screen)
    import simcore
    from simcore.comm_sim import Comm, NVLINK4, allgather_ring, switch
    import numpy as np
    comm = Comm(switch(4, NVLINK4))
    allgather_ring(comm, [np.arange(4.0) + d for d in range(4)], list(range(4)))
    shown_run = simcore.show(comm, block=False)
    for _ in range(5):
        app.processEvents()
    out["show"] = shown_run.frameGeometry().getRect()
    print("RESULT " + json.dumps(out))
""")


def test_the_window_and_its_frame_fit_a_1280x720_screen(tmp_path):
    """On a 1280×720 screen whose windows have frames, the window opens with its frame inside the
    available geometry (it was 1280×720 inside a frame, its bottom edge off the screen), and so
    do a geometry remembered from a larger monitor and simcore.show's window (it was 1600×900)."""
    import os
    import subprocess
    import sys

    cfg = tmp_path / "screen.json"
    cfg.write_text(json.dumps({"synchronousWindowSystemEvents": True, "windowFrameMargins": True,
                               "screens": [{"name": "hall", "x": 0, "y": 0, "width": 1280, "height": 720,
                                            "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={cfg}", PYTHONPATH=ROOT,
               SHARD_LAB_SETTINGS=str(tmp_path / "settings.ini"))
    proc = subprocess.run([sys.executable, "-c", FRAME_SCRIPT], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240)
    line = next((s for s in proc.stdout.splitlines() if s.startswith("RESULT ")), None)
    assert proc.returncode == 0 and line, proc.stderr[-3000:]
    out = json.loads(line[len("RESULT "):])
    room = QRect(*out["room"])
    for key in ("first", "restored", "show"):
        frame = QRect(*out[key])
        assert room.contains(frame), (key, frame.getRect(), room.getRect())
    inner = QRect(*out["first_inner"])
    assert QRect(*out["first"]) != inner  # the platform drew a frame: the test measured one
