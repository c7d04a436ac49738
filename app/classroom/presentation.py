"""
Presentation mode and the classroom look.

    PresentationController  F11 full screen, Ctrl+= / Ctrl+− / Ctrl+0 text and line size,
                            themes (light, dark, high contrast for projectors), `?` overlay
    ShortcutOverlay         every keyboard shortcut of the window, read from its QActions and
                            QShortcuts when it opens (so the list cannot go stale)

Sizes and colours live in app/theme.py: this module only changes its scale and palette and
sets the matching QPalette on the application, so Qt's own widgets (menus, docks, spin boxes)
follow the drawn views. Chunk colours stay Okabe–Ito (colour-blind safe) in every theme; on
dark backgrounds its black becomes a light grey.

Presentation mode remembers two sizes: the desk size and the projector size. Entering goes full
screen at the projector size (the last one used, 1.5× at first); leaving restores the window
and the desk size, so a round trip leaves everything as it was.

In presentation mode the picture gets the room: the menu bar, status bar and every dock but the
step's story (and the prediction, when a question is open) are hidden, the toolbar shows icons
only, the toolbar and tab bar keep their 1× size whatever the text scale (they are the lecturer's
controls, not the audience's picture: at 2.5× they took 160 px of a 720 px screen), and the story's column is kept narrow enough that the current tab's picture covers at least
PICTURE_SHARE of the screen at every text size. Esc restores the desk layout (Qt's saveState).
"""

from __future__ import annotations

import html
from typing import NamedTuple

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QColor, QKeySequence, QPainter, QPalette, QShortcut
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QScrollArea, QVBoxLayout, QWidget

from .. import theme

# Fusion: the one built-in style that honours a palette everywhere. Set by name, never made or read
# from Python before the window is up: a Python QStyle wrapper costs 12 ms of start-up (the enums
# of QStyle, some 600 members, made by Python's enum module)
STYLE = "Fusion"
QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no maximum" for a widget's size
THEME_KEYS = tuple(theme.THEMES)  # light, dark, high contrast (app/theme.py defines them)

SCALES = (0.75, 0.85, 1.0, 1.15, 1.3, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0)  # Ctrl+= / Ctrl+− steps
PRESENTATION_SCALE = 1.5  # the projector size the first time
# presentation mode: the picture's least share of the screen (the lecture-hall issue asks 60 %). It leaves the
# story's column about 225 px at 1280×720 (at 0.605 a 252 px column left the two-node and torus scenes'
# chunk numbers under 12 px; picture_keeps now hides the column where a scene's picture would lose its sizes)
PICTURE_SHARE = 0.62
# narrower than this (pixels at 1×) the story column is not worth keeping: hidden. 140 keeps a 1280×720
# projector's column at F11's 1.5× (about 225 px of room, 210 needed: some eleven characters of the story's
# 33 px type a line, wrapped; at 160 it needed 240 and the column was hidden) and hides it there from 1.75×
STORY_MIN_W = 140


PRESENT_TIMELINE = 0.13  # presentation mode: a short timeline keeps this share of the screen's height
PRESENT_TIMELINE_MIN = 72  # ... and at least this many pixels (its axis and a few GPUs' rows)
PRESENT_TIMELINE_ROOM = 100  # ... and up to this many when the picture can spare them (ticks, labels, rows)


class PresentationPlan(NamedTuple):
    """Where presentation mode puts things on a W×H screen (pixels)."""

    story_w: int  # the story's column (0: hidden)
    timeline_h: int  # the short timeline under the picture
    picture_w: int  # the current tab's picture
    picture_h: int
    zoom: float  # the ring view's magnification (RingView.set_zoom): picture and text grow together

    def share(self, W: int, H: int) -> float:
        return self.picture_w * self.picture_h / float(W * H)


