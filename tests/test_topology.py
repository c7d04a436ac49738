"""
Topologies: switch, nodes (NVSwitch inside, one InfiniBand NIC per GPU between) and torus.

References are written here, not read from simcore:
  - the port model as a max-plus recurrence (a ring step of device d starts when the chunk from
    d − 1 has landed and d's previous message has left its port);
  - its limits: with α = 0 the slowest hop's bandwidth governs every ring step, K·(S/n)/β_inter;
  - recursive doubling on nodes: log2(q) rounds inside a node and log2(m) across (Thakur,
    Rabenseifner & Gropp 2005, with each round on its own link);
  - rings on a 1-D torus are rings: the switch's closed forms (tests/closed_forms.py).
"""

import math

import numpy as np
import pytest

from simcore.algorithms import ALGORITHMS, t_formula_on
from simcore.comm_sim import Comm
from simcore.links import IB_NDR400, LINKS, NVLINK4, PCIE4, TPU_V4_ICI, LinkSpec
from simcore.topology import nodes, switch, torus
from simcore.trace import SWITCH

from closed_forms import reference_time


def _arrays(n, per_dev=3, seed=0):
    rng = np.random.default_rng(seed + n)
    return [rng.standard_normal(per_dev * n) for _ in range(n)]


def _run(topo, op, algo, byte_scale=1.0, per_dev=3):
    """Run one collective; return (comm, S, outputs, arrays)."""
    n = topo.n
    arrays = _arrays(n, per_dev)
    comm = Comm(topo, byte_scale=byte_scale)
    fn = ALGORITHMS[op][algo].fn
    if op == "all-gather":
        out = fn(comm, [a[:per_dev] for a in arrays], {d: d for d in range(n)})
        return comm, per_dev * n * 8 * byte_scale, out, arrays
    return comm, arrays[0].nbytes * byte_scale, fn(comm, arrays), arrays


def ring_reference(n_nodes, per_node, intra, inter, S, steps):
    """The ring's finish time from the port model's recurrence, hop by hop (hop d: d -> d+1)."""
    n = n_nodes * per_node
    s = S / n
    link = [inter if (d + 1) % per_node == 0 and n_nodes > 1 else intra for d in range(n)]
    cross = np.array([lk.alpha + s / lk.bw for lk in link])  # chunk crosses hop d
    busy = np.array([s / lk.bw for lk in link])  # hop d's ports are busy
    t = cross.copy()  # step 0: every device sends its own chunk at time 0
    for _ in range(steps - 1):
        t = np.maximum(np.roll(t, 1) + cross, t + busy)
    return float(t.max())


# ---------------------------------------------------------------------------------------
# Links
# ---------------------------------------------------------------------------------------
def test_ib_ndr400_preset():
    assert LINKS["ib-ndr400"] is IB_NDR400
    assert IB_NDR400.bw == 50e9  # 400 Gb/s NDR per direction
    assert IB_NDR400.alpha == pytest.approx(4.0e-6)  # NCCL tuning.cc hwLatencies[NET][RING] LL128
    assert IB_NDR400.alpha > NVLINK4.alpha and IB_NDR400.bw < NVLINK4.bw


# ---------------------------------------------------------------------------------------
# nodes
# ---------------------------------------------------------------------------------------
def test_nodes_route_uses_the_nic_between_nodes():
    topo = nodes(2, 4)
    assert topo.n == 8 and topo.link is NVLINK4 and topo.n_ports == 16
    assert topo.route(1, 2) == (1, 2, NVLINK4)  # same node: the NVLink ports
    assert topo.route(3, 4) == (8 + 3, 8 + 4, IB_NDR400)  # across: each GPU's own NIC
    assert topo.route(5, SWITCH) == (13, None, IB_NDR400)  # SHARP in the fabric
    assert nodes(1, 4).route(2, SWITCH) == (2, None, NVLINK4)  # NVLS in the node switch


def test_a_message_between_nodes_takes_the_inter_link():
    comm = Comm(nodes(2, 2))
    out = ALGORITHMS["all-reduce"]["ring"].fn(comm, _arrays(4, per_dev=4))
    np.testing.assert_allclose(out[0], np.sum(_arrays(4, per_dev=4), axis=0), rtol=1e-12)
    for m in comm.trace.messages:
        link = IB_NDR400 if m.src // 2 != m.dst // 2 else NVLINK4
        assert m.t_end - m.t_start == pytest.approx(link.alpha + m.nbytes / link.bw)


