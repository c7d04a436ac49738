"""The trace: determinism, serialization, Chrome export, and the per-step holdings query."""

import csv
import gzip
import io
import json
from typing import NamedTuple

import numpy as np
import pytest

from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.scenarios import parse_bytes, run_collective
from simcore.trace import ALL, SWITCH, Collective, Compute, Initial, Trace, buffer_values

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
        Trace.from_dict({**data, "columns": {**data["columns"], "src": [1, 2]}})
    with pytest.raises(ValueError, match="corrupt"):
        Trace.from_dict({**data, "n_messages": "many"})
    with pytest.raises(ValueError, match="corrupt"):
        Trace.from_dict({"schema": data["schema"], "version": 1, "collectives": [], "messages": [[1, 2]]})


@pytest.mark.parametrize("op,algo", CASES)
def test_chrome_export_one_slice_per_message(op, algo):
    tr = run_collective(op, 8, "1MiB", algo).trace
    events = json.loads(json.dumps(tr.to_chrome()))["traceEvents"]
    sends = [e for e in events if (e.get("cat"), e.get("tid")) == ("comm", 1)]
    recvs = [e for e in events if (e.get("cat"), e.get("tid")) == ("comm", 2)]
    assert len(sends) == len(recvs) == len(tr.messages)
    spans = [e for e in events if e.get("cat") == "collective"]
    assert len(spans) == 8
    m0, s0 = tr.messages[0], sends[0]
    assert s0["pid"] == m0.src and s0["ts"] == pytest.approx(m0.t_start * 1e6, abs=6e-5)  # µs, to 0.1 ns
    assert s0["dur"] == pytest.approx((m0.t_end - m0.t_start) * 1e6, abs=6e-5)
    names = {e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert {f"GPU {d}" for d in range(8)} <= names


def test_ring_allreduce_chrome_has_112_slices_at_n8():
    tr = run_collective("all-reduce", 8, "1MiB", "ring").trace
    assert sum((e.get("cat"), e.get("tid")) == ("comm", 1) for e in tr.to_chrome()["traceEvents"]) == 112


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
    assert lines[0].startswith("coll,op,algo,label,step (from 1),src,dst,chunk,contributors,nbytes")


@pytest.mark.parametrize("text,want", [("512", 512), ("64KiB", 65536), ("1MiB", 2**20), ("2.5GB", 2.5e9),
                                       ("4 kb", 4000), (1024, 1024)])
def test_parse_bytes(text, want):
    assert parse_bytes(text) == want


@pytest.mark.parametrize("bad", ["", "-1", "nan", "1XB", "0", float("nan"), -5])
def test_parse_bytes_rejects(bad):
    with pytest.raises(ValueError):
        parse_bytes(bad)


# ---------------------------------------------------------------------------------------
# Columnar storage: what goes in comes out, field for field
# ---------------------------------------------------------------------------------------
class PlainMessage(NamedTuple):
    """The per-message record the trace used to keep (version 1), as the reference."""

    coll: int
    op: str
    algo: str
    label: str
    step: int
    src: int
    dst: int
    chunk: int
    contributors: frozenset
    nbytes: float
    t_start: float
    t_end: float
    phase: str
    reduce: bool


def _random_sets(rng, n, count):
    """Contributor sets of every shape: one device, arcs (wrapping too), everyone, and odd sets."""
    out = []
    for _ in range(count):
        kind = rng.integers(4)
        if kind == 0:
            out.append(frozenset({int(rng.integers(n))}))
        elif kind == 1:
            first, k = int(rng.integers(n)), int(rng.integers(1, n + 1))
            out.append(frozenset((first + i) % n for i in range(k)))
        elif kind == 2:
            out.append(frozenset(range(n)))
        else:
            out.append(frozenset(int(d) for d in rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False)))
    return out


