"""
shard_map — per-device programs on a mesh, as jax.shard_map writes them:

    def f(x, w):                       # x, w: this device's blocks
        y = x @ w                      # a partial sum over Y
        return psum(y, "Y")            # every device of its Y group gets the sum

    out = mesh.run(f, in_specs=(P("X", "Y"), P("Y", None)), out_specs=P("X", None))(x, w)

f runs once per device, each on its own thread; a collective (psum, all_gather, psum_scatter,
all_to_all, ppermute) waits until every device has called it, then runs once over the named
axis through Mesh.collective — every group at once on the one clock — and hands each device
its result. Every device must call the same collectives in the same order (as under SPMD);
if one does not, the run stops with a sentence naming the first device that differs.
"""

from __future__ import annotations

import threading

import numpy as np

from .errors import MeshError
from .placement import P

_here = threading.local()


def _ctx():
    run = getattr(_here, "run", None)
    if run is None:
        raise MeshError("psum, all_gather, psum_scatter, all_to_all, ppermute and axis_index work only inside "
                        "a function run by mesh.run(f, in_specs, out_specs)")
    return run, _here.pos


def axis_index(axis) -> int:
    """This device's index along a mesh axis (a tuple of axes: major to minor)."""
    run, pos = _ctx()
    mesh = run.mesh
    names = mesh.axis(axis)
    coord = mesh.coord(pos)
    idx = 0
    for a in names:
        i = mesh.axis_names.index(a)
        idx = idx * mesh.shape[i] + coord[i]
    return idx


def psum(x, axis):
    """The sum of x over the devices of this device's group of `axis` (all-reduce)."""
    return _call("all-reduce", axis, x, {})


def all_gather(x, axis, dim=0):
    """The blocks of this device's group of `axis`, concatenated along dim (tiled, as jax's tiled=True)."""
    return _call("all-gather", axis, x, {"dim": dim})


def psum_scatter(x, axis, dim=0):
    """Block i (along dim) of the group's sum, on the group's device i (reduce-scatter, tiled)."""
    return _call("reduce-scatter", axis, x, {"dim": dim})


def all_to_all(x, axis, split_dim, concat_dim):
    """x cut into g blocks along split_dim, block i to the group's device i; received blocks
    concatenated along concat_dim."""
    return _call("all-to-all", axis, x, {"split_dim": split_dim, "concat_dim": concat_dim})


def ppermute(x, axis, perm):
    """Send x along the group's (source, destination) index pairs; who receives nothing gets zeros."""
    return _call("ppermute", axis, x, {"perm": tuple(tuple(p) for p in perm)})


def _call(op, axis, x, kw):
    run, pos = _ctx()
    return run.meet(pos, (op, run.mesh.axis(axis), kw), np.asarray(x))


class _Done:
    pass


_DONE = _Done()


class _Run:
    def __init__(self, mesh, label):
        self.mesh, self.label = mesh, label
        n = mesh.n
        self.calls = [None] * n
        self.values = [None] * n
        self.results = [None] * n
        self.error = None
        self.barrier = threading.Barrier(n, action=self._all_met)

    def meet(self, pos, call, value):
        self.calls[pos], self.values[pos] = call, value
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            raise _Stopped() from None
        if self.error is not None:
            raise _Stopped()
        return self.results[pos]

    def _all_met(self):
        """Runs once, on the last device to arrive: every device has called the same thing?"""
        calls = self.calls
        try:
            first = calls[0]
            for p, c in enumerate(calls):
                if c is not first and not _same(c, first):
                    raise MeshError(f"device {p} (mesh coordinate {self.mesh.coord(p)}) called {_what(c)} while "
                                    f"device 0 called {_what(first)}: every device must call the same collectives "
                                    f"in the same order")
            if first is _DONE:
                return
            op, axis, kw = first
            shapes = {np.shape(v) for v in self.values}
            if len(shapes) != 1:
                raise MeshError(f"{op} over {''.join(axis)}: every device must pass the same shape, got "
                                f"{sorted(shapes)}")
            out = self.mesh.collective(op, axis, self.values, label=self.label, **kw)
            self.results = list(out)
        except BaseException as e:  # noqa: BLE001 — handed to the caller of mesh.run
            self.error = e


class _Stopped(Exception):
    """Another device's failure stopped this one."""


