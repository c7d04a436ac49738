"""Presentation mode's layout (app.classroom.presentation.presentation_plan, a pure function): at
1280×720, 1920×1080 and 3840×2160 and text scale 1–2.5 the picture keeps 60 % of the screen, a
short timeline stays, nothing overlaps; the ring, magnified with the text, keeps blocks in flight
of at least 24 px with their chunk numbers (ring_layout's zoom: the key beside the ring, names
beside the top and bottom boxes, a smaller switch)."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QRectF  # noqa: E402

from app import theme  # noqa: E402
from app.classroom.presentation import (PRESENT_TIMELINE_MIN, STORY_MIN_W, picture_keeps,  # noqa: E402
                                       presentation_plan, ring_zoom)
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")
SCREENS = ((1280, 720), (1920, 1080), (3840, 2160))
SCALES = (1.0, 1.5, 2.0, 2.5)



_BARS = {}


@pytest.fixture
def bars(qtbot, qapp):
    """The toolbar and tab bar's height at each text scale, measured once in a shown window (without
    the menu bar: presentation mode hides it)."""
    if not _BARS:
        w = make_window(qtbot, size=(1600, 900))
        for s in SCALES:
            theme.set_scale(s)
            qapp.processEvents()
            _BARS[s] = w.tabs.currentWidget().mapTo(w, QPoint(0, 0)).y() - w.menuBar().height()
        theme.set_scale(1.0)
    return _BARS


@pytest.mark.parametrize("W,H", SCREENS, ids=lambda v: str(v))
@pytest.mark.parametrize("s", SCALES)
def test_the_picture_keeps_60_percent_and_a_short_timeline_stays(W, H, s, bars):
    p = presentation_plan(W, H, s, bars[s])
    assert p.share(W, H) >= 0.60
    assert p.timeline_h >= max(PRESENT_TIMELINE_MIN, 0.12 * H)  # a short timeline, under the picture
    assert p.picture_h + p.timeline_h + bars[s] <= H  # stacked, not overlapping
    assert p.picture_w + (p.story_w + 6 if p.story_w else 0) <= W
    assert p.story_w == 0 or p.story_w >= STORY_MIN_W * s  # a column worth reading, or none
    assert 1.0 <= p.zoom <= s


@pytest.mark.parametrize("n", (4, 8))
@pytest.mark.parametrize("W,H", SCREENS, ids=lambda v: str(v))
@pytest.mark.parametrize("s", SCALES)
def test_a_block_in_flight_grows_with_the_text(W, H, s, n, bars):
    from app.core.scenarios import Scenario, build_run
    from app.views.ring.layout_parts import overlaps
    from app.views.ring.machine_layout import machine_shape
    from app.views.ring.ring_layout import ring_layout
    from app.views.ring.ring_texts import machine_texts, ring_shape, ring_texts

    run = build_run(Scenario("all-gather", n))
    texts, shape = machine_texts(run, ring_texts(run)), machine_shape(run.comm.topology, ring_shape(run))
    p = presentation_plan(W, H, s, bars[s])
    z = p.zoom
    assert z == ring_zoom(p.picture_w, p.picture_h, s)
    lay = ring_layout(p.picture_w / z, p.picture_h / z, s / z, texts, shape, zoom=z)  # as RingView lays it out
    block = lay.block * z  # on screen
    # the chunk number's size on screen: the layout's small text, at most two thirds of the block (FlightLayer)
    number_px = min(theme.FONT_PX["small"] * s / z * lay.text_vs, lay.block * 0.7) * z
    assert block >= 24 and number_px >= 14
    assert not overlaps(lay.texts()), overlaps(lay.texts())
    for d, b in enumerate(lay.devices):  # every box and its name inside the picture
        assert QRectF(0, 0, lay.width, lay.height).contains(b.rect()), d
    # the ring's words grow with Ctrl+= too: at least 1.5× on screen from 1.5× on (the key and the step
    # line beside the ring in a short room; before, 1280×720 at 2.5× showed them at 1.25×)
    assert s * lay.text_vs / lay.vs >= min(s, 1.5) - 1e-9


@pytest.mark.parametrize("n", (4, 8, 16))
@pytest.mark.parametrize("W,H", SCREENS, ids=lambda v: str(v))
@pytest.mark.parametrize("s", SCALES)
def test_the_ring_stays_round_enough_and_the_switch_keeps_its_name(W, H, s, n, bars):
    """Issue 26 item 5: at 2.5× at 1280×720 the ring was a 2.4:1 band and NVSwitch lost its name. The
    ring through the boxes' inner edges is at most RING_MAX_FLAT:1 (layout_parts says why an ellipse at
    all), and the switch's name is there, at least MIN_SWITCH_NAME_PX on screen."""
    from app.core.scenarios import Scenario, build_run
    from app.views.ring.layout_parts import RING_MAX_FLAT
    from app.views.ring.machine_layout import machine_shape
    from app.views.ring.ring_layout import MIN_SWITCH_NAME_PX, ring_layout
    from app.views.ring.ring_texts import machine_texts, ring_shape, ring_texts

    run = build_run(Scenario("all-gather", n))
    texts, shape = machine_texts(run, ring_texts(run)), machine_shape(run.comm.topology, ring_shape(run))
    p = presentation_plan(W, H, s, bars[s])
    z = p.zoom
    if z <= 1.0:
        pytest.skip("not magnified: the desk's layout (test_lecture_hall)")
    lay = ring_layout(p.picture_w / z, p.picture_h / z, s / z, texts, shape, zoom=z)
    xs, ys = [b.centre.x() for b in lay.devices], [b.centre.y() for b in lay.devices]
    bw, bh = lay.devices[0].w, lay.devices[0].h
    a, b = (max(xs) - min(xs)) / 2 - (bw - bh) / 2, (max(ys) - min(ys)) / 2
    assert a / b <= RING_MAX_FLAT + 1e-6, (a, b)
    if lay.mode != "box":  # n = 16 falls to radial bars in a short room (item 4: not solved there)
        return
    assert lay.switch_label.lines == (texts.switch_name,) and texts.switch_name
    assert lay.switch_label.font.pixelSize() * z >= MIN_SWITCH_NAME_PX - 0.5