def _plain_messages(seed=0, count=300, n=11):
    rng = np.random.default_rng(seed)
    sets = _random_sets(rng, n, count)
    msgs = []
    for i in range(count):
        t0 = float(rng.random() * 1e-3)
        msgs.append(PlainMessage(int(rng.integers(3)), str(rng.choice(["all-reduce", "all-gather"])),
                                 str(rng.choice(["ring", "rd"])), f"layer {i % 3} mlp", int(rng.integers(20)),
                                 int(rng.integers(-1, n)), int(rng.integers(-1, n)), int(rng.integers(-1, n)),
                                 sets[i], float(rng.random() * 1e6), t0, t0 + float(rng.random() * 1e-5),
                                 str(rng.choice(["", "up", "fold", "round 2"])), bool(rng.integers(2))))
    return msgs


def _trace_of(msgs, n=None):
    tr = Trace()
    for m in msgs:
        tr.add_message(*m, n=n)
    return tr


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for field in PlainMessage._fields:
            a, b = getattr(g, field), getattr(w, field)
            assert a == b and type(a) is type(b), (field, a, b)


@pytest.mark.parametrize("n_hint", [None, 11])
def test_columns_read_back_every_field_exactly(n_hint):
    want = _plain_messages()
    tr = _trace_of(want, n_hint)
    _assert_same(list(tr.messages), want)
    _assert_same(tr.messages[10:20], want[10:20])
    _assert_same([tr.messages[-1], tr.messages[5]], [want[-1], want[5]])
    assert tr.messages == want and len(tr) == len(want)
    assert [tuple(m) for m in tr.messages] == [tuple(m) for m in want]
    with pytest.raises(IndexError):
        tr.messages[len(want)]


def test_scalar_and_batch_writers_agree():
    n, k = 7, 3
    a, b = Trace(), Trace()
    src = np.arange(n)
    for d in range(n):
        a.add_message(0, "all-reduce", "ring", "x", k, d, (d + 1) % n, (d - k) % n,
                      frozenset((d - k + i) % n for i in range(k + 1)), 128.0, 1e-6 * d, 2e-6 * d + 1e-6,
                      "reduce-scatter", True, n=n)
    b.add_messages(0, "all-reduce", "ring", "x", "reduce-scatter", k, src, (src + 1) % n, (src - k) % n, 128.0,
                   1e-6 * src, 2e-6 * src + 1e-6, True, ((src - k) % n, k + 1, n, n))
    assert a.messages == b.messages
    ra, rb = a.rows(), b.rows()
    assert all(np.array_equal(ra[f], rb[f]) for f in ("w0", "w1", "w2", "w3"))  # the shortest form is the same


def test_contributor_counts_match_the_sets():
    want = _plain_messages(seed=3, count=400, n=13)
    tr = _trace_of(want, 13)
    tr.add_message(0, "all-reduce", "rd", "", 0, 0, 1, ALL, frozenset(), 8.0, 0.0, 1.0)
    # a recursive-doubling block with extras folded in: {x < 13 : x mod 8 in [4, 8)}
    tr.add_message(0, "all-reduce", "rd", "", 1, 0, 1, ALL, (4, 4, 8, 13), 8.0, 0.0, 1.0)
    counts = tr.contributor_counts()
    assert counts.tolist() == [len(m.contributors) for m in tr.messages]
    assert tr.messages[-1].contributors == frozenset({4, 5, 6, 7, 12})


def test_memory_is_linear_in_messages():
    """Bytes held per message do not grow with n (they grew as n with a set per message)."""
    per = {}
    for n in (16, 64):
        tr = run_collective("all-reduce", n, "1MiB", "ring").trace
        tr.compact()
        per[n] = tr.memory_bytes() / len(tr.messages)
    assert per[64] <= 100 and per[64] <= per[16] * 1.05, per


