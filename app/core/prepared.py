"""
What the views derive from a whole run, prepared on the worker as part of the build.

A new run at n = 256 holds 130,560 messages; the views used to derive their words, step notes,
machine layout and timeline rows from them on the GUI thread when it arrived, and the window froze
for most of a second. Each such derivation is now a pure function of the run (and of what it names
in its key: a step, a size, the language), memoised on the run:

    memo(run, key, make)     run.prepared[key], made by make() the first time it is asked
    @preparer                a view's function fn(run) that asks, on the worker, for what the view
                             will ask for first when the run is shown (@preparer(last=True): after
                             the others, for one that warms a cache the others' reads may push out)
    prepare(run)             runs every preparer (scenarios.build_run does, on the worker)

The views ask `memo` for the same keys with the same make(), so what they show is the same value
whichever thread made it; a key the worker could not foresee (another step, a resized view, a
language switched while building) is made where it is first asked. A preparer that fails leaves
its keys to the view (prepare never fails a build). The record is written on the worker before
the run is handed to the GUI thread and only read there after, except for those late keys.

`made` counts, per key's first element, the values made on the GUI (main) thread and on others:
the tests read it to check that a swap derives nothing on the GUI thread.
"""

from __future__ import annotations

import threading
from collections import Counter

_PREPARERS: list = []
made: Counter = Counter()  # (name, "main" | "worker") -> values made


def preparer(fn=None, *, last: bool = False):
    """Register fn(run): called by prepare() on the worker (decorator; returns fn)."""
    if fn is None:
        return lambda f: preparer(f, last=last)
    if all(f is not fn for _, f in _PREPARERS):
        _PREPARERS.append((bool(last), fn))
        _PREPARERS.sort(key=lambda e: e[0])  # stable: in registration order, the last ones after
    return fn


def prepare(run):
    """Everything the registered views will read first from `run`, made now (the worker's build)."""
    for _last, fn in list(_PREPARERS):
        try:
            fn(run)
        except Exception:  # noqa: BLE001  (the view derives it when it asks, as it did before)
            pass
    return run


def on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def memo(run, key: tuple, make, keep: int = 0):
    """run.prepared[key], made by make() the first time (counted in `made` by thread). keep > 0:
    at most that many values of this kind (key[0]) stay, the oldest dropped (a layout per window
    size: resizing would otherwise keep one for every size the window passed through)."""
    book = getattr(run, "prepared", None)
    if book is None:  # a run-like object without a record: nothing kept
        return make()
    try:
        return book[key]
    except KeyError:
        pass
    value = make()
    made[(key[0], "main" if on_main_thread() else "worker")] += 1
    if keep > 0:
        same = [k for k in book if k[0] == key[0]]
        for k in same[:max(len(same) - keep + 1, 0)]:
            book.pop(k, None)
    book[key] = value
    return value
