"""
placement — how an array lies on a mesh, in both vocabularies, and in the book's notation.

JAX names it per array dimension: P("X", None) shards dimension 0 over mesh axis X, P(("X", "Y"),
None) over X and Y together (X major: the shard index is x·|Y| + y). DTensor names it per mesh
axis: [Shard(0), Replicate()] on a mesh ("X", "Y") is the same object; Partial("sum") says each
device holds a term of a pending sum. A `Layout` is that one object: per array dimension the mesh
axes that shard it (major to minor), and the mesh axes over which it is a pending sum.

The scaling book writes it A[I_X, J_Y]{U_Z}: dimension I sharded over X, J over Y, and the
array unreduced (a pending sum) over Z ("How to Scale Your Model", sharded matmuls chapter).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import MeshError

REDUCE_OPS = ("sum",)


@dataclass(frozen=True)
class Shard:
    """DTensor's Shard(dim): this mesh axis splits array dimension `dim` into equal blocks."""

    dim: int

    def __repr__(self):
        return f"Shard({self.dim})"


@dataclass(frozen=True)
class Replicate:
    """DTensor's Replicate(): every device along this mesh axis holds the same block."""

    def __repr__(self):
        return "Replicate()"


@dataclass(frozen=True)
class Partial:
    """DTensor's Partial(op): the devices along this mesh axis hold terms of a pending reduction."""

    reduce_op: str = "sum"

    def __repr__(self):
        return f'Partial("{self.reduce_op}")'


class P(tuple):
    """JAX's PartitionSpec: one entry per array dimension — None (whole), an axis name, or a tuple
    of axis names (major to minor). Dimensions past the spec's length are whole."""

    def __new__(cls, *entries):
        return super().__new__(cls, entries)

    def __repr__(self):
        return "P(" + ", ".join(repr(e) for e in self) + ")"

    def _trimmed(self):
        e = list(self)
        while e and e[-1] is None:
            e.pop()
        return tuple(e)

    def __eq__(self, other):  # trailing Nones say nothing: P("X", None) == P("X")
        if isinstance(other, tuple):
            return self._trimmed() == (P(*other)._trimmed() if not isinstance(other, P) else other._trimmed())
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self._trimmed())


@dataclass(frozen=True)
class Layout:
    """dims[d]: the mesh axes sharding array dimension d, major to minor; partial: the mesh axes
    over which the array is a pending `op` reduction."""

    dims: tuple
    partial: tuple = ()
    op: str = "sum"

    def axes_used(self):
        return [a for d in self.dims for a in d]

    def dim_of(self, axis):
        for d, axes in enumerate(self.dims):
            if axis in axes:
                return d
        return None


def layout_from_spec(mesh, spec, ndim, partial=(), op="sum") -> Layout:
    """A Layout from a JAX spec (P or a tuple) for an array of rank ndim; partial: axis names."""
    spec = tuple(spec)
    if len(spec) > ndim:
        raise MeshError(f"the spec {P(*spec)!r} has {len(spec)} entries but the array has only {ndim} "
                        f"dimension{'s' if ndim != 1 else ''}", "spec-too-long", spec=repr(P(*spec)),
                        entries=len(spec), ndim=ndim)
    dims = []
    for e in spec + (None,) * (ndim - len(spec)):
        if e is None:
            dims.append(())
        else:
            dims.append(mesh.axis(e))
    partial = mesh.axis(partial) if partial else ()
    return _checked(mesh, Layout(tuple(dims), tuple(partial), op))


def layout_from_placements(mesh, placements, ndim) -> Layout:
    """A Layout from DTensor placements, one per mesh axis (several Shard(d) of one d: mesh order)."""
    placements = tuple(placements)
    if len(placements) != len(mesh.axis_names):
        raise MeshError(f"placements give one entry per mesh axis: the mesh has {len(mesh.axis_names)} "
                        f"({', '.join(mesh.axis_names)}), got {len(placements)}")
    dims = [[] for _ in range(ndim)]
    partial, ops = [], set()
    for name, pl in zip(mesh.axis_names, placements):
        if isinstance(pl, Shard):
            d = pl.dim + ndim if pl.dim < 0 else pl.dim
            if not 0 <= d < ndim:
                raise MeshError(f"Shard({pl.dim}) on mesh axis {name}: the array has only {ndim} "
                                f"dimension{'s' if ndim != 1 else ''}")
            dims[d].append(name)
        elif isinstance(pl, Partial):
            partial.append(name)
            ops.add(pl.reduce_op)
        elif not isinstance(pl, Replicate):
            raise MeshError(f"a placement is Shard(d), Replicate() or Partial(op), got {pl!r}")
    if len(ops) > 1:
        raise MeshError(f"one array cannot be a pending {' and a pending '.join(sorted(ops))} at once: "
                        f"mixed Partial ops {sorted(ops)}", "mixed-partial", ops=tuple(sorted(ops)))
    op = ops.pop() if ops else "sum"
    return _checked(mesh, Layout(tuple(tuple(d) for d in dims), tuple(partial), op))


def _checked(mesh, lay: Layout) -> Layout:
    used = lay.axes_used() + list(lay.partial)
    twice = sorted({a for a in used if used.count(a) > 1})
    if twice:
        raise MeshError(f"mesh axis {twice[0]} is used twice in one array's layout; each mesh axis shards at "
                        f"most one dimension (or holds a pending sum)", "axis-used-twice", axis=twice[0])
    if lay.op not in REDUCE_OPS:
        raise MeshError(f"Partial({lay.op!r}) is not built; the mesh reduces with {', '.join(REDUCE_OPS)}")
    return lay


def placements_of(mesh, lay: Layout) -> tuple:
    """DTensor placements of a Layout (MeshError when DTensor's mesh-order rule cannot say it)."""
    out = []
    for name in mesh.axis_names:
        d = lay.dim_of(name)
        if d is not None:
            axes = lay.dims[d]
            order = [mesh.axis_names.index(a) for a in axes]
            if order != sorted(order):
                raise MeshError(f"{P(*spec_of(lay))!r} shards dimension {d} over {', '.join(axes)} in that order; "
                                f"DTensor's placements shard a dimension in the mesh's order "
                                f"({', '.join(mesh.axis_names)})")
            out.append(Shard(d))
        elif name in lay.partial:
            out.append(Partial(lay.op))
        else:
            out.append(Replicate())
    return tuple(out)


def spec_of(lay: Layout) -> P:
    """The JAX spec of a Layout (trailing whole dimensions dropped; a pending sum is not in a spec)."""
    entries = [None if not axes else axes[0] if len(axes) == 1 else tuple(axes) for axes in lay.dims]
    while entries and entries[-1] is None:
        entries.pop()
    return P(*entries)


def _sub(axes):
    if all(len(a) == 1 for a in axes):
        return "".join(axes)
    return "{" + ",".join(axes) + "}"


def notation(name, dim_names, lay: Layout) -> str:
    """The book's notation: A[I_X, J_Y]{U_Z}."""
    parts = [dn + (f"_{_sub(axes)}" if axes else "") for dn, axes in zip(dim_names, lay.dims)]
    s = f"{name}[{', '.join(parts)}]"
    if lay.partial:
        s += "{U_" + _sub(lay.partial) + "}"
    return s
