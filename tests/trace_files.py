"""Saved-trace helpers for tests: a version-3 file's compact columns edited as numbers, and the
version-2 layout (columns as lists of numbers) the app still opens."""

import json

import numpy as np

from simcore.trace import ROW
from simcore.trace_io import decode_column, encode_column


def column(data: dict, name: str) -> np.ndarray:
    """One message column of a version-3 dict, decoded (a writable copy)."""
    return decode_column(data["columns"][name], name, ROW[name], data["n_messages"]).copy()


def edit_column(data: dict, name: str, i: int, value):
    """Set message i's `name` in a version-3 dict (as a hand-edited file would have it)."""
    col = column(data, name)
    col[i] = value
    data["columns"][name] = encode_column(col)


def as_version_2(data: dict) -> dict:
    """A version-3 dict as version 2 wrote it: columns and explicit sets as lists of numbers."""
    out = dict(data, version=2, columns={name: column(data, name).tolist() for name in ROW.names})
    ex = data["explicit"]
    out["explicit"] = decode_column(ex, "explicit", np.int32, ex["shape"][0]).tolist()
    return out


def version_2_text(data: dict) -> str:
    """A version-3 dict laid out exactly as version 2's write_json wrote its files."""
    d = as_version_2(data)
    parts = [f'{{"schema": {json.dumps(d["schema"])}, "version": 2,\n"collectives": [',
             ",\n".join(json.dumps(c) for c in d["collectives"]),
             f'],\n"keys": {json.dumps(d["keys"])},\n"n_messages": {d["n_messages"]},\n"columns": {{']
    for i, name in enumerate(ROW.names):
        conv = (lambda v: "true" if v else "false") if name == "reduce" else repr
        parts.append((",\n" if i else "") + f'"{name}": [' + ",".join(map(conv, d["columns"][name])) + "]")
    parts.append('},\n"explicit": [' + ",".join(map(str, d["explicit"])) + "],\n"
                 f'"compute_fields": {json.dumps(d["compute_fields"])},\n"computes": [')
    parts.append(",\n".join(json.dumps(c) for c in d["computes"]))
    parts.append("],\n" f'"meta": {json.dumps(d["meta"])}}}\n')
    return "".join(parts)
