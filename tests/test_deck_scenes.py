"""Scenes made from the window and shown beside it: "Add the current view as a scene" reopens at
the picture that was on screen; the presenter view's thumbnail of a saved run's
scene is that run (item 4); a digit answers an open prediction question, else types a scene number."""

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.classroom.export import image_to_array  # noqa: E402
from app.deck.scene_open import load_deck  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")
SIZE = (1280, 720)


def _picture(w):
    for _ in range(3):
        QApplication.processEvents()
    return image_to_array(w.tabs.currentWidget().grab().toImage())


def _go(pb, where):
    if where == "two steps (at a boundary)":  # where → / PageDown stop
        pb.step_forward()
        pb.step_forward()
    elif where == "mid-step":  # paused while playing, 55 % into step 3
        s = pb.stops
        pb.seek(s[2] + 0.55 * (s[3] - s[2]))
    elif where == "the end":
        pb.to_end()


@pytest.mark.parametrize("where", ["the start", "two steps (at a boundary)", "mid-step", "the end"])
@pytest.mark.parametrize("tab", ["ring", "buffers"])
def test_an_added_scene_reopens_at_the_picture_that_was_on_screen(qtbot, tmp_path, where, tab):
    w = make_window(qtbot, "all-gather", 8, size=SIZE)
    w.select_tab(tab)
    w.playback.pause()
    _go(w.playback, where)
    shown = _picture(w)
    w.deck.add_current_view("here")
    path = tmp_path / "here.json"
    assert w.deck.save(str(path))
    f = make_window(qtbot, size=SIZE)
    assert f.deck.open_deck(str(path)), f.deck.last_error
    assert f.current_tab() == tab
    again = _picture(f)
    assert again.shape == shown.shape
    assert np.array_equal(again, shown), f"{int((again != shown).any(axis=2).sum())} pixels differ"
    assert load_deck(str(path)).scenes[0].scenario["kind"] == "all-gather"


def test_the_presenter_thumbnail_of_a_saved_run_shows_the_run(qtbot, tmp_path):
    """Issue 26 item 4: the next scene's thumbnail, for a scene of a saved run (a student's broken
    ring at step 4), is that run's ring at that step, not its file's stand-in scenario."""
    from app.deck.presenter import THUMB, scene_thumbnail
    from app.views.ring.ring_view import RingView
    from test_deck_window import _runs_deck

    deck = load_deck(str(_runs_deck(tmp_path)))
    thumb = image_to_array(scene_thumbnail(deck, 1).toImage())
    w = make_window(qtbot, size=SIZE)
    assert w.deck.open_deck(str(tmp_path / "runs.json")) and w.deck.go(1)
    assert w.model.run.trace.collectives[0].algo == "my-ring"  # the window shows the run
    view = RingView(w.model, w.playback)  # the window's run at the scene's time, drawn at thumbnail size
    qtbot.addWidget(view)
    view.resize(*THUMB)
    view.show()
    view.ensure_laid_out()
    QApplication.processEvents()
    run_picture = image_to_array(view.grab().toImage())
    assert thumb.shape == run_picture.shape
    assert np.array_equal(thumb, run_picture), f"{int((thumb != run_picture).any(axis=2).sum())} pixels differ"


def _key(w, key):
    QTest.keyClick(QApplication.focusWidget() or w, key)
    for _ in range(3):
        QApplication.processEvents()


DIGITS = [getattr(Qt.Key, f"Key_{d}") for d in range(10)]


def _predicting(qtbot):
    """The lecture deck on its all-gather scene (8 GPUs), predict-then-reveal on, a question open."""
    w = make_window(qtbot, size=SIZE)
    assert w.deck.open_builtin() and w.deck.go(1)
    w.classroom.act_predict.trigger()
    predict = w.classroom.predict
    predict.animate = False  # reveal by jumping: deterministic
    predict.start()
    assert predict.q is not None and predict.q.n_choices <= 10
    return w, predict


def test_a_digit_answers_the_open_prediction_question_and_jumps_nowhere(qtbot):
    """Issue 26 item 3 with predict-then-reveal: the deck's scene-number keys and the question's
    answer keys are the same digits; Qt hands a press of a key two shortcuts share to one of them in
    turn, so every other answer was lost, or typed as a scene number."""
    w, predict = _predicting(qtbot)
    scene, answered = w.model.scenario, []
    for _ in range(4):  # four questions in a row, each answered right by its digit key
        q = predict.q
        right = min(q.answers)
        _key(w, DIGITS[right])
        assert predict.last is not None and predict.last[0] == q and predict.last[1] == right, (q, predict.last)
        answered.append(predict.last[2])
    assert answered == [True] * 4
    # a scene number typed while a question waits answers it and then Enter jumps nowhere
    for k in (DIGITS[1], DIGITS[2]):
        _key(w, k)
    _key(w, Qt.Key.Key_Return)
    assert w.deck.index == 1 and w.model.scenario == scene and w.current_tab() == "ring"


