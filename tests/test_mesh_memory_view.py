"""
Every device's memory in the Mesh view and the explanation: the numbers are the engine's
(simcore.mesh.programs.memory_per_device), which equal an independent count (the local blocks'
bytes × byte_scale, and for FSDP × TP the book's shapes by hand); the bar along each cell's bottom is
as long as the device's total against the largest one's, painted once per layout; the legend is there
in English and Chinese.
"""

import re
from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtGui import QImage

from app import i18n
from app.words import fmt_bytes, mesh_html
from simcore.mesh.programs import memory_per_device
from simcore.mesh.scenario import run_mesh
from test_mesh_view_layers import make  # the view on a mesh run, shown

MiB = 2 ** 20
UNIT = {"B": 1, "KiB": 2 ** 10, "MiB": MiB, "GiB": 2 ** 30, "TiB": 2 ** 40}


def pixels(widget) -> np.ndarray:
    img = widget.grab().toImage().convertToFormat(QImage.Format_RGB32)
    w, h = img.width(), img.height()
    return np.frombuffer(img.constBits(), np.uint8).reshape(h, img.bytesPerLine())[:, :w * 4].reshape(h, w, 4).copy()


def rgb(colour) -> tuple:
    return colour.blue(), colour.green(), colour.red()  # RGB32 in memory: B, G, R, A


def independent_count(res) -> list:
    """Per position {class: bytes} counted from the run's own arrays: each local block's nbytes ×
    byte_scale, and the largest collective a device took part in (its group's S)."""
    mesh = res.mesh
    out = []
    for p in range(mesh.n):
        row = {cls: sum(np.asarray(getattr(t, "blocks", t)[p]).nbytes for t in ts.values()) * mesh.comm.byte_scale
               for cls, ts in res.tensors.items()}
        d = int(mesh.dev[p])
        row["buffers in flight"] = max(r.nbytes for r in mesh.log if any(d in g for g in r.groups))
        out.append(row)
    return out


CASES = [("X=2,Y=4", "fsdp-tp-layer"), ("X=4,Y=4", "2d-ws-ffn")]


@pytest.mark.parametrize("mesh, program", CASES)
def test_the_engines_memory_equals_an_independent_count(mesh, program):
    res = run_mesh(mesh, program)
    assert res.memory == memory_per_device(res.mesh, res.tensors)
    count = independent_count(res)
    for p in range(res.mesh.n):
        assert set(res.memory[p]) == set(count[p])
        for cls, b in count[p].items():
            assert res.memory[p][cls] == pytest.approx(b, rel=1e-12), (p, cls)


def test_fsdp_tp_memory_by_hand():
    """FSDP (X=2) × TP (Y=4), B = D = 8192, F = 32768 in bf16: W_in[D_X, F_Y] and W_out[F_Y, D_X] are
    2·D·F·2 B / (X·Y) = 128 MiB a device; In[B_X, D_Y], Tmp[B_X, F_Y] and Out[B_X, D_Y] are
    (2·B·D + B·F)·2 B / (X·Y) = 96 MiB; the largest buffer, W_in all-gathered over X into W_in[D, F_Y],
    is D·F·2 B / Y = 128 MiB."""
    B, D, F, X, Y = 8192, 8192, 32768, 2, 4
    res = run_mesh("X=2,Y=4", "fsdp-tp-layer")
    for row in res.memory:
        assert row["weights"] == 2 * D * F * 2 / (X * Y) == 128 * MiB
        assert row["activations"] == (2 * B * D + B * F) * 2 / (X * Y) == 96 * MiB
        assert row["buffers in flight"] == D * F * 2 / Y == 128 * MiB
        assert row["KV cache"] == 0


