"""
Bad input at the engine level: every mistake a lecturer or student can type raises a
ValueError that names the quantity and the value, before any work is done, and leaves what
was already simulated untouched. (The command line's one-line errors: test_cli.py.)
"""

import math
import os
import subprocess
import sys
from re import search as re_search

import numpy as np
import pytest

from simcore.algorithms import ALLREDUCE_ALGOS, message_count, t_formula
from simcore.collectives import allgather_ring, reduce_scatter_ring
from simcore.comm_sim import Comm
from simcore.links import NVLINK4, LinkSpec
from simcore.topology import MAX_DEVICES, switch
from simcore.scenarios import parse_bytes, run_collective
from simcore.sharding import all_gather, all_reduce, make_comm, matmul_case3, reduce_scatter, shard

NAN, INF = float("nan"), float("inf")


# ---------------------------------------------------------------------------------------
# The number of devices
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,msg", [
    (0, "at least 1, got 0"),
    (-1, "at least 1, got -1"),
    (100_000, "100000 devices is more than"),
    (MAX_DEVICES + 1, "more than this simulator handles"),
    (2.5, "whole number"),
    (NAN, "whole number"),
    (True, "whole number"),
    ("8", "whole number"),
    (None, "whole number"),
])
def test_bad_device_count(n, msg):
    with pytest.raises(ValueError, match=msg):
        switch(n)
    with pytest.raises(ValueError, match=msg):
        make_comm(n)
    with pytest.raises(ValueError, match=msg):
        run_collective("all-reduce", n, "1MiB", "ring")


def test_numpy_integer_device_count_is_fine():
    assert switch(np.int64(4)).n == 4 and type(switch(np.int64(4)).n) is int


@pytest.mark.parametrize("n", [0, -2, 2.0, None])
def test_shard_rejects_bad_device_count(n):
    with pytest.raises(ValueError, match="number of devices"):
        shard(np.zeros(8), 0, n)


def test_shard_over_100000_devices_is_a_split_error():
    with pytest.raises(ValueError, match="length 8, which is not divisible by 100000 devices"):
        shard(np.zeros(8), 0, 100_000)


@pytest.mark.parametrize("n", [0, -1])
def test_closed_form_rejects_bad_n(n):
    with pytest.raises(ValueError, match="n must be >= 1"):
        t_formula("ring", n, 1e6, 1e-6, 1e9)
    with pytest.raises(ValueError, match="n must be >= 1"):
        t_formula("ring", np.array([4, n]), 1e6, 1e-6, 1e9)


# ---------------------------------------------------------------------------------------
# Message sizes, byte_scale, links
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [NAN, -1, -1.5, 0, INF, "-1", "nan", "inf", "NaN MiB", "lots", "", "1XB"])
def test_bad_message_size(size):
    with pytest.raises(ValueError, match="size"):
        parse_bytes(size)
    for op, algo in (("all-gather", "ring"), ("all-reduce", "rd")):
        with pytest.raises(ValueError, match="size"):
            run_collective(op, 4, size, algo)


@pytest.mark.parametrize("size", [NAN, -1, INF])
def test_closed_form_rejects_bad_message_size(size):
    # the decode-latency view feeds t_formula directly; a NaN there becomes an empty plot
    with pytest.raises(ValueError, match="size|bytes"):
        t_formula("ring", 4, size, 1e-6, 1e9)
    with pytest.raises(ValueError, match="size|bytes"):
        t_formula("ring", np.arange(1, 9), np.full(8, size), 1e-6, 1e9)  # the vectorized form too


@pytest.mark.parametrize("n", [0, -3, 2.5, True])
def test_message_count_rejects_bad_n(n):
    with pytest.raises(ValueError, match="n must be"):
        message_count("ring", n)


@pytest.mark.parametrize("scale", [NAN, -1, 0, INF])
def test_bad_byte_scale(scale):
    with pytest.raises(ValueError, match="byte_scale"):
        Comm(switch(4), byte_scale=scale)
    with pytest.raises(ValueError, match="byte_scale"):
        make_comm(4, byte_scale=scale)


@pytest.mark.parametrize("alpha", [NAN, -1e-6, INF])
def test_bad_link_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        LinkSpec("bad", alpha, 1e9)