def _present(kind, n, algo, W, H, s, bars, **extra):
    """presentation_plan's picture for this screen, laid out as RingView presents it (present_layout):
    (layout, zoom, texts). Presenting, the bars keep their 1× height (test_present_bars)."""
    from app.core.scenarios import Scenario, build_run
    from app.views.ring.machine_layout import machine_shape
    from app.views.ring.ring_layout import present_layout
    from app.views.ring.ring_texts import machine_texts, ring_shape, ring_texts

    run = build_run(Scenario(kind, n, algo, **extra))
    texts, shape = machine_texts(run, ring_texts(run)), machine_shape(run.comm.topology, ring_shape(run))
    # the story's column beside it where the picture keeps its sizes (as presentation mode asks)
    p = presentation_plan(W, H, s, bars[1.0], keeps=picture_keeps(texts, shape, s))
    lay, z = present_layout(p.picture_w, p.picture_h, s, texts, shape, p.zoom)
    assert 1.0 <= z <= p.zoom + 1e-9
    return lay, z, texts


def _number_on_screen(lay, s, z):
    """A chunk number's size on screen: RingView's font for it, at most 0.7 of its block (FlightLayer)."""
    from app.views.ring.ring_layout import chunk_number_px

    return min(chunk_number_px(lay, s, z, True), lay.block * 0.7) * z


