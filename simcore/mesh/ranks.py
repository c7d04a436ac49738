"""
ranks — the mesh on real MPI ranks: rank r is mesh position r and holds only its own block of
every sharded array; a collective over a mesh axis is Open MPI's own collective on that axis's
sub-communicator.

    from mpi4py import MPI
    mesh = RankMesh((2, 2), ("X", "Y"), comm=MPI.COMM_WORLD)      # 4 ranks
    A = ShardedArray.from_full(mesh, x, P("X", "Y"))                 # each rank cuts its own block
    B = A.redistribute(P("X", None))                                 # MPI_Allgather over Y
    out = mesh.run(f, in_specs, out_specs)(x)                        # f's psum -> MPI_Allreduce

The sub-communicator of an axis (or a tuple of axes, major to minor) is comm.Split: one colour
per group of Mesh.positions(axis), the key the position's index in its group, so a rank's rank
in it is its axis index (jax's axis_index) and MPI's rank order is the group's order:
    all-gather      MPI_Allgather, the blocks concatenated along dim
    reduce-scatter  MPI_Reduce_scatter_block (sum) of the g blocks along dim
    all-reduce      MPI_Allreduce (sum)
    all-to-all      MPI_Alltoall of the g blocks along split_dim, concatenated along concat_dim
    ppermute        MPI_Sendrecv with each rank's partner (MPI_PROC_NULL where there is none)
Open MPI picks its own algorithm for each. Every collective starts after a barrier of all ranks
(every group at once, as on the simulated clock) and its wall time (MPI_Wtime) on this rank is
kept in mesh.log: an AxisCollective whose t_start / t_end are seconds since the mesh was made.
The plan's closed form (the simulated machine's) stays in the record, so a program's rows read
the same; the measured times are this machine's, not the simulated machine's.

What a rank holds: a ShardedArray's blocks list has this rank's block at its position and None
at the others (Mesh.held, Mesh.each); .local() of another position is None; .full() gathers every
rank's block to every rank (MPI allgather), so every rank must call it, as every rank calls each
collective; memory_per_device counts this rank's position (None at the others). The inputs are
built as the simulation builds them — every rank makes the same global array from the seed and
cuts its own block — so the two runs start from the same numbers.

Needs mpi4py (the `mpi` extra); this module imports without it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .device_mesh import AxisCollective, Mesh, _name
from .errors import MeshError

MPI_CALLS = {"all-gather": "MPI_Allgather", "reduce-scatter": "MPI_Reduce_scatter_block",
             "all-reduce": "MPI_Allreduce", "all-to-all": "MPI_Alltoall", "ppermute": "MPI_Sendrecv"}


class RankMesh(Mesh):
    """
    A Mesh whose positions are MPI ranks: rank r of `comm` holds position r (row-major). shape,
    axis_names, machine, byte_scale: as Mesh's (the machine and byte_scale give the plan's closed
    form, the record's words and bytes; nothing is simulated). comm: an mpi4py communicator of
    exactly prod(shape) ranks.
    """

    def __init__(self, shape, axis_names, machine=None, devices=None, byte_scale=1.0, comm=None):
        if comm is None:
            raise MeshError("a mesh over ranks needs comm=, an mpi4py communicator (e.g. MPI.COMM_WORLD)")
        super().__init__(shape, axis_names, machine, devices, byte_scale)
        if comm.Get_size() != self.n:
            raise MeshError(f"the mesh {' × '.join(f'{a}={s}' for a, s in zip(self.axis_names, self.shape))} has "
                            f"{self.n} devices but there are {comm.Get_size()} MPI ranks: a mesh over ranks needs "
                            f"one rank per device")
        from mpi4py import MPI

        self.MPI, self.world = MPI, comm
        self.pos = comm.Get_rank()
        self._subs = {}
        self._t0 = MPI.Wtime()

    # -- the seam: this rank holds its own position --------------------------------------
    @property
    def held(self) -> tuple:
        return (self.pos,)

    def gathered(self, blocks) -> list:
        """Every rank's block, gathered to every rank (for checking, as full() does)."""
        return self.world.allgather(blocks[self.pos])

    def agree(self, pos, desc, words):
        """Every rank says which collective it calls next (desc; None: it has returned); if one
        differs, every rank raises the same sentence (as the simulated mesh.run does)."""
        everyone = self.world.allgather((desc, words))
        first = everyone[0]
        for r, (d, w) in enumerate(everyone):
            if d != first[0]:
                raise MeshError(f"device {r} (mesh coordinate {self.coord(r)}) called {w} while device 0 called "
                                f"{first[1]}: every device must call the same collectives in the same order")

    # -- sub-communicators ----------------------------------------------------------------
    def sub(self, axis):
        """(communicator, this rank's index in its group, group size) of an axis or axis tuple:
        comm.Split with one colour per group, keyed by the axis index (major to minor)."""
        names = self.axis(axis)
        if names not in self._subs:
            rows = self.positions(names)
            gi, idx = (int(v) for v in np.argwhere(rows == self.pos)[0])
            self._subs[names] = (self.world.Split(gi, idx), idx, rows.shape[1])
        return self._subs[names]

    # -- running: Open MPI's collectives --------------------------------------------------
    def collective(self, op, axis, arrays=None, algo=None, label="", dim=0, split_dim=0, concat_dim=0, perm=None,
                   only_groups=None, nbytes=None):
        """Mesh.collective on ranks: arrays[self.pos] is this rank's array (the others None);
        returns a list with this rank's result at its position, None elsewhere."""
        names = self.axis(axis)
        if arrays is None:
            raise MeshError(f"{op} on MPI ranks moves real arrays: give arrays (timing by nbytes alone is the "
                            f"simulation's)")
        if only_groups is not None:
            raise MeshError("on MPI ranks every group of the axis runs (only_groups is the simulation's)")
        if algo is not None:
            raise MeshError(f"on MPI ranks Open MPI picks the algorithm; {algo!r} is the simulation's choice")
        arrays = list(arrays)
        if len(arrays) != self.n:
            raise MeshError(f"{op} needs one array per mesh position ({self.n}), got {len(arrays)}")
        x = np.ascontiguousarray(arrays[self.pos])
        sub, idx, g = self.sub(names)
        for what, d in {"all-gather": {"dim": dim}, "reduce-scatter": {"dim": dim},
                        "all-to-all": {"split_dim": split_dim, "concat_dim": concat_dim}}.get(op, {}).items():
            if not -x.ndim <= d < x.ndim:
                raise MeshError(f"{op}: {what} {d} does not exist in arrays of shape {x.shape}")
        cut = {"reduce-scatter": dim, "all-to-all": split_dim}.get(op)
        if cut is not None and x.shape[cut] % g:
            raise MeshError(f"{op}: dimension {cut} of length {x.shape[cut]} does not split into {g} equal blocks "
                            f"over {self._axis_text(names)}")
        pairs = self._pairs(perm, g) if op == "ppermute" else None
        S = float(x.nbytes) * self.comm.byte_scale * (g if op == "all-gather" else 1)
        plan = self.plan(op, names, S)
        MPI = self.MPI
        self.world.Barrier()  # every group starts together, as on the simulated clock
        t0 = MPI.Wtime()
        out = self._mpi(op, sub, x, g, idx, dim, split_dim, concat_dim, pairs, perm)
        t1 = MPI.Wtime()
        said = f"Open MPI's own algorithm for {MPI_CALLS[op]} on the sub-communicator of {self._axis_text(names)}"
        ran = dataclasses.replace(plan, algo=MPI_CALLS[op], why_text=said, why=dataclasses.replace(plan.why, text=said))
        self.log.append(AxisCollective(op, names, tuple(map(tuple, self.dev[self.positions(names)].tolist())), S,
                                       label, t0 - self._t0, t1 - self._t0, -1, 0, ran))
        res = [None] * self.n
        res[self.pos] = out
        return res

    def _mpi(self, op, sub, x, g, idx, dim, split_dim, concat_dim, pairs, perm):
        SUM = self.MPI.SUM
        if op == "all-reduce":
            out = np.empty_like(x)
            sub.Allreduce(x, out, op=SUM)
            return out
        if op == "all-gather":
            buf = np.empty((g,) + x.shape, x.dtype)
            sub.Allgather(x, buf)
            return np.concatenate(list(buf), axis=dim)
        if op == "reduce-scatter":
            send = np.ascontiguousarray(np.stack(np.split(x, g, axis=dim)))
            out = np.empty(send.shape[1:], x.dtype)
            sub.Reduce_scatter_block(send, out, op=SUM)
            return out
        if op == "all-to-all":
            send = np.ascontiguousarray(np.stack(np.split(x, g, axis=split_dim)))
            recv = np.empty_like(send)
            sub.Alltoall(send, recv)
            return np.concatenate(list(recv), axis=concat_dim)
        # ppermute: one Sendrecv with this rank's destination and source (PROC_NULL: none)
        if any(int(i) == idx == int(j) for i, j in perm):
            return x.copy()  # a (j, j) pair keeps its own array
        dest = next((j for i, j in pairs if i == idx), self.MPI.PROC_NULL)
        src = next((i for i, j in pairs if j == idx), self.MPI.PROC_NULL)
        out = np.zeros_like(x)
        sub.Sendrecv(x, dest=dest, recvbuf=out, source=src)
        return out

    def free(self):
        """Free the axes' sub-communicators (a collective call: every rank)."""
        for c, _, _ in self._subs.values():
            c.Free()
        self._subs.clear()


def axis_times(log) -> dict:
    """{axis name: seconds} summed over a log's collectives, in the order the axes first appear."""
    out = {}
    for r in log:
        out[_name(r.axis)] = out.get(_name(r.axis), 0.0) + r.time
    return out
