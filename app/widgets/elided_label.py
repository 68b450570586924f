"""A one-line label that elides its text to its width and shows the whole text as its tooltip, so a long
summary never wraps into (or under) the widget below it, and nothing is lost. Rich text is shown as
plain text when it has to be elided (the tooltip keeps the markup)."""
from __future__ import annotations

import re

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QResizeEvent, QTextDocument
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

_TAG = re.compile(r"<[^>]+>")


def plain_text(markup: str) -> str:
    """The text a rich-text string shows (tags removed, entities decoded)."""
    if not _TAG.search(markup) and "&" not in markup:
        return markup
    doc = QTextDocument()
    doc.setHtml(markup)
    return doc.toPlainText()


class ElidedLabel(QLabel):
    """setText() keeps the full text (text() returns it); the label shows it whole when it fits, else
    elided with "…" (shown_text())."""

    def __init__(self, text: str = "", parent: QWidget | None = None,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> None:
        super().__init__(parent)
        self._full = ""
        self._mode = mode
        self._format = Qt.TextFormat.AutoText
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt API
        self._full = text or ""
        self.setToolTip(self._full if self._full else "")
        self._refit()

    def setTextFormat(self, fmt: Qt.TextFormat) -> None:  # noqa: N802 - Qt API
        self._format = fmt
        self._refit()

    def text(self) -> str:  # the whole text, as set (what is drawn: shown_text())
        return self._full

    def shown_text(self) -> str:
        return super().text()

    def is_elided(self) -> bool:
        return super().text() != self._full

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(20, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._refit()

    def _refit(self) -> None:
        fm = QFontMetrics(self.font())
        room = max(self.contentsRect().width(), 10)
        plain = " · ".join(x for x in re.split(r"[\n\u2028]+", plain_text(self._full)) if x)
        bold = QFont(self.font())
        bold.setBold(True)                 # rich text with <b> parts is wider than its plain text
        need = QFontMetrics(bold if "<b>" in self._full else self.font()).horizontalAdvance(plain)
        if need <= room:
            QLabel.setTextFormat(self, self._format)
            QLabel.setText(self, re.sub(r"(<br\s*/?>|\n)+", " · ", self._full))
        else:
            QLabel.setTextFormat(self, Qt.TextFormat.PlainText)
            QLabel.setText(self, fm.elidedText(plain, self._mode, room))
