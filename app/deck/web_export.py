"""
A deck as an offline web page: `export_web(window, deck, folder)` writes

    index.html     the page (no deck text in it: a strict Content-Security-Policy, one script)
    page.js        steps, keys, deep links, the language switch (resources/web/page.js)
    page.css       the layouts: side by side, the picture above the text on a phone, a projector's
    data.js        `window.SHARD_LAB_DECK = {...}`: every scene's texts in English and Chinese
                   (fetch() of a local JSON file is refused on file://, a script is not)
    frames/        the pictures, PNG at 2× for high-DPI screens, one file per distinct picture

Each scene is opened as the handout opens it (scene_open.open_scene, a scene that cannot open is
named and skipped); its frames are the app's own step boundaries, the places → stops at in the
window (frame k: after k steps; 0 = the start). At each one the page keeps the picture of the
scene's view (the window's own view, drawn by its own code), the explanation and the formula
panel as the app shows them (their rich text reduced to a few plain tags, no attributes: a tree
the page builds with createElement and text nodes, never as HTML), and the status bar's numbers.

Pictures are drawn once per language: a picture carries words (its title, the step line, the
legend), and a Chinese reader should not read English under the Chinese text. They fit the
budget because identical pictures are written once (a decode scene's plot does not change from
step to step) and PNGs are reduced to 256 colours with Pillow when it is installed (the `export`
extra; the pictures are flat colours and antialiased text, 3× smaller for no visible change).

A deck is someone else's text: its titles and talking points go into data.js as JSON and onto
the page as text nodes (textContent), so `<script>` or `<img onerror=…>` in a deck shows as
those characters and runs nothing; the page's policy allows no inline script either.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import time
import zlib
from dataclasses import dataclass, field

from PySide6.QtCore import QBuffer, QCoreApplication, QIODevice, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget

from ..words import fmt_bw, fmt_bytes, fmt_time
from .model import LANGS, Deck
from .scene_open import SceneError, bad_scenes, open_scene, wait_for_scene

FORMAT = 1  # data.js's "format": the page reads this version
SCALE = 2  # device pixels per CSS pixel of a picture: sharp on high-DPI screens and projectors
PAGE_FILES = ("index.html", "page.js", "page.css")  # resources/web, copied as they are
FRAMES = "frames"
# tags the page may build from the app's rich text; anything else keeps its text and loses its tag
TAGS = {"p", "b", "i", "em", "strong", "sub", "sup", "br", "span", "ul", "ol", "li", "code", "small",
        "table", "tr", "td", "th"}
DROP = {"script", "style", "head", "title", "iframe", "object", "svg", "math", "template", "noscript"}


def _tr(text: str) -> str:
    return QCoreApplication.translate("WebExport", text)


class WebExportError(ValueError):
    """A page that cannot be written; str(e) is one sentence for the user."""


@dataclass
class WebExport:
    """What export_web wrote: the folder, its index.html, scenes and distinct pictures written,
    the skipped scenes' sentences, bytes on disk and seconds taken."""

    folder: str
    index: str
    scenes: int
    frames: int
    pictures: int
    skipped: list = field(default_factory=list)
    bytes: int = 0
    seconds: float = 0.0


# -- the folder ------------------------------------------------------------------------------
def check_folder(folder: str, force: bool = False):
    """Raise WebExportError (one sentence) unless `folder` is a place the page can be written:
    missing (it is made) or empty, or not empty and `force`; never a file, a device or /proc."""
    from ..files import UnsafeFile, check_writable_target

    folder = os.path.abspath(os.fspath(folder))
    try:
        check_writable_target(folder)
    except UnsafeFile as e:
        raise WebExportError(str(e)) from None
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise WebExportError(_tr("Cannot write the page into %1: it is a file, not a folder.").replace("%1", folder))
    if os.path.isdir(folder) and os.listdir(folder) and not force:
        raise WebExportError(_tr("%1 is not empty: choose an empty folder, or write into it anyway "
                                 "(--force on the command line).").replace("%1", folder))
    try:
        os.makedirs(folder, exist_ok=True)
        probe = os.path.join(folder, ".shard-lab-write-test")
        with open(probe, "wb"):
            pass
        os.remove(probe)
    except OSError as e:
        raise WebExportError(_tr("Cannot write the page into %1: %2.").replace("%1", folder)
                             .replace("%2", e.strerror or str(e))) from None


