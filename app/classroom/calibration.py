"""
The calibration dialog: give the simulator this machine's (or a GPU cluster's) α and β.

Two sources of measurements:
  * Measure — times Open MPI's collectives on n local ranks (simcore.mpi.measure) on the app's
    worker (app/worker.py), with a progress bar and Cancel; the GUI never waits for it;
  * Open nccl-tests file — reads all_reduce_perf / all_gather_perf / reduce_scatter_perf output.
Both end as calibrate.Point lists; the dialog fits one α and one β to all of them
(calibrate.fit), draws the measured points over the fitted model's curves (time against
message size, log–log), and `link()` is the result as a comm_sim.LinkSpec. A log with runs over
several nodes gives two fits, each drawn over its own points: inside a node (the one-node runs,
or NVLink 4 assumed) and between nodes (nccl_log.calibrate_nccl_tests), each with its worst
error, and a warning when a fit's worst error is above calibrate.BAD_FIT. The links are named
after the file. "Use as link"
emits `link_ready(LinkSpec)` and accepts the dialog.

    dlg = CalibrationDialog(parent)
    dlg.link_ready.connect(window.add_link_preset)
    dlg.open()
"""

from __future__ import annotations

import os

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout,
                               QLabel, QLineEdit, QProgressBar, QPushButton, QSpinBox, QVBoxLayout)

from simcore import calibrate, nccl_log
from simcore.calibrate import MEASURED, RING_LABEL, Fit

from .. import theme
from ..worker import Worker

NCCL_MAX_BYTES = 16 << 20  # nccl-tests output is a few KiB per run; a bigger file is not one

# what the "Collectives" box offers: key -> (op, algo) list (None: simcore.mpi's defaults)
OP_SETS = {
    "default": None,
    "ring": (("all-reduce", "ring"), ("all-gather", "ring"), ("reduce-scatter", "ring")),
    "all-reduce": (("all-reduce", "ring"), ("all-reduce", "rd"), ("all-reduce", "linear")),
}


def _luma(c: QColor) -> float:
    """Perceived brightness 0..255 (Rec. 601 weights)."""
    return 0.299 * c.red() + 0.587 * c.green() + 0.114 * c.blue()


def _measure(fn, kwargs, job):
    """The worker's job: fn reports progress and watches the job's cancel event."""
    return fn(progress=job.progress, cancel=job.cancel_event, **kwargs)


