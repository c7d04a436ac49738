"""
The Mesh view's layers: the still layer (everything but the messages in flight) is painted once
while nothing it shows changes, again when a message lands or a collective starts or ends, and a
new theme, text size, language or size paints it afresh — each picture equal, pixel for pixel, to
a fresh view's made after the change.
"""

import numpy as np
import pytest
from PySide6.QtGui import QImage

from app import i18n, theme
from app.core.scenarios import Scenario


def pixels(widget) -> np.ndarray:
    img = widget.grab().toImage().convertToFormat(QImage.Format_RGB32)
    w, h = img.width(), img.height()
    return np.frombuffer(img.constBits(), np.uint8).reshape(h, img.bytesPerLine())[:, :w * 4].copy()


def make(qtbot, mesh="X=2,Y=4", program="redistribute", size=(1000, 620)):
    from app.state import Playback, ScenarioModel
    from app.views.mesh.mesh_view import MeshView

    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh=mesh, program=program), sync=True)
    pb = Playback(model)
    view = MeshView(model, pb)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    return model, pb, view


def landing_gap(model):
    """Two times inside the first collective with messages in flight and none landing between them."""
    e = model.run.mesh.events[0]
    cols = model.run.mesh.columns
    sel = cols["coll"] == e.coll
    ends = np.unique(cols["t_end"][sel])
    starts = cols["t_start"][sel]
    a, b = ends[0], ends[1]  # between the first and the second landing
    t0, t1 = a + 0.3 * (b - a), a + 0.6 * (b - a)
    assert ((starts < t0) & (cols["t_end"][sel] > t1)).any()  # something is on its way all along
    return t0, t1


def test_the_still_layer_is_kept_while_only_messages_move(qtbot):
    model, pb, view = make(qtbot, "X=16,Y=16")
    t0, t1 = landing_gap(model)
    pb.seek(t0)
    a = pixels(view)
    still, base = view.still_paints, view.base_paints
    pb.seek(t1)
    b = pixels(view)
    assert view.still_paints == still and view.base_paints == base  # not painted again
    assert not np.array_equal(a, b)  # the messages moved
    # a message landing paints the still layer again, over the same base (same collective, in flight)
    e = model.run.mesh.events[0]
    pb.seek((e.t_start + e.t_end) / 2)
    pixels(view)
    assert view.still_paints == still + 1 and view.base_paints == base


@pytest.mark.parametrize("change", ["theme", "text size", "language", "size"])
def test_a_change_paints_afresh_as_a_fresh_view_would(qtbot, qapp, change):
    model, pb, view = make(qtbot)
    e = model.run.mesh.events[0]
    t = e.t_start + 0.4 * (e.t_end - e.t_start)
    pb.seek(t)
    before = pixels(view)
    still = view.still_paints
    if change == "theme":
        theme.set_theme("dark")
    elif change == "text size":
        theme.set_scale(1.5)
    elif change == "language":
        i18n.set_language(qapp, "zh")
    else:
        view.resize(1100, 700)
    after = pixels(view)  # grab() paints now
    assert view.still_paints > still and not np.array_equal(before, after)
    _, pb2, fresh = make(qtbot, size=(view.width(), view.height()))
    pb2.seek(t)
    assert np.array_equal(pixels(fresh), after)


def _shown_window(qtbot, tab, mesh="X=2,Y=4", program="redistribute"):
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from app.state import ScenarioModel

    n = 16 if mesh == "X=4,Y=4" else 8
    w = MainWindow(ScenarioModel(Scenario().with_changes(kind="mesh", mesh=mesh, program=program, n=n)))
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    w.select_tab(tab)
    e = w.model.run.mesh.events[0]
    w.playback.seek(e.t_start + 0.4 * (e.t_end - e.t_start))
    QApplication.processEvents()
    return w


@pytest.mark.usefixtures("app_env")
@pytest.mark.parametrize("tab, name, mesh, program", [("mesh", "MeshView", "X=2,Y=4", "redistribute"),
                                                     ("buffers", "BufferView", "X=2,Y=4", "redistribute"),
                                                     ("mesh", "MeshView", "X=4,Y=4", "2d-ws-ffn"),
                                                     ("buffers", "BufferView", "X=4,Y=4", "2d-ws-ffn")])
