"""simcore.check: results against numpy, messages against what the op needs, time against the closed form."""

import numpy as np
import pytest

import simcore
from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.comm_sim import Comm, allgather_ring, reduce_scatter_ring, switch
from simcore.trace import Trace
from test_own_collective import hand_ring_allreduce


def _xs(n, L=None):
    return [np.arange(float(L or 2 * n)) + 10 * d for d in range(n)]


@pytest.mark.parametrize("algo", list(ALLREDUCE_ALGOS))
def test_every_builtin_allreduce_passes_and_meets_its_closed_form(algo):
    n = 4
    comm = Comm(switch(n))
    out = ALLREDUCE_ALGOS[algo].fn(comm, _xs(n))
    rep = simcore.check(comm, _xs(n), out, "all-reduce")
    assert rep.ok and rep.first_error is None, str(rep)
    assert rep.t_model == pytest.approx(rep.time, rel=1e-9)
    assert "equals the" in str(rep)


def test_builtin_allgather_and_reduce_scatter_pass():
    n = 4
    comm = Comm(switch(n))
    shards = [np.full(3, float(d)) for d in range(n)]
    out = allgather_ring(comm, shards, list(range(n)))
    assert simcore.check(comm, shards, out, "all-gather").ok
    comm = Comm(switch(n))
    pieces, owner = reduce_scatter_ring(comm, _xs(n))
    rep = simcore.check(comm, _xs(n), pieces, "reduce-scatter", owner=owner)
    assert rep.ok, str(rep)


def broken_ring_allreduce(comm, xs):
    """The all-gather phase forwards chunk d−k instead of d+1−k: it copies unreduced partials."""
    n = comm.n
    bufs = [x.copy().reshape(n, -1) for x in xs]
    cb = xs[0].nbytes / n
    with comm.collective("all-reduce", algo="my-ring", nbytes=xs[0].nbytes) as c:
        got = list(c.ready)
        for k in range(n - 1):
            sent = [(d, (d - k) % n, bufs[d][(d - k) % n].copy()) for d in range(n)]
            t = [c.send(d, (d + 1) % n, cb, got[d], step=k, chunk=ch, reduce=True) for d, ch, _ in sent]
            for d, ch, v in sent:
                bufs[(d + 1) % n][ch] += v
            got = [max(got[d], t[(d - 1) % n]) for d in range(n)]
        for k in range(n - 1):
            sent = [(d, (d - k) % n, bufs[d][(d - k) % n].copy()) for d in range(n)]
            t = [c.send(d, (d + 1) % n, cb, got[d], step=n - 1 + k, chunk=ch) for d, ch, _ in sent]
            for d, ch, v in sent:
                bufs[(d + 1) % n][ch] = v
            got = [t[(d - 1) % n] for d in range(n)]
    return [b.ravel() for b in bufs]


def test_a_broken_ring_is_named_at_its_first_wrong_step():
    n = 4
    comm = Comm(switch(n))
    out = broken_ring_allreduce(comm, _xs(n))
    rep = simcore.check(comm, _xs(n), out, "all-reduce")
    assert not rep.ok and not rep.values_ok
    # the all-gather phase's first step (the app's "Step 4 of 6", the engine's step 3) copies GPU 0's
    # unreduced chunk 0 over the sum GPU 1 already holds: that message is the mistake
    assert rep.first_error == ("in step 4, GPU 0 sends chunk 0 to GPU 1, which already holds that data in a larger "
                               "sum (GPUs {0, 1}): the copy replaces that sum with GPU 0's data")
    assert any(e.startswith("after step 4, GPU 1's chunk 0 holds only GPU 0's data") and
               "all-reduce needs GPUs {0, 1, 2, 3}" in e for e in rep.errors)
    assert "lower bound" in str(rep)  # my-ring is not registered: the bound, not a closed form
    # the same verdict from the saved trace (the app's formula panel reads it)
    back = Trace.from_json(comm.trace.to_json())
    assert simcore.check(back, op="all-reduce").first_error == rep.first_error


