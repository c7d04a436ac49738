"""
Sharding and the four collectives on whole arrays ("device d holds shard d"), and the four
cases of a sharded matrix multiply ("How to Scale Your Model", chapter 3).

Notation. A[I_X, J]: dimension I of A is split over mesh axis X (each device holds I/|X|
rows), J is not split (every device holds all of J). One mesh axis here: the n devices of the
Comm, on one switch (the lecture) or on any machine (make_comm(n, topology or preset name)).

Algorithms. Each collective takes algo=None: the machine's choice for the op and size
(topology.plan: the lecture's ring on a plain switch, NCCL's tuner on a GPU machine,
bidirectional rings on a torus), or any name of algorithms.ALGORITHMS[op] that can run on the
topology; one that cannot raises ValueError naming those that can. Each runs its Plan
(simcore.plan): the one decision, which the trace's collective record keeps. "ring" is the
lecture's flat ring over all n devices on every machine; NCCL's channel rings are "ring-nodes".
"""

from __future__ import annotations

import numpy as np

from .comm_sim import Comm
from .links import NVLINK4, LinkSpec
from .shapes import check_same_shape, check_split
from .plan import execute, resolve
from .topology import Nodes, Switch, Torus, switch


def make_comm(n, link=NVLINK4, byte_scale=1.0) -> Comm:
    """
    n devices; returns a comm_sim.Comm. link: a LinkSpec (n devices on one non-blocking switch,
    NVSwitch-like: the lecture), a topology of n devices (switch, nodes, torus), or a machine
    preset's name (topology_presets.PRESETS, e.g. "dgx-h100": its group of n chips). Anything
    else, or a topology of another size, raises ValueError at once.
    """
    if isinstance(link, LinkSpec):
        topo = switch(n, link)
    elif isinstance(link, (Switch, Nodes, Torus)):
        if link.n != n:
            raise ValueError(f"make_comm: {link.name} has {link.n} devices, not {n}; pass n={link.n}")
        topo = link
    elif isinstance(link, str):
        from .topology_presets import get_preset
        topo = get_preset(link).topology(int(n))
    else:
        raise ValueError(f"make_comm: link must be a LinkSpec, a topology (switch, nodes, torus) or a machine "
                         f"preset's name, got {type(link).__name__}")
    return Comm(topo, byte_scale=byte_scale)


def pick(comm, op, algo, nbytes):
    """The Plan `op` runs on comm for S = nbytes (the full array's bytes before byte_scale):
    comm.topology.plan (algo None: the machine's choice; else checked to run there)."""
    return resolve(comm.topology, op, float(nbytes) * comm.byte_scale, algo)


def _run(comm, op, algo, nbytes, *args, label):
    """Run `op` with `algo` (None: the topology's choice) on comm: execute its plan (timed as the
    machine runs it: on a GPU machine NCCL's protocol for the size)."""
    p = pick(comm, op, algo, nbytes)
    with execute(comm, p):
        return p.record.fn(comm, *args, label=label)


def shard(x, axis, n):
    """
    Split x along `axis` into n equal shards; shard d goes to device d. Returns a list of n
    views. Raises ValueError when the axis length is not divisible by n (a real system pads;
    here a silent wrong answer would be worse than an error).
    """
    check_split(x, axis, n)
    return np.split(np.asarray(x), n, axis=axis)


def unshard(shards, axis):
    """Concatenate the shards in device order (only for checking: no device sees all of it)."""
    return np.concatenate(shards, axis=axis)


def all_gather(comm, shards, axis, label="all-gather", algo=None):
    """
    Every device ends with the whole array: shards concatenated along `axis`, moved by the
    all-gather `algo` (None: the topology's choice; see the module docstring) and timed.
    Returns one full array per device.

    Why moveaxis + ravel: concatenating along axis 0 is the same as laying the flattened
    shards end to end, which is what the 1-D ring does.
    """
    n = len(shards)
    check_same_shape(shards, "all-gather")
    if not -np.ndim(shards[0]) <= axis < np.ndim(shards[0]):
        raise ValueError(f"all-gather: axis {axis} does not exist in shards of shape {np.shape(shards[0])}")
    moved = [np.moveaxis(np.asarray(s), axis, 0) for s in shards]
    flat = [m.ravel() for m in moved]
    full = _run(comm, "all-gather", algo, flat[0].nbytes * n, flat, {d: d for d in range(n)}, label=label)
    shape = (moved[0].shape[0] * n,) + moved[0].shape[1:]
    return [np.moveaxis(f.reshape(shape), 0, axis) for f in full]


