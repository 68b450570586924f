"""The program a run takes to the board and what its outputs are expected to be: the lower step's .bpte
(or, for --etdump, the .bpte and ETRecord of that one lowering), or a ready .pte/.bpte as it is; then
the bundle's references, its warnings, the output steps and the tolerance."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend_core.target.build.debug_buffer import read_program
from backend_core.common.errors import BadInputError, CmlensError
from backend_core.target.judge.references import References, beside, read_beside
from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.target.toolchain.process import LineCallback
from backend_core.orchestration.jobs.steps.etrecord_lowering import record_of
from backend_core.stages.models.sniff import is_program_path
from backend_core.orchestration.jobs.steps.failed_lowering import lowering_failed
from backend_core.orchestration.jobs.spec import RunOptions


@dataclass
class RunProgram:
    """The .pte/.bpte a run builds in, the LoweringResult it came from (None for a ready file) and, for
    --etdump from a model source, the ETRecord lowering (etrecord_lowering.EtRecordLowering)."""

    model: Path
    seconds: float
    lowered: Any = None
    record: Any = None


def model_file(source: str, opts: RunOptions, workdir: Path, on_line: LineCallback,
               lowering: PipelineOptions | None = None, lowered: Any = None) -> tuple[Path, float, Any]:
    """A .pte/.bpte for `source`: the file itself, or the .bpte of lowering it, with that LoweringResult.
    `lowered` (a job's lower step, same options) is used as it is: a run lowers its model once. After a
    schedule step, its scheduled .bpte (expected outputs: the unscheduled program's) is the program."""
    p = Path(source)
    if is_program_path(p):
        if not p.is_file():
            raise BadInputError(f"Model file {p} does not exist.")
        return p, 0.0, None
    start = time.monotonic()
    if lowered is None:                       # the job's lower step always runs first for a model source
        raise CmlensError(f"The run of {source} has no lowering: a target run lowers in its job's lower step.",
                          "Submit a Job with the run step (cmlens run does): its lower step makes the program.")
    res = lowered
    scheduled = "scheduled.bpte" in res.blobs      # the schedule step's program: it replaces the lowering's
    if res.status != "done" or not scheduled and "model.bpte" not in res.blobs:
        raise lowering_failed(source, res)
    out = workdir / (f"{res.model}.scheduled.bpte" if scheduled else f"{res.model}.bpte")
    out.write_bytes(res.blobs["scheduled.bpte" if scheduled else "model.bpte"])
    refs = "scheduled.references.json" if scheduled else "references.json"
    if refs in res.blobs:                     # what the expected outputs are (judge/references.py)
        beside(out).write_bytes(res.blobs[refs])
    if scheduled:
        on_line("cmlens", "program: the scheduled one (--schedule), expected outputs the unscheduled program's")
    return out, time.monotonic() - start, res


def program_for_run(source: str, opts: RunOptions, lowering: PipelineOptions, workdir: Path, emit: LineCallback,
                    lowered: Any = None) -> RunProgram:
    """The run's program; with --etdump from a model source, with the ETRecord of the same lowering."""
    if opts.etdump and not is_program_path(source):
        if lowered is None or lowered.status != "done" or lowered.pipeline is None:
            raise CmlensError(f"The --etdump run of {source} has no live lowering to take its ETRecord from.",
                              "Submit a Job with the run step and etdump (cmlens run --etdump does).")
        record = record_of(lowered, workdir, lambda s: emit("cmlens", s))
        return RunProgram(record.bpte, record.seconds, record.result, record)
    model, seconds, res = model_file(source, opts, workdir, emit, lowering, lowered)
    return RunProgram(model, seconds, res)


def expected_outputs(model: Path, opts: RunOptions, emit: LineCallback
                     ) -> tuple[References, list[str], list[float | None], float]:
    """(references, the bundle's warnings, output steps, atol with --qtol's steps) for the program: a PASS
    against near-constant reference outputs proves nothing, so the bundle's outputs are checked here."""
    warnings: list[str] = []
    steps: list[float | None] = []
    atol = opts.atol
    references = read_beside(model) if model.suffix == ".bpte" else References()
    if references.exact_reference:
        emit("cmlens", "reference: the lowered program run on the host (PASS means bit-exact)"
                       + (f"; {references.fake_quant_text()}" if references.vs_fake_quant else ""))
    if model.suffix == ".bpte":
        from backend_core.stages.pipeline.reference_check import bundle_warnings, output_steps

        warnings = bundle_warnings(model.read_bytes(), opts.atol)
        for w in warnings:
            emit("cmlens", f"warning: {w}")
        steps = output_steps(read_program(model))
        if opts.qtol and any(steps):
            atol = opts.atol + opts.qtol * max(s for s in steps if s)
            emit("cmlens", f"tolerance: atol {opts.atol:g} + {opts.qtol} x output step {max(s for s in steps if s):.4g} "
                           f"= {atol:.4g} (--qtol)")
    return references, warnings, steps, atol
