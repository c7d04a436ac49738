"""
Predict mode's words sit where they belong: the verdict on an answer names the step it was
about and comes before the next question, and the question is never cut when the formula dock
is open beside it (the panel scrolls instead).
"""

import pytest

pytest.importorskip("pytestqt")

from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def test_the_verdict_names_its_step_and_comes_before_the_next_question(qtbot):
    w = make_window(qtbot, "all-gather", 4, "ring")
    c = w.classroom
    c.predict.animate = False
    c.act_predict.trigger()
    q = c.predict.q
    assert (q.coll, q.step) == (0, 0)
    c.predict.answer(next(iter(q.answers)))
    p = c.predict_panel
    assert c.predict.q.step == 1  # the next question is asked …
    assert p.verdict.text().startswith("Step 1:") and "✓" in p.verdict.text()  # … the verdict is step 1's
    assert "Step 2 of 3" in p.question.text()
    assert p.verdict.isVisible() and p.verdict.y() < p.question.y()  # and it reads first


def test_the_question_is_not_cut_with_the_formula_dock_open(qtbot):
    from PySide6.QtWidgets import QScrollArea

    w = make_window(qtbot, "all-gather", 4, "ring")
    c = w.classroom
    c.act_predict.trigger()
    c.formula_dock.show()  # the lecturer opens the formula beside the question
    w.resize(1280, 720)
    qtbot.waitUntil(lambda: c.predict_dock.isVisible())
    p = c.predict_panel
    q = p.question
    assert q.height() >= q.heightForWidth(q.width())  # laid out whole …
    scroll = p.findChild(QScrollArea)
    assert scroll is not None and q in scroll.widget().findChildren(type(q))  # … and scrolled, not cut