def presentation_plan(W: int, H: int, scale: float, bars_h: int, sep: int = 6,
                      keeps=None) -> PresentationPlan:
    """
    Presentation mode's layout on a W×H screen at text scale `scale`, under bars (toolbar and tab
    bar) `bars_h` pixels tall: a short timeline (PRESENT_TIMELINE of the height), the picture at
    least PICTURE_SHARE of the screen, the story's column what is left beside it (a third at most,
    hidden when narrower than STORY_MIN_W·scale). A pure function: tests ask it for every screen and
    scale. The ring is magnified by the text scale (zoom), so Ctrl+= grows its boxes, lanes, blocks
    and chunk numbers with the words. `keeps(pic_w, full_w, pic_h)`, when given, says whether the
    picture beside a column keeps what it has across the whole width (picture_keeps, the ring's
    scene): where it does not, the picture takes the width and the column is hidden.
    """
    # as tall as PRESENT_TIMELINE_ROOM asks (its ticks, a label line, two rows of grouped GPUs at least
    # COMPACT_ROW_PX: TimelineView.set_compact) while a full-width picture keeps PICTURE_SHARE
    room = H - bars_h - sep - int(PICTURE_SHARE * H + 1)
    timeline_h = int(max(PRESENT_TIMELINE * H, PRESENT_TIMELINE_MIN, min(room, PRESENT_TIMELINE_ROOM)))
    pic_h = max(H - bars_h - timeline_h - sep, 1)
    story = int(min(W - sep - PICTURE_SHARE * W * H / pic_h, W / 3))
    if story < STORY_MIN_W * scale:
        story = 0
    if story and keeps is not None and not keeps(W - story - sep, W, pic_h):
        story = 0
    pic_w = W - (story + sep if story else 0)
    return PresentationPlan(story, timeline_h, pic_w, pic_h, ring_zoom(pic_w, pic_h, scale))


def picture_keeps(texts, shape, scale: float):
    """
    For presentation_plan: does the ring's picture (its texts and machine shape), `pic_w` wide beside
    the story's column, keep what it has across the screen's whole width `full_w`? Its blocks in flight
    as large up to PRESENT_BLOCK_PX and its words as large up to PRESENT_WORDS × the desk's (the two DGX
    nodes at 1280×720 and 1.5× stand side by side: beside a 231 px column their words came out 1.2× the
    desk's instead of 1.5×, and there the column yields).
    """
    from ..views.ring.layout_parts import PRESENT_BLOCK_PX
    from ..views.ring.ring_layout import PRESENT_WORDS, present_layout

    def sizes(w, h):
        lay, z = present_layout(w, h, scale, texts, shape, ring_zoom(w, h, scale))
        return lay.block * z, scale * lay.text_vs / lay.vs

    def keeps(pic_w, full_w, pic_h) -> bool:
        block, words = sizes(pic_w, pic_h)
        block_full, words_full = sizes(full_w, pic_h)
        return (block >= min(PRESENT_BLOCK_PX, block_full) - 1e-6
                and words >= min(PRESENT_WORDS, scale, words_full) - 1e-9)

    return keeps


ZOOM_ROOM = (700, 330)  # the least room (pixels at 1×) the ring is laid out in before it is magnified


def ring_zoom(pic_w: float, pic_h: float, scale: float) -> float:
    """How much presentation mode magnifies the ring (RingView.set_zoom): the text scale, unless the
    picture would then be laid out in less than ZOOM_ROOM — there the layout keeps that room and fits
    its text in it, so a small projector at a large text size gets boxes rather than a crowd of labels."""
    return max(1.0, min(scale, pic_w / ZOOM_ROOM[0], pic_h / ZOOM_ROOM[1]))


def theme_label(key: str) -> str:
    return {"light": QCoreApplication.translate("Presentation", "Light"),
            "dark": QCoreApplication.translate("Presentation", "Dark"),
            "high-contrast": QCoreApplication.translate("Presentation", "High contrast (projector)")}.get(key, key)


def qpalette(p: theme.Palette) -> QPalette:
    """A QPalette for Qt's own widgets that matches a theme Palette."""
    q = QPalette()
    c = QColor
    roles = {
        QPalette.ColorRole.Window: p.surface, QPalette.ColorRole.WindowText: p.text,
        QPalette.ColorRole.Base: p.background, QPalette.ColorRole.AlternateBase: p.surface,
        QPalette.ColorRole.Text: p.text, QPalette.ColorRole.Button: p.surface,
        QPalette.ColorRole.ButtonText: p.text, QPalette.ColorRole.ToolTipBase: p.surface,
        QPalette.ColorRole.ToolTipText: p.text, QPalette.ColorRole.PlaceholderText: p.text_muted,
        QPalette.ColorRole.BrightText: p.error, QPalette.ColorRole.Link: p.highlight,
        QPalette.ColorRole.Mid: p.slot_border, QPalette.ColorRole.Dark: p.border,
        QPalette.ColorRole.Light: p.slot_empty,
    }
    for role, hexcol in roles.items():
        q.setColor(role, c(hexcol))
    if p.key == "light":
        q.setColor(QPalette.ColorRole.Highlight, c("#0072B2"))
        q.setColor(QPalette.ColorRole.HighlightedText, c("#FFFFFF"))
    else:
        q.setColor(QPalette.ColorRole.Highlight, c(p.highlight if p.key == "high-contrast" else "#56B4E9"))
        q.setColor(QPalette.ColorRole.HighlightedText, c("#000000"))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        q.setColor(QPalette.ColorGroup.Disabled, role, c(p.text_muted if p.key != "high-contrast" else "#9A9A9A"))
    return q