def reduce_scatter(comm, arrays, axis, label="reduce-scatter", algo=None):
    """
    Every device holds a partial array of the same shape; afterwards device d holds shard d
    of the sum (split along `axis`); algo: see the module docstring.

    An algorithm may leave device r with another chunk than r (its record's owner(n); the
    ring: (r+1) mod n), so each device's chunks are laid out permuted (position owner[r] holds
    canonical shard r): device r then ends with canonical shard r.
    """
    n = len(arrays)
    check_same_shape(arrays, "reduce-scatter")
    check_split(arrays[0], axis, n, "reduce-scatter")
    moved = [np.moveaxis(np.asarray(a), axis, 0) for a in arrays]
    p = pick(comm, "reduce-scatter", algo, moved[0].nbytes)
    rec, algo = p.record, p.algo
    owner_of = rec.owner(n) if rec.owner is not None else {d: d for d in range(n)}
    shard_at = {owner_of[d]: d for d in range(n)}  # position c holds canonical shard shard_at[c]
    blocks = [np.split(m, n, axis=0) for m in moved]
    rotated = [np.concatenate([b[shard_at[c]].ravel() for c in range(n)]) for b in blocks]
    with execute(comm, p):
        pieces, owner = rec.fn(comm, rotated, label=label)
    shape = blocks[0][0].shape
    out = []
    for d in range(n):
        assert shard_at[owner[d]] == d  # the layout above relies on the algorithm's ownership
        out.append(np.moveaxis(pieces[d].reshape(shape), 0, axis))
    return out


def all_reduce(comm, arrays, algo=None, label="all-reduce"):
    """
    Sum the devices' arrays; every device gets the sum (same shape as the inputs).
    algo: None (the topology's choice for this size) or a key of algorithms.ALGORITHMS["all-reduce"]
    that runs on comm's topology ("ring", "rd", "direct", "hier", "torus"...).
    """
    check_same_shape(arrays, "all-reduce")
    shape = np.shape(arrays[0])
    out = _run(comm, "all-reduce", algo, np.asarray(arrays[0]).nbytes, [np.asarray(a).ravel() for a in arrays],
               label=label)
    return [o.reshape(shape) for o in out]


# ---------------------------------------------------------------------------------------
# The four cases of a sharded matmul
# ---------------------------------------------------------------------------------------
def matmul_case1(A_sh, B):
    """
    Case 1: A[I_X, J] · B[J, K] -> C[I_X, K]. The contracted J is not split: each device
    multiplies its own rows, no communication. Returns C's shards (split along I).
    """
    return [a @ B for a in A_sh]


def matmul_case2(comm, A_sh, B, algo=None):
    """
    Case 2: A[I, J_X] · B[J, K] (B replicated). Only A is split along the contracted J:
    all-gather A, then multiply locally. Returns a full C[I, K] on every device (each device
    did all the arithmetic). Alternative: take B[J_X, K] and all-reduce partial sums
    (case 3) — less arithmetic, but moves [I, K] instead of [I, J].
    """
    A_full = all_gather(comm, A_sh, axis=1, label="gather A", algo=algo)
    return [a @ B for a in A_full]


def matmul_case3(comm, A_sh, B_sh, scatter_axis=None, algo=None):
    """
    Case 3: A[I, J_X] · B[J_X, K]. Both split along the contracted J the same way: each
    device computes a partial sum C[I, K]{U_X}, then all-reduce (every device gets C) or,
    with scatter_axis=1, reduce-scatter (device d gets C[I, K_X] shard d). algo: the
    all-reduce's (None: the topology's choice); the reduce-scatter is the topology's choice.
    """
    partial = [a @ b for a, b in zip(A_sh, B_sh)]
    if scatter_axis is None:
        return all_reduce(comm, partial, algo, label="sum partial C")
    return reduce_scatter(comm, partial, scatter_axis, label="sum partial C")  # algo names the all-reduce


def matmul_case4(comm, A_sh, B_sh, algo=None):
    """
    Case 4: A[I_X, J] · B[J, K_X]. Both non-contracted dims on the same axis: device d could
    only compute the diagonal block C[I_d, K_d] — C[I_X, K_X] is not a valid sharding. So
    all-gather B first, which turns it into case 1. Returns C's shards (split along I).
    """
    B_full = all_gather(comm, B_sh, axis=1, label="gather B", algo=algo)
    return [a @ b for a, b in zip(A_sh, B_full)]
