"""
A deck's handout: one landscape page per scene — its title, its picture at the scene's step and
its talking points — as a PDF (A4 or US Letter, QPdfWriter) or as numbered PNGs (01-….png).
Each scene is photographed in a hidden twin of the window (its size, never on screen): the live
window, which the class may be watching, stays on its scene. A view with a control column (the
decode latency's) is photographed as presentation mode shows it: the plot, not the widgets.
A scene that cannot open is named and skipped (`export_*` return the skipped sentences), and the
pages' footers count the pages printed.
"""

from __future__ import annotations

import os
import re

from PySide6.QtCore import QBuffer, QCoreApplication, QEvent, QIODevice, QMarginsF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter, QTextDocument

from .model import Deck
from .scene_open import SceneError, bad_scenes, open_scene, wait_for_scene

PAGE_SIZES = {"a4": QPageSize.PageSizeId.A4, "letter": QPageSize.PageSizeId.Letter}
PNG_SIZE = (1920, 1080)
PICTURE_SIZE = (1600, 900)  # the window size the pictures are taken at (the CLI's; the app keeps its own)


def camera_window(window):
    """A hidden twin of `window` (its class and size; built on the worker thread as it builds) in
    which scenes are opened to be photographed. Close it with close_camera."""
    from ..state import Scenario, ScenarioModel

    cam = type(window)(ScenarioModel(Scenario(), sync=window.model.worker.sync))
    cam.setObjectName("handoutCamera")
    cam.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    cam.resize(window.size())
    cam.show()
    QCoreApplication.processEvents()
    return cam


def close_camera(cam):
    cam.playback.pause()
    cam.close()
    cam.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def photograph(cam):
    """The camera's tab as the class would see it: a view with a control column (set_presenting: the
    decode latency's model, chip, batch… widgets) drops it, as presentation mode does."""
    page = cam.tabs.currentWidget()
    view = page.view() if hasattr(page, "view") else page
    present = getattr(view, "set_presenting", None)
    if present is not None and hasattr(view, "controls"):
        present(True)
        for _ in range(2):
            QCoreApplication.processEvents()
    return page.grab().toImage()


def scene_pictures(window, deck: Deck):
    """Yield (index, scene, QImage of the scene's view) for every scene that opens, photographed in a
    hidden twin of `window` (camera_window); skipped scenes are yielded as (i, None, reason)."""
    bad = bad_scenes(deck)
    cam = camera_window(window)
    try:
        for i, scene in enumerate(deck.scenes):
            if i in bad:
                yield i, None, bad[i]
                continue
            try:
                open_scene(cam, deck, i)
            except SceneError as e:
                yield i, None, str(e)
                continue
            wait_for_scene(cam)  # built on the worker thread in the app: its picture once it is there
            for _ in range(3):  # queued repaints of the views, then the timeline's first layout
                QCoreApplication.processEvents()
            yield i, scene, photograph(cam)
    finally:
        close_camera(cam)


def _pages(window, deck: Deck):
    """(pages, skipped): every scene that opens as (index, scene, PNG bytes of its picture), in order
    (kept small: a footer needs the number of pages before the first is painted), and the skipped
    scenes' sentences."""
    pages, skipped = [], []
    for i, scene, pic in scene_pictures(window, deck):
        if scene is None:
            skipped.append(pic)
            continue
        buf = QBuffer()
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        pic.save(buf, "PNG")
        pages.append((i, scene, bytes(buf.data())))
    return pages, skipped


def _image(png: bytes) -> QImage:
    img = QImage()
    img.loadFromData(png, "PNG")
    return img


