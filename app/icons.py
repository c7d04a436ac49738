"""Toolbar and menu icons drawn in the theme's text colour (the style's own are dark: on black they vanished)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap


def tinted_icon(icon: QIcon, color: QColor) -> QIcon:
    """`icon` with every opaque pixel painted `color` (its shape kept), at the usual sizes."""
    out = QIcon()
    for side in (16, 24, 32, 48, 64):
        pm = icon.pixmap(side, side)
        if pm.isNull():
            continue
        p = QPainter(pm)
        p.setCompositionMode(QPainter.CompositionMode_SourceIn)
        p.fillRect(pm.rect(), color)
        p.end()
        out.addPixmap(pm)
    return out


def camera_icon(color: QColor) -> QIcon:
    """A camera drawn as outlines in `color` (the theme's text colour). The style's floppy-disk
    icon tinted in one colour became a solid square: a black blot in the light theme."""
    icon = QIcon()
    for side in (16, 24, 32, 48, 64):
        pm = QPixmap(side, side)
        pm.fill(Qt.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.Antialiasing)
        w = max(1.2, side / 14)
        p.setPen(QPen(color, w))
        p.setBrush(Qt.NoBrush)
        body = QRectF(side * 0.08, side * 0.28, side * 0.84, side * 0.58)
        p.drawRoundedRect(body, side * 0.08, side * 0.08)
        p.drawRect(QRectF(side * 0.34, side * 0.16, side * 0.3, side * 0.12))  # the viewfinder
        p.drawEllipse(QPointF(side * 0.5, side * 0.57), side * 0.17, side * 0.17)  # the lens
        p.end()
        icon.addPixmap(pm)
    return icon
