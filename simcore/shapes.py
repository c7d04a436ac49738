"""
shapes — the checks the lecture's API makes of the arrays it is handed, each failing with one
sentence: every device the same shape, an axis that splits into n equal shards.
"""

from __future__ import annotations

import numpy as np


def check_split(x, axis, n, what="shard"):
    """ValueError unless x's `axis` exists and splits into n (a whole number >= 1) equal parts."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{what}: the number of devices must be a whole number >= 1, got {n!r}")
    x = np.asarray(x)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{what}: axis {axis} does not exist in an array of shape {x.shape}")
    if x.shape[axis] % n:
        raise ValueError(f"{what}: axis {axis} has length {x.shape[axis]}, "
                         f"which is not divisible by {n} devices")


def check_same_shape(arrays, what):
    """ValueError unless there is at least one array and all have one shape."""
    if len(arrays) == 0:
        raise ValueError(f"{what}: no arrays (0 devices)")
    shapes = {np.shape(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"{what}: every device must hold the same shape, got {sorted(shapes)}")
