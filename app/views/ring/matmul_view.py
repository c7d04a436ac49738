"""
The sharded-matmul panel: which blocks of A, B and C each device holds, before and after the
one collective the case needs ("How to Scale Your Model", ch. 3, the four cases).

Row 1 is what every GPU holds before communicating; row 2 is what it multiplies with after the
collective, and the result's sharding. A block's colour is the device that holds it; diagonal
stripes of every device's colour are "every device holds all of it" (never the empty slot's grey,
which means "not there yet" in the ring); bands of every colour with Σ are full-size partial sums.
The row in effect at the playback time is framed: a function of (run, t).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QGradient, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from ... import theme
from .layout_text import LABEL_PAD_W, MIN_TEXT_PX, TEXT_FITS, TextBox, make_font, text_box, text_size, wrap_lines

REPLICATION_STRIPE_PX = 9  # width of one device's diagonal stripe in a replicated matrix (at scale 1)
PRESENT_WIDTH_SHARE = 0.3  # presenting: the panel's widest share of the ring tab (the ring gets the rest)
QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no maximum"


class MatmulView(QWidget):
    def __init__(self, model, playback, parent=None):
        super().__init__(parent)
        self.setObjectName("MatmulView")
        self.model, self.playback = model, playback
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setMinimumWidth(300)
        self._after = False
        self.presenting = theme.presenting_now()  # presentation mode (set_presenting): the ring beside gets the room
        frame = playback.frames.register(self)
        model.changed.connect(self._on_model_changed)
        theme.notifier().changed.connect(self.update)
        self.retranslate_ui()
        self.set_frame(frame)

    def _on_model_changed(self, run):
        self.set_frame(self.playback.frames.current())
        self.update()

    def set_presenting(self, on: bool):
        """Presentation mode (app/classroom/presentation.py): at most PRESENT_WIDTH_SHARE of the ring
        tab. At 2 : 3 the panel took 40 % of a 1280-px projector and the ring, laid out in the rest,
        could not magnify its boxes and words with the text; the panel's two rows still read."""
        self.presenting = bool(on)
        self._fit_width()

    def _fit_width(self):
        parent = self.parentWidget()
        if self.presenting and parent is not None:
            self.setMaximumWidth(max(self.minimumWidth(), int(PRESENT_WIDTH_SHARE * parent.width())))
        else:
            self.setMaximumWidth(QWIDGETSIZE_MAX)

    def event(self, e):
        if e.type() == QEvent.ParentChange:  # the ring tab's splitter: its width bounds ours while presenting
            if self.parentWidget() is not None:
                self.parentWidget().installEventFilter(self)
                self._fit_width()
        return super().event(e)

    def eventFilter(self, obj, e):
        if self.presenting and obj is self.parentWidget() and e.type() == QEvent.Resize:
            self._fit_width()
        return False

    def frame_part(self, frame) -> tuple:
        """All this view reads of a frame: its run, and whether the case's collective is over."""
        tr = frame.index.trace
        return frame.index, (not tr.collectives) or frame.t >= tr.collectives[-1].t_end - frame.eps

    def set_frame(self, frame):
        """Row 2 of the case is in effect once `frame` is past its collective."""
        index, after = self.frame_part(frame)
        if index is self.model.run.index and after != self._after:
            self._after = after
            self.update()

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        self.setToolTip(self.tr("Colour = the GPU that holds a block; diagonal stripes of every GPU's colour = every GPU holds all of it."))
        self.update()

    def after_collective(self) -> bool:
        """True when the playback time is past the case's collective (row 2 is in effect)."""
        return self._after

    # -- texts and layout ------------------------------------------------------------------
    def texts(self) -> tuple:
        return matmul_texts(self.model.run, self._after)

    def layout(self):
        title, rows = self.texts()
        return matmul_layout(self.width(), self.height(), theme.scale(), title, rows)

    # -- painting ----------------------------------------------------------------------------
    def paintEvent(self, ev):
        run = self.model.run
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing, True)
        pal = theme.palette()
        p.fillRect(self.rect(), QColor(pal.background))
        if run.matmul is None:
            return
        colors = theme.device_colors(run.scenario.n)
        lay = self.layout()
        _draw_text(p, lay.title, QColor(pal.text))
        for row in lay.rows:
            if row.active:
                p.setPen(QPen(QColor(pal.highlight), theme.line("highlight")))
                p.setBrush(QColor(pal.surface))
                p.drawRoundedRect(row.box, 8, 8)
            _draw_text(p, row.label, QColor(pal.text))
            for it in row.items:
                if it.matrix is None:
                    _draw_text(p, it.name, QColor(pal.text))
                    continue
                _paint_matrix(p, it.matrix, it.axis, colors)
                _draw_text(p, it.name, QColor(pal.text))
                _draw_text(p, it.sub, QColor(pal.text_muted))
        p.end()


