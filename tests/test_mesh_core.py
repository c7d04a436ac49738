"""The mesh: which devices form an axis's groups, and collectives over an axis — every group at
once on one Comm — against plain numpy and the closed forms."""

import math

import numpy as np
import pytest

from simcore.comm_sim import Comm
from simcore.links import IB_NDR400, NVLINK4, TPU_V4_ICI
from simcore.mesh import Mesh, MeshError
from simcore.sharding import all_gather as lecture_all_gather
from simcore.topology import nodes, switch, torus

RNG = np.random.default_rng(7)


def numpy_reference(op, grp, j, g, dim=0, split_dim=0, concat_dim=0):
    """What position j of a group holding arrays grp must end with (independent of the mesh)."""
    if op == "all-gather":
        return np.concatenate(grp, axis=dim)
    if op == "all-reduce":
        return np.sum(grp, axis=0)
    if op == "reduce-scatter":
        return np.split(np.sum(grp, axis=0), g, axis=dim)[j]
    return np.concatenate([np.split(x, g, axis=split_dim)[j] for x in grp], axis=concat_dim)


# -- groups ---------------------------------------------------------------------------------
def test_groups_of_each_axis_are_the_products_of_the_other_sizes_and_disjoint():
    mesh = Mesh((2, 3, 4), ("X", "Y", "Z"))
    for axis, (G, g) in {"X": (12, 2), "Y": (8, 3), "Z": (6, 4), ("X", "Z"): (3, 8), ("Z", "X"): (3, 8)}.items():
        groups = mesh.groups(axis)
        assert (len(groups), len(groups[0])) == (G, g)
        flat = [d for grp in groups for d in grp]
        assert sorted(flat) == list(range(24))  # disjoint, and every device once
    # row-major: along Z neighbours are consecutive ids, along X they are 12 apart
    assert mesh.groups("Z")[0] == (0, 1, 2, 3)
    assert mesh.groups("X")[0] == (0, 12)
    # a tuple axis is major to minor: (X, Z) walks Z fastest, (Z, X) walks X fastest
    assert mesh.groups(("X", "Z"))[0] == (0, 1, 2, 3, 12, 13, 14, 15)
    assert mesh.groups(("Z", "X"))[0] == (0, 12, 1, 13, 2, 14, 3, 15)