def test_a_shown_window_driven_through_the_menus_looks_like_a_fresh_one(qtbot, tab, name, mesh, program):
    """F11 on and off, Ctrl+=, the language and the theme, on a mesh run: the tab then equals a fresh
    window's in the same state. (The Buffers tab kept the axes' room of F11's larger text: pyqtgraph
    shrinks an axis only when its text shrinks by more than 10 px; and a new language showed the
    axis a compact plot (16 rows at this size) hides: pyqtgraph's setLabel shows it again.)"""
    from PySide6.QtWidgets import QApplication, QWidget

    w = _shown_window(qtbot, tab, mesh, program)
    pres = w.classroom.presentation
    for act in (pres.act_presentation, pres.act_presentation, pres.act_zoom_in, w.classroom.act_toggle_language,
                pres.theme_actions["dark"]):
        act.trigger()
        QApplication.processEvents()
    assert not w.isFullScreen() and theme.scale() > 1.0 and i18n.current_language() == "zh"
    driven = pixels(w.findChild(QWidget, name))
    fresh = _shown_window(qtbot, tab, mesh, program)
    assert np.array_equal(pixels(fresh.findChild(QWidget, name)), driven)


def test_the_notation_strip_shows_every_tensor_at_every_step_at_the_tabs_presentation_size(qtbot):
    """676 × 422 is the Mesh tab in a 1280 × 720 window. The strip is as tall as its longest state
    needs with each tensor's key before its text (it used to count the texts alone, so the matmul's
    third tensor fell off the strip while the reduce-scatter ran), and no taller."""
    for program in ("matmul", "fsdp-tp-layer", "2d-ws-ffn"):
        model, pb, view = make(qtbot, "X=4,Y=4" if program == "2d-ws-ffn" else "X=2,Y=4", program, (676, 422))
        info = model.run.mesh
        lay = view.layout()
        bottoms = set()
        for e in info.events:
            for f in (0.1, 0.5, 1.0):
                pb.seek(e.t_start + f * (e.t_end - e.t_start))
                pixels(view)
                assert [t for t, _ in view._strip_rects] == [t for t, _ in view.notation_texts()], (program, f)
                assert len(view._strip_rects) == len(info.tensors)
                for _, r in view._strip_rects:
                    assert lay.panel.contains(r)
                bottoms.add(round(max(r.bottom() for _, r in view._strip_rects)))
        line = (lay.panel.height() - 8) / view._strip_lines(lay.panel.width())  # one line's height
        assert max(bottoms) > lay.panel.bottom() - 1.5 * line, program  # its last line is used


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_wide_view_with_large_text_puts_the_notation_beside_the_grid(qtbot, qapp, lang):
    """F11 at a large text size: stacked above the grid, the strip's lines left 4 × 4 cells 70 px tall
    (a sliver under 2-D weight-stationary's five tensors). Where it gives the cells clearly more room, the
    strip stands as a column right of the grid, a tensor a line, every text inside it and clear of the cells."""
    from app.views.mesh.mesh_view import _usable

    old = theme.scale()
    try:
        theme.set_scale(1.44)
        i18n.set_language(qapp, lang)
        model, pb, view = make(qtbot, "X=4,Y=4", "2d-ws-ffn", size=(1280, 560))
        e = model.run.mesh.events[1]
        pb.seek((e.t_start + e.t_end) / 2)
        pixels(view)  # paints the strip (its texts' rectangles)
        lay = view.layout()
        assert lay.panel.left() >= lay.grid.right() and lay.panel.top() == lay.grid.top()  # beside, not above
        cells = lay.cells
        assert cells[:, 0].min() >= lay.grid.left() and (cells[:, 0] + cells[:, 2]).max() <= lay.panel.left()
        texts = view.notation_texts()
        assert len(view._strip_rects) == len(texts) == 5  # every tensor shown, one a line
        assert len({round(r.top()) for _t, r in view._strip_rects}) == 5
        for _t, r in view._strip_rects:
            assert lay.panel.contains(r)
        assert _usable(cells) >= 130  # the cells are a picture again (stacked: 225 × 70)
        # at the tab's usual size and text it stays stacked above the grid
        theme.set_scale(1.0)
        view.resize(676, 422)
        lay = view.layout()
        assert lay.panel.bottom() <= lay.grid.top()
    finally:
        theme.set_scale(old)
        i18n.set_language(qapp, "en")