def _tr(text):
    return QCoreApplication.translate("MatmulView", text)


def matmul_texts(run, after_collective: bool) -> tuple:
    """(title, rows) for `run` in the current language: rows are (label, items, active), an
    item ("A", "A[I, J_X]", axis, "columns split") for a matrix or ("→", None, None, "") for an
    operator."""
    mm = run.matmul
    n = run.scenario.n
    title = _tr("Case {k}: C = A · B on {n} GPUs").format(k=mm.case, n=n)
    A, B, C = mm.notation
    sub = {None: _tr("every GPU"), 0: _tr("rows split"), 1: _tr("columns split"),
           "partial": _tr("partial sums")}

    def mat(name, notation, axis):
        return (name, notation, axis, sub[axis])

    op = {s: (s, None, None, "") for s in ("·", "→")}
    if mm.case == 1:
        return title, [(_tr("Every GPU holds — and computes its own rows, no communication:"),
                        [mat("A", A, mm.a_axis), op["·"], mat("B", B, mm.b_axis), op["→"],
                         mat("C", C, mm.c_axis)], True)]
    before = [mat("A", A, mm.a_axis), op["·"], mat("B", B, mm.b_axis)]
    if mm.case == 3:
        before += [op["→"], mat("C", "C[I, K]{U_X}", "partial")]
    a_after = "A[I, J]" if mm.moves == "A" else A
    b_after = "B[J, K]" if mm.moves == "B" else B
    after = [mat("A", a_after, mm.a_after), op["·"], mat("B", b_after, mm.b_after), op["→"],
             mat("C", C, mm.c_axis)]
    if mm.case == 3:
        after = [mat("C", C, mm.c_axis)]
    what = {"A": _tr("all-gather A"), "B": _tr("all-gather B"),
            "C": _tr("all-reduce the partial sums of C")}[mm.moves]
    return title, [(_tr("1. Each GPU holds:"), before, not after_collective),
                   (_tr("2. After {what}:").format(what=what), after, after_collective)]


# ---------------------------------------------------------------------------------------
# Layout: a pure function of (size, text scale, texts)
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MatmulItem:
    matrix: QRectF | None  # None: an operator (· or →)
    axis: object
    name: TextBox  # the notation under a matrix, or the operator itself
    sub: TextBox | None  # "columns split" under the notation


@dataclass(frozen=True)
class MatmulRow:
    box: QRectF
    active: bool
    label: TextBox
    items: tuple


@dataclass(frozen=True)
class MatmulLayout:
    title: TextBox
    rows: tuple

    def texts(self) -> list:
        """(name, rect) of every text, for overlap checks."""
        out = [("title", self.title.rect)]
        for i, row in enumerate(self.rows):
            out.append((f"row {i + 1}", row.label.rect))
            for j, it in enumerate(row.items):
                out.append((f"row {i + 1} item {j}", it.name.rect))
                if it.sub is not None:
                    out.append((f"row {i + 1} item {j} sub", it.sub.rect))
        return [(k, r) for k, r in out if not r.isEmpty()]