def web_dir() -> str:
    """resources/web (beside app/ in the source tree; shard_lab/resources/web when installed)."""
    app_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for root in (os.path.join(app_dir, "resources"), os.path.join(os.path.dirname(app_dir), "resources")):
        if os.path.isfile(os.path.join(root, "web", "page.js")):
            return os.path.join(root, "web")
    raise WebExportError(_tr("The web page's files (resources/web) are missing from this installation."))


# -- the app's rich text, as a tree of plain tags ------------------------------------------------
class _Tree(html.parser.HTMLParser):
    """Rich text → [tag, class, children] lists and strings. Attributes are dropped; a bold or
    larger/smaller paragraph (the panels' style="…") keeps that as one of three class names."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = ["div", "", []]
        self.stack = [self.root]
        self.dropping = 0

    def handle_starttag(self, tag, attrs):
        if tag in DROP:
            self.dropping += 1
            return
        if self.dropping or tag not in TAGS:
            return
        style = (dict(attrs).get("style") or "").replace(" ", "").lower()
        m = re.search(r"font-size:(\d+)%", style)
        size = int(m.group(1)) if m else 100
        cls = "big" if size > 100 else "small" if size < 100 else ""
        if "font-weight:bold" in style:
            cls = (cls + " bold").strip()
        node = [tag, cls, []]
        self.stack[-1][2].append(node)
        if tag != "br":
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        if tag == "br" and not self.dropping:
            self.stack[-1][2].append(["br", "", []])

    def handle_endtag(self, tag):
        if tag in DROP:
            self.dropping = max(0, self.dropping - 1)
            return
        for j in range(len(self.stack) - 1, 0, -1):  # close up to the matching open tag, if any
            if self.stack[j][0] == tag:
                del self.stack[j:]
                return

    def handle_data(self, data):
        if self.dropping or not data:
            return
        kids = self.stack[-1][2]
        if kids and isinstance(kids[-1], str):
            kids[-1] += data
        else:
            kids.append(data)


def rich_tree(text: str) -> list:
    """The children of a rich text (the explanation's, the formula panel's) as a tree of plain
    tags from TAGS: [tag, class ("", "big", "small", "bold", …), children], strings for text."""
    t = _Tree()
    t.feed(text or "")
    t.close()
    return t.root[2]


def plain(text: str) -> str:
    """A label's text (rich or plain) as plain text."""
    def walk(nodes):
        return "".join(n if isinstance(n, str) else ("\n" if n[0] == "br" else walk(n[2])) for n in nodes)
    return walk(rich_tree(text)).strip()


# -- pictures ----------------------------------------------------------------------------------
def picture(widget, scale: int = SCALE) -> QImage:
    """The widget drawn by its own paint code at `scale` device pixels per pixel."""
    img = QImage(widget.size() * scale, QImage.Format.Format_RGB32)
    img.setDevicePixelRatio(scale)
    img.fill(Qt.GlobalColor.white)
    widget.render(img)
    return img


def png_bytes(img: QImage) -> bytes:
    """A PNG of `img`: 256 colours (Pillow's octree) when Pillow is installed, else Qt's full colour."""
    try:
        from PIL import Image
    except ImportError:
        buf = QBuffer()
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        img.save(buf, "PNG")
        return bytes(buf.data())
    import io

    img = img.convertToFormat(QImage.Format.Format_RGB32)
    w, h = img.width(), img.height()
    im = Image.frombuffer("RGB", (w, h), bytes(img.constBits()), "raw", "BGRX", img.bytesPerLine(), 1)
    out = io.BytesIO()
    im.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(out, "PNG")
    return out.getvalue()