def test_initial_reads_as_the_plain_tuples():
    own = Initial.own_all(3, 3)
    plain = tuple(tuple((c, frozenset({d})) for c in range(3)) for d in range(3))
    assert own == plain and tuple(own) == plain and own[-1] == plain[-1]
    one = Initial.own_one([2, 0, 1])
    assert one == (((2, frozenset({0})),), ((0, frozenset({1})),), ((1, frozenset({2})),))
    assert one != own


# ---------------------------------------------------------------------------------------
# JSON: version 2 columns, version 1 rows still read
# ---------------------------------------------------------------------------------------
def _v1_dict(msgs, collectives):
    """What version 1 wrote: a row per message, contributors as sorted lists."""
    return {"schema": "shard-lab-trace", "version": 1, "message_fields": list(PlainMessage._fields),
            "messages": [[*m[:8], sorted(m.contributors), *m[9:]] for m in msgs],
            "collectives": [{**{k: v for k, v in c._asdict().items() if k != "plan"},  # plans came later
                             "initial": [[[ch, sorted(w)] for ch, w in h] for h in c.initial]}
                            for c in collectives]}


def test_version_1_files_still_read():
    run = run_collective("all-reduce", 5, "1MiB", "rd")
    msgs = [PlainMessage(*m) for m in run.trace.messages]
    colls = [c._replace(initial=tuple(tuple(h) for h in c.initial)) for c in run.trace.collectives]
    back = Trace.from_dict(json.loads(json.dumps(_v1_dict(msgs, colls))))
    _assert_same(list(back.messages), msgs)
    assert back.collectives == [c._replace(plan=None) for c in run.trace.collectives]  # a version 1 file has no plan
    assert back.holdings(0, step=1) == run.trace.holdings(0, step=1)


def test_computes_round_trip_in_version_2_and_read_from_version_1():
    run = run_collective("all-gather", 4)
    ops = [Compute(1, "qkv", 2e9, 3e6, 1e-6, 2.5e-6, 0, "matmul", "memory"), Compute(3, "lm head", 1e9, 5e5, 0.1, 0.2)]
    run.trace.computes.extend(ops)
    back = Trace.from_json(run.trace.to_json())
    assert back.computes == ops and back == run.trace and back.t_end == 0.2
    back.computes[1] = ops[1]._replace(t_end=0.3)
    assert back != run.trace  # equality looks at the ops too
    # the issue-16 branch wrote version 1 with "computes" rows beside the messages
    msgs = [PlainMessage(*m) for m in run.trace.messages]
    colls = [c._replace(initial=tuple(tuple(h) for h in c.initial)) for c in run.trace.collectives]
    v1 = {**_v1_dict(msgs, colls), "computes": [list(c) for c in ops], "compute_fields": list(Compute._fields)}
    assert Trace.from_dict(json.loads(json.dumps(v1))).computes == ops
    v1["computes"][0] = v1["computes"][0][:5]
    with pytest.raises(ValueError, match="compute row has 5 fields"):
        Trace.from_dict(v1)


def test_json_round_trip_keeps_every_field_and_gzips(tmp_path):
    want = _plain_messages(seed=5)
    tr = _trace_of(want)
    tr.collectives.append(Collective(0, "all-reduce", "ring", "x", 11, 11, 0.0, 1.0, 8.0, 20, 0, len(want),
                                     Initial.own_all(11, 11)))
    path = tmp_path / "t.json.gz"
    tr.write_json(str(path))
    with gzip.open(path, "rt") as f:
        assert json.load(f)["version"] == 3
    back = Trace.load(str(path))
    _assert_same(list(back.messages), want)
    assert back == tr and back.collectives[0].initial == Initial.own_all(11, 11)