def _fit_line(text: str, role: str, bold: bool, scale: float, room: float, x: float, y: float,
              align=Qt.AlignLeft) -> TextBox:
    """One line of `text` at `role`'s size, shrunk to fit `room` pixels down to MIN_TEXT_PX (then
    elided): its box anchored at x (left, or centre with AlignHCenter) and top y. A text that had
    to shrink is noted in _elided: the layout then tries all text smaller."""
    px = theme.FONT_PX[role] * scale
    font = make_font(role, bold, px)
    w = text_size([text], font)[0]
    if w > room:
        _elided.append(text)
        font = make_font(role, bold, max(MIN_TEXT_PX, px * room / w))
        w = text_size([text], font)[0]
    if w > room:
        text = QFontMetricsF(font).elidedText(text, Qt.ElideRight, max(room - LABEL_PAD_W, 1))
        w = min(text_size([text], font)[0], room)
    h = text_size([text], font)[1]
    left = x - w / 2 if align & Qt.AlignHCenter else x
    return TextBox(QRectF(left, y, w, h), (text,), font, int(align))


def _notation_lines(text: str, font, room: float) -> list:
    """`text` on one line, or on two broken after a comma or before "{" ("A[I," / "J_X]",
    "C[I, K]" / "{U_X}"), whichever fits `room` pixels; [] when neither does."""
    if text_size([text], font)[0] <= room:
        return [text]
    cuts = [m.end() for m in re.finditer(r", ", text)] + [m.start() for m in re.finditer(r"\{", text)]
    best = None
    for c in cuts:
        lines = [text[:c].rstrip(), text[c:]]
        w = text_size(lines, font)[0]
        if w <= room and (best is None or w < best[0]):
            best = (w, lines)
    return best[1] if best else []


def _fit_text(text: str, role: str, bold: bool, scale: float, room: float, x: float, y: float,
              align=Qt.AlignLeft, max_lines: int = 2, notation: bool = False) -> TextBox:
    """`text` at `role`'s size in at most `max_lines` lines of `room` pixels (words wrap; a notation
    breaks after a comma), anchored at x (left, or centre with AlignHCenter) and top y. When it
    does not fit, one line shrunk or elided by _fit_line (noted in _elided)."""
    font = make_font(role, bold, theme.FONT_PX[role] * scale)
    if notation:
        lines = _notation_lines(text, font, room)
    else:
        lines = wrap_lines(text, font, room)
        if len(lines) > max_lines or text_size(lines, font)[0] > room:
            lines = []
    if not lines:
        return _fit_line(text, role, bold, scale, room, x, y, align)
    w, h = text_size(lines, font)
    left = x - w / 2 if align & Qt.AlignHCenter else x
    return TextBox(QRectF(left, y, w, h), tuple(lines), font, int(align))


_elided: list = []  # texts that had to shrink or be cut, while one layout is tried
MIN_MATRIX_PX = 36  # a matrix's least side: smaller, its stripes stop reading; all text is tried smaller
MATRIX_PER_TEXT = 2.25  # ... and at least this many times the notation's size: the picture, not only its words
TEXT_STEP = 0.125  # the text scales tried are multiples of this (see _text_sizes)
MARGIN_SCALE_MAX = 1.5  # the panel's margins grow with the text up to this: beyond, the words need the room


def matmul_layout(width: float, height: float, scale: float, title: str, rows) -> MatmulLayout:
    """
    The panel at width×height pixels and text scale `scale`: a title, then one framed row per
    stage — its label (wrapped), then the matrices with the operators between them, each matrix
    with its notation and how it is split below it. Every text is given its own room and wraps
    (a notation after its comma) to stay in it, so no two texts meet at any size; when the texts
    leave the matrices too little room or would have to shrink, all text is tried smaller — by
    steps, so the panel's words grow with the text scale as far as its width allows (a third of a
    projector's width in presentation mode).
    """
    lay = None
    for s in _text_sizes(scale):
        _elided.clear()
        lay = _matmul_try(width, height, s, title, rows)
        small = min((it.matrix.width() for r in lay.rows for it in r.items if it.matrix is not None), default=99)
        tall = any(r.label.rect.height() > 0.35 * r.box.height() for r in lay.rows)
        big = max(MIN_MATRIX_PX, MATRIX_PER_TEXT * theme.FONT_PX["matrix"] * s)
        if not _elided and small >= big and not tall:
            break
    _elided.clear()
    return lay


