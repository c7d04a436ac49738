"""
What the views show at one instant, resolved in one place (Qt-free).

`frame_at(index, t, hidden_after)` turns (run, t, the predict mask) into a comparable, frozen
`Frame`: which collective is drawn, the step it describes and that step's state (next / in
progress / done), how many steps are done, where the clock is among the step boundaries, the
messages under way with how far each has flown and whether each is shown, the sends queued at
the ports, and what every device holds. It keeps nothing: app/frame_controller.py resolves one
Frame per playback tick and hands it to every view, so the ring, the explanation, the buffers,
the timeline and the status bar can never disagree about "step k at time t".

TIME_TOL: two simulated times closer than TIME_TOL × the run's length are the same instant
(a step boundary reached by adding floats is still that boundary); `time_eps` is the one
place that turns it into seconds.
"""

from __future__ import annotations

import bisect
import re
import weakref
from dataclasses import dataclass, field, fields

import numpy as np

from simcore.algorithms import ALGORITHMS

from .prepared import preparer

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


def _same(a, b) -> bool:
    """Field equality for a Frame: arrays by value, everything else by ==."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    return a == b


@dataclass(frozen=True, eq=False)
class Frame:
    """
    The run at simulated time t (seconds): everything a view shows at t. Built by `frame_at`;
    nothing in it changes (its arrays are read-only). Two frames are equal when they show the
    same (arrays compared by value, `held` by `n_arrived`), so a controller can tell a view that
    nothing it reads has changed (ndv's ResolvedDisplayState).

    index       the run's TraceIndex (compared by identity: another run is another picture)
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
    n_arrived   messages of `coll` landed by t: `held` is a function of (index, coll, n_arrived)
    arrived     messages of the last finished step of `coll` (outlined as new)
    queued      per device, its sends of the step's phase still waiting for the port (an algorithm
                whose registry record says it queues: one-shot, two-shot); () otherwise
    bytes_moved bytes delivered by t
    hidden_after the predict mask: while a student predicts, nothing that starts at or after this
                time (s) is shown; None shows everything
    shown       for each of `moving`, whether its block is drawn (False: hidden by the mask)
    ahead       the look-ahead: the frames at the next step boundary and just after it (next_frames),
                which views may prepare in the frames before; () when none is resolved
    eps         the time tolerance (seconds) the answers used
    """

    index: object = field(repr=False)
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
    held: object = field(compare=False, repr=False)
    n_arrived: int = 0
    arrived: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    queued: tuple = ()
    bytes_moved: float = 0.0
    hidden_after: float | None = None
    shown: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    ahead: tuple = ()

    def __eq__(self, other):
        if not isinstance(other, Frame):
            return NotImplemented
        return all(_same(getattr(self, f.name), getattr(other, f.name)) for f in fields(self) if f.compare)

    def __hash__(self):
        return hash((id(self.index), self.t, self.coll, self.step, self.state, self.hidden_after))

    @property
    def key(self) -> tuple:
        """Equal for two times at which the step texts read the same."""
        return (self.coll, self.step, self.steps_done, self.state)

    @property
    def hides(self) -> bool:
        """A student is predicting a step of the collective shown: the step texts say only so."""
        return self.hidden_after is not None and self.coll is not None and self.n_steps > 0


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


def frame_at(index, t: float, hidden_after: float | None = None) -> Frame:
    """
    The Frame of the run indexed by `index` (app.core.trace_index.TraceIndex, or anything with an
    `.index`, like a Run) at simulated time t (seconds), with the predict mask `hidden_after` (s,
    or None). A pure function of its arguments: nothing is kept (the controller keeps the last one).
    """
    index = getattr(index, "index", index)
    t = float(t)
    eps = index.eps
    stops = index.stops
    stop = bisect.bisect_right(stops, t + eps) - 1
    at_stop = 0 <= stop < len(stops) and abs(t - stops[stop]) <= eps
    moving = index.moving(t)
    ts, te = index.t_start[moving], index.t_end[moving]
    span = te - ts
    progress = np.clip(np.where(span > 0, (t - ts) / np.where(span > 0, span, 1.0), 1.0), 0.0, 1.0)
    coll = index.display_collective(t)
    step, n_steps, done, state, held, n_arrived = -1, 0, 0, "", None, 0
    arrived, queued = np.zeros(0, np.int64), ()
    if coll is not None:
        n_steps = index.trace.collectives[coll].n_steps
        step, done, state = step_of(index, coll, t)
        held, n_arrived = index.held(coll, t), index.n_arrived(coll, t)
        if done:
            arrived = np.asarray(index.step_msgs[coll][done - 1], np.int64)
        queued = queued_at(index, coll, step, t)
    shown = (np.ones(len(moving), bool) if hidden_after is None
             else index.t_start[moving] < hidden_after - eps)  # the step being predicted starts at hidden_after
    for a in (moving, progress, arrived, shown):
        a.setflags(write=False)
    return Frame(index, t, eps, coll, step, n_steps, done, state, max(stop, 0), len(stops) - 1, at_stop,
                 t >= index.t_total - eps, moving, progress, held, n_arrived, arrived, queued,
                 index.bytes_moved(t), hidden_after, shown)


def queued_at(index, coll: int, step: int, t: float) -> tuple:
    """Per device, how many of its sends in the phase of `step` still wait for the port at t, for an
    algorithm whose sends queue there (its registry record: one-shot, two-shot); () for any other.
    A phase is counted across all of its steps: one-shot all-reduce records each of its rounds as a
    step of its own ("round 1" … "round 7" at n = 8), all issued at once, so at t in round 1 six of
    every GPU's sends are queued (counted within the step, it never showed any)."""
    c = index.trace.collectives[coll]
    if not (c.n > 2 and getattr(ALGORITHMS.get(c.op, {}).get(c.algo), "queues", False)) or step < 0:
        return ()
    tr = index.trace
    rows = _phase_rows(index, coll)[step]
    src = tr.column("src", coll)[rows]
    later = (tr.column("t_start", coll)[rows] > t) & (src >= 0)
    return tuple(np.bincount(src[later], minlength=c.n).tolist())


