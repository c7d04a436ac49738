"""
The classroom features, wired into a MainWindow in one call (`install_classroom(window)`):

    File     Open / Save scenario, Recent scenarios, Export frame (PNG, SVG), Export animation
             (GIF, MP4), Export trace (Chrome JSON, CSV)
    View     Presentation mode (F11), larger / smaller / normal size, Theme, Language, Formula
    Learn    Predict, then reveal
    Help     Keyboard shortcuts (? / F1: an overlay read from the actual actions)

It also remembers the window geometry, theme, size, language and the last scenario
(QSettings, see app/scenario_io.py). The window keeps its own code; this module only adds
actions, docks and menus to it through the window's extension points (MainWindow.add_dock,
stack_with_story, share_column_with_story, add_menu and the menus it names), so the two can
change independently.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QDockWidget, QMenu, QToolBar

# The dialogs (QFileDialog, QMessageBox, QProgressDialog) are imported where they open: the first
# import of a Qt class makes its enums (Python's enum module), and the window's start need not wait.

from .. import i18n, scenario_io, theme
from ..views.text.formula_panel import FormulaPanel
from .presentation import PresentationController, apply_look


class Classroom(QObject):
    """Owns the classroom actions, docks and menus of one MainWindow."""

    message = Signal(str)  # a sentence for the status bar (also shown in a box for errors)

    def __init__(self, window):
        super().__init__(window)
        self.window = w = window
        self.settings = scenario_io.settings()
        self.last_error = ""
        # the interactive app remembers its session on close (restore_session turns this on);
        # a window made by a test or a script leaves the user's settings alone
        self.remember_session = False
        self._exporting = None  # while an animation is written: its progress (dialog, callable or None)
        self._close_requested = False  # the window was closed during that export: cancel, then close
        self._close_question = None  # the question "cancel the export and close?" while it is open
        self.presentation = PresentationController(w, None)  # it gets the settings in restore_session

        # -- docks ----------------------------------------------------------------------
        self.formula_dock = w.add_dock("formulaDock", FormulaPanel)
        self.formula = self.formula_dock.widget()
        self.formula.bind(w.model, w.playback)
        w.stack_with_story(self.formula_dock, above=True)
        w.share_column_with_story(self.formula_dock)  # the story gets two thirds of the column
        self._predict = None  # predict-then-reveal's dock, panel and controller: made when first used
        self._hidden_for_predict = []

        # -- actions --------------------------------------------------------------------
        self.act_open = self._action("actOpenScenario", self._on_open_triggered, [QKeySequence.Open])
        self.act_save = self._action("actSaveScenario", self._on_save_triggered, [QKeySequence.Save])
        self.act_export_png = self._action("actExportPng", lambda: self._export_dialog("png"), ["Ctrl+E"])
        self.act_export_svg = self._action("actExportSvg", lambda: self._export_dialog("svg"))
        self.act_export_gif = self._action("actExportGif", lambda: self._export_dialog("gif"), ["Ctrl+Shift+E"])
        self.act_export_mp4 = self._action("actExportMp4", lambda: self._export_dialog("mp4"))
        self.act_export_chrome = self._action("actExportChrome", lambda: self._export_dialog("json"))
        self.act_export_csv = self._action("actExportCsv", lambda: self._export_dialog("csv"))
        self.act_predict = self._action("actPredict", self._on_predict_toggled, ["Ctrl+P"], checkable=True)
        self.act_toggle_language = self._action("actToggleLanguage", self._on_toggle_language_triggered,
                                                ["Ctrl+Shift+L"])
        self.language_group = QActionGroup(self)
        self.language_actions = {}
        for code, name in i18n.LANGUAGES.items():
            a = QAction(name, self, checkable=True, objectName=f"actLanguage_{code}")
            a.triggered.connect(lambda _=False, c=code: self.set_language(c))
            self.language_group.addAction(a)
            self.language_actions[code] = a
        self.language_actions[i18n.current_language()].setChecked(True)
        # predict mode: the digit keys answer (a device, or a chunk), enabled only while asking
        self.answer_keys = []
        for d in range(10):
            sc = QShortcut(QKeySequence(str(d)), w)
            sc.setContext(Qt.WindowShortcut)
            sc.setEnabled(False)
            sc.activated.connect(lambda d=d: self.predict.answer_key(d))
            self.answer_keys.append(sc)

        # -- menus ----------------------------------------------------------------------
        self.menu_recent = QMenu(w, objectName="menuRecent")
        self.menu_recent.aboutToShow.connect(self._fill_recent)
        self.menu_export = QMenu(w, objectName="menuExport")
        for a in (self.act_export_png, self.act_export_svg):
            self.menu_export.addAction(a)
        self.menu_export.addSeparator()
        for a in (self.act_export_gif, self.act_export_mp4):
            self.menu_export.addAction(a)
        self.menu_export.addSeparator()
        for a in (self.act_export_chrome, self.act_export_csv):
            self.menu_export.addAction(a)
        self._install_file_menu()
        self.menu_theme = QMenu(w, objectName="menuTheme")
        for a in self.presentation.theme_actions.values():
            self.menu_theme.addAction(a)
        self.menu_theme.addSeparator()
        self.menu_theme.addAction(self.presentation.act_next_theme)
        self.menu_language = QMenu(w, objectName="menuLanguage")
        for a in self.language_actions.values():
            self.menu_language.addAction(a)
        self.menu_language.addSeparator()
        self.menu_language.addAction(self.act_toggle_language)
        self._install_view_menu()
        self.menu_learn = QMenu(w, objectName="menuLearn")
        self.menu_learn.addAction(self.act_predict)
        w.add_menu(self.menu_learn)
        first = w.menu_help.actions()[0] if w.menu_help.actions() else None
        w.menu_help.insertAction(first, self.presentation.act_shortcuts)

        w.installEventFilter(self)
        self.retranslate_ui()

    # -- construction helpers ---------------------------------------------------------------
    def _action(self, name, slot, keys=(), checkable=False):
        a = QAction(self.window, objectName=name, checkable=checkable)
        if keys:
            a.setShortcuts([QKeySequence(k) for k in keys])
        a.setShortcutContext(Qt.WindowShortcut)
        a.triggered.connect(slot)
        self.window.addAction(a)
        return a

    def _install_file_menu(self):
        menu = self.window.menu_file
        first = menu.actions()[0] if menu.actions() else None
        menu.insertAction(first, self.act_open)
        menu.insertMenu(first, self.menu_recent)
        menu.insertAction(first, self.act_save)
        menu.insertSeparator(first)
        menu.insertMenu(first, self.menu_export)
        menu.insertSeparator(first)

    def _install_view_menu(self):
        w = self.window
        menu = w.menu_view
        menu.addSeparator()
        p = self.presentation
        menu.addAction(self.formula_dock.toggleViewAction())
        menu.addSeparator()
        for a in (p.act_presentation, p.act_zoom_in, p.act_zoom_out, p.act_zoom_reset):
            menu.addAction(a)
        menu.addMenu(self.menu_theme)
        menu.addMenu(self.menu_language)

    # -- texts ------------------------------------------------------------------------------
    def eventFilter(self, obj, e):
        if obj is self.window:
            if e.type() == QEvent.LanguageChange:
                self.retranslate_ui()
            elif e.type() == QEvent.Close and self._exporting is not None:
                # closing during an export asks first (the export goes on meanwhile): cancel it and
                # close, or keep exporting (_on_close_question_finished)
                self._ask_cancel_export()
                e.ignore()
                return True
            elif e.type() == QEvent.Close and self.remember_session:
                self.save_session()
            elif e.type() == QEvent.ChildPolished:  # a file dialog of this window, before it lists a folder
                from ..files import protect_dialog

                protect_dialog(e.child())
        return False

    def retranslate_ui(self):
        texts = {
            self.act_open: (self.tr("&Open scenario…"),
                            self.tr("Open a saved scenario, run or deck (.json, .json.gz)")),
            self.act_save: (self.tr("&Save scenario…"), self.tr("Save the scenario and the current step as a file")),
            self.act_export_png: (self.tr("Current frame as &PNG…"),
                                  self.tr("The ring picture as it is now, 1280×720, as a PNG image")),
            self.act_export_svg: (self.tr("Current frame as &SVG…"),
                                  self.tr("The ring picture as it is now, as vector graphics for slides")),
            self.act_export_gif: (self.tr("Animation as &GIF…"),
                                  self.tr("Every step of the collective as a looping GIF")),
            self.act_export_mp4: (self.tr("Animation as &MP4…"),
                                  self.tr("Every step of the collective as an MP4 video")),
            self.act_export_chrome: (self.tr("Trace as &Chrome JSON…"),
                                     self.tr("Every message, for Perfetto (ui.perfetto.dev) or chrome://tracing")),
            self.act_export_csv: (self.tr("Trace as CS&V…"), self.tr("One row per message, for a spreadsheet")),
            self.act_predict: (self.tr("&Predict, then reveal"),
                               self.tr("Before each step, guess where the next blocks go; then watch")),
            self.act_toggle_language: (self.tr("Switch &language (中文 / English)"),
                                       self.tr("Switch between Chinese and English")),
        }
        for a, (text, tip) in texts.items():
            a.setText(text)
            a.setToolTip(tip)
        self.menu_recent.setTitle(self.tr("Open &recent"))
        self.menu_export.setTitle(self.tr("&Export"))
        self.menu_theme.setTitle(self.tr("&Theme"))
        self.menu_language.setTitle(self.tr("&Language"))
        self.menu_learn.setTitle(self.tr("&Learn"))
        self.formula_dock.setWindowTitle(self.tr("Formula: closed form vs. simulation"))
        for sc in self.answer_keys:
            sc.setWhatsThis(self.tr("Answer the prediction: this device or chunk number"))
            sc.setProperty("group", self.tr("Predict, then reveal"))
        self.presentation.retranslate_ui()
        if self._predict is not None:
            self._retranslate_predict()

    def _retranslate_predict(self):
        self.predict_dock.setWindowTitle(self.tr("Predict, then reveal"))
        self.predict.retranslate_ui()

    # -- predict, then reveal (made on first use: the first window does not show it) ------------
    def _predict_parts(self):
        if self._predict is None:
            from .predict_ui import PredictController, PredictPanel

            w = self.window
            dock = w.add_dock("predictDock", PredictPanel)
            dock.hide()
            w.stack_with_story(dock, above=True)
            self._predict = (dock, PredictController(w.model, w.playback, w.ring_view, dock.widget(), parent=self))
            self._predict[1].state_changed.connect(self._on_predict_state_changed)
            self._retranslate_predict()
        return self._predict

    @property
    def predict_dock(self) -> QDockWidget:
        return self._predict_parts()[0]

    @property
    def predict_panel(self):
        return self.predict_dock.widget()

    @property
    def predict(self):
        """The PredictController (app/classroom/predict_ui.py)."""
        return self._predict_parts()[1]

    # -- feedback ---------------------------------------------------------------------------
    def _status(self, text, ms=8000):
        self.message.emit(text)
        self.window.statusBar().showMessage(text, ms)

    def _error(self, title, text):
        """Say what went wrong in a box that does not block (tests can read it) and the status bar."""
        from PySide6.QtWidgets import QMessageBox

        self.last_error = text
        self._status(text, 15000)
        box = QMessageBox(QMessageBox.Warning, title, text, QMessageBox.Ok, self.window)
        box.setObjectName("classroomError")
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()

    # -- scenarios as files -------------------------------------------------------------------
    def _on_open_triggered(self):
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getOpenFileName(self.window, self.tr("Open scenario"), self._folder(),
                                              self.tr("Scenarios, runs and decks (*.json *.json.gz);;All files (*)"))
        if path:
            scenario_io.remember_folder(path)
            deck = getattr(self.window, "deck", None)  # a deck by its schema goes to the deck (app/deck)
            if deck is not None and _is_deck(path):
                deck.open_deck(path)
            else:
                self.open_scenario(path)

    def _on_save_triggered(self):
        from PySide6.QtWidgets import QFileDialog

        sc = self.window.model.scenario
        name = f"{sc.kind}-n{sc.n}-{sc.algo}.json"
        path, _ = QFileDialog.getSaveFileName(self.window, self.tr("Save scenario"),
                                              os.path.join(self._folder(), name),
                                              self.tr("Shard Lab scenarios (*.json)"))
        if path:
            scenario_io.remember_folder(path)
            if not path.lower().endswith(".json"):
                path += ".json"
            self.save_scenario(path)

    def _folder(self):
        return scenario_io.last_folder()

    def open_scenario(self, path: str) -> bool:
        """Load and apply a scenario file. On any problem: a clear message, nothing changes."""
        try:
            sf = scenario_io.load_scenario(path)
        except scenario_io.ScenarioFileError as e:
            self._error(self.tr("Cannot open scenario"), str(e))
            return False
        refused = []
        self.window.model.error.connect(refused.append)
        try:
            ok = scenario_io.apply(self.window.model, self.window.playback, sf)
        finally:
            self.window.model.error.disconnect(refused.append)
        if not ok:
            self.window.controls.clear_error()  # the file was refused, not what is in the dock: the box says why
            self._error(self.tr("Cannot open scenario"), refused[0] if refused else path)
            return False
        scenario_io.add_recent(path)
        run = getattr(sf, "run", None)
        if run is not None and run.opened.note:  # a run read partly: the status bar keeps saying so
            from ..views.text.generic_text import note_text

            self._status(note_text(run), 0)
        else:
            self._status(self.tr("Opened %1").replace("%1", os.path.basename(path)))
        return True

    def save_scenario(self, path: str) -> bool:
        from . import export  # imported when first used: a fifth of the classroom's start

        w = self.window
        try:
            scenario_io.save_scenario(path, w.model.scenario, step=w.playback.step_index)
        except export.ExportError as e:
            self._error(self.tr("Cannot save scenario"), str(e))
            return False
        scenario_io.add_recent(path)
        self._status(self.tr("Saved %1").replace("%1", os.path.basename(path)))
        return True

    def _fill_recent(self):
        m = self.menu_recent
        m.clear()
        files = scenario_io.recent_files()
        for i, p in enumerate(files):
            a = m.addAction(f"&{i + 1}  {os.path.basename(p)}")
            a.setToolTip(p)
            a.triggered.connect(lambda _=False, p=p: self.open_scenario(p))
        if not files:
            a = m.addAction(self.tr("(none yet)"))
            a.setEnabled(False)
        else:
            m.addSeparator()
            m.addAction(self.tr("Clear list"), scenario_io.clear_recent)

    # -- exports -----------------------------------------------------------------------------
    def _export_dialog(self, kind):
        from PySide6.QtWidgets import QFileDialog

        sc = self.window.model.scenario
        base = f"shard-lab-{sc.kind}-n{sc.n}"
        filters = {
            "png": self.tr("PNG image (*.png)"), "svg": self.tr("SVG image (*.svg)"),
            "gif": self.tr("GIF animation (*.gif)"), "mp4": self.tr("MP4 video (*.mp4)"),
            "json": self.tr("Chrome trace (*.json)"), "csv": self.tr("CSV table (*.csv)"),
        }
        ext = "trace.json" if kind == "json" else kind
        path, _ = QFileDialog.getSaveFileName(self.window, self.tr("Export"),
                                              os.path.join(self._folder(), f"{base}.{ext}"), filters[kind])
        if not path:
            return
        scenario_io.remember_folder(path)
        if not path.lower().endswith("." + kind):
            path += "." + kind
        if kind in ("gif", "mp4"):
            self.export_animation(path, progress=self._progress_dialog())
        else:
            self.export(path)

    def _progress_dialog(self):
        from PySide6.QtWidgets import QProgressDialog

        dlg = QProgressDialog(self.window)
        dlg.setObjectName("exportProgress")
        dlg.setWindowTitle(self.tr("Exporting animation"))
        dlg.setLabelText(self.tr("Drawing every frame…"))
        dlg.setCancelButtonText(self.tr("Cancel"))
        # not modal: Qt drops a window-system close for a window a modal dialog blocks, and
        # closing the window must cancel the export (the window's controls are disabled instead)
        dlg.setWindowModality(Qt.NonModal)
        dlg.setAutoClose(False)
        dlg.setAutoReset(False)
        return dlg

    def export(self, path: str) -> bool:
        """Export by extension: .png / .svg the current frame, .json / .csv the trace."""
        from . import export

        w = self.window
        low = path.lower()
        try:
            if low.endswith((".png", ".svg")):
                export.export_frame(w, path)  # the 1280×720 ring picture, as a GIF frame shows it
            elif low.endswith(".json"):
                export.export_trace_chrome(w.model.run.trace, path)
            elif low.endswith(".csv"):
                export.export_trace_csv(w.model.run.trace, path)
            elif low.endswith((".gif", ".mp4")):
                return self.export_animation(path)
            else:
                raise export.ExportError(self.tr("Choose a .png, .svg, .gif, .mp4, .json or .csv file name."))
        except export.ExportError as e:
            self._error(self.tr("Export failed"), str(e))
            return False
        self._status(self.tr("Exported %1").replace("%1", path))
        return True

    def export_animation(self, path: str, progress=None, **kw) -> bool:
        """Write the animation (.gif / .mp4). Closing the window meanwhile cancels it, then closes."""
        from PySide6.QtWidgets import QProgressDialog

        from . import export

        if isinstance(progress, QProgressDialog):
            report = progress
        else:
            def report(done, total):
                if self._close_requested:
                    return False
                return progress is None or progress(done, total) is not False

        self._exporting, self._close_requested = progress if progress is not None else report, False
        frozen = self._freeze_window()
        try:
            frames = export.export_animation(self.window, path, progress=report, **kw)
        except export.ExportCancelled:
            self._status(self.tr("Export cancelled; no file was written."))
            return False
        except export.ExportError as e:
            self._error(self.tr("Export failed"), str(e))
            return False
        finally:
            self._exporting = None
            if self._close_question is not None:  # finished while asked: nothing left to cancel, close
                box, self._close_question = self._close_question, None
                box.close()
                self._close_requested = True
            for obj in frozen:
                obj.setEnabled(True)
            if isinstance(progress, QProgressDialog):
                progress.close()
                progress.deleteLater()
            if self._close_requested:
                QTimer.singleShot(0, self.window.close)
        self._status(self.tr("Exported %1 (%2 frames)").replace("%1", path).replace("%2", str(frames)))
        return True

    def _ask_cancel_export(self):
        """The window was closed while an animation is written: ask, without blocking the export,
        whether to cancel it and close. If the export ends first, the question goes and the window
        closes, as asked."""
        from PySide6.QtWidgets import QMessageBox

        if self._close_question is not None:
            self._close_question.raise_()
            return
        box = QMessageBox(QMessageBox.Question, self.tr("Export in progress"),
                          self.tr("An animation is being exported. Cancel the export and close the window?"),
                          QMessageBox.NoButton, self.window)
        box.setObjectName("cancelExportQuestion")
        box.setWindowModality(Qt.NonModal)  # a modal box would stop the window taking the answer's close
        box.addButton(self.tr("Cancel export and close"), QMessageBox.AcceptRole)
        box.setDefaultButton(box.addButton(self.tr("Keep exporting"), QMessageBox.RejectRole))
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.finished.connect(self._on_close_question_finished)
        self._close_question = box
        box.show()  # not open(): that makes it window-modal

    def _on_close_question_finished(self, result):
        box, self._close_question = self._close_question, None
        cancel = box is not None and box.buttonRole(box.clickedButton()) == box.ButtonRole.AcceptRole
        if not cancel or self._exporting is None:
            return
        from PySide6.QtWidgets import QProgressDialog

        self._close_requested = True  # export_animation stops at the next frame, then closes
        if isinstance(self._exporting, QProgressDialog):
            self._exporting.cancel()

    def _freeze_window(self) -> list:
        """While frames are drawn nothing may change the scenario or the clock: disable the
        window's widgets and actions (not the window itself: it must still take a close, and
        its progress dialog stays usable). Returns what was disabled, to enable it again."""
        w = self.window
        parts = [w.menuBar(), w.centralWidget()] + w.findChildren(QToolBar) + w.findChildren(QDockWidget)
        parts += w.actions() + w.findChildren(QShortcut)
        frozen = [o for o in parts if o is not None and o.isEnabled()]
        for o in frozen:
            o.setEnabled(False)
        return frozen

    # -- language -------------------------------------------------------------------------------
    def set_language(self, code: str):
        code = i18n.set_language(QApplication.instance(), code)
        if self.remember_session:
            i18n.save_language(code)
        self.language_actions[code].setChecked(True)

    def _on_toggle_language_triggered(self):
        self.set_language("en" if i18n.current_language() == "zh" else "zh")

    # -- predict, then reveal ------------------------------------------------------------------
    def _on_predict_toggled(self, on):
        w = self.window
        if on:
            # every view hides the step being predicted (the predict mask is in the frame it is
            # handed); the formula dock makes room for the question
            self._hidden_for_predict = [d for d in (self.formula_dock,) if d.isVisible()]
            for d in self._hidden_for_predict:
                d.hide()
            self.predict_dock.show()
            self.predict_dock.raise_()
            for sc in self.answer_keys:
                sc.setEnabled(True)
            self.predict.start()
            self._fit_predict_dock(at_least=int(w.height() * 0.4))
        else:
            self.predict.stop()
            for sc in self.answer_keys:
                sc.setEnabled(False)
            self.predict_dock.hide()
            for d in self._hidden_for_predict:
                d.show()
            self._hidden_for_predict = []

    def _fit_predict_dock(self, at_least: int = 0):
        """Make the prediction's dock tall enough for the whole verdict, question, buttons and
        score (it only grows: a height the reader dragged is kept while it suffices), at most three
        fifths of the window: beyond that the panel scrolls."""
        w, dock = self.window, self.predict_dock
        if dock.isHidden() or dock.isFloating() or w.isFullScreen():
            return
        w.layout().activate()
        title = dock.titleBarWidget().sizeHint().height() if dock.titleBarWidget() is not None else 0
        want = min(max(self.predict_panel.needed_height() + title, at_least), int(w.height() * 0.6))
        if want <= dock.height():
            return
        story = w.explain_dock  # the column's other dock: it gives the room (Qt shares a lone dock's request out)
        if story.isVisible() and not story.isFloating() and w.dockWidgetArea(story) == w.dockWidgetArea(dock):
            total = dock.height() + story.height()
            w.resizeDocks([dock, story], [want, total - want], Qt.Vertical)
        else:
            w.resizeDocks([dock], [want], Qt.Vertical)

    def _on_predict_state_changed(self):
        if self.act_predict.isChecked():
            QTimer.singleShot(0, self, self._fit_predict_dock)  # after the new words are laid out

    # -- session ------------------------------------------------------------------------------
    def restore_session(self, restore_scenario: bool = False, restore_geometry: bool = True):
        """
        Theme, size, window geometry and (optionally) the last scenario from an earlier run;
        from now on the session is saved when the window closes.
        """
        self.remember_session = True
        self.presentation.settings = self.settings
        self.presentation.restore_from_settings()
        if restore_geometry:
            scenario_io.restore_window(self.window)
        spec = scenario_io.remembered_calibration()
        if spec is not None:  # the last "Use as link" is in the link menu again
            key = scenario_io.link_key_for("measured", spec)
            scenario_io.register_link(key, spec)
            self.window.controls.add_link(key, spec)
        if restore_scenario:
            sf = scenario_io.last_scenario()
            if sf is not None and not scenario_io.apply(self.window.model, self.window.playback, sf):
                self._status(self.tr("The last session's scenario could not be restored."))

    def save_session(self):
        w = self.window
        if self.presentation.presenting:
            self.presentation.set_presentation(False)  # remember the desk geometry, not full screen
        scenario_io.save_window(w)
        scenario_io.save_last_scenario(w.model.scenario, w.playback.step_index)
        self.settings.setValue("ui/theme", theme.palette().key)
        self.settings.setValue("ui/scale", theme.scale())
        self.settings.setValue("ui/presentation_scale", self.presentation.presentation_scale)
        self.settings.sync()


def install_classroom(window) -> Classroom:
    """Add the classroom features to a MainWindow (call once, after the window is built)."""
    from ..files import guard_file_dialogs

    apply_look()
    guard_file_dialogs(QApplication.instance())  # no file dialog reads /proc/kmsg on the GUI thread
    return Classroom(window)


def _is_deck(path) -> bool:
    """Whether File → Open's choice is a deck (its schema in the first bytes; gzip is a run's)."""
    from ..deck.model import is_deck_text

    try:
        with open(path, "rb") as f:
            return is_deck_text(f.read(4096).decode("utf-8", "replace"))
    except OSError:
        return False
