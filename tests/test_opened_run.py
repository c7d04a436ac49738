"""A saved run opened in the app: shard-lab FILE and File → Open take a trace by its schema, every
view plays it, the explanation says an unknown algorithm's messages and the checker's verdict."""

import json

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QImage  # noqa: E402

from app import scenario_io  # noqa: E402
from app.__main__ import main  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402
from panel_text import shown_text  # noqa: E402
from simcore.comm_sim import Comm, switch  # noqa: E402
from test_checker import broken_ring_allreduce  # noqa: E402
from test_own_collective import hand_ring_allreduce  # noqa: E402
from trace_files import edit_column  # noqa: E402

pytestmark = pytest.mark.usefixtures("english")


@pytest.fixture
def runs(tmp_path):
    good = Comm(switch(4))
    hand_ring_allreduce(good, [np.arange(16.0)] * 4)
    good.trace.save(tmp_path / "ring.json.gz")
    bad = Comm(switch(4))
    broken_ring_allreduce(bad, [np.arange(16.0)] * 4)
    bad.trace.save(tmp_path / "broken.json")
    return tmp_path


def test_a_scenario_and_a_trace_are_told_apart_by_schema(runs):
    rf = scenario_io.load_scenario(str(runs / "ring.json.gz"))
    assert isinstance(rf, scenario_io.RunFile)
    assert rf.run.trace.n_messages == 24 and rf.scenario.kind == "all-reduce" and rf.scenario.n == 4


def test_file_open_plays_a_students_unknown_algorithm_with_words_and_verdict(qtbot, runs):
    w = make_window(qtbot, "all-gather", 8)
    assert w.classroom.open_scenario(str(runs / "broken.json"))
    assert w.model.run.trace.collectives[0].algo == "my-ring"
    w.playback.seek_step(4)  # the all-gather phase: the broken copies
    text = shown_text(w.explain)
    assert "all-reduce “my-ring”: an algorithm the app does not know" in text
    assert "GPU 0 sends chunk 0, 32 B, to GPU 1, which stores a copy of GPU 0's data." in text
    assert "✗ Checked: all-reduce is wrong." in text
    formula = shown_text(w.classroom.formula_dock.widget())
    # the step the mistake is made in, counted as the app counts it ("Step 4 of 6")
    assert "in step 4, GPU 0 sends chunk 0 to GPU 1, which already holds that data in a larger sum" in formula
    assert "lower bound" in formula
    w.playback.seek_step(1)
    assert "which adds it to its partial sum of GPUs {0, 1}." in shown_text(w.explain)


def test_a_known_algorithm_keeps_the_lecture_text_and_adds_the_verdict(qtbot, runs):
    w = make_window(qtbot, "all-gather", 8)
    assert w.classroom.open_scenario(str(runs / "ring.json.gz"))
    w.playback.seek_step(2)
    text = shown_text(w.explain)
    assert "Closed form" in text and "✓ Checked: every chunk ends as all-reduce needs it." in text
    assert "equals the ring closed form" in shown_text(w.classroom.formula_dock.widget())


@pytest.mark.parametrize("edit, words", [
    (lambda d: d.update(version=9), "version 9 is not supported"),
    (lambda d: edit_column(d, "dst", 0, 7), "GPU 7, which does not exist"),
])
def test_a_bad_trace_is_one_sentence_and_the_app_keeps_its_scenario(qtbot, runs, edit, words):
    data = json.loads((runs / "broken.json").read_text())
    edit(data)
    path = runs / "edited.json"
    path.write_text(json.dumps(data))
    w = make_window(qtbot, "all-gather", 8)
    assert w.classroom.open_scenario(str(path)) is False
    assert words in w.classroom.last_error and w.model.scenario.kind == "all-gather"


