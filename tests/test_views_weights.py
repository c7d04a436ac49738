"""The weight-slice view shows the engine's own shards, outlines what weight_slices says, and rebuilds cleanly."""

import numpy as np
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QApplication

from app import i18n, theme
from app.state import Playback, Scenario, ScenarioModel
from app.views.weights.weights_data import full_matrix
from app.views.weights.weights_view import MATRICES, WeightsView
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
    before = view.scene_item_count()
    for n in (8, 4, 1, 8):
        model.update(n=n)
        for key in ("wk", "w_down", "embed", "final_norm", "lm_head"):
            view.select(key, 1)
    model.update(n=2)
    view.select("wq", 0)
    assert view.scene_item_count() == before
    model.update(n=8)
    view.select("wq", 0)
    more = view.scene_item_count()
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


def on_screen(view, item) -> QRectF:
    """An item's rectangle in canvas pixels."""
    return view.canvas.viewportTransform().mapRect(item.sceneBoundingRect())


def assert_inside_canvas(view):
    canvas = QRectF(0, 0, view.canvas.width(), view.canvas.height()).adjusted(-1, -1, 1, 1)
    items = [view.full_image, view.full_title, view.grid_title, view.axes_label, *view.slice_images,
             *view.slice_labels, *(r for r in view.role_labels if r.isVisible())]
    for item in items:
        assert canvas.contains(on_screen(view, item)), item


@pytest.mark.parametrize("key", ["wq", "wk", "w_gate", "lm_head"])
def test_in_a_small_tab_column_slices_stay_as_tall_as_the_full_matrix(qtbot, key):
    """The main window's centre tab is about 880 × 540: eight slices must not become slivers."""
    _model, view = make_view(qtbot, 8)
    view.resize(880, 540)
    view.select(key)
    QApplication.processEvents()
    full = on_screen(view, view.full_image)
    assert full.height() > 100
    rows, cols = view.shape
    for d, img in enumerate(view.slice_images):
        r = on_screen(view, img)
        assert r.height() >= 0.4 * full.height(), (d, r, full)
        # one cell size everywhere: a slice is drawn as large as the region it came from
        assert r.width() / img.image.shape[1] == pytest.approx(full.width() / cols, rel=0.02)
        assert r.height() / img.image.shape[0] == pytest.approx(full.height() / rows, rel=0.02)
        # its label is under it, not on it, in body-size text
        label = on_screen(view, view.slice_labels[d])
        assert not label.intersects(r)
        assert view.slice_labels[d].font().pixelSize() >= round(theme.px("body"))
    assert_inside_canvas(view)


@pytest.mark.parametrize("key", ["wo", "w_down"])
def test_row_slices_are_stacked_beside_the_full_matrix_with_their_labels_at_the_side(qtbot, key):
    _model, view = make_view(qtbot, 8)
    view.resize(880, 540)
    view.select(key)
    QApplication.processEvents()
    full = on_screen(view, view.full_image)
    tops = []
    for d, img in enumerate(view.slice_images):
        r = on_screen(view, img)
        assert r.left() > full.right()  # beside it
        assert r.width() == pytest.approx(full.width(), rel=0.02)  # as wide: one cell size
        assert r.height() == pytest.approx(full.height() / 8, rel=0.05)
        label = on_screen(view, view.slice_labels[d])
        assert label.left() >= r.right() and r.top() - 4 <= label.center().y() <= r.bottom() + 4
        tops.append(r.top())
    assert tops == sorted(tops)
    assert_inside_canvas(view)


def test_resizing_keeps_one_row_and_everything_on_the_canvas(qtbot):
    _model, view = make_view(qtbot, 8)
    view.select("wk")
    for w, h in ((1600, 900), (800, 600), (640, 420), (1600, 900)):
        view.resize(w, h)
        QApplication.processEvents()
        tops = {round(on_screen(view, img).top()) for img in view.slice_images}
        assert len(tops) == 1  # one row of eight
        assert_inside_canvas(view)
    # room enough: the shared KV groups are named under the GPUs that share them
    assert view.plan.role and [r.toPlainText() for r in view.role_labels][0].startswith("KV group 0")


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
def test_eight_norm_slices_at_large_text_in_a_small_tab_form_a_grid_that_fits(qtbot, lang):
    """At 2.5× in a 704 × 432 tab one stack of eight norm vectors pushed the axes line off
    the canvas even at 40 % text; the slices go into two columns, each with its badge beside it, and the
    full vector is not hidden under its outline. At 1600 × 900 and 1× they stay one stack."""
    app = QApplication.instance()
    _model, view = make_view(qtbot, 8)
    view.select("attn_norm")
    QApplication.processEvents()
    lefts = {round(on_screen(view, img).left()) for img in view.slice_images}
    assert len(lefts) == 1  # room enough: one stack
    try:
        i18n.set_language(app, lang)
        theme.set_scale(2.5)
        view.resize(704, 432)
        QApplication.processEvents()
        slices = [on_screen(view, img) for img in view.slice_images]
        labels = [on_screen(view, lab) for lab in view.slice_labels]
        assert len({round(r.left()) for r in slices}) == 2  # two columns of four
        for d, (r, lab) in enumerate(zip(slices, labels)):
            assert lab.left() >= r.right() and r.top() - 4 <= lab.center().y() <= r.bottom() + 4, d
            others = slices[:d] + slices[d + 1:] + labels[:d] + labels[d + 1:]
            assert not any(r.intersects(o) or lab.intersects(o) for o in others), d
        axes = on_screen(view, view.axes_label)
        assert axes.top() >= max(r.bottom() for r in slices + labels)  # the axes line under the picture
        assert_inside_canvas(view)
        # the full vector's cells show: a thin bar is drawn without the outline that would cover it
        full = on_screen(view, view.full_image)
        img = view.canvas.grab().toImage()
        c = img.pixelColor(round(full.center().x()), round(full.center().y()))
        assert c.red() > c.blue() + 40  # a norm's values are close to 1: red on the diverging map, not black
        # the caption is cut after the words that fit rather than clipped mid-line; all of it in its tooltip
        cap = view.caption
        assert cap.heightForWidth(cap.width()) <= cap.height() + 1, (cap.text(), cap.height())
        if cap.text().endswith("…"):
            assert cap.text()[:-1].rstrip() in cap.toolTip()
    finally:
        theme.set_scale(1.0)
        i18n.set_language(app, "en")
