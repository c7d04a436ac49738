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

from .algorithms import op_record
from .comm_sim import Comm
from .links import LINKS, NVLINK4, LinkSpec
from .plan import execute, resolve
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
    # in place, with one scratch array: the same bits as the plain expression, a third of the time
    # (a machine's demo builds millions of values; temporaries were most of that)
    x = np.arange(size, dtype=np.uint64)
    t = np.empty_like(x)
    with np.errstate(over="ignore"):  # uint64 arithmetic wraps on purpose
        x += np.uint64((seed * 0x9E3779B97F4A7C15) % 2**64)
        x *= np.uint64(0x9E3779B97F4A7C15)
        for shift, mul in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
            np.right_shift(x, np.uint64(shift), out=t)
            x ^= t
            if mul is not None:
                x *= np.uint64(mul)
    np.right_shift(x, np.uint64(11), out=t)
    u = t.astype(np.float64)
    u *= 2.0**-52  # 2·[0, 1): exact, a power of two
    u -= 1.0
    return np.round(u, decimals, out=u).reshape(shape)


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


def run_collective(op="all-gather", n=8, nbytes=2**20, algo=None, link=NVLINK4, seed=0,
                   elems_per_chunk=ELEMS_PER_CHUNK) -> CollectiveRun:
    """
    Simulate one collective on an idle switch: the op's demo (registry.Op.demo) on n devices with
    elems_per_chunk values per chunk, numbers from demo_values(seed).
    op: a registered collective ("all-gather", "reduce-scatter", "all-reduce", "all-to-all");
    algo: one of its algorithms that runs on a switch (None: the op's default, ring or direct);
    nbytes: S (Op.size: the full array, or one device's buffer for all-to-all);
    link: a LinkSpec or a LINKS key.
    """
    rec = op_record(op)
    if isinstance(link, str):
        if link not in LINKS:
            raise ValueError(f"unknown link {link!r}; choose one of {', '.join(LINKS)}")
        link = LINKS[link]
    if not isinstance(link, LinkSpec):
        raise ValueError(f"unknown link {link!r}; choose one of {', '.join(LINKS)}")
    nbytes = parse_bytes(nbytes)
    topo = switch(n, link)
    plan = resolve(topo, op, nbytes, algo)  # None: the switch's choice (the op's default); checked to run there
    comm = Comm(topo, byte_scale=nbytes / (topo.n * elems_per_chunk * 8))
    with execute(comm, plan):
        inputs, outputs = rec.demo(comm, plan.algo, lambda shape: demo_values(seed, shape), elems_per_chunk)
    return CollectiveRun(op, plan.algo, topo.n, nbytes, link, comm, inputs, outputs)
