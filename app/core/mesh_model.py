"""
The mesh as the app draws it, read from the records a mesh program leaves (Qt-free).

A mesh run is a registered program (simcore.mesh.programs) run on a named mesh over a machine.
What it leaves is all this module reads: `mesh.log` (one AxisCollective per collective over an
axis: op, axis, groups, bytes, algorithm and why, times, the closed form of one group), the
program's rows (the book's step, "In[B_X, D_Y] → In[B_X, D]: all-gather over Y …") and its
sharded arrays' `.steps` (before → after in the book's notation, with the collective that ran).
From those it builds a `MeshInfo`: the events in time order, every tensor's notation track, and
the geometry of the picture (devices in a grid by their mesh coordinates). Nothing here knows a
program by name: a new program is drawn by leaving the same records.

The notation is parsed back into a layout (`parse_notation`): per array dimension the mesh axes
that shard it, and the axes of a pending sum, so the view can draw each device's block of each
tensor from its coordinates.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

SHORT = {"all-gather": "AG", "reduce-scatter": "RS", "all-reduce": "AR", "all-to-all": "A2A", "ppermute": "PP"}


# ---------------------------------------------------------------------------------------
# The book's notation, read back
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lay:
    """A tensor's layout as its notation says it: name, dimension names, per dimension the mesh
    axes that shard it (major to minor), and the axes of a pending sum."""

    name: str
    dim_names: tuple
    dims: tuple
    partial: tuple = ()

    @property
    def text(self) -> str:
        def sub(axes):
            return "".join(axes) if all(len(a) == 1 for a in axes) else "{" + ",".join(axes) + "}"

        parts = [dn + (f"_{sub(ax)}" if ax else "") for dn, ax in zip(self.dim_names, self.dims)]
        return f"{self.name}[{', '.join(parts)}]" + ("{U_" + sub(self.partial) + "}" if self.partial else "")


_NOTATION = re.compile(r"^\s*([^\[\]\s]+)\[(.*)\](?:\{U_(.+)\})?\s*$")


def _axes(sub: str, axis_names) -> tuple:
    """'XY' -> ('X', 'Y'); '{dp,tp}' -> ('dp', 'tp'); names checked against the mesh's."""
    if sub.startswith("{") and sub.endswith("}"):
        out = tuple(a.strip() for a in sub[1:-1].split(","))
    elif sub in axis_names:
        out = (sub,)
    else:
        out = tuple(sub)
    for a in out:
        if a not in axis_names:
            raise ValueError(f"{sub!r} names no axis of the mesh ({', '.join(axis_names)})")
    return out


@lru_cache(maxsize=4096)
def _parse(text: str, axis_names: tuple) -> Lay:
    return _parse_notation(text, axis_names)


def parse_notation(text: str, axis_names) -> Lay:
    """'A[I_X, J_Y]{U_Z}' -> Lay('A', ('I', 'J'), (('X',), ('Y',)), ('Z',)). ValueError if it is not
    the book's notation over these axes (memoised: a frame reads every tensor's)."""
    return _parse(text, tuple(axis_names))


def _parse_notation(text: str, axis_names) -> Lay:
    """'A[I_X, J_Y]{U_Z}' -> Lay('A', ('I', 'J'), (('X',), ('Y',)), ('Z',)). ValueError if it is not
    the book's notation over these axes."""
    m = _NOTATION.match(text)
    if not m:
        raise ValueError(f"{text!r} is not the book's notation A[I_X, J]")
    name, inner, part = m.group(1), m.group(2), m.group(3)
    dim_names, dims = [], []
    for piece in _split_dims(inner):
        dn, _, sub = piece.strip().partition("_")
        dim_names.append(dn)
        dims.append(_axes(sub, axis_names) if sub else ())
    return Lay(name, tuple(dim_names), tuple(dims), _axes(part, axis_names) if part else ())


def _split_dims(inner: str):
    """Split 'B_X, D_{dp,tp}' at the commas outside braces."""
    out, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


