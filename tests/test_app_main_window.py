"""The main window as a lecturer drives it: keys, controls, panels, screenshots."""

import sys

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor

from app.core.frame import frame_at
from app.main_window import MainWindow
from app.state import Playback, Scenario, ScenarioModel
from app.tab_list import TABS
from ring_pixels import block_centre, painted_as
from timeline_reading import assert_bars_are_the_messages, bars_off_screen, plot_texts
from panel_text import shown_text

S = 960 * 1024.0


pytestmark = pytest.mark.usefixtures("english")  # conftest's


def make_window(qtbot, size=(1600, 900), **scenario):
    scenario.setdefault("nbytes", S)
    model = ScenarioModel(Scenario(**scenario))
    pb = Playback(model)
    win = MainWindow(model, pb)
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)  # shortcuts only reach the active window
    win.ring_view.setFocus()
    return model, pb, win


def test_keyboard_drives_the_clock(qtbot):
    model, pb, win = make_window(qtbot, kind="all-reduce", n=8)
    view = win.ring_view
    qtbot.keyClick(view, Qt.Key_Right)
    assert pb.t == pb.stops[1]
    qtbot.keyClick(view, Qt.Key_Right)
    qtbot.keyClick(view, Qt.Key_Left)
    assert pb.t == pb.stops[1]
    qtbot.keyClick(view, Qt.Key_End)
    assert pb.at_end
    qtbot.keyClick(view, Qt.Key_Home)
    assert pb.t == 0
    with qtbot.waitSignal(pb.playing_changed):
        qtbot.keyClick(view, Qt.Key_Space)
    assert pb.playing
    with qtbot.waitSignal(pb.playing_changed):
        qtbot.keyClick(view, Qt.Key_Space)
    assert not pb.playing
    qtbot.keyClick(view, Qt.Key_BracketRight)
    assert pb.speed == 2.0


def test_ring_all_reduce_plays_to_the_end_with_the_keyboard_alone(qtbot):
    model, pb, win = make_window(qtbot, kind="all-reduce", n=8)
    pb.sim_per_wall *= 20  # the real timer drives it; 20× faster pace keeps the test short
    for _ in range(2):
        qtbot.keyClick(win.ring_view, Qt.Key_BracketRight)  # 4×
    qtbot.keyClick(win.ring_view, Qt.Key_Space)
    qtbot.waitUntil(lambda: pb.at_end and not pb.playing, timeout=10000)
    assert win.step_label.text() == "done: 14 steps"
    everyone = frozenset(range(8))
    f = frame_at(model.run, pb.t)
    assert all(f.held.who(d, ch) == everyone for d in range(8) for ch in range(8))
    assert painted_as(win.ring_view, f) == {}  # and every slot on screen shows all eight bands


def test_status_bar_says_time_step_and_bytes(qtbot):
    model, pb, win = make_window(qtbot, kind="all-gather", n=8)
    assert win.step_label.text() == "start (7 steps)"
    pb.step_forward()
    assert win.step_label.text() == "after step 1 of 7"
    pb.seek((pb.stops[1] + pb.stops[2]) / 2)
    assert win.step_label.text() == "step 2 of 7 in flight"
    assert win.bytes_label.text() == "moved 960 KiB"  # 8 chunks of S/8 delivered in step 1
    assert win.time_label.text().startswith("t = ")


def test_controls_change_the_scenario_and_every_view_follows(qtbot):
    model, pb, win = make_window(qtbot, kind="all-gather", n=8)
    win.controls.n.setValue(5)
    assert model.scenario.n == 5
    assert len(win.ring_view.devices) == 5
    assert_bars_are_the_messages(win.timeline, model.run.trace, 5)
    i = win.controls.op.findData("all-reduce")
    win.controls.op.activated.emit(i)
    win.controls.algo.activated.emit(win.controls.algo.findData("innet"))
    assert (model.scenario.kind, model.scenario.algo) == ("all-reduce", "innet")
    assert win.controls.algo.isEnabled()
    assert "Phase 1 of 2: up" in shown_text(win.explain)  # in-network is stepped by phase


def test_n_change_keeps_the_size_splittable(qtbot):
    model, pb, win = make_window(qtbot, kind="all-gather", n=8, nbytes=2.0**20)
    win.controls.n.setValue(3)
    assert model.scenario.n == 3
    assert model.scenario.nbytes % 3 == 0 and model.scenario.nbytes <= 2**20
    assert "splits into 3" in win.controls.size_note.text()


