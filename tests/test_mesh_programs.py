"""Per-device programs (shard_map style) and the registered programs: each equal to one device's
numpy result, each collective timed against the book's published form, memory per device, the CLI."""

import json
import math

import numpy as np
import pytest

from simcore.__main__ import main
from simcore.mesh import (Mesh, MeshError, P, all_gather, all_to_all, axis_index, ppermute, psum, psum_scatter)
from simcore.mesh.programs import PROGRAMS, book_W, crossover_2d, run_program
from simcore.transformer_lab import TINY, forward, init_params

RNG = np.random.default_rng(11)


# -- shard_map style --------------------------------------------------------------------------
def test_a_per_device_program_with_psum_equals_numpy():
    mesh = Mesh((2, 4), ("X", "Y"))
    x, w = RNG.standard_normal((8, 16)), RNG.standard_normal((16, 6))

    def f(xb, wb):  # x[B_X, D_Y] · w[D_Y, F]: each device a partial sum over Y
        return psum(xb @ wb, "Y")

    out = mesh.run(f, (P("X", "Y"), P("Y", None)), P("X", None))(x, w)
    assert str(out) == "out[I_X, J]"
    np.testing.assert_allclose(out.full(), x @ w, atol=1e-12)
    assert [(r.op, r.axis) for r in mesh.log] == [("all-reduce", ("Y",))]


def test_every_collective_by_axis_name_inside_a_program():
    mesh = Mesh((2, 4), ("X", "Y"))
    x = RNG.standard_normal((8, 16))

    def f(xb):  # xb: x[I_X, J_Y] block, 4 × 4
        i = axis_index("Y")
        shifted = ppermute(xb, "Y", [(j, (j + 1) % 4) for j in range(4)])
        rows = all_gather(xb, "Y", dim=1)  # x[I_X, J]
        scattered = psum_scatter(rows, "Y", dim=1)  # 4 × the block each holds (every Y device had the same rows)
        moved = all_to_all(xb, "Y", split_dim=0, concat_dim=1)  # x[I_XY, J]
        return shifted, rows, scattered, moved, np.full((1,), float(i))

    shifted, rows, scattered, moved, idx = mesh.run(
        f, P("X", "Y"), (P("X", "Y"), P("X", None), P("X", "Y"), P(("X", "Y"), None), P(("X", "Y"))))(x)
    np.testing.assert_allclose(rows.full(), x, atol=1e-12)
    np.testing.assert_allclose(scattered.full(), 4 * x, atol=1e-12)
    np.testing.assert_allclose(moved.full(), x, atol=1e-12)
    np.testing.assert_array_equal(idx.full(), np.tile(np.arange(4.0), 2))
    for p in range(8):
        xc, yc = mesh.coord(p)
        np.testing.assert_array_equal(shifted.local((xc, yc)), x[4 * xc:4 * xc + 4, 4 * ((yc - 1) % 4):][:, :4])


def test_devices_that_call_different_collectives_stop_with_a_sentence():
    mesh = Mesh((2, 4), ("X", "Y"))

    def f(xb):
        if axis_index("X") == 1:
            return all_gather(xb, "Y")
        return psum(xb, "Y")

    with pytest.raises(MeshError, match=r"device 4 \(mesh coordinate \(1, 0\)\) called all-gather over Y while "
                                        r"device 0 called all-reduce over Y"):
        mesh.run(f, P("X", "Y"), P("X", "Y"))(np.zeros((8, 8)))


def test_collectives_outside_a_program_say_where_they_work():
    with pytest.raises(MeshError, match="only inside"):
        psum(np.zeros(2), "X")


