"""
Predict, then reveal: before each step of a collective the student says where the next
blocks go; the app says right or wrong, then plays the step.

This module is the logic and imports no Qt: questions are made from the trace's messages of
the next step, answers are checked against them, a score is kept per collective (op +
algorithm). app/classroom/predict_ui.py is the Qt side (a panel, and a controller that listens to the
ring view's `device_clicked(int)` and drives the one playback clock).

Question kinds (what the trace can answer unambiguously):
    RECEIVER   "Device s sends chunk c in the next step. Which device receives it?"
               answer: the device (or the switch, SWITCH = -1) that message goes to.
               All-to-all asks it of a block: "GPU s sends its block j: where does it go?" (GPU j).
    CHUNK      "Which chunk arrives at device d in the next step?"
               answer: the chunk index (asked only when whole chunks move, not ALL).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from simcore.algorithms import BLOCKS, slots_of
from simcore.trace import ALL, SWITCH, Trace

from .frame import time_eps

RECEIVER = "receiver"
CHUNK = "chunk"


@dataclass(frozen=True)
class Question:
    """One prediction about step `step` (0-based) of collective `coll`."""

    coll: int
    step: int
    kind: str  # RECEIVER or CHUNK
    device: int  # RECEIVER: the sender; CHUNK: the device that receives
    chunk: int  # RECEIVER: the chunk being sent (ALL = whole buffer); CHUNK: unused (-1)
    answers: frozenset  # the right answers: device ids (RECEIVER) or chunk indices (CHUNK)
    n_choices: int  # devices (RECEIVER) or chunks (CHUNK) the student chooses from
    reduce: bool = False  # the receiver adds the payload (a partial sum) rather than copying it

    def is_right(self, choice: int) -> bool:
        return int(choice) in self.answers


@dataclass
class Score:
    right: int = 0
    asked: int = 0

    @property
    def wrong(self) -> int:
        return self.asked - self.right


@dataclass
class PredictGame:
    """
    Questions and scores for one trace. The same (trace, seed) always asks the same
    questions, so a lecturer and the students see the same quiz.
    """

    trace: Trace
    seed: int = 0
    scores: dict = field(default_factory=dict)  # (op, algo) -> Score
    _answered: dict = field(default_factory=dict)  # (coll, step) -> (choice, right)

    # -- questions ------------------------------------------------------------------
    def candidates(self, coll: int, step: int) -> list[Question]:
        """Every unambiguous question the messages of this step can answer."""
        c = self.trace.collectives[coll]
        msgs = [m for m in self.trace.messages_of(coll) if m.step == step]
        out = []
        by_send = {}
        for m in msgs:
            by_send.setdefault((m.src, m.chunk), []).append(m)
        for (src, chunk), ms in sorted(by_send.items()):
            dsts = {m.dst for m in ms}
            if src == SWITCH or len(dsts) != 1:
                continue  # a multicast has no single receiver to click
            out.append(Question(coll, step, RECEIVER, src, chunk, frozenset(dsts), c.n, ms[0].reduce))
        if c.n_chunks > 1 and slots_of(c.op) != BLOCKS:  # n² block slots are no chunk list to click
            by_recv = {}
            for m in msgs:
                by_recv.setdefault(m.dst, []).append(m)
            for dst, ms in sorted(by_recv.items()):
                chunks = {m.chunk for m in ms}
                if dst == SWITCH or ALL in chunks:
                    continue
                out.append(Question(coll, step, CHUNK, dst, -1, frozenset(chunks), c.n_chunks, ms[0].reduce))
        return out

    def question(self, coll: int, step: int) -> Question | None:
        """The question for this step (None if the step has no message to predict)."""
        qs = self.candidates(coll, step)
        if not qs:
            return None
        # alternate the kinds from step to step where both exist; pick the device at random
        want = RECEIVER if step % 2 == 0 else CHUNK
        pool = [q for q in qs if q.kind == want] or qs
        rng = random.Random(self.seed * 1_000_003 + coll * 1009 + step)
        return pool[rng.randrange(len(pool))]

    def steps(self, coll: int) -> int:
        return self.trace.collectives[coll].n_steps

    # -- answers --------------------------------------------------------------------
    def answer(self, q: Question, choice: int) -> bool:
        """
        Check `choice` (a device id, SWITCH, or a chunk index) and count it. Only the first
        answer to a question counts: clicking again after the reveal cannot fix a score.
        """
        right = q.is_right(choice)
        key = (q.coll, q.step)
        if key not in self._answered:
            self._answered[key] = (int(choice), right)
            s = self.score_of(q.coll)
            s.asked += 1
            s.right += int(right)
        return right

    def score_of(self, coll: int) -> Score:
        c = self.trace.collectives[coll]
        return self.scores.setdefault((c.op, c.algo), Score())

    def reset(self):
        self.scores.clear()
        self._answered.clear()


def step_start(trace: Trace, coll: int, step: int) -> float:
    """When the first message of a step starts (s): the moment the question is asked."""
    return min(m.t_start for m in trace.messages_of(coll) if m.step == step)


def step_end(trace: Trace, coll: int, step: int) -> float:
    """When the last message of a step has arrived (s): the moment the answer is revealed."""
    return max(m.t_end for m in trace.messages_of(coll) if m.step == step)


def step_at(trace: Trace, t: float) -> tuple[int, int] | None:
    """
    The (collective, step) to ask about at time t: the first step whose messages have not
    all arrived yet (within the views' tolerance, app.core.frame.time_eps). None when the trace is over.
    """
    eps = time_eps(trace.t_end)
    for c in trace.collectives:
        for k, (_t0, t1) in enumerate(trace.step_times(c.id)):
            if t1 > t + eps:
                return c.id, k
    return None
