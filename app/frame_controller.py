"""
One resolved frame, pushed: per playback tick the controller resolves ONE `Frame` (app.core.frame)
of (run, t, the predict mask), compares it with the last one, and calls `view.set_frame(frame)` on
each registered view whose part of it changed — ndv's `models/_resolve.py` manner: resolve,
compare, call only what changed.

A view registers once (`playback.frames.register(view)`) and never listens to the clock itself; it
reads the frame it is handed and writes nothing back. A view may define
    frame_part(frame)   what of the frame it draws (compared with ==): set_frame is called only when
                        that changed; without it, the whole frame
    look_ahead(frame)   prepare the next step (frame.ahead) in the frames before it: called after
                        every push, in registration order, until this tick's look-ahead has taken
                        AHEAD_SHARE seconds (the explanation writes its text in a frame the ring
                        leaves room in)
Views are held weakly and a widget Qt has deleted is dropped: a view goes as it did when it
listened to a signal.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import replace

from shiboken6 import isValid

from .core.frame import Frame, frame_at, next_frames

# Look-ahead one tick may take before the later views skip theirs (seconds): only how soon the
# next step is ready depends on it, never what is drawn.
AHEAD_SHARE = 0.001


class FrameController:
    """
    Resolves and pushes the frame of `run` at the playback's t. The Playback that owns it calls
    `set_run(run)` for a new run and `show(t)` on every tick; the predict game calls
    `set_hidden_after(t0)`. `current()` is the frame shown now (a view building its items for a
    new run asks for it).
    """

    def __init__(self):
        self._run = None
        self._t = 0.0
        self._hidden_after = None
        self._frame: Frame | None = None
        self._views: list = []  # [weakref to view, its last part (a fresh object: none yet)]

    # -- registration -----------------------------------------------------------------------
    def register(self, view) -> Frame | None:
        """Push every frame that changes what `view` reads to `view.set_frame(frame)` from now on;
        return the frame shown now, which the view draws itself (None: no run yet)."""
        self._views = [e for e in self._views if e[0]() is not None and e[0]() is not view]
        f = self.current()
        part_of = getattr(view, "frame_part", None)
        self._views.append([weakref.ref(view), object() if f is None else f if part_of is None else part_of(f)])
        return f

    @property
    def views(self) -> list:
        """The registered views still alive, in registration order."""
        return [v for v in (e[0]() for e in self._views) if v is not None and isValid(v)]

    # -- what is resolved ---------------------------------------------------------------------
    def set_run(self, run):
        """A new run: the next frame is resolved from it (the caller then shows a t)."""
        self._run, self._frame = run, None

    def show(self, t: float):
        """The playback's tick: resolve the frame at t and push it."""
        self._t = float(t)
        self._push()

    def set_hidden_after(self, t0: float | None):
        """The predict mask: hide what starts at or after t0 (s), the step a student is predicting;
        None shows everything again."""
        t0 = None if t0 is None else float(t0)
        if t0 != self._hidden_after:
            self._hidden_after = t0
            self._push()

    @property
    def hidden_after(self) -> float | None:
        return self._hidden_after

    def current(self) -> Frame | None:
        """The frame of the run at the playback's t (resolved now if no tick resolved it yet)."""
        if self._run is None:
            return None
        if self._frame is None or self._frame.t != self._t or self._frame.index is not self._run.index \
                or self._frame.hidden_after != self._hidden_after:
            self._frame = self._resolve(self._t)
        return self._frame

    def _resolve(self, t: float) -> Frame:
        """The frame at t: the last one or one of its look-ahead frames when t is theirs (the
        prepared pictures compare equal to it), else resolved anew; with its own look-ahead."""
        idx, mask, last = self._run.index, self._hidden_after, self._frame
        known = ()
        if last is not None and last.index is idx and last.hidden_after == mask:
            known = last.ahead
            base = next((f for f in (last, *last.ahead) if f.t == t), None)
        else:
            base = None
        if base is None:
            base = frame_at(idx, t, mask)
        ahead = next_frames(idx, t, mask, known)
        return base if base.ahead is ahead else replace(base, ahead=ahead)

    # -- pushing ------------------------------------------------------------------------------
    def _push(self):
        f = self.current()
        if f is None:
            return
        live = []
        for entry in self._views:
            view = entry[0]()
            if view is None or not isValid(view):  # gone, or a widget whose C++ side Qt deleted
                continue
            live.append(entry)
            part_of = getattr(view, "frame_part", None)
            part = f if part_of is None else part_of(f)
            if part != entry[1]:
                entry[1] = part
                view.set_frame(f)
        self._views = live
        spent = 0.0
        for entry in live:
            view = entry[0]()
            prepare = getattr(view, "look_ahead", None) if view is not None else None
            if prepare is None:
                continue
            if spent > AHEAD_SHARE:
                break
            t0 = time.perf_counter()
            prepare(f)
            spent += time.perf_counter() - t0