# -- the programs -----------------------------------------------------------------------------
def test_dp_tp_forward_logits_equal_one_devices_and_each_all_reduce_is_the_rings_form():
    res = run_program("dp-tp-forward", {"X": 2, "Y": 4})
    assert res.max_err < 1e-10
    assert [r.op for r in res.rows] == ["all-reduce"] * (2 * TINY.n_layers) + ["all-gather"]
    for r in res.rows:
        assert r.axis == "Y" and r.groups == 2 and r.group_size == 4
        assert r.ratio == pytest.approx(1.0, rel=1e-9)
    # the KV cache each device keeps: its TP share of its DP replica's batch
    kv = res.memory[0]["KV cache"]
    G = TINY.n_kv_heads // 4  # 4-way TP holds G/4 groups
    assert kv == 2 * TINY.n_layers * (4 // 2) * TINY.max_seq * G * TINY.d_head * 8 * 0.25


@pytest.mark.parametrize("shape,machine", [({"X": 2, "Y": 4}, "dgx-h100"), ({"X": 4, "Y": 2}, None),
                                           ({"X": 1, "Y": 8}, None)])
def test_dp_tp_forward_on_other_meshes(shape, machine):
    assert run_program("dp-tp-forward", shape, machine).max_err < 1e-10


def test_fsdp_tp_layer_equals_numpy_and_each_collective_its_share_of_the_books_form():
    res = run_program("fsdp-tp-layer")  # X = 2 nodes of DGX H100, Y = 8 GPUs of a node
    mesh = res.mesh
    assert res.max_err < 1e-10
    assert [(r.op, r.axis) for r in res.rows] == [("all-gather", "Y"), ("all-gather", "X"), ("all-gather", "X"),
                                                  ("reduce-scatter", "Y")]
    B, D, F = 8192, 8192, 32768
    X, Y = 2, 8
    WX, WY = book_W(mesh, "X"), book_W(mesh, "Y")
    assert WX == 50e9 and WY == 450e9  # IB NDR 400 between the nodes, NVLink 4 inside
    assert res.published_total == pytest.approx(4 * D * F / (Y * WX) + 4 * B * D / (X * WY))
    for r, rec in zip(res.rows, mesh.log):
        g = r.group_size
        t = mesh.plan(rec.op, rec.axis, rec.nbytes).timed  # the machine as NCCL's model times the ring
        link = t.inter if r.axis == "X" else t.intra
        assert r.protocol == "Simple" and link.bw <= (50e9 if r.axis == "X" else 450e9)
        # the simulated time is the ring's: (g−1)/g of the bytes at NCCL's ring bandwidth, g−1 hops of α, the base
        ring = t.base + (g - 1) * (link.alpha + r.nbytes / (g * link.bw))
        assert r.simulated == pytest.approx(ring, rel=1e-9)
        bw = 50e9 if r.axis == "X" else 450e9  # the book's W: the line rate
        assert r.ratio == pytest.approx((g - 1) / g * bw / link.bw + ((g - 1) * link.alpha + t.base) / r.published)
    x_opt = math.sqrt(B / F * 1 / 1 * X * Y)
    assert any(f"{x_opt:.2f}" in n for n in res.notes)


def test_2d_weight_stationary_equals_numpy_and_follows_the_books_terms():
    res = run_program("2d-ws-ffn")  # 4 × 4 × 4 TPU v4: X one axis, YZ two
    assert res.max_err < 1e-10
    assert [(r.op, r.axis, r.algo) for r in res.rows] == [("all-gather", "YZ", "multi-axis"),
                                                          ("all-reduce", "X", "bidi"),
                                                          ("reduce-scatter", "YZ", "multi-axis")]
    B, D, F, X, YZ = 2048, 8192, 32768, 4, 16
    W = 2 * 45e9
    assert res.published_total == pytest.approx(2 * B * D / (X * W) + 4 * B * F / (YZ * W))
    ar = res.rows[1]
    assert 0.75 <= ar.ratio <= 0.80  # a bidirectional ring of 4: 3/4 of the book's 2V/W, plus 6 hops of α
    for r in (res.rows[0], res.rows[2]):
        assert 1.0 <= r.ratio <= 1.1  # two phases: the second moves 1/4 of V over the other axis again
    # each term is the book's when the mesh changes: halve F, the all-reduce halves
    half = run_program("2d-ws-ffn", F=16384)
    assert half.rows[1].nbytes == pytest.approx(ar.nbytes / 2)
    assert half.rows[0].simulated == pytest.approx(res.rows[0].simulated)


def test_2d_beats_1d_past_72_chips_when_F_is_4D():
    assert crossover_2d(4) == pytest.approx(72)
    B, D, W = 1, 1, 1
    F = 4 * D
    t1 = 4 * B * D / (3 * W)
    for N, better in ((64, False), (128, True), (256, True)):
        X = math.sqrt(N / 8)
        t2 = 2 * B * D / (X * W) + 4 * B * F / ((N / X) * W)
        assert (t2 < t1) == better


def test_the_books_torus_all_gather_over_more_axes_is_faster():
    res = run_program("torus-all-gather")  # 4 × 4 × 4 TPU v4, V = 64 MiB
    assert res.max_err == 0
    one, two, three = res.rows
    assert (one.algo, two.algo, three.algo) == ("bidi", "multi-axis", "multi-axis")
    assert (one.group_size, two.group_size, three.group_size) == (4, 16, 64)
    assert one.nbytes == two.nbytes == three.nbytes
    assert 0.75 <= one.ratio <= 0.77  # (g−1)/g of V/W, g = 4, and 3 hops of α
    assert 0.9 <= two.ratio <= 1.1 and 0.9 <= three.ratio <= 1.2  # the book: V/(2W), V/(3W)
    assert one.simulated > 1.5 * two.simulated > 1.5 * 1.2 * three.simulated


def test_every_program_leaves_memory_by_tensor_class_for_every_device():
    for name in PROGRAMS:
        res = run_program(name)
        assert len(res.memory) == res.mesh.n
        for row in res.memory:
            assert {"weights", "KV cache", "activations", "buffers in flight"} <= set(row)
    res = run_program("fsdp-tp-layer")
    # W_in[D_X, F_Y] and W_out[F_Y, D_X]: 2·D·F/16 bf16 numbers per device, as the real model
    assert res.memory[3]["weights"] == pytest.approx(2 * 8192 * 32768 / 16 * 2)


def test_bad_program_input_is_one_sentence():
    for call, words in ((lambda: run_program("nope"), "no program 'nope'"),
                        (lambda: run_program("fsdp-tp-layer", {"X": 2, "Y": 8}, None, Q=1), "no parameter 'Q'"),
                        (lambda: run_program("fsdp-tp-layer", {"X": 3, "Y": 8}, None), "does not split"),
                        (lambda: run_program("2d-ws-ffn", {"X": 4}, None), "needs a second mesh axis"),
                        (lambda: run_program("dp-tp-forward", {"X": 2, "Y": 4}, None, batch=3), "batch = 3")):
        with pytest.raises(MeshError) as e:
            call()
        assert words in str(e.value) and "\n" not in str(e.value)


# -- the command line -------------------------------------------------------------------------
def test_the_cli_prints_the_table(capsys):
    assert main(["mesh", "--mesh", "X=2,Y=4", "--program", "dp-tp-forward"]) == 0
    out = capsys.readouterr().out
    assert "dp-tp-forward on mesh X=2 × Y=4 on switch(8" in out
    assert out.count("AR_Y  layer") == 2 * TINY.n_layers and "AG_Y  logits" in out
    assert "max |error| against one device's numpy result" in out


def test_the_cli_json_carries_every_row(capsys):
    assert main(["mesh", "--program", "2d-ws-ffn", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["mesh"] == {"X": 4, "Y": 4, "Z": 4} and len(d["rows"]) == 3
    assert d["max_abs_error"] < 1e-10
    assert all(r["ratio"] == pytest.approx(r["simulated_s"] / r["published_s"]) for r in d["rows"])


@pytest.mark.parametrize("argv,words", [
    (["--mesh", "X=2,Y", "--program", "dp-tp-forward"], "NAME=SIZE"),
    (["--mesh", "X=3,Y=4", "--machine", "dgx-h100", "--program", "dp-tp-forward"], "does not fit DGX H100"),
    (["--mesh", "X=2,Y=4", "--program", "nope"], "no program"),
])
def test_the_cli_says_what_is_wrong_in_one_line(capsys, argv, words):
    assert main(["mesh"] + argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_the_simulated_fsdp_tp_optimum_is_the_books_x_opt():
    """On one switch (the same W on both axes) the book's X_opt = √(B/F · N) = 2 for B = D = 8192,
    F = 4D, N = 16: the simulated collectives are cheapest there too, and rise on both sides."""
    from simcore.mesh.programs import fsdp_tp_sweep

    rows = fsdp_tp_sweep(16)
    assert [x for x, _, _ in rows] == [1, 2, 4, 8, 16]
    sim = {x: t for x, t, _ in rows}
    book = {x: t for x, _, t in rows}
    assert min(sim, key=sim.get) == min(book, key=book.get) == round(math.sqrt(8192 / 32768 * 16))
    assert sim[1] > sim[2] < sim[4] < sim[8] < sim[16]


def test_2d_weight_stationary_memory_is_the_weights_cut_n_ways():
    res = run_program("2d-ws-ffn")
    D, F, N = 8192, 32768, 64
    for row in res.memory:  # W_in and W_out, each D·F bf16 numbers over all N chips, nothing replicated
        assert row["weights"] == pytest.approx(2 * D * F * 2 / N)
        assert row["KV cache"] == 0


def test_a_program_takes_sharded_arrays_and_redistributes_them_to_its_in_specs():
    mesh = Mesh((2, 4), ("X", "Y"))
    from simcore.mesh import ShardedArray
    x = RNG.standard_normal((8, 8))
    A = ShardedArray.from_full(mesh, x, P(None, "Y"))
    out = mesh.run(lambda b: b * 2, P("X", "Y"), P("X", "Y"))(A)  # A[I, J_Y] → A[I_X, J_Y]: no message
    np.testing.assert_allclose(out.full(), 2 * x)
    assert mesh.log == []
    out = mesh.run(lambda b: b, P(None, None), P(None, None))(A)  # all-gather over Y first
    assert [(r.op, r.axis) for r in mesh.log] == [("all-gather", ("Y",))]
    np.testing.assert_allclose(out.full(), x)


def test_1d_weight_stationary_equals_numpy_and_meets_2d_on_the_same_torus():
    one = run_program("1d-ws-ffn")  # AG and RS over all three axes of 4 × 4 × 4
    two = run_program("2d-ws-ffn")
    assert one.max_err < 1e-10
    assert [(r.op, r.axis, r.algo) for r in one.rows] == [("all-gather", "XYZ", "multi-axis"),
                                                          ("reduce-scatter", "XYZ", "multi-axis")]
    B, D, W = 2048, 8192, 2 * 45e9
    assert one.published_total == pytest.approx(4 * B * D / (3 * W))
    # the book's forms put N = 64 below the crossover of 72: 1-D is the cheaper there ...
    assert one.published_total < two.published_total
    # ... but its rings move (g−1)/g of V and the 3-axis gather pays a second and third phase: simulated,
    # 2-D already wins at 64 (the crossover the forms give is the large-N limit)
    assert two.simulated_total < one.simulated_total
