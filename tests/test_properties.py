"""
Property tests (hypothesis): sharding, the collectives and the four matmul cases over random
shapes, axes, n, links and byte_scale.

What must hold for every draw:
  - shard / unshard is a round trip; a split that does not divide raises ValueError;
  - all_gather, reduce_scatter and every all-reduce algorithm equal their numpy definitions;
  - the simulated time of one collective on an idle switch equals its closed form (relative 1e-9),
    written in tests/closed_forms.py from the literature, and t_formula says the same;
  - the trace's per-step holdings after the last step are the final state, and the values
    they imply (trace.buffer_values) are what the collective returned;
  - tensor-parallel logits equal the single-device ones (any n in 1, 2, 4, 8, any algorithm).
Engine only: no Qt.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore.algorithms import ALLREDUCE_ALGOS, message_count, t_formula
from simcore.collectives import allgather_ring, reduce_scatter_ring
from simcore.comm_sim import Comm
from simcore.links import LinkSpec
from simcore.topology import switch
from simcore.sharding import (all_gather, all_reduce, make_comm, matmul_case1, matmul_case2, matmul_case3,
                              matmul_case4, reduce_scatter, shard, unshard)
from simcore.trace import buffer_values

from closed_forms import REFERENCE_COUNTS, reference_time

# Fast and reproducible: the whole file runs in a few seconds.
FAST = settings(max_examples=100, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ALGOS = sorted(ALLREDUCE_ALGOS)
ns = st.integers(1, 12)
byte_scales = st.floats(1e-3, 1e6, allow_nan=False, allow_infinity=False)
links = st.builds(LinkSpec, st.just("random link"),
                  st.floats(0.0, 2e-5, allow_nan=False),  # alpha: 0 .. 20 µs
                  st.floats(1e9, 1e12, allow_nan=False))  # bw: 1 GB/s .. 1 TB/s
seeds = st.integers(0, 2**32 - 1)


@st.composite
def divisible_arrays(draw, max_ndim=4):
    """(x, axis, n): an array whose `axis` is divisible by n; axis may be negative."""
    n = draw(ns)
    ndim = draw(st.integers(1, max_ndim))
    axis = draw(st.integers(-ndim, ndim - 1))
    shape = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    shape[axis] *= n
    x = np.random.default_rng(draw(seeds)).standard_normal(shape)
    return x, axis, n


def _rng(seed):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------------------
# Sharding
# ---------------------------------------------------------------------------------------
@FAST
@given(divisible_arrays())
def test_shard_unshard_round_trip(case):
    x, axis, n = case
    shards = shard(x, axis, n)
    assert len(shards) == n
    want = list(x.shape)
    want[axis] //= n
    assert all(s.shape == tuple(want) for s in shards)
    np.testing.assert_array_equal(unshard(shards, axis), x)
    # shard d is the d-th block along the axis: device d really holds "its" rows
    np.testing.assert_array_equal(np.take(x, range(want[axis]), axis=axis), shards[0])


@FAST
@given(st.integers(2, 12), st.integers(1, 3), st.data())
def test_non_divisible_split_raises(n, ndim, data):
    axis = data.draw(st.integers(0, ndim - 1))
    shape = data.draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim))
    shape[axis] = data.draw(st.integers(1, 5 * n).filter(lambda v: v % n != 0))
    x = np.zeros(shape)
    with pytest.raises(ValueError, match="not divisible"):
        shard(x, axis, n)
    with pytest.raises(ValueError, match="not divisible"):
        reduce_scatter(make_comm(n), [x] * n, axis)
    with pytest.raises(ValueError, match="not divisible"):
        reduce_scatter_ring(make_comm(n), [np.zeros(shape[axis])] * n)


# ---------------------------------------------------------------------------------------
# Collectives against numpy, and time against the closed form
# ---------------------------------------------------------------------------------------
def _assert_time(comm, want):
    assert comm.time == pytest.approx(want, rel=1e-9, abs=0.0)
    assert comm.trace.collectives[-1].t_end == pytest.approx(want, rel=1e-9, abs=0.0)


@FAST
@given(divisible_arrays(), byte_scales, links)
def test_all_gather_equals_concatenate_and_formula(case, byte_scale, link):
    x, axis, n = case
    comm = Comm(switch(n, link), byte_scale=byte_scale)
    shards = shard(x, axis, n)
    out = all_gather(comm, shards, axis)
    assert len(out) == n
    for full in out:
        np.testing.assert_array_equal(full, x)
    S = x.nbytes * byte_scale  # nccl-tests' size: the gathered array
    _assert_time(comm, reference_time("all-gather", "ring", n, S, link.alpha, link.bw))
    msgs = comm.trace.messages
    assert len(msgs) == message_count("ring", n, op="all-gather") == (REFERENCE_COUNTS["all-gather", "ring"](n)
                                                                      if n > 1 else 0)
    assert all(m.dst == (m.src + 1) % n for m in msgs)  # ring neighbours only


@FAST
@given(divisible_arrays(), byte_scales, links, seeds)
def test_reduce_scatter_equals_shard_of_sum_and_formula(case, byte_scale, link, seed):
    x, axis, n = case
    rng = _rng(seed)
    parts = [rng.standard_normal(x.shape) for _ in range(n)]
    comm = Comm(switch(n, link), byte_scale=byte_scale)
    out = reduce_scatter(comm, parts, axis)
    want = shard(np.sum(parts, axis=0), axis, n)
    for d in range(n):
        np.testing.assert_allclose(out[d], want[d], rtol=1e-12, atol=1e-12)
    S = x.nbytes * byte_scale  # nccl-tests' size: one input array
    _assert_time(comm, reference_time("reduce-scatter", "ring", n, S, link.alpha, link.bw))
    assert len(comm.trace.messages) == message_count("ring", n, op="reduce-scatter")


@FAST
@given(st.sampled_from(ALGOS), ns, st.lists(st.integers(1, 5), min_size=0, max_size=3), seeds)
def test_all_reduce_any_shape_equals_sum(algo, n, shape, seed):
    rng = _rng(seed)
    parts = [rng.standard_normal(shape) for _ in range(n)]
    out = all_reduce(make_comm(n), parts, algo)
    ref = np.sum(parts, axis=0)
    assert len(out) == n
    for o in out:
        assert o.shape == tuple(shape)
        np.testing.assert_allclose(o, ref, rtol=1e-12, atol=1e-12)


@FAST
@given(st.sampled_from(ALGOS), ns, st.integers(1, 6), byte_scales, links, seeds)
def test_all_reduce_time_equals_formula(algo, n, per_dev, byte_scale, link, seed):
    # chunked algorithms (ring, innet, two-shot) are exact when n divides the length
    rng = _rng(seed)
    arrays = [rng.standard_normal(per_dev * n) for _ in range(n)]
    comm = Comm(switch(n, link), byte_scale=byte_scale)
    out = ALLREDUCE_ALGOS[algo][1](comm, arrays)
    S = arrays[0].nbytes * byte_scale
    want = reference_time("all-reduce", algo, n, S, link.alpha, link.bw)
    _assert_time(comm, want)
    assert t_formula(algo, n, S, link.alpha, link.bw) == pytest.approx(want, rel=1e-12, abs=0.0)
    assert len(comm.trace.messages) == message_count(algo, n) == (REFERENCE_COUNTS["all-reduce", algo](n)
                                                                  if n > 1 else 0)
    for o in out:
        np.testing.assert_allclose(o, np.sum(arrays, axis=0), rtol=1e-12, atol=1e-12)


@FAST
@given(st.sampled_from(ALGOS), st.integers(1, 8), seeds)
def test_same_inputs_same_trace(algo, n, seed):
    arrays = [_rng(seed).standard_normal(3 * n + 1) for _ in range(n)]
    a, b = make_comm(n), make_comm(n)
    ALLREDUCE_ALGOS[algo][1](a, arrays)
    ALLREDUCE_ALGOS[algo][1](b, arrays)
    assert a.trace == b.trace and a.time == b.time


# ---------------------------------------------------------------------------------------
# The four matmul cases
# ---------------------------------------------------------------------------------------
@FAST
@given(ns, st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.sampled_from(ALGOS),
       st.sampled_from([None, 1]), seeds)
def test_four_matmul_cases_equal_numpy(n, i, j, k, algo, scatter_axis, seed):
    rng = _rng(seed)
    I, J, K = i * n, j * n, k * n
    A, B = rng.standard_normal((I, J)), rng.standard_normal((J, K))
    C = A @ B
    comm = make_comm(n)
    tol = dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(unshard(matmul_case1(shard(A, 0, n), B), 0), C, **tol)
    for c in matmul_case2(comm, shard(A, 1, n), B):
        np.testing.assert_allclose(c, C, **tol)
    out3 = matmul_case3(comm, shard(A, 1, n), shard(B, 0, n), scatter_axis=scatter_axis, algo=algo)
    if scatter_axis is None:
        for c in out3:
            np.testing.assert_allclose(c, C, **tol)
    else:
        np.testing.assert_allclose(unshard(out3, 1), C, **tol)
    np.testing.assert_allclose(unshard(matmul_case4(comm, shard(A, 0, n), shard(B, 1, n)), 0), C, **tol)
    # case 1 communicates nothing; 2, 3 and 4 record one collective each
    assert len(comm.trace.collectives) == 3


# ---------------------------------------------------------------------------------------
# The per-step holdings query (what the app draws) agrees with the final result
# ---------------------------------------------------------------------------------------
def _check_steps_consistent(tr, cid):
    """
    The last step is the end state, by step and by time. Where steps do not overlap in time,
    holdings by step and by time agree at every step's end. (They may overlap: recursive
    doubling with n not a power of two lets devices outside the fold start round 1 at once.)
    """
    c = tr.collectives[cid]
    final = tr.holdings(cid)
    assert tr.holdings(cid, t=c.t_end) == final
    if c.n_steps:
        assert tr.holdings(cid, step=c.n_steps - 1) == final
        spans = tr.step_times(cid)
        if all(spans[k][1] <= spans[k + 1][0] for k in range(len(spans) - 1)):
            for k, (_t0, t1) in enumerate(spans):
                assert tr.holdings(cid, t=t1) == tr.holdings(cid, step=k)
    assert tr.holdings(cid, step=-1) == {d: dict(h) for d, h in enumerate(c.initial)}
    return final


@FAST
@given(st.integers(1, 12), st.integers(1, 4), byte_scales, seeds)
def test_all_gather_holdings_match_outputs(n, per_chunk, byte_scale, seed):
    rng = _rng(seed)
    owner = {d: int(c) for d, c in enumerate(rng.permutation(n))}
    chunks = [rng.standard_normal(per_chunk) for _ in range(n)]
    comm = Comm(switch(n), byte_scale=byte_scale)
    out = allgather_ring(comm, chunks, owner)
    L = n * per_chunk
    inputs = np.zeros((n, L))
    for d in range(n):
        inputs[d, owner[d] * per_chunk:(owner[d] + 1) * per_chunk] = chunks[d]
    tr = comm.trace
    final = _check_steps_consistent(tr, 0)
    vals = buffer_values(final, inputs, tr.collectives[0].n_chunks)
    for d in range(n):
        # every chunk arrived, carrying exactly its owner's data
        assert final[d] == {owner[o]: frozenset((o,)) for o in range(n)}
        np.testing.assert_array_equal(vals[d], out[d])


@FAST
@given(st.integers(1, 12), st.integers(1, 4), byte_scales, seeds)
def test_reduce_scatter_holdings_match_outputs(n, per_chunk, byte_scale, seed):
    rng = _rng(seed)
    inputs = rng.standard_normal((n, n * per_chunk))
    comm = Comm(switch(n), byte_scale=byte_scale)
    pieces, owner = reduce_scatter_ring(comm, list(inputs))
    tr = comm.trace
    final = _check_steps_consistent(tr, 0)
    vals = buffer_values(final, inputs, tr.collectives[0].n_chunks)
    everyone = frozenset(range(n))
    for r in range(n):
        c = owner[r]
        assert final[r][c] == everyone
        np.testing.assert_allclose(vals[r, c * per_chunk:(c + 1) * per_chunk], pieces[r], rtol=1e-12, atol=1e-12)


@FAST
@given(st.sampled_from(ALGOS), st.integers(1, 12), st.integers(0, 30), byte_scales, seeds)
def test_all_reduce_holdings_match_outputs(algo, n, extra, byte_scale, seed):
    # any length >= n, divisible or not: chunk bounds follow np.array_split everywhere
    rng = _rng(seed)
    inputs = rng.standard_normal((n, n + extra))
    comm = Comm(switch(n), byte_scale=byte_scale)
    out = ALLREDUCE_ALGOS[algo][1](comm, list(inputs))
    tr = comm.trace
    c = tr.collectives[0]
    final = _check_steps_consistent(tr, 0)
    vals = buffer_values(final, inputs, c.n_chunks)
    everyone = frozenset(range(n))
    for d in range(n):
        assert all(final[d][ch] == everyone for ch in range(c.n_chunks)), final[d]
        np.testing.assert_allclose(vals[d], out[d], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------
# Tensor parallelism: the logits equal the single-device ones for every n, algorithm and input
# ---------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([1, 2, 4, 8]), st.sampled_from(ALGOS), st.integers(1, 2), st.integers(1, 9),
       st.booleans(), seeds)
def test_tp_logits_equal_single_device(n, algo, B, T, mqa, seed):
    tl = pytest.importorskip("simcore.transformer_lab")
    tp = pytest.importorskip("simcore.tensor_parallel")
    cfg = tl.TINY_MQA if mqa else tl.TINY  # G = 1 and G = 4: KV replicated once n > G
    params = tl.init_params(cfg, seed=seed % 1000)
    tokens = _rng(seed).integers(0, cfg.vocab, size=(B, T))
    ref = tl.forward(params, cfg, tokens)
    comm = make_comm(n)
    out = tp.tp_forward(tp.shard_params_tp(params, cfg, n), cfg, tokens, comm, algo=algo)
    assert out.shape == ref.shape == (B, T, cfg.vocab)
    assert np.max(np.abs(out - ref)) < 1e-10
    # two all-reduces per layer and the logits all-gather; on one device they cost no time
    assert len(comm.trace.collectives) == 2 * cfg.n_layers + 1
    assert (comm.time == 0.0) == (n == 1)
