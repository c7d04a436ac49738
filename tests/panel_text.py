"""What the text panels show, read from their widgets as painted: the explanation's document as
plain text, the formula panel's label (rich text, as set)."""

from PySide6.QtWidgets import QLabel


def shown_text(panel) -> str:
    """The explanation panel's body as the reader sees it (plain text of the displayed document),
    or the formula panel's label (its rich text)."""
    body = getattr(panel, "body", None)
    if body is not None:
        return body.document().toPlainText()
    return panel.findChild(QLabel, "formula").text()
