"""Exports: JSON and standalone HTML reports, .pte / .bpte (re-runs the worker, which hits
the result cache), and the current graph as SVG / PNG."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from backend_core import protocol
from backend_core.report.json_report import build_report
from backend_core.versions import stack_versions

from app.runtime.background import BackgroundRunner
from app.lowering.session import LoweringSession
from app.runtime.jobs import WorkerJob


class Exporter(QObject):
    """Signals: message(str) for the status bar; exported(str kind, str path, str error)."""

    message = Signal(str)
    exported = Signal(str, str, str)

    def __init__(self, session: LoweringSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.runner = BackgroundRunner("cmlens-export", self)
        self.runner.done.connect(self._on_done)
        self.runner.failed.connect(self._on_failed)
        self._jobs: dict[int, tuple[str, str]] = {}
        self.job = WorkerJob("lowering worker", {"stage": "export"}, parent=self)
        self.job.message.connect(self._on_worker_message)
        self.job.finished.connect(self._on_worker_finished)
        self._artifact: tuple[str, str] | None = None

    def report(self) -> dict[str, Any]:
        s = self.session
        req = s.request
        if req is None or not s.snapshots:
            raise RuntimeError("Nothing to export yet: lower a model first.")
        return build_report(model=req.model_name, source=req.source, target=req.target, flow=req.flow,
                            status=s.status, snapshots=list(s.snapshots), verdicts=s.verdicts,
                            error=s.error, versions=stack_versions(), planned_stages=s.planned_stages)

    def export_json(self, path: str) -> str:
        Path(path).write_text(json.dumps(self.report(), default=str, indent=1))
        self.message.emit(f"Wrote {path}")
        self.exported.emit("json", path, "")
        return path

    def export_html(self, path: str) -> None:
        """Renders graphs with dot: runs on the export thread."""
        report = self.report()

        def run() -> str:
            from backend_core.report.html_report import write_html

            return str(write_html(report, path) or path)

        self._jobs[self.runner.submit(run)] = ("html", path)
        self.message.emit(f"Writing {path}…")

    def export_artifact(self, kind: str, path: str) -> None:
        """kind: pte | bpte. Re-runs the worker (cached result) with --pte/--bpte."""
        req = self.session.request
        if req is None:
            raise RuntimeError("Nothing to export yet: lower a model first.")
        self._artifact = (kind, path)
        self.job.start(protocol.lowering_worker_arguments(req.source, req.target, req.flow, req.calib,
                                                          **{kind: path}))
        self.message.emit(f"Building .{kind} (from the cache when possible)…")

    def busy(self) -> bool:
        return self.job.is_running()

    def _on_worker_message(self, msg: dict) -> None:
        if msg.get("type") == protocol.STATUS:
            self.message.emit(str(msg.get("text", "")))
        elif msg.get("type") == protocol.DONE and msg.get("error"):
            self.job.raise_error(str(msg["error"].get("message", msg.get("status"))))

    def _on_worker_finished(self, status: str) -> None:
        if self._artifact is None:
            return
        kind, path = self._artifact
        self._artifact = None
        err = ""
        if status != "done" or not Path(path).is_file():
            err = str((self.job.error or {}).get("message") or status)
        self.message.emit(f"Export .{kind} failed: {err}" if err else
                          f"Wrote {path} ({Path(path).stat().st_size:,} bytes)")
        self.exported.emit(kind, path, err)

    def _on_done(self, job: int, result: object) -> None:
        kind, path = self._jobs.pop(job, ("?", ""))
        self.message.emit(f"Wrote {path}")
        self.exported.emit(kind, path, "")

    def _on_failed(self, job: int, message: str) -> None:
        kind, path = self._jobs.pop(job, ("?", ""))
        first = message.splitlines()[0] if message else "error"
        self.message.emit(f"Export {kind} failed: {first}")
        self.exported.emit(kind, path, first)

    def shutdown(self) -> None:
        self.job.shutdown()
        self.runner.shutdown()
