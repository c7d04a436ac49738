"""
Guard against a reference-counting bug of PySide6 6.12.0 on CPython 3.10/3.11.

That release's abi3 wheels return None from every void method (QPainter.drawRect,
QGraphicsItem.setPos, ...) and True from Signal.emit without taking a new reference — as if
they were immortal, which they only are from CPython 3.12 on. Each call then drops one
reference, and after some ten thousand calls CPython aborts with "Fatal Python error:
none_dealloc: deallocating None". An animated view makes that many calls in seconds.

`ensure_immortal_singletons()` measures whether the bug is present (a void call that loses a
reference to None) and, only then, gives None, True and False the practically infinite
reference count they have on 3.12+. Nothing else changes. Importing this module applies it.
The real fix is a PySide6 without the bug (6.11 works); this keeps the app alive meanwhile.
"""

from __future__ import annotations

import sys

_applied = []


def _void_call_leaks() -> bool:
    from PySide6.QtCore import QRectF

    r = QRectF()
    before = sys.getrefcount(None)
    for _ in range(64):
        r.setX(0.0)
    return sys.getrefcount(None) <= before - 32


def ensure_immortal_singletons() -> bool:
    """Apply the guard if this PySide6 leaks references to None; returns True if applied."""
    if _applied:
        return _applied[0]
    applied = False
    if sys.implementation.name == "cpython" and sys.version_info < (3, 12) and _void_call_leaks():
        import ctypes

        for obj in (None, True, False):
            ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 40
        applied = True
    _applied.append(applied)
    return applied


ensure_immortal_singletons()