def _text_sizes(scale: float) -> list:
    """The text scales tried for `scale`, largest first: `scale`, then the steps of TEXT_STEP below
    it down to TEXT_FITS' least. The same ladder for every scale, so a larger text scale never gets
    smaller words (2.5× would otherwise try 2.25, 2.0… and 2× try 1.8, 1.6…)."""
    low = scale * TEXT_FITS[-1]
    out = [scale]
    k = math.ceil(scale / TEXT_STEP - 1e-9) - 1
    while k * TEXT_STEP >= low - 1e-9 and k > 0:
        out.append(k * TEXT_STEP)
        k -= 1
    return out


def _matmul_try(width, height, scale, title, rows) -> MatmulLayout:
    W, H = max(float(width), 120.0), max(float(height), 120.0)
    m = theme.SIZE_PX["margin"] * min(scale, MARGIN_SCALE_MAX)
    title_box = _fit_text(title, "caption", True, scale, W - 2 * m, m, m * 0.5)
    y0 = title_box.rect.bottom() + m * 0.5
    row_h = (H - y0 - m) / max(len(rows), 1)
    out = []
    for i, (label, items, active) in enumerate(rows):
        top = y0 + i * row_h
        box = QRectF(m * 0.5, top, W - m, row_h - m * 0.5)
        inner = box.adjusted(m * 0.5, 4, -m * 0.5, -4)
        f_label = make_font("matrix", False, theme.FONT_PX["matrix"] * scale)
        lines = wrap_lines(label, f_label, inner.width())
        lw, lh = text_size(lines, f_label)
        if lw > inner.width():  # a word wider than the row
            _elided.append(label)
        label_box = TextBox(QRectF(inner.left(), inner.top(), min(lw, inner.width()), lh), tuple(lines), f_label)
        below = label_box.rect.bottom() + 6
        area = QRectF(inner.left(), below, inner.width(), inner.bottom() - below)
        out.append(MatmulRow(box, active, label_box, _row_items(items, area, scale)))
    return MatmulLayout(title_box, tuple(out))


OP_SIZE = 1.25  # an operator (· →) against the notation's size


def _row_items(items, area: QRectF, scale: float) -> tuple:
    mats = [it for it in items if it[1] is not None]
    n_ops = len(items) - len(mats)
    op_px = OP_SIZE * theme.FONT_PX["matrix"] * scale
    f_op = make_font("matrix", True, op_px)
    op_w = text_size(["→"], f_op)[0] + 4
    cell = (area.width() - n_ops * op_w) / max(len(mats), 1)  # each matrix's column
    total_w = len(mats) * cell + n_ops * op_w
    x = area.left() + max(0.0, (area.width() - total_w) / 2)
    # a matrix's texts have its column and half of each operator's beside it (an operator sits
    # beside the matrices, above their texts): (left, right) of each matrix's column and texts' room
    cols = []
    for j, it in enumerate(items):
        w = cell if it[1] is not None else op_w
        if it[1] is not None:
            ext_l = op_w / 2 if j > 0 else 0.0
            ext_r = op_w / 2 if j + 1 < len(items) else 0.0
            cols.append((x, x + cell, x - ext_l + 1, x + cell + ext_r - 1))
        x += w
    # the texts under the matrices first (at y = 0): the tallest notation and split say how much
    # height the matrices leave, and every matrix of the row has the same side
    names = [_fit_text(nt, "matrix", False, scale, c[3] - c[2], 0, 0, Qt.AlignHCenter, notation=True)
             for (_n, nt, _a, _s), c in zip(mats, cols)]
    subs = [_fit_text(sub, "small", False, scale, c[3] - c[2], 0, 0, Qt.AlignHCenter)
            for (*_x, sub), c in zip(mats, cols)]
    name_h = max((b.rect.height() for b in names), default=0.0)
    below = name_h + max((b.rect.height() for b in subs), default=0.0) + 4
    side = max(min(cell * 0.86, area.height() - below), 12.0)
    y = area.top() + max(0.0, (area.height() - below - side) / 2)
    out, k = [], 0
    for j, (name, notation, axis, sub) in enumerate(items):
        if notation is None:
            x = cols[k - 1][1] if k else area.left()
            op = text_box(name, f_op, x + op_w / 2, y + side / 2, align=Qt.AlignHCenter | Qt.AlignVCenter)
            out.append(MatmulItem(None, None, op, None))
            continue
        left, right, lo, hi = cols[k]
        r = QRectF((left + right - side) / 2, y, side, side)
        name_box = _moved(names[k], r.center().x(), r.bottom() + 2, lo, hi)
        sub_box = _moved(subs[k], r.center().x(), name_box.rect.top() + name_h, lo, hi)
        out.append(MatmulItem(r, axis, name_box, sub_box))
        k += 1
    return tuple(out)


