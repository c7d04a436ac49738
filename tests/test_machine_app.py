"""
The truer machine in the app: per-collective base latency in the engine and the cost
model, the machine's drawing (app/views/ring/machine_layout.py), scenarios naming a machine.
"""

import numpy as np
import pytest

from closed_forms import NCCL_RING_LL128_BASE, reference_hier_allreduce, reference_with_base
from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.comm_sim import Comm
from simcore.links import LINKS
from simcore.topology import nodes, switch
from simcore.sharding import all_reduce
from simcore.topology_presets import PRESETS


def _simulate(topo, S, algo=None):  # None: the machine's own choice
    n = topo.n
    L = 16 * n
    comm = Comm(topo, byte_scale=S / (L * 8))
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(L) for _ in range(n)]
    out = all_reduce(comm, arrays, algo=algo)
    np.testing.assert_allclose(out[n - 1], np.sum(arrays, axis=0), rtol=1e-12, atol=1e-12)
    return comm.time


@pytest.mark.parametrize("algo", list(ALLREDUCE_ALGOS))
def test_a_switch_with_base_latency_adds_it_once_per_call(algo):
    nvl = LINKS["nvlink4"]
    S = 2.0**20
    t = _simulate(switch(8, nvl, base=NCCL_RING_LL128_BASE), S, algo)
    want = reference_with_base("all-reduce", algo, 8, S, nvl.alpha, nvl.bw, NCCL_RING_LL128_BASE)
    assert t == pytest.approx(want, rel=1e-9)
    # the lecture's switch has none: the textbook closed form
    assert _simulate(switch(8, nvl), S, algo) == pytest.approx(want - NCCL_RING_LL128_BASE, rel=1e-9)


def test_hierarchical_pays_the_base_latency_once():
    """Pipelined as NCCL does, the hierarchical all-reduce is one call: one base latency, where
    Horovod's three calls paid three. At 64 KiB it is one chunk: the three ring phases back to back."""
    nvl, ib = LINKS["nvlink4"], LINKS["ib-ndr400"]
    S = 2.0**16
    t = _simulate(nodes(2, 4, nvl, ib, base=NCCL_RING_LL128_BASE), S)
    three_calls = reference_hier_allreduce(4, 2, S, (nvl.alpha, nvl.bw), (ib.alpha, ib.bw), NCCL_RING_LL128_BASE)
    assert t == pytest.approx(three_calls - 2 * NCCL_RING_LL128_BASE, rel=1e-9)


@pytest.mark.parametrize("key,n,algo", [("dgx-h100", 8, "ring"), ("dgx-h100", 8, "direct"), ("dgx-h100", 16, "ring"),
                                        ("gb200-nvl72", 8, "two-shot")])
def test_cost_model_t_comm_is_the_simulated_all_reduce(key, n, algo):
    """The t_comm of one all-reduce in the cost model = the simulated collective, base latency included."""
    from simcore.cost_model import comm_time

    preset = PRESETS[key]
    S = 8 * 8192 * 2.0  # a decode step's activations: batch 8, d_model 8192, bf16
    topo = preset.topology(n)
    simulated = _simulate(topo, S, algo)
    assert comm_time(key, n, S, algo) == pytest.approx(simulated, rel=1e-9)
    custom = topo.custom_kernel(algo)  # the lecture's kernels run as the custom all-reduce kernels (issue 32)
    assert simulated > (custom[0] if custom else NCCL_RING_LL128_BASE)


def test_a_bad_base_latency_is_refused():
    with pytest.raises(ValueError, match="base latency"):
        switch(4, LINKS["nvlink4"], base=-1e-6)
    with pytest.raises(ValueError, match="base latency"):
        nodes(2, 4, base=float("nan"))


# ---------------------------------------------------------------------------------------
# The app: scenarios naming a machine, the machine's drawing
# ---------------------------------------------------------------------------------------
SCREENS = ((1280, 720), (1600, 900))
SCALES = (1.0, 1.5, 2.0, 2.5)


@pytest.fixture(scope="module")
def machine_runs(qapp):
    from app.state import Scenario, ScenarioModel

    out = {}
    for key, kw in {"nodes": dict(kind="all-reduce", n=16, topology="dgx-h100", nbytes=2**20, algo="hier")}.items():
        out[key] = ScenarioModel(Scenario().with_changes(**kw)).run
    return out


def _inputs(run):
    from app.views.ring.machine_layout import machine_shape
    from app.views.ring.ring_texts import machine_texts, ring_shape, ring_texts

    return machine_texts(run, ring_texts(run)), machine_shape(run.comm.topology, ring_shape(run))


