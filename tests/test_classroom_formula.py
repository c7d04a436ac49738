"""The formula panel: symbolic closed form, numbers substituted, beside the simulated total."""

import pytest

pytest.importorskip("pytestqt")

from app.views.text.explain import fmt_time  # noqa: E402
from app.views.text.formula_texts import closed_form, formula_html  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402
from simcore.algorithms import ALGORITHMS, ALLREDUCE_ALGOS  # noqa: E402
from simcore.links import NVLINK4  # noqa: E402
from simcore.scenarios import run_collective  # noqa: E402

from closed_forms import reference_time  # noqa: E402
from panel_text import shown_text

CASES = [("all-gather", "ring"), ("reduce-scatter", "ring")] + [("all-reduce", a) for a in ALLREDUCE_ALGOS]


@pytest.mark.parametrize("op,algo", [(op, a) for op, reg in ALGORITHMS.items() for a in reg if "switch" in reg[a].topologies])
def test_the_written_form_is_the_literature_formula(op, algo):
    for n in range(1, 21):
        for S in (8.0, 2.0**20, 3e9):
            cf = closed_form(op, algo, n)
            want = reference_time(op, algo, n, S, NVLINK4.alpha, NVLINK4.bw)
            got = cf.seconds(S, NVLINK4.alpha, NVLINK4.bw) if n > 1 else 0.0
            assert got == pytest.approx(want, rel=1e-12), (op, algo, n, S)


def test_one_shot_is_written_as_latency_once():
    """The lesson of the truer machine: one-shot pays α once, (n − 1)·S through the port."""
    text = formula_html("all-reduce", "direct", 8, 64 * 2.0**10, NVLINK4.alpha, NVLINK4.bw)
    assert "<i>T</i> = <i>α</i> + (<i>n</i> − 1)·<i>S</i>/<i>β</i>" in text
    assert "= 1.9 µs + (8 − 1)·64 KiB/450 GB/s" in text
    assert f"<b>{fmt_time(NVLINK4.alpha + 7 * 65536 / NVLINK4.bw)}</b>" in text
    two = formula_html("all-reduce", "two-shot", 8, 64 * 2.0**10, NVLINK4.alpha, NVLINK4.bw)
    assert "<i>T</i> = 2<i>α</i> + 2(<i>n</i> − 1)·<i>S</i>/(<i>n</i><i>β</i>)" in two


@pytest.mark.parametrize("op,algo", CASES)
def test_symbols_numbers_and_the_simulated_total(op, algo):
    n, S = 8, 2.0**20
    run = run_collective(op, n, S, algo)
    c = run.trace.collectives[0]
    text = formula_html(c.op, c.algo, c.n, c.nbytes, NVLINK4.alpha, NVLINK4.bw,
                        simulated=c.t_end - c.t_start, link_name=NVLINK4.name)
    assert "<i>α</i>" in text and "<i>S</i>" in text and "<i>β</i>" in text  # symbolic
    assert "<i>T</i> = " + closed_form(op, algo, n).html in text
    assert "1 MiB" in text and "450 GB/s" in text and "1.9 µs" in text  # numbers substituted
    total = fmt_time(reference_time(op, algo, n, S, NVLINK4.alpha, NVLINK4.bw))
    assert f"= <b>{total}</b>" in text
    assert "equals the closed form ✓" in text  # the simulation agrees


def test_a_disagreeing_simulation_is_not_hidden():
    text = formula_html("all-gather", "ring", 4, 2.0**20, 1e-6, 1e11, simulated=1.0)
    assert "differs from the closed form" in text


@pytest.mark.usefixtures("app_env")
def test_the_panel_follows_the_scenario(qtbot):
    w = make_window(qtbot, "all-gather", 8)
    panel = w.classroom.formula
    assert "(<i>n</i> − 1)" in shown_text(panel) and "(8 − 1)" in shown_text(panel)
    w.model.update(kind="all-reduce", algo="rd", n=8)
    assert "log₂<i>n</i>" in shown_text(panel) and "log₂8" in shown_text(panel)
    w.model.update(algo="innet", n=5, nbytes=5 * 2**16)  # S splits into n whole-byte chunks (one rule)
    assert "2<i>α</i> + (<i>n</i> + 1)" in shown_text(panel) and "(5 + 1)" in shown_text(panel)
    w.model.update(algo="direct", n=8)
    assert "<i>α</i> + (<i>n</i> − 1)·<i>S</i>/<i>β</i>" in shown_text(panel)
    w.model.update(n=1)
    assert "nothing to send" in shown_text(panel)
