"""The machine collectives built as arrays (simcore.topo_collectives) against the one-message-
at-a-time implementation they replaced (tests/reference_topo_collectives.py, kept as it was):
the same trace message by message — times, src, dst, chunk, step, bytes, phase, reduce and
contributors — and the same result arrays, on several shapes of nodes and tori."""

import numpy as np
import pytest

from simcore import topo_collectives as new
from simcore.comm_sim import Comm
from simcore.links import IB_NDR400, NVLINK4, TPU_V4_ICI
from simcore.topology import nodes, torus
from simcore.topology_presets import TorusSlice

import reference_topo_collectives as ref


def _fields(comm):
    return [(m.step, m.src, m.dst, m.chunk, m.nbytes, m.t_start, m.t_end, m.phase, m.reduce,
             frozenset(m.contributors)) for m in comm.trace.messages]


def _same(topo, fn_name, make, base=0.0, byte_scale=1.0, repeat=1):
    outs, traces = [], []
    for mod in (ref, new):
        comm = Comm(topo, byte_scale=byte_scale)
        comm.base = base
        res = None
        for r in range(repeat):  # a second call starts from the ports and clocks the first left
            res = getattr(mod, fn_name)(comm, *make(comm.n, r))
        outs.append(res)
        traces.append(comm)
    a, b = traces
    fa, fb = _fields(a), _fields(b)
    assert len(fa) == len(fb) > 0
    for i, (x, y) in enumerate(zip(fa, fb)):
        assert x == y, f"message {i}: {x} != {y}"
    assert [c[:10] for c in a.trace.collectives] == [c[:10] for c in b.trace.collectives]
    assert all(x.initial == y.initial for x, y in zip(a.trace.collectives, b.trace.collectives))
    assert a.ready == b.ready and a.time == b.time
    ra = outs[0][0] if isinstance(outs[0], tuple) else outs[0]
    rb = outs[1][0] if isinstance(outs[1], tuple) else outs[1]
    for x, y in zip(ra, rb):
        np.testing.assert_array_equal(x, y)


def _partials(L):
    def make(n, r):
        rng = np.random.default_rng(n * 7 + r)
        return (list(rng.standard_normal((n, L * n))),)
    return make


def _pieces(L):
    def make(n, r):
        rng = np.random.default_rng(n * 5 + r)
        return (list(rng.standard_normal((n, L))),)
    return make


NODES = [(1, 4), (2, 2), (2, 4), (3, 2), (4, 3), (2, 8)]


@pytest.mark.parametrize("N,P", NODES)
def test_hier_and_channel_rings_match_reference(N, P):
    topo = nodes(N, P, NVLINK4, IB_NDR400)
    _same(topo, "allreduce_hier", _partials(P), base=3e-6, byte_scale=1e3, repeat=2)
    _same(topo, "allreduce_ring_nodes", _partials(P))
    _same(topo, "allgather_ring_nodes", _pieces(2 * P))
    _same(topo, "reduce_scatter_ring_nodes", _partials(P), byte_scale=7.0)


def test_uneven_fine_chunks_match_reference():
    # a length that does not split evenly into the fine chunks: the per-chunk bounds path
    topo = nodes(3, 2, NVLINK4, IB_NDR400)
    _same(topo, "allreduce_hier", lambda n, r: (list(np.random.default_rng(r).standard_normal((n, 17))),))
    _same(topo, "allreduce_ring_nodes", lambda n, r: (list(np.random.default_rng(r).standard_normal((n, 29))),))


TORI = [torus((5,), TPU_V4_ICI), torus((4,), TPU_V4_ICI), torus((2,), TPU_V4_ICI), torus((4, 2), TPU_V4_ICI),
        torus((3, 4), TPU_V4_ICI), torus((2, 3, 4), TPU_V4_ICI), torus((4, 4, 4), TPU_V4_ICI),
        TorusSlice((4, 3), TPU_V4_ICI, wrap=(False, True)), TorusSlice((2, 2, 4), TPU_V4_ICI, wrap=(False, False, False))]


@pytest.mark.parametrize("topo", TORI, ids=lambda t: t.name + str(t.wraps()))
def test_torus_collectives_match_reference(topo):
    k = max(1, sum(1 for s in topo.shape if s > 1))
    _same(topo, "allreduce_torus", _partials(2 * k), repeat=2)
    _same(topo, "torus_all_gather", _pieces(4 * k))
    _same(topo, "torus_reduce_scatter", _partials(2 * k), byte_scale=3.0)


@pytest.mark.parametrize("topo", TORI + [nodes(3, 4, NVLINK4, IB_NDR400), nodes(1, 4, NVLINK4, IB_NDR400)],
                         ids=lambda t: t.name)
def test_routes_is_route_for_every_pair(topo):
    from simcore.trace import SWITCH
    ends = list(range(topo.n)) + ([SWITCH] if not hasattr(topo, "shape") else [])
    for s in ends:
        for d in ends:
            if s == d:
                continue
            try:
                one = topo.route(s, d)
            except ValueError:
                with pytest.raises(ValueError):
                    topo.routes(np.array([s]), np.array([d]))
                continue
            sp, rp, a, b = topo.routes(np.array([s]), np.array([d]))
            want = (-1 if one[0] is None else one[0], -1 if one[1] is None else one[1], one[2].alpha, one[2].bw)
            assert (int(sp[0]), int(rp[0]), float(np.broadcast_to(a, 1)[0]), float(np.broadcast_to(b, 1)[0])) == want


@pytest.mark.parametrize("topo", [torus((4,), TPU_V4_ICI), torus((4, 4), TPU_V4_ICI), torus((2, 3, 4), TPU_V4_ICI)],
                         ids=lambda t: t.name)
def test_torus_with_odd_fine_chunks_matches_reference(topo):
    # one element a fine chunk: the halves of the last hop are 0 and 1 element
    k = sum(1 for s in topo.shape if s > 1)
    _same(topo, "allreduce_torus", _partials(k), repeat=2)
    _same(topo, "torus_reduce_scatter", _partials(3 * k))
