"""The deck in a shown window: a clicker's keys walk the built-in deck and back, each scene's picture
is a fresh render of that scene, F5 / B / W / number+Enter / Home / End / Esc, a deck with a scene
that cannot open, and the handout (one page per scene, rendered back: the scenes' pictures)."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QRect, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.classroom.export import image_to_array  # noqa: E402
from app.deck.model import builtin_path  # noqa: E402
from app.deck.scene_open import load_deck, open_scene, scene_time  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")
SIZE = (1280, 720)
# the walk's window: at 1280×720 the matmul scenes' timeline widens the window's minimum to 1328 px
# (not the deck's doing), and the docks never give that back
WALK_SIZE = (1600, 900)


def _picture(w):
    QApplication.processEvents()
    return image_to_array(w.tabs.currentWidget().grab().toImage())


def _key(w, key, mod=Qt.KeyboardModifier.NoModifier):
    """A key as the keyboard sends it: to the focus widget of the (active) window."""
    QTest.keyClick(QApplication.focusWidget() or w, key, mod)
    QApplication.processEvents()


def _fresh(qtbot, deck, i):
    """A window of its own, opened on scene i only."""
    f = make_window(qtbot, size=SIZE)
    open_scene(f, deck, i)
    return f


def test_clicker_keys_walk_the_lecture_deck_and_back(qtbot):
    w = make_window(qtbot, size=WALK_SIZE)
    ctl = w.deck
    assert ctl.open_builtin() and ctl.index == 0 and w.deck.dock.isVisible()
    deck = ctl.deck
    first = _picture(w)
    fresh = make_window(qtbot, size=WALK_SIZE)  # the same scene opened in a window that saw nothing else
    seen, pages = [0], 0
    open_scene(fresh, deck, 0)
    assert np.array_equal(first, _picture(fresh))
    w.activateWindow()  # the clicker's keys go to the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    while pages < 400:
        before = ctl.index
        _key(w, Qt.Key.Key_PageDown)
        pages += 1
        if ctl.index == before and w.playback.at_end and before == len(deck.scenes) - 1:
            break
        if ctl.index != before:
            assert ctl.index == before + 1  # scenes in order, none skipped
            seen.append(ctl.index)
            open_scene(fresh, deck, ctl.index)
            assert np.array_equal(_picture(w), _picture(fresh)), f"scene {ctl.index + 1} differs from a fresh render"
            assert w.current_tab() == (deck.scenes[ctl.index].tab or w.current_tab())
    assert seen == list(range(len(deck.scenes)))
    # walked scenes went through their steps: more key presses than scenes
    assert pages > len(deck.scenes) + 5
    for _ in range(pages + 5):  # the clicker's back button all the way
        _key(w, Qt.Key.Key_PageUp)
    assert ctl.index == 0
    assert np.array_equal(_picture(w), first)


def test_arrows_and_space_belong_to_the_deck_only_while_it_is_open(qtbot):
    w = make_window(qtbot, "all-gather", 8, size=SIZE)
    _key(w, Qt.Key.Key_Right)
    assert w.playback.step_index == 1  # the window's step, as before
    w.deck.open_builtin()
    assert w.deck.index == 0
    _key(w, Qt.Key.Key_Space)  # scene 1 is not walked: Space goes on to scene 2
    assert w.deck.index == 1 and not w.playback.playing
    _key(w, Qt.Key.Key_Right)
    assert w.deck.index == 1 and w.playback.step_index == 1
    _key(w, Qt.Key.Key_End)
    assert w.deck.index == len(w.deck.deck.scenes) - 1
    _key(w, Qt.Key.Key_Home)
    assert w.deck.index == 0
    for k in (Qt.Key.Key_1, Qt.Key.Key_2):
        _key(w, k)
    _key(w, Qt.Key.Key_Return)
    assert w.deck.index == 11 and w.current_tab() == "latency"
    _key(w, Qt.Key.Key_Home)  # back to a ring scene: on the Decode tab Play belongs to no animation
    w.deck.close_deck()
    _key(w, Qt.Key.Key_Space)
    assert w.playback.playing  # Space plays again
    w.playback.pause()


def test_f5_presents_from_the_first_scene_and_b_w_blank_the_screen(qtbot):
    w = make_window(qtbot, size=SIZE)
    w.deck.open_builtin()
    w.deck.go(3)
    _key(w, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
    p = w.classroom.presentation
    assert p.presenting and w.deck.index == 3 and not w.deck.dock.isVisible()
    _key(w, Qt.Key.Key_Escape)
    assert not p.presenting
    _key(w, Qt.Key.Key_F5)
    assert p.presenting and w.deck.index == 0
    _key(w, Qt.Key.Key_B)
    assert w.deck.blank.isVisible()
    img = image_to_array(w.grab().toImage())
    assert (img < 10).mean() > 0.99  # black
    _key(w, Qt.Key.Key_B)
    assert not w.deck.blank.isVisible()
    _key(w, Qt.Key.Key_W)
    img = image_to_array(w.grab().toImage())
    assert (img > 245).mean() > 0.99  # white
    _key(w, Qt.Key.Key_PageDown)  # any key brings the picture back, and only that
    assert not w.deck.blank.isVisible() and w.deck.index == 0
    _key(w, Qt.Key.Key_Escape)
    assert not p.presenting
    # ? lists the deck's keys
    from app.classroom.presentation import collect_shortcuts

    texts = {e["text"]: [k.toString() for k in e["keys"]] for e in collect_shortcuts(w)}
    assert "PgDown" in texts["Next step or scene"] and "F5" in texts["Present the deck from the first scene"]
    assert "B" in texts["Black screen"] and "W" in texts["White screen"]


def _deck_with_a_bad_scene(tmp_path):
    doc = json.load(open(builtin_path(), encoding="utf-8"))
    doc["scenes"] = doc["scenes"][:4]
    doc["scenes"][1]["scenario"]["n"] = 7  # 1 MiB does not split into 7 chunks
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_scene_that_cannot_open_is_named_and_skipped(qtbot, tmp_path):
    w = make_window(qtbot, size=SIZE)
    assert w.deck.open_deck(str(_deck_with_a_bad_scene(tmp_path)))
    assert list(w.deck.bad) == [1] and "Scene 2 (All-gather on a ring)" in w.deck.bad[1]
    _key(w, Qt.Key.Key_PageDown)
    assert w.deck.index == 2  # scene 2 skipped
    _key(w, Qt.Key.Key_PageUp)
    assert w.deck.index == 0


def test_a_hostile_deck_is_refused_and_nothing_changes(qtbot, tmp_path):
    w = make_window(qtbot, size=SIZE)
    w.deck.open_builtin()
    w.deck.go(2)
    sc, t = w.model.scenario, w.playback.t
    bad = tmp_path / "evil.json"
    bad.write_text('{"schema": "shard-lab-deck", "version": 1, "scenes": "' + "A" * 100 + '"}')
    assert not w.deck.open_deck(str(bad))
    assert "evil.json" in w.deck.last_error and "\n" not in w.deck.last_error
    assert w.model.scenario == sc and w.playback.t == t and w.deck.index == 2


def test_add_the_current_view_and_save_a_deck(qtbot, tmp_path):
    w = make_window(qtbot, "all-reduce", 8, size=SIZE)
    w.playback.seek_step(3)
    w.deck.add_current_view("Ring all-reduce")
    w.model.update(kind="reduce-scatter")
    w.deck.add_current_view()
    path = tmp_path / "mine.json"
    assert w.deck.save(str(path))
    deck = load_deck(str(path))
    assert [s.title.en for s in deck.scenes] == ["Ring all-reduce", "reduce-scatter, n = 8"]
    assert deck.scenes[0].scenario["kind"] == "all-reduce" and deck.scenes[0].step == 3


def _pdf_pages(path, tmp_path, prefix):
    subprocess.run(["pdftoppm", "-png", "-r", "40", str(path), str(tmp_path / prefix)], check=True)
    return sorted(tmp_path.glob(f"{prefix}*.png"))


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="pdftoppm (poppler-utils) is not installed")
def test_the_handout_has_one_page_per_scene_showing_its_picture(qtbot, tmp_path):
    from PIL import Image

    from app.deck.handout import export_handout

    w = make_window(qtbot, size=(1600, 900))
    deck = load_deck(str(_deck_with_a_bad_scene(tmp_path)))
    skipped = export_handout(w, deck, str(tmp_path / "h.pdf"), "en", "letter")
    assert len(skipped) == 1 and "Scene 2" in skipped[0]
    pages = _pdf_pages(tmp_path / "h.pdf", tmp_path, "p")
    assert len(pages) == 3
    pics = []
    for p in pages:
        a = np.asarray(Image.open(p).convert("RGB")).astype(int)
        h = a.shape[0]
        mid = a[int(0.12 * h):int(0.7 * h)]  # the picture's band, between the title and the points
        coloured = (np.ptp(mid, axis=2) > 60).mean()  # chunk colours, not grey text
        inked = (mid.sum(axis=2) < 600).mean()
        assert coloured > 0.002 and inked > 0.03, f"{p.name}: no picture ({coloured:.4f}, {inked:.3f})"
        pics.append(mid)
    assert not np.array_equal(pics[0], pics[1])  # different scenes, different pictures


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="pdftoppm (poppler-utils) is not installed")
def test_the_shell_writes_the_lecture_handout_in_chinese(tmp_path):
    out = subprocess.run([sys.executable, "-m", "app", "--deck", "lecture", "--lang", "zh", "--export-pdf",
                          str(tmp_path / "handout.pdf")], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen",
                              "SHARD_LAB_SETTINGS": str(tmp_path / "s.ini")})
    assert out.returncode == 0, out.stderr
    assert len(_pdf_pages(tmp_path / "handout.pdf", tmp_path, "z")) == 15
    txt = subprocess.run(["pdftotext", str(tmp_path / "handout.pdf"), "-"], capture_output=True, text=True).stdout
    assert "环上的 all-gather" in txt
    bad = subprocess.run([sys.executable, "-m", "app", "--deck", str(tmp_path / "handout.pdf")],
                         capture_output=True, text=True, timeout=60,
                         env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_the_presenter_view_follows_the_deck(qtbot):
    w = make_window(qtbot, size=SIZE)
    w.deck.open_builtin()
    pv = w.deck.show_presenter()
    qtbot.addWidget(pv)
    deck = w.deck.deck
    assert deck.scenes[0].points[0].en[:30] in pv.points.text()
    assert pv.next_title.text().endswith(deck.scenes[1].title.en)
    thumb = image_to_array(pv.next_thumb.pixmap().toImage())
    assert thumb.shape[:2] == (270, 480) and (np.ptp(thumb, axis=2) > 60).mean() > 0.005  # the next ring, coloured
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    _key(w, Qt.Key.Key_End)
    assert deck.scenes[-1].title.en in pv.now.text() and "end" in pv.next_title.text()
    assert pv.elapsed_text() == "00:00" or pv.elapsed_text().startswith("00:")


def test_a_deck_file_given_as_file_opens_as_a_deck_and_exports_numbered_pngs(tmp_path):
    import os

    from PIL import Image

    deck = tmp_path / "mine.json"
    doc = json.load(open(builtin_path(), encoding="utf-8"))
    doc["scenes"] = doc["scenes"][1:3]
    deck.write_text(json.dumps(doc), encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "SHARD_LAB_SETTINGS": str(tmp_path / "s.ini")}
    shot = subprocess.run([sys.executable, "-m", "app", str(deck), "--screenshot", str(tmp_path / "x.png")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert shot.returncode == 0, shot.stderr
    pngs = subprocess.run([sys.executable, "-m", "app", str(deck), "--export-pngs", str(tmp_path / "pages")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert pngs.returncode == 0, pngs.stderr
    names = sorted(os.listdir(tmp_path / "pages"))
    assert names == ["01-all-gather-on-a-ring.png", "02-reduce-scatter-on-a-ring.png"]
    a = np.asarray(Image.open(tmp_path / "pages" / names[0]).convert("RGB")).astype(int)
    assert (np.ptp(a, axis=2) > 60).mean() > 0.005  # the ring's chunk colours
    no = subprocess.run([sys.executable, "-m", "app", "--export-pdf", str(tmp_path / "h.pdf")],
                        capture_output=True, text=True, timeout=60, env=env)
    assert no.returncode == 2 and "deck" in no.stderr


def test_a_refused_deck_is_named_in_the_app_language(qtbot, tmp_path, qapp):
    from app import i18n

    w = make_window(qtbot, size=SIZE)
    bad = tmp_path / "x.json"
    bad.write_text('{"schema": "shard-lab-deck", "version": 9, "scenes": []}', encoding="utf-8")
    i18n.set_language(qapp, "zh")
    assert not w.deck.open_deck(str(bad))
    assert w.deck.last_error == "x.json: 不支持第 9 版讲稿文件：此 Shard Lab 读取第 1 版。"


def _runs_deck(tmp_path):
    """A deck of a scenario, a student's saved run (my-ring, at step 4) and a run that is not there."""
    from simcore.comm_sim import Comm, switch
    from test_checker import broken_ring_allreduce

    (tmp_path / "runs").mkdir()
    comm = Comm(switch(4))
    broken_ring_allreduce(comm, [np.arange(16.0)] * 4)
    comm.trace.save(tmp_path / "runs" / "broken.json.gz")
    pts = [{"en": "a", "zh": "甲"}, {"en": "b", "zh": "乙"}]
    sc = {"kind": "all-gather", "n": 4, "algo": "ring", "nbytes": 1024, "link": "nvlink4"}
    doc = {"schema": "shard-lab-deck", "version": 1, "scenes": [
        {"title": {"en": "Ring"}, "points": pts, "scenario": dict(sc, kind="all-gather")},
        {"title": {"en": "A student's ring"}, "points": pts, "run": "runs/broken.json.gz", "step": 4},
        {"title": {"en": "Gone"}, "points": pts, "run": "runs/gone.json"},
        {"title": {"en": "After"}, "points": pts, "scenario": dict(sc, kind="reduce-scatter")}]}
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_scene_of_a_saved_run_opens_at_its_step_and_a_missing_run_is_named_and_skipped(qtbot, tmp_path):
    from panel_text import shown_text

    w = make_window(qtbot, size=SIZE)
    assert w.deck.open_deck(str(_runs_deck(tmp_path)))
    assert list(w.deck.bad) == [2] and "Scene 3 (Gone)" in w.deck.bad[2] and "runs/gone.json" in w.deck.bad[2]
    assert w.deck.go(1)
    run = w.model.run
    assert run.opened.name == "broken.json.gz" and run.trace.collectives[0].algo == "my-ring"
    assert w.playback.t == pytest.approx(scene_time(w.playback.stops, 4)) and w.playback.step_index == 3
    assert w.ring_view.title_text.startswith("all-reduce · my-ring (your algorithm)")
    assert "✗ Checked: all-reduce is wrong." in shown_text(w.explain)
    fresh = make_window(qtbot, size=SIZE)  # the scene's picture is the run's, as a fresh window opens it
    open_scene(fresh, load_deck(str(tmp_path / "runs.json")), 1)
    assert np.array_equal(_picture(w), _picture(fresh))
    w.deck.go(2)  # the missing run is skipped: the next good scene
    assert w.deck.index == 3 and w.model.scenario.kind == "reduce-scatter"