class Pictures:
    """The distinct pictures of an export, named by order of first appearance (frames/0001.png…)."""

    def __init__(self):
        self.names = {}  # checksums of the pixels -> file name
        self.files = {}  # file name -> PNG bytes
        self.size = {}  # file name -> (width, height) in CSS pixels
        self._last = (b"", "")  # the last picture's pixels and name: most repeats are the step before's

    def add(self, img: QImage) -> str:
        pixels = bytes(img.constBits())
        if pixels == self._last[0]:
            return self._last[1]
        # CRC-32 and Adler-32 together: 64 bits of checksum, at a third of SHA-1's time on 8 MB pictures
        key = (zlib.crc32(pixels), zlib.adler32(pixels), len(pixels), img.width())
        name = self.names.get(key)
        if name is None:
            name = f"{FRAMES}/{len(self.names) + 1:04d}.png"
            self.names[key] = name
            self.files[name] = png_bytes(img)
            r = img.devicePixelRatio()
            self.size[name] = (round(img.width() / r), round(img.height() / r))
        self._last = (pixels, name)
        return name


# -- the scenes --------------------------------------------------------------------------------
def _settle(n: int = 2):
    for _ in range(n):  # the views' queued repaints and layouts after a seek or a language switch
        QCoreApplication.processEvents()


def _numbers(run) -> dict:
    """The scene's numbers as the app writes them: the run's time, and each collective's size and
    bus bandwidth (nccl-tests' convention, simcore.comm_sim.busbw) when there are a few."""
    from simcore.comm_sim import busbw

    tr = run.trace
    out = {"time": fmt_time(tr.t_end) if tr.collectives or tr.computes else fmt_time(0.0),
           "collectives": len(tr.collectives), "rows": []}
    for c in tr.collectives[:3]:
        dur = c.t_end - c.t_start
        out["rows"].append({"op": c.op, "algo": c.algo, "n": c.n, "bytes": fmt_bytes(c.nbytes),
                            "time": fmt_time(dur), "busbw": fmt_bw(busbw(c.op, c.n, c.nbytes, dur)) if dur > 0 else ""})
    out["moved"] = fmt_bytes(sum(m.nbytes for m in tr.messages)) if tr.messages else fmt_bytes(0)
    return out


class Table:
    """Texts that repeat from step to step (a collective's closed form stays while its steps run: 108
    distinct among the lecture's 608 frames), kept once; a frame holds the index."""

    def __init__(self):
        self.items, self._index = [], {}

    def add(self, tree) -> int:
        key = json.dumps(tree, ensure_ascii=False)
        if key not in self._index:
            self._index[key] = len(self.items)
            self.items.append(tree)
        return self._index[key]


def _scene_frames(window, pictures: Pictures, formulas: Table, langs, scale, stop_check=None) -> dict:
    """Every step boundary of the scene on screen, in each language: its picture, texts and numbers
    (the formula panel's text as an index into `formulas`)."""
    from .. import i18n

    pb = window.playback
    stops = pb.stops
    steps = {lang: [] for lang in langs}
    now = i18n.current_language()  # the language on screen first: one switch a scene, not two
    for lang in sorted(langs, key=lambda x: x != now):
        if i18n.current_language() != lang:
            i18n.set_language(QCoreApplication.instance(), lang)
            _settle()
        page = window.tabs.currentWidget()
        name = None
        # a view that takes no frames from the clock (the weight slices, the decode-latency plot)
        # draws the same picture at every step: drawn once, not once a step (408 of the lecture's 608)
        follows = any(v is page or (isinstance(v, QWidget) and page.isAncestorOf(v)) for v in pb.frames.views)
        for k, t in enumerate(stops):
            if stop_check is not None:
                stop_check()
            pb.seek(t)  # the frame controller hands the views the frame now; paint events follow
            _settle(1)
            if follows or name is None:
                name = pictures.add(picture(page, scale))
            cl = getattr(window, "classroom", None)
            formula = cl.formula._label.text() if cl is not None else ""
            steps[lang].append({
                "img": name,
                "live": plain(window.explain.live.text()),
                "explain": rich_tree(window.explain.body.text()),
                "formula": formulas.add(rich_tree(formula)),
                "status": [window.time_label.text(), plain(window.step_label.text()), window.bytes_label.text()],
            })
    return steps