@pytest.mark.parametrize("bw", [NAN, -1, 0, INF])
def test_bad_link_bandwidth(bw):
    with pytest.raises(ValueError, match="bandwidth"):
        LinkSpec("bad", 1e-6, bw)


@pytest.mark.parametrize("op,algo,msg", [
    ("broadcast", "ring", "unknown collective"),
    ("all-reduce", "star", "unknown all-reduce algorithm"),
    ("all-reduce", "tree", "cannot run on switch"),  # NCCL's Tree (issue 32) runs across nodes
    ("all-gather", "rd", "unknown all-gather algorithm .rd.; choose one of ring, direct"),
        ("all-reduce", "hier", "cannot run on switch"),
])
def test_unknown_collective_or_algorithm(op, algo, msg):
    with pytest.raises(ValueError, match=msg):
        run_collective(op, 4, "1MiB", algo)


def test_unknown_link():
    with pytest.raises(ValueError, match="unknown link"):
        run_collective("all-gather", 4, "1MiB", "ring", link="carrier pigeon")


# ---------------------------------------------------------------------------------------
# Shapes that do not split, shapes that do not match
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,axis,n", [((4, 6), 1, 4), ((5,), 0, 2), ((3, 8, 7), -1, 8), ((1,), 0, 3)])
def test_shapes_that_do_not_split(shape, axis, n):
    x = np.zeros(shape)
    length = shape[axis]
    with pytest.raises(ValueError, match=f"length {length}, which is not divisible by {n} devices"):
        shard(x, axis, n)
    with pytest.raises(ValueError, match=f"length {length}, which is not divisible by {n} devices"):
        reduce_scatter(make_comm(n), [x] * n, axis)
    with pytest.raises(ValueError, match=f"length {length} is not divisible by {n} devices"):
        reduce_scatter_ring(make_comm(n), [np.zeros(length)] * n)


def test_axis_that_does_not_exist():
    with pytest.raises(ValueError, match="axis 2 does not exist"):
        shard(np.zeros((4, 4)), 2, 2)
    with pytest.raises(ValueError, match="axis -3 does not exist"):
        all_gather(make_comm(2), [np.zeros((2, 2))] * 2, -3)


def test_case3_scatter_needs_divisible_columns():
    A, B = np.zeros((2, 4)), np.zeros((4, 3))
    with pytest.raises(ValueError, match="length 3, which is not divisible by 2"):
        matmul_case3(make_comm(2), shard(A, 1, 2), shard(B, 0, 2), scatter_axis=1)


@pytest.mark.parametrize("fn", [
    lambda c, a: all_gather(c, a, 0),
    lambda c, a: reduce_scatter(c, a, 0),
    lambda c, a: all_reduce(c, a),
])
def test_devices_must_hold_the_same_shape(fn):
    with pytest.raises(ValueError, match="same shape"):
        fn(make_comm(2), [np.zeros(4), np.zeros(6)])
    with pytest.raises(ValueError, match="0 devices"):
        fn(make_comm(2), [])


@pytest.mark.parametrize("algo", sorted(ALLREDUCE_ALGOS))
def test_array_count_must_match_devices(algo):
    with pytest.raises(ValueError, match="got 2 arrays for 3 devices"):
        ALLREDUCE_ALGOS[algo][1](make_comm(3), [np.zeros(3)] * 2)
    with pytest.raises(ValueError, match="1-D"):
        ALLREDUCE_ALGOS[algo][1](make_comm(2), [np.zeros((2, 2))] * 2)


def test_all_gather_owner_must_be_a_permutation():
    with pytest.raises(ValueError, match="every chunk index 0..2 once"):
        allgather_ring(make_comm(3), [np.zeros(2)] * 3, {0: 0, 1: 0, 2: 1})
    with pytest.raises(ValueError, match="got 2 chunks for 3 devices"):
        allgather_ring(make_comm(3), [np.zeros(2)] * 2, {0: 0, 1: 1})


def test_unknown_algorithm_in_all_reduce():
    with pytest.raises(ValueError, match="unknown all-reduce algorithm 'magic'; choose one of ring"):
        all_reduce(make_comm(2), [np.zeros(2)] * 2, "magic")


