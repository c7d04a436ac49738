"""The weight-slice view shows the engine's own shards, outlines what weight_slices says, and rebuilds cleanly."""

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from app import i18n, theme
from app.state import Playback, Scenario, ScenarioModel
from app.views.weights.weights_data import full_matrix
from app.views.weights.weights_layout import weights_layout
from app.views.weights.weights_texts import weights_shape, weights_texts
from app.views.weights.weights_view import COLORMAP, MATRICES, WeightsView
from simcore.tensor_parallel import weight_slices

SPLIT = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "lm_head")


def make_view(qtbot, n=2, kind="tp-forward"):
    model = ScenarioModel(Scenario(kind=kind, n=n))
    view = WeightsView(model, Playback(model))
    qtbot.addWidget(view)
    view.resize(1600, 900)
    view.show()
    qtbot.waitExposed(view)
    return model, view


def expected_region(ws) -> QRectF:
    rows, cols = (ws.shape if len(ws.shape) == 2 else (1, ws.shape[0]))
    if ws.axis is None:
        return QRectF(0, 0, cols, rows)
    a, b = int(ws.index.min()), int(ws.index.max()) + 1
    assert b - a == len(ws.index), "a device's indices are one contiguous block"
    return QRectF(a, 0, b - a, rows) if ws.axis == 1 else QRectF(0, a, cols, b - a)


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_slices_are_the_engines_shards_and_outlines_follow_weight_slices(qtbot, n):
    model, view = make_view(qtbot, n)
    tp = model.run.tp
    for key in MATRICES:
        layer = 1 if key in ("wq", "w_down", "attn_norm") else 0
        view.select(key, layer)
        # the full heatmap is the single-device matrix
        assert np.array_equal(view.full_image.image, full_matrix(tp.params, key, layer))
        assert len(view.slice_images) == n
        slices = weight_slices(tp.cfg, n, key)
        for d in range(n):
            shown = view.slice_images[d].image
            raw = tp.dev_params[d][key] if key in ("lm_head", "embed", "final_norm") else \
                tp.dev_params[d]["layers"][layer][key]
            held = np.atleast_2d(raw)
            assert shown.shape == held.shape and np.array_equal(shown, held)
            # the very array shard_params_tp produced (its memory), not a recut of the full matrix
            assert np.shares_memory(shown, raw)
            assert tuple(view.slice_images[d].getLevels()) == pytest.approx(view.levels)
            region = expected_region(slices[d])
            assert [it.region for it in view.outlines[d]] == [region]
            for it in view.outlines[d]:  # the drawn rectangle lies inside its region
                assert region.contains(it.rect())
        if key in SPLIT and n > 1:
            # the regions tile the split axis exactly once unless KV is replicated
            cover = np.zeros(view.full.shape[slices[0].axis])
            for ws in slices:
                cover[ws.index] += 1
            assert np.all(cover >= 1)
        # levels are symmetric and come from the full matrix
        assert view.levels == pytest.approx((-np.abs(view.full).max(), np.abs(view.full).max()))


def test_column_and_row_splits_match_the_lecture(qtbot):
    _model, view = make_view(qtbot, 4)
    view.select("wq")
    assert all(it.region.height() == 64 and it.region.width() == 16 for d in range(4) for it in view.outlines[d])
    view.select("w_down")
    assert all(it.region.width() == 64 and it.region.height() == 32 for d in range(4) for it in view.outlines[d])
    view.select("embed")
    assert "4" in view.replicated_label.textItem.toPlainText()
    assert all(it.region == QRectF(0, 0, 64, 256) for d in range(4) for it in view.outlines[d])
    assert "replicated" in view.caption.text()


