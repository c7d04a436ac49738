"""
app.words, the app's words in one place (no Qt needed): one time format for every view, counts
that agree with their number, titles without code names, devices named for what they are, the
matmul cases by their notation, and recursive doubling's partners said right at each round.
"""

import subprocess
import sys
from types import SimpleNamespace

import pytest

from app import words
from simcore.scenarios import run_collective
from simcore.topology import torus


def test_words_import_no_qt_and_no_view():
    code = ("import sys, app.words; bad = [m for m in sys.modules if m.startswith(('PySide6', 'app.views'))]; "
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("s, text", [
    (0.0, "0 s"), (1.9e-6, "1.9 µs"), (41.23e-6, "41.2 µs"), (0.0130, "13 ms"), (850e-9, "850 ns"),
    (1.5, "1.5 s"), (12.5e-12, "12.5 ps"), (0.99996e-3, "1 ms"), (1234.0, "1230 s"),
])
def test_one_time_format(s, text):
    assert words.fmt_time(s) == text


def test_every_caller_reads_the_one_fmt_time():
    from app.core import step_timeline_model
    from app.views.text import explain

    assert step_timeline_model.fmt_time is words.fmt_time and explain.fmt_time is words.fmt_time


@pytest.mark.parametrize("fn, k, text", [
    (words.n_steps, 1, "1 step"), (words.n_steps, 7, "7 steps"),
    (words.n_messages, 1, "1 message"), (words.n_messages, 32, "32 messages"),
    (words.n_gpus, 1, "1 GPU"), (words.n_gpus, 8, "8 GPUs"),
])
def test_counts_agree_with_their_number(fn, k, text):
    assert fn(k) == text


def test_the_status_says_done_one_step():
    from app.views.ring.ring_texts import step_status

    def done(K):
        return SimpleNamespace(stop=K, n_stops=K, at_end=True, at_stop=True, t=1.0)

    assert step_status(done(1)) == "done: 1 step" and step_status(done(7)) == "done: 7 steps"


@pytest.mark.parametrize("algo, title", [("hier", "Hierarchical all-reduce"), ("ring-nodes", "Ring all-reduce across nodes"),
                                         ("ring", "Ring all-reduce"), ("rd", "Recursive-doubling all-reduce")])
def test_titles_have_no_code_names(algo, title):
    t = words.op_title("all-reduce", algo)
    assert t == title and "(" not in t


def test_tpu_chips_are_chips():
    assert words.device_name(3, torus((4, 4))) == "chip 3" and words.device_name(3) == "GPU 3"
    assert words.n_devices(16, torus((4, 4))) == "16 chips"


def test_matmul_cases_are_named_by_their_notation():
    assert words.matmul_case_name(1) == "A[I_X, J] · B[J, K] → C[I_X, K]"
    assert words.matmul_case_name(3) == "A[I, J_X] · B[J_X, K] → C[I, K]"


def test_recursive_doubling_names_the_partners_of_each_round():
    from app.views.text.explain import describe_group

    trace = run_collective("all-reduce", 8, 2**20, "rd").trace
    said = [describe_group([m for m in trace.messages if m.step == k], 8) for k in range(3)]
    assert said[0].startswith("Neighbours pair up, d ↔ d XOR 1 (0 ↔ 1, 2 ↔ 3")
    assert said[1].startswith("GPUs pair up 2 apart, d ↔ d XOR 2 (0 ↔ 2, 1 ↔ 3")
    assert said[2].startswith("GPUs pair up 4 apart, d ↔ d XOR 4 (0 ↔ 4, 1 ↔ 5")
    assert not any("across the circle" in s for s in said)


def test_a_group_of_messages_is_counted_in_words():
    from app.views.text.explain import describe_group

    trace = run_collective("all-gather", 8, 2**20).trace
    msgs = [m for m in trace.messages if m.step == 0][:2]  # 0 → 1 and 1 → 2: no pattern to name
    text = describe_group(msgs, 8)
    assert text.startswith("2 messages of 128 KiB.") and "(s)" not in text