def paint_page(p: QPainter, rect: QRectF, deck: Deck, i: int, scene, picture: QImage, lang: str,
               page: tuple[int, int] | None = None):
    """One page: the scene's number and title on top, the picture, the talking points below, and a
    footer with the deck's title and page k/n (`page`; the scene's number k/all when not given)."""
    W, H = rect.width(), rect.height()
    p.fillRect(rect, QColor("#FFFFFF"))
    title_h = H * 0.09
    f = QFont()
    f.setPixelSize(max(8, int(title_h * 0.5)))
    f.setBold(True)
    p.setFont(f)
    p.setPen(QColor("#000000"))
    p.drawText(QRectF(rect.left(), rect.top(), W, title_h), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
               f"{i + 1}.  {scene.title.get(lang)}")
    pts_h = H * 0.27
    pic_box = QRectF(rect.left(), rect.top() + title_h, W, H - title_h - pts_h)
    if not picture.isNull():
        s = min(pic_box.width() / picture.width(), pic_box.height() / picture.height())
        w, h = picture.width() * s, picture.height() * s
        target = QRectF(pic_box.left() + (pic_box.width() - w) / 2, pic_box.top(), w, h)
        p.drawImage(target, picture)
        p.setPen(QColor("#888888"))
        p.drawRect(target)
    doc = QTextDocument()
    body = QFont()
    body.setPixelSize(max(6, int(H * 0.026)))
    doc.setDefaultFont(body)
    import html

    k, n = page if page is not None else (i + 1, len(deck.scenes))
    doc.setHtml("<ul>" + "".join(f"<li>{html.escape(pt.get(lang))}</li>" for pt in scene.points) + "</ul>"
                + f"<p style='color:#777'>{html.escape(deck.title.get(lang))} — {k}/{n}</p>")
    doc.setTextWidth(W)
    p.save()
    p.translate(rect.left(), rect.top() + H - pts_h)
    doc.drawContents(p, QRectF(0, 0, W, pts_h))
    p.restore()


def export_handout(window, deck: Deck, path: str, lang: str = "en", page: str = "a4") -> list[str]:
    """Write the deck as a PDF, one landscape page per scene that opens. Returns the skipped scenes' sentences."""
    from ..files import atomic_write, check_writable

    if page not in PAGE_SIZES:
        raise ValueError(f"the page size is a4 or letter, not {page!r}")
    check_writable(path)
    skipped = []

    def write(tmp):
        pdf = QPdfWriter(tmp)
        pdf.setResolution(150)
        pdf.setPageLayout(QPageLayout(QPageSize(PAGE_SIZES[page]), QPageLayout.Orientation.Landscape,
                                      QMarginsF(12, 12, 12, 12), QPageLayout.Unit.Millimeter))
        pdf.setTitle(deck.title.get(lang))
        pdf.setCreator("Shard Lab")
        pages, why = _pages(window, deck)
        skipped.extend(why)
        p = QPainter(pdf)
        try:
            for k, (i, scene, png) in enumerate(pages):
                if k:
                    pdf.newPage()
                r = pdf.pageLayout().paintRectPixels(pdf.resolution())
                paint_page(p, QRectF(0, 0, r.width(), r.height()), deck, i, scene, _image(png), lang,
                           (k + 1, len(pages)))
        finally:
            p.end()

    atomic_write(path, write)
    return skipped


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "scene"


def export_pngs(window, deck: Deck, folder: str, lang: str = "en") -> tuple[list[str], list[str]]:
    """Write one PNG page per scene that opens, NN-title.png in `folder`. Returns (paths, skipped sentences)."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    pages, skipped = _pages(window, deck)
    for k, (i, scene, png) in enumerate(pages):
        img = QImage(*PNG_SIZE, QImage.Format.Format_RGB32)
        img.fill(QColor("#FFFFFF"))
        p = QPainter(img)
        try:
            paint_page(p, QRectF(40, 30, PNG_SIZE[0] - 80, PNG_SIZE[1] - 60), deck, i, scene, _image(png), lang,
                       (k + 1, len(pages)))
        finally:
            p.end()
        path = os.path.join(folder, f"{i + 1:02d}-{_slug(scene.title.en)}.png")
        if not img.save(path, "PNG"):
            raise OSError(f"could not write {path}")
        paths.append(path)
    return paths, skipped
