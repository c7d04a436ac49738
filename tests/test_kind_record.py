"""
A topology kind is one record (simcore.kind_record): every machine's record says what its class
is (layout family, nodes, grid, wraparound, links and their words, NCCL or not), and a new kind,
defined here and nowhere in the app, opens in the ring view, the controls and the latency tab by
its record and its preset-kind entries alone.
"""

from dataclasses import dataclass

import numpy as np
import pytest

from simcore import topology_presets as tp
from simcore.comm_sim import nodes, switch, torus
from simcore.kind_record import KindRecord, LinkRole, record_of
from simcore.links import NVLINK4, TPU_V4_ICI


@pytest.mark.parametrize("key,n", [("dgx-h100", 8), ("dgx-h100", 16), ("dgx-h100", 256), ("gb200-nvl72", 144),
                                   ("tpu-v5e-16x16", 32), ("tpu-v5e-16x16", 256), ("tpu-v4-4x4x4", 64),
                                   ("tpu-v4-4x4x4", 16), ("tpu-v4-4x4x4", 1)])
def test_every_machines_record_says_what_its_class_is(key, n):
    topo = tp.get_preset(key).topology(n)
    rec = topo.record
    assert rec.n == topo.n == n
    assert rec.nccl == bool(topo.tuning) and rec.base == topo.base
    if hasattr(topo, "n_nodes") and topo.n_nodes > 1:  # nodes over a fabric: NICs between, NVLink inside
        assert (rec.layout, rec.nodes, rec.per_node, rec.terms) == ("nodes", topo.n_nodes, topo.per_node, "two-level")
        assert rec.words_link("between") is topo.inter and rec.words_link("inside") is topo.intra
        assert rec.notes == ("between", "inside", "nics") and rec.device == "gpu"
    elif hasattr(topo, "shape"):  # a torus slice: its grid and the wraparound links it really has
        assert rec.grid == topo.shape and rec.wrap == tuple(topo.wraps()) and rec.device == "chip"
        assert rec.layout == ("torus" if n > 1 else "switch")
        assert rec.notes == ("torus" if all(topo.wraps()) else "slice",)
    else:  # one NVLink domain
        assert (rec.layout, rec.nodes, rec.notes, rec.device) == ("switch", 1, (), "gpu")
        assert rec.main is topo.link


def test_the_plain_constructors_records_and_a_readers_own_topology():
    assert switch(4).record.links == (LinkRole("link", "switch", NVLINK4),)
    one = nodes(1, 8).record  # one node is drawn as its switch, and its NIC is still its "inter" link
    assert (one.layout, one.nodes, one.per_node, one.notes, one.main_role) == ("switch", 1, 8, (), "intra")
    same = nodes(2, 4, intra=NVLINK4, inter=NVLINK4).record  # one LinkSpec both ways: the roles still tell them apart
    assert (same.main_role, same.link("inter"), same.notes) == ("intra", NVLINK4, ("between", "inside", "nics"))
    t = torus((4, 4)).record
    assert (t.layout, t.grid, t.wrap, t.notes, t.main) == ("torus", (4, 4), (True, True), ("torus",), TPU_V4_ICI)

    class Mine:  # what Comm asks of a topology, and no record: drawn as devices round one switch
        n, link, n_ports, base = 3, NVLINK4, 3, 2e-6

        def route(self, s, d):
            return s, d, self.link

    rec = record_of(Mine())
    assert (rec.kind, rec.layout, rec.n, rec.main, rec.base, rec.nccl) == ("mine", "switch", 3, NVLINK4, 2e-6, False)
    assert record_of(None) is None


def test_a_record_that_cannot_be_drawn_is_refused_in_one_sentence():
    link = (LinkRole("link", "switch", NVLINK4),)
    with pytest.raises(ValueError, match="layout is one of switch, nodes, torus"):
        KindRecord("x", "ring", 4, link)
    with pytest.raises(ValueError, match="nodes layout needs 2 or more nodes"):
        KindRecord("x", "nodes", 4, link, nodes=3, per_node=2)
    with pytest.raises(ValueError, match="one wrap flag per axis"):
        KindRecord("x", "torus", 4, link, grid=(2, 2), wrap=(True,))
    with pytest.raises(ValueError, match="words key"):
        LinkRole("link", "fabric", NVLINK4)


def test_the_spec_fields_are_the_records():
    assert tp.SPEC_FIELDS["nodes"] == nodes(2, 8).record.spec_fields
    assert tp.SPEC_FIELDS["torus"] == torus((4, 4)).record.spec_fields


