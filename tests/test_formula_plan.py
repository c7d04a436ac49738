"""
The formula panel and the explanation show the plan's terms (simcore.plan.Term: key, formula, seconds,
numbers), decided by the engine next to the closed forms they sum: the panel's terms are exactly the
plan's (same count, same seconds), they sum to plan.time, and the app derives none of them itself.
"""

import html

import pytest

from app.views.text import formula_texts
from app.views.text.formula_texts import machine_form_html, machine_terms, term_words
from app.words import fmt_time
from simcore import comm_sim
from simcore.plan import PlanRecord, Term, resolve
from simcore.topo_closed_forms import t_torus
from simcore.topology import nodes
from simcore.topology_presets import get_preset

KiB, MiB = 2.0 ** 10, 2.0 ** 20


def _dgx(n, launch=""):
    return get_preset("dgx-h100").topology(n, launch=launch)


# (name, topology, op, algo, S, the plan's term keys in order)
CASES = [
    ("dgx 8 ring", lambda: _dgx(8), "all-reduce", "ring", 16 * KiB, ["form", "base"]),
    ("dgx 8 rd", lambda: _dgx(8), "all-reduce", "rd", MiB, ["form"]),
    ("dgx 2x8 hier 1 MiB", lambda: _dgx(16), "all-reduce", "hier", MiB,
     ["hier-rs-intra", "hier-ar-inter", "hier-ag-intra", "base"]),
    ("dgx 2x8 hier 64 MiB", lambda: _dgx(16), "all-reduce", "hier", 64 * MiB,
     ["hier-rs-intra", "hier-ar-inter", "hier-ag-intra", "hier-pipeline", "base"]),
    ("dgx 2x8 tree", lambda: _dgx(16), "all-reduce", "tree", 64 * KiB, ["tree", "base"]),
    ("dgx 2x8 ring-nodes", lambda: _dgx(16), "all-reduce", "ring-nodes", MiB, ["ring-nodes", "base"]),
    ("dgx 2x8 ring across nodes", lambda: _dgx(16), "all-reduce", "ring", MiB, ["ring-across-nodes", "base"]),
    ("dgx 2x8 rd across nodes", lambda: _dgx(16), "all-reduce", "rd", MiB, ["rd-intra", "rd-inter", "base"]),
    ("tpu v4 4x4x4 torus", lambda: get_preset("tpu-v4-4x4x4").topology(64), "all-reduce", "torus", MiB,
     ["torus-rings"]),
    ("dgx 8 ring, CUDA graphs' launch floor", lambda: _dgx(8, "graph"), "all-reduce", "ring", 16 * KiB,
     ["form", "base", "launch-floor"]),
    ("dgx 2x8 all-gather ring-nodes", lambda: _dgx(16), "all-gather", "ring-nodes", MiB, ["ring-nodes", "base"]),
    ("dgx 2x8 reduce-scatter ring", lambda: _dgx(16), "reduce-scatter", "ring", 4 * MiB,
     ["ring-across-nodes", "base"]),
    ("tpu v4 all-gather", lambda: get_preset("tpu-v4-4x4x4").topology(64), "all-gather", "torus", MiB,
     ["torus-rings"]),
    ("nodes(2, 4) hier, the lecture's α–β", lambda: nodes(2, 4), "all-reduce", "hier", 64 * MiB,
     ["hier-rs-intra", "hier-ar-inter", "hier-ag-intra", "hier-pipeline"]),
]


@pytest.mark.parametrize("name,make,op,algo,S,keys", CASES, ids=[c[0] for c in CASES])
def test_the_panel_shows_exactly_the_plans_terms(qapp, name, make, op, algo, S, keys):
    topo = make()
    p = resolve(topo, op, S, algo)
    assert [t.key for t in p.terms] == keys
    assert sum(t.seconds for t in p.terms) == pytest.approx(p.time, rel=1e-12, abs=0)
    terms, total = machine_terms(topo, op, algo, S)
    assert total == p.time
    assert len(terms) == len(p.terms)
    assert [sec for _w, _f, sec in terms] == [t.seconds for t in p.terms]  # the same numbers, not recomputed
    assert [f for _w, f, _s in terms] == [t.formula for t in p.terms]
    text = machine_form_html(topo, op, algo, S, simulated=p.time)
    for t in p.terms:
        assert f"{html.escape(term_words(t, op, algo))}: <b>{fmt_time(t.seconds)}</b>" in text
    assert f"= <b>{fmt_time(p.time)}</b>" in text and "equals the closed form ✓" in text


