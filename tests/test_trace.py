"""The trace: determinism, serialization, Chrome export, and the per-step holdings query."""

import json

import numpy as np
import pytest

from simcore.comm_sim import ALLREDUCE_ALGOS
from simcore.scenarios import parse_bytes, run_collective
from simcore.trace import SWITCH, Trace, buffer_values

CASES = [("all-gather", "ring"), ("reduce-scatter", "ring")] + [("all-reduce", a) for a in ALLREDUCE_ALGOS]


@pytest.mark.parametrize("op,algo", CASES)
def test_same_inputs_same_trace(op, algo):
    a = run_collective(op, 6, "64KiB", algo).trace
    b = run_collective(op, 6, "64KiB", algo).trace
    assert a == b
    assert a.messages and a.messages == b.messages


@pytest.mark.parametrize("op,algo", CASES)
def test_json_round_trip(op, algo):
    tr = run_collective(op, 5, "1MiB", algo).trace
    back = Trace.from_json(tr.to_json())
    assert back == tr
    assert back.holdings(0, step=1) == tr.holdings(0, step=1)


def test_json_refuses_foreign_and_corrupt_data():
    tr = run_collective("all-gather", 3).trace
    data = json.loads(tr.to_json())
    with pytest.raises(ValueError, match="version"):
        Trace.from_dict({**data, "version": 99})
    with pytest.raises(ValueError, match="not a trace"):
        Trace.from_dict({"hello": 1})
    with pytest.raises(ValueError, match="not a trace"):
        Trace.from_json(tr.to_json()[:-10])
    with pytest.raises(ValueError, match="corrupt"):
        Trace.from_dict({**data, "messages": [[1, 2]]})


@pytest.mark.parametrize("op,algo", CASES)
def test_chrome_export_one_slice_per_message(op, algo):
    tr = run_collective(op, 8, "1MiB", algo).trace
    events = json.loads(json.dumps(tr.to_chrome()))["traceEvents"]
    sends = [e for e in events if e.get("cat") == "send"]
    recvs = [e for e in events if e.get("cat") == "recv"]
    assert len(sends) == len(recvs) == len(tr.messages)
    spans = [e for e in events if e.get("cat") == "collective"]
    assert len(spans) == 8
    m0, s0 = tr.messages[0], sends[0]
    assert s0["pid"] == m0.src and s0["ts"] == pytest.approx(m0.t_start * 1e6)
    assert s0["dur"] == pytest.approx((m0.t_end - m0.t_start) * 1e6)
    names = {e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert {f"GPU {d}" for d in range(8)} <= names


def test_ring_allreduce_chrome_has_112_slices_at_n8():
    tr = run_collective("all-reduce", 8, "1MiB", "ring").trace
    assert sum(e.get("cat") == "send" for e in tr.to_chrome()["traceEvents"]) == 112


@pytest.mark.parametrize("op,algo", CASES)
@pytest.mark.parametrize("n", [2, 5, 8])
def test_holdings_after_last_step_match_the_result(op, algo, n):
    run = run_collective(op, n, "1MiB", algo)
    tr = run.trace
    c = tr.collectives[0]
    final = tr.holdings(0, step=c.n_steps - 1)
    assert final == tr.holdings(0)
    everyone = frozenset(range(n))
    vals = buffer_values(final, run.inputs, c.n_chunks)
    if op == "reduce-scatter":
        for r in range(n):
            assert final[r][(r + 1) % n] == everyone
            k = len(run.outputs[r])
            np.testing.assert_allclose(vals[r, (r + 1) % n * k:((r + 1) % n + 1) * k], run.outputs[r])
    elif op == "all-gather":  # every chunk arrives, each carrying its owner's data only
        for d in range(n):
            assert final[d] == {ch: frozenset((ch,)) for ch in range(n)}
            np.testing.assert_array_equal(vals[d], run.outputs[d])
    else:
        for d in range(n):
            assert all(final[d][ch] == everyone for ch in range(c.n_chunks)), final[d]
            np.testing.assert_allclose(vals[d], run.outputs[d], rtol=1e-12)


@pytest.mark.parametrize("n", [2, 5, 8])
def test_ring_reduce_scatter_sums_grow_one_contributor_per_step(n):
    tr = run_collective("reduce-scatter", n).trace
    for k in range(n - 1):
        h = tr.holdings(0, step=k)
        for d in range(n):
            c = (d - k - 1) % n  # the chunk device d just received at step k
            assert len(h[d][c]) == k + 2


def test_holdings_by_time_equal_holdings_by_step():
    tr = run_collective("all-reduce", 6, "1MiB", "ring").trace
    for k, (t0, t1) in enumerate(tr.step_times(0)):
        assert tr.holdings(0, t=t1) == tr.holdings(0, step=k)
        assert tr.holdings(0, t=t0) == tr.holdings(0, step=k - 1)


def test_innet_switch_accumulates():
    tr = run_collective("all-reduce", 4, "1MiB", "innet").trace
    h = tr.holdings(0, step=0)  # chunk 0 went up from everyone
    assert h[SWITCH][0] == frozenset(range(4))


def test_in_flight():
    tr = run_collective("all-gather", 4).trace
    t0, t1 = tr.step_times(0)[1]
    mid = (t0 + t1) / 2
    assert {(m.src, m.dst) for m in tr.in_flight(mid)} == {(d, (d + 1) % 4) for d in range(4)}


def test_csv_has_a_row_per_message():
    tr = run_collective("all-reduce", 4, algo="rd").trace
    lines = tr.to_csv().strip().splitlines()
    assert len(lines) == 1 + len(tr.messages)
    assert lines[0].startswith("coll,op,algo,label,step,src,dst,chunk,contributors,nbytes")


@pytest.mark.parametrize("text,want", [("512", 512), ("64KiB", 65536), ("1MiB", 2**20), ("2.5GB", 2.5e9),
                                       ("4 kb", 4000), (1024, 1024)])
def test_parse_bytes(text, want):
    assert parse_bytes(text) == want


@pytest.mark.parametrize("bad", ["", "-1", "nan", "1XB", "0", float("nan"), -5])
def test_parse_bytes_rejects(bad):
    with pytest.raises(ValueError):
        parse_bytes(bad)