# ---------------------------------------------------------------------------------------
# Nothing already simulated is damaged by a call that fails
# ---------------------------------------------------------------------------------------
def test_failed_call_leaves_trace_and_clock_untouched():
    comm = Comm(switch(4, NVLINK4))
    x = np.arange(16.0)
    all_gather(comm, shard(x, 0, 4), 0)
    before = (comm.time, list(comm.trace.messages), list(comm.trace.collectives), list(comm.ready))
    bad_calls = [
        lambda: reduce_scatter(comm, [np.zeros(6)] * 4, 0),
        lambda: reduce_scatter_ring(comm, [np.zeros(6)] * 4),
        lambda: allgather_ring(comm, [np.zeros(2)] * 4, {0: 0, 1: 1, 2: 2, 3: 2}),
        lambda: all_reduce(comm, [np.zeros(2)] * 3),
        lambda: all_reduce(comm, [np.zeros(2)] * 4, "magic"),
        lambda: all_gather(comm, [np.zeros(2), np.zeros(3), np.zeros(2), np.zeros(2)], 0),
    ]
    for call in bad_calls:
        with pytest.raises(ValueError):
            call()
        assert (comm.time, comm.trace.messages, comm.trace.collectives, comm.ready) == before
    # and the comm still works afterwards
    out = all_reduce(comm, [x] * 4)
    np.testing.assert_array_equal(out[0], 4 * x)
    assert len(comm.trace.collectives) == 2 and comm.time > before[0]


def test_inputs_are_never_modified():
    parts = [np.arange(8.0) + d for d in range(4)]
    copies = [p.copy() for p in parts]
    for algo in ALLREDUCE_ALGOS:
        all_reduce(make_comm(4), parts, algo)
    reduce_scatter(make_comm(4), parts, 0)
    reduce_scatter_ring(make_comm(4), parts)
    for p, c in zip(parts, copies):
        np.testing.assert_array_equal(p, c)


def test_nan_data_is_carried_not_hidden():
    # NaN in the data is the student's business: it is summed like numpy does, not dropped
    out = all_reduce(make_comm(2), [np.array([NAN, 1.0])] * 2)
    assert math.isnan(out[0][0]) and out[0][1] == 2.0


# ---------------------------------------------------------------------------------------
# The same mistakes in the app: a clear sentence, the previous scenario kept, the app running.
# (Qt is imported inside these tests so that the engine tests above never need it. A corrupt
# scenario file and an unwritable export path: tests/test_classroom_scenario_io.py and
# tests/test_classroom_export.py.)
# ---------------------------------------------------------------------------------------
@pytest.fixture
def app_window(qtbot, app_env):
    """make(n) -> a shown MainWindow; every window made is really deleted afterwards."""
    from PySide6.QtCore import QCoreApplication, QEvent

    from app.main_window import MainWindow
    from app.state import Scenario, ScenarioModel

    made = []

    def make(n=8):
        w = MainWindow(ScenarioModel(Scenario(kind="all-gather", n=n)))
        made.append(w)
        w.resize(1600, 900)
        w.show()
        qtbot.waitExposed(w)
        return w

    yield make
    # closing alone leaves a MainWindow alive, still connected to the global theme and
    # language notifiers: later tests would rebuild it on every switch
    for w in made:
        w.close()
        w.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)


BAD_CHANGES = [
    ({"n": 0}, "at least 1"),
    ({"n": 100_000}, "at most"),
    ({"n": -1}, "at least 1"),
    ({"nbytes": NAN}, "size"),
    ({"nbytes": -1.0}, "size"),
    ({"nbytes": "NaN"}, "size"),
    ({"nbytes": "-1"}, "size"),
    ({"kind": "all-gather", "nbytes": 1000.0, "n": 3}, "cannot be split"),
]


def test_app_refuses_bad_values_and_keeps_running(app_window):
    w = app_window()  # one window for every case: building it is the slow part
    for changes, msg in BAD_CHANGES:
        before_sc, before_run = w.model.scenario, w.model.run
        w.playback.step_forward()
        t = w.playback.t
        errors = []
        w.model.error.connect(errors.append)
        try:
            assert w.model.update(**changes) is False, changes
        finally:
            w.model.error.disconnect(errors.append)
        assert len(errors) == 1 and re_search(msg, errors[0]), (changes, errors)
        assert w.model.scenario is before_sc and w.model.run is before_run, changes
        assert w.playback.t == t, changes  # the clock did not move either
        assert errors[0] in w.statusBar().currentMessage(), changes  # said where the user looks
        w.playback.to_start()
        w.playback.step_forward()  # still alive
        assert w.playback.t > 0, changes
    assert w.model.update(n=4) is True and w.model.scenario.n == 4


