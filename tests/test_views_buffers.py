"""The buffer view shows buffer_values of the engine's holdings at every step, on fixed levels, cheaply."""

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from app import i18n
from app.views.buffers.buffer_view import BufferView
from app.state import Playback, Scenario, ScenarioModel
from simcore.scenarios import run_collective
from simcore.trace import buffer_values

S = 960 * 1024.0  # splits into 2, 5, 8 and 64 equal chunks
CASES = [("all-gather", "ring"), ("reduce-scatter", "ring"), ("all-reduce", "ring"), ("all-reduce", "rd"),
         ("all-reduce", "innet"), ("all-reduce", "direct")]


def make_view(qtbot, kind="reduce-scatter", n=8, algo="ring"):
    model = ScenarioModel(Scenario(kind=kind, n=n, algo=algo, nbytes=S))
    pb = Playback(model)
    view = BufferView(model, pb)
    qtbot.addWidget(view)
    view.resize(1600, 900)
    view.show()
    qtbot.waitExposed(view)
    return model, pb, view


def shown(view):
    return view.image.image


def same_buffers(shown_values, engine_values):
    """The view sums contributors as a matrix product, the engine row by row: equal up to rounding.
    Recursive summation of k terms errs by at most (k − 1)·u·Σ|x| (Higham, "Accuracy and Stability
    of Numerical Algorithms", 2nd ed., eq. 4.4), u = 2⁻⁵³; here |x| ≤ 1 and k ≤ n ≤ 256, so
    255 · 1.2e-16 · 256 ≈ 8e-12 bounds either side. NaN (not held) must match NaN."""
    np.testing.assert_allclose(shown_values, engine_values, rtol=0, atol=2e-11, equal_nan=True)


@pytest.mark.parametrize("op, algo", CASES)
@pytest.mark.parametrize("n", [2, 5, 8])
def test_each_step_shows_the_engines_buffer_values(qtbot, op, algo, n):
    model, pb, view = make_view(qtbot, op, n, algo)
    run = model.run
    tr, inputs = run.trace, run.inputs[0]
    c = tr.collectives[0]
    same_buffers(shown(view), buffer_values(tr.holdings(0, step=-1), inputs, c.n_chunks))
    levels = view.levels
    for k in range(c.n_steps):
        pb.step_forward()
        t = pb.t
        now = shown(view)
        same_buffers(now, buffer_values(tr.holdings(0, t=t), inputs, c.n_chunks))
        early = [m for m in tr.messages if m.step > k and m.t_end <= t]
        if not early:  # the per-step query too (rd at n not a power of two runs ahead: see ring view test)
            same_buffers(now, buffer_values(tr.holdings(0, step=k), inputs, c.n_chunks))
        assert view.levels == levels  # fixed over the whole collective
        finite = now[np.isfinite(now)]
        assert np.all(np.abs(finite) <= levels[1] + 1e-12)
    assert pb.at_end
    final = shown(view)
    engine = run_collective(op, n, S, algo, run.link)  # the engine's own outputs, recomputed
    if op == "reduce-scatter":
        b = np.linspace(0, inputs.shape[1], n + 1).astype(int)
        for d in range(n):
            ch = (d + 1) % n
            np.testing.assert_allclose(final[d, b[ch]:b[ch + 1]], np.ravel(engine.outputs[d]), rtol=0, atol=1e-12)
            np.testing.assert_allclose(final[d, b[ch]:b[ch + 1]], inputs[:, b[ch]:b[ch + 1]].sum(0), atol=1e-12)
    else:
        for d in range(n):
            np.testing.assert_allclose(final[d], np.ravel(engine.outputs[d]), rtol=0, atol=1e-12)
            np.testing.assert_allclose(final[d], inputs.sum(0), rtol=0, atol=1e-12)
    assert not np.any(np.isnan(final)) or op == "reduce-scatter"


def test_not_held_is_nan_and_painted_differently_from_zero(qtbot):
    _model, pb, view = make_view(qtbot, "all-gather", 8)
    pb.seek_step(2)
    vals = shown(view)
    assert np.isnan(vals).any() and np.isfinite(vals).any()
    QApplication.processEvents()
    img = view.canvas.grab().toImage()
    vb = view.plot.getViewBox()
    d, ch = 7, 0  # GPU 7 does not hold chunk 0 after two steps of the ring
    assert np.isnan(vals[d, view.bounds[ch]:view.bounds[ch + 1]]).all()
    mid = lambda x, y: view.canvas.mapFromScene(vb.mapViewToScene(pg_point(x, y)))  # noqa: E731
    hole = img.pixelColor(mid(view.bounds[ch] + 0.5, d + 0.5))
    zero = view.cmap.map(0.5, mode="qcolor")  # white: the middle of the symmetric levels
    assert abs(hole.red() - zero.red()) + abs(hole.green() - zero.green()) + abs(hole.blue() - zero.blue()) > 20


