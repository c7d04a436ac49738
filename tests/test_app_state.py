"""State tier: the scenario model and the one playback clock (Qt objects, no widgets)."""

import random

import pytest

from app.core.scenarios import build_run
from app.core.trace_index import TraceIndex
from app.state import Playback, Scenario, ScenarioModel
from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.scenarios import run_collective


@pytest.fixture
def model(qtbot):
    return ScenarioModel(Scenario())


@pytest.fixture
def playback(model):
    pb = Playback(model)
    yield pb
    pb.pause()


# -- ScenarioModel ------------------------------------------------------------------------
def test_default_scenario_is_ring_all_gather_on_8(model):
    assert model.scenario == Scenario("all-gather", 8, "ring", 2.0**20, "nvlink4")
    assert len(model.run.trace.collectives) == 1
    assert len(model.run.trace.messages) == 8 * 7


def test_update_rebuilds_and_emits_changed(qtbot, model):
    with qtbot.waitSignal(model.changed) as sig:
        assert model.update(kind="all-reduce", algo="rd", n=4)
    run = sig.args[0]
    assert run is model.run
    assert model.scenario.kind == "all-reduce" and model.scenario.algo == "rd" and model.scenario.n == 4
    assert {m.algo for m in run.trace.messages} == {"rd"}


@pytest.mark.parametrize("changes, words", [
    ({"n": 0}, "at least 1"),
    ({"n": 257}, "at most 256"),
    ({"nbytes": 1000.0, "n": 3}, "cannot be split into 3"),
    ({"algo": "rd"}, "unknown all-gather algorithm 'rd'; choose one of ring, direct"),
    ({"kind": "matmul-1", "algo": "rd"}, "ring algorithm only"),
    ({"kind": "nope"}, "unknown scenario"),
    ({"link": "carrier-pigeon"}, "unknown link"),
    ({"nbytes": "12 parsecs"}, "cannot read a size"),
])
def test_bad_value_emits_error_and_keeps_the_previous_scenario(qtbot, model, changes, words):
    before, run = model.scenario, model.run
    changed = []
    model.changed.connect(changed.append)
    with qtbot.waitSignal(model.error) as sig:
        assert model.update(**changes) is False
    assert words in sig.args[0]
    assert model.scenario == before and model.run is run and changed == []


def test_kind_without_algorithm_choice_falls_back_to_ring(model):
    assert model.update(kind="all-reduce", algo="innet")
    assert model.update(kind="reduce-scatter")
    assert model.scenario.algo == "ring"


def test_same_scenario_does_not_rebuild(model):
    run = model.run
    assert model.update(n=8)
    assert model.run is run


# -- Playback -----------------------------------------------------------------------------
def test_playback_starts_paused_at_zero_with_one_stop_per_step(playback, model):
    assert playback.t == 0 and not playback.playing
    c = model.run.trace.collectives[0]
    assert playback.n_steps == c.n_steps == 7
    assert playback.stops[-1] == pytest.approx(c.t_end)


def test_play_advances_the_clock_and_pause_stops_it(qtbot, playback):
    with qtbot.waitSignal(playback.playing_changed) as sig:
        playback.play()
    assert sig.args == [True] and playback.playing
    qtbot.waitUntil(lambda: playback.t > 0, timeout=3000)
    with qtbot.waitSignal(playback.playing_changed) as sig:
        playback.pause()
    assert sig.args == [False]
    t = playback.t
    qtbot.wait(50)  # the timer is stopped: nothing may move t
    assert playback.t == t


def test_advance_is_wall_time_times_speed_times_pace(playback, model):
    step = playback.stops[1]
    # 1x: one ring step per WALL_PER_STEP seconds
    playback.advance(Playback.WALL_PER_STEP)
    assert playback.t == pytest.approx(step, rel=1e-9)
    playback.to_start()
    playback.set_speed(2.0)
    playback.advance(Playback.WALL_PER_STEP)
    assert playback.t == pytest.approx(2 * step, rel=1e-9)
    playback.to_start()
    playback.set_speed(0.25)
    playback.advance(Playback.WALL_PER_STEP)
    assert playback.t == pytest.approx(step / 4, rel=1e-9)


def test_speed_is_clamped_and_steps_through_presets(qtbot, playback):
    with qtbot.waitSignal(playback.speed_changed):
        playback.set_speed(100)
    assert playback.speed == 4.0
    playback.set_speed(0.01)
    assert playback.speed == 0.25
    playback.set_speed(1.0)
    playback.faster()
    assert playback.speed == 2.0
    playback.slower()
    playback.slower()
    assert playback.speed == 0.5


def test_step_forward_and_back_visit_every_boundary_and_pause(playback):
    playback.play()
    playback.step_forward()
    assert not playback.playing
    seen = [playback.t]
    while not playback.at_end:
        playback.step_forward()
        seen.append(playback.t)
    assert seen == playback.stops[1:]
    playback.step_forward()  # at the end it stays there
    assert playback.t == playback.t_end
    back = [playback.t]
    while playback.t > 0:
        playback.step_back()
        back.append(playback.t)
    assert back == playback.stops[::-1]


