"""The one writer of a job's files, for the CLI, the window and sweeps alike: the program (.pte), the
bundle (.bpte) with its references.json beside it (what `cmlens run` compares the target with), the
chosen schedule's JSON with the scheduled program's .bpte beside it (`--schedule`), and the JSON and
standalone HTML report — the lowering with its graphs plus every later step's section (memory,
schedule, numerics, check, run) under its own name."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backend_core.common.files import write_atomic
from backend_core.orchestration.jobs.result import JobResult
from backend_core.orchestration.jobs.spec import Job


def check_output_folders(outputs: dict[str, str] | None, schedule: str | None = None) -> None:
    """Every output path writable now: BadInputError (exit 2) naming the path and the reason, before any
    lowering (a folder in the way, no permission, /proc). `schedule`: the schedule JSON's path."""
    from backend_core.common.files import check_writable

    for kind, value in {**(outputs or {}), **({"schedule": schedule} if schedule else {})}.items():
        check_writable(value, kind)


def scheduled_bpte_path(schedule_json: str) -> str:
    """`mv2-cortex-m55.schedule.json` -> `mv2-cortex-m55.scheduled.bpte` (beside it)."""
    base = schedule_json[:-len(".schedule.json")] if schedule_json.endswith(".schedule.json") else schedule_json
    return base + ".scheduled.bpte"


def writes_files(job: Job) -> bool:
    """Whether the job has files to write at its end (write_outputs)."""
    return bool(job.outputs or job.keep or (job.wants("schedule") and job.schedule.output))


def schedule_options_of(job: Job) -> dict[str, Any]:
    """The options a report adds to the lowering's when the job has a schedule (so a history record's
    configuration and a gate's baseline tell a scheduled program from the plain one); {} without one."""
    if not job.wants("schedule"):
        return {}
    label = schedule_label(job.schedule.spec)
    if label.startswith("file:"):           # the file says its input dtype: the name is the configuration
        return {"schedule": label}
    return {"schedule": label, "input_dtype": job.schedule.input_dtype}


def schedule_label(spec: str) -> str:
    """auto, fit, fit:BOARD, or file:NAME (a schedule file by its name: the same file at every commit)."""
    return spec if spec in ("auto", "fit") or spec.startswith("fit:") else f"file:{Path(spec).name}"


def report_of(res: JobResult, files: dict[str, str] | None = None) -> dict[str, Any]:
    """The job's report: the lowering's (graphs included) and every later step's section."""
    from backend_core.target.memory.source import memory_for_result

    low = res.lowering
    report = (low.report(files, with_graphs=True) if low is not None else   # failed before any lowering
              {"model": res.job.model, "status": res.status, "error": res.error, "stages": []})
    memory = res.steps.get("memory") or (memory_for_result(low) if low is not None else None)
    if memory is not None:
        report["memory"] = memory           # docs/json-format.md: the report's `memory` section
    for step in ("schedule", "check", "numerics", "evaluate", "run"):
        if step in res.steps:
            report.setdefault(step, res.steps[step])
    if res.job.wants("schedule"):
        report["options"] = {**(report.get("options") or {}), **schedule_options_of(res.job)}
    return report


def write_outputs(job: Job, res: JobResult) -> dict[str, str]:
    """Write what `job.outputs` asks for; returns {kind: path} (also in `res.files`). The program files
    need a finished lowering; the reports are written for a failed one too (its error and stages)."""
    from backend_core.stages.pipeline.program_files import write_bytes

    outputs = dict(job.outputs or {})
    for kind in ("pte", "bpte"):            # kept files (a sweep's --keep) go to the job's folder
        if kind in job.keep and kind not in outputs and res.lowering is not None:
            outputs[kind] = str(out_dir(job) / f"{res.lowering.model}.{kind}")
    low = res.lowering
    written: dict[str, str] = {}
    blobs = low.blobs if low is not None else {}
    if outputs.get("pte") and "model.pte" in blobs:
        written["pte"] = write_bytes(outputs["pte"], blobs["model.pte"])
    if outputs.get("bpte") and "model.bpte" in blobs:
        written["bpte"] = write_bytes(outputs["bpte"], blobs["model.bpte"])
        if "references.json" in blobs:
            from backend_core.target.judge.references import beside

            written["references"] = write_bytes(str(beside(Path(outputs["bpte"]))), blobs["references.json"])
    sched = res.steps.get("schedule")
    if sched is not None and job.schedule.output and "scheduled.bpte" in blobs:
        from backend_core.target.judge.references import beside

        written["schedule"] = write_bytes(job.schedule.output, (json.dumps(sched["schedule"], indent=1) + "\n").encode())
        bpte = scheduled_bpte_path(job.schedule.output)
        written["scheduled_bpte"] = write_bytes(bpte, blobs["scheduled.bpte"])
        written["scheduled_references"] = write_bytes(str(beside(Path(bpte))), blobs["scheduled.references.json"])
    if outputs.get("json") or outputs.get("html"):
        report = report_of(res, dict(written))
        if outputs.get("json"):
            write_atomic(outputs["json"], json.dumps(report, indent=1, default=str))
            written["json"] = outputs["json"]
        if outputs.get("html"):
            from backend_core.analyses.report.html_report import write_html

            written["html"] = write_html(report, outputs["html"])
    res.files.update(written)
    return written


def out_dir(job: Job) -> Path:
    """Where kept files go: the job's folder, or a new temporary one."""
    import tempfile

    out = Path(job.out_dir) if job.out_dir else Path(tempfile.mkdtemp(prefix="cmlens-job-"))
    out.mkdir(parents=True, exist_ok=True)
    return out
