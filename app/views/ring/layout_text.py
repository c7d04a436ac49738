"""
Text measured as it will be painted: fonts, widths, word-wrapping and the boxes that hold texts.

Every layout of the ring tab (the ring's, the machines', the matmul's) and the items that paint
their labels measure with these functions, so a box a layout reserves is the box that is painted.
Widths are memoised per font: a layout measures the same texts many times.
"""

from __future__ import annotations

import re
import threading
from typing import NamedTuple

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QTextLayout

MIN_TEXT_PX = 9  # no text in the picture is smaller (the theme's smallest is 15 px at 1×)
TEXT_FITS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4)  # text sizes tried, relative to the requested one
LABEL_PAD_W, LABEL_PAD_H = 6.0, 2.0  # a label's box around its text (halo)


class TextBox(NamedTuple):
    """A text's place: its box (scene coordinates, halo included), lines and font."""

    rect: QRectF
    lines: tuple
    font: QFont
    align: int = int(Qt.AlignLeft)


class _Metrics:
    """A font's metrics with its text widths memoised: a layout measures the same texts often."""

    def __init__(self, font: QFont):
        self.font = QFont(font)
        self.fm = QFontMetricsF(font)
        self.height = self.fm.height()
        self._cjk_height = None
        self.widths: dict = {}

    def pitch(self, lines) -> float:
        """The line height for `lines`: taller when one holds CJK text, whose fallback font
        (Noto CJK: 22 px lines for a 15 px font, against 17.5 px) the font's own metrics miss."""
        if not any(ord(c) >= 0x2E80 for s in lines for c in s):
            return self.height
        if self._cjk_height is None:
            tl = QTextLayout("A国", self.font)
            tl.beginLayout()
            ln = tl.createLine()
            tl.endLayout()
            self._cjk_height = max(self.height, ln.height())
        return self._cjk_height

    def advance(self, text: str) -> float:
        w = self.widths.get(text)
        if w is None:
            if len(self.widths) > 20000:
                self.widths.clear()
            w = self.widths[text] = self.fm.horizontalAdvance(text)
        return w


# (pixel size, bold, family) -> _Metrics, one cache per thread: a QFontMetricsF holds font engines from
# its thread's font cache (Qt's is per thread), so the worker, which lays a new run out
# (ring_view.prepare_layout), measures with its own and never with the GUI thread's (nor they with its)
_local = threading.local()


def make_font(role: str, bold: bool, px: float) -> QFont:
    """A font of `px` pixels, never below MIN_TEXT_PX (smaller is unreadable on a projector: the
    layout finds room for MIN_TEXT_PX text or thins the names out)."""
    f = QFont()
    f.setPixelSize(max(MIN_TEXT_PX, round(px)))
    f.setBold(bold)
    return f


def metrics(font: QFont) -> _Metrics:
    key = (font.pixelSize(), font.bold(), font.family())
    cache = getattr(_local, "metrics", None)
    if cache is None:
        cache = _local.metrics = {}
    m = cache.get(key)
    if m is None:
        if len(cache) > 256:
            cache.clear()
        m = cache[key] = _Metrics(font)
    return m


def advance(font: QFont, text: str) -> float:
    """The width of `text` in `font` (pixels)."""
    return metrics(font).advance(text)


def wrap_lines(text: str, font: QFont, wrap: float) -> list:
    """Lines of `text` word-wrapped to `wrap` pixels (0: no wrapping); a newline breaks a line."""
    adv = metrics(font).advance
    room = wrap - LABEL_PAD_W
    lines = []
    for para in (text.split("\n") if text else []):
        if wrap <= 0 or adv(para) <= room:
            lines.append(para)
            continue
        cur = ""
        for piece, gap in _break_points(para):
            trial = cur + gap + piece if cur else piece
            if cur and adv(trial) > room:
                lines.append(cur)
                cur = piece
            else:
                cur = trial
        lines.append(cur)
    return lines


_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
_NO_LINE_START = frozenset("，。；：、）」』！？·")  # CJK punctuation stays with the character before it


def _break_points(para: str) -> list:
    """(piece, gap) of a paragraph: a line may break before any piece. Between words the gap is a
    space; Chinese has no spaces, so every CJK character is a piece of its own (gap "")."""
    out = []
    for i, word in enumerate(para.split(" ")):
        gap, piece = (" " if i else ""), ""
        for ch in word:
            if piece and _CJK.match(ch) and ch not in _NO_LINE_START:
                out.append((piece, gap))
                gap, piece = "", ch
            else:
                piece += ch
        out.append((piece, gap))
    return out


def text_size(lines, font: QFont) -> tuple:
    """(width, height) of a label showing `lines` in `font`, its halo included."""
    if not lines:
        return 0.0, 0.0
    m = metrics(font)
    return max(m.advance(s) for s in lines) + LABEL_PAD_W, m.pitch(lines) * len(lines) + LABEL_PAD_H


def text_box(text, font, x, y, wrap=0.0, align=Qt.AlignLeft) -> TextBox:
    """A text box whose anchor (x, y) is its top-left, top-right or centre, as `align` says."""
    lines = wrap_lines(text, font, wrap)
    w, h = text_size(lines, font)
    if align & Qt.AlignHCenter:
        x -= w / 2
    elif align & Qt.AlignRight:
        x -= w
    if align & Qt.AlignVCenter:
        y -= h / 2
    return TextBox(QRectF(x, y, w, h), tuple(lines), font, int(align))

