"""Presentation mode scales fonts and survives a round trip; themes; the shortcut overlay tells the truth."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QAction, QColor, QKeySequence, QPalette  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app import i18n, theme  # noqa: E402
from app.classroom.presentation import collect_shortcuts, next_scale  # noqa: E402
from app.theme import OKABE_ITO_ON_DARK  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def _label_px(w):
    lab = w.time_label
    lab.ensurePolished()
    return lab.font().pixelSize()


def test_presentation_mode_scales_fonts_and_round_trips(qtbot):
    w = make_window(qtbot, "all-gather", 8)
    p = w.classroom.presentation
    before = (w.windowState(), w.geometry(), theme.scale(), theme.font("body").pixelSize(), _label_px(w))
    body_before = theme.font("body").pixelSize()
    p.act_presentation.trigger()
    assert p.presenting and w.windowState() & Qt.WindowFullScreen
    assert not w.controls_dock.isVisible()  # the keyboard drives; the picture gets the room
    assert theme.scale() == 1.5
    assert theme.font("body").pixelSize() == round(body_before * 1.5)
    assert _label_px(w) > before[4]  # Qt's own widgets follow, not only the drawn views
    assert w.ring_view.caption._font.pixelSize() * w.ring_view.zoom > 22  # and the ring view's text (on screen: magnified)
    p.zoom_in()  # the projector size is remembered for next time
    big = theme.scale()
    p.act_presentation.trigger()
    assert not p.presenting and not w.windowState() & Qt.WindowFullScreen
    after = (w.windowState(), w.geometry(), theme.scale(), theme.font("body").pixelSize(), _label_px(w))
    assert after == before
    assert w.controls_dock.isVisible()
    p.act_presentation.trigger()
    assert theme.scale() == big
    QTest.keyClick(w, Qt.Key_Escape)  # Esc leaves presentation mode
    assert not p.presenting and theme.scale() == 1.0


def test_ctrl_plus_minus_zero_change_the_size_in_steps(qtbot):
    w = make_window(qtbot, "reduce-scatter", 4)
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    QTest.keySequence(w, QKeySequence("Ctrl+="))
    assert theme.scale() == next_scale(1.0, +1) > 1.0
    QTest.keySequence(w, QKeySequence("Ctrl+-"))
    QTest.keySequence(w, QKeySequence("Ctrl+-"))
    assert theme.scale() == next_scale(1.0, -1) < 1.0
    QTest.keySequence(w, QKeySequence("Ctrl+0"))
    assert theme.scale() == 1.0


@pytest.mark.parametrize("key", ["dark", "high-contrast"])
def test_themes_recolour_widgets_and_views_and_keep_safe_chunk_colours(qtbot, key):
    w = make_window(qtbot, "all-gather", 8)
    w.classroom.presentation.set_theme(key)
    pal = theme.palette()
    assert QApplication.instance().palette().color(QPalette.Window) == QColor(pal.surface)
    assert w.ring_view.scene().backgroundBrush().color() == QColor(pal.background)
    img = w.ring_view.grab().toImage()
    assert QColor(img.pixel(3, img.height() // 2)).lightness() < 60  # a dark canvas on screen
    colors = [c.name().upper() for c in theme.device_colors(8)]
    assert colors[:7] == list(theme.OKABE_ITO[:7])  # Okabe–Ito, colour-blind safe, in every theme
    assert QColor(colors[7]).lightness() > 150  # its black becomes light on a dark background
    assert w.classroom.presentation.theme_actions[key].isChecked()
    if key == "dark":
        assert tuple(OKABE_ITO_ON_DARK) == tuple(c.upper() for c in pal.device_colors)


def test_overlay_lists_every_action_with_a_key(qtbot):
    w = make_window(qtbot, "all-gather", 4)
    p = w.classroom.presentation
    p.act_shortcuts.trigger()
    assert p.overlay.isVisible()
    text = p.overlay.label.text()
    keyed = [a for a in w.findChildren(QAction) if a.isVisible() and any(not k.isEmpty() for k in a.shortcuts())]
    assert len(keyed) >= 20
    for a in keyed:
        assert a.text().replace("&", "").rstrip("…") in text.replace("&amp;", "&")
    assert "F11" in text and "Ctrl+P" in text and "→" in text
    QTest.keyClick(p.overlay, Qt.Key_Escape)
    assert not p.overlay.isVisible()


def test_the_overlay_follows_the_language(qtbot):
    w = make_window(qtbot, "all-gather", 4)
    p = w.classroom.presentation
    p.toggle_overlay()
    w.classroom.set_language("zh")
    assert "键盘快捷键" in p.overlay.label.text() and "演示模式" in p.overlay.label.text()
    i18n.set_language(QApplication.instance(), "en")


def test_every_shortcut_does_what_the_overlay_says(qtbot):
    """Press each key the overlay lists; exactly the action it names must fire."""
    assert press_every_listed_key(qtbot, make_window(qtbot, "all-gather", 4)) >= 25


def press_every_listed_key(qtbot, w) -> int:
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    entries = collect_shortcuts(w)
    fired = []
    for e in entries:
        for obj in e.get("objects", [e["object"]]):
            sig = obj.triggered if isinstance(obj, QAction) else obj.activated
            sig.connect(lambda *_, o=obj: fired.append(o))
    quit_ = getattr(w, "act_quit", None)
    checked = 0
    for e in sorted(entries, key=lambda e: e["object"] is quit_):  # Quit last: it closes the window
        objs = e.get("objects", [e["object"]] * len(e["keys"]))
        for key, obj in zip(e["keys"], objs):
            w.classroom.presentation.overlay.close_overlay()
            w.activateWindow()
            fired.clear()
            QTest.keySequence(w, key)
            assert fired == [obj], f"{key.toString()} should do {e['text']!r}, did {fired}"
            checked += 1
    return checked


def test_every_shortcut_does_what_the_overlay_says_in_predict_mode_too(qtbot):
    w = make_window(qtbot, "all-gather", 4)
    w.classroom.predict.animate = False
    w.classroom.act_predict.trigger()
    digits = [e for e in collect_shortcuts(w) if [k.toString() for k in e["keys"]][:3] == ["0", "1", "2"]]
    assert len(digits) == 1 and len(digits[0]["keys"]) == 10  # one line in the overlay, ten keys
    q = w.classroom.predict.q
    QTest.keyClick(w, Qt.Key_0 + next(iter(q.answers)))  # the digit of the right answer
    assert "✓" in w.classroom.predict_panel.verdict.text()
    assert w.classroom.predict.scores[("all-gather", "ring")].right == 1
    w.classroom.act_predict.trigger()
    assert not any(e["keys"][0].toString() == "0" for e in collect_shortcuts(w))  # off again


def test_the_style_is_fusion_under_the_stylesheet(qtbot):
    from app.classroom import presentation

    make_window(qtbot, "all-gather", 8)
    presentation.apply_look()
    app = QApplication.instance()
    sheet = app.styleSheet()
    app.setStyleSheet("")  # the stylesheet's proxy has no name: look beneath it
    try:
        assert app.style().name().lower() == "fusion"
    finally:
        app.setStyleSheet(sheet)


def test_the_docks_title_bars_keep_their_icons_and_work(qtbot):
    """The docks' title bars are the app's (app/dock_title.py): their buttons hold icons made once
    (Qt's own title bar had the style decode them at every paint), float and close the dock, and
    the title follows the dock's (translated) window title."""
    from app.dock_title import DockTitle

    w = make_window(qtbot, "all-gather", 8)
    dock = w.controls_dock
    title = dock.titleBarWidget()
    assert isinstance(title, DockTitle) and title.label.text() == dock.windowTitle() != ""
    icon = title.close_button.icon()
    assert not icon.isNull() and not title.float_button.icon().isNull()
    w.grab()  # a paint keeps them
    assert title.close_button.icon().cacheKey() == icon.cacheKey()
    title.float_button.click()
    assert dock.isFloating()
    title.float_button.click()
    assert not dock.isFloating()
    title.close_button.click()
    assert dock.isHidden()
    dock.setWindowTitle("Renamed")
    assert title.label.text() == "Renamed"


def test_every_key_belongs_to_one_action_and_none_is_hidden(qtbot):
    """F1 and F11 are the shortcut overlay's and presentation mode's alone: the window builds no
    second, hidden action for them, and no two actions share a key."""
    w = make_window(qtbot, "all-gather", 4)
    owners = {}
    for a in w.findChildren(QAction):
        for k in a.shortcuts():
            if not k.isEmpty():
                assert a.isVisible(), a.objectName()
                owners.setdefault(k.toString(), []).append(a.objectName())
    assert owners["F1"] == ["actShortcuts"] and owners["F11"] == ["actPresentation"]
    assert {k: v for k, v in owners.items() if len(v) > 1} == {}
    assert [a.objectName() for a in w.findChildren(QAction) if a.objectName() and not a.isVisible()] == []
    # the classroom's docks went where the window's extension points put them: the story's column
    right = Qt.RightDockWidgetArea
    c = w.classroom
    assert {w.dockWidgetArea(d) for d in (c.formula_dock, c.predict_dock, w.explain_dock)} == {right}
    assert [m.title() for m in (a.menu() for a in w.menuBar().actions()) if m][-2:] == [c.menu_learn.title(),
                                                                                        w.menu_help.title()]
