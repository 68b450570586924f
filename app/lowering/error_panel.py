"""A non-modal error panel above the graph: the cause, the stage, the node, a hint and the
original traceback on demand. Earlier stages stay browsable; the window stays usable."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from app.widgets import theme
from backend_core.stages.fallback.pass_failure import failure_lines


class ErrorPanel(QFrame):
    details: QPlainTextEdit          # made below the button that toggles it

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ErrorPanel")
        self.setStyleSheet("#ErrorPanel { background: #fff3f3; border: 1px solid #e57373; border-radius: 4px; }")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 6, 6, 6)
        top = QHBoxLayout()
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top.addWidget(self.title, 1)
        self.details_btn = QPushButton("Traceback", self)
        self.details_btn.setCheckable(True)
        self.details_btn.toggled.connect(lambda on: self.details.setVisible(on))
        top.addWidget(self.details_btn, 0, Qt.AlignmentFlag.AlignTop)
        close = QPushButton("✕", self)
        close.setFixedWidth(28)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        top.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        lay.addLayout(top)
        self.details = QPlainTextEdit(self)
        self.details.setReadOnly(True)
        self.details.setFont(theme.mono_font(8.5))
        self.details.setMaximumHeight(220)
        self.details.hide()
        lay.addWidget(self.details)
        self.error: dict | None = None
        self.hide()

    def show_error(self, error: dict) -> None:
        self.error = dict(error)
        stage = error.get("stage") or "?"
        node = error.get("node")
        msg = error.get("message") or "unknown error"
        hint = error.get("hint") or ""
        title = error.get("title") or f"Stage “{stage}” failed"
        parts = [f"<b style='color:#b71c1c'>{html.escape(str(title))}</b>"]
        if node:
            parts.append(f" at node <b>{html.escape(str(node))}</b>")
        failure = error.get("failure") or {}
        if failure.get("op") or failure.get("cause"):     # a pass failed: say it on the op the user wrote
            parts.append("<br>" + "<br>".join(html.escape(line).replace("  ", "&nbsp;&nbsp;")
                                             for line in failure_lines(failure)))
            parts.append("<br><span style='color:#5d4037'>Lower with “keep going” on to take this op out of "
                         "quantisation and lower the rest.</span>" if not error.get("keep_going") else "")
        else:
            parts.append(f"<br>{html.escape(str(msg))}")
        if hint:
            parts.append(f"<br><span style='color:#5d4037'>{html.escape(str(hint))}</span>")
        note = error.get("note") or "Earlier stages stay browsable in the timeline."
        parts.append(f"<br><span style='color:#78909c'>{html.escape(str(note))}</span>")
        self.title.setText("".join(parts))
        tb = error.get("traceback") or ""
        self.details.setPlainText(tb)
        self.details_btn.setVisible(bool(tb))
        self.details_btn.setChecked(False)
        self.show()

    def clear(self) -> None:
        self.error = None
        self.hide()
