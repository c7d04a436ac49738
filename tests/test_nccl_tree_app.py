"""
Issue 32 in the app's words: NCCL's Tree explained a phase at a time (not as recursive doubling's pairs),
the lecture's kernels on a GPU machine named as the custom all-reduce kernels they are timed as, and every
NCCL reason saying whether its time is NCCL's model alone or a measured launch floor.
"""

import dataclasses

import pytest

from app.state import Playback, Scenario, ScenarioModel
from app.views.text.explain import ExplainPanel, describe_group
from app.words import nccl_reason
from simcore.topology_presets import PRESETS


def _steps(model):
    idx, tr = model.run.index, model.run.trace
    return [[tr.messages[i] for i in idx.step_msgs[0][k]] for k in range(tr.collectives[0].n_steps)]


def test_every_step_of_the_tree_is_told_in_its_own_words(qapp):
    sc = Scenario().with_changes(kind="all-reduce", n=16, topology="dgx-h100", nbytes=2.0**16, algo="tree")
    model = ScenarioModel(sc, sync=True)
    topo = model.run.comm.topology
    said = [describe_group(msgs, 16, topo) for msgs in _steps(model)]
    assert said[0].startswith("Along each node's chain every GPU passes its partial sum (32 KiB)")
    assert any(s.startswith("Across the nodes each child's tree GPU sends") for s in said)
    assert any(s.startswith("The total goes back down the tree") for s in said)
    assert said[-1].startswith("Inside each node the total runs back along the chain")
    assert not any("XOR" in s or "exchanges" in s for s in said)  # not rd's pairs, not hier's exchange
    pb = Playback(model)
    exp = ExplainPanel(model, pb)
    pb.seek(model.run.trace.collectives[0].t_end)
    assert "tree LL is NCCL's fastest at 64 KiB" in exp.body.toPlainText()


def test_the_lecture_kernels_on_a_gpu_machine_are_named_as_custom_all_reduce_kernels(qapp):
    topo = PRESETS["dgx-h100"].topology(8)
    proto, why = nccl_reason(topo, "all-reduce", "direct", 2.0**16)
    assert proto == "" and why == topo.protocol("all-reduce", "direct", 2.0**16)[1]
    assert "custom all-reduce kernels" in why and "5.9 µs" in why and "sglang#2904" in why


@pytest.mark.parametrize("launch,words,floor", [
    ("", "(NCCL's model: no launch or sync)", None),
    ("graph", "at least 16.8 µs, as measured with CUDA graphs", 16.84e-6),
    ("eager", "at least 19.8 µs, as measured with eager launches", 19.77e-6)])
def test_every_nccl_reason_says_which_time_it_is(qapp, launch, words, floor):
    topo = dataclasses.replace(PRESETS["dgx-h100"].topology(4), launch=launch)
    _proto, why = nccl_reason(topo, "all-reduce", "ring", 8.0)
    assert why.endswith(words) and why == topo.choose("all-reduce", 8.0)[2]
    t = topo.time("all-reduce", None, 8.0)
    assert t == pytest.approx(floor if floor else 10.2e-6, rel=1e-3)  # NCCL's model: 6.6 + 6 × 0.6 µs