@pytest.mark.parametrize("dtype, values", [
    ("<f8", [0.0, -0.0, 5e-324, 1e-300, 1 / 3, 1e308, -7.25, np.inf]),
    ("<i4", [0, -1, 1, 2**31 - 1, -2**31, 256]),
    ("|b1", [True, False, False, True]),
    ("<i4", []),
])
def test_a_compact_column_round_trips_bit_for_bit(dtype, values):
    from simcore.trace_io import decode_column, encode_column

    a = np.array(values, dtype=dtype)
    col = json.loads(json.dumps(encode_column(a)))
    back = decode_column(col, "x", a.dtype, len(a))
    assert back.dtype == a.dtype and back.tobytes() == a.tobytes()
    assert decode_column(col, "x", a.dtype, len(a), keep=2).tobytes() == a[:2].tobytes()


@pytest.mark.parametrize("name", ["t.json", "t.json.gz"])
def test_a_version_3_file_keeps_every_column_exactly_with_its_dtype(tmp_path, name):
    from simcore.trace import ROW

    want = _plain_messages(seed=7, count=5000)  # explicit sets too
    tr = _trace_of(want)
    path = tmp_path / name
    tr.save(path)
    data = json.loads((gzip.open(path, "rt") if name.endswith(".gz") else open(path)).read())
    assert data["version"] == 3 and data["columns"]["t_end"]["dtype"] == "<f8"
    back = Trace.from_dict(data)
    for field in ROW.names:
        a, b = back.column(field), tr.column(field)
        assert a.dtype == b.dtype == ROW[field] and a.tobytes() == b.tobytes(), field
    assert list(back.explicit) == list(tr.explicit) and len(tr.explicit) > 0
    assert back._keys == tr._keys
    _assert_same(list(back.messages), want)
    back.add_message(*want[0])  # a loaded trace still takes messages (its columns are copied first)
    back.add_messages(0, "all-gather", "ring", "x", "", 0, np.arange(3), 1, 0, 8.0, np.zeros(3), 1.0, False,
                      (0, 1, 11, 11))
    _assert_same(list(back.messages)[:len(want) + 1], want + want[:1])
    assert back.n_messages == len(want) + 4 and back.column("src")[-3:].tolist() == [0, 1, 2]


def test_version_2_files_still_load(tmp_path):
    from trace_files import as_version_2, version_2_text

    want = _plain_messages(seed=3)
    tr = _trace_of(want)
    tr.collectives.append(Collective(0, "all-reduce", "ring", "x", 11, 11, 0.0, 1.0, 8.0, 20, 0, len(want),
                                     Initial.own_all(11, 11)))
    data = tr.to_dict()
    laid_out, general = tmp_path / "old.json.gz", tmp_path / "edited.json"
    with gzip.open(laid_out, "wt") as f:
        f.write(version_2_text(data))  # write_json's version-2 layout: the column-by-column reader
    general.write_text(json.dumps(as_version_2(data), indent=1))  # any other layout: json.loads
    for path in (laid_out, general):
        back = Trace.load(path)
        assert back == tr
        _assert_same(list(back.messages), want)


# ---------------------------------------------------------------------------------------
# Chrome and CSV exports
# ---------------------------------------------------------------------------------------
def _chrome_events(tr, **kw):
    buf = io.StringIO()
    tr.write_chrome(buf, **kw)
    return json.loads(buf.getvalue())["traceEvents"]


@pytest.mark.parametrize("op,algo", CASES)
def test_chrome_has_every_message_as_send_and_recv_slices_in_microseconds(op, algo):
    tr = run_collective(op, 6, "1MiB", algo).trace
    events = _chrome_events(tr)
    pid = {SWITCH: 10_000}
    # both sides of a message are category "comm" (one filter in Perfetto), on the send (1) and recv (2) tracks
    assert {e["tid"] for e in events if e.get("cat") == "comm"} == {1, 2}
    for tid, who, peer, key in ((1, "src", "dst", "to"), (2, "dst", "src", "from")):
        slices = [e for e in events if (e.get("cat"), e.get("tid")) == ("comm", tid)]
        assert len(slices) == len(tr.messages)
        for e, m in zip(slices, tr.messages):
            assert e["ph"] == "X" and e["pid"] == pid.get(getattr(m, who), getattr(m, who))
            assert e["ts"] == pytest.approx(m.t_start * 1e6, abs=6e-5)  # written to 0.1 ns
            assert e["dur"] == pytest.approx((m.t_end - m.t_start) * 1e6, abs=6e-5)
            # the step as the app shows it, from 1
            assert e["args"] == {key: getattr(m, peer), "step": m.step + 1, "bytes": pytest.approx(m.nbytes, abs=1e-3)}
            assert e["name"] == ("chunk all" if m.chunk == ALL else f"chunk {m.chunk}")