def apply_look(app: QApplication | None = None):
    """Give Qt's widgets the current theme's palette and stylesheet (sizes follow theme.scale())."""
    app = app or QApplication.instance()
    if app is None:
        return
    look = repr((theme.palette(), theme.scale()))  # the whole palette: a re-registered theme differs
    if app.property("shardLabLook") == look:
        return  # already so: re-polishing every widget costs 30-80 ms
    # (with a stylesheet set, app.style() is Qt's stylesheet proxy, whose name() is empty)
    if app.property("shardLabStyle") != STYLE:  # (app/__main__ makes its application with it)
        app.setStyle(STYLE)
        app.setProperty("shardLabStyle", STYLE)
    app.setPalette(qpalette(theme.palette()))
    app.setStyleSheet(theme.stylesheet())
    app.setProperty("shardLabLook", look)


def next_scale(s: float, direction: int) -> float:
    """The next size step above (direction > 0) or below the current scale s."""
    if direction > 0:
        return next((x for x in SCALES if x > s + 1e-6), SCALES[-1])
    return next((x for x in reversed(SCALES) if x < s - 1e-6), SCALES[0])


# -- shortcuts ---------------------------------------------------------------------------
def _plain(text: str) -> str:
    """Menu text without its mnemonic '&' and trailing '…'."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip(".…").strip()


def _menu_paths(bar) -> dict:
    """{id(action): (('View', 'Theme'), position)}: where each action sits, walking the menu bar down."""
    out = {}

    def walk(actions, path):
        for a in actions:
            sub = a.menu()
            if sub is not None:
                walk(sub.actions(), path + (_plain(sub.title()),))
            elif not a.isSeparator():
                out.setdefault(id(a), (path, len(out)))

    walk(bar.actions(), ())
    return out


def collect_shortcuts(window) -> list[dict]:
    """
    Every keyboard shortcut reachable in `window`: one entry per QAction or QShortcut with a
    key, as {"keys": [QKeySequence], "text": str, "group": str, "object": the action/shortcut},
    in menu-bar order. Grouped by the menu an action sits in ("View › Theme" for a submenu);
    QShortcuts describe themselves with whatsThis() and may name a group in property "group".
    """
    bar = window.menuBar() if hasattr(window, "menuBar") else None
    paths = _menu_paths(bar) if bar is not None else {}
    order = [_plain(a.text()) for a in bar.actions()] if bar is not None else []
    out, seen = [], set()
    for a in window.findChildren(QAction):
        if a.isSeparator() or id(a) in seen:
            continue
        keys = [k for k in a.shortcuts() if not k.isEmpty()]
        if not keys or not a.isVisible():
            continue
        seen.add(id(a))
        path, pos = paths.get(id(a), ((), len(paths)))
        out.append({"keys": keys, "text": _plain(a.text()) or a.toolTip(), "group": " › ".join(path),
                    "object": a, "_order": (path, pos)})
    for s in window.findChildren(QShortcut):
        if s.key().isEmpty() or not s.isEnabled():
            continue
        text = s.whatsThis() or s.objectName()
        if text:
            group = s.property("group") or ""
            out.append({"keys": [s.key()], "text": text, "group": group, "object": s,
                        "_order": ((group,), len(paths))})

    # shortcuts that say the same thing (the ten digit keys) are one line with several keys
    merged, by_text = [], {}
    for e in out:
        key = (e["text"], e["group"], type(e["object"]))
        if key in by_text and isinstance(e["object"], QShortcut):
            by_text[key]["keys"] += e["keys"]
            by_text[key].setdefault("objects", [by_text[key]["object"]]).append(e["object"])
        else:
            by_text[key] = e
            merged.append(e)
    out = merged

    def rank(e):
        path, pos = e["_order"]
        top = path[0] if path else ""
        return (order.index(top) if top in order else len(order), pos)

    out.sort(key=rank)
    for e in out:
        del e["_order"]
    return out


_KEY_NAMES = {"Left": "←", "Right": "→", "Up": "↑", "Down": "↓"}


def key_text(k: QKeySequence) -> str:
    """A key as people read it: ← rather than Left."""
    text = k.toString(QKeySequence.SequenceFormat.NativeText)
    return "+".join(_KEY_NAMES.get(part, part) for part in text.split("+")) if text != "+" else text


def shortcut_html(entries: list[dict], columns: int = 2) -> str:
    """The overlay's rich text: a table of keys and what they do, per menu, in `columns` columns
    (1 or 2: ShortcutOverlay takes two where they fit the window's width)."""
    other = QCoreApplication.translate("Presentation", "Other")
    groups: dict[str, list] = {}
    for e in entries:
        groups.setdefault(e["group"] or other, []).append(e)
    pal = theme.palette()
    blocks = []
    for g, items in groups.items():
        rows = "".join(
            "<tr><td style='padding:2px 14px 2px 0; white-space:nowrap'>"
            + " &nbsp;".join(f"<span style='font-family:monospace; font-weight:bold; color:{pal.text}; "
                             f"background:{pal.slot_empty}'>&nbsp;{html.escape(key_text(k))}&nbsp;</span>"
                             for k in e["keys"])
            + f"</td><td style='padding:2px 0'>{html.escape(e['text'])}</td></tr>"
            for e in items)
        blocks.append((1 + len(items), f"<h3 style='margin:10px 0 4px 0'>{html.escape(g)}</h3><table>{rows}</table>"))
    title = QCoreApplication.translate("Presentation", "Keyboard shortcuts")
    hint = QCoreApplication.translate("Presentation", "Press ? or Esc to close.")
    if columns < 2:
        body = "".join(b for _, b in blocks)
    else:  # two columns of about the same height
        total, acc, split = sum(h for h, _ in blocks), 0, len(blocks)
        for i, (h, _) in enumerate(blocks):
            if acc + h / 2 > total / 2:
                split = i
                break
            acc += h
        cols = ["".join(b for _, b in blocks[:split]), "".join(b for _, b in blocks[split:])]
        body = (f"<table><tr><td style='vertical-align:top; padding-right:40px'>{cols[0]}</td>"
                f"<td style='vertical-align:top'>{cols[1]}</td></tr></table>")
    return (f"<h2 style='margin:0'>{html.escape(title)}</h2>{body}"
            f"<p style='color:{pal.text_muted}'>{html.escape(hint)}</p>")


class ShortcutOverlay(QWidget):
    """A translucent sheet over the whole window listing every shortcut; ? / Esc / click close it."""

    closed = Signal()

    def __init__(self, window):
        super().__init__(window)
        self.setObjectName("ShortcutOverlay")
        self._window = window
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, False)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.label = QLabel()
        self.label.setObjectName("shortcutList")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        # never sideways: the list takes one column where two do not fit, and scrolls down
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.label)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        lay = QVBoxLayout(self)
        lay.addWidget(self.scroll)
        self.entries: list[dict] = []
        window.installEventFilter(self)
        self.hide()

    def open(self):
        self.entries = collect_shortcuts(self._window)
        self.refresh()
        self.setGeometry(self._window.rect())
        self.show()
        self.raise_()
        self.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def refresh(self):
        p, s = theme.palette(), theme.scale()
        pad, border = round(24 * s), max(1, round(theme.line("outline")))
        self.label.setStyleSheet(f"QLabel {{ color: {p.text}; background: {p.surface}; "
                                 f"font-size: {round(theme.px('body'))}px; padding: {pad}px; "
                                 f"border: {border}px solid {p.border}; }}")
        self.scroll.setStyleSheet("QScrollArea { background: transparent; }")
        m = round(min(48 * s, 0.04 * max(self._window.width(), 1)))  # a small screen keeps its room for the list
        self.layout().setContentsMargins(m, m, m, m)
        # two columns where they fit the sheet's width (at 1.75× on 1280×720 they were 1759 px wide in a
        # 1091 px sheet, cut at the right), else one, scrolled down
        room = self._window.width() - 2 * m - 2 * (pad + border) - self.scroll.verticalScrollBar().sizeHint().width()
        self.columns = 2 if self._html_width(shortcut_html(self.entries, 2)) <= room else 1
        text = shortcut_html(self.entries, self.columns)
        # wrapped only when even one column is wider than the sheet (a wrapped label's tables take
        # their least width: "Open / scenario" on two lines where the sheet had room for one)
        self.label.setWordWrap(self.columns == 1 and self._html_width(text) > room)
        self.label.setText(text)

    def _html_width(self, text: str) -> float:
        """The width `text` takes laid out unwrapped in the list's font (pixels)."""
        from PySide6.QtGui import QFont, QTextDocument

        doc = QTextDocument()
        font = QFont(self.label.font())
        font.setPixelSize(round(theme.px("body")))
        doc.setDefaultFont(font)
        doc.setHtml(text)
        return doc.idealWidth()

    def close_overlay(self):
        if self.isVisible():
            self.hide()
            self.closed.emit()

    def paintEvent(self, e):
        p = QPainter(self)
        bg = QColor(theme.palette().background)
        bg.setAlpha(200)
        p.fillRect(self.rect(), bg)

    def event(self, e):
        # take ?, F1 and Esc before the window's shortcuts do: they close the sheet
        if e.type() == QEvent.Type.ShortcutOverride and e.key() in (Qt.Key.Key_Escape, Qt.Key.Key_Question,
                                                                    Qt.Key.Key_F1):
            e.accept()
            return True
        return super().event(e)

    def keyPressEvent(self, e):
        if e.key() in (Qt.Key.Key_Escape, Qt.Key.Key_Question, Qt.Key.Key_F1):
            self.close_overlay()
            return
        super().keyPressEvent(e)

    def mousePressEvent(self, e):
        self.close_overlay()

    def eventFilter(self, obj, e):
        if obj is self._window and e.type() == QEvent.Type.Resize and self.isVisible():
            self.setGeometry(QRect(0, 0, e.size().width(), e.size().height()))
            self.refresh()  # two columns or one, for the new width
        return False


