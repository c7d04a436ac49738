"""
The machine pictures stay readable: the TPU v4 4×4×4 torus as four slabs side by side whose
links between slabs are short stubs (no link runs across a slab's boxes), and the boxes of the torus and
of two DGX nodes keep a readable size at 2× text in a 1280×720 window.
"""

import pytest
from PySide6.QtCore import QLineF, QPointF

SCREEN = (1280, 720)


@pytest.fixture(scope="module")
def inputs(qapp):
    from app.views.ring.machine_layout import machine_shape
    from app.views.ring.ring_texts import ring_shape, ring_texts
    from app.views.ring.ring_view import machine_texts
    from app.state import Scenario, ScenarioModel

    out = {}
    for key, kw in {"torus": dict(kind="all-gather", n=64, topology="tpu-v4-4x4x4"),
                    "nodes": dict(kind="all-reduce", n=16, topology="dgx-h100", algo="hier")}.items():
        run = ScenarioModel(Scenario().with_changes(nbytes=2**20, **kw)).run
        out[key] = machine_texts(run, ring_texts(run)), machine_shape(run.comm.topology, ring_shape(run))
    return out


def _crosses(line: QLineF, rect) -> bool:
    """Does the segment pass through rect's inside (sampled: ends on the edge do not count)?"""
    inner = rect.adjusted(1, 1, -1, -1)
    return any(inner.contains(line.pointAt(t / 40)) for t in range(1, 40))


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_the_3d_torus_is_four_slabs_and_no_link_crosses_a_box(inputs, scale):
    from app.views.ring.machine_layout import message_path
    from app.views.ring.layout_parts import overlaps
    from app.views.ring.ring_layout import ring_layout

    texts, shape = inputs["torus"]
    W, H = SCREEN
    lay = ring_layout(W, H * 0.8, scale, texts, shape)
    assert lay.kind == "torus" and len(lay.slab_stubs) == 64
    boxes = [d.rect() for d in lay.devices]
    # slab i's boxes all left of slab i+1's
    for i in range(3):
        assert max(b.right() for b in boxes[16 * i:16 * (i + 1)]) < min(b.left() for b in boxes[16 * (i + 1):16 * (i + 2)])
    for line in list(lay.links) + list(lay.wrap_stubs) + [s for pair in lay.slab_stubs for s in pair]:
        assert not any(_crosses(line, b) for b in boxes), (scale, line)
    # a message between slabs (device 5 → 21, axis 0) leaves through its stub and enters through the receiver's
    legs = message_path(lay, 5, 21)
    assert len(legs) == 2
    assert not any(_crosses(QLineF(a, b), box) for a, b in legs for box in boxes)
    assert legs[0][0] == lay.slab_stubs[5][0].p1() and legs[1][1] == lay.slab_stubs[21][1].p1()
    assert overlaps(lay.texts()) == []


@pytest.mark.parametrize("key,min_w,min_h", [("torus", 36, 36), ("nodes", 60, 22)])
def test_boxes_keep_a_readable_size_at_2x_in_1280x720(inputs, key, min_w, min_h):
    """At 2× text a box must still hold its blocks: wider than three of the smallest readable names
    and taller than a row of blocks (the sizes measured before: 4×4×4 torus 41–42 px, DGX nodes 71–76 px
    wide; the nodes had fallen back to 15 px bars at 2×)."""
    from app.views.ring.ring_layout import ring_layout

    texts, shape = inputs[key]
    W, H = SCREEN
    for scale in (2.0, 2.5):
        lay = ring_layout(W, H * 0.8, scale, texts, shape)
        assert lay.mode == "box", (key, scale)
        for d in lay.devices:
            assert d.w >= min_w and d.h >= min_h, (key, scale, d.w, d.h)
        assert lay.block >= 5.0


@pytest.mark.parametrize("key", ["torus", "nodes"])
def test_a_machine_in_a_view_too_small_still_gets_a_layout(inputs, key):
    """A 2× text window of 1280×720 leaves the ring ~320 px: the nodes' layout returned None there
    (RingView._layout raised AttributeError); squeezed is better than nothing."""
    from app.views.ring.ring_layout import ring_layout

    texts, shape = inputs[key]
    for W, H in ((200, 150), (320, 240)):
        for scale in (1.0, 2.5):
            lay = ring_layout(W, H, scale, texts, shape)
            assert lay is not None and len(lay.devices) == shape.n, (key, W, H, scale)


def test_both_dgx_nodes_name_their_gpus_in_one_size_that_fits(inputs):
    """The view paints every GPU's name in one font (the first name's): nodes_layout sized each node's
    names on its own, and in 484 of 1,960 window sizes × text scales tried the two DGX nodes came out a
    size apart, node 1's names overflowing their rectangles. One size (the smaller) for both nodes, and
    every name as the view paints it inside its rectangle."""
    from PySide6.QtGui import QFontMetricsF
    from app.views.ring.ring_layout import ring_layout
    from app.views.ring.ring_texts import queued_label

    texts, shape = inputs["nodes"]
    mixed, overflow = [], []
    for W in (640, 960, 1280, 1600, 1920):
        for H in (360, 480, 600, 720, 840, 960):
            for scale in (1.0, 1.5, 2.0, 2.5):
                lay = ring_layout(W, H, scale, texts, shape)
                assert lay.kind == "nodes"
                names = [(d, b) for d, b in enumerate(lay.device_labels) if b is not None]
                if len({(b.font.pixelSize(), b.font.pointSizeF(), b.font.family()) for _d, b in names}) > 1:
                    mixed.append((W, H, scale))
                fm = QFontMetricsF(names[0][1].font)  # the font the view paints them all in
                for d, b in names:
                    text = str(d) if lay.mode == "radial" else queued_label(d, 0)
                    if fm.horizontalAdvance(text) > b.rect.width() + 0.5 or fm.height() > b.rect.height() + 0.5:
                        overflow.append((W, H, scale, d))
    assert mixed == [] and overflow == [], (len(mixed), overflow[:5])


def test_32_narrow_nodes_name_themselves_on_one_line(qapp):
    """At 32 nodes on a 1280×720 window each node's "Node 5 · NVLink 4 (H100)" wrapped a word a line
    over the GPUs under it; a narrow node is named "Node 5", or "5" where even that would wrap."""
    from app.views.ring.machine_layout import machine_shape
    from app.views.ring.ring_layout import ring_layout
    from app.views.ring.ring_texts import ring_shape, ring_texts
    from app.views.ring.ring_view import machine_texts
    from app.state import Scenario, ScenarioModel

    run = ScenarioModel(Scenario().with_changes(kind="all-reduce", n=256, topology="dgx-h100", nbytes=2**20)).run
    texts, shape = machine_texts(run, ring_texts(run)), machine_shape(run.comm.topology, ring_shape(run))
    for W, H in ((676, 420), (960, 600), (1920, 1080)):
        lay = ring_layout(W, H, 1.0, texts, shape)
        assert lay.kind == "nodes" and len(lay.node_labels) == 32
        for m, (box, cluster) in enumerate(zip(lay.node_labels, lay.clusters)):
            assert len(box.lines) == 1 and box.lines[0] in (texts.node_names[m], texts.node_short[m], str(m))
            assert cluster.contains(box.rect), (W, H, m)
