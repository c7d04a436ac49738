"""
The mesh in the app: the Mesh scenario, the model read from a program's records, the one generic
Mesh view (cells by mesh coordinate, the axis's groups outlined, the notation changing as a
collective runs, pixels of each device's block), the command line and bad input in one sentence.
"""

import numpy as np
import pytest
from PySide6.QtGui import QColor

from app.core import mesh_model as mm
from app.core.scenarios import Scenario, build_run
from simcore.mesh.scenario import run_mesh


def _mesh_run(mesh="X=2,Y=4", program="redistribute", machine=""):
    return build_run(Scenario().with_changes(kind="mesh", mesh=mesh, program=program, topology=machine))


# -- the model, from the records --------------------------------------------------------------
def test_notation_parses_back_into_the_layout():
    lay = mm.parse_notation("Out[B, D_XY]{U_Z}", ("X", "Y", "Z"))
    assert lay == mm.Lay("Out", ("B", "D"), ((), ("X", "Y")), ("Z",))
    assert lay.text == "Out[B, D_XY]{U_Z}"
    assert mm.parse_notation("A[I_{dp,tp}, J]", ("dp", "tp")).dims == (("dp", "tp"), ())
    with pytest.raises(ValueError):
        mm.parse_notation("A[I_Q, J]", ("X", "Y"))


def test_a_redistribute_run_reads_its_all_gather_over_Y_from_the_records():
    run = _mesh_run()
    info = run.mesh
    assert run.scenario.n == 8 and info.shape == (2, 4)
    (e,) = info.events
    assert (e.op, e.axis, e.tensor, e.before, e.after) == ("all-gather", ("Y",), "A", "A[I_X, J_Y]", "A[I_X, J]")
    # the groups of Y: the rows of the mesh, as positions
    assert e.groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert e.time == pytest.approx(run.trace.collectives[e.coll].t_end - run.trace.collectives[e.coll].t_start)
    tr = info.track("A")
    assert tr.at(info.events, 0.0)[0] == "A[I_X, J_Y]"
    assert tr.at(info.events, e.t_end)[0] == "A[I_X, J]"
    # a device's block by its coordinates: (1, 2) holds rows 1/2.., columns 2/4..3/4, then the whole row
    before = mm.parse_notation(e.before, info.axis_names)
    assert info.block(before, 6) == ((0.5, 1.0), (0.5, 0.75))
    assert info.block(mm.parse_notation(e.after, info.axis_names), 6) == ((0.5, 1.0), (0.0, 1.0))
    # half-way, each device has its own piece and the ones the trace says have landed
    got, total, have = info.arrivals(0, e.t_end)
    assert (got == total).all() and have.all() and (total == 3).all()


def test_every_registered_program_is_drawn_from_its_records_with_notation():
    for program, mesh, machine in (("2d-ws-ffn", "X=4,Y=4", ""), ("fsdp-tp-layer", "X=2,Y=4", ""),
                                   ("matmul", "X=2,Y=4", ""), ("dp-tp-forward", "X=2,Y=8", "dgx-h100")):
        info = _mesh_run(mesh, program, machine).mesh
        assert info.events, program
        for e in info.events:  # every collective names the tensor it changes, before and after
            assert e.tensor and e.before and e.after, (program, e)
    info = _mesh_run("X=4,Y=4", "2d-ws-ffn").mesh
    assert [e.short for e in info.events] == ["AG_Y", "AR_X", "RS_Y"]
    assert [(e.before, e.after) for e in info.events][1] == ("Tmp[B, F_Y]{U_X}", "Tmp[B, F_Y]")
    # DGX nodes frame the mesh: each Y row is one node
    assert _mesh_run("X=2,Y=8", "dp-tp-forward", "dgx-h100").mesh.frames == (tuple(range(8)), tuple(range(8, 16)))