@pytest.mark.parametrize("mesh, program", CASES)
def test_the_explanation_gives_each_devices_memory_by_class(qtbot, mesh, program):
    model, _pb, _view = make(qtbot, mesh, program)
    info = model.run.mesh
    engine = run_mesh(mesh, program).memory
    html = mesh_html(info, 0.0)
    line = next(x for x in html.split("\n") if "Memory per device" in x)
    row = engine[0]
    assert all(r == row for r in engine)  # every device holds the same: one line says so
    assert "on every device" in line
    for cls, b in row.items():
        if b > 0:
            m = re.search(re.escape(cls) + r" ([\d.]+) (B|KiB|MiB|GiB)", line)
            assert m, cls
            assert float(m.group(1)) * UNIT[m.group(2)] == pytest.approx(b, rel=5e-3)
            assert m.group(0) == f"{cls} {fmt_bytes(b)}"
        else:
            assert cls not in line
    total = sum(row.values())
    assert line.removesuffix("</p>").endswith(f"= {fmt_bytes(total)} on every device.")


def test_the_explanation_names_the_largest_and_smallest_device_where_they_differ(qtbot):
    model, _pb, _view = make(qtbot, "X=2,Y=4", "fsdp-tp-layer")
    info = model.run.mesh
    memory = [dict(r) for r in info.memory]
    memory[5]["weights"] *= 2  # device (1,1) holds twice the weights
    memory[2]["activations"] /= 2  # device (0,2) half the activations
    html = mesh_html(replace(info, memory=tuple(memory)), 0.0)
    assert ("the most on device (1,1): weights 256 MiB + activations 96 MiB + buffers in flight 128 MiB "
            "= 480 MiB") in html
    assert ("the least on device (0,2): weights 128 MiB + activations 48 MiB + buffers in flight 128 MiB "
            "= 304 MiB") in html


def bar_lengths(view, img) -> np.ndarray:
    """Per cell: the pixels of the memory classes' colours along the middle row of its bar."""
    lay = view.layout()
    colours = [rgb(c) for c in view.memory_colours().values()]
    out = []
    for pos, segs in enumerate(lay.memory_bars):
        assert segs, pos
        y = int(segs[0][1].center().y())
        x, _y, w, _h = lay.cells[pos]
        row = img[y, int(x):int(x + w), :3]
        hit = np.zeros(len(row), bool)
        for c in colours:
            hit |= np.all(row == np.array(c, np.uint8), axis=1)
        out.append(int(hit.sum()))
    return np.array(out)


def track_width(view, pos) -> float:
    x, _y, w, _h = view.layout().cells[pos]
    return round(x + w - 3) - round(x + 3)


@pytest.mark.parametrize("mesh, program", [("X=2,Y=4", "fsdp-tp-layer"), ("X=4,Y=4", "2d-ws-ffn"),
                                           ("X=2,Y=4", "redistribute")])
def test_equal_totals_paint_bars_of_equal_length(qtbot, mesh, program):
    model, _pb, view = make(qtbot, mesh, program)
    img = pixels(view)
    lengths = bar_lengths(view, img)
    totals = model.run.mesh.memory_totals()
    assert np.all(totals == totals[0])
    assert len(lengths) == model.run.mesh.n
    full = track_width(view, 0)
    assert full > 100
    assert np.all(np.abs(lengths - full) <= 2), (lengths, full)  # every device's total is the largest


