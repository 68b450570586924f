"""The lower step: the one place a job turns its model source into a lowering. It resolves the input
once — a source to lower, or a ready program (.pte/.bpte/.etrecord/.etdump) to read — and asks the
lowering for exactly what the job's later steps need (a .pte for memory, a bundle with references
for check/run, live programs for an ETRecord, host-runnable stages for numerics). Every later step
reads `res.lowering`; none lowers again (the import-linter contract in pyproject.toml)."""
from __future__ import annotations

import threading
from typing import Any, Callable

from backend_core.common.errors import Cancelled
from backend_core.orchestration.jobs.steps.failed_lowering import lowering_failed
from backend_core.orchestration.jobs.result import FAILED, JobResult
from backend_core.orchestration.jobs.spec import Job

EventCallback = Callable[[str, dict[str, Any]], None]


def wants_live_programs(job: Job) -> bool:
    """A run with --etdump needs the .bpte and its ETRecord from one live lowering (not a cache hit):
    the lower step keeps its programs and the run step makes both from them (one lowering per job). The
    schedule step rewrites the live final program (a cache hit holds no program)."""
    return ((job.wants("run") or job.wants("profile")) and job.run.etdump or "etrecord" in job.keep
            or job.wants("schedule")) and not job.lower.companions and not job.reads_program


def wants_stages(job: Job) -> bool:
    """The numerics and evaluate steps run the lowering's host-runnable stages: kept live (never from the cache)."""
    return (job.wants("numerics") or job.wants("evaluate")) and not job.reads_program


def lower_step(job: Job, res: JobResult, emit: EventCallback, cancel: threading.Event,
               on_model: Callable[[Any], None] | None = None) -> None:
    from backend_core.lowering.lower import LowerHooks, LowerOutputs, lower

    live = wants_live_programs(job)
    stages = wants_stages(job)
    outputs = job.outputs or {}
    wanted = LowerOutputs(
        pte=("pte" in job.keep or "pte" in outputs or "json" in outputs or "html" in outputs
             or job.wants("memory") or not job.lower.companions),
        bpte=("bpte" in job.keep or "bpte" in outputs or job.wants("check")
              or ((job.wants("run") or job.wants("profile")) and not live)),
        edge_program=live, stages=stages)
    hooks = LowerHooks(on_stage=lambda snap, planned: emit("stage", {"snapshot": snap, "planned": planned}),
                       on_status=lambda text: emit("status", {"text": text}), on_model=on_model,
                       is_cancelled=cancel.is_set)
    lowering = lower(job.model, job.lower.pipeline_options(), outputs=wanted, hooks=hooks,
                     use_cache=job.lower.use_cache and not live and not stages,
                     verify_suggestions=job.lower.verify_suggestions, artefact_companions=job.lower.companions)
    res.lowering = lowering
    report = lowering.report(None, with_graphs="graphs" in job.keep)
    report["from_cache"] = lowering.from_cache
    report["dependencies"] = lowering.dependencies      # the files it was made from (a sweep re-checks them)
    report["seconds"] = round(lowering.seconds, 3)
    report["cache_note"] = lowering.cache_note
    artefact = getattr(lowering, "artefact", None)       # a .pte/.bpte/.etrecord/.etdump that was read
    if artefact is not None:
        report["artefact"] = artefact.extras()          # its memory plan, bundle, ETDump overlay (the window)
    if "model.pte" in lowering.blobs:
        report["pte_bytes"] = len(lowering.blobs["model.pte"])
    res.steps["lower"] = report
    if lowering.status == "cancelled":
        raise Cancelled("cancelled during the lowering")
    if lowering.status == "done" and "etrecord" in job.keep and not job.reads_program:
        from backend_core.orchestration.jobs.steps.etrecord_lowering import record_of
        from backend_core.orchestration.jobs.outputs import out_dir

        res.record = record_of(lowering, out_dir(job), lambda text: emit("status", {"text": text}))
        res.files.update(bpte=str(res.record.bpte), etrecord=str(res.record.etrecord))
    if lowering.status != "done":
        exc = lowering_failed(job.model, lowering)
        res.status, res.exception = FAILED, exc
        res.error = {"step": "lower", "type": type(exc).__name__, "message": exc.message, "hint": exc.hint,
                     "detail": exc.detail, "exit_code": exc.exit_code, "stage": exc.stage, "node": exc.node,
                     "failure": (lowering.error or {}).get("failure")}


def lower_source(source: str, options: Any, **kwargs: Any) -> Any:
    """A lowering outside any job, for tests and bench scripts that measure the lowering itself. Nothing in
    backend_core or app calls it (tests/structure/test_one_lowering.py): in a job, steps read `res.lowering`."""
    from backend_core.lowering.lower import lower

    return lower(source, options, **kwargs)
