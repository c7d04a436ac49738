"""One plan per collective (simcore.plan): resolved once, read by choose/protocol/timed_as/time,
its terms summing to its time, carried by the trace's collective record through save and load."""

import numpy as np
import pytest

from simcore import plan as plan_mod
from simcore.comm_sim import Comm
from simcore.links import NVLINK4
from simcore.plan import Plan, PlanRecord
from simcore.sharding import all_reduce
from simcore.topology import nodes, switch, torus
from simcore.topology_presets import get_preset

MACHINES = [
    ("switch", lambda: switch(8, NVLINK4)),
    ("dgx-h100 8", lambda: get_preset("dgx-h100").topology(8)),
    ("dgx-h100 16", lambda: get_preset("dgx-h100").topology(16)),
    ("nodes", lambda: nodes(2, 4)),
    ("torus", lambda: torus((4, 4))),
]


@pytest.mark.parametrize("name,make", MACHINES)
@pytest.mark.parametrize("S", [8.0, 2.0 ** 20, 2.0 ** 28])
def test_the_readers_read_the_one_plan(name, make, S):
    topo = make()
    for op in ("all-reduce", "all-gather", "reduce-scatter"):
        p = topo.plan(op, S)
        assert isinstance(p, Plan) and p.choice
        assert topo.choose(op, S) == (p.algo, p.protocol, p.why_text)
        for algo in topo.algorithms(op):
            q = topo.plan(op, S, algo)
            assert topo.protocol(op, algo, S) == (q.protocol, q.why_text) == q.protocol_reason
            assert topo.timed_as(op, algo, S) == q.timed
            if q.time is None:
                with pytest.raises(ValueError, match="no closed form"):
                    topo.time(op, algo, S)
                continue
            assert topo.time(op, algo, S) == q.time
            assert sum(t.seconds for t in q.terms) == pytest.approx(q.time, rel=1e-12, abs=1e-18)
        assert p.time == topo.plan(op, S, p.algo).time


def test_asking_again_is_free():
    topo = get_preset("dgx-h100").topology(16)
    plan_mod.cache_clear()
    p = topo.plan("all-reduce", 2.0 ** 20)
    misses = plan_mod.cache_info().misses
    for _ in range(5):
        assert topo.plan("all-reduce", 2 ** 20) is p
        topo.choose("all-reduce", 2 ** 20)
    assert plan_mod.cache_info().misses == misses


def test_the_switch_terms_are_the_lecture_closed_form():
    """ring on switch(8): one term, the registry's form 2(n−1)·α + 2(n−1)/n·S/β, with its coefficients."""
    topo, S = switch(8, NVLINK4), 2.0 ** 20
    p = topo.plan("all-reduce", S, "ring")
    (form,) = p.terms
    assert form.key == "form" and form.formula == "2(n − 1) · (α + S/(nβ))"
    assert (form.get("a"), form.get("b")) == (14, 14 / 8)
    assert form.seconds == pytest.approx(14 * NVLINK4.alpha + 14 / 8 * S / NVLINK4.bw, rel=1e-12)
    assert p.links == (("link", NVLINK4),)
    assert p.why.kind == "lecture" and p.protocol == "" and p.chunks == 1


def test_the_why_holds_nccl_numbers():
    topo = get_preset("dgx-h100").topology(16)
    p = topo.plan("all-reduce", 2.0 ** 20)
    assert p.why.kind == "fastest" and p.why.next_label and p.why.next_time > p.time
    models = sorted(topo.nccl_models("all-reduce"), key=lambda m: m.time(2.0 ** 20))
    assert p.why.latency == models[0].latency and p.why.algbw == models[0].algbw
    assert p.why.next_time == models[1].time(2.0 ** 20)
    hier = topo.plan("all-reduce", 2.0 ** 26, "hier")
    assert hier.chunks == topo.hier_chunks(2.0 ** 26) > 1 and hier.why.chunks == hier.chunks


def test_the_trace_carries_the_plan_through_save_and_load(tmp_path):
    from simcore.trace import Trace
    topo = get_preset("dgx-h100").topology(16)
    comm = Comm(topo)
    all_reduce(comm, [np.ones(1 << 15) for _ in range(16)])
    c = comm.trace.collectives[0]
    p = topo.plan("all-reduce", float(1 << 18))
    assert isinstance(c.plan, PlanRecord)
    assert (c.plan.algo, c.plan.protocol, c.plan.time, c.plan.why) == (p.algo, p.protocol, p.time, p.why)
    assert comm.time == pytest.approx(p.time, rel=1e-9)
    comm.trace.save(tmp_path / "t.json")
    back = Trace.load(tmp_path / "t.json")
    assert back.collectives[0].plan == c.plan


