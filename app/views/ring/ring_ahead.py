"""
The ring view's look-ahead: playing at 60 Hz, the next step boundary's picture is prepared in
the frames before it, a piece a frame (at n = 256 drawing a step at once took two frames' time).
Plain functions of the view: an object or a generator kept by the view and holding it would put
the view in a reference cycle, and a view the garbage collector deletes at a random moment can
be in the middle of a paint.
"""

from __future__ import annotations

from ...core.frame import next_frames
from .ring_bars import bar_arrays

# up to this many devices every piece of the look-ahead is done in one frame (together under
# 2 ms at n = 64); above, one piece a frame (1-2.5 ms each at n = 256). Only how soon the next
# step is ready depends on it, never what is drawn.
AHEAD_ALL_N = 64


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
    for _ in range(1 if view.n > AHEAD_ALL_N else 64):
        if view._ahead is None or not _prepare_piece(view):
            view._ahead = None
            break


def _prepare_piece(view) -> bool:
    """Do the next piece of the look-ahead; False when there is none left."""
    plan = view._ahead
    t, k, flying, piece = plan
    frames = next_frames(view.run.index, t)
    if not frames:
        return False
    if piece == 0 and k == 0:
        view._flying_ahead = {}
    while k < len(frames):
        f = frames[k]
        if f.coll is None:
            k, piece = k + 1, 0
            continue
        radial = view._geom.get("mode") == "radial"
        if piece == 0:
            flying = view._flight_set(f.moving[view._predict_shown(f)])
            view._flying_ahead[flying[0]] = flying
            plan[:] = [t, k, flying, 1]
            return True
        if piece == 1:
            plan[3] = 2
            if radial and f.held is not view._last_holdings and (k == 0 or frames[0].held is not f.held):
                c = view.run.trace.collectives[f.coll]
                counts, owners = bar_arrays(f.held, view.n, c.n_chunks)
                view._bar_arrays_ahead = (f.held, counts, owners)
                view.bars.prepare(counts, owners, view._arrivals(c, f.arrived))
                return True
        if plan[3] == 2:
            plan[3] = 3
            if radial and view.bars.prepare_picture():
                return True
        if plan[3] == 3:
            if view.lanes.prepare(flying[3]):  # a part a frame
                return True
            plan[3] = 4
        if plan[3] == 4:
            plan[:] = [t, k + 1, None, 0]
            if view.chord_layer.prepare(flying[2]):
                return True
        t, k, flying, piece = plan
    return False
