"""
What the views show at one instant, resolved in one place (Qt-free).

`frame_at(index, t)` turns (run, t) into a `Frame`: which collective is drawn, the step it
describes and that step's state (next / in progress / done), how many steps are done, where
the clock is among the step boundaries, the messages under way with how far each has flown,
and what every device holds. The ring view, the explanation, the buffers, the status bar and
the prediction game all read a Frame, so they can never disagree about "step k at time t".

TIME_TOL: two simulated times closer than TIME_TOL × the run's length are the same instant
(a step boundary reached by adding floats is still that boundary); `time_eps` is the one
place that turns it into seconds.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

TIME_TOL = 1e-9  # relative: ~1e7 float64 ulps (2.2e-16 each), far below one step of any run
_MIN_SPAN = 1e-12  # seconds: a run of zero length still has a tolerance

NEXT, IN_PROGRESS, DONE = "next", "in progress", "done"


def time_eps(t_end: float) -> float:
    """The absolute tolerance (seconds) for times in a run that ends at t_end."""
    return TIME_TOL * max(t_end, _MIN_SPAN)


def monotone_step_ends(step_times) -> list[float]:
    """The end of every step as the views count it: a step is over once it and every step before
    it have landed (steps overlap under contention, so a later step may land first)."""
    ends = [t1 for _t0, t1 in step_times]
    return np.maximum.accumulate(ends).tolist() if ends else []


@dataclass(frozen=True, eq=False)
class Frame:
    """
    The run at simulated time t (seconds). Built by `frame_at`; nothing in it changes.

    coll        the collective drawn at t (the last one started; None: nothing is sent)
    step        the step described at t: the one in progress, or the one that just ended (−1: none)
    n_steps     steps of `coll`
    steps_done  steps of `coll` finished by t (0 … n_steps)
    state       NEXT, IN_PROGRESS or DONE for `step` ("" when there is no step)
    stop        step boundaries (over all collectives, after 0) at or before t; n_stops in all
    at_stop     t is on a step boundary
    at_end      t is at the end of the run
    moving      message indices strictly under way (t_start < t < t_end), ascending
    progress    for each of `moving`, the fraction of its flight done (0 … 1)
    held        what every device holds in `coll` (simcore.holdings.Held; None without a collective)
    arrived     messages of the last finished step of `coll` (outlined as new)
    eps         the time tolerance (seconds) the answers used
    """

    t: float
    eps: float
    coll: int | None
    step: int
    n_steps: int
    steps_done: int
    state: str
    stop: int
    n_stops: int
    at_stop: bool
    at_end: bool
    moving: np.ndarray
    progress: np.ndarray
    held: object
    arrived: np.ndarray

    @property
    def key(self) -> tuple:
        """Equal for two times at which the step texts read the same."""
        return (self.coll, self.step, self.steps_done, self.state)


def step_of(index, coll: int, t: float) -> tuple[int, int, str]:
    """
    (step, steps done, state) of collective `coll` at t: the step to describe (the one in
    progress, or the one that just ended; −1 if it has none), how many steps have finished,
    and NEXT / IN_PROGRESS / DONE for that step ("" without steps).
    """
    index = getattr(index, "index", index)
    eps = index.eps
    ends = index.step_ends[coll]
    done = bisect.bisect_right(ends, t + eps)
    if not ends:
        return -1, done, ""
    step = min(bisect.bisect_left(ends, t - eps), len(ends) - 1)
    if done > step:
        return step, done, DONE
    if t <= index.trace.collectives[coll].t_start + eps:
        return step, done, NEXT
    return step, done, IN_PROGRESS


def frame_at(index, t: float, remember: bool = True) -> Frame:
    """
    The Frame of the run indexed by `index` (app.core.trace_index.TraceIndex, or anything with an
    `.index`, like a Run) at simulated time t (seconds). The index keeps the last Frame, so
    every view asking about the same t shares one (remember=False: a look ahead, not kept).
    """
    index = getattr(index, "index", index)
    t = float(t)
    last = getattr(index, "_last_frame", None)
    if last is not None and last.t == t:
        return last
    for ahead in getattr(index, "_next_frames", ()):
        if ahead.t == t:
            if remember:
                index._last_frame = ahead
            return ahead
    eps = index.eps
    stops = index.stops
    stop = bisect.bisect_right(stops, t + eps) - 1
    at_stop = 0 <= stop < len(stops) and abs(t - stops[stop]) <= eps
    moving = index.moving(t)
    ts, te = index.t_start[moving], index.t_end[moving]
    span = te - ts
    progress = np.clip(np.where(span > 0, (t - ts) / np.where(span > 0, span, 1.0), 1.0), 0.0, 1.0)
    coll = index.display_collective(t)
    step, n_steps, done, state, held, arrived = -1, 0, 0, "", None, np.zeros(0, np.int64)
    if coll is not None:
        n_steps = index.trace.collectives[coll].n_steps
        step, done, state = step_of(index, coll, t)
        held = index.held(coll, t)
        if done:
            arrived = np.asarray(index.step_msgs[coll][done - 1], np.int64)
    f = Frame(t, eps, coll, step, n_steps, done, state, max(stop, 0), len(stops) - 1, at_stop,
              t >= index.t_total - eps, moving, progress, held, arrived)
    if remember:
        index._last_frame = f
    return f


def next_frames(index, t: float) -> tuple:
    """
    The Frames views will show at the next step boundary past t and just after it (at the middle
    of the span to the boundary after it); () past the last one. Playback at 60 Hz crosses a
    boundary every few frames and at n = 256 drawing a new step costs more than a frame: views
    prepare these in the frames before, and use what they prepared if the frame they are then
    asked for shows the same (a cache, never a promise: they compare). The index keeps them.
    """
    index = getattr(index, "index", index)
    stops, eps = index.stops, index.eps
    k = bisect.bisect_right(stops, float(t) + eps)
    if k >= len(stops):
        return ()
    t1 = stops[k]
    t2 = stops[k + 1] if k + 1 < len(stops) else max(index.t_total, t1)
    probe = (t1 + t2) / 2 if t2 > t1 + 2 * eps else t1 + eps / 2
    ahead = getattr(index, "_next_frames", ())
    if not ahead or ahead[0].t != t1:
        ahead = index._next_frames = (frame_at(index, t1, remember=False), frame_at(index, probe, remember=False))
    return ahead
