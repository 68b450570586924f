"""The quantizer report tab (what the Cortex-M quantizer accepted, rejected, left float) and
the pipeline log tab (status lines, pass warnings, worker stderr)."""
from __future__ import annotations

import html

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextBrowser, QWidget

from app.widgets import theme
from app.lowering.session import LoweringSession


class QuantizerReport(QTextBrowser):
    def __init__(self, session: LoweringSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        session.started.connect(self.refresh)
        session.finished.connect(lambda _s: self.refresh())
        self.refresh()

    def refresh(self) -> None:
        c = theme.UI                   # the palette's text colours (lighter on a dark palette)
        v = self.session.verdicts or {}
        if not v:
            self.setHtml(f"<p style='color:{c['faint']}'>The quantizer's verdicts appear when lowering finishes.</p>")
            return
        out = ["<style>td{padding:1px 8px 1px 0} h3{margin:8px 0 3px 0}</style>"]
        rej = v.get("rejected") or {}
        if rej:
            out.append(f"<h3 style='color:{c['bad']}'>Rejected</h3><table>")
            for node, reason in rej.items():
                if isinstance(reason, (list, tuple)):
                    reason = "; ".join(str(r) for r in reason)
                out.append(f"<tr><td><b>{html.escape(str(node))}</b></td><td>{html.escape(str(reason))}</td></tr>")
            out.append("</table>")
        na = v.get("not_annotated") or []
        if na:
            out.append(f"<h3 style='color:{c['warn']}'>Not annotated (stay float)</h3><p>"
                       + ", ".join(html.escape(str(x)) for x in na) + "</p>")
        acc = v.get("accepted") or {}
        if acc:
            out.append(f"<h3 style='color:{c['ok']}'>Accepted ({len(acc)})</h3><table>")
            for node, by in acc.items():
                out.append(f"<tr><td>{html.escape(str(node))}</td><td style='color:{c['muted']}'>"
                           f"{html.escape(str(by))}</td></tr>")
            out.append("</table>")
        text = v.get("report_text")
        if text:
            out.append("<h3>Quantization report</h3><pre style='font-size:10px'>"
                       + html.escape(str(text)) + "</pre>")
        self.setHtml("".join(out))


class PipelineLog(QPlainTextEdit):
    def __init__(self, session: LoweringSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFont(theme.mono_font(9))
        self.setMaximumBlockCount(20000)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        session.started.connect(self.clear)
        session.logLine.connect(self._append)

    def _append(self, line: str) -> None:
        self.appendPlainText(line)
        self.moveCursor(QTextCursor.MoveOperation.End)
