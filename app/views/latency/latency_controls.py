"""
The decode-latency tab's controls: preset, model, machine (one switch, or a topology_presets
machine whose chip and node boundary the sweep then uses), chip, link, all-reduce algorithm, batch,
context, bytes per element, largest n, the export menu and a hint. A scroll area the view puts
on its left; it shows parameters (`show_params`) and reads them back (`read`), and says when the
user changed one (`edited`) or picked a published setting (`preset_chosen`, an index into
cost_model.REFERENCE_POINTS). Its texts share the view's translation context.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QFrame, QLabel, QMenu, QScrollArea, QSpinBox,
                               QToolButton, QVBoxLayout, QWidget)

from simcore import cost_model
from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.links import LINKS
from simcore.hw_specs import CHIPS
from simcore.llm_math import MODELS
from simcore.topology_presets import PRESETS

from ...words import algo_text  # the registry's algorithms, named as in the control dock
from ...core.latency_model import BYTE_CHOICES, N_MAX_CHOICES, overlap_problem


def _tr(text):
    return QCoreApplication.translate("LatencyView", text)


def algo_names() -> dict:
    """{key: shown name} of every all-reduce algorithm in comm_sim.ALLREDUCE_ALGOS, in its order."""
    return {key: algo_text("all-reduce", key).name for key in ALLREDUCE_ALGOS}  # as the control dock names them


class LatencyControls(QScrollArea):
    edited = Signal()  # a control changed by the user (not by show_params)
    preset_chosen = Signal(int)  # index into cost_model.REFERENCE_POINTS

    def __init__(self, parent=None):
        super().__init__(parent)
        self._syncing = False
        self.preset = QComboBox(objectName="latencyPresetCombo")
        self.model_combo = QComboBox(objectName="latencyModelCombo")
        for key, m in MODELS.items():
            self.model_combo.addItem(m.name, key)
        self.machine_combo = QComboBox(objectName="latencyMachineCombo")
        self.chip_combo = QComboBox(objectName="latencyChipCombo")
        for key, c in CHIPS.items():
            self.chip_combo.addItem(c.name, key)
        self.link_combo = QComboBox(objectName="latencyLinkCombo")
        self.algo_combo = QComboBox(objectName="latencyAlgoCombo")
        self.batch_spin = QSpinBox(objectName="latencyBatchSpin")
        self.batch_spin.setRange(1, 1 << 16)
        self.ctx_spin = QSpinBox(objectName="latencyCtxSpin")
        self.ctx_spin.setRange(0, 1 << 21)
        self.ctx_spin.setSingleStep(1024)
        self.ctx_spin.setGroupSeparatorShown(True)
        self.byte_combos = {}
        for key in ("w_bytes", "kv_bytes", "act_bytes"):
            c = QComboBox(objectName=f"latency_{key}_combo")
            for name, b in BYTE_CHOICES:
                c.addItem(f"{name} ({b:g} B)", b)
            self.byte_combos[key] = c
        self.nmax_combo = QComboBox(objectName="latencyNMaxCombo")
        for v in N_MAX_CHOICES:
            self.nmax_combo.addItem(f"1 … {v}", v)
        # the step with the collective matmul ("async TP"): a second t_step curve beside the plain one
        self.overlap_check = QCheckBox(objectName="latencyOverlapCheck")
        self.export_button = QToolButton(objectName="latencyExportButton")
        self.export_button.setPopupMode(QToolButton.InstantPopup)
        self.export_menu = QMenu(self)
        self.export_button.setMenu(self.export_menu)

        rows = [self.preset, self.model_combo, self.machine_combo, self.chip_combo, self.link_combo, self.algo_combo, self.batch_spin,
                self.ctx_spin, *self.byte_combos.values(), self.nmax_combo]
        self._labels = [QLabel() for _ in rows]
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.WrapLongRows)
        for lab, w in zip(self._labels, rows):
            lab.setBuddy(w)
            form.addRow(lab, w)
            if isinstance(w, QComboBox):
                w.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
                w.setMinimumContentsLength(8)
        panel = QWidget(objectName="latencyControls")
        col = QVBoxLayout(panel)
        col.addLayout(form)
        col.addWidget(self.overlap_check)
        col.addWidget(self.export_button)
        self.hint = QLabel(objectName="latencyHint")
        self.hint.setWordWrap(True)
        col.addWidget(self.hint)
        col.addStretch(1)
        self.setWidget(panel)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)

        self.preset.activated.connect(self._on_preset_activated)
        for c in (self.model_combo, self.machine_combo, self.chip_combo, self.link_combo, self.algo_combo, self.nmax_combo,
                  *self.byte_combos.values()):
            c.activated.connect(self._on_control_changed)
        for s in (self.batch_spin, self.ctx_spin):
            s.valueChanged.connect(self._on_control_changed)
        self.overlap_check.toggled.connect(self._on_control_changed)

    def retranslate(self):
        for lab, text in zip(self._labels, (
                _tr("Pre&set"), _tr("&Model"), _tr("Mach&ine"), _tr("&Chip"), _tr("&Link"), _tr("&All-reduce"),
                _tr("&Batch"),
                _tr("Conte&xt"), _tr("&Weights"), _tr("&KV cache"), _tr("Acti&vations"), _tr("&Devices n"))):
            lab.setText(text)
        self.export_button.setText(_tr("&Export…"))
        self.overlap_check.setText(_tr("&Overlap (async TP)"))

    def read(self) -> dict:
        """The parameters the widgets show (keys of latency_model.DEFAULTS)."""
        out = {"model": self.model_combo.currentData(), "chip": self.chip_combo.currentData(),
               "machine": self.machine_combo.currentData() or "",
               "link": self.link_combo.currentData() or "", "algo": self.algo_combo.currentData(),
               "batch": self.batch_spin.value(), "ctx": self.ctx_spin.value(),
               "n_max": int(self.nmax_combo.currentData()), "overlap": self.overlap_check.isChecked()}
        for key, c in self.byte_combos.items():
            out[key] = float(c.currentData())
        return out

    def show_params(self, p: dict):
        """Set every widget to `p` (checked parameters) without announcing an edit."""
        self._syncing = True
        try:
            _select(self.model_combo, p["model"])
            _select(self.chip_combo, p["chip"])
            self.machine_combo.clear()
            self.machine_combo.addItem(_tr("one switch (link)"), "")
            for key, preset in PRESETS.items():
                self.machine_combo.addItem(preset.name, key)
            _select(self.machine_combo, p["machine"])
            on_machine = bool(p["machine"])  # the machine fixes the chip and its links
            self.chip_combo.setEnabled(not on_machine)
            self.link_combo.setEnabled(not on_machine)
            own = LINKS[CHIPS[p["chip"]].link].name
            self.link_combo.clear()
            self.link_combo.addItem(_tr("{link} (the chip's own)").format(link=own), "")
            for key, spec in LINKS.items():
                self.link_combo.addItem(spec.name, key)
            _select(self.link_combo, p["link"])
            self.algo_combo.clear()
            for key, name in algo_names().items():
                if key == "ring" and on_machine:  # on a machine the default is its own pick for each n and size
                    name = _tr("machine's choice for each n (NCCL's tuner on GPUs)")
                self.algo_combo.addItem(name, key)
            _select(self.algo_combo, p["algo"])
            self.algo_combo.setToolTip(self.algo_combo.currentText())
            self.batch_spin.setValue(p["batch"])
            self.ctx_spin.setValue(p["ctx"])
            for key, c in self.byte_combos.items():
                i = c.findData(float(p[key]))
                if i < 0:
                    c.addItem(f"{p[key]:g} B", float(p[key]))
                    i = c.count() - 1
                c.setCurrentIndex(i)
            i = self.nmax_combo.findData(p["n_max"])
            if i < 0:
                self.nmax_combo.addItem(f"1 … {p['n_max']}", p["n_max"])
                i = self.nmax_combo.count() - 1
            self.nmax_combo.setCurrentIndex(i)
            self.overlap_check.setChecked(bool(p["overlap"]))
            why = overlap_problem(p)
            self.overlap_check.setEnabled(not why)
            self.overlap_check.setToolTip(
                _tr("Why not: {why}.").format(why=_overlap_reason(why)) if why else
                _tr("Add the step with each row-parallel matmul's all-reduce overlapped (collective matmul, as "
                    "async tensor parallelism does): the matmul is cut into n chunks, and the ring sends each "
                    "chunk's partial sum while the next one is computed."))
            self.preset.clear()
            self.preset.addItem(_tr("published setting…"), -1)
            for k, ref in enumerate(cost_model.REFERENCE_POINTS):
                self.preset.addItem(ref.name, k)
        finally:
            self._syncing = False

    def _on_control_changed(self, *_):
        if not self._syncing:
            self.edited.emit()

    def _on_preset_activated(self, i):
        k = self.preset.itemData(i)
        if not self._syncing and k is not None and k >= 0:
            self.preset_chosen.emit(k)


def _overlap_reason(why: str) -> str:
    """latency_model.overlap_problem's sentence, translated."""
    if "ring" in why:
        return _tr("the collective matmul overlaps the ring reduce-scatter: choose the ring all-reduce")
    return _tr("the overlapped closed form is for chips on one switch: choose one switch as the machine")


def _select(combo: QComboBox, data):
    i = combo.findData(data)
    if i >= 0:
        combo.setCurrentIndex(i)
