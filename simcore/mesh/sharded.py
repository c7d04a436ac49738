"""
sharded — a ShardedArray: one real numpy block per mesh position, its Layout, and the book's
rules for changing it (redistribute) and multiplying it (matmul).

    A = ShardedArray.from_full(mesh, x, P("X", "Y"), name="A")     # or [Shard(0), Shard(1)]
    str(A)              'A[I_X, J_Y]'
    A.local((1, 2))     the block at mesh coordinate (1, 2)
    A.full()            the whole array (the sum, for a pending sum)
    B = A.redistribute(P("X", None))                      # all-gather over Y
    C = matmul(A, B)    the book's case for these layouts; C.how says which and what it cost

Redistribution follows DTensor's rules (torch/distributed/tensor/_redistribute.py and
_collective_utils.py), one mesh axis at a time:
    Shard → Replicate      all-gather over that axis
    Partial → Replicate    all-reduce
    Partial → Shard        reduce-scatter
    Shard(i) → Shard(j)    all-to-all
    Replicate → Shard      each device keeps its block (no message)
    Replicate → Partial    the first device along the axis keeps the value, the others zeros
    Shard → Partial        refused: a shard is a piece of the array, not a term of its sum
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .errors import MeshError
from .placement import (Layout, P, Partial, Replicate, Shard, layout_from_placements, layout_from_spec, notation,
                        placements_of, spec_of)

DIM_NAMES = "IJKLMN"


def _is_placements(target):
    return isinstance(target, (list, tuple)) and not isinstance(target, P) and target and all(
        isinstance(t, (Shard, Replicate, Partial)) for t in target)


@dataclass(frozen=True)
class Step:
    """One step of a redistribution: before → after in notation, and the collective it ran (None: local)."""

    before: str
    after: str
    what: str
    collective: object = None

    def __str__(self):
        return f"{self.before} → {self.after}: {self.what}"


class ShardedArray:
    """
    A global array of `shape` on `mesh`, held as one block per mesh position (blocks[p], p the
    row-major position of a coordinate). lay: its Layout; name and dim_names: how the book's
    notation writes it. Built with from_full / from_blocks; immutable in use (operations return new ones).
    """

    def __init__(self, mesh, lay: Layout, blocks, shape, name="A", dim_names=None, padded=None, steps=()):
        self.mesh, self.layout, self.blocks = mesh, lay, list(blocks)
        self.shape = tuple(shape)
        self.padded = tuple(padded) if padded is not None else self.shape
        self.name = name
        self.dim_names = tuple(dim_names) if dim_names is not None else tuple(DIM_NAMES[:len(self.shape)])
        self.steps = tuple(steps)  # how it got here (redistribute, matmul)
        self.how = None  # a matmul's MatmulCase

    # -- making one ----------------------------------------------------------------------
    @classmethod
    def layout_for(cls, mesh, target, ndim) -> Layout:
        if isinstance(target, Layout):
            return target
        if _is_placements(target):
            return layout_from_placements(mesh, target, ndim)
        if isinstance(target, (P, tuple, list)):
            return layout_from_spec(mesh, target, ndim)
        raise MeshError(f"a layout is a spec P(...) or a list of placements (Shard, Replicate, Partial), "
                        f"got {target!r}")

    @classmethod
    def from_full(cls, mesh, x, target, name="A", dim_names=None, partial=(), pad=False):
        """
        Distribute the whole array x: target is a spec P(...) (with partial=: axes of a pending
        sum) or DTensor placements. A dimension that does not split evenly is refused unless
        pad=True (zeros appended, dropped again by full()). A pending sum over axes U holds x on
        the first device along U and zeros on the others (their sum is x).
        """
        x = np.asarray(x)
        lay = cls.layout_for(mesh, target, x.ndim)
        if partial:
            lay = layout_from_spec(mesh, spec_of(lay), x.ndim, partial=tuple(partial) + lay.partial)
        padded = list(x.shape)
        for d, axes in enumerate(lay.dims):
            k = math.prod(mesh.size(a) for a in axes) if axes else 1
            if x.shape[d] % k:
                if not pad:
                    raise MeshError(f"dimension {d} of length {x.shape[d]} does not split into {k} equal blocks over "
                                    f"{_axes_text(axes)}; pass pad=True to pad it with zeros", "not-split",
                                    dim=_dim_name(dim_names or DIM_NAMES, d), length=x.shape[d], axes=tuple(axes),
                                    sizes=tuple(mesh.size(a) for a in axes))
                padded[d] = -(-x.shape[d] // k) * k
        xp = x if tuple(padded) == x.shape else np.pad(x, [(0, p - s) for p, s in zip(padded, x.shape)])
        def cut(p):  # the block at position p (a mesh over ranks cuts only its own)
            coord = mesh.coord(p)
            b = xp[_slices(mesh, lay, xp.shape, coord)]
            if lay.partial and any(coord[mesh.axis_names.index(a)] for a in lay.partial):
                b = np.zeros_like(b)
            return np.array(b)

        return cls(mesh, lay, mesh.each(cut, range(mesh.n)), x.shape, name, dim_names, padded)

    @classmethod
    def from_blocks(cls, mesh, blocks, target, shape, name="A", dim_names=None):
        """From one block per mesh position (as a per-device program leaves them); every block must
        have the shape the layout gives a device."""
        lay = cls.layout_for(mesh, target, len(shape))
        blocks = list(blocks)
        if len(blocks) != mesh.n:
            raise MeshError(f"give one block per mesh position ({mesh.n}), got {len(blocks)}")
        blocks = mesh.each(np.asarray, blocks)  # a mesh over ranks: its own block, None elsewhere
        want = tuple(s // (math.prod(mesh.size(a) for a in axes) if axes else 1) for s, axes in zip(shape, lay.dims))
        bad = next((p for p in mesh.held if blocks[p].shape != want), None)
        if bad is not None:
            raise MeshError(f"the block at {mesh.coord(bad)} has shape {blocks[bad].shape}; a {tuple(shape)} array laid "
                            f"out as {notation(name, dim_names or DIM_NAMES[:len(shape)], lay)} gives each device {want}")
        return cls(mesh, lay, blocks, shape, name, dim_names)

    def _new(self, lay, blocks, steps=(), name=None):
        return ShardedArray(self.mesh, lay, blocks, self.shape, name or self.name, self.dim_names, self.padded,
                            self.steps + tuple(steps))

    # -- reading it ----------------------------------------------------------------------
    def __str__(self):
        return notation(self.name, self.dim_names, self.layout)

    def __repr__(self):
        return f"<ShardedArray {self} shape={self.shape} on {self.mesh.describe()}>"

    @property
    def placements(self) -> tuple:
        return placements_of(self.mesh, self.layout)

    @property
    def spec(self) -> P:
        return spec_of(self.layout)

    @property
    def partial(self) -> tuple:
        return self.layout.partial

    def local(self, coord):
        """The block at a mesh coordinate (a tuple, or a dict by axis name)."""
        return self.blocks[self.mesh.position(coord)]

    def full(self) -> np.ndarray:
        """The whole array: blocks put in place, a pending sum summed (only for checking: no device
        holds it)."""
        mesh, lay = self.mesh, self.layout
        blocks = mesh.gathered(self.blocks)
        out = np.zeros(self.padded, dtype=np.result_type(*blocks))
        sharding = set(lay.axes_used()) | set(lay.partial)
        for p in range(mesh.n):
            coord = mesh.coord(p)
            if any(c for a, c in zip(mesh.axis_names, coord) if a not in sharding):
                continue  # a replica: coordinate 0 along every replicated axis is enough
            out[_slices(mesh, lay, self.padded, coord)] += blocks[p]
        return out[tuple(slice(0, s) for s in self.shape)]

    def nbytes_per_device(self) -> int:
        return int(self.mesh.first(self.blocks).nbytes)

    # -- changing it ---------------------------------------------------------------------
    def redistribute(self, target, label=None, algo=None) -> ShardedArray:
        """A new ShardedArray laid out as `target` (a spec or placements; a spec keeps no pending
        sum unless target is a Layout), by DTensor's rules (module docstring), one collective per
        change on the mesh. Its .steps lists each change with its collective."""
        tgt = self.layout_for(self.mesh, target, len(self.shape))
        return _redistribute(self, tgt, label or f"redistribute {self.name}", algo)


def _name(axes):
    return "".join(axes) if all(len(a) == 1 for a in axes) else ",".join(axes)


def _axes_text(axes):
    return "axis " + "".join(axes) if len(axes) == 1 else "axes " + ", ".join(axes)


def _dim_name(dim_names, d):
    """Dimension d's letter (the book's I, J, …) when the array has them, else its index."""
    return dim_names[d] if dim_names and d < len(dim_names) else d


def _slices(mesh, lay, shape, coord):
    """The slices of the global array the block at `coord` holds."""
    out = []
    for d, axes in enumerate(lay.dims):
        if not axes:
            out.append(slice(None))
            continue
        sizes = [mesh.size(a) for a in axes]
        idx = int(np.ravel_multi_index(tuple(coord[mesh.axis_names.index(a)] for a in axes), sizes))
        step = shape[d] // math.prod(sizes)
        out.append(slice(idx * step, (idx + 1) * step))
    return tuple(out)


def _with_dim(lay, d, axes):
    dims = list(lay.dims)
    dims[d] = tuple(axes)
    return replace(lay, dims=tuple(dims))


def _redistribute(A, tgt: Layout, label, algo=None):
    mesh, cur = A.mesh, A.layout
    for a in tgt.partial:
        d = cur.dim_of(a)
        if d is not None:
            raise MeshError(f"Shard → Partial on axis {a} is refused: a shard holds a piece of the array, not a term "
                            f"of its sum (DTensor refuses it too); go to Replicate first, then Partial",
                            "shard-to-partial", axis=a)
    if cur.partial and tgt.partial and cur.op != tgt.op:
        raise MeshError(f"a pending {cur.op} cannot become a pending {tgt.op}: mixed Partial ops", "mixed-partial",
                        ops=(cur.op, tgt.op))
    blocks, steps = list(A.blocks), []

    def step(new_lay, new_blocks, what, coll=None):
        nonlocal cur, blocks
        before = notation(A.name, A.dim_names, cur)
        cur, blocks = new_lay, new_blocks
        steps.append(Step(before, notation(A.name, A.dim_names, cur), what, coll))

    def run(op, axes, **kw):
        out = mesh.collective(op, axes, blocks, label=label, algo=algo, **kw)
        return out, mesh.log[-1]

    # 1. pending sums: reduce-scatter straight into the target's shard (over several axes at once
    #    when the target shards one dimension by them, as the book's RS_YZ), else all-reduce
    gone = [a for a in cur.partial if a not in tgt.partial]
    while gone:
        best = None
        for d, axes in enumerate(tgt.dims):
            if axes[:len(cur.dims[d])] != cur.dims[d]:
                continue
            run_ = []
            for a in axes[len(cur.dims[d]):]:
                if a not in gone:
                    break
                run_.append(a)
            while run_ and mesh.first(blocks).shape[d] % math.prod(mesh.size(a) for a in run_):
                run_.pop()
            if run_ and (best is None or len(run_) > len(best[1])):
                best = (d, tuple(run_))
        if best is not None:
            d, axes = best
            rest = replace(cur, partial=tuple(x for x in cur.partial if x not in axes))
            out, rec = run("reduce-scatter", axes, dim=d)
            step(_with_dim(rest, d, cur.dims[d] + axes), out,
                 f"reduce-scatter over {_name(axes)} (Partial → Shard({d}))", rec)
        else:
            axes = tuple(gone)
            out, rec = run("all-reduce", axes)
            step(replace(cur, partial=tuple(x for x in cur.partial if x not in axes)), out,
                 f"all-reduce over {_name(axes)} (Partial → Replicate)", rec)
        gone = [a for a in gone if a in cur.partial]
    # 2. a minor axis moving from one dimension to another: all-to-all
    moved = True
    while moved:
        moved = False
        for d, axes in enumerate(cur.dims):
            if not axes or tgt.dims[d][:len(axes)] == axes:
                continue
            a = axes[-1]
            d2 = tgt.dim_of(a)
            if d2 is None or d2 == d:
                continue
            want = cur.dims[d2] + (a,)
            if tgt.dims[d2][:len(want)] != want or mesh.first(blocks).shape[d2] % mesh.size(a):
                continue
            out, rec = run("all-to-all", a, split_dim=d2, concat_dim=d)
            new = _with_dim(_with_dim(cur, d, axes[:-1]), d2, want)
            step(new, out, f"all-to-all over {a} (Shard({d}) → Shard({d2}))", rec)
            moved = True
            break
    # 3. gather what the target does not keep (the axes past the common prefix, as one tuple)
    for d, axes in enumerate(cur.dims):
        k = 0
        while k < len(axes) and k < len(tgt.dims[d]) and axes[k] == tgt.dims[d][k]:
            k += 1
        if k < len(axes):
            gone = axes[k:]
            out, rec = run("all-gather", gone, dim=d)
            step(_with_dim(cur, d, axes[:k]), out, f"all-gather over {_name(gone)} (Shard({d}) → Replicate)", rec)
    # 4. shards the target adds: every device keeps its own block, nothing moves
    for d, axes in enumerate(tgt.dims):
        for a in axes[len(cur.dims[d]):]:
            g = mesh.size(a)
            length = mesh.first(blocks).shape[d]
            if length % g:
                raise MeshError(f"dimension {d} of the block (length {length}) does not split into {g} "
                                f"equal blocks over axis {a}", "not-split", dim=_dim_name(A.dim_names, d),
                                length=length, axes=(a,), sizes=(g,))
            i = mesh.axis_names.index(a)
            new_blocks = mesh.each(lambda p, b: np.array(np.split(b, g, axis=d)[mesh.coord(p)[i]]), range(mesh.n),
                                   blocks)
            step(_with_dim(cur, d, cur.dims[d] + (a,)), new_blocks, f"each device keeps its block along {a} "
                 f"(Replicate → Shard({d}), no message)")
    # 5. pending sums the target adds: the first device along the axis keeps the value
    for a in [a for a in tgt.partial if a not in cur.partial]:
        i = mesh.axis_names.index(a)
        new_blocks = mesh.each(lambda p, b: b if mesh.coord(p)[i] == 0 else np.zeros_like(b), range(mesh.n), blocks)
        step(replace(cur, partial=cur.partial + (a,), op=tgt.op), new_blocks,
             f"the first device along {a} keeps it, the others hold zeros (Replicate → Partial, no message)")
    if cur != tgt and (cur.dims != tgt.dims or set(cur.partial) != set(tgt.partial)):
        raise MeshError(f"cannot redistribute {A} to {notation(A.name, A.dim_names, tgt)} by these rules")
    return A._new(cur, blocks, steps)


# ---------------------------------------------------------------------------------------
# matmul: the book's four cases on any mesh axes
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MatmulCase:
    """Which of the book's cases a matmul was, in words, and what it cost."""

    case: int  # 1 … 4 (4 when a non-contracting conflict needed a gather, whatever the contraction)
    cases: tuple  # every case that applied, e.g. (4, 3)
    text: str
    steps: tuple  # the redistributions it ran first (Step records)
    seconds: float  # simulated time of its collectives
    bytes: float  # S of its collectives (one group each, after byte_scale)


