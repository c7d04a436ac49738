"""The handout as a lecturer exports it from the window (File › Export handout): the live window, which
the class may be watching, does not go through the scenes; the decode page shows the plot, not the
control column's widgets; the pages' footers count the pages printed, not the scenes skipped."""

import json

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QCoreApplication  # noqa: E402
from PySide6.QtWidgets import QFileDialog  # noqa: E402

from app.classroom.export import image_to_array  # noqa: E402
from app.deck.model import Deck, builtin_path  # noqa: E402
from app.deck.scene_open import load_deck, open_scene  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")
SIZE = (1600, 900)


def _deck_with_a_bad_scene(tmp_path):
    doc = json.load(open(builtin_path(), encoding="utf-8"))
    doc["scenes"] = doc["scenes"][:4]
    doc["scenes"][1]["scenario"]["n"] = 7  # 1 MiB does not split into 7 chunks
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_exporting_the_handout_leaves_the_live_window_on_its_scene(qtbot, tmp_path, monkeypatch):
    w = make_window(qtbot, size=SIZE)
    assert w.deck.open_deck(str(_deck_with_a_bad_scene(tmp_path)))
    w.deck.go(2)
    before = (w.model.scenario, w.playback.t, w.current_tab())
    seen = []
    w.model.building.connect(lambda sc: seen.append(("built", sc)))
    w.model.changed.connect(lambda run: seen.append(("scenario", run.scenario)))
    w.tabs.currentChanged.connect(lambda i: seen.append(("tab", i)))
    w.deck.scene_changed.connect(lambda i: seen.append(("scene", i)))
    out = tmp_path / "h.pdf"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "PDF, A4 (*.pdf)")))
    w.deck.act_handout.trigger()
    QCoreApplication.processEvents()
    assert out.exists() and out.stat().st_size > 10000
    assert not seen, f"the live window went through the scenes: {seen[:5]}"
    assert (w.model.scenario, w.playback.t, w.current_tab()) == before and w.deck.index == 2
    assert "Skipped" in w.deck.last_error or "Scene 2" in w.statusBar().currentMessage()


def test_the_handout_footers_count_the_pages_printed(qtbot, tmp_path, monkeypatch):
    from app.deck import handout

    pages = []
    paint = handout.paint_page
    monkeypatch.setattr(handout, "paint_page", lambda p, r, deck, i, scene, pic, lang, page=None: (
        pages.append((i, page)), paint(p, r, deck, i, scene, pic, lang, page)))
    w = make_window(qtbot, size=SIZE)
    deck = load_deck(str(_deck_with_a_bad_scene(tmp_path)))
    paths, skipped = handout.export_pngs(w, deck, str(tmp_path / "pngs"), "en")
    assert len(paths) == 3 and len(skipped) == 1 and "Scene 2" in skipped[0]
    assert pages == [(0, (1, 3)), (2, (2, 3)), (3, (3, 3))]  # scene 2 skipped: 3 pages, not "4/4"


def test_the_handout_decode_page_shows_the_plot_not_the_control_column(qtbot):
    from app.deck.handout import scene_pictures

    lecture = load_deck(builtin_path())
    i = [s.id for s in lecture.scenes].index("decode")
    deck = Deck(lecture.title, (lecture.scenes[i],), lecture.folder)
    w = make_window(qtbot, size=SIZE)
    (_, scene, picture), = list(scene_pictures(w, deck))
    assert scene is not None
    fresh = make_window(qtbot, size=SIZE)
    open_scene(fresh, deck, 0)
    view = fresh.view("latency")
    QCoreApplication.processEvents()
    with_controls = image_to_array(fresh.tabs.currentWidget().grab().toImage())
    view.set_presenting(True)
    for _ in range(2):
        QCoreApplication.processEvents()
    assert not view.controls.isVisible()
    plot_only = image_to_array(fresh.tabs.currentWidget().grab().toImage())
    got = image_to_array(picture)
    assert got.shape == plot_only.shape
    assert np.array_equal(got, plot_only)
    assert not np.array_equal(got, with_controls)
