"""
Switching the language live reaches every visible string: after
switching to Chinese and back (and the other way round), every widget's texts — tab titles,
dock titles, menus, tooltips, labels, buttons, plot titles and axes — equal those of a window
built fresh in that language.
"""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import (QAbstractButton, QApplication, QComboBox, QDockWidget, QGroupBox,  # noqa: E402
                               QLabel, QLineEdit, QMainWindow, QMenu, QTabBar, QTextEdit, QWidget)

from app import i18n  # noqa: E402
from app.tab_list import TABS  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def _plot_texts(widget) -> list:
    """Titles and axis labels of a pyqtgraph PlotWidget / GraphicsLayoutWidget."""
    out = []
    scene = getattr(widget, "scene", None)
    if not callable(scene) or scene() is None or not hasattr(widget, "getItem") and not hasattr(widget, "getPlotItem"):
        return out
    import pyqtgraph as pg

    for item in scene().items():
        if isinstance(item, pg.LabelItem) and item.isVisible():
            out.append(item.text)
        elif isinstance(item, pg.AxisItem) and item.isVisible() and item.label.isVisible():
            out.append(item.labelText)
    return sorted(out)


def _menu_texts(actions) -> list:
    out = []
    for a in actions:
        out.append((a.text(), a.toolTip()))
        if a.menu() is not None:
            out.append(_menu_texts(a.menu().actions()))
    return out


def all_texts(w) -> dict:
    """Every string a widget of the window shows (or shows on hover), keyed by where it is."""
    out = {}
    for i, wid in enumerate([w] + w.findChildren(QWidget)):
        key = f"{type(wid).__name__}:{wid.objectName()}"
        texts = [wid.toolTip(), wid.windowTitle() if isinstance(wid, (QDockWidget, QMainWindow)) else ""]
        if isinstance(wid, QLabel):
            texts.append(wid.text())
        elif isinstance(wid, QAbstractButton):
            texts.append(wid.text())
        elif isinstance(wid, QGroupBox):
            texts.append(wid.title())
        elif isinstance(wid, QTextEdit):
            texts.append(wid.toPlainText())
        elif isinstance(wid, QLineEdit):
            texts.append(wid.placeholderText())
        elif isinstance(wid, QComboBox):
            texts += [wid.itemText(k) for k in range(wid.count())]
        elif isinstance(wid, QTabBar):
            texts += [wid.tabText(k) for k in range(wid.count())] + [wid.tabToolTip(k) for k in range(wid.count())]
        elif isinstance(wid, QMenu):
            continue  # menus are walked from the menu bar below (a hidden overflow menu is not read)
        texts += _plot_texts(wid)
        out.setdefault(key, []).append(texts)
    out["actions"] = sorted((a.objectName(), a.text(), a.toolTip()) for a in w.actions())
    out["menus"] = _menu_texts(w.menuBar().actions())
    return {k: sorted(v) if k not in ("actions", "menus") else v for k, v in out.items()}


def _open_every_tab(w):
    for key in TABS:
        w.select_tab(key)
        QApplication.processEvents()
    w.select_tab("ring")
    QApplication.processEvents()


def _window(qtbot):
    w = make_window(qtbot, "all-gather", 8)
    _open_every_tab(w)
    w.timeline  # noqa: B018  (built)
    return w


def _diff(a, b):
    return [(k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


@pytest.mark.parametrize("there, back", [("zh", "en"), ("en", "zh")])
def test_every_visible_text_follows_a_switch_there_and_back(qtbot, there, back):
    i18n.set_language(QApplication.instance(), back)
    w = _window(qtbot)
    w.classroom.set_language(there)
    QApplication.processEvents()
    fresh_there = _window(qtbot)
    assert _diff(all_texts(w), all_texts(fresh_there)) == []
    fresh_there.close()
    w.classroom.set_language(back)
    QApplication.processEvents()
    fresh_back = _window(qtbot)
    assert _diff(all_texts(w), all_texts(fresh_back)) == []
