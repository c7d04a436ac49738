"""Toolbar and menu icons drawn in the theme's text colour (the style's own are dark: on black they vanished)."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap, QPolygonF

SIDES = (16, 24, 32, 48, 64)  # the pixmap sizes an icon carries


def _drawn_icon(draw) -> QIcon:
    """An icon whose pixmaps `draw(painter, side)` paints, antialiased, on transparency."""
    icon = QIcon()
    for side in SIDES:
        pm = QPixmap(side, side)
        pm.fill(Qt.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.Antialiasing)
        draw(p, side)
        p.end()
        icon.addPixmap(pm)
    return icon


def camera_icon(color: QColor) -> QIcon:
    """A camera drawn as outlines in `color` (the theme's text colour). The style's floppy-disk
    icon tinted in one colour became a solid square: a black blot in the light theme."""
    def draw(p, side):
        p.setPen(QPen(color, max(1.2, side / 14)))
        p.setBrush(Qt.NoBrush)
        body = QRectF(side * 0.08, side * 0.28, side * 0.84, side * 0.58)
        p.drawRoundedRect(body, side * 0.08, side * 0.08)
        p.drawRect(QRectF(side * 0.34, side * 0.16, side * 0.3, side * 0.12))  # the viewfinder
        p.drawEllipse(QPointF(side * 0.5, side * 0.57), side * 0.17, side * 0.17)  # the lens

    return _drawn_icon(draw)


# The transport's shapes, in a unit square: ("tri", x0, x1) a triangle pointing from x0 to x1
# (right if x1 > x0), ("bar", x0, x1) an upright bar. Drawn, not the style's media icons: those
# cost the start-up QStyle's enums, and are tinted from a dark picture; these are crisp at any size.
TRANSPORT = {
    "play": (("tri", 0.24, 0.84),),
    "pause": (("bar", 0.22, 0.42), ("bar", 0.58, 0.78)),
    "step-back": (("tri", 0.52, 0.10), ("tri", 0.92, 0.50)),
    "step-forward": (("tri", 0.08, 0.50), ("tri", 0.48, 0.90)),
    "start": (("bar", 0.14, 0.27), ("tri", 0.86, 0.27)),
    "end": (("tri", 0.14, 0.73), ("bar", 0.73, 0.86)),
}
_TOP, _BOTTOM = 0.18, 0.82


def transport_icon(kind: str, color: QColor) -> QIcon:
    """A playback icon (a key of TRANSPORT) filled with `color` (made once per kind and colour)."""
    return _transport_icon(kind, QColor(color).rgba())


@lru_cache(maxsize=64)
def _transport_icon(kind: str, rgba: int) -> QIcon:
    shapes, color = TRANSPORT[kind], QColor.fromRgba(rgba)

    def draw(p, side):
        p.setPen(Qt.NoPen)
        p.setBrush(color)
        top, bottom, mid = _TOP * side, _BOTTOM * side, 0.5 * side
        for shape, x0, x1 in shapes:
            if shape == "bar":
                p.drawRect(QRectF(x0 * side, top, (x1 - x0) * side, bottom - top))
            else:
                p.drawPolygon(QPolygonF([QPointF(x0 * side, top), QPointF(x1 * side, mid), QPointF(x0 * side, bottom)]))

    return _drawn_icon(draw)


def dock_button_icon(kind: str, color: QColor) -> QIcon:
    """A dock title bar's button: "close" (a cross) or "float" (two overlapping windows), as lines in
    `color` (made once per kind and colour: every dock shows the same two)."""
    return _dock_button_icon(kind, QColor(color).rgba())


@lru_cache(maxsize=16)
def _dock_button_icon(kind: str, rgba: int) -> QIcon:
    color = QColor.fromRgba(rgba)

    def draw(p, side):
        p.setPen(QPen(color, max(1.2, side / 12), Qt.SolidLine, Qt.RoundCap))
        p.setBrush(Qt.NoBrush)
        a, b = 0.28 * side, 0.72 * side
        if kind == "close":
            p.drawLine(QPointF(a, a), QPointF(b, b))
            p.drawLine(QPointF(a, b), QPointF(b, a))
        else:
            p.drawRect(QRectF(0.36 * side, 0.22 * side, 0.42 * side, 0.36 * side))
            p.drawRect(QRectF(0.22 * side, 0.42 * side, 0.42 * side, 0.36 * side))

    return _drawn_icon(draw)
