"""
simcore.check (simcore.checker) — is a collective right? Its results against numpy, its messages against what
the op needs, its time against the closed form (or the lower bound).

    report = simcore.check(comm, inputs, outputs, "all-reduce")
    report.ok            # every result equals numpy's and the messages explain it
    report.first_error   # the first thing that went wrong, in words (None when ok)
    report.findings      # the same as data, earliest first: Finding(kind, step, device, chunk, have, need, …)
    print(report)        # the verdict, every error, the time

What the op needs (numpy's definition; inputs[d] is device d's array, outputs[d] its result):
    all-reduce      every device: sum(inputs) — every chunk sums every device's data
    all-gather      every device: concatenate(inputs) — chunk c is the data of the device
                    that held it at the start
    reduce-scatter  device d: np.array_split(sum(inputs), n)[owner[d]] — its own chunk
                    complete (owner: given, else the chunk it ends holding complete, else d)

The messages are replayed in the order they were sent with the engine's one rule (a copy
carries the sender's contributors, a reduce unites them; simcore.holdings), so the checker
names the step and message after which a chunk went wrong: a chunk that ends summing the
wrong devices, a device's data added twice, a chunk sent to a device that already holds it
(named at that step, not where the chunk it should have sent goes missing), a message sent
before the sender holds its data, a device that never receives a chunk it needs. Steps are
counted from 1, as the app shows them ("Step 3 of 3").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .contributors import who_ranges
from .trace import SWITCH



@dataclass(frozen=True)
class Finding:
    """One thing the checker found, as data (an app words it in its own language) and as the English
    sentence `text` (what CheckReport.errors holds; made from the fields by `finding`). Fields a kind
    does not use stay None. `step` counts from 1, as the app shows it ("Step 3 of 3"); the trace's
    Message.step, the engine's, counts from 0.

    kind:
      "no-collective"  the trace has no `op` to check
      "not-held"       in `step`, `device` sends `chunk` to `dst` but does not hold it
      "too-early"      in `step`, `device` sends `chunk` to `dst` at `t` (s), before it holds that
                       data (it lands at `lands`)
      "resent"         in `step`, `device` sends `chunk` (`sent`: its contributors) to `dst`, which
                       already holds that data (`have`: what dst holds of it then; a larger sum is
                       replaced by a smaller one): the message is the mistake, whatever goes wrong after it
      "twice"          in `step`, `device` adds `have`'s data to its `chunk` a second time
      "never"          `device` never receives `chunk`, which `op` needs there (`need`: its contributors)
      "wrong"          after `step`, `device`'s `chunk` holds `have` (last sent by `src`); `op` needs `need`
      "values"         `device`'s result differs from numpy's: `element` is `got`, numpy gives `want`
                       (`messages_ok`: the messages carried the right contributors all the same)
      "count"          the wrong number of inputs (`got`) and `outputs` for `want` devices, or of values
                       on `device` (`got`; the op gives `want`)
    """

    kind: str
    text: str
    op: str = ""
    step: int | None = None
    device: int | None = None
    chunk: int | None = None
    dst: int | None = None
    src: int | None = None
    have: frozenset | None = None
    need: frozenset | None = None
    t: float | None = None
    lands: float | None = None
    element: int | None = None
    got: float | None = None
    want: float | None = None
    messages_ok: bool = False
    outputs: int | None = None  # "count" without a device: how many outputs came (`got`: inputs)
    sent: frozenset | None = None  # "resent": the contributors the message carries

    def __str__(self):
        return self.text


def _data(who) -> str:
    """Whose data a chunk holds: "GPU 0's data", "GPUs {0, 1}'s data", "no GPU's data"."""
    return f"{gpus(who)}'s data"


def sentence(kind: str, op: str = "", **f) -> str:
    """The English sentence of a finding of `kind` from its fields (Finding's; step from 1)."""
    if kind == "no-collective":
        return f"the trace has no {op or 'collective'} to check"
    if kind == "not-held":
        return f"in step {f['step']}, GPU {f['device']} sends chunk {f['chunk']} to GPU {f['dst']} but does not hold it"
    if kind == "too-early":
        return (f"in step {f['step']}, GPU {f['device']} sends chunk {f['chunk']} to GPU {f['dst']} at {_us(f['t'])}, "
                f"before it holds that data (it lands at {_us(f['lands'])})")
    if kind == "resent":
        head = f"in step {f['step']}, GPU {f['device']} sends chunk {f['chunk']} to GPU {f['dst']}, which already "
        if f["sent"] == f["have"]:
            return head + f"holds it ({_data(f['have'])})"
        return head + (f"holds that data in a larger sum ({gpus(f['have'])}): the copy replaces that sum with "
                       f"{_data(f['sent'])}")
    if kind == "twice":
        return (f"in step {f['step']}, GPU {f['device']} adds {_data(f['have'])} to its chunk {f['chunk']} a "
                f"second time")
    if kind == "never":
        need = f["need"]
        if op == "all-gather" or len(need) < 2:
            return f"GPU {f['device']} never receives chunk {f['chunk']} ({_data(need)}), which {op} needs"
        return (f"GPU {f['device']} never receives chunk {f['chunk']}, which {op} needs there (it needs the sum of "
                f"{gpus(need)})")
    if kind == "wrong":
        have, need = f["have"], f["need"]
        what = f"sums {gpus(have)}" if len(have) > 1 else f"holds only {_data(have)}" if have else "holds no GPU's data"
        want = gpus(need) if op != "all-gather" and len(need) > 1 else _data(need)
        return (f"after step {f['step']}, GPU {f['device']}'s chunk {f['chunk']} {what} (last sent to it by GPU "
                f"{f['src']}); {op} needs {want}")
    if kind == "values":
        text = (f"GPU {f['device']}'s result differs from numpy's {op}: element {f['element']} is {f['got']:.6g}, "
                f"numpy gives {f['want']:.6g}")
        if f.get("messages_ok"):
            text += " although its messages carry the right contributors: the data moved is not what the messages say"
        return text
    if kind == "count" and f.get("device") is None:
        return (f"expected {int(f['want'])} inputs and {int(f['want'])} outputs (one per device), got "
                f"{int(f['got'])} and {f['outputs']}")
    if kind == "count":
        return f"GPU {f['device']}'s result has {int(f['got'])} values; {op} gives {int(f['want'])}"
    raise ValueError(f"no finding of kind {kind!r}")


def finding(kind: str, op: str = "", **fields) -> Finding:
    """A Finding with its sentence made from its fields (sets given as any iterable of devices)."""
    for k in ("have", "need", "sent"):
        if fields.get(k) is not None:
            fields[k] = frozenset(fields[k])
    return Finding(kind, sentence(kind, op, **fields), op, **fields)


@dataclass
class CheckReport:
    """The checker's verdict. Times in seconds."""

    ok: bool
    op: str
    algo: str
    errors: list = field(default_factory=list)  # sentences, the earliest first
    findings: list = field(default_factory=list)  # the same as Finding data, in the same order
    values_ok: bool = True
    time: float = 0.0  # the collective's measured time (s)
    t_model: float | None = None  # the registered closed form (s), when the algorithm is known
    t_bound: float | None = None  # the lower bound: α + bytes through the busiest port / β (s)
    time_text: str = ""
    busiest: float = 0.0  # bytes through the busiest port (the lower bound's numerator)

    @property
    def first_error(self) -> str | None:
        return self.errors[0] if self.errors else None

    @property
    def verdict(self) -> str:
        """One line: what the app's formula panel shows."""
        if self.ok:
            return f"{self.op} ({self.algo}) is correct: every device's result equals numpy's."
        return f"{self.op} ({self.algo}) is wrong: {self.first_error}"

    def __str__(self):
        lines = [self.verdict]
        lines += [f"  - {e}" for e in self.errors[1:6]]
        if len(self.errors) > 6:
            lines.append(f"  … and {len(self.errors) - 6} more")
        if self.time_text:
            lines.append(self.time_text)
        return "\n".join(lines)


def gpus(who) -> str:
    """A set of devices in words: 'GPUs {0, 2}', 'GPU 3', 'no GPU'; long sets as ranges."""
    s = sorted(who)
    if not s:
        return "no GPU"
    if len(s) == 1:
        return f"GPU {s[0]}"
    return "GPUs {" + (", ".join(map(str, s)) if len(s) <= 8 else who_ranges(s).replace("-", "–").replace("+", ", ")) + "}"


def _us(t: float) -> str:
    return f"{t * 1e6:.3f} µs"


def check(comm_or_trace, inputs=None, outputs=None, op: str | None = None, coll: int | None = None,
          owner=None, link=None) -> CheckReport:
    """
    Check one collective of a Comm's trace (or a Trace): see the module docstring.

    inputs: n arrays, device d's data before the collective (all-gather: its shard);
    outputs: n arrays, what each device ends with (None: check the messages only).
    op: "all-reduce" | "all-gather" | "reduce-scatter" (default: the collective's own op);
    coll: which collective (default: the last one of that op); owner[d]: the chunk device d
    keeps in a reduce-scatter; link: an object with .alpha (s) and .bw (bytes/s) for the
    time check (default: the Comm's link, or the one saved with the trace).
    """
    trace = getattr(comm_or_trace, "trace", comm_or_trace)
    if link is None:
        link = getattr(comm_or_trace, "link", None)
    if link is None and isinstance(getattr(trace, "meta", {}).get("link"), dict):
        m = trace.meta["link"]
        link = type("Link", (), {"alpha": float(m["alpha"]), "bw": float(m["bw"])})()
    colls = [c for c in trace.collectives if op is None or c.op == op]
    if coll is not None:
        colls = [trace.collectives[coll]]
    if not colls:
        f = finding("no-collective", op or "")
        return CheckReport(False, op or "?", "?", [f.text], [f])
    c = colls[-1]
    op = op or c.op
    errors: list[tuple] = []  # (step, message index, Finding)
    final, last_write = _replay(trace, c, errors)
    need = _needs(op, c, owner, final)
    for d in range(c.n):
        for ch, want in need[d].items():
            have = final[d].get(ch, (None, 0))[0]
            if have == want:
                continue
            w = last_write.get((d, ch))
            if have is None or w is None:
                errors.append((c.n_steps, 1 << 62, finding("never", op, device=d, chunk=ch, need=want)))
            else:
                step, i, src = w
                errors.append((step, i, finding("wrong", op, step=step + 1, device=d, chunk=ch, src=src, have=have,
                                                need=want)))
    errors.sort(key=lambda e: (e[0], e[1]))
    found = [e[2] for e in errors]
    values_ok = True
    if inputs is not None and outputs is not None:
        values_ok, bad = _values(op, c.n, inputs, outputs, need)
        if not values_ok:
            if not found and bad.kind == "values":
                fields = {k: v for k, v in bad.__dict__.items() if k not in ("kind", "text", "op")}
                bad = finding("values", op, **{**fields, "messages_ok": True})
            found.append(bad)
    words = [f.text for f in found]
    rep = CheckReport(not words and values_ok, op, c.algo, words, found, values_ok, c.t_end - c.t_start)
    _time(rep, trace, c, link)
    return rep


def _masks(trace, c) -> list[int]:
    """Every message's contributors as a Python int bitmask (bit d: GPU d), decoded a block at a time."""
    from .holdings import members

    out = []
    for lo in range(c.first_msg, c.last_msg, 4096):
        r = trace.rows(lo, min(lo + 4096, c.last_msg))
        packed = np.packbits(members(r, c.n, trace.explicit), axis=1, bitorder="little")
        out += [int.from_bytes(row, "little") for row in map(bytes, packed)]
    return out


def _set_of(mask: int, cache={}) -> frozenset:  # noqa: B006 — a shared cache of decoded sets, on purpose
    s = cache.get(mask)
    if s is None:
        if len(cache) > 1 << 16:
            cache.clear()
        s = cache[mask] = frozenset(i for i in range(mask.bit_length()) if mask >> i & 1)
    return s


def _replay(trace, c, errors):
    """Replay collective c's messages in the order sent. Returns {device: {chunk: (set, time)}}
    at the end and, per (device, chunk), the (step, message, sender) that last wrote it.
    A message's contributors must be held by its sender when it starts: each slot keeps its
    history of (time, contributors), and the sender's contributors at t_start must contain what
    it sent. Contributors are int bitmasks here (a ring at n = 256 has 130,560 messages)."""
    held = {}  # (device, chunk) -> [mask, time]
    history = {}
    for d, h in enumerate(c.initial):
        for ch, who in h:
            m = sum(1 << w for w in who)
            held[(d, ch)] = [m, c.t_start]
            history[(d, ch)] = [(c.t_start, m)]
    last_write = {}
    r = trace.rows(c.first_msg, c.last_msg)
    cols = [r[f].tolist() for f in ("src", "dst", "chunk", "step", "t_start", "t_end", "reduce")]
    every = range(max(c.n_chunks, 1))
    for i, (src, dst, chunk, step, t0, t1, red), who in zip(range(len(r)), zip(*cols), _masks(trace, c)):
        eps = 1e-12 * max(1e-6, abs(t0))
        for ch in (every if chunk < 0 else (chunk,)):
            past = history.get((src, ch))
            if src == SWITCH:
                pass
            elif not past or not who:
                errors.append((step, i, finding("not-held", step=step + 1, device=src, chunk=ch, dst=dst)))
            else:
                then = None
                for t, m in past:
                    if t <= t0 + eps:
                        then = m
                if then is None or who & ~then:
                    lands = min((t for t, m in past if not who & ~m), default=past[-1][0])
                    errors.append((step, i, finding("too-early", step=step + 1, device=src, chunk=ch, dst=dst, t=t0,
                                                    lands=lands)))
            old = held.get((dst, ch))
            if red and old is not None:
                twice = old[0] & who
                if twice:
                    errors.append((step, i, finding("twice", step=step + 1, device=dst, chunk=ch,
                                                    have=_set_of(twice))))
                new = [old[0] | who, max(old[1], t1)]
            else:
                if old is not None and who and not who & ~old[0] and dst != SWITCH:
                    # a copy of what dst already holds: wasted at best, and a sign the schedule sent
                    # the wrong chunk here (the one dst lacks never comes); said at this step
                    errors.append((step, i, finding("resent", step=step + 1, device=src, chunk=ch, dst=dst,
                                                    have=_set_of(old[0]), sent=_set_of(who))))
                new = [who, t1]
            held[(dst, ch)] = new
            history.setdefault((dst, ch), []).append((t1, new[0]))
            last_write[(dst, ch)] = (step, i, src)
    final = {d: {} for d in range(c.n)}
    final[SWITCH] = {}
    for (d, ch), (m, t) in held.items():
        final[d][ch] = (_set_of(m), t)
    return final, last_write


def _needs(op, c, owner, final) -> list[dict]:
    """Per device, {chunk: the contributors the op needs there at the end}."""
    n, nc = c.n, max(c.n_chunks, 1)
    everyone = frozenset(range(n))
    if op == "all-gather":
        origin = {}
        for d, h in enumerate(c.initial):
            for ch, who in h:
                origin.setdefault(ch, frozenset(who))
        return [{ch: origin.get(ch, frozenset()) for ch in range(nc)} for _ in range(n)]
    if op == "reduce-scatter":
        out = []
        for d in range(n):
            if owner is not None:
                k = int(owner[d])
            else:
                done = [ch for ch, (who, _) in final[d].items() if who == everyone]
                k = done[0] if len(done) == 1 else d % nc
            out.append({k: everyone})
        return out
    return [{ch: everyone for ch in range(nc)} for _ in range(n)]


def _values(op, n, inputs, outputs, need):
    """(all equal, the Finding about the first device that differs, or None)."""
    xs = [np.asarray(x, dtype=float).ravel() for x in inputs]
    if len(xs) != n or len(outputs) != n:
        return False, finding("count", op, got=float(len(xs)), want=float(n), outputs=len(outputs))
    if op == "all-gather":
        want = [np.concatenate(xs)] * n
    elif op == "reduce-scatter":
        pieces = np.array_split(np.sum(xs, axis=0), n)
        want = [pieces[next(iter(need[d]))] for d in range(n)]
    else:
        want = [np.sum(xs, axis=0)] * n
    for d in range(n):
        got = np.asarray(outputs[d], dtype=float).ravel()
        if got.shape != want[d].shape:
            return False, finding("count", op, device=d, got=float(got.size), want=float(want[d].size))
        scale = float(np.max(np.abs(want[d]))) if want[d].size else 0.0
        if not np.allclose(got, want[d], rtol=1e-7, atol=1e-9 * max(scale, 1e-300)):
            j = int(np.argmax(np.abs(got - want[d])))
            return False, finding("values", op, device=d, element=j, got=float(got[j]), want=float(want[d][j]))
    return True, None


def _time(rep, trace, c, link):
    """The measured time against the registered closed form, else against the lower bound."""
    from .algorithms import ALGORITHMS, t_formula

    if link is None or c.n < 2 or c.last_msg == c.first_msg:
        rep.time_text = f"time {_us(rep.time)}"
        return
    if c.algo in ALGORITHMS.get(c.op, {}):
        try:
            rep.t_model = float(t_formula(c.algo, c.n, c.nbytes, link.alpha, link.bw, op=c.op))
        except (ValueError, KeyError):
            rep.t_model = None
    r = trace.rows(c.first_msg, c.last_msg)
    busiest = 0.0
    for side in ("src", "dst"):
        keep = r[side] != SWITCH
        if keep.any():
            busiest = max(busiest, float(np.bincount(r[side][keep], weights=r["nbytes"][keep]).max()))
    rep.t_bound = link.alpha + busiest / link.bw
    rep.busiest = busiest
    if rep.t_model is not None:
        ratio = rep.time / rep.t_model if rep.t_model > 0 else float("inf")
        same = abs(ratio - 1) < 1e-6
        rep.time_text = (f"time {_us(rep.time)}: " + ("equals" if same else f"{ratio:.3g}× ")
                         + f" the {c.algo} closed form {_us(rep.t_model)}").replace("  ", " ")
    else:
        rep.time_text = (f"time {_us(rep.time)}: {rep.time / rep.t_bound:.3g}× the lower bound {_us(rep.t_bound)} "
                         f"(α + {busiest:,.0f} bytes through the busiest port / β)")
