"""The weight-slices view's graphics pieces: the canvas every item hangs from, rich text that
wraps at a width the layout asks about, and the colours, fonts and pens of outlines and badges.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QPen
from PySide6.QtWidgets import QGraphicsTextItem

from ... import theme


def halo_colour(c: QColor) -> QColor:
    """The outline drawn under a device colour so it reads on any heatmap cell."""
    return QColor("#FFFFFF") if theme.text_on(c).name() == "#ffffff" else QColor("#000000")


def font_at(role: str, bold: bool = False, factor: float = 1.0, scale: float | None = None) -> QFont:
    """The theme's font for `role` at text scale `scale` (None: the theme's), times `factor` (the layout
    shrinks its text where it must)."""
    f = QFont()
    px = max(6, round(theme.FONT_PX[role] * (theme.scale() if scale is None else scale)))
    f.setPixelSize(max(6, round(px * factor)))
    f.setBold(bold)
    return f


def badge_html(text: str, c: QColor) -> str:
    fg = theme.text_on(c).name()
    return (f'<span style="background-color:{c.name()}; color:{fg}; font-weight:bold;">'
            f'&nbsp;{text}&nbsp;</span>')


def cosmetic_pen(color: QColor, width: float) -> QPen:
    pen = QPen(color, width)
    pen.setCosmetic(True)
    pen.setJoinStyle(Qt.MiterJoin)
    return pen


class Canvas(pg.GraphicsView):
    """The picture. Every item hangs from `ci` (which fills the view); WeightsView._layout places them."""

    resized = Signal()

    def __init__(self):
        super().__init__()
        self.ci = pg.GraphicsWidget()
        self.setCentralItem(self.ci)

    def resizeEvent(self, e):
        super().resizeEvent(e)
        self.resized.emit()


class WrappingText(QGraphicsTextItem):
    """Rich text in the picture that wraps at a given width, so the layout can ask its height."""

    def __init__(self, parent, align=Qt.AlignLeft):
        super().__init__(parent)
        doc = self.document()
        doc.setDocumentMargin(0)
        opt = doc.defaultTextOption()
        opt.setAlignment(align)
        doc.setDefaultTextOption(opt)

    def set(self, text_html: str, role: str = "body", color: str | None = None, bold: bool = False,
            factor: float = 1.0):
        self.setFont(font_at(role, bold, factor))
        self.setDefaultTextColor(QColor(color or theme.palette().text))
        self.setHtml(text_html)

    def natural_width(self) -> float:
        self.setTextWidth(-1)
        return self.document().idealWidth()

    def height_at(self, width: float) -> float:
        self.setTextWidth(max(1.0, width))
        return self.document().size().height()