def _same(a, b):
    if a is _DONE or b is _DONE:
        return a is b
    return a[0] == b[0] and a[1] == b[1] and a[2] == b[2]


def _what(c):
    if c is _DONE:
        return "return (it finished)"
    op, axis, _ = c
    return f"{op} over {''.join(axis) if all(len(a) == 1 for a in axis) else ','.join(axis)}"


def run(mesh, f, in_specs, out_specs, label="shard_map"):
    """mesh.run: returns g(*args) that cuts each argument by its in_spec (a global numpy array
    or a ShardedArray), runs f once per device on its blocks, and returns the ShardedArray(s)
    its out_specs describe."""
    from .sharded import ShardedArray

    def g(*args):
        specs = in_specs if isinstance(in_specs, (tuple, list)) and not isinstance(in_specs, P) else (in_specs,)
        if len(specs) != len(args):
            raise MeshError(f"in_specs gives {len(specs)} specs for {len(args)} arguments")
        locals_ = []
        for a, s in zip(args, specs):
            if isinstance(a, ShardedArray):
                a = a.redistribute(s) if a.layout != ShardedArray.layout_for(mesh, s, len(a.shape)) else a
                locals_.append(a.blocks)
            else:
                locals_.append(ShardedArray.from_full(mesh, a, s).blocks)
        if len(mesh.held) < mesh.n:  # a mesh over ranks: this process runs f for its own position(s)
            outs = _run_held(mesh, f, locals_, label)
            return _outputs(mesh, outs, out_specs)
        r = _Run(mesh, label)
        outs, errors = [None] * mesh.n, [None] * mesh.n

        def device(p):
            _here.run, _here.pos = r, p
            try:
                outs[p] = f(*[blocks[p] for blocks in locals_])
                r.meet(p, _DONE, None)
            except _Stopped:
                pass
            except BaseException as e:  # noqa: BLE001
                errors[p] = e
                r.barrier.abort()
            finally:
                _here.run = None

        threads = [threading.Thread(target=device, args=(p,), daemon=True) for p in range(mesh.n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if r.error is not None:
            raise r.error
        first = next((e for e in errors if e is not None), None)
        if first is not None:
            raise first
        return _outputs(mesh, outs, out_specs)

    return g


def _outputs(mesh, outs, out_specs):
    """The ShardedArray(s) out_specs describe, from f's return value at every held position."""
    from .sharded import ShardedArray

    many = isinstance(out_specs, (tuple, list)) and not isinstance(out_specs, P)
    ospecs = out_specs if many else (out_specs,)
    per = mesh.each(lambda o: o if many else (o,), outs)
    if any(len(per[p]) != len(ospecs) for p in mesh.held):
        raise MeshError(f"f returned {len(mesh.first(per))} values but out_specs gives {len(ospecs)}")
    result = []
    for i, s in enumerate(ospecs):
        blocks = mesh.each(lambda o: np.asarray(o[i]), per)
        lay = ShardedArray.layout_for(mesh, s, mesh.first(blocks).ndim)
        shape = list(mesh.first(blocks).shape)
        for d, axes in enumerate(lay.dims):
            for a in axes:
                shape[d] *= mesh.size(a)
        result.append(ShardedArray(mesh, lay, blocks, tuple(shape), name=f"out{i}" if many else "out"))
    return tuple(result) if many else result[0]


class _HeldRun:
    """mesh.run on a mesh over ranks: each collective is the rank's own MPI call, after every rank
    has said it calls the same one (mesh.agree), so a program that differs stops with a sentence
    instead of a hang."""

    def __init__(self, mesh, label):
        self.mesh, self.label = mesh, label

    def meet(self, pos, call, value):
        mesh = self.mesh
        mesh.agree(pos, None if call is _DONE else (call[0], call[1], call[2], np.shape(value)),
                   _what(call))
        if call is _DONE:
            return None
        op, axis, kw = call
        values = [None] * mesh.n
        values[pos] = value
        return mesh.collective(op, axis, values, label=self.label, **kw)[pos]


def _run_held(mesh, f, locals_, label):
    r = _HeldRun(mesh, label)
    outs = [None] * mesh.n
    for p in mesh.held:
        _here.run, _here.pos = r, p
        try:
            outs[p] = f(*[blocks[p] for blocks in locals_])
            r.meet(p, _DONE, None)
        finally:
            _here.run = None
    return outs
