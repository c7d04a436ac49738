"""
The ring view: n devices around one switch, their buffers as slots, messages as blocks.

What is on screen at simulated time t is a function of the frame it is handed (`set_frame`, by
app/frame_controller.py; app.core.frame.frame_at): the buffers are the frame's holdings, the
blocks its messages strictly under way (t_start < t < t_end) that the predict mask shows, placed
by their progress. Items are created once per run (`_on_model_changed`) and updated in place
every frame; nothing is rebuilt while playing.

Picture, and why it looks like that:
  * Every device has one full-duplex port into the switch, so a spoke is two lanes: the send
    lane (blocks going in) and the receive lane (blocks coming out). A port carries one message
    at a time, so two blocks never share a lane: nothing overlaps, at any n.
  * A block rides the sender's send lane to the switch, then the receiver's receive lane out;
    while it is in the switch a chord joins the two ports (the crossbar connection). Ring
    steps draw a polygon of neighbours, recursive doubling pairs devices across the circle,
    direct draws star polygons, and in-network reduction sends blocks *into* the switch, whose
    own slots fill with the sum before it multicasts them out.
  * A slot's colour says whose data it holds: one colour per device (Okabe–Ito for n ≤ 8, a
    cyclic map beyond). A partial sum shows its contributors as bands (n ≤ 8) or, when bands
    would be thinner than a pixel, fills the share of devices already added.
  * Slots that changed in the last finished step are outlined.
Small n (≤ 16): axis-aligned device boxes on an ellipse, slots in rows. Larger n: radial bars
on a circle, labels thinned so they never collide.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from PySide6.QtCore import QCoreApplication, QEvent, QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QLinearGradient, QPainter, QPen, QPixmapCache, QTransform
from PySide6.QtWidgets import QFrame, QGraphicsItem, QGraphicsScene, QGraphicsView, QWidget

from simcore.kind_record import record_of
from simcore.contributors import Who  # a message's contributors, decoded when read
from simcore.trace import ALL, SWITCH

from ... import theme
from ...core.prepared import memo, preparer
from ...words import fmt_bytes, fmt_time
from .machine_layout import machine_shape, message_path
from . import ring_ahead, ring_swap
from .ring_bars import BarsLayer, bar_arrays, set_bar_rows
from .ring_items import (STRIPE_MAX_N, DeviceItem, SwitchItem, Colors,  # noqa: F401  (re-exported)
                         block_fills, message_color_index, message_color_indices, paint_chunk)
from .ring_items import set_computing
from .ring_layers import ChordsLayer, FlightLayer, LabelItem, LanesLayer, MachineLayer  # noqa: F401  (re-exported)
from .ring_layout import (BOX_MODE_MAX_N, MIN_CHUNK_NUMBER_PX, chunk_number_px, make_font,  # noqa: F401
                          present_layout, ring_layout)
from .ring_texts import (legend_text, queued_label, ring_shape, ring_texts,  # noqa: F401  (re-exported)
                         scenario_title, step_line_variants, subcaption, swatch_devices, switch_name)
from .ring_texts import machine_texts, step_note, step_notes


# ---------------------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------------------
class RingView(QGraphicsView):
    """
    Follows a ScenarioModel (rebuilds its items when the run changes) and draws the frames the
    playback's frame controller hands it (`set_frame`, updating the items in place). What it shows
    is the frame: tests read the frame and the pixels, not the items.
    """

    device_clicked = Signal(int)  # a device id, or SWITCH (-1) for the switch

    def __init__(self, model, playback, parent=None):
        super().__init__(parent)
        self._layout_due = False  # a resize before the first paint asked for a layout not run yet
        self._painted = False
        self.setObjectName("RingView")
        self.model, self.playback = model, playback
        self.setScene(QGraphicsScene(self))
        # A viewport made here, not by QGraphicsView: handing Python a widget Qt made (viewport(),
        # or the `widget` of each item's paint) makes PySide look through every QWidget class it
        # knows and build their enum types, some 50 of them, 5 ms before the first picture
        self.setViewport(QWidget())
        self.setRenderHint(QPainter.Antialiasing, True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.setOptimizationFlags(QGraphicsView.DontSavePainterState | QGraphicsView.DontAdjustForAntialiasing)
        self.setFocusPolicy(Qt.StrongFocus)
        self.setMinimumSize(320, 240)
        # item caches (DeviceCoordinateCache) live in QPixmapCache: room for 64 devices at 4K
        QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), 96 * 1024))
        self.run = None
        self._t = 0.0
        self._vs = 1.0
        self._geom = {}
        self._frame = playback.frames.register(self)
        self._build(model.run)
        model.changed.connect(self._on_model_changed)
        if hasattr(model, "arriving"):
            model.arriving.connect(self._on_run_arriving)
        theme.notifier().changed.connect(self._on_theme_changed)
        self._retranslate_tooltip()  # _build's texts and layout are already in the current language

    # -- signals ---------------------------------------------------------------------------
    def _on_run_arriving(self, run):
        if ring_swap.sliced(self, run):
            ring_swap.hold_window(self)  # the window's picture as it is, before any view takes the run
            self.model.wait_a_turn()  # (the grabs on this turn, the views' rebuild on the next)

    def _on_model_changed(self, run):
        if ring_swap.sliced(self, run):
            ring_swap.start(self, self._build_steps(run))  # across turns; the window shows it whole
        else:
            self._build(run)

    def set_frame(self, frame):
        """Show `frame` (app.core.frame.Frame), handed by the frame controller."""
        # else a frame of the run about to be built (_on_model_changed), or while one is built in
        # slices (ring_swap), whose last slice draws the current frame
        if frame.index is self.run.index and not ring_swap.pending(self):
            self._draw(frame)

    def look_ahead(self, frame):
        """The frame controller's look-ahead: a piece of the next step's picture (ring_ahead)."""
        if frame.index is self.run.index and not ring_swap.pending(self):
            ring_ahead.look_ahead(self)

    def _redraw(self):
        """The frame shown, drawn again (a new size, zoom or language)."""
        self._draw(self._frame, force=True)

    def _on_theme_changed(self):
        ring_swap.cancel(self)
        self._build(self.run, keep_time=True)

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        ring_swap.finish(self)
        self._retranslate_tooltip()
        if self.run is not None:
            self._texts_for_run()
            self._layout()  # new words, new sizes: the header is placed again
            self._shown_coll = object()  # force the caption to refresh
            self._redraw()

    def _retranslate_tooltip(self):
        self.setToolTip(self.tr("Devices around the switch. Click a device to select it."))

    # -- layout scheduling: one layout for the resizes before the first paint ------------------
    # A window being shown resizes its centre two or three times before its first paint (a size
    # its layout gave the hidden view earlier, then the final one); each layout costs a few
    # milliseconds and only the last size is ever seen. So until the view has painted, a resize
    # marks the layout due and posts one high-priority event, which runs before the paint that
    # follows; being shown as a window (or the main window being shown: ensure_laid_out), a
    # paint, or a caller reading what the view shows runs a due layout at once. Once painted,
    # a resize lays out immediately, as a reader dragging the window's edge expects.
    _LAYOUT_EVENT = QEvent.Type(QEvent.registerEventType())

    def resizeEvent(self, e):
        super().resizeEvent(e)
        ring_swap.finish(self)
        if self._painted:
            self._layout()
            self._redraw()
        elif not self._layout_due:
            self._layout_due = True
            QCoreApplication.postEvent(self, QEvent(self._LAYOUT_EVENT), Qt.HighEventPriority.value)

    def ensure_laid_out(self):
        """Run the layout a resize asked for, if it has not run yet (see above), and a sliced build's
        slices left (ring_swap)."""
        ring_swap.finish(self)
        if self._layout_due:
            self._layout()
            self._redraw()

    def customEvent(self, e):
        if e.type() == self._LAYOUT_EVENT:
            self.ensure_laid_out()

    def showEvent(self, e):
        super().showEvent(e)
        if self.isWindow():  # shown on its own: laid out when show() returns
            self.ensure_laid_out()

    def paintEvent(self, e):
        if ring_swap.held_paint(self):  # a new run's picture being made (ring_swap): the old one
            return
        self.ensure_laid_out()
        self._painted = True
        super().paintEvent(e)

    def mousePressEvent(self, e):
        ring_swap.finish(self)
        item = None  # the topmost device or switch under the pointer (the layers over them are skipped)
        for it in self.items(e.position().toPoint()):
            while it is not None and not isinstance(it, (DeviceItem, SwitchItem)):
                it = it.parentItem()
            if it is not None:
                item = it
                break
        if isinstance(item, DeviceItem):
            self.device_clicked.emit(item.d)
        elif isinstance(item, SwitchItem):
            self.device_clicked.emit(SWITCH)
        super().mousePressEvent(e)

    # -- building (once per run) -----------------------------------------------------------
    def _build(self, run, keep_time=False, n=None):
        """Every item for `run`, drawn with n devices: the run's, or the group of the collective shown
        (a recorded run holds collectives on 1, 2, 4 and 8 GPUs: one on 4 is drawn with 4)."""
        ring_swap.cancel(self)  # a build asked for now replaces one under way
        for _ in self._build_steps(run, keep_time, n):
            pass

    def _build_steps(self, run, keep_time=False, n=None):
        """_build's work in slices (a generator: each `next` does a bounded part): ring_swap runs them
        across the event loop's turns while the window keeps the old picture."""
        scene = self.scene()
        scene.clear()
        self._labels = []
        self.run = run
        n = run.scenario.n if n is None else n
        tr = run.trace
        self.n = n
        self.colors = Colors(n)
        scene.setBackgroundBrush(self.colors.background)
        self.n_chunks_max = max((c.n_chunks for c in tr.collectives), default=0)
        self._cols = {f: tr.column(f) for f in ("src", "dst", "chunk", "t_start", "t_end", "w0", "w1", "w2", "w3")}
        self._cidx = run_colors(run, n)
        self.has_switch_slots = bool(np.any(self._cols["dst"] == SWITCH))
        self.switch = SwitchItem(self.colors, n)
        self.switch.setZValue(2)
        self.switch.has_slots = self.has_switch_slots
        scene.addItem(self.switch)
        self.switch_label = self._add_label("switch", bold=True, align=Qt.AlignHCenter | Qt.AlignVCenter)
        self.switch_label.setZValue(2.8)
        self.devices = []
        self.machine = MachineLayer(self.colors)  # a machine's clusters, fabric and NICs, or a torus's links
        scene.addItem(self.machine)
        self.node_labels = [self._add_label("small", bold=True) for _ in range(record_of(run.comm.topology).nodes
                                                                              if run.comm is not None else 1)]
        self.fabric_label = self._add_label("small", bold=True)
        self.lanes = LanesLayer(self.colors)  # per device: a send lane and a receive lane
        scene.addItem(self.lanes)
        yield
        for d in range(n):
            item = DeviceItem(d, self.colors, n)
            item.setZValue(3)
            scene.addItem(item)
            self.devices.append(item)
            if (d + 1) % ring_swap.SLICE_ITEMS == 0:
                yield
        self.bars = BarsLayer(self.devices)
        scene.addItem(self.bars)
        yield
        self.device_labels = []
        for d in range(n):
            self.device_labels.append(self._add_label("device", bold=True, align=Qt.AlignHCenter | Qt.AlignVCenter))
            if (d + 1) % ring_swap.SLICE_ITEMS == 0:
                yield
        self.flight = FlightLayer(self.colors, n)
        self.flight.fills = run_fills(run, n) if n > STRIPE_MAX_N else None
        self.chord_layer = ChordsLayer()
        scene.addItem(self.flight)
        scene.addItem(self.chord_layer)
        self.block_labels = []  # byte labels beside the blocks (box mode): few, so items
        for _ in range(max(run.index.max_in_flight, 0) if n <= STRIPE_MAX_N else 0):
            lab = self._add_label("small", align=Qt.AlignHCenter | Qt.AlignVCenter)
            lab.hide()
            self.block_labels.append(lab)
        self.caption = self._add_label("caption", bold=True, halo=False)
        self.subcaption = self._add_label("body", halo=False)
        self.clock_label = self._add_label("body", halo=False, align=Qt.AlignRight)
        self.legend = self._add_label("small", halo=False)
        self.legend_swatches = []
        self.swatch_devices = swatch_devices(n)
        for d in self.swatch_devices:
            sw = scene.addRect(QRectF(0, 0, 10, 10), QPen(self.colors.text, theme.line("hairline")),
                               self.colors.brushes[d])
            sw.setZValue(6)
            self.legend_swatches.append(sw)
        self.swatch_labels = [self._add_label("small", halo=False) for _ in self.legend_swatches]
        self.swatch_title = self._add_label("small", bold=True, halo=False)
        self._shown_coll = object()
        self._taken = []
        self._queues_shown = False
        self._last_holdings = None
        self._texts_for_run()
        yield
        self._layout()
        yield
        self._draw(self._frame if keep_time else self.playback.frames.current(), force=True)

    def _add_label(self, role, bold=False, halo=True, align=Qt.AlignLeft):
        lab = LabelItem(role, bold, halo, align)
        lab.color = self.colors.text
        self.scene().addItem(lab)
        self._labels.append(lab)
        return lab

    def _texts_for_run(self):
        """Every text the layout places, from the run and the current language."""
        self.switch.set_name(switch_name(self.run.link))
        self.title_text = scenario_title(self.run.scenario, self.run)
        self.texts = run_texts(self.run, self.n)

    # -- layout (a function of size, text scale, texts and scenario: views/ring/ring_layout.py) ------
    zoom = 1.0  # the magnification of the whole picture on screen (presentation mode: see set_zoom)
    asked_zoom = 1.0  # presentation mode's asked magnification (set_zoom)
    present = False  # presentation mode's layout rules (blocks in flight of PRESENT_BLOCK_PX), even at 1×

    def set_zoom(self, z: float, present: bool | None = None):
        """Presentation mode (app/classroom/presentation.py): lay the picture out in a room z times
        smaller at text scale theme.scale()/z, then magnify it z times — boxes, lanes, blocks in flight,
        their chunk numbers and the text grow together (present_layout may magnify less where that
        gives the blocks their size). 1 and not `present` = the desk's layout; `present` defaults to z > 1."""
        z = max(1.0, float(z))
        present = z > 1.0 if present is None else bool(present)
        ring_swap.finish(self)
        if (z, present) != (self.asked_zoom, self.present):
            self.asked_zoom, self.present = z, present
            if self.run is not None:
                self._layout()
                self._redraw()

    def machine_shape(self):
        """The drawn machine's shape (ring_layout lays it out; presentation mode asks it too)."""
        topo = self.run.comm.topology if self.run.comm is not None else None
        return machine_shape(topo, ring_shape(self.run, self.n))

    def _layout(self):
        self._layout_due = False  # this one serves every resize before it
        if self.run is None:
            return
        vp = self.viewport().rect()
        room = Room(vp.width(), vp.height(), theme.scale(), self.present, self.asked_zoom)
        if self.n == self.run.scenario.n:
            _ROOM[0] = room  # what the worker lays the next run out for (prepare_layout)
        lay, z, self._paths, crossing = machine_layout(self.run, self.n, room, self.texts)
        self.zoom = z
        self.setTransform(QTransform.fromScale(z, z))
        self.scene().setSceneRect(0, 0, lay.width, lay.height)
        self._vs = lay.vs
        col = self.colors
        self.caption.set_box(lay.title, col.text)
        self.subcaption.set_font(lay.step.font)
        self.subcaption.set_wrap(lay.step.rect.width())
        self.subcaption.setPos(lay.step.rect.topLeft())
        self.clock_label.set_font(lay.clock.font)
        self.clock_label.setPos(lay.clock.rect.right(), lay.clock.rect.top())
        self.legend.set_box(lay.legend, col.muted)
        self.swatch_title.set_box(lay.swatch_title, col.text)
        by_position = len(self.swatch_devices) < len(self.devices)
        for k, (sw, r, lab, box) in enumerate(zip(self.legend_swatches, lay.swatches, self.swatch_labels,
                                                   lay.swatch_labels)):
            sw.setRect(r)
            if by_position:  # a segment of the colour bar: the map from this label's device to the next's
                d0 = self.swatch_devices[k]
                d1 = self.swatch_devices[k + 1] if k + 1 < len(self.swatch_devices) else len(self.devices)
                sw.setBrush(_bar_gradient(r, [col.devices[d % len(col.devices)] for d in range(d0, d1 + 1)]))
                sw.setPen(Qt.NoPen)
                lab.set_box(box, theme.text_on(col.devices[d0]))
            else:
                lab.set_box(box, col.text)
        self.centre = lay.centre
        radial = lay.mode == "radial"
        dev_font = next(b.font for b in lay.device_labels if b is not None)
        small = make_font("small", False, theme.FONT_PX["small"] * theme.scale() / z * lay.text_vs)
        for lab in self.block_labels:
            lab.set_font(small)
        for d, (item, box) in enumerate(zip(self.devices, lay.devices)):
            item.setPos(box.centre)
            item.setRotation(box.rotation)
            item.set_geometry(box.w, box.h, box.cols, box.rows, box.pad, radial=box.radial)
            lab, lb = self.device_labels[d], lay.device_labels[d]
            lab.set_font(dev_font)
            if lay.kind == "torus" and lb is not None:  # the grid's names are the layout's ("GPU 3", or "3" when tight)
                lab.set_text(lb.lines[0], col.text)
            else:
                lab.set_text(str(d) if radial else queued_label(d, 0), col.text)  # the queue counts follow in _draw
            lab.setVisible(lb is not None)
            if lb is not None:
                lab.setPos(lb.rect.center())
        self._queues_shown = False
        if radial:
            # every bar inside, whatever the shape (one ring round the centre, or a cluster per node)
            pad = theme.line("highlight") + 2
            span = QRectF()
            for b in lay.devices:
                r = max(b.w, b.h) / 2 + pad  # a bar turned any way stays within this of its centre
                span = span.united(QRectF(b.centre.x() - r, b.centre.y() - r, 2 * r, 2 * r))
            self.bars.set_rect(span)
        self._geom = {"mode": lay.mode, "r_sw": lay.switch_r, "block": lay.block, "off": lay.lane_offset,
                      "lane": lay.lane_width, "lane_active": lay.lane_width_active}
        self.anchors = list(lay.anchors)
        self._taken = [b.rect() for b in lay.devices] + [b.rect for b in lay.device_labels if b is not None]
        self._taken.append(lay.switch_label.rect)  # byte labels never cover the switch's name
        self.switch.setPos(lay.centre)
        self.switch.set_radius(lay.switch_r)
        self.switch.setVisible(lay.kind == "switch")  # a machine paints each node's switch (MachineLayer)
        self.switch_label.set_box(lay.switch_label, col.text)
        self._place_machine(lay, crossing)
        # presenting, a block whose number can be MIN_CHUNK_NUMBER_PX (0.7 of it) carries it: a torus's
        # 18 px blocks at 1280×720
        self.flight.numbered_px = MIN_CHUNK_NUMBER_PX / 0.7 if self.present else FlightLayer.numbered_px
        number_px = chunk_number_px(lay, theme.scale(), z, self.present)
        self.flight.set_size(lay.block, make_font("small", True, number_px), z)
        self._place_lanes(lay)
        # Qt moves a device-cached picture by whole pixels: an item this layout moved by a fraction
        # kept the last layout's sub-pixel rendering, one pixel off the same picture drawn fresh (a
        # deck scene reached from another did not look like itself opened alone)
        for item in self.scene().items():
            mode = item.cacheMode()
            if mode != QGraphicsItem.CacheMode.NoCache:
                item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
                item.setCacheMode(mode)

    def _place_machine(self, lay, crossing):
        """A machine's frame: clusters, fabric and NIC links, or a torus's links; the legs of every
        message that does not ride a switch's lanes (machine_layout made them: self._paths) and the
        messages that cross between nodes."""
        self.layout_now = lay
        self.machine.zoom = self.zoom
        self.machine.set_layout(lay)
        for k, lab in enumerate(self.node_labels):
            box = lay.node_labels[k] if k < len(lay.node_labels) else None
            lab.setVisible(box is not None and lay.kind == "nodes")
            if box is not None:
                lab.set_box(box, self.colors.text)
        self.fabric_label.setVisible(lay.fabric_label is not None)
        if lay.fabric_label is not None:
            self.fabric_label.set_box(lay.fabric_label, self.colors.text)
        self.flight.crossing = crossing

    def _place_lanes(self, lay):
        """Each spoke: a send lane and a receive lane, from the device's edge to the switch's rim."""
        g = self._geom
        self.lane_geom = [((s.p1(), s.p2()), (r.p1(), r.p2())) for s, r in lay.lanes]
        self._lane_arr = np.array([[[[q.x(), q.y()] for q in lane] for lane in lanes] for lanes in self.lane_geom],
                                  float).reshape(-1, 2, 2, 2)
        self._flying = None  # chords hang on the lanes: recomputed
        self._chord_lines = {}  # (src, dst) -> the chord between their lanes' rims, made once per geometry
        self._flying_ahead, self._ahead = {}, None  # the next step's, prepared ahead (see ring_ahead)

        # each layer's rect is what it can cover, not the scene: a cached layer is a picture of its
        # rect, and at 4K a scene-sized one is 33 MB
        def bounds(points, pad):
            xs, ys = [q.x() for q in points], [q.y() for q in points]
            return QRectF(min(xs) - pad, min(ys) - pad, max(xs) - min(xs) + 2 * pad, max(ys) - min(ys) + 2 * pad)

        ends = [q for lanes in self.lane_geom for lane in lanes for q in lane]
        rims = [lane[1] for lanes in self.lane_geom for lane in lanes]
        self.lanes.set_geometry(bounds(ends, g["lane_active"]), list(lay.lanes), g["lane"], g["lane_active"])
        self.chord_layer.set_geometry(bounds(rims, g["lane_active"]), g["lane_active"] * 0.6)
        self.flight.set_rect(bounds(ends, g["block"] + theme.line("outline") + 1) if lay.kind == "switch"
                             else QRectF(0, 0, lay.width, lay.height))  # a machine's blocks fly anywhere
        self._style_lanes({})

    def _style_lanes(self, active: dict):
        """active: {(device, 0 send | 1 recv): QColor}."""
        self.lanes.set_active(active)

    # -- one frame -------------------------------------------------------------------------
    def _draw(self, f, force: bool = False):
        """Show frame f: a pure function of (trace, frame)."""
        self._frame = f
        self._t = t = f.t
        run = self.run
        idx = run.index
        tr = run.trace
        coll = f.coll
        if coll is None:
            for item in self.devices:
                item.set_state(0, (), frozenset())
            self.switch.set_state(0, (), False)
            self._update_queues(None, f)
            self._update_caption(None, f)
            self._place_blocks(f, np.zeros(len(f.moving), bool))
            return
        c = tr.collectives[coll]
        if self._group_n(c) != self.n:  # a collective on another group of GPUs: drawn with its own
            self._build(run, keep_time=True, n=self._group_n(c))
            return
        radial = self._geom.get("mode") == "radial"
        hold = f.held
        drawn = force or hold is not self._last_holdings or coll != getattr(self, "_last_coll", None)
        if drawn:
            new = self._arrivals(c, f.arrived)
            if radial:  # n > 16: arrays straight from the index, only the bars that changed
                self._set_bars(c, hold, new, force or coll != getattr(self, "_last_coll", None))
            else:
                for d, item in enumerate(self.devices):
                    h = hold.get(d, {})
                    item.set_state(c.n_chunks, tuple(map(h.get, range(c.n_chunks))),
                                   frozenset(new.get(d, ())))
            hs = hold.get(SWITCH, {})
            self.switch.set_state(c.n_chunks, tuple(map(hs.get, range(c.n_chunks))),
                                  self.has_switch_slots)
            self._last_holdings, self._last_coll = hold, coll
        self._update_queues(c, f)
        flying = self._flying
        self._place_blocks(f, f.shown)
        self._update_caption(c, f)
        if idx.computes and not radial:  # the TP forward: the op each GPU computes between collectives
            set_computing(self.devices, idx, t)
        if drawn or self._flying is not flying:  # a new step drawn: prepare the one after it, from the next frame
            ring_ahead.restart(self, f)

    def _group_n(self, c) -> int:
        """How many devices to draw for collective c: its own group's size where the machine is one
        switch (its shape is the ring's own, as machine_shape leaves it), else the machine's."""
        n = self.run.scenario.n
        if not 1 <= c.n < n:
            return n
        topo = self.run.comm.topology if self.run.comm is not None else None
        shape = ring_shape(self.run, c.n)
        return c.n if machine_shape(topo, shape) == shape else n

    def _set_bars(self, c, hold, new: dict, all_bars: bool):
        """Radial mode: each bar's per-chunk contributor count and colour owner from the Held arrays;
        only bars whose arrays or outlined chunks changed are touched."""
        n, nc = self.n, c.n_chunks
        ahead = getattr(self, "_bar_arrays_ahead", None)
        if ahead is not None and ahead[0] is hold and len(ahead[1]) == n:
            counts, owners = ahead[1:3]
        else:
            counts, owners = bar_arrays(hold, n, nc)
        new_sets = [frozenset(new.get(d, ())) for d in range(n)]
        last = getattr(self, "_bars_last", None)
        if all_bars or last is None or last[0].shape != counts.shape:
            rows = range(n)
        else:
            diff = np.any(counts != last[0], axis=1) | np.any(owners != last[1], axis=1)
            rows = [d for d in range(n) if diff[d] or new_sets[d] != last[2][d]]
        set_bar_rows(self.devices, rows, nc, counts, owners, new_sets, hold)
        self._bars_last = (counts, owners, new_sets)

    def _place_blocks(self, frame, shown):
        """Every message under way in `frame` (where `shown`): its block on its lane, its lanes lit, its
        chord (from the trace's columns, one array operation per field: n = 256 has 256 blocks a frame)."""
        show_bytes = self._geom.get("mode") == "box" and self.n <= STRIPE_MAX_N
        ids, p = frame.moving[shown], frame.progress[shown]
        cols = self._cols
        src, dst, chunk = cols["src"][ids], cols["dst"][ids], cols["chunk"][ids]
        G = self._lane_arr  # (n, 2 lanes, 2 ends, xy): send lane a -> b, receive lane a -> b
        s_ = np.where(src == SWITCH, 0, src)
        d_ = np.where(dst == SWITCH, 0, dst)
        up = (src != SWITCH) & ((dst == SWITCH) | (p < 0.5))  # on the sender's send lane, else the receiver's receive lane
        q = np.where(dst == SWITCH, p, np.where(src == SWITCH, p, np.where(p < 0.5, p * 2, (p - 0.5) * 2)))
        a = np.where(up[:, None], G[s_, 0, 0], G[d_, 1, 0])
        b = np.where(up[:, None], G[s_, 0, 1], G[d_, 1, 1])
        pos = np.where(up[:, None], a + (b - a) * q[:, None], b + (a - b) * q[:, None])
        sign = np.where(up, 1.0, -1.0)
        dxy = b - a
        ln = np.hypot(dxy[:, 0], dxy[:, 1])
        ln[ln == 0] = 1.0
        side = np.stack([-dxy[:, 1] / ln * sign, dxy[:, 0] / ln * sign], 1)
        paths = getattr(self, "_paths", None)
        legs_of = [paths.get((sd, dd)) for sd, dd in zip(src.tolist(), dst.tolist())] if paths else []
        for j, legs in enumerate(legs_of):  # a machine: messages between nodes or along a torus link
            if legs is None:
                continue
            k = min(int(p[j] * len(legs)), len(legs) - 1)
            (a0, b0) = legs[k]
            f = p[j] * len(legs) - k
            pos[j] = (a0.x() + (b0.x() - a0.x()) * f, a0.y() + (b0.y() - a0.y()) * f)
            ln = math.hypot(b0.x() - a0.x(), b0.y() - a0.y()) or 1.0
            side[j] = (-(b0.y() - a0.y()) / ln, (b0.x() - a0.x()) / ln)
        key = ids.tobytes()
        same = getattr(self, "_flying", None)
        if same is None or same[0] != key:  # a new set of messages (a step boundary): who, colours, chords
            ahead = self._flying_ahead.get(key)
            self._flying = ahead if ahead is not None else self._flight_set(ids, legs_of)
            self.machine.set_active(self._flying[4])
        _key, who, chords, active, _legs = self._flying
        self.flight.set_blocks(ids, pos, who, chunk.tolist())
        self.chord_layer.set_items(chords)
        if show_bytes:
            self._place_byte_labels(self.flight.items, [QPointF(x, y) for x, y in side.tolist()])
        self._style_lanes(active)

    def _flight_set(self, ids: np.ndarray, legs_of: list | None = None) -> tuple:
        """What a set of messages under way draws besides their blocks: (key, each one's contributors
        (None where the blocks are filled from arrays), the chords, the lit lanes {(device, 0 send |
        1 receive): colour}, a machine's lit legs)."""
        cols = self._cols
        src, dst = cols["src"][ids].tolist(), cols["dst"][ids].tolist()
        if legs_of is None:
            paths = getattr(self, "_paths", None)
            legs_of = [paths.get(pair) for pair in zip(src, dst)] if paths else []
        if self.flight.batched():  # small blocks filled from the layer's arrays: no sets needed
            who = [None] * len(ids)
        else:
            who = [Who(w, self.run.trace.explicit)
                   for w in zip(*(cols[f][ids].tolist() for f in ("w0", "w1", "w2", "w3")))]
        colours = [self.colors.spoke_active if i < 0 else self.colors.devices[i] for i in self._cidx[ids].tolist()]
        active, chords, legs_lit = {}, [], []
        for j, (sd, dd, col) in enumerate(zip(src, dst, colours)):
            if legs_of and legs_of[j] is not None:  # its own legs, not a switch's lanes
                crossing = self.layout_now.kind == "nodes"
                legs_lit += [(QLineF(a0, b0), col, crossing) for a0, b0 in legs_of[j]]
                continue
            if sd != SWITCH:
                active[(sd, 0)] = col
            if dd != SWITCH:
                active[(dd, 1)] = col
                if sd != SWITCH:
                    line = self._chord_lines.get((sd, dd))
                    if line is None:
                        line = self._chord_lines[(sd, dd)] = QLineF(self.lane_geom[sd][0][1], self.lane_geom[dd][1][1])
                    chords.append((line, col))
        return ids.tobytes(), who, chords, active, legs_lit

    def _arrivals(self, c, arrived: np.ndarray) -> dict:
        """{device: chunks a message of `arrived` brought it} (outlined as new)."""
        new = {}
        for dst, ch in zip(self._cols["dst"][arrived].tolist(), self._cols["chunk"][arrived].tolist()):
            if dst != SWITCH:
                new.setdefault(dst, set()).update(range(c.n_chunks) if ch == ALL else (ch,))
        return new

    def _place_byte_labels(self, blocks, sides):
        """Box mode: each block's size beside it, on its lane's outer side (sides: the blocks'
        outward unit vectors), else the inner side, else none — never over a box, a name, a block
        or another label."""
        msgs = self.run.trace.messages
        rects = [self.flight.block_rect(pos) for _i, pos, _w, _c in blocks]
        placed = list(self._taken) + rects
        labelled = []  # blocks queued on one lane overlap: one size label for the cluster
        for j, lab in enumerate(self.block_labels):
            if j >= len(blocks) or any(rects[j].intersects(r) for r in labelled):
                if lab.isVisible():
                    lab.hide()
                continue
            labelled.append(rects[j])
            lab.set_text(fmt_bytes(msgs[blocks[j][0]].nbytes), self.colors.text)
            pos, lane_dir = blocks[j][1], sides[j]
            sz = lab.size()
            for side in (1, -1):
                dist = self._geom["block"] * 0.5 + sz.width() * 0.5 + 4
                c = pos + lane_dir * (side * dist)
                r = QRectF(c.x() - sz.width() / 2, c.y() - sz.height() / 2, sz.width(), sz.height())
                if not any(r.intersects(o) for o in placed):
                    lab.setPos(c)
                    lab.show()
                    placed.append(r)
                    break
            else:
                lab.hide()

    def _update_queues(self, c, f):
        """An algorithm whose sends queue at the port (frame.queued: its registry record says so,
        one-shot, two-shot): beside each device's name, how many of its sends still wait for the port."""
        show = (c is not None and bool(f.queued) and self._geom.get("mode") == "box"
                and getattr(self, "layout_now", None) is not None and self.layout_now.kind == "switch")
        if not show and not self._queues_shown:
            return
        waiting = list(f.queued) if show else [0] * self.n
        for d, lab in enumerate(self.device_labels):
            lab.set_text(queued_label(d, waiting[d]))
        self._queues_shown = show

    def _update_caption(self, c, f):
        run, t = self.run, f.t
        idx = run.index
        total = idx.t_total
        self.clock_label.set_text(self.tr("t = {t} of {T}").format(t=fmt_time(t), T=fmt_time(total)),
                                  self.colors.text)
        key = (None,) if c is None else (c.id, f.step, f.steps_done, f.state, self._waiting(c, f))
        if idx.computes:  # the forward's ops: the line names GPU 0's op and whether it is done
            op = idx.computing(0, t)
            key += (t <= idx.eps, None if op is None else (id(op), t >= op.t_end - idx.eps))
        if key == self._shown_coll:
            return
        self._shown_coll = key
        text = subcaption(run, c, t)
        if c is not None and c.n_steps and step_notes(getattr(run.comm, "topology", None)):  # a machine: its links
            first, waiting, note = step_line_notes(run, c.id, f.step)
            note = waiting if t < first - 1e-12 else note  # before any message starts: the call's base latency
            text = f"{text} · {note}" if note else text
        self.subcaption.set_text(text, self.colors.text)

    def _waiting(self, c, f) -> bool:
        """Is the shown step's call still in its base latency (no message of it started)?"""
        rec = record_of(getattr(self.run.comm, "topology", None))
        if not c.n_steps or rec is None or rec.base <= 0:
            return False
        ids = np.asarray(self.run.index.step_msgs[c.id][f.step], dtype=np.int64)
        return bool(len(ids)) and bool(f.t < self._cols["t_start"][ids].min() - 1e-12)