def test_partial_sum_a_double_add_and_a_missing_chunk_are_named():
    comm = Comm(switch(3))
    with comm.collective("all-reduce", n_chunks=1, nbytes=8) as c:
        c.send(0, 2, 8, 0.0, step=0, chunk=0, reduce=True)
        c.send(0, 1, 8, 0.0, step=0, chunk=0, reduce=True)
        c.send(1, 2, 8, 1.0, step=1, chunk=0, reduce=True)  # {0, 1} into {0, 2}: GPU 0 twice
    rep = simcore.check(comm, op="all-reduce")
    assert rep.first_error == ("after step 1, GPU 1's chunk 0 sums GPUs {0, 1} (last sent to it by GPU 0); "
                               "all-reduce needs GPUs {0, 1, 2}")
    assert "in step 2, GPU 2 adds GPU 0's data to its chunk 0 a second time" in rep.errors
    assert "GPU 0 never receives chunk 0, which all-reduce needs there (it needs the sum of GPUs {0, 1, 2})" \
        in rep.errors


def test_a_message_sent_before_the_sender_holds_its_data():
    comm = Comm(switch(3))
    with comm.collective("all-gather", nbytes=24) as c:
        t = c.send(0, 1, 8, 0.0, step=0, chunk=0)
        c.send(1, 2, 8, 0.0, step=1, chunk=0)  # ready=0: before chunk 0 lands on GPU 1 at t
    rep = simcore.check(comm, op="all-gather")
    assert rep.first_error.startswith("in step 2, GPU 1 sends chunk 0 to GPU 2 at 0.000 µs, before it holds")
    assert f"{t * 1e6:.3f} µs" in rep.first_error
    assert any("GPU 0 never receives chunk 1" in e for e in rep.errors)


def test_right_messages_wrong_data_is_said():
    n = 4
    comm = Comm(switch(n))
    out = hand_ring_allreduce(comm, _xs(n))
    out[2] = out[2] + 1
    rep = simcore.check(comm, _xs(n), out, "all-reduce")
    assert not rep.ok and rep.first_error.startswith("GPU 2's result differs from numpy's all-reduce")
    assert "not what the messages say" in rep.first_error


def test_no_such_collective():
    rep = simcore.check(Trace(), op="all-reduce")
    assert not rep.ok and rep.first_error == "the trace has no all-reduce to check"


def broken_reports() -> list:
    """Reports with every kind of finding the checker makes (for the app's wording of them)."""
    reps = []
    comm = Comm(switch(3))
    with comm.collective("all-reduce", n_chunks=1, nbytes=8) as c:
        c.send(0, 2, 8, 0.0, step=0, chunk=0, reduce=True)
        c.send(0, 1, 8, 0.0, step=0, chunk=0, reduce=True)
        c.send(1, 2, 8, 1.0, step=1, chunk=0, reduce=True)
    reps.append(simcore.check(comm, op="all-reduce"))  # wrong, twice, never
    comm = Comm(switch(3))
    with comm.collective("all-gather", nbytes=24) as c:
        c.send(0, 1, 8, 0.0, step=0, chunk=0)
        c.send(1, 2, 8, 0.0, step=1, chunk=0)
    reps.append(simcore.check(comm, op="all-gather"))  # too-early, never (all-gather)
    comm = Comm(switch(4))
    out = hand_ring_allreduce(comm, _xs(4))
    out[2] = out[2] + 1
    reps.append(simcore.check(comm, _xs(4), out, "all-reduce"))  # values, right messages
    reps.append(simcore.check(comm, _xs(4), out[:3], "all-reduce"))  # count
    reps.append(simcore.check(Trace(), op="all-reduce"))  # no-collective
    return reps


def test_findings_are_data_beside_the_sentences():
    reps = broken_reports()
    for rep in reps:
        assert [f.text for f in rep.findings] == rep.errors and rep.first_error == str(rep.findings[0])
    kinds = {f.kind for rep in reps for f in rep.findings}
    assert kinds >= {"wrong", "twice", "never", "too-early", "values", "count", "no-collective"}
    wrong = reps[0].findings[0]
    assert (wrong.kind, wrong.step, wrong.device, wrong.chunk, wrong.src) == ("wrong", 1, 1, 0, 0)
    assert wrong.have == {0, 1} and wrong.need == {0, 1, 2} and wrong.op == "all-reduce"
    early = reps[1].findings[0]
    assert (early.kind, early.device, early.dst, early.t) == ("too-early", 1, 2, 0.0) and early.lands > 0
    values = reps[2].findings[0]
    assert values.kind == "values" and values.device == 2 and values.messages_ok and values.got == values.want + 1


