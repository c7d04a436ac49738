"""
Sharding and the four collectives on whole arrays ("device d holds shard d"), and the four
cases of a sharded matrix multiply ("How to Scale Your Model", chapter 3).

Notation. A[I_X, J]: dimension I of A is split over mesh axis X (each device holds I/|X|
rows), J is not split (every device holds all of J). One mesh axis here: n devices on one
switch.
"""

from __future__ import annotations

import numpy as np

from .algorithms import ALLREDUCE_ALGOS, ALLTOALL_ALGOS
from .collectives import allgather_ring, reduce_scatter_ring
from .comm_sim import Comm
from .links import NVLINK4
from .topology import switch


def make_comm(n, link=NVLINK4, byte_scale=1.0) -> Comm:
    """n devices on one non-blocking switch (NVSwitch-like); returns a comm_sim.Comm."""
    return Comm(switch(n, link), byte_scale=byte_scale)


def _check_split(x, axis, n, what="shard"):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{what}: the number of devices must be a whole number >= 1, got {n!r}")
    x = np.asarray(x)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{what}: axis {axis} does not exist in an array of shape {x.shape}")
    if x.shape[axis] % n:
        raise ValueError(f"{what}: axis {axis} has length {x.shape[axis]}, "
                         f"which is not divisible by {n} devices")


def shard(x, axis, n):
    """
    Split x along `axis` into n equal shards; shard d goes to device d. Returns a list of n
    views. Raises ValueError when the axis length is not divisible by n (a real system pads;
    here a silent wrong answer would be worse than an error).
    """
    _check_split(x, axis, n)
    return np.split(np.asarray(x), n, axis=axis)


def unshard(shards, axis):
    """Concatenate the shards in device order (only for checking: no device sees all of it)."""
    return np.concatenate(shards, axis=axis)


def all_gather(comm, shards, axis, label="all-gather"):
    """
    Every device ends with the whole array: shards concatenated along `axis`, moved by the
    ring all-gather and timed. Returns one full array per device.

    Why moveaxis + ravel: concatenating along axis 0 is the same as laying the flattened
    shards end to end, which is what the 1-D ring does.
    """
    n = len(shards)
    _check_same_shape(shards, "all-gather")
    if not -np.ndim(shards[0]) <= axis < np.ndim(shards[0]):
        raise ValueError(f"all-gather: axis {axis} does not exist in shards of shape {np.shape(shards[0])}")
    moved = [np.moveaxis(np.asarray(s), axis, 0) for s in shards]
    flat = [m.ravel() for m in moved]
    full = allgather_ring(comm, flat, {d: d for d in range(n)}, label=label)
    shape = (moved[0].shape[0] * n,) + moved[0].shape[1:]
    return [np.moveaxis(f.reshape(shape), 0, axis) for f in full]


def reduce_scatter(comm, arrays, axis, label="reduce-scatter"):
    """
    Every device holds a partial array of the same shape; afterwards device d holds shard d
    of the sum (split along `axis`).

    The ring leaves device r with chunk (r+1) mod n, so each device's chunks are laid out
    rotated by one (position c holds canonical shard (c−1) mod n): device r then ends with
    canonical shard r.
    """
    n = len(arrays)
    _check_same_shape(arrays, "reduce-scatter")
    _check_split(arrays[0], axis, n, "reduce-scatter")
    moved = [np.moveaxis(np.asarray(a), axis, 0) for a in arrays]
    blocks = [np.split(m, n, axis=0) for m in moved]
    rotated = [np.concatenate([b[(c - 1) % n].ravel() for c in range(n)]) for b in blocks]
    pieces, owner = reduce_scatter_ring(comm, rotated, label=label)
    shape = blocks[0][0].shape
    out = []
    for d in range(n):
        assert (owner[d] - 1) % n == d  # the rotation above relies on the ring's ownership
        out.append(np.moveaxis(pieces[d].reshape(shape), 0, axis))
    return out


def all_reduce(comm, arrays, algo="ring", label="all-reduce"):
    """
    Sum the devices' arrays; every device gets the sum (same shape as the inputs).
    algo: a key of comm_sim.ALLREDUCE_ALGOS (the registry: "ring", "rd", "direct"...).
    """
    if algo not in ALLREDUCE_ALGOS:
        raise ValueError(f"unknown all-reduce algorithm {algo!r}; choose one of {', '.join(ALLREDUCE_ALGOS)}")
    _check_same_shape(arrays, "all-reduce")
    shape = np.shape(arrays[0])
    out = ALLREDUCE_ALGOS[algo][1](comm, [np.asarray(a).ravel() for a in arrays], label=label)
    return [o.reshape(shape) for o in out]


