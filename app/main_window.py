"""
The main window: the ring view in the centre (first tab of a QTabWidget, views/ring/ring_page;
other views register through app.views.extra_views), the control dock on the left, the
explanation on the right, the timeline at the bottom, a transport toolbar, menus and a status
bar (its step text: ring_texts.step_status).

Keyboard: Space or K play/pause, ←/→ or J/L step, Home/End, [ and ] speed, O loop, Ctrl+1… tabs,
Ctrl+Shift+S save a screenshot. Presentation mode (F11), the shortcut list (? or F1) and the other
classroom actions are added by app/classroom/classroom.py through the extension points (add_dock, add_menu…).
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QColor, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QApplication, QComboBox, QDockWidget, QLabel, QMainWindow, QMenu, QSizePolicy, QSlider,
                               QTabWidget, QToolBar, QWidget)

from . import theme
from .build_status import BuildStatus
from .controls import ControlPanel
from .views.text.explain import ExplainPanel
from .words import fmt_bytes, fmt_time
from .dock_title import DockTitle
from .icons import camera_icon, transport_icon
from .views.ring import ring_swap
from .views.ring.ring_page import RingPage
from .views.ring.ring_texts import forward_status, step_status
from .state import Playback, Scenario, ScenarioModel
from .tab_list import SCENARIO_TABS

SCRUB_STEPS = 1000
DEFAULT_SIZE = (1600, 900)  # the first window, shrunk to fit a smaller screen


def fit_screen(widget, size: QSize) -> QSize:
    """`size`, no larger than the available geometry of the widget's screen (taskbars excluded)."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return size
    room = screen.availableGeometry()
    return QSize(min(size.width(), room.width()), min(size.height(), room.height()))


