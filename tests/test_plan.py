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
            assert topo.protocol(op, algo, S) == (q.protocol, q.why_text)
            assert topo.timed_as(op, algo, S) is q.timed
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
    """ring on switch(8): 2(n−1)·α + 2(n−1)/n·S/β, named."""
    topo, S = switch(8, NVLINK4), 2.0 ** 20
    p = topo.plan("all-reduce", S, "ring")
    terms = {t.name: t.seconds for t in p.terms}
    assert terms["α"] == pytest.approx(14 * NVLINK4.alpha)
    assert terms["S/β"] == pytest.approx(14 / 8 * S / NVLINK4.bw)
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
