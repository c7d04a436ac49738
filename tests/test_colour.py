"""
Colour means one thing: for every theme and n, neighbouring devices' colours
differ, and no device colour looks like the empty slot ("not there yet").

Colour difference is CIE76 ΔE*ab: the Euclidean distance in CIELAB (sRGB, D65), converted here in
numpy from the hex strings, not by the app. A just-noticeable difference is about 2.3.

Thresholds (stated):
  * EMPTY_DE = 25: every device colour is at least this far from the theme's empty-slot colour,
    and a device colour that is nearly neutral (chroma C*ab < 15: black, grey or white) must be
    at least EMPTY_DL = 50 L* darker than the empty slot: black beside the light theme's light-grey
    slot reads as a colour, but a light grey or white beside a dark-grey slot reads as "empty"
    (the legend's "grey = not there yet"; the dark theme's GPU 7 was #BBBBBB, high contrast's white).
  * Neighbours on the ring (d, d+1 mod n): n ≤ 8 (Okabe–Ito, one colour each) ΔE ≥ 25;
    above 8 the colours go by position round a perceptually even cyclic map, so neighbours are
    one n-th of its loop (CET-C6, ΔE ≈ 460 round) apart: ΔE ≥ NEIGHBOUR_DE[n] = 20 at n = 16,
    6 at 64, 1 at 256 (measured minima 21.0, 6.8, 1.13; the theme samples the map at equal arc
    length), and the map is even: no neighbour step is more than 2.6× the smallest (8-bit
    rounding makes 1.1–2.5 at n = 256). At n = 256 no map can make neighbours differ much:
    there the position (and the labels every 16 or 32) tell them apart, and the key is a bar.
"""

from __future__ import annotations

import numpy as np
import pytest

from app import theme

NS = (2, 3, 5, 8, 16, 64, 256)
EMPTY_DE, EMPTY_DL, NEUTRAL_C = 25.0, 50.0, 15.0
NEIGHBOUR_DE = {2: 25.0, 3: 25.0, 5: 25.0, 8: 25.0, 16: 20.0, 64: 6.0, 256: 1.0}
EVENNESS = 2.6