class MainWindow(QMainWindow):
    # docks that say nothing about a tab's view, hidden while it is shown and brought back after:
    # the weight slices and the latency plot need the room more than the ring step's story does
    TAB_HIDES = {"weights": (Qt.RightDockWidgetArea, Qt.BottomDockWidgetArea),
                 "latency": (Qt.RightDockWidgetArea, Qt.BottomDockWidgetArea, Qt.LeftDockWidgetArea)}
    def __init__(self, model: ScenarioModel | None = None, playback: Playback | None = None, parent=None):
        super().__init__(parent)
        self.setObjectName("MainWindow")
        self.model = model or ScenarioModel(Scenario())
        self.playback = playback or Playback(self.model)
        # every widget is made inside its final parent (one moved into a dock or tab is polished twice)
        self.tabs = QTabWidget(self, objectName="centerTabs")
        self.tabs.setDocumentMode(True)
        self.setCentralWidget(self.tabs)
        self.ring_page = RingPage(self.model, self.playback, self.tabs)
        self.ring_view = self.ring_page.ring
        self._tab_keys = ["ring"]
        self.tabs.addTab(self.ring_page, "")
        self._add_extra_views()
        self._auto_hidden = []  # docks a tab hid to give its view the room (see TAB_HIDES)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.controls_dock = self._dock("controlsDock", lambda d: ControlPanel(self.model, d), Qt.LeftDockWidgetArea)
        self.explain_dock = self._dock("explainDock", lambda d: ExplainPanel(self.model, self.playback, d),
                                       Qt.RightDockWidgetArea)
        self.controls, self.explain = self.controls_dock.widget(), self.explain_dock.widget()
        self._timeline = None  # built right after the first paint (pyqtgraph is a fifth of startup)
        self.timeline_dock = self._dock("timelineDock", QWidget, Qt.BottomDockWidgetArea)
        self.setCorner(Qt.BottomLeftCorner, Qt.LeftDockWidgetArea)
        self.setCorner(Qt.BottomRightCorner, Qt.RightDockWidgetArea)
        self._icons = {}
        self._make_actions()
        self._make_toolbar()
        self._make_menus()
        self._make_status_bar()
        self.build_status = BuildStatus(self, self.tabs)  # while a scenario builds on the worker
        self.model.changed.connect(self._on_model_changed)
        self.model.error.connect(self._on_model_error)
        self.playback.frames.register(self)  # the status bar's time, step and bytes
        self.playback.playing_changed.connect(self._on_playback_playing_changed)
        self.playback.speed_changed.connect(self._on_playback_speed_changed)
        self.playback.loop_changed.connect(self._on_playback_loop_changed)
        self.playback.timeline_changed.connect(self._on_playback_timeline_changed)
        self.controls.done_editing.connect(self._on_controls_done_editing)
        theme.notifier().changed.connect(self._on_theme_changed)
        self._on_theme_changed()
        self.resize(fit_screen(self, QSize(*DEFAULT_SIZE)))
        self._frame_unfitted, self._fitted_size = True, self.size()  # the frame too, once shown (_fit_frame)
        self.retranslate_ui()
        self.set_frame(self.playback.frames.current())
        self._select_tab_for(self.model.scenario)
        self.ring_view.setFocus()
        self._column_dock = None  # the dock sharing the right column with the story (share_column_with_story)
        self.explain_dock.installEventFilter(self)
        self._install_classroom()
        self._on_tab_changed(self.tabs.currentIndex())  # the classroom's docks exist only now

    def _install_classroom(self):
        """Presentation mode, languages, exports, scenario files, formula panel, predict-then-reveal:
        app/classroom/classroom.py adds them through the extension points below, in one call."""
        from .classroom.classroom import install_classroom

        self.classroom = install_classroom(self)
        from .deck.ui import install_deck  # the lecture as scenes (app/deck): its menu, keys and outline
        self.deck = install_deck(self)
        self.classroom.menu_export.addSeparator()
        self.classroom.menu_export.addAction(self.act_export_web)

    # -- extension points: all an add-on (app/classroom/classroom.py, app/classroom/presentation.py) may change
    # Besides these it reads the documented attributes model, playback, controls, ring_view, explain,
    # timeline, explain_dock (the step's story, the one dock presentation mode keeps), menu_file,
    # menu_view and menu_help, and calls set_toolbar_labels and refresh_tab_docks.
    def add_dock(self, name: str, make, area=Qt.RightDockWidgetArea) -> QDockWidget:
        """A movable, floatable, closable dock named `name`, holding the widget `make(dock)` builds
        (made inside the dock, so that it is polished once)."""
        return self._dock(name, make, area)

    def stack_with_story(self, dock: QDockWidget, above: bool):
        """Put `dock` in the story's column, above or below the story."""
        if above:
            self.splitDockWidget(dock, self.explain_dock, Qt.Vertical)
        else:
            self.splitDockWidget(self.explain_dock, dock, Qt.Vertical)

    def share_column_with_story(self, dock: QDockWidget):
        """`dock` and the story share the right column at a split the reader can drag and the
        window keeps through text-size, language and window-size changes (one third to `dock` at first)."""
        self._column_dock = dock
        dock.installEventFilter(self)
        self.resizeDocks([dock, self.explain_dock], [1, 2], Qt.Vertical)

    def add_menu(self, menu: QMenu):
        """A top-level menu, placed before Help."""
        self.menuBar().insertMenu(self.menu_help.menuAction(), menu)

    # -- construction -----------------------------------------------------------------------
    def _dock(self, name, make, area):
        dock = QDockWidget(self)
        dock.setObjectName(name)
        dock.setWidget(make(dock))
        dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                         | QDockWidget.DockWidgetClosable)
        title = DockTitle(dock)  # app/dock_title.py: Qt's title bar decodes its icons at every paint
        # a long title ("Formula: closed form vs. simulation") never holds its dock wider than the
        # picture can spare: at 1280×720 it kept the right column at 377 px and the ring at 580
        title.label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        dock.setTitleBarWidget(title)
        self.addDockWidget(area, dock)
        return dock

    def _add_extra_views(self):
        """Views from other modules (weights, buffers, latency), if they are installed."""
        try:
            from .tabs import extra_views
        except ImportError:
            return
        try:
            views = extra_views(self.model, self.playback)
        except Exception as e:  # a broken extra view must not take the lecture down
            print(f"shard-lab: extra views unavailable: {e}", file=sys.stderr)
            return
        for key, title, widget in views:
            self._tab_keys.append(key)
            self.tabs.addTab(widget, title)
            # a page retranslates its own title, maybe after the window did: follow it, whenever
            widget.windowTitleChanged.connect(lambda text, w=widget: self._on_page_title_changed(w, text))

    def _action(self, name, slot, keys=(), icon=None, checkable=False):
        act = QAction(self)
        act.setObjectName(name)
        if icon is not None:
            self._icons[act] = icon  # a TRANSPORT shape, in the theme's text colour (_on_theme_changed)
        if keys:
            act.setShortcuts([QKeySequence(k) for k in keys])
        act.setShortcutContext(Qt.WindowShortcut)
        act.setCheckable(checkable)
        act.triggered.connect(slot)
        self.addAction(act)
        return act

    def _make_actions(self):
        pb = self.playback
        self.act_play = self._action("actPlay", pb.toggle, ["Space", "K"], "play")
        self.act_back = self._action("actStepBack", pb.step_back, ["Left", "J"], "step-back")
        self.act_fwd = self._action("actStepForward", pb.step_forward, ["Right", "L"], "step-forward")
        self.act_start = self._action("actStart", pb.to_start, ["Home"], "start")
        self.act_end = self._action("actEnd", pb.to_end, ["End"], "end")
        self.act_slower = self._action("actSlower", pb.slower, ["["])
        self.act_faster = self._action("actFaster", pb.faster, ["]"])
        self.act_loop = self._action("actLoop", self._on_loop_triggered, ["O"], checkable=True)
        self.act_screenshot = self._action("actScreenshot", self._on_screenshot_triggered, ["Ctrl+Shift+S"])
        self.act_quit = self._action("actQuit", self.close, [QKeySequence.Quit])
        self.act_calibrate = self._action("actCalibrate", self._on_calibrate_triggered)
        self.act_about = self._action("actAbout", self._on_about_triggered)
        self.act_export_web = self._action("actExportWeb", self._on_export_web_triggered)  # File › Export
        self.tab_actions = []
        for i in range(self.tabs.count()):
            act = self._action(f"actTab{i}", lambda _=False, i=i: self.tabs.setCurrentIndex(i), [f"Ctrl+{i + 1}"])
            self.tab_actions.append(act)

    def _make_toolbar(self):
        tb = QToolBar(self)
        tb.setObjectName("transportBar")
        tb.setMovable(False)
        tb.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        for a in (self.act_start, self.act_back, self.act_play, self.act_fwd, self.act_end):
            tb.addAction(a)
        tb.addSeparator()
        self.speed_label = QLabel()
        self.speed_combo = QComboBox(objectName="speedCombo")
        for s in Playback.SPEEDS:
            self.speed_combo.addItem(f"{s:g}×", s)
        self.speed_combo.setCurrentIndex(Playback.SPEEDS.index(1.0))
        self.speed_combo.activated.connect(self._on_speed_combo_activated)
        self.speed_combo.setFocusPolicy(Qt.NoFocus)
        tb.addWidget(self.speed_label)
        tb.addWidget(self.speed_combo)
        tb.addAction(self.act_loop)
        tb.addSeparator()
        self.scrub = QSlider(Qt.Horizontal, objectName="scrubSlider")
        self.scrub.setRange(0, SCRUB_STEPS)
        self.scrub.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.scrub.setMinimumWidth(160)
        self.scrub.setFocusPolicy(Qt.NoFocus)
        self.scrub.valueChanged.connect(self._on_scrub_value_changed)
        tb.addWidget(self.scrub)
        self.toolbar = tb
        self.addToolBar(Qt.TopToolBarArea, tb)

    def _make_menus(self):
        mb = self.menuBar()
        self.menu_file = mb.addMenu("")
        self.menu_file.addAction(self.act_screenshot)
        self.menu_file.addSeparator()
        self.menu_file.addAction(self.act_calibrate)
        self.menu_file.addSeparator()
        self.menu_file.addAction(self.act_quit)
        self.menu_play = mb.addMenu("")
        for a in (self.act_play, self.act_back, self.act_fwd, self.act_start, self.act_end):
            self.menu_play.addAction(a)
        self.menu_play.addSeparator()
        for a in (self.act_slower, self.act_faster, self.act_loop):
            self.menu_play.addAction(a)
        self.menu_view = mb.addMenu("")
        for a in self.tab_actions:
            self.menu_view.addAction(a)
        self.menu_view.addSeparator()
        for dock in (self.controls_dock, self.explain_dock, self.timeline_dock):
            self.menu_view.addAction(dock.toggleViewAction())
        self.menu_help = mb.addMenu("")
        self.menu_help.addAction(self.act_about)

    def _make_status_bar(self):
        sb = self.statusBar()
        self.time_label = QLabel(objectName="timeLabel")
        self.step_label = QLabel(objectName="stepLabel")
        self.bytes_label = QLabel(objectName="bytesLabel")
        for w in (self.time_label, self.step_label, self.bytes_label):
            sb.addPermanentWidget(w)

    # -- texts ---------------------------------------------------------------------------------
    def changeEvent(self, e):
        if e.type() == QEvent.ActivationChange and self._frame_unfitted and self.isActiveWindow():
            QTimer.singleShot(0, self, self._fit_frame)  # framed by now (see _fit_frame)
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
            if getattr(self, "_laid_out", False):  # new words, new widths: fit the docks again
                QTimer.singleShot(0, self, self._refit_docks)
        super().changeEvent(e)

    def retranslate_ui(self):
        self.setWindowTitle(self.tr("Shard Lab — tensor parallelism you can watch"))
        self.tabs.setTabText(0, self.tr("Ring"))
        for i in range(1, self.tabs.count()):
            title = self.tabs.widget(i).windowTitle()
            if title:
                self.tabs.setTabText(i, title)
        self.controls_dock.setWindowTitle(self.tr("Scenario"))
        self.explain_dock.setWindowTitle(self.tr("What happens in this step"))
        self.timeline_dock.setWindowTitle(self.tr("Timeline (send ▲ / receive ▼ per GPU)"))
        self.menu_file.setTitle(self.tr("&File"))
        self.menu_play.setTitle(self.tr("&Playback"))
        self.menu_view.setTitle(self.tr("&View"))
        self.menu_help.setTitle(self.tr("&Help"))
        texts = {
            self.act_start: (self.tr("Start"), self.tr("Jump to the start (Home)")),
            self.act_back: (self.tr("Step back"), self.tr("Back to the previous step boundary (←)")),
            self.act_fwd: (self.tr("Step"), self.tr("Forward to the next step boundary (→)")),
            self.act_end: (self.tr("End"), self.tr("Jump to the end (End)")),
            self.act_slower: (self.tr("Slower"), self.tr("Halve the speed ([)")),
            self.act_faster: (self.tr("Faster"), self.tr("Double the speed (])")),
            self.act_loop: (self.tr("Loop"), self.tr("Start again at the end (O)")),
            self.act_screenshot: (self.tr("Save screenshot…"), self.tr("Save the window as a PNG (Ctrl+Shift+S)")),
            self.act_quit: (self.tr("Quit"), self.tr("Quit Shard Lab")),
            self.act_calibrate: (self.tr("Calibrate the link…"),
                                 self.tr("Measure α and β with MPI or read nccl-tests output, and use them as a link")),
            self.act_about: (self.tr("About Shard Lab"), self.tr("About Shard Lab")),
            self.act_export_web: (self.tr("Deck as a &web page…"),
                                  self.tr("The open deck as an offline web page: every step, both languages")),
        }
        for act, (text, tip) in texts.items():
            act.setText(text)
            act.setToolTip(tip)
        for i, act in enumerate(self.tab_actions):
            act.setText(self.tr("Show tab {k}: {name}").format(k=i + 1, name=self.tabs.tabText(i)))
        self.speed_label.setText(self.tr("Speed"))
        self.scrub.setToolTip(self.tr("Scrub through simulated time"))
        self._on_playback_playing_changed(self.playback.playing)
        self.set_frame(self.playback.frames.current())

    def _on_page_title_changed(self, page, title):
        i = self.tabs.indexOf(page)
        if i > 0 and title:
            self.tabs.setTabText(i, title)
            self.tab_actions[i].setText(self.tr("Show tab {k}: {name}").format(k=i + 1, name=title))

    def _on_theme_changed(self):
        # the stylesheet itself is app-wide (presentation.apply_look): set here too it only re-polished the window
        px = round(theme.size("icon"))
        self.toolbar.setIconSize(QSize(px, px))
        ink = QColor(theme.palette().text)  # the style's icons are dark: on black they vanished
        for act, kind in self._icons.items():
            act.setIcon(transport_icon(kind, ink))
        self.act_screenshot.setIcon(camera_icon(ink))
        # a new text size re-fits the docks (larger text had widened them, and Ctrl+0 never narrowed
        # them again); after the look is applied everywhere, and not in full screen (presentation
        # mode sizes its own column and restores the desk layout on leaving)
        if getattr(self, "_scale", theme.scale()) != theme.scale() and getattr(self, "_laid_out", False):
            QTimer.singleShot(0, self, self._refit_docks)
        self._scale = theme.scale()
        self._fit_toolbar()

    def set_toolbar_labels(self, on: bool):
        """Words beside the toolbar's icons when they fit (on), or icons only (presentation mode)."""
        self._toolbar_labels = bool(on)
        self._fit_toolbar()

    def _fit_toolbar(self):
        """Words beside the icons only if the position slider keeps its room beside them: with
        large text they pushed it into the toolbar's overflow menu, out of reach."""
        tb = self.toolbar
        want = Qt.ToolButtonTextBesideIcon if getattr(self, "_toolbar_labels", True) else Qt.ToolButtonIconOnly
        if want == Qt.ToolButtonTextBesideIcon:
            tb.setToolButtonStyle(want)
            need = tb.sizeHint().width() - self.scrub.sizeHint().width() + self.scrub.minimumWidth()
            if need > self.width():
                want = Qt.ToolButtonIconOnly
        if tb.toolButtonStyle() != want:
            tb.setToolButtonStyle(want)

    def resizeEvent(self, e):
        super().resizeEvent(e)
        if hasattr(self, "toolbar"):
            self._fit_toolbar()

    def _refit_docks(self):
        if not self.isFullScreen() and self.isVisible():
            self.layout().activate()  # the bars' new heights first: the docks share what is left
            self.apply_default_layout()

    # -- state -> widgets ---------------------------------------------------------------------------
    def _on_model_changed(self, run):
        self.statusBar().clearMessage()
        self._select_tab_for(run.scenario)

    def _on_model_error(self, msg):
        self.statusBar().showMessage(self.tr("Not changed: {msg}").format(msg=msg), 15000)

    def set_frame(self, frame):
        """The status bar and the scrubber show `frame` (app.core.frame.Frame), handed by the frame controller."""
        pb, run, t = self.playback, self.model.run, frame.t
        idx = run.index
        self.time_label.setText(self.tr("t = {t} / {T}").format(t=fmt_time(t), T=fmt_time(pb.t_end)))
        self.step_label.setText(forward_status(run, t) or step_status(frame, idx))  # a forward's ops: say which
        self.bytes_label.setText(self.tr("moved {b}").format(b=fmt_bytes(frame.bytes_moved)))
        if not self.scrub.isSliderDown():
            self.scrub.blockSignals(True)
            self.scrub.setValue(round(SCRUB_STEPS * t / pb.t_end) if pb.t_end > 0 else 0)
            self.scrub.blockSignals(False)

    def _on_playback_playing_changed(self, playing):
        self._icons[self.act_play] = "pause" if playing else "play"
        self.act_play.setIcon(transport_icon(self._icons[self.act_play], QColor(theme.palette().text)))
        self.act_play.setText(self.tr("Pause") if playing else self.tr("Play"))
        self.act_play.setToolTip(self.tr("Play / pause (Space)"))

    def _on_playback_speed_changed(self, s):
        i = self.speed_combo.findData(s)
        if i >= 0:
            self.speed_combo.setCurrentIndex(i)

    def _on_playback_loop_changed(self, on):
        self.act_loop.setChecked(on)

    def _on_playback_timeline_changed(self):
        self.set_frame(self.playback.frames.current())

    # -- widgets -> state --------------------------------------------------------------------------
    def _on_scrub_value_changed(self, v):
        self.playback.seek(self.playback.t_end * v / SCRUB_STEPS)

    def _on_speed_combo_activated(self, i):
        self.playback.set_speed(self.speed_combo.itemData(i))

    def _on_loop_triggered(self, checked):
        self.playback.set_loop(checked)

    def _on_controls_done_editing(self):
        self.ring_view.setFocus()

    def _on_screenshot_triggered(self):
        from PySide6.QtWidgets import QFileDialog, QMessageBox  # (dialogs are imported when first used: start-up)

        path, _ = QFileDialog.getSaveFileName(self, self.tr("Save screenshot"), "shard-lab.png",
                                              self.tr("PNG images (*.png)"))
        if path:
            if not path.lower().endswith(".png"):
                path += ".png"
            if self.save_screenshot(path):
                self.statusBar().showMessage(self.tr("Saved {path}").format(path=path), 5000)
            else:
                QMessageBox.warning(self, self.tr("Screenshot"), self.tr("Could not write {path}").format(path=path))

    def _on_export_web_triggered(self):
        from .deck.web_export import export_from_window

        export_from_window(self)

    def _on_calibrate_triggered(self):
        from .classroom.calibration import CalibrationDialog

        dlg = getattr(self, "calibration_dialog", None)
        if dlg is None:
            dlg = self.calibration_dialog = CalibrationDialog(self)
            dlg.link_ready.connect(self.add_link_preset)
            dlg.machine_ready.connect(lambda key, n: self.model.update(topology=key, n=n, kind="all-reduce"))
        dlg.show()
        dlg.raise_()

    def add_link_preset(self, link) -> str:
        """Offer a measured LinkSpec as a link preset and switch the scenario to it; returns its key."""
        from simcore.comm_sim import LINKS

        k, key = 1, "measured"
        while key in LINKS and LINKS[key] != link:
            k += 1
            key = f"measured-{k}"
        LINKS[key] = link
        self.controls.add_link(key, link)
        if self.model.update(link=key):
            self.statusBar().showMessage(self.tr("Now simulating on {name}: α {a:.2f} µs, β {b:.1f} GB/s").format(
                name=link.name, a=link.alpha * 1e6, b=link.bw / 1e9), 15000)
        return key

    def _on_about_triggered(self):
        from PySide6.QtWidgets import QMessageBox

        QMessageBox.about(self, self.tr("About Shard Lab"), self.tr(
            "Shard Lab simulates n GPUs on one switch holding real numpy shards, moves them through "
            "ring collectives with α–β timing, and runs a tensor-parallel Transformer forward."))

    @property
    def matmul_view(self):
        """The matmul panel beside the ring (built when first asked for or shown)."""
        return self.ring_page.matmul

    @property
    def timeline(self):
        """The timeline view (app.views.timeline.timeline), built on first use."""
        if self._timeline is None:
            from .views.timeline.timeline import TimelineView

            self._timeline = TimelineView(self.model, self.playback)
            self.timeline_dock.setWidget(self._timeline)
        return self._timeline

    def saveState(self, version: int = 0):
        """Qt's saveState of the desk layout: the docks a tab hid to give its view the room (TAB_HIDES)
        are saved as shown. Saved as hidden, a session quit on the Decode latency tab opened the next
        with no Scenario, story or timeline dock on any tab."""
        hidden = [d for d in self._auto_hidden if d.isHidden()]
        for d in hidden:
            d.setVisible(True)
        try:
            return super().saveState(version)
        finally:
            for d in hidden:
                d.setVisible(False)

    def restoreState(self, state, version: int = 0) -> bool:
        """Qt's restoreState, then a usable window: a state with the Scenario, story and timeline docks
        all hidden (saved on the Decode tab by an earlier version) shows them again, the current tab
        hides what it does without, and an open deck keeps its outline in front."""
        ok = super().restoreState(state, version)
        desk = (self.controls_dock, self.explain_dock, self.timeline_dock)
        if all(d.isHidden() for d in desk):
            for d in desk:
                d.show()
        deck = getattr(self, "deck", None)
        if deck is not None:
            deck.layout_restored()
        self._auto_hidden = []
        self.refresh_tab_docks()  # (the Decode tab hides the outline too, and brings it back after)
        return ok

    def restoreGeometry(self, geometry) -> bool:
        """Qt's restoreGeometry, then clamped to the screen: a window remembered on a large
        monitor opens whole on a 1280×720 projector, its docks on screen."""
        ok = super().restoreGeometry(geometry)
        self.clamp_to_screen()
        self._frame_unfitted, self._fitted_size = True, self.size()  # (again, frame included, once shown)
        return ok

    def clamp_to_screen(self):
        """Shrink and move the window, frame and title bar included, into its screen's available
        geometry (not when maximised or full screen: Qt sizes those). The frame is known once the
        window manager has framed the window: until then this runs again when it moves (_fit_frame)."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None or self.windowState() & (Qt.WindowMaximized | Qt.WindowFullScreen):
            return
        room = screen.availableGeometry()
        geo, frame = self.geometry(), self.frameGeometry()
        ml, mt = geo.left() - frame.left(), geo.top() - frame.top()  # the frame's margins
        mw, mh = frame.width() - geo.width(), frame.height() - geo.height()
        w, h = min(geo.width(), room.width() - mw), min(geo.height(), room.height() - mh)
        x = min(max(frame.x(), room.left()), room.right() + 1 - (w + mw))
        y = min(max(frame.y(), room.top()), room.bottom() + 1 - (h + mh))
        if (w, h, x + ml, y + mt) != (geo.width(), geo.height(), geo.x(), geo.y()):
            self.setGeometry(x + ml, y + mt, w, h)

    def _fit_frame(self):
        """Once shown (first launch, a restored geometry): the whole frame on the screen. At
        1280×720 a 720 px tall window put its bottom edge, under the title bar, off the screen.
        X11's window manager frames the window after it is mapped and moves the frame, not the
        window, so no move may reach us: this runs again when the window is activated."""
        if self._frame_unfitted and self.isVisible() and self.size() == self._fitted_size:
            self.clamp_to_screen()
            self._fitted_size = self.size()
            # the window manager may frame the window after it is shown: fitted for good once a frame is seen
            self._frame_unfitted = self.frameGeometry() == self.geometry()
        elif self.size() != self._fitted_size:  # sized since by its caller (a test, --screenshot): theirs
            self._frame_unfitted = False

    def moveEvent(self, e):
        super().moveEvent(e)
        if self._frame_unfitted and self.isVisible():
            QTimer.singleShot(0, self, self._fit_frame)

    def showEvent(self, e):
        super().showEvent(e)
        self._fit_frame()
        if not getattr(self, "_laid_out", False):
            self._laid_out = True
            self.apply_default_layout()
        # the ring view lays out once for the resizes of being shown, now that they are over
        self.ring_view.ensure_laid_out()

    def paintEvent(self, e):
        super().paintEvent(e)
        if self._timeline is None and not getattr(self, "_timeline_queued", False):
            self._timeline_queued = True
            QTimer.singleShot(0, lambda: self.timeline)  # once the first picture is on screen

    def apply_default_layout(self):
        """Give the picture most of the window: narrow side docks, a short timeline."""
        W, H = self.width(), self.height()
        s = theme.scale()
        left = int(min(max(0.17 * W, 230 * s), 360 * s))
        # a small screen (1280×720, the common projector): a narrower column, the picture half the width
        right = int(min(max((0.22 if W < 1500 else 0.25) * W, 280 * s), 560 * s))
        self.resizeDocks([self.controls_dock, self.explain_dock], [left, right], Qt.Horizontal)
        self.resizeDocks([self.timeline_dock], [int(max(0.24 * H, 150))], Qt.Vertical)
        self._column_split = [0.37]  # the closed form needs ~9 lines; the story the rest
        self._split_column()

    def _on_column_resized(self):
        if not getattr(self, "_dragging_separator", False):  # the column grew or shrank: split it as before
            self._split_column()

    def event(self, e):
        # a dock separator belongs to the window itself: a press and release on the window is the
        # reader moving one, and the column's split they leave is the one kept from then on
        t = e.type()
        if t == QEvent.MouseButtonPress:
            self._dragging_separator = True
        elif t == QEvent.MouseButtonRelease and getattr(self, "_dragging_separator", False):
            self._dragging_separator = False
            split, formula = getattr(self, "_column_split", None), self._column_dock
            if split is not None and formula is not None and formula.isVisible() and self.explain_dock.isVisible():
                split[0] = formula.height() / max(formula.height() + self.explain_dock.height(), 1)
        return super().event(e)

    def _split_column(self):
        """Share the right column between the closed form and the story at the kept fraction. The
        two get its height exactly (Qt has nothing to round), so the split after a text-size or
        language round trip, or a window resize, is the split before it."""
        formula, story = self._column_dock, self.explain_dock
        split = getattr(self, "_column_split", None)
        if split is None or formula is None or formula.isHidden() or story.isHidden() or formula.isFloating():
            return
        total = formula.height() + story.height()
        a = round(split[0] * total)
        if formula.height() != a:
            self.resizeDocks([formula, story], [a, total - a], Qt.Vertical)

    def eventFilter(self, obj, e):
        if e.type() == QEvent.Resize and obj in (self.explain_dock, self._column_dock):
            QTimer.singleShot(0, self, self._on_column_resized)
        return super().eventFilter(obj, e)

    # -- public -------------------------------------------------------------------------------------
    def select_tab(self, key: str) -> bool:
        """Show the tab registered under `key` ('ring', 'weights', 'buffers', 'latency'…)."""
        if key not in self._tab_keys:
            return False
        self.tabs.setCurrentIndex(self._tab_keys.index(key))
        return True

    def current_tab(self) -> str:
        return self._tab_keys[self.tabs.currentIndex()]

    def has_tab(self, key: str) -> bool:
        """Whether the window has the tab registered under `key` (without showing or building it)."""
        return key in self._tab_keys

    def refresh_tab_docks(self):
        """Hide (or bring back) the docks the current tab does without (see TAB_HIDES)."""
        self._on_tab_changed(self.tabs.currentIndex())

    def _on_tab_changed(self, i):
        key = self._tab_keys[i] if 0 <= i < len(self._tab_keys) else None
        self._show_transport(key != "latency")
        areas = self.TAB_HIDES.get(key, ())
        before = list(self._auto_hidden)
        for d in self._auto_hidden:
            if self.dockWidgetArea(d) not in areas:
                d.show()
        self._auto_hidden = [d for d in self._auto_hidden if self.dockWidgetArea(d) in areas]
        for d in self.findChildren(QDockWidget) if areas else ():
            if not d.isHidden() and not d.isFloating() and self.dockWidgetArea(d) in areas:
                d.hide()
                self._auto_hidden.append(d)
        if self.isVisible():
            # the tab's first paint is its settled picture: the room the docks leave it is given
            # now, and a view built for the tab just now lays out its plots now, not after that paint
            if self._auto_hidden != before:
                self.layout().activate()
            page = self.tabs.widget(i)
            if getattr(page, "built_just_now", False):
                page.built_just_now = False
                from .tabs import settle_layouts  # the tabs module loads with the first extra tab

                settle_layouts(page)

    def _show_transport(self, on: bool):
        """The decode latency tab has no animation: Play, Step and the clock's status would drive
        and describe one hidden behind it, so they are disabled and hidden there, and the status
        bar says why."""
        if not on:
            self.playback.pause()
        for a in (self.act_start, self.act_back, self.act_play, self.act_fwd, self.act_end, self.act_slower,
                  self.act_faster, self.act_loop):
            a.setEnabled(on)
        for w in (self.time_label, self.step_label, self.bytes_label):
            w.setVisible(on)
        if on:
            self.statusBar().clearMessage()
        else:
            self.statusBar().showMessage(self.tr("Decode latency is a plot, not an animation: Play and Step "
                                                 "work on the Ring, Weight slices and Buffers tabs."))

    def view(self, key: str):
        """The widget of tab `key` (an extra view is built on first use), or None."""
        if key not in self._tab_keys:
            return None
        if key == "ring":
            return self.ring_view
        page = self.tabs.widget(self._tab_keys.index(key))
        return page.view() if hasattr(page, "view") else page

    def _select_tab_for(self, sc):
        if sc.kind in SCENARIO_TABS:  # the other scenarios stay on the tab the reader chose
            self.select_tab(SCENARIO_TABS[sc.kind])

    def save_screenshot(self, path: str) -> bool:
        """Write the whole window as a PNG at its current size. Returns True on success."""
        self.timeline  # noqa: B018  (built, should the first paint not have happened yet)
        QApplication.processEvents()
        ring_swap.finish(self.ring_view)  # a new run's picture still being made across turns: made now
        return self.grab().save(path, "PNG")
