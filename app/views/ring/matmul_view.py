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

from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QGradient, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from ... import theme
from .layout_text import LABEL_PAD_W, MIN_TEXT_PX, TEXT_FITS, TextBox, make_font, text_size, wrap_lines

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
    elided): its box anchored at x (left, or centre with AlignHCenter) and top y."""
    px = theme.FONT_PX[role] * scale
    font = make_font(role, bold, px)
    w = text_size([text], font)[0]
    if w > room:
        font = make_font(role, bold, max(MIN_TEXT_PX, px * room / w))
        w = text_size([text], font)[0]
    if w > room:
        text = QFontMetricsF(font).elidedText(text, Qt.ElideRight, max(room - LABEL_PAD_W, 1))
        w = min(text_size([text], font)[0], room)
        _elided.append(text)
    h = text_size([text], font)[1]
    left = x - w / 2 if align & Qt.AlignHCenter else x
    return TextBox(QRectF(left, y, w, h), (text,), font, int(align))


_elided: list = []  # texts _fit_line had to cut, while one layout is tried


def matmul_layout(width: float, height: float, scale: float, title: str, rows) -> MatmulLayout:
    """
    The panel at width×height pixels and text scale `scale`: a title, then one framed row per
    stage — its label (wrapped), then the matrices with the operators between them, each matrix
    with its notation and how it is split below it. Every text is given its own room and shrinks
    or wraps to stay in it, so no two texts meet at any size; when the texts leave the matrices
    too little room or would be cut, all text is tried smaller (a narrow panel at 2.5×).
    """
    lay = None
    for f in TEXT_FITS:
        _elided.clear()
        lay = _matmul_try(width, height, scale * f, title, rows)
        small = min((it.matrix.width() for r in lay.rows for it in r.items if it.matrix is not None), default=99)
        tall = any(r.label.rect.height() > 0.35 * r.box.height() for r in lay.rows)
        if not _elided and small >= 36 and not tall:
            break
    _elided.clear()
    return lay


def _matmul_try(width, height, scale, title, rows) -> MatmulLayout:
    W, H = max(float(width), 120.0), max(float(height), 120.0)
    m = theme.SIZE_PX["margin"] * scale
    title_box = _fit_line(title, "caption", True, scale, W - 2 * m, m, m * 0.5)
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
        label_box = TextBox(QRectF(inner.left(), inner.top(), min(lw, inner.width()), lh), tuple(lines), f_label)
        below = label_box.rect.bottom() + 6
        area = QRectF(inner.left(), below, inner.width(), inner.bottom() - below)
        out.append(MatmulRow(box, active, label_box, _row_items(items, area, scale)))
    return MatmulLayout(title_box, tuple(out))


def _row_items(items, area: QRectF, scale: float) -> tuple:
    mats = [it for it in items if it[1] is not None]
    n_ops = len(items) - len(mats)
    f_op = make_font("title", True, theme.FONT_PX["title"] * scale)
    op_w = text_size(["→"], f_op)[0] + 4
    f_name = make_font("matrix", False, theme.FONT_PX["matrix"] * scale)
    name_h = text_size(["A"], f_name)[1]
    sub_h = text_size(["A"], make_font("small", False, theme.FONT_PX["small"] * scale))[1]
    below = name_h + sub_h + 4
    cell = (area.width() - n_ops * op_w) / max(len(mats), 1)  # each matrix's column, its texts included
    side = max(min(cell * 0.86, area.height() - below), 12.0)
    total_w = len(mats) * cell + n_ops * op_w
    x = area.left() + max(0.0, (area.width() - total_w) / 2)
    y = area.top() + max(0.0, (area.height() - below - side) / 2)
    out = []
    for name, notation, axis, sub in items:
        if notation is None:
            op = _fit_line(name, "title", True, scale, op_w, x + op_w / 2, y + side / 2 - name_h, Qt.AlignHCenter)
            out.append(MatmulItem(None, None, op, None))
            x += op_w
            continue
        r = QRectF(x + (cell - side) / 2, y, side, side)
        cx = x + cell / 2
        name_box = _fit_line(notation, "matrix", False, scale, cell - 2, cx, r.bottom() + 2, Qt.AlignHCenter)
        sub_box = _fit_line(sub, "small", False, scale, cell - 2, cx, name_box.rect.bottom(), Qt.AlignHCenter)
        out.append(MatmulItem(r, axis, name_box, sub_box))
        x += cell
    return tuple(out)


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
        f = theme.font("title", bold=True)
        p.setFont(f)
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
