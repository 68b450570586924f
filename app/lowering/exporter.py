"""Exports: JSON and standalone HTML reports, .pte / .bpte (each a Job output: the window's lowering Job in
the job worker, which hits the result cache, written by the job's one output writer jobs/outputs.py, so the
files are `cmlens lower --json/--html/--pte/--bpte`'s, sections and references.json included), a firmware bundle for the user's
own project (the Job `cmlens export` submits: backend_core.orchestration.jobs.steps.export), and the current graph as
SVG / PNG."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from backend_core.orchestration.jobs.spec import ExportOptions, Job

from app.lowering.session import LoweringSession
from app.runtime.qt_job import QtJob


# The core's hints name command-line flags; the window has fields and boxes for them (issue 44, item 14).
_WINDOW_WORDS = (("Pass --et-root PATH (or set EXECUTORCH_ROOT).", "Set the ExecuTorch checkout."),
                 ("Pass --et-root PATH", "Set the ExecuTorch checkout"),
                 ("Pass -o DIR.", "Name the bundle folder."),
                 ("Pass another -o folder.", "Name another bundle folder."),
                 ("or --force to replace it", "or tick Replace"),
                 ("Export with --keep-going", "Lower with Keep going (Lower options), then export"),
                 ("--board NAME", "a board"), ("--check", "the QEMU proof"),
                 ("Pass the directory of a", "Choose the folder of a"), ("Pass the top directory", "Choose the top folder"),
                 (" (--et-root)", ""))


def window_words(text: str) -> str:
    """A core message with its command-line advice said the window's way."""
    for cli, window in _WINDOW_WORDS:
        text = text.replace(cli, window)
    return text


class Exporter(QObject):
    """Signals: message(str) for the status bar; exported(str kind, str path, str error)."""

    message = Signal(str)
    exported = Signal(str, str, str)

    def __init__(self, session: LoweringSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.job = QtJob("job worker", "export", self)
        self.job.event.connect(self._on_job_event)
        self.job.finished.connect(self._on_job_finished)
        self._program: tuple[str, str] | None = None
        self.bundle_job = QtJob("job worker", "export bundle", self)      # may build and run: graceful cancel
        self.bundle_job.event.connect(self._on_job_event)
        self.bundle_job.finished.connect(self._on_bundle_finished)
        self.bundle_result: dict | None = None
        self._bundle_folder = ""

    def export_file(self, kind: str, path: str) -> None:
        """kind: json | html | pte | bpte. The window's lowering Job with that output (the result cache makes
        it quick), written as `cmlens lower` writes it; a .bpte gets its references.json beside it."""
        lowering = self.session.lowering_job
        if lowering is None or not self.session.snapshots:
            raise RuntimeError("Nothing to export yet: lower a model first.")
        self._program = (kind, path)
        self.job.start(export_job(lowering, kind, path))
        self.message.emit(f"Writing {path} (from the cache when possible)…")

    def export_bundle(self, folder: str, et_root: str, cmsis_nn: str, *, check: bool = False,
                      force: bool = False, board: str | None = None) -> Job:
        """A firmware bundle of the window's lowering (as it was made, kept going included) into `folder`:
        `cmlens export SOURCE --target CPU -o folder` in the job worker; with `check` also built and run on
        QEMU against the lowered program. Returns the Job submitted."""
        lowering = self.session.lowering_job
        if lowering is None:
            raise RuntimeError("Nothing to export yet: lower a model first.")
        command = (f"cmlens export {lowering.model} --target {lowering.lower.target}" + (f" --board {board}" if board else "")
                   + f" -o {folder}" + (" --check" if check else ""))
        job = bundle_job(lowering, folder, et_root, cmsis_nn, check=check, force=force, command=command, board=board)
        self.bundle_result = None
        self._bundle_folder = folder
        self.bundle_job.start(job)
        self.message.emit(f"Exporting a firmware bundle to {folder}…")
        return job

    def cancel_bundle(self) -> None:
        """Stop a bundle export (a --check's compilers and QEMU end gracefully)."""
        self.bundle_job.cancel()

    def busy(self) -> bool:
        return self.job.is_running() or self.bundle_job.is_running()

    def _on_bundle_finished(self, status: str, job_result: dict | None) -> None:
        self.bundle_result = job_result
        folder = str(((self.bundle_result or {}).get("job") or {}).get("export", {}).get("output", ""))
        section = ((job_result or {}).get("steps") or {}).get("export")
        if status == "cancelled":
            from backend_core.target.export import is_bundle

            written = bool(self._bundle_folder) and is_bundle(Path(self._bundle_folder))
            self.message.emit("Bundle export cancelled: " + ("bundle written, not checked" if written
                                                             else "nothing was written"))
            self.exported.emit("bundle", folder or self._bundle_folder, "cancelled")
            return
        if status != "done" or section is None:
            err = (job_result or {}).get("error") or {}
            text = window_words(f"{err.get('message', status)} {err.get('hint', '')}".strip())
            self.message.emit(f"Bundle export failed: {text}")
            self.exported.emit("bundle", folder, text)
            return
        check = section.get("check") or {}
        proof = f"; --check: {check.get('verdict') or check.get('outcome')}" if check else ""
        fb = f", {len(section['fallbacks'])} portable fallback(s)" if section.get("fallbacks") else ""
        self.message.emit(f"Wrote the firmware bundle {section['folder']} ({len(section['files'])} files{fb}{proof}); "
                          "its README.md says how to add it to your CMake project")
        self.exported.emit("bundle", section["folder"], "")

    def _on_job_event(self, kind: str, data: dict) -> None:
        if kind == "status":
            self.message.emit(str(data.get("text", "")))

    def _on_job_finished(self, status: str, job_result: dict | None) -> None:
        if self._program is None:
            return
        kind, path = self._program
        self._program = None
        files = (job_result or {}).get("files") or {}
        err = ""
        if status != "done" or files.get(kind) is None or not Path(path).is_file():
            err = str(((job_result or {}).get("error") or {}).get("message") or status)
        beside = " and references.json beside it" if kind == "bpte" and files.get("references") else ""
        self.message.emit(f"Export {kind.upper()} failed: {err}" if err else
                          f"Wrote {path} ({Path(path).stat().st_size:,} bytes){beside}")
        self.exported.emit(kind, path, err)

    def shutdown(self) -> None:
        self.job.shutdown(graceful=False)       # a lower Job starts no process of its own: nothing to wait for
        self.bundle_job.shutdown()              # a --check may be building: let it end its compilers


def export_job(lowering: Job, kind: str, path: str) -> Job:
    """The Job of an export: the window's lowering, exactly as it was made (CPU, flow, calibration,
    channels-last, an artefact's companions; its memory report too), with `kind` written to `path`."""
    return replace(lowering, outputs={kind: path})


def bundle_job(lowering: Job, folder: str, et_root: str, cmsis_nn: str, *, check: bool = False,
               force: bool = False, command: str = "", board: str | None = None) -> Job:
    """The Job of a firmware bundle from the window: `cmlens export`'s (backend_core.orchestration.jobs.steps.export), with
    the window's lowering as it was made and the CPU it was lowered for."""
    from backend_core.orchestration.jobs.steps.export import export_job

    return export_job(lowering.model, lowering.lower, board,
                      ExportOptions(output=folder, force=force, check=check, command=command),
                      et_root or None, cmsis_nn or None)
