"""Scenario files round-trip; corrupt, truncated, wrong-version and foreign files are refused and change nothing."""

import json

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QMessageBox  # noqa: E402

from app import i18n, scenario_io, theme  # noqa: E402
from app.scenario_io import ScenarioFileError, dumps, load_scenario, loads, save_scenario  # noqa: E402
from app.state import Scenario  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")

GOOD = {"kind": "all-reduce", "n": 6, "algo": "rd", "nbytes": 65532, "link": "nvlink5"}  # 6 × 10922 B


def _doc(**changes):
    doc = {"schema": "shard-lab-scenario", "version": 1, "scenario": dict(GOOD)}
    doc.update(changes)
    return doc


@pytest.mark.parametrize("sc", [Scenario(), Scenario("all-reduce", 5, "innet", 3e6, "pcie5"),
                                Scenario("reduce-scatter", 4, "ring", 4096.0, "tpu-v5e-ici"),
                                Scenario("matmul-3", 2, "direct", 2**20, "nvlink3"),
                                Scenario("all-to-all", 8, "pairwise", 2**20, "nvlink4")])
def test_round_trip(sc, tmp_path):
    sf = loads(dumps(sc, step=2, note="slide 12"))
    assert (sf.scenario, sf.step, sf.note) == (sc, 2, "slide 12")
    path = tmp_path / "s.json"
    save_scenario(str(path), sc)
    assert load_scenario(str(path)).scenario == sc
    assert json.loads(path.read_text())["schema"] == "shard-lab-scenario"