@pytest.mark.parametrize("key", ["wk", "wv"])
def test_kv_replication_is_labelled_only_when_n_exceeds_the_kv_groups(qtbot, key):
    model, view = make_view(qtbot, 8)
    view.select(key)
    slices = weight_slices(model.run.tp.cfg, 8, key)
    assert any(ws.replicated for ws in slices)
    for d, ws in enumerate(slices):
        assert ("replicated" in view.slice_texts[d]) == ws.replicated
    # devices sharing a KV group have the same region and visibly nested outlines
    r0, r1 = view.outlines[0][0], view.outlines[1][0]
    assert r0.region == r1.region
    assert r0.rect().contains(r1.rect()) and r0.rect() != r1.rect()
    assert np.array_equal(view.slice_images[0].image, view.slice_images[1].image)
    assert "replicated" in view.caption.text()
    model.update(n=2)
    view.select(key)
    assert not any(ws.replicated for ws in weight_slices(model.run.tp.cfg, 2, key))
    assert not any("replicated" in t for t in view.slice_texts)
    assert "replicated" not in view.caption.text()
    assert view.outlines[0][0].region != view.outlines[1][0].region


def test_caption_and_labels_state_shape_and_bytes(qtbot):
    _model, view = make_view(qtbot, 8)
    view.select("wq")
    assert "8 columns × 64 rows = 4 KiB" in view.caption.text()
    assert "64 × 8" in view.slice_texts[3] and "4 KiB" in view.slice_texts[3] and "GPU 3" in view.slice_texts[3]
    view.select("w_down")
    assert "16 rows × 64 columns = 8 KiB" in view.caption.text()


def test_rebuilding_does_not_leak_items(qtbot):
    model, view = make_view(qtbot, 2)
    view.select("wq", 0)
    before = len(view.canvas.scene().items())
    for n in (8, 4, 1, 8):
        model.update(n=n)
        for key in ("wk", "w_down", "embed", "final_norm", "lm_head"):
            view.select(key, 1)
    model.update(n=2)
    view.select("wq", 0)
    assert len(view.canvas.scene().items()) == before
    model.update(n=8)
    view.select("wq", 0)
    more = len(view.canvas.scene().items())
    assert more > before  # the count does see the per-device items


def test_other_scenarios_show_a_hint_that_switches(qtbot):
    model, view = make_view(qtbot, 64, kind="all-reduce")
    assert view.stack.currentWidget() is view.hint_page
    assert "TP" in view.hint.text()
    view.switch_button.click()
    assert model.scenario.kind == "tp-forward" and model.scenario.n == 8
    assert view.stack.currentWidget() is view.canvas
    assert len(view.slice_images) == 8


def test_decode_shows_the_same_shards(qtbot):
    model, view = make_view(qtbot, 4, kind="decode")
    view.select("wv")
    assert view.stack.currentWidget() is view.canvas
    for d in range(4):
        assert np.array_equal(view.slice_images[d].image, model.run.tp.dev_params[d]["layers"][0]["wv"])


def test_a_frame_shows_outlines_in_device_colours(qtbot):
    _model, view = make_view(qtbot, 2)
    view.select("wq")
    QApplication.processEvents()
    img = view.canvas.grab().toImage()
    box = view.matrix_box
    # a pixel on GPU 1's outline, half way down its left edge, has GPU 1's colour
    it = view.outlines[1][0]
    r = it.rect()
    p = view.canvas.mapFromScene(box.mapViewToScene(r.topLeft() + (r.bottomLeft() - r.topLeft()) / 2))
    want = view.colors[1]
    got = img.pixelColor(p.x(), p.y())
    assert abs(got.red() - want.red()) + abs(got.green() - want.green()) + abs(got.blue() - want.blue()) < 60


def test_language_switch_retranslates(qtbot):
    _model, view = make_view(qtbot, 2)
    app = QApplication.instance()
    view.setWindowTitle("stale")
    view.caption.setText("stale")
    try:
        i18n.set_language(app, "zh")
        assert view.windowTitle() not in ("", "stale")
        assert view.caption.text() not in ("", "stale")
    finally:
        i18n.set_language(app, "en")
    assert view.windowTitle() == "Weight slices"
    assert view.caption.text().startswith("Wq is split by columns")


# -- the layout, asked directly ------------------------------------------------------------------------
TAB = (872, 453)  # the canvas of the main window's centre tab (about 880 × 540, less the controls and caption)


def layout_of(run, key, size=TAB, scale=1.0):
    return weights_layout(*size, scale, weights_texts(run, key, 0), weights_shape(run, key, 0))


@pytest.fixture(scope="module")
def run8():
    return ScenarioModel(Scenario(kind="tp-forward", n=8)).run


