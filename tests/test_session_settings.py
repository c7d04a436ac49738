"""Settings from a previous session: a window is launched as `shard-lab` launches it (the deck opened
first for `--deck lecture`, then the last session's settings restored), changed as a person changes it
(tab, docks, deck), quit as a person quits it (the window's close), and launched again on the same
settings file. The new session must be usable: the scenario's docks shown for its tab, the deck's
outline shown whenever a deck is open, and the status bar saying that a deck is open. Asserted on the
widgets' visibility and their rectangles on screen.
"""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QCoreApplication  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def _launch(qtbot, deck=False, restore_scenario=True):
    """As app/__main__.py: the window, the deck (--deck lecture), the last session, then shown."""
    from app.main_window import MainWindow
    from app.state import Scenario, ScenarioModel

    w = MainWindow(ScenarioModel(Scenario()))
    qtbot.addWidget(w)
    if deck:
        assert w.deck.open_builtin()
    w.classroom.restore_session(restore_scenario=restore_scenario and not deck)
    w.show()
    qtbot.waitExposed(w)
    for _ in range(3):
        QCoreApplication.processEvents()
    return w


def _quit(w):
    w.close()  # the window's close button, or Ctrl+Q: a Close event
    QCoreApplication.processEvents()
    assert not w.isVisible()


def _shown(w, dock, min_w=90, min_h=60):
    """`dock` on screen in the window, with room for what it says."""
    QCoreApplication.processEvents()
    r = dock.geometry()
    return (dock.isVisible() and not dock.isFloating() and w.rect().contains(r)
            and r.width() >= min_w and r.height() >= min_h)


def _desk_docks(w):
    return {"Scenario": w.controls_dock, "story": w.explain_dock, "timeline": w.timeline_dock}


def test_quitting_on_the_decode_tab_leaves_the_next_session_its_docks(qtbot):
    w = _launch(qtbot)
    w.tab_actions[3].trigger()  # Ctrl+4: Decode latency, which hides the docks to give the plot the room
    assert w.current_tab() == "latency" and not w.controls_dock.isVisible()
    _quit(w)
    again = _launch(qtbot)
    assert again.current_tab() == "ring"
    hidden = [name for name, d in _desk_docks(again).items() if not _shown(again, d)]
    assert not hidden, f"the Ring tab opened without its {', '.join(hidden)} dock(s)"
    again.tab_actions[3].trigger()  # and the Decode tab still gives its plot the room
    assert not again.controls_dock.isVisible()
    again.tab_actions[0].trigger()
    assert all(_shown(again, d) for d in _desk_docks(again).values())


def test_a_decode_scenario_at_quit_comes_back_on_its_tab_and_the_ring_tab_has_its_docks(qtbot):
    w = _launch(qtbot)
    assert w.model.update(kind="decode")
    assert w.current_tab() == "latency"
    _quit(w)
    again = _launch(qtbot)
    assert again.model.scenario.kind == "decode" and again.current_tab() == "latency"
    assert not again.controls_dock.isVisible()  # the plot has the room, as on the first launch
    again.tab_actions[0].trigger()
    hidden = [name for name, d in _desk_docks(again).items() if not _shown(again, d)]
    assert not hidden, f"the Ring tab came without its {', '.join(hidden)} dock(s)"


def test_the_deck_outline_is_shown_whenever_a_deck_opens(qtbot):
    w = _launch(qtbot, deck=True)
    assert _shown(w, w.deck.dock)
    w.deck.dock.toggleViewAction().trigger()  # the person hides the outline, then quits
    assert not w.deck.dock.isVisible()
    _quit(w)
    again = _launch(qtbot, deck=True)  # shard-lab --deck lecture
    assert _shown(again, again.deck.dock), "the deck opened with its outline hidden by the last session"
    label = again.deck.status_label
    k = len(again.deck.deck.scenes)  # the lecture's scenes, however many it has
    assert label.isVisible() and f"1/{k}" in label.text()
    assert again.statusBar().rect().contains(label.geometry())
    again.deck.next()
    again.deck.go(4)
    assert f"5/{k}" in label.text()
    _quit(again)
    plain = _launch(qtbot)  # no deck: no outline, no deck in the status bar, the scenario's docks
    assert not plain.deck.dock.isVisible() and not plain.deck.status_label.isVisible()
    assert all(_shown(plain, d) for d in _desk_docks(plain).values())


def test_an_old_session_that_hid_every_dock_opens_usable(qtbot):
    """A settings file written by a version that saved the Decode tab's hidden docks as the desk layout."""
    from app import scenario_io

    w = _launch(qtbot)
    for d in _desk_docks(w).values():
        d.hide()
    scenario_io.save_window(w)
    w.classroom.remember_session = False  # the file keeps what an old version wrote
    _quit(w)
    again = _launch(qtbot)
    assert all(_shown(again, d) for d in _desk_docks(again).values())
    assert QApplication.activeWindow() in (again, None)
