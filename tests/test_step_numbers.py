"""One numbering of steps, from 1, as the app shows them ("Step 3 of 3"): the explanation, a deck
scene's made-up talking point, the checker's findings and the CSV export all count the same way
(the engine's Message.step counts from 0 and stays inside the trace)."""

import csv
import io

import pytest

pytest.importorskip("pytestqt")

import simcore  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402
from panel_text import shown_text  # noqa: E402
from simcore.comm_sim import Comm, switch  # noqa: E402
from simcore.trace_io import CSV_STEP, write_csv  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env", "english")


@pytest.mark.parametrize("boundary", [0, 1, 3])
def test_a_scene_added_from_the_view_names_the_step_the_explanation_shows(qtbot, boundary):
    w = make_window(qtbot, "all-gather", 4)
    w.playback.seek_step(boundary)
    shown = shown_text(w.explain)
    scene = w.deck.add_current_view()
    point = scene.points[-1].en
    K = w.model.run.trace.collectives[0].n_steps
    k = {0: 1, 1: 1, 3: 3}[boundary]  # at the start the app shows step 1 (next); at boundary b, step b (done)
    assert point == f"Step {k} of {K}." and f"Step {k} of {K}" in shown  # before: "Step 0 of 3."


def test_the_checker_and_the_csv_count_steps_as_the_app_does():
    comm = Comm(switch(3))
    with comm.collective("all-gather", nbytes=24) as c:
        t = c.send(0, 1, 8, 0.0, step=0, chunk=0)
        c.send(1, 2, 8, t, step=1, chunk=0)
        c.send(2, 0, 8, 0.0, step=2, chunk=1)  # not held: in the last of 3 steps
    rep = simcore.check(comm, op="all-gather")
    assert rep.findings[0].step == 3 and rep.first_error.startswith("in step 3,")
    out = io.StringIO()
    write_csv(comm.trace, out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [int(r[CSV_STEP]) for r in rows] == [1, 2, 3]
