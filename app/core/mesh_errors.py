"""
A mesh refusal in the user's words and language (Qt-free).

The engine's MeshError says what went wrong in English for the command line and a notebook, and
carries a machine-readable `kind` with the case's `facts` (simcore.mesh.errors.KINDS). Here each
kind becomes one sentence for a lecturer or a student: what is wrong with what they typed and what
would work ("Dimension J has length 128, which does not split over Y = 3: choose Y from 1, 2, 4, 8, …"). The
sentences go through Qt's translator (context "MeshError") when the app has loaded Qt. Nothing
here reads the engine's English: an error without a kind keeps its own words.
"""

from __future__ import annotations

import math

from ..words import translate


def _me(text):
    return translate("MeshError", text)


def _list(items, limit=10) -> str:
    items = [str(x) for x in items]
    more = len(items) > limit
    return _me(", ").join(items[:limit]) + ("…" if more else "")


def _divisors(n, most=256) -> list:
    return [d for d in range(1, min(n, most) + 1) if n % d == 0]


def _nearest(fits, n, k=4) -> list:
    """The k sizes in fits closest to n, ascending."""
    return sorted(sorted(set(fits), key=lambda f: (abs(f - n), f))[:k])


def _over(axes, sizes) -> str:
    """'Y = 3' or 'X × Y = 2 × 3 = 6'."""
    if len(axes) == 1:
        return f"{axes[0]} = {sizes[0]}"
    return f"{' × '.join(axes)} = {' × '.join(map(str, sizes))} = {math.prod(sizes)}"


def _not_split(f) -> str:
    axes, sizes, length = tuple(f["axes"]), tuple(f["sizes"]), int(f["length"])
    dim, over = str(f["dim"]), _over(axes, sizes)
    for i in reversed(range(len(axes))):  # the minor-most axis whose size alone can make it split
        others = math.prod(s for j, s in enumerate(sizes) if j != i)
        if length % others == 0:
            choices = _divisors(length // others)
            return _me("Dimension {dim} has length {length}, which does not split over {over}: choose {axis} from "
                       "{choices}.").format(
                length=length, dim=dim, over=over, axis=axes[i], choices=_list(choices))
    return _me("Dimension {dim} has length {length}, which does not split over {over}: choose axis sizes whose "
               "product divides {length}.").format(length=length, dim=dim, over=over)


def _machine_size(f) -> str:
    fits = _nearest(f["fits"], int(f["n"]))
    return _me("A mesh of {n} devices does not fit {machine}: choose axis sizes whose product is one of "
               "{fits}.").format(n=f["n"], machine=f["machine"], fits=_list(fits))


def _torus(f) -> str:
    need = tuple(f["need"])
    names = "XYZW"
    example = ",".join(f"{names[i] if i < len(names) else f'A{i}'}={s}" for i, s in enumerate(need))
    return _me("{machine} with {n} chips is a {need} torus and each mesh axis is one of its sides: type a mesh "
               "of that shape, e.g. {example}.").format(machine=f["machine"], n=math.prod(need),
                                                        need=" × ".join(map(str, need)), example=example)


def _bad_param(f) -> str:
    how, what = f["expected"]
    param, value = f["param"], f["value"]
    if how == "one of":
        return _me("{param} cannot be {value}: choose one of {choices}.").format(
            param=param, value=value, choices=_list(what))
    if how == "whole number >=":
        return _me("{param} must be a whole number of at least {least}, not {value}.").format(
            param=param, least=what, value=value)
    if how == "multiple of":
        return _me("{param} = {value} is not a multiple of scale {scale}: choose a multiple of {scale}.").format(
            param=param, value=value, scale=what)
    if how == "with":
        return _me("{param} goes together with {other}: give both or neither.").format(param=param, other=what)
    return _me("{param} goes only without {other}: leave it out.").format(param=param, other=what)


SENTENCES = {  # kind -> facts -> one sentence
    "mesh-syntax": lambda f: (_me("Type the mesh as axis names and sizes, e.g. X=2,Y=4.") if not f["part"] else
                              _me("“{part}” is not a name and a size: type NAME=SIZE pairs, e.g. X=2,Y=4.")
                              .format(part=f["part"])),
    "axis-twice": lambda f: _me("Axis {axis} is named twice: give each mesh axis once, e.g. X=2,Y=4.").format(
        axis=f["axis"]),
    "axis-used-twice": lambda f: _me("Axis {axis} shards two things at once: a mesh axis shards at most one "
                                     "dimension of an array (or holds its pending sum).").format(axis=f["axis"]),
    "unknown-axis": lambda f: _me("This mesh has no axis {axis}: its axes are {axes}.").format(
        axis=f["axis"], axes=_list(f["axes"])),
    "needs-axes": lambda f: _me("This program needs {need} mesh axes but the mesh has only {axes}: add an axis, "
                                "e.g. X=2,Y=4.").format(need=f["need"], axes=_list(f["axes"])),
    "same-axis": lambda f: _me("The program's two axes are both {axis}: name two different axes.").format(
        axis=f["axis"]),
    "machine-size": _machine_size,
    "mesh-n": lambda f: _me("The mesh {mesh} has {devices} devices, not n = {n}: n follows the mesh, so change "
                            "its axes instead.").format(mesh=f["mesh"], devices=f["devices"], n=f["n"]),
    "too-many": lambda f: _me("The mesh view draws at most {most} devices and this mesh has {n}: make its axes "
                              "smaller.").format(most=f["most"], n=f["n"]),
    "torus-shape": _torus,
    "not-split": _not_split,
    "mixed-partial": lambda f: _me("A pending {a} cannot become a pending {b}: reduce it first (to Replicate or "
                                   "Shard), then start the other.").format(a=f["ops"][0], b=f["ops"][-1]),
    "shard-to-partial": lambda f: _me("A shard cannot become a pending sum over {axis}: a shard is a piece of the "
                                      "array, not a term of its sum. Go to Replicate over {axis} first.").format(
        axis=f["axis"]),
    "spec-too-long": lambda f: _me("The layout {spec} has {entries} entries but the array has {ndim} dimensions: "
                                   "give at most {ndim}.").format(spec=f["spec"], entries=f["entries"],
                                                                  ndim=f["ndim"]),
    "unknown-program": lambda f: _me("There is no mesh program “{program}”: choose one of {programs}.").format(
        program=f["program"], programs=_list(f["programs"], 20)),
    "unknown-parameter": lambda f: _me("{program} has no parameter “{param}”: its parameters are {params}.").format(
        program=f["program"], param=f["param"], params=_list(f["params"], 20)),
    "bad-parameter": _bad_param,
}


def mesh_error_text(e: BaseException) -> str | None:
    """The sentence for a MeshError with a kind (translated when Qt has a translator), else None."""
    kind = getattr(e, "kind", None)
    words = SENTENCES.get(kind)
    return words(e.facts) if words is not None else None
