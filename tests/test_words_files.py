"""
Every number of a file the app reads is checked before it is used, and file dialogs open in
the last folder used: nbytes = 10^400 is one sentence (not OverflowError), a link's α and β
outside their physical bounds are refused, the app keeps running and nothing else changes.
"""

import json

import pytest

pytest.importorskip("pytestqt")

from app import scenario_io  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")

DOC = {"schema": "shard-lab-scenario", "version": 1,
       "scenario": {"kind": "all-reduce", "n": 4, "algo": "ring", "nbytes": 4096, "link": "nvlink4"}}


def _doc(**scenario):
    doc = json.loads(json.dumps(DOC))
    doc["scenario"].update(scenario)
    return doc


@pytest.mark.parametrize("text, msg", [
    ('"nbytes": ' + "1" + "0" * 400, r'"nbytes" is a number with 401 digits'),
    ('"nbytes": 1e400', r'"nbytes" must be a finite number'),
    ('"n": -' + "9" * 30, r'"n" is a number with 30 digits'),
])
def test_a_number_no_float_can_hold_is_one_sentence(text, msg):
    raw = json.dumps(DOC).replace('"nbytes": 4096', text) if "nbytes" in text else \
        json.dumps(DOC).replace('"n": 4', text)
    with pytest.raises(scenario_io.ScenarioFileError, match=msg):
        scenario_io.loads(raw)


@pytest.mark.parametrize("alpha, bw, msg", [
    (1e-6, 1e-300, r"from 1e\+06 \(1 MB/s\) to 1e\+14 \(100 TB/s\)"),
    (1e-6, 5e14, r"from 1e\+06 \(1 MB/s\) to 1e\+14 \(100 TB/s\)"),
    (2.0, 1e9, r"alpha.*from 0 to 1"),
    (-1e-9, 1e9, r"alpha.*from 0 to 1"),
])
def test_a_link_outside_its_physical_bounds_is_refused(alpha, bw, msg):
    doc = _doc(link="measured", link_spec={"name": "x", "alpha": alpha, "bw": bw})
    with pytest.raises(scenario_io.ScenarioFileError, match=msg):
        scenario_io.loads(json.dumps(doc))


def test_the_bounds_themselves_are_accepted():
    for alpha, bw in ((0.0, 1e6), (1.0, 1e14)):
        doc = _doc(link="measured", link_spec={"name": "x", "alpha": alpha, "bw": bw})
        assert scenario_io.loads(json.dumps(doc)).link_spec.bw == bw


def test_the_window_says_why_and_keeps_running(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 4)
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(DOC).replace('"nbytes": 4096', '"nbytes": 1' + "0" * 400))
    before, run = w.model.scenario, w.model.run
    assert w.classroom.open_scenario(str(path)) is False
    assert "401 digits" in w.classroom.last_error and "huge.json" in w.classroom.last_error
    assert w.model.scenario is before and w.model.run is run  # nothing else changed
    w.playback.to_start()
    w.playback.step_forward()  # the app still runs
    assert w.playback.t > 0


def test_file_dialogs_open_in_the_last_folder_used(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    w = make_window(qtbot, "all-gather", 4)
    folder = tmp_path / "lecture 4"
    folder.mkdir()
    asked = []

    def save(parent, caption, start, filters, *a, **k):
        asked.append(start)
        return str(folder / "mine.json"), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save))
    w.classroom._on_save_triggered()
    assert (folder / "mine.json").exists()
    w.classroom._on_save_triggered()  # the second dialog starts where the first one ended
    assert str(folder) in asked[-1]
    assert scenario_io.last_folder() == str(folder)