def test_with_no_question_open_a_number_and_enter_go_to_that_scene(qtbot):
    w, predict = _predicting(qtbot)
    w.playback.to_end()  # past the last question: predict mode on, nothing asked
    qtbot.waitUntil(lambda: predict.q is None)
    for k in (DIGITS[1], DIGITS[2], Qt.Key.Key_Return):
        _key(w, k)
    assert w.deck.index == 11 and w.current_tab() == "latency"  # scene 12, decode latency


def _threaded_window(qtbot):
    """A window whose scenarios build on the worker thread, as in the app (the tests' default is sync)."""
    from app.main_window import MainWindow
    from app.state import Scenario, ScenarioModel

    w = MainWindow(ScenarioModel(Scenario(kind="all-gather", n=4), sync=False))
    qtbot.addWidget(w)
    w.resize(*SIZE)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_a_scene_built_on_the_worker_thread_opens_at_its_step(qtbot):
    """In the app a scenario is built off the event loop: the scene used to seek its step on the
    old run's clock, and the new run then put it back at the start (every scene at t = 0, the
    walk's first press a no-op). It seeks once its run is there; the picture equals a sync render."""
    from app.deck.model import builtin_path
    from app.deck.scene_open import open_scene

    deck = load_deck(builtin_path())
    w = _threaded_window(qtbot)
    fresh = make_window(qtbot, size=SIZE)
    for i in (1, 4, 9):  # all-gather at step 1; all-reduce algorithms; the TP forward (its weights tab)
        open_scene(w, deck, i)
        assert w.model.busy  # building on the thread
        qtbot.waitUntil(lambda: not w.model.busy, timeout=60000)
        open_scene(fresh, deck, i)
        assert w.current_tab() == fresh.current_tab() == (deck.scenes[i].tab or fresh.current_tab())
        assert w.playback.t == fresh.playback.t > 0 or deck.scenes[i].step == 0
        a, b = _picture(w), _picture(fresh)
        assert np.array_equal(a, b), f"scene {i + 1}: {int((a != b).any(axis=2).sum())} pixels differ"


def test_the_handout_photographs_a_scene_once_the_worker_has_built_it(qtbot):
    from app.deck.handout import scene_pictures
    from app.deck.model import builtin_path
    from app.deck.scene_open import open_scene

    deck = load_deck(builtin_path())
    deck = deck.__class__(deck.title, deck.scenes[1:3], deck.folder)
    w = _threaded_window(qtbot)
    fresh = make_window(qtbot, size=SIZE)
    for i, scene, picture in scene_pictures(w, deck):
        open_scene(fresh, deck, i)
        a, b = image_to_array(picture), _picture(fresh)
        assert np.array_equal(a, b), f"page {i + 1}: {int((a != b).any(axis=2).sum())} pixels differ"


def test_a_clicker_press_while_the_next_scene_builds_counts_on_that_scene(qtbot):
    """Two quick PageDowns from scene 1 (not walked): the second came while scene 2 was still being
    built and stepped the old run's clock, and the build then threw that step away."""
    from app.deck.model import builtin_path
    from app.deck.scene_open import open_scene

    w = _threaded_window(qtbot)
    assert w.deck.open_builtin()
    qtbot.waitUntil(lambda: not w.model.busy, timeout=60000)
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    QTest.keyClick(w, Qt.Key.Key_PageDown)
    QTest.keyClick(w, Qt.Key.Key_PageDown)
    assert w.model.busy  # the second press came during the build
    qtbot.waitUntil(lambda: not w.model.busy, timeout=60000)
    fresh = make_window(qtbot, size=SIZE)
    open_scene(fresh, load_deck(builtin_path()), 1)
    fresh.playback.step_forward()  # scene 2, one press on
    assert w.deck.index == 1 and w.playback.t == fresh.playback.t
    a, b = _picture(w), _picture(fresh)
    assert np.array_equal(a, b), f"{int((a != b).any(axis=2).sum())} pixels differ"