def all_to_all(comm, shards, split_axis, concat_axis, algo=None, label="all-to-all"):
    """
    Device d cuts its shard into n blocks along `split_axis` and sends block j to device j;
    device d ends with block d of every device's shard, concatenated in device order along
    `concat_axis` ("How to Scale Your Model", AllToAll: A[I_X, J] -> A[I, J_X] with
    split_axis=1, concat_axis=0). algo: a key of ALLTOALL_ALGOS, "direct" (default: every block
    at once, as NCCL's grouped sends do) or "pairwise". Any topology: on a torus each block is
    forwarded hop by hop in dimension order. Returns one array per device.
    """
    algo = "direct" if algo is None else algo
    if algo not in ALLTOALL_ALGOS:
        raise ValueError(f"unknown all-to-all algorithm {algo!r}; choose one of {', '.join(ALLTOALL_ALGOS)}")
    n = len(shards)
    _check_same_shape(shards, "all-to-all")
    x0 = np.asarray(shards[0])
    if not -x0.ndim <= concat_axis < x0.ndim:
        raise ValueError(f"all-to-all: concat_axis {concat_axis} does not exist in shards of shape {x0.shape}")
    _check_split(x0, split_axis, n, "all-to-all")
    # block j of a shard, laid out contiguously: move split_axis to the front and cut it in n
    moved = [np.moveaxis(np.asarray(s), split_axis, 0) for s in shards]
    block = (moved[0].shape[0] // n,) + moved[0].shape[1:]
    out = ALLTOALL_ALGOS[algo].fn(comm, [m.ravel() for m in moved], label=label)
    return [np.concatenate([np.moveaxis(b.reshape(block), 0, split_axis) for b in np.split(o, n)], axis=concat_axis)
            for o in out]


def _check_same_shape(arrays, what):
    if len(arrays) == 0:
        raise ValueError(f"{what}: no arrays (0 devices)")
    shapes = {np.shape(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"{what}: every device must hold the same shape, got {sorted(shapes)}")


# ---------------------------------------------------------------------------------------
# The four cases of a sharded matmul
# ---------------------------------------------------------------------------------------
def matmul_case1(A_sh, B):
    """
    Case 1: A[I_X, J] · B[J, K] -> C[I_X, K]. The contracted J is not split: each device
    multiplies its own rows, no communication. Returns C's shards (split along I).
    """
    return [a @ B for a in A_sh]


def matmul_case2(comm, A_sh, B):
    """
    Case 2: A[I, J_X] · B[J, K] (B replicated). Only A is split along the contracted J:
    all-gather A, then multiply locally. Returns a full C[I, K] on every device (each device
    did all the arithmetic). Alternative: take B[J_X, K] and all-reduce partial sums
    (case 3) — less arithmetic, but moves [I, K] instead of [I, J].
    """
    A_full = all_gather(comm, A_sh, axis=1, label="gather A")
    return [a @ B for a in A_full]


def matmul_case3(comm, A_sh, B_sh, scatter_axis=None, algo="ring"):
    """
    Case 3: A[I, J_X] · B[J_X, K]. Both split along the contracted J the same way: each
    device computes a partial sum C[I, K]{U_X}, then all-reduce (every device gets C) or,
    with scatter_axis=1, reduce-scatter (device d gets C[I, K_X] shard d).
    """
    partial = [a @ b for a, b in zip(A_sh, B_sh)]
    if scatter_axis is None:
        return all_reduce(comm, partial, algo, label="sum partial C")
    return reduce_scatter(comm, partial, scatter_axis, label="sum partial C")


def matmul_case4(comm, A_sh, B_sh):
    """
    Case 4: A[I_X, J] · B[J, K_X]. Both non-contracted dims on the same axis: device d could
    only compute the diagonal block C[I_d, K_d] — C[I_X, K_X] is not a valid sharding. So
    all-gather B first, which turns it into case 1. Returns C's shards (split along I).
    """
    B_full = all_gather(comm, B_sh, axis=1, label="gather B")
    return [a @ b for a, b in zip(A_sh, B_full)]