@pytest.mark.parametrize("kind,algo,extra", [("all-gather", "ring", {}), ("reduce-scatter", "ring", {}),
                                             ("all-reduce", "ring", {}), ("all-reduce", "rd", {"nbytes": 8192})],
                         ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("W,H", SCREENS, ids=lambda v: str(v))
@pytest.mark.parametrize("s", SCALES)
def test_sixteen_gpus_on_one_switch_keep_24px_blocks_with_numbers(W, H, s, kind, algo, extra, bars):
    """n = 16 fell to radial bars with 4–7 px blocks and no chunk numbers from 1.5× at 1280×720 (and
    from 2× at 1920×1080); at 1× its blocks were the size of its 9 px slots. Now boxes, blocks of 24 px
    with numbers of at least 12 px. Where sixteen named boxes do not fit with the words enlarged
    (1280×720 from 2×), the words stay at least the desk's size (present_layout says why)."""
    from app.views.ring.layout_parts import overlaps

    lay, z, texts = _present(kind, 16, algo, W, H, s, bars, **extra)
    assert lay.mode == "box"
    assert lay.block * z >= 24 - 1e-6
    assert _number_on_screen(lay, s, z) >= 12
    assert not overlaps(lay.texts()), overlaps(lay.texts())
    for d, b in enumerate(lay.devices):
        assert QRectF(0, 0, lay.width, lay.height).contains(b.rect()), d
    assert s * lay.text_vs / lay.vs >= 1.0 - 1e-9  # Ctrl+= never makes the words smaller than the desk's


@pytest.mark.parametrize("W,H", SCREENS, ids=lambda v: str(v))
@pytest.mark.parametrize("s", SCALES)
def test_the_tpu_torus_keeps_large_blocks_with_numbers(W, H, s, bars):
    """The lecture deck's TPU torus (4×4, all-reduce): blocks in flight were 0.45 of the gap between two
    rows, 7–13 px on screen at 1280×720 and 1920×1080. Presenting, the boxes give the gap room and a block
    takes PRESENT_GAP_SHARE of it: 24 px where a row has the height, never under 16 px (1280×720 at 2×
    and more: a row of the grid is 38 px high magnified, its name and a box of 4 slot rows included)."""
    from app.views.ring.layout_parts import overlaps

    lay, z, _texts = _present("all-reduce", 16, "torus", W, H, s, bars, topology="tpu-v5e-16x16")
    assert lay.kind == "torus"
    assert lay.block * z >= (24 - 1e-6 if (W >= 1920 or s == 1.0) else 16)
    assert _number_on_screen(lay, s, z) >= 12
    assert not overlaps(lay.texts()), overlaps(lay.texts())


@pytest.mark.parametrize("lang", ("en", "zh"))
@pytest.mark.parametrize("W,H", SCREENS, ids=lambda v: str(v))
@pytest.mark.parametrize("s", SCALES)
def test_two_dgx_nodes_keep_24px_blocks_with_numbers(W, H, s, lang, bars, qapp):
    """The lecture deck's two DGX H100 nodes (2 × 8, hierarchical all-reduce): under their fabric band each
    node's ring of 8 had about 290 px of height, its blocks in flight 8–13 px at 1280×720 and 1920×1080
    from 1.5×, too small for their chunk numbers. Presenting, the nodes stand side by side as tall as the
    picture with the fabric between them (machine_layout.two_nodes_facing): blocks of 24 px, numbers of
    15 px, and nothing overlaps — names, boxes, clusters, the fabric, its NIC links and the colour key. The
    words grow with Ctrl+= too, to 1.4× at least from 1.5× on (at 1280×720 the legend goes for that)."""
    from app import i18n
    from app.views.ring.layout_parts import overlaps
    from app.views.ring.machine_layout import message_path

    i18n.set_language(qapp, lang)  # (Chinese names and lines are taller: the CJK fallback font's)
    lay, z, _texts = _present("all-reduce", 16, "hier", W, H, s, bars, topology="dgx-h100")
    assert lay.kind == "nodes" and lay.mode == "box"
    assert lay.block * z >= 24 - 1e-6, lay.block * z
    assert _number_on_screen(lay, s, z) >= 15 - 1e-6
    assert s * lay.text_vs / lay.vs >= min(s, 1.4) - 1e-9
    assert len({b.font.pixelSize() for b in lay.device_labels}) == 1  # RingView paints every name in one font
    # side by side, the fabric standing between them, every NIC link from a node's inner edge to it
    left, right = lay.clusters
    band = lay.fabric
    assert left.right() <= band.left() and band.right() <= right.left()
    assert band.top() >= left.top() - 1e-6 and band.bottom() <= left.bottom() + 1e-6
    for d, (at_node, at_fabric) in enumerate(lay.nic_ports):
        edge, face = (left.right(), band.left()) if d < 8 else (right.left(), band.right())
        assert abs(at_node.x() - edge) < 1e-6 and abs(at_fabric.x() - face) < 1e-6
        assert band.top() <= at_fabric.y() <= band.bottom()
    # GPU j and GPU j + 8 (the hierarchical all-reduce's pair) cross the fabric on one row
    for j in range(8):
        legs = message_path(lay, j, j + 8)
        assert len(legs) == 3 and abs(legs[1][0].y() - legs[1][1].y()) < 1e-6
    # nothing overlaps
    assert not overlaps(lay.texts()), overlaps(lay.texts())
    view = QRectF(0, 0, lay.width, lay.height).adjusted(-0.5, -0.5, 0.5, 0.5)
    assert all(view.contains(r) for _n, r in lay.texts())
    names = {f"GPU {d}": d for d in range(16)}
    shapes = [(f"box {d}", b.rect()) for d, b in enumerate(lay.devices)] + [("fabric", band)]
    shapes += [(f"key {i}", r) for i, r in enumerate(lay.swatches)]
    for name, r in lay.texts():  # a text meets no box but its own device's, nor the fabric, nor the key
        for other, q in shapes:
            if other == f"box {names.get(name, -1)}" or (name.startswith("key") and other.startswith("key")):
                continue
            i = r.intersected(q)
            assert i.width() <= 0.5 or i.height() <= 0.5, (name, other)
    for k, c in enumerate(lay.clusters):  # every box and its name inside its node; the key under both
        for d in range(8 * k, 8 * k + 8):
            assert c.contains(lay.devices[d].rect()) and c.contains(lay.device_labels[d].rect), d
        assert all(r.top() >= c.bottom() for r in lay.swatches)
    assert not overlaps(shapes[:17]), overlaps(shapes[:17])  # the boxes and the fabric


@pytest.mark.parametrize("lang", ("en", "zh"))
@pytest.mark.parametrize("W,H", ((1280, 546), (1040, 450), (1040, 460), (980, 460)), ids=lambda v: str(v))
def test_two_dgx_nodes_are_boxes_in_both_languages_at_1_5x(W, H, lang, qapp):
    """Chinese at 1280×720 and 1.5× drew the DGX scene's GPUs as small diamonds (radial bars, 7 px blocks)
    where English drew boxes: with the story column beside it the picture is about 1040×460, where the
    taller CJK names leave no zoom whose facing boxes reach 24 px blocks, and present_layout fell back to
    the bars. (1280×546: the picture without the story column.) Boxes in both languages now, their blocks
    at least 20 px on screen (English reaches 24 there; Chinese 22.8 at 1040×460)."""
    from app import i18n
    from app.classroom.presentation import ring_zoom
    from app.core.scenarios import Scenario, build_run
    from app.views.ring.layout_parts import overlaps
    from app.views.ring.machine_layout import machine_shape
    from app.views.ring.ring_layout import present_layout
    from app.views.ring.ring_texts import machine_texts, ring_shape, ring_texts

    i18n.set_language(qapp, lang)
    run = build_run(Scenario("all-reduce", 16, "hier", topology="dgx-h100"))
    texts, shape = machine_texts(run, ring_texts(run)), machine_shape(run.comm.topology, ring_shape(run))
    lay, z = present_layout(W, H, 1.5, texts, shape, ring_zoom(W, H, 1.5))
    assert lay.kind == "nodes" and lay.mode == "box" and lay.nic_lane_offsets, (lay.mode, z)
    assert lay.block * z >= 20, lay.block * z
    assert all(d.rotation == 0 for d in lay.devices)  # boxes, not diamonds
    assert not overlaps(lay.texts()), overlaps(lay.texts())


def test_a_1280x720_projector_at_1_5x_has_the_story_column_where_the_picture_keeps_its_sizes(bars, qapp):
    """F11 at 1280×720 and 1.5× had no explanation column (231 px of room under its least of 240): now the
    column is there beside a one-switch ring (its picture beside the column keeps 24 px blocks and its
    words at 1.5× the desk's), and yields to the two DGX nodes, whose words beside it would shrink to 1.2×."""
    from app.core.scenarios import Scenario, build_run
    from app.views.ring.machine_layout import machine_shape
    from app.views.ring.ring_texts import machine_texts, ring_shape, ring_texts

    def plan(**scenario):
        run = build_run(Scenario(**scenario))
        texts, shape = machine_texts(run, ring_texts(run)), machine_shape(run.comm.topology, ring_shape(run))
        return presentation_plan(1280, 720, 1.5, bars[1.0], keeps=picture_keeps(texts, shape, 1.5))

    ring = plan(kind="all-reduce", n=8)
    assert ring.story_w >= STORY_MIN_W * 1.5 and ring.story_w >= 210
    assert ring.share(1280, 720) >= 0.60
    assert presentation_plan(1280, 720, 1.5, bars[1.0]).story_w == ring.story_w  # (the plan without a picture)
    assert plan(kind="all-reduce", n=16, algo="hier", topology="dgx-h100").story_w == 0
    assert presentation_plan(1280, 720, 1.75, bars[1.0]).story_w == 0  # from 1.75× the picture has it all