def test_on_dgx_nodes_the_inner_axis_stays_in_a_node_and_the_outer_crosses():
    mesh = Mesh((2, 8), ("X", "Y"), machine="dgx-h100")
    P = mesh.topology.per_node
    for grp in mesh.groups("Y"):
        assert len({d // P for d in grp}) == 1
    for grp in mesh.groups("X"):
        assert [d // P for d in grp] == [0, 1]


def test_on_a_torus_each_mesh_axis_is_one_physical_dimension():
    mesh = Mesh((4, 4, 4), ("X", "Y", "Z"), machine="tpu-v4-4x4x4")
    topo = mesh.topology
    for k, axis in enumerate("XYZ"):
        for grp in mesh.groups(axis):
            coords = [topo.coords(d) for d in grp]
            differ = {a for a in range(3) if len({c[a] for c in coords}) > 1}
            assert differ == {k}


def test_an_explicit_device_order_is_used():
    order = [7, 6, 5, 4, 3, 2, 1, 0]
    mesh = Mesh((2, 4), ("X", "Y"), devices=order)
    assert mesh.device((0, 0)) == 7 and mesh.device((1, 3)) == 0
    assert mesh.groups("Y")[0] == (7, 6, 5, 4)


# -- collectives over an axis: values ---------------------------------------------------------
CASES = [(None, (2, 4), ("X", "Y", ("X", "Y"))),
         ("dgx-h100", (2, 8), ("X", "Y", ("X", "Y"))),
         (torus((4, 4), TPU_V4_ICI), (4, 4), ("X", "Y", ("X", "Y"), ("Y", "X")))]


@pytest.mark.parametrize("machine,shape,axes", CASES)
@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter", "all-reduce", "all-to-all"])
def test_every_group_ends_with_its_numpy_result(machine, shape, axes, op):
    names = ("X", "Y")
    for axis in axes:
        mesh = Mesh(shape, names, machine)
        pos = mesh.positions(axis)
        g = pos.shape[1]
        if op == "all-to-all" and isinstance(axis, tuple) and "torus" in mesh.topology.kinds:
            continue  # refused with a sentence (test_bad_input)
        arrays = [RNG.standard_normal((2 * g, 3)) for _ in range(mesh.n)]
        kw = {"dim": 0} if op in ("all-gather", "reduce-scatter") else \
            {"split_dim": 0, "concat_dim": 1} if op == "all-to-all" else {}
        out = mesh.collective(op, axis, arrays, **kw)
        for row in pos:
            grp = [arrays[p] for p in row]
            for j, p in enumerate(row):
                ref = numpy_reference(op, grp, j, g, **kw)
                assert out[p].shape == ref.shape
                np.testing.assert_allclose(out[p], ref, rtol=0, atol=1e-12)


def test_reduce_scatter_along_a_later_dimension():
    mesh = Mesh((2, 4), ("X", "Y"))
    arrays = [RNG.standard_normal((3, 8, 2)) for _ in range(8)]
    out = mesh.collective("reduce-scatter", "Y", arrays, dim=1)
    for row in mesh.positions("Y"):
        total = sum(arrays[p] for p in row)
        for j, p in enumerate(row):
            np.testing.assert_allclose(out[p], total[:, 2 * j:2 * j + 2], atol=1e-12)


def test_ppermute_shifts_along_the_axis_and_leaves_zeros_where_nothing_arrives():
    mesh = Mesh((2, 4), ("X", "Y"))
    arrays = [np.full(3, float(p)) for p in range(8)]
    out = mesh.collective("ppermute", "Y", arrays, perm=[(0, 1), (1, 2), (2, 3)])
    for row in mesh.positions("Y"):
        assert np.all(out[row[0]] == 0)
        for j in (1, 2, 3):
            assert np.all(out[row[j]] == row[j - 1])


# -- times -------------------------------------------------------------------------------------
def test_one_axis_of_a_switch_mesh_is_timed_as_the_lecture_times_it():
    """A 1-axis mesh is the lecture: the same all-gather, the same simulated time."""
    n = 8
    mesh = Mesh((n,), ("X",))
    shards = [RNG.standard_normal((4, 5)) for _ in range(n)]
    out = mesh.collective("all-gather", "X", shards, dim=0)
    comm = Comm(switch(n, NVLINK4))
    ref = lecture_all_gather(comm, shards, axis=0)
    assert all(np.array_equal(a, b) for a, b in zip(out, ref))
    assert mesh.log[-1].time == pytest.approx(comm.time, rel=1e-12)
    assert mesh.log[-1].n_messages == len(comm.trace.messages) == n * (n - 1)


@pytest.mark.parametrize("machine,shape", [(None, (2, 4)), ("dgx-h100", (2, 8)), (torus((4, 4), TPU_V4_ICI), (4, 4)),
                                           ("tpu-v4-4x4x4", (4, 4, 4))])
@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter", "all-reduce"])
def test_simulated_time_equals_the_closed_form_of_one_group(machine, shape, op):
    names = ("X", "Y", "Z")[:len(shape)]
    for axis in names:
        mesh = Mesh(shape, names, machine)
        g = mesh.size(axis)
        arrays = [RNG.standard_normal((4 * g, 64)) for _ in range(mesh.n)]
        mesh.collective(op, axis, arrays)
        rec = mesh.log[-1]
        assert rec.time == pytest.approx(rec.form, rel=1e-9), (axis, rec.algo, rec.form_text)


def test_the_multi_axis_gather_on_a_torus_is_timed_by_its_form_and_beats_one_axis():
    mesh = Mesh((4, 4), ("X", "Y"), torus((4, 4), TPU_V4_ICI))
    arrays = [RNG.standard_normal((256, 256)) for _ in range(mesh.n)]  # V = 8 MiB: bandwidth-bound
    out = mesh.collective("all-gather", ("X", "Y"), arrays)
    rec = mesh.log[-1]
    assert rec.algo == "multi-axis"
    assert rec.time == pytest.approx(rec.form, rel=1e-6)
    V = rec.nbytes
    # the book: V/(W·n_axes) with W both directions of a link
    book = V / (2 * TPU_V4_ICI.bw * 2)
    assert 0.9 < rec.time / book < 1.2
    np.testing.assert_array_equal(out[5], np.concatenate(arrays, axis=0))
    # the same V gathered over one axis (each of 4 devices holds a quarter) takes longer
    one = Mesh((4, 4), ("X", "Y"), torus((4, 4), TPU_V4_ICI))
    one.collective("all-gather", "X", [np.concatenate(arrays[:4])] * 16)
    assert one.log[-1].nbytes == V and one.log[-1].algo == "bidi"
    assert one.log[-1].time > 1.4 * rec.time


def test_all_groups_of_the_node_axis_share_the_nics_and_time_as_the_shared_link_form():
    """2 × 8 H100: an all-reduce over X sends 8 groups' traffic through the NICs at once. Each GPU
    has its own ConnectX-7 (DGX H100 datasheet), so each group's ring holds its own two NIC ports:
    together they take exactly as long as one group alone — the port load is one group per port —
    and that is the IB ring's closed form, far above NVLink's."""
    mesh = Mesh((2, 8), ("X", "Y"), machine="dgx-h100")
    arrays = [RNG.standard_normal(1 << 18) for _ in range(16)]  # 2 MiB each: bandwidth-bound
    out = mesh.collective("all-reduce", "X", arrays)
    together = mesh.log[-1]
    alone_mesh = Mesh((2, 8), ("X", "Y"), machine="dgx-h100")
    alone_mesh.collective("all-reduce", "X", arrays, only_groups=[0])
    alone = alone_mesh.log[-1]
    assert len(together.groups) == 8 and len(alone.groups) == 1
    assert together.n_messages == 8 * alone.n_messages
    assert together.time >= alone.time
    # the ports each group's messages hold: every NIC port carries one group's ring, no more
    tr = mesh.comm.trace
    rows = tr.rows(0)
    topo = mesh.topology
    sp, rp, _, bw = topo.routes(rows["src"], rows["dst"])
    assert np.all(bw == IB_NDR400.bw)  # every message crosses the fabric
    per_port = max(np.bincount(sp).max(), np.bincount(rp).max())
    load = per_port // (2 * (2 - 1))  # messages a port carries per group's ring (2 steps × 1 a step)
    S = arrays[0].nbytes
    plan = mesh.plan("all-reduce", "X", S)  # NCCL's ring through the two nodes, as its model times it
    assert plan.protocol and plan.timed.inter.bw <= IB_NDR400.bw
    link, base = plan.timed.inter, plan.timed.base
    shared_form = base + 2 * (2 - 1) * (link.alpha + load * S / (2 * link.bw))
    assert together.time == pytest.approx(shared_form, rel=1e-9)
    assert together.time == pytest.approx(alone.time, rel=1e-12)
    # over NVLink (Y, a group of 8 in a node) the same bytes take less: the time shows the NICs
    mesh.collective("all-reduce", "Y", arrays)
    assert mesh.log[-1].time < together.time
    for row in mesh.positions("X"):
        np.testing.assert_allclose(out[row[0]], arrays[row[0]] + arrays[row[1]], atol=1e-12)


def test_a_collective_records_every_message_once_on_the_one_clock():
    mesh = Mesh((2, 4), ("X", "Y"))
    arrays = [RNG.standard_normal(8) for _ in range(8)]
    mesh.collective("all-gather", "Y", arrays)
    mesh.collective("all-reduce", "X", arrays)
    a, b = mesh.log
    assert a.n_messages == 2 * 4 * 3 and b.n_messages == 4 * 2 * 2 * 1
    assert b.t_start >= a.t_start and mesh.time == pytest.approx(b.t_end)
    cols = mesh.comm.trace.collectives
    assert [c.op for c in cols] == ["all-gather", "all-reduce"]
    # every message of the Y all-gather stays inside its group
    msgs = mesh.comm.trace.messages
    groups = [set(g) for g in mesh.groups("Y")]
    for m in list(msgs)[:a.n_messages]:
        assert any(m.src in g and m.dst in g for g in groups)


# -- bad input: one sentence each ---------------------------------------------------------------
@pytest.mark.parametrize("build,words", [
    (lambda: Mesh((2, 4), ("X", "X")), "distinct"),
    (lambda: Mesh((2, 4), ("X",)), "2 axes"),
    (lambda: Mesh((3, 4), ("X", "Y"), machine="dgx-h100"), "does not fit DGX H100"),
    (lambda: Mesh((2, 4), ("X", "Y"), machine=switch(16)), "has 16"),
    (lambda: Mesh((2, 8), ("X", "Y"), machine="tpu-v4-4x4x4"), "physical dimension"),
    (lambda: Mesh((2, 4), ("X", "Y"), machine="nope"), "nope"),
    (lambda: Mesh((2, 4), ("X", "Y")).groups("Q"), "no axis 'Q'"),
    (lambda: Mesh((2, 4), ("X", "Y")).collective("all-gather", "X", [np.zeros(2)] * 3), "one array per mesh position"),
    (lambda: Mesh((2, 4), ("X", "Y")).collective("reduce-scatter", "Y", [np.zeros(6)] * 8), "does not split"),
    (lambda: Mesh((2, 4), ("X", "Y")).collective("all-reduce", "Y", [np.zeros(6)] * 8, algo="multi-axis"),
     "cannot run 'multi-axis'"),
    (lambda: Mesh((4, 4), ("X", "Y"), "tpu-v5e-16x16").collective("all-gather", ("X", "Y"), [np.zeros(4)] * 16),
     "no wraparound"),
    (lambda: Mesh((4, 4), ("X", "Y"), "tpu-v5e-16x16").collective("all-to-all", ("X", "Y"), [np.zeros(16)] * 16),
     "no wraparound"),
])
def test_bad_mesh_input_is_one_sentence(build, words):
    with pytest.raises(MeshError) as e:
        build()
    msg = str(e.value)
    assert words in msg and "\n" not in msg and msg.count(". ") == 0


def test_a_failed_collective_leaves_the_comm_as_it_was():
    mesh = Mesh((2, 4), ("X", "Y"))
    with pytest.raises(MeshError):
        mesh.collective("reduce-scatter", "Y", [np.zeros(6)] * 8)
    assert mesh.comm.trace.collectives == [] and len(mesh.comm.trace.messages) == 0 and mesh.log == []
    assert math.isclose(mesh.time, 0.0)


def test_every_message_names_whose_data_it_carries():
    """The trace keeps contributors (per collective, as every collective of the engine: each device
    starts with its own input): a reduce-scatter's partial sum at step k from position j sums
    positions j−k … j of its ring; a gather's message carries its origin's block alone; the gather
    phase of an all-reduce carries the whole group's sum."""
    mesh = Mesh((2, 4), ("X", "Y"))
    arrays = [RNG.standard_normal(8) for _ in range(8)]
    out = mesh.collective("all-reduce", "X", arrays)
    mesh.collective("all-gather", "Y", out)
    mesh.collective("all-reduce", "Y", arrays)
    mesh.collective("all-reduce", "Y", arrays)  # the same rings again: their partial sums' lists are reused
    msgs = list(mesh.comm.trace.messages)
    ar_x, ag_y, ar_y, ar_y2 = mesh.log
    groups_y = mesh.groups("Y")
    for m in msgs[ar_x.n_messages:ar_x.n_messages + ag_y.n_messages]:
        grp = next(g for g in groups_y if m.src in g)
        (o,) = m.contributors  # the block of the device k + 1 places back round the ring
        assert o == grp[(grp.index(m.src) - m.step) % 4]
    first = ar_x.n_messages + ag_y.n_messages
    for m in msgs[first:]:
        grp = next(g for g in groups_y if m.src in g)
        j, k = grp.index(m.src), m.step
        if k < 3:  # reduce-scatter: the arc j−k … j of the ring
            assert m.contributors == {grp[(j - i) % 4] for i in range(k + 1)}
        else:  # the gather of the summed chunks: everyone in the group
            assert m.contributors == set(grp)


def test_a_mesh_run_saves_and_loads_as_any_run(tmp_path):
    from simcore.trace import Trace

    mesh = Mesh((2, 4), ("X", "Y"), machine="dgx-h100")
    arrays = [RNG.standard_normal(16) for _ in range(8)]
    mesh.collective("all-reduce", "Y", arrays, label="AR_Y")
    mesh.collective("reduce-scatter", "X", arrays)
    path = tmp_path / "mesh.json"
    mesh.comm.trace.save(str(path))
    back = Trace.load(str(path))
    a, b = list(mesh.comm.trace.messages), list(back.messages)
    assert len(a) == len(b) == sum(r.n_messages for r in mesh.log)
    assert all(x.contributors == y.contributors and x.t_end == y.t_end and x.src == y.src for x, y in zip(a, b))
    assert [(c.op, c.algo, c.label) for c in back.collectives] == [("all-reduce", "ring over Y", "AR_Y"),
                                                                  ("reduce-scatter", "ring over X", "")]


@pytest.mark.parametrize("axis", [("X", "Y", "Z"), ("Z", "X"), ("Y", "Z")])
@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter", "all-reduce"])
def test_the_books_gather_over_several_torus_axes_is_right_and_timed_by_its_form(axis, op):
    mesh = Mesh((4, 4, 4), ("X", "Y", "Z"), machine="tpu-v4-4x4x4")
    pos = mesh.positions(axis)
    g = pos.shape[1]
    arrays = [RNG.standard_normal((g, 8)) for _ in range(mesh.n)]
    out = mesh.collective(op, axis, arrays)
    rec = mesh.log[-1]
    assert rec.algo == "multi-axis"
    # the form syncs the parts at every phase; a part that runs ahead onto an axis another part
    # still uses queues behind it on those links (the simulation keeps that): within 1 %
    assert rec.time == pytest.approx(rec.form, rel=1e-2)
    for row in pos[:3]:
        grp = [arrays[p] for p in row]
        for j, p in enumerate(row):
            np.testing.assert_allclose(out[p], numpy_reference(op, grp, j, g), atol=1e-12)


@pytest.mark.parametrize("machine,shape,axis", [("dgx-h100", (2, 8), "X"), ("dgx-h100", (2, 8), "Y"),
                                                ("tpu-v4-4x4x4", (4, 4, 4), ("Y", "Z"))])
@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter", "all-reduce"])
def test_timing_by_bytes_alone_sends_the_same_messages_as_real_arrays(machine, shape, axis, op):
    names = ("X", "Y", "Z")[:len(shape)]
    g = Mesh(shape, names, machine).size(axis)
    arrays = [RNG.standard_normal(32 * g) for _ in range(math.prod(shape))]
    real = Mesh(shape, names, machine)
    real.collective(op, axis, arrays)
    S = real.log[-1].nbytes
    bare = Mesh(shape, names, machine)
    assert bare.collective(op, axis, nbytes=S) is None
    a, b = real.log[-1], bare.log[-1]
    assert (b.nbytes, b.n_messages, b.algo) == (a.nbytes, a.n_messages, a.algo)
    assert b.time == pytest.approx(a.time, rel=1e-12)
    ra, rb = real.comm.trace.rows(0), bare.comm.trace.rows(0)
    for col in ("src", "dst", "step", "chunk", "nbytes", "t_end"):
        np.testing.assert_array_equal(ra[col], rb[col])


def test_timing_a_real_models_bytes_needs_no_memory():
    mesh = Mesh((16, 16), ("X", "Y"), machine="tpu-v5e-16x16")
    mesh.collective("all-gather", ("X", "Y"), nbytes=2 * 8192 * 32768)  # a 512 MiB bf16 W_in over 256 chips
    rec = mesh.log[-1]
    assert rec.algo == "multi-axis" and rec.time == pytest.approx(rec.form, rel=1e-2)
    with pytest.raises(MeshError, match="nbytes: a finite number"):
        mesh.collective("all-reduce", "X", nbytes=-1)
    with pytest.raises(MeshError, match="all-to-all needs arrays"):
        mesh.collective("all-to-all", "X", nbytes=1024)


@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter", "all-reduce"])
@pytest.mark.parametrize("elems", [64, 1 << 17])
def test_a_one_axis_mesh_on_a_gpu_machine_is_timed_as_the_lecture_times_its_ring(op, elems):
    """'ring' means one thing: on 8 H100 the mesh's ring takes what the lecture's ring takes on the
    same machine (NCCL's model for its protocol at that size)."""
    from simcore.sharding import all_reduce, make_comm, reduce_scatter

    mesh = Mesh((8,), ("X",), machine="dgx-h100")
    arrays = [RNG.standard_normal(elems) for _ in range(8)]
    comm = make_comm(8, "dgx-h100")
    if op == "all-gather":
        out = mesh.collective(op, "X", arrays)
        ref = lecture_all_gather(comm, arrays, axis=0, algo="ring")
    elif op == "reduce-scatter":
        out = mesh.collective(op, "X", arrays)
        ref = reduce_scatter(comm, arrays, axis=0, algo="ring")
    else:
        out = mesh.collective(op, "X", arrays)
        ref = all_reduce(comm, arrays, algo="ring")
    rec = mesh.log[-1]
    assert rec.protocol in ("LL", "LL128", "Simple")
    assert rec.time == pytest.approx(comm.time, rel=1e-9)
    assert rec.time == pytest.approx(rec.form, rel=1e-9)
    for a, b in zip(out, ref):
        np.testing.assert_allclose(a, b, atol=1e-12)
