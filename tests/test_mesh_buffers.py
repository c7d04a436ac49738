"""
The Buffers tab on mesh runs: each collective over a mesh axis keeps the arrays it ran on
(AxisCollective.inputs / outputs, the caller's and the returned arrays, not copies), the app lays
them out in the trace's chunk order (app.core.mesh_model.buffer_row / event_buffers), and the one
Buffers view draws them as it draws a collective scenario's buffers: values against numpy.
"""

import numpy as np
import pytest

from app.core.mesh_model import buffer_row, event_buffers
from app.core.scenarios import Scenario
from simcore.mesh import Mesh
from simcore.trace import buffer_values


# -- the engine's record and its layout (no Qt) ------------------------------------------------
def test_a_mesh_collective_keeps_the_arrays_it_ran_on_not_copies():
    mesh = Mesh((2, 4), ("X", "Y"))
    arrays = [np.full((3, 4), float(p)) for p in range(8)]
    out = mesh.collective("all-gather", "Y", arrays, dim=1)
    rec = mesh.log[-1]
    assert all(a is b for a, b in zip(rec.inputs, arrays))  # the caller's own arrays
    assert all(a is b for a, b in zip(rec.outputs, out)) and rec.dim == 1
    mesh.collective("all-reduce", "X", nbytes=1024.0)  # timed by bytes alone: nothing to keep
    assert mesh.log[-1].inputs == () and mesh.log[-1].outputs == ()


@pytest.mark.parametrize("op, axis", [("all-gather", "Z"), ("reduce-scatter", "Y"), ("all-reduce", "Z"),
                                      ("all-gather", "X")])
def test_buffers_in_chunk_order_give_the_engines_outputs_at_the_end(op, axis):
    """On a TPU v4 torus the axes run the bidirectional ring (two lanes a chunk: chunk j + t·g is lane
    t of chunk j). The trace's holdings at the end, summed over the recorded inputs, are the
    arrays the collective returned, device by device."""
    mesh = Mesh((4, 4, 4), ("X", "Y", "Z"), "tpu-v4-4x4x4")
    rng = np.random.default_rng(1)
    out = mesh.collective(op, axis, [rng.standard_normal((6, 32)) for _ in range(64)], dim=1)
    rec = mesh.log[-1]
    c = mesh.comm.trace.collectives[rec.coll]
    assert rec.algo == "bidi" and c.n_chunks == 2 * len(rec.groups[0])
    pos_of_dev = np.empty(64, int)
    pos_of_dev[np.asarray(mesh.dev)] = np.arange(64)
    inputs = event_buffers(rec, c.n_chunks, pos_of_dev)  # groups as devices: dev is the identity here
    assert np.array_equal(np.asarray(mesh.dev), np.arange(64))
    vals = buffer_values(mesh.comm.trace.holdings(rec.coll, t=c.t_end), inputs, c.n_chunks)
    g = len(rec.groups[0])
    w = vals.shape[1] // c.n_chunks
    for d in range(64):
        o = out[pos_of_dev[d]]
        if op == "reduce-scatter":  # its own chunk j, both lanes, is the group's sum of block j
            j = next(grp.index(d) for grp in rec.groups if d in grp)
            got = np.concatenate([vals[d, (j + t * g) * w:(j + t * g + 1) * w] for t in range(2)])
            np.testing.assert_allclose(got, np.moveaxis(o, 1, 0).ravel(), rtol=0, atol=1e-12)
        else:  # the whole buffer: the gathered array / the sum, lanes in chunk order
            want = buffer_row(o, "all-reduce" if op == "all-reduce" else "reduce-scatter", 1, g, c.n_chunks)
            np.testing.assert_allclose(vals[d], want, rtol=0, atol=1e-12)


def test_a_multi_axis_ring_keeps_no_buffers_to_draw():
    """A multi-axis message carries several chunks under one index: the tab says so instead."""
    mesh = Mesh((4, 4, 4), ("X", "Y", "Z"), "tpu-v4-4x4x4")
    mesh.collective("all-gather", ("Y", "Z"), [np.zeros((2, 16)) for _ in range(64)], dim=1)
    rec = mesh.log[-1]
    assert rec.algo == "multi-axis"
    assert event_buffers(rec, mesh.comm.trace.collectives[rec.coll].n_chunks, np.arange(64)) is None


# -- the Buffers view on a mesh run ------------------------------------------------------------
def buffers_view(qtbot, mesh="X=2,Y=4", program="redistribute", params=""):
    from app.state import Playback, ScenarioModel
    from app.views.buffers.buffer_view import BufferView

    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh=mesh, program=program,
                                                                params=params), sync=True)
    pb = Playback(model)
    view = BufferView(model, pb)
    qtbot.addWidget(view)
    view.resize(1280, 720)
    view.show()
    qtbot.waitExposed(view)
    return model, pb, view


