"""The public way to write a collective (Comm.collective) and saved runs (Trace.save / load)."""

import gzip
import json

import numpy as np
import pytest

from simcore.comm_sim import Comm, allgather_ring, allreduce_ring, switch
from simcore.trace import Trace
from simcore.trace_io import encode_column
from trace_files import as_version_2, edit_column, version_2_text


def hand_ring_allreduce(comm, xs, phase=True):
    """Ring all-reduce written with the public API only; returns every device's result."""
    n = comm.n
    bufs = [x.copy().reshape(n, -1) for x in xs]
    cb = xs[0].nbytes / n
    with comm.collective("all-reduce", algo="ring", n_chunks=n, nbytes=xs[0].nbytes) as c:
        got = list(c.ready)
        for k in range(n - 1):
            sent = [(d, (d - k) % n, bufs[d][(d - k) % n].copy()) for d in range(n)]
            t = [c.send(d, (d + 1) % n, cb, got[d], step=k, chunk=ch, reduce=True,
                        phase="reduce-scatter" if phase else "") for d, ch, _ in sent]
            for d, ch, v in sent:
                bufs[(d + 1) % n][ch] += v
            got = [max(got[d], t[(d - 1) % n]) for d in range(n)]
        for k in range(n - 1):
            sent = [(d, (d + 1 - k) % n, bufs[d][(d + 1 - k) % n].copy()) for d in range(n)]
            t = [c.send(d, (d + 1) % n, cb, got[d], step=n - 1 + k, chunk=ch,
                        phase="all-gather" if phase else "") for d, ch, _ in sent]
            for d, ch, v in sent:
                bufs[(d + 1) % n][ch] = v
            got = [t[(d - 1) % n] for d in range(n)]
    return [b.ravel() for b in bufs]


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_hand_written_ring_allreduce_records_the_builtin_trace(n):
    rng = np.random.default_rng(n)
    xs = [rng.standard_normal(4 * n) for _ in range(n)]
    a, b = Comm(switch(n)), Comm(switch(n))
    want = allreduce_ring(a, xs)
    got = hand_ring_allreduce(b, xs)
    assert a.trace == b.trace  # same messages, times, steps, contributors, collective record
    assert a.time == b.time and a.ready == b.ready
    assert all(np.allclose(g, w) for g, w in zip(got, want))


def test_hand_written_ring_allgather_keeps_contributors_by_copy():
    n = 4
    comm, ref = Comm(switch(n)), Comm(switch(n))
    shards = [np.full(3, float(d)) for d in range(n)]
    allgather_ring(ref, shards, list(range(n)))
    with comm.collective("all-gather", algo="ring", nbytes=n * shards[0].nbytes) as c:
        got = list(c.ready)
        for k in range(n - 1):
            t = [c.send(d, (d + 1) % n, shards[0].nbytes, got[d], step=k, chunk=(d - k) % n) for d in range(n)]
            got = [t[(d - 1) % n] for d in range(n)]
        assert all(c.holds(d, ch) == {ch} for d in range(n) for ch in range(n))
    assert [m.contributors for m in comm.trace.messages] == [m.contributors for m in ref.trace.messages]
    assert comm.trace.collectives[0].t_end == ref.trace.collectives[0].t_end


def test_reduce_unites_and_copy_replaces_contributors():
    comm = Comm(switch(4))
    with comm.collective("all-reduce", n_chunks=1, nbytes=8) as c:
        c.send(0, 1, 8, 0.0, step=0, chunk=0, reduce=True)
        assert c.holds(1, 0) == {0, 1}
        c.send(1, 2, 8, 0.0, step=1, chunk=0, reduce=True)
        assert c.holds(2, 0) == {0, 1, 2}
        c.send(3, 2, 8, 0.0, step=2, chunk=0)  # a copy overwrites
        assert c.holds(2, 0) == {3}
    assert [sorted(m.contributors) for m in comm.trace.messages] == [[0], [0, 1], [3]]
    assert comm.trace.collectives[0].algo == "custom"


def test_an_exception_inside_the_with_leaves_the_comm_as_it_was():
    comm = Comm(switch(4))
    xs = [np.ones(8) for _ in range(4)]
    allreduce_ring(comm, xs)
    before = (comm.time, list(comm.ready), comm.trace.n_messages, len(comm.trace.collectives))
    with pytest.raises(ZeroDivisionError):
        with comm.collective("all-reduce", nbytes=64) as c:
            c.send(0, 1, 16, 0.0, step=0, chunk=0)
            1 / 0
    with pytest.raises(ValueError, match="GPU|device|not a device"):
        with comm.collective("all-reduce", nbytes=64) as c:
            c.send(0, 9, 16, 0.0)
    assert (comm.time, list(comm.ready), comm.trace.n_messages, len(comm.trace.collectives)) == before
    allreduce_ring(comm, xs)  # the Comm still works, ports as before
    ref = Comm(switch(4))
    allreduce_ring(ref, xs)
    allreduce_ring(ref, xs)
    assert comm.trace == ref.trace