def test_add_the_current_view_of_an_opened_run_writes_a_run_scene(qtbot, tmp_path):
    path = _runs_deck(tmp_path)
    w = make_window(qtbot, size=SIZE)
    assert w.classroom.open_scenario(str(tmp_path / "runs" / "broken.json.gz"))
    w.playback.seek_step(5)
    scene = w.deck.add_current_view()
    assert scene.run == str(tmp_path / "runs" / "broken.json.gz") and scene.scenario is None
    assert scene.title.en == "all-reduce · my-ring (broken.json.gz)"
    saved = tmp_path / "mine.json"
    assert w.deck.save(str(saved))
    doc = json.loads(saved.read_text())
    assert doc["scenes"][0]["run"] == "runs/broken.json.gz" and doc["scenes"][0]["step"] == 5
    other = make_window(qtbot, size=SIZE)
    assert other.deck.open_deck(str(saved)) and not other.deck.bad
    assert other.model.run.opened.name == "broken.json.gz"
    assert doc["scenes"][0]["at"] == 1  # the boundary ending step 5, where seek_step(5) left it
    assert other.playback.t == pytest.approx(w.playback.t)  # the run where it was, not a step on
    assert path.exists()


def test_a_missing_run_is_named_in_chinese_and_the_run_scene_titled_in_chinese(qtbot, tmp_path, qapp):
    from app.i18n import set_language

    w = make_window(qtbot, size=SIZE)
    try:
        set_language(qapp, "zh")
        assert w.deck.open_deck(str(_runs_deck(tmp_path)))
        assert "讲稿旁边没有保存的运行 runs/gone.json" in w.deck.bad[2]
        assert w.deck.go(1)
        assert w.ring_view.title_text.startswith("all-reduce · my-ring（你的算法）")
    finally:
        set_language(qapp, "en")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_presenter_view_shows_all_the_talking_points_at_any_text_scale(qtbot, lang):
    """The presenter view's words were the audience's text scale × 1.4: at 2.5× (63 px) scene 10
    showed its first talking point only, cut mid-line. At 1280x720 and 2.5×, every scene's title
    and talking points are whole in their labels (the words smaller, not cut), and no smaller than
    needed: at 1× they are the 25 px they always were."""
    from app import theme

    w = make_window(qtbot, size=SIZE)
    w.classroom.set_language(lang)
    w.deck.open_builtin()
    pv = w.deck.show_presenter()
    qtbot.addWidget(pv)
    pv.resize(*SIZE)
    assert pv.points.font().pixelSize() == 25
    theme.set_scale(2.5)
    for i in range(len(w.deck.deck.scenes)):
        assert w.deck.go(i)
        QApplication.processEvents()
        for label in (pv.now, pv.points):
            assert label.heightForWidth(label.width()) <= label.height(), (i + 1, label.objectName())
            assert pv.rect().contains(QRect(label.mapTo(pv, QPoint(0, 0)), label.size())), (i + 1, label.objectName())
        assert pv.points.font().pixelSize() >= 14
