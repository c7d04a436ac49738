"""
A panel's rich text (the explanation, the formula): one QTextDocument, laid out once per text
and width, scrolling itself.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QTextBrowser


class RichText(QTextBrowser):
    """
    A panel's rich text, laid out once per text and width. (A word-wrapped rich-text QLabel in a
    scroll area laid each new text out again for every width its layout asked about, to answer
    heightForWidth, and again to paint: 5-8 ms at every step boundary of the animation, and 43
    layouts, 42 M instructions, on the way to the first picture.) Selectable, not editable.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._html = ""
        self.setFrameShape(QFrame.NoFrame)
        self.setOpenLinks(False)
        self.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.setFocusPolicy(Qt.NoFocus)  # the arrow keys step the animation, not this text
        self.document().setDocumentMargin(10)

    def text(self) -> str:
        return self._html

    def setText(self, html: str):
        if html != self._html:
            self._html = html
            self.setHtml(html)
