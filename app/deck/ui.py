"""
The deck in a main window (`install_deck(window)`, called once by the window):

    File     Open deck…, Add the current view as a scene, Save deck…, Export handout (PDF, PNGs)…
    keys     PageDown / PageUp (and, while a deck is open, → / ←, Space) walk a scene's steps and
             then on to the next / previous scene; F5 starts the deck in presentation mode from
             the first scene, Shift+F5 from the current one; B or . blacks the screen, W whitens
             it; Home / End the first / last scene; a number then Enter jumps to that scene (while a
             prediction question is open the digits answer it instead); Esc leaves (presentation's own Esc). `?` lists them: they are the window's actions.
    dock     the deck's outline (scene list and the current scene's talking points) beside the
             picture; presentation mode hides it with the other docks.

While a deck is open, → ← Space Home End belong to the deck: the window's step / play / start /
end actions give those keys up (J, L, K still step and play) and get them back when it closes.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QKeySequence, QPainter, QShortcut
from PySide6.QtWidgets import (QApplication, QLabel, QListWidget, QListWidgetItem, QMenu, QScrollArea, QVBoxLayout,
                               QWidget)

from .. import i18n, theme
from ..core.frame import time_eps
from ..words import fmt_bytes
from .model import BUILTIN, Deck, DeckFileError, Scene, Text, builtin_path, in_package
from .scene_open import SceneError, bad_scenes, load_deck, open_scene, save_deck, scene_step, scene_time

DECK_KEYS = ("Right", "Left", "Space", "Home", "End")  # the window's keys a deck takes while open
LIST_MIN_ROWS = 5  # the outline's scene list keeps this many rows beside long talking points


def lang() -> str:
    return i18n.current_language()


class BlankScreen(QWidget):
    """The whole window black (B, .) or white (W), as a presentation program does; any key brings the picture back."""

    def __init__(self, window):
        super().__init__(window)
        self.setObjectName("deckBlank")
        self._window = window
        self.colour = "black"
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        window.installEventFilter(self)
        self.hide()

    def blank(self, colour: str):
        self.colour = colour
        self.setGeometry(self._window.rect())
        self.show()
        self.raise_()
        self.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.update()

    def paintEvent(self, e):
        QPainter(self).fillRect(self.rect(), QColor("#000000" if self.colour == "black" else "#FFFFFF"))

    def event(self, e):
        # every key but the blanking ones (B . W: their actions toggle) only brings the picture back
        if e.type() == QEvent.Type.ShortcutOverride and e.key() not in (Qt.Key.Key_B, Qt.Key.Key_W,
                                                                          Qt.Key.Key_Period):
            e.accept()
            return True
        return super().event(e)

    def keyPressEvent(self, e):
        self.hide()

    def mousePressEvent(self, e):
        self.hide()

    def eventFilter(self, obj, e):
        if obj is self._window and e.type() == QEvent.Type.Resize and self.isVisible():
            self.setGeometry(self._window.rect())
        return False


class DeckOutline(QWidget):
    """The scene list and the current scene's talking points (the deck dock's widget)."""

    scene_clicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("deckOutline")
        self.title = QLabel(objectName="deckTitle", wordWrap=True)
        self.list = QListWidget(objectName="deckList")
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay with the window
        # a long title ends in "…" (its whole text in the tooltip) rather than a sideways scroll bar
        # that cut every title at the column's edge and took a row
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.itemClicked.connect(lambda it: self.scene_clicked.emit(self.list.row(it)))
        self.list.installEventFilter(self)  # resized (the talking points changed): the scene kept in view
        self.points = QLabel(objectName="deckPoints", wordWrap=True)
        self.points.setTextFormat(Qt.TextFormat.RichText)
        self.points.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        # the talking points scroll when they are longer than the column (four in Chinese at
        # 1280x720), rather than squeezing the list or being cut off at the bottom
        self.points_area = QScrollArea(objectName="deckPointsArea", widgetResizable=True)
        self.points_area.setFrameShape(QScrollArea.Shape.NoFrame)
        self.points_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.points_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.points_area.setWidget(self.points)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)  # the column's width is the talking points' (Qt's 9 px cost a line)
        lay.setSpacing(4)
        lay.addWidget(self.title)
        lay.addWidget(self.list, 1)
        lay.addWidget(self.points_area, 1)

    def show_deck(self, deck: Deck | None, current: int, bad: dict):
        import html

        self.list.clear()
        if deck is None:
            self.title.setText("")
            self.points.setText("")
            return
        self.title.setText(f"<b>{html.escape(deck.title.get(lang()))}</b>")
        self.list.setToolTip(deck.title.get(lang()))
        muted = QColor(theme.palette().text_muted)
        for i, s in enumerate(deck.scenes):
            it = QListWidgetItem(f"{i + 1}. {s.title.get(lang())}")
            it.setToolTip(it.text())
            if i in bad:
                it.setForeground(muted)
                it.setToolTip(bad[i])
                it.setFlags(it.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.list.addItem(it)
        # long talking points (4 of them in Chinese) left the list 4 rows at 1280x720: keep some rows
        rows = min(self.list.count(), LIST_MIN_ROWS)
        self.list.setMinimumHeight(self.list.sizeHintForRow(0) * rows + 2 * self.list.frameWidth())
        if 0 <= current < len(deck.scenes):
            self.list.setCurrentRow(current)
            # the scene on screen in the list's view, once the new rows are laid out
            QTimer.singleShot(0, self, self._scroll_to_current)
            pts = "".join(f"<li>{html.escape(p.get(lang()))}</li>" for p in deck.scenes[current].points)
            self.points.setText(f"<ul style='margin-left:-20px'>{pts}</ul>")
        self._fit_points()

    def resizeEvent(self, e):
        super().resizeEvent(e)
        self._fit_points()

    def _fit_points(self):
        """The talking points get the height their wrapped lines need and the scene list the rest
        (at least LIST_MIN_ROWS rows): at 1280x720 the list took half the column and scene 10's
        points were cut mid-line under it. Short of room, the deck's title goes first (it is the
        list's tooltip); only points longer than the whole column scroll."""
        lay = self.layout()
        m = lay.contentsMargins()
        width = max(self.width() - m.left() - m.right(), 1)  # the column's, whichever widget is hidden now
        need = self.points.heightForWidth(width) if self.points.text() else 0
        title = self.title.heightForWidth(width) + lay.spacing() if self.title.text() else 0
        room = self.height() - m.top() - m.bottom() - lay.spacing() - self.list.minimumHeight()
        fits = need <= room
        self.title.setVisible(bool(self.title.text()) and need + title <= room)
        # a scroll bar takes width from the lines, and the narrower lines then need it: none when they fit
        self.points_area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff if fits
                                                    else Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.points_area.setMinimumHeight(max(0, min(need, room)))
        self.points_area.setMaximumHeight(max(need, 0))

    def eventFilter(self, obj, e):
        if obj is self.list and e.type() == QEvent.Type.Resize:
            QTimer.singleShot(0, self, self._scroll_to_current)
        return False

    def _scroll_to_current(self):
        if self.list.currentItem() is not None:
            self.list.scrollToItem(self.list.currentItem())