def test_grid_rects_put_each_position_at_its_coordinates():
    r = mm.grid_rects((2, 4), 0, 0, 800, 400)
    x, y = r[:, 0], r[:, 1]
    for p in range(8):
        i, j = divmod(p, 4)
        assert x[p] == pytest.approx(x[j]) and y[p] == pytest.approx(y[4 * i])
    assert (np.diff(x[:4]) > 0).all() and y[4] > y[0]
    # cells never overlap and stay in the area
    assert (x + r[:, 2] <= 800 + 1e-9).all() and (y + r[:, 3] <= 400 + 1e-9).all()
    outs = mm.outline_rects(r, ((0, 1, 2, 3), (4, 5, 6, 7)), 3)
    assert len(outs) == 2  # a row each: one outline a group
    outs = mm.outline_rects(r, ((0, 4), (1, 5), (2, 6), (3, 7)), 3)
    assert len(outs) == 4


# -- the view -----------------------------------------------------------------------------------
@pytest.fixture
def mesh_view(qtbot):
    from app.state import Playback, ScenarioModel
    from app.views.mesh.mesh_view import MeshView

    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh="X=2,Y=4", program="redistribute"), sync=True)
    pb = Playback(model)
    view = MeshView(model, pb)
    qtbot.addWidget(view)
    view.resize(1000, 620)
    view.show()
    qtbot.waitExposed(view)
    return view, model, pb


def test_view_cells_follow_the_mesh_coordinates_and_outline_the_axis_groups(mesh_view):
    view, model, pb = mesh_view
    lay = view.layout()
    cells = lay.cells
    assert cells.shape == (8, 4)
    for p in range(8):
        i, j = divmod(p, 4)
        assert cells[p, 0] == pytest.approx(cells[j, 0]) and cells[p, 1] == pytest.approx(cells[4 * i, 1])
    # the all-gather over Y: one outline around each row of the grid
    (outs,) = lay.outlines
    assert [gi for gi, _ in outs] == [0, 1]
    for gi, (x, y, w, h) in outs:
        row = cells[4 * gi: 4 * gi + 4]
        assert x <= row[:, 0].min() and x + w >= (row[:, 0] + row[:, 2]).max()
        assert y <= row[:, 1].min() and y + h >= (row[:, 1] + row[:, 3]).max()
        assert h < 2 * cells[0, 3]  # one row, not the grid


def test_view_notation_changes_after_the_collective(mesh_view):
    view, model, pb = mesh_view
    e = model.run.mesh.events[0]
    pb.seek(0.0)
    assert view.notation_texts() == [("A[I_X, J_Y]", False)]
    pb.seek((e.t_start + e.t_end) / 2)
    assert view.notation_texts() == [("A[I_X, J_Y] → A[I_X, J]", True)]
    pb.seek(e.t_end)
    assert view.notation_texts() == [("A[I_X, J]", False)]


def _pixel(img, x, y):
    return QColor(img.pixel(int(x), int(y)))


def test_view_pixels_show_each_device_block_growing_by_the_all_gather(mesh_view):
    from app import theme

    view, model, pb = mesh_view
    e = model.run.mesh.events[0]
    colours = theme.device_colors(8)  # A's fine blocks: 2 × 4, block (i, j) coloured i·4 + j

    def block_colour(img, p, i, j):
        """The colour at the centre of fine block (i, j) of A inside position p's cell."""
        tr = model.run.mesh.track("A")
        x, y, w, h = view.layout().cells[p]
        lab = view._cell_label_h(h, w)
        box = view._fit_box(view._slot_box(x, y, w, h, lab, 0, 1), tr)
        return _pixel(img, box.x() + (j + 0.5) * box.width() / 4, box.y() + (i + 0.5) * box.height() / 2)

    pb.seek(0.0)
    img = view.grab().toImage()
    # device (1, 2) = position 6 holds only block (1, 2), in that block's colour; (1, 0) is empty
    assert block_colour(img, 6, 1, 2) == colours[6]
    assert block_colour(img, 6, 1, 0) != colours[4]
    pb.seek(e.t_end)
    img = view.grab().toImage()
    for j in range(4):  # after the all-gather over Y it holds its whole row, each block in its owner's colour
        assert block_colour(img, 6, 1, j) == colours[4 + j]
    assert block_colour(img, 6, 0, 0) != colours[0]  # never row 0: X still shards I


