"""
The mesh's programs and refusals as a user meets them.

- One registry: a program registered here, in the test, is offered and run by the app's Mesh
  scenario and by `python -m simcore mesh` without any other file changing (docs/extending.md).
- Bad input in the user's words and language: every refusal the Mesh scenario's fields can meet is
  worded from the MeshError's kind and facts (app/core/mesh_errors.py), shown translated in the
  dock, in red, beside what was typed (kept in its field).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.core.scenarios import Scenario
from simcore.mesh import MeshError, P, ShardedArray
from simcore.mesh.errors import KINDS
from simcore.mesh.programs import PROGRAMS, Program, Result, _rows_of, memory_per_device, register, unregister


# -- one registry, a program added in one place ------------------------------------------------------
def _toy(mesh, axis=None, rows=64, seed=0):
    """A toy program: rows × 8 sharded over `axis` (default the last), all-gathered; checked against numpy."""
    axis = mesh.axis_names[-1] if axis is None else axis
    a = np.random.default_rng(seed).standard_normal((rows, 8))
    n0 = len(mesh.log)
    A = ShardedArray.from_full(mesh, a, P(axis, None), "T", "RC")
    B = A.redistribute(P(), label="toy")
    res = Result("toy-gather", mesh, _rows_of(mesh.log[n0:], B.steps), float(np.max(np.abs(B.full() - a))),
                 sum(r.form for r in mesh.log[n0:]), "the ring's (g−1)(α + S/(gβ))")
    res.axes = (axis,)
    res.tensors = {"activations": {"T": B}, "weights": {}, "KV cache": {}}
    res.memory = memory_per_device(mesh, res.tensors)
    return res


@pytest.fixture
def toy():
    prog = register(Program("toy-gather",
                            {"en": "toy: all-gather T over one axis", "zh": "玩具：沿一条轴 all-gather T"},
                            {"en": "a program written inside a test", "zh": "测试里写的程序"}, _toy,
                            published="the ring's (g−1)(α + S/(gβ))"))
    yield prog
    unregister("toy-gather")


def test_the_registry_holds_every_program_once_at_import_with_checked_params():
    assert {"redistribute", "matmul", "dp-tp-forward", "fsdp-tp-layer", "2d-ws-ffn", "1d-ws-ffn",
            "torus-all-gather", "shard-map"} <= set(PROGRAMS)
    assert not {"redistribute-rules", "matmul-2d"} & set(PROGRAMS)  # merged: one program per idea
    for p in PROGRAMS.values():
        assert p.title["en"] and p.title["zh"] and p.description["zh"] and p.published
    m = PROGRAMS["matmul"]
    assert m.checked({"case": "2"})["case"] == 2 and m.checked({})["case"] == 3
    with pytest.raises(MeshError) as e:
        m.checked({"case": "7"})
    assert e.value.kind == "bad-parameter" and e.value.facts["expected"] == ("one of", (1, 2, 3, 4, "all"))


def test_the_toy_program_opens_in_the_apps_mesh_scenario_and_its_menu(qtbot, toy):
    from app.controls import ControlPanel
    from app.state import ScenarioModel

    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh="X=2,Y=4", program="toy-gather",
                                                  params="rows=32"), sync=True)
    info = model.run.mesh
    assert info is not None and info.program == "toy-gather"
    assert [e.op for e in info.events] == ["all-gather"] and info.events[0].axis == ("Y",)
    panel = ControlPanel(model)
    qtbot.addWidget(panel)
    panel.show()
    i = panel.op.findData("toy-gather")
    assert i >= 0 and panel.op.itemText(i) == "toy: all-gather T over one axis"
    assert panel.params_edit.text() == "rows=32" and "rows=64" in panel.params_edit.toolTip()


def test_the_toy_program_runs_from_the_command_line(toy, capsys):
    from simcore.__main__ import main

    assert main(["mesh", "--list"]) == 0
    out = capsys.readouterr().out
    assert "toy-gather" in out and "--param axis=None rows=64 seed=0" in out
    assert main(["mesh", "--program", "toy-gather", "--mesh", "X=2,Y=4", "--param", "rows=16", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["program"] == "toy-gather" and d["max_abs_error"] == 0.0 and d["rows"][0]["op"] == "all-gather"
    assert main(["mesh", "--program", "toy-gather", "--param", "rows=0"]) == 2
    assert "rows is a whole number >= 1" in capsys.readouterr().err


def test_the_merged_programs_take_their_parameters_and_equal_numpy():
    from simcore.mesh.scenario import run_mesh

    r = run_mesh("X=2,Y=4", "redistribute", source="A[I, J]{U_Y}", target="A[I_X, J_Y]")
    assert [row.op for row in r.rows] == ["reduce-scatter"] and r.max_err < 1e-12
    r = run_mesh("X=2,Y=4", "redistribute", source="A[I_X, J_Y]", target="A[I_XY, J]")
    assert [row.op for row in r.rows] == ["all-to-all"] and r.max_err == 0.0
    assert run_mesh("X=2,Y=4", "redistribute", rules="1").max_err < 1e-12
    r = run_mesh("X=2,Y=4", "matmul", a="A[I_X, J_Y]", b="B[J_Y, K]")
    assert [row.op for row in r.rows] == ["reduce-scatter"] and r.max_err < 1e-12
    assert len(run_mesh("X=2,Y=4", "matmul", case="all").notes) == 4


# -- bad input in the user's words and language -------------------------------------------------------
# (setup, field, typed, English, Chinese): setup is applied first (a program, a machine)
CASES = {
    "mesh-syntax": ({}, "mesh", "X=2,Q", "“Q” is not a name and a size: type NAME=SIZE pairs",
                    "“Q”不是“名称=大小”"),
    "axis-twice": ({}, "mesh", "X=2,X=4", "Axis X is named twice", "轴 X 写了两次"),
    "unknown-axis": ({}, "params", "source=A[I_Q, J]", "This mesh has no axis Q: its axes are X, Y.",
                     "这个网格没有轴 Q：它的轴是 X、Y。"),
    "axis-used-twice": ({}, "params", "source=A[I_X, J_X]", "Axis X shards two things at once", "轴 X 同时切分了两处"),
    "needs-axes": ({"program": "matmul"}, "mesh", "X=8", "This program needs 2 mesh axes but the mesh has only X",
                   "这个程序需要 2 条网格轴，但网格只有 X"),
    "same-axis": ({"program": "matmul"}, "params", "x_axis=X y_axis=X", "The program's two axes are both X",
                  "程序的两条轴都是 X"),
    "machine-size": ({"topology": "dgx-h100"}, "mesh", "X=2,Y=3",
                     "A mesh of 6 devices does not fit DGX H100: choose axis sizes whose product is one of 1, 2, 4, 8.",
                     "6 个设备的网格放不进 DGX H100：请让各轴大小之积为 1、2、4、8 之一。"),
    "too-many": ({}, "mesh", "X=16,Y=32", "The mesh view draws at most 256 devices and this mesh has 512",
                 "网格视图最多画 256 个设备，这个网格有 512 个"),
    "torus-shape": ({"mesh": "X=2,Y=2,Z=2", "topology": "tpu-v4-4x4x4"}, "mesh", "X=4,Y=4",
                    "TPU v4 4x4x4 with 16 chips is a 2 × 2 × 4 torus", "16 芯片的 TPU v4 4x4x4 是 2 × 2 × 4 的环面"),
    "not-split": ({}, "mesh", "X=2,Y=3",
                  "Dimension J has length 128, which does not split over Y = 3: choose Y from 1, 2, 4, 8, 16, 32, "
                  "64, 128.", "维度 J 长 128，无法均分到 Y = 3 上：Y 请从 1、2、4、8、16、32、64、128 中选。"),
    "shard-to-partial": ({}, "params", "source=A[I_X, J_Y] target=A[I, J]{U_Y}",
                         "A shard cannot become a pending sum over Y", "分片不能变成沿 Y 的待定求和"),
    "spec-too-long": ({}, "params", "source=A[I_X, J_Y, K]",
                      "The layout A[I_X, J_Y, K] has 3 entries but the array has 2 dimensions: give at most 2.",
                      "布局 A[I_X, J_Y, K] 有 3 项，但数组只有 2 维：最多写 2 项。"),
    "unknown-parameter": ({}, "params", "nope=1", "redistribute has no parameter “nope”: its parameters are source,",
                          "redistribute 没有参数“nope”：它的参数是 source、"),
    "bad-parameter": ({"program": "matmul"}, "params", "case=7", "case cannot be 7: choose one of 1, 2, 3, 4, all.",
                      "case 不能是 7：请从 1、2、3、4、all 中选。"),
    "mesh-n": ({}, "n", 9, "The mesh X=2,Y=4 has 8 devices, not n = 9: n follows the mesh",
               "网格 X=2,Y=4 有 8 个设备，不是 n = 9"),
    "unknown-program": ({}, "program", "nope", "There is no mesh program “nope”: choose one of",
                        "没有名为“nope”的网格程序：请从"),
}


def _red_pixels(panel) -> int:
    """Pixels of the error colour inside the error label, in a grab of the panel."""
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QColor

    from app import theme

    img = panel.grab().toImage()
    r = QRect(panel.error.mapTo(panel, panel.error.rect().topLeft()), panel.error.size())
    want = QColor(theme.palette().error)
    dpr = img.devicePixelRatio()
    count = 0
    for y in range(int(r.top() * dpr), int(r.bottom() * dpr), 2):
        for x in range(int(r.left() * dpr), int(r.right() * dpr), 2):
            c = img.pixelColor(x, y)
            count += abs(c.red() - want.red()) + abs(c.green() - want.green()) + abs(c.blue() - want.blue()) < 60
    return count


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", list(CASES))
def test_each_refusal_is_shown_in_the_users_words_and_language(qtbot, qapp, kind, lang):
    from app import i18n
    from app.controls import ControlPanel
    from app.state import ScenarioModel

    setup, field, typed, en, zh = CASES[kind]
    i18n.set_language(qapp, lang)
    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh="X=2,Y=4", program="redistribute"), sync=True)
    if setup:
        assert model.update(**setup)
    panel = ControlPanel(model)
    qtbot.addWidget(panel)
    panel.resize(320, 700)
    panel.show()
    before = model.scenario
    if field in ("program", "n"):  # the menu offers registered programs only, n is greyed (it follows the mesh):
        assert not model.update(**{field: typed})  # a saved scenario, a deck or a script can name another
    else:
        edit = panel.mesh_edit if field == "mesh" else panel.params_edit
        edit.setText(typed)
        edit.editingFinished.emit()
        assert edit.text() == typed  # what was typed stays beside the reason
    shown = panel.error.text()
    assert (en if lang == "en" else zh) in shown and "\n" not in shown
    assert model.scenario == before and model.run.mesh is not None
    if lang == "zh":
        assert en[:20] not in shown  # the translated sentence, not the English one
    assert panel.error.isVisible() and panel.error.width() > 100
    assert _red_pixels(panel) > 40  # drawn, in the error colour, in the dock


def test_every_kind_the_engine_raises_has_a_sentence_and_mixed_partial_is_worded_too(qapp):
    from app import i18n
    from app.core.mesh_errors import SENTENCES, mesh_error_text
    from simcore.mesh import Mesh, Partial
    from simcore.mesh.placement import layout_from_placements

    assert set(SENTENCES) == set(KINDS)
    mesh = Mesh((2, 4), ("X", "Y"))
    with pytest.raises(MeshError) as e:  # the notation has sums only: DTensor placements can mix ops
        layout_from_placements(mesh, (Partial("sum"), Partial("max")), 2)
    assert e.value.kind == "mixed-partial" and "mixed Partial ops" in str(e.value)  # the engine's English stays
    assert mesh_error_text(e.value) == ("A pending max cannot become a pending sum: reduce it first (to Replicate "
                                        "or Shard), then start the other.")
    i18n.set_language(qapp, "zh")
    assert mesh_error_text(e.value) == ("待定的 max 不能直接变成待定的 sum：请先把它归约（到 Replicate 或 Shard），"
                                        "再开始另一种。")
    assert mesh_error_text(ValueError("plain")) is None  # no kind: its own words


def test_the_app_opens_a_program_with_its_parameters_by_name_and_saves_them(qapp, tmp_path, capsys):
    from PySide6.QtGui import QImage

    from app.__main__ import main
    from app.scenario_io import load_scenario, save_scenario

    path = tmp_path / "matmul.png"
    assert main(["--scenario", "mesh", "--mesh", "X=2,Y=4", "--program", "matmul", "--param", "case=2",
                 "--size", "1280x720", "--screenshot", str(path)]) == 0
    assert QImage(str(path)).width() == 1280
    assert main(["--scenario", "mesh", "--program", "matmul", "--param", "case=9", "--screenshot", "unused.png"]) == 2
    assert "case" in capsys.readouterr().err
    sc = Scenario().with_changes(kind="mesh", mesh="X=2,Y=4", program="matmul", params="case=all").validate()
    save_scenario(str(tmp_path / "s.json"), sc)
    assert load_scenario(str(tmp_path / "s.json")).scenario.params == "case=all"
    assert sc.with_changes(program="redistribute").params == ""  # parameters belong to their program
