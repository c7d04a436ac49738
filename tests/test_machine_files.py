"""
A calibrated two-link machine outlives its session: "Use as link" remembers it (QSettings),
so a scenario naming "measured-nodes" reopens after a restart, and a saved scenario on it carries the
machine as a spec with its links' α and β, so it opens on a computer that never calibrated.
"""

import json
from types import SimpleNamespace

import pytest

from simcore.comm_sim import LINKS, LinkSpec
from simcore.topology_presets import PRESETS

INTRA, INTER = LinkSpec("fitted NVLink", 4e-6, 380e9), LinkSpec("fitted IB", 11e-6, 47e9)


def _forget_session():
    """What a restart (or another computer) does not have: the registered machine and links."""
    for k in [k for k in PRESETS if k == "measured-nodes" or k.startswith("nodes-")]:
        PRESETS.pop(k)
    for k in [k for k in LINKS if k.startswith("measured")]:
        LINKS.pop(k)


@pytest.fixture
def measured(qapp):
    from app.classroom.calibration import register_measured_machine
    from app.scenario_io import settings

    cal = SimpleNamespace(tables=[SimpleNamespace(op="all-reduce", n=8, nodes=1, per_node=8),
                                  SimpleNamespace(op="all-reduce", n=16, nodes=2, per_node=8)],
                         machine_algos=lambda: {"all-reduce": "ring-nodes"})
    key, n = register_measured_machine(INTRA, INTER, cal)
    assert (key, n) == ("measured-nodes", 16)
    yield key
    _forget_session()
    settings().remove("calibration/measured_machine")


def _doc(topology):
    return json.dumps({"schema": "shard-lab-scenario", "version": 1, "scenario": {
        "kind": "all-reduce", "n": 16, "algo": "hier", "nbytes": 1048576, "link": "nvlink4", "topology": topology}})


def test_a_scenario_naming_the_measured_machine_reopens_after_a_restart(measured):
    from app.scenario_io import loads

    _forget_session()  # the restart: only the settings file remains
    sf = loads(_doc("measured-nodes"))
    lay = PRESETS[sf.scenario.topology].layout(16)
    assert (lay.kind, lay.nodes, lay.per_node) == ("nodes", 2, 8)
    assert PRESETS["measured-nodes"].topology(16).choose("all-reduce", 2**16)[0] == "ring-nodes"  # remembered
    assert (lay.intra, lay.inter) == (INTRA, INTER)


def test_a_saved_scenario_carries_its_machine_and_links_to_another_computer(measured):
    from app.scenario_io import dumps, loads, settings
    from app.core.scenarios import build_run
    from app.state import Scenario

    sc = Scenario().with_changes(kind="all-reduce", n=16, topology=measured, nbytes=2**20)
    before = build_run(sc).trace.t_end
    text = dumps(sc)
    d = json.loads(text)["scenario"]
    assert d["topology"] == {"kind": "nodes", "nodes": 2, "per_node": 8, "intra": "measured",
                             "inter": "measured-inter"}
    assert d["machine_links"] == {"measured": {"name": INTRA.name, "alpha": INTRA.alpha, "bw": INTRA.bw},
                                  "measured-inter": {"name": INTER.name, "alpha": INTER.alpha, "bw": INTER.bw}}
    # another computer: no machine, no links, nothing remembered; and its own "measured" link differs
    _forget_session()
    settings().remove("calibration/measured_machine")
    LINKS["measured"] = LinkSpec("someone else's", 1e-6, 100e9)
    sf = loads(text)
    lay = PRESETS[sf.scenario.topology].layout(16)
    assert (lay.intra, lay.inter) == (INTRA, INTER)  # the file's numbers, under free keys
    assert LINKS["measured"].name == "someone else's"
    after = build_run(sf.scenario).trace.t_end
    assert after == pytest.approx(before, rel=1e-12)


def test_bad_machine_links_are_named(measured):
    from app.scenario_io import ScenarioFileError, loads

    doc = json.loads(_doc({"kind": "nodes", "nodes": 2, "per_node": 8, "intra": "measured", "inter": "x-ib"}))
    doc["scenario"]["machine_links"] = {"x-ib": {"name": "IB", "alpha": 1e-6, "bw": -5}}
    with pytest.raises(ScenarioFileError, match="bw"):
        loads(json.dumps(doc))
    doc["scenario"]["machine_links"] = []
    with pytest.raises(ScenarioFileError, match="machine_links"):
        loads(json.dumps(doc))
