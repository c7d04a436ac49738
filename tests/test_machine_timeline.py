"""
The main timeline on a machine of several nodes: the messages that cross between nodes
wear the ring's dashed gold fabric outline, and the hierarchical all-reduce's phases are named.
"""

import numpy as np
from PySide6.QtCore import QPointF

from app.views.ring.ring_layers import FABRIC_COLOR
from app.state import Playback, Scenario, ScenarioModel
from app.views.timeline.timeline import TimelineView
from timeline_reading import placed_texts, plot_texts

GOLD = np.array([int(FABRIC_COLOR[i:i + 2], 16) for i in (1, 3, 5)])


def _view(qapp, nbytes=2**20, **kw):
    model = ScenarioModel(Scenario().with_changes(kind="all-reduce", nbytes=nbytes, **kw))
    v = TimelineView(model, Playback(model))
    v.resize(1000, 330)
    v.show()
    qapp.processEvents()
    v._build(model.run)  # with the view's height known (the phases' tier is sized in pixels)
    qapp.processEvents()
    return v


def _pixels(v):
    img = v.grab().toImage()
    w, h = img.width(), img.height()
    ptr = img.constBits()
    a = np.frombuffer(ptr, np.uint8, count=img.bytesPerLine() * h).reshape(h, img.bytesPerLine())
    a = a[:, :4 * w].reshape(h, w, 4)
    return a[:, :, 2::-1].astype(int), img.devicePixelRatio()  # BGRA → RGB


def _gold(rgb):
    return np.abs(rgb - GOLD).max(axis=-1) <= 12


def test_messages_between_nodes_wear_the_fabric_outline_and_the_phases_are_named(qapp):
    # 64 MiB: NCCL's NVLS Tree spends most of a 1 MiB call starting up, its phases too narrow to name
    v = _view(qapp, n=16, topology="dgx-h100", algo="hier", nbytes=2**26)
    rgb, dpr = _pixels(v)
    vb = v.plot.getViewBox()
    msgs = v.model.run.trace.messages
    P = 8
    inter = next(m for m in msgs if m.src // P != m.dst // P)
    intra = next(m for m in msgs if m.src // P == m.dst // P)

    def box(m):  # the sender's bar on screen, a few pixels round it
        a = v.plot.mapFromScene(vb.mapViewToScene(QPointF(m.t_start / v.unit_s, m.src - 0.45)))
        b = v.plot.mapFromScene(vb.mapViewToScene(QPointF(m.t_end / v.unit_s, m.src)))
        x0, x1 = int(a.x() * dpr) - 2, int(b.x() * dpr) + 3
        y0, y1 = int(a.y() * dpr) - 2, int(b.y() * dpr) + 3
        return _gold(rgb[y0:y1, x0:x1]).sum()

    assert box(inter) >= 6  # the dashed outline's gold dashes over the bar
    assert box(intra) == 0
    assert "crosses between nodes" in v.plot.getAxis("bottom").labelString()
    # the hierarchical all-reduce's phases, named in time order over their spans
    # over them the collective's own name: the plot's texts are the phases' three and this one
    assert sorted(plot_texts(v)) == sorted(["all-reduce", "intra-node RS", "inter-node AR", "intra-node AG"])
    phases = [(x, text) for x, text in placed_texts(v) if text != "all-reduce"]
    assert [text for _x, text in phases] == ["intra-node RS", "inter-node AR", "intra-node AG"]  # left to right
    # each phase label sits over its own span, inside the plot: after the collective's start
    assert phases[0][0] > 0


def test_one_switch_has_no_fabric_colour_and_no_phases(qapp):
    v = _view(qapp, n=8, topology="dgx-h100")
    rgb, _dpr = _pixels(v)
    assert _gold(rgb).sum() == 0
    # no phase names (NCCL's base latency before the first message is named as such: the start-up)
    assert [t for t in plot_texts(v) if not t.startswith("start-up latency")] == ["all-reduce"]
    assert "crosses between nodes" not in v.plot.getAxis("bottom").labelString()


def test_a_torus_names_its_rows_chips_and_a_switch_names_gpus(qapp):
    for kw, word in (({"topology": "tpu-v5e-16x16", "n": 16, "algo": "torus"}, "chip"), ({"n": 8}, "GPU")):
        v = _view(qapp, **kw)
        labels = [lab for _p, lab in v.plot.getAxis("left")._tickLevels[0] if lab != "switch"]
        assert labels and all(lab.startswith(word) for lab in labels), labels
        v.close()