def test_after_the_decode_tab_the_outline_is_in_front_again(qtbot):
    """Scene 12 shows the Decode tab, which hides the left column; scene 13 brings it back with the
    scenario dock in front of the outline (at 1280x720, the list of scenes was gone)."""
    w = _threaded_window(qtbot)
    for i, tab in ((11, "latency"), (12, "ring")):
        assert w.deck.open_builtin() if i == 11 else True
        assert w.deck.go(i)
        qtbot.waitUntil(lambda: not w.model.busy, timeout=60000)
        assert w.current_tab() == tab
    QApplication.processEvents()
    # a tabbed dock that is not in front is moved out of the window
    assert w.rect().intersects(w.deck.dock.geometry()), w.deck.dock.geometry()
    assert not w.rect().intersects(w.controls_dock.geometry()), w.controls_dock.geometry()


@pytest.mark.parametrize("lang, i", [("en", 13), ("zh", 9)])
def test_the_outline_shows_the_scene_on_screen_without_a_sideways_scroll_bar(qtbot, lang, i):
    """At 1280x720 the scene list is ~280 px wide: its long titles made a horizontal scroll bar that
    cut them all at the edge; scene 14 was below the list's view while it was on screen; and scene
    10's four Chinese talking points squeezed the list to four rows, scrolled to the top."""
    w = make_window(qtbot, size=SIZE)
    w.classroom.set_language(lang)
    assert w.deck.open_builtin() and w.deck.go(i)
    lst = w.deck.outline.list

    def in_view():
        vp, cur = lst.viewport().rect(), lst.visualItemRect(lst.item(i))
        return cur.height() > 0 and 0 <= cur.top() and cur.bottom() <= vp.bottom()

    # scrolled to the scene where the list is too short to show it from the top (on a loaded machine the
    # dock's height may settle after the scroll: the row must end up in view, whatever the scroll it took)
    qtbot.waitUntil(in_view, timeout=15000)
    QApplication.processEvents()
    assert not lst.horizontalScrollBar().isVisible()
    vp = lst.viewport().rect()
    cur = lst.visualItemRect(lst.item(i))
    assert 0 <= cur.top() and cur.bottom() <= vp.bottom(), (vp, cur)  # the current scene's row is in view
    assert vp.height() >= 5 * cur.height()  # and some rows around it
    assert lst.textElideMode() == Qt.TextElideMode.ElideRight
    for k in range(lst.count()):  # a title cut short by "…" is whole in its tooltip
        assert lst.item(k).toolTip() == lst.item(k).text()
    # the talking points are all there to read: in view, or a scroll away (not cut off)
    area, points = w.deck.outline.points_area, w.deck.outline.points
    assert points.height() >= points.heightForWidth(points.width()) - 1
    assert area.verticalScrollBar().maximum() >= points.height() - area.viewport().height()


def test_the_presenter_thumbnail_of_a_weight_slices_scene_shows_the_weight_slices(qtbot):
    """The next scene's thumbnail was always a ring: scene 10 (the TP forward's weight slices) and
    scene 12 (decode latency) were announced with a picture the class would not see."""
    from PySide6.QtCore import Qt as _Qt

    from app.deck.model import builtin_path
    from app.deck.presenter import TAB_ROOM, THUMB, scene_thumbnail
    from app.tabs import settle_layouts
    from app.views.weights.weights_view import WeightsView

    deck = load_deck(builtin_path())
    i = [s.id for s in deck.scenes].index("tp-forward")
    assert deck.scenes[i].tab == "weights"
    thumb = image_to_array(scene_thumbnail(deck, i).toImage())
    w = make_window(qtbot, size=SIZE)
    assert w.deck.open_builtin() and w.deck.go(i) and w.current_tab() == "weights"
    view = WeightsView(w.model, w.playback)  # the window's weight slices, in the thumbnail's room
    qtbot.addWidget(view)
    view.resize(*TAB_ROOM)
    view.show()
    settle_layouts(view)
    QApplication.processEvents()
    want = view.grab().scaled(*THUMB, _Qt.AspectRatioMode.KeepAspectRatio, _Qt.TransformationMode.SmoothTransformation)
    want = image_to_array(want.toImage())
    assert thumb.shape == want.shape
    assert np.array_equal(thumb, want), f"{int((thumb != want).any(axis=2).sum())} pixels differ"


def _tabless_deck(tmp_path):
    """A hand-written deck whose scenes name no "tab": a TP forward (its scenario opens on the weight
    slices), decode (the decode latency) and an all-gather, after a scene on the Buffers tab."""
    import json

    def scene(sid, kind, tab=None, **extra):
        s = {"id": sid, "title": {"en": sid, "zh": sid}, "points": [{"en": sid, "zh": sid}] * 2,
             "scenario": {"kind": kind, "n": 4, "algo": "ring", "nbytes": 1 << 20, "link": "nvlink4", **extra}}
        if tab:
            s["tab"] = tab
        return s

    path = tmp_path / "tabless.json"
    path.write_text(json.dumps({"schema": "shard-lab-deck", "version": 1, "title": {"en": "t", "zh": "t"},
                                "scenes": [scene("buffers", "all-gather", "buffers"), scene("forward", "tp-forward"),
                                           scene("decode", "decode"), scene("gather", "all-gather")]}))
    return path


