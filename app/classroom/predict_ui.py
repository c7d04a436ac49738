"""
Predict, then reveal — the Qt side (the logic is app/core/predict.py, Qt-free).

    PredictPanel       the question, chunk buttons for "which chunk" questions, the verdict
                       and the score
    PredictController  pauses the one playback clock before a step, hides that step's blocks
                       in the ring view, takes the answer from a ring-view click
                       (`device_clicked(int)`) or a chunk button, says right or wrong, then
                       plays the step to reveal it and asks about the next one
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (QFrame, QGridLayout, QLabel, QPushButton, QScrollArea, QVBoxLayout,
                               QWidget)

from simcore.algorithms import BLOCKS, slots_of
from simcore.trace import ALL, SWITCH

from .. import theme
from ..core.frame import time_eps
from ..core.predict import CHUNK, RECEIVER, PredictGame, Question, step_at, step_end, step_start


class PredictPanel(QWidget):
    """The verdict on the last answer (with the step it was about), then the next question, the
    chunk buttons (for "which chunk" questions), the skip button and, on its own line, the score;
    in a scroll area, so a dock made short (the formula dock open beside it) scrolls the text
    rather than cutting it. Nothing is ever wider than the dock: the words wrap, and the chunk
    buttons take as many to a row as the width holds (at 1280×720 the dock is 281 px and four
    buttons of Qt's 80 px least width made the body 356 px, cutting the question and a button)."""

    chunk_chosen = Signal(int)
    skip_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("PredictPanel")
        self.question = QLabel(objectName="predictQuestion")
        self.question.setWordWrap(True)
        self.question.setTextFormat(Qt.RichText)
        self.verdict = QLabel(objectName="predictVerdict")
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.RichText)
        self.score = QLabel(objectName="predictScore")
        self.score.setWordWrap(True)
        self.skip = QPushButton(objectName="predictSkip")
        self.skip.clicked.connect(self.skip_requested)
        self._chunks = QWidget()
        self._chunk_grid = QGridLayout(self._chunks)
        self._chunk_grid.setContentsMargins(0, 0, 0, 0)
        self._columns = 0  # chunk buttons to a row, as the width holds (_place_chunks)
        self.chunk_buttons: list[QPushButton] = []
        body = QWidget(objectName="predictBody")
        self.scroll = scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # the words wrap instead
        scroll.setWidget(body)
        scroll.viewport().installEventFilter(self)  # a new width: the chunk buttons' rows again
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        lay = QVBoxLayout(body)
        lay.addWidget(self.verdict)  # the answer's verdict first: it is about the step just shown
        lay.addWidget(self.question)
        lay.addWidget(self._chunks)
        lay.addWidget(self.skip, 0, Qt.AlignLeft)
        lay.addWidget(self.score)  # a line of its own: beside the button it was squeezed under it
        lay.addStretch(1)
        self.retranslate_ui()

    def set_chunk_choices(self, k: int):
        """Show k buttons "0" … "k−1" (0 hides them)."""
        while len(self.chunk_buttons) < k:
            i = len(self.chunk_buttons)
            b = QPushButton(str(i), self._chunks, objectName=f"predictChunk{i}")
            b.clicked.connect(lambda _=False, i=i: self.chunk_chosen.emit(i))
            self.chunk_buttons.append(b)
        for i, b in enumerate(self.chunk_buttons):
            b.setVisible(i < k)
        self._chunks.setVisible(k > 0)
        self._columns = 0
        self._place_chunks()

    def _button_width(self) -> int:
        """The least width that shows a chunk number whole: its text and the style's margins
        (not Qt's 80 px least push button)."""
        fm = self.fontMetrics()
        widest = max((fm.horizontalAdvance(b.text()) for b in self.chunk_buttons), default=0)
        return widest + 2 * fm.horizontalAdvance("0") + round(16 * theme.scale())

    def _place_chunks(self):
        """Put the shown chunk buttons in as many columns as the scroll area's width holds (at most
        four: the numbers read as rows of a list), each button at least _button_width wide."""
        shown = [b for b in self.chunk_buttons if not b.isHidden()]
        bw = self._button_width()
        for b in self.chunk_buttons:
            b.setMinimumWidth(bw)
        margins = self._chunks.parentWidget().layout().contentsMargins() if self._chunks.parentWidget() else None
        room = self.scroll.viewport().width() - (margins.left() + margins.right() if margins else 0)
        sp = max(self._chunk_grid.horizontalSpacing(), 0)
        cols = max(1, min(4, len(shown) or 1, (room + sp) // (bw + sp)))
        if cols == self._columns:
            return
        self._columns = cols
        for b in self.chunk_buttons:
            self._chunk_grid.removeWidget(b)
        for i, b in enumerate(shown):
            self._chunk_grid.addWidget(b, i // cols, i % cols)

    def needed_height(self) -> int:
        """The height that shows the whole panel (verdict, question, buttons, score) without
        scrolling, at its present width."""
        body = self.scroll.widget()
        self._place_chunks()
        width = self.scroll.viewport().width()
        h = body.heightForWidth(width) if body.hasHeightForWidth() else -1
        return max(h, body.minimumSizeHint().height()) + 2 * self.scroll.frameWidth()

    def eventFilter(self, obj, e):
        if obj is self.scroll.viewport() and e.type() == QEvent.Resize:
            self._place_chunks()
        return False

    def retranslate_ui(self):
        self.skip.setText(self.tr("Skip (reveal)"))
        self.skip.setToolTip(self.tr("Show the step without answering (not scored)"))

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        elif e.type() in (QEvent.FontChange, QEvent.StyleChange):  # Ctrl+= / Ctrl+0: wider numbers
            self._columns = 0
            self._place_chunks()
        super().changeEvent(e)


class PredictController(QObject):
    """
    Runs predict-then-reveal on a window's ring view and playback:

        start()   pause at the next step, hide its blocks, ask
        answer()  (a ring-view click or a chunk button) say right or wrong, then reveal:
                  play the step (or jump, animate=False) and ask about the next one
        stop()    show everything again

    The ring view needs `device_clicked(int)`. While a question is open the playback's frame
    controller puts the predict mask into every frame (`frame.hidden_after`, app/frame_controller.py):
    no view shows anything that starts at or after t — the step being predicted.
    Playing (Space) while a question is open reveals that step unscored and pauses at the next
    question: the clock never plays past a question.
    """

    state_changed = Signal()  # a new question, a verdict, or the end

    def __init__(self, model, playback, ring_view, panel: PredictPanel | None = None, parent=None,
                 animate: bool = True):
        super().__init__(parent)
        self.model, self.playback, self.ring_view = model, playback, ring_view
        self.panel = panel or PredictPanel()
        self.animate = animate
        self.active = False
        self.scores: dict = {}
        self.game = PredictGame(model.run.trace, scores=self.scores)
        self.q: Question | None = None
        self.last: tuple | None = None  # (question, choice, right) of the last answer
        self._ask_t = None
        self._reveal_to = None  # while revealing: the step end to stop at
        self._stale = False
        self._pending = []  # work deferred to the next turn of the event loop
        ring_view.device_clicked.connect(self._on_ring_view_device_clicked)
        self.panel.chunk_chosen.connect(self._on_panel_chunk_chosen)
        self.panel.skip_requested.connect(self._on_panel_skip_requested)
        model.changed.connect(self._on_model_changed)
        playback.time_changed.connect(self._on_playback_time_changed)
        playback.playing_changed.connect(self._on_playback_playing_changed)

    @property
    def trace(self):
        return self.model.run.trace

    # -- mode -----------------------------------------------------------------------------
    def start(self):
        """Ask about the next step. Turned on again, a round starts clean: no verdict on an answer
        from the last round, no score carried over."""
        if not self.active:
            self.last = None
            self.game.reset()
        self.active = True
        self.playback.pause()
        self._ask_here()

    def stop(self):
        self.active = False
        self.q, self._reveal_to, self._ask_t = None, None, None
        self._hide(None)
        self.panel.set_chunk_choices(0)
        self._show_texts()  # (empty: nothing of this round is left in the hidden panel)
        self.state_changed.emit()

    # -- asking ---------------------------------------------------------------------------
    def _ask_here(self):
        """Ask about the first step not finished at the playback's time."""
        at = step_at(self.trace, self.playback.t)
        while at is not None and self.game.question(*at) is None:
            at = self._after(at)
        if at is None:
            self.q = None
            self._hide(None)
            self.panel.set_chunk_choices(0)
            self._show_texts()
            self.state_changed.emit()
            return
        coll, step = at
        self.q = self.game.question(coll, step)
        t_ask = self._ask_time(coll, step)
        self._ask_t = t_ask
        self._stale = False
        self._hide(t_ask)
        self.playback.pause()  # a question stops the clock
        if abs(self.playback.t - t_ask) > 0:
            self.playback.seek(t_ask)
        self.panel.set_chunk_choices(self.q.n_choices if self.q.kind == CHUNK else 0)
        self._show_texts()
        self.state_changed.emit()

    def _after(self, at):
        coll, step = at
        if step + 1 < self.game.steps(coll):
            return coll, step + 1
        return (coll + 1, 0) if coll + 1 < len(self.trace.collectives) else None

    def _ask_time(self, coll, step) -> float:
        """The last step boundary at or before the step starts: the picture before it."""
        t0 = step_start(self.trace, coll, step)
        eps = time_eps(self.playback.t_end)
        stops = [s for s in self.playback.stops if s <= t0 + eps]
        return max(stops) if stops else 0.0

    def _hide(self, t):
        """The predict mask: every view hides what starts at or after t (None: nothing)."""
        self.playback.frames.set_hidden_after(t)

    # -- answering ------------------------------------------------------------------------
    def answer(self, choice: int) -> bool | None:
        """Answer the current question (device id, SWITCH or chunk); None if nothing is asked."""
        if not self.active or self.q is None or self._reveal_to is not None:
            return None
        q = self.q
        right = self.game.answer(q, choice)
        self.last = (q, int(choice), right)
        self._reveal(q)
        return right

    def answer_key(self, k: int):
        """A digit key: device k (the switch is clicked, not typed) or chunk k, if it exists."""
        if self.q is not None and 0 <= k < self.q.n_choices:
            self.answer(k)

    def skip(self):
        if self.active and self.q is not None and self._reveal_to is None:
            self.last = (self.q, None, None)
            self._reveal(self.q)

    def _reveal(self, q: Question):
        self._hide(None)
        self.panel.set_chunk_choices(0)
        target = step_end(self.trace, q.coll, q.step)
        stops = [s for s in self.playback.stops if s >= target - time_eps(self.playback.t_end)]
        target = min(stops) if stops else self.playback.t_end
        self._show_texts()
        self.state_changed.emit()
        if self.animate:
            self._reveal_to = target
            self.playback.play()
        else:
            self._ask_t = target  # an expected move, not the user's
            self.playback.seek(target)
            self._ask_here()

    # -- signals ----------------------------------------------------------------------------
    def _on_ring_view_device_clicked(self, d: int):
        if self.q is not None and self.q.kind == RECEIVER:
            self.answer(d)

    def _on_panel_chunk_chosen(self, ch: int):
        if self.q is not None and self.q.kind == CHUNK:
            self.answer(ch)

    def _on_panel_skip_requested(self):
        self.skip()

    def _on_playback_time_changed(self, t):
        # never seek from inside time_changed: slots after this one would get the times out of
        # order. Pause now, finish on the next turn of the event loop.
        if not self.active:
            return
        if self._reveal_to is not None:
            if t >= self._reveal_to - time_eps(self.playback.t_end):
                self.playback.pause()
                self._later(self._finish_reveal)
            return
        if self._ask_t is not None and t != self._ask_t:
            self._hide(None)  # the user moved the clock: show what is there, ask again when it stops
            if self.playback.playing:
                self._stale = True
            else:
                self._later(self._ask_here)

    def _on_playback_playing_changed(self, playing):
        if not self.active or self._reveal_to is not None:
            return
        if playing and self.q is not None and not self._stale:
            self.skip()  # Space at an open question: play this step unscored, stop at the next
        elif not playing and self._stale:
            self._later(self._ask_here)

    def _later(self, fn):
        if fn not in self._pending:
            self._pending.append(fn)
            QTimer.singleShot(0, self._run_pending)

    def _run_pending(self):
        todo, self._pending = self._pending, []
        for fn in todo:
            if self.active:
                fn()

    def _finish_reveal(self):
        if self._reveal_to is not None:
            target = self._reveal_to
            self._reveal_to = None
            self._ask_t = target
            self.playback.seek(target)
            self._ask_here()

    def _on_model_changed(self, run):
        self.game = PredictGame(run.trace, scores=self.scores)
        self.q, self._reveal_to = None, None
        if self.active:
            self._ask_here()

    # -- text -----------------------------------------------------------------------------
    def _show_texts(self):
        p = self.panel
        p.question.setText(self.question_text())
        p.verdict.setText(self.verdict_text())
        p.verdict.setVisible(bool(p.verdict.text()))  # no empty line above the first question
        p.score.setText(self.score_text())
        p.skip.setEnabled(self.q is not None and self._reveal_to is None)

    def retranslate_ui(self):
        self._show_texts()

    def question_text(self) -> str:
        q = self.q
        if not self.active:
            return ""
        if q is None:
            return self.tr("The collective is finished.")
        c = self.trace.collectives[q.coll]
        head = self.tr("Step %1 of %2 — predict before it happens:").replace("%1", str(q.step + 1)).replace(
            "%2", str(c.n_steps))
        if q.kind == RECEIVER and slots_of(c.op) == BLOCKS:  # chunk s·n + j is GPU s's block j
            body = self.tr("GPU %1 sends its block %2. <b>Where does it go? Click the device that receives it</b> "
                           "(or type its number).").replace("%1", str(q.device)).replace("%2", str(q.chunk % c.n))
        elif q.kind == RECEIVER:
            what = (self.tr("its whole buffer") if q.chunk == ALL
                    else self.tr("chunk %1").replace("%1", str(q.chunk)))
            body = self.tr("GPU %1 sends %2. <b>Click the device that receives it</b> "
                           "(or type its number; the switch, if it goes into the switch).")
            body = body.replace("%1", str(q.device)).replace("%2", what)
        else:
            body = self.tr("<b>Which chunk arrives at GPU %1?</b> Click or type its number.")
            body = body.replace("%1", str(q.device))
        return f"<p>{head}</p><p style='font-size:120%'>{body}</p>"

    def verdict_text(self) -> str:
        if self.last is None:
            return ""
        q, choice, right = self.last
        step = self.tr("Step %1:").replace("%1", str(q.step + 1))  # the step the answer was about
        if right is None:
            return step + " " + self.tr("Skipped.")
        answer = ", ".join(self._name(q, a) for a in sorted(q.answers))
        if right:
            return f"{step} <b style='color:#009E73'>✓ " + self.tr("Right: %1.").replace("%1", answer) + "</b>"
        return (f"{step} <b style='color:#D55E00'>✗ " + self.tr("Not quite: you chose %1, the answer is %2.")
                .replace("%1", self._name(q, choice)).replace("%2", answer) + "</b>")

    def _name(self, q: Question, v: int) -> str:
        if q.kind == CHUNK:
            return self.tr("chunk %1").replace("%1", str(v))
        return self.tr("the switch") if v == SWITCH else self.tr("GPU %1").replace("%1", str(v))

    def score_text(self) -> str:
        parts = []
        for (op, algo), s in self.scores.items():
            parts.append(self.tr("%1 (%2): %3 of %4 right").replace("%1", op).replace("%2", algo)
                         .replace("%3", str(s.right)).replace("%4", str(s.asked)))
        return "  ·  ".join(parts) if parts else self.tr("Score: no answers yet")