def test_all_gather_over_Y_paints_the_engines_arrays_mid_run(qtbot):
    model, pb, view = buffers_view(qtbot)
    run = model.run
    (e,) = run.mesh.events
    assert view.stack.currentWidget() is view.canvas
    pb.seek(e.t_start)
    pb.step_forward()  # after step 1 of 3: each device has its own chunk and one more
    c = run.trace.collectives[e.coll]
    shown = view.image.image
    assert shown.shape == (8, 4 * 32 * 32)
    held = run.index.held(e.coll, pb.t)
    q = shown.shape[1] // c.n_chunks
    for d in range(8):
        grp = next(g for g in e.groups if d in g)
        full = np.moveaxis(e.outputs[d], e.dim, 0).ravel()  # the engine's gathered block, dim first
        n_held = 0
        for ch in range(c.n_chunks):
            cells = shown[d, ch * q:(ch + 1) * q]
            if held.present[d, ch]:
                n_held += 1
                assert np.array_equal(cells, full[ch * q:(ch + 1) * q])  # the gathered array, exactly
                assert np.array_equal(cells, np.moveaxis(e.inputs[grp[ch]], e.dim, 0).ravel())  # member ch's
            else:
                assert np.isnan(cells).all()  # not there yet
        assert n_held == 2
    assert "all-gather over Y" in view.title.text() and "8 × 4096" in view.title.text()
    assert view.caption.text().startswith("After step 1 of 3")


def test_a_mesh_reduction_ends_with_each_groups_sums(qtbot):
    """2-D weight-stationary on 4 × 4: AG_Y, AR_X, RS_Y; at the end of each reduction the painted
    buffers are the engine's outputs, and the caption speaks of the group, not all 16."""
    model, pb, view = buffers_view(qtbot, "X=4,Y=4", "2d-ws-ffn")
    run = model.run
    ar, rs = run.mesh.events[1], run.mesh.events[2]
    pb.seek(ar.t_end - 1e-3 * ar.time)
    pb.seek(ar.t_end)
    assert view.stack.currentWidget() is view.canvas
    for d in range(16):
        np.testing.assert_allclose(view.image.image[d], ar.outputs[d].ravel(), rtol=0, atol=1e-12)
    assert "its group's full sum of 4" in view.caption.text()
    pb.seek(rs.t_end)
    c = run.trace.collectives[rs.coll]
    q = view.image.image.shape[1] // c.n_chunks
    for d in range(16):
        j = next(g.index(d) for g in rs.groups if d in g)
        np.testing.assert_allclose(view.image.image[d, j * q:(j + 1) * q], np.moveaxis(rs.outputs[d], rs.dim, 0).ravel(),
                                   rtol=0, atol=1e-12)
    assert "the 4 GPUs of its group" in view.caption.text()


def test_an_all_to_all_on_a_mesh_says_why_it_has_no_buffers_and_the_next_collective_draws_again(qtbot):
    model, pb, view = buffers_view(qtbot, "X=2,Y=4", "redistribute", "rules=1")
    events = model.run.mesh.events
    k = next(i for i, e in enumerate(events) if e.op == "all-to-all")
    e = events[k]
    pb.seek((e.t_start + e.t_end) / 2)
    assert view.stack.currentWidget() is view.hint_page
    assert view.hint.text().startswith("all-to-all over Y:") and view.title.text() == "Buffers · all-to-all over Y"
    assert view.switch_button.isHidden()  # no "Show an all-reduce": the run goes on here
    nxt = events[k + 1]
    pb.seek((nxt.t_start + nxt.t_end) / 2)
    assert view.stack.currentWidget() is view.canvas
    assert view.title.text().startswith(f"{nxt.op} over {nxt.axis_name}:")


@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter", "all-reduce"])
def test_buffers_follow_an_explicit_device_order(op):
    """Positions and devices differ (devices= reversed): row d is device d's buffer, and the trace's
    holdings (by device) summed over it give the array its position got back."""
    order = [5, 2, 7, 0, 3, 6, 1, 4]
    mesh = Mesh((2, 4), ("X", "Y"), devices=order)
    rng = np.random.default_rng(2)
    out = mesh.collective(op, "Y", [rng.standard_normal((4, 8)) for _ in range(8)], dim=1)
    rec = mesh.log[-1]
    c = mesh.comm.trace.collectives[rec.coll]
    pos_of_dev = np.empty(8, int)
    pos_of_dev[np.asarray(order)] = np.arange(8)
    groups = tuple(tuple(int(pos_of_dev[d]) for d in grp) for grp in rec.groups)  # as mesh_info gives them
    from dataclasses import replace

    inputs = event_buffers(replace(rec, groups=groups), c.n_chunks, pos_of_dev)
    vals = buffer_values(mesh.comm.trace.holdings(rec.coll, t=c.t_end), inputs, c.n_chunks)
    w = vals.shape[1] // c.n_chunks
    for d in range(8):
        p = pos_of_dev[d]
        if op == "reduce-scatter":
            j = next(g.index(p) for g in groups if p in g)
            np.testing.assert_allclose(vals[d, j * w:(j + 1) * w], np.moveaxis(out[p], 1, 0).ravel(), atol=1e-12)
        else:
            want = buffer_row(out[p], "all-reduce" if op == "all-reduce" else "reduce-scatter", 1, 4, c.n_chunks)
            np.testing.assert_allclose(vals[d], want, rtol=0, atol=1e-12)