@pytest.mark.parametrize("m,q", [(2, 2), (2, 8), (3, 4), (4, 2), (2, 3), (8, 8)])
@pytest.mark.parametrize("op", ["all-reduce", "all-gather", "reduce-scatter"])
@pytest.mark.parametrize("byte_scale", [1.0, 1e5, 1e8])
def test_ring_on_nodes_equals_its_closed_form(m, q, op, byte_scale):
    topo = nodes(m, q)
    comm, S, _out, _a = _run(topo, op, "ring", byte_scale)
    n = topo.n
    steps = 2 * (n - 1) if op == "all-reduce" else n - 1
    want = ring_reference(m, q, NVLINK4, IB_NDR400, S, steps)
    assert comm.time == pytest.approx(want, rel=1e-9, abs=0.0)
    assert t_formula_on(topo, "ring", S, op=op) == pytest.approx(want, rel=1e-9, abs=0.0)


@pytest.mark.parametrize("m,q", [(2, 8), (4, 4), (3, 2)])
def test_ring_on_nodes_limits(m, q):
    """α = 0: every step waits for the slowest hop; S = 0: α of every hop a chunk crosses."""
    n = m * q
    fast, slow = LinkSpec("fast", 0.0, 400e9), LinkSpec("slow", 0.0, 50e9)
    S = 1e9
    assert t_formula_on(nodes(m, q, fast, slow), "ring", S) == pytest.approx(2 * (n - 1) * S / n / slow.bw)
    a_in, a_out = LinkSpec("a", 2e-6, 1e30), LinkSpec("b", 9e-6, 1e30)
    K = 2 * (n - 1)
    inter_hops = math.ceil(K / q)  # a chunk's 2(n−1) hops cross a node boundary every q hops
    want = inter_hops * a_out.alpha + (K - inter_hops) * a_in.alpha
    assert t_formula_on(nodes(m, q, a_in, a_out), "ring", 1.0) == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("m,q", [(2, 2), (2, 8), (4, 4), (8, 2)])
def test_recursive_doubling_on_nodes(m, q):
    topo = nodes(m, q)
    comm, S, out, arrays = _run(topo, "all-reduce", "rd", 1e4)
    want = (math.log2(q) * (NVLINK4.alpha + S / NVLINK4.bw)
            + math.log2(m) * (IB_NDR400.alpha + S / IB_NDR400.bw))
    assert comm.time == pytest.approx(want, rel=1e-9)
    assert t_formula_on(topo, "rd", S) == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("m,q", [(2, 4), (3, 3)])
def test_in_network_across_nodes_goes_through_the_fabric(m, q):
    topo = nodes(m, q)
    comm, S, _out, _a = _run(topo, "all-reduce", "innet", 1e4)
    want = reference_time("all-reduce", "innet", topo.n, S, IB_NDR400.alpha, IB_NDR400.bw)
    assert comm.time == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("op,algo", [(op, a) for op, reg in ALGORITHMS.items() for a in reg if "switch" in reg[a].topologies])
def test_every_collective_runs_on_nodes(op, algo):
    topo = nodes(2, 4)
    comm, S, out, arrays = _run(topo, op, algo, 1e6)
    n = topo.n
    if op == "all-reduce":
        for o in out:
            np.testing.assert_allclose(o, np.sum(arrays, axis=0), rtol=1e-12, atol=1e-12)
    # slower than on one switch of the fast link, faster than on one switch of the slow link
    fast = reference_time(op, algo, n, S, NVLINK4.alpha, NVLINK4.bw)
    slow = reference_time(op, algo, n, S, IB_NDR400.alpha, IB_NDR400.bw)
    assert fast < comm.time <= slow * (1 + 1e-9)


def test_one_node_and_one_gpu_per_node_are_switches():
    for op, reg in ALGORITHMS.items():
        for algo in (a for a in reg if "switch" in reg[a].topologies):  # the one-switch algorithms
            _c, S, _o, _a = _run(nodes(1, 6), op, algo, 1e3)
            assert _c.time == pytest.approx(reference_time(op, algo, 6, S, NVLINK4.alpha, NVLINK4.bw), rel=1e-9)
            _c, S, _o, _a = _run(nodes(5, 1), op, algo, 1e3)
            assert _c.time == pytest.approx(reference_time(op, algo, 5, S, IB_NDR400.alpha, IB_NDR400.bw), rel=1e-9)


def test_no_closed_form_is_said_so():
    with pytest.raises(ValueError, match=r"no closed form .* nodes\(2 × 4"):
        t_formula_on(nodes(2, 4), "two-shot", 1e6)
    with pytest.raises(ValueError, match="inter-node link is no faster"):
        t_formula_on(nodes(2, 4, intra=PCIE4, inter=IB_NDR400), "ring", 1e6)


