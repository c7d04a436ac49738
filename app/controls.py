"""
The control dock: scenario, operation, algorithm, n, message size, machine, link. Every change goes
through `ScenarioModel.update`; a value the engine refuses leaves the previous scenario in
place and shows the engine's sentence in red, under the field it is about, until the next good change.

One rule for a typed value: it is taken whole or refused. "1e9", "-1" or "3.5" in the n field is
refused in words (not read as 19, 1 or 35); a size in the S field is read whole or refused.
S and n: S must split into n equal whole-byte chunks (app/core/scenarios.not_split). A size typed
that does not is refused naming the nearest sizes that do, as `--bytes` is on the command line.
When n changes (its field, a machine) and the size asked for does not split, the run uses the
nearest size at or under it that does (scenarios.fit_bytes); the S field shows that size exactly
and the line under it says why. The size asked for is kept: n = 72, then 256, then 8 gives 1 MiB
back, not a size that drifted down at every step.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QPalette, QValidator
from PySide6.QtWidgets import (QAbstractSpinBox, QComboBox, QGridLayout, QLabel, QLineEdit, QSizePolicy, QSpinBox,
                               QStyle, QStyleOptionComboBox, QStylePainter, QVBoxLayout,
                               QWidget)

from simcore.kind_record import record_of
from simcore.links import LINKS
from simcore.scenarios import parse_bytes
from simcore.topology_presets import PRESETS, offered_algos

from .core import scenarios
from . import theme
from .words import algo_text, fmt_bytes, matmul_case_name, nccl_reason, opened_what

MACHINE_CHOICE = ""  # the algorithm menu's entry "machine's choice (…)": the topology's own pick for S

GROUPS = ("collective", "matmul", "tp-forward", "decode", "mesh")
SIZE_PRESETS = (2**12, 2**16, 2**20, 2**24, 2**28, 2**30)


# the group a machine opens with: one that shows its wiring (two DGX nodes, a 4×4 torus slice,
# one NVL72 rack, a full TPU v4 cube)
MACHINE_N = {"dgx-h100": 16, "gb200-nvl72": 72, "tpu-v5e-16x16": 16, "tpu-v4-4x4x4": 64}


def size_text(nbytes: float) -> str:
    """S as the field shows it: "1 MiB" when that is exactly S, else its bytes ("1048575 B"), so that
    the field never shows a size the run does not use and reads back as the same number."""
    unit = fmt_bytes(nbytes)
    if parse_bytes(unit) == nbytes:
        return unit
    return f"{int(nbytes)} B" if nbytes == int(nbytes) else f"{nbytes:g} B"


def group_of(kind: str) -> str:
    if kind in scenarios.COLLECTIVE_KINDS:
        return "collective"
    if kind.startswith("matmul-"):
        return "matmul"
    return kind


class LeftoverLabel(QLabel):
    """A word-wrapped label that takes the height its layout has left and claims none: it has no
    height-for-width (a wrapped label's would make the layout squeeze every other row when the
    dock is short) and, with an Ignored vertical policy, no minimum. Its end is cut when it is long."""

    def hasHeightForWidth(self):
        return False


class ElidingCombo(QComboBox):
    """
    A combo whose closed box ends its text with "…" where the dock is too narrow for it (Qt's
    own cuts it mid-letter: "Hierarchical (i"). The panel puts the full text in its tooltip and,
    for the algorithm, on a readout line under it. `shown_changed` fires when what fits may have
    changed (its size or its entry).
    """

    shown_changed = Signal()

    def __init__(self, parent=None, **kw):
        super().__init__(parent, **kw)
        self.currentIndexChanged.connect(self.shown_changed)

    def text_rect(self):
        """Where the closed box draws its text (the style's edit field)."""
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        return self.style().subControlRect(QStyle.CC_ComboBox, opt, QStyle.SC_ComboBoxEditField, self)

    def whole_text(self) -> str:
        """The entry, or with none chosen the placeholder (a machine's links in the link box)."""
        return self.currentText() if self.currentIndex() >= 0 else self.placeholderText()

    def shown_text(self) -> str:
        """The text the closed box paints: whole_text, elided to its text rect."""
        return self.fontMetrics().elidedText(self.whole_text(), Qt.ElideRight, self.text_rect().width())

    def fits(self) -> bool:
        return self.shown_text() == self.whole_text()

    def paintEvent(self, e):
        p = QStylePainter(self)
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        p.drawComplexControl(QStyle.CC_ComboBox, opt)
        if self.currentIndex() < 0:  # the placeholder, muted as QComboBox draws it
            opt.palette.setBrush(QPalette.ButtonText, opt.palette.placeholderText())
        opt.currentText = self.shown_text()
        p.drawControl(QStyle.CE_ComboBoxLabel, opt)

    def resizeEvent(self, e):
        super().resizeEvent(e)
        self.shown_changed.emit()

    def changeEvent(self, e):
        super().changeEvent(e)
        if e.type() in (QEvent.FontChange, QEvent.StyleChange):  # a text scale or theme: what fits changes
            self.shown_changed.emit()


class DeviceCountBox(QSpinBox):
    """
    The n field. It takes any whole number as typed — a spin box limited to 1…64 read "100000"
    as 10 and "65" as 6 — and the panel says when it is outside 1 … scenarios.MAX_N (read each
    time: the limit can change). The arrows and the wheel stay inside the limits. Anything else
    ("3.5", "1e9", "-1") may be typed whole, so that Enter refuses it (`refused`) rather than the
    spin box dropping what it cannot read ("35", "19", "1").
    """

    TYPED_MAX = 10**9 - 1  # nine digits: anything a user types in earnest is read whole
    WHOLE = re.compile(r"\s*\+?[0-9]+\s*")

    refused = Signal(str)  # the text typed, when it is not a whole number of devices

    def __init__(self, parent=None, **kw):
        super().__init__(parent, **kw)
        self.setRange(0, self.TYPED_MAX)
        self.setKeyboardTracking(False)

    def validate(self, text, pos):
        if not self.WHOLE.fullmatch(text):  # read whole on Enter: refused there in words
            return QValidator.State.Intermediate, text, pos
        return super().validate(text, pos)

    def _refuse_typed(self) -> bool:
        text = self.lineEdit().text().strip()
        if text and not self.WHOLE.fullmatch(text):
            self.refused.emit(text)
            return True
        return False

    def keyPressEvent(self, e):
        if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self._refuse_typed():
            return  # what was typed stays in the field beside the reason, to be corrected
        super().keyPressEvent(e)

    def focusOutEvent(self, e):
        self._refuse_typed()  # said before the spin box puts its whole number back
        super().focusOutEvent(e)

    def stepBy(self, steps):
        self.setValue(min(max(self.value() + steps, 1), scenarios.MAX_N))

    def stepEnabled(self):
        v, flags = self.value(), QAbstractSpinBox.StepEnabledFlag.StepNone
        if v > 1:
            flags |= QAbstractSpinBox.StepEnabledFlag.StepDownEnabled
        if v < scenarios.MAX_N:
            flags |= QAbstractSpinBox.StepEnabledFlag.StepUpEnabled
        return flags


class ControlPanel(QWidget):
    """Edits a ScenarioModel. Emits `done_editing` when focus may go back to the picture."""

    done_editing = Signal()

    def __init__(self, model, parent=None):
        super().__init__(parent)
        self.setObjectName("ControlPanel")
        self.model = model
        self.group = ElidingCombo(objectName="scenarioCombo")
        self.op = ElidingCombo(objectName="operationCombo")
        self.algo = ElidingCombo(objectName="algoCombo")
        # the algorithm's whole entry ("machine's choice (NCCL rings, LL128 at 1 MiB)") when the
        # closed box has to elide it
        self.algo_readout = QLabel(objectName="algoReadout")
        self.algo_readout.setWordWrap(True)
        self.n = DeviceCountBox(objectName="nSpin")
        self.size_combo = QComboBox(objectName="sizeCombo")
        self.size_combo.setEditable(True)
        self.size_combo.setInsertPolicy(QComboBox.NoInsert)
        self.machine = ElidingCombo(objectName="machineCombo")
        self.link = ElidingCombo(objectName="linkCombo")
        for key, spec in LINKS.items():
            self.link.addItem(spec.name, key)
        for b in SIZE_PRESETS:
            self.size_combo.addItem(fmt_bytes(b), float(b))
        for combo in (self.group, self.op, self.algo, self.size_combo, self.machine, self.link):
            # the dock stays narrow: long names are elided in the closed combo, shown in full when open
            combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(8)
        # the link is named in full ("NVLink 4 (H100)", a machine's "NVLink 5 + IB NDR 400"): with
        # the form's WrapLongRows it goes under its label rather than be cut
        self.link.setMinimumContentsLength(max(len(s.name) for s in LINKS.values()) + 2)
        # a refusal in red, placed under the field it is about (n, S) or under the form (the rest)
        self.error = QLabel(objectName="errorLabel")
        self.error.setWordWrap(True)
        self.error.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        # under S: the size in use when it is not the one asked for, and why (S split into n chunks)
        self.size_note = QLabel(objectName="sizeNote")
        self.size_note.setWordWrap(True)
        # the size asked for (typed, chosen, a file's); at the start, the default S when the command
        # line fitted it to n (`--n 3`: 1,048,575 B for 1 MiB), so the line under S says so
        sc0 = model.scenario
        default = float(type(sc0)().nbytes)
        self._asked = default if scenarios.fit_bytes(default, sc0.n, sc0.kind) == sc0.nbytes else float(sc0.nbytes)
        self._field = ""  # the field whose change is being applied: "n", "size" or ""
        self._size_shown = ""  # the S field's own text for the size in use (_sync)
        self.hint = LeftoverLabel(objectName="hintLabel")
        self.hint.setWordWrap(True)
        # a grid, not a QFormLayout: a form does not grow a row for a word-wrapped label's second
        # line, which the algorithm's readout needs. Labels left, fields right; the readout under
        # the algorithm and the link's field (its names are long) under its label, across both columns
        grid = QGridLayout()
        grid.setColumnStretch(1, 1)
        self._labels = [QLabel() for _ in range(7)]
        self._error_rows = {}
        row = 0
        for lab, w in zip(self._labels, (self.group, self.op, self.algo, self.n, self.size_combo, self.machine,
                                         self.link)):
            lab.setBuddy(w)
            if w is self.link:
                grid.addWidget(lab, row, 0, 1, 2)
                grid.addWidget(w, row + 1, 0, 1, 2)
                row += 2
                continue
            grid.addWidget(lab, row, 0)
            grid.addWidget(w, row, 1)
            row += 1
            if w is self.algo:
                grid.addWidget(self.algo_readout, row, 0, 1, 2)
                row += 1
            if w is self.size_combo:
                grid.addWidget(self.size_note, row, 0, 1, 2)
                row += 1
            if w in (self.n, self.size_combo):
                self._error_rows[w] = row  # an empty row (no height) until a refusal of this field
                row += 1
        # the mesh scenario: its axes and sizes ("X=2,Y=4"), shown only for it (n follows from it)
        self.mesh_edit = QLineEdit(objectName="meshEdit")
        self.mesh_label = QLabel()
        self.mesh_label.setBuddy(self.mesh_edit)
        grid.addWidget(self.mesh_label, row, 0)
        grid.addWidget(self.mesh_edit, row, 1)
        self.mesh_edit.editingFinished.connect(self._on_mesh_edited)
        self._mesh_typed = None  # a mesh the model refused: kept in the field beside the reason
        row += 1
        # the mesh program's parameters ("case=2", "source=A[I_X, J_Y] target=A[I_XY, J]"): its defaults when empty
        self.params_edit = QLineEdit(objectName="meshParamsEdit")
        self.params_label = QLabel()
        self.params_label.setBuddy(self.params_edit)
        grid.addWidget(self.params_label, row, 0)
        grid.addWidget(self.params_edit, row, 1)
        self.params_edit.editingFinished.connect(self._on_params_edited)
        self._params_typed = None  # parameters the model refused: kept beside the reason
        row += 1
        self._error_rows[None] = row  # any other refusal: under the form
        self._grid = grid
        grid.addWidget(self.error, row, 0, 1, 2)
        lay = QVBoxLayout(self)
        lay.addLayout(grid)
        # the hint takes the height the controls leave (its end is cut on a short screen), never
        # squeezing the form's rows: the controls and the algorithm's readout stay whole
        self.hint.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Ignored)
        self.hint.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        lay.addWidget(self.hint, 1)
        self.keys = QLabel(objectName="keysLabel")
        self.keys.setWordWrap(True)
        lay.addWidget(self.keys)
        self._syncing = False
        # on a machine the algorithm follows the machine's own choice for the size at hand
        # (topology.choose) until an algorithm is picked by name; the entry MACHINE_CHOICE goes back to it
        self._follow = True
        self.group.activated.connect(self._on_group_activated)
        self.op.activated.connect(self._on_op_activated)
        self.algo.activated.connect(self._on_algo_activated)
        # queued: the readout is shown or hidden after the layout that resized the box has settled
        self.algo.shown_changed.connect(self._on_algo_shown_changed, Qt.QueuedConnection)
        self.n.valueChanged.connect(self._on_n_value_changed)
        self.n.refused.connect(self._on_n_refused)
        self.size_combo.activated.connect(self._on_size_activated)
        self.size_combo.lineEdit().editingFinished.connect(self._on_size_editing_finished)
        self.link.activated.connect(self._on_link_activated)
        self.machine.activated.connect(self._on_machine_activated)
        model.changed.connect(self._on_model_changed)
        model.error.connect(self._on_model_error)
        theme.notifier().changed.connect(self._apply_theme)
        self._apply_theme()
        self.retranslate_ui()

    # -- texts -----------------------------------------------------------------------------
    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        self.setWindowTitle(self.tr("Scenario"))
        for lab, text in zip(self._labels, (self.tr("&Scenario"), self.tr("&Operation"), self.tr("&Algorithm"),
                                            self.tr("&Devices n"), self.tr("Message si&ze S"),
                                            self.tr("&Machine"), self.tr("&Link"))):
            lab.setText(text)
        self.mesh_label.setText(self.tr("Mes&h axes"))
        self.mesh_edit.setToolTip(self.tr("Mesh axes and sizes, major to minor, e.g. X=2,Y=4 (n is their product)"))
        self.params_label.setText(self.tr("Pa&rameters"))
        self.keys.setText(self.tr("Keys: Space play/pause · ← → step · Home/End · [ ] speed · O loop"))
        self.n.setToolTip(self.tr("Devices: a whole number from 1 to {max}").format(max=scenarios.MAX_N))
        self._sync()

    def _on_algo_shown_changed(self):
        """The readout under the algorithm holds its whole entry while the box elides it, else nothing.
        It stays shown, empty and no taller than 0 (showing and hiding it moved the docks for a
        moment, and the timeline kept a picture of that moment)."""
        full = self.algo.currentText()
        text = full if full and not self.algo.fits() else ""
        self.algo_readout.setText(text)
        self.algo_readout.setMaximumHeight(16777215 if text else 0)  # empty: no blank line
        self.algo_readout.setToolTip(full)

    def _apply_theme(self):
        self.algo_readout.setStyleSheet(f"color: {theme.palette().text_muted};")
        self.size_note.setStyleSheet(f"color: {theme.palette().text_muted};")
        self.error.setStyleSheet(f"color: {theme.palette().error}; font-weight: bold;")
        self.hint.setStyleSheet(f"color: {theme.palette().text_muted};")
        self.keys.setStyleSheet(f"color: {theme.palette().text_muted};")

    def _group_names(self):
        return {"collective": self.tr("Collective"), "matmul": self.tr("Sharded matmul"),
                "tp-forward": self.tr("Tensor-parallel forward"), "decode": self.tr("Decode step (TP)"),
                "mesh": self.tr("Mesh (named axes)")}

    def _op_items(self, group):
        if group == "collective":
            return [(k, k) for k in scenarios.COLLECTIVE_KINDS]
        if group == "matmul":
            return [(f"matmul-{k}", self.tr("Case {k}: {name}").format(k=k, name=matmul_case_name(k)))
                    for k in range(1, 5)]
        if group == "mesh":  # the engine's registered mesh programs, in their own words
            from simcore.mesh.programs import PROGRAMS

            from .i18n import current_language
            lang = "zh" if current_language().startswith("zh") else "en"
            return [(k, p.title.get(lang, k)) for k, p in PROGRAMS.items()]
        return [(group, self.tr("2 all-reduces per layer + logits all-gather"))]

    def _algo_names(self, sc=None):
        """The algorithms on offer: the registry's on one switch, the machine's on a named one."""
        op = scenarios.algo_op(sc.kind) if sc is not None else "all-reduce"
        if sc is None or not sc.topology:  # the registry's, in its order
            return {k: algo_text(op, k).name for k in scenarios.algos_of(sc.kind if sc is not None else op)}
        names = {"hier": self.tr("Hierarchical (in node, across nodes, in node)"),
                 "ring-nodes": self.tr("NCCL rings, one channel per NIC"),
                 "torus": self.tr("Bidirectional rings per torus axis"), "ring": algo_text("all-reduce", "ring").name}
        try:
            offered = offered_algos(sc.topology, sc.n, op)
            nvls_tree = "hier" in offered and any(m.algo == "hier" and m.nccl == "NVLS_TREE"
                                                  for m in PRESETS[sc.topology].topology(sc.n).nccl_models(op))
        except ValueError:
            offered, nvls_tree = (sc.algo,), False
        if nvls_tree:  # a GPU machine of several nodes: hier is timed, and named, as NCCL's NVLS Tree
            names["hier"] = self.tr("Hierarchical — NCCL NVLS Tree")
        return {k: names.get(k) or algo_text(op, k).name for k in offered}

    def _machine_names(self):
        """"" = every device on one switch over the link below; else a topology_presets machine."""
        return {"": self.tr("One switch"), **{k: p.name for k, p in PRESETS.items()}}

    def _slice_of(self, sc) -> str:
        """'4×4' when the machine's torus runs a smaller slice than its name says, else ''."""
        run = self.model.run
        rec = record_of(run.comm.topology) if getattr(run, "comm", None) is not None else None
        p = PRESETS.get(sc.topology)
        if rec is None or not rec.grid or p is None or rec.n >= p.per_node:
            return ""
        return "×".join(map(str, rec.grid))

    def _machine_links(self, key: str) -> str:
        """What a machine's links are, for the Link box: "NVLink 5 + IB NDR 400", "TPU v5e ICI link"."""
        p = PRESETS.get(key)
        names = [LINKS[k].name.split(" (")[0].replace("InfiniBand", "IB")
                 for k in ((p.intra, p.inter) if p is not None else ()) if k in LINKS]
        return " + ".join(names) if names else self.tr("the machine's own")

    # -- model -> widgets --------------------------------------------------------------------
    def _sync(self):
        sc = self.model.scenario
        self._syncing = True
        try:
            g = group_of(sc.kind)
            self.group.clear()
            for key, name in self._group_names().items():
                self.group.addItem(name, key)
            self.group.setCurrentIndex(GROUPS.index(g))
            self.op.clear()
            for key, name in self._op_items(g):
                self.op.addItem(name, key)
            self.op.setCurrentIndex(max(0, self.op.findData(sc.kind)))
            self.op.setEnabled(self.op.count() > 1)
            self.algo.clear()
            choice = self.machine_choice(sc)
            if choice is not None:  # first: what the machine itself runs at this size, and that it is its pick
                if sc.algo != choice[0] and getattr(self.model, "pending", None) is None:
                    self._follow = False  # a scenario (a file, the deck) named another algorithm: it stays
                self.algo.addItem(self._choice_name(sc, choice), MACHINE_CHOICE)
            for key, name in self._algo_names(sc).items():
                self.algo.addItem(name, key)
            following = choice is not None and self._follow and sc.algo == choice[0]
            self.algo.setCurrentIndex(0 if following else self.algo.findData(sc.algo))
            self.algo.setToolTip(self.algo.currentText())
            self._on_algo_shown_changed()
            self.algo.setEnabled(self.algo.count() > 1 and (scenarios.takes_algo(sc.kind) or bool(sc.topology)))
            self.machine.clear()
            for key, name in self._machine_names().items():
                self.machine.addItem(name, key)
            self.machine.setCurrentIndex(max(0, self.machine.findData(sc.topology)))
            slice_ = self._slice_of(sc)
            if slice_:  # "TPU v5e 16x16" at n = 16 runs a 4×4 slice of it: say so in the box
                i = self.machine.currentIndex()
                self.machine.setItemText(i, self.tr("{machine}, {shape} slice").format(
                    machine=self.machine.itemText(i), shape=slice_))
            self.machine.setToolTip(self.machine.currentText())
            self.link.setEnabled(not sc.topology)  # a machine brings its own links
            self.n.setValue(sc.n)
            i = self.size_combo.findData(float(sc.nbytes))
            if i >= 0:
                self.size_combo.setCurrentIndex(i)
            else:
                self.size_combo.setEditText(size_text(sc.nbytes))
            self._size_shown = self.size_combo.currentText()  # what the field says by itself (not typed)
            self._sync_size_note(sc)
            if self.link.findData(sc.link) < 0 and sc.link in LINKS:  # a link registered since (a file's)
                self.add_link(sc.link, LINKS[sc.link])
            self.link.setCurrentIndex(self.link.findData(sc.link))
            if sc.topology:  # the machine's own links, not the switch's stale one
                self.link.setCurrentIndex(-1)
                self.link.setPlaceholderText(self._machine_links(sc.topology))
            self.link.setToolTip(self.link.placeholderText() if sc.topology else self.link.currentText())
            self.hint.setText(self._hint(sc))
            if choice is not None:  # the machine's pick, and the engine's reason, under the menu
                self.hint.setText(self._choice_hint(sc, choice) + "\n" + self.hint.text())
            if slice_:
                self.hint.setText(self.tr("{machine} at n = {n}: a {shape} slice of it.").format(
                    machine=PRESETS[sc.topology].name, n=sc.n, shape=slice_) + " " + self.hint.text())
            shapes = sc.kind in ("tp-forward", "decode")  # collectives of the model's own bytes: S does not apply
            self.size_combo.setEnabled(not shapes)
            self.size_combo.setToolTip(self.tr("The forward's collectives carry the model's real bytes: "
                                               "[B, T, d_model] activations and [B, T, vocab] logits, 2 bytes "
                                               "each.") if shapes else "")
            self._sync_opened()
            self._sync_mesh(sc)
        finally:
            self._syncing = False

    def _sync_mesh(self, sc):
        """The mesh scenario's fields: its mesh shown, n, S and the algorithm its own (greyed)."""
        mesh = sc.kind == "mesh"
        for w in (self.mesh_edit, self.mesh_label, self.params_edit, self.params_label):
            w.setVisible(mesh)
        if not mesh:
            return
        self._sync_params(sc)
        self.op.setCurrentIndex(max(0, self.op.findData(sc.program)))
        self.op.setToolTip(self.op.currentText())
        if self._mesh_typed is None:
            self.mesh_edit.setText(sc.mesh)
        for w in (self.n, self.size_combo, self.algo):
            w.setEnabled(False)

    # -- the machine's own choice ------------------------------------------------------------
    @staticmethod
    def machine_choice(sc):
        """scenarios.machine_choice: what the scenario's machine runs for its op at its size."""
        return scenarios.machine_choice(sc)

    def _short_algo(self, algo: str) -> str:
        return {"innet": self.tr("NVLS"), "ring-nodes": self.tr("NCCL rings"), "hier": self.tr("hierarchical"),
                "torus": self.tr("torus rings"), "tree": self.tr("NCCL Tree")}.get(algo) or \
            algo_text("all-reduce", algo).name

    def _choice_name(self, sc, choice) -> str:
        """The menu entry: "machine's choice (NVLS, Simple at 64 MiB)"."""
        algo, proto, _why = choice
        if proto:  # NCCL's tuner picked it: hier is then NCCL's NVLS Tree, and named so
            short = self.tr("NVLS Tree") if algo == "hier" else self._short_algo(algo)
            return self.tr("machine's choice ({algo}, {protocol} at {size})").format(
                algo=short, protocol=proto, size=fmt_bytes(sc.nbytes))
        return self.tr("machine's choice ({algo} at {size})").format(algo=self._short_algo(algo),
                                                                    size=fmt_bytes(sc.nbytes))

    def _choice_hint(self, sc, choice) -> str:
        """The line under the menu: what the machine picks at this size and the engine's reason."""
        topo = PRESETS[sc.topology].topology(sc.n)
        if topo.record.nccl:  # a GPU machine: NCCL's tuner, its numbers in this language
            why = nccl_reason(topo, sc.kind, choice[0], float(sc.nbytes))[1]
        else:
            why = self.tr("{algo}: {machine} runs it by default").format(algo=choice[0], machine=topo.name)
        return self.tr("The machine's choice: {why}.").format(why=why)

    def _sync_opened(self):
        """An opened run (app/opened_run.py) is no scenario of the dock: its algorithm is named as the
        code named it and the other controls are off, the scenario and operation left as the way out."""
        run = getattr(self.model, "run", None)
        opened = getattr(run, "opened", None) is not None
        for w in (self.n, self.machine):
            w.setEnabled(not opened)
        if not opened:
            return
        what = opened_what(run)
        self.algo.clear()
        self.algo.addItem(what)
        self.algo.setToolTip(what)
        for w in (self.algo, self.size_combo, self.link):
            w.setEnabled(False)
        self.hint.setText(self.tr("An opened run ({name}): {what}. Open a file or choose a scenario above to "
                                  "leave it.").format(name=run.opened.name or self.tr("from your code"), what=what))
        if run.opened.note:
            from .views.text.generic_text import note_text

            self.hint.setText(self.hint.text() + "\n" + note_text(run))

    def _hint(self, sc) -> str:
        if sc.kind == "mesh":
            return self.tr("Named mesh axes: every collective runs over one axis, in all its groups at once. "
                           "The program's arrays are real; its collectives are timed as the real model's bytes.")
        if sc.kind == "tp-forward":
            return self.tr("TP needs n to divide the heads: 1, 2, 4 or 8. Each collective carries the model's "
                           "real bytes; the GPUs compute between them.")
        if sc.kind == "decode":
            return self.tr("One new token per sequence after {T} cached ones. Each collective carries the model's "
                           "real bytes; the GPUs compute between them.").format(T=scenarios.TP_SEQ)
        if sc.kind.startswith("matmul-"):
            return self.tr("Small matrices with real numbers; the collective is timed as if it moved S bytes.")
        return algo_text(scenarios.algo_op(sc.kind), sc.algo).hint  # ring all-gather's: S must split into n chunks

    def _sync_size_note(self, sc):
        """Under S: the size in use and why, while it is not the size asked for."""
        shapes = sc.kind in ("tp-forward", "decode")
        if shapes or sc.nbytes == self._asked or getattr(self.model.run, "opened", None) is not None:
            self.size_note.setText("")
        else:
            self.size_note.setText(self.tr("S is {S}: the nearest size under {asked} that splits into {n} equal "
                                           "whole-byte chunks.").format(S=f"{int(sc.nbytes):,} B",
                                                                        asked=size_text(self._asked), n=sc.n))
        self.size_note.setVisible(bool(self.size_note.text()))

    def _on_model_changed(self, run):
        sc = self.model.scenario
        if scenarios.fit_bytes(self._asked, sc.n, sc.kind) != sc.nbytes:
            self._asked = float(sc.nbytes)  # a size set elsewhere (a file, the deck, a scene): asked for
        self._mesh_typed = self._params_typed = None
        self.error.clear()
        self._sync()
        self._post_note(run)

    def showEvent(self, e):  # a run opened before the window was made (shard-lab run.json)
        super().showEvent(e)
        self._post_note(self.model.run)

    def _post_note(self, run):
        """A run read partly: the window's status bar says so (and keeps saying it)."""
        if getattr(run, "opened", None) is not None and run.opened.note:
            from .views.text.generic_text import note_text

            bar = getattr(self.window(), "statusBar", None)
            if callable(bar) and self.window() is not self:
                bar().showMessage(note_text(run))

    def _on_model_error(self, msg):
        self._show_error(msg, self._field)
        self._sync()  # the widgets go back to the scenario that is still in place

    def _show_error(self, msg: str, field: str = ""):
        """A refusal in red, in the row under its field ("n", "size"), else under the form; it stays
        until the next good change."""
        w = {"n": self.n, "size": self.size_combo}.get(field)
        self._grid.addWidget(self.error, self._error_rows[w], 0, 1, 2)  # moved there from its last row
        self.error.setText(msg)

    # -- widgets -> model ----------------------------------------------------------------------
    def _apply(self, **changes):
        if not self._syncing and self._follow and "algo" not in changes:  # on a machine: its choice for the new size
            base = self.model.pending or self.model.scenario
            try:
                choice = self.machine_choice(base.with_changes(**changes))
            except ValueError:
                choice = None  # update() says why
            if choice is not None:
                changes["algo"] = choice[0]
        if not self._syncing:
            ok = self.model.update(**changes)
            if ok:
                self.error.clear()  # the value now in place is good: no complaint about an older one
            self.done_editing.emit()
            return ok
        return False

    def _on_group_activated(self, i):
        g = self.group.itemData(i)
        if g == group_of(self.model.scenario.kind):
            return
        kind = {"collective": "all-gather", "matmul": "matmul-2"}.get(g, g)
        changes = {"kind": kind}
        if g in ("tp-forward", "decode") and self.model.scenario.n not in (1, 2, 4, 8):
            changes["n"] = 4  # TP splits the heads: pick a size that divides them
        self._apply(**changes)

    def _on_op_activated(self, i):
        if self.model.scenario.kind == "mesh":
            self._apply(program=self.op.itemData(i))
            return
        self._apply(kind=self.op.itemData(i))

    def _sync_params(self, sc):
        """The program's parameters: the scenario's (or the refused text, kept), its defaults as a hint."""
        from simcore.mesh.programs import PROGRAMS

        prog = PROGRAMS.get(sc.program)
        if self._params_typed is None:
            self.params_edit.setText(sc.params)
        if prog is None:
            return
        shown = [p for p in prog.params if p.default is not None or p.choices][:3]
        self.params_edit.setPlaceholderText(self.tr("its defaults, e.g. {example}").format(
            example=prog.example or " ".join(f"{p.name}={p.default}" for p in shown)))
        self.params_edit.setToolTip(self.tr("NAME=VALUE pairs apart by spaces; this program's parameters: "
                                            "{params}").format(params=", ".join(
                                                f"{p.name} ({'|'.join(map(str, p.choices))})" if p.choices
                                                else f"{p.name}={p.default}" for p in prog.params)))

    def _on_params_edited(self):
        """Parameters typed: a refusal keeps them in the field beside the reason, as a refused mesh does."""
        if self._syncing:
            return
        text = self.params_edit.text().strip()
        if text == self.model.scenario.params:
            self._params_typed = None
            return
        self._params_typed = text
        self._apply(params=text)
        if self.model.scenario.params == text:
            self._params_typed = None
        self.params_edit.setText(text)

    def _on_mesh_edited(self):
        """A mesh typed: n follows it; a mesh the model refuses stays in the field beside the reason."""
        if self._syncing:
            return
        text = self.mesh_edit.text().strip()
        sc = self.model.scenario
        if text == sc.mesh:
            self._mesh_typed = None
            return
        n = scenarios.mesh_n(text)
        self._mesh_typed = text
        self._apply(mesh=text, **({"n": n} if n is not None else {}))
        if self.model.scenario.mesh == text:  # in place (a build on the worker clears it when it arrives:
            self._mesh_typed = None          # a refusal from there keeps the typed mesh beside its reason)
        self.mesh_edit.setText(text)

    def _on_algo_activated(self, i):
        algo = self.algo.itemData(i)
        self._follow = algo == MACHINE_CHOICE
        if self._follow:
            choice = self.machine_choice(self.model.pending or self.model.scenario)
            if choice is None:
                return
            algo = choice[0]
        self._apply(algo=algo)
        self._sync()  # the entry shown follows the choice even when the algorithm in place did not change

    def _apply_field(self, field: str, **changes):
        """_apply for a change of one field: a refusal is said under that field."""
        self._field = field
        try:
            self._apply(**changes)
        finally:
            self._field = ""

    def _on_n_value_changed(self, v):
        if self._syncing:
            return
        if not 1 <= v <= scenarios.MAX_N:  # say so, and leave what was typed in the field
            self._show_error(self.tr("n must be a whole number from 1 to {max}; {v} is outside that range.")
                             .format(max=scenarios.MAX_N, v=v), "n")
            return
        sc = self.model.scenario
        # from the size asked for, not the one in use: n = 72 then 256 then 8 gives 1 MiB back
        S = scenarios.fit_bytes(self._asked, int(v), sc.kind)
        self._apply_field("n", **({"n": int(v), "nbytes": S} if S != sc.nbytes else {"n": int(v)}))

    def _on_n_refused(self, text):
        what = (self.tr("n must be a whole number from 1 to {max}; {v} is outside that range.")
                if re.fullmatch(r"-[0-9]+", text) else
                self.tr("n must be a whole number from 1 to {max}; {v} is not a whole number."))
        self._show_error(what.format(max=scenarios.MAX_N, v=text), "n")

    def _take_size(self, value: float) -> bool:
        """S as asked for: taken whole (and remembered as the size asked for) or refused under the field."""
        self._apply_field("size", nbytes=value)
        now = self.model.pending or self.model.scenario
        if now.nbytes != value:
            return False
        self._asked = float(value)
        self._sync_size_note(now)
        return True

    def _on_size_activated(self, i):
        data = self.size_combo.itemData(i)
        if data is not None:
            self._take_size(float(data))

    def _on_size_editing_finished(self):
        if self._syncing or self._field:  # the field loses focus while its own change is applied
            return
        text = self.size_combo.currentText().strip()
        i = self.size_combo.findText(text)
        try:
            value = float(self.size_combo.itemData(i)) if i >= 0 else parse_bytes(text)
        except ValueError as e:  # the command line's own sentence (simcore.scenarios.parse_bytes)
            self._show_error(str(e), "size")
            self.size_combo.setEditText(text)  # kept beside the reason, to be corrected
            return
        if value != self.model.scenario.nbytes:
            if not self._take_size(value):  # refused (the engine said why): keep what was typed
                self.size_combo.setEditText(text)
        else:  # what is in place: nothing is wrong; typed in other words ("1048575"), it is asked for now
            if text != self._size_shown:
                self._asked = float(value)
                self._sync_size_note(self.model.scenario)
            self.error.clear()

    def clear_error(self):
        """Forget the last complaint (its cause was shown elsewhere, e.g. a refused file's dialog)."""
        self.error.clear()

    def add_link(self, key: str, spec):
        """Offer one more link (a measured one) in the link menu."""
        i = self.link.findData(key)
        if i < 0:
            self.link.addItem(spec.name, key)
        else:
            self.link.setItemText(i, spec.name)

    def _on_link_activated(self, i):
        self._apply(link=self.link.itemData(i))

    def _on_machine_activated(self, i):
        key = self.machine.itemData(i)
        sc = self.model.scenario
        if key == sc.topology:
            return
        if sc.kind == "mesh":  # the mesh stays; the model says when it does not fit the machine
            self._apply(topology=key)
            return
        changes = {"topology": key}
        if key:
            preset = PRESETS[key]
            # the group that shows the machine (two DGX nodes, a torus slice); n can change after
            changes["n"] = MACHINE_N.get(key) or preset.valid_degrees(scenarios.MAX_N)[-1]
            if sc.kind not in scenarios.MACHINE_KINDS:  # the collectives the app draws on a machine
                changes["kind"] = "all-reduce"
            n = changes.get("n", sc.n)
            changes["nbytes"] = scenarios.fit_bytes(self._asked, n, changes.get("kind", sc.kind))
        self._apply(**changes)