def test_a_bad_value_shows_a_clear_message_and_keeps_the_scenario(qtbot):
    model, pb, win = make_window(qtbot, kind="all-gather", n=8)
    before = model.scenario
    model.update(n=0)
    assert "at least 1" in win.controls.error.text()
    assert "at least 1" in win.statusBar().currentMessage()
    assert model.scenario == before and len(win.ring_view.devices) == 8
    # a size typed in that cannot be split over the devices
    win.controls.size_combo.setEditText("1001")
    win.controls.size_combo.lineEdit().editingFinished.emit()
    assert "cannot be split into 8" in win.controls.error.text()
    assert model.scenario == before
    assert win.controls.n.value() == 8
    # the next good change clears the message
    win.controls.n.setValue(4)
    assert win.controls.error.text() == ""


def test_explanation_gives_the_step_in_words_and_numbers(qtbot):
    model, pb, win = make_window(qtbot, kind="all-gather", n=8)
    pb.seek_step(3)
    text = shown_text(win.explain)
    assert "Step 3 of 7 — done" in text
    assert "ring neighbour d + 1" in text
    assert "α + b/β = 1.9 µs + 120 KiB / 450 GB/s" in text
    assert "after 3 of 7 steps" in text
    assert "Closed form" in text and "simulated:" in text and "✓" in text
    model.update(kind="reduce-scatter")
    assert "adds it to its own partial sum" in shown_text(win.explain)


def test_timeline_has_a_bar_per_send_and_receive_and_clicking_seeks(qtbot):
    model, pb, win = make_window(qtbot, kind="all-reduce", n=4)
    tl = win.timeline
    assert len(model.run.trace.messages) == 2 * 4 * 3  # ring all-reduce: 2n(n - 1) messages
    assert_bars_are_the_messages(tl, model.run.trace, 4)
    bad, sampled = bars_off_screen(tl, model.run.trace, 4)  # and their middles on screen in their colours
    assert sampled > 0 and bad == []
    assert plot_texts(tl) == ["all-reduce"]
    vb = tl.plot.getViewBox()
    target = pb.t_end * 0.5
    scene_pt = vb.mapViewToScene(QPointF(target / tl.unit_s, 1.0))
    pos = tl.plot.mapFromScene(scene_pt)
    qtbot.mouseClick(tl.plot.viewport(), Qt.LeftButton, pos=pos)
    assert pb.t == pytest.approx(target, rel=0.02)
    assert tl.playhead.value() == pytest.approx(pb.t / tl.unit_s)


def test_tabs_and_the_matmul_panel(qtbot):
    model, pb, win = make_window(qtbot, kind="matmul-3", n=4)
    assert win.tabs.widget(0) is win.ring_page
    assert win.select_tab("ring") and win.current_tab() == "ring"
    assert not win.select_tab("no-such-view")
    assert win.matmul_view.isVisible()
    assert not win.matmul_view.after_collective()
    pb.to_end()
    assert win.matmul_view.after_collective()
    model.update(kind="all-gather")
    assert not win.matmul_view.isVisible()


def _grab(widget):
    return widget.grab().toImage()


def _distinct_colours(img, step=7):
    return {img.pixel(x, y) for x in range(0, img.width(), step) for y in range(0, img.height(), step)}


def _region_differs(a, b, rect):
    return any(a.pixel(x, y) != b.pixel(x, y) for x in range(rect.left(), rect.right(), 3)
               for y in range(rect.top(), rect.bottom(), 3))


def test_screenshots_are_not_blank_and_differ_where_they_should(qtbot, tmp_path):
    model, pb, win = make_window(qtbot, kind="all-gather", n=8)
    view = win.ring_view
    start = _grab(view)
    assert len(_distinct_colours(start)) > 10  # devices in eight colours, text, lanes
    pb.seek_step(3)
    after3 = _grab(view)
    box = view.mapFromScene(view.devices[5].sceneBoundingRect()).boundingRect()
    assert _region_differs(start, after3, box)  # device 5's buffer filled up
    far = view.mapFromScene(view.legend.sceneBoundingRect()).boundingRect()
    assert not _region_differs(start, after3, far)  # the legend did not change
    model.update(kind="reduce-scatter")
    rs = _grab(view)
    assert _region_differs(after3, rs, box)
    # File ▸ Save screenshot writes the whole window
    path = tmp_path / "w.png"
    assert win.save_screenshot(str(path))
    from PySide6.QtGui import QImage

    img = QImage(str(path))
    assert (img.width(), img.height()) == (win.width(), win.height())
    assert len(_distinct_colours(img, step=11)) > 10