def test_cli_screenshot_of_a_run_and_a_bad_run(qapp, runs, capsys):
    shot = runs / "s.png"
    assert main([str(runs / "broken.json"), "--step", "3", "--screenshot", str(shot)]) == 0
    assert QImage(str(shot)).width() == 1600
    (runs / "cut.json").write_text((runs / "broken.json").read_text()[:200])
    assert main([str(runs / "cut.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cut.json: not a trace file" in err


def test_the_lecture_recording_steps_through_every_collective_in_order(qtbot, tmp_path):
    import shutil

    from simcore import __main__ as cli
    from test_record import LECTURE

    shutil.copy(LECTURE, tmp_path / "shard_lab.py")
    assert cli.main(["record", str(tmp_path / "shard_lab.py")]) == 0
    w = make_window(qtbot, "all-gather", 8)
    assert w.classroom.open_scenario(str(tmp_path / "shard_lab.trace.json"))
    seen = []
    for k in range(w.playback.n_steps):
        w.playback.seek_step(k + 1)
        c = w.model.run.index.display_collective(w.playback.t)
        if not seen or seen[-1] != c:
            seen.append(c)
    sent = [c.id for c in w.model.run.trace.collectives if c.n_steps > 0]
    assert seen == sent  # every collective that sent something, in the order the script ran them


def test_a_trace_written_by_the_cli_opens(qapp, tmp_path):
    """The issue's first complaint: `python -m simcore trace … --format json` was refused as "not a scenario"."""
    from simcore import __main__ as cli

    path = tmp_path / "t.json.gz"
    assert cli.main(["trace", "--op", "all-gather", "--n", "6", "--format", "json", "--out", str(path)]) == 0
    rf = scenario_io.load_scenario(str(path))
    assert rf.run.trace.n_messages == 30 and rf.scenario.kind == "all-gather" and rf.scenario.n == 6
    assert rf.run.opened.report(0).ok


def test_a_chrome_export_is_named_not_opened(tmp_path):
    from simcore import __main__ as cli

    path = tmp_path / "t.json"
    assert cli.main(["trace", "--n", "4", "--format", "chrome", "--out", str(path)]) == 0
    with pytest.raises(scenario_io.ScenarioFileError, match="is a Chrome trace"):
        scenario_io.load_scenario(str(path))


def test_the_verdict_stays_when_the_language_changes(qtbot, runs):
    from app.i18n import set_language
    from PySide6.QtWidgets import QApplication

    w = make_window(qtbot, "all-gather", 8)
    assert w.classroom.open_scenario(str(runs / "broken.json"))
    panel = w.classroom.formula_dock.widget()
    try:
        set_language(QApplication.instance(), "zh")
        assert "检查未通过" in shown_text(panel)
    finally:
        set_language(QApplication.instance(), "en")
    assert "✗ Checked: all-reduce is wrong." in shown_text(panel)
    assert w.model.update(kind="all-gather")  # back to a built scenario: its closed form, no verdict
    assert "Checked" not in shown_text(panel) and "Ring all-gather" in shown_text(panel)


def test_a_run_too_large_to_show_whole_opens_its_first_collectives_and_says_so(tmp_path, monkeypatch):
    from app.opened_run import load_run
    from simcore import trace_io

    comm = Comm(switch(4))
    for _ in range(2):
        hand_ring_allreduce(comm, [np.arange(16.0)] * 4)
    comm.trace.save(tmp_path / "big.json")
    monkeypatch.setattr(trace_io, "MAX_MESSAGES", 30)
    run = load_run(tmp_path / "big.json")
    assert len(run.trace.collectives) == 1 and run.index is not None
    assert run.opened.note.startswith("big.json: it has 48 messages, more than the 30 the app shows")


def _zh(fn):
    from app.i18n import set_language
    from PySide6.QtWidgets import QApplication

    try:
        set_language(QApplication.instance(), "zh")
        return fn()
    finally:
        set_language(QApplication.instance(), "en")


def test_the_title_and_the_dock_say_what_the_run_is_not_the_stand_in_scenario(qtbot, runs):
    w = make_window(qtbot, "all-gather", 8)
    assert w.classroom.open_scenario(str(runs / "broken.json"))
    w.ring_view.ensure_laid_out()
    title = w.ring_view.title_text
    assert title.startswith("all-reduce · my-ring (your algorithm) · 4 GPUs") and "Ring" not in title
    c = w.controls
    assert c.algo.currentText() == "all-reduce · my-ring (your algorithm)" and not c.algo.isEnabled()
    assert not any(x.isEnabled() for x in (c.n, c.size_combo, c.link, c.machine))
    assert "An opened run (broken.json)" in c.hint.text() and "leave it" in c.hint.text()
    zh_title, zh_hint = _zh(lambda: (w.ring_view.title_text or "", c.hint.text()))
    assert "my-ring" in zh_hint and "打开的运行" in zh_hint
    assert zh_title.startswith("all-reduce · my-ring（你的算法）"), zh_title
    assert w.model.update(kind="all-gather", n=8)  # a scenario chosen: the dock is the dock again
    qtbot.waitUntil(lambda: getattr(w.model.run, "opened", None) is None)
    assert c.n.isEnabled() and c.size_combo.isEnabled() and "opened run" not in c.hint.text()
    assert w.ring_view.title_text.startswith("Ring all-gather")


def test_a_known_algorithm_keeps_its_name_in_the_title(qtbot, runs):
    w = make_window(qtbot, "all-gather", 8)
    assert w.classroom.open_scenario(str(runs / "ring.json.gz"))
    assert w.ring_view.title_text.startswith("Ring all-reduce · 4 GPUs")


def test_a_run_read_partly_says_so_in_the_status_bar_and_the_explanation(qtbot, tmp_path, monkeypatch):
    from simcore import trace_io

    comm = Comm(switch(4))
    for _ in range(2):
        hand_ring_allreduce(comm, [np.arange(16.0)] * 4)
    comm.trace.save(tmp_path / "big.json")
    monkeypatch.setattr(trace_io, "MAX_MESSAGES", 30)
    w = make_window(qtbot, "all-gather", 8)
    assert w.classroom.open_scenario(str(tmp_path / "big.json"))
    said = "big.json: it has 48 messages, more than the 30 the app shows: the first 1 of its 2 collectives"
    assert w.statusBar().currentMessage().startswith(said)
    w.playback.seek_step(2)
    assert said in shown_text(w.explain) and said in w.controls.hint.text()
    zh = _zh(lambda: shown_text(w.explain))
    assert "big.json：它有 48 条消息" in zh


def test_file_open_lists_runs_and_decks_and_opens_a_deck_by_its_schema(qtbot, runs, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from app.deck.model import builtin_path

    asked = []
    deck = builtin_path()
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (asked.append(a), (deck, ""))[1]))
    w = make_window(qtbot, "all-gather", 8)
    w.classroom.act_open.trigger()
    assert "Scenarios, runs and decks (*.json *.json.gz)" in asked[0][3]
    assert w.deck.deck is not None and w.deck.deck.path == deck
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(runs / "ring.json.gz"), "")))
    w.classroom.act_open.trigger()
    assert w.model.run.opened.name == "ring.json.gz"