def test_typing_a_bad_size_shows_the_reason_and_changes_nothing(app_window):
    w = app_window()
    combo = w.controls.size_combo
    for i, text in enumerate(["-1", "nan", "lots", "0", "1e400", ""]):
        before = w.model.scenario
        combo.setEditText(text)
        combo.lineEdit().editingFinished.emit()
        assert w.model.scenario == before, text
        if text:
            assert w.controls.error.text().strip(), f"the control panel must say why {text!r} was refused"
        good = ("64 KiB", "2 MiB")[i % 2]  # the next good change clears the complaint
        combo.setEditText(good)
        combo.lineEdit().editingFinished.emit()
        assert w.model.scenario.nbytes == parse_bytes(good), text
        assert not w.controls.error.text().strip(), text


def test_the_device_field_refuses_what_it_cannot_draw_and_says_so(app_window):
    from app.core.scenarios import MAX_N

    w = app_window()
    for bad in (0, MAX_N + 1, 100_000):
        w.controls.n.setValue(bad)
        assert w.model.scenario.n == 8  # nothing changed …
        assert w.controls.n.value() == bad  # … what was typed is still there …
        assert f"1 to {MAX_N}" in w.controls.error.text()  # … and the limits are said
    w.controls.n.stepBy(1)  # the arrows stay inside the limits
    assert w.model.scenario.n == MAX_N


def test_closing_the_window_during_an_export(app_window, app_env):
    """The export either finishes a whole file or leaves the old one untouched; nothing crashes."""
    pytest.importorskip("imageio")
    from app.classroom import export

    w = app_window(n=4)
    path = app_env / "ring.gif"
    path.write_bytes(b"an older export")
    closed = []

    def progress(done, total):
        if done == 3:
            w.close()
            closed.append(done)
        return True

    try:
        frames = export.export_animation(w, str(path), frames_per_step=1, progress=progress)
    except export.ExportError:
        frames = None
    assert closed == [3]
    if frames is None:  # cancelled by the close: the older file is as it was
        assert path.read_bytes() == b"an older export"
    else:  # finished: a whole GIF with every planned frame
        iio = pytest.importorskip("imageio.v3")
        assert iio.imread(path, index=None).shape[0] == frames == 4
    assert [f for f in os.listdir(app_env) if f.startswith(".shard-lab-")] == []
    assert not w.isVisible()