# -- a new kind, defined only here ------------------------------------------------------------
@dataclass(frozen=True)
class Line(tp.TorusSlice):
    """n GPUs in a row, each linked to its two neighbours and no wraparound: the torus's algorithms
    (its kinds) run on it; the app is told what it is by its record alone."""

    @property
    def record(self):
        return KindRecord("line", "torus", self.n, (LinkRole("link", "slice", self.link),), grid=self.shape,
                          wrap=(False,), device="gpu", base=self.base, notes=("slice",))


@pytest.fixture
def line_machine(monkeypatch):
    """The kind "line" registered as a preset kind, and a machine "toy-line" of up to 8 GPUs on NVLink 4."""
    monkeypatch.setitem(tp.PRESET_KINDS, "line", tp.PresetKind(
        lambda p, top: [d for d in (1, 2, 4, 8) if d <= top],
        lambda p, n: tp.Layout("line", n, tp.link_of(p.intra), shape=(n,), wrap=(False,))))
    monkeypatch.setitem(tp.LAYOUT_KINDS, "line", tp.LayoutKind(
        lambda lay: Line((lay.n,), lay.intra, 0.0, wrap=(False,)), lambda lay: f"a line of {lay.n}"))
    monkeypatch.setitem(tp.PRESETS, "toy-line", tp.HardwarePreset(
        "toy-line", "Toy line", "h100", "line", 8, "nvlink4", slices=((2,), (4,), (8,)), max_devices=8))
    return "toy-line"


def test_a_new_kind_is_drawn_by_its_record_in_the_ring_view(qapp, line_machine):
    from PySide6.QtGui import QColor

    from app.state import Playback, Scenario, ScenarioModel
    from app.views.ring.ring_view import RingView

    model = ScenarioModel(Scenario().with_changes(kind="all-gather", n=8, topology=line_machine, nbytes=2**20))
    assert isinstance(model.run.comm.topology, Line)
    view = RingView(model, Playback(model))
    view.resize(1100, 560)
    view.show()
    qapp.processEvents()
    img = view.grab().toImage()
    lay = view.layout_now
    # the record's layout: a grid of one row of 8 without wraparound, devices left to right in order
    assert (lay.kind, lay.grid_shape, lay.grid_wrap) == ("torus", (8,), (False,))
    xs = [d.centre.x() for d in lay.devices]
    assert len({round(d.centre.y(), 3) for d in lay.devices}) == 1 and xs == sorted(xs) and len(set(xs)) == 8
    assert lay.wrap_stubs == ()  # no wraparound link drawn
    # every device is painted where the layout put it: its box's outline differs from the background
    bg = QColor(img.pixel(5, int(lay.devices[0].centre.y())))
    for d in lay.devices:
        r = d.rect()
        edge = [QColor(img.pixel(int(r.left()) + dx, int(r.center().y()))) for dx in range(-1, 3)]
        assert any(c != bg for c in edge), d
        assert QColor(img.pixel(int(r.center().x()), int(r.center().y()))) != bg
    # a link between neighbours is painted between their boxes, none beyond the row's ends
    a, b = lay.devices[3].rect(), lay.devices[4].rect()
    y = int(a.center().y())
    assert any(QColor(img.pixel(x, y)) != bg for x in range(int(a.right()) + 2, int(b.left()) - 1))
    # its words: the record's device word (GPUs, where a torus's class would say chips) and its link's
    assert "8 GPUs" in view.texts.title and "8 slice" in view.texts.title
    assert any("slice links: NVLink 4 (H100)" in s for s in view.texts.step_lines)
    view.close()


def test_a_new_kind_opens_in_the_controls_and_the_latency_tab(qapp, qtbot, line_machine):
    from app.controls import ControlPanel
    from app.state import Playback, ScenarioModel
    from app.views.latency.latency_view import LatencyView

    model = ScenarioModel()
    panel = ControlPanel(model)
    i = panel.machine.findData(line_machine)
    assert i >= 0 and panel.machine.itemText(i) == "Toy line"
    panel.machine.activated.emit(i)
    sc = model.scenario
    assert (sc.topology, sc.n) == (line_machine, 8)  # its largest group, from its preset kind's degrees
    assert [panel.algo.itemData(k) for k in range(panel.algo.count())] == ["", "torus"]
    assert not panel.link.isEnabled() and "NVLink 4" in panel.link.placeholderText()
    panel.close()

    view = LatencyView(model, Playback(model))
    qtbot.addWidget(view)
    view.resize(1400, 800)
    view.show()
    g = view.generation
    view.set_params(machine=line_machine)
    qtbot.waitUntil(lambda: view.generation > g and view._params["machine"] == line_machine, timeout=5000)
    bw = view._ffn["bw"]
    assert np.all(np.isfinite(bw[:8])) and np.all(np.isnan(bw[8:]))  # its groups: 1 … 8
    assert "Toy line" in view._ffn_title
