"""The hierarchical all-reduce's step between nodes is explained as what it is: each GPU
exchanges with its own local rank on the other node over its own NIC, not "d ↔ d XOR 8"."""

import pytest

from app.views.text.explain import describe_group
from app.state import Scenario, ScenarioModel


@pytest.mark.parametrize("nodes,words", [(2, "exchanges a chunk (64 KiB) with GPU d + 8 on the other node"),
                                         (4, "to GPU d + 8, its own local rank on the next node")])
def test_the_step_between_nodes_says_nic_not_xor(qapp, nodes, words):
    run = ScenarioModel(Scenario().with_changes(kind="all-reduce", n=8 * nodes, topology="dgx-h100",
                                                nbytes=2**20, algo="hier")).run
    tr, idx, c = run.trace, run.index, run.trace.collectives[0]
    seen = 0
    for k in range(c.n_steps):
        msgs = [tr.messages[i] for i in idx.step_msgs[0][k]]
        text = describe_group(msgs, c.n, run.comm.topology)
        if all(m.src // 8 != m.dst // 8 for m in msgs):  # the step across nodes: the same local rank, d ± 8
            assert all(m.dst % 8 == m.src % 8 for m in msgs)
            assert words in text and "own NIC" in text and "XOR" not in text
            seen += 1
        else:
            assert "NIC" not in text
    assert seen == 2 * (nodes - 1)  # reduce-scatter and all-gather across the nodes