@pytest.mark.parametrize("args,msg", [
    (["--n", "0"], "at least 1"),
    (["--n", "100000"], "at most"),
    (["--bytes", "nan"], "size"),
    (["--bytes", "-1"], "size"),
    (["--scenario", "all-gather", "--n", "3", "--bytes", "1000"], "cannot be split"),
])
def test_app_command_line_bad_values_one_line_exit_2(tmp_path, args, msg):
    # --screenshot makes a wrongly accepted value exit too, instead of opening a window
    shot = tmp_path / "x.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SHARD_LAB_SETTINGS=str(tmp_path / "s.ini"))
    out = subprocess.run([sys.executable, "-m", "app", *args, "--screenshot", str(shot)], capture_output=True,
                         text=True, env=env, timeout=120, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = [ln for ln in out.stderr.splitlines() if ln.strip() and "propagateSizeHints" not in ln]
    assert len(lines) == 1 and re_search(msg, lines[0]) and "Traceback" not in out.stderr, out.stderr
    assert not shot.exists()


# ---------------------------------------------------------------------------------------
# Numbers in files: one rule (simcore.file_numbers) for trace files and scenario files, said in
# one sentence by the command line, the app and a deck's scene
# ---------------------------------------------------------------------------------------
def _saved_run(tmp_path, name="good.json") -> dict:
    import json

    comm = Comm(switch(4))
    ALLREDUCE_ALGOS["ring"].fn(comm, [np.arange(8.0)] * 4)
    comm.trace.save(tmp_path / name)
    return json.loads((tmp_path / name).read_text())


def _edited(data: dict, where: str, value) -> dict:
    """A copy of a saved trace's dict with one field set: "coll.nbytes", "link.bw", "coll.t_end"."""
    import copy

    d = copy.deepcopy(data)
    part, key = where.split(".")
    (d["collectives"][0] if part == "coll" else d["meta"]["link"])[key] = value
    return d


# (field, value as the file writes it, what the sentence says)
BAD_TRACE_NUMBERS = [
    ("coll.nbytes", 10**400, r'"collectives\[0\]\.nbytes" is a number with 401 digits'),
    ("coll.nbytes", "1e400", r'"collectives\[0\]\.nbytes" must be a finite number, not Infinity'),
    ("coll.nbytes", -64.0, r'"collectives\[0\]\.nbytes" must be zero or more, not -64.0'),
    ("coll.nbytes", 1e300, r'"collectives\[0\]\.nbytes" must be at most 9,007,199,254,740,992, not 1e\+300'),
    ("coll.t_end", "NaN", r'"collectives\[0\]\.t_end" must be a finite number, not NaN'),
    ("link.bw", 1e-300, r'"meta\.link\.bw" must be bytes per second from 1e\+06 \(1 MB/s\) to 1e\+14'),
    ("link.alpha", 5.0, r'"meta\.link\.alpha" must be seconds per message from 0 to 1, not 5.0'),
]


def _write_bad(tmp_path, data, where, value, name="bad.json"):
    import json

    marker = 7.123456789  # a literal json.dumps cannot write (1e400, NaN) goes in by text
    text = json.dumps(_edited(data, where, marker if isinstance(value, str) else value))
    if isinstance(value, str):
        text = text.replace(repr(marker), value)
    (tmp_path / name).write_text(text)
    return tmp_path / name


@pytest.mark.parametrize("where,value,msg", BAD_TRACE_NUMBERS)
def test_a_trace_file_with_a_number_out_of_range_is_refused_in_one_sentence(tmp_path, where, value, msg):
    from simcore.file_numbers import BadNumber
    from simcore.trace import Trace

    path = _write_bad(tmp_path, _saved_run(tmp_path), where, value)
    with pytest.raises(BadNumber, match="^bad.json: " + msg) as e:  # before: OverflowError, or opened
        Trace.load(path)
    assert "\n" not in str(e.value)


def test_scenario_and_trace_files_refuse_the_same_link_by_the_same_rule(tmp_path, app_env):
    """bw = 1e-300: the trace opened ("2.97e-308× the lower bound inf µs") while a scenario was refused."""
    import json

    from app import scenario_io
    from simcore.file_numbers import BadNumber
    from simcore.trace import Trace

    doc = {"schema": "shard-lab-scenario", "version": 1,
           "scenario": {"kind": "all-reduce", "n": 4, "algo": "ring", "nbytes": 1048576, "link": "slow",
                        "link_spec": {"name": "slow", "alpha": 1e-6, "bw": 1e-300}}}
    with pytest.raises(scenario_io.ScenarioFileError) as scen:
        scenario_io.loads(json.dumps(doc))
    path = _write_bad(tmp_path, _saved_run(tmp_path), "link.bw", 1e-300)
    with pytest.raises(BadNumber) as tr:
        Trace.load(path)
    rule = "must be bytes per second from 1e+06 (1 MB/s) to 1e+14 (100 TB/s), not 1e-300."
    assert str(scen.value) == '"link_spec.bw" ' + rule and str(tr.value) == 'bad.json: "meta.link.bw" ' + rule


@pytest.mark.parametrize("where,value,msg", BAD_TRACE_NUMBERS[:3] + BAD_TRACE_NUMBERS[4:5])
def test_the_command_line_says_a_bad_trace_in_one_line(tmp_path, where, value, msg):
    path = _write_bad(tmp_path, _saved_run(tmp_path), where, value)
    shot = tmp_path / "x.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SHARD_LAB_SETTINGS=str(tmp_path / "s.ini"))
    out = subprocess.run([sys.executable, "-m", "app", str(path), "--screenshot", str(shot)], capture_output=True,
                         text=True, env=env, timeout=120, cwd=os.path.dirname(os.path.dirname(__file__)))
    lines = [ln for ln in out.stderr.splitlines() if ln.strip() and "propagateSizeHints" not in ln]
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr  # before: OverflowError's traceback
    assert len(lines) == 1 and re_search("bad.json: " + msg, lines[0]), lines
    assert not shot.exists()


def test_the_app_says_a_bad_trace_and_keeps_running(app_window, tmp_path):
    w = app_window(n=4)
    data = _saved_run(tmp_path)
    assert w.classroom.open_scenario(str(tmp_path / "good.json"))
    assert "good.json" in w.statusBar().currentMessage()
    path = _write_bad(tmp_path, data, "coll.nbytes", 10**400)
    run = w.model.run
    assert w.classroom.open_scenario(str(path)) is False  # before: an OverflowError to the event loop
    said = w.statusBar().currentMessage()
    assert said.startswith("bad.json: ") and "401 digits" in said and "good.json" not in said
    assert w.classroom.last_error == said  # the message box says the same
    assert w.model.run is run  # the run on screen stays
    w.playback.step_forward()  # and the app runs on
    assert w.playback.t > 0


def test_a_deck_scene_on_a_bad_trace_is_named_and_skipped(app_env, tmp_path):
    import json

    from app.deck.model import builtin_path
    from app.deck.scene_open import bad_scenes, load_deck

    _write_bad(tmp_path, _saved_run(tmp_path), "coll.nbytes", "1e400", name="huge.json")
    doc = json.load(open(builtin_path(), encoding="utf-8"))
    doc["scenes"] = doc["scenes"][:3]
    doc["scenes"][1] = {"title": {"en": "My run", "zh": "我的运行"}, "run": "huge.json",
                        "points": [{"en": "a", "zh": "甲"}, {"en": "b", "zh": "乙"}]}
    (tmp_path / "deck.json").write_text(json.dumps(doc), encoding="utf-8")
    deck = load_deck(str(tmp_path / "deck.json"))  # before: OverflowError refused the whole deck
    bad = bad_scenes(deck)
    assert list(bad) == [1]
    assert bad[1].startswith("Scene 2 (My run) cannot open: huge.json: ") and "must be a finite number" in bad[1]


# ---------------------------------------------------------------------------------------
# A typed value is taken whole or refused, with a sentence under its field that stays until the
# value changes; S never drifts (app/controls.py's rule for S and n)
# ---------------------------------------------------------------------------------------
def _type_into(qtbot, widget, text):
    from PySide6.QtCore import Qt

    edit = widget.lineEdit()
    widget.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)  # key by key, through the field's validator
    qtbot.keyClick(edit if widget.isEditable() else widget, Qt.Key.Key_Return) if hasattr(widget, "isEditable") \
        else qtbot.keyClick(widget, Qt.Key.Key_Return)


