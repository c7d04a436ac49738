"""All-to-all in the app: the scenario renders, its pixels show every block (src → dst) on its way to
its own GPU and the buffers filling the transpose, and the texts name the right GPUs."""

import pytest
from PySide6.QtGui import QImage

from app.__main__ import main
from app.core.frame import frame_at
from app.core.predict import RECEIVER, PredictGame
from app.core.scenarios import Scenario, validate
from ring_pixels import blocks_painted_wrong, device_coloured_share, grab, message_block, painted_as
from simcore.all_to_all import a2a_block, a2a_chunk
from simcore.scenarios import run_collective
from test_app_ring_view import engine, make_view, shown

pytestmark = pytest.mark.usefixtures("english")


@pytest.mark.parametrize("algo", ["direct", "pairwise"])
@pytest.mark.parametrize("n", [4, 8])
def test_ring_view_moves_every_block_to_its_own_gpu(qtbot, algo, n):
    # blocks of 8 MiB: bytes, not α, set the pace, so a round's blocks do not pile up behind the next ones
    model, pb, view = make_view(qtbot, kind="all-to-all", n=n, algo=algo, nbytes=float(n * 2**23))
    tr = model.run.trace
    c = tr.collectives[0]
    assert c.n_chunks == n * n
    # before: GPU d holds its own row of blocks (d → 0 … d → n−1), drawn in its colour
    assert shown(view, n) == engine(tr.holdings(0, step=-1), n) == {
        d: {a2a_chunk(d, j, n): {d} for j in range(n)} for d in range(n)}
    seen = set()
    for k in range(c.n_steps):
        t0, t1 = tr.step_times(0)[k]
        pb.seek(t0 + 0.6 * (t1 - t0))  # the step's blocks in flight
        f = frame_at(view.run, pb.t)
        pic = grab(view)
        assert len(f.moving) > 0 and blocks_painted_wrong(view, pic, f) == []  # each in its sender's colour
        for i, p in zip(f.moving.tolist(), f.progress.tolist()):
            m = tr.messages[i]
            assert a2a_block(m.chunk, n) == (m.src, m.dst)  # on its way to the GPU its index names
            if m.step == k:
                assert device_coloured_share(view, pic, message_block(view, i, p)) > 0.3  # a block is painted there
                seen.add((m.src, m.dst))
        pb.seek(t1)
        assert shown(view, n) == engine(tr.holdings(0, t=pb.t), n)
    assert seen == {(s, d) for s in range(n) for d in range(n) if s != d}
    # after: GPU d also holds column d — block d of every GPU: the transpose
    final = shown(view, n)
    for d in range(n):
        assert {ch: w for ch, w in final[d].items() if ch % n == d} == {a2a_chunk(j, d, n): {j} for j in range(n)}


def test_buffers_and_explanation_name_the_right_gpus(qtbot):
    from classroom_fixtures import make_window

    w = make_window(qtbot, "all-to-all", 8, "pairwise", nbytes=8 * 4096.0)
    w.playback.seek_step(2)  # two rounds done: GPU 0 heard from GPU 7, then GPU 6
    w.playback.seek(w.playback.t + 0.5 * (w.model.run.trace.step_times(0)[2][1] - w.playback.t))
    text = w.explain.body.toPlainText()
    assert "Every GPU d sends its block d + 3" in text and "GPU 0 → GPU 3: its block 3" in text
    assert "GPU 3 collects block 3 of every GPU" in text
    assert "(n − 1) · (α + S/(nβ))" in text and "✓" in text
    from app.views.buffers.buffer_view import BufferView

    bv = BufferView(w.model, w.playback)
    qtbot.addWidget(bv)
    bv.resize(900, 500)
    bv.show()
    qtbot.waitExposed(bv)
    assert bv.caption.text() == ("After step 2 of 7: GPU 0 received block 0 of GPU 6; it now holds 3 of the 8 "
                                 "blocks it ends with.")
    w.playback.to_end()
    assert "GPU d holds block d of every GPU's buffer" in bv.caption.text()


def test_predict_asks_where_a_block_goes():
    trace = run_collective("all-to-all", 6, 6 * 64, "pairwise").trace
    game = PredictGame(trace)
    for k in range(trace.collectives[0].n_steps):
        q = game.question(0, k)
        assert q.kind == RECEIVER and q.n_choices == 6  # a device to click, never one of the n² slots
        src, dst = a2a_block(q.chunk, 6)
        assert (q.device, q.answers) == (src, frozenset({dst})) and dst == (src + k + 1) % 6