def pg_point(x, y):
    from PySide6.QtCore import QPointF

    return QPointF(x, y)


def test_reduce_scatter_sums_grow_and_caption_counts_them(qtbot):
    _model, pb, view = make_view(qtbot, "reduce-scatter", 8)
    pb.seek_step(3)
    assert "After step 3 of 7" in view.caption.text()
    assert "sum of 4 of 8 contributions" in view.caption.text()
    assert view.counts.isVisible() and view.counts.counts.max() == 4
    pb.to_end()
    assert "Done after 7 steps" in view.caption.text()


def test_frames_only_set_the_image_when_a_message_arrived(qtbot, monkeypatch):
    _model, pb, view = make_view(qtbot, "all-reduce", 8)
    calls = []
    orig = view.image.setImage
    monkeypatch.setattr(view.image, "setImage", lambda *a, **k: (calls.append(1), orig(*a, **k)))
    before = len(view.canvas.scene().items())
    stops = pb.stops
    for f in np.linspace(0.05, 0.95, 10):  # inside step 1: nothing arrives
        pb.seek(stops[0] + f * (stops[1] - stops[0]))
    assert calls == []
    pb.seek(stops[1])
    assert calls == [1]
    pb.seek(stops[-1])
    assert len(view.canvas.scene().items()) == before  # no items created per frame


def test_rebuilding_does_not_leak_items(qtbot):
    model, pb, view = make_view(qtbot, "reduce-scatter", 8)
    before = len(view.canvas.scene().items())
    for kind, n in (("all-gather", 64), ("all-reduce", 5), ("matmul-1", 8), ("reduce-scatter", 2), ("all-reduce", 8)):
        model.update(kind=kind, n=n)
        pb.seek_step(1)
    model.update(kind="reduce-scatter", n=8)
    assert len(view.canvas.scene().items()) == before


def test_n64_levels_and_labels(qtbot):
    _model, pb, view = make_view(qtbot, "reduce-scatter", 64)
    pb.seek_step(31)
    assert shown(view).shape == (64, 256)
    assert not view.counts.isVisible()  # too small to write in; the colour must do
    ticks = view.plot.getAxis("left")._tickLevels[0]
    assert 1 < len(ticks) < 64  # thinned so they never overlap


def test_kinds_without_buffers_show_a_hint(qtbot):
    model, _pb, view = make_view(qtbot, "all-gather", 8)
    model.update(kind="tp-forward")
    assert view.stack.currentWidget() is view.hint_page
    view.switch_button.click()
    assert model.scenario.kind == "all-reduce"
    assert view.stack.currentWidget() is view.canvas


def test_a_hidden_view_catches_up_when_shown(qtbot):
    _model, pb, view = make_view(qtbot, "reduce-scatter", 8)
    view.hide()
    pb.seek_step(4)
    view.show()
    tr = view.run.trace
    same_buffers(shown(view), buffer_values(tr.holdings(0, t=pb.t), view.run.inputs[0], 8))


def test_language_switch_retranslates(qtbot):
    _model, pb, view = make_view(qtbot, "reduce-scatter", 8)
    pb.seek_step(3)
    app = QApplication.instance()
    view.setWindowTitle("stale")
    view.caption.setText("stale")
    try:
        i18n.set_language(app, "zh")
        assert view.windowTitle() not in ("", "stale")
        assert view.caption.text() not in ("", "stale")
    finally:
        i18n.set_language(app, "en")
    assert view.windowTitle() == "Buffers"
    assert view.caption.text().startswith("After step 3 of 7")


@pytest.mark.parametrize("look", ["light", "dark"])
def test_chunk_lines_at_64_gpus_show_on_the_hatch_in_both_themes(qtbot, look):
    # 64 chunks draw hairlines; they were fixed black, invisible on the dark theme's grey hatch
    from PySide6.QtCore import QPointF

    from app.classroom import presentation  # noqa: F401  (registers the dark theme)
    from app import theme

    theme.set_theme(look)
    try:
        model, pb, view = make_view(qtbot, "all-gather", 64)
        qtbot.wait(20)
        img = view.canvas.grab().toImage()
        vb = view.plot.getViewBox()
        b = view.bounds[32]  # at t = 0, rows 40…59 do not hold chunks 31 and 32 yet: hatched around b
        pt = view.canvas.mapFromScene(vb.mapViewToScene(QPointF(b, 50.0)))

        def column(x):
            return np.mean([img.pixelColor(x, pt.y() + dy).lightness() for dy in range(-40, 40)])

        hatch = column(pt.x() + 5)
        line = max((column(pt.x() + dx) for dx in range(-2, 3)), key=lambda v: abs(v - hatch))
        assert abs(line - hatch) > 40, (look, line, hatch)
    finally:
        theme.set_theme("light")
