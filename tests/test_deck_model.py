"""Deck files: the schema's checks (a hostile file is refused in one sentence), the round trip, and
the built-in lecture deck: the seed's sections in order, each talking point's numbers what its
scene's engine run shows."""

import json
import os

import pytest

from app.deck import model
from app.deck.model import DeckFileError, builtin_path, dumps, loads


def _lecture():
    return loads(open(builtin_path(), encoding="utf-8").read())


def _doc(**scene):
    base = {"title": {"en": "t", "zh": "标题"}, "points": [{"en": "a", "zh": "甲"}, {"en": "b", "zh": "乙"}],
            "scenario": {"kind": "all-gather", "n": 4, "algo": "ring", "nbytes": 1024, "link": "nvlink4"}}
    base.update(scene)
    return {"schema": "shard-lab-deck", "version": 1, "scenes": [base]}


def _doc_run(**scene):
    d = _doc(**scene)
    del d["scenes"][0]["scenario"]
    return d


def test_a_scene_of_a_saved_run_round_trips():
    deck = loads(json.dumps(_doc_run(run="runs/my_ring.json.gz", step=4)))
    s = deck.scenes[0]
    assert s.run == "runs/my_ring.json.gz" and s.scenario is None and not s.file and s.step == 4
    assert loads(dumps(deck)).scenes == deck.scenes and '"run": "runs/my_ring.json.gz"' in dumps(deck)


def test_how_far_into_its_step_a_scene_opens_round_trips():
    deck = loads(json.dumps(_doc(step=3, at=1)))
    assert deck.scenes[0].at == 1.0 and loads(dumps(deck)).scenes == deck.scenes
    assert '"at"' not in dumps(loads(json.dumps(_doc(step=3)))) and loads(json.dumps(_doc(step=3))).scenes[0].at == 0.3


def test_the_lecture_deck_follows_the_seed_in_order():
    deck = _lecture()
    ids = [s.id for s in deck.scenes]
    assert ids == ["shard", "all-gather", "reduce-scatter", "all-reduce", "algos", "matmul-1", "matmul-2",
                   "matmul-3", "matmul-4", "tp-forward", "gqa", "decode", "pope", "dgx", "tpu",
                   "mesh-notation", "mesh-matmul", "mesh-2d-ws"]  # the lecture's next part: the mesh
    for s in deck.scenes:
        assert 2 <= len(s.points) <= 4
        assert s.title.zh and all(p.zh and p.en for p in s.points)
    # the four matmul cases are named by their notation, as the engine names them
    from app.core.scenarios import Scenario, build_run

    for k in (1, 2, 3, 4):
        run = build_run(Scenario(kind=f"matmul-{k}", n=4))
        a, b, c = run.matmul.notation
        assert deck.scenes[ids.index(f"matmul-{k}")].title.en == f"{a} · {b} → {c}"


def test_a_scene_needs_neither_a_title_nor_two_talking_points():
    """README names neither as required: one talking point, none, or no title is a scene (named by its
    number), not a deck refused whole."""
    doc = _doc(points=[{"en": "only one"}])
    untitled = dict(doc["scenes"][0])
    del untitled["title"]
    untitled["points"] = []
    doc["scenes"].append(untitled)
    deck = loads(json.dumps(doc))
    assert [len(s.points) for s in deck.scenes] == [1, 0]
    assert deck.scenes[1].title.en == "Scene 2" and deck.scenes[1].title.zh == "第 2 页"
    assert loads(dumps(deck)).scenes == deck.scenes


def test_round_trip_is_identity():
    deck = _lecture()
    again = loads(dumps(deck))
    assert again.scenes == deck.scenes and again.title == deck.title


@pytest.mark.parametrize("text, words", [
    ("{not json", "not valid JSON"),
    ("[" * 100000 + "]" * 100000, "nested"),
    (json.dumps({"schema": "shard-lab-scenario", "version": 1}), "not a Shard Lab deck"),
    (json.dumps({"schema": "shard-lab-deck", "version": 2, "scenes": []}), "version 2"),
    (json.dumps({"schema": "shard-lab-deck", "version": 1, "scenes": []}), "1 to"),
    (json.dumps({"schema": "shard-lab-deck", "version": 1, "scenes": [{}] * 1000}), "1 to"),
    (json.dumps({**_doc(), "__class__": 1}), "Unknown field"),
    (json.dumps(_doc(points=[{"en": str(k)} for k in range(5)])), "0 to 4"),
    (json.dumps(_doc(points=[{"en": "x" * 5000}, {"en": "y"}])), "at most"),
    (json.dumps(_doc(file="x.json")), "one of a"),
    (json.dumps(_doc(run="x.json")), "one of a"),
    (json.dumps(_doc_run(run="")), "saved run"),
    (json.dumps(_doc_run(run=["x"])), "saved run"),
    (json.dumps(_doc(tab="nope")), "tab"),
    (json.dumps(_doc(step=-1)), "step"),
    (json.dumps(_doc(step=True)), "step"),
    (json.dumps(_doc(step=2, at=0)), "at"),
    (json.dumps(_doc(step=2, at=1.5)), "at"),
    (json.dumps(_doc(step=2, at="end")), "at"),
    (json.dumps(_doc(title={"fr": "x"})), "title"),
])
def test_a_bad_deck_is_refused_in_one_sentence(text, words):
    with pytest.raises(DeckFileError) as e:
        loads(text)
    msg = str(e.value)
    assert words in msg and "\n" not in msg and msg.endswith(".")


