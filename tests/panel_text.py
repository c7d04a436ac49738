"""What the text panels show, read from their widgets as painted: the explanation's document as
plain text, the formula panel's document with its bold and italic runs marked <b>…</b>, <i>…</i>."""

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QTextBrowser


def shown_text(panel) -> str:
    """The explanation panel's body as the reader sees it (plain text of the displayed document),
    or the formula panel's document with its bold runs (the totals) and italic runs (the symbols
    n, α, S, β) marked as <b>…</b> and <i>…</i>."""
    body = getattr(panel, "body", None)
    if body is not None:
        return body.document().toPlainText()
    return _marked(panel.findChild(QTextBrowser, "formula").document())


def _marked(doc) -> str:
    runs = []  # (text, bold, italic) per fragment, a newline between blocks
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            fmt = frag.charFormat()
            runs.append((frag.text(), fmt.fontWeight() >= QFont.Weight.Bold, fmt.fontItalic()))
            it += 1
        runs.append(("\n", False, False))
        block = block.next()
    out, bold, italic = [], False, False
    for text, b, i in runs + [("", False, False)]:
        if italic and (not i or b != bold):
            out.append("</i>")
            italic = False
        if bold != b:
            out.append("<b>" if b else "</b>")
            bold = b
        if i and not italic:
            out.append("<i>")
            italic = True
        out.append(text)
    return "".join(out)