CASE_WORDS = {
    1: "case 1: the contracting dimension is whole on both sides; each device multiplies its own blocks, nothing moves",
    2: "case 2: the contracting dimension is sharded on one side only (or differently); all-gather it first",
    3: "case 3: both sides shard the contracting dimension over the same axes; each device leaves a partial sum",
    4: "case 4: both non-contracting dimensions are sharded over the same axis, which no result may be; "
       "all-gather one operand along it first",
}


def matmul(A: ShardedArray, B: ShardedArray, name="C", label=None) -> ShardedArray:
    """
    C = A @ B for 2-D A[I, J] and B[J, K] on one mesh, by the book's cases ("How to Scale Your
    Model", sharded matmuls): a contracting J sharded over the same axes on both sides gives
    C{U_…} (case 3); sharded on one side only, or differently, it is all-gathered first (case 2);
    I and K sharded over a common axis need one operand all-gathered along it first (case 4 —
    the smaller operand); otherwise the blocks multiply as they are (case 1). Returns C with
    C.how = MatmulCase (which case, the words, the steps and their time).
    """
    if A.mesh is not B.mesh:
        raise MeshError("both operands of a matmul must live on the same mesh")
    if len(A.shape) != 2 or len(B.shape) != 2:
        raise MeshError(f"matmul multiplies 2-D arrays, got shapes {A.shape} and {B.shape}")
    if A.shape[1] != B.shape[0]:
        raise MeshError(f"{A} · {B}: the contracting dimensions differ ({A.shape[1]} and {B.shape[0]})")
    if A.partial or B.partial:
        which = A if A.partial else B
        raise MeshError(f"{which} is a pending sum; reduce it (redistribute to Replicate or Shard) before a matmul")
    mesh = A.mesh
    label = label or f"{A.name}·{B.name}"
    n_log = len(mesh.log)
    aI, aJ = A.layout.dims
    bJ, bK = B.layout.dims
    cases = []
    conflict = [a for a in aI if a in bK]
    a_t, b_t = A.layout, B.layout
    if conflict:
        cases.append(4)
        if B.nbytes_per_device() <= A.nbytes_per_device():
            b_t = _with_dim(b_t, 1, tuple(x for x in bK if x not in conflict))
        else:
            a_t = _with_dim(a_t, 0, tuple(x for x in aI if x not in conflict))
    if aJ and aJ == bJ:
        cases.append(3)
    elif aJ or bJ:
        cases.append(2)
        a_t, b_t = _with_dim(a_t, 1, ()), _with_dim(b_t, 0, ())
    else:
        cases.append(1)
    A2 = A.redistribute(a_t, label=label) if a_t != A.layout else A
    B2 = B.redistribute(b_t, label=label) if b_t != B.layout else B
    blocks = mesh.each(np.matmul, A2.blocks, B2.blocks)
    part = A2.layout.dims[1] if 3 in cases else ()
    lay = Layout((A2.layout.dims[0], B2.layout.dims[1]), tuple(part), "sum")
    C = ShardedArray(mesh, lay, blocks, (A.shape[0], B.shape[1]), name, (A.dim_names[0], B.dim_names[1]),
                     (A2.padded[0], B2.padded[1]))
    ran = mesh.log[n_log:]
    steps = tuple(s for s in A2.steps[len(A.steps):] + B2.steps[len(B.steps):])
    words = "; then ".join(CASE_WORDS[c] for c in cases)
    text = f"{A} · {B} → {C}: {words}"
    C.how = MatmulCase(cases[0], tuple(cases), text, steps, sum(r.time for r in ran), sum(r.nbytes for r in ran))
    C.steps = steps
    return C