# -- the controller ----------------------------------------------------------------------
class PresentationController(QObject):
    """
    Owns the classroom actions of a main window (create it once per window):
    act_presentation (F11), act_zoom_in (Ctrl+=), act_zoom_out (Ctrl+−), act_zoom_reset (Ctrl+0),
    theme_actions (one per theme, exclusive), act_shortcuts (? and F1).
    """

    presentation_changed = Signal(bool)

    def __init__(self, window, settings=None):
        super().__init__(window)
        self.window = window
        self.settings = settings
        self._saved = None  # while presenting: what to restore (see _on_act_presentation_toggled)
        self._story_title = None  # while presenting: the story's own title bar, set aside
        self._timeline_title = None  # ... and the timeline's
        self._story_fit_hidden = False  # while presenting: the story's column hidden for want of room
        self.presentation_scale = PRESENTATION_SCALE
        if settings is not None:
            try:
                self.presentation_scale = float(settings.value("ui/presentation_scale", PRESENTATION_SCALE))
            except (TypeError, ValueError):
                pass
        self.overlay = ShortcutOverlay(window)
        if window.centralWidget() is not None:
            window.centralWidget().installEventFilter(self)
        # another scene or tab: whether the column keeps its room depends on the picture (picture_keeps)
        model, tabs = getattr(window, "model", None), getattr(window, "tabs", None)
        if model is not None and hasattr(model, "changed"):
            model.changed.connect(self._refit_later)
        if tabs is not None and hasattr(tabs, "currentChanged"):
            tabs.currentChanged.connect(self._refit_later)

        w = window
        self.act_presentation = QAction(w, checkable=True, objectName="actPresentation")
        self.act_presentation.setShortcuts([QKeySequence(Qt.Key.Key_F11)])
        self.act_presentation.toggled.connect(self._on_act_presentation_toggled)
        self.act_zoom_in = QAction(w, objectName="actZoomIn")
        self.act_zoom_in.setShortcuts([QKeySequence("Ctrl+="), QKeySequence("Ctrl++")])
        self.act_zoom_in.triggered.connect(self.zoom_in)
        self.act_zoom_out = QAction(w, objectName="actZoomOut")
        self.act_zoom_out.setShortcuts([QKeySequence("Ctrl+-")])
        self.act_zoom_out.triggered.connect(self.zoom_out)
        self.act_zoom_reset = QAction(w, objectName="actZoomReset")
        self.act_zoom_reset.setShortcuts([QKeySequence("Ctrl+0")])
        self.act_zoom_reset.triggered.connect(self.zoom_reset)
        self.act_shortcuts = QAction(w, objectName="actShortcuts")
        self.act_shortcuts.setShortcuts([QKeySequence("?"), QKeySequence(Qt.Key.Key_F1)])
        self.act_shortcuts.triggered.connect(self.toggle_overlay)
        self.act_next_theme = QAction(w, objectName="actNextTheme")
        self.act_next_theme.setShortcuts([QKeySequence("Ctrl+Shift+T")])
        self.act_next_theme.triggered.connect(self.next_theme)
        self.theme_group = QActionGroup(w)
        self.theme_group.setExclusive(True)
        self.theme_actions = {}
        for key in THEME_KEYS:
            a = QAction(w, checkable=True, objectName=f"actTheme_{key}")
            a.setData(key)
            a.triggered.connect(lambda _=False, k=key: self.set_theme(k))
            self.theme_group.addAction(a)
            self.theme_actions[key] = a
        self.theme_actions[theme.palette().key if theme.palette().key in THEME_KEYS else "light"].setChecked(True)
        for a in self.actions():
            w.addAction(a)  # shortcuts work even when the menu bar is hidden (full screen)
        # Esc leaves presentation mode (the overlay takes Esc first when it is open)
        self.esc = QShortcut(QKeySequence(Qt.Key.Key_Escape), w)
        self.esc.setContext(Qt.ShortcutContext.WindowShortcut)
        self.esc.activated.connect(self._on_esc_activated)
        self.esc.setEnabled(False)
        theme.notifier().changed.connect(self._on_theme_changed)
        self.retranslate_ui()

    def actions(self) -> list[QAction]:
        return [self.act_presentation, self.act_zoom_in, self.act_zoom_out, self.act_zoom_reset,
                self.act_next_theme, self.act_shortcuts]

    def retranslate_ui(self):
        self.act_presentation.setText(self.tr("&Presentation mode"))
        self.act_presentation.setToolTip(self.tr("Full screen with large text for a projector (F11; Esc leaves)"))
        self.act_zoom_in.setText(self.tr("&Larger text and lines"))
        self.act_zoom_out.setText(self.tr("&Smaller text and lines"))
        self.act_zoom_reset.setText(self.tr("&Normal size"))
        self.act_shortcuts.setText(self.tr("&Keyboard shortcuts"))
        self.act_next_theme.setText(self.tr("Next &theme"))
        self.esc.setWhatsThis(self.tr("Leave presentation mode"))
        for key, a in self.theme_actions.items():
            a.setText(theme_label(key))
        if self.overlay.isVisible():
            self.overlay.open()

    # -- presentation mode ------------------------------------------------------------
    @property
    def presenting(self) -> bool:
        return self._saved is not None

    def set_presentation(self, on: bool):
        self.act_presentation.setChecked(bool(on))  # toggled → _on_act_presentation_toggled

    def _on_act_presentation_toggled(self, on: bool):
        if on == self.presenting:
            return
        w = self.window
        if on:
            bars = [b for b in (w.menuBar(), w.statusBar()) if b is not None and not b.isHidden()]
            self._saved = {"state": w.windowState(), "geometry": w.geometry(), "scale": theme.scale(),
                           "docks": w.saveState(), "bars": bars}
            # the lecturer drives with the keyboard (every action is on the window): give the picture the room
            story = self._story_dock()
            for d in w.findChildren(QDockWidget):
                if d is not story and not d.isHidden() and not self._keep_dock(d):
                    d.hide()
            for b in bars:
                b.hide()
            w.set_toolbar_labels(False)  # icons only: the slider keeps its room
            if story is not None:  # a clipped title helps nobody on a projector: an empty one instead
                self._story_title = story.titleBarWidget()  # (the window's, app/dock_title.py)
                story.setTitleBarWidget(QWidget(story))
            timeline = self._timeline_dock()
            if timeline is not None and not timeline.isHidden():  # a short timeline, without its title
                self._timeline_title = timeline.titleBarWidget()
                timeline.setTitleBarWidget(QWidget(timeline))
            if getattr(w, "timeline", None) is not None and hasattr(w.timeline, "set_compact"):
                w.timeline.set_compact(True)  # rows a line tall, GPUs grouped as the strip's height asks
            self._tell_views(True)  # before the scale: the views lay out once, for the projector
            w.showFullScreen()
            self._set_scale(self.presentation_scale)
            self._pin_bars()
            self.esc.setEnabled(True)
            self._fit_story()
        else:
            saved = self._saved
            self._saved = None
            self._story_fit_hidden = False
            if getattr(w, "timeline", None) is not None and hasattr(w.timeline, "set_compact"):
                w.timeline.set_compact(False)
            story = self._story_dock()
            if story is not None:
                empty = story.titleBarWidget()
                story.setTitleBarWidget(self._story_title)
                if empty is not None:
                    empty.deleteLater()
                story.setMaximumWidth(QWIDGETSIZE_MAX)
            timeline = self._timeline_dock()
            if timeline is not None and self._timeline_title is not None:
                empty = timeline.titleBarWidget()
                timeline.setTitleBarWidget(self._timeline_title)
                self._timeline_title = None
                if empty is not None:
                    empty.deleteLater()
            if timeline is not None:
                timeline.setMaximumHeight(QWIDGETSIZE_MAX)
            self.presentation_scale = theme.scale()
            if self.settings is not None:
                self.settings.setValue("ui/presentation_scale", self.presentation_scale)
            self.esc.setEnabled(False)
            self._tell_views(False)
            self._set_ring_zoom()
            self._set_scale(saved["scale"])
            state = saved["state"]
            w.setWindowState(state & ~Qt.WindowState.WindowFullScreen)
            if not state & (Qt.WindowState.WindowMaximized | Qt.WindowState.WindowFullScreen):
                w.showNormal()
                w.setGeometry(saved["geometry"])  # exactly where it was (restoreGeometry would clamp to the screen)
            for b in saved["bars"]:
                b.show()
            self._pin_bars()  # not presenting: the bars follow the text size again
            w.set_toolbar_labels(True)
            w.restoreState(saved["docks"])  # every dock where and as large as it was
            w.refresh_tab_docks()  # a tab chosen while presenting may want its docks hidden
        self.presentation_changed.emit(on)

    def _pin_bars(self):
        """While presenting, the toolbar and tab bar at their 1× size (their own stylesheet over the
        application's, the icons at 1×); otherwise back to the application's look at the text scale."""
        w = self.window
        toolbar, tabs = getattr(w, "toolbar", None), getattr(w, "tabs", None)
        if toolbar is None or tabs is None:
            return
        body, s = theme.FONT_PX["body"], theme.scale()
        if self.presenting:
            toolbar.setStyleSheet(f"QWidget {{ font-size: {body}px; }} QToolBar {{ spacing: 6px; }}")
            tabs.tabBar().setStyleSheet(f"QTabBar {{ font-size: {body}px; }} "
                                        f"QTabBar::tab {{ padding: 6px 14px; }}")
            icon = theme.SIZE_PX["icon"]
        else:
            toolbar.setStyleSheet("")
            tabs.tabBar().setStyleSheet("")
            icon = round(theme.size("icon"))
        toolbar.setIconSize(QSize(icon, icon))  # (after the window's own theme slot, which scales it)

    def _story_dock(self):
        """The one dock kept while presenting: the step's story (the window's explain_dock)."""
        return self.window.explain_dock

    def _timeline_dock(self):
        return self.window.findChild(QDockWidget, "timelineDock")

    def _keep_dock(self, d) -> bool:
        """Docks a presenter still needs: the prediction while its question is open, a short timeline."""
        return d.objectName() in ("predictDock", "timelineDock") or d.isFloating()

    def _tell_views(self, on: bool):
        """Views that lay out differently for a projector (the weights, decode-latency and matmul
        views: the picture first, its controls compact) have set_presenting(on)."""
        if on:
            theme.presenting_add(self)
        else:
            theme.presenting_discard(self)
        for v in self.window.findChildren(QWidget):
            if hasattr(v, "set_presenting"):
                v.set_presenting(on)

    def _set_ring_zoom(self):
        ring = getattr(self.window, "ring_view", None)
        if ring is not None and hasattr(ring, "set_zoom"):
            vp = ring.viewport()
            if self.presenting:  # presentation's layout rules even at 1× (blocks in flight of 24 px)
                ring.set_zoom(ring_zoom(vp.width(), vp.height(), theme.scale()), present=True)
            else:
                ring.set_zoom(1.0, present=False)

    def _fit_story(self):
        """
        Narrow the story's column so the current tab's picture keeps PICTURE_SHARE of the screen:
        the picture's height is fixed by the bars above it, so its width must be at least
        PICTURE_SHARE·W·H / height, and the column gets what is left (a third at most). Narrower
        than STORY_MIN_W·scale, the column is hidden (Esc brings it back).
        """
        w = self.window
        story = self._story_dock()
        tabs = w.centralWidget()
        if not self.presenting or tabs is None:
            return
        w.layout().activate()  # the bars hidden and pinned first: the page's top is where it will stay
        self._set_ring_zoom()
        H, W = w.height(), w.width()
        sep = w.style().pixelMetric(w.style().PixelMetric.PM_DockWidgetSeparatorExtent) + 2
        page = tabs.currentWidget()
        timeline = self._timeline_dock()
        shown = timeline is not None and timeline.isVisible() and not timeline.isFloating()
        page_top = page.mapTo(w, page.rect().topLeft()).y() if page is not None else tabs.y()
        ring = getattr(w, "ring_view", None)
        keeps = None
        if ring is not None and page is not None and page.isAncestorOf(ring) and ring.run is not None:
            keeps = picture_keeps(ring.texts, ring.machine_shape(), theme.scale())
        plan = presentation_plan(W, H, theme.scale(), page_top, sep, keeps)
        if shown:  # at most its share: a timeline's least height at 2.5× would take the picture's room
            timeline.setMaximumHeight(plan.timeline_h)
            w.resizeDocks([timeline], [plan.timeline_h], Qt.Orientation.Vertical)
        if story is None or story.isFloating() or (story.isHidden() and not self._story_fit_hidden):
            return  # (a column the lecturer closed stays closed)
        # from the plan, not from the page as it is now: the first fit ran before the window had
        # laid out its bars, saw a page 88 px short and hid the column for good, at every screen size
        width = plan.story_w
        if width < STORY_MIN_W * theme.scale():
            self._story_fit_hidden = self._story_fit_hidden or not story.isHidden()
            story.hide()
            return
        if self._story_fit_hidden:  # room again (a smaller text size): the column comes back
            self._story_fit_hidden = False
            story.show()
        story.setMinimumWidth(0)
        story.setMaximumWidth(width)
        w.resizeDocks([story], [width], Qt.Orientation.Horizontal)

    def _refit_later(self, *_):
        if self.presenting:
            QTimer.singleShot(0, self, self._fit_story)

    def eventFilter(self, obj, e):
        # the bars' heights follow the text size and the screen: fit the column again on every resize
        if self.presenting and e.type() == QEvent.Type.Resize:
            QTimer.singleShot(0, self, self._fit_story)
        return False

    def _on_esc_activated(self):
        if self.overlay.isVisible():
            self.overlay.close_overlay()
        elif self.presenting:
            self.set_presentation(False)

    # -- size -------------------------------------------------------------------------
    def zoom_in(self):
        self._set_scale(next_scale(theme.scale(), +1))

    def zoom_out(self):
        self._set_scale(next_scale(theme.scale(), -1))

    def zoom_reset(self):
        self._set_scale(1.0)

    def _set_scale(self, s: float):
        theme.set_scale(s)  # emits theme.notifier().changed → _on_theme_changed and every view
        if self.settings is not None and not self.presenting:
            self.settings.setValue("ui/scale", theme.scale())

    # -- themes -----------------------------------------------------------------------
    def set_theme(self, key: str):
        theme.set_theme(key)
        self.theme_actions[key].setChecked(True)
        if self.settings is not None:
            self.settings.setValue("ui/theme", key)

    def next_theme(self):
        keys = list(THEME_KEYS)
        cur = theme.palette().key
        self.set_theme(keys[(keys.index(cur) + 1) % len(keys)] if cur in keys else keys[0])

    def _on_theme_changed(self):
        apply_look()
        if self.presenting:
            self._pin_bars()
        if self.overlay.isVisible():
            self.overlay.refresh()
        if self.presenting:
            QTimer.singleShot(0, self, self._fit_story)  # larger text, taller bars: less room for the column

    # -- overlay ----------------------------------------------------------------------
    def toggle_overlay(self):
        if self.overlay.isVisible():
            self.overlay.close_overlay()
        else:
            self.overlay.open()

    # -- restoring --------------------------------------------------------------------
    def restore_from_settings(self):
        """Theme and desk size from an earlier session (no-op without settings)."""
        s = self.settings
        if s is None:
            return
        key = s.value("ui/theme", None)
        if key in THEME_KEYS:
            self.set_theme(key)
        try:
            scale = float(s.value("ui/scale", theme.scale()))
        except (TypeError, ValueError):
            scale = theme.scale()
        self._set_scale(scale)
        apply_look()
