"""The page a view shows when the current scenario has nothing for it: a sentence and a button."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget


def hint_page(name: str, on_click):
    """(page, label, button): centred word-wrapped label `{name}Hint`, button `{name}SwitchButton`."""
    page = QWidget()
    label = QLabel(objectName=f"{name}Hint")
    label.setWordWrap(True)
    label.setAlignment(Qt.AlignCenter)
    button = QPushButton(objectName=f"{name}SwitchButton")
    button.clicked.connect(on_click)
    lay = QVBoxLayout(page)
    lay.addStretch(1)
    lay.addWidget(label)
    lay.addSpacing(16)
    lay.addWidget(button, 0, Qt.AlignHCenter)
    lay.addStretch(1)
    return page, label, button