def test_step_back_from_mid_step_goes_to_the_step_start(playback):
    s = playback.stops
    playback.seek((s[2] + s[3]) / 2)
    assert playback.step_index == 2
    playback.step_back()
    assert playback.t == s[2]
    playback.seek((s[2] + s[3]) / 2)
    playback.step_forward()
    assert playback.t == s[3]


def test_seek_clamps_and_jumps(qtbot, playback):
    with qtbot.waitSignal(playback.time_changed) as sig:
        playback.seek(-1.0)
        playback.seek(playback.t_end * 10)
    assert sig.args == [playback.t_end] and playback.at_end
    playback.to_start()
    assert playback.t == 0
    playback.to_end()
    assert playback.t == playback.t_end


def test_end_without_loop_pauses_and_play_restarts(qtbot, playback):
    playback.play()
    playback.advance(1e9)
    assert playback.t == playback.t_end and not playback.playing
    playback.play()
    assert playback.t == 0 and playback.playing


def test_loop_wraps_around(playback):
    playback.set_loop(True)
    playback.play()
    per_wall = playback.speed * playback.sim_per_wall
    playback.seek(playback.t_end * 0.9)
    playback.advance(playback.t_end * 0.3 / per_wall)
    assert playback.playing
    assert playback.t == pytest.approx(playback.t_end * 0.2, rel=1e-6)


def test_new_scenario_pauses_and_keeps_the_step(qtbot, playback, model):
    playback.seek_step(3)
    playback.play()
    with qtbot.waitSignal(playback.timeline_changed):
        model.update(n=16)
    assert not playback.playing
    assert playback.step_index == 3 and playback.n_steps == 15
    assert playback.t == playback.stops[3]


def test_nothing_to_play_when_there_is_no_communication(qtbot, playback, model):
    model.update(kind="matmul-1")
    assert playback.t_end == 0 and playback.n_steps == 0
    playback.play()
    assert not playback.playing
    playback.step_forward()
    playback.step_back()
    assert playback.t == 0


# -- the trace index the views read -------------------------------------------------------
@pytest.mark.parametrize("op, algo", [("all-gather", "ring"), ("reduce-scatter", "ring")]
                         + [("all-reduce", a) for a in ALLREDUCE_ALGOS])
@pytest.mark.parametrize("n", [2, 5, 8])
def test_index_holdings_equal_the_engine_query_in_any_order(op, algo, n):
    tr = run_collective(op, n, 2**16, algo).trace
    idx = TraceIndex(tr)
    times = sorted({0.0, tr.t_end} | {m.t_end for m in tr.messages} | {m.t_start for m in tr.messages})
    times += [(a + b) / 2 for a, b in zip(times, times[1:])]
    random.Random(n).shuffle(times)  # backwards and forwards: memoisation must not matter
    for t in times:
        assert idx.holdings(0, t) == tr.holdings(0, t=t)


def test_index_bytes_moved_and_in_flight():
    tr = run_collective("all-reduce", 4, 2**16, "ring").trace
    idx = TraceIndex(tr)
    for t in (0.0, idx.stops[1] * 0.5, idx.stops[2], tr.t_end):
        assert idx.bytes_moved(t) == pytest.approx(sum(m.nbytes for m in tr.messages if m.t_end <= t))
        assert list(idx.in_flight(t)) == [i for i, m in enumerate(tr.messages) if m.t_start <= t < m.t_end]


def test_build_run_matmul_cases_are_correct_and_need_their_collective():
    needs = {1: [], 2: ["all-gather"], 3: ["all-reduce"], 4: ["all-gather"]}
    for case, ops in needs.items():
        run = build_run(Scenario(kind=f"matmul-{case}", n=4))
        assert [c.op for c in run.trace.collectives] == ops
        assert run.matmul.max_err < 1e-12
    # the size control times the toy collective as if it moved S bytes
    run = build_run(Scenario(kind="matmul-2", n=4, nbytes=2.0**20))
    assert run.trace.collectives[0].nbytes == pytest.approx(2.0**20)


def test_tp_forward_run_is_the_whole_forward_with_its_error():
    pytest.importorskip("simcore.tensor_parallel")
    tl = pytest.importorskip("simcore.transformer_lab")
    for n in (1, 2, 4, 8):
        run = build_run(Scenario(kind="tp-forward", n=n))
        L = tl.TINY.n_layers
        labels = [c.label for c in run.trace.collectives]
        assert [c.op for c in run.trace.collectives] == ["all-reduce"] * (2 * L) + ["all-gather"]
        assert labels[:2] == ["layer 0 attn", "layer 0 mlp"] and labels[-1] == "logits"
        assert run.tp.max_abs_diff < 1e-10
    with pytest.raises(ValueError):
        build_run(Scenario(kind="tp-forward", n=5))


def test_decode_run_is_one_cached_step():
    pytest.importorskip("simcore.tensor_parallel")
    pytest.importorskip("simcore.transformer_lab")
    run = build_run(Scenario(kind="decode", n=4))
    assert run.tp.decode and run.tp.max_abs_diff < 1e-10
    assert run.trace.collectives[-1].label == "logits"
