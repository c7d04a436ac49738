"""
Colours, fonts and line widths: the one place the app's look is decided.

Projector first: the smallest text is 15 px at scale 1.0, body text 18 px, headings 26 px, so a
1280×720 projector is legible from the back of a lecture hall. Every size goes through
`font(role)` / `px(role)` / `line(role)`, which multiply by the global `scale()`; a widget that
listens to `notifier().changed` and re-reads them follows Ctrl+= / Ctrl+− and theme switches.

Device and chunk colours: Okabe & Ito's colour-blind-safe palette for n ≤ 8 (Okabe, M., Ito, K.,
"Color Universal Design", 2008), a perceptually uniform cyclic map (colorcet CET-C6, shipped by
pyqtgraph) beyond, so neighbours on the ring get neighbouring hues and device 0 meets device n−1.

A theme is a `Palette` (plain frozen data): light, dark and high contrast (for projectors) are
defined here and `THEMES` maps each key to it. `set_theme(key)` and
`set_scale(s)` change the current look and emit `notifier().changed`.
"""

from __future__ import annotations

from . import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import weakref
from typing import NamedTuple
from functools import lru_cache

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QFont

# Okabe–Ito, ordered so the first colours are the most distinct from each other; black comes
# last (it only appears at n = 8, where it is still distinct from the light "empty" slot).
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")


class Palette(NamedTuple):
    """Every colour the app paints with (hex strings). Add a theme by adding a Palette."""

    key: str
    name: str  # shown in menus (translated by the caller)
    background: str  # canvas behind the ring and the plots
    surface: str  # device boxes, panels
    text: str
    text_muted: str
    border: str  # device box outline
    slot_empty: str  # a chunk the device does not hold (yet)
    slot_border: str
    spoke: str  # idle spoke
    spoke_active: str  # spoke carrying a message
    switch_fill: str
    switch_border: str
    highlight: str  # outline of the chunks that arrived in the last step
    playhead: str
    grid: str
    error: str
    device_colors: tuple = OKABE_ITO
    cyclic_map: str = "CET-C6"  # pyqtgraph colormap name for n > len(device_colors)


LIGHT = Palette(
    key="light", name="Light",
    background="#FFFFFF", surface="#F4F4F2", text="#111111", text_muted="#555555",
    border="#333333", slot_empty="#E6E6E6", slot_border="#9A9A9A",
    spoke="#CFCFCF", spoke_active="#444444", switch_fill="#E4E9F0", switch_border="#2F3B4C",
    highlight="#111111", playhead="#C0001A", grid="#DDDDDD", error="#B00020",
)

# Okabe–Ito on dark backgrounds: black would vanish, and grey or white reads as the empty slot
# ("not there yet"), so the eighth colour is a lavender (CIE76 ΔE ≥ 35 from the other seven).
OKABE_ITO_ON_DARK = OKABE_ITO[:7] + ("#B8A6FF",)

DARK = Palette(
    key="dark", name="Dark",
    background="#1B1D21", surface="#26292E", text="#ECECEC", text_muted="#A9ADB4",
    border="#C9CDD3", slot_empty="#3A3E45", slot_border="#6D727B",
    spoke="#454A52", spoke_active="#E6E6E6", switch_fill="#5A6B85", switch_border="#E6E6E6",
    highlight="#FFFFFF", playhead="#FF5C6C", grid="#3A3E45", error="#FF7373",
    device_colors=OKABE_ITO_ON_DARK,
)
# For projectors: pure black and white, strong outlines, a yellow highlight; nothing mid-grey
# that a washed-out projector would lose.
HIGH_CONTRAST = Palette(
    key="high-contrast", name="High contrast",
    background="#000000", surface="#000000", text="#FFFFFF", text_muted="#FFFFFF",
    border="#FFFFFF", slot_empty="#2A2A2A", slot_border="#FFFFFF",
    spoke="#8C8C8C", spoke_active="#FFFF00", switch_fill="#0050C8", switch_border="#FFFFFF",
    highlight="#FFFF00", playhead="#FFFF00", grid="#5A5A5A", error="#FF6060",
    device_colors=OKABE_ITO_ON_DARK,
)

