"""A deck scene shows what its file says, whatever came before: every scene of the lecture deck,
reached from its predecessor, from the decode-latency scene and from the recursive-doubling scene,
gives the same pixels as the scene opened alone in a window that showed nothing else.

The windows build their scenarios on the worker thread, as the app does (the tests' sync worker
built a scene before its tab was chosen, and hid that the decode tab was built on the scene before's
scenario: `--deck lecture`, 5 then 12 said "best n = 64, 6.9 ms" with recursive doubling, where
1 then 12 and the handout say "best n = 8, 13.0 ms"). One shared window walks; each fresh window
opens one scene and is closed.
"""

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QCoreApplication  # noqa: E402

from app.classroom.export import image_to_array  # noqa: E402
from app.deck.model import builtin_path  # noqa: E402
from app.deck.scene_open import load_deck, wait_for_scene  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")
SIZE = (1600, 900)
DECODE, RD = "decode", "algos"  # the scenes every scene is also reached from (by id)


def _window(qtbot, keep=True):
    """A main window as `shard-lab` makes it: its scenarios are built on the worker thread."""
    from app.main_window import MainWindow
    from app.state import Scenario, ScenarioModel

    w = MainWindow(ScenarioModel(Scenario(), sync=False))
    if keep:
        qtbot.addWidget(w)
    w.resize(*SIZE)
    w.show()
    qtbot.waitExposed(w)
    return w


def _settle(w):
    wait_for_scene(w)
    for _ in range(3):
        QCoreApplication.processEvents()


def _picture(w):
    """The tab on screen and the step's story beside it (when shown), as pixels."""
    _settle(w)
    parts = [image_to_array(w.tabs.currentWidget().grab().toImage())]
    if w.explain_dock.isVisible():
        parts.append(image_to_array(w.explain_dock.widget().grab().toImage()))
    return parts


def _same(a, b):
    return len(a) == len(b) and all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b))


def _close(w):
    from PySide6.QtCore import QEvent

    w.close()
    w.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def test_every_scene_is_the_same_whatever_came_before(qtbot):
    deck = load_deck(builtin_path())
    ids = [s.id for s in deck.scenes]
    decode, rd = ids.index(DECODE), ids.index(RD)
    assert deck.scenes[rd].scenario["algo"] == "rd" and deck.scenes[decode].scenario["kind"] == "decode"
    alone = []
    for i in range(len(deck.scenes)):
        f = _window(qtbot, keep=False)
        assert f.deck.set_deck(deck, at=i) and f.deck.index == i
        alone.append(_picture(f))
        _close(f)

    w = _window(qtbot)
    ctl = w.deck
    assert ctl.set_deck(deck)
    wrong = []

    def reach(i, before):
        if before is not None:
            ctl.go(before)
            _settle(w)
        ctl.go(i)
        if not _same(_picture(w), alone[i]):
            wrong.append(f"scene {i + 1} ({ids[i]}) from {'the start' if before is None else ids[before]}")

    reach(0, None)
    for before in (rd, decode):  # rd first: the decode tab is built the first time on the scene after rd
        for i in range(len(deck.scenes)):
            if before not in (i, i - 1):
                reach(i, before)
    for i in range(1, len(deck.scenes)):
        reach(i, i - 1)
    assert not wrong, "differs from the scene opened alone: " + "; ".join(wrong)


def test_decode_scene_after_recursive_doubling_says_what_its_points_say(qtbot):
    """The person's path of the issue: 5 (recursive doubling), then 12: the decode plot's algorithm is
    the ring its scene names, and it says what scene 12 opened alone says."""
    deck = load_deck(builtin_path())
    ids = [s.id for s in deck.scenes]
    w = _window(qtbot)
    assert w.deck.set_deck(deck, at=ids.index(RD))
    _settle(w)
    w.deck.go(ids.index(DECODE))
    _settle(w)
    view = w.view("latency")
    assert view.params()["algo"] == "ring"
    assert view.generation == 1  # its first curves were the ring's: it never showed the scene before's rd
