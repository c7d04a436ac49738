"""Stepping by phase where an algorithm's steps run at once, Qt-free: the trace
index's stops. Two-shot's 14 steps at n = 8 end 0.3 µs apart (tens of nanoseconds at small S), so a
stop per step showed nothing; it stops at the end of each of its two phases. Ring and recursive
doubling keep a stop per step."""

import pytest

from app.core.scenarios import Scenario, build_run
from app.core.trace_index import TraceIndex, concurrent_phases


def _index(kind, n, algo, nbytes=960 * 1024):
    run = build_run(Scenario(kind, n, algo, nbytes))
    return run.trace, TraceIndex(run.trace)


@pytest.mark.parametrize("nbytes", (960 * 1024, 8 * 1024))
def test_two_shot_stops_at_the_end_of_each_phase(nbytes):
    tr, idx = _index("all-reduce", 8, "two-shot", nbytes)
    c = tr.collectives[0]
    assert c.n_steps == 14
    rs = max(m.t_end for m in tr.messages if m.phase.startswith("one-shot reduce-scatter"))
    ag = max(m.t_end for m in tr.messages if m.phase.startswith("one-shot all-gather"))
    assert idx.stops == [0.0, rs, ag] and ag == c.t_end
    # every reduce-scatter message has landed before the first stop; none of the all-gather's
    assert all(m.t_end <= rs for m in tr.messages if "reduce-scatter" in m.phase)
    assert all(m.t_end > rs for m in tr.messages if "all-gather" in m.phase)


@pytest.mark.parametrize("kind, algo, stops", [("all-reduce", "direct", 1), ("all-reduce", "innet", 2),
                                               ("all-to-all", "direct", 1)])
def test_concurrent_algorithms_stop_once_per_phase(kind, algo, stops):
    tr, idx = _index(kind, 8, algo)
    assert concurrent_phases(tr.collectives[0].op, algo)
    assert len(idx.stops) - 1 == stops < tr.collectives[0].n_steps
    assert idx.stops[-1] == tr.t_end


@pytest.mark.parametrize("kind, algo, n", [("all-reduce", "ring", 8), ("all-reduce", "rd", 8), ("all-reduce", "rd", 5),
                                           ("all-gather", "ring", 8), ("all-to-all", "pairwise", 8)])
def test_sequential_algorithms_keep_a_stop_per_step(kind, algo, n):
    tr, idx = _index(kind, n, algo)
    assert concurrent_phases(tr.collectives[0].op, algo) == ()
    assert len(idx.stops) - 1 == tr.collectives[0].n_steps
    assert idx.stops[1:] == idx.step_ends[0]