THEMES = {p.key: p for p in (LIGHT, DARK, HIGH_CONTRAST)}  # the themes the View menu offers, in its order

# Pixel sizes at scale 1.0, by role. Big on purpose (see module docstring).
FONT_PX = {
    "small": 15,  # axis ticks, byte labels on blocks
    "body": 18,  # control dock, status bar
    "device": 18,  # "GPU 3" beside a device
    "caption": 22,  # the ring view's title line
    "explain": 22,  # the explanation panel
    "title": 28,  # headings
    "switch": 20,  # the switch's name
    "matrix": 18,  # matrix names in the matmul panel
}
LINE_PX = {
    "hairline": 1.0,
    "outline": 1.5,  # device box, slots
    "spoke": 3.0,
    "spoke_active": 6.0,
    "highlight": 3.0,  # new-chunk outline
    "trail": 3.0,  # path of a message in flight
    "playhead": 3.0,
    "bar": 1.0,
}
# Sizes of drawn things (pixels at scale 1.0).
SIZE_PX = {
    "slot": 26,  # a chunk slot at small n (shrinks as n grows)
    "block": 30,  # a message block at small n
    "switch": 120,  # the switch's diameter
    "margin": 16,
    "icon": 28,  # toolbar icons
}

_state = {"palette": LIGHT, "scale": 1.0}
MIN_SCALE, MAX_SCALE = 0.5, 4.0


class _Notifier(QObject):
    changed = Signal()  # theme or scale changed: re-read colours, fonts and widths


_notifier: list = []


def notifier() -> _Notifier:
    if not _notifier:
        _notifier.append(_Notifier())
    return _notifier[0]


# -- current look ------------------------------------------------------------------------
def palette() -> Palette:
    return _state["palette"]


def scale() -> float:
    return _state["scale"]


def set_scale(s: float) -> float:
    """Set the global size factor (clamped to [0.5, 4]); returns the value used."""
    s = min(MAX_SCALE, max(MIN_SCALE, float(s)))
    if s != _state["scale"]:
        _state["scale"] = s
        notifier().changed.emit()
    return s


def set_theme(key: str) -> Palette:
    if key not in THEMES:
        raise ValueError(f"unknown theme {key!r}; choose one of {', '.join(THEMES)}")
    if THEMES[key] is not _state["palette"]:
        _state["palette"] = THEMES[key]
        notifier().changed.emit()
    return _state["palette"]


# -- sizes -------------------------------------------------------------------------------
def px(role: str) -> float:
    """A font size (pixels) for `role`, times the global scale."""
    return FONT_PX[role] * _state["scale"]


def line(role: str) -> float:
    """A line width (pixels) for `role`, times the global scale."""
    return LINE_PX[role] * _state["scale"]


def size(role: str) -> float:
    return SIZE_PX[role] * _state["scale"]


def font(role: str = "body", bold: bool = False, mono: bool = False) -> QFont:
    f = QFont()
    if mono:
        f.setFamilies(["DejaVu Sans Mono", "Menlo", "Consolas", "monospace"])
        f.setStyleHint(QFont.Monospace)
    f.setPixelSize(max(6, round(px(role))))
    f.setBold(bold)
    return f


def color(name: str) -> QColor:
    """A palette colour by field name, e.g. color('text')."""
    return QColor(getattr(_state["palette"], name))


# -- device / chunk colours --------------------------------------------------------------
def colour_by_position(n: int) -> bool:
    """True when n devices take their colours from the cyclic map (colour by position round the
    ring, the key is a colour bar) rather than one distinct colour each."""
    return n > len(_state["palette"].device_colors)


def device_colors(n: int) -> list[QColor]:
    """n colours, one per device: Okabe–Ito for n ≤ 8, a cyclic map beyond."""
    p = _state["palette"]
    return [QColor(c) for c in _device_hex(n, p.device_colors, p.cyclic_map)]