# -- "ring" is one algorithm everywhere: the flat ring over all GPUs ---------------------------------
def test_ring_is_the_flat_ring_through_every_entry_point_on_two_nodes():
    """nodes(2, 8) of DGX H100 at 1 MiB: the lecture API, the lecture's own dict, the preset's closed form
    and the cost model all run and price "ring" as the flat ring over 16 GPUs (d → d+1, crossing between the
    nodes twice); NCCL's channel rings keep their name, ring-nodes, and None is the machine's choice."""
    from simcore import comm_sim, cost_model
    from simcore.algorithms import t_formula_on
    from simcore.sharding import all_reduce as lecture_all_reduce

    topo, S = get_preset("dgx-h100").topology(16), 2.0 ** 20
    arrays = [np.full(1 << 17, 1.0 + d) for d in range(16)]
    times = {}
    for name, run in (("sharding", lambda c: lecture_all_reduce(c, arrays, algo="ring")),
                      ("comm_sim", lambda c: comm_sim.ALLREDUCE_ALGOS["ring"][1](c, arrays))):
        comm = Comm(topo)
        out = run(comm)
        assert np.allclose(out[5], sum(range(1, 17)))
        assert comm.trace.collectives[0].algo == "ring" and comm.trace.collectives[0].plan.algo == "ring"
        times[name] = comm.time
    flat = t_formula_on(topo, "ring", S)  # the flat ring's closed form on these links (no NCCL model for it)
    assert times["sharding"] == times["comm_sim"] == pytest.approx(flat, rel=1e-9)
    assert topo.time("all-reduce", "ring", S) == get_preset("dgx-h100").allreduce_time(16, S, "ring") == flat
    assert cost_model.comm_time("dgx-h100", 16, S, "ring") == flat
    # the machine's choice is another algorithm, and its own time
    choice = topo.plan("all-reduce", S)
    assert choice.algo != "ring" and choice.time < flat
    assert cost_model.comm_time("dgx-h100", 16, S) == choice.time
    assert topo.plan("all-reduce", S, "ring-nodes").algo == "ring-nodes"


# -- the lecture's dict holds every registered all-reduce ---------------------------------------------
def test_the_lecture_dict_reaches_the_machine_algorithms_and_refuses_in_one_sentence():
    from simcore import comm_sim
    from simcore.algorithms import ALGORITHMS

    assert list(comm_sim.ALLREDUCE_ALGOS) == list(ALGORITHMS["all-reduce"])
    assert {"hier", "tree", "ring-nodes", "torus"} <= set(comm_sim.ALLREDUCE_ALGOS)
    topo, S = get_preset("dgx-h100").topology(16), 2.0 ** 22
    for algo in ("hier", "tree", "ring-nodes"):
        comm = Comm(topo, byte_scale=S / (16 * 64 * 8))
        arrays = [np.arange(16 * 64, dtype=float) * (d + 1) for d in range(16)]
        out = comm_sim.ALLREDUCE_ALGOS[algo][1](comm, arrays)
        assert np.allclose(out[3], np.sum(arrays, axis=0))
        p = topo.plan("all-reduce", S, algo)
        assert comm.trace.collectives[0].plan.protocol == p.protocol
        if algo != "hier":  # hier's simulation is cut in its pipeline chunks: see test_hier_pipelined
            assert comm.time == pytest.approx(p.time, rel=1e-9)
    with pytest.raises(ValueError) as e:
        comm_sim.ALLREDUCE_ALGOS["torus"][1](Comm(topo), [np.ones(16)] * 16)
    msg = str(e.value)
    assert msg.count(". ") == 0 and "cannot run" in msg and "hier" in msg and "ring-nodes" in msg


def test_the_lecture_file_runs_hier_on_a_machine(tmp_path):
    """The lecture's own file (its all_reduce indexes comm_sim.ALLREDUCE_ALGOS) on 2 × 8 H100."""
    import importlib.util
    import sys
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from test_lecture_seed import SEED, _point_imports_at_simcore

    mod = tmp_path / "lecture_plan.py"
    mod.write_text(_point_imports_at_simcore(SEED.read_text(encoding="utf-8")), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("lecture_plan", mod)
    lec = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lec)
    comm = lec.Comm(get_preset("dgx-h100").topology(16))
    A = np.arange(16 * 8, dtype=float).reshape(16, 8)
    for algo in ("hier", "tree", "ring-nodes", "ring"):
        out = lec.all_reduce(comm, [A * (d + 1) for d in range(16)], algo)
        assert all(np.allclose(o, A * 136) for o in out)
    assert [c.algo for c in comm.trace.collectives] == ["hier", "tree", "ring-nodes", "ring"]
    assert all(c.plan is not None and c.plan.algo == c.algo for c in comm.trace.collectives)


def test_ring_on_plain_nodes_2x8_at_1_mib_is_the_flat_ring_through_both_entry_points():
    """The issue's case: nodes(2, 8) at 1 MiB gave 74.4 µs through the lecture API's "ring" and 41.3 µs through
    the older allreduce_on's "ring" (which meant the machine's choice, hier). Both now run the flat ring."""
    from simcore import comm_sim
    from simcore.algorithms import t_formula_on
    from simcore.sharding import all_reduce as lecture_all_reduce

    topo, S = nodes(2, 8), 2.0 ** 20
    arrays = [np.ones(1 << 17) for _ in range(16)]
    a, b = Comm(topo), Comm(topo)
    lecture_all_reduce(a, arrays, algo="ring")
    comm_sim.ALLREDUCE_ALGOS["ring"][1](b, arrays)
    assert a.time == b.time == pytest.approx(t_formula_on(topo, "ring", S), rel=1e-9) == topo.time("all-reduce", "ring", S)
    assert a.time == pytest.approx(74.4e-6, abs=0.05e-6)
    choice = Comm(topo)
    lecture_all_reduce(choice, arrays)  # None: the machine's choice, hier
    assert choice.trace.collectives[0].algo == "hier" and choice.time == pytest.approx(41.3e-6, abs=0.05e-6)