def test_steps_count_from_one_as_the_app_shows_them():
    """A finding's step is the app's "Step k of K": the message's (engine) step + 1, in the data and the words."""
    comm = Comm(switch(3))
    with comm.collective("all-gather", nbytes=24) as c:
        t = c.send(0, 1, 8, 0.0, step=0, chunk=0)
        c.send(1, 2, 8, t, step=1, chunk=0)
        c.send(2, 0, 8, 0.0, step=2, chunk=1)  # GPU 2 does not hold chunk 1: the last of 3 steps
    rep = simcore.check(comm, op="all-gather")
    f = rep.findings[0]
    assert (f.kind, f.step, f.device) == ("not-held", 3, 2) and comm.trace.messages[2].step == 2
    assert rep.first_error == "in step 3, GPU 2 sends chunk 1 to GPU 0 but does not hold it"
    assert comm.trace.collectives[0].n_steps == 3  # the app's "Step 3 of 3"


def resending_allgather(comm, shards):
    """A ring all-gather whose step 2 forwards the chunk each GPU received first instead of the
    one it received last: the receiver already holds it, and chunk d+2 never goes round."""
    n = comm.n
    with comm.collective("all-gather", algo="my-ag", nbytes=sum(s.nbytes for s in shards)) as c:
        got = list(c.ready)
        for k in range(n - 1):
            ch = [(d - k) % n if k != 1 else d for d in range(n)]
            t = [c.send(d, (d + 1) % n, shards[0].nbytes, got[d], step=k, chunk=ch[d]) for d in range(n)]
            got = [t[(d - 1) % n] for d in range(n)]


def test_a_chunk_resent_to_a_gpu_that_holds_it_is_named_at_that_step():
    n = 4
    comm = Comm(switch(n))
    resending_allgather(comm, [np.full(2, float(d)) for d in range(n)])
    rep = simcore.check(comm, op="all-gather")
    # before: "GPU 0 never receives chunk 2 …", the symptom after the last step
    assert rep.first_error == "in step 2, GPU 0 sends chunk 0 to GPU 1, which already holds it (GPU 0's data)"
    f = rep.findings[0]
    assert (f.kind, f.step, f.device, f.dst, f.chunk, f.have, f.sent) == ("resent", 2, 0, 1, 0, {0}, {0})
    assert any(e.startswith("GPU 1 never receives chunk 3") for e in rep.errors)  # the symptom comes after


def _every_finding():
    """Every kind of finding with every shape of set it can name: none, one device, a few, many (ranges)."""
    from simcore.checker import finding

    sets = [(), (3,), (0, 2), tuple(range(4)), tuple(range(12)) + (40,)]
    ops = ("all-reduce", "all-gather", "reduce-scatter")
    out = [finding("no-collective", op) for op in ops + ("",)]
    for op in ops:
        base = dict(step=2, device=1, chunk=3, dst=2, src=0)
        out += [finding("not-held", op, **base), finding("too-early", op, **base, t=1e-6, lands=2e-6)]
        for a in sets:
            out += [finding("never", op, device=1, chunk=3, need=a), finding("twice", op, **base, have=a)]
            for b in sets:
                out.append(finding("wrong", op, **base, have=a, need=b))
                out.append(finding("resent", op, **base, have=a, sent=b))
        out += [finding("values", op, device=1, element=4, got=1.5, want=2.0, messages_ok=ok) for ok in (False, True)]
        out += [finding("count", op, got=3.0, want=4.0, outputs=3), finding("count", op, device=1, got=3.0, want=4.0)]
    return out


def test_the_checker_sentences_have_no_artefacts():
    """Every sentence the checker can make reads as English: before, an empty set gave "holds only no
    GPU's data's data"."""
    import re

    texts = [f.text for f in _every_finding()]
    assert len(texts) > 150
    for text in texts:
        for bad in ("'s data's", "no GPU's data's", "GPUs no", "GPU's data's", "  ", " ,", "..", "{}", "GPUs {}",
                    "None", "nan", "the sum of no GPU", "the sum of GPU ", "()"):
            assert bad not in text, (bad, text)
        assert not re.search(r"\b(\w+) \1\b", text), text  # a doubled word ("the the")
        assert text == text.strip() and (text[0].islower() or text.startswith("GPU")), text
        assert text.count("(") == text.count(")") and text.count("{") == text.count("}"), text
