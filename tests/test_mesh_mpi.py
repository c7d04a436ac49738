"""
The mesh on real Open MPI ranks (simcore.mesh.ranks): rank r holds mesh position r's blocks only,
every axis collective is MPI's own on the axis's sub-communicator, and the registered programs give
the simulation's blocks — every tensor, every position — and numpy's results. 4 ranks as 2 × 2 and
8 ranks as 2 × 4, one launch each (every program in it).

Needs the `mpi` extra; without it the launching tests skip and say why.
"""

import math
import subprocess
import sys

import numpy as np
import pytest

from simcore import mpi
from simcore.mesh import MeshError
from simcore.mesh.on_ranks import run_mesh, run_mesh_programs
from simcore.mesh.cli import ranks_table

REASON = mpi.unavailable_reason()
needs_mpi = pytest.mark.skipif(REASON is not None, reason=f"MPI unavailable: {REASON}")
pytestmark = pytest.mark.xdist_group("mpi")

# label -> (registered program, its parameters): every rule of redistribute, the four matmul cases, …
RUNS = {"redistribute rules=1": ("redistribute", {"rules": 1}), "matmul case=all": ("matmul", {"case": "all"}),
        "redistribute": ("redistribute", None), "shard-map": ("shard-map", None), "2d-ws-ffn": ("2d-ws-ffn", None),
        "dp-tp-forward": ("dp-tp-forward", None), "fsdp-tp-layer": ("fsdp-tp-layer", None),
        "1d-ws-ffn": ("1d-ws-ffn", None)}
ON_4 = ("redistribute rules=1", "matmul case=all", "redistribute", "shard-map", "2d-ws-ffn", "dp-tp-forward",
        "fsdp-tp-layer", "1d-ws-ffn")
ON_8 = ("redistribute rules=1", "2d-ws-ffn", "dp-tp-forward")


@pytest.fixture(autouse=True)
def _allow_root(monkeypatch):
    for k in mpi.ROOT_VARS:
        monkeypatch.setenv(k, "1")


# ---------------------------------------------------------------------------------------
# without launching
# ---------------------------------------------------------------------------------------
class _Comm:
    """Just enough of a communicator to be refused before MPI starts."""

    def Get_size(self):
        return 8

    def Get_rank(self):
        return 0