def test_the_app_words_every_finding_as_the_checker_does_in_english_and_in_chinese(qapp):
    import re

    from app.views.text.generic_text import finding_text
    from test_checker import broken_reports

    found = [(f, rep.op) for rep in broken_reports() for f in rep.findings]
    assert [finding_text(f, op) for f, op in found] == [f.text for f, _ in found]
    zh = _zh(lambda: [finding_text(f, op) for f, op in found])
    for (f, _), text in zip(found, zh):
        assert text != f.text and re.search("[\u4e00-\u9fff]", text), (f.kind, text)
    wrong = next(t for (f, _), t in zip(found, zh) if f.kind == "wrong")
    assert wrong == ("第 1 步之后，GPU 1 的块 0 是 GPU {0, 1} 之和（最后由 GPU 0 发来）；"
                     "all-reduce 需要 GPU {0, 1, 2}")


def test_the_verdict_and_its_time_show_chinese_under_zh(qtbot, runs):
    from app.views.text.generic_text import time_text

    w = make_window(qtbot, "all-gather", 8)
    assert w.classroom.open_scenario(str(runs / "broken.json"))
    rep = w.model.run.opened.report(0)
    assert time_text(rep, w.model.run.trace.collectives[0]) == rep.time_text
    w.playback.seek_step(4)
    panel = w.classroom.formula_dock.widget()
    formula, explain = _zh(lambda: (shown_text(panel), shown_text(w.explain)))
    for text in (formula, explain):
        assert "第 4 步中，GPU 0 把块 0 发给 GPU 1，而对方已经在一个更大的和（GPU {0, 1}）里持有这份数据" in text
        assert "in step" not in text and "after step" not in text
        assert "下界" in text and "lower bound" not in text


def test_a_run_read_partly_and_opened_with_the_window_says_so_in_the_status_bar(qtbot, tmp_path, monkeypatch):
    """shard-lab big.json: the run is the model's before the window exists (app/__main__.py)."""
    from app.main_window import MainWindow
    from app.opened_run import load_run
    from app.state import ScenarioModel
    from simcore import trace_io

    comm = Comm(switch(4))
    for _ in range(2):
        hand_ring_allreduce(comm, [np.arange(16.0)] * 4)
    comm.trace.save(tmp_path / "big.json")
    monkeypatch.setattr(trace_io, "MAX_MESSAGES", 30)
    run = load_run(tmp_path / "big.json")
    model = ScenarioModel(run.scenario)
    model.run = run
    w = MainWindow(model)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    assert w.statusBar().currentMessage().startswith("big.json: it has 48 messages, more than the 30")
