"""
The ring view's look-ahead: playing at 60 Hz, the next step boundary's picture (frame.ahead,
resolved with the frame by app/frame_controller.py) is prepared in the frames before it, a piece a frame (at n = 256 drawing a step at once took two frames' time).
Plain functions of the view: an object or a generator kept by the view and holding it would put
the view in a reference cycle, and a view the garbage collector deletes at a random moment can
be in the middle of a paint.
"""

from __future__ import annotations

import time

from .ring_bars import bar_arrays

# Look-ahead a frame may take (seconds): pieces run until it is spent (a piece is 0.1-0.3 ms at
# n = 32, so all of them fit in a frame; 1-2.5 ms at n = 256, one or two a frame). Only how soon
# the next step is ready depends on it, never what is drawn.
AHEAD_BUDGET = 0.002


def restart(view, frame):
    """A step was just drawn (or a seek, a new run): plan the look-ahead of frame.ahead, the frames
    at the next step boundary and just after it, to start with the next tick (this one drew)."""
    view._ahead = [frame.ahead, 0, None, 0]  # (the frames, which one, its set of messages, its piece)
    view._ahead_fresh = True


def look_ahead(view):
    """
    Prepare what the view will draw at the next step boundary and just after it: their sets of
    messages, their bars' pixels and picture, their lit lanes and chords as pictures. Each piece
    is a cache the boundary's frame uses only if it shows exactly that (the layers compare). The
    frame controller calls this once a tick; the plan (view._ahead) is plain data.
    """
    if getattr(view, "_ahead_fresh", False):
        view._ahead_fresh = False
        return
    t0 = time.perf_counter()
    while view._ahead is not None and time.perf_counter() - t0 < AHEAD_BUDGET:
        if not _prepare_piece(view):
            view._ahead = None


def _prepare_piece(view) -> bool:
    """Do the next piece of the look-ahead; False when there is none left. The plan is [the frames
    ahead, the one it is at, that frame's set of messages, the piece: 0 messages, 1 bars' pixels,
    2 their picture, 3 lanes, 4 chords]."""
    plan = view._ahead
    frames = plan[0]
    if plan[1] == 0 and plan[3] == 0:
        view._flying_ahead = {}
    radial = view._geom.get("mode") == "radial"
    while plan[1] < len(frames):
        k, flying, piece = plan[1:]
        f = frames[k]
        if f.coll is None or view._group_n(view.run.trace.collectives[f.coll]) != view.n:
            plan[1:] = [k + 1, None, 0]  # (a collective on another group: the view is built again for it)
            continue
        if piece == 0:
            flying = view._flight_set(f.moving[f.shown])
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