def test_view_draws_256_devices(qtbot):
    from app.state import Playback, ScenarioModel
    from app.views.mesh.mesh_view import MeshView

    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh="X=16,Y=16", program="redistribute"), sync=True)
    pb = Playback(model)
    view = MeshView(model, pb)
    qtbot.addWidget(view)
    view.resize(1280, 720)
    e = model.run.mesh.events[0]
    pb.seek((e.t_start + e.t_end) / 2)
    assert len(view.moving) > 0  # blocks in flight in every group at once
    img = view.grab().toImage()
    assert not img.isNull()
    cells = view.layout().cells
    assert cells.shape == (256, 4) and len(view.layout().outlines[0]) == 16


# -- bad input: one sentence, nothing lost ---------------------------------------------------------
@pytest.mark.parametrize("changes, words", [
    ({"mesh": "X=2,Q"}, "“Q” is not a name and a size"),
    ({"mesh": "X=2,Y=5", "n": 10}, "does not split over Y = 5: choose Y from 1, 2, 4, 8"),
    ({"mesh": "X=4,Y=4", "n": 16, "topology": "tpu-v4-4x4x4"}, "TPU v4 4x4x4 with 16 chips is a 2 × 2 × 4 torus"),
    ({"program": "nope"}, "There is no mesh program “nope”"),
    ({"n": 9}, "has 8 devices"),
])
def test_bad_mesh_input_keeps_the_scenario_and_says_why(qtbot, changes, words):
    from app.state import ScenarioModel

    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh="X=2,Y=4", program="redistribute"), sync=True)
    said = []
    model.error.connect(said.append)
    before = model.scenario
    assert not model.update(**changes)
    assert model.scenario == before and model.run.mesh is not None
    assert len(said) == 1 and words in said[0] and "\n" not in said[0]


def test_the_control_panel_shows_the_sentence_and_keeps_the_typed_mesh(qtbot):
    from app.controls import ControlPanel
    from app.state import ScenarioModel

    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh="X=2,Y=4", program="redistribute"), sync=True)
    panel = ControlPanel(model)
    qtbot.addWidget(panel)
    panel.show()
    assert panel.mesh_edit.isVisible() and panel.mesh_edit.text() == "X=2,Y=4"
    assert not panel.n.isEnabled()
    panel.mesh_edit.setText("X=2,Y=5")
    panel.mesh_edit.editingFinished.emit()
    assert "does not split over Y = 5" in panel.error.text()
    assert panel.mesh_edit.text() == "X=2,Y=5"  # what was typed stays beside the reason
    assert model.scenario.mesh == "X=2,Y=4"
    panel.mesh_edit.setText("X=4,Y=2")
    panel.mesh_edit.editingFinished.emit()
    assert model.scenario.mesh == "X=4,Y=2" and model.scenario.n == 8 and panel.error.text() == ""


def test_a_mesh_refused_by_the_worker_build_stays_typed_beside_its_reason(qtbot):
    """In the app the run is built on the worker: X=3,Y=5 passes the scenario's checks and is refused
    by the build ("does not split") after update() returned. The field kept reverting to X=2,Y=4 while
    the sentence spoke of X=3: what was typed must stay beside the reason until it changes."""
    from app.main_window import MainWindow
    from app.state import ScenarioModel

    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh="X=2,Y=4", program="redistribute"),
                          sync=False)  # as in the app: builds run on a worker thread
    w = MainWindow(model)
    qtbot.addWidget(w)
    w.show()
    panel = w.controls
    qtbot.waitUntil(lambda: not model.busy, timeout=60000)
    panel.mesh_edit.setText("X=3,Y=5")
    panel.mesh_edit.editingFinished.emit()
    qtbot.waitUntil(lambda: "does not split over" in panel.error.text(), timeout=60000)
    qtbot.waitUntil(lambda: not model.busy, timeout=60000)
    assert panel.mesh_edit.text() == "X=3,Y=5" and model.scenario.mesh == "X=2,Y=4"
    panel.mesh_edit.setText("X=4,Y=2")
    panel.mesh_edit.editingFinished.emit()
    qtbot.waitUntil(lambda: model.scenario.mesh == "X=4,Y=2" and not model.busy, timeout=60000)
    assert panel.mesh_edit.text() == "X=4,Y=2" and panel.error.text() == ""


