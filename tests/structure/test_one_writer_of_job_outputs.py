"""One writer of a job's outputs (docs/architecture.md): the files a job is asked for (reports, programs,
the schedule JSON and the scheduled .bpte) are written by backend_core/orchestration/jobs/outputs.py at the
job's end, never by a step, so a step refused as bad input leaves nothing half-written (issue 47: the
schedule step wrote its files itself)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITERS = {"write_atomic", "write_bytes", "write_json"}


def test_no_step_writes_a_job_output_itself() -> None:
    offenders = []
    for py in sorted((ROOT / "backend_core" / "orchestration" / "jobs" / "steps").glob("*.py")):
        for node in ast.walk(ast.parse(py.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in ("backend_core.common.files",
                                                                   "backend_core.stages.pipeline.program_files"):
                names = {a.name for a in node.names} & WRITERS
                if names:
                    offenders.append(f"{py.relative_to(ROOT)}:{node.lineno} imports {sorted(names)}")
    assert not offenders, "write a job's files through jobs/outputs.py (write_outputs):\n" + "\n".join(offenders)