def test_files_that_are_not_decks_are_refused_without_reading_them(tmp_path, qapp):
    from app.deck.scene_open import load_deck

    big = tmp_path / "big.json"
    big.write_bytes(b" " * (model.MAX_FILE_BYTES + 10))
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path, words in ((big, "bytes"), (binary, "UTF-8"), (fifo, ""), (tmp_path / "missing.json", "")):
        with pytest.raises(DeckFileError) as e:
            load_deck(str(path))
        assert words in str(e.value) and "\n" not in str(e.value)


# -- the talking points say what the scene shows ---------------------------------------------
def _us(t):
    return f"{t * 1e6:.3g} µs" if t * 1e6 < 100 else f"{t * 1e6:.1f} µs"


def _checks(sid, run):
    """The numbers a scene's points state, computed from its own engine run (or the seed's formula)."""
    tr = run.trace
    sc = run.scenario
    n = sc.n
    steps = len(run.index.stops) - 1 if run.index.stops else 0
    T = tr.collectives[-1].t_end if tr.collectives else 0.0
    if sid == "shard":
        return [f"{n} chunks of {int(sc.nbytes) // n // 1024} KiB", "1 MiB"]
    if sid in ("all-gather", "reduce-scatter"):
        chunk = int(sc.nbytes) // n // 1024
        msgs = len(tr.messages)
        assert msgs == n * (n - 1) and steps == n - 1
        out = [f"{n - 1} steps", _us(T)]
        step_cost = f"{run.link.alpha * 1e6:.2g} µs + {sc.nbytes / n / run.link.bw * 1e6:.2f} µs"
        return out + ([f"{chunk} KiB chunk", step_cost]
                      if sid == "all-gather" else [f"{msgs} messages", f"{chunk} KiB"])
    if sid == "all-reduce":
        assert steps == 2 * (n - 1)
        return [f"{steps} steps", f"{len(tr.messages)} messages", _us(T)]
    if sid == "algos":
        from app.core.scenarios import build_run

        ring = build_run(sc.with_changes(algo="ring"))
        ring_T = ring.trace.collectives[-1].t_end
        assert steps == 3 and len(ring.index.stops) - 1 == 14
        return [f"{steps} steps", f"{T * 1e6:.2f} µs", "14 steps", _us(ring_T), "8 KiB"]
    if sid.startswith("matmul-"):
        assert run.matmul.max_err < 1e-9
        if sid == "matmul-1":
            assert len(tr.messages) == 0
            return ["0 messages"]
        return [f"{steps} steps" if sid != "matmul-3" else f"{steps} ring steps", f"{len(tr.messages)} messages",
                f"n = {n}"]
    if sid == "tp-forward":
        cfg = run.tp.cfg
        assert run.tp.max_abs_diff < 1e-10
        return [f"{cfg.n_heads // n} of the {cfg.n_heads} query heads", f"{cfg.d_ff // n} of d_ff = {cfg.d_ff}",
                f"{len(tr.collectives)} collectives for {cfg.n_layers} layers", "1e-10"]
    if sid == "gqa":
        from simcore.shard_lab import kv_group_of_device

        cfg = run.tp.cfg
        groups = [kv_group_of_device(cfg, n, d) for d in range(n)]
        assert all(g == [d // (n // cfg.n_kv_heads)] for d, g in enumerate(groups))
        return [f"{cfg.n_heads} query heads", f"{cfg.n_kv_heads} KV groups", f"d // {n // cfg.n_kv_heads}",
                f"n passes {cfg.n_kv_heads}"]
    if sid == "pope":
        from simcore.shard_lab import pope_ffn_comm

        E, F, BL, bw = 18432, 73728, 512, 180e9
        t1 = pope_ffn_comm("1d", BL, E, F, 64, bw)
        assert t1 == pope_ffn_comm("1d", BL, E, F, 256, bw)
        t2 = [pope_ffn_comm("2d", BL, E, F, k, bw) for k in (64, 256)]
        return [f"E = {E}", f"{BL} tokens", f"{t1 * 1e6:.0f} µs"] + [f"{t * 1e6:.0f} µs" for t in t2]
    if sid == "dgx":  # NCCL's NVLS Tree: its latency is the wait before the first message; its Tree, the tuner's pick
        topo = run.comm.topology
        algo, _proto, _why = topo.choose("all-reduce", sc.nbytes)
        assert algo == "tree"
        return [f"{_us(T)} for 1 MiB", f"{_us(min(m.t_start for m in tr.messages))} of it", f"{n}",
                f"Tree instead: {_us(topo.time('all-reduce', 'tree', sc.nbytes))}"]
    if sid == "tpu":
        return [f"{_us(T)} for 1 MiB", f"{n}"]
    return []


def test_every_number_a_talking_point_states_is_what_its_scene_shows(qapp):
    from app.core.scenarios import build_run
    from app.deck.scene_open import scenario_file

    deck = _lecture()
    for i, s in enumerate(deck.scenes):
        run = build_run(scenario_file(deck, i).scenario)
        text = " ".join(p.en for p in s.points)
        for want in _checks(s.id, run):
            assert want in text, f"scene {s.id}: {want!r} not in its points"
        # the Chinese points state the same numbers (words differ; numbers with units do not)
        zh = " ".join(p.zh for p in s.points)
        import re

        for num in re.findall(r"\d+(?:\.\d+)?\s?(?:µs|KiB|MiB|GB/s)", text):
            assert num in zh, f"scene {s.id}: {num!r} in English, not in Chinese"
