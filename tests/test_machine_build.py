"""
Building a torus scenario: the TPU v4 4×4×4 all-gather used to take 1.5–3 s because every
device's buffer held 12·n² elements (100 MB of float64 at n = 64); it needs only 2 halves × 6 (the
axes' common multiple) per piece. The simulated time is the closed form either way.
"""

import numpy as np
import pytest

from simcore.comm_sim import LINKS
from simcore.topo_collectives import t_torus
from simcore.topology_presets import PRESETS, run_on_preset


@pytest.mark.parametrize("op", ["all-gather", "all-reduce"])
def test_the_4x4x4_torus_runs_on_small_buffers_and_keeps_its_closed_form(op):
    S = 2.0**20
    comm, inputs, outputs = run_on_preset(op, "tpu-v4-4x4x4", 64, S, "torus")
    assert inputs.shape == (64, 64 * 4 * 12)  # per device: n pieces of 4 elements × 2 halves × 6
    want = np.sum(inputs, axis=0)
    for d in (0, 21, 63):
        np.testing.assert_allclose(outputs[d], want, rtol=1e-12, atol=1e-12)
    lay = PRESETS["tpu-v4-4x4x4"].layout(64)
    assert comm.time == pytest.approx(t_torus(op, lay.shape, S, LINKS["tpu-v4-ici"], lay.wrap), rel=1e-9)
