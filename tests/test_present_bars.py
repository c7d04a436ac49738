"""Presenting the lecture deck (F5) and pressing Ctrl+= three times (2.5×) on a 1280×720 and a
1920×1080 screen: the toolbar and tab bar stay at their 1× height, so the picture keeps its room.
Before, they grew with the text and took 160 px of the 720 (picture 63 %).
Each screen is its own process: the offscreen platform takes its screen size at start-up."""

import textwrap

import pytest

from screen_process import run_on_screen

pytest.importorskip("pytestqt")


SCRIPT = textwrap.dedent("""
    import json
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QKeySequence
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from app import i18n, theme
    from app.classroom.presentation import apply_look
    from app.main_window import MainWindow
    from app.state import Scenario, ScenarioModel
    i18n.set_language(app, "en")
    apply_look(app)
    w = MainWindow(ScenarioModel(Scenario(kind="all-gather", n=8)))
    w.deck.open_builtin()
    w.resize(1000, 600)
    w.show(); w.activateWindow(); QTest.qWait(100)

    def page():  # the picture's rectangle in the window, and how far down the bars push it
        p = w.tabs.currentWidget()
        top = p.mapTo(w, QPoint(0, 0))
        return {"top": top.y(), "rect": [top.x(), top.y(), p.width(), p.height()],
                "window": [w.width(), w.height()], "scale": theme.scale()}

    out = {"desk": page(), "desk_bars": w.tabs.currentWidget().mapTo(w, QPoint(0, 0)).y() - w.menuBar().height()}
    QTest.keyClick(w, Qt.Key.Key_F5); QTest.qWait(100)
    out["f5"] = page()
    for _ in range(3):
        QTest.keySequence(w, QKeySequence("Ctrl+=")); QTest.qWait(50)
    QTest.qWait(100)
    out["zoomed"] = page()
    QTest.keyClick(w, Qt.Key.Key_Escape); QTest.qWait(100)
    out["back"] = page()
    print("RESULT " + json.dumps(out))
""")


@pytest.mark.parametrize("screen", [(1280, 720), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_ctrl_plus_three_times_in_presentation_keeps_the_bars_small_and_the_picture_large(tmp_path, screen):
    W, H = screen
    out = run_on_screen(tmp_path, W, H, SCRIPT)
    zoomed, f5 = out["zoomed"], out["f5"]
    assert zoomed["scale"] == 2.5 and zoomed["window"] == [W, H]  # full screen, Ctrl+= ×3 from 1.5×
    # the bars above the picture are as tall as at the desk at 1× (no menu bar while presenting)
    assert zoomed["top"] <= out["desk_bars"] and zoomed["top"] == f5["top"], (out["desk_bars"], f5, zoomed)
    x, y, pw, ph = zoomed["rect"]
    assert y + ph <= H and pw * ph >= 0.60 * W * H, (pw * ph / (W * H))
    assert ph >= f5["rect"][3], (f5, zoomed)  # larger text took no height from the picture
    assert out["back"]["rect"] == out["desk"]["rect"]  # Esc: the desk's picture, bars as they were