def _under(panel, label, field, next_field):
    """The label lies in the rows between `field` and the next field of the form (beside its field)."""
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()  # the form lays its rows out again for the label's new text
    g = label.geometry()
    return label.isVisible() and field.geometry().bottom() <= g.top() and g.bottom() <= next_field.geometry().top()


@pytest.mark.parametrize("typed,says", [("1e9", "1e9 is not a whole number"), ("-1", "-1 is outside that range"),
                                        ("3.5", "3.5 is not a whole number"), ("0", "0 is outside that range")])
def test_a_typed_n_is_taken_whole_or_refused_under_its_field(app_window, qtbot, typed, says):
    w = app_window()
    c = w.controls
    _type_into(qtbot, c.n, typed)
    assert c.n.lineEdit().text() == typed  # before: "1e9" was read as 19, "-1" as 1
    assert w.model.scenario.n == 8
    assert says in c.error.text() and _under(c, c.error, c.n, c.size_combo), c.error.text()
    _type_into(qtbot, c.n, "4")  # the next good value: taken, and the sentence goes
    assert w.model.scenario.n == 4 and not c.error.text()


@pytest.mark.parametrize("typed,says", [("7 B", "7 B cannot be split into 8 equal whole-byte chunks: the nearest "
                                                "size that does is 8 B"),
                                        ("1e30", "at most 1 TiB"), ("1001", "the nearest sizes that do are 1,000 B "
                                                                            "and 1,008 B")])
def test_a_typed_size_is_taken_whole_or_refused_under_its_field(app_window, qtbot, typed, says):
    w = app_window()
    c = w.controls
    before = w.model.scenario
    _type_into(qtbot, c.size_combo, typed)
    assert w.model.scenario is before and c.size_combo.currentText() == typed  # kept beside its reason
    assert says in c.error.text() and _under(c, c.error, c.size_combo, c.machine), c.error.text()
    assert says not in w.statusBar().currentMessage() or c.error.text()  # the label holds it, not a brief bar
    _type_into(qtbot, c.size_combo, "64 KiB")
    assert w.model.scenario.nbytes == 65536 and not c.error.text()


