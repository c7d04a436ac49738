"""
One rule for the numbers a file gives, checked before any is used: a scenario file
(app/scenario_io.py) and a trace file (simcore/trace_io.py) both read their JSON through here.

    check_numbers(doc, what="trace", at_least_zero=("nbytes", …))   every number in a parsed document
    check_link(alpha, bw, where="meta.link")                        a link's α and β within physics

A refused number raises `BadNumber`, a ValueError whose str is one English sentence naming the
field as the file writes it ("nbytes", "collectives[0].nbytes"); its `rule`, `field` and `value`
let the app say the same in its own language.
"""

from __future__ import annotations

import json
import math

# A whole number in a file is read as one only up to 2^53 (where a float stops holding every
# integer); anything larger is refused before any arithmetic (10^400 overflows a float).
MAX_INT = 2**53
# The physical bounds of a link (α, β): what a file or a stored calibration may say.
# α in [0, 1 s] per message: 0 is an ideal link; the slowest real fabric (TCP across a data
# centre) pays milliseconds, so a second per message is a typo, not a network.
# β in [1 MB/s, 100 TB/s] per direction: the slowest link anyone times a collective on (an old
# Ethernet) moves far more than 1 MB/s, and NVLink 5 moves 0.9 TB/s, a hundredth of the upper
# bound; outside these the app would show times of 10^300 s or of zero.
MAX_ALPHA = 1.0
MIN_BW, MAX_BW = 1e6, 1e14


class BadNumber(ValueError):
    """A number a file may not hold. rule: "huge" (a whole number beyond 2^53), "not-finite",
    "too-large" (beyond `limit`, the field's own bound), "negative", "alpha" or "bw" (a link
    outside MAX_ALPHA / MIN_BW..MAX_BW); field: its name as
    the file writes it; value: the number as the file wrote it (JSON text); what: "scenario", "trace";
    file: the file's name when the sentence starts with it ("" when not)."""

    def __init__(self, rule: str, field: str, value: str, what: str = "file", file: str = "", limit=None):
        self.rule, self.field, self.value, self.what, self.file, self.limit = rule, field, value, what, file, limit
        super().__init__((f"{file}: " if file else "") + sentence(rule, field, value, what, limit))

    def in_file(self, name: str) -> "BadNumber":
        """The same refusal, its sentence starting with the file's name."""
        return BadNumber(self.rule, self.field, self.value, self.what, name, self.limit)


def sentence(rule: str, field: str, value: str, what: str = "file", limit=None) -> str:
    """The English sentence of a refused number."""
    if rule == "too-large":
        return f'"{field}" must be at most {limit_text(limit)}, not {value}.'
    if rule == "huge":
        return f'"{field}" is a number with {len(value.lstrip("-"))} digits: no field of a {what} is that large.'
    if rule == "not-finite":
        return f'"{field}" must be a finite number, not {value}.'
    if rule == "negative":
        return f'"{field}" must be zero or more, not {value}.'
    if rule == "alpha":
        return f'"{field}" must be seconds per message from 0 to {MAX_ALPHA:g}, not {value}.'
    if rule == "bw":
        return (f'"{field}" must be bytes per second from {MIN_BW:g} (1 MB/s) to {MAX_BW:g} (100 TB/s), '
                f'not {value}.')
    raise ValueError(f"no rule {rule!r}")


def limit_text(limit) -> str:
    """A bound as the sentence writes it: whole numbers with thousands separators ("9,007,199,254,740,992")."""
    return f"{limit:,.0f}" if float(limit).is_integer() else f"{limit:g}"


def _text(v) -> str:
    if isinstance(v, int) and abs(v) > MAX_INT:
        return str(v)
    return json.dumps(v)


def check_numbers(doc, what: str = "file", at_least_zero=(), where: str = "", paths: bool = False,
                  at_most=None) -> None:
    """
    Every number in a parsed JSON document (dicts, lists, numbers, text): a whole number beyond
    2^53 or a float that is not finite (json reads 1e400 as inf, NaN as nan) raises BadNumber
    naming its field ("nbytes"; a list's items by their list, "shape[2]"); so does a negative
    number in a field named in `at_least_zero` (sizes, times). `what` names the file in the
    sentence ("no field of a trace is that large"). paths: name a field by its whole path
    ("collectives[3].nbytes") rather than by its key alone ("nbytes", enough in a scenario).
    at_most: {key: the largest number that field may hold} (a float of 1e300 bytes is finite, not a size).
    """
    stack = [(doc, where)]
    while stack:
        v, at = stack.pop()
        if isinstance(v, dict):
            stack.extend((x, f"{at}.{k}" if paths and at else str(k)) for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((x, f"{at}[{i}]") for i, x in reversed(list(enumerate(v))))
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        elif isinstance(v, int) and abs(v) > MAX_INT:
            raise BadNumber("huge", at, str(v), what)
        elif isinstance(v, float) and not math.isfinite(v):
            raise BadNumber("not-finite", at, _text(v), what)
        elif v < 0 and at.rsplit(".", 1)[-1] in at_least_zero:
            raise BadNumber("negative", at, _text(v), what)
        elif at_most and v > at_most.get(at.rsplit(".", 1)[-1], math.inf):
            raise BadNumber("too-large", at, _text(v), what, limit=at_most[at.rsplit(".", 1)[-1]])


def check_link(alpha, bw, where: str = "link", what: str = "file") -> tuple[float, float]:
    """(alpha, bw) as floats when a link's α (s per message) and β (bytes/s per direction) are
    numbers within the physical bounds above; else BadNumber naming `where`.alpha / .bw."""
    for name, v, rule, ok in (("alpha", alpha, "alpha", lambda x: 0 <= x <= MAX_ALPHA),
                              ("bw", bw, "bw", lambda x: MIN_BW <= x <= MAX_BW)):
        field = f"{where}.{name}" if where else name
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise BadNumber(rule, field, _text(v) if isinstance(v, (int, float, str, type(None))) else repr(v), what)
        check_numbers(v, what, where=field)
        if not ok(v):
            raise BadNumber(rule, field, _text(v), what)
    return float(alpha), float(bw)