def test_predict_question_text(qtbot):
    from classroom_fixtures import make_window

    w = make_window(qtbot, "all-to-all", 4, "direct", nbytes=4 * 4096.0)
    c = w.classroom
    c.predict.animate = False
    c.act_predict.trigger()
    q = c.predict.q
    text = c.predict_panel.question.text()
    assert f"GPU {q.device} sends its block {next(iter(q.answers))}." in text and "Where does it go?" in text


def test_scenario_rules():
    assert Scenario(kind="all-to-all").with_changes(n=4).algo == "direct"
    assert Scenario(kind="all-reduce", algo="rd").with_changes(kind="all-to-all").algo == "direct"
    with pytest.raises(ValueError, match="unknown all-to-all algorithm 'rd'"):
        validate(Scenario(kind="all-to-all", algo="rd"))
    with pytest.raises(ValueError, match="at most 64 devices"):
        validate(Scenario(kind="all-to-all", n=128, algo="direct", nbytes=128.0 * 1024))


# direct sends every block at once: it steps by phase, one; pairwise round by round
@pytest.mark.parametrize("args, steps", [(["--n", "8"], ("1", "0")),
                                         (["--algo", "pairwise", "--n", "16", "--lang", "zh"], ("2", "1"))])
def test_cli_screenshot(qapp, tmp_path, args, steps):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    assert main(["--scenario", "all-to-all", *args, "--step", steps[0], "--screenshot", str(a)]) == 0
    assert main(["--scenario", "all-to-all", *args, "--step", steps[1], "--screenshot", str(b)]) == 0
    ia, ib = QImage(str(a)), QImage(str(b))
    assert (ia.width(), ia.height()) == (1600, 900)
    centre = [(x, y) for x in range(500, 1100, 7) for y in range(250, 650, 7)]
    assert sum(ia.pixel(x, y) != ib.pixel(x, y) for x, y in centre) > 50  # the blocks moved on


@pytest.mark.parametrize("algo, form", [("direct", "α + (n − 1)·S/(nβ)"), ("pairwise", "(n − 1) · (α + S/(nβ))")])
def test_formula_panel_writes_the_closed_form_and_what_s_is(algo, form):
    from app.views.text.formula_texts import formula_html
    from simcore.links import NVLINK4

    run = run_collective("all-to-all", 8, 2.0**20, algo)
    c = run.trace.collectives[0]
    import html
    import re

    rich = formula_html(c.op, c.algo, c.n, c.nbytes, NVLINK4.alpha, NVLINK4.bw, simulated=c.t_end - c.t_start)
    text = html.unescape(re.sub(r"<[^>]+>", "", rich))
    assert form in text and "equals the closed form ✓" in text
    assert "S: bytes of one GPU's buffer (n blocks of S/n)" in text


@pytest.mark.parametrize("n", [3, 5])
def test_a_box_is_the_n_by_n_grid_of_blocks_row_sender_column_receiver(qtbot, n):
    from ring_pixels import slot_rect

    _model, _pb, view = make_view(qtbot, kind="all-to-all", n=n, algo="pairwise", nbytes=float(n * 2**20))
    for d in range(n):
        r = {(s, j): slot_rect(view, d, a2a_chunk(s, j, n)) for s in range(n) for j in range(n)}
        for s in range(n):
            assert len({round(r[s, j].center().y(), 3) for j in range(n)}) == 1  # a sender's blocks: one row
            assert len({round(r[j, s].center().x(), 3) for j in range(n)}) == 1  # a receiver's: one column
            assert all(r[s, j].center().x() < r[s, j + 1].center().x() for j in range(n - 1))
            assert all(r[j, s].center().y() < r[j + 1, s].center().y() for j in range(n - 1))


def test_choosing_a_machine_leaves_all_to_all_for_the_machines_collectives(qtbot):
    from classroom_fixtures import make_window
    from simcore.topology_presets import PRESETS

    w = make_window(qtbot, "all-to-all", 4, "pairwise", nbytes=4 * 4096.0)
    ctl = w.controls
    assert [ctl.algo.itemData(i) for i in range(ctl.algo.count())] == ["direct", "pairwise"] and ctl.algo.isEnabled()
    key = next(iter(PRESETS))
    ctl._on_machine_activated(ctl.machine.findData(key))
    assert (w.model.scenario.kind, w.model.scenario.topology) == ("all-reduce", key) and not ctl.error.text()