_PHASE_ROWS = weakref.WeakKeyDictionary()  # index -> {coll: rows of each step's phase}


def _phase_of(phase: str) -> str:
    """A step's phase without its round number ("round 3" → "round")."""
    return re.sub(r"\s*\d+$", "", phase or "")


def _phase_rows(index, coll: int) -> list:
    """For each step of `coll`, the rows (within the collective) of every message of its phase."""
    per = _PHASE_ROWS.setdefault(index, {})
    if coll not in per:
        tr, c = index.trace, index.trace.collectives[coll]
        steps = index.step_msgs[coll]
        names = [_phase_of(tr.messages[int(m[0])].phase) if len(m) else None for m in steps]
        rows = {}
        for k, name in enumerate(names):
            rows.setdefault(name, []).append(np.asarray(steps[k], np.int64) - c.first_msg)
        rows = {name: np.concatenate(r) for name, r in rows.items()}
        per[coll] = [rows[name] for name in names]
    return per[coll]


def next_frames(index, t: float, hidden_after: float | None = None, known: tuple = ()) -> tuple:
    """
    The Frames views will show at the next step boundary past t and just after it (at the middle
    of the span to the boundary after it); () past the last one. Playback at 60 Hz crosses a
    boundary every few frames and at n = 256 drawing a new step costs more than a frame: views
    prepare these in the frames before, and use what they prepared if the frame they are then
    given shows the same (a cache, never a promise: they compare). `known`: the answer for an
    earlier t, returned as it is when it is still the answer (so it is resolved once per step).
    """
    index = getattr(index, "index", index)
    stops, eps = index.stops, index.eps
    k = bisect.bisect_right(stops, float(t) + eps)
    if k >= len(stops):
        return ()
    t1 = stops[k]
    if known and known[0].t == t1 and known[0].index is index and known[0].hidden_after == hidden_after:
        return known
    t2 = stops[k + 1] if k + 1 < len(stops) else max(index.t_total, t1)
    probe = (t1 + t2) / 2 if t2 > t1 + 2 * eps else t1 + eps / 2
    return frame_at(index, t1, hidden_after), frame_at(index, probe, hidden_after)


@preparer(last=True)
def prepare_first_frames(run):
    """On the worker, with the build: the frame a new run opens at (its first stop) and its
    look-ahead, resolved once so that the index keeps what they read (held's cursors and
    checkpoints: the first step's 8,192 arrivals at n = 256 on DGX H100). Last: the views'
    preparers read the index too, and it keeps only its three latest states."""
    index = getattr(run, "index", None)
    if index is not None:
        t = index.stops[0] if len(index.stops) else 0.0
        frame_at(index, t)
        next_frames(index, t)