@pytest.mark.parametrize("key", ["wq", "wk", "w_gate", "lm_head"])
def test_in_a_small_tab_column_slices_stay_as_tall_as_the_full_matrix(qapp, run8, key):
    """Eight column slices in the centre tab must not become slivers."""
    lay = layout_of(run8, key)
    canvas = QRectF(0, 0, *TAB)
    assert lay.mode in ("cols", "below") and lay.matrix.height() > 100
    for d, (r, label) in enumerate(zip(lay.slices, lay.labels)):
        assert r.height() >= 0.4 * lay.matrix.height(), (d, r, lay.matrix)
        assert label.rect.top() >= r.bottom() and not label.rect.intersects(r)  # under it, not on it
        assert label.font.pixelSize() >= round(theme.px("body"))  # at the theme's size
        assert canvas.contains(r) and canvas.contains(label.rect)


@pytest.mark.parametrize("key", ["wo", "w_down"])
def test_row_slices_are_stacked_beside_the_full_matrix_with_their_labels_at_the_side(qapp, run8, key):
    lay = layout_of(run8, key)
    full = lay.matrix
    for r, label in zip(lay.slices, lay.labels):
        assert r.left() > full.right()  # beside it
        assert r.width() == pytest.approx(full.width())  # as wide: one cell size
        assert r.height() == pytest.approx(full.height() / 8)
        lab = label.rect
        assert lab.left() >= r.right() and r.top() - 4 <= lab.center().y() <= r.bottom() + 4
    assert [r.top() for r in lay.slices] == sorted(r.top() for r in lay.slices)


def test_kv_groups_shared_by_two_gpus_are_named_under_them_when_there_is_room(qapp, run8):
    for size in ((1592, 834), (872, 453), (640, 380)):
        lay = layout_of(run8, "wk", size)
        assert len({round(r.top()) for r in lay.slices}) == 1  # one row of eight
    lay = layout_of(run8, "wk", (1592, 834))
    assert lay.role and len(lay.roles) == 4  # one role label per KV group, under its two GPUs
    assert lay.roles[0].html.replace("<b>", "").startswith("KV group 0")
    assert lay.roles[0].rect.width() > 1.9 * lay.slices[0].width()


# -- the view paints what the layout says (pixels) ----------------------------------------------------------
def canvas_rect(view, rect: QRectF) -> QRectF:
    """A layout rectangle (the canvas' item coordinates) in the canvas' pixels."""
    return view.canvas.viewportTransform().mapRect(view.canvas.ci.mapRectToScene(rect))


def colour_of(value, levels) -> QColor:
    """The colour the diverging map gives `value` at fixed `levels`."""
    lo, hi = levels
    return pg.colormap.get(COLORMAP).map((value - lo) / (hi - lo), mode="qcolor")


def close(a: QColor, b: QColor, tol=24) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) <= tol


