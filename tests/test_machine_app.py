"""
The truer machine in the app (issue 15): per-collective base latency in the engine and the cost
model, the machine's drawing (app/ring_layout), scenarios naming a machine.
"""

import numpy as np
import pytest

from closed_forms import NCCL_RING_LL128_BASE, reference_hier_allreduce, reference_with_base
from simcore.comm_sim import ALLREDUCE_ALGOS, LINKS, Comm, nodes, switch
from simcore.topo_collectives import allreduce_on
from simcore.topology_presets import PRESETS


def _simulate(topo, S, algo="ring", inter_algo="hier"):
    n = topo.n
    L = 16 * n
    comm = Comm(topo, byte_scale=S / (L * 8))
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(L) for _ in range(n)]
    out = allreduce_on(comm, arrays, algo=algo, inter_algo=inter_algo)
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


def test_hierarchical_pays_the_base_latency_three_times():
    nvl, ib = LINKS["nvlink4"], LINKS["ib-ndr400"]
    S = 2.0**16
    t = _simulate(nodes(2, 4, nvl, ib, base=NCCL_RING_LL128_BASE), S)
    want = reference_hier_allreduce(4, 2, S, (nvl.alpha, nvl.bw), (ib.alpha, ib.bw), NCCL_RING_LL128_BASE)
    assert t == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("key,n,algo", [("dgx-h100", 8, "ring"), ("dgx-h100", 8, "direct"), ("dgx-h100", 16, "ring"),
                                        ("gb200-nvl72", 8, "two-shot")])
def test_cost_model_t_comm_is_the_simulated_all_reduce(key, n, algo):
    """issue 15: t_comm of one all-reduce in the cost model = the simulated collective, base latency included."""
    from simcore.cost_model import comm_time

    preset = PRESETS[key]
    S = 8 * 8192 * 2.0  # a decode step's activations: batch 8, d_model 8192, bf16
    simulated = _simulate(preset.topology(n), S, algo)
    assert comm_time(key, n, S, algo) == pytest.approx(simulated, rel=1e-9)
    assert simulated > NCCL_RING_LL128_BASE


def test_a_bad_base_latency_is_refused():
    with pytest.raises(ValueError, match="base latency"):
        switch(4, LINKS["nvlink4"], base=-1e-6)
    with pytest.raises(ValueError, match="base latency"):
        nodes(2, 4, base=float("nan"))
