"""What the weight-slices view reads: the single-device matrices, what one device holds, and the
regions (in matrix cells) a device's slice covers in the full matrix.

No re-cutting: the device arrays are shard_params_tp's output; who holds which rows or columns is
simcore.tensor_parallel.weight_slices'. `tp_n_for` is the device count the TP scenario accepts.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF

from simcore.tensor_parallel import tp_layout
from simcore.transformer_lab import TINY, lm_head_of

PER_LAYER = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "attn_norm", "mlp_norm")


def _as_image(a) -> np.ndarray:
    """A weight as a 2-D (rows, columns) array; a norm's vector [D] becomes one row [1, D]."""
    return np.atleast_2d(np.asarray(a))


def full_matrix(params: dict, name: str, layer: int) -> np.ndarray:
    """The single-device matrix `name` (of layer `layer` when it has one), 2-D."""
    if name == "lm_head":
        return _as_image(lm_head_of(params))
    if name in PER_LAYER:
        return _as_image(params["layers"][layer][name])
    return _as_image(params[name])


def device_matrix(dev: dict, name: str, layer: int) -> np.ndarray:
    """What one device holds of `name`: an entry of shard_params_tp's output, 2-D."""
    if name in PER_LAYER:
        return _as_image(dev["layers"][layer][name])
    return _as_image(dev[name])


def held_runs(index) -> list[tuple[int, int]]:
    """Contiguous runs [a, b) of sorted indices: the blocks of rows / columns a device holds."""
    idx = np.sort(np.asarray(index))
    if not len(idx):
        return []
    cut = np.flatnonzero(np.diff(idx) != 1) + 1
    return [(int(p[0]), int(p[-1]) + 1) for p in np.split(idx, cut)]


def region_rects(ws, shape) -> list[QRectF]:
    """The rectangles (column x, row y, in matrix cells) a WeightSlice covers in the full matrix."""
    rows, cols = shape
    if ws.axis is None:
        return [QRectF(0, 0, cols, rows)]
    if ws.axis == 1:
        return [QRectF(a, 0, b - a, rows) for a, b in held_runs(ws.index)]
    return [QRectF(0, a, cols, b - a) for a, b in held_runs(ws.index)]


def overlap_ranks(regions: list[list[QRectF]]) -> list[int]:
    """Per device, how many earlier devices' regions overlap its own (0 = the outermost outline)."""
    ranks = []
    for d, mine in enumerate(regions):
        ranks.append(sum(any(r.intersects(o) for r in mine for o in regions[e]) for e in range(d)))
    return ranks


def tp_n_for(n: int, cfg=TINY) -> int:
    """The largest device count ≤ n that the TP scenario accepts (heads, d_ff and vocab divide)."""
    for k in range(min(n, cfg.n_heads), 0, -1):
        try:
            tp_layout(cfg, k)
            return k
        except ValueError:
            continue
    return 1
