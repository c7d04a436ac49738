"""
One worker for slow work (scenario builds, the latency sweep, the step timeline, calibration):
the function runs off the event loop and its result comes back on the GUI thread by a signal.

    worker = Worker(parent=self)
    worker.done.connect(self._on_worker_done)        # (channel, result)
    worker.failed.connect(self._on_worker_failed)    # (channel, one sentence)
    job = worker.submit(build_run, scenario, channel="build")

Each channel counts its submissions (a generation, as ndv's `_request_data` does): only the
newest job of a channel is delivered, so a result for a choice the user has already left is
dropped. Every job runs on a thread of its own (a dropped one runs to its end: Python cannot stop
a thread). A job can be cancelled (`job.cancel()`, then `cancelled(channel)`): its function sees
`job.cancel_event` and reports `job.progress(done, total)` (the `progress` signal) when
submitted with `takes_job=True`.

Python's cyclic garbage collector runs in whichever thread happens to allocate when a threshold
is crossed: on a job's thread it could delete Qt objects the GUI thread dropped, off the GUI thread,
and Qt crashes. So once a job runs on a thread, automatic collection is turned off and the GUI
thread collects on a timer (pyqtgraph's GarbageCollector, made for exactly this).

`Worker(sync=True)` runs the function on the caller's thread before `submit` returns, so a test
reads the result at once; `set_sync_default(True)` makes that the default of every worker made
after it (the tests' conftest sets it; a test that wants the thread passes `sync=False`).
"""

from __future__ import annotations

from . import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import atexit
import gc
import threading

import shiboken6
from PySide6.QtCore import QObject, Signal

_SYNC_DEFAULT = False
_GC = None  # the GUI thread's collector, from the first job on a thread on
_THREADS: set = set()  # job threads still running (wait_all)


def set_sync_default(on: bool):
    """Whether workers made with sync=None run their jobs on the caller's thread (tests)."""
    global _SYNC_DEFAULT
    _SYNC_DEFAULT = bool(on)


def sync_default() -> bool:
    return _SYNC_DEFAULT


def _collect_on_the_gui_thread():
    """Turn automatic garbage collection off and collect on a timer of the GUI thread (once)."""
    global _GC
    if _GC is None:
        from pyqtgraph.util.garbage_collector import GarbageCollector  # deferred: pyqtgraph is heavy

        _GC = GarbageCollector(interval=0.5)
        atexit.register(_let_jobs_finish)
        if not _SYNC_DEFAULT:
            # What lives now (modules, Qt's enum types, the window and its views: ~45,000 objects
            # besides the run) lives as long as the app. Out of the collector's generations, the
            # timer's full collections no longer walk it: 50-65 ms each, a stall of their own when
            # one fell in a swap, became 4 ms (benchmarks/gui_stall.py). Not in the tests' process,
            # which makes and drops hundreds of windows: their cycles must stay collectable.
            gc.freeze()


def _let_jobs_finish():
    """At exit, before Python stops its daemon threads: a job thread stopped inside numpy's or Qt's C++
    ends the process with std::terminate ("terminate called without an active exception", a non-zero
    exit code; a window closed or a script ended while a build ran). Let them finish first."""
    wait_all(timeout=10.0)


def collects_on_the_gui_thread() -> bool:
    """True once a job has run on a thread: automatic collection stays off (whoever paused it for
    another reason must not turn it back on; the GUI thread's timer collects)."""
    return _GC is not None


def wait_all(timeout: float = 60.0) -> bool:
    """Block until every job thread has returned (at most `timeout` seconds); True when none runs.
    Closing windows while a job runs is safe; the tests wait so that one test's job cannot run
    into the next test."""
    for t in list(_THREADS):
        t.join(timeout)
    return not any(t.is_alive() for t in list(_THREADS))


def message_of(e: BaseException) -> str:
    """One sentence for the user: a mesh refusal in the user's words and language (its kind and
    facts, app.core.mesh_errors), else the exception's own words (its type's name when it has none)."""
    from .core.mesh_errors import mesh_error_text

    return mesh_error_text(e) or str(e).strip() or type(e).__name__


class Job:
    """One submission: its channel and generation, and the state the GUI thread reads."""

    def __init__(self, worker: Worker, channel: str, generation: int):
        self.worker, self.channel, self.generation = worker, channel, generation
        self.cancel_event = threading.Event()
        self.finished = False  # the function has returned or raised
        self.delivered = False  # the GUI thread has taken the outcome (applied or dropped)
        self.dropped = False  # a newer job of the channel came first: the outcome was never handed on
        self.ok = False  # the function returned (not raised, not cancelled)
        self._thread: threading.Thread | None = None

    def cancel(self):
        """Ask the function to stop (it reads cancel_event); its outcome is reported as cancelled."""
        self.cancel_event.set()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def progress(self, done: int, total: int):
        """From the function, on any thread: delivered as the worker's progress signal."""
        self.worker._emit(self.worker._progress_raw, self.channel, self.generation, int(done), int(total))

    def running(self) -> bool:
        return not self.finished

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the function has returned (seconds; None: forever). True when it has."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.finished