_STEP = re.compile(r"(\S+\[[^\]]*\](?:\{U_[^}]+\})?) → (\S+\[[^\]]*\](?:\{U_[^}]+\})?)")


def step_notation(text: str):
    """(before, after) from a program row's or a Step's text ('AG_Y  A[I_X, J_Y] → A[I_X, J]: …'),
    or None when it names no tensor."""
    m = _STEP.search(text)
    return (m.group(1), m.group(2)) if m else None


# ---------------------------------------------------------------------------------------
# The records, as the view reads them
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class MeshEvent:
    """One collective over a mesh axis (from an AxisCollective), with the tensor it changed."""

    op: str
    axis: tuple
    axis_name: str
    groups: tuple  # mesh positions of every group, in the group's order
    nbytes: float  # S of one group
    algo: str
    why: str
    label: str
    t_start: float
    t_end: float
    coll: int  # its collective's id in the trace
    n_messages: int
    form: float  # the closed form of one group alone (seconds)
    form_text: str
    step: str = ""  # the program's row text (the book's line), "" if it has none
    published: float = float("nan")  # the program row's published time
    published_text: str = ""
    tensor: str = ""  # the tensor it changed ("" when the records name none)
    before: str = ""
    after: str = ""
    plan: object = None  # the AxisPlan (a simcore.plan.Plan) it ran: algo, why, form and terms are its
    inputs: tuple = ()  # each mesh position's array before it (the engine's record; () if it kept none)
    outputs: tuple = ()  # ... and after it
    dim: int = 0  # the dimension an all-gather concatenates or a reduce-scatter splits

    @property
    def time(self) -> float:
        return self.t_end - self.t_start

    @property
    def short(self) -> str:
        return f"{SHORT.get(self.op, self.op)}_{self.axis_name}"


@dataclass(frozen=True, eq=False)
class TensorTrack:
    """A tensor's notation over time: `first` until its first change, then each event's after."""

    name: str
    first: str
    changes: tuple  # (event index, before, after), in time order
    fine: tuple  # per dimension: how many blocks its finest layout cuts it into
    fine_axes: tuple  # per dimension: the axes of that finest layout

    def at(self, events, t: float, eps: float = 0.0):
        """(notation now, the event changing it now or None, before, after)."""
        now = self.first
        for k, before, after in self.changes:
            e = events[k]
            if t <= e.t_start + eps:  # at its start nothing has moved yet
                break
            if t < e.t_end - eps:
                return before, k, before, after
            now = after
        return now, None, now, now


MEMORY_ORDER = ("weights", "KV cache", "activations", "buffers in flight")  # simcore.mesh.programs' classes


