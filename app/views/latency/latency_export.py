"""
What the decode-latency tab writes: a plot as PNG (its size on screen) or SVG (lines and text
stay vectors), and the plotted numbers as CSV. Each writer takes a temporary path;
export.atomic_write moves it into place only when it is complete. LatencyExports: the view's
export methods and menu (mixed into LatencyView).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (pg.exporters is not imported by pyqtgraph itself)
from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QFileDialog

from ... import theme
from ...files import ExportError, atomic_write
from ...core.latency_model import FFN_VARIANTS, PLOTS, TERMS, fits_hbm


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


def _tr(text):
    return QCoreApplication.translate("LatencyView", text)


class LatencyExports:
    """
    The decode-latency view's exports, mixed into LatencyView: `export_png / export_svg /
    export_csv(path, which)` write plot `which` ("latency" or "ffn") through export.atomic_write,
    `csv_text(which)` is the CSV, `_export_dialog` the export menu's file dialog. They read the
    view's plots (latency_widget, ffn_widget, ffn_items), its sweep and parameters, and report
    through its `_show_error`.
    """

    def _export_item(self, which):
        if which not in PLOTS:
            raise ValueError(f"unknown plot {which!r}; choose one of {', '.join(PLOTS)}")
        return (self.latency_widget if which == "latency" else self.ffn_widget).ci

    def _export(self, path, which, write) -> bool:
        try:
            atomic_write(path, write)
        except (ExportError, ValueError) as e:
            self._show_error(str(e))
            return False
        self._show_error("")
        return True

    def export_png(self, path, which="latency") -> bool:
        """Plot `which` ("latency" or "ffn"), legend included, as a PNG of its size on screen."""
        return self._export(path, which, lambda tmp: write_png(self._export_item(which), tmp))

    def export_svg(self, path, which="latency") -> bool:
        """Plot `which` as SVG, legend included: lines and text stay vectors."""
        return self._export(path, which, lambda tmp: write_svg(self._export_item(which), tmp))

    def csv_text(self, which="latency") -> str:
        """The plotted data of `which` as CSV text (see csv_text)."""
        self._export_item(which)
        if which == "ffn":
            return csv_text(which, self.ffn_items)
        extra = {"bound": self._sweep["bound"], "fits_hbm": fits_hbm(self._params, self._sweep),
                 "tp_degree": np.isin(self._sweep["n"], self._valid)}
        if "t_step_overlap" in self._sweep:  # the overlapped curve, when it is drawn
            extra = {"t_step_overlap_ms": self._sweep["t_step_overlap"] * 1e3, **extra}
        # every n of the sweep (NaN where the machine has no such group), in the units drawn
        cols = {t: SimpleNamespace(xData=self._sweep["n"], yData=self._sweep[t] * 1e3) for t in TERMS}
        return csv_text(which, cols, extra)

    def export_csv(self, path, which="latency") -> bool:
        def write(tmp):
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        try:
            text = self.csv_text(which)
        except ValueError as e:
            self._show_error(str(e))
            return False
        return self._export(path, which, write)

    def _export_dialog(self, which, fmt, fn):
        ext = fmt.lower()
        path, _ = QFileDialog.getSaveFileName(self, _tr("Export"), f"decode-{which}.{ext}",
                                              f"{fmt} (*.{ext})")
        if path:
            fn(path, which)