def test_a_scenario_naming_a_machine_round_trips_and_bad_values_are_named(qapp):
    from app.scenario_io import ScenarioFileError, dumps, loads
    from app.state import Scenario

    sc = Scenario().with_changes(kind="all-reduce", n=16, topology="dgx-h100", nbytes=2**20)
    assert sc.algo == "tree"  # the machine's choice at 1 MiB across two nodes: NCCL's Tree (LL128)
    text = dumps(sc)
    assert '"topology": "dgx-h100"' in text
    assert loads(text).scenario == sc
    plain = Scenario()
    assert "topology" not in dumps(plain) and loads(dumps(plain)).scenario == plain
    bad = {"dgx-b300": "\"topology\" must be one of dgx-h100", 7: "\"topology\" must be one of"}
    for value, message in bad.items():
        doc = text.replace('"topology": "dgx-h100"', f'"topology": {value!r}'.replace("'", '"'))
        with pytest.raises(ScenarioFileError, match=message):
            loads(doc)
    with pytest.raises(ScenarioFileError, match="DGX H100 has no group of 12 chips"):
        loads(text.replace('"n": 16', '"n": 12'))
    with pytest.raises(ScenarioFileError, match="runs all-reduce as hier, tree, ring-nodes, not 'rd'"):
        loads(text.replace('"algo": "tree"', '"algo": "rd"'))


def test_the_machine_offers_its_algorithms(qapp):
    from app.state import Scenario

    sc = Scenario().with_changes(kind="all-reduce", n=8, algo="direct", topology="dgx-h100")
    assert sc.algo == "direct"  # one node: every switch algorithm
    assert sc.with_changes(n=16).algo == "tree"  # NCCL's Tree at the default size across nodes (issue 32)
    assert sc.with_changes(topology="tpu-v5e-16x16", n=16).algo == "torus"
    assert sc.with_changes(topology="").algo == "direct"