@dataclass(frozen=True, eq=False)
class MeshInfo:
    """What the mesh view and the text panels read for one mesh run."""

    program: str
    words: dict  # {"en": ..., "zh": ...}
    axis_names: tuple
    shape: tuple
    dev: np.ndarray  # machine device id of every mesh position (row-major)
    pos_of_dev: np.ndarray  # mesh position of every device
    machine: str  # the topology's name
    frames: tuple  # groups of mesh positions framed together (a node of the machine), may be ()
    events: tuple  # MeshEvent, in time order
    tensors: tuple  # TensorTrack
    max_err: float
    notes: tuple
    published_total: float
    published_text: str
    simulated_total: float
    memory: tuple = ()  # per position {class: bytes}
    columns: dict = field(default_factory=dict)  # the trace's message columns (src, dst, chunk, t_end, coll)

    @property
    def n(self) -> int:
        return int(math.prod(self.shape))

    @property
    def describe(self) -> str:
        return " × ".join(f"{a}={s}" for a, s in zip(self.axis_names, self.shape))

    def coord(self, p: int) -> tuple:
        return tuple(int(c) for c in np.unravel_index(int(p), self.shape))

    def size(self, axes) -> int:
        return int(math.prod(self.shape[self.axis_names.index(a)] for a in axes))

    def memory_classes(self) -> tuple:
        """The memory classes some position holds bytes of (MeshInfo.memory), in one fixed order:
        weights, KV cache, activations, buffers in flight, then any other in the engine's order."""
        seen = []
        for row in self.memory:
            for c, b in (row or {}).items():
                if b > 0 and c not in seen:
                    seen.append(c)
        first = [c for c in MEMORY_ORDER if c in seen]
        return tuple(first + [c for c in seen if c not in first])

    def memory_totals(self) -> np.ndarray:
        """Every position's bytes, all classes summed (NaN where the run did not count a position:
        a mesh over MPI ranks counts its own)."""
        return np.array([sum(row.values()) if row is not None else np.nan for row in self.memory], dtype=float)

    def event_at(self, t: float, eps: float = 0.0) -> int:
        """The event shown at t: the last one started by t (the first before any); −1 with none."""
        k = -1
        for i, e in enumerate(self.events):
            if e.t_start <= t + eps:
                k = i
        return 0 if k < 0 and self.events else k

    def buffers(self, coll: int, n_chunks: int) -> np.ndarray | None:
        """Every device's buffer before trace collective `coll` (its event's recorded arrays), as
        the Buffers tab reads a collective's inputs: (n, L), row d device d's, chunk c at
        simcore.trace.chunk_bounds(L, n_chunks)[c] (buffer_row). None when the event kept no arrays
        or its op has no such buffer (all-to-all, ppermute). Cached per collective."""
        cache = self.__dict__.setdefault("_buffers", {})
        if coll not in cache:
            e = next((e for e in self.events if e.coll == coll), None)
            cache[coll] = None if e is None else event_buffers(e, n_chunks, self.pos_of_dev)
        return cache[coll]

    def track(self, name) -> TensorTrack | None:
        return next((tr for tr in self.tensors if tr.name == name), None)

    # -- where a device's block lies -----------------------------------------------------------
    def block(self, lay: Lay, p: int) -> tuple:
        """Per dimension the fraction [lo, hi) of the whole dimension mesh position p holds."""
        coord = self.coord(p)
        out = []
        for axes in lay.dims:
            if not axes:
                out.append((0.0, 1.0))
                continue
            sizes = [self.size((a,)) for a in axes]
            idx = int(np.ravel_multi_index(tuple(coord[self.axis_names.index(a)] for a in axes), sizes))
            k = math.prod(sizes)
            out.append((idx / k, (idx + 1) / k))
        return tuple(out)

    def fine_grid(self, tr) -> tuple:
        """(rows, cols) of a tensor's fine blocks as drawn: a 1-D tensor is one row."""
        return (tr.fine[0] if len(tr.fine) > 1 else 1), tr.fine[-1]

    def masks(self, tr, lay: Lay) -> np.ndarray:
        """(n, rows, cols) bool: the fine blocks of `tr` each position holds under `lay` (vectorised
        `block`, cached per tensor and layout)."""
        cache = self.__dict__.setdefault("_masks", {})
        key = (tr.name, lay)
        if key in cache:
            return cache[key]
        R, C = self.fine_grid(tr)
        coords = np.stack(np.unravel_index(np.arange(self.n), self.shape), axis=1)
        spans = []
        dims = lay.dims if len(lay.dims) > 1 else ((),) + tuple(lay.dims)
        for axes, F in zip(dims[:1] + dims[-1:], (R, C)):
            if not axes:
                lo, hi = np.zeros(self.n, int), np.full(self.n, F)
            else:
                sizes = [self.size((a,)) for a in axes]
                idx = np.ravel_multi_index(tuple(coords[:, self.axis_names.index(a)] for a in axes), sizes)
                k = math.prod(sizes)
                lo, hi = np.floor(idx * F / k).astype(int), np.ceil((idx + 1) * F / k).astype(int)
            spans.append((lo, hi))
        (r0, r1), (c0, c1) = spans
        rows, cols = np.arange(R), np.arange(C)
        rm = (rows[None, :] >= r0[:, None]) & (rows[None, :] < r1[:, None])
        cm = (cols[None, :] >= c0[:, None]) & (cols[None, :] < c1[:, None])
        out = rm[:, :, None] & cm[:, None, :]
        out.setflags(write=False)
        cache[key] = out
        return out

    def spans(self, tr, lay: Lay) -> np.ndarray:
        """(n, 4): each position's block under `lay` as fine-block rows [r0, r1) and columns [c0, c1)
        (cached with masks)."""
        cache = self.__dict__.setdefault("_spans", {})
        key = (tr.name, lay)
        if key not in cache:
            m = self.masks(tr, lay)
            rows, cols = m.any(axis=2), m.any(axis=1)
            r0, c0 = rows.argmax(axis=1), cols.argmax(axis=1)
            r1 = rows.shape[1] - rows[:, ::-1].argmax(axis=1)
            c1 = cols.shape[1] - cols[:, ::-1].argmax(axis=1)
            cache[key] = np.stack([r0, r1, c0, c1], axis=1)
        return cache[key]

    def held_cells(self, tr, now: Lay, k: int | None, t: float) -> np.ndarray:
        """(n, rows, cols) bool: the fine blocks of `tr` each position holds at t. Outside a
        collective its layout's; during an all-gather that changes it, its own block and those of
        the group members whose chunks have all landed (the trace's messages)."""
        held = self.masks(tr, now)
        if k is None or self.events[k].op != "all-gather":
            return held
        e = self.events[k]
        _, _, have = self.arrivals(k, t)
        g = len(e.groups[0])
        members = np.zeros((self.n, g), dtype=np.int64)
        for grp in e.groups:
            members[list(grp)] = grp
        have = have | (members == np.arange(self.n)[:, None])
        got = held[members] & have[:, :, None, None]  # (n, g, rows, cols)
        return got.any(axis=1)

    def arrivals(self, k: int, t: float):
        """For event k at time t: (landed, total) per device position — the messages into each
        position that have landed by t, and all of them — and per position × group index, whether
        every message carrying that group member's chunks has landed (all-gather's pieces)."""
        e = self.events[k]
        cols = self.columns
        n = self.n
        sel = cols["coll"] == e.coll
        dst = self.pos_of_dev[cols["dst"][sel]]
        t_end = cols["t_end"][sel]
        landed = t_end <= t
        total = np.bincount(dst, minlength=n)
        got = np.bincount(dst[landed], minlength=n)
        g = len(e.groups[0]) if e.groups else 1
        member = cols["chunk"][sel] % g
        key = dst * g + member
        need = np.bincount(key, minlength=n * g).reshape(n, g)
        have = np.bincount(key[landed], minlength=n * g).reshape(n, g)
        return got, total, (have >= need)