@lru_cache(maxsize=64)
def _device_hex(n: int, base: tuple, cmap_name: str) -> tuple:
    if n <= len(base):
        return tuple(base[:n])
    import numpy as np
    import pyqtgraph as pg  # only needed beyond 8 devices

    # perceptually even: n points at equal CIE76 arc length round the map's loop, so every pair
    # of neighbours differs by the same ΔE (the map's own stops are only roughly even)
    fine = pg.colormap.get(cmap_name).map(np.arange(2048) / 2048, mode="float")[:, :3]
    lab = _srgb_to_lab(fine)
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(np.vstack([lab, lab[:1]]), axis=0), axis=1))])
    at = np.searchsorted(arc, np.arange(n) * arc[-1] / n, side="right") - 1
    rgb = np.clip(np.round(fine[at % len(fine)] * 255), 0, 255).astype(int)
    return tuple("#{:02X}{:02X}{:02X}".format(*c) for c in rgb)


def _srgb_to_lab(rgb):
    """CIELAB (D65) of sRGB rows in [0, 1] (numpy (k, 3) → (k, 3))."""
    import numpy as np

    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = lin @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]).T
    f = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(f > (6 / 29) ** 3, np.cbrt(f), f / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def text_on(bg: QColor) -> QColor:
    """Black or white, whichever reads better on `bg` (WCAG relative luminance)."""
    def lin(c):
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    lum = 0.2126 * lin(bg.red()) + 0.7152 * lin(bg.green()) + 0.0722 * lin(bg.blue())
    return QColor("#000000") if lum > 0.4 else QColor("#FFFFFF")


def stylesheet() -> str:
    """Application-wide Qt stylesheet for the current palette and scale."""
    p, s = _state["palette"], _state["scale"]
    body = round(FONT_PX["body"] * s)
    return (
        f"QWidget {{ font-size: {body}px; }}\n"
        f"QMainWindow, QDockWidget {{ background: {p.surface}; color: {p.text}; }}\n"
        f"QDockWidget::title {{ padding: {round(4 * s)}px; font-weight: bold; }}\n"
        f"QToolBar {{ spacing: {round(6 * s)}px; background: {p.surface}; border: none; }}\n"
        f"QTabBar::tab {{ padding: {round(6 * s)}px {round(14 * s)}px; }}\n"
        f"QStatusBar QLabel {{ padding: 0 {round(10 * s)}px; }}\n"
        # flat scroll bars: visible on a projector, and a tenth of the cost of Fusion's gradients,
        # which the animation repaints with every panel on every frame
        f"QScrollBar:vertical {{ width: {round(12 * s)}px; background: {p.surface}; margin: 0; }}\n"
        f"QScrollBar:horizontal {{ height: {round(12 * s)}px; background: {p.surface}; margin: 0; }}\n"
        f"QScrollBar::handle {{ background: {p.slot_border}; border-radius: {round(4 * s)}px; "
        f"min-height: {round(28 * s)}px; min-width: {round(28 * s)}px; }}\n"
        f"QScrollBar::add-line, QScrollBar::sub-line {{ width: 0; height: 0; }}\n"
        f"QScrollBar::add-page, QScrollBar::sub-page {{ background: none; }}\n"
    )


# ---------------------------------------------------------------------------------------
# Presentation mode, as the views read it (the mode itself is app/classroom/presentation.py)
# ---------------------------------------------------------------------------------------
_presenting = weakref.WeakSet()  # the Presentation objects presenting now (see presenting_now)


def presenting_add(presentation):
    """Presentation mode came on in `presentation`'s window (held weakly)."""
    _presenting.add(presentation)


def presenting_discard(presentation):
    _presenting.discard(presentation)


def presenting_now() -> bool:
    """Whether presentation mode is on: views built lazily while presenting read it once; views
    already built are told by set_presenting(on) (Presentation._tell_views). A window dropped while
    presenting leaves no trace: the set holds its presentation weakly and asks it."""
    return any(_shown_presenting(p) for p in list(_presenting))


def _shown_presenting(p) -> bool:
    try:
        return p.presenting and p.window.isVisible()
    except RuntimeError:  # its window is gone (a test closed it while presenting)
        return False
