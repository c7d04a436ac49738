"""
The sharded-matmul panel: which blocks of A, B and C each device holds, before and after the
one collective the case needs ("How to Scale Your Model", ch. 3, the four cases).

Row 1 is what every GPU holds before communicating; row 2 is what it multiplies with after the
collective, and the result's sharding. A block's colour is the device that holds it; grey is
"every device holds all of it"; bands of every colour with Σ are full-size partial sums.
The row in effect at the playback time is framed: a function of (run, t).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from . import theme

REPLICATED = "#BDBDBD"


class MatmulView(QWidget):
    def __init__(self, model, playback, parent=None):
        super().__init__(parent)
        self.setObjectName("MatmulView")
        self.model, self.playback = model, playback
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setMinimumWidth(300)
        self._after = False
        model.changed.connect(self._on_model_changed)
        playback.time_changed.connect(self._on_playback_time_changed)
        theme.notifier().changed.connect(self.update)
        self.retranslate_ui()
        self._on_playback_time_changed(playback.t)

    def _on_model_changed(self, run):
        self._on_playback_time_changed(self.playback.t)
        self.update()

    def _on_playback_time_changed(self, t):
        run = self.model.run
        tr = run.trace
        after = (not tr.collectives) or t >= tr.collectives[-1].t_end - run.index.eps
        if after != self._after:
            self._after = after
            self.update()

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        self.setToolTip(self.tr("Colour = the GPU that holds a block; grey = every GPU holds all of it."))
        self.update()

    def after_collective(self) -> bool:
        """True when the playback time is past the case's collective (row 2 is in effect)."""
        return self._after

    # -- painting ----------------------------------------------------------------------------
    def paintEvent(self, ev):
        run = self.model.run
        mm = run.matmul
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing, True)
        pal = theme.palette()
        p.fillRect(self.rect(), QColor(pal.background))
        if mm is None:
            return
        n = run.scenario.n
        colors = theme.device_colors(n)
        W, H = self.width(), self.height()
        m = theme.size("margin")
        title_font = theme.font("caption", bold=True)
        body = theme.font("matrix")
        fm_t, fm_b = QFontMetricsF(title_font), QFontMetricsF(body)
        title = self.tr("Case {k}: C = A · B on {n} GPUs").format(k=mm.case, n=n)
        if fm_t.horizontalAdvance(title) > W - 2 * m:  # shrink to fit rather than cut
            title_font.setPixelSize(max(10, int(title_font.pixelSize() * (W - 2 * m) / fm_t.horizontalAdvance(title))))
            fm_t = QFontMetricsF(title_font)
        p.setFont(title_font)
        p.setPen(QColor(pal.text))
        p.drawText(QRectF(m, m * 0.5, W - 2 * m, fm_t.height()), Qt.AlignLeft | Qt.AlignVCenter, title)
        y0 = m * 0.5 + fm_t.height() + m * 0.5
        A, B, C = mm.notation
        if mm.case == 1:
            rows = [(self.tr("Every GPU holds — and computes its own rows, no communication:"),
                     [("A", A, mm.a_axis), ("·", None, None), ("B", B, mm.b_axis), ("→", None, None),
                      ("C", C, mm.c_axis)], True)]
        else:
            before = [("A", A, mm.a_axis), ("·", None, None), ("B", B, mm.b_axis)]
            if mm.case == 3:
                before += [("→", None, None), ("C", "C[I, K]{U_X}", "partial")]
            a_after = "A[I, J]" if mm.moves == "A" else A
            b_after = "B[J, K]" if mm.moves == "B" else B
            after = [("A", a_after, mm.a_after), ("·", None, None), ("B", b_after, mm.b_after),
                     ("→", None, None), ("C", C, mm.c_axis)]
            if mm.case == 3:
                after = [("C", C, mm.c_axis)]
            what = {"A": self.tr("all-gather A"), "B": self.tr("all-gather B"),
                    "C": self.tr("all-reduce the partial sums of C")}[mm.moves]
            rows = [(self.tr("1. Each GPU holds:"), before, not self._after),
                    (self.tr("2. After {what}:").format(what=what), after, self._after)]
        row_h = (H - y0 - m) / len(rows)
        for i, (label, items, active) in enumerate(rows):
            top = y0 + i * row_h
            box = QRectF(m * 0.5, top, W - m, row_h - m * 0.5)
            if active:
                p.setPen(QPen(QColor(pal.highlight), theme.line("highlight")))
                p.setBrush(QColor(pal.surface))
                p.drawRoundedRect(box, 8, 8)
            p.setFont(body)
            p.setPen(QColor(pal.text))
            # wrapped, not clipped, when the panel is narrow (Chinese has no spaces: Qt breaks anywhere)
            label_h = fm_b.boundingRect(QRectF(0, 0, box.width() - m, 10 * fm_b.height()),
                                        Qt.AlignLeft | Qt.TextWordWrap, label).height()
            p.drawText(QRectF(box.left() + m * 0.5, top + 4, box.width() - m, label_h),
                       Qt.AlignLeft | Qt.AlignVCenter | Qt.TextWordWrap, label)
            self._draw_row(p, items, QRectF(box.left() + m * 0.5, top + label_h + 10,
                                            box.width() - m, box.height() - label_h - 14),
                           colors, body, fm_b)
        p.end()

    def _draw_row(self, p, items, area: QRectF, colors, font, fm):
        mats = [it for it in items if it[1] is not None]
        ops = [it for it in items if it[1] is None]
        op_w = fm.horizontalAdvance("→") * 2
        label_h = fm.height() * 2.2
        side = min((area.width() - len(ops) * op_w) / max(len(mats), 1) * 0.86, area.height() - label_h)
        side = max(side, 20)
        total_w = len(mats) * side / 0.86 + len(ops) * op_w
        x = area.left() + max(0, (area.width() - total_w) / 2)
        y = area.top() + max(0, (area.height() - label_h - side) / 2)
        pal = theme.palette()
        for name, notation, axis in items:
            if notation is None:
                p.setFont(theme.font("title", bold=True))
                p.setPen(QColor(pal.text))
                p.drawText(QRectF(x, y, op_w, side), Qt.AlignCenter, name)
                x += op_w
                continue
            cell = side / 0.86
            r = QRectF(x + (cell - side) / 2, y, side, side)
            _paint_matrix(p, r, axis, colors)
            small = fm.horizontalAdvance(notation) > cell + 20  # too wide for its cell: the small size
            p.setFont(theme.font("small") if small else font)
            p.setPen(QColor(pal.text))
            # centred under the matrix, free to use half the operator gap on each side (never past
            # the panel, never into the neighbour's label); elided only if even that is too narrow
            nfm = QFontMetricsF(p.font())
            nw = min(nfm.horizontalAdvance(notation) + 6, cell + op_w * 0.9, area.width())
            nx = min(max(x + cell / 2 - nw / 2, area.left()), area.right() - nw)
            p.drawText(QRectF(nx, y + side + 4, nw, fm.height()), Qt.AlignCenter,
                       nfm.elidedText(notation, Qt.ElideRight, nw))
            sub = {None: self.tr("every GPU"), 0: self.tr("rows split"), 1: self.tr("columns split"),
                   "partial": self.tr("partial sums")}[axis]
            p.setPen(QColor(pal.text_muted))
            p.setFont(theme.font("small"))
            p.drawText(QRectF(x - 10, y + side + 4 + fm.height(), cell + 20, fm.height()), Qt.AlignCenter, sub)
            x += cell


def _paint_matrix(p: QPainter, r: QRectF, axis, colors):
    n = len(colors)
    p.setPen(Qt.NoPen)
    if axis is None:
        p.fillRect(r, QColor(REPLICATED))
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
