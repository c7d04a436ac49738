"""
Presentation mode's explanation column (README: "menus and docks hidden but a narrow explanation
column"). Before, the column's first fit ran before the window had hidden its menu bar, read a
page 88 px short of where it would settle, and hid the column for good — on every screen. Now,
on a real full screen of each size (a process per screen: the offscreen platform takes its size
at start-up): the column is there wherever presentation_plan gives it one, beside the picture,
as wide as the plan says, with the step's explanation in the story's large type; it follows the
language and the text size (Ctrl+= larger words, the column kept while it has room, back after
Ctrl+− when a size hid it), and the picture keeps its 60 %.
"""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("pytestqt")

from screen_process import run_on_screen  # noqa: E402

SCRIPT = textwrap.dedent("""
    import json, os
    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from app import i18n, theme, worker
    from app.classroom.presentation import apply_look, presentation_plan
    from app.main_window import MainWindow
    from app.state import Scenario, ScenarioModel
    worker.set_sync_default(True)
    i18n.set_language(app, "en")
    apply_look(app)
    w = MainWindow(ScenarioModel(Scenario(kind="all-reduce", n=8)))
    w.resize(1000, 600)
    w.show(); w.activateWindow(); QTest.qWait(50)
    w.playback.seek_step(3)
    p = w.classroom.presentation

    def settle():
        for _ in range(6):
            app.processEvents()
        QTest.qWait(20)

    def column(tag):
        story, page = w.explain_dock, w.tabs.currentWidget()
        top = page.mapTo(w, QPoint(0, 0))
        plan = presentation_plan(w.width(), w.height(), theme.scale(), top.y(),
                                 w.style().pixelMetric(w.style().PixelMetric.PM_DockWidgetSeparatorExtent) + 2)
        body = w.explain.body
        s = {"scale": theme.scale(), "shown": story.isVisible(), "plan_w": plan.story_w,
             "story": [story.x(), story.y(), story.width(), story.height()],
             "page": [top.x(), top.y(), page.width(), page.height()], "window": [w.width(), w.height()],
             "font_px": body.font().pixelSize(), "text": body.toPlainText()[:400]}
        w.grab().save(os.path.join(os.environ["SHOTS"], tag + ".png"))
        return s

    out = {}
    p.act_presentation.trigger()  # F11, as the menu sends it
    settle()
    out["en"] = column("en")
    w.classroom.set_language("zh")
    settle()
    out["zh"] = column("zh")
    w.classroom.set_language("en")
    p.zoom_in(); settle()
    out["larger"] = column("larger")
    for _ in range(4):
        p.zoom_in(); settle()
    out["largest"] = column("largest")
    for _ in range(5):
        p.zoom_out(); settle()
    out["back"] = column("back")
    p.act_presentation.trigger(); settle()
    out["desk"] = {"shown": w.explain_dock.isVisible(), "scale": theme.scale()}
    print("RESULT " + json.dumps(out))
""")

SCREENS = ((1920, 1080), (1600, 900), (1280, 720))


@pytest.fixture(scope="module", params=SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def presented(request, tmp_path_factory):
    import os

    W, H = request.param
    tmp = tmp_path_factory.mktemp(f"explain{W}")
    os.environ["SHOTS"] = str(tmp)
    out = run_on_screen(tmp, W, H, SCRIPT)
    out["screen"] = (W, H)
    return out


def test_the_column_is_beside_the_picture_where_the_plan_gives_it_room(presented):
    W, H = presented["screen"]
    for key in ("en", "zh", "larger", "back"):
        s = presented[key]
        assert s["window"] == [W, H]  # full screen
        if s["plan_w"] == 0:  # no room at this screen and size: the picture takes it all
            assert not s["shown"], (key, s)
            continue
        assert s["shown"], (key, s)
        sx, sy, sw, sh = s["story"]
        px, py, pw, ph = s["page"]
        assert sx >= px + pw and abs(sw - s["plan_w"]) <= 2, (key, s)  # beside the picture, as wide as planned
        assert pw * ph >= 0.60 * W * H, (key, pw * ph / (W * H))  # the picture keeps its share
    # shown at F11's 1.5× on every screen: at 1280×720 too, the small projector (it was hidden there, 231 px
    # of room under its least of 240)
    assert presented["en"]["shown"] and presented["zh"]["shown"]
    if W == 1280:
        assert presented["en"]["scale"] == 1.5 and presented["en"]["story"][2] >= 210


def test_the_column_shows_the_steps_explanation_in_large_type_and_follows_language_and_size(presented):
    en, zh, larger = presented["en"], presented["zh"], presented["larger"]
    if not en["shown"]:
        pytest.skip("no column at 1.5× on this screen (see the test above)")
    assert "Step 3 of 14" in en["text"] and "GPU" in en["text"]
    assert "第 3 / 14 步" in zh["text"]
    assert en["font_px"] >= 30  # the story's type at 1.5×: 22 px × 1.5, readable from the back row
    assert larger["scale"] > en["scale"]
    if larger["shown"]:
        assert larger["font_px"] > en["font_px"]


def test_a_size_that_hid_the_column_brings_it_back_when_undone(presented):
    largest, back, desk = presented["largest"], presented["back"], presented["desk"]
    assert largest["scale"] >= 2.5 and not largest["shown"]  # at 2.5× and up no column is worth its room
    assert back["scale"] == presented["en"]["scale"] and back["shown"] == presented["en"]["shown"]
    assert desk["shown"]  # Esc / F11 gives the desk its story back


def test_at_1280x720_the_column_is_there_at_1x(tmp_path):
    """The small projector at the desk's size: a 231 px column beside the picture (its least is 140 px at 1×)."""
    script = SCRIPT.replace("p.act_presentation.trigger()  # F11",
                            "p.presentation_scale = 1.0; p.act_presentation.trigger()  # F11")
    import os

    os.environ["SHOTS"] = str(tmp_path)
    out = run_on_screen(tmp_path, 1280, 720, script)
    s = out["en"]
    assert s["scale"] == 1.0 and s["shown"] and s["plan_w"] >= 140, s
    assert s["story"][0] >= s["page"][0] + s["page"][2]
    assert "Step 3 of 14" in s["text"]