BUFFER_OPS = ("all-gather", "reduce-scatter", "all-reduce")  # ops whose buffers are chunks of one array


def buffer_row(a, op: str, dim: int, g: int, n_chunks: int) -> np.ndarray | None:
    """
    One position's array `a` as the engine's ring buffer (simcore.mesh.device_mesh: data[position,
    chunk, element]) laid out in the trace's chunk order: g chunks of q elements — `dim` first and
    flattened (all-gather: the position's own chunk; reduce-scatter: its g blocks along `dim`;
    all-reduce: the flat array, zero-padded to g·q) — each cut into n_chunks/g equal lanes (a
    bidirectional or multi-axis ring), chunk j + t·g being lane t of chunk j. Returns (g·q,)
    (all-gather: q, the own chunk alone), or None when the lanes are not equal (the trace's
    chunk_bounds would not match them).
    """
    a = np.asarray(a)
    if op == "all-reduce":
        flat = a.reshape(-1)
        q = -(-flat.size // g)
        if flat.size != g * q:
            flat = np.concatenate([flat, np.zeros(g * q - flat.size, flat.dtype)])
    else:
        flat = np.moveaxis(a, dim, 0).reshape(-1)
    lanes = max(1, n_chunks // g)
    q = flat.size if op == "all-gather" else flat.size // g
    if q % lanes:
        return None
    if op == "all-gather" or lanes == 1:
        return flat
    return flat.reshape(g, lanes, q // lanes).transpose(1, 0, 2).reshape(-1)


def event_buffers(e, n_chunks: int, pos_of_dev) -> np.ndarray | None:
    """(n, L): every device's buffer before mesh event `e` in the trace's chunk order (buffer_row),
    built from the arrays the engine recorded; an all-gather's row holds its own chunk (lanes
    j + t·g) and zeros where the others' chunks will land. None: no arrays kept, another op, the
    multi-axis ring (the trace names one chunk of the several a message carries), or unequal lanes."""
    if not e.inputs or e.op not in BUFFER_OPS or not e.groups or e.algo == "multi-axis":
        return None  # (a multi-axis message carries several chunks under the first one's index)
    g = len(e.groups[0])
    n = len(e.inputs)
    rows = [buffer_row(a, e.op, e.dim, g, n_chunks) for a in e.inputs]
    if any(r is None for r in rows):
        return None
    if e.op != "all-gather":
        out = np.stack(rows)[np.asarray(pos_of_dev)]  # row d: the array of device d's position
        return out.astype(float, copy=False)
    lanes = max(1, n_chunks // g)
    w = rows[0].size // lanes
    out = np.zeros((n, g * rows[0].size))
    member = np.zeros(n, dtype=np.int64)
    for grp in e.groups:
        member[list(grp)] = np.arange(g)
    dev = np.empty(n, dtype=np.int64)
    dev[np.asarray(pos_of_dev)] = np.arange(n)  # the device at each position
    for p, r in enumerate(rows):
        d = int(dev[p])
        for t in range(lanes):
            c = int(member[p]) + t * g
            out[d, c * w:(c + 1) * w] = r[t * w:(t + 1) * w]
    return out


def _finest(lays, ndim, axis_names):
    """Per dimension, the layout among `lays` that cuts it into the most blocks (its axes)."""
    out = []
    for d in range(ndim):
        best = ()
        for lay in lays:
            if d < len(lay.dims) and len(lay.dims[d]) > len(best):
                best = lay.dims[d]
        out.append(best)
    return tuple(out)


def _synthetic(e_op, axis, label):
    """(before, after) for a collective whose records name no tensor: its buffer, named by its
    label, as the op changes it (one dimension)."""
    name = re.sub(r"\W+", "_", label.strip()) or "buf"
    sub = "".join(axis) if all(len(a) == 1 for a in axis) else "{" + ",".join(axis) + "}"
    if e_op == "all-gather":
        return f"{name}[I_{sub}]", f"{name}[I]"
    if e_op == "reduce-scatter":
        return f"{name}[I]{{U_{sub}}}", f"{name}[I_{sub}]"
    if e_op == "all-reduce":
        return f"{name}[I]{{U_{sub}}}", f"{name}[I]"
    return f"{name}[I_{sub}]", f"{name}[I_{sub}]"


def frames_of(topology, dev) -> tuple:
    """The machine's own grouping of the mesh's positions (a node's devices, when the machine has
    nodes: its `node(d)`), as tuples of positions; () when it has none or one."""
    node = getattr(topology, "node", None)
    if not callable(node):
        return ()
    by = {}
    for p, d in enumerate(np.asarray(dev).tolist()):
        by.setdefault(int(node(int(d))), []).append(p)
    return tuple(tuple(v) for _, v in sorted(by.items())) if len(by) > 1 else ()


def mesh_info(res, words=None) -> MeshInfo:
    """Read a program's Result (simcore.mesh.programs) into a MeshInfo."""
    mesh = res.mesh
    names = tuple(mesh.axis_names)
    dev = np.asarray(mesh.dev, dtype=np.int64)
    pos_of_dev = np.empty(mesh.n, dtype=np.int64)
    pos_of_dev[dev] = np.arange(mesh.n)
    log = list(mesh.log)
    # the notation each collective changed: the sharded arrays' own Steps first (exact), then the rows
    by_rec = {}
    for cls in (res.tensors or {}).values():
        for arr in cls.values():
            for s in getattr(arr, "steps", ()):
                if getattr(s, "collective", None) is not None:
                    by_rec[id(s.collective)] = (s.before, s.after)
    rows = list(res.rows)
    row_of = {}
    i = 0
    for r in rows:  # rows follow the log's order; match op, axis and time
        while i < len(log) and not (log[i].op == r.op and log[i].axis_name == r.axis
                                    and abs(log[i].time - r.simulated) <= 1e-12 * max(1.0, r.simulated)):
            i += 1
        if i < len(log):
            row_of[i] = r
            i += 1
    events = []
    for i, rec in enumerate(log):
        r = row_of.get(i)
        pair = by_rec.get(id(rec)) or (step_notation(r.step) if r is not None else None)
        if pair is None:
            pair = _synthetic(rec.op, rec.axis, rec.label or rec.op)
        try:
            tensor = parse_notation(pair[0], names).name
            parse_notation(pair[1], names)
        except ValueError:
            pair, tensor = ("", ""), ""
        groups = tuple(tuple(int(pos_of_dev[d]) for d in grp) for grp in rec.groups)
        events.append(MeshEvent(rec.op, tuple(rec.axis), rec.axis_name, groups, float(rec.nbytes), rec.algo, rec.why,
                                rec.label, float(rec.t_start), float(rec.t_end), int(rec.coll), int(rec.n_messages),
                                float(rec.form), rec.form_text, r.step if r is not None else "",
                                float(r.published) if r is not None else float("nan"),
                                r.form if r is not None else "", tensor, pair[0], pair[1], rec.plan,
                                tuple(rec.inputs), tuple(rec.outputs), int(rec.dim)))
    # every tensor: the program's sharded arrays and every tensor an event changed
    tracks = {}
    for cls in (res.tensors or {}).values():
        for arr in cls.values():
            if hasattr(arr, "layout") and hasattr(arr, "name"):
                first = arr.steps[0].before if getattr(arr, "steps", ()) else str(arr)
                tracks.setdefault(arr.name, {"first": first, "changes": []})
    for k, e in enumerate(events):
        if not e.tensor:
            continue
        tr = tracks.setdefault(e.tensor, {"first": e.before, "changes": []})
        if not tr["changes"] and tr["first"] != e.before:
            tr["first"] = e.before
        tr["changes"].append((k, e.before, e.after))
    tensors = []
    for name, tr in tracks.items():
        lays = [parse_notation(tr["first"], names)] + [parse_notation(x, names) for _, b, a in tr["changes"]
                                                       for x in (b, a)]
        ndim = len(lays[0].dims)
        fine_axes = _finest(lays, ndim, names)
        fine = tuple(int(math.prod(mesh.size(a) for a in axes)) if axes else 1 for axes in fine_axes)
        tensors.append(TensorTrack(name, tr["first"], tuple(tr["changes"]), fine, fine_axes))
    trace = mesh.comm.trace
    columns = {c: np.asarray(trace.column(c)) for c in ("src", "dst", "chunk", "t_start", "t_end")}
    columns["coll"] = np.asarray(trace.column("coll"))
    return MeshInfo(res.name, dict(words or {}), names, tuple(mesh.shape), dev, pos_of_dev, mesh.topology.name,
                    frames_of(mesh.topology, dev), tuple(events), tuple(tensors), float(res.max_err),
                    tuple(res.notes), float(res.published_total), res.published_text, float(res.simulated_total),
                    tuple(res.memory), columns)


# ---------------------------------------------------------------------------------------
# Geometry: devices in a grid by their mesh coordinates
# ---------------------------------------------------------------------------------------
def grid_axes(ndim: int):
    """(row axes, column axes) as axis indices: the major half down, the minor half across."""
    split = ndim // 2
    return tuple(range(split)), tuple(range(split, ndim))


def _cuts(shape_axes, gap):
    """Per index along a flattened run of axes: the extra gap before it (a wider gap where a
    more major axis steps, so the minor axis's runs stand apart)."""
    sizes = list(shape_axes)
    total = math.prod(sizes) if sizes else 1
    extra = np.zeros(total)
    for i in range(total):
        # count how many axes (beyond the minor one) stepped since the start: gaps grow with rank
        e = 0.0
        for depth in range(len(sizes) - 1):
            inner = math.prod(sizes[depth + 1:])
            e += (i // inner) * gap * (len(sizes) - 1 - depth)
        extra[i] = e
    return extra


def grid_rects(shape, x0, y0, width, height, gap=None, max_aspect=3.2):
    """
    The rectangle (x, y, w, h) of every mesh position (row-major): the major half of the axes
    down, the minor half across (grid_axes), one cell per coordinate, wider gaps between runs of a
    minor axis when several axes share a direction. Cells keep w/h within [1/max_aspect,
    max_aspect] and the grid is centred in the area.
    """
    shape = tuple(int(s) for s in shape)
    rows_ax, cols_ax = grid_axes(len(shape))
    rs, cs = [shape[i] for i in rows_ax], [shape[i] for i in cols_ax]
    R, C = (math.prod(rs) if rs else 1), (math.prod(cs) if cs else 1)
    if gap is None:
        gap = max(2.0, min(12.0, 0.12 * min(width / max(C, 1), height / max(R, 1))))
    ex_r, ex_c = _cuts(rs, gap), _cuts(cs, gap)
    cw = (width - gap * (C - 1) - ex_c[-1]) / C
    ch = (height - gap * (R - 1) - ex_r[-1]) / R
    cw, ch = max(cw, 1.0), max(ch, 1.0)
    cw, ch = min(cw, ch * max_aspect), min(ch, cw * max_aspect)
    W = C * cw + gap * (C - 1) + ex_c[-1]
    H = R * ch + gap * (R - 1) + ex_r[-1]
    ox, oy = x0 + (width - W) / 2, y0 + (height - H) / 2
    n = math.prod(shape)
    out = np.empty((n, 4))
    coords = np.stack(np.unravel_index(np.arange(n), shape), axis=1) if n else np.zeros((0, len(shape)), int)
    ri = np.ravel_multi_index(tuple(coords[:, i] for i in rows_ax), rs) if rs else np.zeros(n, int)
    ci = np.ravel_multi_index(tuple(coords[:, i] for i in cols_ax), cs) if cs else np.zeros(n, int)
    out[:, 0] = ox + ci * (cw + gap) + ex_c[ci]
    out[:, 1] = oy + ri * (ch + gap) + ex_r[ri]
    out[:, 2] = cw
    out[:, 3] = ch
    return out


def outline_rects(rects, groups, pad):
    """
    Per group of positions: one rectangle around it when its cells fill their bounding box (a
    row or column of the grid), else one per cell. Returns [(group index, (x, y, w, h)), ...].
    """
    out = []
    cx, cy = rects[:, 0] + rects[:, 2] / 2, rects[:, 1] + rects[:, 3] / 2
    for gi, grp in enumerate(groups):
        idx = np.asarray(grp, dtype=np.int64)
        x0, y0 = rects[idx, 0].min(), rects[idx, 1].min()
        x1, y1 = (rects[idx, 0] + rects[idx, 2]).max(), (rects[idx, 1] + rects[idx, 3]).max()
        inside = np.count_nonzero((cx >= x0) & (cx <= x1) & (cy >= y0) & (cy <= y1))
        if inside == len(idx):
            out.append((gi, (x0 - pad, y0 - pad, x1 - x0 + 2 * pad, y1 - y0 + 2 * pad)))
        else:
            for p in idx.tolist():
                x, y, w, h = rects[p]
                out.append((gi, (x - pad / 2, y - pad / 2, w + pad, h + pad)))
    return out
