"""Deck editing as a lecturer does it from the menus: File › Save deck never proposes nor writes the
program's own lecture deck (or anything in the program's folder), and File › Open deck and quitting
ask (Save / Discard / Cancel) before dropping scenes added with "Add the current view as a scene".

The file dialogs are answered by patching QFileDialog's static functions (what a person types); the
question is a window-modal box that does not block the event loop, answered by clicking its button.
"""

import json
import os

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QCoreApplication  # noqa: E402
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox  # noqa: E402

from app.deck.model import builtin_path, in_package  # noqa: E402
from app.deck.scene_open import load_deck  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


class Dialogs:
    """QFileDialog and QInputDialog answered as a person would: the save dialog records what it
    proposed and answers `save_answer` (a path under the test's folder, or "" for Cancel: a test never
    accepts the proposal, which is in the real Documents); the open dialog answers `open_answer`."""

    def __init__(self, monkeypatch):
        self.proposed, self.save_answer, self.open_answer = [], "", ""  # "": cancelled (never the real Documents)
        monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(self._save))
        monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (self.open_answer, "")))
        monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("my scene", True)))

    def _save(self, parent, caption, proposed, *a, **k):
        self.proposed.append(proposed)
        return self.save_answer, ""


def _question(w):
    QCoreApplication.processEvents()
    boxes = [b for b in w.findChildren(QMessageBox, "deckUnsaved") if b.isVisible()]
    return boxes[0] if boxes else None


def _answer(box, button):
    box.button(button).click()
    QCoreApplication.processEvents()


def test_save_deck_proposes_a_copy_outside_the_program_and_refuses_its_folder(qtbot, monkeypatch, tmp_path):
    shipped = builtin_path()
    before = open(shipped, "rb").read()
    d = Dialogs(monkeypatch)
    w = make_window(qtbot, "all-reduce", 8)
    assert w.deck.open_builtin()
    w.deck.act_add.trigger()
    w.deck.act_save.trigger()
    proposed = d.proposed[-1]
    assert not in_package(proposed) and os.path.dirname(os.path.abspath(shipped)) != os.path.dirname(proposed)
    assert os.path.basename(proposed) == "lecture (copy).json"
    # a person who walks into the program's folder anyway and saves over the lecture: refused, one sentence
    d.save_answer = shipped
    w.deck.act_save.trigger()
    assert open(shipped, "rb").read() == before
    assert "own folder" in w.deck.last_error and "\n" not in w.deck.last_error
    assert w.deck.unsaved == 1
    # saved where the person chose: the next Save deck proposes that file, and nothing is unsaved
    mine = tmp_path / "mine.json"
    d.save_answer = str(mine)
    w.deck.act_save.trigger()
    assert mine.exists() and w.deck.unsaved == 0
    assert len(load_deck(str(mine)).scenes) == len(load_deck(shipped).scenes) + 1
    d.save_answer = ""
    w.deck.act_save.trigger()
    assert d.proposed[-1] == str(mine)
    assert open(shipped, "rb").read() == before


def _other_deck(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"schema": "shard-lab-deck", "version": 1, "title": "Other", "scenes": ['
                    '{"title": "one", "points": ["a", "b"], "scenario": {"kind": "all-gather", "n": 4, "algo": "ring", '
                    '"nbytes": 1048576, "link": "nvlink4"}}]}')
    return str(path)


def test_open_deck_asks_before_dropping_added_scenes(qtbot, monkeypatch, tmp_path):
    d = Dialogs(monkeypatch)
    d.open_answer = _other_deck(tmp_path)
    w = make_window(qtbot, "all-reduce", 8)
    w.deck.act_add.trigger()  # a new deck of one scene, not saved
    mine = w.deck.deck
    w.deck.act_open.trigger()
    box = _question(w)
    assert box is not None and "1 scene" in box.text()
    _answer(box, QMessageBox.StandardButton.Cancel)
    assert w.deck.deck is mine and w.deck.unsaved == 1
    d.save_answer = ""  # Save, then the save dialog cancelled: nothing saved, nothing opened
    w.deck.act_open.trigger()
    _answer(_question(w), QMessageBox.StandardButton.Save)
    assert d.proposed and not in_package(d.proposed[-1])
    assert w.deck.deck is mine and w.deck.unsaved == 1
    d.save_answer = str(tmp_path / "kept.json")
    w.deck.act_open.trigger()
    _answer(_question(w), QMessageBox.StandardButton.Save)
    assert load_deck(str(tmp_path / "kept.json")).scenes[0].title.en == "my scene"
    assert w.deck.deck.title.en == "Other" and w.deck.unsaved == 0
    w.deck.act_add.trigger()
    w.deck.act_open.trigger()
    _answer(_question(w), QMessageBox.StandardButton.Discard)
    assert w.deck.deck.title.en == "Other" and len(w.deck.deck.scenes) == 1 and w.deck.unsaved == 0


def test_quitting_asks_before_dropping_added_scenes(qtbot, monkeypatch, tmp_path):
    Dialogs(monkeypatch)
    w = make_window(qtbot, "all-reduce", 8)
    w.deck.act_add.trigger()
    w.act_quit.trigger()  # Ctrl+Q
    box = _question(w)
    assert box is not None and w.isVisible()
    _answer(box, QMessageBox.StandardButton.Cancel)
    assert w.isVisible() and w.deck.unsaved == 1
    w.close()  # the window's close button
    _answer(_question(w), QMessageBox.StandardButton.Discard)
    assert not w.isVisible()


def test_quitting_with_nothing_added_does_not_ask(qtbot, monkeypatch):
    Dialogs(monkeypatch)
    w = make_window(qtbot, "all-reduce", 8)
    assert w.deck.open_builtin()
    w.act_quit.trigger()
    assert _question(w) is None and not w.isVisible()


def test_a_deck_saved_in_another_folder_still_finds_its_scenes_files(qtbot, monkeypatch, tmp_path):
    """A scene's scenario "file" is relative to the deck: saved elsewhere, the saved deck names it from there."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "ring8.json").write_text(json.dumps(
        {"schema": "shard-lab-scenario", "version": 1,
         "scenario": {"kind": "all-gather", "n": 8, "algo": "ring", "nbytes": 1048576, "link": "nvlink4"}}))
    (tmp_path / "a" / "deck.json").write_text(json.dumps(
        {"schema": "shard-lab-deck", "version": 1, "title": "Mine",
         "scenes": [{"title": "ring", "file": "ring8.json"}]}))
    d = Dialogs(monkeypatch)
    w = make_window(qtbot, "all-reduce", 4)
    assert w.deck.open_deck(str(tmp_path / "a" / "deck.json")) and w.model.scenario.n == 8
    w.deck.act_add.trigger()
    d.save_answer = str(tmp_path / "b" / "copy.json")
    w.deck.act_save.trigger()
    saved = load_deck(str(tmp_path / "b" / "copy.json"))
    assert saved.scenes[0].file == "../a/ring8.json"
    other = make_window(qtbot, "all-reduce", 4)
    assert other.deck.open_deck(str(tmp_path / "b" / "copy.json")) and not other.deck.bad
    assert other.model.scenario.n == 8 and w.deck.go(0) and w.model.scenario.n == 8
