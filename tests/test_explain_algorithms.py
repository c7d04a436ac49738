"""The explanation reads the algorithm registry: every algorithm has its sentences, in English and
Chinese, and what the text counts adds up to the bytes it says have moved."""

import re

import pytest

pytest.importorskip("pytestqt")


from app import i18n  # noqa: E402
from app.views.text.explain import ExplainPanel, algo_text, fmt_bytes  # noqa: E402
from app.state import Playback, Scenario, ScenarioModel  # noqa: E402
from simcore.algorithms import ALGORITHMS, ALLREDUCE_ALGOS  # noqa: E402
from panel_text import shown_text

HAN = re.compile(r"[\u4e00-\u9fff]")
CASES = [(op, a) for op, reg in ALGORITHMS.items() for a in reg if "switch" in reg[a].topologies]


def _panel(qtbot, algo, n, nbytes):
    model = ScenarioModel(Scenario(kind="all-reduce", n=n, algo=algo, nbytes=nbytes))
    pb = Playback(model)
    panel = ExplainPanel(model, pb)
    qtbot.addWidget(panel)
    return model, pb, panel


@pytest.mark.parametrize("op,algo", CASES)
def test_every_registered_algorithm_has_its_sentences(english, op, algo):
    text = algo_text(op, algo)
    assert text.title != f"{op} ({algo})" and text.name and text.hint and text.why
    i18n.set_language(english, "zh")
    zh = algo_text(op, algo)
    assert HAN.search(zh.title) and HAN.search(zh.hint) and HAN.search(zh.why), zh


def test_the_menus_list_the_registry(english):
    from app.controls import ControlPanel

    names = ControlPanel._algo_names(None)  # reads no widget state
    assert list(names) == list(ALLREDUCE_ALGOS)


def test_recursive_doubling_fold_names_what_else_has_moved(english, qtbot):
    """n = 6: GPUs 2 and 3 have nothing to fold in and swap during the fold; 'moved so far'
    counts their bytes, so the step's text names them too."""
    S = 6 * 1024.0
    model, pb, panel = _panel(qtbot, "rd", 6, S)
    pb.seek_step(1)
    t = pb.t
    arrived = [m for m in model.run.trace.messages if m.t_end <= t * (1 + 1e-12)]
    moved = sum(m.nbytes for m in arrived)
    assert f"moved so far: {fmt_bytes(moved)}" in panel.live.text()
    text = shown_text(panel)
    assert "Step 1 of 4 (fold)" in text and "2 messages" in text
    early = [m for m in arrived if m.step > 0]
    assert len(early) == 2 and {(m.src, m.dst) for m in early} == {(2, 3), (3, 2)}
    assert "Meanwhile 2 messages of step 2" in text and "GPU 2 → GPU 3" in text
    # the fold's 2 messages and the 2 named ones are everything that has arrived
    fold = [m for m in arrived if m.step == 0]
    assert len(fold) + len(early) == len(arrived)


def test_one_shot_says_latency_is_paid_once(english, qtbot):
    model, pb, panel = _panel(qtbot, "direct", 8, 64 * 1024.0)
    pb.seek_step(3)
    text = shown_text(panel)
    assert "T = α + (n − 1)·S/β" in text and "α is paid once" in text
    assert "simulated: 2.92 µs ✓" in text  # 1.9 µs + 7 × 64 KiB / 450 GB/s


def test_two_shot_phases_are_described(english, qtbot):
    model, pb, panel = _panel(qtbot, "two-shot", 4, 4 * 1024.0)
    pb.seek_step(1)
    assert "straight to that chunk's owner" in shown_text(panel)
    assert "Phase 1 of 2: one-shot reduce-scatter — done" in shown_text(panel)  # stepped by phase (test_step_count_agrees)
    pb.seek_step(2)
    assert "sends its own chunk d" in shown_text(panel) and "Phase 2 of 2: one-shot all-gather" in shown_text(panel)