def _bar_gradient(r: QRectF, colours) -> QBrush:
    """A left-to-right gradient through `colours`, evenly spaced over rect r (a colour-bar segment)."""
    g = QLinearGradient(r.left(), 0, r.right(), 0)
    last = max(len(colours) - 1, 1)
    for i, c in enumerate(colours):
        g.setColorAt(i / last, c)
    return QBrush(g)


# ---------------------------------------------------------------------------------------
# Prepared with the run, on the worker (app.core.prepared): the layout and the step notes
# ---------------------------------------------------------------------------------------
class Room(NamedTuple):
    """What a ring view lays a run out in: its viewport, text scale and presentation mode."""

    width: int
    height: int
    scale: float
    present: bool
    zoom: float


_ROOM = [None]  # the room the main ring view last laid a run out in: the worker prepares the next for it


def _make_machine_layout(run, room: Room, texts, shape):
    if room.present:
        lay, z = present_layout(room.width, room.height, room.scale, texts, shape, room.zoom)
    else:
        z, lay = 1.0, ring_layout(room.width, room.height, room.scale, texts, shape)
    paths, crossing = {}, frozenset()  # (src, dst) -> legs, or None: rides the lanes
    if lay.kind != "switch":
        pairs = list(zip(run.trace.column("src").tolist(), run.trace.column("dst").tolist()))
        paths = {k: message_path(lay, *k) for k in set(pairs)}
        if lay.kind == "nodes":
            crossing = frozenset(i for i, k in enumerate(pairs) if paths.get(k) is not None)
    return lay, z, paths, crossing


