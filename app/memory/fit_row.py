"""The Memory tab's "Fit this board" row: the action for the board picked in the tab, the int8-input
choice, Cancel, and one line that says what the search is doing, what it found (the chosen schedule's
numbers) or why it found nothing. It calls the FitModel and shows its signals; it holds no result."""
from __future__ import annotations

import html
from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QWidget

from app.memory.fit import FitModel
from app.memory.fit_view import numbers_html
from app.widgets import theme
from app.widgets.elided_label import ElidedLabel


class FitRow(QWidget):
    def __init__(self, model: FitModel, board: Callable[[], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model, self._board = model, board
        self.fit_btn = QPushButton("Fit this board")
        self.fit_btn.setToolTip("Search a patch schedule of this lowering whose whole RAM fits the board picked "
                                "(MCUNetV2-style: the first layers run patch by patch), each candidate checked "
                                "bit for bit on the host; the job worker runs it, the window stays usable. "
                                "The CLI: cmlens memory MODEL --board B --schedule fit:B")
        self.int8 = QCheckBox("int8 input")
        self.int8.setToolTip("Give the scheduled program an int8 input (camera and microphone pipelines deliver "
                             "8-bit samples; the caller quantizes): the float input buffer is a floor of its own")
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setToolTip("Stop the search now (kills its worker); the schedule shown before stays")
        self.cancel_btn.setEnabled(False)
        self.label = ElidedLabel("")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        for w in (self.fit_btn, self.int8, self.cancel_btn):
            lay.addWidget(w)
        lay.addWidget(self.label, 1)
        self.fit_btn.clicked.connect(lambda: self.model.fit(self._board(), self.int8.isChecked()))
        self.cancel_btn.clicked.connect(self.model.cancel)
        model.started.connect(lambda b: self._busy(True))
        model.progress.connect(lambda text, done, total: self._say(html.escape(text), theme.MUTED_STYLE))
        model.finished.connect(lambda _s: self._busy(False))
        model.resultChanged.connect(self._on_result)
        model.failed.connect(self._on_failed)

    def set_board_ok(self, ok: bool, why: str = "") -> None:
        """Whether the board picked can be fitted (a named board and a lowering on screen)."""
        self.fit_btn.setEnabled(ok and not self.model.is_running())
        self.fit_btn.setToolTip(self.fit_btn.toolTip().split("\n\n")[0] + (f"\n\n{why}" if why else ""))

    def _busy(self, busy: bool) -> None:
        self.fit_btn.setEnabled(not busy and bool(self._board()))
        self.int8.setEnabled(not busy)
        self.cancel_btn.setEnabled(busy)

    def _say(self, text: str, style: str = "") -> None:
        self.label.setStyleSheet(style)
        self.label.setText(text)

    def _on_result(self, s: dict | None) -> None:
        self._say(numbers_html(s) if s else "")

    def _on_failed(self, message: str) -> None:
        kept = self.model.result is not None
        color = theme.UI["bad"]
        self._say(f"<span style='color:{color}'>{html.escape(message)}</span>"
                  + (" · shown: the schedule found before" if kept and "cancelled" not in message else ""))