def test_send_outside_the_with_and_nested_collectives_are_refused():
    comm = Comm(switch(2))
    c = comm.collective("all-reduce", nbytes=8)
    with pytest.raises(RuntimeError):
        c.send(0, 1, 8, 0.0)
    with comm.collective("all-reduce", nbytes=8):
        with pytest.raises(RuntimeError, match="one at a time"):
            with comm.collective("all-gather", nbytes=8):
                pass


@pytest.mark.parametrize("name", ["run.json", "run.json.gz"])
def test_save_and_load_round_trip(tmp_path, name):
    comm = Comm(switch(4))
    hand_ring_allreduce(comm, [np.arange(8.0) for _ in range(4)])
    path = tmp_path / name
    comm.trace.save(path)
    back = Trace.load(path)
    assert back == comm.trace
    assert back.meta["link"]["bw"] == comm.link.bw


def _saved(tmp_path, edit=None, name="run.json"):
    comm = Comm(switch(4))
    allreduce_ring(comm, [np.arange(8.0) for _ in range(4)])
    data = comm.trace.to_dict()
    if edit:
        edit(data)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("edit, words", [
    (lambda d: d.update(version=7), "version 7"),
    (lambda d: d.update(schema="other"), "not a trace file"),
    (lambda d: edit_column(d, "dst", 3, 9), "GPU 9, which does not exist"),
    (lambda d: edit_column(d, "nbytes", 0, -5), "negative bytes"),
    (lambda d: edit_column(d, "t_end", 2, -1.0), "times out of order"),
    (lambda d: edit_column(d, "t_end", 2, 1.0), "times out of order"),
    (lambda d: d["columns"]["src"].update(zlib=d["columns"]["src"]["zlib"][:-8]), "column src is truncated or"),
    (lambda d: d["columns"]["src"].update(zlib="!" + d["columns"]["src"]["zlib"][1:]), "column src is truncated or"),
    (lambda d: d["columns"]["t_end"].update(shape=[3]), "column t_end has shape"),
    (lambda d: d["columns"]["t_end"].update(dtype="<f4"), "column t_end has dtype"),
    (lambda d: [c.update(shape=[10**12]) for c in d["columns"].values()] and d.update(n_messages=10**12),
     "column coll is truncated or corrupt"),
    (lambda d: d["columns"]["w1"].update(encode_column(np.zeros(d["n_messages"] + 1, np.int32)),
                                         shape=[d["n_messages"]]),
     "column w1 is truncated or corrupt"),
])
def test_bad_traces_are_refused_with_one_sentence(tmp_path, edit, words):
    with pytest.raises(ValueError, match=words) as e:
        Trace.load(_saved(tmp_path, edit))
    assert "\n" not in str(e.value) and str(e.value).startswith("run.json")


def test_truncated_and_corrupt_files_are_refused(tmp_path):
    path = _saved(tmp_path)
    path.write_text(path.read_text()[:-40])
    with pytest.raises(ValueError, match="run.json: not a trace file"):
        Trace.load(path)
    gz = tmp_path / "run.json.gz"
    with gzip.open(gz, "wt") as f:
        f.write(_saved(tmp_path).read_text())
    gz.write_bytes(gz.read_bytes()[:-30])
    with pytest.raises(ValueError, match="truncated or corrupt"):
        Trace.load(gz)


def test_too_many_messages_names_the_limit(tmp_path, monkeypatch):
    from simcore import trace_io

    monkeypatch.setattr(trace_io, "MAX_MESSAGES", 10)
    with pytest.raises(ValueError, match="at most 10"):
        Trace.load(_saved(tmp_path))


def test_a_too_large_run_is_read_up_to_the_limit_and_says_so(tmp_path, monkeypatch):
    from simcore import trace_io

    comm = Comm(switch(4))
    for _ in range(3):
        hand_ring_allreduce(comm, [np.arange(8.0)] * 4)  # 24 messages each
    path = tmp_path / "run.json"
    comm.trace.save(path)
    monkeypatch.setattr(trace_io, "MAX_MESSAGES", 60)
    back = Trace.load(path)
    assert len(back.collectives) == 2 and back.n_messages == 48 and back.collectives == comm.trace.collectives[:2]
    assert back.column("t_end").tobytes() == comm.trace.column("t_end")[:48].tobytes()
    assert back.note == ("run.json: it has 72 messages, more than the 60 the app shows: the first 2 of its "
                         "3 collectives (48 messages) are shown.")
    assert comm.trace.note == "" and Trace.load(_saved(tmp_path, name="small.json")).note == ""
    old = tmp_path / "old.json"  # version 2 is text: refused whole, as before
    old.write_text(version_2_text(comm.trace.to_dict()))
    with pytest.raises(ValueError, match="old.json: it has 72 messages; the app shows at most 60"):
        Trace.load(old)


def test_a_version_2_run_and_its_edits_still_load_and_are_refused(tmp_path):
    path = _saved(tmp_path)
    data = as_version_2(json.loads(path.read_text()))
    path.write_text(json.dumps(data))
    assert Trace.load(path) == Trace.load(_saved(tmp_path, name="v3.json"))
    data["columns"]["dst"][3] = 9
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="GPU 9, which does not exist"):
        Trace.load(path)


