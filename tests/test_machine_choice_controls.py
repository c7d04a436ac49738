"""
The app's algorithm menu on a machine defaults to the machine's own choice for the size at hand
and says what it picked: the entry "machine's choice (NVLS, Simple at 256 MiB)"
and the engine's sentence under the menu (topology.choose); picking an algorithm by name keeps it
across sizes; the entry goes back to the machine's choice. On the lecture's one switch the ring
stays the default and nothing new is said.
"""

import pytest

from app.controls import MACHINE_CHOICE, ControlPanel
from app.state import ScenarioModel
from simcore.topology_presets import PRESETS


def _choice(sc):
    return PRESETS[sc.topology].topology(sc.n).choose(sc.kind, float(sc.nbytes))


def _pick_size(panel, nbytes):
    panel.size_combo.activated.emit(panel.size_combo.findData(float(nbytes)))


@pytest.fixture
def panel(qapp):
    model = ScenarioModel(sync=True)
    p = ControlPanel(model)
    yield p
    p.close()


def test_a_machine_runs_its_own_choice_and_says_so(panel):
    model = panel.model
    panel.machine.activated.emit(panel.machine.findData("dgx-h100"))
    panel.op.activated.emit(panel.op.findData("all-reduce"))
    panel.n.setValue(8)
    for S, algo, proto, name in ((2**12, "ring", "LL", "ring"), (2**28, "innet", "Simple", "NVLS")):
        _pick_size(panel, S)
        sc = model.scenario
        choice = _choice(sc)
        assert (sc.nbytes, choice[:2]) == (S, (algo, proto))  # the engine's pick: LL small, NVLS large
        assert sc.algo == algo and model.run.trace.collectives[0].algo == algo  # and it is what runs
        assert panel.algo.currentIndex() == 0 and panel.algo.currentData() == MACHINE_CHOICE
        size = "4 KiB" if S == 2**12 else "256 MiB"
        assert panel.algo.currentText() == f"machine's choice ({name}, {proto} at {size})"
        assert panel.hint.text().startswith(f"The machine's choice: {choice[2]}.")


def test_an_algorithm_picked_by_name_stays_and_the_entry_goes_back(panel):
    model = panel.model
    panel.machine.activated.emit(panel.machine.findData("dgx-h100"))
    panel.op.activated.emit(panel.op.findData("all-reduce"))
    panel.n.setValue(8)
    panel.algo.activated.emit(panel.algo.findData("rd"))
    _pick_size(panel, 2**28)
    assert model.scenario.algo == "rd" and panel.algo.currentData() == "rd"
    assert panel.algo.itemText(0) == "machine's choice (NVLS, Simple at 256 MiB)"  # still said what it would run
    panel.algo.activated.emit(0)
    assert model.scenario.algo == "innet" and panel.algo.currentIndex() == 0


def test_across_nodes_and_on_a_torus(panel):
    model = panel.model
    panel.machine.activated.emit(panel.machine.findData("dgx-h100"))  # two nodes: NCCL's channel rings
    sc = model.scenario
    assert sc.n == 16 and sc.algo == _choice(sc)[0] == "ring-nodes"
    assert panel.algo.currentText().startswith("machine's choice (NCCL rings, ")
    panel.machine.activated.emit(panel.machine.findData("tpu-v4-4x4x4"))
    sc = model.scenario
    assert sc.algo == "torus" and _choice(sc)[1] == ""
    assert panel.algo.currentText() == f"machine's choice (torus rings at 1 MiB)"


def test_the_lecture_switch_keeps_its_ring_and_says_nothing_new(panel):
    model = panel.model
    panel.op.activated.emit(panel.op.findData("all-reduce"))
    assert model.scenario.algo == "ring" and panel.algo.findData(MACHINE_CHOICE) < 0
    assert "machine" not in panel.hint.text()
    panel.machine.activated.emit(panel.machine.findData("dgx-h100"))
    panel.machine.activated.emit(panel.machine.findData(""))
    assert model.scenario.algo == "ring" and panel.algo.findData(MACHINE_CHOICE) < 0


@pytest.mark.parametrize("lang,nvls_tree,plain", [
    ("en", "Hierarchical — NCCL NVLS Tree", "Hierarchical (in node, across nodes, in node)"),
    ("zh", "分层——NCCL 的 NVLS Tree", "分层（节点内、跨节点、节点内）"),
])
def test_hier_is_named_as_nccl_runs_it_on_a_gpu_machine_of_several_nodes(qapp, lang, nvls_tree, plain):
    """On 2 × 8 H100 (NCCL's tuning) hier is NCCL's NVLS Tree, and the menu says so; a machine of nodes
    without NCCL's tuning keeps the plain name."""
    from app import i18n
    from simcore.topology_presets import register_spec

    i18n.set_language(qapp, lang)
    key = register_spec({"kind": "nodes", "nodes": 2, "per_node": 4, "intra": "nvlink4", "inter": "ib-ndr400"})
    model = ScenarioModel(sync=True)
    panel = ControlPanel(model)
    try:
        panel.machine.activated.emit(panel.machine.findData("dgx-h100"))
        panel.op.activated.emit(panel.op.findData("all-reduce"))
        assert model.scenario.n == 16 and model.scenario.topology == "dgx-h100"
        assert PRESETS["dgx-h100"].topology(16).tuning  # NCCL's model times it
        assert panel.algo.itemText(panel.algo.findData("hier")) == nvls_tree
        panel.machine.activated.emit(panel.machine.findData(key))
        assert model.scenario.topology == key and not PRESETS[key].topology(model.scenario.n).tuning
        assert panel.algo.itemText(panel.algo.findData("hier")) == plain
    finally:
        panel.close()
        PRESETS.pop(key, None)
        i18n.set_language(qapp, "en")


@pytest.mark.parametrize("size, nbytes", [("16KiB", 2**14), ("64MiB", 2**26)])
def test_the_command_line_opens_a_machine_on_its_own_choice_for_the_size(qapp, tmp_path, monkeypatch, size, nbytes):
    """`shard-lab --scenario all-reduce --machine dgx-h100 --n 16` without --algo ran hier (the first algorithm
    offered) at every size: at 16 KiB NCCL's tuner runs its Tree (LL), not the NVLS Tree."""
    import app.state
    from app.__main__ import main

    opened = []
    real = app.state.ScenarioModel

    def recording(sc, *a, **k):
        opened.append(sc)
        return real(sc, *a, **k)

    monkeypatch.setattr(app.state, "ScenarioModel", recording)
    args = ["--scenario", "all-reduce", "--machine", "dgx-h100", "--n", "16", "--bytes", size]
    assert main([*args, "--screenshot", str(tmp_path / "m.png")]) == 0
    sc = opened[0]
    assert sc.nbytes == nbytes and sc.algo == _choice(sc)[0]
    assert sc.algo == ("tree" if nbytes < 2**20 else "hier")  # NCCL's Tree LL at 16 KiB (issue 32)
    opened.clear()
    assert main([*args, "--algo", "hier", "--screenshot", str(tmp_path / "h.png")]) == 0
    assert opened[0].algo == "hier"  # named: kept at any size
