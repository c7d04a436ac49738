"""
A registered mesh program on Open MPI ranks (simcore.mesh.ranks: one sub-communicator per mesh
axis), run beside the simulated mesh with the same inputs: every tensor's blocks against the
simulation's and numpy's, every axis collective's measured time beside its simulated one. The
launch itself is simcore.mpi's (mpiexec, the worker, its files); this module is the mesh's side.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from dataclasses import dataclass, field

import numpy as np

from ..mpi import MPIError, launch
from .device_mesh import _name
from .errors import MeshError
from .programs import get_program, run_program


@dataclass(frozen=True)
class MeshRow:
    """One collective of a mesh program: on the ranks (Open MPI's call, its wall time on this
    machine, the bytes one rank holds) beside the simulation (the same collective on the simulated
    machine, timed for the real model's bytes)."""

    step: str
    op: str
    axis: str
    call: str  # the MPI function that ran
    groups: int
    group_size: int
    rank_bytes: float  # S of one group as the ranks hold it (float64, no byte_scale)
    sim_bytes: float  # S of one group in the simulation (after byte_scale: the real model's)
    simulated: float  # seconds on the simulated machine
    measured: float  # seconds on the ranks: median over runs of the slowest rank


@dataclass
class MeshRanksResult:
    """A registered mesh program run on n MPI ranks and on the simulated mesh (same inputs)."""

    program: str
    n: int
    sim: object  # the simulation's programs.Result
    rows: list  # MeshRow, one per collective
    max_vs_sim: float  # max |rank's block − simulated block| over every tensor and position
    per_tensor: dict  # "class/name" -> that max
    max_vs_numpy: float  # max over ranks of the program's own |result − numpy|
    library: str
    runs: int
    blocks: dict = field(default_factory=dict)  # "class/name/position" -> that rank's block

    def per_axis(self) -> dict:
        """{axis: (collectives, simulated seconds, measured seconds)} summed over the program."""
        out = {}
        for r in self.rows:
            k, s, m = out.get(r.axis, (0, 0.0, 0.0))
            out[r.axis] = (k + 1, s + r.simulated, m + r.measured)
        return out


def check_mesh_ranks(shape, n):
    """One sentence (MeshError) unless the mesh {axis: size} has exactly n devices."""
    size = math.prod(shape.values())
    if size != n:
        axes = " × ".join(f"{a}={s}" for a, s in shape.items())
        raise MeshError(f"the mesh {axes} has {size} devices but {n} MPI ranks were asked for: run it on {size} "
                        f"ranks, or give a mesh of {n} devices")


def run_mesh(program, n, mesh_shape=None, machine="default", params=None, repeats=3, **launch_kw) -> MeshRanksResult:
    """
    Run the registered mesh program `program` on n MPI ranks (rank r = mesh position r, holding
    only its own blocks; each axis collective is Open MPI's on the axis's sub-communicator) and
    on the simulated mesh, with the same inputs. mesh_shape: {axis: size} of n devices (None: the
    program's own); machine, params: as programs.run_program. The rank run repeats 1 + repeats
    times; a collective's measured time is the median over the timed runs of its slowest rank.
    Returns every collective beside the simulated one and the max |difference| of every tensor's
    blocks from the simulation's, and of the result from numpy. launch_kw: as run_mesh_programs.
    """
    return run_mesh_programs(n, [(program, mesh_shape, machine, params)], repeats, **launch_kw)[0]


def run_mesh_programs(n, programs, repeats=3, hosts=None, mpiexec_args=(), workdir=None, allow_root=False,
                      timeout=300.0) -> list:
    """run_mesh for several programs in one launch of n ranks: programs is a list of (program,
    mesh_shape, machine, params) as run_mesh's. Returns one MeshRanksResult each."""
    specs, sims = [], []
    for program, mesh_shape, machine, params in programs:
        prog = get_program(program)
        shape = dict(prog.mesh) if mesh_shape is None else dict(mesh_shape)
        check_mesh_ranks(shape, n)
        params = dict(params or {})
        sims.append(run_program(program, shape, machine, **params))  # bad input says so before any rank starts
        specs.append({"program": program, "mesh": shape, "params": params,
                      "machine": prog.machine if machine == "default" else machine})
    task = {"task": "mesh", "programs": specs, "repeats": int(repeats)}
    tmp_owned = workdir is None
    work = workdir or tempfile.mkdtemp(prefix="shard-lab-mpi-")
    try:
        launch(task, n, (), hosts, mpiexec_args, work, allow_root, timeout)
        out = []
        for i, sim in enumerate(sims):
            with open(os.path.join(work, f"mesh{i}.json")) as f:
                info = json.load(f)
            with np.load(os.path.join(work, f"mesh{i}.npz")) as z:
                got = {k: z[k].copy() for k in z.files}
            out.append(_mesh_result(sim, n, info, got))
        return out
    finally:
        if tmp_owned:
            shutil.rmtree(work, ignore_errors=True)


def _mesh_result(sim, n, info, got) -> MeshRanksResult:
    per, worst = {}, 0.0
    for cls, tensors in sim.tensors.items():
        for name, t in tensors.items():
            blocks = getattr(t, "blocks", t)
            key = f"{cls}/{name}"
            d = 0.0
            for p in range(n):
                mine = got.get(f"{key}/{p}")
                if mine is None or mine.shape != np.shape(blocks[p]):
                    d = float("inf")  # the ranks left no block, or one of another shape
                    break
                d = max(d, float(np.max(np.abs(mine - blocks[p]))) if mine.size else 0.0)
            per[key], worst = d, max(worst, d)
    secs = np.array(info["seconds"], dtype=float)  # (runs, ranks, collectives)
    timed = secs[1:] if len(secs) > 1 else secs
    measured = np.median(timed.max(axis=1), axis=0) if timed.size else np.zeros(0)
    colls = info["collectives"]
    if len(colls) != len(sim.mesh.log) or any(c["op"] != r.op or tuple(c["axis"]) != r.axis
                                               for c, r in zip(colls, sim.mesh.log)):
        raise MPIError(f"the ranks ran {[(c['op'], ''.join(c['axis'])) for c in colls]} but the simulation ran "
                       f"{[(r.op, r.axis_name) for r in sim.mesh.log]}")
    scale = info["byte_scale"]
    rows = [MeshRow(c["step"], c["op"], _name(tuple(c["axis"])), c["call"], c["groups"], c["group_size"],
                    c["nbytes"] / scale, r.nbytes, r.time, float(m))
            for c, r, m in zip(colls, sim.mesh.log, measured)]
    return MeshRanksResult(sim.name, n, sim, rows, worst, per, float(info["max_abs_error"]), info["library"],
                           len(timed), got)
