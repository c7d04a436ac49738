"""The "Ring" tab of the main window: the ring view, with the matmul panel beside it (built on
first use) for matmul scenarios.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from .ring_view import RingView


class RingPage(QWidget):
    """The "Ring" tab: the ring view, with the matmul panel beside it for matmul scenarios."""

    def __init__(self, model, playback, parent=None):
        super().__init__(parent)
        self.model, self.playback = model, playback
        self.ring = RingView(model, playback)
        self._matmul = None  # built when a matmul scenario is first shown: most starts never need it
        self.split = QSplitter(Qt.Horizontal)
        self.split.addWidget(self.ring)
        self.split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.split)
        model.changed.connect(self._on_model_changed)
        self._on_model_changed(model.run)

    @property
    def matmul(self):
        """The matmul panel (app.views.ring.matmul_view), left of the ring, built on first use."""
        if self._matmul is None:
            from .matmul_view import MatmulView

            self._matmul = MatmulView(self.model, self.playback)
            self.split.insertWidget(0, self._matmul)
            self.split.setStretchFactor(0, 2)
            self.split.setStretchFactor(1, 3)
            total = sum(self.split.sizes())
            if total > 0:  # the ring already had the room: share it 2 : 3, as a first layout would
                self.split.setSizes([round(total * 2 / 5), total - round(total * 2 / 5)])
        return self._matmul

    def _on_model_changed(self, run):
        if run.matmul is not None:
            self.matmul.setVisible(True)
        elif self._matmul is not None:
            self._matmul.setVisible(False)