class Worker(QObject):
    """
    Runs `fn(*args)` on a thread per job and hands the outcome of a channel's newest job to the
    GUI thread: `done(channel, result)`, `failed(channel, message)` or `cancelled(channel)`;
    `progress(channel, done, total)` while it runs. Outcomes of older jobs are dropped.
    """

    done = Signal(str, object)
    failed = Signal(str, str)
    cancelled = Signal(str)
    progress = Signal(str, int, int)

    # from the job's thread to the worker's (queued): channel, generation, payload
    _done_raw = Signal(str, int, object)
    _failed_raw = Signal(str, int, str)
    _cancelled_raw = Signal(str, int)
    _progress_raw = Signal(str, int, int, int)

    def __init__(self, sync: bool | None = None, parent=None):
        super().__init__(parent)
        self.sync = sync_default() if sync is None else bool(sync)
        self._generations: dict[str, int] = {}
        self._jobs: dict[str, Job] = {}  # the newest job of each channel
        self._raw = {}  # (channel, generation) -> job, until its outcome reaches the GUI thread
        self._done_raw.connect(self._on_done_raw)
        self._failed_raw.connect(self._on_failed_raw)
        self._cancelled_raw.connect(self._on_cancelled_raw)
        self._progress_raw.connect(self._on_progress_raw)

    # -- submitting -------------------------------------------------------------------------------
    def generation(self, channel: str) -> int:
        return self._generations.get(channel, 0)

    def job(self, channel: str) -> Job | None:
        """The channel's newest job (running or not), or None."""
        return self._jobs.get(channel)

    def busy(self, channel: str) -> bool:
        """True while the channel's newest job has not been delivered."""
        job = self._jobs.get(channel)
        return job is not None and not job.delivered

    def submit(self, fn, *args, channel: str = "", takes_job: bool = False, **kwargs) -> Job:
        """
        Run fn(*args, **kwargs) (with job=the Job when takes_job) and deliver its outcome if no
        newer job of `channel` was submitted meanwhile. Sync: done before this returns.
        """
        g = self._generations[channel] = self.generation(channel) + 1
        job = self._jobs[channel] = Job(self, channel, g)
        self._raw[(channel, g)] = job
        if takes_job:
            kwargs["job"] = job
        if self.sync:
            self._run(job, fn, args, kwargs)
        else:
            _collect_on_the_gui_thread()
            job._thread = threading.Thread(target=self._run, args=(job, fn, args, kwargs), daemon=True,
                                           name=f"shard-lab worker: {channel}")
            _THREADS.add(job._thread)
            job._thread.start()
        return job

    def drop(self, channel: str | None = None):
        """Forget what is running on `channel` (every channel when None): its outcome will be dropped."""
        for ch in ([channel] if channel is not None else list(self._generations)):
            self._generations[ch] = self.generation(ch) + 1
            job = self._jobs.pop(ch, None)
            if job is not None:
                job.cancel()

    # -- on the job's thread ----------------------------------------------------------------------
    def _run(self, job, fn, args, kwargs):
        try:
            self._finish(job, fn, args, kwargs)
        finally:
            _THREADS.discard(threading.current_thread())

    def _finish(self, job, fn, args, kwargs):
        try:
            result = fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001  (delivered as one message; a thread must not die silently)
            job.finished = True
            if job.cancelled:
                self._emit(self._cancelled_raw, job.channel, job.generation)
            else:
                self._emit(self._failed_raw, job.channel, job.generation, message_of(e))
            return
        job.finished = True
        if job.cancelled:
            self._emit(self._cancelled_raw, job.channel, job.generation)
        else:
            job.ok = True
            self._emit(self._done_raw, job.channel, job.generation, result)

    def _emit(self, signal, *args):
        if not shiboken6.isValid(self):
            return  # the owner was closed meanwhile: nobody is left to tell
        try:
            signal.emit(*args)
        except RuntimeError:
            pass  # deleted between the check and the emit

    # -- on the GUI thread ------------------------------------------------------------------------
    def _take(self, channel, generation) -> bool:
        """Mark the job delivered; True when it is still its channel's newest (its outcome counts)."""
        job = self._raw.pop((channel, generation), None)
        current = generation == self.generation(channel)
        if job is not None:
            job.delivered, job.dropped = True, not current
        return current

    def _on_done_raw(self, channel, generation, result):
        if self._take(channel, generation):
            self.done.emit(channel, result)

    def _on_failed_raw(self, channel, generation, message):
        if self._take(channel, generation):
            self.failed.emit(channel, message)

    def _on_cancelled_raw(self, channel, generation):
        if self._take(channel, generation):
            self.cancelled.emit(channel)

    def _on_progress_raw(self, channel, generation, done, total):
        if generation == self.generation(channel):
            self.progress.emit(channel, done, total)