def _moved(box: TextBox, cx: float, top: float, lo: float, hi: float) -> TextBox:
    """`box` centred on x = cx with its top at `top`, moved in to lie between x = lo and hi."""
    r = QRectF(box.rect)
    r.moveTo(cx - r.width() / 2, top)
    r.moveLeft(max(lo, min(r.left(), hi - r.width())))
    return box._replace(rect=r)


def _draw_text(p: QPainter, box: TextBox, color: QColor):
    if box is None or not box.lines:
        return
    p.setFont(box.font)
    p.setPen(color)
    h = QFontMetricsF(box.font).height()
    # TextDontClip: a CJK fallback font draws below the primary font's line height ("之后" was cut)
    flags = int(Qt.AlignHCenter if box.align & Qt.AlignHCenter else Qt.AlignLeft) | int(Qt.AlignTop) | int(Qt.TextDontClip)
    for i, line in enumerate(box.lines):
        p.drawText(QRectF(box.rect.left() + LABEL_PAD_W / 2, box.rect.top() + 1 + i * h,
                          box.rect.width() - LABEL_PAD_W, h), flags, line)


def _replicated_brush(r: QRectF, colors) -> QBrush:
    """Diagonal stripes cycling through every device's colour (hard edges up to 16 devices, a
    smooth band of the cyclic map beyond), repeating across the matrix."""
    n = len(colors)
    step = REPLICATION_STRIPE_PX * theme.scale() * (1 if n <= 16 else 16 / n)
    period = step * n / 2  # along each axis: a stripe is step wide measured across the diagonal
    g = QLinearGradient(r.topLeft(), r.topLeft() + QPointF(period, period))
    g.setSpread(QGradient.RepeatSpread)
    for d, c in enumerate(colors):
        g.setColorAt(d / n, c)
        if n <= 16:
            g.setColorAt((d + 1) / n - 1e-4, c)
    if n > 16:
        g.setColorAt(1.0, colors[0])
    return QBrush(g)


def _paint_matrix(p: QPainter, r: QRectF, axis, colors):
    n = len(colors)
    p.setPen(Qt.NoPen)
    if axis is None:  # replicated: every device's colour in turn, so it reads as "all of them hold it"
        p.fillRect(r, _replicated_brush(r, colors))
    elif axis == "partial":
        h = r.height() / n
        for d in range(n):
            c = QColor(colors[d])
            c.setAlpha(150)
            p.fillRect(QRectF(r.left(), r.top() + d * h, r.width(), h + 0.5), c)
        p.setPen(QColor("#000000"))
        p.setFont(make_font("title", True, min(theme.px("title"), 0.6 * r.height())))  # inside a small matrix
        p.drawText(r, Qt.AlignCenter, "Σ")
    else:
        for d in range(n):
            if axis == 0:
                h = r.height() / n
                rr = QRectF(r.left(), r.top() + d * h, r.width(), h + 0.3)
            else:
                w = r.width() / n
                rr = QRectF(r.left() + d * w, r.top(), w + 0.3, r.height())
            p.fillRect(rr, QBrush(colors[d]))
        if n <= 16:
            p.setPen(QPen(QColor(theme.palette().background), 1))
            for d in range(1, n):
                if axis == 0:
                    yy = r.top() + d * r.height() / n
                    p.drawLine(r.left(), yy, r.right(), yy)
                else:
                    xx = r.left() + d * r.width() / n
                    p.drawLine(xx, r.top(), xx, r.bottom())
    p.setPen(QPen(QColor(theme.palette().border), theme.line("outline")))
    p.setBrush(Qt.NoBrush)
    p.drawRect(r)