def machine_layout(run, n: int, room: Room, texts):
    """(layout, zoom, the legs of every (src, dst) pair off the lanes, the messages crossing between
    nodes) of `run` drawn with n devices in `room` with `texts`: made once per run, room and language
    (the texts are the language), on the worker for the room of the last run shown."""
    topo = run.comm.topology if run.comm is not None else None
    shape = machine_shape(topo, ring_shape(run, n))
    return memo(run, ("ring layout", n, room, texts, shape), lambda: _make_machine_layout(run, room, texts, shape),
                keep=4)


def run_texts(run, n: int):
    """Every text the layout places (RingView._texts_for_run's), in the current language."""
    return machine_texts(run, ring_texts(run, n))


def step_line_notes(run, coll: int, k: int) -> tuple:
    """(when step k's first message starts, the step line's note before that, after it) on a machine
    (step_note over the step's messages: 8,192 at n = 256 on DGX H100), once per run and language."""
    def make():
        msgs = [run.trace.messages[i] for i in run.index.step_msgs[coll][k]]
        if not msgs:
            return math.inf, "", ""
        return min(m.t_start for m in msgs), step_note(run, msgs, -math.inf), step_note(run, msgs, None)
    lang = QCoreApplication.translate("RingView", "t = {t} of {T}")
    return memo(run, ("ring step note", coll, k, lang), make)


def run_colors(run, n: int):
    """message_color_indices of every message of the run, made once per run (on the worker)."""
    return memo(run, ("ring colours", n), lambda: _read_only(message_color_indices(run.trace, n)))


def run_fills(run, n: int):
    """block_fills of every message of the run, made once per run (on the worker)."""
    return memo(run, ("ring fills", n), lambda: tuple(_read_only(a) for a in block_fills(run.trace, n)))


def _read_only(a):
    a.setflags(write=False)
    return a


@preparer
def prepare_layout(run):
    """On the worker, with the build: the layout the ring view will lay the run out with (in the room
    the last run was shown in) and the note of the step it opens at."""
    c = run.trace.collectives[0] if run.trace.collectives else None
    if c is not None and c.n_steps and step_notes(getattr(run.comm, "topology", None)):
        step_line_notes(run, 0, 0)
    n = run.scenario.n
    run_colors(run, n)
    if n > STRIPE_MAX_N:
        run_fills(run, n)
    if _ROOM[0] is not None:
        machine_layout(run, n, _ROOM[0], run_texts(run, n))
