"""
The decode tab's FFN communication plot on a machine: Pope et al.'s curves use the
bandwidth a tensor-parallel group of n chips gets there — NVLink inside a DGX H100 node, the NICs
across nodes — checked against a simulated collective, and the title says which.
"""

import math

import numpy as np
import pytest

from app.core.latency_model import DEFAULTS, check_params, ffn_bandwidth, ffn_sweep
from simcore import cost_model
from simcore.comm_sim import LINKS, Comm, LinkSpec, nodes
from simcore.llm_math import MODELS
from simcore.sharding import all_reduce


def _simulated_bandwidth(P, N, intra, inter):
    """(n−1)/n · S per all-gather's time, from a simulated channel-ring all-reduce (= 2 all-gathers'
    bandwidth terms) at α = 0 on nodes(N, P): the engine's word, not the app's formula."""
    n = P * N
    S = 2.0**20
    L = 16 * n * P
    zero = [LinkSpec(k.name, 0.0, k.bw) for k in (intra, inter)]
    comm = Comm(nodes(N, P, zero[0], zero[1]), byte_scale=S / (L * 8))
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(L) for _ in range(n)]
    out = all_reduce(comm, arrays, algo="ring-nodes")
    np.testing.assert_allclose(out[0], np.sum(arrays, axis=0), rtol=1e-12, atol=1e-12)
    return (n - 1) / n * S / (comm.time / 2)


def test_on_dgx_h100_the_ffn_curves_use_nvlink_inside_a_node_and_the_nics_across():
    p = check_params(dict(DEFAULTS, machine="dgx-h100", chip="h100", n_max=64))
    nvl, ib = LINKS["nvlink4"], LINKS["ib-ndr400"]
    bw = ffn_bandwidth(p, np.arange(1, 65))
    assert np.all(bw[:8] == nvl.bw)
    across = _simulated_bandwidth(8, 2, nvl, ib)
    # NCCL's rings, one channel per NIC: the node's 8 NICs bound it (8 × 50 GB/s < 8/7 × 450 GB/s)
    assert across == pytest.approx(8 * ib.bw, rel=1e-9)
    assert bw[8:] == pytest.approx(np.full(56, across), rel=1e-9)
    f = ffn_sweep(p)
    m = MODELS[p["model"]]
    for n in (4, 8, 16, 64):
        for v in ("1d", "2d", "gathered"):
            want = cost_model.pope_ffn_comm(v, p["batch"], m.d_model, m.d_ff, n, bw[n - 1], p["act_bytes"])
            want = want[0] if isinstance(want, tuple) else want
            assert f[v][n - 1] == pytest.approx(want, rel=1e-12)
    assert f["1d"][15] > f["1d"][7] * 1.1  # slower across the node boundary


def test_one_switch_keeps_the_links_bandwidth_and_a_torus_its_rings():
    p = check_params(dict(DEFAULTS, n_max=64))
    assert np.all(ffn_bandwidth(p, [1, 8, 64]) == LINKS["nvlink4"].bw)
    t = check_params(dict(DEFAULTS, machine="tpu-v4-4x4x4", chip="tpu-v4", n_max=64))
    bw = ffn_bandwidth(t, [64])
    # a full 4×4×4 cube: bidirectional rings on 3 axes, 2·3·β (How to Scale Your Model, TPU chapter)
    assert bw[0] == pytest.approx(6 * LINKS["tpu-v4-ici"].bw, rel=1e-9)


def test_the_ffn_plot_title_names_the_machines_bandwidths(qtbot):
    from app.views.latency.latency_view import LatencyView
    from app.state import Playback, Scenario, ScenarioModel

    model = ScenarioModel(Scenario())
    v = LatencyView(model, Playback(model))
    qtbot.addWidget(v)
    assert v.set_params(machine="dgx-h100", chip="h100")
    title = v.title2.text
    assert "DGX H100" in title and "450 GB/s" in title and "400 GB/s" in title and "n = 8" in title
    x, y = v.ffn_items["1d"].getData()  # what the 1D curve paints, log10 of n and of µs
    at = {n: y[int(np.flatnonzero(np.isclose(x, math.log10(n), rtol=0, atol=1e-12))[0])] for n in (8, 16)}
    assert at[16] > at[8]  # 16 GPUs cross InfiniBand: more time per layer than 8 inside a node
    assert v.set_params(machine="")
    assert "GB/s" in v.title2.text and "DGX" not in v.title2.text
