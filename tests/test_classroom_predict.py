"""Predict, then reveal: questions come from the trace's next step; answers are scored right."""

import pytest

from app.core.predict import CHUNK, RECEIVER, PredictGame, step_at, step_end, step_start
from simcore.scenarios import run_collective
from simcore.trace import SWITCH


def _game(op="all-gather", n=4, algo="ring"):
    run = run_collective(op, n, 2**20, algo)
    return PredictGame(run.trace), run.trace


@pytest.mark.parametrize("n", [2, 4, 5, 8])
def test_ring_allgather_questions_match_the_ring_rule(n):
    game, trace = _game("all-gather", n)
    c = trace.collectives[0]
    assert c.n_steps == n - 1
    for k in range(c.n_steps):
        q = game.question(0, k)
        assert q is not None and (q.coll, q.step) == (0, k)
        if q.kind == RECEIVER:
            # the lecture's ring: every device forwards to (d + 1) mod n
            assert q.answers == {(q.device + 1) % n}
            assert q.chunk == (q.device - k) % n  # it forwards what it got k steps back
        else:
            # device d receives at step k the chunk its predecessor owned k steps back
            assert q.answers == {(q.device - 1 - k) % n}
            assert q.n_choices == n


def test_both_kinds_are_asked_over_a_collective():
    game, trace = _game("reduce-scatter", 8)
    kinds = {game.question(0, k).kind for k in range(trace.collectives[0].n_steps)}
    assert kinds == {RECEIVER, CHUNK}


def test_right_and_wrong_answers_are_scored_per_collective():
    game, trace = _game("all-gather", 4)
    right = wrong = 0
    for k in range(3):
        q = game.question(0, k)
        good = next(iter(q.answers))
        bad = (good + 1) % q.n_choices
        assert not q.is_right(bad)
        if k == 1:
            assert game.answer(q, bad) is False
            wrong += 1
        else:
            assert game.answer(q, good) is True
            right += 1
    s = game.scores[("all-gather", "ring")]
    assert (s.right, s.wrong, s.asked) == (right, wrong, 3) == (2, 1, 3)


def test_only_the_first_answer_counts():
    game, _ = _game("all-gather", 4)
    q = game.question(0, 0)
    bad = (next(iter(q.answers)) + 1) % q.n_choices
    assert game.answer(q, bad) is False
    assert game.answer(q, next(iter(q.answers))) is True  # told right, but not re-scored
    s = game.score_of(0)
    assert (s.right, s.asked) == (0, 1)


def test_scores_are_kept_per_collective_kind():
    scores = {}
    g1 = PredictGame(run_collective("all-gather", 4).trace, scores=scores)
    g2 = PredictGame(run_collective("all-reduce", 4, algo="rd").trace, scores=scores)
    q1, q2 = g1.question(0, 0), g2.question(0, 0)
    g1.answer(q1, next(iter(q1.answers)))
    g2.answer(q2, -99)
    assert scores[("all-gather", "ring")].right == 1
    assert scores[("all-reduce", "rd")].right == 0 and scores[("all-reduce", "rd")].asked == 1


def test_recursive_doubling_asks_for_the_partner():
    game, trace = _game("all-reduce", 8, "rd")
    for k in range(3):
        q = game.question(0, k)
        assert q.kind == RECEIVER  # the whole buffer moves: no chunk question
        assert q.answers == {q.device ^ (1 << k)}


def test_in_network_reduction_receiver_can_be_the_switch():
    game, trace = _game("all-reduce", 4, "innet")
    q = game.question(0, 0)
    assert q.kind == RECEIVER and q.answers == {SWITCH}
    assert game.answer(q, SWITCH)


def test_same_trace_same_questions():
    a, _ = _game("all-reduce", 6, "ring")
    b, _ = _game("all-reduce", 6, "ring")
    assert [a.question(0, k) for k in range(10)] == [b.question(0, k) for k in range(10)]


def test_step_times_and_position():
    _, trace = _game("all-gather", 4)
    assert step_at(trace, 0.0) == (0, 0)
    t1 = step_end(trace, 0, 0)
    assert step_start(trace, 0, 1) == pytest.approx(t1)
    assert step_at(trace, t1) == (0, 1)
    assert step_at(trace, trace.t_end) is None


def test_the_game_logic_imports_no_qt():
    import subprocess
    import sys

    code = ("import sys; import app.core.predict\n"
            "print(','.join(k for k in sys.modules if k.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""

