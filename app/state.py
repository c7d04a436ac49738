"""
The app's small evented state, apart from the widgets (napari's `Dims` / `QtDims` split):

    ScenarioModel   what is simulated (a frozen `Scenario`) and the run built from it
    Playback        the ONE clock: simulated time t, playing, speed, loop

Widgets receive these in `__init__` and connect to their signals; nothing else owns time.
"""

from __future__ import annotations

from . import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import bisect

from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer, Signal

from .core import scenarios
from .core.scenarios import Scenario  # noqa: F401  (the model's value type)
from .core.frame import time_eps
from .frame_controller import FrameController
from .worker import Worker, message_of

KINDS = scenarios.KINDS


class ScenarioModel(QObject):
    """
    Holds `.scenario` and `.run` (an app.core.scenarios.Run). `update(**changes)` checks the new
    scenario at once (a ValueError: `error(message)`, False, the scenario in place kept) and
    builds its run on the worker (app/worker.py): `building(scenario)` while it builds, then
    `changed(run)`, or `error(message)` with the previous scenario and run kept. A newer
    `update` drops an older build still running; the changes of an update apply to the scenario
    being built, if any. `sync=True` (or the tests' worker default) builds before `update` returns.
    """

    changed = Signal(object)  # the new Run
    error = Signal(str)  # one sentence for the user
    building = Signal(object)  # the Scenario now being built, or None when no build runs
    arriving = Signal(object)  # a Run from the worker, just before it is set (ring_swap keeps the old picture)

    BUILD = "build"  # the worker's channel

    def __init__(self, scenario: Scenario | None = None, parent=None, sync: bool | None = None):
        super().__init__(parent)
        self.scenario = (scenario or Scenario()).validate()
        self.run = scenarios.build_run(self.scenario)  # the first run: the window is made from it
        self.pending = None  # the Scenario being built
        self._after = []  # what to call once it is on screen (after_build)
        self._arriving, self._wait = None, False  # a run from the worker about to be set (arriving)
        self.worker = Worker(sync, self)
        self.worker.done.connect(self._on_worker_done)
        self.worker.failed.connect(self._on_worker_failed)

    def update(self, **changes) -> bool:
        """Build the scenario with `changes`. False when refused (the error signal says why); in
        sync mode also when the build failed."""
        if self._arriving is not None:  # a run waiting a turn to be set (wait_a_turn): set it first
            self._arrive(self._arriving)
        base = self.pending or self.scenario
        try:
            new = base.with_changes(**changes)
            if new == base:
                return True
            new.validate()
        except ValueError as e:
            self.error.emit(message_of(e))
            return False
        self._after = []  # for the build this one replaces
        if new == self.scenario:  # back to what is shown: the build of the other choice is dropped
            self.worker.drop(self.BUILD)
            self._set_pending(None)
            return True
        self._set_pending(new)
        job = self.worker.submit(scenarios.build_run, new, channel=self.BUILD)
        return job.ok if job.delivered else True  # async: its outcome comes by signal

    def after_build(self, fn):
        """Call fn() once the scenario last asked for is on screen: now when no build runs, else when
        its run arrives (never when that build fails or a newer update replaces it)."""
        if self.pending is None:
            fn()
        else:
            self._after.append(fn)

    @property
    def busy(self) -> bool:
        """True while a build runs (the window says so)."""
        return self.pending is not None

    def _set_pending(self, sc):
        if sc != self.pending:
            self.pending = sc
            self.building.emit(sc)

    def _on_worker_done(self, channel, run):
        self._arriving, self._wait = run, False
        self.arriving.emit(run)
        if self._wait:  # a view held the window's picture: the views take the run on the next turn
            # (a timer object: QTimer.singleShot(0) posts an event, served before the turn ends)
            timer = QTimer(self)
            timer.setSingleShot(True)
            timer.timeout.connect(lambda: self._arrive(run) if self._arriving is run else None)
            timer.timeout.connect(timer.deleteLater)
            timer.start(0)
            return
        self._arrive(run)

    def wait_a_turn(self):
        """From an `arriving` slot: set the run on the event loop's next turn, not in this one (the
        slot's own work, e.g. holding the window's picture, is then not part of the views' rebuild)."""
        self._wait = True

    def _arrive(self, run):
        self._arriving = None
        self._set_pending(None)
        self.scenario, self.run = run.scenario, run
        self.changed.emit(run)
        after, self._after = self._after, []
        for fn in after:
            fn()

    def _on_worker_failed(self, channel, message):
        self._set_pending(None)
        self._after = []
        self.error.emit(message)

    @property
    def trace(self):
        return self.run.trace