def test_chrome_metadata_once_per_track_and_flows_pair_up():
    tr = run_collective("all-reduce", 5, "1MiB", "innet").trace
    events = _chrome_events(tr, flows=True)
    meta = [(e["name"], e["pid"], e.get("tid")) for e in events if e["ph"] == "M"]
    assert len(meta) == len(set(meta))
    assert {e["args"]["name"] for e in events if e.get("name") == "process_name"} == \
        {f"GPU {d}" for d in range(5)} | {"switch"}
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert sorted(starts) == sorted(ends) == list(range(len(tr.messages)))
    for i, m in enumerate(tr.messages):
        assert (starts[i]["pid"], ends[i]["pid"]) == (10_000 if m.src == SWITCH else m.src,
                                                      10_000 if m.dst == SWITCH else m.dst)


def test_chrome_compute_track_from_compute_records():
    tr = run_collective("all-gather", 3).trace
    tr.computes.append(Compute(2, "down", 1e9, 4e6, 1e-6, 3e-6, layer=0, kind="matmul", bound="memory"))
    tr.computes.append(Compute(1, "lm head", 2e9, 8e6, 5e-3, 6e-3))
    events = _chrome_events(tr)
    e, head = [e for e in events if e.get("cat") == "compute"]
    assert (e["pid"], e["tid"], e["name"]) == (2, 3, "L0 down")
    assert e["ts"] == pytest.approx(1.0) and e["dur"] == pytest.approx(2.0)
    assert e["args"] == {"flops": 1e9, "bytes": 4e6, "bound": "memory"}
    assert (head["pid"], head["name"]) == (1, "lm head")  # outside the layers: no layer prefix
    order = {(e["pid"], e["tid"]): e["args"]["sort_index"] for e in events if e.get("name") == "thread_sort_index"}
    assert all(order[(d, 3)] < order[(d, 1)] < order[(d, 2)] for d in range(3))  # compute above the ports
    assert tr.t_end == pytest.approx(6e-3)  # the last op ends after the all-gather


def test_chrome_gzip_round_trip(tmp_path):
    tr = run_collective("all-reduce", 8, "1MiB", "ring").trace
    tr.write_chrome(str(tmp_path / "t.json.gz"))
    tr.write_chrome(str(tmp_path / "t.json"))
    with gzip.open(tmp_path / "t.json.gz", "rt") as f:
        zipped = f.read()
    assert zipped == (tmp_path / "t.json").read_text()
    assert sum((e.get("cat"), e.get("tid")) == ("comm", 1) for e in json.loads(zipped)["traceEvents"]) == 112


def _parse_ranges(text):
    out = set()
    for part in filter(None, text.split("+")):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(out)


@pytest.mark.parametrize("op,algo", CASES)
def test_csv_parses_into_plain_numbers(op, algo):
    tr = run_collective(op, 7, "1MiB", algo).trace
    rows = list(csv.DictReader(io.StringIO(tr.to_csv())))
    assert len(rows) == len(tr.messages)
    for row, m in zip(rows, tr.messages):
        for field in ("coll", "src", "dst", "chunk", "reduce"):
            assert float(row[field]) == int(getattr(m, field)), field
        assert row["step (from 1)"] == str(m.step + 1)  # the app's count, as the header says
        assert "." not in row["nbytes"] or not m.nbytes.is_integer()  # whole bytes as whole numbers
        for field in ("nbytes", "t_start", "t_end"):
            assert float(row[field]) == getattr(m, field), field  # repr of a float reads back exactly
        assert _parse_ranges(row["contributors"]) == m.contributors
        assert (row["op"], row["algo"], row["label"], row["phase"]) == (m.op, m.algo, m.label, m.phase)
        assert "np." not in ",".join(row.values())


