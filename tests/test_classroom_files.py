"""
Files a student opens or writes (issue 12, defects 4, 8, 10): odd JSON gets a clear sentence,
a UTF-8 byte-order mark is fine, a calibrated link travels inside the scenario file and is
remembered, special files are refused without being read.
"""

import json

import pytest

pytest.importorskip("pytestqt")

from app import scenario_io  # noqa: E402
from classroom_fixtures import classroom_env, make_window  # noqa: E402, F401

pytestmark = pytest.mark.usefixtures("classroom_env")

DOC = {"schema": "shard-lab-scenario", "version": 1,
       "scenario": {"kind": "all-reduce", "n": 4, "algo": "ring", "nbytes": 4096, "link": "nvlink4"}}


def test_deeply_nested_json_is_refused_with_a_sentence(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 30000 + "]" * 30000)  # 60 KB, under the size limit
    with pytest.raises(scenario_io.ScenarioFileError, match="nested far too deeply"):
        scenario_io.load_scenario(str(path))


def test_deeply_nested_json_opens_a_dialog_not_a_traceback(qtbot, tmp_path):
    w = make_window(qtbot, "all-gather", 4)
    path = tmp_path / "deep.json"
    path.write_text("[" * 30000 + "]" * 30000)
    before = w.model.scenario
    assert w.classroom.open_scenario(str(path)) is False
    assert "nested far too deeply" in w.classroom.last_error
    assert w.model.scenario == before


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "notepad.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(DOC).encode("utf-8"))
    sf = scenario_io.load_scenario(str(path))
    assert (sf.scenario.kind, sf.scenario.n, sf.scenario.nbytes) == ("all-reduce", 4, 4096.0)