def test_mid_step_blocks_are_painted_in_their_payload_colour(qtbot):
    model, pb, win = make_window(qtbot, kind="all-gather", n=8)
    view = win.ring_view
    pb.seek(pb.stops[0] + 0.3 * (pb.stops[1] - pb.stops[0]))
    img = _grab(view.viewport())
    colors = [c.name() for c in __import__("app.theme", fromlist=["x"]).device_colors(8)]
    tr = model.run.trace
    f = frame_at(model.run, pb.t)
    assert len(f.moving) == 8
    s = view.layout_now.block
    for i, p in zip(f.moving.tolist(), f.progress.tolist()):  # each where the layout's lanes put it
        m = tr.messages[i]
        centre = block_centre(view, m.src, m.dst, p)
        corner = view.mapFromScene(centre + QPointF(s * 0.3, s * 0.3))
        assert QColor(img.pixel(corner)).name() == colors[min(m.contributors)]


def test_usable_at_1280x720(qtbot):
    model, pb, win = make_window(qtbot, size=(1280, 720), kind="all-reduce", n=8)
    view = win.ring_view
    assert view.width() >= 500 and view.height() >= 300
    for item in view.devices:  # the painted boxes, where the scene has them
        assert view.sceneRect().contains(item.sceneBoundingRect())


def test_extra_views_register_as_tabs(qtbot, monkeypatch):
    import types

    from PySide6.QtWidgets import QLabel

    made = []

    def extra_views(model, playback):
        made.append((model, playback))
        return [(key, key.title(), QLabel(key)) for key in TABS[1:]]

    monkeypatch.setitem(sys.modules, "app.tabs", types.SimpleNamespace(extra_views=extra_views))
    model, pb, win = make_window(qtbot, kind="all-gather", n=4)
    assert made == [(model, pb)]
    assert [win.tabs.tabText(i) for i in range(1, win.tabs.count())] == ["Weights", "Buffers", "Latency", "Mesh"]
    assert win.select_tab("latency") and win.current_tab() == "latency"
    assert win.tabs.tabText(1) == "Weights"


def test_a_calibrated_link_becomes_a_preset_and_times_the_scenario(qtbot):
    from simcore import comm_sim
    from simcore.links import LinkSpec

    before = dict(comm_sim.LINKS)
    try:
        model, pb, win = make_window(qtbot, kind="all-reduce", n=4)
        win.act_calibrate.trigger()
        assert win.calibration_dialog.isVisible()
        link = LinkSpec("measured on this machine", alpha=5e-6, bw=2e9)
        win.calibration_dialog.link_ready.emit(link)
        assert model.scenario.link == "measured"
        assert win.controls.link.currentData() == "measured"
        c = model.run.trace.collectives[0]
        want = 2 * 3 * (5e-6 + c.nbytes / (4 * 2e9))  # ring all-reduce, n = 4: 2(n − 1)·(α + S/(nβ))
        assert c.t_end - c.t_start == pytest.approx(want, rel=1e-9)
        # a second, different measurement gets its own key; the first stays selectable
        assert win.add_link_preset(LinkSpec("cluster", alpha=3e-6, bw=20e9)) == "measured-2"
        assert win.controls.link.findData("measured") >= 0
    finally:
        comm_sim.LINKS.clear()
        comm_sim.LINKS.update(before)


