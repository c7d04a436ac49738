"""
A dock's title bar, drawn by the app: the title and the float and close buttons.

Qt's own title bar measures the style's close and float icons every time a dock is painted, and
Fusion builds those icons from its PNG files at each call: about 0.4 ms for the four docks of a
whole-window repaint (an animation frame), a twentieth of the frame at n = 256. These buttons
keep their icons, drawn in the theme's text colour (as the toolbar's), so they also read on the
dark and high-contrast themes.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QDockWidget, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from . import theme
from .icons import dock_button_icon


class ElidedLabel(QLabel):
    """A one-line label that ends in "…" where its width runs out, rather than cutting a glyph in
    half (a dock title at 1280×720: "What happens in this ste"); the whole title is its tooltip.
    It asks for its text's width but can be made as narrow as "…": a long title never holds its
    dock wider than the picture can spare."""

    def __init__(self, text="", parent=None):
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.setToolTip(text)

    def setText(self, text):
        super().setText(text)
        self.setToolTip(text)

    def minimumSizeHint(self):
        fm = self.fontMetrics()
        return QSize(fm.horizontalAdvance("…"), super().minimumSizeHint().height())

    def drawn_text(self) -> str:
        """What is painted: the text, elided to the label's width."""
        return self.fontMetrics().elidedText(self.text(), Qt.ElideRight, self.contentsRect().width())

    def paintEvent(self, e):
        p = QPainter(self)
        p.setPen(self.palette().color(self.foregroundRole()))
        p.setFont(self.font())
        p.drawText(self.contentsRect(), int(self.alignment()) | Qt.TextSingleLine, self.drawn_text())


class DockTitle(QWidget):
    """The title bar of `dock` (its windowTitle; float and close as its features allow). Pressing
    the title and dragging moves the dock, a double click floats it: the label leaves those
    presses to the dock, as Qt's own title bar does."""

    def __init__(self, dock: QDockWidget):
        super().__init__(dock)
        self.setObjectName("dockTitle")
        self.dock = dock
        self.label = ElidedLabel(dock.windowTitle(), self)
        self.label.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.float_button = QToolButton(self, objectName="dockFloatButton", autoRaise=True)
        self.close_button = QToolButton(self, objectName="dockCloseButton", autoRaise=True)
        for b in (self.float_button, self.close_button):
            b.setFocusPolicy(Qt.NoFocus)
        self.float_button.clicked.connect(lambda: dock.setFloating(not dock.isFloating()))
        self.close_button.clicked.connect(dock.close)
        lay = QHBoxLayout(self)
        lay.setSpacing(2)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.float_button)
        lay.addWidget(self.close_button)
        dock.windowTitleChanged.connect(self.label.setText)
        dock.featuresChanged.connect(self._show_buttons)
        theme.notifier().changed.connect(self._apply_theme)
        self._show_buttons(dock.features())
        self._apply_theme()

    def _show_buttons(self, features):
        self.float_button.setVisible(bool(features & QDockWidget.DockWidgetFloatable))
        self.close_button.setVisible(bool(features & QDockWidget.DockWidgetClosable))

    def _apply_theme(self):
        ink = QColor(theme.palette().text)
        side = max(12, round(theme.size("icon") * 0.5))
        pad = round(4 * theme.scale())
        self.layout().setContentsMargins(pad, pad, pad, pad)
        for b, kind in ((self.float_button, "float"), (self.close_button, "close")):
            b.setIcon(dock_button_icon(kind, ink))
            b.setIconSize(QSize(side, side))