class DeckController(QObject):
    """Owns one window's deck: the open deck, the current scene, its actions, dock and blank screen."""

    scene_changed = Signal(int)  # the scene now on screen
    deck_changed = Signal()
    message = Signal(str)

    def __init__(self, window):
        super().__init__(window)
        self.window = w = window
        self.deck: Deck | None = None
        self.index = -1
        self.bad: dict = {}  # scene index -> why it cannot open (skipped)
        self.last_error = ""
        self.unsaved = 0  # scenes added (Add the current view as a scene) since the deck was opened or saved
        self._closing = False  # the window closes after the question about unsaved scenes was answered
        self._typed = ""  # digits typed before Enter
        self._taken = {}  # window action -> its shortcuts before the deck took DECK_KEYS
        self.blank = BlankScreen(w)

        self.act_open = self._action("actOpenDeck", self._on_open_triggered)
        self.act_add = self._action("actAddScene", self._on_add_triggered)
        self.act_save = self._action("actSaveDeck", self._on_save_triggered)
        self.act_handout = self._action("actExportHandout", self._on_handout_triggered)
        self.act_next = self._action("actDeckNext", self.next, ["PgDown"])
        self.act_prev = self._action("actDeckPrev", self.prev, ["PgUp"])
        self.act_first = self._action("actDeckFirst", self.first)
        self.act_last = self._action("actDeckLast", self.last)
        self.act_start = self._action("actDeckStart", lambda: self.start(True), ["F5"])
        self.act_start_here = self._action("actDeckStartHere", lambda: self.start(False), ["Shift+F5"])
        self.act_black = self._action("actDeckBlack", lambda: self.toggle_blank("black"), ["B", "."])
        self.act_white = self._action("actDeckWhite", lambda: self.toggle_blank("white"), ["W"])
        # a lambda: the menu's triggered(checked) would otherwise arrive as show_presenter's screen
        self.act_presenter = self._action("actPresenterView", lambda: self.show_presenter())
        self.presenter = None  # the presenter view (app/deck/presenter.py), made when first shown
        self.digit_keys = []
        for d in range(10):
            sc = QShortcut(QKeySequence(str(d)), w, objectName=f"deckDigit{d}")
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
            sc.setEnabled(False)
            sc.setProperty("group", "Deck")
            sc.activated.connect(lambda d=d: self._on_digit_key(d))
            # while predict-then-reveal is on, its digit keys share these keys: Qt hands each press to
            # one of the two in turn, as "ambiguous"; both go to _on_digit_key, which decides
            sc.activatedAmbiguously.connect(lambda d=d: self._on_digit_key(d))
            self.digit_keys.append(sc)
        for d, sc in enumerate(getattr(getattr(w, "classroom", None), "answer_keys", ())):
            sc.activatedAmbiguously.connect(lambda d=d: self._on_digit_key(d))
        self.enter_keys = []
        for k in ("Return", "Enter"):
            sc = QShortcut(QKeySequence(k), w, objectName=f"deckJump{k}")
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
            sc.setEnabled(False)
            sc.setProperty("group", "Deck")
            sc.activated.connect(self.jump_typed)
            self.enter_keys.append(sc)
        # Enter in a field (the Scenario dock's n, size…) is the field's: it applies what was typed
        QApplication.instance().focusChanged.connect(self._on_app_focus_changed)

        self.dock = w.add_dock("deckDock", DeckOutline, Qt.LeftDockWidgetArea)
        w.tabifyDockWidget(w.controls_dock, self.dock)  # beside the scenario, not a second column
        self.outline = self.dock.widget()
        self.outline.scene_clicked.connect(self.go)
        self.dock.hide()  # until a deck is open
        # the status bar says a deck is open and which scene is on screen, whatever the docks show
        self.status_label = QLabel(objectName="deckStatus")
        w.statusBar().insertPermanentWidget(0, self.status_label)
        self.status_label.hide()
        # File: the deck as a file, after the scenario's entries; View › Deck: presenting it
        file_menu = w.menu_file
        before = next((a for a in file_menu.actions()
                       if a.menu() is not None and a.menu().objectName() == "menuExport"), None)
        for a in (self.act_open, self.act_add, self.act_save, self.act_handout):
            file_menu.insertAction(before, a)
        file_menu.insertSeparator(before)
        self.menu = QMenu(w, objectName="menuDeck")
        for a in (self.act_start, self.act_start_here, self.act_next, self.act_prev, self.act_first,
                  self.act_last, self.act_black, self.act_white, self.act_presenter):
            self.menu.addAction(a)
        self.menu.addSeparator()
        self.menu.addAction(self.dock.toggleViewAction())
        w.menu_view.addMenu(self.menu)
        self._set_keys(False)
        w.installEventFilter(self)
        self.retranslate_ui()

    def _action(self, name, slot, keys=()):
        a = QAction(self.window, objectName=name)
        if keys:
            a.setShortcuts([QKeySequence(k) for k in keys])
        a.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        a.triggered.connect(slot)
        self.window.addAction(a)
        return a

    def eventFilter(self, obj, e):
        if e.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        elif e.type() == QEvent.Type.Close and obj is self.window and self.unsaved and not self._closing:
            # Ctrl+Q or the window's close button with added scenes unsaved: ask first (this filter
            # runs before the classroom's, which saves the session only for a close that happens)
            e.ignore()
            self.ask_unsaved(self._close_anyway)
            return True
        return False

    def retranslate_ui(self):
        self.menu.setTitle(self.tr("&Deck"))
        self.dock.setWindowTitle(self.tr("Deck"))
        texts = {
            self.act_open: self.tr("&Open deck…"),
            self.act_add: self.tr("&Add the current view as a scene"),
            self.act_save: self.tr("&Save deck…"),
            self.act_handout: self.tr("Export &handout (PDF, PNGs)…"),
            self.act_next: self.tr("Next step or scene"),
            self.act_prev: self.tr("Previous step or scene"),
            self.act_first: self.tr("First scene"),
            self.act_last: self.tr("Last scene"),
            self.act_start: self.tr("Present the deck from the first scene"),
            self.act_start_here: self.tr("Present the deck from this scene"),
            self.act_black: self.tr("Black screen"),
            self.act_white: self.tr("White screen"),
            self.act_presenter: self.tr("Presenter view (talking points, next scene, time)"),
        }
        for a, t in texts.items():
            a.setText(t)
        for sc in self.digit_keys:
            sc.setWhatsThis(self.tr("Type a scene number, then Enter, to jump to it"))
        for sc in self.enter_keys:
            sc.setWhatsThis(self.tr("Jump to the scene number typed"))
        self._refresh_outline()

    # -- opening ---------------------------------------------------------------------------
    def open_builtin(self, name: str = BUILTIN) -> bool:
        try:
            return self.set_deck(load_deck(builtin_path(name)))
        except DeckFileError as e:
            self._error(str(e))
            return False

    def open_deck(self, path: str) -> bool:
        """Load a deck file and show its first scene. A refused file: one sentence, nothing changes.
        With scenes added and not saved, the deck opens once the question about them is answered
        (ask_unsaved: Save or Discard; Cancel keeps the deck on screen); False until then."""
        if self.unsaved:
            self.ask_unsaved(lambda: self.open_deck(path))
            return False
        try:
            deck = load_deck(path)
        except DeckFileError as e:
            self._error(str(e))
            return False
        return self.set_deck(deck)

    def set_deck(self, deck: Deck, at: int = 0) -> bool:
        bad = bad_scenes(deck)
        if len(bad) == len(deck.scenes):
            self._error(self.tr("No scene of this deck can open: {why}").format(why=bad[0]))
            return False
        self.deck, self.bad, self.index = deck, bad, -1
        self.unsaved = 0
        self._set_keys(True)
        self._show_dock()
        self.deck_changed.emit()
        self.go(at)
        if bad:
            self.message.emit(self.tr("Skipped: {why}").format(why=" ".join(bad.values())))
        return True

    def _show_dock(self):
        """The outline in front of the scenario dock (not while presenting: the audience sees the picture)."""
        if not self.window.classroom.presentation.presenting:
            self.dock.show()
            self.dock.raise_()

    def layout_restored(self):
        """The window's dock layout was restored (the last session's, or the desk's after presentation
        mode): an open deck's outline is shown and in front; with no deck it stays hidden."""
        if self.deck is not None:
            self._show_dock()
            QTimer.singleShot(0, self, self._front_again)  # once the window is shown (it may not be yet)
        else:
            self.dock.hide()

    def _front_again(self):
        w = self.window
        if self.deck is None or not self.dock.isVisible() or self.dock.isFloating():
            return
        if w.controls_dock in w.tabifiedDockWidgets(self.dock):
            # restored hidden, then shown: Qt kept it out of the tab bar it shares with the scenario,
            # and raise_() could not bring it in front (tabified again, it has its tab)
            w.tabifyDockWidget(w.controls_dock, self.dock)
        self.dock.raise_()

    def _raise_outline(self):
        if self.dock.isVisible() and not self.dock.isFloating():
            self.dock.raise_()

    def close_deck(self):
        self.deck, self.index, self.bad, self.unsaved = None, -1, {}, 0
        self._set_keys(False)
        self.dock.hide()
        self._refresh_outline()
        self.deck_changed.emit()

    def _set_keys(self, on: bool):
        """Give → ← Space Home End to the deck (on) or back to the window's actions."""
        w = self.window
        if on and not self._taken:
            for a in (w.act_fwd, w.act_back, w.act_play, w.act_start, w.act_end):
                keys = a.shortcuts()
                self._taken[a] = keys
                a.setShortcuts([k for k in keys if k.toString() not in DECK_KEYS])
            self.act_next.setShortcuts([QKeySequence(k) for k in ("PgDown", "Right", "Space")])
            self.act_prev.setShortcuts([QKeySequence(k) for k in ("PgUp", "Left")])
            self.act_first.setShortcuts([QKeySequence("Home")])
            self.act_last.setShortcuts([QKeySequence("End")])
        elif not on and self._taken:
            for a, keys in self._taken.items():
                a.setShortcuts(keys)
            self._taken = {}
            self.act_next.setShortcuts([QKeySequence("PgDown")])
            self.act_prev.setShortcuts([QKeySequence("PgUp")])
            self.act_first.setShortcuts([])
            self.act_last.setShortcuts([])
        for a in (self.act_add, self.act_save, self.act_handout):
            a.setEnabled(True)
        for a in (self.act_first, self.act_last, self.act_black, self.act_white, self.act_start_here):
            a.setEnabled(on)
        for sc in self.digit_keys:
            sc.setEnabled(on)
        self._enable_enter()

    def _enable_enter(self):
        """The Enter keys jump to a typed scene number while a deck is open, except while a text
        field has the keyboard: a window shortcut takes the key before the field, and Enter in the
        Scenario dock's fields did nothing (only Tab applied them)."""
        on = self.deck is not None and not _is_field(QApplication.focusWidget())
        for sc in self.enter_keys:
            sc.setEnabled(on)

    def _on_app_focus_changed(self, old, new):
        self._enable_enter()

    # -- moving ----------------------------------------------------------------------------
    def good(self) -> list[int]:
        return [i for i in range(len(self.deck.scenes)) if i not in self.bad] if self.deck else []

    def go(self, i: int) -> bool:
        """Show scene i (a scene that cannot open is named, marked and skipped: the next good one)."""
        if self.deck is None:
            return False
        order = [j for j in self.good() if j >= i] or self.good()[-1:]
        for j in order:
            try:
                open_scene(self.window, self.deck, j)
            except SceneError as e:
                self.bad[j] = str(e)
                self.message.emit(str(e))
                continue
            self.index = j
            self._refresh_outline()
            # the scene's tab brings back the docks the last one hid (the Decode tab hides the left
            # column): the outline, not the scenario, in front of them again
            self.window.model.after_build(self._raise_outline)
            self.scene_changed.emit(j)
            return True
        return False

    def scene(self) -> Scene | None:
        return self.deck.scenes[self.index] if self.deck is not None and self.index >= 0 else None

    def _start_t(self) -> float:
        return scene_time(self.window.playback.stops, self.scene().step, self.scene().at)

    def next(self):
        """PageDown: the scene's next step, or (at its end, or a scene that is not walked) the next scene."""
        if self.deck is None:
            self.window.playback.step_forward()
            return
        if self._later(self.next):
            return
        pb, scene = self.window.playback, self.scene()
        if scene is not None and scene.walk and not pb.at_end:
            pb.step_forward()
            return
        later = [j for j in self.good() if j > self.index]
        if later:
            self.go(later[0])

    def prev(self):
        """PageUp: back a step within the scene (not before where it opens), else the previous scene."""
        if self.deck is None:
            self.window.playback.step_back()
            return
        if self._later(self.prev):
            return
        pb, scene = self.window.playback, self.scene()
        start = self._start_t()
        eps = 1e-12 + 1e-9 * pb.t_end
        if scene is not None and scene.walk and pb.t > start + eps:
            before = [s for s in pb.stops if s < pb.t - eps]
            pb.seek(max(before[-1], start) if before else start)
            return
        earlier = [j for j in self.good() if j < self.index]
        if earlier:
            self.go(earlier[-1])

    def _later(self, press) -> bool:
        """While the scene's scenario is still being built (on the worker thread) a clicker press
        counts once it is on screen: read now, it stepped the old run's clock, or took the old run's
        end for this scene's and skipped a scene."""
        model = self.window.model
        if model.busy:
            model.after_build(press)
            return True
        return False

    def first(self):
        self.go(0)

    def last(self):
        if self.good():
            self.go(self.good()[-1])

    def start(self, from_first: bool):
        """F5 / Shift+F5: presentation mode, from the first scene or this one (the built-in deck if none is open)."""
        if self.deck is None and not self.open_builtin():
            return
        if from_first:
            self.first()
        self.window.classroom.presentation.set_presentation(True)
        from PySide6.QtGui import QGuiApplication

        screens = QGuiApplication.screens()
        if len(screens) > 1:  # the lecturer's screen: the one the picture is not on
            mine = self.window.screen()
            self.show_presenter(next((s for s in screens if s is not mine), screens[-1]))
        if self.presenter is not None:
            self.presenter.restart_clock()

    def show_presenter(self, screen=None):
        """The presenter view (talking points, the next scene, elapsed time): maximised on `screen`
        when that is another screen than the window's (F5 with two screens); otherwise a window of
        its own on the window's screen (View › Deck › Presenter view: with one screen the lecturer's
        notes are a window beside the picture, not behind it)."""
        from .presenter import PresenterView

        if self.deck is None and not self.open_builtin():
            return None
        if self.presenter is None:
            self.presenter = PresenterView(self)
            # the clicker's keys walk the deck from the lecturer's window too (it is the active one)
            self.presenter.addActions([self.act_next, self.act_prev, self.act_first, self.act_last, self.act_black,
                                       self.act_white, self.act_start_here])
        mine = self.window.screen()
        p = self.presenter
        if screen is not None and screen is not mine:
            p.setScreen(screen)
            p.move(screen.geometry().topLeft())
            p.showMaximized()
        else:
            if mine is not None:
                # two thirds of the screen at most, in its bottom-right corner: the picture's window
                # stays in reach behind it (on a 1280×720 screen 853×480, a notes window to move aside)
                room = mine.availableGeometry()
                size = (min(1280, room.width() * 2 // 3), min(720, room.height() * 2 // 3))
                p.setScreen(mine)
                p.resize(*size)
            p.showNormal()
            if mine is not None:  # placed by its frame, title bar included, once it has one
                frame = p.frameGeometry()
                p.move(room.right() + 1 - frame.width(), room.bottom() + 1 - frame.height())
        p.raise_()
        return p

    def toggle_blank(self, colour: str):
        if self.blank.isVisible() and self.blank.colour == colour:
            self.blank.hide()
        else:
            self.blank.blank(colour)

    def type_digit(self, d: int):
        self._typed = (self._typed + str(d))[-3:]
        self.window.statusBar().showMessage(self.tr("Scene {k}…").format(k=self._typed), 3000)

    def _question(self):
        """The prediction waiting for a device or chunk number, if one is open (its controller)."""
        classroom = getattr(self.window, "classroom", None)
        if classroom is None or not classroom.act_predict.isChecked():
            return None
        predict = classroom.predict
        return predict if predict.active and predict.q is not None else None

    def _on_digit_key(self, d: int):
        """A digit: while a prediction question is open it answers it (a digit that is no choice
        does nothing, and a half-typed scene number is dropped: Enter must not jump on it);
        otherwise it types a scene number for Enter."""
        predict = self._question()
        if predict is not None:
            self._typed = ""
            predict.answer_key(d)
        elif self.deck is not None:
            self.type_digit(d)

    def jump_typed(self):
        if self._typed:
            k = int(self._typed)
            self._typed = ""
            if self.deck is not None and 1 <= k <= len(self.deck.scenes):
                self.go(k - 1)

    # -- building a deck ------------------------------------------------------------------
    def add_current_view(self, title: str = "") -> Scene:
        """A scene of what is on screen now (scenario, tab, step), appended to the deck (a new one if none)."""
        from .. import scenario_io

        w = self.window
        sc, pb = w.model.scenario, w.playback
        # the step on screen and how far into it: step_index counts the boundaries passed, one
        # fewer than the step in flight, and a scene opened at step_index showed the step before
        k, at = scene_step(pb.stops, pb.t, time_eps(pb.t_end))
        # the point names the step as the app shows it ("Step 3 of 3", counted from 1), not k
        f = pb.frames.current()
        shown, of = (f.step + 1, f.n_steps) if f is not None and f.step >= 0 else (max(k, 1), pb.n_steps)
        title = title or f"{sc.kind}, n = {sc.n}"
        where = f" ({sc.topology})" if sc.topology else ""
        points = (Text(f"{sc.kind} of {fmt_bytes(sc.nbytes)} on {sc.n} GPUs{where}, {sc.algo}.",
                       f"{sc.kind}：{fmt_bytes(sc.nbytes)}，{sc.n} 块 GPU{where}，{sc.algo}。"),
                  Text(f"Step {shown} of {of}.", f"第 {shown} 步，共 {of} 步。"))
        opened = getattr(w.model.run, "opened", None)
        if opened is not None and opened.path:  # a saved run: the scene opens the file (saved relative to the deck)
            c = next((c for c in opened.trace.collectives if c.last_msg > c.first_msg), None)
            what = f"{c.op} · {c.algo}" if c is not None else opened.name
            title = title if title != f"{sc.kind}, n = {sc.n}" else f"{what} ({opened.name})"
            points = (Text(f"{what} on {sc.n} GPUs, as {opened.name} recorded it.",
                           f"{what}：{sc.n} 块 GPU，按 {opened.name} 的记录。"), points[1])
            scene = Scene(Text(title, title), points, None, "", w.current_tab(), k, True, "",
                          os.path.abspath(opened.path), at)
        else:
            d = scenario_io.scenario_to_dict(sc)
            scene = Scene(Text(title, title), points, d, "", w.current_tab(), k, True, "", at=at)
        deck = self.deck or Deck(Text("My deck", "我的讲稿"))
        self.deck = deck.with_scene(scene)
        self.unsaved += 1
        self.index = len(self.deck.scenes) - 1
        self._set_keys(True)
        self._show_dock()
        self._refresh_outline()
        self.deck_changed.emit()
        return scene

    def save(self, path: str) -> bool:
        from ..files import ExportError

        if self.deck is None:
            return False
        if in_package(path):
            self._error(self.tr("{name} is in Shard Lab's own folder, which holds the lecture as shipped: "
                                "save your deck in another folder, such as Documents.").format(
                name=os.path.basename(path)))
            return False
        try:
            save_deck(path, self.deck)
        except (ExportError, OSError, ValueError) as e:
            self._error(str(e))
            return False
        # saved here: Save deck proposes it next time (its scenes' files are still read from where they are)
        self.deck = Deck(self.deck.title, self.deck.scenes, self.deck.folder, self.deck.note, os.path.abspath(path))
        self.unsaved = 0
        self.message.emit(self.tr("Saved {path}").format(path=os.path.basename(path)))
        return True

    def proposed_path(self) -> str:
        """Where Save deck proposes to write: the deck's own file if it is the user's, else a copy in
        Documents ("lecture (copy).json"): never the program's own folder (the shipped lecture)."""
        from PySide6.QtCore import QStandardPaths

        path = self.deck.path if self.deck is not None else ""
        if path and not in_package(path):
            return path
        folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
        if not folder or not os.path.isdir(folder) or in_package(folder):
            folder = os.path.expanduser("~")
        if not path:
            return os.path.join(folder, "deck.json")
        name = os.path.splitext(os.path.basename(path))[0]
        return os.path.join(folder, self.tr("{name} (copy).json").format(name=name))

    def ask_unsaved(self, then):
        """Scenes added and not saved: ask (Save / Discard / Cancel) and call then() after a save that
        worked or Discard; at once when there is nothing to lose. The question does not block the
        event loop (the window stays drawn; a test answers it through the box, objectName deckUnsaved)."""
        if not self.unsaved or self.deck is None:
            then()
            return
        from PySide6.QtWidgets import QMessageBox

        B = QMessageBox.StandardButton
        box = QMessageBox(QMessageBox.Icon.Question, self.tr("Deck"),
                          self.tr("You added {k} scene(s) to the deck “{title}” and did not save them.").format(
                              k=self.unsaved, title=self.deck.title.get(lang())),
                          B.Save | B.Discard | B.Cancel, self.window)
        box.setInformativeText(self.tr("Save them first?"))
        box.setDefaultButton(B.Save)
        box.setObjectName("deckUnsaved")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(button):
            role = box.standardButton(button)
            if role == B.Discard or (role == B.Save and self._on_save_triggered()):
                self.unsaved = 0
                then()

        box.buttonClicked.connect(answered)
        box.open()

    def _close_anyway(self):
        self._closing = True
        try:
            self.window.close()
        finally:
            self._closing = False

    # -- dialogs ----------------------------------------------------------------------------
    def _on_open_triggered(self):
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getOpenFileName(self.window, self.tr("Open deck"), os.path.expanduser("~"),
                                              self.tr("Shard Lab decks (*.json);;All files (*)"))
        if path:
            self.open_deck(path)

    def _on_add_triggered(self):
        from PySide6.QtWidgets import QInputDialog

        sc = self.window.model.scenario
        title, ok = QInputDialog.getText(self.window, self.tr("Add the current view as a scene"),
                                         self.tr("Scene title:"), text=f"{sc.kind}, n = {sc.n}")
        if ok:
            self.add_current_view(title.strip())

    def _on_save_triggered(self) -> bool:
        from PySide6.QtWidgets import QFileDialog

        if self.deck is None:
            self._error(self.tr("There is no deck to save: add the current view as a scene first."))
            return False
        path, _ = QFileDialog.getSaveFileName(self.window, self.tr("Save deck"), self.proposed_path(),
                                              self.tr("Shard Lab decks (*.json)"))
        if not path:
            return False
        return self.save(path if path.lower().endswith(".json") else path + ".json")

    def _on_handout_triggered(self):
        from PySide6.QtWidgets import QFileDialog

        if self.deck is None:
            self._error(self.tr("Open a deck first: the handout has one page per scene."))
            return
        a4, letter = self.tr("PDF, A4 (*.pdf)"), self.tr("PDF, US Letter (*.pdf)")
        pngs = self.tr("Numbered PNGs (*.png)")
        path, chosen = QFileDialog.getSaveFileName(self.window, self.tr("Export handout"),
                                                   os.path.expanduser("~/handout.pdf"), ";;".join((a4, letter, pngs)))
        if path:
            from .handout import export_handout, export_pngs

            try:
                if chosen == pngs or path.lower().endswith(".png"):
                    export_pngs(self.window, self.deck, os.path.dirname(path), lang())
                else:
                    if not path.lower().endswith(".pdf"):
                        path += ".pdf"
                    paper = "letter" if chosen == letter else "a4"
                    skipped = export_handout(self.window, self.deck, path, lang(), paper)
                    self.message.emit(self.tr("Saved {path}").format(path=os.path.basename(path))
                                      + "".join(" " + s for s in skipped))
            except Exception as e:  # one sentence, the deck and the window as they were
                self._error(str(e))

    def _error(self, text: str):
        self.last_error = text
        self.message.emit(text)
        if self.window.isVisible():  # a box that does not block (tests read last_error)
            from PySide6.QtWidgets import QMessageBox

            box = QMessageBox(QMessageBox.Icon.Warning, self.tr("Deck"), text, QMessageBox.StandardButton.Ok,
                              self.window)
            box.setObjectName("deckError")
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()

    def _refresh_outline(self):
        self.outline.show_deck(self.deck, self.index, self.bad)
        if self.deck is None:
            self.status_label.hide()
            return
        self.status_label.setText(self.tr("Deck: scene {k}/{n}").format(k=self.index + 1, n=len(self.deck.scenes)))
        self.status_label.setToolTip(self.deck.title.get(lang()))
        self.status_label.show()


def _is_field(w) -> bool:
    """Whether `w` is a widget that edits typed text (and takes Enter to apply it)."""
    from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QLineEdit, QPlainTextEdit, QTextEdit

    if isinstance(w, QComboBox):  # an editable one has the focus, its line edit the text
        return w.isEditable()
    if isinstance(w, (QLineEdit, QAbstractSpinBox, QPlainTextEdit)):
        return not getattr(w, "isReadOnly", lambda: False)()
    return isinstance(w, QTextEdit) and not w.isReadOnly()


def install_deck(window) -> DeckController:
    ctl = DeckController(window)
    ctl.message.connect(lambda text: window.statusBar().showMessage(text, 10000))
    return ctl
