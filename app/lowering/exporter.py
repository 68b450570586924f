"""Exports: JSON and standalone HTML reports, .pte / .bpte (a lower Job in the job worker, which hits
the result cache, written by the job's one output writer: a .bpte with its references.json beside it,
as `cmlens lower --bpte` writes it), and the current graph as SVG / PNG."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from backend_core.jobs.spec import Job
from backend_core.report.json_report import build_report
from backend_core.versions import stack_versions

from app.runtime.background import BackgroundRunner
from app.lowering.session import LowerRequest, LoweringSession
from app.runtime.qt_job import QtJob


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
        self.job = QtJob("job worker", "export", self)
        self.job.event.connect(self._on_job_event)
        self.job.finished.connect(self._on_job_finished)
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
        """kind: pte | bpte. The window's lowering as a lower Job with that output (the result cache
        makes it quick); a .bpte gets its references.json beside it."""
        req = self.session.request
        if req is None:
            raise RuntimeError("Nothing to export yet: lower a model first.")
        self._artifact = (kind, path)
        self.job.start(export_job(req, kind, path))
        self.message.emit(f"Building .{kind} (from the cache when possible)…")

    def busy(self) -> bool:
        return self.job.is_running()

    def _on_job_event(self, kind: str, data: dict) -> None:
        if kind == "status":
            self.message.emit(str(data.get("text", "")))

    def _on_job_finished(self, status: str, job_result: dict | None) -> None:
        if self._artifact is None:
            return
        kind, path = self._artifact
        self._artifact = None
        files = (job_result or {}).get("files") or {}
        err = ""
        if status != "done" or files.get(kind) is None or not Path(path).is_file():
            err = str(((job_result or {}).get("error") or {}).get("message") or status)
        beside = " and references.json beside it" if kind == "bpte" and files.get("references") else ""
        self.message.emit(f"Export .{kind} failed: {err}" if err else
                          f"Wrote {path} ({Path(path).stat().st_size:,} bytes){beside}")
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
        self.job.shutdown(graceful=False)       # a lower Job starts no process of its own: nothing to wait for
        self.runner.shutdown()


def export_job(req: LowerRequest, kind: str, path: str) -> Job:
    """The Job of an export: the window's lowering, exactly as it was made (CPU, flow, calibration,
    channels-last, an artefact's companions), with `kind` (pte | bpte) written to `path`."""
    return Job(req.source, req.job_request(), steps=("lower",), outputs={kind: path})