def test_a_mesh_whose_size_is_not_the_rank_count_is_one_sentence():
    from simcore.mesh.ranks import RankMesh

    with pytest.raises(MeshError, match=r"^the mesh X=2 × Y=2 has 4 devices but there are 8 MPI ranks: a mesh over "
                                        r"ranks needs one rank per device$"):
        RankMesh((2, 2), ("X", "Y"), comm=_Comm())
    with pytest.raises(MeshError, match="has 64 devices but 4 MPI ranks were asked for"):
        run_mesh("2d-ws-ffn", 4)  # the program's own 4 × 4 × 4 mesh: refused before any rank starts
    out = subprocess.run([sys.executable, "-m", "simcore", "mesh", "--program", "2d-ws-ffn", "--mpi", "4"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == ("simcore: the mesh X=4 × Y=4 × Z=4 has 64 devices but 4 MPI ranks were asked for: "
                                  "run it on 64 ranks, or give a mesh of 4 devices")


def test_without_mpi4py_the_mesh_on_ranks_says_what_is_missing(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mpi4py" else real(name, *a))
    with pytest.raises(mpi.MPIUnavailable, match="mpi4py is not installed"):
        run_mesh("2d-ws-ffn", 4, {"X": 2, "Y": 2}, None)


def test_a_ppermute_pair_from_a_position_to_itself_keeps_its_array_as_jax_does():
    from simcore.mesh import Mesh

    mesh = Mesh((2, 2), ("X", "Y"))
    arrays = [np.full(3, float(p + 1)) for p in range(4)]
    out = mesh.collective("ppermute", "Y", arrays, perm=[(0, 0)])
    assert [a[0] for a in out] == [1.0, 0.0, 3.0, 0.0]  # index 0 keeps its own; index 1 receives nothing


def test_the_seam_leaves_the_simulation_holding_every_position():
    from simcore.mesh import Mesh

    mesh = Mesh((2, 2), ("X", "Y"))
    assert mesh.held == (0, 1, 2, 3)
    assert mesh.each(lambda p, v: p * v, range(4), [1, 2, 3, 4]) == [0, 2, 6, 12]


# ---------------------------------------------------------------------------------------
# on ranks
# ---------------------------------------------------------------------------------------
def _on_ranks(n, shape, keys):
    """The programs `keys` run on n MPI ranks, on the mesh `shape` ({key: result})."""
    if REASON is not None:
        pytest.skip(f"MPI unavailable: {REASON}")
    mp = pytest.MonkeyPatch()
    for k in mpi.ROOT_VARS:
        mp.setenv(k, "1")
    try:
        return dict(zip(keys, run_mesh_programs(n, [(RUNS[k][0], shape, None, RUNS[k][1]) for k in keys],
                                                repeats=1, timeout=120)))
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def on_4():
    return _on_ranks(4, {"X": 2, "Y": 2}, ON_4)


@pytest.fixture(scope="module")
def on_8():
    return _on_ranks(8, {"X": 2, "Y": 4}, ON_8)


@needs_mpi
@pytest.mark.parametrize("name", ON_4)
def test_every_program_on_4_ranks_gives_the_simulations_blocks_and_numpys_result(on_4, name):
    r = on_4[name]
    assert r.n == 4 and r.runs == 1
    assert r.per_tensor and all(math.isfinite(d) for d in r.per_tensor.values()), r.per_tensor
    assert r.max_vs_sim < 1e-12, r.per_tensor
    assert r.max_vs_numpy < 1e-12
    assert [w.op for w in r.rows] == [c.op for c in r.sim.mesh.log]
    assert all(w.measured > 0 for w in r.rows)


@needs_mpi
@pytest.mark.parametrize("name", ON_8)
def test_programs_on_8_ranks_as_2_by_4(on_8, name):
    r = on_8[name]
    assert r.n == 8 and r.max_vs_sim < 1e-12 and r.max_vs_numpy < 1e-12
    assert all(math.isfinite(d) for d in r.per_tensor.values())


@needs_mpi
def test_each_axis_collective_is_mpis_own_on_the_axis_sub_communicator(on_4, on_8):
    calls = {name: [(w.axis, w.call) for w in r.rows] for name, r in on_4.items()}
    assert calls["2d-ws-ffn"] == [("Y", "MPI_Allgather"), ("X", "MPI_Allreduce"), ("Y", "MPI_Reduce_scatter_block")]
    assert calls["shard-map"] == [("Y", "MPI_Allreduce"), ("Y", "MPI_Reduce_scatter_block"), ("Y", "MPI_Alltoall"),
                                  ("Y", "MPI_Allgather"), ("X", "MPI_Sendrecv")]
    # the tuple axis XY is one sub-communicator of all ranks, X major
    assert ("XY", "MPI_Allgather") in calls["redistribute rules=1"]
    assert ("XY", "MPI_Reduce_scatter_block") in calls["redistribute rules=1"]
    assert calls["redistribute"] == [("Y", "MPI_Allgather")]  # the app's A[I_X, J_Y] → A[I_X, J]
    r8 = on_8["redistribute rules=1"]
    ag_y = r8.rows[0]
    assert (ag_y.axis, ag_y.groups, ag_y.group_size) == ("Y", 2, 4)
    assert ag_y.rank_bytes * r8.sim.mesh.comm.byte_scale == ag_y.sim_bytes


@needs_mpi
def test_the_ranks_blocks_assemble_to_numpys_answer(on_4, on_8):
    # 2-D weight-stationary: Out[B, D_XY] — rank (x, y) holds column block x·|Y| + y of silu(x W_in) W_out
    for r, (X, Y) in ((on_4["2d-ws-ffn"], (2, 2)), (on_8["2d-ws-ffn"], (2, 4))):
        rng = np.random.default_rng(0)
        b, d, f = 2048 // 128, 8192 // 128, 32768 // 128
        x, w_in, w_out = (rng.standard_normal((b, d)), rng.standard_normal((d, f)) / d ** .5,
                          rng.standard_normal((f, d)) / f ** .5)
        h = x @ w_in
        want = (h / (1 + np.exp(-h))) @ w_out
        got = np.concatenate([r.blocks[f"activations/Out/{p}"] for p in range(X * Y)], axis=1)
        assert np.max(np.abs(got - want)) < 1e-12
    # DP × TP: every rank of DP replica x holds the full-vocab logits of batch rows x
    from simcore.transformer_lab import TINY, forward, init_params

    tokens = np.random.default_rng(0).integers(0, TINY.vocab, size=(4, 8))
    ref = forward(init_params(TINY, seed=0), TINY, tokens)
    r = on_4["dp-tp-forward"]
    for p in range(4):
        xi = p // 2
        assert np.max(np.abs(r.blocks[f"activations/logits/{p}"][..., :TINY.vocab] - ref[2 * xi:2 * xi + 2])) < 1e-10


@needs_mpi
def test_the_table_puts_measured_beside_simulated_per_axis(on_4):
    text = ranks_table(on_4["2d-ws-ffn"])
    assert "2d-ws-ffn on 4 MPI ranks, as mesh X=2 × Y=2" in text
    assert "MPI_Reduce_scatter_block" in text and "simulated" in text and "measured" in text
    per = on_4["2d-ws-ffn"].per_axis()
    assert set(per) == {"X", "Y"} and per["Y"][0] == 2 and per["X"][0] == 1
    assert per["X"][1] == pytest.approx(on_4["2d-ws-ffn"].sim.rows[1].simulated)


RANK_SCRIPT = r'''
import json
import numpy as np
from mpi4py import MPI
from simcore.mesh import Mesh, MeshError, P, all_gather, axis_index, psum
from simcore.mesh.ranks import RankMesh

comm = MPI.COMM_WORLD
ranks, sim = RankMesh((2, 2), ("X", "Y"), comm=comm), Mesh((2, 2), ("X", "Y"))


def f(x):  # a tuple axis in the other order: Y major
    return all_gather(np.full((1,), float(axis_index(("Y", "X")))), ("Y", "X")), all_gather(x, ("Y", "X"), dim=0)


x = np.arange(8.0).reshape(4, 2)
(i_r, x_r), (i_s, x_s) = (m.run(f, P(("X", "Y")), (P(), P()))(x) for m in (ranks, sim))
keep_r, keep_s = (m.collective("ppermute", "Y", [np.full(2, p + 1.0) if p in m.held else None for p in range(4)],
                               perm=[(0, 0)]) for m in (ranks, sim))
kept = comm.gather(float(keep_r[comm.rank][0]), root=0)


def g(x):  # the ranks of X = 1 call another collective: a sentence on every rank, no hang
    return psum(x, "X") if axis_index("X") == 1 else all_gather(x, "Y")


try:
    ranks.run(g, P("X", "Y"), P("X", "Y"))(np.ones((4, 4)))
    said = ""
except MeshError as e:
    said = str(e)
said = comm.gather(said, root=0)
if comm.rank == 0:
    print(json.dumps({"index": i_r.blocks[0].tolist(), "index_sim": i_s.blocks[0].tolist(),
                      "x": x_r.blocks[0].tolist(), "x_sim": x_s.blocks[0].tolist(), "said": said,
                      "kept": kept, "kept_sim": [float(a[0]) for a in keep_s]}))
'''


@needs_mpi
def test_a_tuple_axis_in_either_order_and_a_program_that_differs_between_ranks(tmp_path):
    script = tmp_path / "ranks.py"
    script.write_text(RANK_SCRIPT)
    out = subprocess.run([mpi.find_mpiexec(), "-n", "4", "--oversubscribe", sys.executable, str(script)],
                         capture_output=True, text=True, env=mpi._env(True), timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    got = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    # ("Y", "X"): Y major, so the group's order is positions 0, 2, 1, 3 and the rows come so
    assert got["index"] == got["index_sim"] == [0.0, 1.0, 2.0, 3.0]
    assert got["x"] == got["x_sim"] == np.arange(8.0).reshape(4, 2)[[0, 2, 1, 3]].tolist()
    assert got["kept"] == got["kept_sim"] == [1.0, 0.0, 3.0, 0.0]  # Sendrecv to itself: kept; from nobody: zeros
    assert len(set(got["said"])) == 1 and got["said"][0].startswith(
        "device 2 (mesh coordinate (1, 0)) called all-reduce over X while device 0 called all-gather over Y")
