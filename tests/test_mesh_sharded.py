"""Sharded arrays: both vocabularies, the book's notation, redistribution by DTensor's rules and
matmul by the book's four cases — values against numpy, and the one-axis cases against the lecture's."""

import numpy as np
import pytest

from simcore.comm_sim import Comm
from simcore.mesh import Mesh, MeshError, P, Partial, Replicate, Shard, ShardedArray, matmul
from simcore.sharding import matmul_case2, matmul_case3, matmul_case4, shard, unshard
from simcore.topology import switch

RNG = np.random.default_rng(3)


@pytest.fixture
def mesh():
    return Mesh((2, 4), ("X", "Y"))


# -- the two vocabularies and the notation ---------------------------------------------------
@pytest.mark.parametrize("spec,placements,text", [
    (P("X", "Y"), [Shard(0), Shard(1)], "A[I_X, J_Y]"),
    (P(None, "X"), [Shard(1), Replicate()], "A[I, J_X]"),
    (P(("X", "Y"), None), [Shard(0), Shard(0)], "A[I_XY, J]"),
    (P(), [Replicate(), Replicate()], "A[I, J]"),
])
def test_a_spec_and_its_placements_name_the_same_array(mesh, spec, placements, text):
    x = RNG.standard_normal((8, 8))
    a = ShardedArray.from_full(mesh, x, spec)
    b = ShardedArray.from_full(mesh, x, placements)
    assert str(a) == str(b) == text
    assert list(a.placements) == placements and b.spec == spec
    assert all(np.array_equal(u, v) for u, v in zip(a.blocks, b.blocks))
    np.testing.assert_array_equal(a.full(), x)


def test_local_blocks_are_the_books_slices(mesh):
    x = np.arange(8 * 16.0).reshape(8, 16)
    a = ShardedArray.from_full(mesh, x, P("X", "Y"))
    np.testing.assert_array_equal(a.local((1, 2)), x[4:8, 8:12])
    np.testing.assert_array_equal(a.local({"X": 0, "Y": 3}), x[0:4, 12:16])
    b = ShardedArray.from_full(mesh, x, P(("X", "Y"), None))  # X major: block x·4 + y
    np.testing.assert_array_equal(b.local((1, 1)), x[5:6])
    c = ShardedArray.from_full(mesh, x, P(("Y", "X"), None))  # Y major: block y·2 + x
    np.testing.assert_array_equal(c.local((1, 1)), x[3:4])
    assert str(c) == "A[I_YX, J]"


def test_a_pending_sum_prints_U_and_sums_to_the_array(mesh):
    x = RNG.standard_normal((8, 4))
    a = ShardedArray.from_full(mesh, x, [Shard(0), Partial("sum")], name="C", dim_names="BD")
    assert str(a) == "C[B_X, D]{U_Y}"
    assert a.placements == (Shard(0), Partial("sum"))
    np.testing.assert_allclose(a.full(), x)
    # only the first device along Y holds it: the terms really are different
    assert np.array_equal(a.local((0, 0)), x[:4]) and not a.local((0, 1)).any()


def test_long_axis_names_are_written_in_braces():
    m = Mesh((2, 4), ("dp", "tp"))
    a = ShardedArray.from_full(m, np.zeros((4, 8)), P("dp", "tp"))
    assert str(a) == "A[I_{dp}, J_{tp}]"


def test_placements_cannot_say_a_dimension_sharded_against_the_mesh_order(mesh):
    a = ShardedArray.from_full(mesh, np.zeros((8, 2)), P(("Y", "X"), None))
    with pytest.raises(MeshError, match="mesh's order"):
        a.placements


def test_uneven_splits_are_refused_unless_padding_is_asked_for(mesh):
    x = RNG.standard_normal((6, 8))
    with pytest.raises(MeshError, match="does not split into 4 equal blocks.*pad=True"):
        ShardedArray.from_full(mesh, x, P("Y", None))
    a = ShardedArray.from_full(mesh, x, P("Y", None), pad=True)
    assert a.local((0, 0)).shape == (2, 8) and a.padded == (8, 8)
    np.testing.assert_array_equal(a.full(), x)
    np.testing.assert_array_equal(a.redistribute(P()).full(), x)


