"""
One click of Machine = DGX H100 (as the Scenario dock does it) resolves its collective's plan once:
one plan made, NCCL's model evaluated once, the machine built once; and the lecture API,
run_on_preset, the cost model and the app's run give the same algorithm, protocol and time for the
same (machine, op, nbytes) — all of them execute or read the one plan.
"""

import numpy as np
import pytest

from simcore import plan as plan_mod
from simcore import topology as topology_mod
from simcore import topology_presets
from simcore.comm_sim import Comm
from simcore.topology_presets import PRESETS


def _clear():
    plan_mod.cache_clear()
    topology_mod._nccl_models.cache_clear()
    topology_presets._topology_of.cache_clear()


def test_one_click_of_a_machine_resolves_its_plan_once(qapp, monkeypatch):
    import functools

    from app.controls import ControlPanel
    from app.state import ScenarioModel

    made = []  # every plan resolved (a cache miss), by its key

    def recording(topo, op, S, algo):
        made.append((topo.name, op, S, algo))
        return resolve_plan(topo, op, S, algo)

    resolve_plan = plan_mod._plan.__wrapped__
    model = ScenarioModel(sync=True)
    panel = ControlPanel(model)
    try:
        panel.op.activated.emit(panel.op.findData("all-reduce"))
        panel.n.setValue(16)  # on the lecture's switch: 16 devices with its ring, as a student leaves them
        _clear()
        monkeypatch.setattr(plan_mod, "_plan", functools.lru_cache(maxsize=4096)(recording))
        panel.machine.activated.emit(panel.machine.findData("dgx-h100"))
        sc = model.scenario
        assert (sc.topology, sc.kind) == ("dgx-h100", "all-reduce")
        topo = PRESETS["dgx-h100"].topology(sc.n)
        # one plan: the machine's choice, which the hint words and the run executes
        assert made == [(topo.name, "all-reduce", float(sc.nbytes), None)], (sc, made)
        assert topology_mod.nccl_model_evaluations().misses == 1  # NCCL's model of all-reduce on 2 × 8, once
        assert topology_presets.topology_builds().misses == 1  # the machine of n GPUs, built once
        p = topo.plan("all-reduce", float(sc.nbytes))
        c = model.run.trace.collectives[0]
        assert c.plan == p.record_fields() and c.algo == p.algo == sc.algo
        assert panel.hint.text().startswith("The machine's choice: ")
    finally:
        panel.close()


CASES = [("dgx-h100", 8, "all-reduce", 2.0 ** 20), ("dgx-h100", 16, "all-reduce", 2.0 ** 20),
         ("dgx-h100", 16, "all-reduce", 2.0 ** 12), ("dgx-h100", 16, "all-gather", 2.0 ** 16),
         ("gb200-nvl72", 72, "all-reduce", 72.0 * 2 ** 18)]


@pytest.mark.parametrize("key,n,op,S", CASES)
def test_every_path_gives_the_same_algorithm_protocol_and_time(qapp, key, n, op, S):
    from app.core.scenarios import Scenario, build_run, machine_choice
    from simcore import cost_model
    from simcore.sharding import all_gather, all_reduce
    from simcore.topology_presets import run_on_preset

    topo = PRESETS[key].topology(n)
    p = topo.plan(op, S)
    # the lecture API on the machine
    L = n * 4 * max(1, p.chunks) * topo.fine_per_device
    comm = Comm(topo, byte_scale=S / (L * 8))
    if op == "all-reduce":
        all_reduce(comm, [np.ones(L) for _ in range(n)])
    else:
        all_gather(comm, [np.ones(L // n) for _ in range(n)], axis=0)
    lecture = comm.trace.collectives[0]
    # the preset's run and the app's run
    preset_comm = run_on_preset(op, key, n, S, None)[0]
    sc = Scenario(kind=op, n=n, topology=key, nbytes=S)
    app_run = build_run(sc.with_changes(algo=machine_choice(sc)[0]))  # as the dock runs a machine: its choice
    records = [lecture.plan, preset_comm.trace.collectives[0].plan, app_run.trace.collectives[0].plan]
    assert all(r is not None for r in records)
    assert {(r.algo, r.protocol, r.time) for r in records} == {(p.algo, p.protocol, p.time)}
    if p.algo != "hier":  # hier's simulated pipeline is within 8 % of its form (test_hier_pipelined)
        for t in (comm.time, preset_comm.time, app_run.trace.collectives[0].t_end):
            assert t == pytest.approx(p.time, rel=1e-9)
    if op == "all-reduce":
        assert cost_model.comm_time(key, n, S) == p.time