def test_nodes_layout_puts_each_node_in_its_own_cluster_over_the_fabric(machine_runs):
    from PySide6.QtCore import QRectF

    from app.views.ring.layout_parts import overlaps
    from app.views.ring.ring_layout import ring_layout

    texts, shape = _inputs(machine_runs["nodes"])
    assert (shape.nodes, shape.per_node) == (2, 8)
    for (W, H), scale in ((s, k) for s in SCREENS for k in SCALES):
        lay = ring_layout(W, H * 0.8, scale, texts, shape)
        where = f"{W}x{H} {scale}x"
        assert lay.kind == "nodes", where
        a, b = lay.clusters
        inter = a.intersected(b)
        assert inter.width() <= 0 or inter.height() <= 0, where
        for d, dev in enumerate(lay.devices):
            assert lay.clusters[d // 8].contains(dev.rect()), f"{where}: GPU {d} leaves node {d // 8}"
        assert lay.fabric.top() >= max(a.bottom(), b.bottom()), where  # the fabric under the nodes
        for (top, bottom), d in zip(lay.nic_ports, range(16)):  # every NIC joins its node to the fabric
            assert abs(top.y() - lay.clusters[d // 8].bottom()) < 1e-6 and abs(bottom.y() - lay.fabric.top()) < 1e-6
        assert overlaps(lay.texts()) == [], where
        view = QRectF(0, 0, lay.width, lay.height).adjusted(-0.5, -0.5, 0.5, 0.5)
        assert all(view.contains(r) for _n, r in lay.texts()), where


def test_torus_layout_puts_the_devices_on_the_grid_with_wraparound_stubs(qapp):
    from app.views.ring.machine_layout import message_path
    from app.views.ring.layout_parts import RingShape, RingTexts, overlaps
    from app.views.ring.ring_layout import ring_layout

    texts = RingTexts("4x4 torus", ("step 1 of 4",), ("t = 1 µs of 2 µs",), tuple(f"GPU {d}" for d in range(16)), "",
                      "GPU colours:", ("0", "8"), "legend", fabric_name="4×4 torus of ICI links")
    shape = RingShape(16, 32, False, grid=(4, 4), wrap=(True, True))
    for (W, H), scale in ((s, k) for s in SCREENS for k in SCALES):
        lay = ring_layout(W, H * 0.8, scale, texts, shape)
        xs = sorted({round(d.centre.x(), 3) for d in lay.devices})
        ys = sorted({round(d.centre.y(), 3) for d in lay.devices})
        assert len(xs) == len(ys) == 4  # a 4×4 grid: device (i, j) at column j, row i
        for d, dev in enumerate(lay.devices):
            assert (round(dev.centre.y(), 3), round(dev.centre.x(), 3)) == (ys[d // 4], xs[d % 4])
        assert len(lay.links) == 2 * 4 * 3 and len(lay.wrap_stubs) == 2 * (4 + 4)
        boxes = [d.rect() for d in lay.devices]
        assert not any(boxes[i].intersects(boxes[j]) for i in range(16) for j in range(i + 1, 16))
        assert overlaps(lay.texts()) == []
        # a neighbour message rides its link; a wraparound one leaves through the stubs
        (leg,) = message_path(lay, 0, 1)
        assert boxes[0].right() - 1 <= leg[0].x() and leg[1].x() <= boxes[1].left() + 1
        assert len(message_path(lay, 3, 0)) == 2 and message_path(lay, 3, 0)[0][1].x() > boxes[3].right()


def test_the_painted_machine_has_the_fabric_between_the_nodes(qapp, machine_runs):
    from PySide6.QtGui import QColor

    from app.views.ring.ring_layers import FABRIC_COLOR
    from app.state import Playback, ScenarioModel

    model = ScenarioModel(machine_runs["nodes"].scenario)
    from app.views.ring.ring_view import RingView

    view = RingView(model, Playback(model))
    view.resize(1100, 560)
    view.show()
    qapp.processEvents()
    img = view.grab().toImage()
    lay = view.layout_now
    fab = QColor(FABRIC_COLOR)

    def near(c, ref, tol=40):
        return abs(c.red() - ref.red()) + abs(c.green() - ref.green()) + abs(c.blue() - ref.blue()) < tol

    # the fabric band's outline and the NIC links under node 0 and node 1
    y0 = int(lay.fabric.top())
    xs = range(int(lay.fabric.left()) + 40, int(lay.fabric.right()) - 40)
    on_band = [any(near(QColor(img.pixel(x, y)), fab, 60) for y in range(y0 - 1, y0 + 3)) for x in xs]
    assert sum(on_band) > 0.9 * len(xs)
    for top, bottom in (lay.nic_ports[3], lay.nic_ports[11]):
        ym = int((top.y() + bottom.y()) / 2)
        assert any(near(QColor(img.pixel(int(top.x()) + dx, ym)), fab, 60) for dx in (-1, 0, 1))
    # no fabric colour inside the gap between the two clusters above the NICs
    a, b = lay.clusters
    gap = [QColor(img.pixel(int((a.right() + b.left()) / 2), int(yy))) for yy in range(int(a.top()) + 5, int(a.bottom()) - 5)]
    assert not any(near(c, fab, 20) for c in gap)
    view.close()


def test_the_formula_panel_writes_the_machines_closed_form_beside_the_simulated_one(machine_runs):
    """hier: intra RS + inter AR + intra AG + one base latency (pipelined in one call; at 1 MiB one
    chunk), each term from the literature, their sum the simulated collective — on the DGX, with the
    links and base latency that give NCCL's NVLS Tree time (topology.timed_as)."""
    from app.views.text.formula_texts import machine_form_html, machine_terms

    run = machine_runs["nodes"]
    c = run.trace.collectives[0]
    topo = run.comm.topology
    S = c.nbytes
    timed = topo.timed_as(c.op, c.algo, S)
    nvl, ib = timed.intra, timed.inter
    terms, total = machine_terms(topo, c.op, c.algo, S)
    ring_in_node = 7 * (nvl.alpha + S / (8 * nvl.bw))  # Thakur et al.: (P−1)(α + S/(Pβ))
    # one call (one base: NVLS Tree's 25 + 2·20.9 µs), one chunk at 1 MiB
    want = [ring_in_node, 2 * 1 * (ib.alpha + S / (16 * ib.bw)), ring_in_node, 66.8e-6]
    assert [t[2] for t in terms] == pytest.approx(want, rel=1e-12)
    assert total == pytest.approx(c.t_end - c.t_start, rel=1e-9)
    assert total == pytest.approx(topo.time(c.op, "hier", S), rel=1e-12)
    text = machine_form_html(topo, c.op, c.algo, S, simulated=c.t_end - c.t_start)
    assert "2(N − 1)·(α<sub>i</sub> + S/(n·β<sub>i</sub>))" in text and "3·B" not in text and "equals the closed form ✓" in text


def test_the_explanation_says_which_steps_cross_between_nodes(machine_runs):
    from app.views.text.explain import step_where
    from app.views.ring.ring_texts import step_note

    run = machine_runs["nodes"]
    topo, idx, tr = run.comm.topology, run.index, run.trace
    notes = []
    for k in range(tr.collectives[0].n_steps):
        msgs = [tr.messages[i] for i in idx.step_msgs[0][k]]
        notes.append(step_note(run, msgs))
        if k == 7:  # hier on 2 × 8: steps 0–6 reduce-scatter in the node, 7–8 the network, then all-gather
            assert step_where(topo, msgs).startswith("inter-node, over InfiniBand NDR 400 (50 GB/s each way, α 4 µs")
        if k == 0:
            assert step_where(topo, msgs).startswith("inside the nodes, over NVLink 4")
    assert notes == ["inside the nodes: NVLink 4 (H100)"] * 7 + ["inter-node: InfiniBand NDR 400"] * 2 + \
        ["inside the nodes: NVLink 4 (H100)"] * 7


def test_a_decode_step_on_a_machine_is_its_cost_model():
    """The step timeline's engine on dgx-h100: one node, and two across the network
    (hierarchical, three base latencies per all-reduce) — every op memory-bound, so the simulated
    step equals the roofline's t_step with t_comm from the machine."""
    from simcore import cost_model
    from simcore.hw_specs import CHIPS
    from simcore.llm_math import MODELS

    model, chip = MODELS["llama2-7b"], CHIPS["h100"]  # 32 KV heads: n = 16 still splits them
    for n in (8, 16):
        comm = cost_model.simulate_decode_step(model, chip, None, n, 8, 1024,
                                               topology=PRESETS["dgx-h100"].topology(n))
        roof = cost_model.tp_decode_step(model, chip, None, n, 8, 1024, topology="dgx-h100")
        assert comm.time == pytest.approx(roof["t_step"], rel=1e-9)


def test_calibrating_a_two_node_log_gives_both_links_and_the_machine(qapp, tmp_path):
    """nccl-tests output of one node (8 GPUs) and of two nodes (16, ranks on two hosts): the
    dialog fits NVLink from the first, the NIC from the second, and "Use as link" names a
    machine of nodes with both links."""
    from test_calibrate import algo_lines, nccl_text

    from app.classroom.calibration import CalibrationDialog
    from simcore.links import LINKS, LinkSpec
    from simcore.topo_closed_forms import t_ring_nodes

    intra, inter = LinkSpec("true NVLink", 5e-6, 360e9), LinkSpec("true IB", 12e-6, 48e9)
    sizes = [2**k for k in range(16, 31, 2)]
    one = nccl_text("all-reduce", 8, alpha=intra.alpha, bw=intra.bw, sizes=sizes)
    # its algorithm lines say NCCL ran its rings: the dialog fits the model NCCL ran
    two = nccl_text("all-reduce", 16, sizes=sizes, hosts=["node01"] * 8 + ["node02"] * 8,
                    times=lambda S: t_ring_nodes("all-reduce", 8, 2, S, intra, inter),
                    interleave=algo_lines("all-reduce", 16, sizes))
    path = tmp_path / "two_nodes.txt"
    path.write_text(one + two)
    dlg = CalibrationDialog()
    got = []
    dlg.machine_ready.connect(lambda key, n: got.append((key, n)))
    try:
        assert dlg.open_nccl_file(str(path))
        fitted_intra, fitted_inter = dlg.links()
        assert fitted_intra.bw == pytest.approx(intra.bw, rel=0.05)
        assert fitted_inter.bw == pytest.approx(inter.bw, rel=0.05)
        assert fitted_inter.alpha == pytest.approx(inter.alpha, rel=0.2)
        dlg._on_use_clicked()
        assert got == [("measured-nodes", 16)]
        lay = PRESETS["measured-nodes"].layout(16)
        assert (lay.kind, lay.nodes, lay.per_node) == ("nodes", 2, 8)
        assert lay.inter == fitted_inter and lay.intra.bw == pytest.approx(intra.bw, rel=0.05)
    finally:
        PRESETS.pop("measured-nodes", None)
        LINKS.pop("measured-inter", None)
        LINKS.pop("measured", None)
        dlg.close()


# tuning.cc's constants, µs: NVLS Tree's latency hwLat[NVLINK][NVLSTree][Simple] + 2·log2(N)·hwLat[NET][NVLSTree][Simple]
# (its baseLat is 0); the ring's LL baseLat (the rest of its latency is per step: α)
NVLS_TREE_2_NODES_US = 25.0 + 2 * 1 * 20.9
RING_LL_BASE_US = 6.6


def _first_step(run):
    c, idx, tr = run.trace.collectives[0], run.index, run.trace
    return c, [tr.messages[i] for i in idx.step_msgs[0][0]]


def test_the_step_line_names_the_base_latency_while_a_call_waits(machine_runs):
    from app.views.ring.ring_texts import machine_texts, ring_texts, step_note

    run = machine_runs["nodes"]
    c, first = _first_step(run)
    base = NVLS_TREE_2_NODES_US * 1e-6  # hier on the DGX is NCCL's NVLS Tree: its latency before its first message
    assert c.algo == "hier" and run.comm.topology.base == 14e-6  # the machine's own base is not the one it ran with
    assert min(m.t_start for m in first) == pytest.approx(c.t_start + base, rel=1e-12)
    # the note names the base the call was timed with (timed_as: NVLS Tree's), not the machine's 14 µs
    assert step_note(run, first, c.t_start + 1e-6) == "base latency 66.8 µs: the call starts"
    assert step_note(run, first, c.t_start + base + 1e-7) == "inside the nodes: NVLink 4 (H100)"
    # the header makes room for that line, not for one quoting the machine's base
    lines = machine_texts(run, ring_texts(run)).step_lines
    assert any(line.endswith("base latency 66.8 µs: the call starts") for line in lines)
    assert not any("base latency 14 µs" in line for line in lines)


def test_the_step_line_names_the_base_of_nccls_protocol_at_the_size(qapp):
    """16 KiB over NCCL's channel rings on 2 × 8 H100 is LL: the call waits LL's 6.6 µs base, not
    the machine's 14 µs (LL128's); on the lecture's plain switch there is no base and no note."""
    from app.state import Scenario, ScenarioModel
    from app.views.ring.ring_texts import step_note, subcaption

    run = ScenarioModel(Scenario().with_changes(kind="all-reduce", n=16, topology="dgx-h100", nbytes=2**14,
                                                algo="ring-nodes")).run
    c, first = _first_step(run)
    assert c.algo == "ring-nodes" and run.comm.topology.protocol(c.op, c.algo, c.nbytes)[0] == "LL"
    base = RING_LL_BASE_US * 1e-6
    assert min(m.t_start for m in first) == pytest.approx(c.t_start + base, rel=1e-9)
    assert step_note(run, first, c.t_start + 1e-7) == "base latency 6.6 µs: the call starts"
    assert step_note(run, first, c.t_start + base + 1e-8) in ("inside the nodes: NVLink 4 (H100)",
                                                               "NVLink 4 (H100) and the NICs")

    plain = ScenarioModel(Scenario().with_changes(kind="all-reduce", n=8, nbytes=2**20)).run
    c, first = _first_step(plain)
    assert step_note(plain, first, c.t_start) == ""
    assert subcaption(plain, c, c.t_start) == "Step 1 of 14 (next)"


def test_the_legend_quotes_the_links_the_run_was_timed_with(machine_runs):
    """The legend's α and β are those the blocks moved with: NCCL's NVLS Tree links on 2 × 8 H100 (α 0:
    its latency is all base), named as such; the fabric's label keeps the NIC's own (the hardware)."""
    from app.views.ring.ring_texts import machine_texts, ring_texts

    run = machine_runs["nodes"]
    topo, c = run.comm.topology, run.trace.collectives[0]
    timed = topo.timed_as(c.op, c.algo, c.nbytes)
    assert timed.inter.alpha == 0.0 and timed.inter.bw != topo.inter.bw
    texts = machine_texts(run, ring_texts(run))
    assert texts.legend.endswith(
        f"over the NICs. Timed as NCCL runs hier (NCCL's NVLS Tree) with Simple: {timed.base * 1e6:.1f} µs start-up, "
        f"then {timed.inter.bw / 1e9:.1f} GB/s effective across nodes and {timed.intra.bw / 1e9:.0f} GB/s inside a "
        "node, with no latency per step (NCCL's model counts it in the start-up). The link figures on the fabric "
        "and the nodes are the hardware's own.")
    assert "α 4 µs" not in texts.legend and "α 1.9 µs" not in texts.legend and "α 0 s" not in texts.legend
    assert texts.fabric_name == "InfiniBand NDR 400 fabric: one NIC per GPU, 50 GB/s each way, α 4 µs"


def test_a_scenario_file_may_describe_its_machine(qapp):
    """"topology" as a spec: a 4×4 torus with wraparound links, or nodes with links by name;
    it round-trips as the spec, and a bad spec says what is wrong."""
    from app.scenario_io import ScenarioFileError, dumps, loads
    from app.state import Scenario

    spec = {"kind": "torus", "shape": [4, 4], "link": "tpu-v5e-ici"}
    doc = ('{"schema": "shard-lab-scenario", "version": 1, "scenario": {"kind": "all-gather", "n": 16, '
           '"algo": "torus", "nbytes": 1048576, "link": "nvlink4", "topology": %s}}')
    import json

    try:
        sf = loads(doc % json.dumps(spec))
        lay = PRESETS[sf.scenario.topology].layout(16)
        assert (lay.kind, lay.shape, lay.wrap) == ("torus", (4, 4), (True, True))
        assert json.loads(dumps(sf.scenario))["scenario"]["topology"] == spec
        assert loads(dumps(sf.scenario)).scenario == sf.scenario
        nodes = {"kind": "nodes", "nodes": 2, "per_node": 4, "intra": "nvlink4", "inter": "ib-ndr400", "base": 14e-6}
        sc = loads(doc.replace('"all-gather", "n": 16, "algo": "torus"', '"all-reduce", "n": 8, "algo": "hier"')
                   % json.dumps(nodes)).scenario
        assert PRESETS[sc.topology].topology(8).base == 14e-6
        assert Scenario().with_changes(kind="all-reduce", n=8, topology=sc.topology).algo == "hier"
        bad = {json.dumps({"kind": "ring"}): "kind",
               json.dumps({**spec, "shape": [4, 4, 4, 4]}): "1 to 3 sizes",
               json.dumps({**spec, "link": "warp"}): "unknown link 'warp'",
               json.dumps({**spec, "wires": 3}): "no field 'wires'",
               json.dumps({**nodes, "base": -1}): "base latency"}
        for text, message in bad.items():
            with pytest.raises(ScenarioFileError, match=message):
                loads(doc % text)
    finally:
        for k in [k for k in PRESETS if k.startswith(("torus-", "nodes-"))]:
            PRESETS.pop(k)


def test_the_machine_layout_keeps_its_texts_apart_in_chinese(qapp, machine_runs):
    from app import i18n
    from app.views.ring.layout_parts import overlaps
    from app.views.ring.ring_layout import ring_layout

    i18n.set_language(qapp, "zh")
    texts, shape = _inputs(machine_runs["nodes"])
    assert texts.node_names[1].startswith("节点 1")
    for (W, H), scale in ((s, k) for s in SCREENS for k in SCALES):
        lay = ring_layout(W, H * 0.8, scale, texts, shape)
        assert overlaps(lay.texts()) == [], f"zh {W}x{H} {scale}x"


def test_choosing_a_machine_in_the_dock_opens_a_group_that_shows_it(qapp):
    from app.controls import ControlPanel
    from app.state import ScenarioModel

    model = ScenarioModel()
    panel = ControlPanel(model)
    panel.machine.activated.emit(panel.machine.findData("dgx-h100"))
    sc = model.scenario
    assert (sc.topology, sc.n, sc.kind, sc.algo) == ("dgx-h100", 16, "all-gather", "ring-nodes")  # a channel per NIC
    panel.op.activated.emit(panel.op.findData("all-reduce"))
    # first the machine's own choice for the size at hand (app.controls.MACHINE_CHOICE), then its algorithms
    assert [panel.algo.itemData(i) for i in range(panel.algo.count())] == ["", "hier", "tree", "ring-nodes"]
    assert not panel.link.isEnabled()
    panel.machine.activated.emit(panel.machine.findData(""))
    assert model.scenario.topology == "" and model.scenario.algo == "ring" and panel.link.isEnabled()
    panel.close()


def test_a_machine_too_large_to_watch_is_refused_with_a_reason(qapp):
    from app.state import ScenarioModel

    model = ScenarioModel()
    said = []
    model.error.connect(said.append)
    assert not model.update(kind="all-reduce", topology="dgx-h100", n=512)
    assert "at most 256 devices" in said[-1]
    assert not model.update(kind="all-reduce", topology="dgx-h100", n=256, algo="ring-nodes")
    assert "1,044,480 messages" in said[-1] and "at most 128" in said[-1]  # 2·n·(n−1) per channel, 8 channels
    assert model.scenario.topology == ""  # the scenario in place is kept