def lab(hexes) -> np.ndarray:
    """CIELAB (L*, a*, b*) of '#rrggbb' strings: sRGB → linear → XYZ (D65) → Lab."""
    rgb = np.array([[int(h[i:i + 2], 16) for i in (1, 3, 5)] for h in hexes]) / 255.0
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def delta_e(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """CIE76 ΔE*ab between Lab rows."""
    return np.linalg.norm(a - b, axis=-1)


def test_the_conversion_matches_known_values():
    L = lab(["#FFFFFF", "#000000", "#FF0000"])
    assert np.allclose(L[0], [100, 0, 0], atol=0.05) and np.allclose(L[1], [0, 0, 0], atol=0.05)
    assert np.allclose(L[2], [53.24, 80.09, 67.20], atol=0.1)  # sRGB red, the textbook value


@pytest.fixture(params=list(theme.THEMES))
def each_theme(request):
    before = theme.palette().key
    theme.set_theme(request.param)
    yield theme.palette()
    theme.set_theme(before)


@pytest.mark.parametrize("n", NS)
def test_no_device_colour_looks_like_the_empty_slot(qapp, each_theme, n):
    devices = lab([c.name() for c in theme.device_colors(n)])
    empty = lab([each_theme.slot_empty])[0]
    de = delta_e(devices, empty)
    assert de.min() >= EMPTY_DE, f"{each_theme.key} n={n}: GPU {de.argmin()} is ΔE {de.min():.1f} from empty"
    chroma = np.hypot(devices[:, 1], devices[:, 2])
    neutral = np.nonzero(chroma < NEUTRAL_C)[0]
    for d in neutral:
        darker = empty[0] - devices[d, 0]
        assert darker >= EMPTY_DL, f"{each_theme.key} n={n}: GPU {d} is a grey or white ({darker:+.0f} L* darker than empty)"


@pytest.mark.parametrize("n", NS)
def test_neighbouring_devices_differ(qapp, each_theme, n):
    devices = lab([c.name() for c in theme.device_colors(n)])
    steps = delta_e(devices, np.roll(devices, -1, axis=0))  # d and d+1, and n-1 with 0
    assert steps.min() >= NEIGHBOUR_DE[n], (
        f"{each_theme.key} n={n}: GPUs {steps.argmin()} and {(steps.argmin() + 1) % n} differ by ΔE {steps.min():.2f}")
    if theme.colour_by_position(n):
        assert steps.max() <= EVENNESS * steps.min(), f"n={n}: uneven map, steps {steps.min():.1f}..{steps.max():.1f}"
    else:  # one distinct colour each: any two, not only neighbours
        pairs = delta_e(devices[:, None], devices[None, :])[np.triu_indices(n, 1)]
        assert pairs.min() >= NEIGHBOUR_DE[n], f"{each_theme.key} n={n}: two GPUs ΔE {pairs.min():.1f} apart"


def test_colours_go_by_position_exactly_above_the_distinct_palette(qapp, each_theme):
    assert not theme.colour_by_position(8) and theme.colour_by_position(9)
    assert [c.name().upper() for c in theme.device_colors(8)] == [c.upper() for c in each_theme.device_colors]


# -- what is painted -----------------------------------------------------------------------
def _pixels(img):
    import numpy as np
    from PySide6.QtGui import QImage

    img = img.convertToFormat(QImage.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    return a[:, :img.width(), 2::-1].copy()  # RGB


def _hex(rgb) -> str:
    return "#{:02X}{:02X}{:02X}".format(*(int(v) for v in rgb))


@pytest.mark.parametrize("case", ["matmul-1", "matmul-2", "matmul-3", "matmul-4"])
def test_a_replicated_matrix_is_painted_in_every_gpus_colour_never_the_empty_grey(qtbot, each_theme, case):
    """Issue 23 item 3: a matrix every GPU holds whole (B replicated, C after an all-gather) is
    painted as stripes of the devices' colours: most of its pixels are within ΔE 10 of some device
    colour, at least min(n, 4) devices' colours appear, and almost none is the empty-slot grey."""
    from app.state import Playback, Scenario, ScenarioModel
    from app.views.ring.matmul_view import MatmulView

    n = 8
    model = ScenarioModel(Scenario(kind=case, n=n))
    pb = Playback(model)
    pb.seek(model.run.trace.t_end)  # the end: row 2 (after the collective) in effect
    view = MatmulView(model, pb)
    qtbot.addWidget(view)
    view.resize(700, 700)
    view.show()
    qtbot.waitExposed(view)
    img = _pixels(view.grab().toImage())
    dpr = img.shape[1] / view.width()
    devices = lab([c.name() for c in theme.device_colors(n)])
    empty = lab([each_theme.slot_empty])[0]
    replicated = [it.matrix for row in view.layout().rows for it in row.items
                  if it.matrix is not None and it.axis is None]
    if case != "matmul-1":
        assert replicated, f"{case}: no matrix every GPU holds whole"
    for r in replicated:
        inner = r.adjusted(3, 3, -3, -3)  # clear of the outline
        px = img[int(inner.top() * dpr):int(inner.bottom() * dpr), int(inner.left() * dpr):int(inner.right() * dpr)]
        L = lab([_hex(c) for c in px.reshape(-1, 3)[::7]])
        nearest = delta_e(L[:, None], devices[None]).min(axis=1)
        who = delta_e(L[:, None], devices[None]).argmin(axis=1)[nearest < 10]
        assert (nearest < 10).mean() > 0.7, f"{case}: a replicated matrix is not painted in device colours"
        assert len(set(who.tolist())) >= min(n, 4)
        assert (delta_e(L, empty) < EMPTY_DE).mean() < 0.05, f"{case}: a replicated matrix looks empty"


@pytest.mark.parametrize("n", [8, 16, 64])
def test_the_colour_key_is_swatches_up_to_8_and_a_bar_by_position_beyond(qtbot, each_theme, n):
    """The key as painted: up to 8 GPUs one swatch each in its colour; beyond, a bar whose colour at
    each labelled GPU's place is that GPU's colour (ΔE < 8) and that runs on without gaps."""
    from app.state import Playback, Scenario, ScenarioModel
    from app.views.ring.ring_view import RingView

    model = ScenarioModel(Scenario(kind="all-gather", n=n))
    view = RingView(model, Playback(model))
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.show()
    qtbot.waitExposed(view)
    img = _pixels(view.viewport().grab().toImage())
    T = view.viewportTransform()
    dpr = img.shape[1] / view.viewport().width()
    colours = lab([c.name() for c in theme.device_colors(n)])
    swatches = [sw.sceneBoundingRect() for sw in view.legend_swatches]
    devices = view.swatch_devices
    for d, r in zip(devices, swatches):
        # the swatch's colour beside its label's left edge (by position) or at its centre (one per GPU)
        pt = T.map(r.topLeft() + (r.bottomLeft() - r.topLeft()) * 0.5) if n > 8 else T.map(r.center())
        x = int((pt.x() + (1.5 if n > 8 else 0)) * dpr)
        got = lab([_hex(img[int(pt.y() * dpr), x])])[0]
        assert delta_e(got, colours[d]) < 8, f"n={n}: the key's colour for GPU {d} is {_hex(img[int(pt.y() * dpr), x])}"
    gaps = [b.left() - a.right() for a, b in zip(swatches, swatches[1:])]
    if n > 8:
        assert max(abs(g) for g in gaps) < 1.5, f"n={n}: the bar has gaps {gaps}"
    else:
        assert min(gaps) > 4, "one swatch per GPU, apart"