@pytest.mark.parametrize("args", [(0, 8), (2, 0), (2.5, 4), (True, 4), (1000, 8)])
def test_nodes_rejects_bad_sizes(args):
    with pytest.raises(ValueError, match="nodes|devices"):
        nodes(*args)


# ---------------------------------------------------------------------------------------
# torus
# ---------------------------------------------------------------------------------------
def test_torus_neighbours_and_ports():
    t = torus((4, 4))
    assert t.n == 16 and t.n_ports == 16 * 4
    assert t.coords(5) == (1, 1)
    assert {t.neighbour(0, 0, 1), t.neighbour(0, 0, -1), t.neighbour(0, 1, 1), t.neighbour(0, 1, -1)} == {4, 12, 1, 3}
    # each link its own port pair: d's +1 link on axis 1 enters the neighbour's −1 side
    assert t.route(0, 1) == (0 * 4 + 2, 1 * 4 + 3, TPU_V4_ICI)
    assert t.route(1, 0) == (1 * 4 + 3, 0 * 4 + 2, TPU_V4_ICI)
    assert t.route(0, 12) == (0 * 4 + 1, 12 * 4 + 0, TPU_V4_ICI)  # wraparound on axis 0
    with pytest.raises(ValueError, match=r"torus\(4×4.*not its torus neighbour"):
        t.route(0, 5)


@pytest.mark.parametrize("op", ["all-reduce", "all-gather", "reduce-scatter"])
@pytest.mark.parametrize("n", [2, 3, 5, 8, 16])
def test_rings_on_a_one_axis_torus_are_rings(op, n):
    comm, S, _out, _a = _run(torus(n), op, "ring", 1e5)
    want = reference_time(op, "ring", n, S, TPU_V4_ICI.alpha, TPU_V4_ICI.bw)
    assert comm.time == pytest.approx(want, rel=1e-9)
    assert t_formula_on(torus(n), "ring", S, op=op) == pytest.approx(want, rel=1e-9)


def test_a_torus_link_pair_carries_both_directions_at_once():
    """On a ring of 3, one-shot sends to d + 1 and d − 1 over two different links: in parallel."""
    comm, S, out, arrays = _run(torus(3), "all-reduce", "direct", 1e5)
    for o in out:
        np.testing.assert_allclose(o, np.sum(arrays, axis=0), rtol=1e-12)
    assert comm.time == pytest.approx(TPU_V4_ICI.alpha + S / TPU_V4_ICI.bw, rel=1e-9)


@pytest.mark.parametrize("shape,algo", [((8,), "rd"), ((4, 4), "ring"), ((4, 4), "direct"), ((4, 4, 4), "two-shot"),
                                        ((4, 4), "innet")])
def test_an_algorithm_for_a_switch_on_a_torus_raises_and_leaves_the_comm_as_it_was(shape, algo):
    topo = torus(shape)
    comm = Comm(topo)
    name = "×".join(map(str, shape))
    with pytest.raises(ValueError, match=rf"torus\({name}"):
        ALGORITHMS["all-reduce"][algo].fn(comm, _arrays(topo.n))
    assert comm.time == 0.0 and len(comm.trace.messages) == 0 and not comm.trace.collectives


def test_after_a_refused_collective_the_comm_still_works():
    comm = Comm(torus(8))
    with pytest.raises(ValueError, match="not its torus neighbour"):
        ALGORITHMS["all-reduce"]["direct"].fn(comm, _arrays(8))
    ALGORITHMS["all-reduce"]["ring"].fn(comm, _arrays(8))
    S = _arrays(8)[0].nbytes
    assert comm.time == pytest.approx(reference_time("all-reduce", "ring", 8, S, TPU_V4_ICI.alpha, TPU_V4_ICI.bw))
    assert [c.id for c in comm.trace.collectives] == [0]


def test_a_2x2x2_torus_is_a_hypercube_recursive_doubling_fits():
    comm, S, out, arrays = _run(torus((2, 2, 2)), "all-reduce", "rd", 1e4)
    assert comm.time == pytest.approx(3 * (TPU_V4_ICI.alpha + S / TPU_V4_ICI.bw), rel=1e-9)


@pytest.mark.parametrize("shape", [(), (2, 2, 2, 2), (0, 4), (4, -1), (2.5,), "4x4", (64, 128)])
def test_torus_rejects_bad_shapes(shape):
    with pytest.raises(ValueError, match="torus|devices"):
        torus(shape)


def test_switch_route():
    s = switch(4)
    assert s.route(1, 2) == (1, 2, NVLINK4)
    assert s.route(SWITCH, 3) == (None, 3, NVLINK4)
    assert s.route(3, SWITCH) == (3, None, NVLINK4)
