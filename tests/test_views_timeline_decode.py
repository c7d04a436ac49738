"""What a student notices first: the timeline of a run that sends nothing, the decode scenario at any
n, and the TP title's bytes per collective."""

import os
import subprocess
import sys

import numpy as np
import pytest

from app.core.scenarios import build_run, decode_model
from app.state import Playback, Scenario, ScenarioModel
from app.views.timeline.timeline import TimelineView
from simcore.cost_model import tp_degree_problem
from simcore.transformer_lab import TINY
from timeline_reading import assert_bars_are_the_messages, bars_off_screen, compute_bars, plot_texts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timeline(qtbot, **kw):
    model = ScenarioModel(Scenario(**kw))
    v = TimelineView(model, Playback(model))
    qtbot.addWidget(v)
    v.resize(900, 300)
    v.show()
    qtbot.waitExposed(v)
    return v


@pytest.mark.parametrize("kw", [dict(kind="matmul-1", n=4), dict(kind="all-reduce", n=1)])
def test_a_run_that_sends_nothing_gets_a_plain_axis_and_a_sentence(qtbot, kw):
    v = timeline(qtbot, **kw)
    ax = v.plot.getAxis("bottom")
    assert "x1e" not in ax.labelString() and "simulated time (µs)" in ax.labelString()
    (x0, x1), _ = v.plot.getViewBox().viewRange()
    assert x1 - x0 > 0.5  # one whole unit shown, not 1e-12 of one
    assert v.note.isVisible() and "nothing is sent" in v.note.toPlainText()
    # the tick labels the axis paints are plain numbers
    strings = ax.tickStrings([0.0, 0.5, 1.0], ax.scale, 0.5)
    assert strings[-1] in ("1", "1.0") and all("e" not in s for s in strings)
    # the sentence alone: boundaries all at t = 0 would pile their labels on each other
    assert plot_texts(v) == [v.note.toPlainText()]


def test_one_gpu_decoding_sends_nothing_but_its_ops_fill_the_axis(qtbot):
    v = timeline(qtbot, kind="decode", n=1)
    assert v.note.isVisible() and "nothing is sent" in v.note.toPlainText()
    assert compute_bars(v) == 7 * TINY.n_layers + 2  # its ops, on an axis as long as they take
    (x0, x1), _ = v.plot.getViewBox().viewRange()
    assert x1 * v.unit_s == pytest.approx(v.model.run.index.t_total, rel=0.05)


def test_a_run_that_sends_something_has_no_note_and_its_own_unit(qtbot):
    v = timeline(qtbot, kind="all-gather", n=8)
    assert not v.note.isVisible()
    assert "x1e" not in v.plot.getAxis("bottom").labelString()
    assert len(v.model.run.trace.messages) == 8 * 7  # ring all-gather: n(n - 1) messages
    assert_bars_are_the_messages(v, v.model.run.trace, 8)
    # and on screen: the middle of every bar is its data's colour
    bad, sampled = bars_off_screen(v, v.model.run.trace, 8)
    assert sampled == 2 * 8 * 7 and bad == []


@pytest.mark.parametrize("n", [1, 3, 6, 8, 12, 64])
def test_the_decode_scenario_runs_at_any_n_with_a_model_n_can_split(n):
    run = build_run(Scenario(kind="decode", n=n))
    cfg = run.tp.cfg
    assert tp_degree_problem(cfg, n) is None
    assert cfg.n_heads % n == 0 and (cfg.n_kv_heads % n == 0 or n % cfg.n_kv_heads == 0)
    assert cfg.n_heads >= TINY.n_heads and cfg.d_model == TINY.d_model and cfg.n_layers == TINY.n_layers
    if n in (1, 2, 4, 8):
        assert cfg == TINY  # the lecture's model whenever it splits
    assert run.tp.max_abs_diff < 1e-10  # the sharded decode step computes the single-device logits
    assert len(run.trace.collectives) == 2 * cfg.n_layers + 1


def test_the_forward_scenario_keeps_tinys_rule():
    assert decode_model(TINY, 8) is TINY
    with pytest.raises(ValueError, match="8 query heads are not divisible by 64"):
        build_run(Scenario(kind="tp-forward", n=64))


def test_tp_title_states_each_collectives_bytes(qtbot):
    from app.views.ring.ring_view import scenario_title

    sc = Scenario(kind="tp-forward", n=4, nbytes=float(2**20))  # S does not apply: the model's own bytes
    run = build_run(sc)
    ag = [c.nbytes for c in run.trace.collectives if c.op == "all-gather"]
    ar = {c.nbytes for c in run.trace.collectives if c.op == "all-reduce"}
    # [B = 1, T = 8, d_model = 64] bf16 activations: 1 KiB; the [1, 8, vocab = 256] logits: 4 KiB
    assert ar == {1 * 8 * TINY.d_model * 2.0} and ag == [1 * 8 * TINY.vocab * 2.0]
    title = scenario_title(sc, run)
    assert "all-reduce 1 KiB" in title and "all-gather 4 KiB" in title and "S = " not in title


def test_decode_at_64_renders_a_screenshot_and_exits_0(tmp_path):
    out = tmp_path / "decode64.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SHARD_LAB_SETTINGS=str(tmp_path / "s.ini"),
               PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-m", "app", "--scenario", "decode", "--n", "64", "--screenshot",
                           str(out)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "heads" not in proc.stderr
    from PySide6.QtGui import QImage

    img = QImage(str(out))
    assert not img.isNull() and img.width() >= 640
    px = np.array([img.pixelColor(x, img.height() // 2).lightness() for x in range(0, img.width(), 7)])
    assert px.std() > 10  # a picture, not a blank frame