class CalibrationDialog(QDialog):
    """
    Measure or import collective timings, fit α and β, and hand the result over as a link.

    measure_fn: the measurement (default simcore.mpi.measure; tests pass a fake with the same
    signature: fn(n, sizes, ops=…, repeats=…, allow_root=…, progress=…, cancel=…) ->
    (points, info)). sync=True runs it on the calling thread (deterministic tests); None: the
    worker's default (app/worker.py).
    """

    link_ready = Signal(object)  # comm_sim.LinkSpec, when the user clicks "Use as link"
    machine_ready = Signal(str, int)  # a two-node fit's machine (topology_presets key) and its GPUs

    MEASURE = "measure"  # the worker's channel

    def __init__(self, parent=None, measure_fn=None, sync=None):
        super().__init__(parent)
        self.setObjectName("CalibrationDialog")
        self._measure_fn = measure_fn
        self.worker = Worker(sync, self)
        self.worker.progress.connect(self._on_worker_progress)
        self.worker.done.connect(self._on_worker_done)
        self.worker.failed.connect(self._on_worker_failed)
        self.worker.cancelled.connect(self._on_worker_cancelled)
        self._points: list = []
        self._fit: Fit | None = None
        self._inter_fit: Fit | None = None  # the inter-node link's fit of a multi-node log
        self._calibration = None  # nccl_log.Calibration of a log with runs over several nodes
        self._source = ""  # "measure" | "nccl" — decides the default link name
        self._nccl_name = ""
        self._curves = {}  # (op, algo) -> (scatter item, model curve item), created once per key
        self._build()
        self.retranslate_ui()
        self._refresh_mpi_state()

    # -- layout ---------------------------------------------------------------------------
    def _build(self):
        self.measure_box = QGroupBox(objectName="measureBox")
        self.n_spin = QSpinBox(objectName="ranks", minimum=2, maximum=256, value=4)
        self.sizes_edit = QLineEdit("8B..64MiB", objectName="sizes")
        self.ops_combo = QComboBox(objectName="ops")
        for key in OP_SETS:
            self.ops_combo.addItem("", key)
        self.repeats_spin = QSpinBox(objectName="repeats", minimum=1, maximum=100, value=5)
        self.root_check = QCheckBox(objectName="allowRoot")
        self.root_check.setVisible(hasattr(os, "geteuid") and os.geteuid() == 0)
        self.measure_button = QPushButton(objectName="measureButton")
        self.measure_button.clicked.connect(self.start_measurement)
        self.cancel_button = QPushButton(objectName="cancelButton", enabled=False)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar(objectName="progress", minimum=0, maximum=1, value=0)
        self.progress.setTextVisible(True)
        form = QFormLayout()
        self._form_labels = [QLabel() for _ in range(4)]
        for label, w in zip(self._form_labels, (self.n_spin, self.sizes_edit, self.ops_combo, self.repeats_spin)):
            form.addRow(label, w)
        form.addRow(self.root_check)
        buttons = QHBoxLayout()
        buttons.addWidget(self.measure_button)
        buttons.addWidget(self.cancel_button)
        box = QVBoxLayout(self.measure_box)
        box.addLayout(form)
        box.addLayout(buttons)
        box.addWidget(self.progress)

        self.nccl_button = QPushButton(objectName="ncclButton")
        self.nccl_button.clicked.connect(lambda: self.open_nccl_file())

        self.plot = pg.PlotWidget(objectName="calibrationPlot")
        self.plot.setBackground(theme.palette().background)
        self.plot.setLogMode(x=True, y=True)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setMinimumSize(520, 360)
        self.plot.setRange(xRange=(0.9, 7.8), yRange=(0, 5), padding=0)  # log10: 8 B..64 MiB, 1 µs..100 ms
        for side in ("bottom", "left"):
            axis = self.plot.getAxis(side)
            axis.enableAutoSIPrefix(False)
            axis.setTickFont(theme.font("body"))
            axis.setTextPen(pg.mkPen(theme.palette().text))
            axis.setPen(pg.mkPen(theme.palette().text))
        self.legend = self.plot.addLegend(offset=(10, 10), labelTextColor=theme.palette().text,
                                          labelTextSize=f"{theme.px('body'):.0f}px")

        self.status = QLabel(objectName="status", wordWrap=True)
        self.result = QLabel(objectName="result", wordWrap=True)
        self.result.setFont(theme.font("body", mono=True))
        self.warning = QLabel(objectName="fitWarning", wordWrap=True, visible=False)
        self.warning.setStyleSheet(f"color: {theme.palette().error};")
        self.name_edit = QLineEdit(objectName="linkName")
        self.use_button = QPushButton(objectName="useButton", enabled=False)
        self.use_button.clicked.connect(self._on_use_clicked)
        self.close_button = QPushButton(objectName="closeButton")
        self.close_button.clicked.connect(self.reject)

        left = QVBoxLayout()
        left.addWidget(self.measure_box)
        left.addWidget(self.nccl_button)
        left.addStretch(1)
        top = QHBoxLayout()
        top.addLayout(left)
        top.addWidget(self.plot, 1)
        bottom = QHBoxLayout()
        self.name_label = QLabel()
        bottom.addWidget(self.name_label)
        bottom.addWidget(self.name_edit, 1)
        bottom.addWidget(self.use_button)
        bottom.addWidget(self.close_button)
        lay = QVBoxLayout(self)
        lay.addLayout(top, 1)
        lay.addWidget(self.result)
        lay.addWidget(self.warning)
        lay.addWidget(self.status)
        lay.addLayout(bottom)

    def retranslate_ui(self):
        self.setWindowTitle(self.tr("Calibrate the link: α and β"))
        self.measure_box.setTitle(self.tr("Measure with MPI on this machine"))
        for label, text in zip(self._form_labels, (self.tr("Ranks"), self.tr("Message sizes"),
                                                   self.tr("Collectives"), self.tr("Timed runs"))):
            label.setText(text)
        self.sizes_edit.setToolTip(self.tr("LOW..HIGH for powers of two (8B..64MiB), LOW..HIGH:x4, "
                                           "or a list such as 4KiB,1MiB"))
        names = {"default": self.tr("ring ×3, rd and linear all-reduce"), "ring": self.tr("ring only"),
                 "all-reduce": self.tr("all-reduce: ring, rd, linear")}
        for i in range(self.ops_combo.count()):
            self.ops_combo.setItemText(i, names[self.ops_combo.itemData(i)])
        self.root_check.setText(self.tr("Allow Open MPI to run as root"))
        self.measure_button.setText(self.tr("Measure"))
        self.cancel_button.setText(self.tr("Cancel"))
        self.nccl_button.setText(self.tr("Open nccl-tests output…"))
        self.nccl_button.setToolTip(self.tr("Text printed by all_reduce_perf, all_gather_perf or "
                                            "reduce_scatter_perf"))
        style = {"color": theme.palette().text, "font-size": f"{theme.px('body'):.0f}px"}
        self.plot.setLabel("bottom", self.tr("message size S (bytes)"), **style)
        self.plot.setLabel("left", self.tr("time (µs)"), **style)
        self.plot.setTitle(self.tr("measured (dots) and the α–β model (lines)"), color=theme.palette().text,
                           size=f"{theme.px('body'):.0f}px")
        self.name_label.setText(self.tr("Link name"))
        self.use_button.setText(self.tr("Use as link"))
        self.close_button.setText(self.tr("Close"))
        self._show_fit()
        self._refresh_mpi_state()

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def _refresh_mpi_state(self):
        if self._measure_fn is not None:
            reason = None
        else:
            from simcore.mpi import unavailable_reason

            reason = unavailable_reason()
        busy = self.is_running()
        self.measure_button.setEnabled(reason is None and not busy)
        self.measure_button.setToolTip(self.tr("Not available: %s") % reason if reason else "")
        self.cancel_button.setEnabled(busy)
        self.nccl_button.setEnabled(not busy)

    # -- measuring ------------------------------------------------------------------------
    def is_running(self) -> bool:
        """True from Measure until the measurement's outcome (points, failure, cancel) is shown."""
        return self.worker.busy(self.MEASURE)

    def start_measurement(self):
        """Start measuring with the settings in the dialog (returns at once unless sync)."""
        if self.is_running():
            return
        from simcore.mpi import parse_sizes

        try:
            sizes = parse_sizes(self.sizes_edit.text())
        except ValueError as e:
            self._set_status(str(e), error=True)
            return
        kwargs = {"n": self.n_spin.value(), "sizes": sizes, "repeats": self.repeats_spin.value(),
                  "allow_root": self.root_check.isChecked()}
        ops = OP_SETS[self.ops_combo.currentData()]
        if ops is not None:
            kwargs["ops"] = ops
        fn = self._measure_fn
        if fn is None:
            from simcore.mpi import measure as fn
        self.progress.setRange(0, 0)  # busy until the first progress report
        self._set_status(self.tr("Measuring on %n rank(s)…", "", kwargs["n"]))
        self.worker.submit(_measure, fn, kwargs, channel=self.MEASURE, takes_job=True)
        self._refresh_mpi_state()

    def cancel(self):
        """Stop the running measurement: mpiexec and its ranks are stopped within a second."""
        job = self.worker.job(self.MEASURE)
        if job is not None and job.running():
            job.cancel()
            self._set_status(self.tr("Cancelling…"))

    def _finish_job(self):
        self.progress.setRange(0, 1)
        self._refresh_mpi_state()

    def _on_worker_progress(self, channel, done, total):
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def _on_worker_done(self, channel, result):
        points, info = result
        self._finish_job()
        self.progress.setValue(self.progress.maximum())
        self._source = "measure"
        self.set_points(points)
        if info:
            self._set_status(self.tr("Measured %1 points with %2.").replace("%1", str(len(points)))
                             .replace("%2", str(info.get("library", "MPI")).split(",")[0]))

    def _on_worker_failed(self, channel, message):
        self._finish_job()
        self.progress.setValue(0)
        self._set_status(self.tr("Measurement failed: %s") % message, error=True)

    def _on_worker_cancelled(self, channel):
        self._finish_job()
        self.progress.setValue(0)
        self._set_status(self.tr("Measurement cancelled."))

    def _stop_measurement(self, wait_s=15.0):
        """Cancel the measurement and wait for it to return, so none outlives the dialog."""
        self.cancel()
        job = self.worker.job(self.MEASURE)
        if job is not None:
            job.wait(wait_s)

    def done(self, result):
        self._stop_measurement()
        super().done(result)

    def closeEvent(self, e):
        self._stop_measurement()
        super().closeEvent(e)

    # -- nccl-tests -----------------------------------------------------------------------
    def open_nccl_file(self, path=None) -> bool:
        """Read nccl-tests output (ask for the file when path is None). True when it was fitted."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, self.tr("Open nccl-tests output"), "",
                                                  self.tr("Text (*.txt *.log *.out);;All files (*)"))
            if not path:
                return False
        from ..files import read_bytes

        try:
            # checked and read without waiting: a FIFO or /proc/kmsg would hang the window
            raw = read_bytes(path, NCCL_MAX_BYTES)
            if len(raw) > NCCL_MAX_BYTES:
                raise ValueError(self.tr("it is larger than %1 MiB; nccl-tests output is far smaller")
                                 .replace("%1", str(NCCL_MAX_BYTES >> 20)))
            text = raw.decode("utf-8", errors="replace")
            tables = nccl_log.parse_nccl_tests(text, allow_multi_node=True)
            stem = os.path.splitext(os.path.basename(path))[0] or os.path.basename(path)
            # runs over several nodes: the intra-node link from the one-node runs (or NVLink 4
            # when there are none) and the inter-node link fitted to the rest, each link named
            # after the file
            cal = None
            if any(t.nodes > 1 for t in tables):
                from simcore.links import NVLINK4

                intra = None if any(t.nodes == 1 for t in tables) else NVLINK4
                cal = nccl_log.calibrate_nccl_tests(text, intra=intra, source=stem)
        except (OSError, ValueError) as e:
            msg = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            self._set_status(self.tr("Cannot use %1: %2").replace("%1", os.path.basename(path)).replace("%2", msg),
                             error=True)
            return False
        self._source = "nccl"
        self._nccl_name = stem
        if cal is not None:
            ok = self._set_calibration(cal)
        else:
            ok = self.set_points([p for t in tables for p in t.points()])
        if ok and cal is not None:
            self._set_status(self.tr("Read %1: inside a node %2; between nodes α = %3 µs, β = %4 GB/s (%5)")
                             .replace("%1", os.path.basename(path))
                             .replace("%2", cal.intra.name if cal.intra_fit is not None else
                                      self.tr("NVLink 4 (assumed)"))
                             .replace("%3", f"{cal.inter.alpha * 1e6:.3g}").replace("%4", f"{cal.inter.bw / 1e9:.3g}")
                             .replace("%5", ", ".join(f"{t.op} {t.nodes}×{t.per_node}" for t in cal.tables
                                                      if t.nodes > 1)))
        elif ok:
            self._set_status(self.tr("Read %1: %2").replace("%1", os.path.basename(path))
                             .replace("%2", ", ".join(f"{t.op} n={t.n}" for t in tables)))
        return ok

    # -- the fit and the plot -------------------------------------------------------------
    def set_points(self, points) -> bool:
        """Fit α and β to `points` (calibrate.Point) and draw them. False when they cannot be fitted."""
        self._points = list(points)
        self._calibration = None
        self._inter_fit = None
        try:
            _, self._fit = calibrate.fit_link(self._points)  # ring points when there are any
        except ValueError as e:
            self._fit = None
            self._set_status(self.tr("Cannot fit α and β: %s") % str(e), error=True)
        if self._fit is not None:
            self.name_edit.setText(self._nccl_name if self._source == "nccl" else MEASURED)
        self._draw()
        self._show_fit()
        self.use_button.setEnabled(self._fit is not None)
        return self._fit is not None

    def fit(self) -> Fit | None:
        return self._fit

    def points(self) -> list:
        return list(self._points)

    def link(self):
        """The fitted link (comm_sim.LinkSpec, named as in the name box), or None before a fit."""
        if self._fit is None:
            return None
        return self._fit.link(self.name_edit.text().strip() or MEASURED)

    def _draw(self):
        """Per run (op, algo, n, nodes): the measured dots and the line of the fit of its link
        (one node: the intra-node fit; several: the inter-node fit's multi-node form)."""
        groups = {}
        for p in self._points:
            groups.setdefault((p.op, p.algo, p.n, p.nodes), []).append(p)
        # the palette without colours too light for thin lines on a white projector image
        colors = [c for c in theme.palette().device_colors if _luma(QColor(c)) < 190] or ["#000000"]
        seen = set()
        for i, (key, pts) in enumerate(sorted(groups.items())):
            op, algo, n, nodes = key
            seen.add(key)
            fit_ = self._inter_fit if nodes > 1 else self._fit
            color = colors[i % len(colors)]
            if key not in self._curves:  # PlotDataItems: they follow the plot's log mode
                label = f"{op} (n={n}, {nodes}×{n // nodes})" if nodes > 1 else f"{op} {algo} (n={n})"
                dots = self.plot.plot([], [], pen=None, symbol="o", symbolSize=10, symbolPen=pg.mkPen(color),
                                      symbolBrush=pg.mkBrush(color), name=label)
                line = self.plot.plot([], [], pen=pg.mkPen(color, width=theme.line("spoke")))
                self._curves[key] = (dots, line)
            dots, line = self._curves[key]
            S = np.array([p.nbytes for p in pts])
            t = np.array([p.seconds for p in pts]) * 1e6
            dots.setData(S, t)
            if fit_ is not None:
                xs = np.geomspace(S.min(), S.max(), 64)
                line.setData(xs, fit_.predict(op, algo, n, xs, nodes) * 1e6)
                line.setVisible(True)
            else:
                line.setVisible(False)
        for key in list(self._curves):
            if key not in seen:
                dots, line = self._curves.pop(key)
                self.legend.removeItem(dots)
                self.plot.removeItem(dots)
                self.plot.removeItem(line)
        self.plot.enableAutoRange()

    def _fit_text(self, f, form=None):
        """One fit's numbers; form: the closed form's name for "(fitted to N <form> points)"."""
        if form is None:
            form = self.tr("ring") if f.label == RING_LABEL else self.tr("measured")
        return (self.tr("α = %1 µs   β = %2 GB/s   R² = %3   worst error %4%   (fitted to %5 %6 points)")
                .replace("%1", f"{f.alpha * 1e6:.3g}").replace("%2", f"{f.bw / 1e9:.3g}")
                .replace("%3", f"{f.r2:.3f}").replace("%4", f"{f.worst_rel * 100:.1f}")
                .replace("%5", str(f.n_points))
                .replace("%6", form))

    def _show_fit(self):
        f, fi = self._fit, self._inter_fit
        bad = [(what, x) for what, x in ((self.tr("inside a node"), f), (self.tr("between nodes"), fi))
               if x is not None and x.bad]
        self.warning.setVisible(bool(bad))
        self.warning.setText("\n".join(
            self.tr("Warning: the fit %1 explains the data badly: its worst error %2% is above %3% "
                    "(nccl-tests scatters a few %, the α–β line's protocol ramp 10–20 %). NCCL may have run "
                    "another algorithm (Tree, NVLS: rerun with NCCL_ALGO=Ring), or the node count is wrong.")
            .replace("%1", what).replace("%2", f"{x.worst_rel * 100:.1f}")
            .replace("%3", f"{calibrate.BAD_FIT * 100:.0f}") for what, x in bad))
        if f is None and fi is None:
            self.result.setText(self.tr("No measurements yet: measure, or open an nccl-tests file."))
            return
        if fi is None:
            self.result.setText(self._fit_text(f))
            return
        cal = self._calibration
        intra_form = cal.intra_algo if cal is not None else None
        inside = (self.tr("Inside a node: %1").replace("%1", self._fit_text(f, intra_form)) if f is not None else
                  self.tr("Inside a node: NVLink 4 assumed (the log has no one-node run)"))
        between = (self.tr("Between nodes (%1): %2").replace("%1", fi.inter_algo)
                   .replace("%2", self._fit_text(fi, fi.inter_algo)))
        self.result.setText(inside + "\n" + between)

    def _set_status(self, text, error=False):
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {theme.palette().error};" if error else "")

    def _set_calibration(self, cal) -> bool:
        """A log with runs over several nodes: the intra-node fit (None when the log has no
        one-node run: NVLink 4 assumed) and the inter-node fit, each drawn over its own points."""
        one, many = cal.points()
        self._points = one + many
        self._fit, self._inter_fit = cal.intra_fit, cal.inter_fit
        self._calibration = cal
        self.name_edit.setText(self._nccl_name)
        self._draw()
        self._show_fit()
        self.use_button.setEnabled(True)
        return True

    def links(self):
        """(intra, inter) LinkSpecs of the last fit; inter is None unless the log spans several nodes."""
        cal = self._calibration
        if cal is not None and cal.inter is not None:
            from simcore.links import NVLINK4

            name = self.name_edit.text().strip()
            inter = cal.inter if not name else cal.inter_fit.link(f"{name}, between nodes")  # as nccl_log names it
            return (self.link() or cal.intra or NVLINK4), inter
        return self.link(), None

    def _on_use_clicked(self):
        intra, inter = self.links()
        if inter is not None:  # both links: a machine of nodes with them, and the scenario on it
            key, n = register_measured_machine(intra, inter, self._calibration)
            if intra is not None:
                self.link_ready.emit(intra)
            self.machine_ready.emit(key, n)
            self.accept()
            return
        link = self.link()
        if link is not None:
            from ..scenario_io import remember_calibration

            remember_calibration(link)  # offered again after a restart (Classroom.restore_session)
            self.link_ready.emit(link)
            self.accept()


def register_measured_machine(intra, inter, cal):
    """
    A machine of nodes with the calibrated links: intra inside a node, inter on every
    GPU's NIC, per node as many GPUs as the log's multi-node runs had. Registers the two links in
    comm_sim.LINKS and the machine in topology_presets.PRESETS (as "measured-nodes") for this
    session, and remembers it (QSettings) so a scenario naming it reopens after a restart; returns (its
    key, the largest run's GPU count).
    """
    from ..scenario_io import install_measured_machine, remember_measured_machine

    multi = [t for t in cal.tables if t.nodes > 1]
    per_node = max(multi, key=lambda t: t.n).per_node
    n = max(t.n for t in multi)
    source = "nccl-tests log: " + ", ".join(f"{t.op} {t.nodes}x{t.per_node}" for t in cal.tables)
    algos = cal.machine_algos()  # what NCCL ran in the log, not hierarchical by default
    key = install_measured_machine(intra, inter, per_node, source, algos)
    remember_measured_machine(intra, inter, per_node, source, algos)  # a scenario naming it reopens after a restart
    return key, n