@pytest.mark.parametrize("i, tab", [(1, "weights"), (2, "latency"), (3, "ring")])
def test_a_scene_without_a_tab_has_the_thumbnail_of_the_view_it_opens_at(qtbot, tmp_path, i, tab):
    """A deck scene with no "tab" was announced by a ring thumbnail whatever it opened at: the TP
    forward on the weight slices, decode on the latency plot (whose thumbnail also showed its two
    plots stacked: it goes to tabs below 760 px once the event loop runs). And an all-gather without
    a tab stayed on the tab the scene before left (here the decode latency), so no thumbnail could
    know its picture: it opens at the ring, as the scenario does in a new window. The thumbnail is
    the view the window shows after the deck walked there, drawn as the presenter draws it."""
    from PySide6.QtCore import Qt as _Qt

    from app.deck.presenter import TAB_ROOM, THUMB, scene_thumbnail, tab_view
    from app.tabs import settle_layouts

    deck = load_deck(str(_tabless_deck(tmp_path)))
    assert deck.scenes[i].tab == ""
    thumb = image_to_array(scene_thumbnail(deck, i).toImage())
    w = make_window(qtbot, size=SIZE)
    assert w.deck.open_deck(str(tmp_path / "tabless.json")) and w.current_tab() == "buffers"
    for k in range(1, i + 1):  # PageDown from the first scene, as the lecturer walks it
        assert w.deck.go(k)
    assert w.current_tab() == tab
    view = tab_view(tab, w.model, w.playback)  # the window's view of that tab, in the thumbnail's room
    qtbot.addWidget(view)
    view.resize(*(THUMB if tab == "ring" else TAB_ROOM))
    view.show()
    if tab == "ring":
        view.ensure_laid_out()
    else:
        settle_layouts(view)
    QApplication.processEvents()
    want = view.grab()
    if tab != "ring":
        want = want.scaled(*THUMB, _Qt.AspectRatioMode.KeepAspectRatio, _Qt.TransformationMode.SmoothTransformation)
    want = image_to_array(want.toImage())
    assert thumb.shape == want.shape
    differ = (np.abs(thumb.astype(int) - want.astype(int)) > 8).any(axis=2)
    assert differ.mean() < 0.01, f"{int(differ.sum())} pixels differ"


def test_the_thumbnail_of_a_matmul_scene_has_the_matmul_panel_beside_the_ring(qtbot):
    """Scene 7 (case 2) opens on the Ring tab with the matmul panel beside the ring; its thumbnail
    was the ring alone. It is the window's ring page (panel and ring), drawn in the thumbnail's
    room as another tab is, and scaled."""
    from PySide6.QtCore import Qt as _Qt

    from app.deck.model import builtin_path
    from app.deck.presenter import TAB_ROOM, THUMB, scene_thumbnail
    from app.tabs import settle_layouts
    from app.views.ring.ring_page import RingPage

    deck = load_deck(builtin_path())
    i = [s.id for s in deck.scenes].index("matmul-2")
    thumb = image_to_array(scene_thumbnail(deck, i).toImage())
    w = make_window(qtbot, size=SIZE)
    assert w.deck.open_builtin() and w.deck.go(i) and w.current_tab() == "ring"
    assert w.ring_page.matmul.isVisible()
    page = RingPage(w.model, w.playback)  # the window's ring tab, in the thumbnail's room
    qtbot.addWidget(page)
    page.resize(*TAB_ROOM)
    page.show()
    settle_layouts(page)
    page.ring.ensure_laid_out()
    QApplication.processEvents()
    want = page.grab().scaled(*THUMB, _Qt.AspectRatioMode.KeepAspectRatio, _Qt.TransformationMode.SmoothTransformation)
    want = image_to_array(want.toImage())
    assert thumb.shape == want.shape
    differ = (np.abs(thumb.astype(int) - want.astype(int)) > 8).any(axis=2)
    assert differ.mean() < 0.01, f"{int(differ.sum())} pixels differ"
    # the panel is there: its left two fifths hold the matrices' device colours
    left = thumb[:, : THUMB[0] * 2 // 5]
    assert (np.ptp(left.astype(int), axis=2) > 60).mean() > 0.05