def collect(window, deck: Deck, langs=LANGS, scale: int = SCALE, progress=None, stop_check=None):
    """Open every scene of `deck` in `window` and read its frames. Returns (data, pictures,
    skipped sentences). The window goes back to its language and deck scene afterwards."""
    from .. import i18n

    back_lang = i18n.current_language()
    ctl = getattr(window, "deck", None)
    back = ctl.index if ctl is not None and ctl.deck is deck else None
    pictures, formulas = Pictures(), Table()
    scenes, skipped = [], []
    bad = bad_scenes(deck)
    try:
        for i, scene in enumerate(deck.scenes):
            if progress is not None:
                progress(i, len(deck.scenes))
            if i in bad:
                skipped.append(bad[i])
                continue
            try:
                open_scene(window, deck, i)
            except SceneError as e:
                skipped.append(str(e))
                continue
            wait_for_scene(window)
            _settle(3)
            pb = window.playback
            k0 = min(scene.step, pb.n_steps)
            scenes.append({
                "number": i + 1, "id": scene.id,
                "title": scene.title.to_dict(), "points": [p.to_dict() for p in scene.points],
                "tab": window.current_tab(), "start": k0, "walk": scene.walk,
                "numbers": _numbers(window.model.run),
                "steps": _scene_frames(window, pictures, formulas, langs, scale, stop_check),
            })
    finally:
        if i18n.current_language() != back_lang:
            i18n.set_language(QCoreApplication.instance(), back_lang)
        if back is not None and back >= 0:
            ctl.go(back)
    data = {"format": FORMAT, "generator": "Shard Lab", "title": deck.title.to_dict(), "langs": list(langs),
            "scale": scale, "sizes": pictures.size, "formulas": formulas.items, "scenes": scenes,
            "skipped": skipped}
    return data, pictures, skipped


# -- writing -------------------------------------------------------------------------------------
def data_js(data: dict) -> str:
    """data.js: one assignment of the deck's JSON, UTF-8 (Chinese at 3 bytes a character, not a
    6-byte escape), with every < > & and line separator escaped, so no text of the deck can end
    the script or start markup wherever the file is read."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for ch in "<>&\u2028\u2029":
        text = text.replace(ch, f"\\u{ord(ch):04x}")
    return "window.SHARD_LAB_DECK = " + text + ";\n"


def write_page(folder: str, data: dict, pictures: Pictures) -> int:
    """Write the page's files into `folder` (checked by check_folder). Returns the bytes written."""
    src = web_dir()
    total = 0
    try:
        os.makedirs(os.path.join(folder, FRAMES), exist_ok=True)
        for name in PAGE_FILES:
            shutil.copyfile(os.path.join(src, name), os.path.join(folder, name))
            total += os.path.getsize(os.path.join(folder, name))
        for name, png in pictures.files.items():
            with open(os.path.join(folder, name), "wb") as f:
                f.write(png)
            total += len(png)
        js = data_js(data).encode("utf-8")
        with open(os.path.join(folder, "data.js"), "wb") as f:  # last: a page with data.js is complete
            f.write(js)
        total += len(js)
    except OSError as e:
        raise WebExportError(_tr("Cannot write the page into %1: %2.").replace("%1", folder)
                             .replace("%2", e.strerror or str(e))) from None
    return total


def unmake_folder(folder: str, made: bool):
    """Nothing was written: a folder the export made goes again, no empty folder is left behind."""
    folder = os.path.abspath(os.fspath(folder))
    if made and os.path.isdir(folder) and not os.listdir(folder):
        os.rmdir(folder)