BAD = {
    "not json": ("{this is not json", "not valid JSON"),
    "truncated": (json.dumps(_doc())[:40], "not valid JSON"),
    "empty": ("", "not valid JSON"),
    "wrong version": (json.dumps(_doc(version=2)), "version 2 is not supported"),
    "no version": (json.dumps({"schema": "shard-lab-scenario", "scenario": GOOD}), "version"),
    "foreign json": (json.dumps({"traceEvents": []}), "not a Shard Lab scenario"),
    "a list": ("[1, 2, 3]", "not a Shard Lab scenario"),
    "bad kind": (json.dumps(_doc(scenario=dict(GOOD, kind="all-to-one"))), '"kind"'),
    "n as text": (json.dumps(_doc(scenario=dict(GOOD, n="8"))), '"n"'),
    "n zero": (json.dumps(_doc(scenario=dict(GOOD, n=0))), '"n"'),
    "n huge": (json.dumps(_doc(scenario=dict(GOOD, n=10**9))), '"n"'),
    "n bool": (json.dumps(_doc(scenario=dict(GOOD, n=True))), '"n"'),
    "negative size": (json.dumps(_doc(scenario=dict(GOOD, nbytes=-1))), '"nbytes"'),
    "size as code": (json.dumps(_doc(scenario=dict(GOOD, nbytes="__import__('os').system('x')"))), '"nbytes"'),
    "infinite size": ('{"schema": "shard-lab-scenario", "version": 1, "scenario": {"kind": "all-gather", '
                      '"n": 4, "algo": "ring", "nbytes": Infinity, "link": "nvlink4"}}', '"nbytes"'),
    "unknown link": (json.dumps(_doc(scenario=dict(GOOD, link="carrier pigeon"))), '"link"'),
    "missing field": (json.dumps(_doc(scenario={k: v for k, v in GOOD.items() if k != "link"})), "missing"),
    "extra field": (json.dumps(_doc(scenario=dict(GOOD, seed=3))), "Unknown scenario field"),
    "extra top key": (json.dumps(_doc(pickle="gASV")), "Unknown field"),
    "cannot split": (json.dumps(_doc(scenario=dict(GOOD, kind="all-gather", algo="ring", nbytes=1000, n=3))),
                     "cannot be split"),
    "bad step": (json.dumps(_doc(playback={"step": -1})), "playback.step"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_documents_are_refused_with_a_message(name):
    text, why = BAD[name]
    with pytest.raises(ScenarioFileError, match=why):
        loads(text)


def test_binary_and_huge_files_are_refused(tmp_path):
    png = tmp_path / "picture.json"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    with pytest.raises(ScenarioFileError, match="not UTF-8"):
        load_scenario(str(png))
    big = tmp_path / "big.json"
    big.write_text(" " * (scenario_io.MAX_FILE_BYTES + 1))
    with pytest.raises(ScenarioFileError, match="is not a scenario file"):
        load_scenario(str(big))
    with pytest.raises(ScenarioFileError, match="Cannot read"):
        load_scenario(str(tmp_path / "missing.json"))


@pytest.mark.parametrize("name", ["truncated", "wrong version", "foreign json", "n as text", "cannot split"])
def test_opening_a_bad_file_changes_nothing(qtbot, tmp_path, name):
    w = make_window(qtbot, "all-gather", 8)
    w.playback.seek_step(3)
    before_sc, before_t, before_run = w.model.scenario, w.playback.t, w.model.run
    path = tmp_path / "bad.json"
    path.write_text(BAD[name][0])
    assert w.classroom.open_scenario(str(path)) is False
    assert w.model.scenario == before_sc and w.model.run is before_run
    assert w.playback.t == before_t
    box = w.findChild(QMessageBox, "classroomError")
    assert box is not None and "bad.json" in box.text()
    assert scenario_io.recent_files() == []


def test_open_and_save_through_the_window(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 8)
    path = tmp_path / "lecture.json"
    path.write_text(json.dumps(_doc(playback={"step": 2})))
    assert w.classroom.open_scenario(str(path))
    assert w.model.scenario == Scenario(**{**GOOD, "nbytes": 65532.0})
    assert w.playback.step_index == 2
    out = tmp_path / "again.json"
    assert w.classroom.save_scenario(str(out))
    sf = load_scenario(str(out))
    assert sf.scenario == w.model.scenario and sf.step == 2
    assert scenario_io.recent_files() == [str(out), str(path)]


def test_recent_files_newest_first_unique_and_existing(tmp_path):
    files = [tmp_path / f"s{i}.json" for i in range(10)]
    for f in files:
        f.write_text("{}")
        scenario_io.add_recent(str(f))
    scenario_io.add_recent(str(files[3]))  # opened again: moves to the top
    recent = scenario_io.recent_files()
    assert recent[0] == str(files[3]) and len(recent) == scenario_io.MAX_RECENT
    assert len(set(recent)) == len(recent)
    files[9].unlink()
    assert str(files[9]) not in scenario_io.recent_files()


def test_session_is_remembered_across_runs(qtbot):
    w1 = make_window(qtbot, "all-gather", 8, size=(1300, 760))
    w1.classroom.restore_session()  # as the interactive app does: nothing saved yet, remember from now on
    w1.classroom.presentation.set_theme("dark")
    w1.classroom.presentation.zoom_in()
    w1.classroom.set_language("zh")
    w1.model.update(kind="all-reduce", algo="innet", n=5, nbytes=5 * 2**16)
    w1.playback.seek_step(1)  # in-network steps by phase: up, then down
    w1.close()  # saves geometry, scenario and step

    theme.set_theme("light")
    theme.set_scale(1.0)
    i18n.set_language(None, "en")
    assert i18n.saved_language() == "zh"
    assert i18n.set_language(None, None) == "zh"  # no --lang: the saved choice
    w2 = make_window(qtbot, "all-gather", 8)
    w2.classroom.restore_session(restore_scenario=True)
    assert theme.palette().key == "dark" and theme.scale() > 1.0
    assert w2.model.scenario == Scenario("all-reduce", 5, "innet", 5 * 2**16)
    assert w2.playback.step_index == 1
    # the saved geometry was applied (the offscreen screen may clamp it, so compare with the default)
    assert scenario_io.settings().value("window/geometry")
    assert w2.height() == 760 and (w2.width(), w2.height()) != (1600, 900)


def test_windows_made_by_scripts_do_not_touch_the_settings(qtbot):
    w = make_window(qtbot, "all-gather", 8)
    w.classroom.presentation.zoom_in()
    w.classroom.presentation.set_theme("dark")
    w.classroom.set_language("zh")
    w.close()
    assert scenario_io.settings().allKeys() == []


def test_a_corrupt_saved_session_is_ignored(qtbot):
    scenario_io.settings().setValue("session/last_scenario", '{"schema": "shard-lab-scenario", "ver')
    scenario_io.settings().setValue("ui/theme", "no-such-theme")
    w = make_window(qtbot, "reduce-scatter", 4)
    w.classroom.restore_session(restore_scenario=True)
    assert w.model.scenario.kind == "reduce-scatter"
    assert theme.palette().key == "light"
