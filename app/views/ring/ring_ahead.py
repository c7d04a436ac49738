"""
The ring view's look-ahead: playing at 60 Hz, the next step boundary's picture is prepared in
the frames before it, a piece a frame (at n = 256 drawing a step at once took two frames' time).
Plain functions of the view: an object or a generator kept by the view and holding it would put
the view in a reference cycle, and a view the garbage collector deletes at a random moment can
be in the middle of a paint.
"""

from __future__ import annotations

import time

from ...core.frame import next_frames
from .ring_bars import bar_arrays

# Look-ahead a frame may take (seconds): pieces run until it is spent (a piece is 0.1-0.3 ms at
# n = 32, so all of them fit in a frame; 1-2.5 ms at n = 256, one or two a frame). Only how soon
# the next step is ready depends on it, never what is drawn.
AHEAD_BUDGET = 0.002


def look_ahead(view, t: float, restart: bool):
    """
    Prepare what the view will draw at the next step boundary and just after it
    (frame.next_frames): their sets of messages, their bars' pixels and picture, their lit lanes
    and chords as pictures. Each piece is a cache the boundary's frame uses only if it shows
    exactly that (the layers compare). restart=True (a step was just drawn, a seek, a new run)
    starts over from the boundary after t; the plan (view._ahead) is plain data.
    """
    if restart:
        view._ahead = [t, 0, None, 0]  # (from t, frame number, its set of messages, its piece)
        return
    t0 = time.perf_counter()
    while view._ahead is not None and time.perf_counter() - t0 < AHEAD_BUDGET:
        if not _prepare_piece(view):
            view._ahead = None
    # what this frame spent: the explanation prepares its text in a frame the ring leaves room in
    view.run.index.ahead_spent = (t, time.perf_counter() - t0)


def _prepare_piece(view) -> bool:
    """Do the next piece of the look-ahead; False when there is none left. The plan is [from t,
    the frame of next_frames it is at, that frame's set of messages, the piece: 0 messages,
    1 bars' pixels, 2 their picture, 3 lanes, 4 chords]."""
    plan = view._ahead
    frames = next_frames(view.run.index, plan[0])
    if plan[1] == 0 and plan[3] == 0:
        view._flying_ahead = {}
    radial = view._geom.get("mode") == "radial"
    while plan[1] < len(frames):
        k, flying, piece = plan[1:]
        f = frames[k]
        if f.coll is None:
            plan[1:] = [k + 1, None, 0]
            continue
        if piece == 0:
            flying = view._flight_set(f.moving[view._predict_shown(f)])
            view._flying_ahead[flying[0]] = flying
            plan[2:] = [flying, 1]
            return True
        if piece == 1:  # some bars a call; the frame after a boundary usually holds what it does
            if radial and f.held is not view._last_holdings and (k == 0 or frames[0].held is not f.held):
                ahead = getattr(view, "_bar_arrays_ahead", None)
                if ahead is None or ahead[0] is not f.held:
                    c = view.run.trace.collectives[f.coll]
                    counts, owners = bar_arrays(f.held, view.n, c.n_chunks)
                    ahead = view._bar_arrays_ahead = (f.held, counts, owners, view._arrivals(c, f.arrived))
                if view.bars.prepare(*ahead[1:]):
                    return True
            plan[3] = 2
        elif piece == 2:
            plan[3] = 3
            if radial and view.bars.prepare_picture():
                return True
        elif piece == 3:  # a part a call
            if view.lanes.prepare(flying[3]):
                return True
            plan[3] = 4
        else:
            plan[1:] = [k + 1, None, 0]
            if view.chord_layer.prepare(flying[2]):
                return True
    return False
