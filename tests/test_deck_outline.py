"""The deck's column in the desk layout: walking the built-in deck at 1280x720 and
1920x1080, in English and Chinese, every scene's talking points are all on screen — wrapped to the
column, none cut at its bottom or side, no scrolling needed — with the scene list beside them
keeping five rows and the scene on screen in view. Before, the list took half the column and scene
10's points were cut mid-line (both languages), scenes 13 and 14's in Chinese."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QRect  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def _in(widget, ancestor) -> QRect:
    return QRect(widget.mapTo(ancestor, QPoint(0, 0)), widget.size())


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_scenes_talking_points_wrap_and_are_whole_in_the_column(qtbot, lang, size):
    w = make_window(qtbot, size=size)
    w.classroom.set_language(lang)
    assert w.deck.open_builtin()
    outline, dock = w.deck.outline, w.deck.dock
    area, points, lst = outline.points_area, outline.points, outline.list
    shown = 0
    for i in range(len(w.deck.deck.scenes)):
        assert w.deck.go(i)
        for _ in range(3):
            QApplication.processEvents()
        if not dock.isVisible():  # the decode scene's tab hides the left column (the plot needs it)
            continue
        shown += 1
        where = f"scene {i + 1} ({lang})"
        assert w.rect().contains(_in(dock, w)), (where, _in(dock, w))
        assert outline.rect().contains(_in(area, outline)), (where, _in(area, outline), outline.rect())
        vp = area.viewport()
        # wrapped to the column: the label is the viewport's width, and as tall as its lines
        assert points.width() <= vp.width(), where
        assert points.height() >= points.heightForWidth(points.width()), where
        # and all of it inside the viewport: nothing below it to scroll to, nothing cut mid-line
        assert vp.rect().contains(_in(points, vp)), (where, _in(points, vp), vp.rect())
        assert area.verticalScrollBar().maximum() == 0, (where, area.verticalScrollBar().maximum())
        if outline.title.isVisible():
            assert outline.title.height() >= outline.title.heightForWidth(outline.title.width()), where
        # the scene list keeps five rows beside them, the scene on screen among them
        row = lst.visualItemRect(lst.item(i))
        assert lst.viewport().height() >= 5 * row.height(), (where, lst.viewport().height(), row.height())
        qtbot.waitUntil(lambda: 0 <= lst.visualItemRect(lst.item(i)).top()
                        and lst.visualItemRect(lst.item(i)).bottom() <= lst.viewport().rect().bottom())
    assert shown >= len(w.deck.deck.scenes) - 1
