"""
Overlap told right: the roofline that adds compute and
communication is named "no overlap" (t_step_no_overlap); the lower bound is
max(compute, memory, communication) (t_lower_bound). An overlapped simulation may beat the
first and never the second.
"""

import numpy as np
import pytest

from simcore.cost_model import decode_sweep, tp_decode_step, tp_prefill_step, tp_step_overlap
from simcore.hw_specs import CHIPS
from simcore.links import NVLINK4
from simcore.llm_math import MODELS
from simcore.step_sim import simulate_prefill_step

H100 = CHIPS["h100"]


def test_the_sum_is_the_no_overlap_roofline_and_the_max_is_the_lower_bound():
    m = MODELS["llama3-70b"]
    s = decode_sweep(m, H100, NVLINK4, np.array([1, 2, 4, 8]), 8, 4096)
    np.testing.assert_array_equal(s["t_step_no_overlap"], s["t_step"])
    np.testing.assert_allclose(s["t_step"], np.maximum(s["t_math"], s["t_mem"]) + s["t_comm"], rtol=1e-15)
    np.testing.assert_allclose(s["t_lower_bound"], np.maximum(np.maximum(s["t_math"], s["t_mem"]), s["t_comm"]),
                               rtol=1e-15)
    assert np.all(s["t_lower_bound"][1:] < s["t_step"][1:])  # communication is > 0 beyond one chip
    one = tp_decode_step(m, H100, NVLINK4, 8, 8, 4096)
    assert one["t_lower_bound"] == pytest.approx(max(one["t_math"], one["t_mem"], one["t_comm"]), rel=1e-15)
    pre = tp_prefill_step(m, H100, NVLINK4, 8, 1, 2048)
    assert pre["t_lower_bound"] <= pre["t_step_no_overlap"] == pre["t_step"]


def test_an_overlapped_step_beats_no_overlap_but_never_the_lower_bound():
    m = MODELS["llama3-8b"]
    n, batch, prompt = 8, 1, 2048
    over = tp_step_overlap(m, H100, NVLINK4, n, batch, 0, prompt=prompt)
    assert over["t_lower_bound"] <= over["t_step_overlap"] < over["t_step_no_overlap"]
    comm = simulate_prefill_step(m, H100, NVLINK4, n, batch, prompt, overlap="async")
    assert over["t_lower_bound"] <= comm.time * (1 + 1e-9)