# -- redistribute: DTensor's rules ---------------------------------------------------------------
@pytest.mark.parametrize("src,tgt,ops", [
    (P("X", "Y"), P("X", None), ["all-gather Y"]),
    (P(("X", "Y"), None), P(), ["all-gather XY"]),
    (P(("X", "Y"), None), P("X", None), ["all-gather Y"]),
    (P("X", "Y"), P(("X", "Y"), None), ["all-to-all Y"]),
    (P(None, "Y"), P("Y", None), ["all-to-all Y"]),
    (P("X", None), P("X", "Y"), []),
])
def test_shard_changes_run_the_rule_of_each_axis(mesh, src, tgt, ops):
    x = RNG.standard_normal((8, 16))
    a = ShardedArray.from_full(mesh, x, src)
    n0 = len(mesh.log)
    b = a.redistribute(tgt)
    ran = [f"{r.op} {r.axis_name}" for r in mesh.log[n0:]]
    assert ran == ops
    assert b.layout == ShardedArray.layout_for(mesh, tgt, 2)
    np.testing.assert_allclose(b.full(), x, atol=1e-12)
    for p in range(mesh.n):  # every device holds exactly its block of the target
        np.testing.assert_allclose(b.blocks[p], ShardedArray.from_full(mesh, x, tgt).blocks[p], atol=1e-12)


@pytest.mark.parametrize("tgt,ops", [
    (P("X", None), ["all-reduce Y"]),
    (P("X", "Y"), ["reduce-scatter Y"]),
    (P(("X", "Y"), None), ["reduce-scatter Y"]),
    (P(), ["all-reduce Y", "all-gather X"]),
])
def test_pending_sums_are_reduced_by_all_reduce_or_reduce_scatter(mesh, tgt, ops):
    parts = [RNG.standard_normal((8, 8)) for _ in range(4)]
    blocks = []
    for p in range(8):
        x, y = mesh.coord(p)
        blocks.append(np.split(parts[y], 2, axis=0)[x])
    a = ShardedArray.from_blocks(mesh, blocks, [Shard(0), Partial()], (8, 8))
    assert str(a) == "A[I_X, J]{U_Y}"
    np.testing.assert_allclose(a.full(), sum(parts))
    n0 = len(mesh.log)
    b = a.redistribute(tgt)
    assert [f"{r.op} {r.axis_name}" for r in mesh.log[n0:]] == ops
    assert not b.partial
    np.testing.assert_allclose(b.full(), sum(parts), atol=1e-12)


def test_steps_read_in_the_books_notation(mesh):
    a = ShardedArray.from_full(mesh, np.zeros((8, 8)), [Shard(1), Partial()], dim_names="BF", name="Tmp")
    b = a.redistribute(P(None, ("X", "Y")))
    assert [str(s) for s in b.steps] == ["Tmp[B, F_X]{U_Y} → Tmp[B, F_XY]: reduce-scatter over Y (Partial → Shard(1))"]
    assert b.steps[0].collective is mesh.log[-1]


def test_replicate_to_partial_moves_nothing_and_keeps_the_sum(mesh):
    x = RNG.standard_normal((4, 4))
    a = ShardedArray.from_full(mesh, x, P())
    b = a.redistribute([Replicate(), Partial()])
    assert str(b) == "A[I, J]{U_Y}" and mesh.log == []
    np.testing.assert_allclose(b.full(), x)


@pytest.mark.parametrize("make,tgt,words", [
    (lambda m: ShardedArray.from_full(m, np.zeros((8, 8)), P("X", "Y")), [Shard(0), Partial()], "Shard → Partial"),
    (lambda m: ShardedArray.from_full(m, np.zeros((8, 8)), P()), P("Q"), "no axis 'Q'"),
    (lambda m: ShardedArray.from_full(m, np.zeros((8, 8)), P()), P("X", "Y", None), "has 3 entries"),
    (lambda m: ShardedArray.from_full(m, np.zeros((8, 8)), P()), P("X", "X"), "used twice"),
    (lambda m: ShardedArray.from_full(m, np.zeros((6, 8)), P()), P("Y"), "does not split"),
    (lambda m: ShardedArray.from_full(m, np.zeros((8, 8)), P()), [Shard(0)], "one entry per mesh axis"),
    (lambda m: ShardedArray.from_full(m, np.zeros((8, 8)), P()), [Partial("sum"), Partial("max")],
     "mixed Partial ops"),
])
def test_bad_layouts_are_one_sentence(mesh, make, tgt, words):
    a = make(mesh)
    with pytest.raises(MeshError) as e:
        a.redistribute(tgt)
    assert words in str(e.value) and "\n" not in str(e.value)
    assert mesh.log == []


