"""
What the decode-latency tab writes: a plot as PNG (its size on screen) or SVG (lines and text
stay vectors), and the plotted numbers as CSV. Each writer takes a temporary path;
export.atomic_write moves it into place only when it is complete.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (pg.exporters is not imported by pyqtgraph itself)
from PySide6.QtGui import QColor

from . import theme
from .latency_model import FFN_VARIANTS, TERMS


def write_png(item, tmp):
    """`item` (a plot's layout, legend included) as a PNG of its size on screen: pyqtgraph scales
    neither legend text nor cosmetic pens when asked for more pixels."""
    ex = pg.exporters.ImageExporter(item)
    ex.parameters()["background"] = QColor(theme.palette().background)
    img = ex.export(toBytes=True)
    if not img.save(tmp, "PNG"):
        raise OSError(0, "the image could not be encoded")


def write_svg(item, tmp):
    """`item` as SVG (pyqtgraph's SVGExporter)."""
    # a ViewBox applies a new range when the scene next paints; the SVG exporter reads the items
    # without painting, so without this an export right after a change shows the old range
    item.scene().prepareForPaint()
    with _svg_closed_paths_fixed():
        ex = pg.exporters.SVGExporter(item)
        ex.parameters()["background"] = QColor(theme.palette().background)
        data = ex.export(toBytes=True)
    with open(tmp, "wb") as fh:
        fh.write(data)


def csv_text(which, curves, extra=None) -> str:
    """
    The plotted data: latency → n, t_math_ms, t_mem_ms, t_comm_ms, t_step_ms, then the columns
    of `extra` (name → one value per n; booleans written true / false); ffn → n and µs per layer.
    `curves` maps a term or FFN variant to its PlotDataItem: the numbers are the ones drawn.
    """
    if which == "latency":
        cols = {f"{t}_ms": curves[t].yData for t in TERMS}
        n = curves["t_step"].xData
    else:
        cols = {f"ffn_{v}_us": curves[v].yData for v in FFN_VARIANTS}
        n = curves["1d"].xData
    extra = extra or {}
    lines = [",".join(["n", *cols, *extra])]
    for i in range(len(n)):
        row = [str(int(n[i]))] + [repr(float(c[i])) for c in cols.values()] + [_cell(e[i]) for e in extra.values()]
        lines.append(",".join(row))
    return "\n".join(lines) + "\n"


def _cell(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    return str(v)


@contextmanager
def _svg_closed_paths_fixed():
    """
    pyqtgraph 0.14's SVGExporter cannot parse the "Z" (close path) that Qt 6 writes for a
    rectangle, such as the clip path of every ViewBox (pyqtgraph#3495, fixed upstream after
    0.14.0; no option of the exporter avoids it): during one export, drop the Z before its
    coordinate pass. The paths it hits already end on their first point.
    """
    mod = sys.modules["pyqtgraph.exporters.SVGExporter"]
    original = mod.correctCoordinates

    def correct(node, defs, item, options):
        for el in node.getElementsByTagName("path"):
            d = el.getAttribute("d")
            if "Z" in d or "z" in d:
                el.setAttribute("d", d.replace("Z", " ").replace("z", " ").strip())
        return original(node, defs, item, options)

    mod.correctCoordinates = correct
    try:
        yield
    finally:
        mod.correctCoordinates = original