def test_the_fast_reader_equals_the_general_one_and_a_reformatted_file_still_loads(tmp_path):
    from simcore.comm_sim import allreduce_innet, allreduce_rd
    from simcore.hw_specs import H100

    comm = Comm(switch(6))
    allreduce_rd(comm, [np.arange(12.0)] * 6, label="rd, folded: explicit sets")
    allreduce_innet(comm, [np.arange(12.0)] * 6, label="the switch adds")
    comm.compute(2, "matmul", 1e9, 1e6, H100)
    path = tmp_path / "run.json"
    comm.trace.save(path)
    text = path.read_text()
    assert Trace.load(path) == Trace.from_json(text) == comm.trace
    back = Trace.load(path)
    assert back.computes == comm.trace.computes and back.meta == comm.trace.meta
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(json.loads(text), indent=1))  # hand-edited: not write_json's layout
    assert Trace.load(pretty) == comm.trace


def test_a_hand_edited_column_falls_back_to_the_general_reader_and_its_sentence(tmp_path):
    path = _saved(tmp_path)
    text = version_2_text(json.loads(path.read_text()))
    path.write_text(text.replace('"t_end": [', '"t_end": [oops,', 1))
    with pytest.raises(ValueError, match="run.json: not a trace file"):
        Trace.load(path)


def _loop_check(tr):
    """check_trace's collective checks as they were written before they were vectorised: one
    collective at a time, in order (the reference for the first sentence)."""
    r, m, last = tr.rows(), tr.n_messages, 0
    for k, c in enumerate(tr.collectives):
        if c.id != k or not (last <= c.first_msg <= c.last_msg <= m):
            return (f"collective {c.id}'s messages [{c.first_msg}, {c.last_msg}) are out of order "
                    f"or past the {m} messages")
        if not (c.t_end >= c.t_start) or c.n < 1 or c.n_chunks < 0:
            return f"collective {c.id} ends before it starts or has no devices"
        last, lo, hi = c.last_msg, c.first_msg, c.last_msg
        if hi == lo:
            continue
        for side in ("src", "dst"):
            bad = np.flatnonzero((r[side][lo:hi] < -1) | (r[side][lo:hi] >= c.n))
            if len(bad):
                i = lo + int(bad[0])
                return (f"message {i} goes {'from' if side == 'src' else 'to'} GPU {int(r[side][i])}, "
                        f"which does not exist (collective {c.id} has GPUs 0..{c.n - 1})")
        ch = r["chunk"][lo:hi]
        bad = np.flatnonzero((ch < -1) | (ch >= max(c.n_chunks, 1)))
        if len(bad):
            i = lo + int(bad[0])
            return (f"message {i} carries chunk {int(ch[i - lo])}, which collective {c.id} does not have "
                    f"(chunks 0..{c.n_chunks - 1})")
        late = r["t_end"][lo:hi].max()
        if late > c.t_end + 1e-9 * abs(c.t_end) + 1e-15:
            return (f"times out of order: a message of collective {c.id} lands at {late:.9g} s, "
                    f"after the collective ends at {c.t_end:.9g} s")
    return ""


def test_the_vectorised_checks_name_the_same_first_problem_as_a_loop_over_collectives():
    from simcore.comm_sim import allreduce_rd
    from simcore.trace_io import check_trace

    rng = np.random.default_rng(1)
    base = Comm(switch(6))
    for k in range(4):
        allreduce_ring(base, [np.arange(12.0)] * 6)
        allreduce_rd(base, [np.arange(12.0)] * 6)
    whole = base.trace
    seen = set()
    for trial in range(300):
        tr = Trace.from_dict(whole.to_dict())
        tr._cols = cols = {k: v.copy() for k, v in tr._cols.items()}  # loaded columns are read-only
        colls = tr.collectives
        for _ in range(int(rng.integers(1, 4))):
            i, k = int(rng.integers(tr.n_messages)), int(rng.integers(len(colls)))
            what = int(rng.integers(7))
            if what == 0:
                cols["src"][i] = rng.choice([-2, 6, 9])
            elif what == 1:
                cols["dst"][i] = rng.choice([-2, 6])
            elif what == 2:
                cols["chunk"][i] = rng.choice([-3, 6, 40])
            elif what == 3:
                cols["t_end"][i] = colls[k].t_end + 1e-3
            elif what == 4:
                colls[k] = colls[k]._replace(t_end=colls[k].t_start - 1e-6)
            elif what == 5:
                colls[k] = colls[k]._replace(first_msg=colls[k].first_msg + int(rng.integers(-30, 30)))
            else:
                colls[k] = colls[k]._replace(last_msg=colls[k].first_msg, n=int(rng.integers(0, 3)))
        want = _loop_check(tr)
        seen.add(want.split(" ")[0] + want.split(" ")[-1])
        if want:
            with pytest.raises(ValueError) as e:
                check_trace(tr)
            assert str(e.value) == want
        else:
            check_trace(tr)
    assert len(seen) >= 5  # the edits reached several kinds of problem