# -- matmul: the book's cases on any axes ---------------------------------------------------------
@pytest.mark.parametrize("sa,sb,case,out", [
    (P("X", None), P(), 1, "C[I_X, K]"),
    (P(None, "Y"), P(), 2, "C[I, K]"),
    (P(None, "Y"), P("Y", None), 3, "C[I, K]{U_Y}"),
    (P("X", "Y"), P("Y", None), 3, "C[I_X, K]{U_Y}"),
    (P(None, ("X", "Y")), P(("X", "Y"), None), 3, "C[I, K]{U_XY}"),
    (P("X", None), P(None, "X"), 4, None),
    (P("X", "Y"), P("Y", "X"), 4, None),
])
def test_matmul_follows_the_books_cases_on_any_axes(mesh, sa, sb, case, out):
    a, b = RNG.standard_normal((8, 16)), RNG.standard_normal((16, 8))
    A = ShardedArray.from_full(mesh, a, sa, name="A")
    B = ShardedArray.from_full(mesh, b, sb, name="B", dim_names="JK")
    C = matmul(A, B)
    assert C.how.case == case
    if out is not None:
        assert str(C) == out
    # a result never shards two dimensions over one axis
    used = C.layout.axes_used() + list(C.layout.partial)
    assert len(used) == len(set(used))
    np.testing.assert_allclose(C.full(), a @ b, atol=1e-12)
    assert (C.how.seconds > 0) == (case in (2, 4))
    assert C.how.text.startswith(f"{A} · {B} → {C}: case {case}")


def test_a_pending_operand_is_refused(mesh):
    A = ShardedArray.from_full(mesh, np.zeros((8, 8)), [Shard(0), Partial()])
    B = ShardedArray.from_full(mesh, np.zeros((8, 8)), P())
    with pytest.raises(MeshError, match="pending sum"):
        matmul(A, B)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_the_lectures_one_axis_cases_are_the_one_axis_mesh(n):
    """On a 1-axis mesh the cases give the lecture's values and take the lecture's time."""
    a, b = RNG.standard_normal((8, 16)), RNG.standard_normal((16, 8))
    cases = {
        2: ((P(None, "X"), P()), lambda c: matmul_case2(c, shard(a, 1, n), b)),
        3: ((P(None, "X"), P("X", None)), lambda c: matmul_case3(c, shard(a, 1, n), shard(b, 0, n))),
        4: ((P("X", None), P(None, "X")), lambda c: matmul_case4(c, shard(a, 0, n), shard(b, 1, n))),
    }
    for case, ((sa, sb), lecture) in cases.items():
        mesh = Mesh((n,), ("X",))
        A = ShardedArray.from_full(mesh, a, sa, "A")
        B = ShardedArray.from_full(mesh, b, sb, "B", "JK")
        C = matmul(A, B)
        if case == 3:
            C = C.redistribute(P())  # the lecture's case 3 ends with the all-reduce
        comm = Comm(switch(n))
        ref = lecture(comm)
        want = unshard(ref, 0) if case == 4 else ref[0]
        np.testing.assert_allclose(C.full(), want, atol=1e-12)
        np.testing.assert_allclose(C.full(), a @ b, atol=1e-12)
        if case != 4:  # case 4: the lecture gathers B; the mesh gathers the smaller operand
            assert mesh.time == pytest.approx(comm.time, rel=1e-12)


def test_blocks_of_the_wrong_shape_are_refused(mesh):
    with pytest.raises(MeshError, match=r"the block at \(0, 0\) has shape \(3, 8\); a \(8, 8\) array laid out as "
                                        r"A\[I_X, J\] gives each device \(4, 8\)"):
        ShardedArray.from_blocks(mesh, [np.zeros((3, 8))] * 8, P("X"), (8, 8))
