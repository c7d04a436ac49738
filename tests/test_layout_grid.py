"""
A layout grid: the ring view shown at the ring's room on a 1280×720 and a 1920×1080
screen, for n ∈ {2, 8, 16, 64, 256} on each machine that runs it (one switch: all; DGX H100 nodes: 16 and
64, the app simulates at most 72 devices on a machine; a TPU v4 torus: 8, 16, 64), in
English and Chinese and in every theme. Checked on the items the view paints (their scene
rectangles and fonts), never on state kept for tests:
  * no text overlaps text (two visible labels share less than 1 px in either direction);
  * every label's font is at least MIN_TEXT_PX;
  * every device is at least MIN_BOX_PX on its short side (MIN_BAR_PX for the radial bars of n > 16
    on one switch, whose long side is at least MIN_BAR_LONG_PX) and at most n/16 devices (none up to
    16) go without their name; above 16 at least MIN_NAMES are shown, spread evenly round the ring.

Sampling: every (n, machine, screen) that the machine allows (20 views), the language and theme
taken in turn along that list (i % 2, i % 3), so every language meets every theme and every n
meets both languages; the product of all five would be 150 views for little more.
"""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtCore import QRectF

from app import i18n, theme
from app.state import Playback, Scenario, ScenarioModel
from app.views.ring.ring_view import RingView

MIN_TEXT_PX = 9  # the theme's smallest text is 15 px; the layout may shrink names to this, never below
MIN_BOX_PX = 12  # a device box, short side
# a radial bar's width: n = 256 on one switch in the desk's room on a 1280×720 screen has 1.4 px of
# circumference per bar (bars never overlap a neighbour: what one holds would hide the next's)
MIN_BAR_PX = 1.2
MIN_BAR_LONG_PX = 14  # ...and its length, what shows its chunks (DGX nodes' bars are short)
MIN_NAMES = 8  # above 16 devices the names thin out (every 2nd, 4th, ...), never below 8 of them
SCREENS = ((1280, 720), (1920, 1080))
NS = (2, 8, 16, 64, 256)
MACHINES = ("switch", "nodes", "torus")
TORUS = {8: "tpu-v4-4x4x4", 16: "tpu-v4-4x4x4", 64: "tpu-v4-4x4x4"}
THEMES = tuple(theme.THEMES)
LANGS = ("en", "zh")


def scenario(machine: str, n: int):
    if machine == "switch":
        return Scenario(kind="all-gather", n=n, algo="ring")
    if machine == "nodes":
        return None if not 16 <= n <= 64 else Scenario(kind="all-gather", n=n, topology="dgx-h100").with_changes()
    return None if n not in TORUS else Scenario(kind="all-gather", n=n, topology=TORUS[n]).with_changes(algo="torus")


def grid():
    cells = [(n, m, s) for n, m, s in itertools.product(NS, MACHINES, SCREENS) if scenario(m, n) is not None]
    return [(n, m, s, LANGS[i % 2], THEMES[i % 3]) for i, (n, m, s) in enumerate(cells)]


def _id(cell):
    n, m, (w, h), lang, th = cell.values[0] if hasattr(cell, "values") else cell
    return f"{m}-{n}-{w}x{h}-{lang}-{th}"


@pytest.mark.parametrize("cell", grid(), ids=_id)
def test_the_ring_reads_at_every_n_machine_size_language_and_theme(qtbot, qapp, cell):
    n, machine, (W, H), lang, th = cell
    before = theme.palette().key
    try:
        theme.set_theme(th)
        i18n.set_language(qapp, lang)
        model = ScenarioModel(scenario(machine, n))
        pb = Playback(model)
        pb.seek(pb.stops[min(3, len(pb.stops) - 1)] + 1e-12)  # blocks in flight, some chunks held
        view = RingView(model, pb)
        qtbot.addWidget(view)
        view.resize(int(W * 0.55), int(H * 0.6))  # the ring's room at the desk, docks round it
        view.show()
        qtbot.waitExposed(view)
        view._layout()
        problems = _problems(view, n)
    finally:
        i18n.set_language(qapp, "en")
        theme.set_theme(before)
    assert not problems, f"{len(problems)} problems, e.g.\n" + "\n".join(problems[:10])


def _problems(view, n):
    problems = []
    labels = [lab for lab in view._labels if lab.isVisible() and lab.lines]
    rects = [(lab, lab.sceneBoundingRect()) for lab in labels]
    for (a, ra), (b, rb) in itertools.combinations(rects, 2):
        x = ra.intersected(rb)
        if x.width() > 1 and x.height() > 1:
            problems.append(f"{a.lines[0]!r} overlaps {b.lines[0]!r}")
    problems += [f"{lab.lines[0]!r} is {lab._font.pixelSize()} px" for lab in labels
                 if lab._font.pixelSize() < MIN_TEXT_PX]
    scene = QRectF(view.scene().sceneRect()).adjusted(-1, -1, 1, 1)
    problems += [f"{lab.lines[0]!r} leaves the picture" for lab, r in rects if not scene.contains(r)]
    for d, item in enumerate(view.devices):
        w, h = item.w, item.h
        short, long = min(w, h), max(w, h)
        if item.radial:
            if short < MIN_BAR_PX or long < MIN_BAR_LONG_PX:
                problems.append(f"GPU {d}: bar {w:.1f}×{h:.1f} px")
        elif short < MIN_BOX_PX:
            problems.append(f"GPU {d}: box {w:.1f}×{h:.1f} px")
    named = [d for d, lab in enumerate(view.device_labels) if lab.isVisible()]
    if len(named) < (n if n <= 16 else MIN_NAMES):
        problems.append(f"only {len(named)} of {n} devices are named")
    if n > 16 and named:  # thinned evenly: no gap between names more than twice the smallest
        gaps = [b - a for a, b in zip(named, named[1:] + [named[0] + n])]
        if max(gaps) > 2 * min(gaps):
            problems.append(f"names unevenly spread: gaps {min(gaps)}..{max(gaps)}")
    return problems