def test_s_never_drifts_and_the_field_shows_the_size_in_use(app_window, qtbot):
    w = app_window()
    c = w.controls
    assert w.model.scenario.nbytes == 2**20 and c.size_combo.currentText() == "1 MiB"
    seen = []
    for n in (3, 72, 256, 8):
        _type_into(qtbot, c.n, str(n))
        sc = w.model.scenario
        seen.append((sc.n, sc.nbytes, c.size_combo.currentText(), c.size_note.text()))
        if n == 3:  # the line under S says which size is used and why
            assert _under(c, c.size_note, c.size_combo, c.machine)
            c.size_combo.lineEdit().editingFinished.emit()  # S's field left without typing: nothing asked
    # before: 1048575 shown as "1024 KiB"; after 72 and 256 S was 1023.96 / 1023.75 KiB and stayed so at n = 8
    assert seen[0][:3] == (3, 1048575.0, "1048575 B")
    assert seen[0][3] == "S is 1,048,575 B: the nearest size under 1 MiB that splits into 3 equal whole-byte chunks."
    assert seen[1][:3] == (72, 1048536.0, "1048536 B") and "splits into 72" in seen[1][3]
    assert seen[2] == (256, 2.0**20, "1 MiB", "") and seen[3] == (8, 2.0**20, "1 MiB", "")
    assert not c.size_note.isVisible()


def test_the_command_line_and_the_app_refuse_a_size_that_does_not_split_alike(app_window, qtbot, tmp_path):
    w = app_window()
    _type_into(qtbot, w.controls.n, "3")  # S becomes 1,048,575 B (said under S)
    _type_into(qtbot, w.controls.size_combo, "1 MiB")  # asked for by name: refused, as --bytes is
    said = w.controls.error.text()
    assert said == ("1 MiB (1,048,576 B) cannot be split into 3 equal whole-byte chunks: the nearest sizes that do "
                    "are 1,048,575 B and 1,048,578 B")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SHARD_LAB_SETTINGS=str(tmp_path / "s.ini"))
    out = subprocess.run([sys.executable, "-m", "app", "--scenario", "all-gather", "--n", "3", "--bytes", "1MiB",
                          "--screenshot", str(tmp_path / "x.png")], capture_output=True, text=True, env=env,
                         timeout=120, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 2 and said in out.stderr, out.stderr


def test_the_command_line_starts_with_the_default_size_fitted_and_says_so(tmp_path, app_env):
    """`shard-lab --n 3` (no --bytes): 1 MiB does not split into 3, the run uses 1,048,575 B, and the line
    under S says so, as when n is changed in the window."""
    from PySide6.QtWidgets import QApplication  # noqa: F401 (the app_env fixture's application)

    from app.controls import ControlPanel
    from app.core.scenarios import fit_bytes
    from app.state import Scenario, ScenarioModel

    sc = Scenario(kind="all-gather", n=3, nbytes=fit_bytes(2.0**20, 3, "all-gather"))  # as __main__ makes it
    panel = ControlPanel(ScenarioModel(sc))
    assert panel.size_combo.currentText() == "1048575 B"
    assert panel.size_note.text() == ("S is 1,048,575 B: the nearest size under 1 MiB that splits into 3 equal "
                                      "whole-byte chunks.")
    panel.deleteLater()


def test_the_title_states_the_size_in_use_not_a_rounded_one(qtbot):
    """n = 3 takes 1,048,575 B (the nearest size under 1 MiB that splits into 3 whole-byte chunks): the
    ring's title said "S = 1024 KiB", a size that does not split. A size a unit names exactly keeps it."""
    from app.core.scenarios import build_run
    from app.state import Scenario
    from app.views.ring.ring_texts import scenario_title

    for n, S, want in ((3, 1048575, "S = 1,048,575 B"), (8, 2**20, "S = 1 MiB"), (4, 3 * 2**10, "S = 3 KiB")):
        sc = Scenario(kind="all-gather", n=n, nbytes=S)
        title = scenario_title(sc, build_run(sc))
        assert want in title, title