def test_a_bar_is_as_long_as_its_devices_total_against_the_largest(qtbot):
    model, pb, view = make(qtbot, "X=2,Y=4", "fsdp-tp-layer")
    info = model.run.mesh
    memory = [dict(r) for r in info.memory]
    memory[5]["weights"] *= 2  # 480 MiB against everyone else's 352 MiB
    memory[2]["activations"] = 0.0  # 256 MiB
    view._set_run(replace(model.run, mesh=replace(info, memory=tuple(memory))))
    img = pixels(view)
    lengths = bar_lengths(view, img)
    totals = np.array([sum(r.values()) for r in memory])
    expect = track_width(view, 0) * totals / totals.max()
    assert np.all(np.abs(lengths - expect) <= 2), (lengths, expect)
    assert lengths[5] > lengths[0] > lengths[2]
    # each class's segment: its bytes' share of the largest total
    segs = dict((c, r.width()) for c, r in view.layout().memory_bars[5])
    for c, w in segs.items():
        assert abs(w - track_width(view, 5) * memory[5][c] / totals.max()) <= 1.5, c


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_legend_names_the_classes_and_the_totals(qtbot, qapp, lang):
    try:
        i18n.set_language(qapp, lang)
        model, _pb, view = make(qtbot, "X=2,Y=4", "fsdp-tp-layer", size=(1280, 620))
        img = pixels(view)
        texts = [t for t, _r in view.memory_legend_rects]
        names = {"en": ["weights", "activations", "buffers in flight"], "zh": ["权重", "激活值", "在途缓冲区"]}[lang]
        lead = {"en": "memory per device:", "zh": "每台设备的内存："}[lang]
        assert texts[0] == lead and texts[1:4] == names
        assert "352 MiB" in texts[-1]
        for _t, r in view.memory_legend_rects:  # drawn inside the view, under the grid
            assert view.rect().contains(r.toAlignedRect()) and r.top() >= view.layout().grid.bottom()
        band = view.layout().legend
        part = img[int(band.top()):int(band.bottom()), int(band.left()):int(band.right()), :3]
        for c in view.memory_colours().values():  # each class's colour square
            assert np.all(part == np.array(rgb(c), np.uint8), axis=2).sum() >= 16
    finally:
        i18n.set_language(qapp, "en")


def test_the_legend_shows_the_spread_where_devices_differ(qtbot):
    model, _pb, view = make(qtbot, "X=2,Y=4", "fsdp-tp-layer", size=(1280, 620))
    info = model.run.mesh
    memory = [dict(r) for r in info.memory]
    memory[5]["weights"] *= 2
    view._set_run(replace(model.run, mesh=replace(info, memory=tuple(memory))))
    pixels(view)
    assert view.memory_legend_rects[-1][0].endswith("352 MiB–480 MiB")


def test_a_small_cell_drops_the_bar_and_the_legend_keeps_the_totals(qtbot):
    _model, _pb, view = make(qtbot, "X=16,Y=16", "redistribute", size=(700, 480))
    pixels(view)
    assert view.layout().memory_bars == []
    assert view.memory_legend_rects[-1][0].endswith("8 MiB each")


def test_the_bars_are_painted_once_per_layout_not_per_frame(qtbot, monkeypatch):
    from app.views.mesh.mesh_view import MeshView

    calls = []
    paint = MeshView._paint_memory_bars
    monkeypatch.setattr(MeshView, "_paint_memory_bars", lambda self, p, lay: (calls.append(1), paint(self, p, lay)))
    model, pb, view = make(qtbot, "X=4,Y=4", "2d-ws-ffn")
    e = model.run.mesh.events[0]
    ends = np.unique(model.run.mesh.columns["t_end"][model.run.mesh.columns["coll"] == e.coll])
    t0, t1 = ends[0] + 0.3 * (ends[1] - ends[0]), ends[0] + 0.6 * (ends[1] - ends[0])  # only messages move
    pb.seek(t0)
    a = pixels(view)
    base = view.base_paints
    pb.seek(t1)
    b = pixels(view)
    assert view.base_paints == base  # the frame cost: no base layer painted again
    lay = view.layout()
    for segs in lay.memory_bars:
        for _c, r in segs:
            y, x0, x1 = int(r.center().y()), int(r.left()), int(r.right())
            assert np.array_equal(a[y, x0:x1], b[y, x0:x1])  # the bar is still there, unchanged
    for t in np.linspace(0, model.run.trace.t_end, 12):  # across every collective
        pb.seek(float(t))
        pixels(view)
    assert len(calls) == 1  # with the cells' background: once per layout
    base_img = lay.base.convertToFormat(QImage.Format_RGB32)
    w, h = base_img.width(), base_img.height()
    arr = np.frombuffer(base_img.constBits(), np.uint8).reshape(h, base_img.bytesPerLine())[:, :w * 4].reshape(h, w, 4)
    c, r = lay.memory_bars[0][0]
    # the bar is in the base layer itself
    assert tuple(arr[int(r.center().y()), int(r.center().x()), :3]) == rgb(view.memory_colours()[c])