def test_the_real_extra_views_are_tabs_built_on_first_show(qtbot):
    from app.views.buffers.buffer_view import BufferView
    from app.views.latency.latency_view import LatencyView
    from app.views.weights.weights_view import WeightsView

    model, pb, win = make_window(qtbot, kind="reduce-scatter", n=4)
    assert win.tabs.count() == len(TABS)
    pages = {k: win.tabs.widget(i) for i, k in enumerate(TABS)}
    assert pages["ring"] is win.ring_page and all(pages[k].key == k for k in TABS[1:])
    assert not any(pages[k].built for k in TABS[1:])  # nothing paid for yet
    assert win.select_tab("buffers")
    assert pages["buffers"].built and isinstance(win.view("buffers"), BufferView)
    assert not pages["latency"].built
    assert isinstance(win.view("latency"), LatencyView) and isinstance(win.view("weights"), WeightsView)
    # the tab titles are the views' own
    for k in TABS[1:]:
        assert win.tabs.tabText(TABS.index(k)) == win.view(k).windowTitle()
    # a TP scenario opens on the weight slices, decode on the latency plot
    assert model.update(kind="tp-forward", n=4)
    assert win.current_tab() == "weights"
    assert model.update(kind="decode")
    assert win.current_tab() == "latency"


def test_weights_and_latency_tabs_get_the_room_and_give_it_back(qtbot):
    model, pb, win = make_window(qtbot, kind="all-gather", n=4)
    docks = (win.controls_dock, win.explain_dock, win.timeline_dock)
    assert all(d.isVisible() for d in docks)
    win.select_tab("latency")
    assert not any(d.isVisible() for d in docks)  # the latency view has its own controls
    win.select_tab("weights")
    assert win.controls_dock.isVisible()  # n still matters for the slices
    assert not win.explain_dock.isVisible() and not win.timeline_dock.isVisible()
    win.select_tab("ring")
    assert all(d.isVisible() for d in docks)
    # a dock the lecturer closed stays closed
    win.timeline_dock.close()
    win.select_tab("latency")
    win.select_tab("buffers")
    assert win.explain_dock.isVisible() and not win.timeline_dock.isVisible()


def test_a_view_that_fails_to_build_says_so_in_its_tab(qtbot, monkeypatch, capsys):
    from app import tabs

    monkeypatch.setattr(tabs, "VIEWS", (("weights", ".no_such_view", "Nope", "Weight slices"),))
    model, pb, win = make_window(qtbot, kind="tp-forward", n=4)  # opens on the weights tab
    assert win.current_tab() == "weights"
    label = win.view("weights")
    assert "could not be built" in label.text() and "no_such_view" in label.text()
    assert "could not be built" in capsys.readouterr().err
    pb.step_forward()  # the rest of the window goes on
    assert pb.step_index == 1


def test_toolbar_icons_take_the_theme_text_colour(qtbot):
    from app import theme

    def ink(icon):
        img = icon.pixmap(24, 24).toImage()
        px = [img.pixelColor(x, y) for x in range(24) for y in range(24)]
        opaque = [c for c in px if c.alpha() > 200]
        assert opaque, "the icon has a shape"
        return sum(c.lightnessF() for c in opaque) / len(opaque)

    model, pb, win = make_window(qtbot)
    assert ink(win.act_play.icon()) < 0.3 and ink(win.act_fwd.icon()) < 0.3  # dark on the light theme
    theme.set_theme("high-contrast")
    assert ink(win.act_play.icon()) > 0.7 and ink(win.act_fwd.icon()) > 0.7  # light on black
    pb.play()
    assert ink(win.act_play.icon()) > 0.7  # the pause icon too
    pb.pause()


@pytest.mark.parametrize("n, p", [(5, 4), (6, 4), (12, 8)])
def test_recursive_doubling_fold_and_unfold_are_described_as_such(qapp, n, p):
    from app.views.text.explain import describe_group
    from simcore.scenarios import run_collective

    tr = run_collective("all-reduce", n, 1024.0 * n, "rd").trace
    by_phase = {}
    for m in tr.messages:
        by_phase.setdefault((m.step, m.phase), []).append(m)
    fold = next(ms for (k, ph), ms in by_phase.items() if ph == "fold")
    unfold = next(ms for (k, ph), ms in by_phase.items() if ph == "unfold")
    assert len(fold) == n - p and all(m.dst == m.src - p for m in fold)
    text = describe_group(fold, n)
    assert "not a power of two" in text and f"d − {p}" in text and "ring neighbour" not in text
    assert "back to each of the" in describe_group(unfold, n)
    # a ring step still reads as one
    ring = run_collective("all-reduce", n, 1024.0 * n, "ring").trace
    step0 = [m for m in ring.messages if m.step == 0]
    assert "ring neighbour d + 1" in describe_group(step0, n)
