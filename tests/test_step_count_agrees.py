"""Every place that counts steps counts the same stops: the ring
view's header, the explanation's heading and the status bar show the same k and K at every stop and
between stops, and say "phase" where a stop is a phase (two-shot, direct, in-network) — read from
what is displayed."""

import re

import pytest

from test_app_main_window import make_window
from panel_text import shown_text

pytestmark = pytest.mark.usefixtures("english")  # conftest's

_COUNT = re.compile(r"\b(step|phase) (\d+) of (\d+)", re.IGNORECASE)


def _counts(win):
    header = win.ring_view.subcaption.text.splitlines()[0]
    explain = next(ln for ln in shown_text(win.explain).splitlines() if _COUNT.search(ln))
    status = win.step_label.text()
    return [(m.group(1).lower(), int(m.group(2)), int(m.group(3))) if m else None
            for m in (_COUNT.search(s) for s in (header, explain, status))], (header, explain, status)


@pytest.mark.parametrize("kind, algo, word, K", [("all-gather", "ring", "step", 7), ("all-reduce", "ring", "step", 14),
                                                 ("all-reduce", "two-shot", "phase", 2),
                                                 ("all-reduce", "direct", "phase", 1),
                                                 ("all-reduce", "innet", "phase", 2)])
def test_header_explanation_and_status_bar_count_the_same_stops(qtbot, kind, algo, word, K):
    model, pb, win = make_window(qtbot, size=(1600, 900), kind=kind, n=8, algo=algo)
    stops = pb.stops
    assert len(stops) - 1 == K
    for j in range(1, K + 1):
        for t in ((stops[j - 1] + stops[j]) / 2, stops[j]):
            pb.seek(t)
            counts, texts = _counts(win)
            if t == stops[-1]:  # the status bar's end reads "done: K steps/phases"
                counts = counts[:2]
                assert texts[2] == (f"done: {K} {word}s" if K > 1 else f"done: 1 {word}")
            assert counts[0] == (word, j, K), texts
            assert len(set(counts)) == 1, texts
    if word == "phase":
        pb.seek(stops[1] if K > 1 else (stops[0] + stops[1]) / 2)
        _c, (header, explain, _s) = _counts(win)
        assert header.startswith("Phase 1 of") and ": " in header
        assert "Phase 1 of" in explain
