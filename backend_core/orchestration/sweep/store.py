"""A sweep folder: `sweep.json` (the matrix), `results/<id>.json` (one JobResult per finished job,
written as it arrives, so Ctrl-C or a crash loses nothing), `reports/<id>.html`, `baselines/<id>.json`,
`dashboard.html`. A job's id hashes what the job is and the content of its model (as the lowering cache
does), so a rerun skips finished jobs and redoes a job whose model changed."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from backend_core.orchestration.jobs import Job
from backend_core.stages.models import parse_model_source
from backend_core.stages.models.dependencies import Dependency, describe_changes

SWEEP_FORMAT = 1


def job_id(job: Job) -> str:
    try:
        spec = parse_model_source(job.model)
        content = f"{spec.fingerprint()}:{spec.content_hash()}"
    except Exception:  # noqa: BLE001  a model that vanished: the id still names the job; its run reports why
        content = "missing"
    return hashlib.sha256(f"{job.key()}|{content}".encode()).hexdigest()[:16]


class SweepStore:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        for sub in ("results", "reports", "baselines"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    def result_path(self, jid: str) -> Path:
        return self.root / "results" / f"{jid}.json"

    def finished(self, jid: str) -> dict[str, Any] | None:
        """The stored result of a job that finished (done or failed with a real error); None to (re)do it.
        A cancelled job, or one whose worker died, is done again on the next run."""
        p = self.result_path(jid)
        if not p.is_file():
            return None
        try:
            d = json.loads(p.read_text())
        except (OSError, ValueError):
            return None
        if d.get("status") == "cancelled" or stale_dependencies(d):
            return None
        return d

    def write_result(self, jid: str, result: dict[str, Any]) -> Path:
        from backend_core.common.files import write_atomic

        p = self.result_path(jid)
        write_atomic(p, json.dumps(result, default=str, allow_nan=False) if _finite(result)   # a reader never
                     else json.dumps(result, default=str))                                   # sees half a file
        return p

    def write_manifest(self, jobs: list[tuple[str, Job]], meta: dict[str, Any]) -> None:
        d = {"format": SWEEP_FORMAT, **meta, "jobs": [{"id": jid, **job.to_dict()} for jid, job in jobs]}
        (self.root / "sweep.json").write_text(json.dumps(d, indent=1, default=str))

    def manifest(self) -> dict[str, Any]:
        return json.loads((self.root / "sweep.json").read_text())

    def results(self) -> dict[str, dict[str, Any]]:
        out = {}
        for p in sorted((self.root / "results").glob("*.json")):
            try:
                out[p.stem] = json.loads(p.read_text())
            except (OSError, ValueError):
                continue
        return out


def stale_dependencies(result: dict[str, Any]) -> str:
    """What changed among the files the job's model was made from (the helpers it imported, the data it
    read: the lowering recorded them), "" when nothing did: a changed helper redoes the job."""
    deps = ((result.get("steps") or {}).get("lower") or {}).get("dependencies") or []
    try:
        changes = [c for c in (Dependency.from_dict(d).change() for d in deps) if c]
    except (KeyError, TypeError):
        return "unreadable dependencies"
    return describe_changes(changes)


def _finite(d: Any) -> bool:
    try:
        json.dumps(d, default=str, allow_nan=False)
        return True
    except ValueError:
        return False