def test_the_terms_are_the_closed_forms_on_the_timed_links():
    """hier's phases are Thakur et al.'s ring phases on the links NCCL's protocol gives, the base is NCCL's
    baseLat; a torus's one term is t_torus; the launch floor is what CUDA graphs' measured floor adds."""
    topo, S = _dgx(16), 64 * MiB
    p = topo.plan("all-reduce", S, "hier")
    A, I, P, N = p.timed.intra, p.timed.inter, 8, 2
    rs, ar, ag, pipe, base = p.terms
    assert rs.seconds == pytest.approx((P - 1) * (A.alpha + S / (P * A.bw)), rel=1e-12)
    assert ar.seconds == pytest.approx(2 * (N - 1) * (I.alpha + S / (16 * I.bw)), rel=1e-12)
    assert ag.seconds == rs.seconds and pipe.seconds < 0 and pipe.get("C") == p.chunks > 1
    assert base.seconds == pytest.approx(p.timed.base, rel=1e-12)
    assert (rs.get("link"), ar.get("link")) == (A.name, I.name)
    assert p.links == (("intra", A), ("inter", I))

    tpu = get_preset("tpu-v4-4x4x4").topology(64)
    (rings,) = tpu.plan("all-reduce", MiB, "torus").terms
    assert rings.seconds == pytest.approx(t_torus("all-reduce", (4, 4, 4), MiB, tpu.link), rel=1e-12)
    assert rings.get("shape") == (4, 4, 4) and rings.formula.startswith("2·(")

    g = _dgx(8, "graph")
    q = g.plan("all-reduce", 16 * KiB, "ring")
    nccl = min(m.time(16 * KiB) for m in g.nccl_models("all-reduce") if m.algo == "ring")
    floor = q.terms[-1]
    assert floor.key == "launch-floor" and q.time == g.launch_floor() > nccl
    assert floor.seconds == pytest.approx(g.launch_floor() - nccl, rel=1e-12) and floor.get("mode") == "graph"


def test_the_simulation_takes_the_plans_terms():
    """The trace of the machine's hier all-reduce on 2 × 8 H100 lasts the sum of its plan's terms."""
    import numpy as np

    from simcore.sharding import all_reduce

    topo = _dgx(16)
    comm = comm_sim.Comm(topo)
    all_reduce(comm, [np.full(1 << 17, 1.0 + d) for d in range(16)], algo="hier")
    c = comm.trace.collectives[0]
    p = topo.plan("all-reduce", c.nbytes, "hier")
    assert c.t_end - c.t_start == pytest.approx(sum(t.seconds for t in p.terms), rel=1e-9)
    assert c.plan.terms == p.terms


def test_a_trace_file_keeps_the_terms_and_reads_the_older_pairs():
    p = _dgx(16).plan("all-reduce", 64 * MiB, "hier")
    rec = p.record_fields()
    assert PlanRecord.from_json(rec.to_json()) == rec
    old = rec.to_json()
    old["terms"] = [[t.name, t.seconds] for t in p.terms]  # a file written before the terms had formulas
    assert [t.seconds for t in PlanRecord.from_json(old).terms] == [t.seconds for t in p.terms]
    assert Term("base", 1.0).key == "base" and Term("base", 1.0).get("P") is None


_CLOSED_FORMS = [  # what formula_texts computed itself before the plan carried its terms
    ("simcore.topo_closed_forms", "t_hier_pipelined"), ("simcore.topo_closed_forms", "hier_pipeline_chunks"),
    ("simcore.topo_closed_forms", "t_ring_nodes"), ("simcore.topo_closed_forms", "t_torus"),
    ("simcore.tree_allreduce", "t_tree"), ("simcore.tree_allreduce", "tree_chunks"),
    ("simcore.algorithms", "t_formula_on"), ("simcore.comm_sim", "t_formula_on"),
]


@pytest.mark.parametrize("name,make,op,algo,S,keys", CASES, ids=[c[0] for c in CASES])
def test_the_panel_derives_nothing(qapp, monkeypatch, name, make, op, algo, S, keys):
    """With the plan resolved (as the run resolved it), the panel renders with every closed-form function
    it used to call raising: it reads the plan's terms and computes none."""
    import importlib

    topo = make()
    p = resolve(topo, op, S, algo)  # the engine's one decision, cached
    topo.plan(op, S)

    def boom(*a, **k):
        raise AssertionError("the formula panel computed a closed form itself")

    for mod, fn in _CLOSED_FORMS:
        monkeypatch.setattr(importlib.import_module(mod), fn, boom)
        monkeypatch.setattr(formula_texts, fn, boom, raising=False)
    text = machine_form_html(topo, op, algo, S, simulated=p.time)
    assert "equals the closed form ✓" in text
    assert machine_terms(topo, op, algo, S)[1] == p.time


def test_the_explanation_shows_the_plans_closed_form(qapp):
    """The explanation's 'Closed form' line on 2 × 8 H100 (hier, 64 MiB) is the plan's formulas and time."""
    from PySide6.QtGui import QTextDocument

    from app.state import Playback, Scenario, ScenarioModel
    from app.views.text.explain import ExplainPanel
    from app.views.text.formula_texts import math_html

    sc = Scenario().with_changes(kind="all-reduce", n=16, topology="dgx-h100", nbytes=64 * MiB, algo="hier")
    model = ScenarioModel(sc, sync=True)
    pb = Playback(model)
    exp = ExplainPanel(model, pb)
    c = model.run.trace.collectives[0]
    pb.seek(c.t_end)
    p = model.run.comm.topology.plan("all-reduce", 64 * MiB, "hier")
    doc = QTextDocument()
    doc.setHtml(math_html(" + ".join(t.formula for t in p.terms)))
    assert "Closed form: T = " + doc.toPlainText() + " = " + fmt_time(p.time) in exp.body.toPlainText()