class Playback(QObject):
    """
    The one clock. `t` is simulated seconds in [0, t_end]. While playing, one QTimer advances t
    by (elapsed wall time × speed × sim_per_wall), so the pace does not depend on how many ticks
    arrive; a slow frame simply makes the next step bigger (frames are dropped, never queued).
    1× plays one ring step of the current scenario in about WALL_PER_STEP seconds.

    Step boundaries (`stops`) are the ends of the trace's steps over all collectives; stepping
    moves between them and pauses. Stepping back is instant: views compute what they show from
    (trace, t), never by replaying. `frames` (app/frame_controller.py) resolves the frame of each
    tick and hands it to the views registered with it; `time_changed` follows, for the transport.
    """

    time_changed = Signal(float)
    playing_changed = Signal(bool)
    speed_changed = Signal(float)
    loop_changed = Signal(bool)
    timeline_changed = Signal()  # a new trace: stops and t_end changed

    WALL_PER_STEP = 0.8  # wall seconds per ring step at 1×
    SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0)
    MIN_SPEED, MAX_SPEED = 0.25, 4.0
    TICK_MS = 16

    def __init__(self, model: ScenarioModel | None = None, parent=None):
        super().__init__(parent)
        self._t = 0.0
        self._playing = False
        self._speed = 1.0
        self._loop = False
        self._stops = [0.0]
        self._t_end = 0.0
        self.sim_per_wall = 1e-6 / self.WALL_PER_STEP
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.PreciseTimer)
        self._timer.setInterval(self.TICK_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._clock = QElapsedTimer()
        self.frames = FrameController()  # before any view: a tick's frame is pushed before time_changed
        self._model = model
        if model is not None:
            self.set_run(model.run)
            model.changed.connect(self._on_model_changed)

    # -- the timeline ---------------------------------------------------------------------
    def set_run(self, run, keep_step: bool = False):
        """Take the stops and pace of a new run; t goes to the start (or the same step)."""
        idx = run.index
        old_k, at_end = self.step_index, self.at_end
        self._stops = list(idx.stops) or [0.0]
        self._t_end = float(idx.t_total)
        self.sim_per_wall = max(run.ref_step, 1e-15) / self.WALL_PER_STEP
        self.frames.set_run(run)
        self.timeline_changed.emit()
        if keep_step and at_end:
            self._set_t(self._t_end, force=True)
        elif keep_step:
            self._set_t(self._stops[min(old_k, len(self._stops) - 1)], force=True)
        else:
            self._set_t(0.0, force=True)

    def _on_model_changed(self, run):
        self.pause()
        self.set_run(run, keep_step=True)

    @property
    def stops(self) -> list[float]:
        return list(self._stops)

    @property
    def t_end(self) -> float:
        return self._t_end

    @property
    def n_steps(self) -> int:
        """K: step boundaries after the start."""
        return len(self._stops) - 1

    @property
    def step_index(self) -> int:
        """k: how many step boundaries lie at or before t (0 at the start, K at the end)."""
        return bisect.bisect_right(self._stops, self._t + self._eps()) - 1

    @property
    def at_end(self) -> bool:
        return self._t >= self._t_end - self._eps()

    def _eps(self) -> float:
        return time_eps(self._t_end)

    # -- state ----------------------------------------------------------------------------
    @property
    def t(self) -> float:
        return self._t

    @property
    def playing(self) -> bool:
        return self._playing

    @property
    def speed(self) -> float:
        return self._speed

    @speed.setter
    def speed(self, s: float):
        self.set_speed(s)

    def set_speed(self, s: float):
        s = min(self.MAX_SPEED, max(self.MIN_SPEED, float(s)))
        if s != self._speed:
            self._speed = s
            self.speed_changed.emit(s)

    def faster(self):
        bigger = [s for s in self.SPEEDS if s > self._speed + 1e-9]
        self.set_speed(bigger[0] if bigger else self.MAX_SPEED)

    def slower(self):
        smaller = [s for s in self.SPEEDS if s < self._speed - 1e-9]
        self.set_speed(smaller[-1] if smaller else self.MIN_SPEED)

    @property
    def loop(self) -> bool:
        return self._loop

    @loop.setter
    def loop(self, on: bool):
        self.set_loop(on)

    def set_loop(self, on: bool):
        on = bool(on)
        if on != self._loop:
            self._loop = on
            self.loop_changed.emit(on)

    # -- transport ------------------------------------------------------------------------
    def play(self):
        if self._playing:
            return
        if self._t_end <= 0:
            return  # nothing to play (no communication)
        if self.at_end:
            self._set_t(0.0)
        self._playing = True
        self._clock.start()
        self._timer.start()
        self.playing_changed.emit(True)

    def pause(self):
        if not self._playing:
            return
        self._playing = False
        self._timer.stop()
        self.playing_changed.emit(False)

    def toggle(self):
        self.pause() if self._playing else self.play()

    def seek(self, t: float):
        """Jump to simulated time t (clamped to [0, t_end]); keeps playing if it was."""
        self._set_t(t)
        if self._playing:
            self._clock.restart()

    def seek_step(self, k: int):
        """Jump to the k-th step boundary (0 = start, n_steps = end)."""
        k = max(0, min(int(k), self.n_steps))
        self.pause()
        self._set_t(self._stops[k])

    def step_forward(self):
        self.pause()
        i = bisect.bisect_right(self._stops, self._t + self._eps())
        self._set_t(self._stops[i] if i < len(self._stops) else self._t_end)

    def step_back(self):
        self.pause()
        i = bisect.bisect_left(self._stops, self._t - self._eps())
        self._set_t(self._stops[i - 1] if i > 0 else 0.0)

    def to_start(self):
        self.pause()
        self._set_t(0.0)

    def to_end(self):
        self.pause()
        self._set_t(self._t_end)

    def advance(self, wall_seconds: float):
        """Move t by wall_seconds of playing at the current speed (the timer calls this)."""
        if self._t_end <= 0:
            self.pause()
            return
        t = self._t + max(0.0, wall_seconds) * self._speed * self.sim_per_wall
        if t >= self._t_end:
            if self._loop:
                t = t % self._t_end if t > self._t_end else self._t_end
            else:
                self._set_t(self._t_end)
                self.pause()
                return
        self._set_t(t)

    def _on_timer_timeout(self):
        # elapsed wall time since the last tick: the pace does not depend on the tick count
        self.advance(self._clock.restart() / 1000.0)

    def _set_t(self, t: float, force: bool = False):
        t = min(max(float(t), 0.0), self._t_end)
        if t != self._t or force:
            self._t = t
            self.frames.show(t)
            self.time_changed.emit(t)