def assert_paints_layout(view, model, key):
    """Every slice's cells, in the rectangle weights_layout gives it, have the colours of that device's own
    array; its label's rectangle shows the device's badge colour."""
    QApplication.processEvents()
    tp = model.run.tp
    lay = weights_layout(view.canvas.width(), view.canvas.height(), theme.scale(), weights_texts(model.run, key, 0),
                         weights_shape(model.run, key, 0))
    vmax = np.abs(full_matrix(tp.params, key, 0)).max()
    img = view.canvas.grab().toImage()
    cw, ch = lay.cell
    for d, (rect, label) in enumerate(zip(lay.slices, lay.labels)):
        a = np.atleast_2d(tp.dev_params[d][key] if key == "lm_head" else tp.dev_params[d]["layers"][0][key])
        rows, cols = a.shape
        for i, j in {(rows // 2, cols // 2), (rows // 3, cols // 3), (2 * rows // 3, 2 * cols // 3)}:
            p = canvas_rect(view, QRectF(rect.x() + j * cw, rect.y() + i * ch, cw, ch)).center()
            got = img.pixelColor(int(p.x()), int(p.y()))
            assert close(got, colour_of(a[i, j], (-vmax, vmax))), (d, i, j, got.name())
        lab = canvas_rect(view, label.rect).toRect()
        badge = theme.device_colors(tp.n)[d]
        assert any(close(img.pixelColor(x, y), badge, 6) for x in range(lab.left(), lab.right(), 2)
                   for y in range(lab.top(), lab.bottom(), 2)), d


@pytest.mark.parametrize("n, key", [(2, "wq"), (8, "wo"), (4, "lm_head")])
def test_the_view_paints_where_its_layout_says(qtbot, n, key):
    model, view = make_view(qtbot, n)
    view.select(key)
    assert_paints_layout(view, model, key)


def test_after_resizes_the_view_still_paints_where_its_layout_says(qtbot):
    model, view = make_view(qtbot, 8)
    view.select("wk")
    for w, h in ((800, 600), (1600, 900)):
        view.resize(w, h)
        assert_paints_layout(view, model, "wk")


@pytest.mark.parametrize("kind", ["tp-forward", "decode"])
def test_the_header_shows_that_tp_logits_equal_single_device_logits(qtbot, kind):
    model, view = make_view(qtbot, 4, kind=kind)
    text = view.info.text()
    assert "max |Δ|" in text and f"{model.run.tp.max_abs_diff:.1e}" in text
    assert "single-device logits" in text and "✓" in text
    assert ("Decode step" in text) == (kind == "decode")
    model.update(n=2)  # a new run: its own difference
    assert f"{model.run.tp.max_abs_diff:.1e}" in view.info.text()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_eight_norm_slices_at_large_text_in_a_small_tab_stay_visible(qtbot, lang):
    """At 2.5× in a 704 × 432 tab (where weights_layout puts eight norm vectors in two stacks: see
    test_lecture_hall) the full vector is not hidden under its outline, and the caption is cut after the
    words that fit rather than clipped mid-line."""
    app = QApplication.instance()
    _model, view = make_view(qtbot, 8)
    view.select("attn_norm")
    try:
        i18n.set_language(app, lang)
        theme.set_scale(2.5)
        view.resize(704, 432)
        QApplication.processEvents()
        # the full vector's cells show: a thin bar is drawn without the outline that would cover it
        canvas = view.canvas
        lay = weights_layout(canvas.width(), canvas.height(), 2.5, weights_texts(_model.run, "attn_norm", 0),
                             weights_shape(_model.run, "attn_norm", 0))
        full = canvas_rect(view, lay.matrix)
        img = view.canvas.grab().toImage()
        c = img.pixelColor(round(full.center().x()), round(full.center().y()))
        assert c.red() > c.blue() + 40  # a norm's values are close to 1: red on the diverging map, not black
        cap = view.caption
        assert cap.heightForWidth(cap.width()) <= cap.height() + 1, (cap.text(), cap.height())
        if cap.text().endswith("…"):
            assert cap.text()[:-1].rstrip() in cap.toolTip()
    finally:
        theme.set_scale(1.0)
        i18n.set_language(app, "en")


@pytest.mark.parametrize("key", ["wq", "wk", "wo", "w_down", "lm_head", "attn_norm"])
@pytest.mark.parametrize("size", [(1272, 445), (1900, 780)], ids=["1280x720", "1920x1080"])
def test_larger_text_keeps_the_heatmaps_cells(qapp, run8, key, size):
    """Presentation at 2.5×: the canvas the weights tab has on a 1280×720 or
    1920×1080 projector. The words may grow only while the cells keep KEEP_CELL of their area at 1×
    (before, 2.5× labels left 0.9 × 0.5 px cells at 1280×720), and nothing meets a heatmap."""
    from app.views.weights.weights_layout import KEEP_CELL
    one, big = layout_of(run8, key, size, 1.0), layout_of(run8, key, size, 2.5)
    assert big.cell[0] * big.cell[1] >= KEEP_CELL * one.cell[0] * one.cell[1] - 1e-6, (one.cell, big.cell)
    assert big.factor * 2.5 >= 1.0  # the words never smaller than at 1×
    canvas = QRectF(0, 0, *size)
    for name, r in big.pictures():
        assert canvas.contains(r), name
        for tname, t in big.texts():
            assert not t.intersects(r) or name == "colour bar", (tname, name)