# -- the command line ---------------------------------------------------------------------------------
def test_cli_opens_a_mesh_program_and_writes_a_screenshot(qapp, tmp_path):
    from PySide6.QtGui import QImage

    from app.__main__ import main

    path = tmp_path / "mesh.png"
    assert main(["--scenario", "mesh", "--mesh", "X=2,Y=4", "--program", "redistribute", "--size", "1280x720",
                 "--screenshot", str(path)]) == 0
    img = QImage(str(path))
    assert img.width() == 1280 and img.height() == 720


def test_cli_bad_mesh_is_one_line(qapp, capsys):
    from app.__main__ import main

    assert main(["--scenario", "mesh", "--mesh", "X=2,Y=5", "--program", "redistribute",
                 "--screenshot", "unused.png"]) == 2
    err = capsys.readouterr().err.strip()
    assert "does not split" in err and "\n" not in err


def test_the_app_programs_equal_numpy():
    res = run_mesh("X=2,Y=4", "redistribute")
    assert res.max_err == 0.0
    for case in (1, 2, 3, 4):
        assert run_mesh("X=2,Y=4", "matmul", case=case).max_err < 1e-12


# -- the explanation and the formula panel read the AxisCollective's words ---------------------------
def test_explanation_and_formula_say_the_axis_collective(qtbot):
    from app.state import Playback, ScenarioModel
    from app.views.text.explain import ExplainPanel
    from app.views.text.formula_panel import FormulaPanel
    from app.words import fmt_time

    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh="X=4,Y=4", program="2d-ws-ffn"), sync=True)
    pb = Playback(model)
    explain = ExplainPanel(model, pb)
    formula = FormulaPanel()
    formula.bind(model, pb)
    qtbot.addWidget(explain)
    qtbot.addWidget(formula)
    ar = model.run.mesh.events[1]
    pb.seek((ar.t_start + ar.t_end) / 2)
    text = explain.body.toPlainText() if hasattr(explain.body, "toPlainText") else explain.body.text()
    assert "all-reduce over X" in text and "4 groups of 4" in text
    assert "Tmp[B, F_Y]{U_X} → Tmp[B, F_Y]" in text
    from app.words import mesh_why  # the plan's reason worded from its kind (test_mesh_why_words)

    assert mesh_why(ar) in text and "the lecture's ring over each group" in text
    html = formula._label.toPlainText() if hasattr(formula._label, "toPlainText") else formula._label.text()
    assert "AR_X" in html and ar.form_text in html and fmt_time(ar.form) in html and fmt_time(ar.time) in html
    assert "4BF/(YZ·W·M_X)" in html  # the program's published form for this row


def test_the_ring_tab_names_a_mesh_run_as_the_mesh(qtbot):
    from app.views.ring.ring_texts import scenario_title

    run = _mesh_run("X=4,Y=4", "2d-ws-ffn")
    title = scenario_title(run.scenario, run)
    assert title.startswith("Mesh X=4 × Y=4: 2d-ws-ffn") and "decode" not in title


def test_the_ring_tab_draws_a_mesh_run_on_a_gpu_machine(qtbot):
    """A mesh on DGX H100 opened the main window with a ValueError: the ring view asked the machine
    to plan "ring over Y" (the mesh axis's collective) again. It reads the mesh plan's base instead."""
    from app.state import Playback, ScenarioModel
    from app.views.ring.ring_texts import timed_base
    from app.views.ring.ring_view import RingView

    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh="X=2,Y=8", program="dp-tp-forward",
                                                  topology="dgx-h100"))
    view = RingView(model, Playback(model))
    qtbot.addWidget(view)
    run = model.run
    c = run.trace.collectives[0]
    assert c.algo.endswith(" over Y")
    base = sum(t.seconds for t in c.plan.terms if t.name == "base")
    assert base > 0 and timed_base(run, c) == base  # NCCL's base for the node's ring, from the mesh's plan
    assert not view.grab().isNull()