def export_web(window, deck: Deck, folder: str, force: bool = False, langs=LANGS, scale: int = SCALE,
               progress=None, stop_check=None) -> WebExport:
    """Write `deck` as an offline web page into `folder` (see the module docstring). Raises
    WebExportError (one sentence) for a folder that is not empty (unless `force`), a file, or a
    place that cannot be written, and when no scene of the deck can open."""
    start = time.perf_counter()
    folder = os.path.abspath(os.fspath(folder))
    made = not os.path.exists(folder)
    check_folder(folder, force)
    try:
        data, pictures, skipped = collect(window, deck, langs, scale, progress, stop_check)
        if not data["scenes"]:
            raise WebExportError(_tr("No scene of this deck can open: %1").replace("%1", " ".join(skipped)))
    except BaseException:
        unmake_folder(folder, made)
        raise
    size = write_page(folder, data, pictures)
    return WebExport(folder, os.path.join(folder, "index.html"), len(data["scenes"]),
                     sum(len(s["steps"][langs[0]]) for s in data["scenes"]), len(pictures.files), skipped, size,
                     time.perf_counter() - start)


# -- in the app: File › Export › Web page… --------------------------------------------------------
def _choose_folder(window) -> str:
    from PySide6.QtWidgets import QFileDialog

    return QFileDialog.getExistingDirectory(window, _tr("Export the deck as a web page: choose a folder"),
                                            os.path.expanduser("~"))


def _ask_overwrite(window, folder: str) -> bool:
    from PySide6.QtWidgets import QMessageBox

    answer = QMessageBox.question(
        window, _tr("Export web page"),
        _tr("%1 is not empty. Write the page into it anyway? Files of the page's names (index.html, data.js, "
            "page.js, page.css, frames/) are replaced; nothing else is touched.").replace("%1", folder),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Cancel)
    return answer == QMessageBox.StandardButton.Yes


def _progress(window, scenes: int):
    """A window-modal progress dialog with Cancel (each scene takes a second or two to read)."""
    from PySide6.QtWidgets import QProgressDialog

    bar = QProgressDialog(_tr("Exporting the web page…"), _tr("Cancel"), 0, scenes, window)
    bar.setWindowTitle(_tr("Export web page"))
    bar.setWindowModality(Qt.WindowModality.WindowModal)
    bar.setMinimumDuration(0)
    bar.setValue(0)
    return bar


def _say(window, text: str, error: bool):
    if error:
        from PySide6.QtWidgets import QMessageBox

        QMessageBox.warning(window, _tr("Export web page"), text)
    window.statusBar().showMessage(text, 15000)


def export_from_window(window) -> WebExport | None:
    """File › Export › Web page…: the open deck as a web page in a folder the user picks, asking
    before it writes into a folder that is not empty. Every refusal is one sentence in a message
    box; the window keeps running and goes back to its scene and language."""
    ctl = getattr(window, "deck", None)
    deck = getattr(ctl, "deck", None)
    if deck is None:
        _say(window, _tr("Open a deck first (File › Open deck…): the web page has one part per scene."), True)
        return None
    folder = _choose_folder(window)
    if not folder:
        return None
    force = False
    if os.path.isdir(folder) and os.listdir(folder):
        if not _ask_overwrite(window, folder):
            return None
        force = True
    made = not os.path.exists(folder)
    try:
        check_folder(folder, force)  # a file, /proc…: one sentence before any progress is shown
    except WebExportError as e:
        _say(window, str(e), True)
        return None
    bar = _progress(window, len(deck.scenes))

    def progress(i, n):
        bar.setValue(i)
        bar.setLabelText(_tr("Exporting the web page: scene %1 of %2…").replace("%1", str(i + 1))
                         .replace("%2", str(n)))

    def stop_check():
        if bar.wasCanceled():
            raise WebExportError(_tr("The web page was not written: the export was cancelled."))

    try:
        out = export_web(window, deck, folder, force=force, progress=progress, stop_check=stop_check)
    except Exception as e:  # noqa: BLE001 — one sentence in a message box, the window as it was (as the handout)
        cancelled = bar.wasCanceled()  # (before close(): closing the dialog counts as Cancel)
        bar.close()
        unmake_folder(folder, made)
        _say(window, str(e), not cancelled)
        return None
    bar.close()
    _say(window, _tr("Saved %1 (%2 scenes, %3 MB).").replace("%1", out.index).replace("%2", str(out.scenes))
         .replace("%3", f"{out.bytes / 1e6:.1f}") + "".join(" " + s for s in out.skipped), False)
    return out