def test_csv_quotes_a_label_with_commas(tmp_path):
    tr = _trace_of([PlainMessage(0, "all-reduce", "ring", 'layer 1, "attn"', 0, 0, 1, 0, frozenset({0}), 8.0, 0.0,
                                 1e-6, "", False)])
    tr.write_csv(str(tmp_path / "t.csv.gz"))
    with gzip.open(tmp_path / "t.csv.gz", "rt", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert row["label"] == 'layer 1, "attn"' and float(row["t_end"]) == 1e-6


def _as_json_list(field):
    return json.loads("[" + ",".join(bytes(row).decode() for row in field) + "]")


@pytest.mark.parametrize("top", [1, 5, 300, 9999, 10**5, 10**9, 10**13])
def test_block_formatters_write_the_numbers_json_reads(top):
    """The Chrome writer formats a block of numbers as byte matrices; json must read them back."""
    from simcore.trace_io import _chunk_field, _fixed_field, _int_field

    rng = np.random.default_rng(top)
    v = rng.integers(-1, top, 2000)
    v[:3] = [-1, 0, top - 1]
    assert _as_json_list(_int_field(v)) == v.tolist()
    assert _as_json_list(_int_field(np.full(4, top))) == [top] * 4
    x = rng.random(2000) * top
    x[:4] = [0.0, 1.0, 2.5, top]
    for decimals in (3, 4):
        np.testing.assert_allclose(_as_json_list(_fixed_field(x, decimals)), np.round(x, decimals), atol=1e-9)
        for value in (0.0, 2.5, 4096.0, 1.90911111):
            assert _as_json_list(_fixed_field(np.full(3, value), decimals)) == [round(value, decimals)] * 3
    c = rng.integers(-1, top, 2000)
    names = [json.loads('"' + bytes(row).decode().rstrip()) for row in _chunk_field(c)]
    assert names == ["all" if k == ALL else str(k) for k in c.tolist()]  # no padding inside the string


def test_holdings_of_a_collective_that_starts_from_a_dict_of_chunks():
    """The hierarchical all-reduce records what each GPU holds first as {chunk: contributors}: the
    replay (simcore.holdings) starts from it — GPU d holds every chunk of its own data — and after
    every step equals the rule replayed here with plain sets, message by message in trace order
    (a reduce adds the message's contributors to the slot, a copy replaces them)."""
    from simcore import comm_sim
    from simcore.topo_collectives import allreduce_hier

    P, N = 2, 2
    n, G = P * N, P * N
    nvl = comm_sim.LINKS["nvlink4"]
    comm = comm_sim.Comm(comm_sim.nodes(N, P, intra=nvl, inter=nvl))
    allreduce_hier(comm, [np.ones(4 * G) for _ in range(n)])
    tr = comm.trace
    c = tr.collectives[0]
    assert tr.holdings(0, step=-1) == {d: {ch: frozenset({d}) for ch in range(G)} for d in range(n)}
    state = {d: {ch: frozenset({d}) for ch in range(G)} for d in range(n)}
    msgs = tr.messages_of(0)
    for k in range(c.n_steps):
        for m in (m for m in msgs if m.step == k):
            slot = state.setdefault(m.dst, {})
            for ch in (range(G) if m.chunk == ALL else (m.chunk,)):
                slot[ch] = (slot.get(ch, frozenset()) | m.contributors) if m.reduce else frozenset(m.contributors)
        assert tr.holdings(0, step=k) == state, k
