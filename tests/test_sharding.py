"""shard / unshard, the three collectives on whole arrays, and the four matmul cases."""

import numpy as np
import pytest

from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.sharding import (all_gather, all_reduce, make_comm, matmul_case1, matmul_case2, matmul_case3,
                              matmul_case4, reduce_scatter, shard, unshard)

NS = [1, 2, 3, 4, 5, 6, 8, 16]


def _x(n, ndim, seed=0):
    rng = np.random.default_rng(seed)
    shape = [n * s for s in (2, 1, 3)[:ndim]]
    return rng.standard_normal(shape)


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_shard_unshard_all_gather(n, ndim):
    x = _x(n, ndim)
    for axis in range(ndim):
        shards = shard(x, axis, n)
        assert len(shards) == n
        assert all(s.shape[axis] == x.shape[axis] // n for s in shards)
        np.testing.assert_array_equal(unshard(shards, axis), x)
        comm = make_comm(n)
        for full in all_gather(comm, shards, axis):
            np.testing.assert_array_equal(full, x)
        assert len(comm.trace.messages) == n * (n - 1)


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_reduce_scatter_gives_shard_d_of_the_sum(n, ndim):
    rng = np.random.default_rng(n)
    shape = _x(n, ndim).shape
    parts = [rng.standard_normal(shape) for _ in range(n)]
    total = np.sum(parts, axis=0)
    for axis in range(ndim):
        out = reduce_scatter(make_comm(n), parts, axis)
        want = shard(total, axis, n)
        for d in range(n):
            np.testing.assert_allclose(out[d], want[d], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("algo", list(ALLREDUCE_ALGOS))
def test_all_reduce_any_shape(n, algo):
    rng = np.random.default_rng(n)
    parts = [rng.standard_normal((3, 5, 7)) for _ in range(n)]  # 105 elements: rarely divisible
    out = all_reduce(make_comm(n), parts, algo)
    for o in out:
        assert o.shape == (3, 5, 7)
        np.testing.assert_allclose(o, np.sum(parts, axis=0), rtol=1e-12, atol=1e-12)


def test_indivisible_split_names_axis_and_sizes():
    with pytest.raises(ValueError, match=r"axis 1 has length 6, which is not divisible by 4"):
        shard(np.zeros((4, 6)), 1, 4)
    with pytest.raises(ValueError, match=r"axis 0 has length 6, which is not divisible by 4"):
        reduce_scatter(make_comm(4), [np.zeros((6, 2))] * 4, 0)
    with pytest.raises(ValueError, match="whole number"):
        shard(np.zeros(4), 0, 0)
    with pytest.raises(ValueError, match="axis 2 does not exist"):
        shard(np.zeros((4, 4)), 2, 2)
    with pytest.raises(ValueError, match="unknown all-reduce"):
        all_reduce(make_comm(2), [np.zeros(2)] * 2, "magic")
    with pytest.raises(ValueError, match="same shape"):
        all_reduce(make_comm(2), [np.zeros(2), np.zeros(3)])


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_four_matmul_cases(n):
    rng = np.random.default_rng(7)
    A = rng.standard_normal((8, 16))
    B = rng.standard_normal((16, 24))
    C = A @ B
    comm = make_comm(n)
    np.testing.assert_allclose(unshard(matmul_case1(shard(A, 0, n), B), 0), C, rtol=1e-12)
    for c in matmul_case2(comm, shard(A, 1, n), B):
        np.testing.assert_allclose(c, C, rtol=1e-12)
    for algo in ALLREDUCE_ALGOS:
        for c in matmul_case3(comm, shard(A, 1, n), shard(B, 0, n), algo=algo):
            np.testing.assert_allclose(c, C, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(unshard(matmul_case3(comm, shard(A, 1, n), shard(B, 0, n), scatter_axis=1), 1),
                               C, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(unshard(matmul_case4(comm, shard(A, 0, n), shard(B, 1, n)), 0), C, rtol=1e-12)
    # case 1 moves nothing; the others record the collective they need
    labels = [c.label for c in comm.trace.collectives]
    assert labels[0] == "gather A" and labels[-1] == "gather B"
