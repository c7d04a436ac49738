"""
What the views show at one instant, resolved in one place (Qt-free).

TIME_TOL: two simulated times closer than TIME_TOL × the run's length are the same instant
(a step boundary reached by adding floats is still that boundary). Every view, the playback and
the prediction game ask `time_eps` for it.
"""

from __future__ import annotations

TIME_TOL = 1e-9  # relative: ~1e7 float64 ulps (2.2e-16 each), far below one step of any run
_MIN_SPAN = 1e-12  # seconds: a run of zero length still has a tolerance


def time_eps(t_end: float) -> float:
    """The absolute tolerance (seconds) for times in a run that ends at t_end."""
    return TIME_TOL * max(t_end, _MIN_SPAN)
