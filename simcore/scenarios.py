"""
Run one collective the way the app and the command line show it: n devices, S bytes, one
algorithm. The arrays are real (a few float64 elements per chunk, so a picture can show
them) and `byte_scale` times them as if they were S bytes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .algorithms import ALLREDUCE_ALGOS, ALLTOALL_ALGOS, OPS
from .collectives import allgather_ring, reduce_scatter_ring
from .comm_sim import Comm
from .links import LINKS, NVLINK4, LinkSpec
from .topology import switch
from .trace import Trace

ELEMS_PER_CHUNK = 4  # elements each chunk really holds; timing uses byte_scale


def demo_values(seed: int, shape, decimals: int = 3) -> np.ndarray:
    """
    Reproducible example values, uniform in [-1, 1] and rounded to `decimals` (short enough to
    read on a slide): the splitmix64 hash of (seed, index). Not numpy.random, whose first use
    costs some 15 ms of imports in the app's start for numbers nobody needs to be random.
    """
    size = math.prod(shape) if isinstance(shape, tuple) else int(shape)
    with np.errstate(over="ignore"):  # uint64 arithmetic wraps on purpose
        x = np.arange(size, dtype=np.uint64) + np.uint64((seed * 0x9E3779B97F4A7C15) % 2**64)
        x = x * np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    u = (x >> np.uint64(11)).astype(np.float64) * 2.0**-53  # [0, 1)
    return np.round(2.0 * u - 1.0, decimals).reshape(shape)


@dataclass(frozen=True)
class CollectiveRun:
    """The inputs, outputs and trace of one collective (S = nbytes, the full array)."""

    op: str
    algo: str
    n: int
    nbytes: float
    link: LinkSpec
    comm: Comm
    inputs: np.ndarray  # (n, L): every device's buffer before, in chunk order
    outputs: list  # what the collective returned on every device

    @property
    def trace(self) -> Trace:
        return self.comm.trace


def parse_bytes(text) -> float:
    """'1MiB', '4 KB', '512', '2.5GB' -> bytes (float). Raises ValueError on anything else."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]?i?[bB]?)\s*", str(text))
        if not m:
            raise ValueError(f"cannot read a size from {text!r} (examples: 512, 64KiB, 1MiB, 2GB)")
        unit = m.group(2).upper().rstrip("B")
        scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
                 "KI": 2**10, "MI": 2**20, "GI": 2**30, "TI": 2**40}.get(unit)
        if scale is None:
            raise ValueError(f"unknown unit in {text!r}")
        value = float(m.group(1)) * scale
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"a message size must be a positive number of bytes, got {text!r}")
    return value


def run_collective(op="all-gather", n=8, nbytes=2**20, algo="ring", link=NVLINK4, seed=0,
                   elems_per_chunk=ELEMS_PER_CHUNK) -> CollectiveRun:
    """
    Simulate one collective on an idle switch.
    op: "all-gather" | "reduce-scatter" | "all-reduce" | "all-to-all"; algo: "ring" (or an
    ALLREDUCE_ALGOS key for all-reduce, an ALLTOALL_ALGOS key for all-to-all; None: the op's
    first); nbytes: S, the full array's bytes (all-to-all: one device's buffer, n blocks);
    link: a LinkSpec or a LINKS key.
    """
    if op not in OPS:
        raise ValueError(f"unknown collective {op!r}; choose one of {', '.join(OPS)}")
    if op == "all-to-all":
        return _run_all_to_all(n, nbytes, algo or "direct", link, seed, elems_per_chunk)
    algo = algo or "ring"
    if op == "all-reduce" and algo not in ALLREDUCE_ALGOS:
        raise ValueError(f"unknown all-reduce algorithm {algo!r}; choose one of {', '.join(ALLREDUCE_ALGOS)}")
    if op != "all-reduce" and algo != "ring":
        raise ValueError(f"{op} runs the ring algorithm only (got {algo!r})")
    if isinstance(link, str):
        if link not in LINKS:
            raise ValueError(f"unknown link {link!r}; choose one of {', '.join(LINKS)}")
        link = LINKS[link]
    nbytes = parse_bytes(nbytes)
    topo = switch(n, link)
    n = topo.n
    L = n * elems_per_chunk
    comm = Comm(topo, byte_scale=nbytes / (L * 8))
    if op == "all-gather":
        chunks = list(demo_values(seed, (n, elems_per_chunk)))
        inputs = np.zeros((n, L))
        for d in range(n):
            inputs[d, d * elems_per_chunk:(d + 1) * elems_per_chunk] = chunks[d]
        outputs = allgather_ring(comm, chunks, {d: d for d in range(n)}, label="all-gather")
    else:
        inputs = demo_values(seed, (n, L))
        if op == "reduce-scatter":
            pieces, _owner = reduce_scatter_ring(comm, list(inputs), label="reduce-scatter")
            outputs = pieces
        else:
            outputs = ALLREDUCE_ALGOS[algo][1](comm, list(inputs), label="all-reduce")
    return CollectiveRun(op, algo, n, nbytes, link, comm, inputs, outputs)


def _run_all_to_all(n, nbytes, algo, link, seed, elems_per_chunk) -> CollectiveRun:
    """run_collective's all-to-all: n blocks of elems_per_chunk values per device. Its inputs are in
    the trace's chunk order, n² slots (slot s·n + j = block (s → j)): row d holds its buffer in band d,
    zeros elsewhere (like an all-gather's), so trace.buffer_values gives every device's values."""
    if algo not in ALLTOALL_ALGOS:
        raise ValueError(f"unknown all-to-all algorithm {algo!r}; choose one of {', '.join(ALLTOALL_ALGOS)}")
    link = LINKS[link] if isinstance(link, str) and link in LINKS else link
    if not isinstance(link, LinkSpec):
        raise ValueError(f"unknown link {link!r}; choose one of {', '.join(LINKS)}")
    nbytes = parse_bytes(nbytes)
    topo = switch(n, link)
    L = topo.n * elems_per_chunk
    comm = Comm(topo, byte_scale=nbytes / (L * 8))
    bufs = demo_values(seed, (topo.n, L))
    outputs = ALLTOALL_ALGOS[algo].fn(comm, list(bufs), label="all-to-all")
    inputs = np.zeros((topo.n, topo.n * L))
    for d in range(topo.n):
        inputs[d, d * L:(d + 1) * L] = bufs[d]
    return CollectiveRun("all-to-all", algo, topo.n, nbytes, link, comm, inputs, outputs)
