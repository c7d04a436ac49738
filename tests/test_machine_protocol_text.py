"""
The explanation and the formula panel say which NCCL protocol a GPU machine runs and why:
the engine's sentence (topology.choose / topology.protocol), the closed form
with the links of that protocol (topology.timed_as), equal to topology.time and to the trace.
The lecture's switch and a torus say nothing new.
"""

import html

import pytest

from app.state import Playback, Scenario, ScenarioModel
from app.views.text.explain import ExplainPanel
from app.views.text.formula_panel import FormulaPanel
from app.views.text.formula_texts import machine_terms, protocol_line
from app.words import fmt_time
from simcore.topology_presets import PRESETS


def _run(topology, n, nbytes, algo=None, kind="all-reduce"):
    sc = Scenario().with_changes(kind=kind, n=n, topology=topology, nbytes=float(nbytes))
    if algo is not None:
        sc = sc.with_changes(algo=algo)
    model = ScenarioModel(sc, sync=True)
    return model, model.run


def _shown(qapp, model):
    """(explanation, formula panel) as plain text at the collective's end."""
    pb = Playback(model)
    exp = ExplainPanel(model, pb)
    fp = FormulaPanel()
    fp.bind(model, pb)
    pb.seek(model.run.trace.collectives[0].t_end)  # both are handed the frame there
    from PySide6.QtGui import QTextDocument
    doc = QTextDocument()
    doc.setHtml(fp._label.text())
    return exp.body.toPlainText(), doc.toPlainText()


@pytest.mark.parametrize("topology,n,nbytes,algo,proto", [
    ("dgx-h100", 8, 16 * 2**10, "ring", "LL"),        # decode-sized: NCCL's LL
    ("dgx-h100", 8, 64 * 2**20, "innet", "Simple"),   # NVLS runs Simple only
    ("dgx-h100", 16, 2**20, "ring-nodes", "LL128"),   # channel rings across two nodes
    ("dgx-h100", 16, 2**26, "hier", "Simple"),        # NCCL's NVLS Tree, the machine's choice there
    ("dgx-h100", 16, 2**16, "tree", "LL"),            # NCCL's Tree across two nodes (issue 32)
    ("dgx-h100", 32, 2**20, "tree", "LL128"),
    ("gb200-nvl72", 72, 72 * 2**14, "innet", "Simple"),
])
def test_a_gpu_machine_names_its_protocol_and_why(qapp, topology, n, nbytes, algo, proto):
    model, run = _run(topology, n, nbytes, algo)
    topo, c = run.comm.topology, run.trace.collectives[0]
    assert c.algo == algo
    p, why = topo.protocol("all-reduce", algo, float(nbytes))
    assert p == proto  # the engine's protocol, not a copy of its rule
    choice = topo.choose("all-reduce", float(nbytes))
    sentence = choice[2] if choice[0] == algo else why
    explanation, formula = _shown(qapp, model)
    for text in (explanation, formula):
        assert f"NCCL protocol: {proto} — {sentence}." in text
    # the closed form shown is NCCL's time for that protocol: topology.time, and the trace's
    T = topo.time("all-reduce", algo, float(nbytes))
    terms, total = machine_terms(topo, "all-reduce", algo, float(nbytes))
    assert total == pytest.approx(T, rel=1e-9) and total == pytest.approx(c.t_end - c.t_start, rel=1e-9)
    assert f"= {fmt_time(T)}" in formula and "equals the closed form ✓" in formula
    assert fmt_time(T) in explanation and "simulated: " + fmt_time(c.t_end - c.t_start) + " ✓" in explanation


def test_one_message_is_timed_with_the_protocols_link(qapp):
    model, run = _run("dgx-h100", 8, 16 * 2**10, "ring")
    m0 = run.trace.messages[0]
    link = run.comm.topology.timed_as("all-reduce", "ring", 16 * 2**10).link
    assert m0.t_end - m0.t_start == pytest.approx(link.alpha + m0.nbytes / link.bw, rel=1e-9)
    explanation, _ = _shown(qapp, model)
    assert f"= {fmt_time(link.alpha)} + " in explanation  # LL's 0.6 µs a hop, not the link's datasheet α


def test_an_algorithm_nccl_does_not_model_says_so(qapp):
    model, run = _run("dgx-h100", 8, 2**20, "rd")
    explanation, formula = _shown(qapp, model)
    why = run.comm.topology.protocol("all-reduce", "rd", 2.0**20)[1]
    assert "not one of NCCL's algorithms" in why
    assert f"No NCCL protocol: {why}." in explanation and f"No NCCL protocol: {why}." in formula


def test_hier_across_nodes_is_named_as_nccls_nvls_tree(qapp):
    model, run = _run("dgx-h100", 16, 2**26, "hier")
    explanation, formula = _shown(qapp, model)
    topo = run.comm.topology
    algo, proto, why = topo.choose("all-reduce", 2.0**26)
    assert (algo, proto) == ("hier", "Simple") and why.startswith("hier (NCCL's NVLS Tree) Simple is NCCL's fastest")
    for text in (explanation, formula):
        assert f"NCCL protocol: Simple — {why}." in text


@pytest.mark.parametrize("topology,n", [("", 8), ("tpu-v4-4x4x4", 64)])
def test_the_lecture_switch_and_a_torus_say_nothing_new(qapp, topology, n):
    model, run = _run(topology, n, 2**20)
    assert protocol_line(run.comm.topology, "all-reduce", run.trace.collectives[0].algo, 2.0**20) == ""
    explanation, formula = _shown(qapp, model)
    assert "protocol" not in explanation and "protocol" not in formula


@pytest.mark.parametrize("algo,n,S,frame", [
    ("tree", 16, 2**16, "tree LL 是 NCCL 在 64 KiB 时最快的"),  # NCCL's Tree LL: 31.8 µs (issue 32)
    ("ring-nodes", 16, 2**20, "NCCL 在此大小下用 LL128 运行 ring-nodes"),  # tree LL128 is the choice at 1 MiB
    ("hier", 16, 2**26, "hier（即 NCCL 的 NVLS Tree） Simple 是 NCCL 在 64 MiB 时最快的"),
    ("rd", 8, 2**20, "不是 NCCL 的算法之一"),
])
def test_the_protocols_reason_is_in_the_windows_language(qapp, algo, n, S, frame):
    """In Chinese the reason is Chinese around the engine's numbers: the engine's English sentence
    once stood in a Chinese formula panel, explanation and control dock."""
    from app import i18n

    model, run = _run("dgx-h100", n, S, algo)
    topo = run.comm.topology
    i18n.set_language(qapp, "zh")
    try:
        explanation, formula = _shown(qapp, model)
        line = protocol_line(topo, "all-reduce", algo, float(S))
    finally:
        i18n.set_language(qapp, "en")
    for text in (explanation, formula, line):
        assert frame in text
        assert "NCCL's" not in text and "timed by" not in text and "at this size" not in text
    if algo != "rd":  # the engine's numbers, in its own format
        m = min(topo._models("all-reduce", algo), key=lambda m: m.time(float(S)))
        assert f"{m.latency * 1e6:.1f} µs" in line and f"S/{m.algbw / 1e9:.0f} GB/s" in line
    if algo == "hier":  # 64 MiB: two pipeline chunks
        assert "分 2 块流水" in line
